"""Print a component template (:mod:`renderer.emit.helm_ir`) as Go template text.

Objects are printed as block-style YAML, scalars through PyYAML (so quoting is YAML's own),
knobs as ``{{ .Values.x }}`` and ``toYaml``, variants as ``{{- if }}/{{- else }}``. A control
action trims the newline before it (``{{-``) only where that newline ends a non-blank line;
otherwise (after a blank line inside a literal block) it is written in front of the next
line without trimming, so the printed text always evaluates to exactly the chosen variant.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import yaml

from renderer import yamlio
from renderer.emit.helm_ir import (
    MISSING,
    NAME_KEY,
    POOLS,
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
    emptiable,
    splices_only,
)
from renderer.emit.helm_values import Path

IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


_SCOPE: list[str] = []
"""While a ``range`` body over the pools is printed: the synthetic pool's key (see helm_ir.POOL)."""


def values_expr(path: Path) -> str:
    """``.Values.a.b`` or ``(index .Values "a" "b-c")`` when a key is not an identifier; inside
    the range over the pools, ``$pool.x`` / ``$name`` for the pool's own and ``$.Values.x`` for the rest."""
    root = ".Values"
    if _SCOPE:
        root = "$.Values"
        if path[:3] == (*POOLS, _SCOPE[-1]):
            if path[3:] == (NAME_KEY,):
                return "$name"
            root, path = "$pool", path[3:]
            if not path:
                return root
    if all(IDENT.fullmatch(p) for p in path):
        return root + "." + ".".join(path)
    return f"(index {root} " + " ".join(json.dumps(p) for p in path) + ")"


def _context() -> str:
    """The root context for an ``include``: ``$`` inside the range over the pools."""
    return "$" if _SCOPE else "."


def _atom(atom: Atom) -> str:
    expr = values_expr(atom.path)
    if atom.op == "is":
        return expr if atom.value else f"not {expr}"
    if atom.op == "in":
        return f"has {expr} (list {' '.join(json.dumps(v) for v in atom.value)})"
    return f"{atom.op} {expr} {json.dumps(atom.value)}"


def cond_expr(cond: Cond) -> str:
    conjs = []
    for conj in cond:
        atoms = [_atom(a) for a in conj]
        if not atoms:
            return "true"
        conjs.append(atoms[0] if len(atoms) == 1 else "and " + " ".join(_arg(a) for a in atoms))
    if len(conjs) == 1:
        return conjs[0]
    return "or " + " ".join(_arg(c) for c in conjs)


def wrapped(keyword: str, cond: Cond, ind: int = 0) -> str:
    """``keyword`` and the condition, broken over lines (Go template actions may span lines)
    when one line would be longer than :data:`WIDTH`: one operand of ``or`` per line, and one
    atom of an ``and`` per line when the operand alone is too long."""
    one = f"{keyword} {cond_expr(cond)}"
    if ind + len(one) + 8 <= WIDTH:
        return one
    pad, pad2 = " " * (ind + 4), " " * (ind + 6)
    conjs = [[_atom(a) for a in conj] for conj in cond]
    if len(conjs) == 1:
        return f"{keyword} and\n" + "\n".join(pad + _arg(a) for a in conjs[0])
    lines = []
    for atoms in conjs:
        expr = atoms[0] if len(atoms) == 1 else "and " + " ".join(_arg(a) for a in atoms)
        if len(pad) + len(expr) + 2 <= WIDTH or len(atoms) == 1:
            lines.append(pad + _arg(expr))
        else:
            lines.append(pad + "(and\n" + "\n".join(pad2 + _arg(a) for a in atoms) + ")")
    return f"{keyword} or\n" + "\n".join(lines)


def _arg(expr: str) -> str:
    """An operand of ``and``/``or``: parenthesised only when it is a call."""
    return expr if " " not in expr or (expr.startswith("(index ") and expr.endswith(")") and expr.count("(") == 1) else f"({expr})"


def escape(text: str) -> str:
    """Literal text in a template: only ``{{`` needs escaping."""
    return text.replace("{{", '{{ "{{" }}')


