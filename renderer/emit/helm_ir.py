"""Turn each component into a chart template by rendering it with placeholders (sentinels).

How a component becomes a template, with no per-component code:

1. **Knobs** are the leaves of the chart values (:mod:`renderer.emit.helm_values`): scalars
   and free-form blocks (lists, maps without a fixed schema) are *transparent* candidates;
   booleans and schema enums are *structural*.
2. The component is built once from values where every transparent knob holds a unique
   sentinel (``zzgrs00012x`` for a scalar, ``{zzgrb00013x: zzgrb00013x}`` for a block). Where a
   sentinel lands in the objects, the template gets ``{{ .Values.<knob> }}`` (scalars, or text
   with scalars inside) or ``toYaml`` (blocks: a whole value, or items spliced into a list or
   map). Putting every value back must give the very objects built from the real values; a
   knob that breaks this (used in a condition, parsed, hashed) is found by bisection and is
   then structural when its value is empty (variants ``empty`` / ``set``) or a string at its
   schema default (variants ``default`` / another value: a host path compared with ``/``), or
   fixed at build time otherwise. A knob whose placeholder lands only in computed leaves (a
   config file made from a list: ``Component.computed``) is fixed at build time too.
3. Each structural knob is flipped to each other value of its domain and the component
   rebuilt: if the component disappears the knob gates the whole template file; otherwise
   the paths where objects differ get ``{{ if }}/{{ else }}`` between the variants. Knobs whose
   differences touch the same path are varied together (their product); the others are
   taken as independent.

The result is a small tree (:mod:`renderer.emit.helm_tree`: ``Ref``, ``Interp``, ``Block``,
``Splice``, ``Variant``) that :mod:`renderer.emit.helm_text` prints as Go template text and
:mod:`renderer.emit.helm_eval` evaluates in Python, so every build checks that the chart
reproduces the static render.
"""

from __future__ import annotations

import copy
import itertools
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from renderer import gcpause, workers
from renderer.components import Component
from renderer.components.common import Obj
from renderer.components.dra_common import TERMS
from renderer.emit import helm_logic
from renderer.emit.helm_eval import (
    _template_objects,
    generated_value,
    pooled_generated,
    pooled_objects,
)
from renderer.emit.helm_tree import (
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
    item_name,
    joined_text,
    merged_maps,
    names_text,
    tget,
    unique_secrets,
)
from renderer.emit.helm_values import (
    NODE,
    OPTIONAL_FACTS,
    POOL_ATTR,
    POOL_NAMES_READ,
    POOL_ONLY,
    POOL_SECTIONS,
    POOLS_READ,
    RELEASE,
    REMOVE,
    KeyProbe,
    Path,
    Recorded,
    added_in,
    assign,
    build_time_keys,
    get,
    model_of,
    pool_names,
    pool_of,
    pool_schema,
    record_gated_reads,
    unwrap_sections,
)
from renderer.jsondata import clone
from renderer.model import Pool
from renderer.releasegate import ADDED_IN, RELEASES, has

SCALAR = "zzgrs{:05d}x"
BLOCK = "zzgrb{:05d}x"
INT_BASE = -98765_000000
"""An integer knob's placeholder is ``INT_BASE - n``: ``int()`` passes it through, so a builder
that parses the knob still builds, and the number in the objects maps back to the knob. It is
negative so a knob the builder compares (``> 0``) takes another branch and fails the put-back
check: it stays fixed at build time."""
BLOCK_SID = re.compile(r"zzgrb\d{5}x")
JOINED = re.compile(r"(?:[^,=]+=(?:true|false),)*(zzgrb\d{5}x)=true(?:,[^,=]+=(?:true|false))*")
"""A map block's placeholder as the builders join a map of booleans into text (``{sid: sid}``
as ``sid=true``, among the keys a map of booleans keeps beside it: ``MPSSupport=true,sid=true``,
see :attr:`Knob.keyed`): the DRA driver's ``FEATURE_GATES``, printed as :class:`Joined`."""
SENTINEL = re.compile(r"zzgr[sb]\d{5}x|-98765\d{6}(?!\d)")
HASHLIKE = re.compile(r"[0-9a-f]{8,}|[0-9]{6,}")
MAX_PRODUCT = 64
FEW = 16
"""Suspects of breaking placeholders up to this many are tried one by one (most suspects are
bad, where bisection pays twice), more are bisected."""
SHORTCUTS = True
"""Build only what the reads and the failing builds say can matter (:meth:`Analysis._guided`,
:meth:`Analysis._as_base`). Off, the analysis bisects every candidate and builds every variant
(tests/test_helm_chart.py checks that both give the same templates)."""

POOL = SCALAR.format(99999)
"""Name of the one synthetic node pool whose objects are the body of ``range`` over ``driver.pools``
(a sentinel: where it lands in the objects, the template gets ``$name``)."""


# --- knobs ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Knob:
    path: Path
    kind: str  # scalar | int | block | bool | enum | set (empty-or-set) | default (default-or-other) | pool
    domain: tuple[Any, ...] = ()
    """An enum's values; a string scalar's schema default (its one value, for ``default``)."""
    keyed: bool = False
    """A map of booleans (schema: ``additionalProperties`` boolean) that a builder may look into
    as well as take whole (the DRA driver's ``featureGates``: joined into ``FEATURE_GATES``, and
    ``MPSSupport`` grants a Role). Its placeholder keeps the map's own keys beside the sentinel
    key, and each key a build looks up is a boolean knob of its own (:meth:`Analysis._keys`),
    also a key the map lacks (then false, and left out)."""


def _resolve(schema: dict[str, Any], node: Any) -> dict[str, Any]:
    seen = 0
    while isinstance(node, dict) and "$ref" in node and seen < 10:
        ref = str(node["$ref"])
        target: Any = schema
        for part in ref.lstrip("#/").split("/"):
            target = target.get(part, {}) if isinstance(target, dict) else {}
        extra = {k: v for k, v in node.items() if k != "$ref"}
        node = {**target, **extra}
        seen += 1
    return node if isinstance(node, dict) else {}


def knobs(values: dict[str, Any], schema: dict[str, Any]) -> list[Knob]:
    out: list[Knob] = []
    pool = pool_schema(schema)
    resolved = build_time_keys(values)  # in the pools' facts: not read by the chart, not varied

    def walk(value: Any, path: Path, node: Any) -> None:
        typed = isinstance(node, dict) and "$ref" in node  # a reusable value type: one block
        node = _resolve(schema, node)
        if path == ("nodePools",) or path in resolved:
            return
        if path == ("driver", "pools"):
            for name, settings in (value or {}).items():
                out.append(Knob((*path, name), "pool", (True, False)))
                walk(settings, (*path, name), pool)
            return
        if isinstance(value, bool):
            out.append(Knob(path, "bool", (True, False)))
        elif "enum" in node and isinstance(value, (str, int)):
            domain = tuple(node["enum"])
            out.append(Knob(path, "enum", domain if value in domain else (*domain, value)))
        elif isinstance(value, dict):
            props = node.get("properties")
            if not typed and (props or (not node and value)):
                extra = node.get("additionalProperties")
                for key, child in value.items():
                    sub = (props or {}).get(key, extra if isinstance(extra, dict) else {})
                    walk(child, (*path, key), sub)
            else:
                extra = node.get("additionalProperties")
                keyed = not props and isinstance(extra, dict) and extra.get("type") == "boolean"
                out.append(Knob(path, "block", keyed=keyed))
        elif isinstance(value, list):
            out.append(Knob(path, "block"))
        elif type(value) is int and node.get("type") == "integer":
            out.append(Knob(path, "int"))
        elif isinstance(value, str) and isinstance(node.get("default"), str) and node["default"]:
            out.append(Knob(path, "scalar", (node["default"],)))
        elif isinstance(value, (str, int, float)):
            out.append(Knob(path, "scalar"))

    walk(values, (), schema)
    return out


def _has(values: Any, path: Path) -> bool:
    for key in path:
        if not isinstance(values, dict) or key not in values:
            return False
        values = values[key]
    return True


def _may_read(seen: set[str], paths: set[Path], path: Path) -> bool:
    """Could a build that recorded ``seen`` and ``paths`` (:class:`helm_values.DeepReads`) have
    read the value at ``path``? False only when it surely did not. The builds the analysis skips
    ask this (a test takes every value as read here and expects the same templates); a choice
    of what the template says asks :func:`_read_in`, which no such test replaces."""
    return _read_in(seen, paths, path)


def _read_in(seen: set[str], paths: set[Path], path: Path) -> bool:
    """:func:`_may_read` as the reads were recorded."""
    if path[0] not in seen:
        return False
    if path[:2] == ("driver", "pools"):
        # pool settings reach a build only through model.pools or values["nodePools"]; which
        # pools there are, also through model.dra_pools
        return bool({POOLS_READ, "nodePools"} & seen) or (len(path) == 3 and POOL_NAMES_READ in seen)
    return path[:1] in paths or path[:2] in paths


def _optional_fact(knob: Knob) -> bool:
    """Is ``knob`` a pool fact of a range body read as empty (:data:`OPTIONAL_FACTS`)?"""
    return len(knob.path) == 5 and knob.path[:2] == POOLS and knob.path[3] == NODE and knob.path[4] in OPTIONAL_FACTS


def _int_sid(node: Any) -> bool:
    """An integer knob's placeholder (see ``INT_BASE``)."""
    return type(node) is int and node <= INT_BASE and SENTINEL.fullmatch(str(node)) is not None


def _has_sid(text: str) -> bool:
    """Could ``text`` hold a placeholder (the cheap test before the regex)."""
    return "zzgr" in text or "-98765" in text


def _mentions_sentinel(node: Any) -> bool:
    if isinstance(node, dict):
        return any((isinstance(k, str) and "zzgr" in k) or _mentions_sentinel(v) for k, v in node.items())
    if isinstance(node, list):
        return any(_mentions_sentinel(v) for v in node)
    return (isinstance(node, str) and _has_sid(node)) or _int_sid(node)


def _block_text(text: str) -> bool:
    """Is ``text`` made from a block placeholder: its ``str()`` (``"{'zzgrb00012x': ..."``), or
    its key joined into other text (``"zzgrb00012x=true"``)? A string that is the sentinel
    alone is the placeholder's own key or value, where the block itself stands."""
    return "zzgrb" in text and BLOCK_SID.fullmatch(text) is None and JOINED.fullmatch(text) is None


def _text_of_block(node: Any) -> bool:
    """Does a string in ``node`` hold a block placeholder's text (:func:`_block_text`)?

    Asked of every build: one loop over the tree (no recursion, no generator per node)."""
    stack = [node]
    pop, push_all = stack.pop, stack.extend
    while stack:
        item = pop()
        kind = type(item)
        if kind is str:
            if "zzgrb" in item and _block_text(item):
                return True
        elif kind is dict:
            push_all(item.values())
        elif kind is list:
            push_all(item)
        elif isinstance(item, dict):
            push_all(item.values())
        elif isinstance(item, list):
            push_all(item)
        elif isinstance(item, str) and _block_text(item):
            return True
    return False


def _text_of_block_beside(node: Any, like: Any) -> bool:
    """:func:`_text_of_block` of ``node``, where ``like`` (a tree that holds no such text) is
    the same but for some parts: the parts equal to ``like``'s are compared, not walked."""
    if node is like:
        return False
    kind = type(node)
    if kind is not type(like) or (kind is not dict and kind is not list):
        return _text_of_block(node)
    # (each pair looked up as it is walked: no list of either side made per node)
    pairs = zip(node.values(), map(like.get, node, itertools.repeat(MISSING)), strict=True) if kind is dict else itertools.zip_longest(node, like[: len(node)], fillvalue=MISSING)
    for val, was in pairs:
        if val is was:
            continue
        if type(val) is str:
            if "zzgrb" in val and _block_text(val):
                return True
        elif val != was and _text_of_block_beside(val, was):
            return True
    return False


def _block_texts(node: Any) -> set[str]:
    """The block placeholders whose text (:func:`_block_text`) a string in ``node`` holds."""
    found: set[str] = set()
    stack = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
        elif isinstance(item, str) and _block_text(item):
            found.update(re.findall(r"zzgrb\d{5}x", item))
    return found


def _joins_keys(values: dict[str, Any], keyed: tuple[Path, ...]) -> bool:
    """Does a keyed map's placeholder in ``values`` hold keys beside its sentinel key?"""
    for path in keyed:
        found = get(values, path)
        if isinstance(found, dict) and len(found) > 1 and any(type(k) is str and k.startswith("zzgrb") for k in found):
            return True
    return False


def _canonical_joins(node: Any) -> None:
    """Each text joined from a keyed map's placeholder and the keys beside it
    (``MPSSupport=true,zzgrb00012x=true``) as that placeholder's own (``zzgrb00012x=true``), in
    place: it is the map's text whatever keys it holds, so its keys make no variant there."""
    stack = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            for key, val in item.items():
                if isinstance(val, str):
                    if "zzgrb" in val and "," in val and (m := JOINED.fullmatch(val)) is not None:
                        item[key] = f"{m.group(1)}=true"
                elif isinstance(val, (dict, list)):
                    stack.append(val)
        elif isinstance(item, list):
            for i, val in enumerate(item):
                if isinstance(val, str):
                    if "zzgrb" in val and "," in val and (m := JOINED.fullmatch(val)) is not None:
                        item[i] = f"{m.group(1)}=true"
                elif isinstance(val, (dict, list)):
                    stack.append(val)


def _reads() -> tuple[Recorded, Recorded]:
    """Fresh (sections, keys) read sets for a build whose own reads are told apart (``direct``)."""
    return Recorded(), Recorded()


# --- building and comparing ----------------------------------------------------------


def build_tree(
    comp: Component,
    values: dict[str, Any],
    cluster: str,
    seen: set[str] | None = None,
    context: list[Obj] | None = None,
    paths: set[Path] | None = None,
) -> dict[str, Obj]:
    """One component's objects as a full render gives them, keyed ``Kind/name``.

    ``context`` holds other components' RBAC bindings: whether a pod mounts a token depends on
    whether any component binds its ServiceAccount. With ``seen`` and ``paths``, the build
    records which sections and keys of them it read (:class:`helm_values.DeepReads`).
    """
    from renderer.render import finish
    from renderer.security import bound_service_accounts

    model = model_of(values, cluster, seen, paths if seen is not None else None)
    if not comp.enabled(model):
        if paths is not None and seen is not None:  # the gate may read a key a release prunes
            record_gated_reads(seen, paths)
        return {}
    objs: dict[str, list[Obj]] = {comp.name: comp.build(model)}
    bound = bound_service_accounts(objs)
    if context:  # only the ServiceAccounts the other components bind: their objects are not finished
        namespace = model.namespace
        for binding in context:
            for subject in binding.get("subjects") or []:
                if subject.get("kind") == "ServiceAccount":
                    bound.add((namespace if subject.get("namespace") else "", str(subject.get("name"))))
    built = finish(model, objs, bound).get(comp.name) or []
    if paths is not None and seen is not None:
        record_gated_reads(seen, paths)
        built = unwrap_sections(built)
    return {f"{o['kind']}/{o['metadata']['name']}": o for o in built}


