"""DCGM exporter: GPU metrics on :9400, its Service, ServiceMonitor and metrics ConfigMap.

The ServiceMonitor is rendered only when ``cluster.capabilities.serviceMonitor`` says the
Prometheus Operator CRD exists (the operator checks that live). The pod reads the
Kubernetes API only for pod labels/UID enrichment (or a user ConfigMap read), so the
ServiceAccount token and the RBAC for it exist only then.
"""

from __future__ import annotations

from typing import Any

from renderer.components import common as c
from renderer.components import dcgm
from renderer.components import helpers as h
from renderer.components.common import Obj
from renderer.model import Model
from renderer.releasegate import has

NAME = "nvidia-dcgm-exporter"
READ_PODS = f"{NAME}-read-pods"
PORT = 9400
METRICS_FILE = "dcgm-metrics.csv"
METRICS_PATH = f"/etc/dcgm-exporter/{METRICS_FILE}"
DEFAULT_COLLECTORS = "/etc/dcgm-exporter/dcp-metrics-included.csv"
POD_LABELS_ENV = "DCGM_EXPORTER_KUBERNETES_ENABLE_POD_LABELS"
POD_UID_ENV = "DCGM_EXPORTER_KUBERNETES_ENABLE_POD_UID"
ALLOWLIST_ENV = "DCGM_EXPORTER_KUBERNETES_POD_LABEL_ALLOWLIST_REGEX"
CONFIGMAP_DATA_ENV = "DCGM_EXPORTER_CONFIGMAP_DATA"
REMOTE_ENV = "DCGM_REMOTE_HOSTENGINE_INFO"
DEFAULT_JOB_MAPPING_DIR = "/var/lib/dcgm-exporter/job-mapping"


def _user_env(model: Model) -> list[Obj]:
    return list(model.section("dcgmExporter").get("env") or [])


def pod_metadata_enabled(model: Model) -> bool:
    """Pod labels or pod UID enrichment, by values switch or by the user's own env."""
    exp = model.section("dcgmExporter")
    if exp.get("enablePodLabels") or exp.get("enablePodUID"):
        return True
    return any(
        e.get("name") in (POD_LABELS_ENV, POD_UID_ENV) and str(e.get("value", "")).lower() == "true"
        for e in _user_env(model)
    )


def needs_api(model: Model) -> bool:
    """Whether the exporter reads the Kubernetes API (so needs its token mounted)."""
    if pod_metadata_enabled(model):
        return True
    return any(
        e.get("name") == CONFIGMAP_DATA_ENV and str(e.get("value", "")) not in ("", "none")
        for e in _user_env(model)
    )


def metrics_config(model: Model) -> dict[str, Any]:
    return dict(model.section("dcgmExporter").get("config") or {})


def _env(model: Model) -> list[Obj]:
    exp = model.section("dcgmExporter")
    collectors = METRICS_PATH if metrics_config(model).get("name") else DEFAULT_COLLECTORS
    pairs: list[tuple[str, str]] = [
        ("DCGM_EXPORTER_LISTEN", f":{PORT}"),
        ("DCGM_EXPORTER_KUBERNETES", "true"),
        ("DCGM_EXPORTER_COLLECTORS", collectors),
    ]
    if model.enabled("dcgm"):
        pairs.append((REMOTE_ENV, f"{dcgm.NAME}:{dcgm.PORT}"))
    if exp.get("hpcJobMapping", {}).get("enabled"):
        pairs.append(("DCGM_HPC_JOB_MAPPING_DIR", _job_mapping_dir(model)))
    if exp.get("enablePodLabels"):
        pairs.append((POD_LABELS_ENV, "true"))
    if exp.get("enablePodUID"):
        pairs.append((POD_UID_ENV, "true"))
    if exp.get("podLabelAllowlistRegex"):
        pairs.append((ALLOWLIST_ENV, ",".join(str(r) for r in exp["podLabelAllowlistRegex"])))
    env = c.env_list(*pairs, extra=_user_env(model))
    env.insert(3, h.field_env("NODE_NAME", "spec.nodeName"))
    return env


def _job_mapping_dir(model: Model) -> str:
    return str(model.section("dcgmExporter").get("hpcJobMapping", {}).get("directory") or DEFAULT_JOB_MAPPING_DIR)


def _remote_is_localhost(env: list[Obj]) -> bool:
    return any(e.get("name") == REMOTE_ENV and str(e.get("value", "")).startswith("localhost") for e in env)


