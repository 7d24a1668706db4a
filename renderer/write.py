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
import stat
import threading
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from renderer.emit.lock import LOCK, parse
from renderer.problems import Problem, UserError

INTERNAL_PREFIX = ".gpu-render-"
MUTEX = ".gpu-render-mutex"
STAGING = ".gpu-render-staging"
JOURNAL = "journal.json"
JOURNAL_FORMAT = "gpu-render-journal/1"
KILL_ENV = "GPU_RENDER_TEST_KILL_AFTER"
CACHE_DIR = ".gpu-render-cache"  # the incremental build's cache: internal, so never listed, foreign or deleted


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


def _check_rel(path: str) -> None:
    """Refuse absolute paths, ``..``, backslashes, NUL, empty parts and internal names."""
    if not path or path[0] == "/" or "\\" in path or "\0" in path:
        raise UserError(f"refusing to write outside the output folder: {path!r}")
    for part in path.split("/"):
        if part in ("", ".", "..") or part.startswith(INTERNAL_PREFIX):
            raise UserError(f"refusing to write outside the output folder: {path!r}")


def safe_relpath(path: str) -> PurePosixPath:
    """Refuse absolute paths, ``..``, backslashes, NUL, empty parts and internal names."""
    _check_rel(path)
    return PurePosixPath(path)


def _prefixes(path: str) -> Iterator[str]:
    """The folders leading to ``path``, shallowest first: ``a/b/c`` -> ``a``, ``a/b``."""
    at = path.find("/")
    while at != -1:
        yield path[:at]
        at = path.find("/", at + 1)


@dataclass
class _Tree:
    """What one scan of the output folder found (internal names left out, symlinks not followed)."""

    files: set[str]  # everything that is not a real folder: files, symlinks (to files or folders)
    dirs: set[str]  # real folders
    links: set[str]  # symlinks, a subset of ``files``


def _scan(out: Path) -> _Tree:
    """One pass over ``out`` with ``os.scandir``: one directory read per folder, no stat per file."""
    tree = _Tree(set(), set(), set())
    if out.is_symlink() or not out.is_dir():
        return tree
    stack = [("", os.fspath(out))]
    while stack:
        rel, folder = stack.pop()
        try:
            entries = os.scandir(folder)
        except OSError:
            continue  # unreadable or vanished: like os.walk, nothing to list
        try:
            with entries:
                for entry in entries:
                    name = entry.name
                    if name.startswith(INTERNAL_PREFIX):
                        continue  # .gpu-render-staging, -mutex, -cache, ...: never output, never foreign
                    path = rel + name
                    if entry.is_dir(follow_symlinks=False):
                        tree.dirs.add(path)
                        stack.append((path + "/", entry.path))
                    else:
                        tree.files.add(path)
                        if entry.is_symlink():
                            tree.links.add(path)
        except OSError as exc:  # a folder that fails half-listed: its files would be taken as absent
            where = os.path.join(folder, "")
            problem = Problem(where, 1, 1, "", f"cannot list {where}: {exc.strerror or exc}", hint="gpu-render writes only into a folder it can read whole", code="output-folder")
            raise UserError(problem.message, hint=problem.hint, problems=[problem]) from None
    return tree


class _Confinement:
    """Refuses paths through symlinks, checking each folder once against a scan of ``out``.

    With no symlink on the way (``out`` itself is refused when it is one, and relative paths
    carry no ``..``), ``out/rel`` cannot lead outside ``out``.
    """

    def __init__(self, out: Path, tree: _Tree) -> None:
        self.out = out
        self.links = tree.links
        self.checked: set[str] = set()

    def check(self, rel: str) -> None:
        """Refuse ``rel`` (UserError) when it is unsafe or leads through a symlink. Called for
        every path of a build (7,000 in a 1000-cluster fleet): string work only, no Path made."""
        _check_rel(rel)
        folder = rel.rpartition("/")[0]
        if folder and folder not in self.checked and self.links:
            for prefix in _prefixes(rel):
                if prefix in self.links:
                    raise UserError(f"refusing to write {self.out / rel}: {self.out / prefix} is a symlink", hint="gpu-render never follows symlinks inside its output folder")
        self.checked.add(folder)
        if rel in self.links:
            raise UserError(f"refusing to write {self.out / rel}: {self.out / rel} is a symlink", hint="gpu-render never follows symlinks inside its output folder")