class Sentinels:
    """Which sentinel stands for which knob, and the real value behind it."""

    def __init__(self) -> None:
        self.knob: dict[str, Path] = {}
        self.value: dict[str, Any] = {}
        self.by_path: dict[Path, str] = {}
        self.order: dict[tuple[str, ...], tuple[str, ...]] = {}
        """The block sentinels merged into one map, in the map's order -> in the builder's
        precedence (the winner last), where :meth:`Analysis._precedence` found it differs."""

    def make(self, knob: Knob, value: Any) -> Any:
        if knob.path in self.by_path:
            sid = self.by_path[knob.path]
        else:
            if knob.kind == "int":
                sid = str(INT_BASE - len(self.knob))
            else:
                sid = (BLOCK if isinstance(value, (list, dict)) else SCALAR).format(len(self.knob))
            self.by_path[knob.path] = sid
            self.knob[sid] = knob.path
        self.value[sid] = value
        if isinstance(value, list):
            return [{sid: sid}]
        if isinstance(value, dict):
            return {**value, sid: sid} if knob.keyed else {sid: sid}
        if knob.kind == "int":
            return int(sid)
        return sid

    def block_id(self, node: Any) -> str | None:
        if isinstance(node, dict) and len(node) == 1:
            ((k, v),) = node.items()
            if isinstance(k, str) and k == v and k in self.knob and k.startswith("zzgrb"):
                return k
        return None

    def back(self, node: Any) -> Any:
        """The node with every sentinel replaced by its value (empty whole blocks dropped).

        The result shares no dict or list with ``node`` or the values (the values are JSON data)."""
        if isinstance(node, dict):
            return self._back_map(node)
        if isinstance(node, list):
            return self._back_list(node)
        if _int_sid(node):
            return self.value.get(str(node), node)
        if isinstance(node, str) and _has_sid(node):
            if node in self.value and node.startswith("zzgrs"):
                return self.value[node]
            if node in self.value and _names_of(self.knob[node]):  # pull secrets' names, joined
                return names_text(self.value[node])
            joined = JOINED.fullmatch(node)
            if joined is not None and isinstance(self.value.get(joined.group(1)), dict):
                return joined_text(self.value[joined.group(1)])
            return SENTINEL.sub(lambda m: str(self.value.get(m.group(0), m.group(0))), node)
        return node

    def _back_map(self, node: dict[Any, Any]) -> dict[Any, Any]:
        out: dict[Any, Any] = {}
        for key, val in node.items():
            if type(val) is str:
                if not _has_sid(val):  # the common leaf: no sentinel, nothing to put back
                    out[key] = val
                    continue
            elif not isinstance(val, (dict, list)) and not _int_sid(val):
                out[key] = val
                continue
            if isinstance(key, str) and key == val and key in self.knob and key.startswith("zzgrb"):
                real = self.value[key]
                if isinstance(real, dict):
                    out.update(clone(real))
                continue
            merged = self.merge_ids(val)
            if merged and len(merged) > 1:
                union = merged_maps([self.value[mid] for mid in merged])  # deep, as the builders merge
                if union:
                    out[key] = union
                continue
            sid = self.block_id(val) if not isinstance(val, list) else self._list_block(val)
            if sid is not None:
                if not is_empty(self.value[sid]):
                    out[key] = clone(self.value[sid])
                continue
            if isinstance(val, list) and len(val) > 1 and self._only_list_blocks(val):
                # lists joined into one (a pod's pull secrets: the validator's or the manager's,
                # then the image's, each name once): as one list block, an empty join leaves the
                # key out
                joined = self._back_list(val)
                if key == PULL_SECRETS:
                    joined = unique_secrets(joined)
                if joined:
                    out[key] = joined
                continue
            out[key] = self.back(val)
        return out

    def _back_list(self, node: list[Any]) -> list[Any]:
        items: list[Any] = []
        for item in node:
            if type(item) is str and not _has_sid(item):
                items.append(item)
                continue
            sid = self.block_id(item)
            if sid is not None:
                real = self.value[sid]
                if isinstance(real, list):
                    items.extend(clone(real))
                elif real:
                    items.append(clone(real))
                continue
            items.append(self.back(item))
        return items

    def merge_ids(self, node: Any) -> list[str]:
        """Sentinels of a map made only of merged values maps (empty list when it is not one)."""
        if not isinstance(node, dict) or not node:
            return []
        knob = self.knob
        for k, v in node.items():  # (stopping at the first entry that is not one: most maps)
            if not (isinstance(k, str) and k == v and k in knob and k.startswith("zzgrb")):
                return []
        return list(node)

    def _only_list_blocks(self, node: list[Any]) -> bool:
        """Is every item of ``node`` a list block's placeholder item?"""
        for item in node:
            sid = self.block_id(item)
            if sid is None or not isinstance(self.value[sid], list):
                return False
        return True

    def _list_block(self, node: list[Any]) -> str | None:
        if len(node) == 1:
            sid = self.block_id(node[0])
            if sid is not None and isinstance(self.value[sid], list):
                return sid
        return None


def _names(node: list[Any]) -> list[str | None]:
    """Identity of each item of a list: its name, ``name#k`` for the k-th item of one name
    (two volume mounts of one volume), None for an item without a name."""
    seen: dict[str, int] = {}
    out: list[str | None] = []
    for item in node:
        name = item_name(item)
        if name is None:
            out.append(None)
            continue
        if isinstance(item, Variant):  # named by tset, occurrence included
            raw, _, k = name.partition("#")
            seen[raw] = max(seen.get(raw, 0), int(k or 1))
            out.append(name)
            continue
        seen[name] = seen.get(name, 0) + 1
        out.append(name if seen[name] == 1 else f"{name}#{seen[name]}")
    return out


def _keyed(node: Any) -> dict[str, Any] | None:
    if not isinstance(node, list) or not node:
        return None
    out: dict[str, Any] = {}
    for name, item in zip(_names(node), node, strict=True):
        if name is None or name in out:
            return None
        out[name] = item
    return out


def _whole_block(node: Any) -> bool:
    """A free-form block's sentinel (``{zzgrb00013x: zzgrb00013x}``): it stands for the whole value."""
    if not isinstance(node, dict) or len(node) != 1:
        return False
    ((k, v),) = node.items()
    return isinstance(k, str) and k == v and k.startswith("zzgrb") and SENTINEL.fullmatch(k) is not None


def diff(a: Any, b: Any, path: TPath = ()) -> list[TPath]:
    """Minimal paths where two trees differ; lists of named items compare item by item; a
    block's sentinel differs as a whole (its key is no key of the object)."""
    for one, other in ((a, b), (b, a)):
        if _whole_block(one) and not (isinstance(other, dict) and next(iter(one)) in other):
            return [path]
    if isinstance(a, dict) and isinstance(b, dict):
        out: list[TPath] = []
        for key in [*a, *(k for k in b if k not in a)]:
            if key not in a or key not in b:
                out.append((*path, key))
            else:
                x, y = a[key], b[key]
                if x is not y and x != y:  # equal subtrees have no differences: skip the walk
                    out += diff(x, y, (*path, key))
        return out
    ka, kb = _keyed(a), _keyed(b)
    if ka is not None and kb is not None:
        common_a = [n for n in ka if n in kb]
        common_b = [n for n in kb if n in ka]
        if common_a != common_b:
            return [path]
        out = []
        for name in [*ka, *(n for n in kb if n not in ka)]:
            if name not in ka or name not in kb:
                out.append((*path, ("@", name)))
            elif ka[name] is not kb[name] and ka[name] != kb[name]:
                out += diff(ka[name], kb[name], (*path, ("@", name)))
        return out
    return [] if a == b else [path]


def tset(root: Any, path: TPath, value: Any, ref: Any, order: list[list[str | None]] | None = None) -> None:
    """Put ``value`` at ``path`` in ``root``; a new key/item goes after its predecessor in ``ref``
    (``order``: the list's names in builds where knobs that add items to it are set together)."""
    parent = tget(root, path[:-1])
    ref_parent = tget(ref, path[:-1])
    elem = path[-1]
    if isinstance(elem, tuple):
        assert isinstance(parent, list)
        names = _names(parent)
        if isinstance(value, Variant):
            value.name = elem[1]  # type: ignore[attr-defined]
        if elem[1] in names:
            parent[names.index(elem[1])] = value
            return
        ref_names = _names(ref_parent) if isinstance(ref_parent, list) else []
        pos = _insert_pos(names, ref_names, elem[1])
        # past items another knob's variant added there (not in this variant): knobs varied
        # apart that both add an item after one predecessor (the GDS and GDRCopy sidecars, their
        # env) keep the order the builder gives them: the order in a build with both set where
        # there is one (``order``), else the order the knobs are applied
        while pos < len(parent) and pos > 0 and isinstance(parent[pos], Variant) and names[pos] not in ref_names and _before(order, names[pos], elem[1]):
            pos += 1
        parent.insert(pos, value)
        return
    assert isinstance(parent, dict)
    if elem in parent:
        parent[elem] = value
        return
    keys = list(parent)
    ref_keys = list(ref_parent) if isinstance(ref_parent, dict) else []
    pos = _insert_pos(keys, ref_keys, elem)
    items = list(parent.items())
    items.insert(pos, (elem, value))
    parent.clear()
    parent.update(items)


def _before(orders: list[list[str | None]] | None, one: str | None, other: str) -> bool:
    """Does the item ``one`` go before ``other`` (True without one of ``orders`` that has both)?"""
    for order in orders or ():
        if one in order and other in order:
            return order.index(one) < order.index(other)
    return True


def _insert_pos(existing: list[Any], ref: list[Any], name: Any) -> int:
    if name in ref:
        for prev in reversed(ref[: ref.index(name)]):
            if prev in existing:
                return existing.index(prev) + 1
        return 0
    return len(existing)


# --- analysis ------------------------------------------------------------------------


def _bisect(group: list[Knob], ok: Callable[[list[Knob]], bool], bad: list[Knob]) -> None:
    """Add to ``bad`` the knobs of ``group`` that fail ``ok``: a group that fails is halved down
    to single knobs (``ok(keep)``: the build passes with ``keep``'s placeholders in)."""
    if not group or ok(group):
        return
    if len(group) == 1:
        bad.append(group[0])
        return
    half = len(group) // 2
    _bisect(group[:half], ok, bad)
    _bisect(group[half:], ok, bad)


