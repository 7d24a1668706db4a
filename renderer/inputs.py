"""Read a policy repo's input files into memory (the only input I/O of a build).

Layout: ``values.yaml`` (fleet) and ``overlays/<cluster>/{values.yaml,nodes.json,patches/*.yaml}``.
Display paths are relative to the working directory when possible, so problems read
``overlays/prod/values.yaml:3:5``.

No file of the repository is trusted (docs/security.md). Every input is read by
:func:`_read`: it must stay inside the policy repo (the folder holding ``values.yaml``; a
symlink out is refused), be a regular file (a FIFO, a socket, a folder where a file belongs
are refused, never opened for reading), and be under its size limit, checked before a byte is
read. What is wrong becomes a :class:`~renderer.problems.Problem` in ``Inputs.problems``, so
``validate`` reports it with the other problems; names that look like a policy file but are
not read (``values.yml``, ``nodes.yaml``, a ``patches`` file) are reported too, never silently
ignored.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field
from pathlib import Path

from renderer.loader import MAX_BYTES
from renderer.problems import Problem, Severity, UserError

MAX_NODES_BYTES = 8 * 1024 * 1024
"""``nodes.json`` of a large cluster: ``kubectl get nodes -o json`` is about 6 KB a node."""
MAX_NODES_VALUES = 1_000_000
"""Values in ``nodes.json`` (a node has about 150)."""
MAX_PATCHES = 100
"""Patch files in one overlay."""
MISNAMED = {"values.yml": "values.yaml", "values.json": "values.yaml", "nodes.yaml": "nodes.json", "nodes.yml": "nodes.json"}


@dataclass(frozen=True)
class ClusterInput:
    name: str
    values: bytes
    values_path: str
    nodes: bytes | None = None
    nodes_path: str = ""
    patches: tuple[tuple[str, bytes], ...] = ()


@dataclass(frozen=True)
class Inputs:
    values: bytes
    values_path: str
    clusters: tuple[ClusterInput, ...] = field(default_factory=tuple)
    problems: tuple[Problem, ...] = ()
    """What reading found wrong (a file refused, a misnamed file): errors of the plan."""


def display(path: Path) -> str:
    try:
        return os.path.relpath(path)
    except ValueError:  # pragma: no cover - other drive on Windows
        return str(path)


def _problem(path: Path | str, message: str, hint: str = "", code: str = "input-file") -> Problem:
    return Problem(path if isinstance(path, str) else display(path), 1, 1, "", message, hint=hint, code=code)


def _warning(path: Path, message: str, hint: str = "") -> Problem:
    return Problem(display(path), 1, 1, "", message, hint=hint, code="input-file", severity=Severity.WARNING)


class _Refused(Exception):
    def __init__(self, problem: Problem) -> None:
        self.problem = problem


def read_inputs(values: Path, overlays: Path | None, *, given: bool = False) -> Inputs:
    """The policy's inputs. ``given``: the user named ``overlays`` (``--overlays``), so one that
    is not a folder is an error (a typo would otherwise build a fleet without its clusters,
    and remove them from the output) unless nothing else looks like the overlays of the policy;
    an absent default ``overlays`` is a fleet without clusters."""
    root = values.absolute().parent
    try:
        root = root.resolve(strict=True)
    except (OSError, RuntimeError) as exc:
        raise UserError(f"cannot read the policy folder {display(values.parent)}: {exc}") from exc
    problems: list[Problem] = []
    if not os.path.lexists(values):
        raise UserError(f"values file not found: {display(values)}", hint="pass --values FILE or run in a policy repo")
    try:
        fleet = _read(values, root, MAX_BYTES, check_inside=os.path.islink(values))
    except _Refused as exc:
        raise UserError(exc.problem.message, hint=exc.problem.hint, problems=[exc.problem]) from None
    clusters: list[ClusterInput] = []
    if overlays is not None and check_overlays(values, overlays, given=given):
        oroot = overlays.absolute().parent.resolve()
        try:
            listed = sorted(overlays.iterdir())
        except OSError as exc:
            raise UserError(f"cannot read the overlays folder {display(overlays)}: {_reason(exc)}") from None
        for entry in listed:
            if entry.name.startswith("."):
                continue
            if not entry.is_dir():
                if entry.is_symlink():  # a dangling link or a loop where an overlay folder may be meant
                    problems.append(_problem(entry, f"cannot read {display(entry)}: a symlink to nothing readable", "replace the symlink with the folder itself"))
                continue  # a README or other file beside the overlay folders
            if entry.is_symlink():
                try:
                    _inside(entry, oroot)  # a link out of the repo is refused as that
                    problems.append(_linked(entry, "an overlay folder"))
                except _Refused as exc:
                    problems.append(exc.problem)
                continue
            try:
                clusters.append(_read_cluster(entry, oroot, problems))
            except _Refused as exc:
                problems.append(exc.problem)
    return Inputs(fleet, display(values), tuple(clusters), tuple(problems))


def check_overlays(values: Path, overlays: Path, *, given: bool = False) -> bool:
    """Is there an overlays folder to read (see :func:`_overlays_folder`)? A UserError when it
    is not a folder, or a symlink that leads outside the policy repo (the folder holding it)."""
    if not _overlays_folder(values, overlays, given):
        return False
    try:
        _inside(overlays, overlays.absolute().parent.resolve())
    except _Refused as exc:
        raise UserError(exc.problem.message, hint=exc.problem.hint, problems=[exc.problem]) from None
    return True


def read_policy_file(path: Path, root: Path, limit: int = MAX_BYTES) -> bytes:
    """The bytes of a policy file as :func:`read_inputs` reads one: inside ``root`` (no symlink
    out of it on the way), a regular file, under ``limit`` bytes; else a UserError."""
    try:
        top = root.absolute().resolve(strict=True)
        _inside(path, top)
        return _read(path, top, limit, check_inside=False)
    except _Refused as exc:
        raise UserError(exc.problem.message, hint=exc.problem.hint, problems=[exc.problem]) from None
    except (OSError, RuntimeError) as exc:
        raise UserError(f"cannot read the policy folder {display(root)}: {_reason(exc)}") from None


def confined(target: Path, root: Path) -> None:
    """Refuse (UserError) to write ``target`` when a symlink on its way leads outside ``root``."""
    try:
        top = root.absolute().resolve(strict=True)
        where = target.absolute().resolve()
    except (OSError, RuntimeError) as exc:
        raise UserError(f"refusing to write {display(target)}: {_reason(exc)}") from None
    if where != top and top not in where.parents:
        raise UserError(f"refusing to write {display(target)}: it leads to {where}, outside the policy repo {display(root)}", hint="gpu-render writes a policy file only inside the policy repo")


def _overlays_folder(values: Path, overlays: Path, given: bool) -> bool:
    """Is there an overlays folder to read? False when ``overlays`` is absent (a fleet without
    clusters); a UserError when it is there but not a folder (a file, a dangling symlink), or
    when the user named one that is absent while the policy has an ``overlays`` of its own."""
    if not os.path.lexists(overlays):
        if given:
            here = overlays.absolute()
            others = [p for p in (values.absolute().parent / "overlays",) if p != here and os.path.lexists(p)]
            if others:
                problem = _problem(
                    overlays,
                    f"the overlays folder {display(overlays)} does not exist",
                    f"the policy's overlays are in {display(others[0])}: pass --overlays {display(others[0])}, or the folder you meant (an empty folder for the fleet alone)",
                    code="overlays-folder",
                )
                raise UserError(problem.message, hint=problem.hint, problems=[problem])
        return False
    if overlays.is_dir():
        return True
    what = "a symlink to nothing readable" if os.path.islink(overlays) else "not a folder"
    problem = _problem(overlays, f"the overlays folder {display(overlays)} is {what}", "overlays/ holds one folder per cluster", code="overlays-folder")
    raise UserError(problem.message, hint=problem.hint, problems=[problem])


def _inside(path: Path, root: Path) -> Path:
    """``path`` itself, refused when it is a symlink that leads outside the policy repo.

    The policy repo is the folder holding ``overlays/``; a symlinked overlay file pointing
    anywhere else (``/etc/...``, a home folder) would let a pull request read it into output.
    """
    try:
        target = path.resolve(strict=True)
    except (OSError, RuntimeError) as exc:  # a symlink loop, a dangling link
        raise _Refused(_problem(path, f"cannot read {display(path)}: {_reason(exc)}", "replace the symlink with the file itself")) from None
    if target != root and root not in target.parents:
        raise _Refused(
            _problem(
                path,
                f"refusing to read {display(path)}: it is a symlink to {target}, outside the policy repo",
                "copy the file into the repo instead of linking to it",
            )
        )
    return path


def _reason(exc: BaseException) -> str:
    if isinstance(exc, RuntimeError) or getattr(exc, "errno", None) == 40:
        return "a symlink loop"
    return getattr(exc, "strerror", None) or str(exc)


def _child(path: Path, root: Path) -> Path:
    """``_inside`` for an entry of a folder already found inside: only a symlink can lead out.

    Resolving every file of a 1000-cluster fleet cost more than reading it; an entry that is
    not a link stays where its (checked) folder is.
    """
    return _inside(path, root) if os.path.islink(path) else path


def _read(path: Path, root: Path, limit: int, *, check_inside: bool = True) -> bytes:
    """The bytes of a regular file inside ``root``, refused (``_Refused``) when it is anything
    else or over ``limit`` bytes; the size is checked before reading, a FIFO never blocks."""
    if check_inside:
        _child(path, root)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        raise _Refused(_problem(path, f"cannot read {display(path)}: {_reason(exc)}")) from None
    try:
        st = os.fstat(fd)
        if stat.S_ISDIR(st.st_mode):
            raise _Refused(_problem(path, f"{display(path)} is a folder, not a file", "a policy file must be a regular file"))
        if not stat.S_ISREG(st.st_mode):
            raise _Refused(_problem(path, f"{display(path)} is not a regular file (a FIFO, socket or device)", "a policy file must be a regular file"))
        if st.st_size > limit:
            raise _Refused(_problem(path, f"file is {st.st_size} bytes, over the limit of {limit}", "split it, or move large content out of the policy", code="too-large"))
        chunks: list[bytes] = []
        size = 0
        while size <= limit:
            chunk = os.read(fd, min(1 << 20, limit + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        if size > limit:  # grew while read
            raise _Refused(_problem(path, f"file is over the limit of {limit} bytes", code="too-large"))
        return b"".join(chunks)
    except OSError as exc:
        raise _Refused(_problem(path, f"cannot read {display(path)}: {_reason(exc)}")) from None
    finally:
        os.close(fd)


def _linked(path: Path, what: str) -> Problem:
    """A symlink among an overlay's inputs, refused even when it stays inside the repo:
    ``gpu-render diff`` between git refs reads the committed tree, where a link is no file,
    so a change made through it (a driver bump in the linked file) would build unreviewed."""
    return _problem(path, f"refusing to read {display(path)}: {what} may not be a symlink", "replace the symlink with a copy of what it points to (gpu-render diff does not follow links)")


def _optional(path: Path, root: Path, limit: int, problems: list[Problem]) -> bytes | None:
    """A file that may be missing: None when absent; a problem (and None) when refused (a
    symlink too, see :func:`_linked`)."""
    if not os.path.lexists(path):
        return None
    try:
        if os.path.islink(path):
            _inside(path, root)  # a link out of the repo is refused as that
            raise _Refused(_linked(path, "an overlay's values.yaml or nodes.json"))
        return _read(path, root, limit)
    except _Refused as exc:
        problems.append(exc.problem)
        return None


def _names_in(folder: Path) -> set[str] | None:
    """The entry names of ``folder`` (one directory read in place of a ``lexists`` per name
    looked for, 1,000 overlay folders in a fleet), or None when it cannot be listed."""
    try:
        return set(os.listdir(folder))
    except OSError:
        return None


def _there(folder: Path, names: set[str] | None, name: str) -> bool:
    """Is there an entry ``name`` in ``folder`` (a dangling symlink counts)?"""
    return name in names if names is not None else os.path.lexists(folder / name)


def _read_cluster(folder: Path, root: Path, problems: list[Problem]) -> ClusterInput:
    _child(folder, root)
    names = _names_in(folder)
    vpath = folder / "values.yaml"
    values = _optional(vpath, root, MAX_BYTES, problems) if _there(folder, names, "values.yaml") else None
    npath = folder / "nodes.json"
    nodes = _optional(npath, root, MAX_NODES_BYTES, problems) if _there(folder, names, "nodes.json") else None
    for wrong, right in MISNAMED.items():
        if _there(folder, names, wrong):
            problems.append(_problem(folder / wrong, f"{display(folder / wrong)} is not read: gpu-render reads {right}", f"rename it to {right}"))
    patches = _read_patches(folder / "patches", root, problems) if _there(folder, names, "patches") else []
    return ClusterInput(folder.name, values or b"", display(vpath), nodes, display(npath) if nodes is not None else "", tuple(patches))


def _read_patches(pdir: Path, root: Path, problems: list[Problem]) -> list[tuple[str, bytes]]:
    """A cluster's patch files. A symlink, to the folder or to a patch file, is refused even
    when it stays inside the repo: ``diff`` reads the committed tree, where a link is no file,
    so following it here would build patches that ``diff`` never shows."""
    _child(pdir, root)
    if os.path.islink(pdir):
        problems.append(_linked(pdir, "the patches folder"))
        return []
    if not pdir.is_dir():
        problems.append(_problem(pdir, f"{display(pdir)} is not a folder", "patches/ holds the cluster's patch files"))
        return []
    entries = sorted(pdir.iterdir())
    if len(entries) > MAX_PATCHES:
        problems.append(_problem(pdir, f"more than {MAX_PATCHES} entries in {display(pdir)}", code="too-large"))
        return []
    patches: list[tuple[str, bytes]] = []
    for p in entries:
        if p.suffix not in (".yaml", ".yml"):
            if not p.name.startswith("."):
                problems.append(_warning(p, f"{display(p)} is not read: patch files end in .yaml", "rename it, or move it out of patches/"))
            continue
        try:
            if os.path.islink(p):
                _inside(p, root)  # a link out of the repo is refused as that
                raise _Refused(_linked(p, "a patch file"))
            patches.append((p.name, _read(p, root, MAX_BYTES)))
        except _Refused as exc:
            problems.append(exc.problem)
    return patches
