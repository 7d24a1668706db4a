"""The incremental build's cache, ``<out>/.gpu-render-cache/``: what it holds and what may be reused.

Like pytest's and ruff's caches it lives beside what it speeds up, holds a ``.gitignore``
(``*``) and a ``CACHEDIR.TAG``, and is never output: the writer leaves names starting with
``.gpu-render-`` alone. It holds:

* ``state.json``: the fleet key and, per cluster, its key, its unit summary, and the sha256,
  size, mtime_ns, inode and ctime_ns of each of its files as written (git's index does the
  same to notice hand edits without reading every file: a file whose stat is as recorded is
  trusted unread, one whose stat moved is read and hashed again), plus the build's warnings;
* ``chart.json``: the fleet's chart analysis (``helm.templates_for``), keyed by the fleet
  key, as tagged JSON (:func:`chart_dumps`).

The cache is data, never code: the output folder is part of the policy repository, which
anyone with a pull request can change (a file can be force-added past its ``.gitignore``).
So nothing here unpickles, evaluates or imports: both files are JSON, read with size and
shape checks, and only the classes of the template tree (by name, field by field) can be
built from them. A cache that does not check out is ignored and rebuilt; a kept chart is
still checked against the fresh fleet render before it is used (``helm.analyse``). The CLI
ignores, with a warning, a cache whose files git tracks (docs/security.md).

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
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from renderer._version import OPERATOR_RELEASE, __version__
from renderer.inputs import ClusterInput, Inputs
from renderer.problems import Problem, Severity
from renderer.write import CACHE_DIR as _CACHE_DIR

STATE = "state.json"
CHART = "chart.json"
FORMAT = "gpu-render-cache/3"
MAX_CACHE_BYTES = 4 * 1024 * 1024
"""A cache file over this size is ignored (the example fleet's chart analysis is about 1 MB)."""
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
    templates: dict[str, tuple[str, int, int, int, int]] = field(default_factory=dict)
    """The chart's template files (a function of the fleet key alone, :func:`chart_template_paths`),
    as :attr:`Entry.files`: a next build of the same fleet key keeps them unprinted when all are
    as written."""


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
    from importlib import resources  # (imported when a cache is used: about 5 ms with its readers)

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
        "templates": state.templates,
    }
    return json.dumps(body, separators=(",", ":")).encode("utf-8")


def _files(raw: Any) -> dict[str, tuple[str, int, int, int, int]] | None:
    if not isinstance(raw, dict):
        return None
    files = {}
    for p, f in raw.items():
        if not (isinstance(f, list) and len(f) == 5 and isinstance(f[0], str) and all(type(n) is int for n in f[1:])):
            return None
        files[str(p)] = (f[0], int(f[1]), int(f[2]), int(f[3]), int(f[4]))
    return files


def loads(data: bytes) -> State | None:
    """The state, or None when ``data`` is not a state this version wrote (corrupt, truncated,
    other, or of the wrong shape anywhere)."""
    if len(data) > MAX_CACHE_BYTES:
        return None
    try:
        body = json.loads(data)
        if not isinstance(body, dict) or body.get("format") != FORMAT or not isinstance(body["clusters"], dict):
            return None
        clusters = {}
        for name, e in body["clusters"].items():
            files = _files(e["files"])
            if not _is_summary(e["summary"]) or files is None:
                return None
            clusters[str(name)] = Entry(str(e["key"]), dict(e["summary"]), files, tuple(_problem(w) for w in e["warnings"]), _destination(e["destination"]))
        warnings = tuple(_problem(w) for w in body["warnings"])
        templates = _files(body["templates"])
        if templates is None or not all(is_chart_template(t) for t in templates):
            return None
        return State(str(body["fleet"]), clusters, warnings, templates)
    except (ValueError, TypeError, KeyError, IndexError, AttributeError, RecursionError):
        return None


def _is_summary(s: Any) -> bool:
    """The shape of ``emit.cluster_unit``'s summary: what the aggregate emitters read of it."""
    if not isinstance(s, dict) or set(s) != {"argocd", "chart"}:
        return False
    argocd, chart = s["argocd"], s["chart"]
    return (
        isinstance(chart, dict)
        and all(isinstance(k, str) and isinstance(v, str) for k, v in chart.items())
        and isinstance(argocd, dict)
        and isinstance(argocd.get("element"), dict)
        and isinstance(argocd.get("destination"), list)
        and isinstance(argocd.get("kinds"), list)
        and all(isinstance(k, list) and len(k) == 3 for k in argocd["kinds"])
    )


