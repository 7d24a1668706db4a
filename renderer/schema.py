"""Validate merged values against schemas/values.schema.json, with source positions.

Errors become :class:`Problem` values that point at the line in the file the value came from
(fleet values or overlay), with hints: the closest known key for a typo, the allowed values
for an enum.
"""

from __future__ import annotations

import json
import re
from functools import cache
from pathlib import Path
from typing import Any

from renderer import noeffect
from renderer.merge import Located
from renderer.noeffect import NO_EFFECT, OPERATOR_ONLY
from renderer.problems import Problem, Severity, pointer_of

SCHEMA_FILE = "values.schema.json"


def schema_text(name: str = SCHEMA_FILE) -> str:
    """The text of one of gpu-render's JSON Schemas (repo checkout or installed package)."""
    here = Path(__file__).resolve().parent.parent / "schemas" / name
    if here.is_file():
        return here.read_text(encoding="utf-8")
    from importlib import resources  # (an install whose schemas are no files: rare, imported then)

    return resources.files("renderer.schemas").joinpath(name).read_text(encoding="utf-8")


@cache
def load_schema(name: str = SCHEMA_FILE) -> dict[str, Any]:
    data = json.loads(schema_text(name))
    assert isinstance(data, dict)
    return data


def anchored(pattern: str) -> str:
    """``pattern`` with every ``$`` anchor (outside a character class, not escaped) made ``\\Z``.

    The schema's patterns are ECMA/RE2 regular expressions, where ``$`` is the end of the text
    (Helm's and Go's validators read them so); Python's ``$`` also matches before a trailing
    newline, which let ``"gpu-operator\\n"`` pass every anchored pattern.
    """
    out: list[str] = []
    i, in_class = 0, False
    while i < len(pattern):
        ch = pattern[i]
        if ch == "\\":
            out.append(pattern[i : i + 2])
            i += 2
            continue
        if in_class:
            in_class = ch != "]" or bool(out and out[-1] == "[")
        elif ch == "[":
            in_class = True
        elif ch == "$":
            out.append("\\Z")
            i += 1
            continue
        out.append(ch)
        i += 1
    return "".join(out)


@cache
def _compiled(pattern: str) -> re.Pattern[str]:
    return re.compile(anchored(pattern))


def _pattern(validator: Any, pattern: str, instance: Any, schema: dict[str, Any]) -> Any:
    from jsonschema.exceptions import ValidationError

    if validator.is_type(instance, "string") and not _compiled(pattern).search(instance):
        yield ValidationError(f"{instance!r} does not match {pattern!r}")


def _pattern_properties(validator: Any, patterns: dict[str, Any], instance: Any, schema: dict[str, Any]) -> Any:
    if not validator.is_type(instance, "object"):
        return
    for pattern, subschema in patterns.items():
        for key, value in instance.items():
            if _compiled(pattern).search(key):
                yield from validator.descend(value, subschema, path=key, schema_path=pattern)


@cache
def _validator() -> Any:
    from jsonschema import Draft202012Validator, validators

    strict = validators.extend(  # type: ignore[no-untyped-call]
        Draft202012Validator, {"pattern": _pattern, "patternProperties": _pattern_properties}
    )
    return strict(load_schema())


FAST_MODULE = "_schema_check.py"
"""``renderer/_schema_check.py``: the schema compiled to Python by fastjsonschema (:func:`fast_source`)."""


_STAND_INS = {
    "from decimal import Decimal\n": (
        "class Decimal:  # no value read from YAML or JSON is one: the decimal module is not imported\n"
        "    pass\n"
    ),
    "from fastjsonschema import JsonSchemaValueException, JsonSchemaValuesException\n": (
        "class JsonSchemaValueException(ValueError):  # fastjsonschema's, without importing its package\n"
        "    def __init__(self, message, value=None, name=None, definition=None, rule=None):\n"
        "        super().__init__(message)\n"
        "\n"
        "\n"
        "class JsonSchemaValuesException(ValueError):\n"
        "    def __init__(self, message, errors=None):\n"
        "        super().__init__(message)\n"
    ),
}
"""Imports of fastjsonschema's code and what :func:`fast_source` writes instead: the check runs
in every ``build`` and ``validate``, and the two imports (the decimal module, fastjsonschema's
package with its code generators) took about 5 ms. Safe for a fast path: a refusal of any kind
sends the data to jsonschema (:func:`_problems`), and a ``Decimal`` that is not the decimal
module's only makes the check refuse a value no loader makes."""


