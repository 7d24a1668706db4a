"""gpu-render diff on real git repositories built in tmp folders: summary, classes, exit codes."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click
import jsonschema
import pytest
from click.testing import Result

from renderer import diff_report
from renderer.diff import Keyed, diff_sides, field_diff, side_from_tree
from tests.conftest import ROOT

VALUES = """\
cluster:
  kubeVersion: "1.35"
nodePools:
  - name: ubuntu2204
    os: {id: ubuntu, version: "22.04"}
  - name: rhel94
    os: {id: rhel, version: "9.4"}
driver:
  version: "570.124.06"
"""

SCHEMA = json.loads((ROOT / "schemas" / "diff.schema.json").read_text())


def git(repo: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com"}
    proc = subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, env=env, check=True)
    return proc.stdout


def write(repo: Path, files: dict[str, str | None]) -> None:
    for rel, text in files.items():
        target = repo / rel
        if text is None:
            target.unlink()
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")


def commit(repo: Path, files: dict[str, str | None], message: str) -> None:
    write(repo, files)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message)


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    git(tmp_path, "init", "-q", "-b", "main")
    commit(tmp_path, {"values.yaml": VALUES, "overlays/prod/values.yaml": "mig:\n  strategy: single\n", "overlays/staging/values.yaml": "# same as fleet\n"}, "policy")
    git(tmp_path, "checkout", "-q", "-b", "change")
    monkeypatch.chdir(tmp_path)
    return tmp_path


Run = Callable[..., Result]


def diff_json(run_cli: Run, *args: str) -> dict[str, Any]:
    result = run_cli("diff", *args, "--format", "json")
    assert result.exit_code == 0, result.output + result.stderr
    data: dict[str, Any] = json.loads(result.stdout)
    jsonschema.validate(data, SCHEMA)
    return data


def disruption(data: dict[str, Any], cls: str) -> dict[str, Any]:
    found = [d for d in data["disruptions"] if d["class"] == cls]
    assert found, f"no {cls} in {[d['class'] for d in data['disruptions']]}"
    return found[0]


def codes(run_cli: Run, *args: str) -> dict[str, int]:
    """Exit codes of the diff with --exit-code and with --fail-on each class."""
    out = {"exit-code": run_cli("diff", *args, "--exit-code").exit_code, "plain": run_cli("diff", *args).exit_code}
    for cls in ("driver-reload", "runtime-restart", "gpu-reset", "scheduling-pause", "none"):
        out[cls] = run_cli("diff", *args, "--fail-on", cls).exit_code
    return out


def test_driver_bump_on_one_pool(repo: Path, run_cli: Run) -> None:
    bumped = VALUES.replace('os: {id: ubuntu, version: "22.04"}', 'os: {id: ubuntu, version: "22.04"}\n    driver: {version: "580.95.05"}')
    commit(repo, {"values.yaml": bumped}, "bump ubuntu driver")
    data = diff_json(run_cli, "main", "change")
    assert {"label": "driver pool ubuntu2204", "old": "570.124.06", "new": "580.95.05", "clusters": ["fleet", "prod", "staging"]} in data["versions"]
    assert not [v for v in data["versions"] if "rhel94" in v["label"]]
    reload = disruption(data, "driver-reload")
    assert reload["pools"] == ["ubuntu2204"]
    assert reload["clusters"] == ["fleet", "prod", "staging"]
    assert data["summary"]["classes"][0] == "driver-reload"
    text = run_cli("diff", "main", "change").stdout
    assert "driver pool ubuntu2204: 570.124.06 -> 580.95.05" in text
    assert text.index("Plan:") < text.index("Versions") < text.index("Disruptions")
    got = codes(run_cli, "main", "change")
    assert got == {"exit-code": 1, "plain": 0, "driver-reload": 1, "runtime-restart": 0, "gpu-reset": 0, "scheduling-pause": 0, "none": 0}


def test_default_sides_are_merge_base_and_working_tree(repo: Path, run_cli: Run) -> None:
    write(repo, {"overlays/staging/values.yaml": "nodePools:\n  - name: ubuntu2204\n    os: {id: ubuntu, version: '22.04'}\n    driver: {version: '580.95.05'}\n"})
    before = git(repo, "status", "--porcelain")
    data = diff_json(run_cli)
    assert data["base"].startswith("merge-base(main)") and data["head"] == "working tree"
    assert disruption(data, "driver-reload")["clusters"] == ["staging"]
    # the rhel94 pool disappears from staging's overlay: its driver pool goes away
    assert any(p["path"] == "nodePools[name=rhel94]" and p["new"] is None and p["op"] == "removed" for p in data["policy"])
    assert git(repo, "status", "--porcelain") == before  # the working tree is never touched


def test_mig_strategy_change(repo: Path, run_cli: Run) -> None:
    commit(repo, {"overlays/prod/values.yaml": "mig:\n  strategy: mixed\n"}, "mixed MIG on prod")
    data = diff_json(run_cli, "main", "change")
    reset = disruption(data, "gpu-reset")
    assert reset["clusters"] == ["prod"]
    assert any("mig.strategy" in r for r in reset["reasons"])
    assert any(r.endswith("MIG settings change (MIG_STRATEGY)") for r in reset["reasons"])
    assert {p["path"] for p in data["policy"]} == {"mig.strategy"}
    changed = [o for o in data["objects"] if o["cluster"] == "prod"]
    assert changed and all(o["op"] == "changed" for o in changed)
    assert any("MIG_STRATEGY" in f["path"] for o in changed for f in o["fields"])
    assert [o for o in data["objects"] if o["cluster"] != "prod"] == []
    got = codes(run_cli, "main", "change")
    assert got["gpu-reset"] == 1 and got["driver-reload"] == 0 and got["exit-code"] == 1


def test_toolkit_runtime_change(repo: Path, run_cli: Run) -> None:
    commit(repo, {"overlays/staging/values.yaml": "cluster:\n  containerRuntime: crio\n"}, "staging moves to CRI-O")
    data = diff_json(run_cli, "main", "change")
    restart = disruption(data, "runtime-restart")
    assert restart["clusters"] == ["staging"]
    assert restart["pools"] == ["*"]
    assert "gpu-reset" not in data["summary"]["classes"]
    assert codes(run_cli, "main", "change")["runtime-restart"] == 1


def test_component_disabled(repo: Path, run_cli: Run) -> None:
    commit(repo, {"values.yaml": VALUES + "devicePlugin:\n  enabled: false\n"}, "no device plugin")
    data = diff_json(run_cli, "main", "change")
    removed = [o for o in data["objects"] if o["cluster"] == "fleet" and o["component"] == "device-plugin"]
    assert removed and {o["op"] for o in removed} == {"removed"}
    assert {"DaemonSet", "ServiceAccount"} <= {o["kind"] for o in removed}
    assert data["summary"]["removed"] >= 3 * len(removed)
    assert disruption(data, "scheduling-pause")["clusters"] == ["fleet", "prod", "staging"]
    md = run_cli("diff", "main", "change", "--format", "markdown").stdout
    assert f"| fleet | device-plugin | 0 | 0 | {len(removed)} | 0 | scheduling-pause" in md
    assert codes(run_cli, "main", "change")["scheduling-pause"] == 1


def test_cluster_added(repo: Path, run_cli: Run) -> None:
    commit(repo, {"overlays/west/values.yaml": "mig:\n  strategy: mixed\n"}, "new cluster west")
    data = diff_json(run_cli, "main", "change")
    assert data["summary"]["clustersAdded"] == ["west"]
    assert data["summary"]["clusters"] == ["fleet", "prod", "staging", "west"]
    assert {o["cluster"] for o in data["objects"]} == {"west"}
    assert {o["op"] for o in data["objects"]} == {"added"}
    assert data["policy"] == []
    text = run_cli("diff", "main", "change").stdout
    assert "clusters added: west" in text
    assert codes(run_cli, "main", "change")["exit-code"] == 1


def test_object_renamed(repo: Path, run_cli: Run) -> None:
    commit(repo, {"values.yaml": VALUES.replace('kubeVersion: "1.35"', 'kubeVersion: "1.35"\n  runtimeClass: nvidia-gpu')}, "rename the runtime class")
    data = diff_json(run_cli, "main", "change")
    renamed = [o for o in data["objects"] if o["op"] == "renamed"]
    assert [(o["cluster"], o["kind"], o["oldName"], o["name"]) for o in renamed] == [
        (c, "RuntimeClass", "nvidia", "nvidia-gpu") for c in ("fleet", "prod", "staging")
    ]
    assert not [o for o in data["objects"] if o["kind"] == "RuntimeClass" and o["op"] != "renamed"]
    assert data["summary"]["renamed"] == 3
    text = run_cli("diff", "main", "change").stdout
    assert "> RuntimeClass/nvidia-gpu (was nvidia)" in text
    got = codes(run_cli, "main", "change")
    assert got["exit-code"] == 1 and got["driver-reload"] == 0


def test_no_change_exits_zero(repo: Path, run_cli: Run) -> None:
    result = run_cli("diff", "main", "change", "--exit-code")
    assert result.exit_code == 0
    assert "No changes." in result.stdout
    assert diff_json(run_cli, "main", "change")["changed"] is False


def test_bad_ref_and_bad_policy_are_user_errors(repo: Path, run_cli: Run) -> None:
    result = run_cli("diff", "no-such-ref", "main")
    assert result.exit_code == 1
    assert "not a folder and not a git commit" in result.stderr
    commit(repo, {"values.yaml": "nodePools: 3\n"}, "broken")
    result = run_cli("diff", "main", "change")
    assert result.exit_code == 1
    assert "change:values.yaml:1:" in result.stderr


def test_output_folders_and_noise(repo: Path, run_cli: Run) -> None:
    assert run_cli("build", "--out", "out-old", "-q").exit_code == 0
    write(repo, {"values.yaml": VALUES + "devicePlugin:\n  version: v0.21.0\n"})
    assert run_cli("build", "--out", "out-new", "-q").exit_code == 0
    # a version label that only says which gpu-render built the file is noise
    ds = next((repo / "out-new" / "base" / "device-plugin").glob("daemonset-*.yaml"))
    ds.write_text(ds.read_text().replace("  labels:\n", "  labels:\n    app.kubernetes.io/version: 9.9.9\n", 1))
    data = diff_json(run_cli, "out-old", "out-new")
    # the label is on the base object, so every cluster built from base carries it
    assert data["noise"]["count"] == 4
    assert {i.split(":")[0] for i in data["noise"]["items"]} == {"gpu-render.lock", "fleet", "prod", "staging"}
    assert {o["cluster"] for o in data["objects"]} == {"fleet", "prod", "staging"}
    assert all(not f["noise"] for o in data["objects"] for f in o["fields"])
    assert any(v["new"] == "v0.21.0" for v in data["versions"])
    text = run_cli("diff", "out-old", "out-new").stdout
    assert "Noise: 4 change(s) hidden (app.kubernetes.io/version, gpu-render.lock)" in text and "9.9.9" not in text
    assert "9.9.9" in run_cli("diff", "out-old", "out-new", "--show-noise").stdout
    # a git ref against an output folder: the ref is rendered to files first
    commit(repo, {}, "device plugin v0.21.0")
    data = diff_json(run_cli, "change", "out-new")
    assert [(o["cluster"], o["name"], [f["path"] for f in o["fields"]]) for o in data["objects"]] == []
    assert data["noise"]["count"] == 3  # the hand-added label in 3 clusters; the lock predates the edit


def test_noise_only_does_not_count_as_change() -> None:
    old = {"base/x/configmap-a.yaml": "kind: ConfigMap\napiVersion: v1\nmetadata:\n  name: a\n  labels: {app.kubernetes.io/version: '1'}\n", "gpu-render.lock": "{}"}
    new = {"base/x/configmap-a.yaml": "kind: ConfigMap\napiVersion: v1\nmetadata:\n  name: a\n  labels: {app.kubernetes.io/version: '2'}\n", "gpu-render.lock": "{ }"}
    d = diff_sides(side_from_tree("a", old), side_from_tree("b", new))
    assert not d.changed
    assert len(d.noise) == 2
    assert d.classes() == ()


def test_field_diff_matches_list_items_by_name() -> None:
    old = {"containers": [{"name": "a", "image": "x:1", "env": [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}]}, {"name": "b", "image": "y"}]}
    new = {"containers": [{"name": "b", "image": "y"}, {"name": "a", "image": "x:2", "env": [{"name": "B", "value": "2"}, {"name": "C", "value": "3"}]}]}
    changes = {p: (a, b) for p, a, b in field_diff(old, new)}
    assert ("containers", Keyed("name", "a"), "image") in changes
    assert changes[("containers", Keyed("name", "a"), "env", Keyed("name", "C"))][1] == {"name": "C", "value": "3"}
    assert ("containers", "(order)") in changes
    assert len(changes) == 4


def test_text_colour_only_when_asked(repo: Path, run_cli: Run) -> None:
    commit(repo, {"overlays/prod/values.yaml": "mig:\n  strategy: mixed\n"}, "mixed")
    from renderer.cli.diff import DiffOptions, compute

    opts = DiffOptions("main", "change", Path("values.yaml"), Path("overlays"), "text", False, False, (), None, 65536)
    d = compute(opts, repo)
    assert "\x1b[" in diff_report.text(d, color=True)
    assert "\x1b[" not in diff_report.text(d, color=False)
    assert "\x1b[" not in run_cli("diff", "main", "change").stdout


@pytest.mark.slow
def test_markdown_for_200_clusters_splits_into_comments(repo: Path, run_cli: Run, tmp_path: Path) -> None:
    overlays = {f"overlays/c{i:03d}/values.yaml": f"mig:\n  strategy: {'mixed' if i % 2 else 'single'}\n" for i in range(200)}
    commit(repo, {"overlays/prod/values.yaml": None, "overlays/staging/values.yaml": None, **overlays}, "200 clusters")
    git(repo, "branch", "-f", "main", "HEAD")
    env = "devicePlugin:\n  version: v0.21.0\n  env:\n    - {name: FAIL_ON_INIT_ERROR, value: 'false'}\n    - {name: PASS_DEVICE_SPECS, value: 'true'}\n"
    commit(repo, {"values.yaml": VALUES + env}, "device plugin update everywhere")
    parts_dir = tmp_path / "parts"
    result = run_cli("diff", "main", "change", "--format", "markdown", "--parts-dir", str(parts_dir))
    assert result.exit_code == 0
    from renderer.cli.diff import DiffOptions, compute

    d = compute(DiffOptions("main", "change", Path("values.yaml"), Path("overlays"), "markdown", False, False, (), None, 65536), repo)
    body = diff_report.markdown(d)
    assert len(body) > 65_536  # big enough that splitting is exercised
    parts = [p.read_text(encoding="utf-8") for p in sorted(parts_dir.glob("part-*.md"))]
    assert len(parts) >= 2
    assert all(len(p) < 65_536 for p in parts)
    assert [p.splitlines()[0] for p in parts] == [f"<!-- gpu-render-diff part {i}/{len(parts)} -->" for i in range(1, len(parts) + 1)]
    assert diff_report.join_parts(parts) == body
    import re

    assert set(re.findall(r"<b>(c\d{3})</b>", body)) == {f"c{i:03d}" for i in range(200)}
    assert len(disruption(json.loads(run_cli("diff", "main", "change", "--format", "json").stdout), "scheduling-pause")["clusters"]) == 201


def test_split_keeps_every_character() -> None:
    body = "# title\n" + "".join(f"<details><summary>{i}</summary>\n\n" + ("x" * 300 + "\n") * 5 + "</details>\n" for i in range(100)) + "y" * 5000
    parts = diff_report.split_markdown(body, 2000)
    assert all(len(p) < 2000 for p in parts)
    assert diff_report.join_parts(parts) == body
    # a <details> block longer than a comment is closed and reopened at the cut
    big = "# t\n<details><summary>huge</summary>\n\n" + "".join(f"- line {i} " + "z" * 80 + "\n" for i in range(100)) + "\n</details>\n"
    parts = diff_report.split_markdown(big, 2000)
    assert len(parts) > 3 and all(len(p) < 2000 for p in parts)
    for p in parts:
        lines = p.splitlines()
        assert sum(ln.startswith("<details>") for ln in lines) == sum(ln.startswith("</details>") for ln in lines), p
    assert diff_report.join_parts(parts) == big
    assert diff_report.split_markdown("", 2000) == ["<!-- gpu-render-diff part 1/1 -->\n"]


def _ds(name: str, image: str, env: dict[str, str] | None = None, labels: dict[str, str] | None = None) -> str:
    from renderer import yamlio

    container = {"name": "main", "image": image, "env": [{"name": k, "value": v} for k, v in (env or {}).items()]}
    obj = {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {"name": name, "namespace": "gpu-operator", "labels": labels or {}},
        "spec": {"template": {"spec": {"containers": [container]}}},
    }
    return yamlio.dump_file([obj])


@pytest.mark.parametrize(
    ("component", "name", "change", "expected"),
    [
        ("driver", "nvidia-driver-daemonset-ubuntu2204", "image", ("driver-reload", ("ubuntu2204",))),
        ("container-toolkit", "nvidia-container-toolkit-daemonset", "image", ("runtime-restart", ())),
        ("mig-manager", "nvidia-mig-manager", "image", ("gpu-reset", ())),
        ("device-plugin", "nvidia-device-plugin-daemonset", "env", ("gpu-reset", ())),
        ("dcgm-exporter", "nvidia-dcgm-exporter", "image", ("metrics-gap", ())),
        ("nfd", "nfd-worker", "image", ("node-label-churn", ())),
        ("validator", "nvidia-operator-validator", "image", ("pod-restart", ())),
        ("dcgm-exporter", "nvidia-dcgm-exporter", "label", ("none", ())),
    ],
)
def test_classes_by_component_and_field(component: str, name: str, change: str, expected: tuple[str, tuple[str, ...]]) -> None:
    path = f"base/{component}/daemonset-{name}.yaml"
    old = {path: _ds(name, "nvcr.io/nvidia/x:1.0", {"MIG_STRATEGY": "single"})}
    new_image = "nvcr.io/nvidia/x:2.0" if change == "image" else "nvcr.io/nvidia/x:1.0"
    env = {"MIG_STRATEGY": "mixed" if change == "env" else "single"}
    new = {path: _ds(name, new_image, env, {"team": "gpu"} if change == "label" else None)}
    d = diff_sides(side_from_tree("a", old), side_from_tree("b", new))
    (obj,) = d.objects
    cls, pools = expected
    assert obj.component == component
    assert obj.classes[0] == cls
    assert obj.causes[0].pools == pools
    if component == "driver":
        assert [(v.label, v.old, v.new) for v in d.versions] == [("driver pool ubuntu2204 (main)", "1.0", "2.0")]


PATCH = """\
apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: nvidia-device-plugin-daemonset
  namespace: gpu-operator
