"""The one table of policy keys that render nothing here, each with its reason.

Every other leaf key of ``schemas/values.schema.json`` changes at least one rendered object or
output file when its value changes: ``tests/test_key_effects.py`` walks the schema and holds
that (a key added later without an effect fails it until it renders or is listed here).
``validate`` and ``build`` warn, at the key's ``file:line:col``, whenever a policy sets a key
listed here (empty lists and maps are ignored). Pointers are JSON pointers; ``*`` stands for
any item of a list (``/nodePools/*/...``).

* :data:`OPERATOR_ONLY`: the operator's controller, its CRs and subcharts, which gpu-render
  replaces; the importer (:mod:`renderer.migrate`) removes these keys.
* :data:`COMPATIBILITY`: accepted so a GPU Operator values file validates, ignored upstream
  too or decided elsewhere here.
* :data:`PENDING`: operator settings gpu-render does not render yet; they warn until they
  render (the key-effect test fails once one renders and is still listed).
"""

from __future__ import annotations

OPERATOR_ONLY: dict[str, str] = {
    "/operator/version": "the operator's image decides which release's operands it deploys; gpu-render renders the release cluster.operatorRelease names (v25.10, v26.3 or v26.7; default the newest): set that instead",
    "/operator": "gpu-render deploys no operator controller; its Deployment settings have no effect",
    "/clusterPolicy": "no ClusterPolicy is rendered; objects are rendered directly",
    "/gpuCluster": "no GPUCluster CR is rendered; set nodePools[].resourceAllocation: dra for the DRA stack",
    "/platform": "set cluster.capabilities.openshift instead",
    "/psp": "PodSecurityPolicy was removed in Kubernetes 1.25; use psa.enabled",
    "/kataManager": "the kata manager state is permanently disabled in the operator",
    "/node-feature-discovery": "gpu-render renders NFD from the nfd.* keys (import-operator-values moves the NFD chart values that have one there); the NFD chart's other values are not carried over",
    "/fullnameOverride": "the GPU Operator chart's full name for its own objects (defined in its helpers, included by none of its templates); gpu-render deploys no operator, and the names of the operands are fixed",
    "/nameOverride": "the GPU Operator chart's name, in its own objects' labels and the operands' `app.kubernetes.io/managed-by`; gpu-render deploys no operator and labels what it renders `managed-by: gpu-render`",
    "/extraObjects": "the chart's extra Helm-templated manifests are not rendered; use overlays/<cluster>/patches",
    "/driver/nvidiaDriverCRD": "no NVIDIADriver CRs are rendered; set per-pool driver settings in nodePools[].driver",
    "/driver/useNvidiaDriverCRD": "no NVIDIADriver CRs are rendered; set per-pool driver settings in nodePools[].driver",
    "/driver/useOpenKernelModules": "read by charts 23.9 to 24.9 only (the open kernel modules); the operator reads driver.kernelModuleType since v25.3: use it",
    "/cdi/default": "charts 23.3 to 25.3 put the toolkit in CDI mode with it (NVIDIA_CONTAINER_RUNTIME_MODE=cdi); from 25.10 the operator does so whenever cdi.enabled is on, and gpu-render renders that",
    "/driver/upgradePolicy/waitForCompletion": "the upgrade controller is part of the operator; the DaemonSet controller and k8s-driver-manager do not wait for jobs (GPU pods are evicted after gpuPodDeletion.timeoutSeconds)",
}