def fast_source() -> str:
    """The text of ``renderer/_schema_check.py`` for the schema as it is now.

    fastjsonschema's code, made with defaults never filled in (it would write into the data)
    and short exceptions, its imports replaced (:data:`_STAND_INS`); headed by the sha256 of the schema text it was made from, so a
    stale module is never used (:func:`_fast`)."""
    import hashlib

    import fastjsonschema

    text = schema_text()
    code = fastjsonschema.compile_to_code(json.loads(text), use_default=False, detailed_exceptions=False)
    for line, stand_in in _STAND_INS.items():  # (the check's imports: a fifth of its import time)
        assert line in code, f"fastjsonschema's code no longer holds {line!r}"
        code = code.replace(line, stand_in, 1)
    entry = re.search(r"^def (\w+)\(", code, re.MULTILINE)  # the root schema's function comes first
    assert entry is not None
    code += f"\n\nvalidate = {entry.group(1)}\n"
    return (
        "# Code generated by gpu-render from schemas/values.schema.json with fastjsonschema. DO NOT EDIT.\n"
        "# Regenerate: python -m pytest tests/test_schema_fast.py --update-golden\n"
        "# ruff: noqa\n"
        "# mypy: ignore-errors\n"
        f"SCHEMA_SHA256 = {hashlib.sha256(text.encode('utf-8')).hexdigest()!r}\n" + code
    )


@cache
def _fast() -> Any:
    """The compiled validator, or None when the module is missing or made from another schema.

    It is the fast path only: it may refuse more than jsonschema does (it anchors ``$`` at the
    very end, it checks formats), never less (``tests/test_schema_fast.py``), and whatever it
    refuses is validated again by jsonschema, which words the problems. A valid build never
    imports jsonschema."""
    import hashlib

    try:
        from renderer import _schema_check
    except ImportError:  # pragma: no cover - the module ships with the package
        return None
    if hashlib.sha256(schema_text().encode("utf-8")).hexdigest() != _schema_check.SCHEMA_SHA256:
        return None
    return _schema_check.validate


def validate(located: Located, fleet: FleetSections | None = None) -> list[Problem]:
    """All schema problems of the merged values, deduplicated and sorted.

    Unknown keys point at the key, every other problem at the value; each carries the file the
    value came from (fleet values or an overlay).

    With ``fleet`` (the fleet values an overlay was merged over), only the top-level sections
    the overlay set are validated; any other section is the fleet's own object (the merge copies
    on write) and its problems, with their positions, are the fleet's, validated once. Same result: the root
    schema has no keyword that relates one section to another (checked, else all is validated).
    """
    if fleet is None or located.overlaid is None or not _sections_independent():
        return sorted(_problems(located.data, located))
    # a section the overlay set, even to an equal value, points into the overlay: validated
    overlaid = located.overlaid
    touched = {key: value for key, value in located.data.items() if key in overlaid or fleet.data.get(key, _MISSING) is not value}
    problems = _problems(touched, located) if touched else set()
    for key in located.data.keys() - touched.keys():
        problems.update(fleet.problems_of(key))
    return sorted(problems)


_MISSING = object()


def _problems(data: dict[str, Any], located: Located) -> set[Problem]:
    fast = _fast()
    if fast is not None:
        try:
            fast(data)
            return set()
        except Exception:  # refused (or a value it cannot handle): jsonschema decides and words it
            pass
    problems: set[Problem] = set()
    for err in _validator().iter_errors(data):
        problems.update(_to_problems(err, located))
    return problems


class FleetSections:
    """The fleet values' schema problems, one top-level section at a time (computed on demand)."""

    def __init__(self, fleet: Located) -> None:
        self.located = fleet
        self.data = fleet.data
        self._problems: dict[str, set[Problem]] = {}

    def problems_of(self, key: str) -> set[Problem]:
        found = self._problems.get(key)
        if found is None:
            found = self._problems[key] = _problems({key: self.data[key]}, self.located)
        return found