def _destination(d: dict[str, Any]) -> dict[str, Any]:
    file, line, col = d["at"]
    gitops = d["gitops"]
    if not isinstance(gitops, dict) or not isinstance(gitops.get("destination", {}), dict):
        raise TypeError("gitops")
    return {"gitops": dict(gitops), "at": [str(file), int(line), int(col)]}


def _problem(d: dict[str, Any]) -> Problem:
    if not all(isinstance(d[k], str) for k in ("file", "pointer", "message", "hint", "code")) or not all(type(d[k]) is int for k in ("line", "column")):
        raise TypeError("problem")
    return Problem(
        str(d["file"]), int(d["line"]), int(d["column"]), str(d["pointer"]), str(d["message"]),
        hint=str(d["hint"]), code=str(d["code"]), severity=Severity(d["severity"]),
    )


def tracked_warning(out: Any, tracked: list[str]) -> Problem:
    """The warning for a cache that git tracks: it is repository content, so it is not used."""
    more = f" and {len(tracked) - 1} more file(s)" if len(tracked) > 1 else ""
    return Problem(
        f"{out}/{tracked[0]}", 1, 1, "",
        f"the build cache is committed to git ({tracked[0]}{more}): ignored, every cluster is rendered",
        hint=f"git rm -r --cached {out}/{CACHE_DIR} (it is never committed; its own .gitignore says so)",
        code="cache-committed", severity=Severity.WARNING,
    )


# --- chart.json ------------------------------------------------------------------------
#
# Tagged JSON: every collection and every node of the template tree is a one-key object,
# {"l": [...]} list, {"t": [...]} tuple, {"s": [...]} set, {"d": {...}} dict with string keys,
# {"p": [[k, v], ...]} dict with other keys, {"m": 0} MISSING, {"r": 0} REMOVE and
# {"c": "Ref", "f": [...]} a dataclass of the template tree by name and positional fields
# (a Variant that stands for a list item also {"n": name}: the item's name, which tset gives it).


class _Bad(Exception):
    """The cache file is not a chart analysis this version wrote."""


def _tree_classes() -> dict[str, tuple[type, tuple[str, ...]]]:
    from dataclasses import fields

    from renderer.emit import helm_tree

    out: dict[str, tuple[type, tuple[str, ...]]] = {}
    for cls in (helm_tree.Ref, helm_tree.Interp, helm_tree.Block, helm_tree.Splice, helm_tree.Derived, helm_tree.Joined, helm_tree.MergeBlock, helm_tree.Atom, helm_tree.Variant, helm_tree.Template):
        out[cls.__name__] = (cls, tuple(f.name for f in fields(cls)))
    return out


def _enc(value: Any, classes: dict[type, tuple[str, ...]]) -> Any:
    from renderer.emit import helm_tree, helm_values

    kind = type(value)
    if value is None or kind in (bool, int, str):
        return value
    if kind is float:
        if value != value or value in (float("inf"), float("-inf")):
            raise _Bad("a float that JSON cannot hold")
        return value
    if kind is list:
        return {"l": [_enc(v, classes) for v in value]}
    if kind is tuple:
        return {"t": [_enc(v, classes) for v in value]}
    if kind in (set, frozenset):
        items = [_enc(v, classes) for v in value]
        return {"s": sorted(items, key=lambda i: json.dumps(i, sort_keys=True))}
    if kind is dict:
        if all(type(k) is str for k in value):
            return {"d": {k: _enc(v, classes) for k, v in value.items()}}
        return {"p": [[_enc(k, classes), _enc(v, classes)] for k, v in value.items()]}
    if value is helm_tree.MISSING:
        return {"m": 0}
    if value is helm_values.REMOVE:
        return {"r": 0}
    names = classes.get(kind)
    if names is None:
        raise _Bad(f"no JSON form for {kind.__name__}")
    out = {"c": kind.__name__, "f": [_enc(getattr(value, n), classes) for n in names]}
    if kind is helm_tree.Variant and hasattr(value, "name"):
        out["n"] = _enc(value.name, classes)
    return out


