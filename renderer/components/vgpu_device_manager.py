"""vGPU device manager: creates the vGPU devices named by ``nvidia.com/vgpu.config``.

The default device-type ConfigMap is the operator's data file, kept as data.
"""

from __future__ import annotations

from typing import Any

from renderer.components import common as c
from renderer.components import facts
from renderer.components import helpers as h
from renderer.components.common import Obj
from renderer.model import Model

NAME = "nvidia-vgpu-device-manager"
DEFAULT_CONFIG = "default-vgpu-devices-config"
WAIT = (
    f"until [ -f {c.VALIDATIONS_DIR}/vgpu-manager-ready ] || [ -f {c.VALIDATIONS_DIR}/host-vgpu-manager-ready ]; "
    "do echo waiting for NVIDIA vGPU Manager to be setup; sleep 5; done"
)


def enabled(model: Model) -> bool:
    return h.sandbox_enabled(model, "vgpuDeviceManager")


def config_name(model: Model) -> str:
    return str(model.section("vgpuDeviceManager").get("config", {}).get("name") or "")


def _env(env: list[Obj], vdm: dict[str, Any], default: str) -> list[Obj]:
    """The asset's env, then ``vgpuDeviceManager.env``, then ``DEFAULT_VGPU_CONFIG`` once more:
    TransformVGPUDeviceManager sets it from ``config.default`` after the user's env."""
    out = c.env_list(extra=env + list(vdm.get("env") or []))
    c.set_env(out, "DEFAULT_VGPU_CONFIG", default)
    return out


def daemonset(model: Model) -> Obj:
    vdm = model.section("vgpuDeviceManager")
    default = str(vdm.get("config", {}).get("default") or "default")
    env = [
        h.field_env("NAMESPACE", "metadata.namespace"),
        h.field_env("NODE_NAME", "spec.nodeName"),
        *c.env_list(("CONFIG_FILE", "/vgpu-config/config.yaml"), ("DEFAULT_VGPU_CONFIG", default)),
    ]
    container = h.main_container(
        NAME,
        vdm,
        env=_env(env, vdm, default),
        securityContext={"privileged": True},
        volumeMounts=[
            c.mount("vgpu-config", "/vgpu-config"),
            c.mount("host-sys", "/sys"),
            c.mount("host-root", "/host", propagation="HostToContainer"),
            c.mount("driver-install-dir", "/driver-root", propagation="HostToContainer"),
        ],
    )
    pod: Obj = {
        "serviceAccountName": NAME,
        "initContainers": [h.validator_init(model, "vgpu-manager-validation", WAIT, propagation="Bidirectional", void=False)],
        "containers": [container],
        "volumes": [
            {"name": "vgpu-config", "configMap": {"name": config_name(model) or DEFAULT_CONFIG}},
            c.host_path("host-sys", "/sys", "Directory"),
            c.host_path("host-root", h.host_root(model)),
            c.host_path("driver-install-dir", h.driver_install_dir(model), "DirectoryOrCreate"),
            c.host_path("run-nvidia-validations", c.VALIDATIONS_DIR, "DirectoryOrCreate"),
        ],
    }
    return c.daemonset(NAME, model, operand="vgpu-device-manager", pod_spec=pod, section=c.with_validator_secrets(model, vdm))


def build(model: Model) -> list[Obj]:
    out = [
        c.service_account(NAME, model),
        c.role(NAME, model, [c.rule([""], ["pods"], ["get", "list", "watch"])]),
        c.role_binding(NAME, model),
        c.cluster_role(NAME, [c.rule([""], ["nodes"], ["get", "list", "update", "watch"])]),
        c.cluster_role_binding(NAME, model),
    ]
    if not config_name(model):
        data = facts.configmap_data(facts.VGPU_DEVICES_CONFIG)
        out.append({"apiVersion": "v1", "kind": "ConfigMap", "metadata": c.meta(DEFAULT_CONFIG, model, lbls=c.labels(NAME)), "data": data})
    return [*out, daemonset(model)]
