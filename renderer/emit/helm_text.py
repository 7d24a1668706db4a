"""Print a component template (:mod:`renderer.emit.helm_ir`) as Go template text.

Objects are printed as block-style YAML, scalars through PyYAML (so quoting is YAML's own),
knobs as ``{{ .Values.x }}`` and ``toYaml``, variants as ``{{- if }}/{{- else }}``. A control
action trims the newline before it (``{{-``) only where that newline ends a non-blank line;
otherwise (after a blank line inside a literal block) it is written in front of the next
line without trimming, so the printed text always evaluates to exactly the chosen variant.
"""

from __future__ import annotations

import difflib
import itertools
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import yaml

from renderer import yamlio
from renderer.emit import buildtime, helm_logic
from renderer.emit.helm_eval import emptiable, secret_lists, splices_only
from renderer.emit.helm_tree import (
    MISSING,
    NAME_KEY,
    POOLS,
    PULL_SECRETS,
    Atom,
    Block,
    Cond,
    Derived,
    Interp,
    Joined,
    MergeBlock,
    Ref,
    Splice,
    Template,
    Variant,
)
from renderer.emit.helm_values import POOL_SECTIONS, Path

if TYPE_CHECKING:
    from renderer.emit.helm_named import Helpers

IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
CHART = "gpu-stack"
"""The chart's name (its named templates are ``<chart>.<name>``)."""


_SCOPE: list[str] = []
"""While a ``range`` body over the pools is printed: the synthetic pool's key (see helm_ir.POOL)."""


PARAM_ROOT = "\x00param"
"""First key of a path into a named template's parameter (``(PARAM_ROOT, "section", "image")``:
``$.section.image``, a values section passed as a parameter)."""


def values_expr(path: Path) -> str:
    """``.Values.a.b`` or ``(index .Values "a" "b-c")`` when a key is not an identifier; inside
    the range over the pools, ``$pool.x`` / ``$name`` for the pool's own and ``$.Values.x`` for the rest."""
    memo = (path, _SCOPE[-1] if _SCOPE else None)
    found = _EXPRS.get(memo)
    if found is None:
        found = _EXPRS[memo] = _values_expr(path)
    return found


_EXPRS: dict[tuple[Path, str | None], str] = {}
""":func:`values_expr` by path and pool scope (a knob is read in many places)."""


def _values_expr(path: Path) -> str:
    if path[:1] == (PARAM_ROOT,):
        return "$." + ".".join(path[1:])
    root = ".Values"
    if _SCOPE:
        root = "$.Values"
        if path[:3] == (*POOLS, _SCOPE[-1]):
            if path[3:] == (NAME_KEY,):
                return "$name"
            root, path = "$pool", path[3:]
            if not path:
                return root
        elif path[:1] and path[0] in POOL_SECTIONS:  # the pool's own merged over the fleet's
            root, path = "$" + path[0], path[1:]
            if not path:
                return root
    if all(IDENT.fullmatch(p) for p in path):
        return root + "." + ".".join(path)
    return f"(index {root} " + " ".join(json.dumps(p) for p in path) + ")"


def pool_sections(text: str, close: str = "}}") -> str:
    """The variables of the :data:`POOL_SECTIONS` that ``text`` (inside the range over the pools)
    reads: each the pool's own section merged over the fleet's, as the driver builder merges them."""
    return "".join(
        f'{{{{- ${name} := include "{CHART}.merged" (list $.Values.{name} $pool.{name}) | fromYaml {close}\n'
        for name in POOL_SECTIONS
        if re.search(r"\$" + name + r"\b", text)
    )


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

    def include_call(self, call: str, ind: int) -> None:
        """``call`` (an ``include`` with its arguments) indented by ``ind``, in place of the node."""
        if self.can_trim():
            self.parts.append(" " * ind + "{{- " + call + f" | nindent {ind}" + " }}\n")
        else:
            self.text("{{ " + call + f" | indent {ind}" + " }}")

    def splice(self, source: str, expr: str, ind: int) -> None:
        """Entries or items of a values collection among fixed ones, left out when it is empty:
        ``{{- with x }}{{ toYaml . | nindent N }}{{ end }}`` on one line (it trims the newline
        before it; the newline after it ends the inserted lines)."""
        if self.can_trim():
            self.parts.append(" " * ind + "{{- with " + source + " }}{{ " + expr + f" | nindent {ind}" + " }}{{ end }}\n")
            return
        self.ctl("with " + source, ind)
        self.yaml(expr, ind)
        self.ctl("end", ind)

    def text(self, line: str) -> None:
        self.parts.append(self.prefix + line + "\n")
        self.prefix = ""

    def lines(self, text: str) -> None:
        """Whole lines (each ending in a newline) as one part: :meth:`text` of each line gives
        the same text, and the same :meth:`can_trim` after it (which reads the last line's end)."""
        self.parts.append(self.prefix + text)
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


def _dump(value: Any, room: int = WIDTH - 40) -> list[str]:
    """``value`` as YAML lines; a one-line string longer than ``room`` (the width left after the
    indentation) folded over several lines (YAML reads back the same string)."""
    return list(_fitted(value, _lines_of(value), room))


def _lines_of(value: Any) -> tuple[str, ...]:
    """``value`` as YAML lines, as the base prints it."""
    return tuple(escape(yamlio.dump_embedded(value)).rstrip("\n").split("\n"))


def _fitted(value: Any, lines: tuple[str, ...], room: int) -> tuple[str, ...]:
    """``lines`` (:func:`_lines_of` ``value``), or folded when one line is longer than ``room``."""
    if len(lines) == 1 and len(lines[0]) > room and not _multiline(value):
        # PyYAML's width is a wish (it breaks at the next space it may break at): narrower
        # widths until every line fits, else the narrowest try
        best: tuple[str, ...] = lines
        for width in (room - 20, room - 40, room - 60, 60):
            folded = yaml.safe_dump(value, width=max(width, 40), allow_unicode=True, sort_keys=False)
            if yamlio.load(folded) != value:  # libyaml's parser: the same data as PyYAML's, faster
                continue
            best = tuple(escape(folded).rstrip("\n").split("\n"))
            if max(map(len, best)) <= room:
                break
        return best
    return lines


_SCALARS = (str, int, float, bool, type(None))
_DUMPED: dict[tuple[Any, ...], tuple[str, ...]] = {}
"""Printed lines of ``{key: scalar}`` and ``[scalar]``, by (item, key, type, value) and, folded,
by the room too: a template prints tens of thousands of small scalars but only about a thousand
distinct ones, and PyYAML's representer costs far more than the lookup. The type is in the key
(``1``, ``True`` and ``1.0`` are equal but print differently), a float by its ``repr`` (``0.0``
and ``-0.0`` are equal too)."""


def _memo_key(item: bool, key: str, value: Any) -> tuple[Any, ...]:
    """The key of :data:`_DUMPED` and :data:`_PRINTED` for a scalar ``value`` (before the room)."""
    return (item, key, type(value), repr(value) if type(value) is float else value)


