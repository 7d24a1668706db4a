"""Named templates (``_helpers.tpl``): what the chart's templates print alike, printed once.

A node (a map entry with its key, or a list item) that two or more components print the same
becomes ``define "<chart>.<name>"``; one that they print alike but for one or two literal
strings becomes a ``define`` with those literals as parameters (``include ... (dict "param"
"literal" "Values" .Values)``). The printer (:mod:`renderer.emit.helm_text`) asks
:meth:`Helpers.call` at every node and prints the ``include`` it gets.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

from renderer.emit.helm_ir import (
    MISSING,
    Block,
    Derived,
    Interp,
    MergeBlock,
    Ref,
    Splice,
    Template,
    Variant,
)
from renderer.emit.helm_text import (
    _SCOPE,
    APP_LABELS,
    IDENT,
    WIDTH,
    Out,
    Param,
    _camel,
    _context,
    emit_entries,
    emit_item,
)

HELPER_LINES = 4
"""Smallest repeated node (printed lines) that becomes a named template."""
PARAM_LEAVES = 12
"""Fewest literal strings a node needs to become a named template with parameters."""
MAX_PARAMS = 2
"""Most literals a parameterised named template takes as parameters."""

Site = tuple[str, str, Any]
"""A node that may become a named template: ("entry", key, value) or ("item", "", item)."""


def _sites(node: Any) -> Iterator[Site]:
    """Every map entry with a collection value and every map item of a list, outermost first."""
    if isinstance(node, Variant):
        for _, case in node.cases:
            if case is not MISSING:
                yield from _sites(case)
    elif isinstance(node, dict):
        for key, val in node.items():
            if isinstance(key, str) and isinstance(val, (dict, list)) and val:
                yield ("entry", key, val)
            yield from _sites(val)
    elif isinstance(node, list):
        for item in node:
            for one in _cases(item):
                if isinstance(one, dict) and one:
                    yield ("item", "", one)
            yield from _sites(item)


def _cases(item: Any) -> list[Any]:
    """A list item, or the cases of a variant item (each printed as an item)."""
    return [case for _, case in item.cases] if isinstance(item, Variant) else [item]


class _Interner:
    """A small number per distinct node (equal nodes, equal numbers), computed once per node."""

    def __init__(self) -> None:
        self.table: dict[Any, int] = {}
        self.memo: dict[int, tuple[Any, int]] = {}  # id -> (node kept alive, number)

    def of(self, node: Any) -> int:
        hit = self.memo.get(id(node))
        if hit is not None and hit[0] is node:
            return hit[1]
        key: Any
        if isinstance(node, Variant):
            key = ("v", tuple((repr(cond), self.of(case)) for cond, case in node.cases))
        elif isinstance(node, dict):
            key = ("d", tuple((type(k).__name__, k, self.of(v)) for k, v in node.items()))
        elif isinstance(node, list):
            key = ("l", tuple(self.of(v) for v in node))
        elif node is MISSING:
            key = ("m",)
        else:
            key = ("s", type(node).__name__, node)
        num = self.table.setdefault(key, len(self.table))
        if isinstance(node, (dict, list, Variant)):
            self.memo[id(node)] = (node, num)
        return num


FP = tuple[str, str, int]


def _fingerprint(site: Site, intern: _Interner) -> FP:
    return (site[0], site[1], intern.of(site[2]))


class Helpers:
    """Nodes repeated across the chart's templates, printed once as named templates.

    A node (a map entry with its key, or a list item) whose text would be printed at least
    twice and is at least :data:`HELPER_LINES` lines long becomes ``define "<chart>.<key or
    item name>"``; each place prints ``include ... | nindent N`` instead. The body is printed
    at indent 0, so it is the same text wherever it goes.
    """

    RESERVED = frozenset({"name", "chart", "labels", "selectorLabels", APP_LABELS})
    """Names the chart's own helpers (renderer/data/chart_helpers.tpl) use."""

    def __init__(self, chart: str, templates: list[Template]) -> None:
        self.chart = chart
        self.names: dict[FP, str] = {}
        self.sites: dict[FP, Site] = {}
        self.defines: set[FP] = set()
        """The uses whose site is printed as the body (of a parameterised template, one per name)."""
        self.defining: FP | None = None
        self.intern = _Interner()
        where: dict[FP, list[str]] = {}
        first: dict[FP, Site] = {}
        for tpl in templates:
            for node in _nodes(tpl):
                for site in _sites(node):
                    fp = _fingerprint(site, self.intern)
                    where.setdefault(fp, []).append(tpl.name)
                    first.setdefault(fp, site)
        # what repeats across components, and is worth a name
        pools = {tpl.pool_key for tpl in templates if tpl.pool_key}
        chosen = [
            fp
            for fp, tpls in where.items()
            if len(set(tpls)) >= 2 and _has_action(first[fp][2]) and self._lines(first[fp]) >= HELPER_LINES and not _reads_pool(first[fp][2], pools)
        ]
        for _ in range(4):  # drop helpers that end up used once (all their uses inside a bigger one)
            uses = _uses(templates, {fp: first[fp] for fp in chosen}, self.intern)
            kept = [fp for fp in chosen if uses.get(fp, 0) >= 2]
            if kept == chosen:
                break
            chosen = kept
        taken = set(self.RESERVED)
        for fp in chosen:
            kind, key, node = first[fp]
            base = key if kind == "entry" else str(node.get("name") or "item").lower()
            base = re.sub(r"[^A-Za-z0-9]+", "-", base).strip("-") or "item"
            name = base if base not in taken else f"{base}-{where[fp][0]}"
            k = 1
            while name in taken:
                k += 1
                name = f"{base}-{where[fp][0]}-{k}"
            taken.add(name)
            self.names[fp] = f"{chart}.{name}"
            self.sites[fp] = first[fp]
        self.args: dict[FP, list[tuple[str, str]]] = {}
        """Of a use of a parameterised named template: (parameter, literal) in the body's order."""
        self._parameterised(templates, set(chosen), taken)

    def _parameterised(self, templates: list[Template], exact: set[FP], taken: set[str]) -> None:
        """Nodes of two or more components that differ only in one or two literal strings (the
        config manager sidecar: the process it signals) become one named template with those
        literals as parameters, ``include "<chart>.x" (dict "param" "literal" "Values" .Values)``."""
        shapes = _Shapes()
        groups: dict[tuple[str, str, int], list[tuple[str, Site]]] = {}
        pools = {tpl.pool_key for tpl in templates if tpl.pool_key}
        for tpl in templates:
            for node in _nodes(tpl):
                for site in _sites(node):
                    if _fingerprint(site, self.intern) in exact or not _has_action(site[2]) or _reads_pool(site[2], pools):
                        continue
                    num, leaves = shapes.of(site[2])
                    if len(leaves) >= PARAM_LEAVES:
                        groups.setdefault((site[0], site[1], num), []).append((tpl.name, site))
        done: set[int] = set()  # nodes inside a chosen one: printed by its body
        ranked = sorted(groups.values(), key=lambda g: -len(shapes.of(g[0][1][2])[1]))
        for members in ranked:
            if len({t for t, _ in members}) < 2:
                continue
            members = [(t, site) for t, site in members if id(site[2]) not in done]
            texts = [shapes.of(site[2])[1] for _, site in members]
            differ = [i for i in range(len(texts[0])) if len({ls[i] for ls in texts}) > 1]
            if len({t for t, _ in members}) < 2 or not 1 <= len(differ) <= MAX_PARAMS:
                continue
            kind, key, node = members[0][1]
            params = _param_names(node, differ, shapes)
            if params is None or Helpers._lines(members[0][1]) < HELPER_LINES:
                continue
            base = key if kind == "entry" else str(node.get("name") or "item").lower()
            base = re.sub(r"[^A-Za-z0-9]+", "-", base).strip("-") or "item"
            name, k = base, 1
            while name in taken:
                k += 1
                name = f"{base}-{k}"
            taken.add(name)
            body = shapes.substitute(node, dict(zip(differ, params, strict=True)))
            fp0 = _fingerprint(members[0][1], self.intern)
            self.names[fp0] = f"{self.chart}.{name}"
            self.sites[fp0] = (kind, key, body)
            for (_, site), ls in zip(members, texts, strict=True):
                fp = _fingerprint(site, self.intern)
                self.names[fp] = self.names[fp0]
                self.args[fp] = [(p, ls[i]) for i, p in zip(differ, params, strict=True)]
                done.update(_ids(site[2]))
            self.defines.add(fp0)

    def call(self, site: Site, ind: int) -> str | None:
        """The ``include`` that prints ``site`` (a named template), or None."""
        name = self.use(site)
        if name is None:
            return None
        args = self.args.get(_fingerprint(site, self.intern))
        if args is None:
            return f'include "{name}" {_context()}'
        pairs = [f"{json.dumps(p)} {json.dumps(v)}" for p, v in args] + [f'"Values" {"$.Values" if _SCOPE else ".Values"}']
        one = f'include "{name}" (dict ' + " ".join(pairs) + ")"
        if ind + len(one) + 20 <= WIDTH:
            return one
        return f'include "{name}" (dict' + "".join("\n" + " " * (ind + 4) + p for p in pairs) + ")"

    def use(self, site: Site) -> str | None:
        if not self.names or not isinstance(site[2], (dict, list)) or not site[2] or not isinstance(site[1], str):
            return None
        fp = _fingerprint(site, self.intern)
        if fp == self.defining or fp not in self.names:
            return None
        return self.names[fp]

    def body(self, fp: FP, helpers: Helpers | None = None) -> str:
        use = helpers or self
        saved, use.defining = use.defining, fp
        try:
            return self.print_site(self.sites[fp], use)
        finally:
            use.defining = saved

    @staticmethod
    def _lines(site: Site) -> int:
        return Helpers.print_site(site, None).count("\n")

    @staticmethod
    def print_site(site: Site, helpers: Helpers | None) -> str:
        out = Out(helpers)
        kind, key, node = site
        if kind == "entry":
            emit_entries(out, {key: node}, 0)
        else:
            emit_item(out, node, 0, "")
        return out.result()

    def text(self) -> str:
        """The ``define`` blocks, in the order of first use."""
        out = []
        for fp, name in self.names.items():
            if fp in self.args and fp not in self.defines:
                continue  # another use of a parameterised template
            body = self.body(fp)
            out.append('{{- define "' + name + '" -}}\n' + body + "{{- end -}}\n")
        return "\n".join(out)


