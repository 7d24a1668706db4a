"""Least privilege, as data: what each component may do, and why.

``GRANTS`` is the privilege table (also in docs/security.md, checked by a test): per
component, the lint checks (:mod:`renderer.lint`) its objects may trip, each with the reason,
the RBAC rules it may hold, and why its pods talk to the Kubernetes API (a ServiceAccount
token is mounted only then). A component not listed may do none of it.

:func:`harden` runs on every component's objects after they are built: pods whose
ServiceAccount has no RBAC binding get ``automountServiceAccountToken: false``, and every
object that needs a privilege gets one ``gpu-render.dev/lint-exempt.<check>`` annotation per
check, carrying the reason, so ``gpu-render lint`` on the output passes and a reviewer reads why.
"""

from __future__ import annotations

from collections.abc import Container
from dataclasses import dataclass, field
from typing import Any

from renderer import lint
from renderer.model import Model

Obj = dict[str, Any]
Rule = tuple[str, str, str]  # (apiGroup, resource, verb)

# Reasons shared by several components.
_GPU = "talks to the GPU through the host driver's device nodes"
_MARKERS = "reads or writes validation markers and the driver root under /run/nvidia"
_DRIVER_MANAGER = "k8s-driver-manager cordons the node, labels it and evicts GPU pods before a driver reload"


def rules(*specs: str) -> frozenset[Rule]:
    """``"group resource,resource verb,verb"`` (``core`` for the core group) -> rule tuples."""
    out: set[Rule] = set()
    for spec in specs:
        group, resources, verbs = spec.split()
        for resource in resources.split(","):
            for verb in verbs.split(","):
                out.add(("" if group == "core" else group, resource, verb))
    return frozenset(out)


@dataclass(frozen=True)
class Grant:
    privileges: dict[str, str] = field(default_factory=dict)
    """lint check -> why this component needs it."""
    rbac: frozenset[Rule] = frozenset()
    """Every (apiGroup, resource, verb) its Roles and ClusterRoles may hold."""
    api: str = ""
    """Why its pods talk to the API (they mount a ServiceAccount token); empty: they never do."""


_OPENSHIFT = rules("security.openshift.io securitycontextconstraints use")

