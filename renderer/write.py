"""The only module that writes to disk: crash-safe, confined to the output folder, never
deleting or overwriting a file that gpu-render did not generate.

What a reader of ``output/`` can rely on ("never a mix")
--------------------------------------------------------
After any gpu-render command that reads ``output/`` has started (``build``, ``build --check``,
``build --dry-run``, ``lint``, ``diff`` call :func:`open_output`), the generated files in
``output/`` are exactly the files listed in ``gpu-render.lock`` with exactly the hashes it
records, either all from the previous build or all from the new one, even if a build was
killed (SIGKILL, power loss after the journal was synced) at any moment. Files gpu-render did
not generate are never touched.

How: a build is a small transaction inside the output folder.

1. ``output/.gpu-render-mutex`` is locked with ``fcntl.flock``: two builds on one folder
   run one after the other (the second waits), never interleaved.
2. Every new or changed file is written under ``output/.gpu-render-staging/files/`` (then one
   ``sync`` makes them durable);
   the old output is not touched yet. A kill here leaves the old output intact and an
   incomplete staging folder, which the next command discards.
3. ``output/.gpu-render-staging/journal.json`` (the commit point) lists the files to move in
   and the files to delete; it is written to a temporary name, fsynced and renamed.
4. Files are renamed into place (each rename is atomic), stale files deleted, and
   ``gpu-render.lock`` moved in last; then the staging folder is removed.
5. Recovery (:func:`recover`) at the start of every command: a staging folder with a valid
   journal is rolled forward (renames that already happened are skipped, so it can itself be
   killed and rerun); one without a journal is removed.

Names starting with ``.gpu-render-`` are internal and never listed as output. Between a kill
and the next gpu-render command, a tool that is not gpu-render (git, an editor) can see a
partially committed tree; ``git status`` then shows ``.gpu-render-staging/`` and running any
gpu-render command completes it.

Test hook: ``GPU_RENDER_TEST_KILL_AFTER=N`` makes the writer SIGKILL its own process after N
file operations (staged writes, journal, renames, deletes, staging removal). Only the crash
tests set it; it has no other effect.
"""

from __future__ import annotations

import errno
import fcntl
import json
import os
import shutil
import signal
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from renderer.emit.lock import LOCK, parse
from renderer.problems import UserError

INTERNAL_PREFIX = ".gpu-render-"
MUTEX = ".gpu-render-mutex"
STAGING = ".gpu-render-staging"
JOURNAL = "journal.json"
JOURNAL_FORMAT = "gpu-render-journal/1"
KILL_ENV = "GPU_RENDER_TEST_KILL_AFTER"


@dataclass(frozen=True, order=True)
class Change:
    path: str
    verb: str  # created | updated | deleted | unchanged


class _Ops:
    """Counts file operations; the crash tests kill the process after N of them."""

    def __init__(self) -> None:
        self.count = 0
        raw = os.environ.get(KILL_ENV, "")
        self.kill_after = int(raw) if raw.strip().isdigit() else -1

    def tick(self) -> None:
        self.count += 1
        if self.count == self.kill_after:
            os.kill(os.getpid(), signal.SIGKILL)

    def check(self) -> None:
        if self.kill_after == 0:
            os.kill(os.getpid(), signal.SIGKILL)


OPS = _Ops()


def safe_relpath(path: str) -> PurePosixPath:
    """Refuse absolute paths, ``..``, backslashes, NUL, empty parts and internal names."""
    p = PurePosixPath(path)
    if (
        not path
        or p.is_absolute()
        or "\\" in path
        or "\0" in path
        or any(part in ("", ".", "..") for part in path.split("/"))
        or any(part.startswith(INTERNAL_PREFIX) for part in path.split("/"))
    ):
        raise UserError(f"refusing to write outside the output folder: {path!r}")
    return p


def _confined(out: Path, rel: PurePosixPath) -> Path:
    """``out/rel``, refused when an existing part of it is a symlink or leads outside ``out``."""
    root = out.resolve()
    current = out
    for part in rel.parts:
        current = current / part
        if current.is_symlink():
            raise UserError(f"refusing to write {out / rel}: {current} is a symlink", hint="gpu-render never follows symlinks inside its output folder")
    target = out.joinpath(*rel.parts)
    parent = target.parent
    while not parent.exists() and parent != out:
        parent = parent.parent
    resolved = parent.resolve()
    if resolved != root and root not in resolved.parents:
        raise UserError(f"refusing to write {rel}: it resolves outside {out}")
    return target


def previous_files(out: Path) -> dict[str, str]:
    lock = out / LOCK
    if not lock.is_file() or lock.is_symlink():
        return {}
    return parse(lock.read_text(encoding="utf-8", errors="replace"))


