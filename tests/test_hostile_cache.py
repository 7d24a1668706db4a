"""A hostile output folder: the build cache is data, never code, and never a way out of ``output/``.

The output folder is part of the policy repository, so a pull request can put anything in
``output/.gpu-render-cache/`` (docs/security.md): these tests plant such files and check that
nothing runs, nothing is written outside the output folder and the output is that of a clean build.
"""

from __future__ import annotations

import ast
import json
import os
import pickle
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from renderer import cache

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "renderer"




def files(folder: Path) -> dict[str, bytes]:
    return {
        p.relative_to(folder).as_posix(): p.read_bytes()
        for p in folder.rglob("*")
        if p.is_file() and not p.is_symlink() and cache.CACHE_DIR not in p.relative_to(folder).parts
    }


def build(run_cli: Any, *args: str) -> Any:
    result = run_cli("build", *args)
    assert result.exit_code == 0, result.output
    return result


def same_as_clean(repo: Path, run_cli: Any) -> None:
    build(run_cli, "-q", "--no-cache", "--out", "clean")
    assert files(repo / "output") == files(repo / "clean")


# --- no code from data -------------------------------------------------------------------

FORBIDDEN_MODULES = {"pickle", "cPickle", "_pickle", "marshal", "shelve", "dill", "cloudpickle", "jsonpickle", "joblib"}
FORBIDDEN_CALLS = {"eval", "exec", "compile", "__import__"}
UNSAFE_YAML = ("unsafe_load", "full_load", "UnsafeLoader", "FullLoader", "yaml.Loader", 'typ="unsafe"', "typ='unsafe'", "Loader=yaml.Loader")


def test_the_package_has_no_path_from_data_to_code() -> None:
    """No unpickling, marshal, eval/exec or YAML loader that builds Python objects anywhere."""
    found: list[str] = []
    for path in sorted(PACKAGE.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        rel = path.relative_to(ROOT).as_posix()
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.Import):
                found += [f"{rel}: import {a.name}" for a in node.names if a.name.split(".")[0] in FORBIDDEN_MODULES]
            elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] in FORBIDDEN_MODULES:
                found.append(f"{rel}: from {node.module} import")
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in FORBIDDEN_CALLS:
                found.append(f"{rel}:{node.lineno}: {node.func.id}()")
        found += [f"{rel}: {word}" for word in UNSAFE_YAML if word in text]
    assert found == []


def test_a_planted_pickle_never_runs(repo: Path, run_cli: Any, tmp_path_factory: pytest.TempPathFactory) -> None:
    """The audit's attack: a force-added chart.pickle whose unpickling runs a command."""
    marker = tmp_path_factory.mktemp("outside") / "pwned"
    build(run_cli, "-q")

    class Payload:
        def __reduce__(self) -> Any:
            return (os.system, (f"touch {marker}",))

    folder = repo / "output" / cache.CACHE_DIR
    for name in ("chart.pickle", cache.CHART, cache.STATE):
        (folder / name).write_bytes(pickle.dumps(Payload()))
    build(run_cli, "-q")
    build(run_cli, "-q", "--dry-run")
    assert not marker.exists()
    same_as_clean(repo, run_cli)