class Analysis:
    """Analyses every component against one set of chart values."""

    def __init__(self, values: dict[str, Any], cluster: str, schema: dict[str, Any], context: dict[str, list[Obj]] | None = None, pool_key: str = "") -> None:
        self.values = values
        self.cluster = cluster
        self.pool_key = pool_key
        """The synthetic pool whose objects this analysis reads as a ``range`` body (or "")."""
        self.knobs = knobs(values, schema)
        if not pool_key:  # what the chart values add to each pool is read only in a range body
            self.knobs = [k for k in self.knobs if not _added(k.path, values)]
        self.transparent = [k for k in self.knobs if k.kind in ("scalar", "int", "block")]
        self.structural = [k for k in self.knobs if k.kind in ("bool", "enum", "pool")]
        self.keyed = tuple(k.path for k in self.knobs if k.keyed)
        """The maps of booleans builders may look into (:attr:`Knob.keyed`)."""
        self.seen: set[str] = set()
        """Top-level sections read by the builds of the component being analysed."""
        self.context = _bindings(values, cluster) if context is None else context
        self.derived_at: list[tuple[int, TPath]] = []
        self.derived: list[tuple[str, str, TPath]] = []
        self.generated: dict[str, Any] = {}
        self.masked: dict[tuple[tuple[Path, str], ...], dict[str, Obj] | None] = {}
        """Masked trees of the component being analysed, by the changes made to its base values."""
        self.captured: tuple[dict[str, Obj], set[str], set[Path]] | None = None
        """The last placeholder build of :meth:`_split` with what it read."""
        self.known_bad: set[Path] = set()
        """Transparent knobs whose placeholder broke a component's build (suspects for the next)."""
        self.passed_alone: set[Path] = set()
        """Suspects whose placeholder alone reproduced a component's objects: with the next
        component's suspects, those of them are tried together first (:meth:`_guided`)."""
        self.raised: set[Path] = set()
        """Transparent knobs whose placeholder a failed build's error named."""
        self.probe_reads: tuple[set[str], set[Path]] = (set(), set())
        """What the last build of :meth:`_probe` read."""
        self.base_reads: set[str] = set()
        """What the build of the component's base values read (sections and ``POOLS_READ``)."""
        self.base_paths: set[Path] = set()
        self.raw_base: dict[str, Obj] | None = None
        """The base build of the component being analysed as built (before ``mask``)."""
        self.base_direct: tuple[set[str], set[Path]] | None = None
        """The part of those reads the builder made itself, not through the resolved pools
        (whose attributes it read are ``POOL_ATTR`` paths in it)."""
        self.base_gated = False
        """Did the base build record the release only as a read where a pruned key may be
        (:attr:`helm_values.Recorded.gated`), the builder never reading it itself?"""
        self.base_attrs: tuple[list[Path], list[Path]] | None = None
        """The ``POOL_ATTR`` paths of ``base_direct``: attributes, and keys of ``values``/``driver``."""
        self.base_pools: tuple[dict[str, Any], tuple[Pool, ...]] | None = None
        """The base values and their resolved pools (for :meth:`_as_base`)."""
        """Which keys of those sections it read: ``(section, key)``, or ``(section,)`` for all."""
        self.base_ids: list[str] | None = None
        """The base build's object keys (``Kind/name``): variant trees are aligned to them."""
        self.presence: dict[str, list[Path]] = {}
        """Base objects some structural values leave out, with the knobs that do."""
        self.presence_on: dict[Path, list[tuple[Any, Any]]] = {}
        """(label, setting) of each such knob: its base value first."""
        self.unbuilt: set[Path] = set()
        """Structural knobs of the component being analysed with a value its placeholder build failed for."""
        self.real_ids: list[str] = []
        """The ids of the component's objects built from the real values, in the order of ``base_ids``."""
        self.enabled_memo: dict[tuple[str, int], tuple[tuple[dict[Path, Any], dict[str, Obj]] | None, set[str]]] = {}
        """:meth:`enabling` per component and structural knob count (the pooled check asks first)."""
        self.first: dict[str, tuple[dict[str, Obj] | None, tuple[set[str], set[Path]]]] = {}
        """:meth:`first_build` of each component."""
        self.failure: set[str] = set()
        """The sentinels the last failed :meth:`tree` named: in its error, or as a block turned to text."""
        self.off: dict[Path, list[Any]] = {}
        """The values of each structural knob that leave the component being analysed out."""
        self.as_base: tuple[dict[str, Any] | None, dict[tuple[Path, str], bool]] = (None, {})
        """:meth:`_as_base`'s answers for the base values held first."""
        self.failed: dict[tuple[tuple[Path, str], ...], set[str]] = {}
        """:attr:`failure` of each memoised build of :meth:`masked_tree` that failed."""
        self.added: set[str] = set()
        """Objects a structural value adds under their own name (the MPS Role of
        ``featureGates.MPSSupport``): :meth:`align` never takes them for a renamed base object."""
        self.item_order: dict[TPath, list[list[str | None]]] = {}
        """:meth:`_item_order` of the component being analysed."""
        self.pairs: list[tuple[Path, Path]] = []
        """Empty knobs of a pool body whose placeholders break the build together but not alone
        (a repository ConfigMap's name and the OS's directory for it): varied together
        (:meth:`_pair_empty`)."""
        self.beside: list[tuple[Path, tuple[Path, ...]]] = []
        """(switch, knobs) of a pool body: a switch that adds an item to a list (the GDS sidecar
        to the containers) and the knobs (a pair, or one) that change that item once it is there
        as they change its siblings (the repository mounts): built together (:meth:`_pair_beside`)."""
        self.kept: dict[tuple[tuple[Path, str], ...], dict[str, Obj] | None] = {}
        """Trees of two or more changes, by their memo key: asked for again (a sibling pair by
        :meth:`_sibling_refs` then :meth:`_pair_siblings`, a group's combinations the pairs,
        :meth:`_pair_empty`, the switches of :attr:`beside` with their knobs), built once. All
        are asked for after :meth:`_variants` varied each knob alone, so :attr:`added` (which
        :meth:`align` reads) no longer changes."""
        self.unaligned: dict[tuple[tuple[Path, str], ...], dict[str, Obj]] = {}
        """The trees of ``masked`` that :meth:`align` renamed objects of, as built (for :attr:`dropped`)."""
        self.dropped: dict[tuple[tuple[Path, str], ...], dict[str, Obj]] = {}
        """Trees :meth:`forget` took out of ``masked``, as built (before :meth:`align`): asked
        for again, each is aligned again (as a new build of the same values would be) instead
        of built again."""

    def tree(self, comp: Component, values: dict[str, Any], seen: set[str] | None = None, paths: set[Path] | None = None) -> dict[str, Obj] | None:
        try:
            tree = build_tree(comp, values, self.cluster, self.seen if seen is None else seen, self.context.get(comp.name), paths)
        except Exception as exc:  # a builder fed placeholders may fail: that knob is not transparent
            self.failure = set(SENTINEL.findall(str(exc)))
            return None
        if self.keyed and _joins_keys(values, self.keyed):
            _canonical_joins(tree)
        # a builder that turned a placeholder collection into text (str() of a list) made
        # something no template can say: as good as a failed build. An object equal to the
        # base build's (which has none) is not walked again.
        like = self.raw_base
        if like is None:
            text = _text_of_block(tree)
        else:
            text = any(_text_of_block_beside(obj, like.get(oid, MISSING)) for oid, obj in tree.items())
        if text and self.derived_at:  # a list's text in a computed leaf (a config file) is no template's
            text = _text_outside(list(tree.values()), self.derived_at)
        if text:
            self.failure = _block_texts(tree)
            return None
        return tree

    def masked_tree(
        self,
        comp: Component,
        base_values: dict[str, Any],
        changes: list[tuple[Knob, Any]],
        reads: set[str] | None = None,
        paths: set[Path] | None = None,
    ) -> dict[str, Obj] | None:
        """``mask(tree(comp, values))`` where ``values`` is ``base_values`` with ``changes`` set
        one after the other (a pool set to False is removed, to True left as it is), memoised
        on the changes that change something when they are at most one.

        A component's build is a pure function of the values' content, so the variants of one
        knob and the combinations of a group (which repeat the base and every single flip)
        build each distinct set of values once. The tree is shared: treat it as read-only.
        ``reads`` and ``paths`` (on the first call for given changes) collect the sections and
        the keys in them that build read.
        """
        vals, memo = self._apply(base_values, changes)
        if len(memo) > 1:  # a combination of a group (or a pair): built once
            if memo not in self.kept:
                self.kept[memo] = self.align(self.mask(self.tree(comp, vals)))
            return self.kept[memo]
        if memo in self.dropped:  # built before, as these values build: aligned as now
            assert reads is None, "the reads of a memoised build are not known"
            self.masked[memo] = self.align(self.dropped.pop(memo))
        if memo not in self.masked:
            self.failure = set()
            raw = self.mask(self.tree(comp, vals, reads, paths))
            found = self.masked[memo] = self.align(raw)
            if found is None:
                self.failed[memo] = self.failure
            elif found is not raw and raw is not None:
                self.unaligned[memo] = raw
            self.seen |= reads or set()
        else:
            assert reads is None, "the reads of a memoised build are not known"
        return self.masked[memo]

    def forget(self, base_values: dict[str, Any], changes: list[tuple[Knob, Any]]) -> None:
        """Take a memoised tree that changes nothing out of ``masked`` while :attr:`added`
        may still grow: asked for again (a group with the release varies every release), it is
        aligned again from :attr:`dropped`, as a new build would be, not built again."""
        memo = self._apply(base_values, changes)[1]
        tree = self.masked.pop(memo, None)
        if tree is not None:
            self.dropped[memo] = self.unaligned.pop(memo, tree)

    def _reset_memo(self, base: dict[str, Obj] | None) -> None:
        """Forget every memoised tree (the base values changed): only the base's is kept."""
        self.masked = {} if base is None else {(): base}
        self.unaligned, self.dropped, self.kept = {}, {}, {}

    @staticmethod
    def _apply(base_values: dict[str, Any], changes: list[tuple[Knob, Any]]) -> tuple[dict[str, Any], tuple[tuple[Path, str], ...]]:
        """The values ``masked_tree`` builds and its memo key."""
        vals = base_values
        key: list[tuple[Path, str]] = []
        if len(changes) > 1:  # a keyed map's key after the map (its emptiness, "set"): set into it
            heads = {knob.path for knob, _ in changes if knob.kind == "set"}
            if heads:
                changes = sorted(changes, key=lambda change: change[0].path[:-1] in heads)
        for knob, setting in changes:
            if knob.kind == "pool":
                if setting is not False:
                    continue  # a pool switched on is the pool as it is
                new: Any = REMOVE
            else:
                new = setting
                if new is REMOVE and not _has(vals, knob.path):
                    continue  # a key the map lacks, left out
                if _has(vals, knob.path) and repr(get(vals, knob.path)) == repr(new):
                    continue  # already that value (repr: True, 1 and 1.0 stay apart)
            vals = assign(vals, knob.path, new)
            key.append((knob.path, repr(new)))
        return vals, tuple(key)

    def enabling(self, comp: Component) -> tuple[dict[Path, Any], dict[str, Obj]] | None:
        """Structural values (fewest changes first) under which ``comp`` renders objects, and
        those objects (memoised, with the sections the tries read)."""
        key = (comp.name, len(self.structural))
        if key not in self.enabled_memo:
            seen, self.seen = self.seen, set()
            try:
                self.enabled_memo[key] = self._enabling(comp), self.seen
            finally:
                self.seen = seen
        found, reads = self.enabled_memo[key]
        self.seen |= reads
        return found

    def first_build(self, comp: Component) -> tuple[dict[str, Obj] | None, tuple[set[str], set[Path]]]:
        """The build of ``comp`` from the chart values themselves, with what it read (memoised):
        :meth:`_enabling` tries it first, and :func:`_pooled` and :func:`_ranged` ask for it
        (for the fleet's analysis and again for its pass without the pools' knobs)."""
        if comp.name not in self.first:
            reads: tuple[set[str], set[Path]] = (set(), set())
            self.first[comp.name] = self.tree(comp, self.values, *reads), reads
        return self.first[comp.name]

    def _enabling(self, comp: Component) -> tuple[dict[Path, Any], dict[str, Obj]] | None:
        start: dict[Path, Any] = {}
        if comp.key and isinstance(get(self.values, (comp.key, "enabled")), bool):
            start[(comp.key, "enabled")] = True
        singles: list[tuple[Knob, Any]] = []
        # the release last: a base on a release that prunes keys shows none of their variants
        # (flipped alone there, they change nothing), so another way in is taken first
        for k in sorted(self.structural, key=lambda k: k.path == RELEASE):
            if k.kind != "pool":
                current = get(self.values, k.path)
                singles += [(k, v) for v in k.domain if v != current]
        # What each build read: a try that changes a value its smaller try never read goes
        # exactly as that try went (to nothing), so it is not built. A pair of two singles
        # neither of which was built is never built (each changes what the first try never
        # read): only pairs with a built single are looked at, in the order of all pairs.
        first: tuple[set[str], set[Path]] | None = None
        read_by: dict[tuple[Path, str], tuple[set[str], set[Path]]] = {}
        built: list[int] = []

        def tries() -> Iterator[tuple[int, tuple[tuple[Knob, Any], ...]]]:
            yield -1, ()
            yield from ((i, (one,)) for i, one in enumerate(singles))
            found = sorted({(min(b, o), max(b, o)) for b in built for o in range(len(singles)) if o != b})
            yield from ((-1, (singles[i], singles[j])) for i, j in found)

        for index, combo in tries():
            assignment = dict(start)
            for knob, value in combo:
                assignment[knob.path] = value
            if len(assignment) != len(start) + len(combo):
                continue
            keys = [(knob.path, repr(value)) for knob, value in combo]
            if len(combo) == 1 and first is not None and not _may_read(*first, combo[0][0].path):
                read_by[keys[0]] = first
                continue
            if len(combo) == 2 and any(
                keys[i] in read_by and not _may_read(*read_by[keys[i]], combo[1 - i][0].path) for i in (0, 1)
            ):
                continue
            values = self.values
            for path, value in assignment.items():
                values = assign(values, path, value)
            if all(_has(self.values, path) and get(self.values, path) is value for path, value in assignment.items()):
                found, reads = self.first_build(comp)  # the chart values as they are
            else:
                reads = (set(), set())
                found = self.tree(comp, values, *reads)
            self.seen |= reads[0]
            if not combo:
                first = reads
            elif len(combo) == 1:
                read_by[keys[0]] = reads
                built.append(index)
            if found:
                return assignment, found
        return None

    def analyse(self, comp: Component) -> Template | None:
        self.raw_base = None
        self.seen = set()
        self._reset_memo(None)
        self.failed = {}
        self.as_base = (None, {})
        self.off = {}
        self.captured = None
        self.base_ids = None
        self.presence = {}
        self.presence_on = {}
        self.derived_at, self.derived, self.generated = [], [], {}
        self.unbuilt = set()
        self.added = set()
        self.pairs = []
        self.beside = []
        enabled = self.enabling(comp)
        if enabled is None:
            return None
        enabling, real = enabled
        values = self.values
        for path, value in enabling.items():
            values = assign(values, path, value)
        self.derived_at = self._find_derived(comp, values, real)
        good, bad = self._split(comp, values, real)
        values, compared = self._compared_defaults(comp, values, good)
        if compared:  # varied as `default` knobs (below), from the default, in the knobs' order
            order = {k.path: i for i, k in enumerate(self.transparent)}
            good = [k for k in good if k not in compared]
            bad = sorted([*bad, *compared], key=lambda k: order[k.path])
        sent = Sentinels()
        base_values = values
        for knob in good:  # numbered as in _split's last build (the base tree kept from it)
            base_values = assign(base_values, knob.path, sent.make(knob, get(values, knob.path)))
        if self.pool_key:  # the pool's name stands for itself: where it lands, the template says $name
            name_path = (*POOLS, self.pool_key, NAME_KEY)
            sent.knob[self.pool_key], sent.value[self.pool_key], sent.by_path[name_path] = name_path, self.pool_key, self.pool_key
        real_ids = self.real_ids = list(real)
        self.derived = [(self._key(comp, real_ids[i], p), real_ids[i], p) for i, p in self.derived_at]
        self.generated = {key: generated_value(tget(real[oid], p)) for key, oid, p in self.derived}
        structural = list(self.structural)
        fixed: set[Path] = set()
        for knob in bad:
            if is_empty(get(values, knob.path)):
                structural.append(Knob(knob.path, "set", (False, True)))
            elif knob.kind == "scalar" and knob.domain and get(values, knob.path) == knob.domain[0]:
                # at its schema default, compared with it (a host path "/" that adds nothing):
                # the default as it is, any other value as a placeholder (its `else`)
                structural.append(Knob(knob.path, "default", knob.domain))
            else:
                fixed.add(knob.path)
        self.base_reads, self.base_paths = set(), set()
        self.base_direct = None
        self.base_gated = False
        if self.captured is not None:  # _split built the base values last
            tree, reads, paths = self.captured
            self.base_reads |= reads
            self.base_paths |= paths
            self.raw_base = clone(tree)
            base = self.masked[()] = self.mask(tree)
        else:
            reads, paths = _reads()
            raw = self.tree(comp, base_values, reads, paths)
            self.raw_base = clone(raw) if raw is not None else None
            base = self.masked[()] = self.align(self.mask(raw))
            self.seen |= reads
            self.base_reads |= reads
            self.base_paths |= paths
        if isinstance(reads, Recorded) and isinstance(paths, Recorded):
            self.base_direct = (reads.direct - {POOLS_READ}, paths.direct)
            self.base_gated = paths.gated
        self.base_pools = None
        self.base_attrs = None
        assert base is not None
        self.base_ids = list(base)
        structural += self._keys(comp, base_values, fixed)
        self._precedence(comp, base_values, base, sent)
        fixed |= self._computed_only(base, sent)
        tpl = self._variants(comp, values, base_values, base, structural, sent, fixed, good)
        tpl.derived = self.derived
        tpl.generated = self.generated
        return tpl

    def _compared_defaults(self, comp: Component, values: dict[str, Any], good: list[Knob]) -> tuple[dict[str, Any], list[Knob]]:
        """The knobs of ``good`` the fleet sets away from their schema default that the builder
        compares with that default, and ``values`` with the default in their place.

        A host path the fleet sets (GKE: ``hostPaths.driverInstallDir: /home/kubernetes/bin/nvidia``)
        passes the put-back check, since its placeholder takes the fleet's side of the comparison
        with the default (only another directory than ``/run/nvidia/driver`` adds the
        validators' ``DRIVER_INSTALL_DIR``): the default's side is not seen. One build with
        them at their default tells: where it is not the base build with the default put back
        in the placeholder's place, the builder compares. Those knobs are then analysed as if
        the fleet left them at the default (a ``default`` knob: the base with the default, the
        other value a placeholder), and the fleet's own value renders through the placeholder's
        side, which the put-back check has shown. No build when the fleet sets none that this
        component reads."""
        captured = self.captured
        if captured is None:
            cands = [k for k in good if k.path[0] in self.seen]
        else:
            reads, paths = captured[1], captured[2]
            if isinstance(reads, Recorded) and isinstance(paths, Recorded):
                reads, paths = reads.direct - {POOLS_READ}, paths.direct
            cands = [k for k in good if _may_read(reads, paths, k.path)]
        cands = [k for k in cands if k.kind == "scalar" and k.domain and get(values, k.path) != k.domain[0]]
        if not cands:
            return values, []
        ref_sent = Sentinels()
        ref_values = values
        for knob in good:
            ref_values = assign(ref_values, knob.path, ref_sent.make(knob, get(values, knob.path)))
        ref = captured[0] if captured is not None else self.tree(comp, ref_values)
        if ref is None:
            return values, []

        def compares(group: list[Knob]) -> bool:
            sent = Sentinels()
            vals = values
            for knob in good:
                if knob in group:
                    vals = assign(vals, knob.path, knob.domain[0])
                else:
                    vals = assign(vals, knob.path, sent.make(knob, get(values, knob.path)))
            tree = self._captured_tree(comp, vals)
            if tree is None or len(tree) != len(ref):
                return tree is not None
            want = dict(ref_sent.value)
            for knob in group:
                ref_sent.value[ref_sent.by_path[knob.path]] = knob.domain[0]
            try:
                built = [sent.back(obj) for obj in tree.values()]
                expect = [ref_sent.back(obj) for obj in ref.values()]
            finally:
                ref_sent.value = want
            for i, p in self.derived_at:  # computed leaves (digests) are not compared
                blank(built[i], p)
                blank(expect[i], p)
            return built != expect

        found = cands if compares(cands) else []
        if len(found) > 1:  # which of them: each alone (the fleet sets few such paths)
            found = [k for k in cands if compares([k])]
            self.captured = None  # the base build is made again, with just these at the default
        if not found:
            self.captured = captured
            return values, []
        for knob in found:
            values = assign(values, knob.path, knob.domain[0])
        return values, found

    def _precedence(self, comp: Component, base_values: dict[str, Any], base: dict[str, Obj], sent: Sentinels) -> None:
        """Which of the values maps merged into one map wins a key they share (``sent.order``):
        one build with a shared key in each (``{sid: sid, PROBE: sid}``) tells which sentinel
        the key keeps (a pool's ``nodeSelector`` gives way to the OS labels, a pool's
        ``resources`` win over the fleet's). A map only a variant has keeps its order."""
        maps = [(p, ids) for p, ids in _merged_maps(base) if all(i in sent.knob for i in ids)]
        if not maps:
            return
        vals = base_values
        for sid in sorted({i for _, ids in maps for i in ids}):
            vals = assign(vals, sent.knob[sid], {sid: sid, PROBE: sid})
        tree = self.align(self.mask(self.tree(comp, vals)))
        for path, ids in maps:
            found = tget(tree, path) if tree is not None else MISSING
            winner = found.get(PROBE) if isinstance(found, dict) else None
            if winner == ids[0] and len(ids) == 2:
                sent.order[tuple(ids)] = (ids[1], ids[0])

    def _keys(self, comp: Component, base_values: dict[str, Any], fixed: set[Path]) -> list[Knob]:
        """A boolean knob for each key a build looks up in a keyed map (:attr:`Knob.keyed`) that
        the base build read, whether the map has that key or not: one build with the map as a
        :class:`KeyProbe` (its keys and one more, so that it is not empty), which records them.
        A key the map lacks is false, and left out of the values (:meth:`_setting`)."""
        out: list[Knob] = []
        for path in self.keyed:
            if path in fixed or not _may_read(self.base_reads, self.base_paths, path):
                continue
            current = get(base_values, path)
            probe = KeyProbe({**(current if isinstance(current, dict) else {}), PROBE: True})
            try:
                build_tree(comp, assign(base_values, path, probe), self.cluster, None, self.context.get(comp.name))
            except Exception:  # pragma: no cover - the base build with a map there passed
                continue
            out += [Knob((*path, key), "bool", (True, False)) for key in sorted(probe.asked) if key != PROBE and not _has_sid(key)]
        return out

    def _computed_only(self, base: dict[str, Obj], sent: Sentinels) -> set[Path]:
        """The knobs whose placeholders the base build put only into computed leaves (the NFD
        config files made from lists): the template prints those leaves from ``generated``, so
        ``--set`` of such a knob does not reach it: build-time (each cluster's values file
        carries its own computed value)."""
        raw = self.raw_base
        if raw is None or not self.derived_at:
            return set()
        objs = list(raw.values())
        inside = {sid for i, p in self.derived_at if i < len(objs) for sid in SENTINEL.findall(repr(tget(objs[i], p)))}
        if not inside:
            return set()
        printed = set(SENTINEL.findall(repr(base)))
        return {sent.knob[sid] for sid in inside - printed if sid in sent.knob}

    def _key(self, comp: Component, oid: str, path: TPath) -> str:
        parts = [e[1] if isinstance(e, tuple) else e for e in path]
        if comp.terms == oid and path == TERMS:
            return f"{comp.name}/nodeSelectorTerms"
        if self.pool_key and self.pool_key in oid:  # one per pool: keyed by the pool's name
            if parts[:3] == ["spec", "template", "spec"]:
                parts = parts[3:]
            return "/".join([comp.name, self.pool_key, *parts])
        return "/".join([comp.name, oid, *parts])

    def _find_derived(self, comp: Component, values: dict[str, Any], real: dict[str, Obj]) -> list[tuple[int, TPath]]:
        """Hash-like string leaves (digests, checksums): computed from other fields, not set by a
        knob; and the leaves the component declares computed from its pool list."""
        del values
        out: list[tuple[int, TPath]] = []
        for i, (oid, obj) in enumerate(real.items()):
            out += [(i, p) for p in _hash_leaves(obj, ())]
            out += [(i, p) for cid, p in comp.computed if cid == oid and isinstance(tget(obj, p), str) and (i, p) not in out]
            if comp.terms == oid and isinstance(tget(obj, TERMS), list):
                out.append((i, TERMS))
        return out

    def align(self, tree: dict[str, Obj] | None) -> dict[str, Obj] | None:
        """``tree`` with each object that a variant renamed keyed as the base object it stands for.

        A knob that changes an object's name (a DaemonSet named after its driver type or kernel)
        changes a field, not the object: the base objects missing from ``tree`` are paired, kind
        by kind and in order, with the objects only ``tree`` has, so the difference is the
        ``metadata.name`` field (and whatever else differs) rather than a second whole object.
        """
        ref = self.base_ids
        if not tree or ref is None:
            return tree
        known = set(ref)
        extra = [oid for oid in tree if oid not in known and oid not in self.added]
        if not extra:
            return tree
        missing = [oid for oid in ref if oid not in tree]
        rename: dict[str, str] = {}
        for oid in extra:
            kind = oid.split("/", 1)[0]
            for gone in missing:
                if gone.split("/", 1)[0] == kind and gone not in rename.values():
                    rename[oid] = gone
                    break
        if not rename:
            return tree
        return {rename.get(oid, oid): obj for oid, obj in tree.items()}

    def mask(self, tree: dict[str, Obj] | None) -> dict[str, Obj] | None:
        """Computed leaves replaced by their ``Derived`` node, so digests never make variants."""
        if not tree or not self.derived:
            return tree
        ids = list(tree)
        for key, oid, p in self.derived:
            leaf = Derived(key, not isinstance(self.generated.get(key, ""), str))
            for tid in ids if oid not in tree else [oid]:
                parent = tget(tree[tid], p[:-1])
                last = p[-1]
                if isinstance(parent, dict) and isinstance(last, str) and last in parent:
                    parent[last] = leaf
                elif isinstance(parent, list) and isinstance(last, tuple):
                    for j, name in enumerate(_names(parent)):
                        if name == last[1]:
                            parent[j] = leaf
                if oid in tree:
                    break
        return tree

    def _captured_tree(self, comp: Component, values: dict[str, Any]) -> dict[str, Obj] | None:
        """``tree(comp, values)``, kept in ``captured`` with what it read (it may be the base build)."""
        reads = _reads()
        tree = self.tree(comp, values, *reads)
        self.seen |= reads[0]
        self.captured = None if tree is None else (tree, *reads)
        return tree

    def _split(self, comp: Component, values: dict[str, Any], real: dict[str, Obj]) -> tuple[list[Knob], list[Knob]]:
        """Transparent knobs that reproduce ``real`` when put back, and the rest.

        The rest is found from what a failing build shows: a knob whose placeholder its
        build read but left out of the objects (a condition, a parse), that sits where an
        object differs, or that its error or a stringified block names is tried alone (or,
        with many suspects, they are bisected among themselves); once the others pass
        together, that is the answer. Only when a failing build names no new suspect is the
        remainder bisected, as before.
        """
        ok = _Check(self, comp, values, real)
        candidates = [k for k in self.transparent if k.path[0] in self.seen]
        good, bad = self._guided(candidates, ok, [])
        self.known_bad.update(k.path for k in bad)
        return good, bad

    def _guided(self, candidates: list[Knob], ok: Any, bad: list[Knob]) -> tuple[list[Knob], list[Knob]]:
        """:meth:`_split`'s search: suspects first, bisection of the rest only when a failing
        build names no new suspect; ``bad`` (filled by :func:`_bisect`) kept in the candidates' order."""

        def bisect(group: list[Knob]) -> None:
            _bisect(group, ok, bad)

        if not SHORTCUTS:
            bisect(candidates)
            return self._settle(candidates, bad, ok)
        order = {k.path: i for i, k in enumerate(candidates)}
        tried: set[Path] = set()
        passed: list[Knob] = []
        emptied = False
        # what broke other components' builds: a knob an error named (a parse) is tried first;
        # the others only when a failing build names nothing new (a failing build names the
        # knobs it mangles, holds as text or read and left out, so these are mostly found so)
        hints = {p for p in self.known_bad if p in order and p in self.raised}
        later = {p for p in self.known_bad if p in order} - hints
        while True:
            good = [k for k in candidates if k not in bad]
            if hints:  # suspects first: bisected among themselves (most of them are bad)
                suspects = [k for k in good if k.path in hints and k.path not in tried]
                tried.update(k.path for k in suspects)
                if len(suspects) <= FEW:
                    # those that passed alone for an earlier component (the device plugin's
                    # image for GFD), together first: passing, they pass (as bisection takes it)
                    known = [k for k in suspects if k.path in self.passed_alone]
                    fine = known if len(known) > 1 and ok(known) else []
                    failed = [k for k in suspects if k not in fine and not ok([k])]
                    bad += failed
                    passed += [k for k in suspects if k not in failed]
                    self.passed_alone.update(k.path for k in suspects if k not in failed)
                else:
                    bisect(suspects)
                bad.sort(key=lambda k: order[k.path])
                good = [k for k in candidates if k not in bad]
            hints = set()
            if ok(good, capture=True, hints=hints):
                return good, bad
            if self.pool_key and not hints - tried and passed:
                # suspects fine alone: one may break the build only with an empty pool fact
                # (a ConfigMap's name and the OS's directory for it), as _settle would find
                paired = self._empty_pairs(passed, good, ok, order)
                passed = []
                if paired:
                    bad += paired
                    bad.sort(key=lambda k: order[k.path])
                    hints = set()
                    continue
            if not hints - tried and later:
                hints, later = later, set()
            if not hints - tried and not emptied:
                # nothing to go on: an empty value the builder read comes first (a placeholder
                # is not empty, so `if x:` took the other way)
                emptied = True
                hints = {k.path for k in good if k.path not in tried and is_empty(get(ok.values, k.path)) and self._read_itself(k.path)}
            if not hints - tried:  # nothing more to go on: bisect what is left
                self.captured = None
                bisect(good)
                bad.sort(key=lambda k: order[k.path])
                return self._settle(candidates, bad, ok)

    def _probe(self, comp: Component, values: dict[str, Any], sent: Sentinels, hints: set[Path]) -> dict[str, Obj] | None:
        """``_captured_tree``, and on a failed build the knobs whose placeholder its error names.

        A tree with a block turned into text is returned too, for :meth:`_suspects`, but not
        captured (``captured`` is None after it)."""
        reads = _reads()
        self.captured = None
        try:
            tree = build_tree(comp, values, self.cluster, reads[0], self.context.get(comp.name), reads[1])
        except Exception as exc:  # a builder fed placeholders may fail: its message may say which
            named = {sent.knob[sid] for sid in SENTINEL.findall(str(exc)) if sid in sent.knob}
            hints.update(named)
            self.raised.update(named)
            return None
        finally:
            self.seen |= reads[0]
        if self.keyed and _joins_keys(values, self.keyed):
            _canonical_joins(tree)
        self.probe_reads = reads
        if _text_of_block(tree):  # as good as a failed build: returned for its hints only
            hints.update(sent.knob[sid] for sid in _block_texts(tree) if sid in sent.knob)
            return tree
        self.captured = (tree, *reads)
        return tree

    def _read_itself(self, path: Path) -> bool:
        """Could the builder of the last probe have read ``path`` itself (not by resolving pools)?"""
        seen, paths = self.probe_reads
        if isinstance(seen, Recorded) and isinstance(paths, Recorded):
            seen, paths = seen.direct - {POOLS_READ}, paths.direct
        return _may_read(seen, paths, path)

    def _suspects(self, tree: dict[str, Obj], sent: Sentinels, hints: set[Path] | None) -> bool:
        """False, after adding to ``hints`` the knobs whose placeholder the build ``tree`` read
        but holds nowhere (kept in a condition, parsed, hashed)."""
        if hints is None:
            return False
        self.captured = None
        present = set(SENTINEL.findall(repr(tree)))
        # what the builder read itself: resolving the pools reads whole sections
        hints.update(path for sid, path in sent.knob.items() if sid not in present and self._read_itself(path))
        return False

    def _settle(self, candidates: list[Knob], bad: list[Knob], ok: Any) -> tuple[list[Knob], list[Knob]]:
        """(good, bad) once the good knobs pass ``ok`` together. In a pool body, knobs that pass
        alone but not together are found one by one; elsewhere all are then taken as fixed."""
        for _ in range(8 if self.pool_key else 1):
            good = [k for k in candidates if k not in bad]
            # the values of this last check are the template's base values (same sentinels)
            if ok(good, capture=True):
                return good, bad
            self.captured = None
            if self.pool_key:
                one = _interaction(good, ok)
                bad.append(one)
                other = self._partner(good, one, ok)
                if other is not None:  # in the candidates' order, as the suspects' search leaves them
                    bad.append(other)
                    order = {k.path: i for i, k in enumerate(candidates)}
                    bad.sort(key=lambda k: order[k.path])
                    self.pairs.sort(key=lambda pair: order[pair[1]])
        return [], candidates

    def _empty_pairs(self, passed: list[Knob], good: list[Knob], ok: Any, order: dict[Path, int]) -> list[Knob]:
        """The pairs of a suspect of ``passed`` (each passed alone) and an empty pool fact of
        ``good`` read as :data:`OPTIONAL_FACTS` that fail together, both empty (what
        :meth:`_partner` finds by bisection): each suspect with the first fact that fails with it."""
        facts = [k for k in good if _optional_fact(k) and is_empty(get(ok.values, k.path))]
        facts.sort(key=lambda k: list(OPTIONAL_FACTS).index(k.path[4]))
        found: list[Knob] = []
        for one in [k for k in passed if is_empty(get(ok.values, k.path)) and k not in facts]:
            for fact in facts:
                if fact not in found and not ok([one, fact]):
                    self.pairs.append((one.path, fact.path))
                    found += [one, fact]
                    break
        self.pairs.sort(key=lambda pair: order[pair[1]])
        return found

    def _partner(self, good: list[Knob], one: Knob, ok: Any) -> Knob | None:
        """The knob before ``one`` in ``good`` whose placeholder breaks the build together with
        ``one``'s (found as :func:`_interaction` found ``one``), when both values are empty and
        one of them is a pool fact read as empty (:data:`OPTIONAL_FACTS`): the builder adds
        something only when both are set (``if repo and pool.repo_dir``), so both are "set"
        knobs, varied together (:attr:`pairs`). None otherwise: fixing one of them is enough
        (two empty pull-secret lists the builder merges stay one fixed, one a block)."""
        prefix = good[: good.index(one)]
        if not is_empty(get(ok.values, one.path)) or not (_optional_fact(one) or any(_optional_fact(k) for k in prefix)):
            return None
        lo, hi = 1, len(prefix)  # ok(prefix[:lo - 1] + [one]) holds; ok(prefix[:hi] + [one]) fails
        if not prefix or not ok([one]):
            return None
        while lo < hi:
            mid = (lo + hi) // 2
            if ok([*prefix[:mid], one]):
                lo = mid + 1
            else:
                hi = mid
        other = prefix[lo - 1]
        if not is_empty(get(ok.values, other.path)) or not any(_optional_fact(k) for k in (one, other)) or ok([other, one]):
            return None
        self.pairs.append((other.path, one.path))
        return other

    def _alt_values(self, knob: Knob, current: Any, sent: Sentinels, values: dict[str, Any]) -> list[tuple[Any, Any]]:
        """(label, value to set) for every other value of a structural knob."""
        out: list[tuple[Any, Any]] = []
        if knob.kind == "default":
            return [(True, sent.make(Knob(knob.path, "scalar"), f"{knob.domain[0]}x"))]
        if knob.kind == "set":
            base = get(values, knob.path)
            proto: Any = "x" if isinstance(base, str) else ([] if isinstance(base, list) else ({} if isinstance(base, dict) else 1))
            if isinstance(proto, (str, int)):
                return [(True, sent.make(Knob(knob.path, "scalar"), proto))]
            return [(True, sent.make(Knob(knob.path, "block"), proto))]
        if knob.kind == "pool":
            return [(False, False)]
        for value in knob.domain:
            if value != current:
                out.append((value, value))
        return out

    def _variants(
        self,
        comp: Component,
        values: dict[str, Any],
        base_values: dict[str, Any],
        base: dict[str, Obj],
        structural: list[Knob],
        sent: Sentinels,
        fixed: set[Path],
        good: list[Knob],
    ) -> Template:
        gate: list[Conj] = []
        gate_atoms: list[Cond] = []
        refs: dict[TPath, list[Path]] = {}
        touched: dict[Path, list[TPath]] = {}
        on_values: dict[Path, list[tuple[Any, Any]]] = {}
        knob_of: dict[Path, Knob] = {}
        done: set[Path] = set()
        while True:  # a variant may read sections the base did not: their knobs come next
            todo = [k for k in structural if k.path not in done and k.path[0] in self.seen]
            if not todo:
                break
            for knob in todo:
                done.add(knob.path)
                alts = self._alt_values(knob, self._current(knob, values), sent, values)
                reverted = self._culprits(comp, knob, alts, values, base_values, good, sent) if self._base_read(knob) else []
                for k in reverted:  # their placeholders broke a variant: real values, fixed at build time
                    base_values = assign(base_values, k.path, get(values, k.path))
                    good.remove(k)
                    fixed.add(k.path)
                if reverted:
                    self._reset_memo(base)
                self._vary(comp, knob, alts, values, base_values, base, gate_atoms, refs, touched, on_values, knob_of)
        self._pair_nameless(comp, base_values, base, touched, on_values, knob_of)
        expects: dict[TPath, Any] = {}  # where a reference goes, when the base has no such field
        self._pair_siblings(comp, structural, values, base_values, touched, on_values, knob_of, refs, expects)
        self._pair_empty(comp, values, base_values, base, sent, touched, on_values, knob_of)
        if self.pool_key:
            self._pair_beside(comp, base_values, base, touched, on_values, knob_of)
        for cond in gate_atoms:
            gate = list(_and(tuple(gate) or ((),), cond))
        _shared_refs(refs, touched, on_values)
        objects: dict[str, Any] = clone(base)  # JSON data and immutable Derived leaves
        release = self._release()
        every = [(r, r) for r in (get(values, RELEASE), *(r for r in release.domain if r != get(values, RELEASE)))] if release else []
        groups = _groups(touched)
        self.item_order = self._item_order(comp, groups, touched, on_values, knob_of, base_values, base)
        for group, own in _with_release(groups, on_values):
            # with a key a release prunes, every release: one that changes nothing alone may with the key
            settings = on_values if own is group else {**on_values, RELEASE: every}
            self._apply_group(comp, group, touched, settings, knob_of, base_values, base, objects, own)
        for tpath, (kpath,) in refs.items():  # also inside the variants just made (a boolean unquoted)
            expect = expects[tpath] if tpath in expects else tget(base, tpath)
            text = knob_of[kpath].kind == "bool" and isinstance(expect, str)
            _put_ref(objects, tpath, Ref(kpath, knob_of[kpath].kind != "bool" or text, text), expect)
        for oid, kpaths in self.presence.items():
            cond = self._presence(comp, oid, kpaths, knob_of, base_values)
            if cond != ((),):
                objects[oid] = Variant([(cond, objects[oid]), (((),), MISSING)])
        converted = {name: _convert(node, sent) for name, node in objects.items()}
        # a knob one of whose values could not be built with placeholders has no variant for
        # that value: `--set` of it would not reach the template, so it is build-time, said so
        booleans = frozenset(p for p in touched if p in knob_of and knob_of[p].kind == "bool")
        return Template(comp.name, tuple(gate), converted, fixed | self.unbuilt, {k.path for k in good} | set(touched), booleans=booleans)

    def _item_order(
        self,
        comp: Component,
        groups: list[list[Path]],
        touched: dict[Path, list[TPath]],
        on_values: dict[Path, list[tuple[Any, Any]]],
        knob_of: dict[Path, Knob],
        base_values: dict[str, Any],
        base: dict[str, Obj],
    ) -> dict[TPath, list[list[str | None]]]:
        """For each list that two knobs add new items to after one item of the base, its names in
        one build with those knobs set (each to the value that adds its item): the builder's
        order of the items, which :func:`tset` keeps (``DRIVER_INSTALL_DIR`` before ``HOST_ROOT`` in a
        validator's env, where ``hostPaths.driverInstallDir`` and ``rootFS`` each add one)."""
        adders: dict[tuple[TPath, str | None], dict[Path, Any]] = {}
        pairs: dict[Path, tuple[Path, ...]] = {k: pair for pair in self.pairs for k in pair if all(j in on_values and len(on_values[j]) == 2 for j in pair)}
        for group in groups:
            for k in group:
                for tp in touched[k]:
                    if len(tp) < 2 or not isinstance(tp[-1], tuple) or tget(base, tp) is not MISSING:
                        continue
                    for _, setting in on_values.get(k, ())[1:]:  # the value that adds it (built: memoised)
                        # a pair adds its items only with both set (:meth:`_pair_empty`)
                        adding = [(knob_of[j], on_values[j][1][1]) for j in pairs[k]] if k in pairs else [(knob_of[k], setting)]
                        tree = self.masked_tree(comp, base_values, adding)
                        found = tget(tree, tp[:-1]) if tree else MISSING
                        if isinstance(found, list) and tp[-1][1] in (names := _names(found)):
                            there = _names(base_list) if isinstance(base_list := tget(base, tp[:-1]), list) else []
                            pred = next((n for n in reversed(names[: names.index(tp[-1][1])]) if n in there), None)
                            for j, st in adding:
                                adders.setdefault((tp[:-1], pred), {}).setdefault(j.path, st)
                            break
        out: dict[TPath, list[list[str | None]]] = {}
        built: dict[tuple[Path, ...], dict[str, Obj] | None] = {}
        for (lpath, _), by_knob in adders.items():
            if len({pairs.get(k, (k,)) for k in by_knob}) < 2:  # items of one knob (or pair) only after this predecessor: their order is known
                continue
            changes = sorted(by_knob.items())
            key = tuple(k for k, _ in changes)
            if key not in built:
                built[key] = self.masked_tree(comp, base_values, [(knob_of[k], st) for k, st in changes])
            found = tget(built[key], lpath) if built[key] else MISSING
            if isinstance(found, list):
                out.setdefault(lpath, []).append(_names(found))
        return out

    def _pair_siblings(
        self,
        comp: Component,
        structural: list[Knob],
        values: dict[str, Any],
        base_values: dict[str, Any],
        touched: dict[Path, list[TPath]],
        on_values: dict[Path, list[tuple[Any, Any]]],
        knob_of: dict[Path, Knob],
        refs: dict[TPath, list[Path]],
        expects: dict[TPath, Any],
    ) -> None:
        """A switch that changes nothing alone may matter once a sibling switch is on (the driver
        manager's ``DRAIN_USE_FORCE`` reads ``drain.force`` only with ``drain.enable``): each
        boolean knob that touched nothing is tried with each touched boolean sibling flipped, and
        where that changes the objects both are varied together. So is an enum the base build
        never read (the GDS sidecar's ``gds.imagePullPolicy``, read only with ``gds.enabled``):
        where its value itself is the field that changes, for every other value, the field is a
        reference (``refs``, put where the sibling's variant holds ``expects``), as :meth:`_vary`
        makes it for an enum the base reads."""
        unread = [k for k in structural if k.kind == "enum" and not _read_in(self.base_reads, self.base_paths, k.path)]
        for b in [k for k in structural if k.path not in touched and (k.kind == "bool" or k in unread)]:
            current = self._current(b, values)
            # a value that switches the component off (its gate) is not tried: the chart renders
            # nothing of it with that value, whatever the sibling says
            flips = [v for v in _labels(b) if v != current and not (SHORTCUTS and v in self.off.get(b.path, ()))]
            if not flips:
                continue
            for a in [p for p in list(touched) if p[:-1] == b.path[:-1] and p != b.path and knob_of[p].kind == "bool" and p not in self.presence_on]:
                for _, sa in on_values[a][1:]:
                    alone = self.masked_tree(comp, base_values, [(knob_of[a], sa)])
                    if b.kind == "enum" and alone and self._sibling_refs(comp, b, current, flips, knob_of[a], sa, alone, base_values, refs, expects):
                        knob_of[b.path] = b
                        on_values.setdefault(b.path, [(current, self._setting(b, current, values))])
                        continue
                    for vb in flips:
                        both = self.masked_tree(comp, base_values, [(knob_of[a], sa), (b, vb)])
                        found = [] if not alone or not both or set(alone) != set(both) else diff(alone, both)
                        if found and all(len(f) > 1 for f in found + touched[a]):  # fields, not whole objects
                            knob_of[b.path] = b
                            on = on_values.setdefault(b.path, [(current, self._setting(b, current, values))])
                            if all(label != vb for label, _ in on):
                                on.append((vb, vb))
                            touched[b.path] = [*touched.get(b.path, []), *found]
                            touched[a] = [*touched[a], *found]

    def _sibling_refs(
        self,
        comp: Component,
        b: Knob,
        current: Any,
        flips: list[Any],
        a: Knob,
        sa: Any,
        alone: dict[str, Obj],
        base_values: dict[str, Any],
        refs: dict[TPath, list[Path]],
        expects: dict[TPath, Any],
    ) -> bool:
        """Is enum ``b``, with sibling ``a`` set to ``sa``, printed as it is where it changes the
        objects, for each of its other values ``flips``? Then those fields are its references."""
        like: set[TPath] | None = None
        for vb in flips:
            both = self.masked_tree(comp, base_values, [(a, sa), (b, vb)])
            if not both or set(alone) != set(both):
                return False
            found = diff(alone, both)
            here = {p for p in found if _same(tget(alone, p), current) and _same(tget(both, p), vb)}
            if not found or here != set(found) or (like is not None and here != like):
                return False
            like = here
        for tp in sorted(like or (), key=repr):
            refs.setdefault(tp, []).append(b.path)
            expects[tp] = current
        return bool(like)

    def _pair_empty(
        self,
        comp: Component,
        values: dict[str, Any],
        base_values: dict[str, Any],
        base: dict[str, Obj],
        sent: Sentinels,
        touched: dict[Path, list[TPath]],
        on_values: dict[Path, list[tuple[Any, Any]]],
        knob_of: dict[Path, Knob],
    ) -> None:
        """Each of :attr:`pairs` (two "set" knobs that change nothing alone) set together: where
        that changes fields of the objects, both are varied together (their product), so the
        template asks both (``{{- if and $pool.repoConfig.configMapName $pool.node.repoDir }}``)."""
        for pair in self.pairs:
            knobs = [knob_of.get(path) for path in pair]
            if any(k is None or k.kind != "set" or k.path in touched for k in knobs):
                continue
            changes = [(k, self._alt_values(k, False, sent, values)[0][1]) for k in knobs if k is not None]
            both = self.masked_tree(comp, base_values, changes)  # (asked again: _item_order, _pair_beside, _apply_group)
            found = diff(base, both) if both and set(both) == set(base) else []
            if not found or any(len(f) == 1 for f in found):  # fields, not whole objects
                continue
            for knob, setting in changes:
                touched[knob.path] = list(found)
                on_values[knob.path] = [(False, self._setting(knob, False, values)), (True, setting)]

    def _pair_beside(
        self,
        comp: Component,
        base_values: dict[str, Any],
        base: dict[str, Obj],
        touched: dict[Path, list[TPath]],
        on_values: dict[Path, list[tuple[Any, Any]]],
        knob_of: dict[Path, Knob],
    ) -> None:
        """A boolean switch that adds an item to a list of the base (``gds.enabled``: the GDS
        sidecar among the containers) built with each "set" or "default" knob, or pair of
        :attr:`pairs`, that changes a sibling of that item (the repository pair, the driver
        container's mounts): where that changes the new item too (the sidecar mounts the
        repository ConfigMap as well), those fields are the knobs' and the switch's, so the
        three vary in one group (:meth:`_alone_combos` builds them together) and the item,
        present where the switch says, holds a variant of its own at each of them
        (:meth:`_nested`). Without this the item is only ever built with those knobs at their
        base: a fleet with GDS off printed the sidecar without the repository mounts."""
        pairs: dict[Path, tuple[Path, ...]] = {k: pair for pair in self.pairs for k in pair}
        for a in [k for k in touched if knob_of[k].kind == "bool" and len(on_values.get(k, ())) == 2]:
            setting = on_values[a][1][1]
            alone = self.masked_tree(comp, base_values, [(knob_of[a], setting)])
            items = [p for p in touched[a] if len(p) > 1 and isinstance(p[-1], tuple) and isinstance(tget(base, p[:-1]), list) and tget(base, p) is MISSING]
            items = [p for p in items if alone and isinstance(tget(alone, p), dict)]
            if not items:
                continue
            cands: list[tuple[Path, ...]] = []
            for b in touched:
                if b == a or any(b in c for c in cands) or knob_of[b].kind not in ("set", "default") or len(on_values.get(b, ())) != 2:
                    continue
                if not any(_prefix(p[:-1], q) and len(q) > len(p) for p in items for q in touched[b]):
                    continue  # changes no sibling of the new items
                knobs = pairs.get(b, (b,))
                if all(k in on_values and len(on_values[k]) == 2 for k in knobs):
                    cands.append(knobs)
            if not alone or not cands:
                continue
            # all of them at once first: each field they change in the new item is the one a
            # knob changes in a sibling (the same mount, env variable or key), else each alone
            owners = self._beside_owners(comp, base_values, alone, items, [(knob_of[a], setting)], cands, touched, knob_of, on_values)
            if owners is None:
                owners = {}
                for knobs in cands:
                    changes = [(knob_of[a], setting), *((knob_of[k], on_values[k][1][1]) for k in knobs)]
                    both = self.masked_tree(comp, base_values, changes)
                    if both and set(both) == set(alone):
                        owners[knobs] = [q for q in diff(alone, both) if any(_prefix(p, q) and len(q) > len(p) for p in items)]
            for knobs, found in owners.items():
                if found:
                    self.beside.append((a, knobs))
                    for k in (a, *knobs):
                        touched[k] = [*touched[k], *found]

    def _beside_owners(
        self,
        comp: Component,
        base_values: dict[str, Any],
        alone: dict[str, Obj],
        items: list[TPath],
        switch: list[tuple[Knob, Any]],
        cands: list[tuple[Path, ...]],
        touched: dict[Path, list[TPath]],
        knob_of: dict[Path, Knob],
        on_values: dict[Path, list[tuple[Any, Any]]],
    ) -> dict[tuple[Path, ...], list[TPath]] | None:
        """:meth:`_pair_beside` in one build: the switch with every candidate set, each field
        that changes in the new items given to the candidates that change that field (the same
        path below the item) in a sibling; None when a field has no such candidate (or the
        build fails): then each candidate is built with the switch alone."""
        changes = [*switch, *((knob_of[k], on_values[k][1][1]) for knobs in cands for k in knobs)]
        both = self.masked_tree(comp, base_values, changes)
        if not both or set(both) != set(alone):
            return None
        owners: dict[tuple[Path, ...], list[TPath]] = {knobs: [] for knobs in cands}
        for q in diff(alone, both):
            item = next((p for p in items if _prefix(p, q) and len(q) > len(p)), None)
            if item is None:
                continue
            rest = q[len(item) :]
            mine = [
                knobs
                for knobs in cands
                if any(_prefix(item[:-1], t) and len(t) > len(item) and t[len(item) - 1] != item[-1] and (_prefix(rest, t[len(item) :]) or _prefix(t[len(item) :], rest)) for t in touched[knobs[0]])
            ]
            if not mine:
                return None
            for knobs in mine:
                owners[knobs].append(q)
        return owners

    def _pair_nameless(
        self,
        comp: Component,
        base_values: dict[str, Any],
        base: dict[str, Obj],
        touched: dict[Path, list[TPath]],
        on_values: dict[Path, list[tuple[Any, Any]]],
        knob_of: dict[Path, Knob],
    ) -> None:
        """A knob whose variant adds an object without a name (``devicePlugin.config.create``
        while ``config.name``, empty in the base, names the ConfigMap) is varied together with
        each knob that is empty in the base ("set") and names that object when set: the object
        is then the pair's, under both knobs, and the nameless one (no real render has it: the
        policy check refuses it) is dropped."""
        sets = [k for k in touched if knob_of[k].kind == "set"]
        for a in [k for k, ps in touched.items() if any(len(p) == 1 and str(p[0]).endswith("/") and p[0] not in base for p in ps)]:
            nameless = [p for p in touched[a] if len(p) == 1 and str(p[0]).endswith("/") and p[0] not in base]
            paired: list[TPath] = []
            for b in sets:
                if b == a:
                    continue
                for _, sa in on_values[a][1:]:
                    for _, sb in on_values[b][1:]:
                        alone = {oid for t in (self.masked_tree(comp, base_values, [(knob_of[a], sa)]), self.masked_tree(comp, base_values, [(knob_of[b], sb)])) for oid in t or {}}
                        tree = self.masked_tree(comp, base_values, [(knob_of[a], sa), (knob_of[b], sb)])
                        new = [(oid,) for oid in tree or {} if oid not in base and oid not in alone and not oid.endswith("/")]
                        if new:
                            paired += new
                            touched[b] = [*touched[b], *new]
            if paired:
                touched[a] = [p for p in touched[a] if p not in nameless] + paired

    def _vary(
        self,
        comp: Component,
        knob: Knob,
        alts: list[tuple[Any, Any]],
        values: dict[str, Any],
        base_values: dict[str, Any],
        base: dict[str, Obj],
        gate_atoms: list[Cond],
        refs: dict[TPath, list[Path]],
        touched: dict[Path, list[TPath]],
        on_values: dict[Path, list[tuple[Any, Any]]],
        knob_of: dict[Path, Knob],
    ) -> None:
        """Flip one structural knob through its other values ``alts`` and record what changes."""
        current = self._current(knob, values)
        knob_of[knob.path] = knob
        if not self._base_read(knob):
            # every variant is built from the base values with this one knob flipped: a build
            # that never read the knob's value goes exactly as the base build went
            return
        on = [(current, self._setting(knob, current, values))]
        paths: list[TPath] = []
        off: list[Any] = []
        per_alt: list[tuple[Any, dict[str, Obj], list[TPath]]] = []
        every = [on[0]]
        for label, setting in alts:
            if self._as_base(knob, setting, base_values):
                every.append((label, setting))  # as a build that changes nothing
                continue
            tree = self.masked_tree(comp, base_values, [(knob, setting)])
            if tree is None:
                self.unbuilt.add(knob.path)
                continue
            every.append((label, setting))
            if not tree:
                off.append(label)
                continue
            self.added.update(oid for oid in tree if oid not in base)
            found = self._not_gone(knob, base, tree, diff(base, tree), every)
            if found is None:
                continue
            if found:
                per_alt.append((label, tree, found))
                on.append((label, setting))
            else:  # only the settings in `on` are built again (by _apply_group)
                self.forget(base_values, [(knob, setting)])
        like = _value_like(base, current, per_alt) if knob.kind in ("enum", "bool") else set()
        if knob.kind == "default":  # where the default itself is printed, and any other value
            like = _value_like(base, knob.domain[0], [(st, tree, found) for (_, tree, found), (_, st) in zip(per_alt, on[1:], strict=True)])
        for tp in sorted(like, key=repr):
            refs.setdefault(tp, []).append(knob.path)
        per_alt = [(label, tree, [p for p in found if p not in like]) for label, tree, found in per_alt]
        for _, _, found in per_alt:
            paths += found
        knob_of[knob.path] = knob
        if off:
            self.off[knob.path] = off
            gate_atoms.append(self._cond(knob, [x for x in [current, *(label for label, _ in alts)] if x not in off]) + self._pruning(knob))
        if paths:
            touched[knob.path] = paths
        if paths or like:  # a reference another knob also changes becomes a variant again (_shared_refs)
            on_values[knob.path] = on

    def _not_gone(self, knob: Knob, base: dict[str, Obj], tree: dict[str, Obj], found: list[TPath], every: list[tuple[Any, Any]]) -> list[TPath] | None:
        """``found`` without the base objects this value leaves out (each gets a gate on that
        object alone); None when that was all."""
        gone = [p for p in found if len(p) == 1 and p[0] in base and p[0] not in tree]
        if not gone:
            return found
        for p in gone:
            kpaths = self.presence.setdefault(str(p[0]), [])
            if knob.path not in kpaths:
                kpaths.append(knob.path)
        self.presence_on[knob.path] = every  # filled in as the loop goes: every value is tried
        found = [p for p in found if p not in gone]
        return found or None

    def _culprits(
        self, comp: Component, knob: Knob, alts: list[tuple[Any, Any]], values: dict[str, Any], base_values: dict[str, Any], good: list[Knob], sent: Sentinels
    ) -> list[Knob]:
        """For the first value of ``alts`` that fails to build, the transparent knobs (of ``good``)
        to put back to their real values first (:meth:`_culprits_of`)."""
        # a value that builds as the base does (_as_base) is not built here either, as in _vary
        setting = next((st for _, st in alts if not self._as_base(knob, st, base_values) and self.masked_tree(comp, base_values, [(knob, st)]) is None), MISSING)
        if setting is MISSING:
            return []
        named = self.failed.get(self._apply(base_values, [(knob, setting)])[1], set())
        return self._culprits_of(comp, knob, setting, values, base_values, good, {k.path for k in good if sent.by_path.get(k.path) in named})

    def _culprits_of(
        self, comp: Component, knob: Knob, setting: Any, values: dict[str, Any], base_values: dict[str, Any], good: list[Knob], named: set[Path] | None = None
    ) -> list[Knob]:
        """The transparent knobs whose placeholders make ``knob = setting`` fail to build while
        the base build does not depend on them (the GDS sidecar turns an empty ``gds.args`` into
        its own script: a placeholder list there is text; a drain timeout only read with drain
        on is parsed), found by bisection; empty when putting them back does not help or would
        change the base. The knob's siblings (``gds.*`` for ``gds.enabled``) are tried first.

        ``named``: the knobs the failed build named (its error, a block turned to text). When
        they are siblings and the build passes with them put back, each is tried alone, as
        bisection would end (a knob the failed build did not name passes, as the build without
        the named ones shows), instead of bisecting the siblings."""
        unread = [k for k in good if k.path[: len(knob.path) - 1] == knob.path[:-1]]
        built: dict[tuple[Path, ...], bool] = {tuple(k.path for k in unread): False}  # the failed build

        def ok(keep: list[Knob]) -> bool:
            key = tuple(k.path for k in keep)
            if key not in built:
                vals = base_values
                for k in unread:
                    if k not in keep:
                        vals = assign(vals, k.path, get(values, k.path))
                built[key] = self.tree(comp, assign(vals, knob.path, setting)) is not None
            return built[key]

        hinted = [k for k in unread if k.path in (named or ())]
        if SHORTCUTS and hinted and ok([k for k in unread if k not in hinted]):
            culprits = [k for k in hinted if not ok([k])]
            if culprits and ok([k for k in unread if k not in culprits]):
                return self._keeps_base(comp, culprits, values, base_values)
        if not unread or not ok([]):
            unread = list(good)
            built = {tuple(k.path for k in unread): False}
            if not unread or not ok([]):
                return []
        bad: list[Knob] = []
        _bisect(unread, ok, bad)
        if not bad or not ok([k for k in unread if k not in bad]):
            return []
        return self._keeps_base(comp, bad, values, base_values)

    def _keeps_base(self, comp: Component, bad: list[Knob], values: dict[str, Any], base_values: dict[str, Any]) -> list[Knob]:
        """``bad``, when putting their real values back leaves the base build as it is (else [])."""
        vals = base_values
        for k in bad:
            vals = assign(vals, k.path, get(values, k.path))
        return bad if self.mask(self.tree(comp, vals)) == self.masked[()] else []

    def _presence(self, comp: Component, oid: str, kpaths: list[Path], knob_of: dict[Path, Knob], base_values: dict[str, Any]) -> Cond:
        """When the base object ``oid`` is there, over the knobs that can leave it out."""
        group = [k for k in kpaths if k in self.presence_on]
        settings = [self.presence_on[k] for k in group]
        size = 1
        for one in settings:
            size *= len(one)
        if size > MAX_PRODUCT:  # too many together: each alone, their conditions joined by `and`
            cond: Cond = ((),)
            for path in group:
                cond = _and(cond, self._presence(comp, oid, [path], knob_of, base_values))
            return cond
        release = self._release()
        if release is not None and RELEASE not in group and any(added_in(k) for k in group):
            group = [*group, RELEASE]  # a key a release prunes leaves nothing out there
            current = get(base_values, RELEASE)
            settings = [*settings, [(current, current), *((r, r) for r in release.domain if r != current)]]
            knob_of = {**knob_of, RELEASE: release}
        knobs = [knob_of[path] for path in group]
        domains = [_labels(k) for k in knobs]
        present: set[tuple[Any, ...]] = set()
        dont = set(itertools.product(*domains))  # not built, or built without the component
        on_values = dict(zip(group, settings, strict=True))
        pruned = self._pruned(group, on_values)
        same: dict[str, dict[str, Obj] | None] = {}
        for combo in itertools.product(*settings):
            labels = tuple(label for label, _ in combo)
            if _impossible(knobs, list(labels)):
                continue  # no values say it: any answer will do
            tree = self._combo_tree(comp, group, combo, on_values, knob_of, base_values, pruned, same)
            if not tree:
                continue  # the component is not there at all: any answer will do
            dont.discard(labels)
            if oid in tree:
                present.add(labels)
        cubes = helm_logic.minimise(present, dont, domains)
        return _dnf(knobs, cubes, domains)

    def _release(self) -> Knob | None:
        return next((k for k in self.structural if k.path == RELEASE), None)

    def _pruning(self, knob: Knob) -> Cond:
        """The releases on which ``knob`` is a key the release prunes, as a condition (empty when
        none): there its value changes nothing, so a gate on it holds there too (the
        RuntimeClasses on v25.10 whatever `cdi.nriPluginEnabled` says)."""
        since = added_in(knob.path)
        release = self._release()
        if since is None or release is None:
            return ()
        older = [r for r in release.domain if not has(str(r), since)]
        return self._cond(release, older) if older else ()

    @staticmethod
    def _atom(knob: Knob, label: Any) -> Atom:
        if knob.kind == "default":
            return _default_atom(knob, label)
        return Atom(knob.path, "eq", label) if knob.kind == "enum" else Atom(knob.path, "is", bool(label))


    def _as_base(self, knob: Knob, setting: Any, base_values: dict[str, Any]) -> bool:
        """Does the build with ``knob`` set to ``setting`` surely give the base build?

        Yes when the builder never read the knob itself and every attribute of the resolved
        pools it read is the same with that setting: a build is a function of what it reads
        (the pool resolution reads more than the builder looks at: a pool's settings hide the
        fleet's ``driver`` keys, and a builder that groups pools by runtime reads no image)."""
        if not SHORTCUTS or self.base_direct is None or knob.kind == "pool":
            return False
        if self.as_base[0] is not base_values:
            self.as_base = (base_values, {})
        key = (knob.path, repr(setting))  # asked by _culprits, then by _vary
        known = self.as_base[1]
        if key not in known:
            known[key] = self._builds_as_base(knob, setting, base_values)
        return known[key]

    def _builds_as_base(self, knob: Knob, setting: Any, base_values: dict[str, Any]) -> bool:
        assert self.base_direct is not None
        paths = self.base_direct[1]
        if self._direct_read(knob, setting, base_values):
            return False
        if self.base_attrs is None:
            self.base_attrs = [p for p in paths if p[0] == POOL_ATTR], [p for p in paths if p[0].startswith(POOL_ATTR + "\x00")]
        attrs, parts = self.base_attrs
        if self.base_pools is None or self.base_pools[0] is not base_values:
            try:
                self.base_pools = (base_values, model_of(base_values, self.cluster).pools)
            except Exception:  # pragma: no cover - the base build resolved them
                return False
        old = {p.name: p for p in self.base_pools[1]}
        vals = self._apply(base_values, [(knob, setting)])[0]
        try:
            if _in_pool(knob.path):  # a pool's own setting: only that pool can change
                found = pool_of(vals, self.cluster, knob.path[2])
                new = {**old, knob.path[2]: found} if found is not None and knob.path[2] in old else {}
            else:
                new = {p.name: p for p in model_of(vals, self.cluster).pools}
        except Exception:  # a setting the pools cannot be resolved with: the build fails
            return False
        if list(old) != list(new):
            return False
        for _, name, attr in attrs:
            if getattr(old[name], attr) != getattr(new[name], attr):
                return False
        for part in parts:
            _, name, attr = part[0].split("\x00")[1:]
            was, now = getattr(old[name], attr), getattr(new[name], attr)
            if len(part) == 1:
                if was != now:
                    return False
            elif was.get(part[1], MISSING) != now.get(part[1], MISSING):
                return False
        return True

    def _direct_read(self, knob: Knob, setting: Any, base_values: dict[str, Any]) -> bool:
        """Could the builder itself have read a value of the base build that ``knob = setting``
        changes? The release, which the builder may not have read itself, changes the keys
        it prunes (:meth:`_reads_pruned`)."""
        assert self.base_direct is not None
        if knob.path == RELEASE and self.base_gated:
            return self._reads_pruned(setting, base_values)
        return _may_read(*self.base_direct, knob.path)

    def _reads_pruned(self, release: Any, base_values: dict[str, Any]) -> bool:
        """Could the base build have read a key of ``base_values`` that one of its release and
        ``release`` prunes and the other keeps? When not, and the builder never read the release
        itself (:attr:`base_gated`), the build on ``release`` reads what the base build read
        (the pools' attributes aside, which :meth:`_builds_as_base` compares)."""
        assert self.base_direct is not None
        seen, paths = self.base_direct
        was = str(get(base_values, RELEASE))
        for pointer, since in ADDED_IN.items():
            parts = tuple(pointer[1:].split("/"))
            if parts[0] == "nodePools" or has(was, since) == has(str(release), since) or not _has(base_values, parts):
                continue
            # a whole section (kataSandboxDevicePlugin) is read where any key of it is
            if parts[0] in seen and (len(parts) == 1 or _may_read(seen, paths, parts)):
                return True
        return False

    def _base_read(self, knob: Knob) -> bool:
        """Could the base build have read ``knob``'s value? (False only when it surely did not.)"""
        return _may_read(self.base_reads, self.base_paths, knob.path)

    def _current(self, knob: Knob, values: dict[str, Any]) -> Any:
        if knob.kind == "pool":
            return True
        if knob.kind in ("set", "default"):
            return False
        if knob.kind == "bool" and not _has(values, knob.path):
            return False  # a key a keyed map lacks (_keys)
        return get(values, knob.path)

    def _setting(self, knob: Knob, label: Any, values: dict[str, Any]) -> Any:
        if knob.kind in ("pool", "set", "default"):
            return True if knob.kind == "pool" else get(values, knob.path)
        if knob.kind == "bool" and label is False and not _has(values, knob.path):
            return REMOVE  # a key a keyed map lacks stays out of it
        return label

    def _cond(self, knob: Knob, labels: list[Any]) -> Cond:
        if knob.kind in ("bool", "pool", "set", "default"):
            if set(labels) >= {True, False}:
                return ((),)
            return ((self._atom(knob, labels[0]),),)
        return tuple((Atom(knob.path, "eq", v),) for v in labels)

    def _apply_group(
        self,
        comp: Component,
        group: list[Path],
        touched: dict[Path, list[TPath]],
        on_values: dict[Path, list[tuple[Any, Any]]],
        knob_of: dict[Path, Knob],
        base_values: dict[str, Any],
        base: dict[str, Obj],
        objects: dict[str, Any],
        own: list[Path] | None = None,
    ) -> None:
        """Vary ``group`` together and put the variants at the paths ``own`` (default: the
        group) changed."""
        paths = _top_paths([p for k in (group if own is None else own) for p in touched[k]])
        size = 1
        for k in group:
            size *= len(on_values[k])
        combos: list[tuple[tuple[Any, Any], ...]] = []
        together: tuple[Any, ...] = ()  # the labels of the combo that sets every pair of the group (_alone_combos)
        alone = size > MAX_PRODUCT  # too many together: each knob varied alone (independence assumed)
        if not alone:
            combos = list(itertools.product(*(on_values[k] for k in group)))
        else:
            combos, together = self._alone_combos(group, on_values)
        results: list[tuple[Conj, dict[str, Obj]]] = []
        built: dict[tuple[Any, ...], dict[str, Obj] | None] = {}
        # no values set a keyed map's key and leave the map empty: not built, a don't-care
        combos = [c for c in combos if not _impossible([knob_of[k] for k in group], [label for label, _ in c])]
        pruned = self._pruned(group, on_values)
        same: dict[str, dict[str, Obj] | None] = {}
        for combo in combos:
            atoms: list[Atom] = []
            for path, (label, setting), first in zip(group, combo, (on_values[k][0] for k in group), strict=True):
                if alone and (label, setting) == first:
                    continue
                atoms.append(self._atom(knob_of[path], label))
            tree = self._combo_tree(comp, group, combo, on_values, knob_of, base_values, pruned, same)
            built[tuple(label for label, _ in combo)] = tree
            if tree:
                results.append((tuple(atoms), tree))
        together_tree = built.get(together)
        for tpath in paths:
            self._place([knob_of[k] for k in group], tpath, results, built, alone, together_tree, base, objects)

    def _place(
        self,
        knobs: list[Knob],
        tpath: TPath,
        results: list[tuple[Conj, dict[str, Obj]]],
        built: dict[tuple[Any, ...], dict[str, Obj] | None],
        alone: bool,
        together: dict[str, Obj] | None,
        base: dict[str, Obj],
        root: Any,
        within: TPath = (),
        known: Conj = (),
    ) -> None:
        """Put the variant of a group at ``tpath`` into ``root``: the objects, or (``within``)
        the item at that path of them, printed inside an ``if`` that asks ``known`` (each tree's
        node at ``within`` is then the root). An item that some cases leave out and the others
        hold with fields that differ is :meth:`_nested`."""
        cases: list[tuple[Cond, Any]] = []
        at: dict[int, Any] = {}  # each tree's node at tpath, looked up once
        for conj, tree in results:
            if _left_out(tree, (*within, *tpath)):
                continue  # the object is left out (a gate of its own): any content will do
            node = at[id(tree)] = tget(tree, (*within, *tpath))
            for i, (cond, existing) in enumerate(cases):
                if existing == node or (existing is MISSING and node is MISSING):
                    cases[i] = ((*cond, conj), existing)
                    break
            else:
                cases.append(((conj,), clone(node)))  # the trees are shared; the template is changed later
        if not within and self._nested(knobs, tpath, cases, at, results, built, alone, together, base, root):
            return
        if known:  # inside the item's `if`: what it asks holds there
            cases = [(_absorbed(tuple(tuple(a for a in conj if a not in known) for conj in cond)), node) for cond, node in cases]
        # the base variant goes last, as the `else` branch; "nothing" goes last when it can
        base_node = tget(base, (*within, *tpath))
        cases.sort(key=lambda c: c[1] == base_node or (c[1] is MISSING and base_node is MISSING))
        if len(cases) == 2 and cases[0][1] is MISSING:
            cases = _nothing_last(cases, alone)
        if len(cases) > 1:
            if not alone:
                cases = self._minimal_cases(knobs, built, cases, (*within, *tpath), base_node, at)
            cases = _together_first(cases, together)
            ref = _ref(results, at, base, together)
            tset(root, tpath, Variant(cases), tget(ref, within) if within else ref, self.item_order.get((*within, *tpath[:-1])))

    def _nested(
        self,
        knobs: list[Knob],
        tpath: TPath,
        cases: list[tuple[Cond, Any]],
        at: dict[int, Any],
        results: list[tuple[Conj, dict[str, Obj]]],
        built: dict[tuple[Any, ...], dict[str, Obj] | None],
        alone: bool,
        together: dict[str, Obj] | None,
        base: dict[str, Obj],
        root: Any,
    ) -> bool:
        """Is the list item at ``tpath`` one that some ``cases`` leave out and the others hold
        with fields that differ (the GDS sidecar, with and without the repository mounts:
        :meth:`_pair_beside`)? Then it is put as one ``if`` around the item, with a variant of
        its own at each field that differs, asked only of the builds that hold the item (the
        issue's rule: a structural knob's if/else wraps the narrowest field or list item that
        differs, never a copy of the object)."""
        present = [node for _, node in cases if node is not MISSING]
        if len(present) < 2 or len(present) == len(cases) or not isinstance(tpath[-1], tuple) or not all(isinstance(n, dict) for n in present):
            return False
        inner = _top_paths([q for n in present[1:] for q in diff(present[0], n)])
        if not inner or any(not q or not isinstance(q[0], str) for q in inner):
            return False
        holding = [(conj, tree) for conj, tree in results if at.get(id(tree), MISSING) is not MISSING]
        # the item as the build nearest the base holds it (fewest knobs away from the base's
        # combination, the first), with its fields' variants put in; the fullest build (most
        # of those fields there) gives the order of the items they add
        first = results[0][0]
        rep = min(holding, key=lambda r: sum(a not in first for a in r[0]))[1]
        fullest = max(holding, key=lambda r: sum(tget(r[1], (*tpath, *q)) is not MISSING for q in inner))[1]
        node = clone(tget(rep, tpath))
        # each knob varied alone: the atoms every build that holds the item shares are what its `if` asks
        known = tuple(a for a in holding[0][0] if all(a in conj for conj, _ in holding[1:])) if alone else ()
        ids = {id(tree) for _, tree in holding}
        only = {m: (t if t and id(t) in ids else None) for m, t in built.items()}  # the others: don't-cares
        for q in inner:
            self._place(knobs, q, holding, only, alone, fullest, rep, node, tpath, known)
        here = object()  # "the item is there", whatever it holds (compared by identity)
        seen = {i: (MISSING if n is MISSING else here) for i, n in at.items()}
        outer: list[tuple[Cond, Any]] = [
            (_absorbed(tuple(c for cond, n in cases if n is not MISSING for c in cond)), here),
            (_absorbed(tuple(c for cond, n in cases if n is MISSING for c in cond)), MISSING),
        ]
        base_seen = MISSING if tget(base, tpath) is MISSING else here
        outer.sort(key=lambda c: c[1] is base_seen)
        if outer[0][1] is MISSING:
            outer = _nothing_last(outer, alone)
        if not alone:
            outer = self._minimal_cases(knobs, built, outer, tpath, base_seen, seen)
        outer = [(cond, node if n is here else n) for cond, n in _together_first(outer, together)]
        tset(root, tpath, Variant(outer), _ref(results, at, base, together), self.item_order.get(tpath[:-1]))
        return True

    def _alone_combos(self, group: list[Path], on_values: dict[Path, list[tuple[Any, Any]]]) -> tuple[list[tuple[tuple[Any, Any], ...]], tuple[Any, ...]]:
        """The settings a group too large for its product is built with: the base, each knob's
        other values alone, and, since a pair varied together changes nothing alone
        (:meth:`_pair_empty`), each pair of the group set and all of them at once (last),
        whose tree has their items in the builder's order (the order the items of the other
        pairs go in beside them); and the labels of that last one (() without it)."""
        paired = [pair for pair in self.pairs if all(k in group for k in pair)]
        out = [tuple(on_values[k][0] for k in group)] + [
            tuple(on_values[k][0] if j != i else alt for j, k in enumerate(group))
            for i, key in enumerate(group)
            for alt in on_values[key][1:]
        ]
        for pairs in [[pair] for pair in paired] + ([paired] if len(paired) > 1 else []):
            on = {group.index(k): on_values[k][1] for pair in pairs for k in pair}
            out.append(tuple(on.get(j, on_values[k][0]) for j, k in enumerate(group)))
        together = tuple(label for label, _ in out[-1]) if len(paired) > 1 else ()
        # each switch of :attr:`beside` with its knobs, and with all of them (the order of the items they add)
        beside: dict[Path, list[tuple[Path, ...]]] = {}
        for a, knobs in self.beside:
            if a in group and all(k in group for k in knobs):
                beside.setdefault(a, []).append(knobs)
                out.append(tuple(on_values[k][1] if k == a or k in knobs else on_values[k][0] for k in group))
        for a, sets in beside.items():
            if len(sets) > 1:
                every = {k for knobs in sets for k in knobs}
                out.append(tuple(on_values[k][1] if k == a or k in every else on_values[k][0] for k in group))
        return out, together

    def _combo_tree(
        self,
        comp: Component,
        group: list[Path],
        combo: tuple[tuple[Any, Any], ...],
        on_values: dict[Path, list[tuple[Any, Any]]],
        knob_of: dict[Path, Knob],
        base_values: dict[str, Any],
        pruned: set[tuple[Path, str]],
        same: dict[str, dict[str, Obj] | None],
    ) -> dict[str, Obj] | None:
        """The masked tree of one combination of a group: a key the combination's release prunes
        changes nothing, so the combination is built with that key at its base value (once)."""
        release = repr(combo[group.index(RELEASE)][1]) if pruned else ""
        key = tuple(on_values[k][0] if (k, release) in pruned else combo[i] for i, k in enumerate(group))
        memo = repr(key)
        if key == combo or memo not in same:
            same[memo] = self.masked_tree(comp, base_values, [(knob_of[k], setting) for k, (_, setting) in zip(group, key, strict=True)])
        return same[memo]

    @staticmethod
    def _pruned(group: list[Path], on_values: dict[Path, list[tuple[Any, Any]]]) -> set[tuple[Path, str]]:
        """(knob, repr of a release) of the group's keys that the release prunes, when the group
        holds the release (:func:`_with_release`)."""
        if RELEASE not in group:
            return set()
        out: set[tuple[Path, str]] = set()
        for k in group:
            since = added_in(k)
            if since is not None:
                out |= {(k, repr(setting)) for _, setting in on_values[RELEASE] if not has(str(setting), since)}
        return out

    def _minimal_cases(
        self,
        knobs: list[Knob],
        built: dict[tuple[Any, ...], dict[str, Obj] | None],
        cases: list[tuple[Cond, Any]],
        tpath: TPath,
        base_node: Any,
        at: dict[int, Any],
    ) -> list[tuple[Cond, Any]]:
        """``cases`` with each condition minimal over the whole domain of ``knobs``.

        Each combination of values takes the case its build gave; a combination that was not
        built (a value that changes nothing alone) takes the base case; a build without the
        component or the object is a don't-care, and so is every combination an earlier case
        already took (``else if`` is only reached when the cases before it did not hold).
        ``at``: the nodes at ``tpath`` of the trees already looked at, by ``id``.
        """
        domains = [_labels(k) for k in knobs]
        universe = list(itertools.product(*domains))
        if len(universe) > helm_logic.MAX_UNIVERSE:
            return cases
        nodes = [node for _, node in cases]
        base_idx = next((i for i, n in enumerate(nodes) if n == base_node or (n is MISSING and base_node is MISSING)), None)
        taken: dict[tuple[Any, ...], int] = {}
        dont: set[tuple[Any, ...]] = set()
        for m in universe:
            if _impossible(knobs, list(m)):  # no values say it (never built)
                dont.add(m)
                continue
            if m in built:
                tree = built[m]
                if not tree or _left_out(tree, tpath):
                    dont.add(m)
                    continue
                node = at[id(tree)] if id(tree) in at else tget(tree, tpath)
                idx = next((i for i, n in enumerate(nodes) if n == node or (n is MISSING and node is MISSING)), None)
            else:
                idx = base_idx
            if idx is None:
                dont.add(m)
            else:
                taken[m] = idx
        out: list[tuple[Cond, Any]] = []
        for i, node in enumerate(nodes):
            on = {m for m, j in taken.items() if j == i}
            dc = dont | {m for m, j in taken.items() if j < i}
            cubes = helm_logic.minimise(on, dc, domains)
            out.append((_dnf(knobs, cubes, domains), node))
        return out