spec:
  template:
    spec:
      tolerations:
        - {key: dedicated, operator: Exists}
"""


def test_user_patches_are_diffed_and_classified(repo: Path, run_cli: Run) -> None:
    commit(repo, {"overlays/staging/patches/device-plugin.yaml": PATCH}, "tolerate dedicated nodes")
    data = diff_json(run_cli, "main", "change")
    (change,) = data["policy"]
    assert change["cluster"] == "staging"
    assert change["path"] == "patches/device-plugin.yaml: DaemonSet/nvidia-device-plugin-daemonset"
    assert change["classes"] == ["scheduling-pause"]
    commit(repo, {"overlays/staging/patches/device-plugin.yaml": PATCH.replace("dedicated", "gpu-only")}, "rename taint")
    data = diff_json(run_cli, "HEAD~1", "HEAD")
    assert [(p["path"], p["old"], p["new"]) for p in data["policy"]] == [
        ("patches/device-plugin.yaml: DaemonSet/nvidia-device-plugin-daemonset: spec.template.spec.tolerations[key=dedicated]", {"key": "dedicated", "operator": "Exists"}, None),
        ("patches/device-plugin.yaml: DaemonSet/nvidia-device-plugin-daemonset: spec.template.spec.tolerations[key=gpu-only]", None, {"key": "gpu-only", "operator": "Exists"}),
    ]


def test_outside_a_repository_needs_two_folders(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, run_cli: Run) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "values.yaml").write_text(VALUES)
    result = run_cli("diff")
    assert result.exit_code == 1
    assert "not a git repository" in result.stderr


def test_output_tree_rebuilds_each_cluster_like_kustomize(repo: Path) -> None:
    """Reading output/ back (base + overlay patches, resources, deletions) gives exactly the
    objects rendered directly from each cluster's model: the two modes agree."""
    from renderer.diff import side_from_models
    from renderer.inputs import read_inputs
    from renderer.pipeline import plan
    from renderer.render import render_plan

    write(repo, {"overlays/staging/values.yaml": "devicePlugin:\n  enabled: false\n", "overlays/staging/patches/extra.yaml": PATCH.replace("nvidia-device-plugin-daemonset", "x")})
    write(repo, {"overlays/staging/patches/extra.yaml": None})
    write(repo, {"overlays/prod/patches/dp.yaml": PATCH})
    p = plan(read_inputs(Path("values.yaml"), Path("overlays")))
    assert p.base is not None and not p.errors
    tree = side_from_tree("tree", render_plan(p))
    models = side_from_models("models", p.base, p.clusters, {c: i.patches for c, i in p.inputs.items()})
    assert sorted(tree.scopes) == ["argocd", "fleet", "prod", "staging"]
    assert "device-plugin" not in {e.component for e in tree.scopes["staging"].values()}
    d = diff_sides(models, tree)
    assert {o.scope for o in d.objects} == {"argocd"}  # only the tree has Argo CD apps
    assert d.policy == ()  # the copied user patch reads back as the same patch


