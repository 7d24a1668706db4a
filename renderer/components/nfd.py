"""Node Feature Discovery: master, worker, gc, their RBAC, the NFD CRDs, worker config, and
the NodeFeatureRules that label GPU nodes ``nvidia.com/gpu.present=true``.

Facts follow the NFD v0.19.0 chart as the GPU Operator v26.7 vendors it (PCI whitelist,
``extraLabelNs: [nvidia.com]``, gc on, worker tolerations). Each NFD role has its own
ServiceAccount so each gets only the rights it uses. The per-operand deploy labels are not
NFD's business (see :mod:`renderer.components.node_labeller`).
"""

from __future__ import annotations

import copy
import hashlib
from typing import Any

from renderer import yamlio
from renderer.components import common as c
from renderer.components import facts
from renderer.components.common import Obj
from renderer.model import Model

PREFIX = "node-feature-discovery"
MASTER = f"{PREFIX}-master"
WORKER = f"{PREFIX}-worker"
GC = f"{PREFIX}-gc"
NFD_API = "nfd.k8s-sigs.io"
CONF_DIR = "/etc/kubernetes/node-feature-discovery"
NVIDIA_VENDOR = "10de"
GPU_CLASSES = ["0300", "0302"]
"""PCI classes of NVIDIA GPUs: VGA compatible controller and 3D controller."""
KERNEL_MODULE_LABELS = (
    ("gdrdrv", "nvidia.com/gdrcopy.capable"),
    ("nvidia_fs", "nvidia.com/gds.capable"),
    ("nvidia_peermem", "nvidia.com/peermem.capable"),
)
RESTRICTED = {
    "allowPrivilegeEscalation": False,
    "capabilities": {"drop": ["ALL"]},
    "readOnlyRootFilesystem": True,
    "runAsNonRoot": True,
}


def _labels(name: str, role: str) -> dict[str, str]:
    return {**c.labels(name, "node-feature-discovery"), "role": role}


def crds(model: Model) -> list[Obj]:
    """The three NFD CRDs, from the upstream data file, labelled as ours."""
    out = facts.nfd_crds()
    for crd in out:
        crd["metadata"]["labels"] = {**crd["metadata"].get("labels", {}), **c.MANAGED_BY}
    return out


def _master_rbac(model: Model) -> list[Obj]:
    """The calls of nfd-master v0.19.0 as rendered: informers on NodeFeatures and
    NodeFeatureRules, node get/list and JSON patches (labels, annotations; extended resources
    on ``nodes/status``). No leader election (one replica), no namespace selector and no
    NodeFeatureGroup API (an alpha gate, off): no leases, namespaces or NodeFeatureGroups."""
    rules = [
        c.rule([""], ["nodes"], ["get", "list", "patch"]),
        c.rule([""], ["nodes/status"], ["patch"]),
        c.rule([NFD_API], ["nodefeatures", "nodefeaturerules"], ["list", "watch"]),
    ]
    return [c.service_account(MASTER, model), c.cluster_role(MASTER, rules), c.cluster_role_binding(MASTER, model)]


def _worker_rbac(model: Model) -> list[Obj]:
    """nfd-worker v0.19.0 gets its pod (the DaemonSet owner reference) and gets, creates and
    updates its NodeFeature; it never deletes it (nfd-gc does)."""
    rules = [
        c.rule([NFD_API], ["nodefeatures"], ["create", "get", "update"]),
        c.rule([""], ["pods"], ["get"]),
    ]
    return [c.service_account(WORKER, model), c.role(WORKER, model, rules), c.role_binding(WORKER, model)]


def _gc_rbac(model: Model) -> list[Obj]:
    rules = [
        c.rule([""], ["nodes"], ["list", "watch"]),
        c.rule([NFD_API], ["nodefeatures"], ["delete", "list"]),
        c.rule(["topology.node.k8s.io"], ["noderesourcetopologies"], ["delete", "list"]),
    ]
    return [c.service_account(GC, model), c.cluster_role(GC, rules), c.cluster_role_binding(GC, model)]


def master_config(model: Model) -> str:
    nfd = model.section("nfd")
    return yamlio.dump({"extraLabelNs": list(nfd.get("master", {}).get("extraLabelNs") or [])})


def worker_config(model: Model) -> str:
    """Worker config as the GPU Operator sets it: PCI labels for NICs and GPUs, by vendor; and
    the policy's custom feature rules (``nfd.worker.customSources``)."""
    worker = model.section("nfd").get("worker", {})
    pci = {
        "deviceClassWhitelist": [str(x) for x in worker.get("pciDeviceClassWhitelist") or []],
        "deviceLabelFields": [str(x) for x in worker.get("pciDeviceLabelFields") or []],
    }
    sources: dict[str, Any] = {"pci": pci}
    if worker.get("customSources"):
        sources["custom"] = [dict(rule) for rule in worker["customSources"]]  # the NFD chart's as written
    return yamlio.dump({"sources": sources})