def previous_files(out: Path) -> dict[str, str]:
    lock = out / LOCK
    if not lock.is_file() or lock.is_symlink():
        return {}
    return parse(lock.read_text(encoding="utf-8", errors="replace"))


def existing_files(out: Path) -> set[str]:
    """Every non-folder entry under ``out`` (symlinked folders included), internal names left out."""
    return _scan(out).files


@dataclass
class _Plan:
    changes: list[Change]
    tree: _Tree


def plan_changes(out: Path, files: dict[str, str], *, force: bool = False, kept: frozenset[str] = frozenset()) -> list[Change]:
    """What a write would do, per file; raises UserError for files gpu-render does not own.

    ``kept``: output files the caller vouches are on disk as this build would write them
    (an incremental build trusts them by their stat, without reading): not in ``files``,
    never read, written or deleted, reported unchanged."""
    return _plan(out, files, force=force, kept=kept).changes


def _plan(out: Path, files: dict[str, str], *, force: bool, kept: frozenset[str] = frozenset()) -> _Plan:
    tree = _scan(out)
    guard = _Confinement(out, tree)
    for path in files:
        guard.check(path)
    for path in kept:
        guard.check(path)
        if path in files or path == LOCK:
            raise ValueError(f"{path}: both kept and written")
        if path not in tree.files:
            raise UserError(f"{out / path} was removed during the build", hint="run the build again")
    previous = previous_files(out)
    owned = set(previous) | {LOCK}
    on_disk = tree.files
    foreign = sorted(on_disk - owned)
    if foreign:
        folders = {prefix for path in files for prefix in _prefixes(path)}
        clobbered = [f for f in foreign if f in files or f in folders or any(p in files for p in _prefixes(f))]
        if clobbered:
            raise UserError(
                f"{out}/{clobbered[0]} was not generated by gpu-render and would be overwritten",
                hint="move it away; gpu-render never overwrites files it did not write",
            )
        if not force:
            raise UserError(
                f"{out} holds files gpu-render did not generate: {', '.join(foreign[:5])}",
                hint="remove them, choose another --out, or pass --force to keep them alongside",
            )
    # The new lock tells each file's new hash, the old one what the last build wrote: a file
    # whose hash moved is updated without reading it; one whose hash stayed is read and
    # compared (a hand edit must still show), and a file not on disk is simply created.
    new = parse(files[LOCK]) if LOCK in files else {}
    root = os.fspath(out)
    changes: list[Change] = []
    for path in sorted(files):
        if path in tree.dirs:
            raise UserError(f"{out / path} is a folder where gpu-render writes a file", hint="move it away; gpu-render never deletes folders it did not create")
        if path not in on_disk:
            verb = "created"
        elif path != LOCK and path in previous and path in new and previous[path] != new[path]:
            verb = "updated"
        else:
            verb = "unchanged" if _same(f"{root}/{path}", files[path]) else "updated"
        changes.append(Change(path, verb))
    if kept:  # one sort of the paths (comparing Change objects is slow on 6000 of them)
        verbs = {c.path: c.verb for c in changes} | dict.fromkeys(kept, "unchanged")
        changes = [Change(path, verbs[path]) for path in sorted(verbs)]
    for path in sorted((owned & on_disk) - set(files) - kept):
        guard.check(path)
        changes.append(Change(path, "deleted"))
    return _Plan(changes, tree)


def _same(target: str, text: str) -> bool:
    try:
        with open(target, "rb") as handle:
            return handle.read() == text.encode("utf-8")
    except OSError:
        return False


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
        _apply(out, staging, journal, trusted=False)
    except OSError as exc:
        raise _write_error(out, exc) from exc
    return "rolled forward"