def _dump_one(key: Any, value: Any, item: bool, ind: int = 0) -> tuple[str, ...]:
    """``_dump({key: value})`` (or ``_dump([value])`` when ``item``) for a line indented by
    ``ind``, memoised for scalars."""
    room = WIDTH - ind
    if type(value) not in _SCALARS or type(key) is not str:
        return tuple(_dump([value] if item else {key: value}, room))
    memo_key = _memo_key(item, key, value)
    lines = _DUMPED.get(memo_key)
    if lines is None:
        lines = _DUMPED[memo_key] = _lines_of([value] if item else {key: value})
    if len(lines) == 1 and len(lines[0]) > room and not _multiline(value):  # folded: per room
        folded_key = (*memo_key, room)
        found = _DUMPED.get(folded_key)
        if found is None:
            found = _DUMPED[folded_key] = _fitted([value] if item else {key: value}, lines, room)
        return found
    return lines


def _printed(key: Any, value: Any, item: bool, ind: int) -> str:
    """The lines of :func:`_dump_one` indented by ``ind``, as one text (for :meth:`Out.lines`),
    memoised for scalars as :data:`_DUMPED` is (a template prints each of them many times)."""
    if type(value) not in _SCALARS or type(key) is not str:
        pad = " " * ind
        return "".join(pad + line + "\n" for line in _dump_one(key, value, item, ind))
    memo_key = (*_memo_key(item, key, value), ind)
    found = _PRINTED.get(memo_key)
    if found is None:
        pad = " " * ind
        found = _PRINTED[memo_key] = "".join(pad + line + "\n" for line in _dump_one(key, value, item, ind))
    return found


_PRINTED: dict[tuple[Any, ...], str] = {}
""":func:`_printed` by (item, key, type, value, indentation)."""


def ref_expr(ref: Ref, whole: bool = False) -> str:
    """The value a Ref stands for (an integer knob through ``int``: see ``Ref.number``), in
    parentheses unless it is the ``whole`` pipeline."""
    if not ref.number:
        return values_expr(ref.path)
    return f"{values_expr(ref.path)} | int" if whole else f"({values_expr(ref.path)} | int)"


def _interp_printf(node: Interp, pad: str) -> str:
    """Text with values inside as ``printf`` with one argument per line (a long line)."""
    fmt = "".join("%v" if isinstance(p, Ref) else p.replace("%", "%%") for p in node.parts)
    args = [ref_expr(p) for p in node.parts if isinstance(p, Ref)]
    return "{{ printf " + json.dumps(fmt) + "".join(f"\n{pad}    " + a for a in args) + " | quote }}"


def _interp_line(node: Interp) -> str:
    out = ""
    for part in node.parts:
        if isinstance(part, Ref):
            out += "{{ " + ref_expr(part, True) + " }}"
        else:
            out += escape(part).replace("\\", "\\\\").replace('"', '\\"')
    return '"' + out + '"'


def _interp_json(node: Interp) -> str:
    """Text with values and newlines inside: built with ``join`` and written as a JSON string."""
    parts = [ref_expr(p) if isinstance(p, Ref) else json.dumps(p) for p in node.parts]
    return "{{ list " + " ".join(parts) + ' | join "" | toJson }}'


@dataclass(frozen=True)
class Param:
    """A literal of a named template's body that differs between its uses: ``{{ .<name> }}``
    (the part between ``prefix`` and ``suffix``, which all uses share)."""

    name: str
    prefix: str = ""
    suffix: str = ""


def _scalar(node: Any) -> str | None:
    if isinstance(node, Param) and (node.prefix or node.suffix):
        return _interp_line(Interp((node.prefix, Ref((PARAM_ROOT, node.name), False), node.suffix)))
    if isinstance(node, Param):
        return "{{ ." + node.name + " | quote }}"
    if isinstance(node, Derived) and not node.block:
        return "{{ " + derived_expr(node) + " | quote }}"
    if isinstance(node, Joined):
        return "{{ " + f'include "{CHART}.{NAMES if node.names else JOINED}" {values_expr(node.path)}' + " | quote }}"
    if isinstance(node, Ref):
        return "{{ " + ref_expr(node, True) + (" | quote }}" if node.quote else " }}")
    if isinstance(node, Interp):
        multiline = any(isinstance(p, str) and "\n" in p for p in node.parts)
        return _interp_json(node) if multiline else _interp_line(node)
    return None


def derived_expr(node: Derived) -> str:
    """``index .Values.generated "<key>"``; inside the range over the pools, a key with the pool's
    name in it is made with ``printf`` from ``$name``."""
    if _SCOPE and _SCOPE[-1] in node.key:  # one per pool: keyed by the pool's name
        key = json.dumps(node.key.replace("%", "%%").replace(_SCOPE[-1], "%s"))
        if buildtime.is_pool_digest(node.key):  # empty once the pool's values are not the build's
            container = node.key.removesuffix(buildtime.DIGEST_SUFFIX).split("/", 2)[2]
            return f'include "{CHART}.driverDigest" (list $ $name {json.dumps(container)})'
        return "index $.Values.generated (printf " + key + " $name)"
    return "index " + values_expr(("generated",)) + " " + json.dumps(node.key)


def _present(node: dict[Any, Any]) -> Cond:
    """Condition under which an emptiable map has at least one entry."""
    conjs: list[tuple[Atom, ...]] = []
    for key, val in node.items():
        if isinstance(key, Splice) and isinstance(val, Variant):  # spliced where its variant says
            conjs += [(*conj, Atom(key.path, "is", True)) for cond, case in val.cases if case is not MISSING for conj in cond]
        elif isinstance(key, Splice):
            conjs.append((Atom(key.path, "is", True),))
        else:
            conjs += [conj for cond, case in val.cases if case is not MISSING for conj in cond]
    return tuple(conjs)


def _key(key: str) -> str:
    found = _KEYS.get(key) if type(key) is str else None
    if found is None:
        found = _dump_one(key, 0, False)[0][: -len(": 0")]
        if type(key) is str:
            _KEYS[key] = found
    return found


_KEYS: dict[str, str] = {}
"""A string map key as printed (before ``:``), by key."""


def _conds(node: Any) -> list[Cond] | None:
    return [c for c, _ in node.cases] if isinstance(node, Variant) else None


JOINED = "joined"
NAMES = "names"
"""The named template (renderer/data/chart_helpers.tpl) printing a values map of booleans as
``key=true,key=false`` (``helm_tree.joined_text``)."""

MERGED = "merged"
"""The named template (renderer/data/chart_helpers.tpl) printing values maps merged as the
builders merge them (``helm_tree.merged_maps``): deeply, a later one winning."""


def merged_call(paths: list[Path] | tuple[Path, ...] | list[str], key: str = "") -> str:
    """``include "<chart>.merged" (list A B)``: the maps' merge as YAML, nothing when it is empty;
    with ``key``, ``include "<chart>.mergedEntry" (list "key" A B)``: ``key:`` and the merge under it.
    ``paths``: values paths, or expressions (:func:`splice_source`)."""
    args = " ".join(p if isinstance(p, str) else values_expr(p) for p in paths)
    if key:
        return f'include "{CHART}.{MERGED}Entry" (list {json.dumps(key)} {args})'
    return f'include "{CHART}.{MERGED}" (list {args})'


