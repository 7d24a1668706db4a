"""The incremental build (renderer/cache.py): whatever the cache holds, the output is that of a clean build."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from renderer import cache, yamlio

ROOT = Path(__file__).resolve().parent.parent

CLUSTER = """\
gitops:
  destination:
    name: {name}
"""


def tree(folder: Path) -> dict[str, bytes]:
    """Every output file, without the cache."""
    return {
        p.relative_to(folder).as_posix(): p.read_bytes()
        for p in folder.rglob("*")
        if p.is_file() and cache.CACHE_DIR not in p.relative_to(folder).parts
    }




def same_as_clean(repo: Path, run_cli: Callable[..., Any]) -> None:
    result = run_cli("build", "-q", "--no-cache", "--out", "clean")
    assert result.exit_code == 0, result.stderr
    assert tree(repo / "output") == tree(repo / "clean")
    shutil.rmtree(repo / "clean")
    assert run_cli("build", "--check").exit_code == 0


def build(run_cli: Callable[..., Any]) -> Any:
    result = run_cli("build", "-q")
    assert result.exit_code == 0, result.stderr
    return result


def rebuild(run_cli: Callable[..., Any], rendered: list[str]) -> list[str]:
    """Build once more; the clusters that build rendered, in order."""
    rendered.clear()
    build(run_cli)
    return list(rendered)


def add_cluster(repo: Path, name: str, text: str | None = None) -> None:
    (repo / "overlays" / name).mkdir()
    (repo / "overlays" / name / "values.yaml").write_text(text if text is not None else CLUSTER.format(name=name))


def test_cache_folder_is_tagged_and_left_alone(repo: Path, run_cli) -> None:  # type: ignore[no-untyped-def]
    build(run_cli)
    folder = repo / "output" / cache.CACHE_DIR
    assert (folder / ".gitignore").read_text().splitlines()[-1] == "*"
    assert (folder / "CACHEDIR.TAG").read_text().startswith("Signature: 8a477f597d28d172789f06886806bc55")
    assert (folder / cache.STATE).is_file() and (folder / cache.CHART).is_file()
    result = build(run_cli)  # the writer neither deletes it nor calls it foreign
    assert (folder / cache.STATE).is_file()
    assert "gpu-render-cache" not in result.stdout


def test_unchanged_clusters_are_not_rendered(repo: Path, run_cli, rendered: list[str]) -> None:  # type: ignore[no-untyped-def]
    build(run_cli)
    assert sorted(rendered) == ["prod-east", "staging"]
    assert rebuild(run_cli, rendered) == []
    values = repo / "overlays" / "staging" / "values.yaml"
    values.write_text(values.read_text() + "dcgmExporter:\n  serviceMonitor:\n    interval: 45s\n")
    assert rebuild(run_cli, rendered) == ["staging"]
    same_as_clean(repo, run_cli)


@pytest.mark.slow
def test_add_and_remove_clusters(repo: Path, run_cli, rendered: list[str]) -> None:  # type: ignore[no-untyped-def]
    build(run_cli)
    add_cluster(repo, "prod-west")
    assert rebuild(run_cli, rendered) == ["prod-west"]
    same_as_clean(repo, run_cli)
    shutil.rmtree(repo / "overlays" / "prod-east")
    assert rebuild(run_cli, rendered) == []
    assert not (repo / "output" / "overlays" / "prod-east").exists()
    same_as_clean(repo, run_cli)


@pytest.mark.slow
def test_fleet_change_renders_everything(repo: Path, run_cli, rendered: list[str]) -> None:  # type: ignore[no-untyped-def]
    build(run_cli)
    values = repo / "values.yaml"
    values.write_text(values.read_text() + "\n# a comment changes the bytes\n")
    assert sorted(rebuild(run_cli, rendered)) == ["prod-east", "staging"]
    same_as_clean(repo, run_cli)


@pytest.mark.slow
def test_hand_edits_are_rendered_over(repo: Path, run_cli, rendered: list[str]) -> None:  # type: ignore[no-untyped-def]
    build(run_cli)
    edited = repo / "output" / "overlays" / "staging" / "kustomization.yaml"
    edited.write_text(edited.read_text() + "# edited by hand\n")
    (repo / "output" / "chart" / "gpu-stack" / "values-prod-east.yaml").unlink()
    assert sorted(rebuild(run_cli, rendered)) == ["prod-east", "staging"]
    same_as_clean(repo, run_cli)
    aggregate = repo / "output" / "argocd" / "applicationset.yaml"
    aggregate.write_text("# edited\n")
    build(run_cli)
    same_as_clean(repo, run_cli)


def test_same_size_same_mtime_edit_is_caught_by_hash(repo: Path, run_cli, rendered: list[str]) -> None:  # type: ignore[no-untyped-def]
    import os

    build(run_cli)
    edited = repo / "output" / "overlays" / "staging" / "kustomization.yaml"
    st = edited.stat()
    text = edited.read_text()
    edited.write_text(text.replace("Kustomization", "KustomizatioN"))
    os.utime(edited, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert "staging" in rebuild(run_cli, rendered)
    same_as_clean(repo, run_cli)


@pytest.mark.slow
@pytest.mark.parametrize("damage", ["garbage", "truncated", "empty", "other-format", "chart-garbage", "no-state"])
def test_corrupt_cache_is_ignored(repo: Path, run_cli, damage: str) -> None:  # type: ignore[no-untyped-def]
    build(run_cli)
    folder = repo / "output" / cache.CACHE_DIR
    state = folder / cache.STATE
    if damage == "garbage":
        state.write_bytes(b"\x00\xff not json")
    elif damage == "truncated":
        state.write_bytes(state.read_bytes()[:100])
    elif damage == "empty":
        state.write_bytes(b"")
    elif damage == "other-format":
        state.write_bytes(state.read_bytes().replace(cache.FORMAT.encode(), b"gpu-render-cache/0"))
    elif damage == "chart-garbage":
        (folder / cache.CHART).write_bytes(b"not json")
    else:
        state.unlink()
    values = repo / "overlays" / "staging" / "values.yaml"
    values.write_text(values.read_text() + "mig:\n  strategy: mixed\n")
    build(run_cli)
    same_as_clean(repo, run_cli)


def test_no_cache_neither_reads_nor_writes_it(repo: Path, run_cli, rendered: list[str]) -> None:  # type: ignore[no-untyped-def]
    assert run_cli("build", "-q", "--no-cache").exit_code == 0
    assert not (repo / "output" / cache.CACHE_DIR).exists()
    build(run_cli)
    rendered.clear()
    assert run_cli("build", "-q", "--no-cache").exit_code == 0
    assert sorted(rendered) == ["prod-east", "staging"]


def test_check_renders_everything(repo: Path, run_cli, rendered: list[str]) -> None:  # type: ignore[no-untyped-def]
    build(run_cli)
    rendered.clear()
    assert run_cli("build", "--check").exit_code == 0
    assert sorted(rendered) == ["prod-east", "staging"]


def test_dry_run_uses_but_does_not_update_the_cache(repo: Path, run_cli) -> None:  # type: ignore[no-untyped-def]
    build(run_cli)
    state = (repo / "output" / cache.CACHE_DIR / cache.STATE).read_bytes()
    add_cluster(repo, "prod-west")
    result = run_cli("build", "--dry-run")
    assert result.exit_code == 0
    assert "would write: " in result.stdout
    assert (repo / "output" / cache.CACHE_DIR / cache.STATE).read_bytes() == state


@pytest.mark.slow
def test_warnings_of_reused_clusters_are_still_reported(repo: Path, run_cli, rendered: list[str]) -> None:  # type: ignore[no-untyped-def]
    values = repo / "overlays" / "prod-east" / "values.yaml"
    values.write_text(values.read_text() + "operator:\n  priorityClassName: high\n")
    first = run_cli("build")
    assert first.exit_code == 0
    assert "overlays/prod-east/values.yaml" in first.stderr
    add_cluster(repo, "prod-west")
    rendered.clear()
    second = run_cli("build")
    assert rendered == ["prod-west"]
    assert second.stderr == first.stderr
    same_as_clean(repo, run_cli)


@pytest.mark.slow
def test_shared_destination_warning_over_reused_clusters(repo: Path, run_cli, rendered: list[str]) -> None:  # type: ignore[no-untyped-def]
    build(run_cli)
    add_cluster(repo, "prod-west", CLUSTER.format(name="prod-east"))
    rendered.clear()
    result = run_cli("build")
    assert result.exit_code == 0
    assert rendered == ["prod-west"]
    assert "all deploy to destination name prod-east" in result.stderr
    assert result.stderr == run_cli("build", "--no-cache", "--dry-run").stderr
    (repo / "overlays" / "prod-west" / "values.yaml").write_text(CLUSTER.format(name="prod-west"))
    rendered.clear()
    result = run_cli("build")
    assert rendered == ["prod-west"]
    assert "all deploy to destination" not in result.stderr
    same_as_clean(repo, run_cli)


@pytest.mark.slow
@pytest.mark.parametrize("gitops", ["layout: applications", "generator: clusters"])
def test_other_argocd_layouts(repo: Path, run_cli, rendered: list[str], gitops: str) -> None:  # type: ignore[no-untyped-def]
    values = repo / "values.yaml"
    text = values.read_text()
    assert "\ngitops:\n" in text
    values.write_text(text.replace("\ngitops:\n", f"\ngitops:\n  {gitops}\n", 1))
    clusters = gitops == "generator: clusters"
    if clusters:  # the cluster secret is the destination: overlays may not set one (refused)
        for overlay in (repo / "overlays").glob("*/values.yaml"):
            data = yamlio.load(overlay.read_text()) or {}
            data.pop("gitops", None)
            overlay.write_text(yamlio.dump(data) if data else "")
    build(run_cli)
    add_cluster(repo, "prod-west", "" if clusters else None)
    assert rebuild(run_cli, rendered) == ["prod-west"]
    same_as_clean(repo, run_cli)


@pytest.mark.slow
def test_hand_written_patches_are_inputs(repo: Path, run_cli, rendered: list[str]) -> None:  # type: ignore[no-untyped-def]
    build(run_cli)
    patches = repo / "overlays" / "staging" / "patches"
    patches.mkdir(exist_ok=True)
    (patches / "zz-extra.yaml").write_text(
        "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: gpu-operator\n  labels:\n    team: ml\n"
    )
    assert rebuild(run_cli, rendered) == ["staging"]
    same_as_clean(repo, run_cli)


def test_keys() -> None:
    from renderer.inputs import ClusterInput, Inputs

    a = Inputs(b"x: 1\n", "values.yaml", ())
    assert cache.fleet_key(a) == cache.fleet_key(Inputs(b"x: 1\n", "values.yaml", ()))
    assert cache.fleet_key(a) != cache.fleet_key(Inputs(b"x: 2\n", "values.yaml", ()))
    base = ClusterInput("c", b"v", "overlays/c/values.yaml")
    key = cache.cluster_key("f", base)
    assert key != cache.cluster_key("g", base)
    assert key != cache.cluster_key("f", ClusterInput("c", b"v", "overlays/c/values.yaml", patches=(("p.yaml", b""),)))
    assert key != cache.cluster_key("f", ClusterInput("c", b"v", "overlays/c/values.yaml", b"{}", "overlays/c/nodes.json"))
    assert cache.loads(b"") is None and cache.loads(b"[]") is None and cache.loads(b'{"format": 1}') is None
    assert cache.chart_loads(b"", "f") is None
    kept = cache.chart_dumps("f", ({"a": 1}, []))
    assert kept is not None
    assert cache.chart_loads(kept, "f") == ({"a": 1}, [])
    assert cache.chart_loads(kept, "g") is None