class _Check:
    """``check(group)``: do the knobs of ``group``, as placeholders, reproduce ``real`` when
    their values are put back (:meth:`Analysis._split`)? With ``hints``, a failing build adds
    the knobs it suspects; with ``capture``, a passing build is kept as the base build."""

    def __init__(self, analysis: Analysis, comp: Component, values: dict[str, Any], real: dict[str, Obj]) -> None:
        self.analysis, self.comp, self.values, self.real = analysis, comp, values, real
        self.want = list(real.values())
        self.target = _blank(self.want, analysis.derived_at) if analysis.derived_at else self.want
        self.blanks: dict[int, list[TPath]] = {}
        for i, p in analysis.derived_at:
            self.blanks.setdefault(i, []).append(p)
        # an object equal to its real one holds no sentinel (the real ones hold none), so
        # putting values back into it changes nothing: compared as it is
        self.plain = not _mentions_sentinel(self.want)

    def __call__(self, group: list[Knob], capture: bool = False, hints: set[Path] | None = None) -> bool:
        an, comp, values = self.analysis, self.comp, self.values
        sent = Sentinels()
        vals = values
        for knob in group:
            vals = assign(vals, knob.path, sent.make(knob, get(values, knob.path)))
        if hints is None:
            tree = an._captured_tree(comp, vals) if capture else an.tree(comp, vals)
        else:
            tree = an._probe(comp, vals, sent, hints)
            if tree is not None and an.captured is None:  # a block turned into text
                return self.suspects(tree, sent, hints)
        if tree is None:
            return False
        objs = list(tree.values())
        if len(objs) != len(self.want):  # an object is never a spliced block: back keeps the count
            return self.suspects(tree, sent, hints)
        for i, obj in enumerate(objs):  # object by object, stopping at the first difference
            if self.plain and obj == self.want[i]:
                continue
            if self.put_back(obj, sent, i) != self.target[i]:
                return self.suspects(tree, sent, hints)
        return True

    def put_back(self, obj: Obj, sent: Sentinels, i: int) -> Obj:
        back: Obj = sent.back(obj)
        for p in self.blanks.get(i, ()):  # back is a fresh copy: blank it in place
            blank(back, p)
        return back

    def suspects(self, tree: dict[str, Obj], sent: Sentinels, hints: set[Path] | None) -> bool:
        """False, after adding to ``hints`` the knobs whose placeholder is where an object
        differs (a mangled one) and those :meth:`Analysis._suspects` finds."""
        if hints is None:
            return False
        ids = {sent.back(oid): oid for oid in tree}
        for i, oid in enumerate(self.real):
            if oid in ids and not (self.plain and tree[ids[oid]] == self.want[i]):
                obj = tree[ids[oid]]
                back = self.put_back(obj, sent, i)
                if back != self.target[i]:
                    near = [tget(obj, q) for q in diff(back, self.target[i])]
                    hints.update(sent.knob[sid] for sid in SENTINEL.findall(repr(near)) if sid in sent.knob)
        return self.analysis._suspects(tree, sent, hints)