PULL = "pullSecrets"
"""The named template (renderer/data/chart_helpers.tpl) joining a pod's pull-secret lists, each
name once (``helm_tree.unique_secrets``)."""


def pull_secrets_call(items: list[Any], ind: int) -> str:
    """``include "<chart>.pullSecrets" (list A B)`` for the lists of :func:`helm_eval.secret_lists`
    (one spliced only when booleans hold as ``(and a b <list>)``), :func:`packed`."""
    args = []
    for item in items:
        gated = _gated_splice(item) if isinstance(item, Variant) else None
        source = gated[0] if gated is not None else values_expr(item.path)
        args.append(f"({source})" if source.startswith("and ") else source)
    return packed(f'include "{CHART}.{PULL}" (list', args, ind, 16)


def packed(head: str, args: list[str], ind: int, reserve: int) -> str:
    """``head args...)`` on one line when it fits in :data:`WIDTH` less ``reserve`` (the action
    around it), else as many arguments on a line as fit, the rest on lines below (indented by 4)."""
    one = head + "".join(" " + a for a in args) + ")"
    if ind + len(one) + reserve <= WIDTH:
        return one
    lines = [head]
    for arg in args:
        room = WIDTH - reserve - (ind if len(lines) == 1 else ind + 4)
        if len(lines[-1]) + 1 + len(arg) <= room:
            lines[-1] += " " + arg
        else:
            lines.append(arg)
    return ("\n" + " " * (ind + 4)).join(lines) + ")"


def splice_source(key: Splice, val: Any) -> str:
    """The values map a map splice inserts: ``.Values.x``, or behind its variant (a key the
    release prunes) ``and (<condition>) .Values.x``, which gives the map when the condition
    holds and false (nothing to insert, no map to merge) when it does not."""
    if not isinstance(val, Variant):
        return values_expr(key.path)
    cond = tuple(conj for c, case in val.cases if case is not MISSING for conj in c)
    return "and " + _arg(cond_expr(cond)) + " " + values_expr(key.path)


_LITERALS: list[Helpers] = []
"""While the chart's templates print, or its named templates are chosen: the named templates,
whose interner tells a literal map and which keep its text (:meth:`Helpers.literal`), for the
prints that count lines too (an ``Out`` without named templates: a literal map includes none)."""


def emit_entries(out: Out, node: dict[Any, Any], ind: int) -> None:
    """The entries of ``node`` at indentation ``ind``; a literal map (nothing from the values:
    the env entries, labels and schema parts the components repeat) printed once per build and
    indentation, its text reused (:meth:`Helpers.literal`)."""
    helpers = out.helpers or (_LITERALS[-1] if _LITERALS else None)
    if helpers is not None and node and not helpers.intern.acts(node):
        text = helpers.literal(node, ind, _literal_text)
        if text:
            out.lines(text)
            return
    _emit_entries(out, node, ind)


def _merged_entry(node: dict[Any, Any], key: str, ind: int) -> str | None:
    """``include "<chart>.mergedEntry" (list "key" A B)`` for a map of values maps alone (what
    ``if`` their presence, ``key:``, their merge prints), None when the line would be too long."""
    source = merged_call(_merge_args(node, list(node)), key)
    return source if _fits_one_line(source, ind) else None


def _merge_args(node: dict[Any, Any], splices: list[Splice]) -> list[str]:
    """The values maps ``splices`` of ``node`` as arguments of a merge call."""
    return [f"({g})" if g.startswith("and ") else g for g in (splice_source(s, node[s]) for s in splices)]


def _fits_one_line(source: str, ind: int) -> bool:
    """Does ``{{- with source }}{{ . | nindent ind }}{{ end }}`` fit in :data:`WIDTH`?"""
    return ind + len("{{- with " + source + " }}{{ . | nindent " + str(ind) + " }}{{ end }}") <= WIDTH


def _literal_text(out: Out, node: dict[Any, Any], ind: int) -> str | None:
    """The text :func:`_emit_entries` prints for the literal map ``node`` into a new ``out``,
    or None when it leaves an action pending (then it is not text to reuse)."""
    _emit_entries(out, node, ind)
    return None if out.prefix else "".join(out.parts)


def _emit_entries(out: Out, node: dict[Any, Any], ind: int) -> None:
    pad = " " * ind
    items = _narrow_entries(list(node.items()), ind)
    splices: list[Splice] = []  # the map's splice keys, listed at the first one (most maps have none)
    i = 0
    while i < len(items):
        key, val = items[i]
        if type(val) in _SCALARS and type(key) is str:  # most entries: a literal scalar (emit_entry's first case)
            out.lines(_printed(key, val, False, ind))
        elif isinstance(key, Splice) and len(splices := splices or [k for k in node if isinstance(k, Splice)]) > 1:
            if key is splices[0]:  # two or more values maps: one merge (a key they share once)
                args = _merge_args(node, splices)
                source = merged_call(args)
                if not _fits_one_line(source, ind):  # a map per line (an action may span lines)
                    source = f'include "{CHART}.{MERGED}" (list' + "".join("\n" + " " * (ind + 4) + a for a in args) + ")"
                    out.ctl("with " + source, ind)
                    out.yaml(".", ind)
                    out.ctl("end", ind)
                else:
                    out.splice(source, ".", ind)
        elif isinstance(key, Splice):
            out.splice(splice_source(key, val), "toYaml .", ind)
        elif isinstance(val, Variant):
            i = _variant_entry(out, items, i, ind)
        elif key == "labels" and isinstance(val, dict) and (labels := _labels_call(val)) is not None:
            out.text(f"{pad}labels:")
            out.include_call(_wrap_call(labels[0], ind + 2), ind + 2)
            emit_entries(out, labels[1], ind + 2)
        else:
            call = out.helpers.call(("entry", key, val), ind) if out.helpers else None
            if call is not None:
                out.include_call(call, ind)
            else:
                emit_entry(out, key, val, ind, pad)
        i += 1