class Out:
    """Template text with control actions placed so they add or remove nothing."""

    def __init__(self, helpers: Helpers | None = None) -> None:
        self.parts: list[str] = []
        self.prefix = ""
        self.helpers = helpers
        """Named templates (``_helpers.tpl``) to include instead of printing a repeated node."""

    def can_trim(self) -> bool:
        last = self.parts[-1] if self.parts else ""
        return not (self.prefix or (last and not (last.endswith("\n") and len(last) >= 2 and not last[-2].isspace())))

    def include(self, name: str, ind: int) -> None:
        """The named template's lines, indented by ``ind``, in place of the node."""
        call = f'include "{name}" {_context()}'
        if self.can_trim():
            self.parts.append(" " * ind + "{{- " + call + f" | nindent {ind}" + " }}\n")
        else:
            self.text("{{ " + call + f" | indent {ind}" + " }}")

    def text(self, line: str) -> None:
        self.parts.append(self.prefix + line + "\n")
        self.prefix = ""

    def ctl(self, action: str, ind: int = 0) -> None:
        """A control action on a line of its own, indented as the YAML around it (``{{-``
        trims the indentation and the newline before it), or in front of the next line where
        that newline must stay."""
        if not self.can_trim():
            self.prefix += "{{ " + action + " }}"
            return
        self.parts.append(" " * ind + "{{- " + action + " }}\n")

    def yaml(self, expr: str, ind: int) -> None:
        """``expr`` (a collection) as YAML indented by ``ind``, where the line stood."""
        if self.can_trim():
            self.parts.append(" " * ind + "{{- " + expr + f" | nindent {ind}" + " }}\n")
        else:
            self.text("{{ " + expr + f" | indent {ind}" + " }}")

    def result(self) -> str:
        return "".join(self.parts) + self.prefix


WIDTH = 160
"""Longest template line the printer aims at; a longer one-line string is folded."""


def _multiline(value: Any) -> bool:
    """Text of several lines (file data): printed as the base prints it."""
    if isinstance(value, dict):
        return any(_multiline(v) for v in value.values())
    if isinstance(value, list):
        return any(_multiline(v) for v in value)
    return isinstance(value, str) and "\n" in value


def _dump(value: Any) -> list[str]:
    text = yamlio.dump(value)
    lines = escape(text).rstrip("\n").split("\n")
    if len(lines) == 1 and len(lines[0]) > WIDTH - 40 and not _multiline(value):
        # a long one-line string: folded over several lines (YAML reads back the same string)
        # (PyYAML's emitter: libyaml's escapes and folds double-quoted text differently; the
        # check reads it back with libyaml's parser, which gives the same data and is faster)
        folded = yaml.safe_dump(value, width=100, allow_unicode=True, sort_keys=False)
        if yamlio.load(folded) == value:
            return escape(folded).rstrip("\n").split("\n")
    return lines


_SCALARS = (str, int, float, bool, type(None))
_DUMPED: dict[tuple[Any, ...], tuple[str, ...]] = {}
"""Printed lines of ``{key: scalar}`` and ``[scalar]``, by (key, type, value): a template prints
tens of thousands of small scalars but only about a thousand distinct ones, and PyYAML's
representer costs far more than the lookup. The type is in the key (``1``, ``True`` and ``1.0``
are equal but print differently)."""


def _dump_one(key: Any, value: Any, item: bool) -> tuple[str, ...]:
    """``_dump({key: value})`` (or ``_dump([value])`` when ``item``), memoised for scalars."""
    if type(value) not in _SCALARS or type(key) is not str:
        return tuple(_dump([value] if item else {key: value}))
    memo_key = (item, key, type(value), value)
    found = _DUMPED.get(memo_key)
    if found is None:
        found = _DUMPED[memo_key] = tuple(_dump([value] if item else {key: value}))
    return found


def _interp_printf(node: Interp, pad: str) -> str:
    """Text with values inside as ``printf`` with one argument per line (a long line)."""
    fmt = "".join("%v" if isinstance(p, Ref) else p.replace("%", "%%") for p in node.parts)
    args = [values_expr(p.path) for p in node.parts if isinstance(p, Ref)]
    return "{{ printf " + json.dumps(fmt) + "".join(f"\n{pad}    " + a for a in args) + " | quote }}"