GRANTS: dict[str, Grant] = {
    "driver": Grant(
        {
            "privileged-container": "loads and unloads the NVIDIA kernel modules",
            "host-pid": "finds and stops host processes that hold the GPU before a driver reload",
            "host-path": "installs the driver under /run/nvidia/driver and reads host /, /sys and /lib/modules",
            "writable-host-mount": "writes the driver root, firmware path and validation markers on the host",
        },
        rules(
            "core nodes get,list,watch,patch,update",
            "core pods get,list,watch",
            "core pods/eviction create",
            "apps daemonsets get",
            "resource.k8s.io resourceclaims get,list",
            "config.openshift.io clusterversions get,list",
        )
        | _OPENSHIFT,
        _DRIVER_MANAGER,
    ),
    "container-toolkit": Grant(
        {
            "privileged-container": "installs the NVIDIA runtime and rewrites the host container runtime config",
            "host-pid": "signals the host container runtime to reload its config",
            "host-path": "installs into /usr/local/nvidia and edits the runtime config and socket folders",
            "writable-host-mount": "writes the toolkit, runtime drop-in config, CDI specs and markers on the host",
        },
        rules("apps daemonsets list") | _OPENSHIFT,
        "its driver validation asks whether an operator owns the driver DaemonSet (daemonsets list)",
    ),
    "operator-validator": Grant(
        {
            "privileged-container": "runs nvidia-smi and CUDA checks against the host driver",
            "host-path": _MARKERS,
            "writable-host-mount": "writes the *-ready validation markers other components wait for",
        },
        # exactly the v26.7 nvidia-validator's calls (cmd/nvidia-validator/main.go)
        rules("core pods create,delete,get,list", "apps daemonsets get,list", "core nodes get") | _OPENSHIFT,
        "starts the CUDA/plugin validation pods, lists the driver DaemonSets and reads its node's allocatable GPUs",
    ),
    "device-plugin": Grant(
        {
            "privileged-container": "enumerates GPUs and serves the kubelet device-plugin socket",
            "host-path": "kubelet device-plugins socket folder, CDI specs, MPS root and validation markers",
            "writable-host-mount": "creates its socket in the kubelet folder and writes CDI specs",
        },
        rules("core nodes get,list,watch") | _OPENSHIFT,
        "the config manager reads the node's device-plugin config label",
    ),
    "mps-control-daemon": Grant(
        {
            "privileged-container": "runs the MPS control daemon on the host GPUs",
            "host-pid": "the MPS daemon must see the GPU client processes it serves",
            "host-path": "MPS pipe and shared-memory folders under /run/nvidia/mps",
            "writable-host-mount": "creates the MPS pipes and mounts its shared memory",
        },
        rules("core nodes get,list,watch") | _OPENSHIFT,
        "the config manager reads the node's device-plugin config label",
    ),
    "gpu-feature-discovery": Grant(
        {
            "privileged-container": _GPU,
            "host-path": "writes NFD feature files and reads /sys",
            "writable-host-mount": "writes the NFD feature file of its node",
        },
        rules("nfd.k8s-sigs.io nodefeatures get,list,watch,create,update", "core pods get", "core nodes get,list,watch") | _OPENSHIFT,
        "publishes NodeFeature objects and reads the node's config label",
    ),
    "nfd": Grant(
        {
            "host-path": "the worker reads host /sys, /proc, /usr/lib, os-release and feature files",
            "writable-host-mount": "the worker reads feature files that other pods write on the host",
        },
        rules(
            "core nodes get,list,watch,patch",
            "core nodes/status patch",
            "nfd.k8s-sigs.io nodefeaturerules list,watch",
            "nfd.k8s-sigs.io nodefeatures get,list,watch,create,update,delete",
            "core pods get",
            "topology.node.k8s.io noderesourcetopologies delete,list",
        ),
        "nfd-master labels nodes, nfd-worker publishes NodeFeature objects, nfd-gc removes stale ones",
    ),
    "node-labeller": Grant(
        {},
        rules("core nodes get,patch"),
        "adds a missing nvidia.com/gpu.deploy.* label to its own node, once",
    ),
    "dcgm": Grant(
        {
            "privileged-container": "the DCGM host engine reads GPU telemetry and profiling counters",
            "host-path": "reads the driver root under /run/nvidia",
            "writable-host-mount": "mounts the driver root with the host's mount propagation",
        },
        _OPENSHIFT,
    ),
    "dcgm-exporter": Grant(
        {
            "privileged-container": "reads GPU profiling counters through DCGM",
            "added-capabilities": "SYS_ADMIN is needed by DCGM to read profiling metrics",
            "host-path": "kubelet pod-resources socket (maps GPUs to pods) and the driver root",
            "writable-host-mount": "connects to the kubelet pod-resources socket",
            "host-network": "reaches a DCGM host engine listening on the node's localhost",
        },
        rules("core configmaps get,list", "core pods get,list,watch") | _OPENSHIFT,
        "reads pod labels/UIDs or its metrics ConfigMap when the policy enables that",
    ),
    "mig-manager": Grant(
        {
            "privileged-container": "repartitions GPUs into MIG instances",
            "host-pid": "stops host GPU clients before repartitioning",
            "host-ipc": "shares IPC with host GPU clients it stops and restarts",
            "host-path": "reads /sys, the driver root and writes CDI specs",
            "writable-host-mount": "writes CDI specs and MIG state on the host",
        },
        rules(
            "core pods get,list,watch,delete",
            "core configmaps create,get,list,update,patch",
            "core nodes get,list,watch,update,patch",
        )
        | _OPENSHIFT,
        "reads the node's mig.config label, writes mig.config.state and deletes GPU pods",
    ),
    "node-status-exporter": Grant(
        {
            "privileged-container": "reads driver and validation status from the host",
            "host-path": _MARKERS,
            "writable-host-mount": "mounts /run/nvidia with the host's mount propagation",
        },
        rules("core pods get,list", "apps daemonsets get,list,watch", "core nodes get,list,watch") | _OPENSHIFT,
        "exports node and operand status read from the API",
    ),
    "vgpu-manager": Grant(
        {
            "privileged-container": "loads the vGPU manager kernel modules",
            "host-pid": "finds and stops host processes that hold the GPU before a reload",
            "host-ipc": "shares IPC with host vGPU processes",
            "host-path": "installs the vGPU manager under /run/nvidia and reads /sys, /dev/vfio",
            "writable-host-mount": "writes the driver root and validation markers on the host",
        },
        rules("core nodes get,list,watch,patch", "core pods get,list,watch", "core pods/eviction create", "apps daemonsets get") | _OPENSHIFT,
        _DRIVER_MANAGER,
    ),
    "vgpu-device-manager": Grant(
        {
            "privileged-container": "creates vGPU devices through sysfs",
            "host-path": "reads and writes /sys and validation markers",
            "writable-host-mount": "creates vGPU devices in /sys",
        },
        rules("core pods get,list,watch", "core nodes get,list,watch,update") | _OPENSHIFT,
        "reads the node's vgpu.config label and writes its state",
    ),
    "vfio-manager": Grant(
        {
            "privileged-container": "binds GPUs to the vfio-pci driver",
            "host-pid": "k8s-driver-manager stops host processes holding the GPU",
            "host-path": "reads /sys, /lib/modules and validation markers",
            "writable-host-mount": "rebinds devices through /sys and writes markers",
        },
        rules("core nodes get,list,watch,patch", "core pods get,list,watch", "core pods/eviction create") | _OPENSHIFT,
        _DRIVER_MANAGER,
    ),
    "sandbox-device-plugin": Grant(
        {
            "privileged-container": "passes whole GPUs or vGPUs to sandboxed VMs",
            "host-path": "kubelet device-plugins socket folder, /dev/vfio and validation markers",
            "writable-host-mount": "creates its socket in the kubelet folder",
        },
        rules("core pods create,delete,get,list,watch", "nfd.k8s-sigs.io nodefeatures create,get,list,update,watch", "core nodes get") | _OPENSHIFT,
        "reads its node and publishes NodeFeature objects",
    ),
    "kata-sandbox-device-plugin": Grant(
        {
            "privileged-container": "passes GPUs to Kata containers",
            "host-path": "kubelet device-plugins socket folder, /dev/vfio and validation markers",
            "writable-host-mount": "creates its socket in the kubelet folder",
        },
        rules("core pods create,delete,get,list,watch", "nfd.k8s-sigs.io nodefeatures create,get,list,update,watch", "core nodes get") | _OPENSHIFT,
        "reads its node and publishes NodeFeature objects",
    ),
    "sandbox-validator": Grant(
        {
            "privileged-container": "checks vfio-pci, vGPU manager and vGPU devices on the host",
            "host-path": _MARKERS,
            "writable-host-mount": "writes the sandbox validation markers",
        },
        rules("core nodes get") | _OPENSHIFT,
        "reads its node's workload-type label",
    ),
    # DRA (renderer/components/dra_*.py); why each verb: docs/security.md "DRA driver RBAC".
    "dra-driver": Grant(
        {
            "privileged-container": "the kubelet plugins enumerate GPUs, write CDI specs, create MPS and IMEX channels; driver-validation checks the host driver",
            "host-path": "kubelet plugins and plugins_registry folders, CDI specs, driver root, validation markers, host / (read-only)",
            "writable-host-mount": "creates its DRA sockets in the kubelet folders, writes CDI specs and the driver-ready marker",
        },
        rules(
            "resource.k8s.io resourceclaims get,list,watch",
            "resource.k8s.io resourceslices get,list,watch,create,update,delete",
            "resource.k8s.io resourceclaimtemplates get,list,watch,create,update,delete",
            "core nodes get,list,watch,update,patch",
            "core pods get,list,watch,patch",
            "apps deployments get,list,watch,create,delete",
            "apps daemonsets get,list,watch,create,update,delete",
            "coordination.k8s.io leases get,create,update",
            "resource.nvidia.com computedomains get,list,watch,update",
            "resource.nvidia.com computedomains/status update",
            "resource.nvidia.com computedomaincliques get,list,watch,create,update",
        ),
        "publishes its node's ResourceSlices, prepares claims; the controller runs ComputeDomain daemons",
    ),
    "dcgm-exporter-dra": Grant(
        {
            "privileged-container": "reads GPU profiling counters through DCGM",
            "added-capabilities": "SYS_ADMIN is needed by DCGM to read profiling metrics",
            "host-path": "kubelet pod-resources socket (maps DRA devices to pods) and the validation markers",
            "writable-host-mount": "connects to the kubelet pod-resources socket",
            "host-network": "reaches a DCGM host engine listening on the node's localhost",
        },
        rules("core configmaps get,list", "core pods get,list,watch", "resource.k8s.io resourceslices get,list,watch"),
        "attributes DRA-claimed GPUs to pods: a pod informer and a ResourceSlice informer (device names to GPU UUIDs)",
    ),
    "dra-validator": Grant(
        {
            "privileged-container": "runs the driver and toolkit validations against the host driver",
            "host-path": _MARKERS,
            "writable-host-mount": "writes the driver-ready and toolkit-ready markers other operands wait for",
        },
    ),
    "cc-manager": Grant(
        {
            "privileged-container": "switches the GPUs' confidential-computing mode",
            "host-path": "changes GPU modes through /sys and writes its readiness marker under /run/nvidia",
            "writable-host-mount": "changes GPU modes through /sys",
        },
        rules("core pods list", "core nodes get,list,watch,patch") | _OPENSHIFT,
        "watches the node's cc.mode label, writes its state, pauses the sandbox operands' deploy labels and lists their pods on the node",
    ),
}