def _variant_entry(out: Out, items: list[tuple[Any, Any]], i: int, ind: int) -> int:
    """The entry ``items[i]`` (not a splice) whose value is a variant; the index of the last
    entry printed with it (neighbours that share its if/else)."""
    pad = " " * ind
    key, val = items[i]
    if _var_of(val):
        out.text(f"{pad}{_key(key)}: {{{{ ${_var_of(val)} | quote }}}}")
    elif isinstance(key, str) and _text_variant(out, key, val, ind):
        pass
    elif not _shares_if(val, items[i + 1 :]) and (inline := _inline(val, f"{pad}{_key(key)}: ")):
        out.text(inline)
    else:
        # neighbours switched by the same conditions share one if/else (an if/else on the
        # opposite condition turned around: `if not x / else` next to `if x`)
        run = [items[i]]
        while i + 1 < len(items) and not isinstance(items[i + 1][0], Splice) and not _var_of(items[i + 1][1]):
            nxt = items[i + 1][1]
            if isinstance(nxt, Variant) and _conds(nxt) != _conds(val) and _flippable(val, nxt):
                nxt = Variant([(val.cases[0][0], nxt.cases[1][1]), (((),), nxt.cases[0][1])])
            if _conds(nxt) != _conds(val):
                break
            i += 1
            run.append((items[i][0], nxt))
        merged = Variant([(cond, [(k, v.cases[j][1]) for k, v in run]) for j, (cond, _) in enumerate(val.cases)])
        _variant(out, merged, lambda case: emit_entries(out, {k: c for k, c in case if c is not MISSING}, ind), ind)
    return i


def _neg(cond: Cond) -> Cond | None:
    """``not cond`` as a condition of one atom, or None."""
    if len(cond) != 1 or len(cond[0]) != 1:
        return None
    atom = cond[0][0]
    if atom.op == "is":
        return ((Atom(atom.path, "is", not atom.value),),)
    if atom.op in ("eq", "ne"):
        return ((Atom(atom.path, "ne" if atom.op == "eq" else "eq", atom.value),),)
    return None


_OTHER = "\x00other"
"""In an enum's domain: any value the conditions do not name."""
_PRESENT = "\x00present"

Context = tuple[Cond, ...]
"""Conditions that hold wherever a variant is printed (it stands inside their ``if``)."""

@dataclass
class _InIf(Variant):
    """A variant made by narrowing, with the conditions of the ``if`` it stands in."""

    context: Context = ()


def _holds(cond: Cond, point: dict[Path, Any]) -> bool:
    def atom(a: Atom) -> bool:
        v = point[a.path]
        if a.op == "is":
            return bool(v) == bool(a.value)
        if a.op == "in":
            return bool(v in a.value)
        return bool((v == a.value) == (a.op == "eq"))

    return any(all(atom(a) for a in conj) for conj in cond)


def _domains(conds: list[Cond]) -> tuple[list[Path], list[tuple[Any, ...]]] | None:
    """The knobs ``conds`` read and their values (an enum's also "any other"); None when one
    is read both as a boolean and as an enum."""
    paths: dict[Path, list[Any]] = {}
    for cond in conds:
        for a in (a for conj in cond for a in conj):
            vals = paths.setdefault(a.path, [])
            if vals and (a.op == "is") != (vals == [True, False]):
                return None
            if a.op == "is":
                vals[:] = [True, False]
            else:
                vals += [v for v in (a.value if a.op == "in" else (a.value,)) if v not in vals]
    order = list(paths)
    return order, [tuple(paths[p]) if paths[p] == [True, False] else (*paths[p], _OTHER) for p in order]


def _cube_cond(cubes: list[helm_logic.Cube], order: list[Path], domains: list[tuple[Any, ...]]) -> Cond | None:
    conjs = []
    for cube in cubes:
        atoms = []
        for path, part, dom in zip(order, cube, domains, strict=True):
            allowed = [v for v in dom if v in part]
            if len(part) == len(dom):
                continue
            if dom == (True, False):
                atoms.append(Atom(path, "is", allowed[0]))
            elif _OTHER not in part:
                atoms.append(Atom(path, "eq", allowed[0]) if len(allowed) == 1 else Atom(path, "in", tuple(allowed)))
            elif len(dom) - len(part) == 1:
                atoms.append(Atom(path, "ne", next(v for v in dom if v not in part)))
            else:
                return None  # (no atom says "none of these")
        conjs.append(tuple(atoms))
    return tuple(conjs)


def _rechain(cases: list[tuple[Cond, Any]], context: Context = ()) -> list[tuple[Cond, Any]] | None:
    """The chain with one case per distinct value (nothing, MISSING, last), each condition
    minimal (:mod:`renderer.emit.helm_logic`) given the cases before it and ``context``; None
    when a knob is read both as a boolean and as an enum, or the choice is too large."""
    found_domains = _domains([c for c, _ in cases[:-1]] + list(context))
    if found_domains is None:
        return None
    order, domains = found_domains
    size = 1
    for dom in domains:
        size *= len(dom)
    if size > helm_logic.MAX_UNIVERSE:
        return None
    groups: dict[str, tuple[int, Any, set[tuple[Any, ...]]]] = {}
    outside: set[tuple[Any, ...]] = set()
    texts = [repr(case) for _, case in cases]  # (a case is a subtree: its repr made once, not per point)
    for point in itertools.product(*domains):
        at = dict(zip(order, point, strict=True))
        if not all(_holds(c, at) for c in context):
            outside.add(point)
            continue
        i = next((i for i, (cond, _) in enumerate(cases[:-1]) if _holds(cond, at)), len(cases) - 1)
        first = groups.setdefault(texts[i], (i, cases[i][1], set()))
        first[2].add(point)
        if i < first[0]:
            groups[texts[i]] = (i, first[1], first[2])
    found = [(case, on) for _, case, on in sorted(groups.values(), key=lambda g: (g[1] is MISSING, g[0]))]
    out: list[tuple[Cond, Any]] = []
    taken = set(outside)
    for case, on in found[:-1]:
        cond = _cube_cond(helm_logic.minimise(on, taken, domains), order, domains)
        if cond is None:
            return None
        out.append((cond, case))
        taken |= on
    return [*out, (((),), found[-1][0])] if found else out


def _chain(cases: list[tuple[Cond, Any]], context: Context = ()) -> Any:
    """The node chosen by ``cases``: one value when all are alike, else a variant of one case
    per value, each condition minimal (:func:`_rechain`)."""
    if len({repr(c) for _, c in cases}) == 1:
        return cases[0][1]
    found = _rechain(cases, context) or cases
    if len(found) == 1:
        return found[0][1]
    return _InIf(list(found), context)


def _ident(item: Any) -> str:
    return f"name={item['name']}" if isinstance(item, dict) and isinstance(item.get("name"), str) else repr(item)


def _union(lists: list[list[Any]]) -> list[str] | None:
    """The items' identities (a name, else the whole item) in one order every list keeps."""
    order: list[str] = []
    for one in lists:
        ids = [_ident(x) for x in one]
        if len(set(ids)) != len(ids):
            return None
        merged: list[str] = []
        matcher = difflib.SequenceMatcher(a=order, b=ids, autojunk=False)
        for _, i1, i2, j1, j2 in matcher.get_opcodes():
            merged += order[i1:i2] + [x for x in ids[j1:j2] if x not in order[i1:i2]]
        order = merged
        if len(set(order)) != len(order):
            return None
    return order


