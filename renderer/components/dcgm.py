"""Standalone DCGM hostengine (``dcgm.enabled``, off by default) and its Service on :5555.

With it on, dcgm-exporter talks to ``nvidia-dcgm:5555`` instead of its embedded hostengine.
"""

from __future__ import annotations

from renderer.components import common as c
from renderer.components import helpers as h
from renderer.components.common import Obj
from renderer.model import Model

NAME = "nvidia-dcgm"
PORT = 5555


def daemonset(model: Model) -> Obj:
    dcgm = model.section("dcgm")
    init = c.toolkit_validation_init(model)
    container: Obj = {
        "name": "nvidia-dcgm-ctr",
        "image": c.image_ref(dcgm),
        "imagePullPolicy": dcgm.get("imagePullPolicy", "IfNotPresent"),
        "securityContext": {"privileged": True},
        "ports": [{"name": "dcgm", "containerPort": PORT}],
        "livenessProbe": {"tcpSocket": {"port": PORT}, "initialDelaySeconds": 15},
        "readinessProbe": {"tcpSocket": {"port": PORT}, "initialDelaySeconds": 15},
    }
    if dcgm.get("args"):
        container["args"] = list(dcgm["args"])
    if dcgm.get("env"):
        container["env"] = c.env_list(extra=dcgm["env"])
    if dcgm.get("resources"):
        container["resources"] = c.resources(dcgm)
    pod: Obj = {
        "serviceAccountName": NAME,
        "initContainers": [init],
        "containers": [container],
        "volumes": [c.host_path("run-nvidia-validations", c.VALIDATIONS_DIR, "DirectoryOrCreate")],
    }
    rc = c.runtime_class_name(model)
    if rc:
        pod["runtimeClassName"] = rc
    return c.daemonset(NAME, model, operand="dcgm", pod_spec=pod, section=c.with_validator_secrets(model, dcgm), pod_annotations=h.nri_annotation(model, "nvidia-dcgm-ctr"))


def service(model: Model) -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": c.meta(NAME, model, lbls=c.labels(NAME)),
        "spec": {
            "type": "ClusterIP",
            "internalTrafficPolicy": "Local",
            "selector": {"app": NAME},
            "ports": [{"name": "dcgm", "port": PORT, "protocol": "TCP", "targetPort": PORT}],
        },
    }


def build(model: Model) -> list[Obj]:
    return [
        c.service_account(NAME, model),
        daemonset(model),
        service(model),
    ]