def _config_map(name: str, model: Model, key: str, text: str, role: str) -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": c.meta(name, model, lbls=_labels(name.removesuffix("-conf"), role)),
        "data": {key: text},
    }


def _checksum(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _probe(path_port: str = "http", **extra: int) -> Obj:
    return {"httpGet": {"path": "/healthz", "port": path_port}, **extra}


def _container(model: Model, name: str, command: str, args: list[str], section: dict[str, Any]) -> Obj:
    nfd = model.section("nfd")
    ctr: Obj = {
        "name": name,
        "image": c.image_ref(nfd),
        "imagePullPolicy": nfd.get("imagePullPolicy", "IfNotPresent"),
        "command": [command],
        "args": args,
        "env": [{"name": "NODE_NAME", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}}],
        "ports": [{"name": "http", "containerPort": 8080}],
        "securityContext": copy.deepcopy(RESTRICTED),
    }
    if section.get("resources"):
        ctr["resources"] = c.resources(section)
    return ctr


def _pod_common(model: Model, sa: str) -> Obj:
    nfd = model.section("nfd")
    pod: Obj = {"serviceAccountName": sa}
    if nfd.get("priorityClassName"):
        pod["priorityClassName"] = nfd["priorityClassName"]
    secrets = c.pull_secret_refs(nfd)
    if secrets:
        pod["imagePullSecrets"] = secrets
    return pod


def _deployment(name: str, model: Model, role: str, pod: Obj, annotations: dict[str, str] | None = None) -> Obj:
    return c.deployment(name, model, _labels(name, role), pod, annotations)


def master(model: Model) -> Obj:
    section = model.section("nfd").get("master", {})
    ctr = _container(model, "master", "nfd-master", ["-port=8080"], section)
    ctr["startupProbe"] = _probe(failureThreshold=30)
    ctr["livenessProbe"] = _probe()
    ctr["readinessProbe"] = _probe(failureThreshold=10)
    ctr["volumeMounts"] = [c.mount("nfd-master-conf", CONF_DIR, read_only=True)]
    pod = _pod_common(model, MASTER)
    pod["enableServiceLinks"] = False  # as the NFD chart has it, for the master only
    pod["containers"] = [ctr]
    pod["volumes"] = [
        {"name": "nfd-master-conf", "configMap": {"name": f"{MASTER}-conf", "items": [{"key": "nfd-master.conf", "path": "nfd-master.conf"}]}}
    ]
    _placement(pod, section)
    return _deployment(MASTER, model, "master", pod, {"checksum/config": _checksum(master_config(model))})


WORKER_HOST_PATHS = (
    ("host-boot", "/boot", "/host-boot"),
    ("host-os-release", "/etc/os-release", "/host-etc/os-release"),
    ("host-sys", "/sys", "/host-sys"),
    ("host-usr-lib", "/usr/lib", "/host-usr/lib"),
    ("host-lib", "/lib", "/host-lib"),
    ("host-proc-swaps", "/proc/swaps", "/host-proc/swaps"),
    ("features-d", f"{CONF_DIR}/features.d/", f"{CONF_DIR}/features.d/"),
)


