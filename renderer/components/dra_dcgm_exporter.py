"""The DCGM exporter on ``resourceAllocation: dra`` pools (the operator's DRA flavour).

The same exporter as :mod:`renderer.components.dcgm_exporter`, except how it reaches the GPUs
and whom it attributes them to: all GPUs of the node through an admin-access
ResourceClaimTemplate (``allocationMode: All``) instead of the ``nvidia`` runtime class, and
``KUBERNETES_ENABLE_DRA=true``, so metrics of GPUs handed out by DRA carry the pod, namespace
and claim. That mapping needs a pod informer and a ResourceSlice informer (the pod-resources
API names DRA devices, the slices give their GPU UUIDs): a ClusterRole reads pods and
ResourceSlices. The regular exporter keeps off ``dra`` pools (its selector excludes them).
"""

from __future__ import annotations

from renderer.components import common as c
from renderer.components import dcgm_exporter as e
from renderer.components import dra_common as d
from renderer.components import helpers as h
from renderer.components.common import Obj
from renderer.model import Model

NAME = f"{e.NAME}-dra"
CLAIM = f"{e.NAME}-admin"
REQUEST = "admin-gpus"
LABEL = d.EXPORTER_LABEL
"""``nvidia.com/gpu.deploy.dcgm-exporter-dra``: k8s-driver-manager (v0.12) pauses it too."""


def enabled(model: Model) -> bool:
    return d.enabled(model) and model.enabled("dcgmExporter")


def claim_template(model: Model) -> Obj:
    obj = d.admin_claim_template(CLAIM, REQUEST, model, d.RESOURCE_API)
    exactly = obj["spec"]["spec"]["devices"]["requests"][0]["exactly"]
    exactly["allocationMode"] = "All"
    del exactly["count"]
    return obj


def daemonset(model: Model) -> Obj:
    exp = model.section("dcgmExporter")
    base = e.daemonset(model)  # built fresh for this call: changed here, never shared
    template = base["spec"]["template"]
    pod: Obj = template["spec"]
    for key in ("affinity", "runtimeClassName", "tolerations", "imagePullSecrets", "priorityClassName", "securityContext"):
        pod.pop(key, None)  # c.daemonset puts back the common ones
    pod["serviceAccountName"] = NAME
    pod["automountServiceAccountToken"] = True
    pod["affinity"] = d.pool_affinity(model.dra_pools, LABEL)
    pod["resourceClaims"] = [{"name": REQUEST, "resourceClaimTemplateName": CLAIM}]
    ctr = pod["containers"][0]
    ctr["name"] = NAME
    env = [x for x in ctr.get("env") or [] if x.get("name") != "NVIDIA_VISIBLE_DEVICES"]
    c.set_env(env, "KUBERNETES_ENABLE_DRA", "true")
    ctr["env"] = env
    ctr.setdefault("resources", {})["claims"] = [{"name": REQUEST}]
    annotations = {k: v for k, v in (template["metadata"].get("annotations") or {}).items() if not k.startswith("cdi.k8s.io/")}
    for k in (model.section("daemonsets").get("annotations") or {}):
        annotations.pop(str(k), None)  # c.daemonset adds the common ones again
    return c.daemonset(NAME, model, operand=LABEL, pod_spec=pod, section=exp, pod_annotations=annotations)


def service(model: Model) -> Obj:
    svc = e.service(model)
    svc["metadata"]["name"] = NAME
    svc["metadata"]["labels"] = c.labels(NAME)
    svc["spec"]["selector"] = {"app": NAME}
    return svc


def build(model: Model) -> list[Obj]:
    exp = model.section("dcgmExporter")
    read = f"{NAME}-read-pods"
    out: list[Obj] = [
        c.service_account(NAME, model),
        c.cluster_role(read, [c.rule([""], ["pods"], ["get", "list", "watch"]), c.rule(["resource.k8s.io"], ["resourceslices"], ["get", "list", "watch"])]),
        c.cluster_role_binding(read, model, sa=NAME),
    ]
    if e.needs_api(model) and not e.pod_metadata_enabled(model):  # the metrics ConfigMap read through the API
        out += [c.role(NAME, model, [c.rule([""], ["configmaps"], ["get", "list"])]), c.role_binding(NAME, model)]
    out += [claim_template(model), daemonset(model), service(model)]
    monitor = exp.get("serviceMonitor") or {}
    if monitor.get("enabled") and h.service_monitor_possible(model):
        out.append(h.service_monitor(NAME, model, "gpu-metrics", "app", monitor))
    return out
