"""The chart template tree: what :mod:`renderer.emit.helm_ir` reads off the component builds,
:mod:`renderer.emit.helm_eval` evaluates and :mod:`renderer.emit.helm_text` prints.

A template is a component's objects with nodes where the values come in: ``Ref`` (a scalar),
``Interp`` (text with scalars inside), ``Joined`` (a map of booleans as ``key=true`` text),
``Block`` / ``Splice`` / ``MergeBlock`` (collections), ``Derived`` (a computed value) and
``Variant`` (``if``/``else`` on structural values, its conditions ``Cond``: a disjunction of
conjunctions of ``Atom``). Paths into it (``TPath``) name list items by :func:`item_name`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from renderer.emit.helm_values import Path
from renderer.merge import deep_merge

Elem = str | tuple[str, str]
TPath = tuple[Elem, ...]
POOLS: Path = ("driver", "pools")
NAME_KEY = "\x00name"
"""``(*POOLS, POOL, NAME_KEY)``: the pool's name (``$name``), a path no values file can hold."""
KEYS_KEY = "\x00keys"


# --- the template tree ---------------------------------------------------------------


@dataclass(frozen=True)
class Ref:
    """A whole scalar taken from the values."""

    path: Path
    quote: bool
    text: bool = False
    """A boolean written as the string ``"true"`` / ``"false"`` (an env value that is the knob)."""
    number: bool = False
    """An integer knob: printed through ``int`` (Helm reads a values file's numbers as floats,
    which print as ``1.2e+06``)."""


@dataclass(frozen=True)
class Interp:
    """Text with values inside: literal parts and Refs."""

    parts: tuple[str | Ref, ...]


@dataclass(frozen=True)
class Joined:
    """A values map of booleans as text: ``key=true`` / ``key=false`` in key order, joined
    with commas (:func:`joined_text`); the ``joined`` helper of chart_helpers.tpl prints it.
    With ``names``, a list of pull-secret references as their names joined with commas
    (:func:`names_text`, the ``names`` helper: the validator's ``VALIDATOR_IMAGE_PULL_SECRETS``)."""

    path: Path
    names: bool = False


def joined_text(value: Any) -> str:
    """A map of booleans as the builders join it (``dra_driver.feature_gates``), and as Helm's
    ``range`` over a map gives it: keys sorted."""
    items = value.items() if isinstance(value, dict) else ()
    return ",".join(f"{k}={'true' if v else 'false'}" for k, v in sorted(items))


def names_text(value: Any) -> str:
    """Pull secrets' names joined with commas, as the builders join them."""
    from renderer.components.common import secret_name

    return ",".join(secret_name(ref) for ref in value) if isinstance(value, list) else ""


PULL_SECRETS = "imagePullSecrets"
"""The pod key whose lists the builders join keeping each name once (``common.pull_secret_refs``)."""


def unique_secrets(items: list[Any]) -> list[Any]:
    """Pull-secret references joined from several lists as the builders join them: in order,
    each name once, the first kept (the operator's addPullSecrets)."""
    from renderer.components.common import secret_name

    out: list[Any] = []
    names: set[str] = set()
    for ref in items:
        name = secret_name(ref)
        if name not in names:
            names.add(name)
            out.append(ref)
    return out


@dataclass(frozen=True)
class Block:
    """A whole collection from the values as a map entry's value; the entry is left out when empty."""

    path: Path


@dataclass(frozen=True)
class Splice:
    """Items of a values list (or entries of a values map) inserted among fixed ones. Two or
    more map splices of one map are merged deeply (:func:`merged_maps`), a later one winning, in
    the first one's place: they stand in the builder's precedence (:meth:`Analysis._precedence`).
    As a map key its value is None, or a :class:`Variant` whose cases are None (spliced) or
    ``MISSING`` (not spliced: a key the release prunes)."""

    path: Path
    is_map: bool = False


@dataclass(frozen=True)
class Derived:
    """A value gpu-render computes from the rendered objects (a config digest) or from the pool
    list (``POOL_RULES``, node-selector terms): ``generated.<key>``."""

    key: str
    block: bool = False
    """A collection (node-selector terms), printed with ``toYaml``; else a string."""


@dataclass(frozen=True)
class MergeBlock:
    """A map entry made only of values maps merged together (deeply, a later one winning: the
    builder's precedence); left out when the merge is empty."""

    paths: tuple[Path, ...]


