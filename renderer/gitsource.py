"""Read a policy (values.yaml + overlays/) or an output folder from a git commit, in memory.

The I/O edge of ``gpu-render diff``: runs ``git`` as a subprocess, never touches the
working tree or the index, and hands the bytes to :mod:`renderer.inputs` types so the pure
pipeline renders them exactly as it renders files on disk.
"""

from __future__ import annotations

import subprocess
from pathlib import Path, PurePosixPath

from renderer.inputs import ClusterInput, Inputs
from renderer.problems import UserError


def git(args: list[str], cwd: Path, *, stdin: bytes | None = None, check: bool = True) -> bytes:
    try:
        proc = subprocess.run(["git", *args], cwd=cwd, input=stdin, capture_output=True, timeout=120)
    except FileNotFoundError as exc:
        raise UserError("git is not installed", hint="install git or pass output folders to compare") from exc
    if check and proc.returncode != 0:
        msg = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        raise UserError(f"git {' '.join(args)}: {msg[-1] if msg else 'failed'}")
    return proc.stdout


def commit_of(ref: str, cwd: Path) -> str | None:
    """The commit id ``ref`` names, or None when it is not a commit here (or not a repo)."""
    proc = subprocess.run(["git", "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}"], cwd=cwd, capture_output=True, timeout=60)
    return proc.stdout.decode().strip() if proc.returncode == 0 else None


def prefix(cwd: Path) -> str:
    """Where ``cwd`` stands inside its repository (``""`` or ``sub/dir/``)."""
    return git(["rev-parse", "--show-prefix"], cwd).decode().strip()


def default_branch(cwd: Path) -> str:
    """origin/HEAD's branch, else main, else master."""
    inside = subprocess.run(["git", "rev-parse", "--is-inside-work-tree"], cwd=cwd, capture_output=True, timeout=60)
    if inside.returncode != 0:
        raise UserError("not a git repository: no merge base to diff against", hint="pass BASE and HEAD as folders or git refs")
    proc = subprocess.run(["git", "symbolic-ref", "--quiet", "refs/remotes/origin/HEAD"], cwd=cwd, capture_output=True, timeout=60)
    if proc.returncode == 0:
        return proc.stdout.decode().strip().removeprefix("refs/remotes/")
    for name in ("main", "master", "origin/main", "origin/master"):
        if commit_of(name, cwd):
            return name
    raise UserError("no default branch (main, master or origin/HEAD) to diff against", hint="pass BASE explicitly, e.g. gpu-render diff HEAD~1")


def merge_base(cwd: Path) -> tuple[str, str]:
    """(label, commit) of the merge base of HEAD with the default branch."""
    branch = default_branch(cwd)
    sha = git(["merge-base", "HEAD", branch], cwd).decode().strip()
    return f"merge-base({branch})", sha


def _read_blobs(ids: list[str], cwd: Path) -> dict[str, bytes]:
    """Contents of the blobs ``ids`` in one ``git cat-file --batch`` call.

    Asked by object id, never by ``commit:path``: the request is one line per object, and a
    committed file name may hold a newline, which would split its request in two and hand
    every later answer to the wrong path (a decoy file could so replace what ``diff`` reads)."""
    if not ids:
        return {}
    request = "".join(f"{i}\n" for i in ids).encode()
    raw = git(["cat-file", "--batch"], cwd, stdin=request)
    out: dict[str, bytes] = {}
    pos = 0
    for i in ids:
        end = raw.index(b"\n", pos)
        header = raw[pos:end].split()
        pos = end + 1
        if len(header) < 3 or header[1] != b"blob":
            continue
        size = int(header[2])
        out[i] = raw[pos : pos + size]
        pos += size + 1
    return out


def list_files(commit: str, paths: list[str], cwd: Path, links: set[str] | None = None) -> dict[str, str]:
    """Every regular file at ``commit`` under ``paths`` (repository-relative files or folders):
    path -> blob id. Symbolic links and submodules are left out (a link's blob is its target's
    name, not a file's text); ``links`` collects the symbolic links' paths."""
    raw = git(["ls-tree", "-r", "-z", "--full-tree", commit, "--", *paths], cwd)
    out: dict[str, str] = {}
    for entry in raw.split(b"\0"):
        if not entry:
            continue
        meta, _, name = entry.partition(b"\t")
        mode, kind, oid = [*meta.split(), b"", b"", b""][:3]
        if kind == b"blob" and mode == b"120000" and links is not None:
            links.add(name.decode("utf-8", "backslashreplace"))
        if kind != b"blob" or mode not in (b"100644", b"100755"):
            continue
        try:
            path = name.decode("utf-8")
        except UnicodeDecodeError:
            shown = name.decode("utf-8", "backslashreplace")
            raise UserError(f"{commit[:12]}: the file name {shown!r} is not UTF-8", hint="rename the file; gpu-render reads UTF-8 names only") from None
        out[path] = oid.decode("ascii")
    return out


