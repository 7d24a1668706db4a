"""docs/reference.md: one page, every policy key, generated from the JSON Schema."""

from __future__ import annotations

import json
from typing import Any

from renderer.explain import _deref, _type_of

HEADER = """\
# Policy reference

Generated from `schemas/values.schema.json` by `gpu-render schema --format markdown`;
do not edit by hand. `gpu-render explain KEY` also lists the objects a key affects.

| key | type | default | description |
| --- | --- | --- | --- |
"""


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ").strip()


def _rows(root: dict[str, Any], node: dict[str, Any], prefix: str, depth: int) -> list[str]:
    node = _deref(root, node)
    rows: list[str] = []
    props = node.get("properties") or {}
    for key in props:
        child = _deref(root, props[key])
        path = f"{prefix}.{key}" if prefix else key
        kind = _type_of(child)
        if child.get("enum"):
            kind += " (" + ", ".join(json.dumps(v) for v in child["enum"]) + ")"
        default = json.dumps(child["default"]) if "default" in child else ""
        if len(default) > 60:
            default = default[:57] + "..."
        rows.append(f"| `{path}` | {_cell(kind)} | {_cell(f'`{default}`' if default else '')} | {_cell(str(child.get('description', '')))} |")
        if depth < 8:
            rows += _rows(root, child, path, depth + 1)
            items = child.get("items")
            if isinstance(items, dict):
                rows += _rows(root, items, f"{path}[]", depth + 1)
    return rows


def reference_markdown() -> str:
    from renderer.noeffect import COMPATIBILITY, OPERATOR_ONLY, PENDING
    from renderer.schema import load_schema

    schema = load_schema()
    tail = [
        "",
        "## Keys with no effect here",
        "",
        "Every other key changes at least one rendered object (tests/test_key_effects.py holds it).",
        "`validate` and `build` warn, at the key, when a policy sets one of these to a value other",
        "than its default. The table is `renderer/noeffect.py`.",
        "",
        "| key | kind | why |",
        "| --- | --- | --- |",
    ]
    for kind, table in (("operator-only", OPERATOR_ONLY), ("compatibility", COMPATIBILITY), ("pending", PENDING)):
        for pointer, why in table.items():
            key = pointer[1:].replace("/*/", "[].").replace("/", ".")
            tail.append(f"| `{key}` | {kind} | {_cell(why)} |")
    return HEADER + "\n".join(_rows(schema, schema, "", 0)) + "\n" + "\n".join(tail) + "\n"