def existing_files(out: Path) -> set[str]:
    if not out.is_dir():
        return set()
    found: set[str] = set()
    for root, dirs, names in os.walk(out):
        dirs[:] = [d for d in dirs if not d.startswith(INTERNAL_PREFIX)]
        for name in names:
            if name.startswith(INTERNAL_PREFIX):
                continue
            rel = os.path.relpath(os.path.join(root, name), out).replace(os.sep, "/")
            found.add(rel)
        for d in dirs:
            if os.path.islink(os.path.join(root, d)):
                found.add(os.path.relpath(os.path.join(root, d), out).replace(os.sep, "/"))
    return found


def plan_changes(out: Path, files: dict[str, str], *, force: bool = False) -> list[Change]:
    """What a write would do, per file; raises UserError for files gpu-render does not own."""
    for path in files:
        _confined(out, safe_relpath(path))
    owned = set(previous_files(out)) | {LOCK}
    on_disk = existing_files(out)
    foreign = sorted(on_disk - owned)
    clobbered = [f for f in foreign if f in files or any(p.startswith(f + "/") or f.startswith(p + "/") for p in files)]
    if clobbered:
        raise UserError(
            f"{out}/{clobbered[0]} was not generated by gpu-render and would be overwritten",
            hint="move it away; gpu-render never overwrites files it did not write",
        )
    if foreign and not force:
        raise UserError(
            f"{out} holds files gpu-render did not generate: {', '.join(foreign[:5])}",
            hint="remove them, choose another --out, or pass --force to keep them alongside",
        )
    changes: list[Change] = []
    for path, text in sorted(files.items()):
        target = out.joinpath(*path.split("/"))
        if target.is_dir():
            raise UserError(f"{target} is a folder where gpu-render writes a file", hint="move it away; gpu-render never deletes folders it did not create")
        if path not in on_disk:
            changes.append(Change(path, "created"))
        elif target.is_file() and target.read_bytes() == text.encode("utf-8"):
            changes.append(Change(path, "unchanged"))
        else:
            changes.append(Change(path, "updated"))
    for path in sorted((owned & on_disk) - set(files)):
        _confined(out, safe_relpath(path))
        changes.append(Change(path, "deleted"))
    return changes


# --- locking and recovery -------------------------------------------------------------


@contextmanager
def open_output(out: Path, *, create: bool = False) -> Iterator[None]:
    """Hold the output folder's lock and recover an interrupted build first.

    Every command that reads or writes ``out`` runs inside this. When the folder cannot be
    locked because it is read-only, reading goes on without the lock unless an interrupted
    build needs recovery (then a UserError says so).
    """
    if out.is_symlink():
        raise UserError(f"refusing to use {out}: the output folder is a symlink")
    if not out.is_dir():
        if not create:
            yield
            return
        try:
            out.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise _write_error(out, exc) from exc
    try:
        fd = _acquire(out)
    except OSError as exc:
        if create:
            raise _write_error(out, exc) from exc
        if (out / STAGING).exists():
            raise UserError(
                f"{out} holds an interrupted build that cannot be recovered: {exc.strerror or exc}",
                hint="run gpu-render build with write access to the output folder",
            ) from exc
        yield
        return
    try:
        recover(out)
        yield
    finally:
        _release(out, fd)


@contextmanager
def reading(folder: Path) -> Iterator[None]:
    """For commands that only read a folder (lint, diff): recover it first when it is a
    gpu-render output folder; leave any other folder untouched."""
    if folder.is_dir() and not folder.is_symlink() and ((folder / STAGING).exists() or (folder / LOCK).is_file()):
        with open_output(folder):
            yield
    else:
        yield


def _acquire(out: Path) -> int:
    """flock ``out/.gpu-render-mutex``; retry when a finishing holder removed the file."""
    path = out / MUTEX
    while True:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            try:
                same = os.stat(path, follow_symlinks=False).st_ino == os.fstat(fd).st_ino
            except FileNotFoundError:
                same = False
        except BaseException:
            os.close(fd)
            raise
        if same:
            return fd
        os.close(fd)


def _release(out: Path, fd: int) -> None:
    with suppress(OSError):
        (out / MUTEX).unlink(missing_ok=True)
    os.close(fd)


def recover(out: Path) -> str:
    """Finish or discard an interrupted build; returns what was done (``""`` if nothing).

    Call it only while holding the lock (:func:`open_output` does).
    """
    staging = out / STAGING
    if staging.is_symlink():
        staging.unlink()
        return "discarded"
    if not staging.exists():
        return ""
    try:
        journal = _read_journal(staging / JOURNAL)
        if journal is None:
            _remove_staging(staging)
            return "discarded"
        writes, deletes = journal
        _apply(out, staging, writes, deletes)
    except OSError as exc:
        raise _write_error(out, exc) from exc
    return "rolled forward"


def _read_journal(path: Path) -> tuple[list[str], list[str]] | None:
    """The journal's (writes, deletes), or None when it is absent or not a valid journal."""
    if not path.is_file() or path.is_symlink():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except ValueError:
        return None
    if not isinstance(data, dict) or data.get("format") != JOURNAL_FORMAT:
        return None
    writes, deletes = data.get("writes"), data.get("deletes")
    if not isinstance(writes, list) or not isinstance(deletes, list):
        return None
    if not all(isinstance(p, str) for p in [*writes, *deletes]):
        return None
    try:
        for p in [*writes, *deletes]:
            safe_relpath(p)
    except UserError:
        return None
    return writes, deletes