def test_image_env_vars_give_version_lines() -> None:
    path = "base/validator/daemonset-nvidia-operator-validator.yaml"
    old = {path: _ds("nvidia-operator-validator", "nvcr.io/nvidia/v:1", {"DRIVER_IMAGE": "nvcr.io/nvidia/driver:570"})}
    new = {path: _ds("nvidia-operator-validator", "nvcr.io/nvidia/v:1", {"DRIVER_IMAGE": "nvcr.io/nvidia/driver:580"})}
    d = diff_sides(side_from_tree("a", old), side_from_tree("b", new))
    assert [(v.label, v.old, v.new, v.scopes) for v in d.versions] == [("validator (DRIVER_IMAGE)", "570", "580", ("fleet",))]


def test_fleet_driver_bump_hits_only_pools_that_follow_it(repo: Path, run_cli: Run) -> None:
    pinned = VALUES.replace('os: {id: rhel, version: "9.4"}', 'os: {id: rhel, version: "9.4"}\n    driver: {version: "570.124.06"}')
    commit(repo, {"values.yaml": pinned}, "pin rhel")
    git(repo, "branch", "-f", "main", "HEAD")
    commit(repo, {"values.yaml": pinned.replace('driver:\n  version: "570.124.06"', 'driver:\n  version: "580.95.05"')}, "bump fleet driver")
    data = diff_json(run_cli, "main", "change")
    assert disruption(data, "driver-reload")["pools"] == ["ubuntu2204"]
    assert [v["label"] for v in data["versions"]] == ["driver pool ubuntu2204"]


