"""vGPU manager (host driver for vGPU): one DaemonSet per node pool, OS-suffixed image.

``vgpuManager.kernelModuleConfig`` mounts one file per declared key under /drivers (the
operator lists the keys from the API). Like the driver, the image tag carries the pool's OS (``pool.images["vgpuManager"]``) and
each pool's DaemonSet selects only that pool's nodes. k8s-driver-manager unloads a previous
driver first; it never evicts or drains here (as in the operator's asset).
"""

from __future__ import annotations

from renderer.components import common as c
from renderer.components import helpers as h
from renderer.components.common import Obj
from renderer.model import Model, Pool

NAME = "nvidia-vgpu-manager"
DS_PREFIX = "nvidia-vgpu-manager-daemonset"


def enabled(model: Model) -> bool:
    return h.sandbox_enabled(model, "vgpuManager")


def image(model: Model, pool: Pool) -> str:
    """The pool's vGPU manager image; derived with the pool's OS tag if the pool lacks one."""
    if pool.images.get("vgpuManager"):
        return pool.images["vgpuManager"]
    base = c.image_ref(model.section("vgpuManager"))
    return base if "sha256:" in base else f"{base}-{pool.os_tag}"


def _node_affinity(pool: Pool) -> Obj:
    affinity = c.deploy_affinity("vgpu-manager")
    terms = affinity["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
    terms[0]["matchExpressions"] += list(pool.selector_expressions)  # the pool's node_selector, sorted
    return affinity


def daemonset(model: Model, pool: Pool) -> Obj:
    vgpu = model.section("vgpuManager")
    container = h.main_container(
        "nvidia-vgpu-manager-ctr",
        {**vgpu, "image": image(model, pool), "repository": "", "version": ""},
        command=["nvidia-driver"],
        args=["init"],
        securityContext={"privileged": True, "seLinuxOptions": {"level": "s0"}},
        volumeMounts=[
            c.mount("run-nvidia", "/run/nvidia", propagation="Bidirectional"),
            c.mount("host-os-release", "/host-etc/os-release"),
            c.mount("vfio", "/dev/vfio"),
            c.mount("cgroup", "/sys/fs/cgroup"),
            c.mount("var-log", "/var/log"),
            c.mount("dev-log", "/dev/log"),
            c.mount("firmware-search-path", "/sys/module/firmware_class/parameters/path"),
            c.mount("nv-firmware", "/lib/firmware"),
        ],
    )
    if vgpu.get("env"):
        container["env"] = c.env_list(extra=vgpu["env"])
    kmod = vgpu.get("kernelModuleConfig") or {}
    kmod_volumes: list[Obj] = []
    if kmod.get("name"):
        kmod_volumes.append({"name": "kernel-module-config", "configMap": {"name": str(kmod["name"])}})
        # one file per declared key, as the pool's facts have it (``vgpuManager.kernelModuleConfig.keys``)
        container["volumeMounts"] += [dict(m) for m in pool.config_mounts.get("vgpu-kernel-module-config", ())]
    pod: Obj = {
        "serviceAccountName": NAME,
        "terminationGracePeriodSeconds": 120,
        "hostPID": True,
        "hostIPC": True,
        "affinity": _node_affinity(pool),
        "initContainers": [h.driver_manager_init(model, "vgpuManager")],
        "containers": [container],
        "volumes": [
            c.host_path("run-nvidia", "/run/nvidia", "DirectoryOrCreate"),
            c.host_path("host-os-release", "/etc/os-release"),
            c.host_path("cgroup", "/sys/fs/cgroup", "Directory"),
            c.host_path("vfio", "/dev/vfio", "Directory"),
            c.host_path("host-root", h.host_root(model)),
            c.host_path("host-sys", "/sys", "Directory"),
            c.host_path("var-log", "/var/log", "Directory"),
            c.host_path("dev-log", "/dev/log"),
            c.host_path("firmware-search-path", "/sys/module/firmware_class/parameters/path"),
            c.host_path("nv-firmware", c.NV_FIRMWARE, "DirectoryOrCreate"),
            *kmod_volumes,
        ],
    }
    return c.daemonset(
        f"{DS_PREFIX}-{pool.name}",
        model,
        operand="vgpu-manager",
        pod_spec=pod,
        component="nvidia-vgpu-host-manager",
        section=c.with_manager_secrets(vgpu),
        pod_annotations={"kubectl.kubernetes.io/default-container": "nvidia-vgpu-manager-ctr"},
        extra_labels={"nvidia.com/node.os-version": pool.os_tag},
    )


def build(model: Model) -> list[Obj]:
    if not model.pools:
        return []
    rules = [
        c.rule([""], ["nodes"], ["get", "list", "patch", "watch"]),
        c.rule([""], ["pods"], ["get", "list", "watch"]),
        c.rule([""], ["pods/eviction"], ["create"]),
        c.rule(["apps"], ["daemonsets"], ["get"]),
    ]
    out = [c.service_account(NAME, model), c.cluster_role(NAME, rules), c.cluster_role_binding(NAME, model)]
    return out + [daemonset(model, pool) for pool in model.pools]
