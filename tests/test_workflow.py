"""Users' workflow: init, explain, schema, import-operator-values, pre-commit hooks, workflows."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.conftest import DATA, ROOT


@pytest.fixture
def in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_init_scaffold_builds_green(in_tmp: Path, run_cli) -> None:  # type: ignore[no-untyped-def]
    result = run_cli("init", "policy")
    assert result.exit_code == 0, result.output
    repo = in_tmp / "policy"
    for rel in ("values.yaml", "overlays/example/values.yaml", ".gitignore", ".gitattributes", ".pre-commit-config.yaml", ".github/workflows/gpu-render.yml"):
        assert (repo / rel).is_file(), rel
    assert "output/** linguist-generated=true" in (repo / ".gitattributes").read_text()
    args = ["--values", str(repo / "values.yaml"), "--overlays", str(repo / "overlays"), "--out", str(repo / "output")]
    assert run_cli("validate", *args[:4]).exit_code == 0
    assert run_cli("build", *args).exit_code == 0
    assert (repo / "output" / "gpu-render.lock").is_file()
    check = run_cli("build", "--check", *args)
    assert check.exit_code == 0, check.output


def test_init_never_overwrites(in_tmp: Path, run_cli) -> None:  # type: ignore[no-untyped-def]
    (in_tmp / "values.yaml").write_text("mine: true\n")
    result = run_cli("init", ".")
    assert result.exit_code == 1
    assert "init never overwrites" in result.stderr
    assert (in_tmp / "values.yaml").read_text() == "mine: true\n"


def test_init_rejects_bad_cluster_name(in_tmp: Path, run_cli) -> None:  # type: ignore[no-untyped-def]
    result = run_cli("init", "p", "--cluster", "A_B")
    assert result.exit_code == 1
    assert "not a DNS label" in result.stderr


@pytest.mark.parametrize(
    ("key", "expected"),
    [
        ("mig.strategy", ['TYPE:        string', 'DEFAULT:     "single"', 'ALLOWED:     "none", "single", "mixed"']),
        ("psa.enabled", ["TYPE:        boolean", "DEFAULT:     false", "Namespace/gpu-operator (namespace)"]),
        ("devicePlugin.version", ['DEFAULT:     "v0.20.0"', "DaemonSet/nvidia-device-plugin-daemonset (device-plugin)"]),
        ("driver.upgradePolicy.drain", ["TYPE:        object", "KEYS:"]),
    ],
)
def test_explain(run_cli, key: str, expected: list[str]) -> None:  # type: ignore[no-untyped-def]
    result = run_cli("explain", key)
    assert result.exit_code == 0, result.output
    for line in expected:
        assert line in result.stdout, f"{line!r} not in:\n{result.stdout}"


def test_explain_json_and_unknown_key(run_cli) -> None:  # type: ignore[no-untyped-def]
    data = json.loads(run_cli("explain", "mig.strategy", "--format", "json").stdout)
    assert data["allowed"] == ["none", "single", "mixed"]
    assert any("device-plugin" in a for a in data["affects"])
    result = run_cli("explain", "devicePlugn.version")
    assert result.exit_code == 1
    assert "did you mean 'devicePlugin'?" in result.stderr


def test_schema_command_prints_the_schema(run_cli) -> None:  # type: ignore[no-untyped-def]
    result = run_cli("schema")
    assert json.loads(result.stdout) == json.loads((ROOT / "schemas" / "values.schema.json").read_text())


def test_import_operator_values_upstream(in_tmp: Path, run_cli) -> None:  # type: ignore[no-untyped-def]
    upstream = DATA / "gpu-operator" / "values.yaml"
    result = run_cli("import-operator-values", str(upstream), "-o", "values.yaml")
    assert result.exit_code == 0, result.output
    text = (in_tmp / "values.yaml").read_text()
    data = yaml.safe_load(text)
    for gone in ("operator", "clusterPolicy", "node-feature-discovery"):
        assert gone not in data
        assert f"#   {gone}: " in text
    assert "nvidiaDriverCRD" not in data["driver"]
    assert data["driver"]["version"] == yaml.safe_load(upstream.read_text())["driver"]["version"]
    assert data["nodePools"][0]["name"] == "default"
    # the imported policy is valid, with no operator-only warnings left
    check = run_cli("validate", "--values", "values.yaml", "--overlays", "none")
    assert check.exit_code == 0, check.output
    assert "warning" not in check.stderr
    # and it never overwrites
    assert run_cli("import-operator-values", str(upstream), "-o", "values.yaml").exit_code == 1


def test_import_fails_when_the_imported_policy_does_not_validate(in_tmp: Path, run_cli) -> None:  # type: ignore[no-untyped-def]
    # a Terraform placeholder taken as written is no image tag: the policy is written (for the
    # user to fix), its error printed at its place in it, and the import exits 1
    source = ROOT / "tests" / "corpus" / "aks-terraform-placeholder-refused.yaml"
    result = run_cli("import-operator-values", str(source), "-o", "policy.yaml")
    assert result.exit_code == 1, result.output
    line = next(n for n, text in enumerate((in_tmp / "policy.yaml").read_text().splitlines(), 1) if "version: ${driver_version}" in text)
    assert f"policy.yaml:{line}:12: /driver/version: '${{driver_version}}' is not a valid image version" in result.stderr
    assert "gpu-render validate --values policy.yaml" in result.stderr
    # to stdout: the policy printed whole, its problems placed in it
    result = run_cli("import-operator-values", str(source))
    assert result.exit_code == 1 and "version: ${driver_version}" in result.stdout
    assert f"<stdout>:{line}:12: /driver/version" in result.stderr
    # a file that imports clean exits 0 and prints no problem
    result = run_cli("import-operator-values", str(ROOT / "tests" / "corpus" / "aks-rtxpro6000-tainted.yaml"), "-o", "clean.yaml")
    assert result.exit_code == 0, result.stderr
    assert "error(s)" not in result.stderr


def test_import_writes_a_flow_style_file_in_block_style(in_tmp: Path, run_cli) -> None:  # type: ignore[no-untyped-def]
    # a public values file written as one flow mapping: the policy came out as one flow mapping
    # too, folded at column 0 and without the importer's notes above cluster and nodePools
    (in_tmp / "flow.yaml").write_text("--- { # lab\n  driver: { enabled: false, },\n  toolkit: { enabled: true },\n}\n")
    result = run_cli("import-operator-values", "flow.yaml", "-o", "policy.yaml")
    assert result.exit_code == 0, result.stderr
    text = (in_tmp / "policy.yaml").read_text()
    assert "\ncluster:\n" in text and "\nnodePools:\n" in text and "\ndriver: {enabled: false}\n" in text
    assert "# gpu-render: the target clusters" in text
    assert yaml.safe_load(text)["driver"] == {"enabled": False}


def test_upstream_values_file_is_usable_after_import(run_cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    # unchanged it lacks the node pools its enabled driver needs (an error with a hint); imported, it validates
    result = run_cli("validate", "--values", str(DATA / "gpu-operator" / "values.yaml"), "--overlays", "none")
    assert result.exit_code == 1 and "no nodePools" in result.output + result.stderr
    imported = tmp_path / "values.yaml"
    assert run_cli("import-operator-values", str(DATA / "gpu-operator" / "values.yaml"), "-o", str(imported)).exit_code == 0
    result = run_cli("validate", "--values", str(imported), "--overlays", "none")
    assert result.exit_code == 0, result.output + result.stderr


def test_pre_commit_hooks_are_real_commands(run_cli) -> None:  # type: ignore[no-untyped-def]
    hooks = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    assert {h["id"] for h in hooks} == {"gpu-render-validate", "gpu-render-build-check"}
    for hook in hooks:
        assert set(hook) >= {"id", "name", "entry", "language"}
        assert hook["pass_filenames"] is False
        argv = hook["entry"].split()
        assert argv[0] == "gpu-render"
        assert run_cli(*argv[1:], "--help").exit_code == 0


def test_workflows_validate_against_github_schema(tmp_path: Path) -> None:
    from renderer.scaffold import scaffold

    files = [p for p in sorted((ROOT / ".github" / "workflows").glob("*.y*ml"))]
    generated = tmp_path / "gpu-render.yml"
    generated.write_text(scaffold("policy")[".github/workflows/gpu-render.yml"])
    files.append(generated)
    proc = subprocess.run(
        [sys.executable, "-m", "check_jsonschema", "--builtin-schema", "vendor.github-workflows", *map(str, files)],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_reference_doc_is_current(run_cli) -> None:  # type: ignore[no-untyped-def]
    """docs/reference.md is generated from the schema: regenerate it with
    `gpu-render schema --format markdown > docs/reference.md`."""
    result = run_cli("schema", "--format", "markdown")
    assert (ROOT / "docs" / "reference.md").read_text() == result.stdout
    assert "| `driver.upgradePolicy.drain.enable` |" in result.stdout