def _put_ref(node: Any, path: TPath, ref: Ref, expect: Any) -> None:
    """Put ``ref`` at ``path`` where the node still holds ``expect``, through every variant case."""
    if isinstance(node, Variant):
        for _, case in node.cases:
            if case is not MISSING:
                _put_ref(case, path, ref, expect)
        return
    if not path:
        return
    elem = path[0]
    if isinstance(elem, tuple):
        _put_ref_item(node, path, ref, expect)
        return
    if not isinstance(node, dict) or elem not in node:
        return
    if len(path) == 1:
        child = node[elem]
        if isinstance(child, Variant):
            for j, (cond, case) in enumerate(child.cases):
                if case == expect:
                    child.cases[j] = (cond, ref)
        elif child == expect:
            node[elem] = ref
        return
    _put_ref(node[elem], path[1:], ref, expect)


def _put_ref_item(node: Any, path: TPath, ref: Ref, expect: Any) -> None:
    if not isinstance(node, list):
        return
    for i, (name, item) in enumerate(zip(_names(node), node, strict=True)):
        if name == path[0][1]:
            if len(path) == 1:
                if item == expect:
                    node[i] = ref
            else:
                _put_ref(item, path[1:], ref, expect)


def _hash_leaves(node: Any, path: TPath) -> list[TPath]:
    if isinstance(node, dict):
        return [p for k, v in node.items() if isinstance(k, str) for p in _hash_leaves(v, (*path, k))]
    keyed = _keyed(node)
    if keyed is not None:
        return [p for name, v in keyed.items() for p in _hash_leaves(v, (*path, ("@", name)))]
    if isinstance(node, str) and HASHLIKE.fullmatch(node) and not SENTINEL.search(node):
        return [path]
    return []


