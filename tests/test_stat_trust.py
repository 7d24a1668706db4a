"""Incremental builds trust a kept file by its stat (size, mtime_ns, inode, ctime_ns) and read
only the files whose stat moved; the output stays that of a clean build."""

from __future__ import annotations

import builtins
import io
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from renderer import cache
from renderer.cli.build import _load_cache
from renderer.emit.lock import emit_hashes, sha256
from renderer.inputs import read_inputs
from renderer.problems import UserError
from renderer.write import write_tree
from tests.test_incremental import build, rebuild, same_as_clean

PROD = "output/overlays/prod-east/"


def _change_staging(repo: Path) -> None:
    values = repo / "overlays" / "staging" / "values.yaml"
    values.write_text(values.read_text() + "mig:\n  strategy: mixed\n")


def _reuse(repo: Path) -> Any:
    reuse = _load_cache(repo / "output", read_inputs(repo / "values.yaml", repo / "overlays"))
    assert reuse is not None
    return reuse


def test_trusted_needs_all_four() -> None:
    recorded = ("sha", 10, 20, 30, 40)
    assert cache.trusted(recorded, (10, 20, 30, 40))
    for moved in ((11, 20, 30, 40), (10, 21, 30, 40), (10, 20, 31, 40), (10, 20, 30, 41)):
        assert not cache.trusted(recorded, moved)