class _Shapes:
    """Nodes numbered up to their literal strings (the "shape"), with those strings in order."""

    def __init__(self) -> None:
        self.table: dict[Any, int] = {}
        self.memo: dict[int, tuple[Any, int, tuple[str, ...]]] = {}

    def of(self, node: Any) -> tuple[int, tuple[str, ...]]:
        hit = self.memo.get(id(node))
        if hit is not None and hit[0] is node:
            return hit[1], hit[2]
        key: Any
        leaves: tuple[str, ...] = ()
        parts: list[Any] = []
        if isinstance(node, Variant):
            for cond, case in node.cases:
                num, sub = self.of(case)
                parts.append((repr(cond), num))
                leaves += sub
            key = ("v", tuple(parts))
        elif isinstance(node, dict):
            for k, v in node.items():
                num, sub = self.of(v)
                parts.append((type(k).__name__, k, num))
                leaves += sub
            key = ("d", tuple(parts))
        elif isinstance(node, list):
            nums = []
            for v in node:
                num, sub = self.of(v)
                nums.append(num)
                leaves += sub
            key = ("l", tuple(nums))
        elif type(node) is str:
            key, leaves = ("str",), (node,)
        elif node is MISSING:
            key = ("m",)
        else:
            key = ("s", type(node).__name__, node)
        num = self.table.setdefault(key, len(self.table))
        if isinstance(node, (dict, list, Variant)):
            self.memo[id(node)] = (node, num, leaves)
        return num, leaves

    def substitute(self, node: Any, params: dict[int, str]) -> Any:
        """``node`` with its i-th literal string replaced by ``Param(params[i])``."""
        count = [0]

        def walk(n: Any) -> Any:
            if isinstance(n, Variant):
                return Variant([(c, walk(case)) for c, case in n.cases])
            if isinstance(n, dict):
                return {k: walk(v) for k, v in n.items()}
            if isinstance(n, list):
                return [walk(v) for v in n]
            if type(n) is str:
                i = count[0]
                count[0] += 1
                return Param(params[i]) if i in params else n
            return n

        return walk(node)