def _dec(node: Any, classes: dict[str, tuple[type, tuple[str, ...]]], depth: int) -> Any:
    """The value ``_enc`` wrote as ``node``; ``_Bad`` for anything it could not have written."""
    from renderer.emit import helm_tree, helm_values

    return _Decoder(classes, helm_tree, helm_values.REMOVE).dec(node, depth)


class _Decoder:
    """``_dec``'s recursion, with what it compares against looked up once (a kept chart is
    35,000 nodes on a 1000-cluster fleet: an import statement per node was a fifth of it)."""

    def __init__(self, classes: dict[str, tuple[type, tuple[str, ...]]], tree: Any, remove: Any) -> None:
        self.classes = classes
        self.tree = tree
        self.missing = tree.MISSING
        self.remove = remove

    def dec(self, node: Any, depth: int) -> Any:
        if depth > 200:
            raise _Bad("nested too deep")
        kind = type(node)
        if node is None or kind is str or kind is int or kind is bool or kind is float:
            return node
        if kind is not dict or len(node) not in (1, 2, 3):
            raise _Bad("not a tagged value")
        dec = self.dec
        if len(node) > 1:
            return self.node(node, depth)
        ((tag, body),) = node.items()
        if tag == "m" and body == 0:
            return self.missing
        if tag == "r" and body == 0:
            return self.remove
        if tag in ("l", "t", "s") and type(body) is list:
            items = [dec(v, depth + 1) for v in body]
            return items if tag == "l" else tuple(items) if tag == "t" else set(items)
        if tag == "d" and type(body) is dict:
            return {k: dec(v, depth + 1) for k, v in body.items()}
        if tag == "p" and type(body) is list:
            out: dict[Any, Any] = {}
            for pair in body:
                if type(pair) is not list or len(pair) != 2:
                    raise _Bad("a dict entry that is not a pair")
                out[dec(pair[0], depth + 1)] = dec(pair[1], depth + 1)
            return out
        raise _Bad(f"unknown tag {tag!r}")

    def node(self, node: dict[str, Any], depth: int) -> Any:
        """A dataclass of the template tree (``{"c": name, "f": fields}``, a list item's Variant
        with ``"n"`` too)."""
        name, fields = node.get("c"), node.get("f")
        if type(name) is not str or name not in self.classes or type(fields) is not list:
            raise _Bad("not a node of the template tree")
        cls, names = self.classes[name]
        if len(fields) != len(names):
            raise _Bad(f"{name} with {len(fields)} fields")
        made = cls(*(self.dec(f, depth + 1) for f in fields))
        _check_node(made, self.tree)
        if len(node) == 3:
            item = node.get("n")
            if cls is not self.tree.Variant or type(item) is not str:
                raise _Bad("a name on what is not a list item's Variant")
            made.name = item
        return made


def _is_path(value: Any) -> bool:
    return type(value) is tuple and all(type(p) is str for p in value)


def _is_cond(value: Any) -> bool:
    from renderer.emit import helm_tree

    return type(value) is tuple and all(type(c) is tuple and all(type(a) is helm_tree.Atom for a in c) for c in value)