@dataclass(frozen=True)
class _Journal:
    writes: list[str]  # files to move in, gpu-render.lock last
    deletes: list[str]  # stale files
    folders: list[str]  # staged folders new as a whole: one rename each (a shortcut, not a promise)


def _read_journal(path: Path) -> _Journal | None:
    """The journal, or None when it is absent or not a valid journal."""
    if not path.is_file() or path.is_symlink():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except ValueError:
        return None
    if not isinstance(data, dict) or data.get("format") != JOURNAL_FORMAT:
        return None
    writes, deletes, folders = data.get("writes"), data.get("deletes"), data.get("folders", [])
    if not isinstance(writes, list) or not isinstance(deletes, list) or not isinstance(folders, list):
        return None
    if not all(isinstance(p, str) for p in [*writes, *deletes, *folders]):
        return None
    try:
        for p in [*writes, *deletes, *folders]:
            _check_rel(p)
    except UserError:
        return None
    return _Journal(writes, deletes, folders)


# --- the transaction ------------------------------------------------------------------


def write_tree(out: Path, files: dict[str, str], *, dry_run: bool = False, force: bool = False, kept: frozenset[str] = frozenset()) -> list[Change]:
    """Make ``out`` hold ``files`` (plus any user files and the ``kept`` ones, see
    :func:`plan_changes`): all of them or, if killed, none."""
    if dry_run:
        with open_output(out, create=False):
            return plan_changes(out, files, force=force, kept=kept)
    with open_output(out, create=True):
        plan = _plan(out, files, force=force, kept=kept)
        if all(c.verb == "unchanged" for c in plan.changes):
            return plan.changes
        try:
            _transaction(out, files, plan)
        except OSError as exc:
            _discard_after_error(out)
            raise _write_error(out, exc) from exc
        return plan.changes


def _new_folders(writes: list[str], tree: _Tree) -> list[str]:
    """The shallowest folders of ``writes`` that do not exist in ``out`` at all: each moves in
    with one rename (a cold build is four renames, not 6605)."""
    found: set[str] = set()
    for rel in writes:
        for prefix in _prefixes(rel):
            if prefix in found:
                break
            if prefix not in tree.dirs and prefix not in tree.files:
                found.add(prefix)
                break
    return sorted(found)


def _transaction(out: Path, files: dict[str, str], plan: _Plan) -> None:
    OPS.check()
    staging = out / STAGING
    _remove_staging(staging)
    files_root = staging / "files"
    os.mkdir(staging)
    os.mkdir(files_root)
    writes = [c.path for c in plan.changes if c.verb in ("created", "updated") and c.path != LOCK]
    deletes = [c.path for c in plan.changes if c.verb == "deleted"]
    folders = _new_folders(writes, plan.tree)
    if LOCK in files:
        writes.append(LOCK)  # moved in last: the lock names the build that is complete
    _stage(os.fspath(files_root), writes, files)
    os.sync()  # one flush for all staged files (per-file fsync doubles the write time)
    body = json.dumps({"format": JOURNAL_FORMAT, "writes": writes, "deletes": deletes, "folders": folders}, indent=1)
    tmp = staging / (JOURNAL + ".tmp")
    _write_file(tmp, body.encode("utf-8"), sync=True)
    os.replace(tmp, staging / JOURNAL)
    _fsync_dir(staging)
    OPS.tick()
    _apply(out, staging, _Journal(writes, deletes, folders), trusted=True)


def _stage(root: str, writes: list[str], files: dict[str, str]) -> None:
    """Write each new or changed file under ``root``, creating each folder once (parents first).

    From one thread: staging from four threads cost more than it overlapped on the 1000-cluster
    fleet (docs/performance.md, "Writer threads")."""
    folders: set[str] = set()
    for rel in writes:
        folder = rel.rpartition("/")[0]
        while folder and folder not in folders:
            folders.add(folder)
            folder = folder.rpartition("/")[0]
    for folder in sorted(folders, key=lambda f: f.count("/")):
        os.mkdir(f"{root}/{folder}")
    for rel in writes:
        _write_file(f"{root}/{rel}", files[rel].encode("utf-8"))
        OPS.tick()


