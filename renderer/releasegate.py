"""Policy keys an imitated operator release does not have, and asset env a user cannot override.

* :data:`ADDED_IN`: keys whose ClusterPolicy (or, for a pool's own driver settings,
  NVIDIADriver) field arrives in a later operator release than the one imitated
  (``cluster.operatorRelease``). That operator's CRD prunes the field, so it ignores it:
  :func:`prune` takes such keys out of the values a :class:`~renderer.model.Model` is made of
  (the static render's and the chart's), so every component renders as that release would, and
  :func:`release_rules` warns at each such key the user wrote.
* :data:`ASSET_VALUE_FROM`: env names the operator's asset sets by ``valueFrom`` in the container
  a ``*.env`` key reaches. The operator's ``setContainerEnv`` sets ``Value`` on that entry and
  keeps its ``valueFrom``: the DaemonSet carries both, which the API server rejects (``may not be
  specified when value is not empty``), so the operand is never deployed. gpu-render would
  replace the entry whole and render a working pod, a silent difference: refused instead.
  Checked against the rendered containers by ``tests/test_release_gate.py``.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from renderer.driverimage import RELEASES as _RELEASE_RULES
from renderer.merge import Located
from renderer.problems import Problem, Severity

RELEASES = tuple(_RELEASE_RULES)
"""The imitated releases, oldest first (the release table of :mod:`renderer.driverimage`)."""
_RANK = {r: i for i, r in enumerate(RELEASES)}

_HOST_NETWORK_V26_3 = (
    "ccManager", "dcgm", "devicePlugin", "driver", "gfd", "kataSandboxDevicePlugin", "migManager", "nodeStatusExporter",
    "sandboxDevicePlugin", "toolkit", "validator", "vfioManager", "vgpuDeviceManager", "vgpuManager",
)

ADDED_IN: dict[str, str] = {
    # the ClusterPolicy CRD's spec schema of v26.3.3 (the v26.3 imitated: its images, its
    # transforms) against v25.10.1's; v26.3.1 added every operand's hostNetwork
    # (applyHostNetworkConfig), v26.3.2 the exporter's pod metadata keys
    **{f"/{section}/hostNetwork": "v26.3" for section in _HOST_NETWORK_V26_3},
    "/dcgmExporter/annotations": "v26.3",
    "/dcgmExporter/enablePodLabels": "v26.3",
    "/dcgmExporter/enablePodUID": "v26.3",
    "/dcgmExporter/podLabelAllowlistRegex": "v26.3",
    "/cdi/nriPluginEnabled": "v26.3",
    "/daemonsets/podSecurityContext": "v26.3",
    "/dcgmExporter/hostNetwork": "v26.3",
    "/kataSandboxDevicePlugin": "v26.3",
    "/sandboxWorkloads/mode": "v26.3",
    "/vgpuManager/kernelModuleConfig": "v26.3",
    # the NVIDIADriver CRD's (a pool's own driver settings)
    "/nodePools/*/driver/podSecurityContext": "v26.3",
    "/nodePools/*/driver/hostNetwork": "v26.3",
    # the ClusterPolicy CRD's spec schema of v26.7.0 against v26.3.3's
    "/dcgmExporter/serviceMonitor/scrapeTimeout": "v26.7",
    "/hostPaths/kubeletRootDir": "v26.7",
    "/nodePools/*/driver/upgradePolicy": "v26.7",
}
"""Pointer (``*``: any item) -> first imitated release whose CRD has the field. Every field the
CRDs' spec schemas gain from v25.10.1 to v26.3.3 and to v26.7.0 that gpu-render renders (none is
removed); not ``operator.metrics`` and ``kataManager.hostNetwork``, whose sections render
nothing here and warn so. A key the schema defaults (``hostNetwork: false``,
``serviceMonitor.scrapeTimeout: 10s``, ``sandboxWorkloads.mode: kubevirt``, ...) is pruned too:
the older release renders without it."""

ASSET_VALUE_FROM: dict[str, dict[str, str]] = {
    "/toolkit/env": {"NRI_NAMESPACE": "v26.3"},
    "/gfd/env": {"NAMESPACE": "v25.10", "NODE_NAME": "v25.10", "POD_NAME": "v26.3"},
    "/dcgmExporter/env": {"NODE_NAME": "v25.10"},
    "/migManager/env": {"NODE_NAME": "v25.10", "POD_NAME": "v25.10", "POD_NAMESPACE": "v25.10", "DEFAULT_GPU_CLIENTS_NAMESPACE": "v25.10"},
    "/validator/cuda/env": {"NODE_NAME": "v25.10", "OPERATOR_NAMESPACE": "v25.10"},
    "/validator/plugin/env": {"NODE_NAME": "v25.10", "OPERATOR_NAMESPACE": "v25.10"},
    "/validator/driver/env": {"OPERATOR_NAMESPACE": "v25.10"},
    "/ccManager/env": {"NODE_NAME": "v25.10"},
    "/nodeStatusExporter/env": {"NODE_NAME": "v25.10", "OPERATOR_NAMESPACE": "v25.10"},
    "/sandboxDevicePlugin/env": {"NODE_NAME": "v26.3", "POD_NAMESPACE": "v26.3"},
    "/kataSandboxDevicePlugin/env": {"NODE_NAME": "v26.3", "POD_NAMESPACE": "v26.3", "POD_SERVICE_ACCOUNT": "v26.3"},
    "/vgpuDeviceManager/env": {"NAMESPACE": "v25.10", "NODE_NAME": "v25.10"},
    "/validator/vfioPCI/env": {"NODE_NAME": "v25.10"},
    "/validator/vgpuManager/env": {"NODE_NAME": "v25.10"},
    "/validator/vgpuDevices/env": {"NODE_NAME": "v25.10"},
    # the driver and the k8s-driver-manager init containers (state-driver, state-vgpu-manager,
    # state-vfio-manager): ClusterPolicy keys only. A pool's own env is its NVIDIADriver's, whose
    # template appends the user's entries after the asset's: the later one wins, as gpu-render's
    # entry in the asset's place does.
    "/driver/env": {"NODE_NAME": "v25.10", "NODE_IP": "v25.10"},
    "/driver/manager/env": {"NODE_NAME": "v25.10", "OPERATOR_NAMESPACE": "v25.10"},
    "/vgpuManager/driverManager/env": {"NODE_NAME": "v25.10", "OPERATOR_NAMESPACE": "v25.10"},
    "/vfioManager/driverManager/env": {"NODE_NAME": "v25.10", "OPERATOR_NAMESPACE": "v25.10"},
}
"""Env pointer -> {name the asset sets by valueFrom in the container it reaches: first imitated
release whose asset has it}."""

NEEDS: dict[str, tuple[str, ...]] = {
    "/validator/plugin/env": ("devicePlugin",),  # the operator drops plugin-validation without it
    **{p: ("sandboxWorkloads",) for p in ("/ccManager/env", "/sandboxDevicePlugin/env", "/kataSandboxDevicePlugin/env", "/vgpuDeviceManager/env", "/validator/vfioPCI/env", "/validator/vgpuManager/env", "/validator/vgpuDevices/env", "/vgpuManager/driverManager/env", "/vfioManager/driverManager/env")},
}
"""Env pointer -> further sections whose ``enabled: false`` leaves the container out (its own
top section is always one: a disabled operand deploys no pod to reject)."""

RELEASE_CODE = "release-key"
VALUE_FROM_CODE = "env-over-value-from"


def has(release: str, since: str) -> bool:
    """Whether imitated ``release`` is ``since`` or later (an unknown release counts as newest)."""
    return _RANK.get(release, len(RELEASES)) >= _RANK[since]


def lookup(data: Any, pointer: str) -> tuple[bool, Any]:
    """(found, value) of the map key at ``pointer`` (``/driver/version``) in ``data``."""
    node = data
    for part in pointer[1:].split("/"):
        if not isinstance(node, dict) or part not in node:
            return False, None
        node = node[part]
    return True, node


def _found(node: Any, parts: list[str], where: str = "") -> list[str]:
    """The pointers of ``node`` that ``parts`` (``*``: any list item) name."""
    if not parts:
        return [where]
    head, rest = parts[0], parts[1:]
    if head == "*":
        return [p for i, item in enumerate(node) for p in _found(item, rest, f"{where}/{i}")] if isinstance(node, list) else []
    return _found(node[head], rest, f"{where}/{head}") if isinstance(node, dict) and head in node else []


@lru_cache(maxsize=8)
def _missing(release: str) -> tuple[tuple[str, ...], ...]:
    return tuple(tuple(p[1:].split("/")) for p, since in ADDED_IN.items() if not has(release, since))


def _without(node: Any, parts: tuple[str, ...]) -> Any:
    """``node`` without what ``parts`` names: itself when nothing is, else a copy of the
    containers on the way (``node`` is never changed)."""
    head, rest = parts[0], parts[1:]
    if head == "*":
        if not isinstance(node, list):
            return node
        items = [_without(item, rest) for item in node]
        return items if any(a is not b for a, b in zip(items, node, strict=True)) else node
    if not isinstance(node, dict) or head not in node:
        return node
    if not rest:
        return {k: v for k, v in node.items() if k != head}
    child = _without(node[head], rest)
    return node if child is node[head] else {**node, head: child}


def prune(values: dict[str, Any], pools: bool = True) -> dict[str, Any]:
    """``values`` as the imitated release's CRDs keep them: without the :data:`ADDED_IN` keys of
    later releases (``values`` itself when it has none; never changed). ``pools=False`` leaves
    the ``nodePools`` entries as they are (the chart's, resolved for their release already)."""
    release = str((values.get("cluster") or {}).get("operatorRelease") or "")
    out = values
    for parts in _missing(release):
        if pools or parts[0] != "nodePools":
            out = _without(out, parts)
    return out


def enabled(values: dict[str, Any], sections: tuple[str, ...]) -> bool:
    """Are all of ``sections`` on in ``values`` (with defaults: an ``enabled`` left out is on)?"""
    return all((values.get(s) or {}).get("enabled", True) is not False for s in sections)


def _deployed(values: dict[str, Any], pointer: str) -> bool:
    return enabled(values, (pointer[1:].split("/")[0], *NEEDS.get(pointer, ())))


def release_rules(located: Located, values: dict[str, Any]) -> list[Problem]:
    """A warning at each key the imitated release does not have, an error at each ``value:``
    written over an env name the asset sets by ``valueFrom`` in an operand that is deployed
    (``values``: ``located.data`` with defaults; both passed the schema)."""
    release = str((values.get("cluster") or {}).get("operatorRelease") or "")
    out: list[Problem] = []
    gated = [p for p, since in ADDED_IN.items() if not has(release, since)]
    for pointer in gated:
        if any(pointer.startswith(outer + "/") for outer in gated):
            continue  # warned at the section that holds it
        since = ADDED_IN[pointer]
        owner = "NVIDIADriver" if pointer.startswith("/nodePools/") else "ClusterPolicy"
        for where in _found(located.data, pointer[1:].split("/")):
            file, line, col = located.locate(where, key=True)
            dotted = ".".join(where[1:].split("/"))
            message = (
                f"{dotted}: operator release {release} has no {dotted} (its {owner} CRD prunes it, so the operator ignores it; "
                f"{since} adds it): rendered as {release} renders, without it"
            )
            hint = f"set cluster.operatorRelease to {since} or later, or remove the key"
            out.append(Problem(file, line, col, where, message, hint=hint, code=RELEASE_CODE, severity=Severity.WARNING))
    for pointer, names in ASSET_VALUE_FROM.items():
        found, env = lookup(located.data, pointer)
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