def _param_names(node: Any, positions: list[int], shapes: _Shapes) -> list[str] | None:
    """A parameter name per differing literal: the ``name`` of the env variable it is the value
    of, camelCased (``PROCESS_TO_SIGNAL`` -> ``processToSignal``), else the key it is the value of."""
    found: dict[int, str] = {}
    count = [0]

    def walk(n: Any, key: str) -> None:
        if isinstance(n, Variant):
            for _, case in n.cases:
                walk(case, key)
        elif isinstance(n, dict):
            for k, v in n.items():
                owner = n.get("name") if k == "value" and type(n.get("name")) is str else k
                walk(v, owner if isinstance(owner, str) else "")
        elif isinstance(n, list):
            for v in n:
                walk(v, key)
        elif type(n) is str:
            if count[0] in positions:
                found[count[0]] = key
            count[0] += 1

    walk(node, "")
    names: list[str] = []
    for i in positions:
        name = _camel(found.get(i, ""))
        if not IDENT.fullmatch(name or "-") or name == "Values" or name in names:
            return None
        names.append(name)
    return names


def _ids(node: Any) -> Iterator[int]:
    yield id(node)
    if isinstance(node, Variant):
        for _, case in node.cases:
            yield from _ids(case)
    elif isinstance(node, dict):
        for v in node.values():
            yield from _ids(v)
    elif isinstance(node, list):
        for v in node:
            yield from _ids(v)