def _bindings(values: dict[str, Any], cluster: str) -> dict[str, list[Obj]]:
    """Per component, the RoleBindings/ClusterRoleBindings the other components render."""
    from renderer.render import objects

    found = objects(model_of(values, cluster))
    out: dict[str, list[Obj]] = {}
    for name in found:
        out[name] = [
            copy.deepcopy(o)
            for other, objs in found.items()
            if other != name
            for o in objs
            if o.get("kind") in ("RoleBinding", "ClusterRoleBinding")
        ]
    return out


def blank(obj: Any, p: TPath) -> None:
    """Set the leaf at ``p`` to None, in place, when it exists."""
    parent = tget(obj, p[:-1])
    if isinstance(parent, dict) and isinstance(p[-1], str) and p[-1] in parent:
        parent[p[-1]] = None
    elif isinstance(parent, list) and isinstance(p[-1], tuple):
        for j, name in enumerate(_names(parent)):
            if name == p[-1][1]:
                parent[j] = None


def _text_outside(objs: list[Obj], at: list[tuple[int, TPath]]) -> bool:
    """:func:`_text_of_block` of ``objs`` with the computed leaves ``at`` left out (only the
    objects that hold one are copied: a component's CRDs are large)."""
    leaves: dict[int, list[TPath]] = {}
    for i, p in at:
        leaves.setdefault(i, []).append(p)
    for i, obj in enumerate(objs):
        if i in leaves:
            obj = clone(obj)
            for p in leaves[i]:
                blank(obj, p)
        if _text_of_block(obj):
            return True
    return False


