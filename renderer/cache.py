"""The incremental build's cache, ``<out>/.gpu-render-cache/``: what it holds and what may be reused.

Like pytest's and ruff's caches it lives beside what it speeds up, holds a ``.gitignore``
(``*``) and a ``CACHEDIR.TAG``, and is never output: the writer leaves names starting with
``.gpu-render-`` alone. It holds:

* ``state.json``: the fleet key and, per cluster, its key, its unit summary, and the sha256,
  size, mtime_ns, inode and ctime_ns of each of its files as written (git's index does the
  same to notice hand edits without reading every file: a file whose stat is as recorded is
  trusted unread, one whose stat moved is read and hashed again), plus the build's warnings;
* ``chart.pickle``: the fleet's chart analysis (``helm.templates_for``), keyed by the fleet
  key. Pickle is our own format in the user's own output folder, the trust of ``__pycache__``.

Keys are sha256 digests: the fleet key covers the tool (version, operator release, and the
bytes of the package's own code and data, so a changed gpu-render never trusts an old cache)
and the fleet values; a cluster's key covers the fleet key and that cluster's inputs
(values, nodes.json, hand-written patches, and the paths they are shown under).

This module is pure: the CLI reads and writes the files and stats the output. Anything
unreadable, of another format or of another key is ignored, never trusted.
"""

from __future__ import annotations

import hashlib
import json
import pickle
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from typing import Any

from renderer._version import OPERATOR_RELEASE, __version__
from renderer.inputs import ClusterInput, Inputs
from renderer.problems import Problem, Severity
from renderer.write import CACHE_DIR as _CACHE_DIR

STATE = "state.json"
CHART = "chart.pickle"
FORMAT = "gpu-render-cache/2"
GITIGNORE = "# Created by gpu-render: its incremental build cache, never committed.\n*\n"
CACHEDIR_TAG = (
    "Signature: 8a477f597d28d172789f06886806bc55\n"
    "# This file is a cache directory tag created by gpu-render.\n"
    "# For information about cache directory tags, see https://bford.info/cachedir/\n"
)
DESTINATION_CODE = "gitops-destination"
CACHE_DIR = _CACHE_DIR
"""``<out>/.gpu-render-cache/``: the writer treats it as internal (never listed, foreign or deleted)."""

Stat = tuple[int, int, int, int]
"""(size, mtime_ns, inode, ctime_ns) of a file on disk. A hand edit keeps the inode unless the
editor replaces the file, but it moves ctime, which no user tool can set back: resetting the
mtime after an edit of the same size is still noticed (see :func:`trusted`)."""


def stat_of(st: Any) -> Stat:
    """The :data:`Stat` of an ``os.stat_result``."""
    return (st.st_size, st.st_mtime_ns, st.st_ino, st.st_ctime_ns)


@dataclass(frozen=True)
class Entry:
    """One cluster as the last build left it."""

    key: str
    summary: dict[str, Any]
    files: dict[str, tuple[str, int, int, int, int]]
    """path -> (sha256, size, mtime_ns, inode, ctime_ns) of each of the cluster's own files."""
    warnings: tuple[Problem, ...] = ()
    """The warnings the build found in the cluster's own folder."""
    destination: dict[str, Any] = field(default_factory=dict)
    """What the shared-destination check reads of the cluster: ``gitops`` (generator, layout,
    destination of its merged values) and ``at`` (file, line, column of its destination)."""


@dataclass(frozen=True)
class State:
    fleet: str
    clusters: dict[str, Entry] = field(default_factory=dict)
    warnings: tuple[Problem, ...] = ()
    """The build's warnings that are in no cluster's folder."""


def _h(*parts: bytes | str) -> str:
    h = hashlib.sha256()
    for part in parts:
        data = part.encode("utf-8") if isinstance(part, str) else part
        h.update(len(data).to_bytes(8, "big"))
        h.update(data)
    return h.hexdigest()