def _interp_line(node: Interp) -> str:
    out = ""
    for part in node.parts:
        if isinstance(part, Ref):
            out += "{{ " + values_expr(part.path) + " }}"
        else:
            out += escape(part).replace("\\", "\\\\").replace('"', '\\"')
    return '"' + out + '"'


def _interp_json(node: Interp) -> str:
    """Text with values and newlines inside: built with ``join`` and written as a JSON string."""
    parts = [values_expr(p.path) if isinstance(p, Ref) else json.dumps(p) for p in node.parts]
    return "{{ list " + " ".join(parts) + ' | join "" | toJson }}'


def _scalar(node: Any) -> str | None:
    if isinstance(node, Derived):
        if _SCOPE and _SCOPE[-1] in node.key:  # one per pool: keyed by the pool's name
            key = json.dumps(node.key.replace("%", "%%").replace(_SCOPE[-1], "%s"))
            return "{{ index $.Values.generated (printf " + key + " $name) | quote }}"
        return "{{ index " + values_expr(("generated",)) + " " + json.dumps(node.key) + " | quote }}"
    if isinstance(node, Ref):
        return "{{ " + values_expr(node.path) + (" | quote }}" if node.quote else " }}")
    if isinstance(node, Interp):
        multiline = any(isinstance(p, str) and "\n" in p for p in node.parts)
        return _interp_json(node) if multiline else _interp_line(node)
    return None


def _present(node: dict[Any, Any]) -> Cond:
    """Condition under which an emptiable map has at least one entry."""
    conjs: list[tuple[Atom, ...]] = []
    for key, val in node.items():
        if isinstance(key, Splice):
            conjs.append((Atom(key.path, "is", True),))
        else:
            conjs += [conj for cond, case in val.cases if case is not MISSING for conj in cond]
    return tuple(conjs)


def _key(key: str) -> str:
    return _dump_one(key, 0, False)[0][: -len(": 0")]


def _conds(node: Any) -> list[Cond] | None:
    return [c for c, _ in node.cases] if isinstance(node, Variant) else None


def emit_entries(out: Out, node: dict[Any, Any], ind: int) -> None:
    pad = " " * ind
    items = list(node.items())
    i = 0
    while i < len(items):
        key, val = items[i]
        if isinstance(key, Splice):
            out.ctl("with " + values_expr(key.path), ind)
            out.yaml("toYaml .", ind)
            out.ctl("end", ind)
        elif isinstance(val, Variant):
            # neighbours switched by the same conditions share one if/else
            run = [items[i]]
            while i + 1 < len(items) and not isinstance(items[i + 1][0], Splice) and _conds(items[i + 1][1]) == _conds(val):
                i += 1
                run.append(items[i])
            merged = Variant([(cond, [(k, v.cases[j][1]) for k, v in run]) for j, (cond, _) in enumerate(val.cases)])
            _variant(out, merged, lambda case: emit_entries(out, {k: c for k, c in case if c is not MISSING}, ind), ind)
        else:
            name = out.helpers.use(("entry", key, val)) if out.helpers else None
            if name is not None:
                out.include(name, ind)
            else:
                emit_entry(out, key, val, ind, pad)
        i += 1