def worker(model: Model) -> Obj:
    section = model.section("nfd").get("worker", {})
    ctr = _container(model, "worker", "nfd-worker", ["-owner-refs=pod,ds", "-port=8080"], section)
    ctr["env"] += [
        {"name": "POD_NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
        {"name": "POD_UID", "valueFrom": {"fieldRef": {"fieldPath": "metadata.uid"}}},
        *(dict(e) for e in section.get("extraEnvs") or []),  # after its own, as the NFD chart
    ]
    ctr["livenessProbe"] = _probe(initialDelaySeconds=10)
    ctr["readinessProbe"] = _probe(initialDelaySeconds=5, failureThreshold=10)
    ctr["volumeMounts"] = [c.mount(n, m, read_only=True) for n, _, m in WORKER_HOST_PATHS]
    ctr["volumeMounts"].append(c.mount("nfd-worker-conf", CONF_DIR, read_only=True))
    pod = _pod_common(model, WORKER)
    pod["containers"] = [ctr]
    pod["volumes"] = [c.host_path(n, p) for n, p, _ in WORKER_HOST_PATHS]
    pod["volumes"].append(
        {"name": "nfd-worker-conf", "configMap": {"name": f"{WORKER}-conf", "items": [{"key": "nfd-worker.conf", "path": "nfd-worker.conf"}]}}
    )
    _placement(pod, section)
    _host_network(pod, section)
    lbls = _labels(WORKER, "worker")
    return {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": c.meta(WORKER, model, lbls=lbls),
        "spec": {
            "selector": {"matchLabels": {"app": WORKER}},
            "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "10%"}},
            "template": {
                "metadata": {"labels": dict(lbls), "annotations": {"checksum/config": _checksum(worker_config(model))}},
                "spec": pod,
            },
        },
    }


def _placement(pod: Obj, section: dict[str, Any]) -> None:
    """The NFD chart's ``nodeSelector``, ``affinity`` and ``tolerations`` of one role, as its
    templates print them (each only when set): a worker kept to the GPU pools, a master and gc
    kept to the CPU pools (its defaults: the master prefers, and tolerates, the control plane)."""
    if section.get("nodeSelector"):
        pod["nodeSelector"] = {str(k): str(v) for k, v in section["nodeSelector"].items()}
    if section.get("tolerations"):
        pod["tolerations"] = [dict(t) for t in section["tolerations"]]
    if section.get("affinity"):
        pod["affinity"] = copy.deepcopy(section["affinity"])


def _host_network(pod: Obj, section: dict[str, Any]) -> None:
    """The NFD chart's ``worker.hostNetwork`` and ``worker.dnsPolicy`` (which it always prints:
    its default, ``ClusterFirstWithHostNet``, resolves as ``ClusterFirst`` off the host network)."""
    if section.get("hostNetwork") is True:
        pod["hostNetwork"] = True
    pod["dnsPolicy"] = str(section.get("dnsPolicy") or "ClusterFirstWithHostNet")


def gc(model: Model) -> Obj:
    section = model.section("nfd").get("gc", {})
    interval = str(section.get("interval") or "1h")
    ctr = _container(model, "gc", "nfd-gc", [f"-gc-interval={interval}"], section)
    ctr["livenessProbe"] = _probe(initialDelaySeconds=10)
    ctr["readinessProbe"] = _probe(initialDelaySeconds=5)
    pod = _pod_common(model, GC)
    pod["containers"] = [ctr]
    _placement(pod, section)
    return _deployment(GC, model, "gc", pod)


def _rule(name: str, labels: dict[str, str], feature: str, expressions: Obj) -> Obj:
    return {"name": name, "labels": labels, "matchFeatures": [{"feature": feature, "matchExpressions": expressions}]}


def node_feature_rule(name: str, rules: list[Obj]) -> Obj:
    return {
        "apiVersion": f"{NFD_API}/v1alpha1",
        "kind": "NodeFeatureRule",
        "metadata": {"name": name, "labels": dict(c.MANAGED_BY)},
        "spec": {"rules": rules},
    }


def gpu_present_rule() -> Obj:
    """``nvidia.com/gpu.present=true`` on nodes with an NVIDIA VGA or 3D controller."""
    expressions = {
        "vendor": {"op": "In", "value": [NVIDIA_VENDOR]},
        "class": {"op": "In", "value": list(GPU_CLASSES)},
    }
    return node_feature_rule(
        "nvidia-gpu-present",
        [_rule("nvidia-gpu-present", {"nvidia.com/gpu.present": "true"}, "pci.device", expressions)],
    )


def kernel_modules_rule() -> Obj:
    """The GPU Operator chart's ``nvidia-kernel-modules`` rule: capability labels from loaded modules."""
    rules = [
        _rule(f"kernel-module-{module}", {label: "true"}, "kernel.loadedmodule", {module: {"op": "Exists"}})
        for module, label in KERNEL_MODULE_LABELS
    ]
    return node_feature_rule("nvidia-kernel-modules", rules)


COMPUTED = (
    (f"ConfigMap/{MASTER}-conf", ("data", "nfd-master.conf")),
    (f"ConfigMap/{WORKER}-conf", ("data", "nfd-worker.conf")),
)
"""The config files, YAML text made from the lists of ``nfd.master`` and ``nfd.worker``
(``extraLabelNs``, ``pciDeviceClassWhitelist``, ``pciDeviceLabelFields``) as gpu-render's YAML
writer quotes them: no template prints that text from a list (``toYaml`` quotes otherwise), so
the chart takes it from its computed values (``generated``), each cluster's values file carrying
its own; the chart's NOTES.txt refuses lists the text was not made from."""


def build(model: Model) -> list[Obj]:
    nfd = model.section("nfd")
    out: list[Obj] = crds(model) if nfd.get("crds", True) else []
    out += _master_rbac(model) + _worker_rbac(model)
    out.append(_config_map(f"{MASTER}-conf", model, "nfd-master.conf", master_config(model), "master"))
    out.append(_config_map(f"{WORKER}-conf", model, "nfd-worker.conf", worker_config(model), "worker"))
    out += [master(model), worker(model)]
    if nfd.get("gc", {}).get("enabled", True):
        out += [*_gc_rbac(model), gc(model)]
    out.append(gpu_present_rule())
    if nfd.get("nodefeaturerules"):
        out.append(kernel_modules_rule())
    return out