def _chart(repo: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((repo / "output" / cache.CACHE_DIR / cache.CHART).read_bytes())
    return data


@pytest.mark.slow
@pytest.mark.parametrize(
    "damage",
    [
        "unknown-class",
        "wrong-field-count",
        "wrong-field-type",
        "unknown-tag",
        "unhashable-key",
        "not-a-template",
        "deep",
        "templates-that-lie",
        "huge-int",
    ],
)
def test_a_chart_cache_of_the_wrong_shape_is_ignored(repo: Path, run_cli: Any, damage: str) -> None:
    build(run_cli, "-q")
    body = _chart(repo)
    templates = body["chart"]["t"][1]["l"]
    first = templates[0]
    if damage == "unknown-class":
        first["c"] = "Popen"
    elif damage == "wrong-field-count":
        first["f"].append(None)
    elif damage == "wrong-field-type":
        first["f"][0] = {"l": []}  # the name: a list
    elif damage == "unknown-tag":
        templates[0] = {"x": 1}
    elif damage == "unhashable-key":
        first["f"][3] = {"s": [{"l": []}]}  # a set of lists
    elif damage == "not-a-template":
        templates[0] = {"c": "Ref", "f": [{"t": ["a"]}, True]}
    elif damage == "deep":
        body["chart"]["t"][0] = "DEEP"
    elif damage == "templates-that-lie":  # well formed, but the chart would not reproduce the render
        body["chart"]["t"][1]["l"] = templates[1:]
    else:
        body["chart"]["t"][0]["d"]["x"] = "HUGE"
    text = json.dumps(body).replace('"DEEP"', '{"l": [' * 100_000 + "1" + "]}" * 100_000)
    if damage == "huge-int":
        text = text.replace('"HUGE"', "9" * 5000)  # over Python's int conversion limit
    (repo / "output" / cache.CACHE_DIR / cache.CHART).write_text(text)
    build(run_cli, "-q")
    if damage == "templates-that-lie":  # read, failed its check: replaced, so the next build does not pay again
        assert (repo / "output" / cache.CACHE_DIR / cache.CHART).read_text() != text
    same_as_clean(repo, run_cli)


def test_the_chart_cache_round_trips() -> None:
    from renderer.emit import helm
    from renderer.inputs import read_inputs
    from renderer.pipeline import plan

    p = plan(read_inputs(ROOT / "values.yaml", ROOT / "overlays"))
    assert p.base is not None
    found = helm.templates_for(p.base)
    data = cache.chart_dumps("k", found)
    assert data is not None
    assert cache.chart_loads(data, "k") == found


@pytest.mark.slow
@pytest.mark.parametrize(
    "state",
    [
        {"summary": 5},
        {"summary": {"argocd": {"element": 1, "destination": [], "kinds": []}, "chart": {}}},
        {"files": {"x": ["a", "1", 2]}},
        {"warnings": [{"file": 1, "line": 1, "column": 1, "pointer": "", "message": "", "hint": "", "code": "", "severity": "warning"}]},
        {"destination": {"gitops": [], "at": ["f", 1, 1]}},
    ],
)
def test_a_state_of_the_wrong_shape_is_ignored(repo: Path, run_cli: Any, state: dict[str, Any]) -> None:
    build(run_cli, "-q")
    path = repo / "output" / cache.CACHE_DIR / cache.STATE
    body = json.loads(path.read_bytes())
    for entry in body["clusters"].values():
        entry.update(state)
    path.write_text(json.dumps(body))
    assert cache.loads(path.read_bytes()) is None
    build(run_cli, "-q")
    same_as_clean(repo, run_cli)


# --- a committed cache ---------------------------------------------------------------------


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, env={**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com"})


def test_a_committed_cache_is_ignored_with_a_warning(repo: Path, run_cli: Any, rendered: list[str]) -> None:
    _git(repo, "init", "-q")
    build(run_cli, "-q")
    _git(repo, "add", "-f", f"output/{cache.CACHE_DIR}")
    rendered.clear()
    result = build(run_cli)
    assert sorted(rendered) == ["prod-east", "staging"]  # nothing reused
    assert "the build cache is committed to git" in result.output
    assert f"output/{cache.CACHE_DIR}/.gitignore:1:1" in result.output
    _git(repo, "rm", "-r", "-q", "--cached", f"output/{cache.CACHE_DIR}")
    rendered.clear()
    result = build(run_cli)
    assert rendered == [] and "committed" not in result.output


# --- writes through symlinks in the cache folder ------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("name", ["CACHEDIR.TAG", ".gitignore", cache.STATE, cache.CHART, "tmp"])
def test_a_symlink_in_the_cache_folder_is_never_written_through(repo: Path, run_cli: Any, tmp_path_factory: pytest.TempPathFactory, name: str) -> None:
    outside = tmp_path_factory.mktemp("outside") / "victim"
    outside.write_text("precious\n")
    build(run_cli, "-q")
    folder = repo / "output" / cache.CACHE_DIR
    if name == "tmp":  # the temporary names a write goes through, planted for this process
        import threading

        for base in (cache.STATE, cache.CHART):
            (folder / f"{base}.{os.getpid()}.{threading.get_ident()}.tmp").symlink_to(outside)
        (folder / cache.STATE).unlink()
        (folder / cache.CHART).unlink()
    else:
        (folder / name).unlink()
        (folder / name).symlink_to(outside)
    values = repo / "overlays" / "staging" / "values.yaml"
    values.write_text(values.read_text() + "mig:\n  strategy: mixed\n")
    build(run_cli, "-q")
    assert outside.read_text() == "precious\n"
    if name != "tmp":
        assert not (folder / name).is_symlink()  # replaced by a file of its own
    same_as_clean(repo, run_cli)


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["folder-link", "fifo", "folder"])
def test_odd_cache_entries_are_ignored(repo: Path, run_cli: Any, tmp_path_factory: pytest.TempPathFactory, kind: str) -> None:
    outside = tmp_path_factory.mktemp("outside")
    build(run_cli, "-q")
    folder = repo / "output" / cache.CACHE_DIR
    if kind == "folder-link":
        shutil.rmtree(folder)
        folder.symlink_to(outside, target_is_directory=True)
    elif kind == "fifo":
        (folder / cache.STATE).unlink()
        os.mkfifo(folder / cache.STATE)
    else:
        (folder / cache.CHART).unlink()
        (folder / cache.CHART).mkdir()
    build(run_cli, "-q")
    assert list(outside.iterdir()) == []
    same_as_clean(repo, run_cli)