def emit_entry(out: Out, key: str, val: Any, ind: int, pad: str) -> None:
    k = _key(key)
    if isinstance(val, Block):
        out.ctl("with " + values_expr(val.path), ind)
        out.text(f"{pad}{k}:")
        out.yaml("toYaml .", ind + 2)
        out.ctl("end", ind)
        return
    if isinstance(val, MergeBlock):
        out.ctl(wrapped("if", tuple((Atom(p, "is", True),) for p in val.paths), ind), ind)
        out.text(f"{pad}{k}:")
        for path in val.paths:
            out.ctl("with " + values_expr(path), ind + 2)
            out.yaml("toYaml .", ind + 2)
            out.ctl("end", ind + 2)
        out.ctl("end", ind)
        return
    scalar = _scalar(val)
    if scalar is not None:
        if len(pad) + len(k) + len(scalar) + 2 > WIDTH and isinstance(val, Interp) and not scalar.startswith("{{ list"):
            scalar = _interp_printf(val, pad)
        out.text(f"{pad}{k}: {scalar}")
    elif isinstance(val, dict) and val and emptiable(val):
        out.ctl(wrapped("if", _present(val), ind), ind)
        out.text(f"{pad}{k}:")
        emit_entries(out, val, ind + 2)
        out.ctl("end", ind)
    elif isinstance(val, dict) and val:
        out.text(f"{pad}{k}:")
        emit_entries(out, val, ind + 2)
    elif splices_only(val) is not None:
        out.ctl(wrapped("if", splices_only(val) or ((),), ind), ind)
        out.text(f"{pad}{k}:")
        emit_items(out, val, ind + 2)
        out.ctl("end", ind)
    elif isinstance(val, list) and val:
        out.text(f"{pad}{k}:")
        emit_items(out, val, ind + 2)
    else:
        for line in _dump_one(key, val, False):
            out.text(pad + line)


def emit_items(out: Out, items: list[Any], ind: int) -> None:
    pad = " " * ind
    for item in _runs(items):
        if isinstance(item, _Items):
            emit_items(out, [i for i in item if i is not MISSING], ind)
            continue
        if isinstance(item, Splice):
            out.ctl("with " + values_expr(item.path), ind)
            expr = "list ." if item.is_map else "."
            out.yaml("toYaml (" + expr + ")", ind)
            out.ctl("end", ind)
        elif isinstance(item, Variant):
            _variant(out, item, lambda case: emit_items(out, [case], ind), ind)
        else:
            name = out.helpers.use(("item", "", item)) if out.helpers and isinstance(item, dict) else None
            if name is not None:
                out.include(name, ind)
            else:
                emit_item(out, item, ind, pad)


def _runs(items: list[Any]) -> list[Any]:
    """Neighbouring variant items chosen by the same conditions, merged into one variant of
    lists (``if`` once around them)."""
    out: list[Any] = []
    for item in items:
        last = out[-1] if out else None
        if isinstance(item, Variant) and isinstance(last, _Run) and _conds(last.first) == _conds(item):
            last.items.append(item)
        elif isinstance(item, Variant):
            out.append(_Run(item, [item]))
        else:
            out.append(item)
    return [r.variant() if isinstance(r, _Run) else r for r in out]


class _Run:
    def __init__(self, first: Variant, items: list[Variant]) -> None:
        self.first = first
        self.items = items

    def variant(self) -> Any:
        if len(self.items) == 1:
            return self.first
        cases = [(cond, _Items([v.cases[j][1] for v in self.items])) for j, (cond, _) in enumerate(self.first.cases)]
        return Variant(cases)


class _Items(list[Any]):
    """Several list items printed in one variant case."""


def emit_item(out: Out, item: Any, ind: int, pad: str) -> None:
    scalar = _scalar(item)
    if scalar is not None:
        out.text(f"{pad}- {scalar}")
    elif isinstance(item, dict) and item:
        sub = Out(out.helpers)
        emit_entries(sub, item, ind + 2)
        first = sub.parts[0] if sub.parts else ""
        if first.startswith(" " * (ind + 2)) and not first.startswith(" " * (ind + 3)) and not first.lstrip().startswith("{{"):
            sub.parts[0] = pad + "- " + first[ind + 2 :]
        else:
            out.text(pad + "-")
        for part in sub.parts:
            out.parts.append(out.prefix + part)
            out.prefix = ""
        out.prefix += sub.prefix
    elif isinstance(item, list) and item:
        out.text(pad + "-")
        emit_items(out, item, ind + 2)
    else:
        for line in _dump_one("", item, True):
            out.text(pad + line)


def _nothing(case: Any) -> bool:
    if isinstance(case, (_Items, _Objects)):
        return all(c is MISSING for c in case)
    return case is MISSING or (isinstance(case, list) and all(c is MISSING for _, c in case))