# Pod settings a policy may turn on for a component (``<key>.<field>: true``): the policy is
# then the justification.
POLICY_SWITCHES = {"host-network": "hostNetwork", "host-pid": "hostPID"}
SWITCHES_IN = {"nfd": "worker"}
"""A component whose switches sit in one of its sections (``nfd.worker.hostNetwork``): only that
pod can turn them on."""


def grant(component: str) -> Grant:
    return GRANTS.get(component, _NO_GRANT)


_NO_GRANT = Grant()
"""The grant of a component not listed (made once: harden asks for every check it finds)."""


def allowed(component: str, check: str, model: Model | None = None, key: str = "") -> str:
    """Why ``component`` may trip ``check``, or ``""`` when it may not."""
    g = grant(component)
    if check == "service-account-token":
        return g.api
    if check in g.privileges:
        return g.privileges[check]
    switch = POLICY_SWITCHES.get(check)
    if model is None or not key or not switch:
        return ""
    section, where = model.section(key), key
    if key in SWITCHES_IN:
        inner = section.get(SWITCHES_IN[key])
        section, where = (inner if isinstance(inner, dict) else {}), f"{key}.{SWITCHES_IN[key]}"
    if section.get(switch) is True:
        return f"requested by the policy ({where}.{switch}: true)"
    return ""


