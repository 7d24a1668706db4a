"""NVIDIA device plugin DaemonSet (advertises ``nvidia.com/gpu``), its RBAC and config."""

from __future__ import annotations

from renderer.components import common as c
from renderer.components.common import Obj
from renderer.model import Model

NAME = "nvidia-device-plugin-daemonset"
SA = "nvidia-device-plugin"


def _env(model: Model) -> list[Obj]:
    dp = model.section("devicePlugin")
    cdi = model.section("cdi").get("enabled", False)
    strategy = str(model.section("mig").get("strategy", "single"))
    pairs: list[tuple[str, str]] = [
        ("PASS_DEVICE_SPECS", "true"),
        ("FAIL_ON_INIT_ERROR", "true"),
        ("DEVICE_LIST_STRATEGY", "cdi-annotations,cdi-cri" if cdi else "envvar"),
        ("DEVICE_ID_STRATEGY", "uuid"),
        ("NVIDIA_VISIBLE_DEVICES", "all"),
        ("NVIDIA_DRIVER_CAPABILITIES", "all"),
        ("MPS_ROOT", str(dp.get("mps", {}).get("root", "/run/nvidia/mps"))),
        ("MIG_STRATEGY", strategy),
    ]
    if strategy != "none":
        pairs.append(("NVIDIA_MIG_MONITOR_DEVICES", "all"))
    if cdi:
        install_dir = model.section("toolkit").get("installDir", "/usr/local/nvidia")
        pairs += [
            ("CDI_ENABLED", "true"),
            ("CDI_ANNOTATION_PREFIX", "cdi.k8s.io/"),
            ("NVIDIA_CDI_HOOK_PATH", f"{install_dir}/toolkit/nvidia-cdi-hook"),
        ]
    return c.env_list(*pairs, extra=dp.get("env") or [])


def daemonset(model: Model) -> Obj:
    dp = model.section("devicePlugin")
    mps_root = str(dp.get("mps", {}).get("root", "/run/nvidia/mps"))
    container: Obj = {
        "name": "nvidia-device-plugin",
        "image": c.image_ref(dp),
        "imagePullPolicy": dp.get("imagePullPolicy", "IfNotPresent"),
        "command": ["nvidia-device-plugin"],
        "env": _env(model),
        "securityContext": {"privileged": True},
        "volumeMounts": [
            c.mount("device-plugin", "/var/lib/kubelet/device-plugins"),
            c.mount("run-nvidia-validations", c.VALIDATIONS_DIR),
            c.mount("driver-install-dir", "/driver-root", read_only=True, propagation="HostToContainer"),
            c.mount("host-root", "/host", read_only=True, propagation="HostToContainer"),
            c.mount("cdi-root", "/var/run/cdi"),
            c.mount("mps-root", mps_root, propagation="HostToContainer"),
            c.mount("mps-shm", "/dev/shm"),
        ],
    }
    if dp.get("args"):
        container["args"] = list(dp["args"])
    if dp.get("resources"):
        container["resources"] = c.resources(dp)
    pod: Obj = {
        "serviceAccountName": SA,
        "initContainers": [c.toolkit_validation_init(model)],
        "containers": [container],
        "volumes": [
            c.host_path("device-plugin", "/var/lib/kubelet/device-plugins"),
            c.host_path("run-nvidia-validations", c.VALIDATIONS_DIR, "DirectoryOrCreate"),
            c.host_path("driver-install-dir", str(model.section("hostPaths").get("driverInstallDir", "/run/nvidia/driver")), "DirectoryOrCreate"),
            c.host_path("host-root", str(model.section("hostPaths").get("rootFS", "/"))),
            c.host_path("cdi-root", "/var/run/cdi", "DirectoryOrCreate"),
            c.host_path("mps-root", mps_root, "DirectoryOrCreate"),
            c.host_path("mps-shm", f"{mps_root}/shm"),
        ],
    }
    rc = c.runtime_class_name(model)
    if rc:
        pod["runtimeClassName"] = rc
    return c.daemonset(NAME, model, operand="device-plugin", pod_spec=pod, section=dp)


def build(model: Model) -> list[Obj]:
    return [
        c.service_account(SA, model),
        c.cluster_role(SA, [c.rule([""], ["nodes"], ["get", "list", "watch"])]),
        c.cluster_role_binding(SA, model),
        daemonset(model),
    ]