def daemonset(model: Model) -> Obj:
    exp = model.section("dcgmExporter")
    env = _env(model)
    mounts = [c.mount("pod-gpu-resources", "/var/lib/kubelet/pod-resources", read_only=True)]
    volumes = [
        c.host_path("run-nvidia-validations", c.VALIDATIONS_DIR, "DirectoryOrCreate"),
        c.host_path("pod-gpu-resources", f"{c.kubelet_root_dir(model)}/pod-resources"),
    ]
    if exp.get("hpcJobMapping", {}).get("enabled"):
        mounts.append(c.mount("hpc-job-mapping", _job_mapping_dir(model), read_only=True))
        volumes.append(c.host_path("hpc-job-mapping", _job_mapping_dir(model), "DirectoryOrCreate"))
    cfg_name = metrics_config(model).get("name")
    if cfg_name:
        mounts.append({"name": "metrics-config", "mountPath": METRICS_PATH, "subPath": METRICS_FILE, "readOnly": True})
        volumes.append({"name": "metrics-config", "configMap": {"name": str(cfg_name), "items": [{"key": METRICS_FILE, "path": METRICS_FILE}]}})
    def health() -> Obj:
        return {"httpGet": {"path": "/health", "port": PORT}, "initialDelaySeconds": 45}

    container = h.main_container(
        NAME,
        exp,
        env=env,
        ports=[{"name": "metrics", "containerPort": PORT}],
        livenessProbe={**health(), "periodSeconds": 5},
        readinessProbe=health(),
        securityContext={"privileged": True},
        volumeMounts=mounts,
    )
    pod: Obj = {
        "serviceAccountName": NAME,
        "automountServiceAccountToken": needs_api(model),
        "initContainers": [c.toolkit_validation_init(model)],
        "containers": [container],
        "volumes": volumes,
    }
    if exp.get("hostPID"):
        pod["hostPID"] = True
    if not model.enabled("dcgm") and _remote_is_localhost(env):
        pod["hostNetwork"] = True
        pod["dnsPolicy"] = "ClusterFirstWithHostNet"
    rc = c.runtime_class_name(model)
    if rc:
        pod["runtimeClassName"] = rc
    annotations = {str(k): str(v) for k, v in (exp.get("annotations") or {}).items()}
    annotations.update(h.nri_annotation(model, NAME))
    return c.daemonset(NAME, model, operand="dcgm-exporter", pod_spec=pod, section=c.with_validator_secrets(model, exp), pod_annotations=annotations, common_annotations_win=True)


def service(model: Model) -> Obj:
    svc = model.section("dcgmExporter").get("service") or {}
    meta = c.meta(NAME, model, lbls=c.labels(NAME))
    meta["annotations"] = {"prometheus.io/scrape": "true"}
    spec: Obj = {}
    if svc.get("type"):
        spec["type"] = str(svc["type"])
    if svc.get("internalTrafficPolicy"):
        spec["internalTrafficPolicy"] = str(svc["internalTrafficPolicy"])
    spec["selector"] = {"app": NAME}
    spec["ports"] = [{"name": "gpu-metrics", "port": PORT, "protocol": "TCP", "targetPort": PORT}]
    return {"apiVersion": "v1", "kind": "Service", "metadata": meta, "spec": spec}


def metrics_configmap(model: Model) -> Obj | None:
    """The user's metrics CSV as a ConfigMap, when ``config.create`` and data are given (the
    text as the model holds it: ending in one newline, :func:`renderer.resolve.operator_fallbacks`)."""
    cfg = metrics_config(model)
    if not (cfg.get("create") and cfg.get("data") and cfg.get("name")):
        return None
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": c.meta(str(cfg["name"]), model, lbls=c.labels(NAME)),
        "data": {METRICS_FILE: str(cfg["data"])},
    }


def build(model: Model) -> list[Obj]:
    exp = model.section("dcgmExporter")
    out: list[Obj] = [c.service_account(NAME, model)]
    # v25.10's Role reads pods too, and no ClusterRole does; the ClusterRole came with the pod
    # metadata keys in v26.3.2 (the v26.3 imitated is v26.3.3), whose Role still lists pods:
    # left out there, as on v26.7 (the exporter reads pods through the ClusterRole, and only
    # with pod metadata on; docs/fidelity.md)
    role_pods = not has(model.release, "v26.3")
    if needs_api(model):
        out += [
            c.role(NAME, model, [c.rule([""], ["configmaps", "pods"] if role_pods else ["configmaps"], ["get", "list"])]),
            c.role_binding(NAME, model),
        ]
    if pod_metadata_enabled(model) and has(model.release, "v26.3"):
        out += [
            c.cluster_role(READ_PODS, [c.rule([""], ["pods"], ["get", "list", "watch"])]),
            c.cluster_role_binding(READ_PODS, model, sa=NAME),
        ]
    cm = metrics_configmap(model)
    if cm is not None:
        out.append(cm)
    out += [daemonset(model), service(model)]
    monitor = exp.get("serviceMonitor") or {}
    if monitor.get("enabled") and h.service_monitor_possible(model):
        out.append(h.service_monitor(NAME, model, "gpu-metrics", "app", monitor))
    return out
