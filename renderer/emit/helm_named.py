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
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from typing import Any

from renderer.emit.helm_text import (
    _LITERALS,
    _SCOPE,
    _VARS,
    APP_LABELS,
    BOOLEANS,
    IDENT,
    PARAM_ROOT,
    Out,
    Param,
    _camel,
    _context,
    _repeated,
    emit_entries,
    emit_item,
    emit_items,
    packed,
    pool_sections,
    values_expr,
)
from renderer.emit.helm_tree import (
    MISSING,
    NAME_KEY,
    Atom,
    Block,
    Cond,
    Derived,
    Interp,
    MergeBlock,
    Ref,
    Splice,
    Template,
    Variant,
)
from renderer.emit.helm_values import Path

HELPER_LINES = 4
"""Smallest repeated node (printed lines) that becomes a named template."""
PARAM_LEAVES = 12
"""Fewest literal strings a node needs to become a named template with parameters."""
MAX_PARAMS = 2
"""Most literals a parameterised named template takes as parameters."""

Site = tuple[str, str, Any]
"""A node that may become a named template: ("entry", key, value) or ("item", "", item)."""


def _sites(node: Any, intern: _Interner) -> list[Site]:
    """Every map entry with a collection value and every map item of a list that takes
    something from the values (:meth:`_Interner.acts`), outermost first. Literal YAML never
    becomes a named template (it stays where it is), and nothing inside it takes values: not
    walked (most of a template: the CRDs, the fixed parts of each object)."""
    out: list[Site] = []
    _collect_sites(node, out, intern.acts)
    return out


def _collect_sites(node: Any, out: list[Site], acts: Callable[[Any], bool]) -> None:
    """:func:`_sites` of ``node`` appended to ``out`` (one list, no generator per level)."""
    if isinstance(node, Variant):
        for _, case in node.cases:
            if case is not MISSING:
                _collect_sites(case, out, acts)
    elif isinstance(node, dict):
        if not acts(node):
            return
        for key, val in node.items():
            if val and isinstance(key, str) and isinstance(val, (dict, list)) and acts(val):
                out.append(("entry", key, val))
            if isinstance(val, (dict, list, Variant)):
                _collect_sites(val, out, acts)
    elif isinstance(node, list) and acts(node):
        _collect_items(node, out, acts)


def _collect_items(node: list[Any], out: list[Site], acts: Callable[[Any], bool]) -> None:
    """:func:`_collect_sites` of a list that takes values."""
    for i, item in enumerate(node):
        if optional_item(node, i):
            out.append(("item", "", item))
        for one in item.cases if isinstance(item, Variant) else ((None, item),):
            if isinstance(one[1], dict) and one[1] and acts(one[1]):
                out.append(("item", "", one[1]))
        if isinstance(item, (dict, list, Variant)):
            _collect_sites(item, out, acts)


def optional_item(items: list[Any], i: int) -> bool:
    """Is ``items[i]`` a list item behind one condition of its own (``HOST_ROOT`` where
    ``hostPaths.rootFS`` is not ``/``)? It becomes a named template as a whole, condition and
    all, when it repeats. One comparison (a value away from its default) that the items beside
    it do not share (those are printed in one ``if``, a run)."""
    item = items[i]
    if not (isinstance(item, Variant) and len(item.cases) == 2 and item.cases[1][1] is MISSING):
        return False
    cond, case = item.cases[0]
    if not (isinstance(case, dict) and case and len(cond) == 1 and len(cond[0]) == 1 and cond[0][0].op == "ne"):
        return False
    return not any(isinstance(o, Variant) and o.cases[0][0] == cond for o in items[max(i - 1, 0) : i] + items[i + 1 : i + 2])


def _site_name(node: Any) -> str:
    """The name a list item's named template is made from: the item's (its case's) ``name``."""
    if isinstance(node, Variant):
        node = node.cases[0][1]
    return str(node.get("name") or "item").lower()


def _cases(item: Any) -> list[Any]:
    """A list item, or the cases of a variant item (each printed as an item)."""
    return [case for _, case in item.cases] if isinstance(item, Variant) else [item]


ACTIONS = (Variant, Ref, Interp, Block, Splice, MergeBlock, Derived)
"""Leaves (and variants) that take something from the values (:meth:`_Interner.acts`)."""