def _blank(objs: list[Obj], at: list[tuple[int, TPath]]) -> list[Obj]:
    """A copy with the computed leaves set to None."""
    out = copy.deepcopy(objs)
    for i, p in at:
        blank(out[i], p)
    return out


def _value_like(base: dict[str, Obj], current: Any, per_alt: list[tuple[Any, dict[str, Obj], list[TPath]]]) -> set[TPath]:
    """Paths where an enum or boolean knob's value itself is the scalar (a boolean also as the
    string ``"true"`` / ``"false"``, as env values are): a reference, not a variant."""
    like: set[TPath] | None = None
    for label, tree, found in per_alt:
        here = {p for p in found if _same(tget(base, p), current) and _same(tget(tree, p), label)}
        if type(current) is bool:
            here |= {p for p in found if _same(tget(base, p), bool_text(current)) and _same(tget(tree, p), bool_text(label))}
        like = here if like is None else like & here
    return like or set()


def _shared_refs(refs: dict[TPath, list[Path]], touched: dict[Path, list[TPath]], on_values: dict[Path, list[tuple[Any, Any]]]) -> None:
    """A path where a knob's value is the scalar, but which another knob changes too (there or
    below: the field is ``a or b``, each seen with one knob flipped), is a variant of those
    knobs, not a reference. (Another knob's variant of a parent path holds the reference in
    each of its cases where the field is as in the base.)"""
    for tpath, kpaths in list(refs.items()):
        others = [p for k, ps in touched.items() if k not in kpaths for p in ps]
        if len(kpaths) > 1 or any(_prefix(tpath, p) for p in others):
            del refs[tpath]
            for kpath in kpaths:
                touched.setdefault(kpath, []).append(tpath)
                assert kpath in on_values


def _nothing_last(cases: list[tuple[Cond, Any]], alone: bool) -> list[tuple[Cond, Any]]:
    """Two cases, "nothing" first, with "nothing" as the ``else``. Each knob varied alone, the
    base case's condition holds the base build's (true): it takes the negation of the other's,
    whose every product is one atom (else the order stays)."""
    if not alone:
        return [cases[1], cases[0]]  # the conditions are made minimal afterwards
    negated: list[Atom] = []
    for conj in cases[0][0]:
        if len(conj) != 1 or conj[0].op not in ("is", "eq", "ne"):
            return cases
        atom = conj[0]
        negated.append(Atom(atom.path, "is", not atom.value) if atom.op == "is" else Atom(atom.path, "ne" if atom.op == "eq" else "eq", atom.value))
    return [((tuple(negated),), cases[1][1]), (((),), MISSING)]


def _impossible(knobs: list[Knob], labels: list[Any]) -> bool:
    """Do ``labels`` set a key of a keyed map that they leave empty (``featureGates.MPSSupport``
    true, ``featureGates`` not set)? No values say that: a don't-care."""
    empty = {k.path for k, label in zip(knobs, labels, strict=True) if k.kind == "set" and label is False}
    return bool(empty) and any(k.kind == "bool" and label is True and k.path[:-1] in empty for k, label in zip(knobs, labels, strict=True))


def _same(a: Any, b: Any) -> bool:
    """Equal and of one type (``True`` is no ``1``)."""
    return type(a) is type(b) and a == b


def _and(a: Cond, b: Cond) -> Cond:
    return tuple(tuple(x + y) for x in a for y in b)


def _prefix(a: TPath, b: TPath) -> bool:
    return len(a) <= len(b) and b[: len(a)] == a


def _top_paths(paths: list[TPath]) -> list[TPath]:
    out: list[TPath] = []
    for p in sorted(set(paths), key=lambda q: (len(q), repr(q))):  # stable across processes
        if not any(_prefix(q, p) for q in out):
            out.append(p)
    return out


def _with_release(groups: list[list[Path]], on_values: dict[Path, list[tuple[Any, Any]]]) -> list[tuple[list[Path], list[Path]]]:
    """``groups`` as (knobs varied together, knobs whose paths get the variants): a group with a
    key that a release prunes (:func:`helm_values.added_in`) is varied with the release too
    (while the product stays at most :data:`MAX_PRODUCT`), for its own paths only.

    Their paths need not overlap: flipped alone from the base, neither shows that the key has
    no effect on a release that prunes it (`cdi.nriPluginEnabled` false in the fleet, v25.10 a
    cluster's release: the DCGM exporter's `runtimeClassName` is there on v25.10 whatever the
    key says). Few builds: :meth:`Analysis._apply_group` builds no combination in which the
    release prunes a key set away from its base value, and the release's other paths stay with
    its own group."""
    home = next((g for g in groups if RELEASE in g), None)
    out: list[tuple[list[Path], list[Path]]] = []
    for group in groups:
        gated = home is not None and group is not home and any(added_in(k) for k in group)
        if gated and _product(group, on_values) * len(RELEASES) <= MAX_PRODUCT:
            out.append(([*group, RELEASE], group))
        else:
            out.append((group, group))
    return out


def _product(group: list[Path], on_values: dict[Path, list[tuple[Any, Any]]]) -> int:
    size = 1
    for k in group:
        size *= len(on_values[k])
    return size


def _groups(touched: dict[Path, list[TPath]]) -> list[list[Path]]:
    """Knobs whose changed paths overlap (one a prefix of the other) vary together."""
    parent = {k: k for k in touched}

    def find(k: Path) -> Path:
        while parent[k] != k:
            k = parent[k]
        return k

    keys = list(touched)
    for i, a in enumerate(keys):
        for b in keys[i + 1 :]:
            if any(_prefix(p, q) or _prefix(q, p) for p in touched[a] for q in touched[b]):
                parent[find(a)] = find(b)
    groups: dict[Path, list[Path]] = {}
    for k in keys:
        groups.setdefault(find(k), []).append(k)
    return list(groups.values())


PROBE = "zzgrprobe"
"""The key :meth:`Analysis._precedence` puts in every values map merged into one map."""


def _merged_maps(node: Any, path: TPath = ()) -> Iterator[tuple[TPath, list[str]]]:
    """(path, block sentinels) of every map into which two or more values maps are merged."""
    if isinstance(node, dict):
        ids = [k for k, v in node.items() if isinstance(k, str) and k == v and k.startswith("zzgrb")]
        if len(ids) > 1:
            yield path, ids
        for key, val in node.items():
            if key not in ids:
                yield from _merged_maps(val, (*path, key))
    elif isinstance(node, list):
        for name, item in zip(_names(node), node, strict=True):
            if name is not None:
                yield from _merged_maps(item, (*path, ("@", name)))


def _spliced(node: dict[Any, Any], sent: Sentinels) -> list[str]:
    """The block sentinels spliced into ``node`` (a values map's entries among fixed ones), also
    behind a variant (:func:`_splice_gate`)."""
    return [k for k, v in node.items() if isinstance(k, str) and k in sent.knob and k.startswith("zzgrb") and (k == v or _splice_gate(v, k) is not None)]


def _splice_gate(node: Any, sid: str) -> Variant | None:
    """A map block's sentinel entry under a variant that has it or not (the pod's annotations
    with ``dcgmExporter.annotations`` on v26.7, without on v26.3, which prunes the key): the map's
    diff went down to the entry. The splice is behind that variant, whose cases are ``None``
    (spliced) or ``MISSING``; None when ``node`` is no such variant."""
    if not isinstance(node, Variant) or not all(n is MISSING or n == sid for _, n in node.cases):
        return None
    return Variant([(cond, MISSING if n is MISSING else None) for cond, n in node.cases])


def _convert(node: Any, sent: Sentinels) -> Any:
    """Sentinels -> Ref / Interp / Block / Splice, through variants."""
    if isinstance(node, Variant):
        return _each_case(node, lambda case: _convert(case, sent))
    if isinstance(node, dict):
        res: dict[Any, Any] = {}
        spliced = _spliced(node, sent)
        ranked = iter(sent.order.get(tuple(spliced), spliced))  # the builder's precedence, in the splices' places
        for key, val in node.items():
            if type(val) is str and not _has_sid(val) and key not in spliced:  # the common leaf: nothing to convert
                res[key] = val
                continue
            if key in spliced:
                first = next(ranked)
                gate = _splice_gate(node[first], first)
                # a variant of the block alone being set or empty splices it either way
                res[Splice(sent.knob[first], True)] = None if gate is None or _set_or_empty(node[first], first, sent.knob[first]) else gate
                continue
            merged = sent.merge_ids(val)
            if len(merged) > 1:
                res[key] = MergeBlock(tuple(sent.knob[m] for m in sent.order.get(tuple(merged), merged)))
                continue
            sid = sent.block_id(val) if isinstance(val, dict) else (sent._list_block(val) if isinstance(val, list) else None)
            if sid is not None:
                res[key] = Block(sent.knob[sid])
                continue
            res[key] = _convert(val, sent)
        return res
    if isinstance(node, list):
        return [item if type(item) is str and not _has_sid(item) else _convert_item(item, sent) for item in node]
    if isinstance(node, str) and _has_sid(node):
        return _convert_text(node, sent)
    if _int_sid(node) and str(node) in sent.knob:
        return Ref(sent.knob[str(node)], False, number=True)
    return node


def _each_case(node: Variant, convert: Callable[[Any], Any]) -> Variant:
    """The variant with ``convert`` applied to each case (its name kept)."""
    out = Variant([(cond, MISSING if case is MISSING else convert(case)) for cond, case in node.cases])
    if hasattr(node, "name"):
        out.name = node.name  # type: ignore[attr-defined]
    return out


