"""Kata sandbox device plugin (``sandboxWorkloads.mode: kata``): passthrough GPUs for Kata VMs."""

from __future__ import annotations

from renderer.components import common as c
from renderer.components import helpers as h
from renderer.components.common import Obj
from renderer.components.sandbox_device_plugin import pod_rbac, wait_for
from renderer.model import Model

NAME = "nvidia-kata-sandbox-device-plugin"
DS = f"{NAME}-daemonset"


def enabled(model: Model) -> bool:
    return h.sandbox_enabled(model, "kataSandboxDevicePlugin", mode="kata")


def daemonset(model: Model) -> Obj:
    kdp = model.section("kataSandboxDevicePlugin")
    env = [
        h.field_env("NODE_NAME", "spec.nodeName"),
        h.field_env("POD_NAMESPACE", "metadata.namespace"),
        h.field_env("POD_SERVICE_ACCOUNT", "spec.serviceAccountName"),
    ]
    container = h.main_container(
        "nvidia-kata-sandbox-device-plugin-ctr",
        kdp,
        env=c.env_list(extra=env + list(kdp.get("env") or [])),
        securityContext={"privileged": True},
        volumeMounts=[c.mount("device-plugin", "/var/lib/kubelet/device-plugins"), c.mount("cdi-root", "/var/run/cdi")],
    )
    pod: Obj = {
        "serviceAccountName": NAME,
        "initContainers": [h.validator_init(model, "vfio-pci-validation", wait_for("vm-passthrough", "vfio-pci-ready", "vfio-pci driver", "kata"))],  # the asset's text
        "containers": [container],
        "volumes": [
            c.host_path("device-plugin", "/var/lib/kubelet/device-plugins"),
            c.host_path("run-nvidia-validations", c.VALIDATIONS_DIR, "DirectoryOrCreate"),
            c.host_path("cdi-root", "/var/run/cdi", "DirectoryOrCreate"),
        ],
    }
    return c.daemonset(DS, model, operand="kata-sandbox-device-plugin", pod_spec=pod, section=c.with_validator_secrets(model, kdp))


def build(model: Model) -> list[Obj]:
    return [*pod_rbac(NAME, model), daemonset(model)]