class _Interner:
    """What the named templates are chosen by, computed once per node of the templates in one
    walk (:meth:`facts`): a small number per distinct node (equal nodes, equal numbers); its
    shape's number (equal but for literal strings) and how many literal strings it has; whether
    it takes anything from the values (literal YAML stays where it is); whether it reads a
    pool's own values, printed as ``$pool`` / ``$name`` only inside the range: whether a pool's
    key (``pools``) is in its ``repr``, asked part by part (a key is a placeholder, letters and
    digits, so it never spans two parts' texts)."""

    def __init__(self, pools: set[str] | None = None) -> None:
        self.table: dict[Any, int] = {}
        self.shapes: dict[Any, int] = {}
        self.pools = pools or set()
        self.memo: dict[int, tuple[Any, Facts]] = {}
        """Facts of collections by id (the node kept alive with them)."""
        self._strs: dict[str, Facts] = {}
        """Facts of strings by value (the most common node: a template has thousands)."""
        self._leaves: dict[tuple[type, Any], Facts] = {}
        """Facts of the other leaves by type and value (a ``Ref``'s ``repr`` made once per value:
        its fields are strings and booleans, so equal leaves have equal texts)."""
        self._one_pool = next(iter(self.pools)) if len(self.pools) == 1 else None
        self._str_shape = self.shapes.setdefault(("str",), 0)

    def of(self, node: Any) -> int:
        hit = self.memo.get(id(node))  # (most questions are of a collection already walked)
        if hit is not None and hit[0] is node:
            return hit[1][0]
        return self.facts(node)[0]

    def shape(self, node: Any) -> tuple[int, int]:
        """(the node's shape number, how many literal strings it has)."""
        found = self.facts(node)
        return found[1], found[2]

    def acts(self, node: Any) -> bool:
        hit = self.memo.get(id(node))
        if hit is not None and hit[0] is node:
            return hit[1][3]
        return self.facts(node)[3]

    def reads_pool(self, node: Any) -> bool:
        return self.facts(node)[4]

    def facts(self, node: Any) -> Facts:
        """(number, shape number, literal strings, takes values, reads a pool) of ``node``."""
        if type(node) is str:
            found = self._strs.get(node)
            if found is None:
                found = self._strs[node] = (self._leaf(node), self._str_shape, 1, False, self._mentions(node))
            return found
        hit = self.memo.get(id(node))
        if hit is not None and hit[0] is node:
            return hit[1]
        if isinstance(node, (dict, list, Variant)):
            found = self._collection(node)
            self.memo[id(node)] = (node, found)
            return found
        return self._other(node)

    def _collection(self, node: dict[Any, Any] | list[Any] | Variant) -> Facts:
        """:meth:`facts` of a map, list or variant, from its children's (each asked once)."""
        nums: list[Any] = []
        forms: list[Any] = []
        count = 0
        acts = pooly = False
        facts = self.facts
        if isinstance(node, Variant):
            acts = True
            for cond, case in node.cases:
                num, form, sub, _, inner = facts(case)
                text = repr(cond)
                nums.append((text, num))
                forms.append((text, form))
                count += sub
                pooly = pooly or inner or self._mentions(text)
        elif isinstance(node, dict):
            one = self._one_pool
            strs = self._strs  # (a string's facts looked up here: most values are strings)
            for k, v in node.items():
                num, form, sub, act, inner = (type(v) is str and strs.get(v)) or facts(v)
                if type(k) is str:
                    nums.append(("str", k, num))
                    forms.append(("str", k, form))
                    count += sub
                    acts = acts or act
                    pooly = pooly or inner or (one in k if one is not None else self._mentions(k))
                else:
                    name = type(k).__name__
                    nums.append((name, k, num))
                    forms.append((name, k, form))
                    count += sub
                    acts = acts or act or isinstance(k, Splice)
                    pooly = pooly or inner or self._mentions(repr(k))
        else:
            strs = self._strs
            for v in node:
                num, form, sub, act, inner = (type(v) is str and strs.get(v)) or facts(v)
                nums.append(num)
                forms.append(form)
                count += sub
                acts = acts or act
                pooly = pooly or inner
        tag = "v" if isinstance(node, Variant) else "d" if isinstance(node, dict) else "l"
        key, shape = (tag, tuple(nums)), (tag, tuple(forms))
        return (self.table.setdefault(key, len(self.table)), self.shapes.setdefault(shape, len(self.shapes)), count, acts, pooly)

    def _other(self, node: Any) -> Facts:
        """:meth:`facts` of a leaf that is not a string (a ``Ref``, a number, ``MISSING``)."""
        memo = (type(node), node)
        found = self._leaves.get(memo)
        if found is None:
            key: Any = ("m",) if node is MISSING else ("s", type(node).__name__, node)
            pooly = node is not MISSING and bool(self.pools) and self._mentions(repr(node))
            found = self._leaves[memo] = (self.table.setdefault(key, len(self.table)), self.shapes.setdefault(key, len(self.shapes)), 0, isinstance(node, ACTIONS), pooly)
        return found

    def _leaf(self, node: str) -> int:
        """:meth:`of` of a string (the common leaf, asked without the checks for a collection)."""
        return self.table.setdefault(("s", "str", node), len(self.table))

    def _mentions(self, text: str) -> bool:
        """Is a pool's key in ``text``? (Most charts have one synthetic pool: no generator for it.)"""
        if len(self.pools) == 1:
            (key,) = self.pools
            return key in text
        return any(key in text for key in self.pools)