@dataclass(frozen=True)
class Atom:
    path: Path
    op: str  # "is": truthiness equals value; "eq" / "ne": (not) equals value; "in": one of value (a tuple)
    value: Any


Conj = tuple[Atom, ...]
Cond = tuple[Conj, ...]  # disjunction of conjunctions


class _Missing:
    def __repr__(self) -> str:
        return "MISSING"

    def __reduce__(self) -> str:
        return "MISSING"  # unpickles as the module's one MISSING (templates compare it with `is`)


MISSING: Any = _Missing()


@dataclass
class Variant:
    """The node at one path, chosen by structural values: ``[(condition, node or MISSING)]``."""

    cases: list[tuple[Cond, Any]]


@dataclass
class Template:
    """One component's template: file-level gate plus objects keyed ``Kind/name``."""

    name: str
    gate: Cond
    objects: dict[str, Any]
    fixed: set[Path] = field(default_factory=set)
    knobs: set[Path] = field(default_factory=set)
    derived: list[tuple[str, str, TPath]] = field(default_factory=list)
    """(generated key, object Kind/name, path in the object) of every computed value."""
    generated: dict[str, Any] = field(default_factory=dict)
    """Computed value per key: a string, or a collection (node-selector terms)."""
    pooled: dict[str, Any] = field(default_factory=dict)
    """Objects printed once per node pool, inside ``range $name, $pool := .Values.driver.pools``:
    paths ``(*POOLS, pool_key, ...)`` are the pool's (``$pool...``), the rest the chart's (``$.Values``)."""
    pool_key: str = ""
    pool_derived: list[tuple[str, str, TPath]] = field(default_factory=list)
    """(generated key with ``pool_key`` for the pool's name, pooled object key, path) of every
    computed value of the pooled objects."""
    booleans: frozenset[Path] = frozenset()
    """The boolean knobs among those that make variants: a condition of these (and comparisons)
    is itself a boolean, so a ``"true"`` / ``"false"`` it chooses prints as ``{{ cond | quote }}``."""


# --- paths in the tree and values ---------------------------------------------------


def is_empty(value: Any) -> bool:
    return value in ("", 0, None) or value == [] or value == {}


def item_name(item: Any) -> str | None:
    """Identity of a list item: its ``name``, or the sentinel of a spliced block."""
    if type(item) is dict and type(item.get("name")) is str:  # the common item (no sentinel is keyed "name")
        return item["name"]  # type: ignore[no-any-return]
    if isinstance(item, Variant):
        return getattr(item, "name", None)
    if not isinstance(item, dict):
        return None
    if len(item) == 1:
        ((k, v),) = item.items()
        if isinstance(k, str) and k == v and k.startswith("zzgrb"):
            return k
    name = item.get("name")
    if "name" not in item and isinstance(item.get("port"), str):
        name = item["port"]  # a ServiceMonitor endpoint: named by the Service port it scrapes
    elif "name" not in item:
        return "=" + repr(item)  # no name (an RBAC rule): its content is its identity
    return name if isinstance(name, str) else None


def find_item(node: list[Any], name: str) -> Any:
    """The item of ``node`` that :func:`_names` names ``name``, stopping at it."""
    seen: dict[str, int] = {}
    for item in node:
        found = item_name(item)
        if found is None:
            continue
        if isinstance(item, Variant):  # named by tset, occurrence included
            raw, _, k = found.partition("#")
            seen[raw] = max(seen.get(raw, 0), int(k or 1))
        else:
            count = seen[found] = seen.get(found, 0) + 1
            if count > 1:
                found = f"{found}#{count}"
        if found == name:
            return item
    return MISSING


def tget(node: Any, path: TPath) -> Any:
    for elem in path:
        if isinstance(elem, tuple):
            if not isinstance(node, list):
                return MISSING
            node = find_item(node, elem[1])
            if node is MISSING:
                return MISSING
        else:
            if not isinstance(node, dict) or elem not in node:
                return MISSING
            node = node[elem]
    return node


def bool_text(value: Any) -> Any:
    return ("true" if value else "false") if type(value) is bool else value


def merged_maps(found: list[Any]) -> dict[str, Any]:
    """The values maps merged one over the other as the builders merge a pool's settings over
    the fleet's (renderer.merge): deeply, a later one winning, lists replaced, a null deleting."""
    out: dict[str, Any] = {}
    for one in found:
        if isinstance(one, dict):
            out = deep_merge(out, one)
    return out