def _nodes(tpl: Template) -> list[Any]:
    return [*tpl.objects.values(), *tpl.pooled.values()]


def _reads_pool(node: Any, pools: set[str]) -> bool:
    """Does the node read a pool's own values (printed as ``$pool`` / ``$name``, only inside the range)?"""
    text = repr(node)
    return any(key in text for key in pools)


def _has_action(node: Any) -> bool:
    """Does the node take anything from the values? (Literal YAML stays where it is.)"""
    if isinstance(node, (Variant, Ref, Interp, Block, Splice, MergeBlock, Derived)):
        return True
    if isinstance(node, dict):
        return any(isinstance(k, Splice) or _has_action(v) for k, v in node.items())
    if isinstance(node, list):
        return any(_has_action(v) for v in node)
    return False


def _children(node: dict[Any, Any] | list[Any]) -> Iterator[tuple[Site | None, Any]]:
    """Each child of a map or list, with the site it is when it may become a named template."""
    if isinstance(node, dict):
        for key, val in node.items():
            named = isinstance(key, str) and isinstance(val, (dict, list)) and bool(val)
            yield (("entry", key, val) if named else None), val
    else:
        for item in node:
            yield (("item", "", item) if isinstance(item, dict) and item else None), item


def _uses(templates: list[Template], chosen: dict[FP, Site], intern: _Interner) -> dict[FP, int]:
    """How often each chosen node would be included: the printer does not look inside an
    include, so a node inside a chosen one is counted once per printing of that one."""
    counts: dict[FP, int] = {}

    def walk(node: Any, defining: FP | None, item: bool = False) -> None:
        if isinstance(node, Variant):
            for _, case in node.cases:
                if case is MISSING:
                    continue
                if not (item and isinstance(case, dict) and case and visit(("item", "", case), defining)):
                    walk(case, defining)
        elif isinstance(node, (dict, list)):
            for site, child in _children(node):
                if site is None or not visit(site, defining):
                    walk(child, defining, isinstance(node, list))

    def visit(site: Site, defining: FP | None) -> bool:
        fp = _fingerprint(site, intern)
        if fp in chosen and fp != defining:
            counts[fp] = counts.get(fp, 0) + 1
            return True
        return False

    for tpl in templates:
        for node in _nodes(tpl):
            walk(node, None)
    for fp, (_, _, node) in chosen.items():
        walk(node, fp)
    return counts