def _variant(out: Out, node: Variant, emit: Any, ind: int = 0) -> None:
    cases = [(cond, MISSING if _nothing(case) else case) for cond, case in node.cases]
    for i, (cond, case) in enumerate(cases):
        if i == 0:
            out.ctl(wrapped("if", cond, ind), ind)
        elif i == len(cases) - 1:
            if case is MISSING:
                break
            out.ctl("else", ind)
        else:
            out.ctl(wrapped("else if", cond, ind), ind)
        if case is not MISSING:
            emit(case)
    out.ctl("end", ind)


HELPER_LINES = 4
"""Smallest repeated node (printed lines) that becomes a named template."""

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
            if isinstance(item, dict) and item:
                yield ("item", "", item)
            yield from _sites(item)


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

    RESERVED = frozenset({"name", "chart", "labels", "selectorLabels"})
    """Names the chart's own helpers (renderer/data/chart_helpers.tpl) use."""

    def __init__(self, chart: str, templates: list[Template]) -> None:
        self.chart = chart
        self.names: dict[FP, str] = {}
        self.sites: dict[FP, Site] = {}
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

    def use(self, site: Site) -> str | None:
        if not self.names or not isinstance(site[2], (dict, list)) or not site[2] or not isinstance(site[1], str):
            return None
        fp = _fingerprint(site, self.intern)
        if fp == self.defining or fp not in self.names:
            return None
        return self.names[fp]

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

    def body(self, fp: FP, helpers: Helpers | None = None) -> str:
        use = helpers or self
        saved, use.defining = use.defining, fp
        try:
            return self.print_site(self.sites[fp], use)
        finally:
            use.defining = saved

    def text(self) -> str:
        """The ``define`` blocks, in the order of first use."""
        out = []
        for fp, name in self.names.items():
            body = self.body(fp)
            out.append('{{- define "' + name + '" -}}\n' + body + "{{- end -}}\n")
        return "\n".join(out)


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

    def walk(node: Any, defining: FP | None) -> None:
        if isinstance(node, Variant):
            for _, case in node.cases:
                if case is not MISSING:
                    walk(case, defining)
        elif isinstance(node, (dict, list)):
            for site, child in _children(node):
                if site is None or not visit(site, defining):
                    walk(child, defining)

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


def template_text(tpl: Template, header: str, helpers: Helpers | None = None) -> str:
    out = Out(helpers)
    out.parts.append(header)
    gated = bool(tpl.gate) and tpl.gate != ((),)
    if gated:
        out.ctl(wrapped("if", tpl.gate, 0))
    for node in _object_runs(list(tpl.objects.values())):
        _object(out, node)
    if tpl.pooled:
        out.ctl("range $name, $pool := .Values.driver.pools")
        out.ctl("if $pool")
        _SCOPE.append(tpl.pool_key)
        try:
            for node in _object_runs(list(tpl.pooled.values())):
                _object(out, node)
        finally:
            _SCOPE.pop()
        out.ctl("end")
        out.ctl("end")
    if gated:
        out.ctl("end")
    return out.result()


def _object_runs(nodes: list[Any]) -> list[Any]:
    """Neighbouring objects behind the same gate share one ``if``."""
    out: list[Any] = []
    for node in nodes:
        last = out[-1] if out else None
        if isinstance(last, Variant) and _gated(node) and _gated(last) and _conds(node) == _conds(last):
            case = last.cases[0][1]
            objs = case if isinstance(case, _Objects) else _Objects([case])
            out[-1] = Variant([(last.cases[0][0], _Objects([*objs, node.cases[0][1]])), last.cases[1]])
        else:
            out.append(node)
    return out


def _gated(node: Any) -> bool:
    return isinstance(node, Variant) and len(node.cases) == 2 and node.cases[1][1] is MISSING and node.cases[0][1] is not MISSING


class _Objects(list[Any]):
    """Several objects printed in one variant case."""


def _object(out: Out, node: Any) -> None:
    if isinstance(node, _Objects):
        for one in node:
            _object(out, one)
        return
    if isinstance(node, Variant):
        _variant(out, node, lambda case: _object(out, case))
        return
    out.text("---")
    emit_entries(out, node, 0)