_STARTUP_SUCCESS = "Kubernetes accepts only 1 for a startup probe (the API server refuses the DaemonSet otherwise); the driver's startup probe keeps 1"
_NIL_PROBE = "the operator's driver container has no {} probe to tune: with a field set, its reconcile of the ClusterPolicy dereferences a nil probe (setContainerProbe) and the driver is never updated"
_POD_DELETION = "the NVIDIADriver spelling of gpuPodDeletion, read by the operator's upgrade controller only (its driver DaemonSet takes nothing from it); k8s-driver-manager evicts GPU pods as gpuPodDeletion says"
COMPATIBILITY: dict[str, str] = {
    "/cluster/name": "a cluster's name is its overlay folder's name (the fleet base is 'fleet'); the value written here is replaced",
    "/dcgm/hostPort": "deprecated in the ClusterPolicy and ignored by the operator: the host engine listens on 5555 inside the pod network",
    "/nodePools/*/driver/useOpenKernelModules": "an NVIDIADriver field of charts 23.9 to 24.9 only; the operator reads kernelModuleType since v25.3: use it",
    "/driver/startupProbe/successThreshold": _STARTUP_SUCCESS,
    "/nodePools/*/driver/startupProbe/successThreshold": _STARTUP_SUCCESS,
    "/driver/livenessProbe": _NIL_PROBE.format("liveness"),
    "/driver/readinessProbe": _NIL_PROBE.format("readiness"),
    "/nodePools/*/driver/livenessProbe": "an NVIDIADriver field the operator ignores too (its driver container has no liveness probe)",
    "/nodePools/*/driver/readinessProbe": "an NVIDIADriver field the operator ignores too (its driver container has no readiness probe)",
    "/nodePools/*/driver/nodeAffinity": "an NVIDIADriver field the operator ignores too (its driver DaemonSet takes no node affinity from it); a pool's nodes are chosen by nodeSelector",
    "/driver/upgradePolicy/podDeletion": _POD_DELETION,
    "/nodePools/*/driver/upgradePolicy/podDeletion": _POD_DELETION,
    "/nodePools/*/driver/upgradePolicy/waitForCompletion": "the upgrade controller is part of the operator; the DaemonSet controller and k8s-driver-manager do not wait for jobs (GPU pods are evicted after gpuPodDeletion.timeoutSeconds)",
}

_POD_CLAIM = "a container's claim needs an entry of the pod's resourceClaims, which the pod does not have (the API server would refuse it): not rendered"
CLAIMS_SECTIONS = {
    **dict.fromkeys((
        "ccManager", "dcgm", "dcgmExporter", "devicePlugin", "driver", "gfd", "kataSandboxDevicePlugin", "migManager",
        "nodePools/*/driver", "nodeStatusExporter", "sandboxDevicePlugin", "toolkit", "validator", "vfioManager",
        "vgpuDeviceManager", "vgpuManager",
    ), "the ClusterPolicy CRD's resources keep only limits and requests, so the operator never saw the claims its chart passed on; " + _POD_CLAIM),
    **dict.fromkeys(("nfd/gc", "nfd/master", "nfd/worker"), "the NFD chart passes it to the pod, which has no resourceClaims: " + _POD_CLAIM),
    "nodeLabeller": _POD_CLAIM,
}  # fmt: skip
"""Sections whose ``resources.claims`` the model drops (``resolve._without_claims``), with the reason."""
COMPATIBILITY.update({f"/{section}/resources/claims": why for section, why in CLAIMS_SECTIONS.items()})
COMPATIBILITY.update({
    "/daemonsets/labels/app": "every operand keeps app: <its name>, its DaemonSet's selector (the operator skips this label of daemonsets.labels too)",
    "/daemonsets/labels/app.kubernetes.io~1part-of": "every operand keeps its own app.kubernetes.io/part-of (the operator skips this label of daemonsets.labels too)",
})

PENDING: dict[str, str] = {}
"""Keys accepted but not rendered yet, with the reason "not rendered yet: ..." (none now: each
key the operator renders is rendered, and the rest say the operator's own reason above)."""

NO_EFFECT: dict[str, str] = {**OPERATOR_ONLY, **COMPATIBILITY, **PENDING}
"""Pointer (``*`` for any list item) -> why setting it renders nothing here."""


def reason(pointer: str) -> str | None:
    """Why the key at a concrete pointer has no effect (it or an ancestor is listed), or None."""
    return reason_in(pointer, NO_EFFECT)


def reason_in(pointer: str, table: dict[str, str]) -> str | None:
    """:func:`reason` in one of the tables."""
    parts = pointer.split("/")[1:]
    for listed, why in table.items():
        pat = listed.split("/")[1:]
        if len(pat) <= len(parts) and all(p == "*" or p == q for p, q in zip(pat, parts, strict=False)):
            return why
    return None