@lru_cache(maxsize=1)
def tool_key() -> str:
    """gpu-render itself: version, imitated operator release, and its code and data files."""
    parts: list[bytes | str] = [__version__, OPERATOR_RELEASE]
    stack = [resources.files("renderer")]
    while stack:
        folder = stack.pop()
        for item in sorted(folder.iterdir(), key=lambda t: t.name):
            if item.is_dir():
                if item.name != "__pycache__":
                    stack.append(item)
            elif not item.name.endswith((".pyc", ".pyo")):
                parts += [item.name, item.read_bytes()]
    return _h(*parts)


def fleet_key(inputs: Inputs) -> str:
    return _h(tool_key(), inputs.values_path, inputs.values)


def cluster_key(fleet: str, ci: ClusterInput) -> str:
    parts: list[bytes | str] = [fleet, ci.name, ci.values_path, ci.values, ci.nodes_path, ci.nodes if ci.nodes is not None else b"\0none"]
    for name, raw in ci.patches:
        parts += [name, raw]
    return _h(*parts)


# --- state.json ------------------------------------------------------------------------


def dumps(state: State) -> bytes:
    body = {
        "format": FORMAT,
        "fleet": state.fleet,
        "warnings": [p.to_json() for p in state.warnings],
        "clusters": {
            name: {"key": e.key, "summary": e.summary, "files": e.files, "warnings": [p.to_json() for p in e.warnings], "destination": e.destination}
            for name, e in sorted(state.clusters.items())
        },
    }
    return json.dumps(body, separators=(",", ":")).encode("utf-8")


def loads(data: bytes) -> State | None:
    """The state, or None when ``data`` is not a state this version wrote (corrupt, truncated, other)."""
    try:
        body = json.loads(data)
        if not isinstance(body, dict) or body.get("format") != FORMAT:
            return None
        clusters = {
            str(name): Entry(
                str(e["key"]),
                dict(e["summary"]),
                {str(p): (str(f[0]), int(f[1]), int(f[2]), int(f[3]), int(f[4])) for p, f in e["files"].items()},
                tuple(_problem(w) for w in e["warnings"]),
                _destination(e["destination"]),
            )
            for name, e in body["clusters"].items()
        }
        warnings = tuple(_problem(w) for w in body["warnings"])
        return State(str(body["fleet"]), clusters, warnings)
    except (ValueError, TypeError, KeyError, IndexError, AttributeError):
        return None


def _destination(d: dict[str, Any]) -> dict[str, Any]:
    file, line, col = d["at"]
    return {"gitops": dict(d["gitops"]), "at": [str(file), int(line), int(col)]}


def _problem(d: dict[str, Any]) -> Problem:
    return Problem(
        str(d["file"]), int(d["line"]), int(d["column"]), str(d["pointer"]), str(d["message"]),
        hint=str(d["hint"]), code=str(d["code"]), severity=Severity(d["severity"]),
    )


# --- chart.pickle ----------------------------------------------------------------------


def chart_dumps(fleet: str, found: Any) -> bytes:
    return pickle.dumps((FORMAT, fleet, found), protocol=pickle.HIGHEST_PROTOCOL)


def chart_loads(data: bytes, fleet: str) -> Any:
    """The kept ``templates_for`` result for ``fleet``, or None."""
    try:
        fmt, key, found = pickle.loads(data)  # our own cache file (see the module docstring)
    except Exception:  # corrupt or from another version: rebuild it
        return None
    return found if fmt == FORMAT and key == fleet else None


# --- what may be reused ----------------------------------------------------------------


def candidates(state: State | None, inputs: Inputs) -> dict[str, Entry]:
    """Clusters whose inputs (and the fleet's, and the tool) are those of the last build."""
    if state is None or state.fleet != fleet_key(inputs):
        return {}
    out: dict[str, Entry] = {}
    for ci in inputs.clusters:
        entry = state.clusters.get(ci.name)
        if entry is not None and entry.key == cluster_key(state.fleet, ci):
            out[ci.name] = entry
    return out


