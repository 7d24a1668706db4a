"""``valueFrom`` in a component's ``env``: rendered here, warned about, since the operator drops it.

The operator's ``EnvVar`` (ClusterPolicy ``api/nvidia/v1``, NVIDIADriver ``api/nvidia/v1alpha1``)
has only ``name`` and ``value``; the CRD's structural schema prunes ``valueFrom``, and the
operator's transforms call ``setContainerEnv(container, env.Name, env.Value)``: the variable is
set to an empty string (appended, or over a same-named variable of the operand, in place).
gpu-render keeps the ``valueFrom`` as written (a deliberate extension: a ``secretKeyRef`` or
``fieldRef`` is what such a key is written for) and warns, at the key, what the operator would
do instead. Keys of :mod:`renderer.noeffect` (``operator.env``, ``kataManager.env``) already warn
that they render nothing and are left out here.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from renderer.merge import Located
from renderer.noeffect import reason
from renderer.problems import Problem, Severity

ENV_DEF = "#/$defs/env"
CODE = "env-value-from"


@cache
def env_pointers() -> tuple[str, ...]:
    """Every place of the values schema that takes a ``$defs/env`` list, as a pointer with
    ``*`` for any list item (``/nodePools/*/driver/env``)."""
    from renderer.schema import load_schema

    found: list[str] = []

    def walk(node: Any, pointer: str) -> None:
        if not isinstance(node, dict):
            return
        if node.get("$ref") == ENV_DEF:
            found.append(pointer)
            return
        for key, sub in (node.get("properties") or {}).items():
            walk(sub, f"{pointer}/{key.replace('~', '~0').replace('/', '~1')}")
        if isinstance(node.get("items"), dict):
            walk(node["items"], f"{pointer}/*")
        for combinator in ("allOf", "anyOf", "oneOf"):
            for branch in node.get(combinator) or []:
                walk(branch, pointer)

    walk(load_schema(), "")
    return tuple(sorted(set(found)))


def _expand(data: Any, pattern: str) -> list[tuple[str, Any]]:
    found: list[tuple[str, Any]] = [("", data)]
    for part in pattern[1:].split("/"):
        key = part.replace("~1", "/").replace("~0", "~")
        step: list[tuple[str, Any]] = []
        for where, node in found:
            if part == "*" and isinstance(node, list):
                step += [(f"{where}/{i}", item) for i, item in enumerate(node)]
            elif isinstance(node, dict) and key in node:
                step.append((f"{where}/{part}", node[key]))
        found = step
    return found


def _owner(pattern: str) -> str:
    return "NVIDIADriver" if pattern.startswith("/nodePools/") else "ClusterPolicy"


NOT_THE_OPERATORS = ("/nfd/",)
"""Env lists no operator CRD carries: the NFD chart writes ``worker.extraEnvs`` into its pod as
they are, ``valueFrom`` and all, as gpu-render does."""


@cache
def checked_pointers() -> tuple[str, ...]:
    """:func:`env_pointers` less the keys warned about as having no effect and those of
    :data:`NOT_THE_OPERATORS` (worked out once: it was 1.8 ms of every cluster of a fleet build,
    33 table walks each)."""
    return tuple(p for p in env_pointers() if reason(p) is None and not p.startswith(NOT_THE_OPERATORS))


def value_from_warnings(located: Located) -> list[Problem]:
    """A warning at each ``env[].valueFrom`` the policy writes (values that passed the schema)."""
    out: list[Problem] = []
    for pattern in checked_pointers():
        for pointer, env in _expand(located.data, pattern):
            if not isinstance(env, list):
                continue
            for index, item in enumerate(env):
                if not isinstance(item, dict) or "valueFrom" not in item:
                    continue
                where = f"{pointer}/{index}/valueFrom"
                file, line, col = located.locate(where, key=True)
                name = str(item.get("name", ""))
                dotted = ".".join(pointer[1:].split("/"))
                message = (
                    f"{dotted}: {name}: valueFrom is rendered as written, but the operator's {_owner(pattern)} EnvVar has only name and value: "
                    f"its CRD prunes valueFrom and the operator sets {name} to an empty string"
                )
                hint = "a gpu-render extension; write value: to render what the operator renders"
                out.append(Problem(file, line, col, where, message, hint=hint, code=CODE, severity=Severity.WARNING))
    return sorted(out)
