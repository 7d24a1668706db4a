"""Evaluate chart templates in Python as Helm would (the values in, the objects out), so every
build checks that the chart gives the static render: :func:`render_templates`, and
:class:`EvalMemo`, which keeps each template's result per the values it read."""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

from renderer.components.common import Obj
from renderer.emit import buildtime
from renderer.emit.helm_tree import (
    KEYS_KEY,
    MISSING,
    NAME_KEY,
    POOLS,
    PULL_SECRETS,
    Atom,
    Block,
    Cond,
    Conj,
    Derived,
    Interp,
    Joined,
    MergeBlock,
    Ref,
    Splice,
    Template,
    TPath,
    Variant,
    bool_text,
    is_empty,
    joined_text,
    merged_maps,
    names_text,
    tget,
    unique_secrets,
)
from renderer.emit.helm_values import POOL_SECTIONS, Path, get, pool_names
from renderer.jsondata import clone

# --- evaluation ----------------------------------------------------------------------


def holds(cond: Cond, values: dict[str, Any]) -> bool:
    return any(all(_atom(a, values) for a in conj) for conj in cond)


def _atom(atom: Atom, values: dict[str, Any]) -> bool:
    # "some pool is there" reads the pools' names only (the memo then shares the rest)
    found = _read_pool_names(values) if atom.path == POOLS and atom.op == "is" else _read(values, atom.path)
    if atom.op == "is":
        return (not is_empty(found) and found is not False) == bool(atom.value)
    if atom.op == "ne":
        return bool(found != atom.value)
    if atom.op == "in":
        return found in atom.value
    return bool(found == atom.value)


def _plain_int(text: str) -> bool:
    """Does YAML read ``text``, printed unquoted, as the integer ``int(text)`` says? Digits
    without a leading zero (``0123`` is octal to Helm's YAML reader): a values file's
    ``maxUnavailable: "1000000"``, which stays text in the chart values (a number there would be
    a float, printed ``1e+06``), comes out of ``maxUnavailable: {{ ... }}`` as the number."""
    return text.isascii() and text.isdigit() and (text == "0" or not text.startswith("0"))


def evaluate(node: Any, values: dict[str, Any]) -> Any:
    """What ``helm template`` makes of a template node (MISSING for nothing)."""
    if isinstance(node, Variant):
        for cond, case in node.cases[:-1]:
            if holds(cond, values):
                return MISSING if case is MISSING else evaluate(case, values)
        last = node.cases[-1][1]
        return MISSING if last is MISSING else evaluate(last, values)
    if isinstance(node, Ref):
        if node.text:
            return bool_text(_read(values, node.path))
        found = _read(values, node.path)
        if not node.quote and isinstance(found, str) and _plain_int(found):
            return int(found)  # printed unquoted, YAML reads the digits as a number
        return copy.deepcopy(found)
    if isinstance(node, Derived):
        return _read_generated(values, node.key)
    if isinstance(node, Joined):
        return names_text(_read(values, node.path)) if node.names else joined_text(_read(values, node.path))
    if isinstance(node, Interp):
        return "".join(p if isinstance(p, str) else str(_read(values, p.path)) for p in node.parts)
    if isinstance(node, dict):
        return _evaluate_map(node, values)
    if isinstance(node, list):
        return _evaluate_list(node, values)
    return node