# Root keywords under which each top-level section validates on its own: the errors of a
# document are the union of the errors of its one-section parts.
_INDEPENDENT_ROOT = {"$schema", "$id", "$comment", "title", "description", "type", "properties", "additionalProperties", "$defs", "definitions"}


@cache
def _sections_independent() -> bool:
    root = load_schema()
    return root.get("type") == "object" and set(root) <= _INDEPENDENT_ROOT and isinstance(root.get("additionalProperties", True), bool)


def _to_problems(err: Any, located: Located) -> list[Problem]:
    path = list(err.absolute_path)
    if err.validator in ("additionalProperties", "unevaluatedProperties"):
        extras = _extra_keys(err)
        if extras:
            return [_unknown_key(err, path, key, located) for key in extras]
    if err.validator in ("anyOf", "oneOf") and err.context:
        return [_composite(err, located)]
    message, hint = _explain(err)
    pointer = pointer_of(path)
    file, line, col = located.locate(pointer)
    return [Problem(file, line, col, pointer, message, hint=hint, code=f"schema-{err.validator}")]


def _unknown_key(err: Any, path: list[Any], key: str, located: Located) -> Problem:
    pointer = pointer_of([*path, key])
    known = sorted((err.schema.get("properties") or {}).keys())
    file, line, col = located.locate(pointer, key=True)
    parent = str(path[-1]) if path else ""
    chart_path = [*path, key]
    # the same key in another section says more than a near spelling here (a top-level
    # `nodeSelector` is no misspelt `nodeLabeller`), and with what the chart made of it: a key
    # put in the wrong section was ignored by Helm, so the operator never applied it
    # so does a plural or past form of the key (`enable` for `enabled`), before another section's
    same_case = _did_you_mean(key, [k for k in known if k.lower() == key.lower() or _inflected(key, k)])
    elsewhere = _known_elsewhere(key, parent)
    ignored = _chart_key(chart_path, moved=False)
    if not ignored and not path and elsewhere:  # a section's key written at the top (`tolerations`)
        ignored = _chart_key(chart_path, moved=False, top=True)
    placed = "; ".join(h for h in (elsewhere, ignored) if h) if elsewhere else ""
    hint = same_case or _chart_key(chart_path, moved=True) or placed or _did_you_mean(key, known, path) or ignored
    return Problem(file, line, col, pointer, f"unknown key {key!r}", hint=hint, code="unknown-key")


def _chart_key(path: list[Any], *, moved: bool, top: bool = False) -> str:
    """What the GPU Operator chart made of a key the policy does not have: with ``moved``, the
    importer's rule for a key of some chart release; else that no chart release has the key
    (Helm ignored it there, so the operator never read it). ``top``: a top-level key that is no
    chart section (a section's key written at the top) is one too."""
    from renderer import chartkeys  # only when a key is unknown

    if not path or any(not isinstance(part, str) for part in path):
        return ""
    dotted = ".".join(path)
    releases, keys = chartkeys.chart_keys()
    if top and not any(k.rsplit(".", 1)[-1] == path[0] for k in keys):
        return ""  # no chart section has it either (a gpu-render section's key): the other hints speak
    if not top and not any(k.split(".", 1)[0] == path[0] for k in keys):
        return ""  # a section of gpu-render's own (or a typo of one): the other hints speak
    if dotted in keys or any(k.startswith(dotted + ".") for k in keys):
        move = chartkeys.find_move(dotted) if moved else None
        if move is None:
            return ""
        to = f"moves it to {move.to.replace('*', path[0])}" if move.to else "removes it"
        return f"a GPU Operator chart key: gpu-render import-operator-values {to} ({move.why})"
    if moved:
        return ""
    first, last = chartkeys.minor(releases[0]), chartkeys.minor(releases[-1])
    return f"no GPU Operator chart release ({first} to {last}) has {dotted}: Helm ignored it there, so the operator never read it; remove it"


def _known_elsewhere(key: str, parent: str) -> str:
    """Where else in the schema a key of this name lives (a key put in the wrong section).

    Sections named like the one the key was found in come first (``driver`` ->
    ``nodePools[].driver``).
    """
    places = sorted(_key_index().get(key, []), key=lambda p: not (parent and p.rsplit(".", 1)[-1] == parent))
    if not places or len(places) > 6:  # a key everything has ('enabled') says nothing
        return ""
    shown = ", ".join(places[:3]) + (f" and {len(places) - 3} more" if len(places) > 3 else "")
    return f"{key!r} is a key of {shown}"