def _narrowed(node: Variant) -> Any | None:
    """The variant pushed down to what differs (the way a person writes it): a variant that
    some cases leave out, ``if`` (present) around the choice among the rest; cases that are
    maps of the same keys one map of per-key variants; two lists of one length one list of
    per-item variants; lists of named (or equal) items one list, each item behind the condition
    where it is there. Each condition minimal given the ``if`` around it."""
    cases = node.cases
    context = node.context if isinstance(node, _InIf) else ()
    if any(c is MISSING for _, c in cases):
        if all(c is MISSING for _, c in cases) or (len(cases) == 2 and cases[1][1] is MISSING):
            return None  # (already an `if` around one case: that case is narrowed where it is printed)
        gate = _rechain([(cond, MISSING if c is MISSING else _PRESENT) for cond, c in cases], context)
        if gate is None or len(gate) != 2:
            return None
        inner = (*context, gate[0][0])
        return Variant([(gate[0][0], _chain(list(cases), inner)), (((),), MISSING)])
    values = [c for _, c in cases]
    if all(isinstance(v, dict) and v for v in values):
        keys = list(values[0])
        if not all(isinstance(k, str) for k in keys) or any(list(v) != keys for v in values[1:]):
            return None
        return {k: _chain([(cond, case[k]) for cond, case in cases], context) for k in keys}
    if all(isinstance(v, list) and v for v in values):
        kind = _Items if all(isinstance(v, _Items) for v in values) else list
        if len(values) == 2 and len(values[0]) == len(values[1]):
            (c1, a), (_, b) = cases
            return kind(_chain([(c1, x), (((),), y)], context) for x, y in zip(a, b, strict=True))
        order = _union(values)
        if order is None:
            return None
        by_id = [{_ident(x): x for x in v} for v in values]
        return kind(_chain([(cond, ids.get(i, MISSING)) for (cond, _), ids in zip(cases, by_id, strict=True)], context) for i in order)
    return None


_AS_IS: set[int] = set()
"""Variants being measured as they are (not narrowed again while printed for the count)."""


_CHOSEN: dict[tuple[int, str, int], tuple[Variant, Any]] = {}
"""While a template is printed: each variant's choice (by id, where and at which indentation;
the variant kept alive with it), so that counting lines does not print a node again and again."""


def _shorter(node: Variant, emit: Any, where: str, ind: int) -> Any:
    """``node`` narrowed where the narrowed node prints fewer lines (``emit(out, node)``)."""
    if id(node) in _AS_IS or _var_of(node):
        return node
    memo = (id(node), where, ind)
    if memo in _CHOSEN:
        return _CHOSEN[memo][1]
    _CHOSEN[memo] = (node, _choose(node, emit))
    return _CHOSEN[memo][1]


def _choose(node: Variant, emit: Any) -> Any:
    alt = _narrowed(node)
    if alt is None:
        return node
    counts = []
    for one in (node, alt):
        scratch = Out()
        _AS_IS.add(id(node))
        try:
            emit(scratch, one)
        finally:
            _AS_IS.discard(id(node))
        counts.append(scratch.result().count("\n"))
    return alt if counts[1] < counts[0] else node


def _narrow_entries(items: list[tuple[Any, Any]], ind: int) -> list[tuple[Any, Any]]:
    """Each variant entry narrowed (:func:`_narrowed`) where that prints fewer lines."""
    out = []
    for key, val in items:
        if isinstance(val, Variant) and isinstance(key, str):
            val = _shorter(val, lambda o, v, k=key: emit_entries(o, {k: v}, ind), "entry " + key, ind)
        out.append((key, val))
    return out


def _narrow_items(items: list[Any], ind: int) -> list[Any]:
    """Each variant item narrowed (:func:`_narrowed`) where that prints fewer lines."""
    return [_shorter(item, lambda o, v: emit_items(o, [v], ind), "item", ind) if isinstance(item, Variant) else item for item in items]


def _shares_if(val: Variant, rest: list[Any]) -> bool:
    """Does the next entry share ``val``'s if/else (same or opposite conditions)?"""
    if not rest or isinstance(rest[0][0], Splice) or not isinstance(rest[0][1], Variant):
        return False
    nxt = rest[0][1]
    return _conds(nxt) == _conds(val) or _flippable(val, nxt)