def test_colour_on_a_terminal_unless_no_color(repo: Path) -> None:
    """Through a real pseudo-terminal: ANSI colour by default, none with NO_COLOR set."""
    import sys

    commit(repo, {"overlays/prod/values.yaml": "mig:\n  strategy: mixed\n"}, "mixed")

    def run(env_extra: dict[str, str]) -> bytes:
        master, slave = os.openpty()
        env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
        env.update({"PYTHONPATH": str(ROOT), **env_extra})
        subprocess.run([sys.executable, "-m", "renderer", "diff", "main", "change"], stdout=slave, stderr=subprocess.PIPE, cwd=repo, env=env, timeout=120, check=True)
        os.close(slave)
        chunks = []
        while True:
            try:
                data = os.read(master, 65536)
            except OSError:
                break
            if not data:
                break
            chunks.append(data)
        os.close(master)
        return b"".join(chunks)

    assert b"\x1b[" in run({})
    plain = run({"NO_COLOR": "1"})
    assert b"\x1b[" not in plain and b"gpu-reset" in plain
    from renderer.cli.diff import want_color

    assert want_color(True, {}) and want_color(True, {"NO_COLOR": ""})
    assert not want_color(True, {"NO_COLOR": "1"}) and not want_color(False, {})


def test_workflows_are_valid_and_call_real_options() -> None:
    """The reusable PR workflow and CI validate against the GitHub workflow schema, and every
    option the PR workflow passes to gpu-render exists."""
    import re
    import shutil
    import sys

    import yaml

    from renderer.cli import main

    workflows = sorted((ROOT / ".github" / "workflows").glob("*.yml"))
    assert {w.name for w in workflows} >= {"ci.yml", "gpu-render-diff.yml"}
    exe = shutil.which("check-jsonschema") or str(Path(sys.executable).parent / "check-jsonschema")
    proc = subprocess.run([exe, "--builtin-schema", "vendor.github-workflows", *map(str, workflows)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    flow = yaml.safe_load((ROOT / ".github" / "workflows" / "gpu-render-diff.yml").read_text())
    assert "workflow_call" in flow[True]  # PyYAML reads the key `on` as True
    scripts = "\n".join(str(step.get("run", "")) for step in flow["jobs"]["diff"]["steps"])
    for command in ("build", "diff"):
        cmd = main.get_command(click.Context(main), command)
        assert cmd is not None, command
        params = {opt for p in cmd.params for opt in getattr(p, "opts", [])}
        used = set()
        for line in re.findall(rf"gpu-render {command}\b(.*?)(?:>|\|\||$)", scripts.replace("\\\n", " "), re.M):
            used |= set(re.findall(r"(--[a-z][a-z-]+)", line))
        assert used, command
        assert used <= params, used - params


def test_pool_mig_config_change_seeds_labels_and_resets_no_gpu(repo: Path, run_cli: Run) -> None:
    values = VALUES.replace('version: "22.04"}', 'version: "22.04"}\n    mig: {config: all-1g.10gb}')
    commit(repo, {"values.yaml": values}, "MIG profile for the ubuntu pool")
    data = diff_json(run_cli, "main", "change")
    classes = data["summary"]["classes"]
    assert "gpu-reset" not in classes  # existing nodes keep their nvidia.com/mig.config
    churn = disruption(data, "node-label-churn")
    assert any("nodePools[name=ubuntu2204].mig" in r and "only on nodes without it" in r for r in churn["reasons"])
    changed = {o["name"] for o in data["objects"]}
    assert changed == {"nvidia-node-labeller"}


def test_a_file_name_with_a_newline_cannot_hand_another_files_text_to_the_diff(repo: Path, run_cli: Run) -> None:
    """A committed name `a\\n<blob id>` once split its `commit:path` request to git cat-file in
    two, so every later path got the answer meant for the one before: the old blob stood in
    for the changed values and `diff` said "No changes" (a review bypass). Blobs are read by id."""
    old = git(repo, "rev-parse", "main:overlays/staging/values.yaml").strip()
    bumped = "nodePools:\n  - name: ubuntu2204\n    os: {id: ubuntu, version: '22.04'}\n    driver: {version: '580.95.05'}\n"
    commit(repo, {"overlays/staging/values.yaml": bumped, f"overlays/staging/a\n{old}": "x\n"}, "decoy")
    data = diff_json(run_cli, "main", "change")
    assert {"label": "driver pool ubuntu2204", "old": "570.124.06", "new": "580.95.05", "clusters": ["staging"]} in data["versions"]
    assert run_cli("diff", "main", "change", "--fail-on", "driver-reload").exit_code == 1


def test_a_file_name_that_is_not_utf8_is_a_problem_not_a_crash(repo: Path, run_cli: Run) -> None:
    (repo / "overlays" / "staging" / "patches").mkdir()
    (repo / os.fsdecode(b"overlays/staging/patches/a\xff.yaml")).write_bytes(b"x: 1\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "odd name")
    result = run_cli("diff", "main", "change")
    assert result.exit_code == 2 or result.exit_code == 1, result.output
    assert "is not UTF-8" in result.output + result.stderr and "Traceback" not in result.output + result.stderr


@pytest.mark.parametrize("where", ["overlays/staging/patches/p.yaml", "overlays/staging/values.yaml", "overlays/east"])
def test_a_committed_symlink_among_the_inputs_is_refused(repo: Path, run_cli: Run, where: str) -> None:
    """A symbolic link's blob is its target's name, never read as a file; build refuses a link
    among an overlay's inputs, so diff does too: a driver bump made in a linked file showed
    "No changes" while build rendered it."""
    (repo / "shared").mkdir()
    (repo / "shared" / "prod.yaml").write_text("driver:\n  version: '580.105.08'\n")
    link = repo / where
    link.parent.mkdir(parents=True, exist_ok=True)
    if link.exists():
        link.unlink()
    os.symlink(os.path.relpath(repo / "shared" / ("prod.yaml" if where.endswith(".yaml") else ""), link.parent), link)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "link")
    result = run_cli("diff", "main", "change")
    assert result.exit_code == 1, result.output
    assert f"{where} is a symlink, which gpu-render build refuses" in result.stderr and "Traceback" not in result.output + result.stderr