def test_unchanged_cluster_files_are_not_read(repo: Path, run_cli: Callable[..., Any], rendered: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    build(run_cli)
    _change_staging(repo)
    reuse = _reuse(repo)
    prod = reuse.kept["prod-east"]
    assert prod.files == {}  # nothing read back
    assert set(prod.hashes) <= reuse.unread and any(p.startswith("overlays/prod-east/") for p in reuse.unread)
    opened: list[str] = []
    real = builtins.open

    def spy(file: Any, *args: Any, **kwargs: Any) -> Any:
        opened.append(os.fspath(file) if not isinstance(file, int) else "")
        return real(file, *args, **kwargs)

    with monkeypatch.context() as m:
        m.setattr(builtins, "open", spy)
        m.setattr(io, "open", spy)
        assert rebuild(run_cli, rendered) == ["staging"]
    assert not [p for p in opened if PROD in p.replace(os.sep, "/")]
    same_as_clean(repo, run_cli)


@pytest.mark.slow
def test_touched_file_is_read_again_and_trusted_after(repo: Path, run_cli: Callable[..., Any], rendered: list[str]) -> None:
    build(run_cli)
    touched = repo / PROD / "kustomization.yaml"
    st = touched.stat()
    os.utime(touched, ns=(st.st_atime_ns, st.st_mtime_ns + 5_000_000_000))
    reuse = _reuse(repo)
    assert "overlays/prod-east/kustomization.yaml" in reuse.kept["prod-east"].files  # re-hashed, same hash
    assert "overlays/prod-east/kustomization.yaml" not in reuse.unread
    assert rebuild(run_cli, rendered) == []
    assert "overlays/prod-east/kustomization.yaml" in _reuse(repo).unread  # its new stat was recorded
    same_as_clean(repo, run_cli)


@pytest.mark.slow
@pytest.mark.parametrize(("edit", "rendered_again"), [(lambda text: text, []), (lambda text: text.replace("Kustomization", "KustomizatioN"), ["prod-east"])], ids=["same-bytes", "other-bytes-same-size"])
def test_file_replaced_under_the_same_size_and_mtime(
    repo: Path, run_cli: Callable[..., Any], rendered: list[str], edit: Callable[[str], str], rendered_again: list[str]
) -> None:
    """Another inode with the same size and mtime: read and hashed again; kept when its bytes
    are the same, its cluster rendered when they are not."""
    build(run_cli)
    target = repo / PROD / "kustomization.yaml"
    st = target.stat()
    tmp = target.with_name("kustomization.yaml.new")
    tmp.write_text(edit(target.read_text()))
    os.utime(tmp, ns=(st.st_atime_ns, st.st_mtime_ns))
    os.replace(tmp, target)
    assert rebuild(run_cli, rendered) == rendered_again
    same_as_clean(repo, run_cli)


def test_writer_refuses_kept_files_it_cannot_keep(tmp_path: Path) -> None:
    out = tmp_path / "out"
    lock = emit_hashes({"a.yaml": sha256("a: 1\n"), "b.yaml": sha256("b: 2\n")})
    write_tree(out, {"a.yaml": "a: 1\n", "b.yaml": "b: 2\n", **lock})
    with pytest.raises(ValueError):
        write_tree(out, {"a.yaml": "a: 1\n", **lock}, kept=frozenset({"a.yaml"}))
    (out / "b.yaml").unlink()
    with pytest.raises(UserError, match="removed during the build"):
        write_tree(out, lock, kept=frozenset({"a.yaml", "b.yaml"}))
    (out / "b.yaml").write_text("b: 2\n")
    changes = write_tree(out, lock, kept=frozenset({"a.yaml", "b.yaml"}))
    assert [(c.path, c.verb) for c in changes] == [("a.yaml", "unchanged"), ("b.yaml", "unchanged"), ("gpu-render.lock", "unchanged")]
    assert (out / "a.yaml").read_text() == "a: 1\n"


# --- the chart's templates: printed from the chart analysis alone ------------------------

TEMPLATES = "chart/gpu-stack/templates/"


def test_chart_templates_of_the_same_fleet_are_not_printed_again(repo: Path, run_cli: Callable[..., Any], rendered: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    build(run_cli)
    _change_staging(repo)
    reuse = _reuse(repo)
    assert reuse.printed and all(p.startswith(TEMPLATES) for p in reuse.printed)
    assert TEMPLATES + "_helpers.tpl" in reuse.printed and TEMPLATES + "driver.yaml" in reuse.printed
    printed: list[str] = []
    import renderer.emit.helm as helm

    real = helm.template_text

    def spy(tpl: Any, *args: Any, **kwargs: Any) -> str:
        printed.append(tpl.name)
        return real(tpl, *args, **kwargs)

    with monkeypatch.context() as m:
        m.setattr(helm, "template_text", spy)
        assert rebuild(run_cli, rendered) == ["staging"]
    assert printed == []
    same_as_clean(repo, run_cli)


@pytest.mark.parametrize("how", ["edited", "deleted"])
def test_a_changed_chart_template_is_printed_again(repo: Path, run_cli: Callable[..., Any], rendered: list[str], how: str) -> None:
    build(run_cli)
    target = repo / "output" / TEMPLATES / "driver.yaml"
    want = target.read_text()
    if how == "edited":
        target.write_text(want.replace("DO NOT EDIT", "DO NOT EDIT!"))
    else:
        target.unlink()
    assert _reuse(repo).printed == {}
    result = run_cli("build", "-q", "--force")
    assert result.exit_code == 0, result.stderr
    assert target.read_text() == want
    same_as_clean(repo, run_cli)


def test_a_new_fleet_key_prints_the_templates(repo: Path, run_cli: Callable[..., Any]) -> None:
    build(run_cli)
    values = repo / "values.yaml"
    values.write_text(values.read_text() + "\n# a comment changes the fleet key\n")
    assert _reuse(repo).printed == {}
    same_as_clean(repo, run_cli)


def test_a_state_listing_other_files_as_templates_is_refused(repo: Path, run_cli: Callable[..., Any]) -> None:
    build(run_cli)
    path = repo / "output" / cache.CACHE_DIR / cache.STATE
    state = cache.loads(path.read_bytes())
    assert state is not None and state.templates
    fake = dict(state.templates)
    fake["overlays/prod-east/kustomization.yaml"] = next(iter(fake.values()))
    assert cache.loads(cache.dumps(cache.State(state.fleet, state.clusters, state.warnings, fake))) is None
