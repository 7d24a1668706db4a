"""CLI options that become paths or YAML text, and input or output folders that are not what
they should be: every case ends in a reported problem or a usage error (exit 1 or 2), never an
internal error (exit 3), and nothing is written outside the folder it belongs in."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml

from renderer.problems import UserError
from tests.conftest import ROOT
from tests.test_nodes import FLEET_NODES, doc

NFD = "feature.node.kubernetes.io"


def files_under(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file() and ".gpu-render" not in str(p)}


@pytest.fixture
def nodes_json(repo: Path) -> Path:
    path = repo / "nodes.json"
    path.write_text(doc(FLEET_NODES))
    return path


# --- 1. nodes --cluster ---------------------------------------------------------------------


BAD_CLUSTERS = ["../../escaped", "a/b", "fleet", "ab\n", "Upper", "a" * 64, ""]


@pytest.mark.parametrize("cluster", [*BAD_CLUSTERS, "ABSOLUTE"])
@pytest.mark.parametrize("write", [True, False], ids=["write", "read"])
def test_nodes_import_cluster_must_be_a_dns_label(repo: Path, nodes_json: Path, run_cli: Any, tmp_path_factory: pytest.TempPathFactory, cluster: str, write: bool) -> None:
    outside = tmp_path_factory.mktemp("outside")
    if cluster == "ABSOLUTE":
        cluster = str(outside / "x")
    before = files_under(repo)
    result = run_cli("nodes", "import", str(nodes_json), "--cluster", cluster, *(["--write"] if write else []))
    assert result.exit_code == 2, result.output + result.stderr
    assert "--cluster" in result.stderr
    assert files_under(repo) == before
    assert list(outside.iterdir()) == []
    assert not (repo.parent.parent / "escaped").exists()


@pytest.mark.parametrize("cluster", ["../../escaped", "fleet", "a/b"])
def test_nodes_check_cluster_must_be_a_dns_label(repo: Path, nodes_json: Path, run_cli: Any, cluster: str) -> None:
    result = run_cli("nodes", "check", str(nodes_json), "--cluster", cluster)
    assert result.exit_code == 2, result.output + result.stderr


def test_nodes_import_never_writes_through_a_symlink_out_of_the_repo(repo: Path, nodes_json: Path, run_cli: Any, tmp_path_factory: pytest.TempPathFactory) -> None:
    outside = tmp_path_factory.mktemp("outside")
    (repo / "overlays" / "linked").symlink_to(outside)
    result = run_cli("nodes", "import", str(nodes_json), "--cluster", "linked", "--write")
    assert result.exit_code == 1, result.output + result.stderr
    assert "outside the policy repo" in result.stderr
    assert list(outside.iterdir()) == []


def test_nodes_import_writes_a_new_cluster_inside_the_repo(repo: Path, nodes_json: Path, run_cli: Any) -> None:
    result = run_cli("nodes", "import", str(nodes_json), "--cluster", "new-one", "--write")
    assert result.exit_code == 0, result.output + result.stderr
    assert yaml.safe_load((repo / "overlays" / "new-one" / "values.yaml").read_text())["nodePools"]


# --- 2., 3., 4. init ------------------------------------------------------------------------


@pytest.fixture
def in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    work = tmp_path / "a" / "b" / "c"
    work.mkdir(parents=True)
    monkeypatch.chdir(work)
    return work


INSTALL = ("--install-from", "gpu-render==1.0")


@pytest.mark.parametrize("cluster", ["a/../../../escaped-init", "a/b", "ab\n", "fleet", "../x", "-a"])
def test_init_cluster_must_be_a_whole_dns_label(in_tmp: Path, run_cli: Any, cluster: str) -> None:
    result = run_cli("init", "n2", "--cluster", cluster, *INSTALL)
    assert result.exit_code == 1, result.output + result.stderr
    assert "--cluster" in result.stderr
    assert not (in_tmp / "n2").exists()
    assert sorted(p.name for p in in_tmp.parent.parent.parent.rglob("*")) == ["a", "b", "c"]


def test_init_refuses_a_repo_url_with_a_line_break(in_tmp: Path, run_cli: Any) -> None:
    for url in ("https://x\n  evil: 1", "https://x\r", "https://x\x85", ""):
        result = run_cli("init", "p", "--repo-url", url, *INSTALL)
        assert result.exit_code == 1, (url, result.output + result.stderr)
        assert "--repo-url" in result.stderr
        assert not (in_tmp / "p").exists()


@pytest.mark.parametrize("url", ["https://x # y", "'quoted'", "yes", "https://x: y", "*alias", "git@github.com:o/r.git", " https://x", '"https://x"', "https://x/é"])
def test_init_writes_the_repo_url_as_given(in_tmp: Path, run_cli: Any, url: str) -> None:
    result = run_cli("init", "p", "--repo-url", url, *INSTALL)
    assert result.exit_code == 0, result.output + result.stderr
    data = yaml.safe_load((in_tmp / "p" / "values.yaml").read_text(encoding="utf-8"))
    assert data["gitops"]["repoURL"] == url
    assert set(data["gitops"]) == {"repoURL", "targetRevision"}


def test_init_keeps_a_plain_url_plain(in_tmp: Path, run_cli: Any) -> None:
    assert run_cli("init", "p", *INSTALL).exit_code == 0
    assert "  repoURL: https://github.com/example/gpu-policy.git\n" in (in_tmp / "p" / "values.yaml").read_text()


def test_init_on_a_file_or_a_dangling_symlink_is_a_usage_error(in_tmp: Path, run_cli: Any) -> None:
    (in_tmp / "afile").write_text("mine\n")
    (in_tmp / "dangling").symlink_to(in_tmp / "nowhere")
    for target in ("afile", "dangling"):
        result = run_cli("init", target, *INSTALL)
        assert result.exit_code == 2, (target, result.output + result.stderr)
        assert "DIRECTORY" in result.stderr
    assert (in_tmp / "afile").read_text() == "mine\n"
    assert not (in_tmp / "nowhere").exists()


def test_init_never_writes_through_a_symlink(in_tmp: Path, run_cli: Any) -> None:
    outside = in_tmp.parent / "outside"
    outside.mkdir()
    (in_tmp / "p").mkdir()
    (in_tmp / "p" / "overlays").symlink_to(outside)
    result = run_cli("init", "p", *INSTALL)
    assert result.exit_code == 1, result.output + result.stderr
    assert list(outside.iterdir()) == []
    (in_tmp / "q").mkdir()
    (in_tmp / "q" / "values.yaml").symlink_to(outside / "values.yaml")  # dangling: exists() is False
    result = run_cli("init", "q", *INSTALL)
    assert result.exit_code == 1 and "never overwrites" in result.stderr
    assert list(outside.iterdir()) == []


def test_init_refuses_a_folder_name_with_a_line_break(in_tmp: Path, run_cli: Any) -> None:
    result = run_cli("init", "bad\nname", *INSTALL)
    assert result.exit_code == 2, result.output + result.stderr
    assert not (in_tmp / "bad\nname").exists()


def test_scaffold_refuses_what_the_cli_refuses() -> None:
    from renderer.scaffold import scaffold

    for kwargs in ({"cluster": "a/../../x"}, {"cluster": "fleet"}, {"repo_url": "https://x\n  evil: 1"}, {"name": "a\nb: 1"}):
        with pytest.raises(ValueError):
            scaffold(**{"name": "p", "install": "gpu-render==1.0", **kwargs})


# --- 5. diff --parts-dir --------------------------------------------------------------------


@pytest.fixture
def two_policies(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[str, str]:
    for side in ("old", "new"):
        (tmp_path / side).mkdir()
        shutil.copy(ROOT / "values.yaml", tmp_path / side / "values.yaml")
        shutil.copytree(ROOT / "overlays", tmp_path / side / "overlays")
    with open(tmp_path / "new" / "overlays" / "staging" / "values.yaml", "a") as handle:
        handle.write("\nmig:\n  strategy: mixed\n")
    monkeypatch.chdir(tmp_path)
    return "old", "new"


def test_diff_parts_dir_that_is_a_file_is_a_usage_error(two_policies: tuple[str, str], tmp_path: Path, run_cli: Any) -> None:
    (tmp_path / "afile").write_text("mine\n")
    result = run_cli("diff", *two_policies, "--format", "markdown", "--parts-dir", "afile")
    assert result.exit_code == 2, result.output + result.stderr
    assert "--parts-dir" in result.stderr
    assert (tmp_path / "afile").read_text() == "mine\n"


def test_diff_parts_dir_that_cannot_be_made_is_a_problem(two_policies: tuple[str, str], tmp_path: Path, run_cli: Any) -> None:
    (tmp_path / "afile").write_text("mine\n")
    for where in ("afile/sub", "/proc/gpu-render-no-such/x"):
        if where.startswith("/proc") and not Path("/proc/self").exists():
            continue
        result = run_cli("diff", *two_policies, "--format", "markdown", "--parts-dir", where)
        assert result.exit_code == 1, (where, result.output + result.stderr)
        assert "cannot write the markdown parts" in result.stderr


def test_diff_parts_dir_needs_the_markdown_format(two_policies: tuple[str, str], tmp_path: Path, run_cli: Any) -> None:
    for fmt in ("text", "json"):
        result = run_cli("diff", *two_policies, "--format", fmt, "--parts-dir", "parts")
        assert result.exit_code == 2, result.output + result.stderr
        assert "--format markdown" in result.stderr
    assert not (tmp_path / "parts").exists()
    result = run_cli("diff", *two_policies, "--format", "markdown", "--parts-dir", "parts")
    assert result.exit_code == 0, result.output + result.stderr
    assert [p.name for p in (tmp_path / "parts").iterdir()] == ["part-001.md"]


# --- 6. scanning the output folder ----------------------------------------------------------


class _FailingScandir:
    """``os.scandir`` whose iteration fails after the first entry (as /proc does for root)."""

    def __init__(self, real: Any, path: Any) -> None:
        self.inner = real(path)

    def __enter__(self) -> _FailingScandir:
        return self

    def __exit__(self, *exc: object) -> None:
        self.inner.close()

    def __iter__(self) -> _FailingScandir:
        return self

    def __next__(self) -> Any:
        entry = next(self.inner)
        if entry.name != "first":
            raise PermissionError(13, "Permission denied")
        return entry


def test_a_folder_that_fails_while_it_is_listed_is_a_problem(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from renderer import write

    out = tmp_path / "out"
    (out / "sub").mkdir(parents=True)
    (out / "first").write_text("x")
    (out / "second").write_text("x")
    real = os.scandir
    monkeypatch.setattr(write.os, "scandir", lambda path: _FailingScandir(real, path))
    with pytest.raises(UserError) as caught:
        write._scan(out)
    assert "cannot list" in caught.value.message and caught.value.problems


def test_build_into_a_folder_that_fails_while_listed_exits_1(repo: Path, run_cli: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    from renderer import write

    out = repo / "out"
    out.mkdir()
    (out / "first").write_text("x")
    (out / "second").write_text("x")
    real = os.scandir
    monkeypatch.setattr(write.os, "scandir", lambda path: _FailingScandir(real, path))
    result = run_cli("build", "--out", str(out), "--no-cache")
    assert result.exit_code == 1, result.output + result.stderr
    assert "cannot list" in result.stderr and "internal error" not in result.stderr


# --- 7., 8. the overlays folder -------------------------------------------------------------


COMMANDS = [["validate"], ["build", "--out", "output"], ["images"], ["nodes", "check", "nodes.json"]]


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: c[0])
def test_overlays_linked_out_of_the_repo_is_a_problem(repo: Path, nodes_json: Path, run_cli: Any, tmp_path_factory: pytest.TempPathFactory, command: list[str]) -> None:
    outside = tmp_path_factory.mktemp("elsewhere")
    shutil.move(str(repo / "overlays"), str(outside / "overlays"))
    (repo / "overlays").symlink_to(outside / "overlays")
    result = run_cli(*command)
    assert result.exit_code == 1, result.output + result.stderr
    assert "overlays:1:1: /: refusing to read overlays: it is a symlink to" in result.stderr
    assert "internal error" not in result.stderr
    assert not (repo / "output").exists()


@pytest.mark.parametrize("overlays", ["overlay", "/nonexistent-gpu-render"])
@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: c[0])
def test_a_named_overlays_folder_that_is_not_there_is_an_error(repo: Path, nodes_json: Path, run_cli: Any, command: list[str], overlays: str) -> None:
    assert run_cli("build", "-q").exit_code == 0
    before = files_under(repo / "output")
    result = run_cli(*command, "--overlays", overlays)
    assert result.exit_code == 1, result.output + result.stderr
    assert "does not exist" in result.stderr
    assert files_under(repo / "output") == before


def test_a_named_overlays_folder_that_is_a_file_is_an_error(repo: Path, run_cli: Any) -> None:
    (repo / "clusters").write_text("not a folder\n")
    result = run_cli("validate", "--overlays", "clusters")
    assert result.exit_code == 1 and "is not a folder" in result.stderr


def test_a_named_absent_overlays_never_deletes_rendered_clusters(repo: Path, run_cli: Any) -> None:
    assert run_cli("build", "-q").exit_code == 0
    shutil.rmtree(repo / "overlays")  # no overlays of the policy's own to point at
    before = files_under(repo / "output")
    result = run_cli("build", "--overlays", "overlay")
    assert result.exit_code == 1, result.output + result.stderr
    assert "would delete" in result.stderr
    assert files_under(repo / "output") == before


def test_the_default_overlays_being_a_file_is_an_error(repo: Path, run_cli: Any) -> None:
    assert run_cli("build", "-q").exit_code == 0
    before = files_under(repo / "output")
    shutil.rmtree(repo / "overlays")
    (repo / "overlays").write_text("oops\n")
    for command in (["validate"], ["build"], ["images"]):
        result = run_cli(*command)
        assert result.exit_code == 1, (command, result.output + result.stderr)
        assert "overlays is not a folder" in result.stderr
    assert files_under(repo / "output") == before


def test_no_overlays_at_all_is_a_fleet_without_clusters(repo: Path, run_cli: Any) -> None:
    shutil.rmtree(repo / "overlays")
    result = run_cli("validate")
    assert result.exit_code == 0 and "0 overlay(s)" in result.stdout
    result = run_cli("validate", "--overlays", "none")  # the documented way to check a lone values file
    assert result.exit_code == 0 and "0 overlay(s)" in result.stdout


# --- 9. node labels that cannot be printed --------------------------------------------------


def test_a_lone_surrogate_in_a_node_label_is_a_problem(repo: Path, run_cli: Any) -> None:
    labels = {f"{NFD}/pci-10de.present": "true", f"{NFD}/system-os_release.ID": "ubuntu\ud800", f"{NFD}/system-os_release.VERSION_ID": "22.04"}
    (repo / "f.json").write_text(json.dumps({"items": [{"metadata": {"name": "gpu-a", "labels": labels}}]}))
    for command in (["nodes", "check", "f.json"], ["nodes", "check", "f.json", "--format", "json"], ["nodes", "import", "f.json"]):
        result = run_cli(*command)
        assert result.exit_code == 1, (command, result.output)
        assert "surrogate" in result.output and "internal error" not in result.output
