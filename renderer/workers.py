"""Worker processes: independent, pure work (the chart analysis of each component) spread
over the cores a build may use.

:func:`each` runs ``fn`` on every item, in this process and in ``jobs - 1`` forked copies of
it, and returns the results in the items' order: what each item gives does not depend on
which process ran it, so the output is the same whatever ``jobs`` is (``tests/test_workers.py``;
the CLI's ``--jobs 1`` runs one process). Work is handed out one item at a time, from a pipe
holding one byte per item (a read of one byte from a pipe is atomic): a process that finishes
early takes the next item, so one long item (the driver's analysis) does not leave a core idle.

A worker sends its results back through a pipe of its own, written by the caller's ``dumps``
and read by its ``loads`` (data only: the chart analysis uses the cache's tagged JSON, never
pickle, so nothing a worker sends can run code here), and exits without running the parent's
exit handlers. A worker that fails in any way (an exception, a signal, results it cannot write
or that do not load) is not trusted for any item: the items it took are run again here, where
an exception is raised as it would be in a plain loop.

Forking is only done where it is safe: on a platform with ``os.fork`` other than macOS (whose
system libraries may not survive a fork), in a process running one thread (a fork copies only
the calling thread: a lock another thread held stays locked in the copy), and with more than
one item. Everywhere else ``each`` is a plain loop.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

T = TypeVar("T")
R = TypeVar("R")

MAX_ITEMS = 256
"""Items a parallel run takes (one byte per item in the pipe); more run in this process alone."""


def available() -> int:
    """The cores this process may run on (its CPU affinity, where the platform tells it)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # pragma: no cover - platforms without affinity
        return max(1, os.cpu_count() or 1)


def can_fork() -> bool:
    return hasattr(os, "fork") and sys.platform != "darwin" and threading.active_count() == 1


def each(fn: Callable[[T], R], items: Sequence[T], jobs: int, dumps: Callable[[list[R]], bytes | None], loads: Callable[[bytes], Any]) -> list[R]:
    """``[fn(x) for x in items]``, computed by up to ``jobs`` processes; ``dumps``/``loads``
    carry a worker's list of results (``loads`` returns anything for bytes it did not write,
    or raises ValueError: the worker's items are then computed here)."""
    n = min(jobs, len(items))
    if n <= 1 or len(items) > MAX_ITEMS or not can_fork():
        return [fn(x) for x in items]
    tokens_r, tokens_w = os.pipe()
    os.write(tokens_w, bytes(range(len(items))))  # at most 256 bytes: never blocks
    os.close(tokens_w)
    children: list[tuple[int, int]] = []
    try:
        for _ in range(n - 1):
            results_r, results_w = os.pipe()
            pid = os.fork()
            if pid == 0:  # pragma: no cover - the worker's coverage is not collected
                os.close(results_r)
                _work(fn, items, tokens_r, results_w, dumps)
            os.close(results_w)
            children.append((pid, results_r))
        done: dict[int, R] = {}
        while True:
            token = os.read(tokens_r, 1)
            if not token:
                break
            done[token[0]] = fn(items[token[0]])
        for pid, results_r in children:
            done.update(_collect(pid, results_r, len(items), loads))
    finally:
        os.close(tokens_r)
        for pid, results_r in children:
            _reap(pid, results_r)
    # what a failed worker took is computed here (an exception raised as a plain loop raises it)
    return [done[i] if i in done else fn(items[i]) for i in range(len(items))]


def _work(fn: Callable[[T], R], items: Sequence[T], tokens_r: int, results_w: int, dumps: Callable[[list[R]], bytes | None]) -> None:  # pragma: no cover
    """A forked worker's whole life: take items until none are left, send the items' indices
    (a length byte, then one byte each) and their results, exit."""
    status = 1
    try:
        signal.signal(signal.SIGINT, signal.SIG_DFL)  # Ctrl-C ends the worker; the parent cleans up
        taken: list[int] = []
        results: list[R] = []
        while True:
            token = os.read(tokens_r, 1)
            if not token:
                break
            taken.append(token[0])
            results.append(fn(items[token[0]]))
        data = dumps(results)
        if data is not None:
            with os.fdopen(results_w, "wb") as f:
                f.write(bytes([len(taken) - 1]) + bytes(taken) + data if taken else b"")
            status = 0
    except BaseException:  # any failure: the parent redoes this worker's items
        pass
    finally:
        os._exit(status)


def _collect(pid: int, results_r: int, count: int, loads: Callable[[bytes], Any]) -> dict[int, R]:
    """A worker's results by item; empty when it failed (then the parent computes its items)."""
    chunks = []
    while True:
        chunk = os.read(results_r, 1 << 20)
        if not chunk:
            break
        chunks.append(chunk)
    _, status = os.waitpid(pid, 0)
    data = b"".join(chunks)
    if status != 0 or not data:
        return {}
    taken = list(data[1 : data[0] + 2])
    if len(taken) != data[0] + 1 or any(i >= count for i in taken):
        return {}
    try:
        found = loads(data[data[0] + 2 :])
    except ValueError:
        return {}
    if type(found) is not list or len(found) != len(taken):
        return {}
    return dict(zip(taken, found, strict=True))


def _reap(pid: int, results_r: int) -> None:
    """Close the results pipe and make sure the worker is gone (an interrupted parent kills it)."""
    with contextlib.suppress(OSError):
        os.close(results_r)
    try:
        waited, _ = os.waitpid(pid, os.WNOHANG)
        if waited == 0:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
    except ChildProcessError:  # already reaped by _collect
        pass
