"""VFIO manager: binds GPUs of ``vm-passthrough`` nodes to vfio-pci (and unbinds on stop)."""

from __future__ import annotations

from renderer.components import common as c
from renderer.components import helpers as h
from renderer.components.common import Obj
from renderer.model import Model

NAME = "nvidia-vfio-manager"


def enabled(model: Model) -> bool:
    return h.sandbox_enabled(model, "vfioManager")


def daemonset(model: Model) -> Obj:
    vfio = model.section("vfioManager")
    container = h.main_container(
        NAME,
        vfio,
        command=["/bin/sh", "-c"],
        env=c.env_list(("HOST_ROOT", "/host"), extra=vfio.get("env") or []),
        securityContext={"privileged": True, "seLinuxOptions": {"level": "s0"}},
        lifecycle={"preStop": {"exec": {"command": ["/bin/sh", "-c", "vfio-manage unbind --all"]}}},
        volumeMounts=[
            c.mount("host-sys", "/sys"),
            c.mount("host-lib-modules", "/lib/modules", read_only=True),
            c.mount("host-root", "/host"),
        ],
    )
    container.setdefault("args", ["vfio-manage bind --all && while true; do sleep 86400; done"])
    container.setdefault("resources", {"limits": {"memory": "200Mi"}, "requests": {"cpu": "100m", "memory": "200Mi"}})
    pod: Obj = {
        "serviceAccountName": NAME,
        "terminationGracePeriodSeconds": 30,
        "initContainers": [h.driver_manager_init(model, "vfioManager")],
        "containers": [container],
        "volumes": [
            c.host_path("host-sys", "/sys", "Directory"),
            c.host_path("host-lib-modules", "/lib/modules", "Directory"),
            c.host_path("run-nvidia", "/run/nvidia", "DirectoryOrCreate"),
            c.host_path("host-root", h.host_root(model)),
        ],
    }
    return c.daemonset(NAME, model, operand="vfio-manager", pod_spec=pod, section=c.with_manager_secrets(vfio))


def build(model: Model) -> list[Obj]:
    rules = [
        c.rule([""], ["nodes"], ["get", "list", "patch", "watch"]),
        c.rule([""], ["pods"], ["get", "list", "watch"]),
        c.rule([""], ["pods/eviction"], ["create"]),
    ]
    return [c.service_account(NAME, model), c.cluster_role(NAME, rules), c.cluster_role_binding(NAME, model), daemonset(model)]