def _evaluate_map(node: dict[Any, Any], values: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    splices = [k for k, v in node.items() if isinstance(k, Splice) and not (isinstance(v, Variant) and evaluate(v, values) is MISSING)]
    for key, val in node.items():
        if isinstance(key, Splice):
            if key not in splices:
                continue  # behind a variant that does not splice it here
            if len(splices) == 1:
                out.update(copy.deepcopy(_read(values, key.path) or {}))
            elif key is splices[0]:  # all of them merged, in the first one's place
                out.update(merged_maps([_read(values, s.path) for s in splices]))
            continue
        if isinstance(val, Block):
            found = _read(values, val.path)
            if not is_empty(found):
                out[key] = copy.deepcopy(found)
            continue
        if isinstance(val, MergeBlock):
            union = merged_maps([_read(values, path) for path in val.paths])
            if union:
                out[key] = union
            continue
        got = evaluate(val, values)
        case = val
        while isinstance(case, Variant):  # the case chosen: an emptiable map in it is left out as it is printed
            case = next((c for cond, c in case.cases[:-1] if holds(cond, values)), case.cases[-1][1])
        if key == PULL_SECRETS and isinstance(got, list) and secret_lists(case):
            got = unique_secrets(got)  # as the pullSecrets helper joins them
        if got is not MISSING and not (got == {} and emptiable(case)) and not (got == [] and splices_only(case) is not None):
            out[key] = got
    return out


def splices_only(node: Any) -> Cond | None:
    """For a list made only of values lists spliced together and of items behind one condition
    each (a splice maybe behind one too), which the builders leave out when it comes out empty:
    when it has an item; else None."""
    if not isinstance(node, list) or not node:
        return None
    out: list[Conj] = []
    optional = 0
    for item in node:
        if isinstance(item, Variant) and len(item.cases) == 2 and item.cases[1][1] is MISSING:
            cond, item = item.cases[0]
            if not isinstance(item, Splice):  # a fixed item of its own condition (HOST_ROOT)
                out += cond
                optional += 1
                continue
        else:
            cond = ((),)
        if not isinstance(item, Splice) or item.is_map:
            return None
        out += [(*conj, Atom(item.path, "is", True)) for conj in cond]
    if optional and len(node) == optional > 1:  # items of their own alone (one of two terms): not an optional list
        return None
    if len(node) < 2 and not optional:
        return None
    return tuple(out)


def secret_lists(node: Any) -> bool:
    """Is ``node`` a pod's pull secrets joined from two or more values lists, each spliced
    always or only when booleans hold (the ``pullSecrets`` helper of chart_helpers.tpl joins
    them, each name once, as the builders do)?"""
    return isinstance(node, list) and len(node) > 1 and all(_secret_list(item) for item in node)


def _secret_list(item: Any) -> bool:
    """A values list spliced whole, or behind a conjunction of booleans (``and a b <list>``)."""
    if isinstance(item, Variant) and len(item.cases) == 2 and item.cases[1][1] is MISSING:
        cond, item = item.cases[0]
        if len(cond) != 1 or not cond[0] or not all(a.op == "is" and a.value is True for a in cond[0]):
            return False
    return isinstance(item, Splice) and not item.is_map


def emptiable(node: Any) -> bool:
    """A map made only of merged values maps and optional entries: left out when it comes out empty."""
    if not isinstance(node, dict) or not node:
        return False
    for key, val in node.items():
        if isinstance(key, Splice):
            continue
        if isinstance(val, Variant) and any(case is MISSING for _, case in val.cases):
            continue
        return False
    return True


def _evaluate_list(node: list[Any], values: dict[str, Any]) -> list[Any]:
    items: list[Any] = []
    for item in node:
        while isinstance(item, Variant):  # a case may be a splice: chosen here
            item = next((case for cond, case in item.cases[:-1] if holds(cond, values)), item.cases[-1][1])
        if item is MISSING:
            continue
        if isinstance(item, Splice):
            found = _read(values, item.path)
            if isinstance(found, list):
                items.extend(copy.deepcopy(found))
            elif found:
                items.append(copy.deepcopy(found))
            continue
        got = evaluate(item, values)
        if got is not MISSING:
            items.append(got)
    return items


# --- evaluation memo ----------------------------------------------------------------
#
# A template's evaluation is a pure function of what it reads from the values (every read
# goes through _read/_read_generated). So a fleet memoises each template's result in a
# decision tree: a node names the next read, its children are keyed by what that read gave
# (a JSON fingerprint), a leaf holds the objects. A cluster walks the tree doing only the
# reads; a miss evaluates for real, recording its reads, and adds its branch. Clusters
# that agree on every value a template reads share its result; nothing else is assumed.

_READS: list[tuple[Any, str]] | None = None


def _fingerprint(value: Any) -> str:
    # repr keeps key order and tells True from 1 and 1.0 from 1: equal fingerprints, equal data
    return repr(value)


_POOL: tuple[str, str] | None = None
"""While a pooled object is evaluated: (the synthetic pool's key, the pool's name)."""


def _read(values: dict[str, Any], path: Path) -> Any:
    if _POOL is not None and len(path) >= 3 and path[2] == _POOL[0] and path[:2] == POOLS:
        if path[3:] == (NAME_KEY,):
            return _POOL[1]  # known from the read of the pools' names
        path = (*POOLS, _POOL[1], *path[3:])
    elif _POOL is not None and path[:1] and path[0] in POOL_SECTIONS:
        return _read_merged(values, path)
    found = get(values, path)
    if _READS is not None:
        _READS.append((path, _fingerprint(found)))
    return found


def _read_merged(values: dict[str, Any], path: Path) -> Any:
    """Inside the range over the pools, a section a pool overrides (``POOL_SECTIONS``): the
    pool's own section merged over the fleet's, as the driver builder and ``$gds`` take it."""
    assert _POOL is not None
    fleet, own_path = get(values, path[:1]), (*POOLS, _POOL[1], path[0])
    own = get(values, own_path)
    if _READS is not None:
        _READS.extend([(path[:1], _fingerprint(fleet)), (own_path, _fingerprint(own))])
    if own is None:
        return get(values, path)
    return get(merged_maps([fleet, own]), path[1:])


def _read_pool_names(values: dict[str, Any]) -> list[str]:
    found = pool_names(values)
    if _READS is not None:
        _READS.append(((*POOLS, KEYS_KEY), _fingerprint(found)))
    return found


def _read_generated(values: dict[str, Any], key: str) -> Any:
    if _POOL is not None:
        key = key.replace(_POOL[0], _POOL[1])
    found = (values.get("generated") or {}).get(key)
    if _READS is not None:
        _READS.append((("generated", key, "#derived"), _fingerprint(found)))
    if _POOL is not None and buildtime.is_pool_digest(key) and not _fresh(values):
        return ""
    return copy.deepcopy(found) if isinstance(found, (list, dict)) else found


def _fresh(values: dict[str, Any]) -> bool:
    """Are the pool's digest inputs those the chart was built with (the chart's helper
    ``driverDigest``)? A pool with no inputs digest keeps its computed value."""
    assert _POOL is not None
    key = buildtime.INPUTS + _POOL[1]
    want = (values.get("generated") or {}).get(key)
    if _READS is not None:
        _READS.append((("generated", key, "#derived"), _fingerprint(want)))
    if want is None:
        return True
    _read(values, (*POOLS, _POOL[0]))  # recorded for the memo, as the fleet's inputs below
    for path in buildtime.FLEET_INPUTS:
        _read_plain(values, path)
    try:
        return bool(buildtime.digest(buildtime.pool_inputs(values, _POOL[1])) == want)
    except (TypeError, ValueError, UnicodeEncodeError):
        return False


def _read_plain(values: dict[str, Any], path: Path) -> Any:
    """A read of the chart's own values (``$.Values``) from inside the range, recorded."""
    found = get(values, path)
    if _READS is not None:
        _READS.append((path, _fingerprint(found)))
    return found


def generated_value(found: Any) -> Any:
    """A computed leaf as the chart's values hold it: a collection as it is, else its text."""
    return clone(found) if isinstance(found, (list, dict)) else str(found)


def _do_read(values: dict[str, Any], path: Any) -> str:
    if path == (*POOLS, KEYS_KEY):
        return _fingerprint(pool_names(values))
    if path[-1:] == ("#derived",):
        return _fingerprint((values.get("generated") or {}).get(path[1]))
    return _fingerprint(get(values, path))


@dataclass
class _MemoNode:
    path: Any = None  # the next read; None at a leaf
    children: dict[str, _MemoNode] = field(default_factory=dict)
    result: list[Obj] = field(default_factory=list)
    rid: int = -1  # a small number standing for ``path`` in one EvalMemo (cheap to hash)


class EvalMemo:
    """Memoised template results across many values (one fleet): see the comment above."""

    def __init__(self) -> None:
        self.roots: dict[int, _MemoNode] = {}
        self.rids: dict[Any, int] = {}
        self.hits = 0
        self.misses = 0

    def objects(self, tpl: Template, values: dict[str, Any], known: dict[int, str] | None = None) -> list[Obj]:
        """``tpl``'s objects for ``values``; ``known``: fingerprints already read from these values
        (templates read many of the same values: each is fingerprinted once per values)."""
        if known is None:
            known = {}
        node = self.roots.get(id(tpl))
        while node is not None and node.path is not None:
            fp = known.get(node.rid)
            if fp is None:
                fp = known[node.rid] = _do_read(values, node.path)
            node = node.children.get(fp)
        if node is not None:
            self.hits += 1
            return node.result
        self.misses += 1
        global _READS
        saved, _READS = _READS, []
        try:
            result = _template_objects(tpl, values)
            reads = _READS
        finally:
            _READS = saved
        self._insert(tpl, reads, result)
        return result

    def _insert(self, tpl: Template, reads: list[tuple[Any, str]], result: list[Obj]) -> None:
        node = self.roots.setdefault(id(tpl), _MemoNode())
        for path, fp in reads:
            if node.path is None and not node.children:
                node.path = path
                node.rid = self.rids.setdefault(path, len(self.rids))
            assert node.path == path, "template evaluation is not a function of its reads"
            node = node.children.setdefault(fp, _MemoNode())
        node.result = result


def _template_objects(tpl: Template, values: dict[str, Any]) -> list[Obj]:
    out: list[Obj] = []
    if not holds(tpl.gate or ((),), values):
        return out
    for node in tpl.objects.values():
        got = evaluate(node, values)
        if got is not MISSING:
            out.append(got)
    if tpl.pool_key:
        for name in _read_pool_names(values):
            out += pooled_objects(tpl, values, name)
    return out


def pooled_objects(tpl: Template, values: dict[str, Any], name: str, only: list[str] | None = None) -> list[Obj]:
    """The pooled objects of ``tpl`` for pool ``name`` (``only``: just these parts of each object's
    node, e.g. ``["metadata", "name"]``; then one value per object, MISSING for none)."""
    global _POOL
    saved, _POOL = _POOL, (tpl.pool_key, name)
    try:
        out: list[Any] = []
        for node in tpl.pooled.values():
            got = evaluate(node if only is None else tget_through(node, tuple(only)), values)
            if got is not MISSING or only is not None:
                out.append(got)
        return out
    finally:
        _POOL = saved


def tget_through(node: Any, path: TPath) -> Any:
    """``tget`` that descends into every case of a variant on the way (a Variant of the parts)."""
    if not path:
        return node
    if isinstance(node, Variant):
        return Variant([(cond, MISSING if case is MISSING else tget_through(case, path)) for cond, case in node.cases])
    found = tget(node, path[:1])
    return MISSING if found is MISSING else tget_through(found, path[1:])


def pooled_generated(tpl: Template, values: dict[str, Any], real: dict[str, Obj]) -> dict[str, str]:
    """The computed values of ``tpl``'s pooled objects for the pools of ``values``, read from the
    render ``real`` (``Kind/name`` -> object): each pool's object is found by the name the
    template gives it."""
    out: dict[str, str] = {}
    kinds = {oid: oid.split("/", 1)[0] for oid in tpl.pooled}
    for name in pool_names(values):
        names = dict(zip(tpl.pooled, pooled_objects(tpl, values, name, ["metadata", "name"]), strict=True))
        for key, oid, path in tpl.pool_derived:
            obj = real.get(f"{kinds[oid]}/{names[oid]}")
            found = tget(obj, path) if obj is not None else MISSING
            if found is not MISSING:
                out[key.replace(tpl.pool_key, name)] = str(found)
    return out


def render_templates(templates: list[Template], values: dict[str, Any], memo: EvalMemo | None = None) -> list[Obj]:
    """Every object the chart gives for ``values`` (Python stand-in for ``helm template``).

    With ``memo``, results are shared with earlier calls that read the same values: treat
    the returned objects as read-only."""
    out: list[Obj] = []
    known: dict[int, str] = {}
    for tpl in templates:
        out += memo.objects(tpl, values, known) if memo is not None else _template_objects(tpl, values)
    return out
