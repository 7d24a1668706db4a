"""KubeVirt GPU device plugin (``sandboxWorkloads.mode: kubevirt``): passthrough GPUs and vGPUs for VMs.

v25.10's asset runs ``nvidia-kubevirt-gpu-device-plugin`` with no env of its own, no CDI folder
and no namespaced rights; v26.3 adds ``NODE_NAME`` / ``POD_NAMESPACE``, ``/var/run/cdi`` and the
Role on pods and NodeFeatures.
"""

from __future__ import annotations

from renderer.components import common as c
from renderer.components import helpers as h
from renderer.components.common import Obj
from renderer.model import Model
from renderer.releasegate import has

NAME = "nvidia-sandbox-device-plugin"
DS = f"{NAME}-daemonset"


def wait_for(workload: str, marker: str, what: str, name: str = "") -> str:
    """Wait for the workload-type marker; then, on nodes of ``workload`` only, for ``marker``
    (``name``: who says it is not needed elsewhere, the marker's by default, as the assets)."""
    v = c.VALIDATIONS_DIR
    name = name or marker.removesuffix("-ready")
    waiting = f"{what} ..." if what.endswith("driver") else f"{what}..."  # the operator's asset text
    return (
        f"until [ -f {v}/workload-type ]; do echo waiting for workload type status file; sleep 5; done; "
        f'if [ "$(cat {v}/workload-type)" != "{workload}" ]; then echo {name} not needed, skipping validation; exit 0; fi; '
        f"until [ -f {v}/{marker} ]; do echo waiting for {waiting}; sleep 5; done;"
    )


def enabled(model: Model) -> bool:
    return h.sandbox_enabled(model, "sandboxDevicePlugin", mode="kubevirt")


def pod_rbac(name: str, model: Model) -> list[Obj]:
    """The sandbox device plugins' rights: pods and NodeFeatures in the namespace (from v26.3),
    read nodes/pods."""
    role_rules = [
        c.rule([""], ["pods"], ["create", "delete", "get", "list", "watch"]),
        c.rule(["nfd.k8s-sigs.io"], ["nodefeatures"], ["create", "get", "list", "update", "watch"]),
    ]
    namespaced = [c.role(name, model, role_rules), c.role_binding(name, model)] if has(model.release, "v26.3") else []
    return [
        c.service_account(name, model),
        *namespaced,
        c.cluster_role(name, [c.rule([""], ["nodes", "pods"], ["get"])]),
        c.cluster_role_binding(name, model),
    ]


def daemonset(model: Model) -> Obj:
    sdp = model.section("sandboxDevicePlugin")
    v26_3 = has(model.release, "v26.3")
    env = [h.field_env("NODE_NAME", "spec.nodeName"), h.field_env("POD_NAMESPACE", "metadata.namespace")] if v26_3 else []
    extra: Obj = {} if v26_3 else {"command": ["nvidia-kubevirt-gpu-device-plugin"]}
    if env or sdp.get("env"):
        extra["env"] = c.env_list(extra=env + list(sdp.get("env") or []))
    container = h.main_container(
        "nvidia-sandbox-device-plugin-ctr",
        sdp,
        **extra,
        securityContext={"privileged": True},
        volumeMounts=[
            c.mount("device-plugin", "/var/lib/kubelet/device-plugins"),
            c.mount("vfio", "/dev/vfio"),
            *([c.mount("cdi-root", "/var/run/cdi")] if v26_3 else []),
        ],
    )
    pod: Obj = {
        "serviceAccountName": NAME,
        "initContainers": [
            h.validator_init(model, "vfio-pci-validation", wait_for("vm-passthrough", "vfio-pci-ready", "vfio-pci driver")),
            h.validator_init(model, "vgpu-devices-validation", wait_for("vm-vgpu", "vgpu-devices-ready", "vGPU devices")),
        ],
        "containers": [container],
        "volumes": [
            c.host_path("device-plugin", "/var/lib/kubelet/device-plugins"),
            c.host_path("run-nvidia-validations", c.VALIDATIONS_DIR, "DirectoryOrCreate"),
            c.host_path("vfio", "/dev/vfio"),
            *([c.host_path("cdi-root", "/var/run/cdi", "DirectoryOrCreate")] if v26_3 else []),
        ],
    }
    return c.daemonset(DS, model, operand="sandbox-device-plugin", pod_spec=pod, section=c.with_validator_secrets(model, sdp))


def build(model: Model) -> list[Obj]:
    return [*pod_rbac(NAME, model), daemonset(model)]