@cache
def _key_index() -> dict[str, list[str]]:
    """Property name -> the dotted sections that have it (``nodePools[].driver``)."""
    index: dict[str, list[str]] = {}

    def walk(node: Any, where: str) -> None:
        if not isinstance(node, dict):
            return
        for name, sub in (node.get("properties") or {}).items():
            index.setdefault(name, []).append(where or "the top level")
            walk(sub, f"{where}.{name}" if where else name)
        if isinstance(node.get("items"), dict):
            walk(node["items"], f"{where}[]")

    walk(load_schema(), "")
    return {name: sorted(set(places), key=lambda p: (p.count("."), p)) for name, places in index.items()}


def _inflected(word: str, choice: str) -> bool:
    """Is ``choice`` ``word`` with an ending (``enable`` / ``enabled``, ``toleration`` / ``tolerations``)?"""
    short, long = sorted((word, choice), key=len)
    return long != short and long.startswith(short) and long[len(short) :] in ("d", "s", "ed", "es")


def _did_you_mean(word: str, choices: list[str], where: list[Any] | None = None) -> str:
    """The closest choice: same spelling in another case first, then difflib's best. With
    ``where`` (the path of the section the choices are keys of), a choice that has no effect
    there says so and why (``useOpenKmods`` is near ``useOpenKernelModules``, which the
    operator no longer reads): the hint never sends the user to a key that would do nothing."""
    choice = _closest(word, choices)
    if choice is None:
        return ""
    why = None if where is None else noeffect.reason(pointer_of([*where, choice]))
    return f"did you mean {choice!r}?" + (f" That key has no effect: {why}" if why else "")


def _closest(word: str, choices: list[str]) -> str | None:
    for choice in choices:
        if choice.lower() == word.lower():
            return choice
    import difflib  # only when a key is unknown

    close = difflib.get_close_matches(word, choices, n=1, cutoff=0.6)
    if not close:
        folded = {c.lower(): c for c in choices}
        close = [folded[c] for c in difflib.get_close_matches(word.lower(), list(folded), n=1, cutoff=0.6)]
    return close[0] if close else None


def _explain(err: Any) -> tuple[str, str]:
    """Message and hint for one plain (non-composite) error."""
    kind = err.validator
    value = err.instance
    if kind == "enum":
        allowed = [v for v in err.validator_value]
        hint = "allowed: " + ", ".join(json.dumps(v) for v in allowed)
        if isinstance(value, str):
            close = _did_you_mean(value, [str(v) for v in allowed if isinstance(v, str)])
            if close:
                hint = f"{close} {hint}"
        return f"{_show(value)} is not one of the allowed values", hint
    if kind == "const":
        return f"{_show(value)} must be {json.dumps(err.validator_value)}", ""
    if kind == "type":
        return f"expected {_types_text(err.validator_value)}, got {_type_name(value)} {_show(value)}", _type_hint(err.validator_value, value)
    if kind == "required":
        missing = [k for k in err.validator_value if isinstance(value, dict) and k not in value]
        return f"missing required key {missing[0]!r}" if missing else str(err.message), ""
    if kind == "pattern":
        return f"{_show(value)} does not match the pattern {err.validator_value}", _first_sentence(err.schema.get("description", ""))
    if kind == "not" and isinstance(err.validator_value, dict) and "required" in err.validator_value:
        keys = " and ".join(repr(k) for k in err.validator_value["required"])
        return f"must not set both {keys}", ""
    if kind in ("maxItems", "maxProperties") and isinstance(value, (list, dict)):
        what = "entries" if kind == "maxItems" else "keys"
        return (
            f"{len(value)} {what}, at most {err.validator_value} are accepted",
            "the render copies such lists and maps into every object it renders; "
            "the bound is far above what a real policy uses, see docs/security.md",
        )
    return str(err.message), ""


