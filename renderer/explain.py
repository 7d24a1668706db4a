"""``gpu-render explain KEY``: what a policy key is, and which rendered objects it touches.

The schema gives type, default, allowed values and description. The affected objects are
found by rendering, not by a hand-kept table: a baseline policy is rendered once with the
key as it is and once with the key changed, and the objects that differ are listed.
"""

from __future__ import annotations

import copy
import json
import re
from dataclasses import dataclass, field
from typing import Any

from renderer.problems import UserError

BASELINE_POOLS = [
    {"name": "ubuntu2204", "os": {"id": "ubuntu", "version": "22.04"}, "kernel": "5.15.0-1040-nvidia"},
    {"name": "rhel94", "os": {"id": "rhel", "version": "9.4"}, "kernel": "5.14.0-427.37.1.el9_4.x86_64"},
]


@dataclass(frozen=True)
class Explanation:
    key: str
    type: str
    description: str
    default: Any = None
    has_default: bool = False
    allowed: tuple[Any, ...] = ()
    children: tuple[str, ...] = ()
    affects: tuple[str, ...] = ()
    affects_when_enabled: tuple[str, ...] = field(default=())

    def to_json(self) -> dict[str, Any]:
        return {
            "key": self.key,
            "type": self.type,
            "description": self.description,
            "default": self.default if self.has_default else None,
            "allowed": list(self.allowed),
            "children": list(self.children),
            "affects": list(self.affects),
            "affectsWhenEnabled": list(self.affects_when_enabled),
        }


def split_key(key: str) -> list[str]:
    """``driver.upgradePolicy.drain`` or ``nodePools[].driver.version`` -> parts (``[]`` = any item)."""
    parts: list[str] = []
    for raw in key.strip().strip(".").split("."):
        m = re.fullmatch(r"([^\[\]]+)((?:\[\d*\])*)", raw)
        if not m:
            raise UserError(f"not a key path: {key!r}", hint="use dots, e.g. driver.upgradePolicy.drain")
        parts.append(m.group(1))
        parts += ["[]"] * m.group(2).count("[")
    return parts


def _node(schema: dict[str, Any], parts: list[str], key: str) -> dict[str, Any]:
    import difflib

    node = schema
    for i, part in enumerate(parts):
        node = _deref(schema, node)
        if part == "[]":
            if "items" not in node:
                raise UserError(f"{'.'.join(parts[:i]) or 'the root'} is not a list")
            node = node["items"]
            continue
        props = node.get("properties") or {}
        if part not in props:
            here = ".".join(p for p in parts[:i] if p != "[]") or "the top level"
            close = difflib.get_close_matches(part, list(props), n=1, cutoff=0.6)
            hint = f"did you mean {close[0]!r}?" if close else f"keys of {here}: {', '.join(sorted(props)) or '(none)'}"
            raise UserError(f"unknown key {key!r}: {here} has no key {part!r}", hint=hint)
        node = props[part]
    return _deref(schema, node)


def _deref(root: dict[str, Any], node: dict[str, Any]) -> dict[str, Any]:
    seen = 0
    while "$ref" in node and seen < 20:
        ref = str(node["$ref"])
        target: Any = root
        for piece in ref.lstrip("#/").split("/"):
            if piece:
                target = target[piece]
        merged = {**target, **{k: v for k, v in node.items() if k != "$ref"}}
        node = merged
        seen += 1
    return node


def _type_of(node: dict[str, Any]) -> str:
    t = node.get("type")
    if isinstance(t, list):
        return " or ".join(str(x) for x in t)
    if t:
        return str(t)
    for comb in ("anyOf", "oneOf"):
        if comb in node:
            return " or ".join(_type_of(n) for n in node[comb])
    if "enum" in node:
        return "enum"
    return "any"


def _get(data: Any, parts: list[str]) -> tuple[bool, Any]:
    """Value at ``parts``; ``[]`` stands for the first item of a list."""
    for part in parts:
        if part == "[]" and isinstance(data, list) and data:
            data = data[0]
        elif isinstance(data, dict) and part in data:
            data = data[part]
        else:
            return False, None
    return True, data


def _set(data: Any, parts: list[str], value: Any) -> None:
    for part in parts[:-1]:
        if part == "[]":
            data = data[0]
            continue
        nxt = data.get(part)
        if not isinstance(nxt, (dict, list)):
            nxt = {}
            data[part] = nxt
        data = nxt
    data[parts[-1]] = value


