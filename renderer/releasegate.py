"""Policy keys an imitated operator release does not have, and asset env a user cannot override.

* :data:`ADDED_IN`: keys whose ClusterPolicy field arrives in a later operator release than the
  one imitated (``cluster.operatorRelease``). That operator's CRD prunes the field, so it ignores
  it; gpu-render renders as that release would (the components read
  :meth:`renderer.model.Model.nri_plugin`, not the key) and warns at the key.
* :data:`ASSET_VALUE_FROM`: env names the operator's asset sets by ``valueFrom`` in the container
  a ``*.env`` key reaches. The operator's ``setContainerEnv`` sets ``Value`` on that entry and
  keeps its ``valueFrom``: the DaemonSet carries both, which the API server rejects (``may not be
  specified when value is not empty``), so the operand is never deployed. gpu-render would
  replace the entry whole and render a working pod, a silent difference: refused instead.
  Checked against the rendered containers by ``tests/test_release_gate.py``.
"""

from __future__ import annotations

from typing import Any

from renderer.driverimage import RELEASES as _RELEASE_RULES
from renderer.merge import Located
from renderer.problems import Problem, Severity

RELEASES = tuple(_RELEASE_RULES)
"""The imitated releases, oldest first (the release table of :mod:`renderer.driverimage`)."""
_RANK = {r: i for i, r in enumerate(RELEASES)}

ADDED_IN: dict[str, str] = {
    "/cdi/nriPluginEnabled": "v26.3",
}
"""Pointer -> first imitated release whose ClusterPolicy has it (v25.10.1's ``CDIConfigSpec``
has no ``nriPluginEnabled``; v26.3.0 adds it)."""

ASSET_VALUE_FROM: dict[str, dict[str, str]] = {
    "/toolkit/env": {"NRI_NAMESPACE": "v26.3"},
    "/gfd/env": {"NAMESPACE": "v25.10", "NODE_NAME": "v25.10", "POD_NAME": "v25.10"},
    "/dcgmExporter/env": {"NODE_NAME": "v25.10"},
    "/migManager/env": {"NODE_NAME": "v25.10", "POD_NAME": "v25.10", "POD_NAMESPACE": "v25.10", "DEFAULT_GPU_CLIENTS_NAMESPACE": "v25.10"},
    "/validator/cuda/env": {"NODE_NAME": "v25.10", "OPERATOR_NAMESPACE": "v25.10"},
    "/validator/plugin/env": {"NODE_NAME": "v25.10", "OPERATOR_NAMESPACE": "v25.10"},
    "/validator/driver/env": {"OPERATOR_NAMESPACE": "v25.10"},
}
"""Env pointer -> {name the asset sets by valueFrom in the container it reaches: first imitated
release whose asset has it}."""

NEEDS: dict[str, tuple[str, ...]] = {
    "/validator/plugin/env": ("devicePlugin",),  # the operator drops plugin-validation without it
}
"""Env pointer -> further sections whose ``enabled: false`` leaves the container out (its own
top section is always one: a disabled operand deploys no pod to reject)."""

RELEASE_CODE = "release-key"
VALUE_FROM_CODE = "env-over-value-from"


def has(release: str, since: str) -> bool:
    """Whether imitated ``release`` is ``since`` or later (an unknown release counts as newest)."""
    return _RANK.get(release, len(RELEASES)) >= _RANK[since]


def _get(data: Any, pointer: str) -> tuple[bool, Any]:
    node = data
    for part in pointer[1:].split("/"):
        if not isinstance(node, dict) or part not in node:
            return False, None
        node = node[part]
    return True, node


def _deployed(values: dict[str, Any], pointer: str) -> bool:
    sections = (pointer[1:].split("/")[0], *NEEDS.get(pointer, ()))
    return all((values.get(s) or {}).get("enabled", True) is not False for s in sections)


def release_rules(located: Located, values: dict[str, Any]) -> list[Problem]:
    """A warning at each key the imitated release does not have, an error at each ``value:``
    written over an env name the asset sets by ``valueFrom`` in an operand that is deployed
    (``values``: ``located.data`` with defaults; both passed the schema)."""
    release = str((values.get("cluster") or {}).get("operatorRelease") or "")
    out: list[Problem] = []
    for pointer, since in ADDED_IN.items():
        found, _ = _get(located.data, pointer)
        if not found or has(release, since):
            continue
        file, line, col = located.locate(pointer, key=True)
        dotted = ".".join(pointer[1:].split("/"))
        message = (
            f"{dotted}: operator release {release} has no {dotted} (its ClusterPolicy CRD prunes it, so the operator ignores it; "
            f"{since} adds it): rendered as {release} renders, without it"
        )
        hint = f"set cluster.operatorRelease to {since} or later, or remove the key"
        out.append(Problem(file, line, col, pointer, message, hint=hint, code=RELEASE_CODE, severity=Severity.WARNING))
    for pointer, names in ASSET_VALUE_FROM.items():
        found, env = _get(located.data, pointer)
        if not found or not isinstance(env, list) or not _deployed(values, pointer):
            continue
        for index, item in enumerate(env):
            if not isinstance(item, dict) or "value" not in item:
                continue
            name = str(item.get("name", ""))
            if name not in names or not has(release, names[name]):
                continue
            where = f"{pointer}/{index}/value"
            file, line, col = located.locate(where, key=True)
            dotted = ".".join(pointer[1:].split("/"))
            message = (
                f"{dotted}: {name}: the operator's asset sets {name} by valueFrom and the operator sets value on that entry, keeping the valueFrom: "
                "the API server rejects a pod with both, so the operator would not deploy this operand"
            )
            hint = f"remove {name} from {dotted}: it is set for you"
            out.append(Problem(file, line, col, where, message, hint=hint, code=VALUE_FROM_CODE))
    return sorted(out)