def _composite(err: Any, located: Located) -> Problem:
    """Explain an anyOf/oneOf failure by its best alternative.

    When exactly one alternative has the right type, its own deepest error is the explanation
    (e.g. a pattern); otherwise the message lists the types the alternatives accept.
    """
    from jsonschema.exceptions import best_match

    branches: dict[int, list[Any]] = {}
    for sub in err.context:
        branches.setdefault(int(sub.relative_schema_path[0]), []).append(sub)
    fitting = {n: errs for n, errs in branches.items() if not any(e.validator == "type" and not e.relative_path for e in errs)}
    pointer = pointer_of(list(err.absolute_path))
    others = len(err.context) - 1
    if err.validator == "oneOf" and len(branches) < len(err.validator_value):
        message, hint = f"{_show(err.instance)} matches more than one of the accepted forms", ""
    elif len(fitting) == 1:
        best = best_match(next(iter(fitting.values())))
        nested = _to_problems(best, located)[0]
        hint = nested.hint or _first_sentence(err.schema.get("description", "")) or (f"{others} other alternative(s) failed too" if others else "")
        return Problem(nested.file, nested.line, nested.column, nested.pointer, nested.message, hint=hint, code=nested.code)
    else:
        types = [t for n in sorted(branches) for t in _branch_types(err.validator_value[n])]
        message = f"expected {_types_text(sorted(set(types), key=types.index))}, got {_type_name(err.instance)} {_show(err.instance)}"
        hint = _first_sentence(err.schema.get("description", "")) or _type_hint(types, err.instance)
    file, line, col = located.locate(pointer)
    return Problem(file, line, col, pointer, message, hint=hint, code=f"schema-{err.validator}")


def _branch_types(branch: Any) -> list[str]:
    if not isinstance(branch, dict):
        return []
    if "$ref" in branch and "type" not in branch:
        target = _resolve_ref(str(branch["$ref"]))
        return _branch_types(target) if target is not branch else []
    found = branch.get("type", [])
    return [found] if isinstance(found, str) else list(found)


def _resolve_ref(ref: str) -> Any:
    node: Any = load_schema()
    if not ref.startswith("#/"):
        return {}
    for part in ref[2:].split("/"):
        node = node.get(part, {}) if isinstance(node, dict) else {}
    return node


def _types_text(expected: Any) -> str:
    names = [expected] if isinstance(expected, str) else list(expected)
    words = [{"object": "a mapping", "array": "a list", "integer": "an integer", "number": "a number", "string": "a string", "boolean": "a boolean", "null": "null"}.get(n, n) for n in names]
    return " or ".join(words)


def _type_hint(expected: Any, value: object) -> str:
    names = [expected] if isinstance(expected, str) else list(expected)
    if "string" in names and isinstance(value, float):
        return "quote the value to keep it a string: YAML reads unquoted 1.30 as the number 1.3"
    if "string" in names and isinstance(value, int) and not isinstance(value, bool):
        return "quote the value to keep it a string"
    if "string" in names and isinstance(value, bool):
        return "quote the value to keep it a string"
    if "boolean" in names and isinstance(value, str) and value.lower() in ("true", "false", "yes", "no", "on", "off"):
        return "write true or false without quotes"
    if ("integer" in names or "number" in names) and isinstance(value, str) and value.strip().lstrip("-").isdigit():
        return "remove the quotes"
    if "array" in names and isinstance(value, dict):
        return "list items start with '- '"
    return ""


def _first_sentence(text: str) -> str:
    """Up to the first full stop that ends a sentence ("e.g. 1Gi" does not end one)."""
    return re.split(r"\.\s+(?=[A-Z`])", text)[0].rstrip(".") if text else ""


def _show(value: object) -> str:
    text = json.dumps(value, sort_keys=True, default=str)
    return text if len(text) <= 60 else text[:57] + "..."


def _extra_keys(err: Any) -> list[str]:
    props = set((err.schema.get("properties") or {}).keys())
    patterns = list((err.schema.get("patternProperties") or {}).keys())
    out = []
    if isinstance(err.instance, dict):
        for key in err.instance:
            if key in props or any(re.search(p, key) for p in patterns):
                continue
            out.append(str(key))
    return sorted(out)


def _type_name(value: object) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "list"
    if isinstance(value, dict):
        return "mapping"
    return "null"


