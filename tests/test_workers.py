"""renderer.workers: the same results as a plain loop, whatever the jobs and whatever a worker does."""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import Result

from renderer import cache, workers


def _dumps(results: list[Any]) -> bytes | None:
    try:
        return json.dumps(results).encode()
    except TypeError:
        return None


def _tuples(data: bytes) -> Any:
    return [tuple(r) for r in json.loads(data)]


JSON = (_dumps, json.loads)
TUPLES = (_dumps, _tuples)
# skipped only where the platform never forks; on Linux (CI) a guard that refused would fail these
needs_fork = pytest.mark.skipif(not hasattr(os, "fork") or sys.platform == "darwin", reason="this platform does not fork workers")


@pytest.mark.parametrize("jobs", [1, 2, 3, 8])
@pytest.mark.parametrize("count", [0, 1, 2, 7])
def test_each_gives_the_loop_s_results_in_order(jobs: int, count: int) -> None:
    items = [f"item-{i}" for i in range(count)]
    assert workers.each(str.upper, items, jobs, *JSON) == [x.upper() for x in items]


@needs_fork
def test_the_items_are_shared_among_processes(tmp_path: Path) -> None:
    """Item 0 waits until another process has taken an item: it can only end when a worker runs."""
    seen = tmp_path / "pids"
    seen.touch()

    def record(i: int) -> int:
        with open(seen, "a") as f:
            f.write(f"{os.getpid()}\n")
        deadline = time.monotonic() + 30
        while i == 0 and len(set(seen.read_text().split())) < 2 and time.monotonic() < deadline:
            time.sleep(0.01)
        return i * i

    assert workers.each(record, list(range(6)), 2, *JSON) == [i * i for i in range(6)]
    assert len(set(seen.read_text().split())) == 2


@needs_fork
def test_what_a_dead_worker_took_is_computed_here() -> None:
    parent = os.getpid()

    def dies_in_a_worker(i: int) -> tuple[int, int]:
        if os.getpid() != parent:
            os._exit(3)
        return i, os.getpid()

    assert workers.each(dies_in_a_worker, list(range(5)), 3, *TUPLES) == [(i, parent) for i in range(5)]


@needs_fork
def test_results_a_worker_cannot_send_are_computed_here() -> None:
    parent = os.getpid()

    def unsendable(i: int) -> object:
        return {i} if os.getpid() != parent else i  # a set: no JSON form

    assert workers.each(unsendable, list(range(5)), 2, *JSON) == list(range(5))


@needs_fork
def test_results_that_do_not_load_are_computed_here() -> None:
    def refuse(_data: bytes) -> Any:
        raise ValueError("not mine")

    assert workers.each(str.upper, list("abcdef"), 2, _dumps, refuse) == list("ABCDEF")
    assert workers.each(str.upper, list("abcdef"), 2, _dumps, lambda _data: ["x"]) == list("ABCDEF")


def test_templates_travel_as_the_cache_keeps_them() -> None:
    """What a worker sends (its chart templates) loads back equal, list items' names included."""
    from renderer.emit import helm_tree

    item = helm_tree.Variant([((), {"name": "a"})])
    item.name = "a"  # type: ignore[attr-defined]
    tpl = helm_tree.Template("x", ((),), {"DaemonSet/x": {"spec": {"containers": [item]}}}, fixed={("a", "b")})
    back = cache.tree_loads(cache.tree_dumps([tpl, None]) or b"")
    assert back == [tpl, None]
    assert back[0].objects["DaemonSet/x"]["spec"]["containers"][0].name == "a"
    with pytest.raises(ValueError):
        cache.tree_loads(b'{"c": "Template", "f": [], "n": "x"}')


def test_an_item_s_exception_is_raised_as_a_loop_raises_it() -> None:
    def fails_on_three(i: int) -> int:
        if i == 3:
            raise ValueError("item 3")
        return i

    with pytest.raises(ValueError, match="item 3"):
        workers.each(fails_on_three, list(range(6)), 2, *JSON)


def test_a_process_running_threads_does_not_fork() -> None:
    stop = threading.Event()
    other = threading.Thread(target=stop.wait)
    other.start()
    try:
        assert not workers.can_fork()
        assert workers.each(lambda _i: os.getpid(), list(range(4)), 4, *JSON) == [os.getpid()] * 4
    finally:
        stop.set()
        other.join()


def _tree(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_the_build_is_the_same_whatever_the_jobs(repo: Path, run_cli: Callable[..., Result], monkeypatch: pytest.MonkeyPatch) -> None:
    """`--jobs 1` (one process), `-j 3` and GPU_RENDER_JOBS=2 write the same output."""
    trees = []
    for name, args, env in (("one", ["--jobs", "1"], None), ("three", ["-j", "3"], None), ("env", [], "2")):
        if env is not None:
            monkeypatch.setenv("GPU_RENDER_JOBS", env)
        result = run_cli("build", "--no-cache", "-q", "--out", name, *args)
        assert result.exit_code == 0, result.output
        trees.append(_tree(repo / name))
    assert trees[0] == trees[1] == trees[2]
    assert any(path.startswith("chart/") for path in trees[0])


def test_jobs_must_be_positive(repo: Path, run_cli: Callable[..., Result]) -> None:
    result = run_cli("build", "--jobs", "0")
    assert result.exit_code == 2
    assert "--jobs" in result.output