def _changed(value: Any, node: dict[str, Any]) -> Any:
    if value is None and "default" in node:  # an unset pool field probes away from its default
        value = node["default"]
    enum = node.get("enum")
    if enum:
        others = [v for v in enum if v != value]
        return others[0] if others else value
    if isinstance(value, bool) or node.get("type") == "boolean":
        return not bool(value)
    if isinstance(value, int):
        return value + 1
    if isinstance(value, list):
        return [*value, {"name": "GPU_RENDER_PROBE", "value": "1"}] if not value or isinstance(value[0], dict) else [*value, "probe"]
    if isinstance(value, dict):
        return {**value, "gpu-render.dev/probe": "1"}
    return f"{value}-probe" if value else "probe"


def _leaves(value: Any, parts: list[str]) -> list[tuple[list[str], Any]]:
    if isinstance(value, dict) and value:
        out: list[tuple[list[str], Any]] = []
        for k, v in value.items():
            out += _leaves(v, [*parts, k])
        return out
    return [(parts, value)]


def _objects(values: dict[str, Any]) -> dict[str, str]:
    from renderer.render import objects
    from renderer.resolve import resolve

    out: dict[str, str] = {}
    for comp, objs in objects(resolve(values, "explain")).items():
        for obj in objs:
            ident = f"{obj['kind']}/{obj['metadata']['name']} ({comp})"
            out[ident] = json.dumps(obj, sort_keys=True)
    return out


def _affected(baseline: dict[str, Any], parts: list[str], schema: dict[str, Any]) -> tuple[str, ...]:
    from renderer.resolve import with_defaults

    full = with_defaults(baseline)
    before = _objects(baseline)
    found, value = _get(full, parts)
    leaves = _leaves(value, parts) if found else [(parts, None)]
    hit: set[str] = set()
    for leaf_parts, leaf in leaves:
        changed = copy.deepcopy(baseline)
        try:
            node = _node(schema, leaf_parts, ".".join(leaf_parts))
        except UserError:
            node = {}
        _set(changed, leaf_parts, _changed(leaf, node))
        try:
            after = _objects(changed)
        except Exception:  # a probe value the renderer refuses tells us nothing
            continue
        hit |= {k for k in set(before) | set(after) if before.get(k) != after.get(k)}
    return tuple(sorted(hit))


def _everything_on(baseline: dict[str, Any]) -> dict[str, Any]:
    from renderer.resolve import defaults

    out = copy.deepcopy(baseline)
    for key, section in defaults().items():
        if isinstance(section, dict) and "enabled" in section:
            out.setdefault(key, {})["enabled"] = True
    out["dcgm"] = {**out.get("dcgm", {}), "enabled": True}
    out["sandboxWorkloads"] = {**out.get("sandboxWorkloads", {}), "enabled": True}
    # and a DRA pool, so the draDriver keys show what they change
    out["nodePools"] = [*out.get("nodePools", []), {"name": "dra", "os": {"id": "ubuntu", "version": "24.04"}, "resourceAllocation": "dra"}]
    return out


def explain(key: str) -> Explanation:
    from renderer.resolve import defaults
    from renderer.schema import load_schema

    schema = load_schema()
    parts = split_key(key)
    node = _node(schema, parts, key)
    found, default = _get(defaults(), parts) if "[]" not in parts else (False, None)
    if not found and "default" in node:
        found, default = True, node["default"]
    children = tuple(sorted((node.get("properties") or {}).keys()))
    affects: tuple[str, ...] = ()
    when_enabled: tuple[str, ...] = ()
    if "[]" not in parts or parts[:2] == ["nodePools", "[]"]:
        baseline = {"nodePools": copy.deepcopy(BASELINE_POOLS)}
        affects = _affected(baseline, parts, schema)
        if not affects:
            when_enabled = _affected(_everything_on(baseline), parts, schema)
    return Explanation(
        key=".".join(parts).replace(".[]", "[]"),
        type=_type_of(node),
        description=str(node.get("description", "")),
        default=default,
        has_default=found,
        allowed=tuple(node.get("enum") or ()),
        children=children,
        affects=affects,
        affects_when_enabled=when_enabled,
    )


def format_text(e: Explanation) -> str:
    lines = [f"KEY:         {e.key}", f"TYPE:        {e.type}"]
    if e.has_default:
        lines.append(f"DEFAULT:     {json.dumps(e.default)}")
    if e.allowed:
        lines.append(f"ALLOWED:     {', '.join(json.dumps(v) for v in e.allowed)}")
    if e.description:
        lines.append(f"DESCRIPTION: {e.description}")
    if e.children:
        lines.append(f"KEYS:        {', '.join(e.children)}")
    if e.affects:
        lines.append("AFFECTS:")
        lines += [f"  {a}" for a in e.affects]
    elif e.affects_when_enabled:
        lines.append("AFFECTS (once its component is enabled):")
        lines += [f"  {a}" for a in e.affects_when_enabled]
    else:
        lines.append("AFFECTS:     no rendered object (documentation, input to other checks, or operator-only)")
    return "\n".join(lines)