def _text_variant(out: Out, key: str, node: Variant, ind: int) -> bool:
    """A file (multi-line string) of two versions printed once, the lines only one version has
    behind ``if`` / ``else`` inside the literal block; False (nothing printed) when the two do
    not print as literal blocks of one header."""
    if len(node.cases) != 2 or not all(type(case) is str and "\n" in case for _, case in node.cases):
        return False
    first, second = (_dump_one(key, case, False) for _, case in node.cases)
    if len(first) < 2 or len(second) < 2 or first[0] != second[0] or not first[0].endswith(("|", "|-", "|+")):
        return False
    pad = " " * ind
    cond = node.cases[0][0]
    out.text(pad + first[0])
    matcher = difflib.SequenceMatcher(a=first[1:], b=second[1:], autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            for line in first[1 + i1 : 1 + i2]:
                out.text(pad + line)
            continue
        out.ctl(wrapped("if", cond, ind + 2) if i2 > i1 else "if " + _negated(cond), ind + 2)
        for line in first[1 + i1 : 1 + i2]:
            out.text(pad + line)
        if j2 > j1 and i2 > i1:
            out.ctl("else", ind + 2)
        if j2 > j1:
            for line in second[1 + j1 : 1 + j2]:
                out.text(pad + line)
        out.ctl("end", ind + 2)
    return True


INLINE = 136
"""Longest line (not counting its indentation) holding a scalar's ``if`` / ``else`` inline
(``key: {{ if c }}a{{ else }}b{{ end }}``)."""


def _inline_scalar(case: Any) -> str | None:
    """A variant's case as text in the value's place: a value, or a one-line literal scalar."""
    if isinstance(case, (Ref, Derived, Param, Joined)) or (isinstance(case, Interp) and _scalar(case)):
        text = _scalar(case)
        return text if text is not None and "\n" not in text else None
    if isinstance(case, (dict, list, Variant, Splice, Block, MergeBlock)) or case is MISSING or _multiline(case):
        return None
    lines = _dump_one("k", case, False)
    return lines[0][len("k: ") :] if len(lines) == 1 else None


def _inline(node: Variant, head: str) -> str | None:
    """A scalar chosen by an if/else (no case left out) on one line, as hand-written charts do:
    ``head{{ if c }}a{{ else }}b{{ end }}``; None when a case is no one-line scalar or the line
    would pass :data:`INLINE` characters."""
    if len(node.cases) != 2:
        return None
    (cond, first), (_, second) = node.cases
    if (
        len(cond) == 1
        and len(cond[0]) == 1
        and cond[0][0].op == "is"
        and cond[0][0].value
        and isinstance(first, Ref)
        and isinstance(second, Ref)
        and first.path == cond[0][0].path
        and first.quote == second.quote
        and not (first.number or second.number)
    ):  # the value, or another when it is empty
        line = f"{head}{{{{ {values_expr(first.path)} | default {values_expr(second.path)}{' | quote' if first.quote else ''} }}}}"
        return line if len(line) <= WIDTH else None
    texts = [_inline_scalar(case) for _, case in node.cases]
    if texts[0] is None or texts[1] is None:
        return None
    if {texts[0], texts[1]} == {"'false'", "'true'"} and (expr := _flag_expr(cond, texts[0] == "'true'")) is not None:
        line = f"{head}{{{{ {expr} | quote }}}}"  # the condition is the value (as a bool knob's Ref is)
        if len(line) > WIDTH and texts[0] == "'true'" and len(cond) > 1:  # one operand of `or` a line, as `wrapped` breaks an `if`
            pad = "\n" + " " * (len(head) - len(head.lstrip()) + 4)
            line = f"{head}{{{{ or" + "".join(pad + _arg(cond_expr((conj,))) for conj in cond) + " | quote }}"
        if all(len(one) <= WIDTH for one in line.split("\n")):
            return line
    atom = cond[0][0] if len(cond) == 1 and len(cond[0]) == 1 else None
    if atom is not None and (atom.op == "ne" or (atom.op == "is" and not atom.value)) and (neg := _neg(cond)):
        cond, texts = neg, texts[::-1]  # `if x` rather than `if not x`
    line = f"{head}{{{{ if {cond_expr(cond)} }}}}{texts[0]}{{{{ else }}}}{texts[1]}{{{{ end }}}}"
    return line if len(line.lstrip()) <= INLINE and len(line) <= WIDTH and "{{ if true }}" not in line else None


BOOLEANS: set[Path] = set()
"""Paths of the boolean knobs of what is being printed (:attr:`Template.booleans` of the
template, or of every template when the chart's helpers print too: :attr:`Helpers.booleans`)."""


def _flag_expr(cond: Cond, holds: bool) -> str | None:
    """``cond`` (``holds``) or its negation as an expression whose value is a boolean, or None:
    ``and`` / ``or`` give one of their operands, so each must be a boolean (a boolean knob, a
    comparison, a ``not``); ``not`` is one whatever it is given."""
    if not holds:  # (`not (...)`, or one atom turned around: `not x` to `x` only for a boolean x)
        one = cond[0][0] if len(cond) == 1 and len(cond[0]) == 1 else None
        return None if one is not None and one.op == "is" and not one.value and one.path not in BOOLEANS else _negated(cond)
    if all(a.op != "is" or not a.value or a.path in BOOLEANS for conj in cond for a in conj):
        return cond_expr(cond)
    return None


def _negated(cond: Cond) -> str:
    """``not cond`` as a condition: one atom turned around, else ``not (...)``."""
    if len(cond) == 1 and len(cond[0]) == 1:
        atom = cond[0][0]
        if atom.op == "is":
            return _atom(Atom(atom.path, "is", not atom.value))
        if atom.op in ("eq", "ne"):
            return _atom(Atom(atom.path, "ne" if atom.op == "eq" else "eq", atom.value))
    return f"not ({cond_expr(cond)})"


APP_LABELS = "appLabels"
"""The named template (renderer/data/chart_helpers.tpl) printing what ``common.labels(app,
component)`` builds: ``app``, ``app.kubernetes.io/name``, ``part-of``, ``component``, ``managed-by``,
then an ``extra`` map (``daemonsets.labels``) when the labels end with one."""
_APP_KEYS = ("app", "app.kubernetes.io/name", "app.kubernetes.io/part-of")


def _plain(text: Any) -> bool:
    """A literal string YAML reads back as that string without quotes."""
    return isinstance(text, str) and bool(text) and _dump_one("k", text, False) == (f"k: {text}",)


def _labels_call(node: dict[Any, Any]) -> tuple[list[str], dict[Any, Any]] | None:
    """``include`` arguments for the labels ``common.labels`` builds at the head of ``node``, and
    the entries after them; None when the head is not those labels (or not literal)."""
    items = list(node.items())
    head = [k for k, _ in items[:3]]
    if tuple(head) != _APP_KEYS or not _plain(items[0][1]) or items[1][1] != items[0][1] or items[2][1] != "gpu-stack":
        return None
    args = ['"app"', json.dumps(items[0][1])]
    rest = items[3:]
    if rest and rest[0][0] == "app.kubernetes.io/component":
        if not _plain(rest[0][1]):
            return None
        args += ['"component"', json.dumps(rest[0][1])]
        rest = rest[1:]
    if not rest or rest[0] != ("app.kubernetes.io/managed-by", "gpu-render"):
        return None
    rest = rest[1:]
    if len(rest) == 1 and isinstance(rest[0][0], Splice):
        source = splice_source(rest[0][0], rest[0][1])
        args += ['"extra"', f"({source})" if isinstance(rest[0][1], Variant) else source]
        rest = []
    return args, dict(rest)


def _wrap_call(args: list[str], ind: int) -> str:
    """``include "<chart>.appLabels" (dict ...)``, its pairs one per line when one line is too long."""
    one = f'include "{CHART}.{APP_LABELS}" (dict ' + " ".join(args) + ")"
    if ind + len(one) + 20 <= WIDTH:
        return one
    pad = "\n" + " " * (ind + 4)
    pairs = [f"{args[i]} {args[i + 1]}" for i in range(0, len(args), 2)]
    return f'include "{CHART}.{APP_LABELS}" (dict' + "".join(pad + p for p in pairs) + ")"


def emit_entry(out: Out, key: str, val: Any, ind: int, pad: str) -> None:
    if type(val) in _SCALARS:  # most entries: a literal scalar, as the base prints it
        out.lines(_printed(key, val, False, ind))
        return
    k = _key(key)
    if isinstance(val, Block):
        out.ctl("with " + values_expr(val.path), ind)
        out.text(f"{pad}{k}:")
        out.yaml("toYaml .", ind + 2)
        out.ctl("end", ind)
        return
    if isinstance(val, MergeBlock):  # the entry on one line: `key:` and the merge, or nothing
        out.splice(merged_call(val.paths, key), ".", ind)
        return
    if isinstance(val, Derived) and val.block:  # a computed collection: always there
        out.text(f"{pad}{k}:")
        out.yaml(derived_expr(val) + " | toYaml", ind + 2)
        return
    scalar = _scalar(val)
    if scalar is not None:
        if len(pad) + len(k) + len(scalar) + 2 > WIDTH and isinstance(val, Interp) and not scalar.startswith("{{ list"):
            scalar = _interp_printf(val, pad)
        out.text(f"{pad}{k}: {scalar}")
    elif isinstance(val, dict) and len(val) > 1 and all(isinstance(s, Splice) for s in val) and (one := _merged_entry(val, key, ind)) is not None:
        out.splice(one, ".", ind)  # only values maps: `key:` and their merge, or nothing, on one line
    elif isinstance(val, dict) and val and emptiable(val):
        out.ctl(wrapped("if", _present(val), ind), ind)
        out.text(f"{pad}{k}:")
        emit_entries(out, val, ind + 2)
        out.ctl("end", ind)
    elif isinstance(val, dict) and val:
        out.text(f"{pad}{k}:")
        emit_entries(out, val, ind + 2)
    elif key == PULL_SECRETS and secret_lists(val):
        out.ctl("with " + pull_secrets_call(val, ind), ind)
        out.text(f"{pad}{k}:")
        out.yaml(".", ind + 2)
        out.ctl("end", ind)
    elif splices_only(val) is not None:
        out.ctl(wrapped("if", splices_only(val) or ((),), ind), ind)
        out.text(f"{pad}{k}:")
        emit_items(out, val, ind + 2)
        out.ctl("end", ind)
    elif isinstance(val, list) and val:
        out.text(f"{pad}{k}:")
        emit_items(out, val, ind + 2)
    else:
        out.lines(_printed(key, val, False, ind))


def emit_items(out: Out, items: list[Any], ind: int, runs: bool = True) -> None:
    pad = " " * ind
    for item in _narrow_items(_runs(items) if runs else items, ind):
        if item is MISSING:  # an item no values render (as in a run, below)
            continue
        if isinstance(item, _Items):  # as they are: a run split by narrowing is not joined again
            emit_items(out, [i for i in item if i is not MISSING], ind, runs=False)
            continue
        if isinstance(item, Splice):
            out.splice(values_expr(item.path), "toYaml (list .)" if item.is_map else "toYaml .", ind)
        elif isinstance(item, Variant) and out.helpers and (call := out.helpers.call(("item", "", item), ind)) is not None:  # (helm_named.optional_item)
            out.splice(f"{call} | trim", ".", ind)  # an item behind its own condition: maybe nothing
        elif isinstance(item, Variant) and _var_of(item):
            out.text(f"{pad}- {{{{ ${_var_of(item)} | quote }}}}")
        elif isinstance(item, Variant) and (inline := _inline(item, f"{pad}- ")) is not None:
            out.text(inline)
        elif isinstance(item, Variant) and (gated := _gated_splice(item)) is not None:
            source, splice = gated
            out.splice(source, "toYaml (list .)" if splice.is_map else "toYaml .", ind)
        elif isinstance(item, Variant):
            _variant(out, item, lambda case: emit_items(out, [case], ind), ind)
        else:
            call = out.helpers.call(("item", "", item), ind) if out.helpers and isinstance(item, dict) else None
            if call is not None:
                out.include_call(call, ind)
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
    merged: list[Any] = []
    for one in (r.variant() if isinstance(r, _Run) else r for r in out):
        last = merged[-1] if merged else None
        if isinstance(last, Variant) and _gated(one) and _gated(last) and _complement(last.cases[0][0], one.cases[0][0]):
            merged[-1] = Variant([last.cases[0], (((),), one.cases[0][1])])  # one item or the other: if/else
        elif (
            isinstance(last, Variant)
            and isinstance(one, Variant)
            and _chained(one)
            and len(one.cases) == 2
            and _chained(last)
            and all(_exclusive(c, one.cases[0][0]) for c, _ in last.cases[:-1])
        ):
            merged[-1] = Variant([*last.cases[:-1], one.cases[0], last.cases[-1]])  # never both: else if
        else:
            merged.append(one)
    return merged


def _gated_splice(node: Variant) -> tuple[str, Splice] | None:
    """A values collection spliced in only when some booleans hold: ``with and a b <collection>``
    (``and`` gives its last operand when all hold), and the splice; None for other variants."""
    if len(node.cases) != 2 or not _nothing(node.cases[1][1]):
        return None
    (cond, case) = node.cases[0]
    if isinstance(case, _Items):
        case = [c for c in case if c is not MISSING]
        case = case[0] if len(case) == 1 else None
    if not isinstance(case, Splice) or len(cond) != 1 or not all(a.op == "is" and a.value for a in cond[0]) or not cond[0]:
        return None
    atoms = [a for a in cond[0] if a.path != case.path]  # (`with` tests the collection itself)
    if not atoms:
        return values_expr(case.path), case
    return "and " + " ".join(_arg(_atom(a)) for a in atoms) + " " + _arg(values_expr(case.path)), case


def _chained(node: Variant) -> bool:
    """An ``if`` / ``else if`` chain of items with nothing in its ``else``?"""
    return len(node.cases) >= 2 and _nothing(node.cases[-1][1]) and not any(_nothing(c) for _, c in node.cases[:-1])


def _exclusive(a: Cond, b: Cond) -> bool:
    """Can ``a`` and ``b`` never hold together (each pair of products reads one knob two ways)?"""

    def clash(x: Atom, y: Atom) -> bool:
        if x.path != y.path:
            return False
        if x.op == y.op == "is":
            return bool(x.value) != bool(y.value)
        if x.op == y.op == "eq":
            return bool(x.value != y.value)
        return {x.op, y.op} == {"eq", "ne"} and x.value == y.value

    return all(any(clash(x, y) for x in p for y in q) for p in a for q in b)


def _flippable(first: Variant, other: Variant) -> bool:
    """Are both if/else (two cases, the second ``else``) on opposite conditions?"""
    return (
        len(first.cases) == len(other.cases) == 2
        and first.cases[1][0] == other.cases[1][0] == ((),)
        and _complement(first.cases[0][0], other.cases[0][0])
    )


def _complement(a: Cond, b: Cond) -> bool:
    """Is ``b`` exactly ``not a``? (One atom each: ``x`` / ``not x``, ``eq x v`` / ``ne x v``.)"""
    if len(a) != 1 or len(b) != 1 or len(a[0]) != 1 or len(b[0]) != 1:
        return False
    x, y = a[0][0], b[0][0]
    if x.path != y.path:
        return False
    if x.op == y.op == "is":
        return bool(x.value) != bool(y.value)
    return {x.op, y.op} == {"eq", "ne"} and x.value == y.value


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
    scalar = None if type(item) in _SCALARS else _scalar(item)
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
        out.lines(_printed("", item, True, ind))


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


def _camel(text: str) -> str:
    """``PROCESS_TO_SIGNAL`` / ``mount-path`` -> ``processToSignal`` / ``mountPath``."""
    words = [w for w in re.split(r"[^A-Za-z0-9]+", text) if w]
    if not words:
        return ""
    if all(w.isupper() or w.isdigit() for w in words):
        words = [w.lower() for w in words]
    return words[0][:1].lower() + words[0][1:] + "".join(w[:1].upper() + w[1:] for w in words[1:])


def template_text(tpl: Template, header: str, helpers: Helpers | None = None) -> str:
    BOOLEANS.clear()
    BOOLEANS.update(helpers.booleans if helpers is not None else tpl.booleans)
    if helpers is None:
        return _template_text(tpl, header, helpers)
    _LITERALS.append(helpers)
    try:
        return _template_text(tpl, header, helpers)
    finally:
        _LITERALS.pop()


def _template_text(tpl: Template, header: str, helpers: Helpers | None) -> str:
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
        mark = len(out.parts)
        try:
            for node in _object_runs(list(tpl.pooled.values())):
                _object(out, node)
        finally:
            _SCOPE.pop()
        out.parts.insert(mark, pool_sections("".join(out.parts[mark:])))
        out.ctl("end")
        out.ctl("end")
    if gated:
        out.ctl("end")
    _CHOSEN.clear()
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


def _literal(node: Any) -> bool:
    """Plain YAML data, nothing taken from the values."""
    if isinstance(node, dict):
        return all(isinstance(k, str) and _literal(v) for k, v in node.items())
    if isinstance(node, list):
        return all(_literal(v) for v in node)
    return isinstance(node, _SCALARS)


_ITEM = "\x00item"


def _as_item(node: Any, name: str) -> Any:
    """``node`` with each string that is ``name`` replaced by the range's item (:data:`_ITEM`)."""
    if isinstance(node, dict):
        return {k: _as_item(v, name) for k, v in node.items()}
    if isinstance(node, list):
        return [_as_item(v, name) for v in node]
    return _ITEM if node == name else node


def _item_param(node: Any) -> Any:
    if isinstance(node, dict):
        return {k: _item_param(v) for k, v in node.items()}
    if isinstance(node, list):
        return [_item_param(v) for v in node]
    return Param("") if node == _ITEM else node


def _name_of(node: Any) -> str | None:
    meta = node.get("metadata") if isinstance(node, dict) else None
    name = meta.get("name") if isinstance(meta, dict) else None
    return name if isinstance(name, str) and _plain(name) and _literal(node) else None


def _alike_runs(nodes: list[Any]) -> list[Any]:
    """Neighbouring literal objects that differ only in their name (where it stands: the
    RuntimeClasses' ``handler``) as one ``(names, body)`` for a ``range`` over the names."""
    out: list[Any] = []
    for node in nodes:
        name = _name_of(node)
        body = _as_item(node, name) if name is not None else None
        last = out[-1] if out else None
        if body is not None and isinstance(last, tuple) and last[1] == body:
            last[0].append(name)
        elif body is not None:
            out.append(([name], body, node))
        else:
            out.append(node)
    return [(one[0], _item_param(one[1])) if isinstance(one, tuple) and len(one[0]) > 1 else one[2] if isinstance(one, tuple) else one for one in out]


def _object(out: Out, node: Any) -> None:
    if isinstance(node, _Objects):
        for one in _alike_runs(list(node)):
            if isinstance(one, tuple):  # one body, `{{ . }}` for the name
                names, body = one
                out.ctl("range list " + " ".join(json.dumps(n) for n in names))
                _object(out, body)
                out.ctl("end")
            else:
                _object(out, one)
        return
    if isinstance(node, Variant):
        _variant(out, node, lambda case: _object(out, case))
        return
    out.text("---")
    hoisted = out.helpers.repeated(node) if out.helpers is not None else _repeated(node)
    for var, variant in hoisted:
        _assign(out, var, variant)
    _VARS.update({repr(variant): var for var, variant in hoisted})
    try:
        emit_entries(out, node, 0)
    finally:
        _VARS.clear()


_VARS: dict[str, str] = {}
"""While an object is printed: its repeated one-string variants (by repr), each computed once at
the object's top into a variable (the driver DaemonSet's name, label and selector)."""


def _var_of(node: Any) -> str:
    """The variable :data:`_VARS` holds ``node`` in, or "" (no repr made when it holds none,
    or when ``node`` is no chooser among strings: the variants it holds are such choosers
    (:func:`_repeated`), a repr tells each case's type, and a node's repr is a walk of all of it)."""
    return _VARS.get(repr(node), "") if _VARS and isinstance(node, Variant) and _hoistable(node) else ""


def _hoistable(node: Variant) -> bool:
    """A chooser among three or more strings (no case left out; an if/else is as short inline)."""
    return len(node.cases) >= 3 and all(
        type(case) is str or isinstance(case, Interp) or (isinstance(case, Ref) and case.quote) for _, case in node.cases
    )


def _repeated(obj: Any, acts: Callable[[Any], bool] | None = None) -> list[tuple[str, Variant]]:
    """(variable, variant) for every one-string variant printed two or more times in ``obj``,
    named after the keys where it first stands (``metadata.name`` -> ``metadataName``).
    ``acts``: whether a map or list takes anything from the values (the named templates'
    interner, when there is one): one that takes nothing holds no variant, not walked."""
    found: dict[str, list[tuple[tuple[str, ...], Variant]]] = {}

    def walk(node: Any, path: tuple[str, ...]) -> None:
        if isinstance(node, Variant):
            if _hoistable(node):
                found.setdefault(repr(node), []).append((path, node))
                return
            for _, case in node.cases:
                walk(case, path)
        elif acts is not None and not acts(node):
            return
        elif isinstance(node, dict):
            for k, v in node.items():
                if isinstance(v, (dict, list, Variant)):
                    walk(v, (*path, k) if isinstance(k, str) else path)
        elif isinstance(node, list):
            for v in node:
                if isinstance(v, (dict, list, Variant)):
                    walk(v, path)

    walk(obj, ())
    out: list[tuple[str, Variant]] = []
    taken = {"name", "pool", "Values"}
    for uses in found.values():
        if len(uses) < 2:
            continue
        path, variant = uses[0]
        var = _camel("-".join(path[-2:]))
        k = 1
        while not IDENT.fullmatch(var or "-") or var in taken:
            k += 1
            var = f"value{k}"
        taken.add(var)
        out.append((var, variant))
    return out


def _assign(out: Out, var: str, node: Variant) -> None:
    """``$var`` set to the variant's string: declared with the ``else`` case's, each other case's
    assigned on its condition's line (``{{- if c }}{{ $var = ... }}``); where such a line would
    be too long, declared empty and assigned in each case."""
    heads = ["if" if i == 0 else "else if" for i in range(len(node.cases) - 1)]
    lines = [f"{{{{- {h} {cond_expr(c)} }}}}{{{{ ${var} = {_string_expr(case)} }}}}" for h, (c, case) in zip(heads, node.cases, strict=False)]
    if out.can_trim() and all(len(line) <= WIDTH for line in lines):
        out.ctl(f"${var} := {_string_expr(node.cases[-1][1])}")
        out.parts += [line + "\n" for line in lines]
        out.ctl("end")
        return
    out.ctl(f'${var} := ""')
    for i, (cond, case) in enumerate(node.cases):
        if i == 0:
            out.ctl(wrapped("if", cond))
        elif i == len(node.cases) - 1:
            out.ctl("else")
        else:
            out.ctl(wrapped("else if", cond))
        out.ctl(f"${var} = {_string_expr(case)}")
    out.ctl("end")


def _string_expr(node: Any) -> str:
    """A string as a template expression: a literal, a value, or ``printf`` of the parts."""
    if isinstance(node, Ref):
        return ref_expr(node)
    if isinstance(node, Interp):
        fmt = "".join("%v" if isinstance(p, Ref) else p.replace("%", "%%") for p in node.parts)
        return "printf " + json.dumps(fmt) + "".join(" " + ref_expr(p) for p in node.parts if isinstance(p, Ref))
    return json.dumps(node)
