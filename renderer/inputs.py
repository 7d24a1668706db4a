"""Read a policy repo's input files into memory (the only input I/O of a build).

Layout: ``values.yaml`` (fleet) and ``overlays/<cluster>/{values.yaml,nodes.json,patches/*.yaml}``.
Display paths are relative to the working directory when possible, so problems read
``overlays/prod/values.yaml:3:5``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from renderer.problems import UserError


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


def display(path: Path) -> str:
    try:
        return os.path.relpath(path)
    except ValueError:  # pragma: no cover - other drive on Windows
        return str(path)


def read_inputs(values: Path, overlays: Path | None) -> Inputs:
    if not values.is_file():
        raise UserError(f"values file not found: {display(values)}", hint="pass --values FILE or run in a policy repo")
    clusters: list[ClusterInput] = []
    if overlays is not None and overlays.is_dir():
        root = overlays.absolute().parent.resolve()
        _inside(overlays, root)
        for entry in sorted(overlays.iterdir()):
            if not entry.is_dir() or entry.name.startswith("."):
                continue
            clusters.append(_read_cluster(entry, root))
    return Inputs(values.read_bytes(), display(values), tuple(clusters))


def _inside(path: Path, root: Path) -> Path:
    """``path`` itself, refused when it is a symlink that leads outside the policy repo.

    The policy repo is the folder holding ``overlays/``; a symlinked overlay file pointing
    anywhere else (``/etc/...``, a home folder) would let a pull request read it into output.
    """
    target = path.resolve()
    if target != root and root not in target.parents:
        raise UserError(
            f"refusing to read {display(path)}: it is a symlink to {target}, outside the policy repo",
            hint="copy the file into the repo instead of linking to it",
        )
    return path


def _child(path: Path, root: Path) -> Path:
    """``_inside`` for an entry of a folder already found inside: only a symlink can lead out.

    Resolving every file of a 1000-cluster fleet cost more than reading it; an entry that is
    not a link stays where its (checked) folder is.
    """
    return _inside(path, root) if os.path.islink(path) else path


def _read_cluster(folder: Path, root: Path) -> ClusterInput:
    _child(folder, root)
    vpath = _child(folder / "values.yaml", root)
    values = vpath.read_bytes() if vpath.is_file() else b""
    npath = _child(folder / "nodes.json", root)
    nodes = npath.read_bytes() if npath.is_file() else None
    patches: list[tuple[str, bytes]] = []
    pdir = _child(folder / "patches", root)
    if pdir.is_dir():
        for p in sorted(pdir.iterdir()):
            if p.is_file() and p.suffix in (".yaml", ".yml"):
                patches.append((_child(p, root).name, p.read_bytes()))
    return ClusterInput(folder.name, values, display(vpath), nodes, display(npath) if nodes is not None else "", tuple(patches))