def _check_node(node: Any, helm_tree: Any) -> None:
    """The field types of one node of the template tree (its constructor checks none);
    ``helm_tree`` is that module, passed in by the decoder."""
    ok = True
    if isinstance(node, (helm_tree.Ref, helm_tree.Block, helm_tree.Joined)):
        ok = _is_path(node.path) and (not isinstance(node, helm_tree.Ref) or type(node.quote) is bool)
    elif isinstance(node, helm_tree.Splice):
        ok = _is_path(node.path) and type(node.is_map) is bool
    elif isinstance(node, helm_tree.Interp):
        ok = type(node.parts) is tuple and all(type(p) in (str, helm_tree.Ref) for p in node.parts)
    elif isinstance(node, helm_tree.Derived):
        ok = type(node.key) is str and type(node.block) is bool
    elif isinstance(node, helm_tree.MergeBlock):
        ok = type(node.paths) is tuple and all(_is_path(p) for p in node.paths)
    elif isinstance(node, helm_tree.Atom):
        ok = _is_path(node.path) and node.op in ("is", "eq", "ne", "in")
    elif isinstance(node, helm_tree.Variant):
        ok = type(node.cases) is list and all(type(c) is tuple and len(c) == 2 and _is_cond(c[0]) for c in node.cases)
    elif isinstance(node, helm_tree.Template):
        ok = (
            type(node.name) is str
            and _is_cond(node.gate)
            and type(node.objects) is dict
            and all(type(k) is str for k in node.objects)
            and all(type(s) is set and all(_is_path(p) for p in s) for s in (node.fixed, node.knobs))
            and type(node.derived) is list
            and all(type(d) is tuple and len(d) == 3 and type(d[0]) is str and type(d[1]) is str and type(d[2]) is tuple for d in node.derived)
            and type(node.generated) is dict
            and all(type(k) is str and type(v) in (str, list) for k, v in node.generated.items())
            and type(node.pooled) is dict
            and all(type(k) is str for k in node.pooled)
            and type(node.pool_key) is str
            and type(node.pool_derived) is list
            and all(type(d) is tuple and len(d) == 3 and type(d[0]) is str and type(d[1]) is str and type(d[2]) is tuple for d in node.pool_derived)
        )
    if not ok:
        raise _Bad(f"{type(node).__name__} with fields of the wrong type")


def chart_dumps(fleet: str, found: Any) -> bytes | None:
    """``found`` (a ``templates_for`` result) as JSON, or None when it holds what JSON cannot."""
    classes = {cls: names for cls, names in _tree_classes().values()}
    try:
        body = {"format": FORMAT, "fleet": fleet, "chart": _enc(found, classes)}
    except _Bad:
        return None
    return json.dumps(body, separators=(",", ":"), allow_nan=False).encode("utf-8")


def tree_dumps(value: Any) -> bytes | None:
    """``value`` (data and nodes of the template tree) as tagged JSON, or None when it holds
    what that cannot (a worker process sends its templates so, :mod:`renderer.workers`)."""
    classes = {cls: names for cls, names in _tree_classes().values()}
    try:
        return json.dumps(_enc(value, classes), separators=(",", ":"), allow_nan=False).encode("utf-8")
    except _Bad:
        return None


def tree_loads(data: bytes) -> Any:
    """What :func:`tree_dumps` wrote as ``data``; ValueError for anything it could not have written."""
    try:
        return _dec(json.loads(data), _tree_classes(), 0)
    except (TypeError, RecursionError, _Bad) as e:
        raise ValueError(f"not a template tree: {e}") from None


def chart_loads(data: bytes, fleet: str) -> Any:
    """The kept ``templates_for`` result for ``fleet``, or None when ``data`` is anything else."""
    from renderer.emit import helm_tree

    if len(data) > MAX_CACHE_BYTES:
        return None
    try:
        body = json.loads(data)
        if type(body) is not dict or set(body) != {"format", "fleet", "chart"} or body["format"] != FORMAT or body["fleet"] != fleet:
            return None
        found = _dec(body["chart"], _tree_classes(), 0)
    except (ValueError, TypeError, RecursionError, _Bad):  # TypeError: an unhashable set item or key
        return None
    if type(found) is not tuple or len(found) != 2:
        return None
    values, templates = found
    if type(values) is not dict or type(templates) is not list or not all(type(t) is helm_tree.Template for t in templates):
        return None
    return found


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


def is_chart_template(path: str) -> bool:
    """A file of the chart's ``templates/`` folder: printed from the chart analysis alone."""
    from renderer.emit.helm import ROOT

    prefix = f"{ROOT}/templates/"
    return path.startswith(prefix) and "/" not in path[len(prefix):] and path.endswith((".yaml", ".tpl")) and path != f"{prefix}NOTES.txt"


def kept_templates(state: State | None, inputs: Inputs, stats: dict[str, Stat | None]) -> dict[str, str]:
    """The chart templates the last build printed for this very fleet key, path -> sha256, when
    every one is on disk as written (``stats``: their stat now, None when gone); else empty, and
    the build prints them all again."""
    if state is None or not state.templates or state.fleet != fleet_key(inputs) or set(stats) != set(state.templates):
        return {}
    for path, recorded in state.templates.items():
        now = stats[path]
        if now is None or not trusted(recorded, now):
            return {}
    return {path: recorded[0] for path, recorded in state.templates.items()}


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