def trusted(recorded: tuple[str, int, int, int, int], now: Stat) -> bool:
    """A kept file may be taken as written, unread: its size, mtime_ns, inode and ctime_ns
    are all as recorded after the last build wrote it. Any one moved: read and hash it again.

    The known limit: a change that keeps all four (a file system whose clock or inodes lie,
    or someone who writes the block device) goes unnoticed until the file's inputs change;
    ``build --check`` and ``build --no-cache`` read everything."""
    return recorded[1:] == now


def edited(entry: Entry, stats: dict[str, Stat | None]) -> list[str]:
    """The cluster's files whose stat differs from what was written (or that are gone)."""
    return [path for path, f in entry.files.items() if stats.get(path) != f[1:]]


def folder(values_path: str) -> str:
    """A cluster's overlay folder, with a trailing slash (``""`` when it has none)."""
    return values_path.rsplit("/", 1)[0] + "/" if "/" in values_path else ""


def split_warnings(found: list[Problem], folders: dict[str, str]) -> tuple[tuple[Problem, ...], dict[str, tuple[Problem, ...]]]:
    """(the fleet's, each cluster's) warnings; a cluster's are those in its folder (``folders``: name -> folder)."""
    by_folder = {f: name for name, f in folders.items() if f}
    own: dict[str, list[Problem]] = {name: [] for name in folders}
    fleet: list[Problem] = []
    for p in found:
        name = by_folder.get(folder(p.file))
        if name is None and "/" in p.file:
            name = next((n for f, n in by_folder.items() if p.file.startswith(f)), None)  # patches/<file>
        (own[name] if name is not None else fleet).append(p)
    return tuple(fleet), {name: tuple(ps) for name, ps in own.items()}


def warnings(state: State, fresh: list[Problem], changed: dict[str, str], reused: list[str], destinations: list[Problem]) -> list[Problem] | None:
    """The warnings of a build that planned only the fleet and the ``changed`` clusters
    (name -> folder), or None when they cannot be told without planning every cluster.

    A reused cluster's warnings are those the last build found in its folder. Warnings
    outside every cluster's folder (on the fleet file) may come from any cluster's merge:
    they must be those of last time, then no reused cluster adds one. Shared-destination
    warnings need every cluster: ``destinations`` are those, found by :func:`shared_destinations`.
    """
    own = [p for p in fresh if p.code != DESTINATION_CODE]
    fleet, _ = split_warnings(own, changed)
    if set(fleet) != {p for p in state.warnings if p.code != DESTINATION_CODE}:
        return None
    found = set(own) | set(destinations)
    for name in reused:
        found.update(p for p in state.clusters[name].warnings if p.code != DESTINATION_CODE)
    return sorted(found)


def destination_of(located: Any) -> dict[str, Any]:
    """What :func:`shared_destinations` needs of one cluster's merged values (a ``merge.Located``)."""
    gitops = located.data.get("gitops") or {}
    kept = {k: gitops[k] for k in ("generator", "layout", "destination") if k in gitops}
    file, line, col = located.locate("/gitops/destination")
    return {"gitops": json.loads(json.dumps(kept)), "at": [file, line, col]}


class _Seen:
    """The part of a ``merge.Located`` the shared-destination check reads, from the cache."""

    def __init__(self, destination: dict[str, Any]) -> None:
        self.data = {"gitops": destination["gitops"]}
        self._at = tuple(destination["at"])

    def locate(self, pointer: str) -> tuple[str, int, int]:
        file, line, col = self._at
        return str(file), int(line), int(col)


def shared_destinations(destinations: dict[str, dict[str, Any]]) -> list[Problem]:
    """The plan's shared-destination check over every cluster (name -> :func:`destination_of`)."""
    from renderer import checks

    located = {name: _Seen(d) for name, d in destinations.items()}
    return sorted(set(checks.shared_destinations(located)))  # type: ignore[arg-type]