def _set_or_empty(node: Any, sid: str, path: Path) -> bool:
    """A map block's sentinel entry under a variant of that block alone being set or empty: the
    map's diff between the two went down to the entry. A splice of the block is the same (an
    empty block splices nothing), and prints no placeholder key."""
    return (
        isinstance(node, Variant)
        and all(n is MISSING or n == sid for _, n in node.cases)
        and all(atom.path == path for cond, _ in node.cases for conj in cond for atom in conj)
    )


def _convert_item(item: Any, sent: Sentinels) -> Any:
    """A list item: a spliced block stays a list splice, also as a variant's case."""
    if isinstance(item, Variant):
        return _each_case(item, lambda case: _convert_item(case, sent))
    sid = sent.block_id(item)
    if sid is not None:
        return Splice(sent.knob[sid], isinstance(sent.value[sid], dict))
    out = _convert(item, sent)
    if isinstance(out, dict) and isinstance(item, dict):
        # a map of booleans joined into an item's text (FEATURE_GATES): the builder leaves the
        # item out when the map is empty. Where the map is set (no "set" variant asks it), the
        # item asks it itself.
        for text in item.values():
            joined = JOINED.fullmatch(text) if isinstance(text, str) and "zzgrb" in text else None
            if joined is not None and not is_empty(sent.value.get(joined.group(1))):
                return Variant([(((Atom(sent.knob[joined.group(1)], "is", True),),), out), (((),), MISSING)])
    return out


def _names_of(path: Path) -> bool:
    """Is a list placeholder that stands alone as text a list of pull secrets, joined by their
    names (the validator's ``VALIDATOR_IMAGE_PULL_SECRETS``, :func:`names_text`)? Any other
    block's sentinel as text is its own key or value, where the block itself stands."""
    return bool(path) and path[-1] == "imagePullSecrets"


def _convert_text(node: str, sent: Sentinels) -> Ref | Interp | Joined:
    if node in sent.knob and node.startswith("zzgrs"):
        return Ref(sent.knob[node], isinstance(sent.value[node], str))
    if node in sent.knob and _names_of(sent.knob[node]):
        return Joined(sent.knob[node], names=True)
    joined = JOINED.fullmatch(node)
    if joined is not None and isinstance(sent.value.get(joined.group(1)), dict):
        return Joined(sent.knob[joined.group(1)])
    parts: list[str | Ref] = []
    pos = 0
    for m in SENTINEL.finditer(node):
        if m.start() > pos:
            parts.append(node[pos : m.start()])
        sid = m.group(0)
        parts.append(Ref(sent.knob[sid], True, number=sid.startswith("-")) if sid in sent.knob else sid)
        pos = m.end()
    if pos < len(node):
        parts.append(node[pos:])
    return Interp(tuple(parts))


def analyse_all(components: tuple[Component, ...], values: dict[str, Any], cluster: str, schema: dict[str, Any], jobs: int = 1) -> list[Template]:
    """Each component's template (those that build nothing have none), analysed by up to
    ``jobs`` processes (:func:`renderer.workers.each`): each component's analysis is its own,
    what one leaves in the shared :class:`Analysis` (suspects to try first) only chooses which
    builds the next makes, never what it finds, so the templates are the same either way."""
    # The analysis makes a great many short-lived containers and hardly any reference cycles:
    # the cycle collector would scan its live data again and again for nothing (about 5 % of
    # the analysis). Paused while it runs (renderer.gcpause); refcounting frees the rest.
    from renderer import cache  # a worker's templates come back as the cache keeps them: data only

    with gcpause.paused():
        analysis = Analysis(values, cluster, schema)
        synthetic = synthetic_values(values)

        def one(comp: Component) -> Template | None:
            tpl = None
            if synthetic is not None and _pooled(analysis, comp, synthetic):
                tpl = _ranged(analysis, comp, synthetic, schema)
            return analysis.analyse(comp) if tpl is None else tpl

        found = workers.each(one, components, jobs, cache.tree_dumps, cache.tree_loads)
        return [tpl for tpl in found if tpl is not None]


# --- one template body per node pool ------------------------------------------------------
#
# A component that builds objects per node pool (the driver: a DaemonSet per pool) is read
# twice: once with the fleet's values for the objects that are not per pool (its per-pool
# settings are not varied there: those objects are dropped), and once with one synthetic pool
# (POOL) in place of the fleet's, whose settings (the first pool's) are knobs like any other;
# the objects that carry POOL in their name become the body of a range over driver.pools.
# The result is kept only when it gives exactly the fleet's objects; otherwise the component
# is read the old way (one copy per fleet pool).


def _in_pool(path: Path) -> bool:
    return len(path) > 3 and path[:2] == POOLS


def _added(path: Path, values: dict[str, Any]) -> bool:
    """Is ``path`` a pool setting the chart values add for the range body (``node``, the resolved
    ``driverType``, the empty pool-only keys), not one of the policy?"""
    if not _in_pool(path):
        return False
    key = path[3]
    return key in (NODE, "driverType") or (key in POOL_ONLY and len(path) == 4 and get(values, path) == POOL_ONLY[key])


def synthetic_values(values: dict[str, Any]) -> dict[str, Any] | None:
    """``values`` with the first node pool, renamed :data:`POOL`, as its only pool (None without
    pools), its :data:`OPTIONAL_FACTS` empty and its own :data:`POOL_SECTIONS` left out (the
    body reads the fleet's, merged with each pool's own in the template)."""
    names = pool_names(values)
    if not names:
        return None
    entries = [e for e in values.get("nodePools") or [] if isinstance(e, dict)]
    first = next((e for e in entries if e.get("name") in names), {"name": names[0]})
    pool = get(values, (*POOLS, str(first["name"])))
    node = pool.get(NODE) if isinstance(pool, dict) else None
    if isinstance(node, dict) and any(node.get(k) for k in OPTIONAL_FACTS):  # read as a pool without them
        pool = {**pool, NODE: {**node, **{k: v for k, v in OPTIONAL_FACTS.items() if k in node}}}
    if isinstance(pool, dict) and any(k in pool for k in POOL_SECTIONS):
        pool = {k: v for k, v in pool.items() if k not in POOL_SECTIONS}
    out = assign(values, POOLS, {POOL: pool})
    out["nodePools"] = [{**first, "name": POOL}]
    return out


def _pooled(analysis: Analysis, comp: Component, synthetic: dict[str, Any]) -> bool:
    """Does ``comp`` build an object named after its pool (switched on as the analysis switches
    it on, when the fleet has it off: the vGPU manager of a fleet without sandbox workloads)?"""
    try:
        tree = _pool_blind(analysis, comp)
        if tree is None:
            tree = build_tree(comp, synthetic, analysis.cluster, context=analysis.context.get(comp.name))
        if not tree and comp.key and get(analysis.values, (comp.key, "enabled")) is False:
            saved = analysis.structural
            analysis.structural = [k for k in saved if not _in_pool(k.path)]  # as _ranged's fleet pass asks
            try:
                found = analysis.enabling(comp)
            finally:
                analysis.structural = saved
            if found is None or any(path[:2] == POOLS for path in found[0]):
                return False
            on = synthetic
            for path, value in found[0].items():
                on = assign(on, path, value)
            tree = build_tree(comp, on, analysis.cluster, context=analysis.context.get(comp.name))
    except Exception:  # a builder that refuses the synthetic pool is read the old way
        return False
    return any(POOL in oid or _declared(comp, oid) for oid in tree)


def _pool_blind(analysis: Analysis, comp: Component) -> dict[str, Obj] | None:
    """``comp``'s build from the synthetic values when its build from the chart values read
    nothing of the pools (nor their names): the synthetic values differ only there, so that
    build is this one (None when not known so)."""
    if not SHORTCUTS:
        return None
    tree, (seen, _) = analysis.first_build(comp)
    if tree is None or {POOLS_READ, POOL_NAMES_READ, "nodePools"} & seen:
        return None
    return tree


def _declared(comp: Component, oid: str) -> bool:
    """Is ``oid`` an object ``comp`` declares per pool (:attr:`Component.pool_objects`), under
    the name a pool fact gives it: the declared name, or that name with a suffix (the container
    toolkit's DaemonSet of a fleet whose pools differ in runtime setup is named after its pool)?"""
    return any(oid == name or oid.startswith(name + "-") for name in comp.pool_objects)


def _per_pool(paths: set[Path], names: list[str]) -> set[Path]:
    """Paths of the synthetic pool as the paths of each real pool (the pool's name left out)."""
    out: set[Path] = set()
    for path in paths:
        if path[:3] != (*POOLS, POOL):
            out.add(path)
        elif path[3:] != (NAME_KEY,):
            out |= {(*POOLS, name, *path[3:]) for name in names}
    return out


def _interaction(group: list[Knob], ok: Any) -> Knob:
    """The knob that breaks the shortest failing prefix of ``group``, whose whole fails ``ok``:
    knobs fine alone but not together (two pull-secret lists the builder merges without duplicates)."""
    lo, hi = 1, len(group)  # ok(group[:lo - 1]) holds, ok(group[:hi]) fails
    while lo < hi:
        mid = (lo + hi) // 2
        if ok(group[:mid]):
            lo = mid + 1
        else:
            hi = mid
    return group[lo - 1]


def _pool_gate(gate: Cond) -> Cond | None:
    """The file gate with "this fleet pool is there" read as "some pool is there" (None when a
    pool's absence is what the gate asks for)."""
    out: list[Conj] = []
    for conj in gate:
        atoms: list[Atom] = []
        for atom in conj:
            if len(atom.path) == 3 and atom.path[:2] == POOLS:
                if atom.op != "is" or atom.value is not True:
                    return None
                atom = Atom(POOLS, "is", True)
            if atom not in atoms:
                atoms.append(atom)
        out.append(tuple(atoms))
    return tuple(out)


def _ranged(analysis: Analysis, comp: Component, synthetic: dict[str, Any], schema: dict[str, Any]) -> Template | None:
    saved = analysis.transparent, analysis.structural
    analysis.transparent = [k for k in saved[0] if not _in_pool(k.path)]
    analysis.structural = [k for k in saved[1] if not _in_pool(k.path)]
    try:
        fleet = analysis.analyse(comp)
    finally:
        analysis.transparent, analysis.structural = saved
    if fleet is None:
        return None
    gate = _pool_gate(fleet.gate)
    if gate is None:
        return None
    reader = Analysis(synthetic, analysis.cluster, schema, analysis.context, POOL)
    body = reader.analyse(comp)
    if body is None or len(reader.real_ids) != len(reader.base_ids or ()):
        return None
    # an object the component declares per pool is one whose name a pool fact gives (a
    # placeholder in the analysis): found by its place among the objects built from real values
    declared = {bid for bid, rid in zip(reader.base_ids or (), reader.real_ids, strict=True) if _declared(comp, rid)}
    values = analysis.values
    tpl = Template(fleet.name, gate, {}, pool_key=POOL, booleans=fleet.booleans | body.booleans)
    tpl.pooled = {oid: _in_range(node) for oid, node in body.objects.items() if POOL in oid or oid in declared}
    # a derived leaf is found in the build from real values: its object, by the id the analysis
    # gave it (a precompiled driver's DaemonSet is named after the kernel, a placeholder there)
    as_base = dict(zip(reader.real_ids, reader.base_ids or (), strict=True))
    tpl.pool_derived = [(key, as_base[oid], path) for key, oid, path in body.derived if as_base[oid] in tpl.pooled]
    if not tpl.pooled or len({d[0] for d in tpl.pool_derived}) != len(tpl.pool_derived):
        return None
    names = pool_names(values)
    own = set()
    for name in names:
        for oid, named in zip(tpl.pooled, pooled_objects(tpl, values, name, ["metadata", "name"]), strict=True):
            own.add(f"{oid.split('/', 1)[0]}/{named}")
    tpl.objects = {oid: node for oid, node in fleet.objects.items() if oid not in own}
    tpl.derived = [d for d in fleet.derived if d[1] not in own]
    kept = {d[0] for d in tpl.derived}
    real = analysis.first_build(comp)[0]
    if real is None:  # pragma: no cover - the fleet's analysis built it
        real = build_tree(comp, values, analysis.cluster, context=analysis.context.get(comp.name))
    tpl.generated = dict(sorted(({k: v for k, v in fleet.generated.items() if k in kept} | pooled_generated(tpl, values, real)).items()))
    tpl.fixed = fleet.fixed | _per_pool(body.fixed, names)
    tpl.knobs = fleet.knobs | _per_pool(body.knobs, names)
    got = _template_objects(tpl, {**values, "generated": tpl.generated})
    by_id = {f"{o['kind']}/{o['metadata']['name']}": o for o in got}
    if len(got) != len(real) or by_id != real:
        return None
    return tpl


def _in_range(node: Any) -> Any:
    """``node`` inside the range, where its pool is there: cases that need the pool away are
    dropped, conditions that ask for it lose that part (the toolkit's DaemonSet, which a fleet
    without pools names alike, would print the no-pool name as a dead branch)."""
    if isinstance(node, Variant):
        cases: list[tuple[Cond, Any]] = []
        for cond, case in node.cases:
            kept = tuple(tuple(a for a in conj if not _pool_atom(a)) for conj in cond if not any(_pool_atom(a) and a.value is not True for a in conj))
            if not kept:
                continue
            cases.append((kept, _in_range(case)))
            if () in kept:
                break
        if len(cases) == 1 and () in cases[0][0]:
            return cases[0][1]
        out = Variant(cases)
        if hasattr(node, "name"):
            out.name = node.name  # type: ignore[attr-defined]
        return out
    if isinstance(node, dict):
        return {k: _in_range(v) for k, v in node.items()}
    if isinstance(node, list):
        return [_in_range(v) for v in node]
    return node


def _pool_atom(atom: Atom) -> bool:
    return atom.op == "is" and atom.path == (*POOLS, POOL)


def _default_atom(knob: Knob, other: Any) -> Atom:
    """A ``default`` knob's condition: its value is its default (label False) or another (True)."""
    return Atom(knob.path, "ne" if other else "eq", knob.domain[0])


def _labels(knob: Knob) -> tuple[Any, ...]:
    """Every value a structural knob's conditions speak of."""
    return tuple(knob.domain) if knob.kind == "enum" else (True, False)


def _conj(knobs: list[Knob], cube: helm_logic.Cube, domains: list[tuple[Any, ...]]) -> Conj:
    """The atoms of one product: a knob whose every value is allowed is left out."""
    atoms: list[Atom] = []
    for knob, part, dom in zip(knobs, cube, domains, strict=True):
        if len(part) == len(dom):
            continue
        allowed = [v for v in dom if v in part]
        if knob.kind == "default":
            atoms.append(_default_atom(knob, allowed[0]))
        elif knob.kind != "enum":
            atoms.append(Atom(knob.path, "is", bool(allowed[0])))
        elif len(allowed) == 1:
            atoms.append(Atom(knob.path, "eq", allowed[0]))
        elif len(allowed) == len(dom) - 1:
            atoms.append(Atom(knob.path, "ne", next(v for v in dom if v not in part)))
        else:
            atoms.append(Atom(knob.path, "in", tuple(allowed)))
    return tuple(atoms)


def _ref(results: list[tuple[Conj, dict[str, Obj]]], at: dict[int, Any], base: dict[str, Obj], together: dict[str, Obj] | None) -> dict[str, Obj]:
    """The tree whose order a variant's new item takes (:func:`tset`): the first that holds it,
    or the one with a group's pairs all set (:meth:`Analysis._alone_combos`) when it does."""
    if together and at.get(id(together), MISSING) is not MISSING:
        return together
    return next((t for _, t in results if id(t) in at and at[id(t)] is not MISSING), base)


def _together_first(cases: list[tuple[Cond, Any]], together: dict[str, Obj] | None) -> list[tuple[Cond, Any]]:
    """The cases of a group varied alone with its pairs all set in ``together``
    (:meth:`Analysis._alone_combos`; as they are without): ``(a and b) or (a and b and c and d)``
    is ``a and b``; the pairs all set asked before each pair alone, what leaves the part out
    first, the "else" last. The "else" is the case whose condition always holds: the base
    build's, or "nothing" where :func:`_nothing_last` gave the base the negation of its
    condition (so not told by the base's node: sorted among the others, "nothing" would come
    first, always true, and hide every other case)."""
    if not together:
        return cases
    cases = [(tuple(c for c in cond if not any(set(o) < set(c) for o in cond)), node) for cond, node in cases]
    last = cases[-1:] if () in cases[-1][0] else []
    rest = cases[: len(cases) - len(last)]
    return sorted(rest, key=lambda c: (c[1] is not MISSING, -min(len(conj) for conj in c[0]))) + last


def _absorbed(cond: Cond) -> Cond:
    """``cond`` without the products another one of it is part of (``a or (a and b)`` is ``a``)."""
    out: list[Conj] = []
    for conj in cond:
        if conj not in out and not any(set(o) < set(conj) for o in cond):
            out.append(conj)
    return tuple(out)


def _left_out(tree: dict[str, Obj], tpath: TPath) -> bool:
    """Is the object holding ``tpath`` (below the object itself) missing from ``tree``?"""
    return len(tpath) > 1 and tpath[0] not in tree


def _dnf(knobs: list[Knob], cubes: list[helm_logic.Cube], domains: list[tuple[Any, ...]]) -> Cond:
    """The products as a condition, in the knobs' order (as a person lists them)."""
    order = {k.path: i for i, k in enumerate(knobs)}
    conjs = [_conj(knobs, cube, domains) for cube in cubes]
    return tuple(sorted(conjs, key=lambda c: [order[a.path] for a in c]))
