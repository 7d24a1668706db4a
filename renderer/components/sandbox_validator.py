"""Sandbox validator: the VM-side validation chain (CC mode, vfio-pci, vGPU manager, vGPU devices).

Each init container runs ``nvidia-validator`` for one component and writes its marker under
/run/nvidia/validations; the sandbox device plugins wait on those markers.
"""

from __future__ import annotations

from renderer.components import common as c
from renderer.components import helpers as h
from renderer.components.common import Obj
from renderer.model import Model

NAME = "nvidia-sandbox-validator"
ENV_KEYS = {"vfio-pci": "vfioPCI", "vgpu-manager": "vgpuManager", "vgpu-devices": "vgpuDevices"}


def enabled(model: Model) -> bool:
    return h.sandbox_enabled(model)


def _validation(model: Model, component: str, mounts: list[Obj], *, se_linux: bool = True) -> Obj:
    v = model.section("validator")
    pairs: list[tuple[str, str]] = [("WITH_WAIT", "true"), ("COMPONENT", component)]
    if component in ENV_KEYS:
        pairs.append(("DEFAULT_GPU_WORKLOAD_CONFIG", h.default_workload(model)))
    user_env = list((v.get(ENV_KEYS.get(component, ""), {}) or {}).get("env") or [])
    env = [*c.env_list(*pairs), h.field_env("NODE_NAME", "spec.nodeName")]
    security: Obj = {"privileged": True, "runAsUser": 0}
    if se_linux:
        security["seLinuxOptions"] = {"level": "s0"}
    validations = c.mount("run-nvidia-validations", c.VALIDATIONS_DIR, propagation="Bidirectional")
    return c.validation_container(model, component, c.env_list(extra=env + user_env), [*mounts, validations], security)


def daemonset(model: Model) -> Obj:
    v = model.section("validator")

    def host_root() -> Obj:
        return c.mount("host-root", "/host", read_only=True, propagation="HostToContainer")

    inits = []
    if model.enabled("ccManager"):
        inits.append(_validation(model, "cc-manager", []))
    inits += [
        _validation(model, "vfio-pci", [host_root()]),
        _validation(model, "vgpu-manager", [host_root(), c.mount("driver-install-path", "/run/nvidia/driver", propagation="HostToContainer")]),
        _validation(model, "vgpu-devices", [], se_linux=False),
    ]
    container = h.validator_main(model, NAME, "*")
    # TransformValidatorShared, as on the operator validator: `validator.env` and `resources`
    c.apply_container_settings(container, v, args=False)
    pod: Obj = {
        "serviceAccountName": NAME,
        "initContainers": inits,
        "containers": [container],
        "volumes": [
            c.host_path("run-nvidia-validations", c.VALIDATIONS_DIR, "DirectoryOrCreate"),
            # the vGPU manager's driver root, which hostPaths.driverInstallDir does not move (the
            # operator rewrites volumes named driver-install-dir only; its container writes here)
            c.host_path("driver-install-path", "/run/nvidia/driver"),
            c.host_path("host-root", h.host_root(model)),
        ],
    }
    return c.daemonset(NAME, model, operand="sandbox-validator", pod_spec=pod, section=v)


def build(model: Model) -> list[Obj]:
    return [
        c.service_account(NAME, model),
        c.cluster_role(NAME, [c.rule([""], ["nodes"], ["get"])]),
        c.cluster_role_binding(NAME, model),
        daemonset(model),
    ]