class _Folders:
    """Folders inside ``out``, each checked (or created) once with ``lstat``/``mkdir``: never
    through a symlink, so nothing written or deleted can land outside ``out``."""

    def __init__(self, out: Path) -> None:
        self.root = os.fspath(out)
        self.ok: set[str] = {""}

    def ready(self, folder: str, *, create: bool) -> bool:
        """Whether ``out/folder`` is a real folder (made when ``create``); UserError for a symlink."""
        if folder in self.ok:
            return True
        parent = folder.rpartition("/")[0]
        if not self.ready(parent, create=create):
            return False
        path = f"{self.root}/{folder}"
        try:
            mode = os.lstat(path).st_mode
        except FileNotFoundError:
            if not create:
                return False
            os.mkdir(path)
            self.ok.add(folder)
            return True
        if stat.S_ISLNK(mode):
            raise UserError(f"refusing to write {path}: it is a symlink", hint="gpu-render never follows symlinks inside its output folder")
        if not stat.S_ISDIR(mode):
            if create:
                raise NotADirectoryError(errno.ENOTDIR, "a file is in the way of a folder", path)
            return False
        self.ok.add(folder)
        return True

    def prune(self, folder: str) -> None:
        """Remove ``out/folder`` and its parents while they are empty."""
        while folder:
            try:
                os.rmdir(f"{self.root}/{folder}")
            except OSError:
                return
            self.ok.discard(folder)
            folder = folder.rpartition("/")[0]


def _untrusted_sources(files_root: Path, journal: _Journal) -> tuple[set[str], set[str]]:
    """For a journal found on disk: the staged files that may move in (real files the journal
    lists), and the journal's folders that hold nothing else."""
    if files_root.is_symlink() or not files_root.is_dir():
        return set(), set()
    staged = _scan(files_root)
    listed = set(journal.writes)
    files = {f for f in staged.files - staged.links if f in listed}
    folders = {d for d in journal.folders if d in staged.dirs}
    for path in staged.files:
        if path not in files:
            folders.difference_update(_prefixes(path))
    return files, folders


def _apply(out: Path, staging: Path, journal: _Journal, *, trusted: bool) -> None:
    """Roll a journal forward; idempotent, so a killed recovery can run again.

    Stale files go first (a new file may sit where an old folder was), then new folders
    (one rename each), then new files, then ``gpu-render.lock``. Only files the current
    lock lists are deleted or replaced: a journal never makes gpu-render touch a user's file.
    A journal read back from disk (``trusted=False``) moves only real staged files it lists.
    """
    owned = set(previous_files(out)) | {LOCK}
    folders = _Folders(out)
    files_root = staging / "files"
    if trusted:
        sources, movable = set(journal.writes), set(journal.folders)
    else:
        sources, movable = _untrusted_sources(files_root, journal)
    _delete_stale(out, folders, [rel for rel in journal.deletes if rel in owned])
    moved = _move_folders(out, folders, os.fspath(files_root), [f for f in journal.folders if f in movable])
    writes = [p for p in journal.writes if p != LOCK and p in sources] + [p for p in journal.writes if p == LOCK and p in sources]
    if moved:
        writes = [p for p in writes if not any(f in moved for f in _prefixes(p))]
    _move_files(out, folders, os.fspath(files_root), writes, owned)
    _fsync_dir(out)
    _remove_staging(staging)


def _delete_stale(out: Path, folders: _Folders, deletes: list[str]) -> None:
    root = os.fspath(out)
    for rel in deletes:
        folder = rel.rpartition("/")[0]
        if not folders.ready(folder, create=False):
            continue
        try:
            mode = os.lstat(f"{root}/{rel}").st_mode
        except FileNotFoundError:
            continue
        if stat.S_ISLNK(mode):
            raise UserError(f"refusing to delete {out / rel}: it is a symlink", hint="gpu-render never follows symlinks inside its output folder")
        if stat.S_ISREG(mode):
            os.unlink(f"{root}/{rel}")
            OPS.tick()
        folders.prune(folder)


