"""Validate merged values against schemas/values.schema.json, with source positions.

Errors become :class:`Problem` values that point at the line in the file the value came from
(fleet values or overlay), with hints: the closest known key for a typo, the allowed values
for an enum.
"""

from __future__ import annotations

import difflib
import json
import re
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from renderer.merge import Located
from renderer.noeffect import NO_EFFECT, OPERATOR_ONLY
from renderer.problems import Problem, Severity, pointer_of

SCHEMA_FILE = "values.schema.json"


def schema_text(name: str = SCHEMA_FILE) -> str:
    """The text of one of gpu-render's JSON Schemas (repo checkout or installed package)."""
    here = Path(__file__).resolve().parent.parent / "schemas" / name
    if here.is_file():
        return here.read_text(encoding="utf-8")
    return resources.files("renderer.schemas").joinpath(name).read_text(encoding="utf-8")


@cache
def load_schema(name: str = SCHEMA_FILE) -> dict[str, Any]:
    data = json.loads(schema_text(name))
    assert isinstance(data, dict)
    return data


@cache
def _validator() -> Any:
    from jsonschema import Draft202012Validator

    return Draft202012Validator(load_schema())


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
    hint = _did_you_mean(key, known) or _known_elsewhere(key, parent)
    return Problem(file, line, col, pointer, f"unknown key {key!r}", hint=hint, code="unknown-key")


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


def _did_you_mean(word: str, choices: list[str]) -> str:
    """The closest choice: same spelling in another case first, then difflib's best."""
    for choice in choices:
        if choice.lower() == word.lower():
            return f"did you mean {choice!r}?"
    close = difflib.get_close_matches(word, choices, n=1, cutoff=0.6)
    if not close:
        folded = {c.lower(): c for c in choices}
        close = [folded[c] for c in difflib.get_close_matches(word.lower(), list(folded), n=1, cutoff=0.6)]
    return f"did you mean {close[0]!r}?" if close else ""


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
    from renderer.resolve import with_defaults

    defaults = with_defaults({})
    out = []
    for listed, why in NO_EFFECT.items():
        for pointer, value in _expand(located.data, listed):
            if value in ([], {}):
                continue
            if listed not in OPERATOR_ONLY and _same_as_default(value, _expand(defaults, listed)):
                continue  # written as the default: nothing is lost
            file, line, col = located.locate(pointer, key=True)
            dotted = ".".join(_unescape(part) for part in pointer[1:].split("/"))
            out.append(Problem(file, line, col, pointer, f"{dotted!r} has no effect: {why}", code="operator-only" if listed in OPERATOR_ONLY else "no-effect", severity=Severity.WARNING))
    return sorted(out)


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
