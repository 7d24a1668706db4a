"""Node status exporter (off by default): the validator image in metrics mode on :8000."""

from __future__ import annotations

from renderer.components import common as c
from renderer.components import helpers as h
from renderer.components.common import Obj
from renderer.model import Model

NAME = "nvidia-node-status-exporter"
PORT = 8000


def daemonset(model: Model) -> Obj:
    nse = model.section("nodeStatusExporter")
    env = [
        *c.env_list(("NVIDIA_VISIBLE_DEVICES", "void"), ("COMPONENT", "metrics"), ("METRICS_PORT", str(PORT))),
        h.field_env("NODE_NAME", "spec.nodeName"),
        h.field_env("OPERATOR_NAMESPACE", "metadata.namespace"),
    ]
    env = c.env_list(extra=env + list(nse.get("env") or []))
    container = h.main_container(
        NAME,
        nse,
        command=["nvidia-validator"],
        env=env,
        ports=[{"name": "node-status", "containerPort": PORT}],
        securityContext={"privileged": True, "runAsUser": 0},
        volumeMounts=[
            c.mount("run-nvidia", "/run/nvidia", propagation="HostToContainer"),
            c.mount("host-root", "/host", read_only=True, propagation="HostToContainer"),
        ],
    )
    pod: Obj = {
        "serviceAccountName": NAME,
        "containers": [container],
        "volumes": [c.host_path("run-nvidia", "/run/nvidia", "Directory"), c.host_path("host-root", h.host_root(model))],
    }
    return c.daemonset(NAME, model, operand="node-status-exporter", pod_spec=pod, section=nse)


def service(model: Model) -> Obj:
    meta = c.meta(NAME, model, lbls=c.labels(NAME))
    meta["annotations"] = {"prometheus.io/scrape": "true"}
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": meta,
        "spec": {"selector": {"app": NAME}, "ports": [{"name": "node-status", "port": PORT, "protocol": "TCP", "targetPort": PORT}]},
    }


def build(model: Model) -> list[Obj]:
    out = [
        c.service_account(NAME, model),
        c.role(NAME, model, [c.rule([""], ["pods"], ["get", "list"]), c.rule(["apps"], ["daemonsets"], ["get", "list", "watch"])]),
        c.role_binding(NAME, model),
        c.cluster_role(NAME, [c.rule([""], ["nodes"], ["get", "list", "watch"])]),
        c.cluster_role_binding(NAME, model),
        daemonset(model),
        service(model),
    ]
    if h.service_monitor_possible(model):
        out.append(h.service_monitor(NAME, model, "node-status", "node-status"))
    return out