def _move_folders(out: Path, folders: _Folders, source_root: str, candidates: list[str]) -> set[str]:
    """Rename each staged folder that is new as a whole into place; returns those moved."""
    root = os.fspath(out)
    moved: set[str] = set()
    for folder in candidates:
        if not os.path.isdir(f"{source_root}/{folder}"):
            continue  # already moved in
        if not folders.ready(folder.rpartition("/")[0], create=True) or os.path.lexists(f"{root}/{folder}"):
            continue  # something is there now: its files go one by one
        os.replace(f"{source_root}/{folder}", f"{root}/{folder}")
        moved.add(folder)
        OPS.tick()
    return moved


def _move_files(out: Path, folders: _Folders, source_root: str, writes: list[str], owned: set[str]) -> None:
    root = os.fspath(out)
    for rel in writes:
        source = f"{source_root}/{rel}"
        try:
            if not stat.S_ISREG(os.lstat(source).st_mode):
                continue
        except FileNotFoundError:
            continue  # already moved in
        folders.ready(rel.rpartition("/")[0], create=True)
        target = f"{root}/{rel}"
        try:
            mode = os.lstat(target).st_mode
        except FileNotFoundError:
            pass
        else:
            if stat.S_ISLNK(mode) or rel not in owned or not stat.S_ISREG(mode):
                raise UserError(f"{target} was not generated by gpu-render and would be overwritten", hint="move it away and run gpu-render build again")
        os.replace(source, target)
        OPS.tick()


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


def _write_file(path: str | Path, data: bytes, *, sync: bool = False) -> None:
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


# --- the cache folder (out/.gpu-render-cache/): internal files, never through a symlink ----


def _cache_root(out: Path) -> Path | None:
    """``out/.gpu-render-cache`` when neither it nor ``out`` is a symlink (and it is a folder)."""
    root = out / CACHE_DIR
    try:
        if out.is_symlink() or root.is_symlink() or not root.is_dir():
            return None
    except OSError:
        return None
    return root


def read_internal(out: Path, name: str, limit: int) -> bytes | None:
    """The bytes of the cache file ``name``, or None when it is missing, not a regular file
    (a symlink, a FIFO, a folder), over ``limit`` bytes or unreadable. Never follows a link."""
    root = _cache_root(out)
    if root is None or "/" in name:
        return None
    try:
        fd = os.open(root / name, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size > limit:
            return None
        with os.fdopen(os.dup(fd), "rb") as f:
            data = f.read(limit + 1)
        return data if len(data) <= limit else None
    except OSError:
        return None
    finally:
        os.close(fd)


def write_internal(out: Path, name: str, data: bytes, *, keep: bool = False) -> None:
    """Write the cache file ``name`` inside ``out/.gpu-render-cache/`` (made when missing).

    A temporary file is made with ``O_EXCL | O_NOFOLLOW`` and renamed over ``name``: a rename
    replaces a symlink standing there instead of following it, so a link planted in the cache
    folder (``CACHEDIR.TAG -> /elsewhere``) cannot make a write land outside ``out``.
    ``keep``: leave an existing regular file as it is (the tag files). OSError when it fails.
    """
    if out.is_symlink() or "/" in name:
        raise OSError(errno.ELOOP, "symlink", str(out))
    root = out / CACHE_DIR
    if root.is_symlink():
        raise OSError(errno.ELOOP, "symlink", str(root))
    root.mkdir(exist_ok=True)
    target = root / name
    if keep:
        with suppress(OSError):
            if stat.S_ISREG(os.lstat(target).st_mode):
                return
    tmp = root / f"{name}.{os.getpid()}.{threading.get_ident()}.tmp"  # concurrent builds each write their own
    with suppress(FileNotFoundError):
        os.unlink(tmp)  # a leftover (or planted) entry of that name: unlink removes a link, not its target
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
    finally:
        os.close(fd)
    if os.path.isdir(target) and not os.path.islink(target):
        os.unlink(tmp)
        raise OSError(errno.EISDIR, "a folder stands where a cache file belongs", str(target))
    os.replace(tmp, target)