# Keys that only mean something to the in-cluster operator: accepted, warned about.
# Keyed by JSON pointer into the values; the text says why the key does nothing here.
def operator_only_warnings(located: Located) -> list[Problem]:
    """A warning for each key of the no-effect table the user set (empty lists and maps are ignored)."""
    defaults = _defaults()
    out = []
    for listed, why in NO_EFFECT.items():
        inner = {other[len(listed) + 1 :].split("/")[0] for other in NO_EFFECT if other.startswith(listed + "/")}
        for pointer, value in _expand(located.data, listed):
            if value in ([], {}):
                continue
            if inner and isinstance(value, dict) and set(value) <= inner:
                continue  # only keys with a reason of their own (operator.version)
            if listed not in OPERATOR_ONLY and _same_as_default(value, _expand(defaults, listed)):
                continue  # written as the default: nothing is lost
            file, line, col = located.locate(pointer, key=True)
            dotted = ".".join(_unescape(part) for part in pointer[1:].split("/"))
            out.append(Problem(file, line, col, pointer, f"{dotted!r} has no effect: {why}", code="operator-only" if listed in OPERATOR_ONLY else "no-effect", severity=Severity.WARNING))
            if listed in OPERATOR_ONLY:
                out += _moved_inside(located, dotted)
    return sorted(out)


@cache
def _defaults() -> dict[str, Any]:
    """The defaults of every key, made once per process (read, never changed, here): every
    cluster's check compares with the same ones."""
    from renderer.resolve import with_defaults

    return with_defaults({})


def _moved_inside(located: Located, section: str) -> list[Problem]:
    """An error at each key of the operator-only ``section`` that has a place of its own here
    (``operator.defaultRuntime`` is ``cluster.containerRuntime``): left where the chart had it,
    it would be ignored, and the cluster would get the default instead of what it says."""
    from renderer import chartkeys

    out: list[Problem] = []
    for move in chartkeys.MOVES:
        if move.to is None or "*" in move.pattern or not move.pattern.startswith(section + "."):
            continue
        here = pointer_of(move.to.split("."))
        for where, value in _expand(located.data, pointer_of(move.pattern.split("."))):
            if _same_as_default(value, _expand(_defaults(), here)) and not _expand(located.data, here):
                continue  # what it says is what renders here anyway: nothing is lost
            file, line, col = located.locate(where, key=True)
            message = f"{move.pattern!r} is {move.to!r} in a gpu-render policy: here it would be ignored"
            hint = f"move it to {move.to}: {move.why}; gpu-render import-operator-values moves it"
            rule = chartkeys.by_value(move.pattern, value, lambda _: True)  # a policy is of the newest chart
            if rule is not None and rule[0] is None:
                message = f"{move.pattern!r} is not read here: a gpu-render policy names the runtime in {move.to!r}"
                hint = f"remove it: {rule[2]}"
            out.append(Problem(file, line, col, where, message, hint=hint, code="chart-key-moved"))
    return out


def _same_as_default(value: Any, found: list[tuple[str, Any]]) -> bool:
    if not found:
        return False
    default = found[0][1]

    def same(v: Any, d: Any) -> bool:
        if isinstance(v, dict) and isinstance(d, dict):
            return all(k in d and same(x, d[k]) for k, x in v.items())
        return bool(v == d)

    return same(value, default)


def _expand(data: Any, pointer: str) -> list[tuple[str, Any]]:
    """Concrete (pointer, value) pairs of a table pointer (``*``: every item of a list)."""
    found: list[tuple[str, Any]] = [("", data)]
    for part in pointer[1:].split("/"):
        step: list[tuple[str, Any]] = []
        for where, node in found:
            if part == "*" and isinstance(node, list):
                step += [(f"{where}/{i}", item) for i, item in enumerate(node)]
            elif isinstance(node, dict) and _unescape(part) in node:
                step.append((f"{where}/{part}", node[_unescape(part)]))
        found = step
    return found


def _unescape(part: str) -> str:
    return part.replace("~1", "/").replace("~0", "~")


def _lookup(data: Any, pointer: str) -> tuple[bool, Any]:
    node = data
    for part in pointer[1:].split("/"):
        if not isinstance(node, dict) or _unescape(part) not in node:
            return False, None
        node = node[_unescape(part)]
    return True, node
