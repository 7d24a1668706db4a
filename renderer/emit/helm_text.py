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
from typing import Any

import yaml

from renderer import yamlio
from renderer.emit.helm_ir import (
    MISSING,
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
)
from renderer.emit.helm_values import Path

IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def values_expr(path: Path) -> str:
    """``.Values.a.b`` or ``(index .Values "a" "b-c")`` when a key is not an identifier."""
    if all(IDENT.fullmatch(p) for p in path):
        return ".Values." + ".".join(path)
    return "(index .Values " + " ".join(json.dumps(p) for p in path) + ")"


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


def _arg(expr: str) -> str:
    """An operand of ``and``/``or``: parenthesised only when it is a call."""
    return expr if " " not in expr or (expr.startswith("(index ") and expr.endswith(")") and expr.count("(") == 1) else f"({expr})"


def escape(text: str) -> str:
    """Literal text in a template: only ``{{`` needs escaping."""
    return text.replace("{{", '{{ "{{" }}')


class Out:
    """Template text with control actions placed so they add or remove nothing."""

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.prefix = ""

    def text(self, line: str) -> None:
        self.parts.append(self.prefix + line + "\n")
        self.prefix = ""

    def ctl(self, action: str) -> None:
        last = self.parts[-1] if self.parts else ""
        if self.prefix or (last and not (last.endswith("\n") and len(last) >= 2 and not last[-2].isspace())):
            self.prefix += "{{ " + action + " }}"
            return
        self.parts.append("{{- " + action + " }}\n")

    def result(self) -> str:
        return "".join(self.parts) + self.prefix


WIDTH = 160
"""Longest template line the printer aims at; a longer one-line string is folded."""


def _dump(value: Any) -> list[str]:
    text = yamlio.dump(value)
    lines = escape(text).rstrip("\n").split("\n")
    if len(lines) == 1 and len(lines[0]) > WIDTH - 40:
        # a long one-line string: folded over several lines (YAML reads back the same string)
        folded = yaml.safe_dump(value, width=100, allow_unicode=True, sort_keys=False)
        if yaml.safe_load(folded) == value:
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
        return "{{ index .Values.generated " + json.dumps(node.key) + " | quote }}"
    if isinstance(node, Ref):
        return "{{ " + values_expr(node.path) + (" | quote }}" if node.quote else " }}")
    if isinstance(node, Interp):
        multiline = any(isinstance(p, str) and "\n" in p for p in node.parts)
        return _interp_json(node) if multiline else _interp_line(node)
    return None


def _present(node: dict[Any, Any]) -> str:
    """Condition under which an emptiable map has at least one entry."""
    parts: list[str] = []
    for key, val in node.items():
        if isinstance(key, Splice):
            parts.append(values_expr(key.path))
        else:
            parts.append(cond_expr(tuple(conj for cond, case in val.cases if case is not MISSING for conj in cond)))
    return parts[0] if len(parts) == 1 else "or " + " ".join(_arg(p) for p in parts)


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
            out.ctl("with " + values_expr(key.path))
            out.text("{{ toYaml . | indent " + str(ind) + " }}")
            out.ctl("end")
        elif isinstance(val, Variant):
            # neighbours switched by the same conditions share one if/else
            run = [items[i]]
            while i + 1 < len(items) and not isinstance(items[i + 1][0], Splice) and _conds(items[i + 1][1]) == _conds(val):
                i += 1
                run.append(items[i])
            merged = Variant([(cond, [(k, v.cases[j][1]) for k, v in run]) for j, (cond, _) in enumerate(val.cases)])
            _variant(out, merged, lambda case: emit_entries(out, {k: c for k, c in case if c is not MISSING}, ind))
        else:
            emit_entry(out, key, val, ind, pad)
        i += 1


def emit_entry(out: Out, key: str, val: Any, ind: int, pad: str) -> None:
    k = _key(key)
    if isinstance(val, Block):
        out.ctl("with " + values_expr(val.path))
        out.text(f"{pad}{k}:")
        out.text("{{ toYaml . | indent " + str(ind + 2) + " }}")
        out.ctl("end")
        return
    if isinstance(val, MergeBlock):
        out.ctl("if or " + " ".join(_arg(values_expr(p)) for p in val.paths))
        out.text(f"{pad}{k}:")
        for path in val.paths:
            out.ctl("with " + values_expr(path))
            out.text("{{ toYaml . | indent " + str(ind + 2) + " }}")
            out.ctl("end")
        out.ctl("end")
        return
    scalar = _scalar(val)
    if scalar is not None:
        out.text(f"{pad}{k}: {scalar}")
    elif isinstance(val, dict) and val and emptiable(val):
        out.ctl("if " + _present(val))
        out.text(f"{pad}{k}:")
        emit_entries(out, val, ind + 2)
        out.ctl("end")
    elif isinstance(val, dict) and val:
        out.text(f"{pad}{k}:")
        emit_entries(out, val, ind + 2)
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
            out.ctl("with " + values_expr(item.path))
            expr = "list ." if item.is_map else "."
            out.text("{{ toYaml (" + expr + ") | indent " + str(ind) + " }}")
            out.ctl("end")
        elif isinstance(item, Variant):
            _variant(out, item, lambda case: emit_items(out, [case], ind))
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
        sub = Out()
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
    if isinstance(case, _Items):
        return all(c is MISSING for c in case)
    return case is MISSING or (isinstance(case, list) and all(c is MISSING for _, c in case))


def _variant(out: Out, node: Variant, emit: Any) -> None:
    cases = [(cond, MISSING if _nothing(case) else case) for cond, case in node.cases]
    for i, (cond, case) in enumerate(cases):
        if i == 0:
            out.ctl("if " + cond_expr(cond))
        elif i == len(cases) - 1:
            if case is MISSING:
                break
            out.ctl("else")
        else:
            out.ctl("else if " + cond_expr(cond))
        if case is not MISSING:
            emit(case)
    out.ctl("end")


def template_text(tpl: Template, header: str) -> str:
    out = Out()
    out.parts.append(header)
    gated = bool(tpl.gate) and tpl.gate != ((),)
    if gated:
        out.ctl("if " + cond_expr(tpl.gate))
    for node in tpl.objects.values():
        _object(out, node)
    if gated:
        out.ctl("end")
    return out.result()


def _object(out: Out, node: Any) -> None:
    if isinstance(node, Variant):
        _variant(out, node, lambda case: _object(out, case))
        return
    out.text("---")
    emit_entries(out, node, 0)