def bound_service_accounts(objs: dict[str, list[Obj]]) -> set[tuple[str, str]]:
    """(namespace, name) of every ServiceAccount some RoleBinding or ClusterRoleBinding names."""
    out: set[tuple[str, str]] = set()
    for items in objs.values():
        for obj in items:
            if obj.get("kind") in ("RoleBinding", "ClusterRoleBinding"):
                for subject in obj.get("subjects") or []:
                    if subject.get("kind") == "ServiceAccount":
                        out.add((str(subject.get("namespace") or ""), str(subject.get("name"))))
    return out


def harden(
    model: Model, objs: dict[str, list[Obj]], keys: dict[str, str], bound: Container[tuple[str, str]] | None = None
) -> dict[str, list[Obj]]:
    """Token off where unused, exemption annotations where a privilege is justified (in place).

    ``bound``: the ServiceAccounts some binding names, when ``objs`` is not the whole render
    (by default, those of ``objs``)."""
    if bound is None:
        bound = bound_service_accounts(objs)
    for component, items in objs.items():
        key = keys.get(component, "")
        for obj in items:
            pod = lint.pod_spec(obj)  # (the token changes its keys, not which dict it is)
            _token(obj, pod, bound)
            reasons: dict[str, str] = {}
            for check, _ in lint.object_findings(obj, pod):
                reason = allowed(component, check, model, key)
                if reason:
                    reasons[check] = reason
            if reasons:
                annotations = obj.setdefault("metadata", {}).setdefault("annotations", {})
                annotations.update(lint.exemption_annotations(reasons))
    return objs


def _token(obj: Obj, pod: Obj | None, bound: Container[tuple[str, str]]) -> None:
    """``automountServiceAccountToken: false`` on ``pod`` (``obj``'s pod spec) unless a binding
    names its ServiceAccount, placed after ``serviceAccountName``."""
    if pod is None or "automountServiceAccountToken" in pod:
        return
    namespace = str((obj.get("metadata") or {}).get("namespace") or "")
    sa = str(pod.get("serviceAccountName") or "default")
    if (namespace, sa) in bound:
        return
    items = list(pod.items())
    pod.clear()
    placed = False
    for k, v in items:
        pod[k] = v
        if k == "serviceAccountName":
            pod["automountServiceAccountToken"] = False
            placed = True
    if not placed:
        pod["automountServiceAccountToken"] = False


def privilege_table() -> str:
    """The privilege table of docs/security.md (markdown), generated from ``GRANTS``."""
    lines = ["| component | check | reason |", "| --- | --- | --- |"]
    for component in sorted(GRANTS):
        g = GRANTS[component]
        for check in sorted(g.privileges):
            lines.append(f"| {component} | {check} | {g.privileges[check]} |")
        if g.api:
            lines.append(f"| {component} | service-account-token | {g.api} |")
    return "\n".join(lines) + "\n"


def rbac_table() -> str:
    """Per component, the RBAC rules it may hold (markdown), generated from ``GRANTS``."""
    lines = ["| component | apiGroup | resource | verbs |", "| --- | --- | --- | --- |"]
    for component in sorted(GRANTS):
        grouped: dict[tuple[str, str], list[str]] = {}
        for group, resource, verb in sorted(GRANTS[component].rbac):
            grouped.setdefault((group, resource), []).append(verb)
        for (group, resource), verbs in sorted(grouped.items()):
            lines.append(f"| {component} | {group or 'core'} | {resource} | {', '.join(verbs)} |")
    return "\n".join(lines) + "\n"