# --- the transaction ------------------------------------------------------------------


def write_tree(out: Path, files: dict[str, str], *, dry_run: bool = False, force: bool = False) -> list[Change]:
    """Make ``out`` hold ``files`` (plus any user files): all of them or, if killed, none."""
    if dry_run:
        with open_output(out, create=False):
            return plan_changes(out, files, force=force)
    with open_output(out, create=True):
        changes = plan_changes(out, files, force=force)
        if all(c.verb == "unchanged" for c in changes):
            return changes
        try:
            _transaction(out, files, changes)
        except OSError as exc:
            _discard_after_error(out)
            raise _write_error(out, exc) from exc
        return changes


def _transaction(out: Path, files: dict[str, str], changes: list[Change]) -> None:
    OPS.check()
    staging = out / STAGING
    _remove_staging(staging)
    (staging / "files").mkdir(parents=True)
    writes = [c.path for c in changes if c.verb in ("created", "updated") and c.path != LOCK]
    deletes = [c.path for c in changes if c.verb == "deleted"]
    if LOCK in files:
        writes.append(LOCK)  # moved in last: the lock names the build that is complete
    for rel in writes:
        target = staging / "files" / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        _write_file(target, files[rel].encode("utf-8"))
        OPS.tick()
    os.sync()  # one flush for all staged files (per-file fsync doubles the write time)
    body = json.dumps({"format": JOURNAL_FORMAT, "writes": writes, "deletes": deletes}, indent=1)
    tmp = staging / (JOURNAL + ".tmp")
    _write_file(tmp, body.encode("utf-8"), sync=True)
    os.replace(tmp, staging / JOURNAL)
    _fsync_dir(staging)
    OPS.tick()
    _apply(out, staging, writes, deletes)


def _apply(out: Path, staging: Path, writes: list[str], deletes: list[str]) -> None:
    """Roll a journal forward; idempotent, so a killed recovery can run again.

    Stale files go first (a new file may sit where an old folder was), then new files,
    then ``gpu-render.lock``. Only files the current lock lists are deleted or replaced:
    a journal never makes gpu-render touch a user's file.
    """
    owned = set(previous_files(out)) | {LOCK}
    files_root = (staging / "files").resolve()
    for rel in deletes:
        if rel not in owned:
            continue
        target = _confined(out, safe_relpath(rel))
        if target.is_file() or target.is_symlink():
            target.unlink()
            OPS.tick()
        _prune_empty(out, target.parent)
    for rel in [p for p in writes if p != LOCK] + [p for p in writes if p == LOCK]:
        source = staging / "files" / rel
        if not source.is_file() or source.is_symlink() or files_root not in source.resolve().parents:
            continue  # already moved in
        target = _confined(out, safe_relpath(rel))
        if target.is_symlink() or (target.exists() and (rel not in owned or not target.is_file())):
            raise UserError(f"{target} was not generated by gpu-render and would be overwritten", hint="move it away and run gpu-render build again")
        target.parent.mkdir(parents=True, exist_ok=True)
        os.replace(source, target)
        OPS.tick()
    _fsync_dir(out)
    _remove_staging(staging)


def _remove_staging(staging: Path) -> None:
    if staging.is_symlink():
        staging.unlink()
    elif staging.exists():
        journal = staging / JOURNAL
        if journal.exists():
            journal.unlink()  # first: a half-removed staging folder is then "incomplete"
            OPS.tick()
        shutil.rmtree(staging)


def _discard_after_error(out: Path) -> None:
    """After an I/O error: drop an uncommitted staging folder; keep a committed one."""
    staging = out / STAGING
    try:
        if _read_journal(staging / JOURNAL) is None:
            _remove_staging(staging)
    except OSError:
        pass


def _write_error(out: Path, exc: OSError) -> UserError:
    reason = exc.strerror or str(exc)
    if exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
        hint = "the output folder is read-only: fix its permissions or choose another --out"
    elif exc.errno in (errno.ENOSPC, errno.EDQUOT, errno.EFBIG):
        hint = "the disk is full: free space and run gpu-render build again"
    else:
        hint = "check that the output folder is writable and the disk is not full"
    return UserError(f"cannot write to {out}: {reason}; the previous output was kept", hint=hint)


def _write_file(path: Path, data: bytes, *, sync: bool = False) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
    try:
        view = memoryview(data)
        while view:
            written = os.write(fd, view)
            view = view[written:]
        if sync:
            os.fsync(fd)
    finally:
        os.close(fd)


def _fsync_dir(path: Path) -> None:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _prune_empty(out: Path, folder: Path) -> None:
    root = out.resolve()
    current = folder.resolve()
    while current != root and root in current.parents:
        try:
            current.rmdir()
        except OSError:
            return
        current = current.parent