Facts = tuple[int, int, int, bool, bool]


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
        _LITERALS.append(self)  # (the lines of a site are counted with the literal maps' texts kept)
        try:
            self._find(chart, templates)
        finally:
            _LITERALS.pop()

    def _find(self, chart: str, templates: list[Template]) -> None:
        """What :meth:`__init__` does: the named templates of ``templates``."""
        self.chart = chart
        self.booleans: frozenset[Path] = frozenset().union(*(tpl.booleans for tpl in templates))
        """The boolean knobs of all the templates (for :func:`helm_text.template_text`)."""
        self.names: dict[FP, str] = {}
        self.sites: dict[FP, Site] = {}
        self.defines: set[FP] = set()
        """The uses whose site is printed as the body (of a parameterised template, one per name)."""
        self.defining: FP | None = None
        pools = {tpl.pool_key for tpl in templates if tpl.pool_key}
        self.intern = _Interner(pools)
        self._hoisted: dict[int, tuple[Any, list[tuple[str, Variant]]]] = {}
        """:meth:`repeated` of each object, by id (the object kept alive with it)."""
        self._literals: dict[tuple[int, int, str | None], str | None] = {}
        """:meth:`literal` by (the map's number, indentation, pool scope)."""
        self._site_lists: dict[int, tuple[Any, list[Site]]] = {}
        """:func:`_sites` of each top-level node of the templates, by id (three passes read them)."""
        where: dict[FP, list[str]] = {}
        first: dict[FP, Site] = {}
        for tpl in templates:
            for node in _nodes(tpl):
                for site in self._sites_of(node):
                    num, _, _, acts, _ = self.intern.facts(site[2])
                    if not acts:  # literal YAML stays where it is (most sites)
                        continue
                    fp = (site[0], site[1], num)
                    where.setdefault(fp, []).append(tpl.name)
                    first.setdefault(fp, site)
        # what repeats across components, and is worth a name
        chosen = [
            fp
            for fp, tpls in where.items()
            if len(set(tpls)) >= 2
            and self._lines(first[fp]) >= HELPER_LINES
            and not self.intern.reads_pool(first[fp][2])
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
            base = key if kind == "entry" else _site_name(node)
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
        self.sections: dict[FP, Path] = {}
        """Of a use of a named template with a values section as a parameter: that section."""
        self.pooled: dict[FP, str] = {}
        """Of a named template printed from the range over the pools: the synthetic pool's key
        (its body reads ``$pool``, passed as ``pool``)."""
        self.carried: dict[FP, list[tuple[str, Variant | None]]] = {}
        """Of a named template printed from the range: the object's variables (``$metadataName``;
        ``$name``, the pool's name, with no variant) its body reads, passed by name."""
        self._parameterised(templates, set(chosen), taken)
        self._sectioned(templates, taken)
        self._pool_repeats(templates, taken)
        self._kinds = {fp[:2] for fp in self.names}
        """(kind, key) of the named sites: a site of another is none of them (:meth:`use`)."""

    def _pool_repeats(self, templates: list[Template], taken: set[str]) -> None:
        """A map entry printed twice or more in one pooled object (the driver DaemonSet's labels,
        in its metadata and in its pod template, as charts print their ``labels`` helper twice)
        becomes a named template of that component, passed the pool and the object's variables
        it reads: ``include "<chart>.driver-labels" (dict "metadataName" $metadataName "pool"
        $pool "Values" $.Values)``, and ``"name" $name`` when it reads the pool's name. Outermost
        first, and only where the chart gets shorter for it (counting the ``define``)."""
        for tpl in templates:
            for node in tpl.pooled.values():
                hoisted = self.repeated(node)
                counts: dict[FP, list[Site]] = {}
                inside: set[int] = set()  # printed by a named template already (the GDS and GDRCopy sidecars)
                for site in self._sites_of(node):
                    if id(site[2]) in inside:
                        continue
                    if _fingerprint(site, self.intern) in self.names:
                        inside.update(_ids(site[2]))
                    elif site[0] == "entry" and self.intern.acts(site[2]):
                        counts.setdefault(_fingerprint(site, self.intern), []).append(site)
                done: set[int] = set()
                for fp, sites in counts.items():
                    site = sites[0]
                    if len(sites) < 2 or fp in self.names or id(site[2]) in done or Helpers._lines(site) < HELPER_LINES:
                        continue
                    text = repr(site[2])
                    carried: list[tuple[str, Variant | None]] = [(var, variant) for var, variant in hoisted if repr(variant) in text]
                    for _, variant in carried:
                        text = text.replace(repr(variant), "")
                    if repr(NAME_KEY)[1:-1] in text:  # (as repr writes it) the pool's name, `$name`
                        carried.append(("name", None))
                    lines = Helpers._lines(site)
                    if len(sites) * lines <= len(sites) + lines + 4 + len(carried):
                        continue  # no shorter: the includes, `define`, `end`, a blank and a line per parameter
                    base = re.sub(r"[^A-Za-z0-9]+", "-", f"{tpl.name}-{site[1]}").strip("-")
                    name, k = base, 1
                    while name in taken:
                        k += 1
                        name = f"{base}-{k}"
                    taken.add(name)
                    self.names[fp] = f"{self.chart}.{name}"
                    self.sites[fp] = site
                    self.pooled[fp] = tpl.pool_key
                    self.carried[fp] = carried
                    for one in sites:
                        done.update(_ids(one[2]))

    def repeated(self, node: Any) -> list[tuple[str, Variant]]:
        """:func:`helm_text._repeated` of an object, walked once: a pooled object's is asked
        here (:meth:`_pool_repeats`) and again when the object is printed."""
        hit = self._hoisted.get(id(node))
        if hit is None or hit[0] is not node:
            hit = self._hoisted[id(node)] = (node, _repeated(node, self.intern.acts))
        return hit[1]

    def literal(self, node: dict[Any, Any], ind: int, make: Callable[[Out, dict[Any, Any], int], str | None]) -> str | None:
        """The text of a map that takes nothing from the values printed at ``ind`` (``make``:
        the printer, given an ``Out`` without named templates: such a map is none and holds
        none), made once per distinct map: it reads no variable, condition or named template,
        so equal maps print equal text at one indentation (the pool's scope is in the key for a
        ``Joined`` leaf's ``$pool``). None: print it in place."""
        key = (self.intern.of(node), ind, _SCOPE[-1] if _SCOPE else None)
        if key not in self._literals:
            self._literals[key] = make(Out(), node, ind)
        return self._literals[key]

    def _sites_of(self, node: Any) -> list[Site]:
        """:func:`_sites` of a top-level node of the templates, listed once."""
        hit = self._site_lists.get(id(node))
        if hit is None or hit[0] is not node:
            hit = self._site_lists[id(node)] = (node, _sites(node, self.intern))
        return hit[1]

    def _sectioned(self, templates: list[Template], taken: set[str]) -> None:
        """List items of one pool body alike but for the values section they read and up to
        :data:`MAX_PARAMS` + 1 literal strings (the GDS and GDRCopy sidecars of the driver: name,
        script, probe; ``gds`` / ``gdrcopy``) become one named template, the section passed as
        ``section`` and the pool as ``pool``: ``include ... (dict "name" "nvidia-fs-ctr" ...
        "section" $.Values.gds "pool" $pool "Values" $.Values)``. A literal's part all uses share
        (up to a space) stays in the body: ``exec {{ $.args }} install``."""
        shapes = _Shapes(sections=True)
        for tpl in templates:
            groups: dict[int, list[Site]] = {}
            for node in tpl.pooled.values():
                for site in self._sites_of(node):
                    if site[0] != "item" or isinstance(site[2], Variant) or _fingerprint(site, self.intern) in self.names or not self.intern.acts(site[2]):
                        continue
                    num, count = shapes.of(site[2])
                    if count >= PARAM_LEAVES:
                        groups.setdefault(num, []).append(site)
            done: set[int] = set()
            for members in sorted(groups.values(), key=lambda g: -shapes.of(g[0][2])[1]):
                members = [m for m in members if id(m[2]) not in done]
                if len(members) < 2:
                    continue
                texts = [shapes.leaves(m[2]) for m in members]
                differ = [i for i in range(len(texts[0])) if len({ls[i] for ls in texts}) > 1]
                literal = [i for i in differ if type(texts[0][i]) is str]
                section = [i for i in differ if i not in literal]
                # one section per use, the same at every place it differs
                per_use = [{ls[i] for i in section} for ls in texts]
                if not section or not 1 <= len(literal) <= MAX_PARAMS + 1 or any(len(u) != 1 for u in per_use):
                    continue
                node = members[0][2]
                names = _param_names(node, literal, shapes)
                if names is None or {"section", "pool"} & set(names) or NAME_KEY in repr(node) or Helpers._lines(members[0]) < HELPER_LINES:
                    continue  # (the pool's name, `$name`, is not passed)
                cuts = [_shared_ends([str(ls[i]) for ls in texts]) for i in literal]
                words = [w for w in re.split(r"[^A-Za-z0-9]+", str(node.get("name") or "item").lower()) if w]
                others = [re.split(r"[^A-Za-z0-9]+", str(m[2].get("name") or "").lower()) for m in members[1:]]
                base = "-".join([tpl.name, *(w for w in words if all(w in o for o in others))])
                name, k = base, 1
                while name in taken:
                    k += 1
                    name = f"{base}-{k}"
                taken.add(name)
                params: dict[int, str | Param] = {i: Param(n, pre, suf) for i, n, (pre, suf) in zip(literal, names, cuts, strict=True)}
                body = shapes.substitute(node, params, {i: (PARAM_ROOT, "section") for i in section})
                fp0 = _fingerprint(members[0], self.intern)
                self.names[fp0] = f"{self.chart}.{name}"
                self.sites[fp0] = ("item", "", body)
                self.pooled[fp0] = tpl.pool_key
                for site, ls in zip(members, texts, strict=True):
                    fp = _fingerprint(site, self.intern)
                    self.names[fp] = self.names[fp0]
                    self.args[fp] = [(n, str(ls[i])[len(pre) : len(str(ls[i])) - len(suf)]) for i, n, (pre, suf) in zip(literal, names, cuts, strict=True)]
                    (sec,) = per_use[texts.index(ls)]
                    assert isinstance(sec, _Section)
                    self.sections[fp] = sec.path
                    done.update(_ids(site[2]))
                self.defines.add(fp0)

    def _parameterised(self, templates: list[Template], exact: set[FP], taken: set[str]) -> None:
        """Nodes of two or more components that differ only in one or two literal strings (the
        config manager sidecar: the process it signals) become one named template with those
        literals as parameters, ``include "<chart>.x" (dict "param" "literal" "Values" .Values)``."""
        shapes = _Shapes()
        groups: dict[tuple[str, str, int], list[tuple[str, Site]]] = {}
        for tpl in templates:
            for node in _nodes(tpl):
                for site in self._sites_of(node):
                    if isinstance(site[2], Variant) or _fingerprint(site, self.intern) in exact:
                        continue
                    _, form, count, acts, pooly = self.intern.facts(site[2])
                    if acts and not pooly and count >= PARAM_LEAVES:
                        groups.setdefault((site[0], site[1], form), []).append((tpl.name, site))
        done: set[int] = set()  # nodes inside a chosen one: printed by its body
        ranked = sorted(groups.values(), key=lambda g: -self.intern.shape(g[0][1][2])[1])
        for members in ranked:
            if len({t for t, _ in members}) < 2:
                continue
            members = [(t, site) for t, site in members if id(site[2]) not in done]
            texts = [shapes.leaves(site[2]) for _, site in members]
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
        fp = _fingerprint(site, self.intern)
        args = self.args.get(fp)
        if fp in self.carried:
            pairs = [f'"{var}" ${var}' for var, _ in self.carried[fp]] + ['"pool" $pool', '"Values" $.Values']
            return f'include "{name}" (dict ' + " ".join(pairs) + ")"
        if args is None:
            return f'include "{name}" {_context()}'
        pairs = [f"{json.dumps(p)} {json.dumps(v)}" for p, v in args]
        if fp in self.sections:
            pairs += [f'"section" {values_expr(self.sections[fp])}', '"pool" $pool']
        pairs.append(f'"Values" {"$.Values" if _SCOPE else ".Values"}')
        return packed(f'include "{name}" (dict', pairs, ind, 20)

    def use(self, site: Site) -> str | None:
        """The named template that prints ``site``, or None (asked at every collection printed)."""
        if site[:2] not in self._kinds or not isinstance(site[2], (dict, list, Variant)) or not site[2] or not isinstance(site[1], str):
            return None
        fp = _fingerprint(site, self.intern)
        if fp == self.defining or fp not in self.names:
            return None
        return self.names[fp]

    def body(self, fp: FP, helpers: Helpers | None = None) -> str:
        use = helpers or self
        saved, use.defining = use.defining, fp
        pool = self.pooled.get(fp)
        carried = self.carried.get(fp, [])
        if pool:  # printed as in the range: `$pool` from the parameter, `$.Values` from "Values"
            _SCOPE.append(pool)
        saved_vars = dict(_VARS)
        _VARS.clear()
        _VARS.update({repr(variant): var for var, variant in carried if variant is not None})
        try:
            text = self.print_site(self.sites[fp], use)
        finally:
            use.defining = saved
            _VARS.clear()
            _VARS.update(saved_vars)
            if pool:
                _SCOPE.pop()
        head = "".join(f"{{{{- ${var} := .{var} -}}}}\n" for var, _ in carried)
        return "{{- $pool := .pool -}}\n" + pool_sections(text, "-}}") + head + text if pool else text

    @staticmethod
    def _lines(site: Site) -> int:
        return Helpers.print_site(site, None).count("\n")

    @staticmethod
    def print_site(site: Site, helpers: Helpers | None) -> str:
        out = Out(helpers)
        kind, key, node = site
        if kind == "entry":
            emit_entries(out, {key: node}, 0)
        elif isinstance(node, Variant):
            emit_items(out, [node], 0)
        else:
            emit_item(out, node, 0, "")
        return out.result()

    def text(self) -> str:
        """The ``define`` blocks, in the order of first use."""
        BOOLEANS.clear()
        BOOLEANS.update(self.booleans)
        out = []
        for fp, name in self.names.items():
            if fp in self.args and fp not in self.defines:
                continue  # another use of a parameterised template
            body = self.body(fp)
            out.append('{{- define "' + name + '" -}}\n' + body + "{{- end -}}\n")
        return "\n".join(out)


@dataclass(frozen=True)
class _Section:
    """A values section a node reads (``("gds",)``), as a leaf of its shape (``_Shapes(sections=True)``)."""

    path: Path


def _shared_ends(texts: list[str]) -> tuple[str, str]:
    """The prefix and suffix all ``texts`` share, cut at a space (the part that differs is a word)."""
    pre = texts[0]
    for t in texts[1:]:
        while not t.startswith(pre):
            pre = pre[:-1]
    pre = pre[: pre.rfind(" ") + 1]
    rest = [t[len(pre) :] for t in texts]
    suf = rest[0]
    for t in rest[1:]:
        while not t.endswith(suf):
            suf = suf[1:]
    suf = suf[suf.find(" ") :] if " " in suf else ""
    return pre, suf


def _sectioned_path(path: Path) -> bool:
    """A path into a top-level values section other than the pools' (``gds.image``)."""
    return len(path) >= 2 and path[:2] != ("driver", "pools") and path[0] != PARAM_ROOT


class _Shapes:
    """Nodes numbered up to their literal strings (the "shape"), with those strings in order;
    with ``sections``, up to the values section of each value they read too (a :class:`_Section`
    leaf: ``gds.image`` and ``gdrcopy.image`` are of one shape).

    :meth:`of` gives a node's number and how many leaves it has, computed once per node;
    :meth:`leaves` lists them, asked only of the few nodes whose shape repeats (a tuple of a
    node's leaves kept for every node would copy each leaf once per node above it)."""

    def __init__(self, sections: bool = False) -> None:
        self.table: dict[Any, int] = {}
        self.memo: dict[int, tuple[Any, int, int]] = {}
        self.sections = sections

    def of(self, node: Any) -> tuple[int, int]:
        """(the node's shape number, its number of leaves)."""
        hit = self.memo.get(id(node))
        if hit is not None and hit[0] is node:
            return hit[1], hit[2]
        key: Any
        count = 0
        parts: list[Any] = []
        if self.sections and isinstance(node, (Ref, Block, Splice)) and _sectioned_path(node.path):
            shape: Any = ("Ref", node.path[1:], node.quote, node.text, node.number) if isinstance(node, Ref) else (type(node).__name__, node.path[1:], getattr(node, "is_map", None))
            key, count = shape, 1
        elif self.sections and isinstance(node, Interp):
            for part in node.parts:
                num, sub = self.of(part)
                parts.append(num)
                count += sub
            key = ("interp", tuple(parts))
        elif isinstance(node, Variant):
            for cond, case in node.cases:
                cond_shape, cond_sections = self._cond(cond)
                num, more = self.of(case)
                parts.append((cond_shape, num))
                count += len(cond_sections) + more
            key = ("v", tuple(parts))
        elif isinstance(node, dict):
            for k, v in node.items():
                num, sub = self.of(v)
                parts.append((type(k).__name__, k, num))
                count += sub
            key = ("d", tuple(parts))
        elif isinstance(node, list):
            for v in node:
                num, sub = self.of(v)
                parts.append(num)
                count += sub
            key = ("l", tuple(parts))
        elif type(node) is str:
            key, count = ("str",), 1
        elif node is MISSING:
            key = ("m",)
        else:
            key = ("s", type(node).__name__, node)
        num = self.table.setdefault(key, len(self.table))
        if isinstance(node, (dict, list, Variant)):
            self.memo[id(node)] = (node, num, count)
        return num, count

    def leaves(self, node: Any) -> tuple[Any, ...]:
        """The node's literal strings (and, with ``sections``, :class:`_Section` leaves) in order."""
        out: list[Any] = []

        def walk(n: Any) -> None:
            if self.sections and isinstance(n, (Ref, Block, Splice)) and _sectioned_path(n.path):
                out.append(_Section(n.path[:1]))
            elif self.sections and isinstance(n, Interp):
                for part in n.parts:
                    walk(part)
            elif isinstance(n, Variant):
                for cond, case in n.cases:
                    out.extend(self._cond(cond)[1])  # a condition's sections first, as in `of`
                    walk(case)
            elif isinstance(n, dict):
                for v in n.values():
                    walk(v)
            elif isinstance(n, list):
                for v in n:
                    walk(v)
            elif type(n) is str:
                out.append(n)

        walk(node)
        return tuple(out)

    def _cond(self, cond: Cond) -> tuple[str, tuple[Any, ...]]:
        """A condition's shape and leaves: with ``sections``, each atom on a values section other
        than the pools' (``gds.env``) up to that section (the sidecars' ``if $gds.env``)."""
        if not self.sections:
            return repr(cond), ()
        moved = tuple(a for conj in cond for a in conj if _sectioned_path(a.path))
        if not moved:
            return repr(cond), ()
        shape = tuple(tuple((a.path[1:] if _sectioned_path(a.path) else a.path, a.op, a.value) for a in conj) for conj in cond)
        return repr(shape), tuple(_Section(a.path[:1]) for a in moved)

    def substitute(self, node: Any, params: dict[int, str | Param], sections: dict[int, Path] | None = None) -> Any:
        """``node`` with its i-th literal string replaced by ``Param(params[i])`` (or ``params[i]``
        itself) and, with ``sections``, the section of its i-th read by ``sections[i]``."""
        count = [0]
        moved = sections or {}

        def atom(a: Atom) -> Atom:
            if not (self.sections and _sectioned_path(a.path)):
                return a
            i = count[0]
            count[0] += 1
            return replace(a, path=(*moved[i], *a.path[1:])) if i in moved else a

        def walk(n: Any) -> Any:
            if isinstance(n, Variant):
                out = []
                for c, case in n.cases:  # the condition's leaves come before the case's (_Shapes.of)
                    cond = tuple(tuple(atom(a) for a in conj) for conj in c)
                    out.append((cond, walk(case)))
                return Variant(out)
            if isinstance(n, dict):
                return {k: walk(v) for k, v in n.items()}
            if isinstance(n, list):
                return [walk(v) for v in n]
            if self.sections and isinstance(n, Interp):
                return Interp(tuple(walk(p) for p in n.parts))
            if self.sections and isinstance(n, (Ref, Block, Splice)) and _sectioned_path(n.path):
                i = count[0]
                count[0] += 1
                return replace(n, path=(*moved[i], *n.path[1:])) if i in moved else n
            if type(n) is str:
                i = count[0]
                count[0] += 1
                found = params.get(i)
                return n if found is None else found if isinstance(found, Param) else Param(found)
            return n

        return walk(node)


def _param_names(node: Any, positions: list[int], shapes: _Shapes) -> list[str] | None:
    """A parameter name per differing literal: the ``name`` of the env variable it is the value
    of, camelCased (``PROCESS_TO_SIGNAL`` -> ``processToSignal``), else the key it is the value of."""
    found: dict[int, str] = {}
    count = [0]

    def walk(n: Any, key: str) -> None:
        if shapes.sections and isinstance(n, Interp):
            for part in n.parts:
                walk(part, key)
        elif shapes.sections and isinstance(n, (Ref, Block)) and _sectioned_path(n.path):
            count[0] += 1
        elif isinstance(n, Variant):
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


def _uses(templates: list[Template], chosen: dict[FP, Site], intern: _Interner) -> dict[FP, int]:
    """How often each chosen node would be included: the printer does not look inside an
    include, so a node inside a chosen one is counted once per printing of that one. (A chosen
    node takes values, so it is in no part of the templates that takes none: not walked.)"""
    counter = _UseCounter(chosen, intern)
    for tpl in templates:
        for node in _nodes(tpl):
            counter.walk(node, None)
    for fp, (_, _, node) in chosen.items():
        counter.walk(node, fp)
    return counter.counts


class _UseCounter:
    """The walk of :func:`_uses` (run once per round of choosing: a walk of every template)."""

    def __init__(self, chosen: dict[FP, Site], intern: _Interner) -> None:
        self.chosen = chosen
        self.intern = intern
        self.counts: dict[FP, int] = {}
        self.kinds = {fp[:2] for fp in chosen}
        """(kind, key) of the chosen nodes: a site of another is none of them, its number unasked."""

    def walk(self, node: Any, defining: FP | None, item: bool = False) -> None:
        """Count the chosen nodes in ``node`` (a list item when ``item``), not inside one."""
        if isinstance(node, Variant):
            for _, case in node.cases:
                if case is MISSING:
                    continue
                if not (item and isinstance(case, dict) and case and self.visit(("item", "", case), defining)):
                    self.walk(case, defining)
        elif isinstance(node, dict):
            if self.intern.acts(node):
                self._entries(node, defining)
        elif isinstance(node, list) and self.intern.acts(node):
            self._items(node, defining)

    def _entries(self, node: dict[Any, Any], defining: FP | None) -> None:
        for key, val in node.items():
            if not isinstance(val, (dict, list, Variant)):
                continue  # (a leaf: nothing chosen in it)
            if not (isinstance(key, str) and isinstance(val, (dict, list)) and val and self.visit(("entry", key, val), defining)):
                self.walk(val, defining)

    def _items(self, node: list[Any], defining: FP | None) -> None:
        for i, val in enumerate(node):
            if not isinstance(val, (dict, list, Variant)):
                continue
            if not (((isinstance(val, dict) and val) or optional_item(node, i)) and self.visit(("item", "", val), defining)):
                self.walk(val, defining, True)

    def visit(self, site: Site, defining: FP | None) -> bool:
        """Is ``site`` a chosen node (counted), other than the one being defined?"""
        if site[:2] not in self.kinds:
            return False
        fp = _fingerprint(site, self.intern)
        if fp in self.chosen and fp != defining:
            self.counts[fp] = self.counts.get(fp, 0) + 1
            return True
        return False
