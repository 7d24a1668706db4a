"""A small structural diff that returns RFC 6902 JSON patch operations.

Used for the overlays: the operations turn a base object into a cluster's object exactly,
list order included (a strategic merge would merge containers, env and volumes by name
and could reorder them). Lists keep their common head and tail and patch only the middle;
wherever a change would take more text than writing the new value, the value is replaced
whole. Plain Python on plain data: fast enough for fleets of a thousand clusters.
"""

from __future__ import annotations

import json
from typing import Any

Op = dict[str, Any]


def escape(token: str) -> str:
    """A JSON pointer reference token (RFC 6901): ``~`` -> ``~0``, ``/`` -> ``~1``."""
    return token.replace("~", "~0").replace("/", "~1")


def _size(value: Any) -> int:
    return len(json.dumps(value, separators=(",", ":"), sort_keys=True))


def _same(a: Any, b: Any) -> bool:
    """Equal with types: in Python True == 1 and 1 == 1.0, in YAML they differ.

    ``==`` and ``repr`` run in C and settle almost every case; the typed walk runs only
    for values that are equal but print differently (key order, or a bool against an int).
    """
    if a is b:
        return True
    if a != b:
        return False
    return repr(a) == repr(b) or _typed_equal(a, b)


def _typed_equal(a: Any, b: Any) -> bool:
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_typed_equal(v, b[k]) for k, v in a.items())
    if isinstance(a, list):
        return len(a) == len(b) and all(_typed_equal(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


def diff(a: Any, b: Any, path: str = "") -> list[Op]:
    """Operations that turn ``a`` into ``b`` (empty when they are equal)."""
    if _same(a, b):
        return []
    if isinstance(a, dict) and isinstance(b, dict):
        ops = _diff_dict(a, b, path)
    elif isinstance(a, list) and isinstance(b, list):
        ops = _diff_list(a, b, path)
    else:
        return [{"op": "replace", "path": path, "value": b}]
    if path and len(ops) > 1 and _size(ops) > _size(b) + len(path) + 32:
        return [{"op": "replace", "path": path, "value": b}]
    return ops


def _diff_dict(a: dict[str, Any], b: dict[str, Any], path: str) -> list[Op]:
    ops: list[Op] = []
    for key in a:
        if key not in b:
            ops.append({"op": "remove", "path": f"{path}/{escape(key)}"})
    for key, value in b.items():
        sub = f"{path}/{escape(key)}"
        if key not in a:
            ops.append({"op": "add", "path": sub, "value": value})
        else:
            ops.extend(diff(a[key], value, sub))
    return ops


def _diff_list(a: list[Any], b: list[Any], path: str) -> list[Op]:
    head = 0
    while head < len(a) and head < len(b) and _same(a[head], b[head]):
        head += 1
    tail = 0
    while tail < len(a) - head and tail < len(b) - head and _same(a[-1 - tail], b[-1 - tail]):
        tail += 1
    mid_a = a[head : len(a) - tail]
    mid_b = b[head : len(b) - tail]
    common = min(len(mid_a), len(mid_b))
    ops: list[Op] = []
    for i in range(common):
        ops.extend(diff(mid_a[i], mid_b[i], f"{path}/{head + i}"))
    for i in reversed(range(common, len(mid_a))):
        ops.append({"op": "remove", "path": f"{path}/{head + i}"})
    for i in range(common, len(mid_b)):
        ops.append({"op": "add", "path": f"{path}/{head + i}", "value": mid_b[i]})
    return ops


def apply(doc: Any, ops: list[Op]) -> Any:
    """Apply ``ops`` (only the add/remove/replace this module emits) to a copy of ``doc``."""
    import copy

    out = copy.deepcopy(doc)
    for op in ops:
        tokens = [t.replace("~1", "/").replace("~0", "~") for t in op["path"].split("/")[1:]]
        if not tokens:
            out = copy.deepcopy(op["value"])
            continue
        parent = out
        for t in tokens[:-1]:
            parent = parent[int(t)] if isinstance(parent, list) else parent[t]
        last = tokens[-1]
        if isinstance(parent, list):
            index = len(parent) if last == "-" else int(last)
            if op["op"] == "add":
                parent.insert(index, copy.deepcopy(op["value"]))
            elif op["op"] == "remove":
                del parent[index]
            else:
                parent[index] = copy.deepcopy(op["value"])
        elif op["op"] == "remove":
            del parent[last]
        else:
            parent[last] = copy.deepcopy(op["value"])
    return out