def read_inputs_at(commit: str, label: str, cwd: Path, values: str = "values.yaml", overlays: str = "overlays") -> Inputs:
    """The policy as it was at ``commit``; paths are relative to ``cwd`` as on disk."""
    pre = prefix(cwd)
    values_path = str(PurePosixPath(pre) / values)
    overlays_path = str(PurePosixPath(pre) / overlays)
    links: set[str] = set()
    files = list_files(commit, [values_path, overlays_path.rstrip("/") + "/"], cwd, links)
    linked = sorted(p for p in links if _an_input(p, overlays_path))
    if linked:  # build refuses them (renderer/inputs.py): a change through a link is never unseen
        raise UserError(
            f"{label}: {linked[0]} is a symlink, which gpu-render build refuses (a change made through it would not show here)",
            hint="replace the symlink with a copy of what it points to",
        )
    wanted = [values_path] if values_path in files else []
    per_cluster: dict[str, list[str]] = {}
    for path in sorted(files):
        if not path.startswith(overlays_path.rstrip("/") + "/"):
            continue
        rel = PurePosixPath(path).relative_to(overlays_path)
        if len(rel.parts) < 2 or rel.parts[0].startswith("."):
            continue
        per_cluster.setdefault(rel.parts[0], []).append(path)
        wanted.append(path)
    by_id = _read_blobs(sorted({files[p] for p in wanted}), cwd)
    blobs = {p: by_id[files[p]] for p in wanted if files[p] in by_id}
    if values_path not in blobs:
        raise UserError(f"{label}: {values_path} does not exist at that commit", hint="pass an output folder, or a ref that has the policy")
    clusters = []
    for name in sorted(per_cluster):
        base = f"{overlays_path}/{name}"
        vals = f"{base}/values.yaml"
        nodes = f"{base}/nodes.json"
        patches = tuple(
            (PurePosixPath(p).name, blobs[p])
            for p in per_cluster[name]
            if p in blobs and p.startswith(f"{base}/patches/") and p.endswith((".yaml", ".yml")) and p.count("/") == base.count("/") + 2
        )
        clusters.append(
            ClusterInput(
                name,
                blobs.get(vals, b""),
                f"{label}:{vals}",
                blobs.get(nodes),
                f"{label}:{nodes}" if nodes in blobs else "",
                patches,
            )
        )
    return Inputs(blobs[values_path], f"{label}:{values_path}", tuple(clusters))


def _an_input(path: str, overlays: str) -> bool:
    """Is ``path`` (a symbolic link) where build reads an overlay's input: an overlay folder,
    its ``values.yaml``, ``nodes.json``, ``patches`` folder or a patch file in it?"""
    root = overlays.rstrip("/") + "/"
    if not path.startswith(root):
        return False
    parts = PurePosixPath(path[len(root) :]).parts
    if not parts or parts[0].startswith("."):
        return False
    if len(parts) == 1:
        return True
    if len(parts) == 2:
        return parts[1] in ("values.yaml", "nodes.json", "patches")
    return len(parts) == 3 and parts[1] == "patches" and parts[2].endswith((".yaml", ".yml"))


def read_folder(folder: Path) -> dict[str, str]:
    """An output folder on disk as ``{relative path: text}`` (undecodable files are skipped)."""
    from renderer.write import reading

    with reading(folder):  # an interrupted build is finished (or discarded) before reading
        return _read_folder(folder)


def _read_folder(folder: Path) -> dict[str, str]:
    out: dict[str, str] = {}
    for path in sorted(folder.rglob("*")):
        parts = path.relative_to(folder).parts
        # gpu-render's own staging/lock files and VCS folders are not output (.helmignore is)
        if path.is_file() and not any(part.startswith((".gpu-render-", ".git")) and part != ".gitattributes" for part in parts):
            try:
                out[path.relative_to(folder).as_posix()] = path.read_text(encoding="utf-8")
            except (UnicodeDecodeError, OSError):
                continue
    return out
