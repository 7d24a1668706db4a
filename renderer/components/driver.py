"""NVIDIA driver: one DaemonSet per node pool, its RBAC and the startup-probe ConfigMap.

The image, node selector and DaemonSet name of each pool come resolved from
:mod:`renderer.driverimage` (``model.pools``); this module only builds the objects.

Controller-less differences (see docs/fidelity.md): ``driver.upgradePolicy`` is carried out by
the k8s-driver-manager init container (eviction/drain env) instead of the operator's upgrade
controller, the DaemonSet is ``OnDelete`` and its pod template carries no release-bearing label.
Each pool's DaemonSet is what the operator renders for one NVIDIADriver (``manifests/state-driver``):
``args`` follow ``init``, pool ``labels``/``annotations``/``tolerations``/``priorityClassName`` apply,
and a ``vgpu-host-manager`` pool gets the vGPU host manager's selector, mounts and grace period.
Per imitated release (``cluster.operatorRelease``): v26.7 mounts ``/sys/devices/system`` and its
startup probe waits for ``.driver-daemons-status`` to be ``Ready``; v26.3 and v25.10 mount
``/sys/devices/system/memory/auto_online_blocks``. ``DRIVER_CONFIG_DIGEST`` is the operator's hash of
the finished pod spec (:mod:`renderer.driverdigest`).
"""

from __future__ import annotations

from typing import Any

from renderer import driverdigest
from renderer.components import common as c
from renderer.components.common import Obj
from renderer.merge import merged_view
from renderer.model import Model, Pool

NAME = "nvidia-driver"
COMPONENT = "nvidia-driver"
PROBE_CM = "nvidia-driver-startup-probe"
PROBE_PATH = "/usr/local/bin/startup-probe.sh"
READY_FILE = f"{c.VALIDATIONS_DIR}/.driver-ctr-ready"
DAEMONS_STATUS_FILE = f"{c.VALIDATIONS_DIR}/.driver-daemons-status"
VGPU_HOST = "vgpu-host-manager"
DIGEST_ENV = "DRIVER_CONFIG_DIGEST"

STARTUP_PROBE_TEMPLATE = """#!/bin/sh
# Driver container startup probe (gpu-render). Succeeds once the kernel module is loaded,
# @DAEMONS@and nvidia-smi answers; then publishes .driver-ctr-ready with the
# enabled extras (GDS, GDRCopy, RDMA) that the driver validation checks next.
set -eu
mkdir -p "@DIR@"
if [ ! -f /sys/module/nvidia/refcnt ]; then
  echo "NVIDIA kernel module not loaded"
  exit 1
fi
@DAEMONS_CHECK@if ! nvidia-smi; then
  echo "nvidia-smi failed"
  exit 1
fi
tmp="@READY@.tmp"
printf 'GDRCOPY_ENABLED: %s\\nGDS_ENABLED: %s\\nGPU_DIRECT_RDMA_ENABLED: %s\\n' \\
  "${GDRCOPY_ENABLED:-false}" "${GDS_ENABLED:-false}" "${GPU_DIRECT_RDMA_ENABLED:-false}" > "$tmp"
mv "$tmp" "@READY@"
"""
DAEMONS_CHECK = """if [ -f "@STATUS@" ]; then
  status=$(cat "@STATUS@")
  if [ "$status" != "Ready" ]; then
    echo "NVIDIA driver daemons are not ready; current status: $status"
    exit 1
  fi
fi
"""


def startup_probe(release: str) -> str:
    """The probe script of the imitated release: v26.7 also waits for the driver daemons."""
    daemons = release == "v26.7"
    check = DAEMONS_CHECK.replace("@STATUS@", DAEMONS_STATUS_FILE) if daemons else ""
    text = STARTUP_PROBE_TEMPLATE.replace("@DAEMONS_CHECK@", check)
    text = text.replace("@DAEMONS@", "the driver daemons report Ready (.driver-daemons-status) " if daemons else "")
    return text.replace("@DIR@", c.VALIDATIONS_DIR).replace("@READY@", READY_FILE)


STARTUP_PROBE = startup_probe("v26.7")


def enabled(model: Model) -> bool:
    """Rendered when ``driver.enabled``; with no node pool there is no driver DaemonSet to build."""
    return model.enabled("driver") and bool(model.pools)


def _flag(value: Any) -> str:
    return "true" if value else "false"


def _sub(section: dict[str, Any], key: str) -> dict[str, Any]:
    value = section.get(key) or {}
    assert isinstance(value, dict)
    return value


def extra(model: Model, pool: Pool, key: str) -> dict[str, Any]:
    """``gds`` / ``gdrcopy`` of the fleet with the pool's ``driver.<key>`` over it."""
    return merged_view(model.section(key), _sub(pool.driver, key))


def extra_enabled(model: Model, pool: Pool, key: str) -> bool:
    """GDS / GDRCopy on this pool (``nodePools[].driver.{gds,gdrcopy}.enabled`` wins); never for vGPU host pools."""
    return pool.driver_type != VGPU_HOST and bool(extra(model, pool, key).get("enabled"))


def manager_env(model: Model, driver: dict[str, Any]) -> list[Obj]:
    """k8s-driver-manager env: eviction and drain follow ``driver.upgradePolicy``.

    With no operator (hence no upgrade controller and no ``gpu-driver-upgrade-enabled`` node
    annotation) the driver manager is the one that empties the node before it reloads the
    driver, so the policy's pod-deletion and drain settings become its env. ``driver.manager.env``
    still overrides any of them.
    """
    policy = _sub(driver, "upgradePolicy")
    deletion = _sub(policy, "gpuPodDeletion")
    drain = _sub(policy, "drain")
    drain_on = bool(drain.get("enable"))
    timeout = drain.get("timeoutSeconds") if drain_on else deletion.get("timeoutSeconds")
    pairs: list[tuple[str, str]] = [
        ("NVIDIA_VISIBLE_DEVICES", "void"),
        ("ENABLE_GPU_POD_EVICTION", "true"),
        ("ENABLE_AUTO_DRAIN", _flag(drain_on)),
        ("DRAIN_USE_FORCE", _flag(deletion.get("force") or (drain_on and drain.get("force")))),
        ("DRAIN_POD_SELECTOR_LABEL", str(drain.get("podSelector") or "") if drain_on else ""),
        ("DRAIN_TIMEOUT_SECONDS", f"{int(timeout or 0)}s"),
        ("DRAIN_DELETE_EMPTYDIR_DATA", _flag(deletion.get("deleteEmptyDir") or (drain_on and drain.get("deleteEmptyDir")))),
    ]
    pairs += _rdma_pairs(driver)
    env = c.env_list(*pairs)
    env.insert(0, c.field_env("NODE_NAME", "spec.nodeName"))
    env.append(c.field_env("OPERATOR_NAMESPACE", "metadata.namespace"))
    return c.env_list(extra=[*env, *(_sub(driver, "manager").get("env") or [])])


def _rdma_pairs(driver: dict[str, Any]) -> list[tuple[str, str]]:
    """``GPU_DIRECT_RDMA_ENABLED``, and ``USE_HOST_MOFED`` only when MOFED is the host's (as the operator)."""
    rdma = _sub(driver, "rdma")
    if not rdma.get("enabled"):
        return []
    pairs = [("GPU_DIRECT_RDMA_ENABLED", "true")]
    if rdma.get("useHostMofed"):
        pairs.append(("USE_HOST_MOFED", "true"))
    return pairs


def _driver_env(model: Model, pool: Pool) -> list[Obj]:
    driver = pool.driver
    kmt = str(driver.get("kernelModuleType") or "auto")
    pairs: list[tuple[str, str]] = [("KERNEL_MODULE_TYPE", kmt)]
    if kmt == "open":
        pairs.append(("OPEN_KERNEL_MODULES_ENABLED", "true"))
    if extra_enabled(model, pool, "gds"):
        pairs.append(("GDS_ENABLED", "true"))
    if extra_enabled(model, pool, "gdrcopy"):
        pairs.append(("GDRCOPY_ENABLED", "true"))
    pairs += _rdma_pairs(driver)
    env = [
        {"name": "NVIDIA_VISIBLE_DEVICES", "value": "void"},
        c.field_env("NODE_NAME", "spec.nodeName"),
        c.field_env("NODE_IP", "status.hostIP"),
    ]
    return c.env_list(extra=[*env, *c.env_list(*pairs), *(driver.get("env") or [])])


def _repo_cert(pool: Pool) -> tuple[list[Obj], list[Obj]]:
    """Repo and CA ConfigMaps by OS, mounted where the pool's facts say (``Pool.config_mounts``:
    one file per declared key, a repo ConfigMap with no declared keys whole at the repo
    directory); none where the OS has no directory for them."""
    driver = pool.driver
    mounts: list[Obj] = []
    volumes: list[Obj] = []
    repo_section = _sub(driver, "repoConfig")
    repo = str(repo_section.get("configMapName" if repo_section.get("configMapName") else "name") or "")
    if repo and pool.repo_dir:
        volumes.append({"name": "repo-config", "configMap": {"name": repo}})
        mounts += [dict(m) for m in pool.config_mounts.get("repo-config", ())]
    cert = str(_sub(driver, "certConfig").get("name") or "")
    if cert and pool.cert_dir:
        volumes.append({"name": "cert-config", "configMap": {"name": cert}})
        mounts += [dict(m) for m in pool.config_mounts.get("cert-config", ())]
    return mounts, volumes


def _kernel_module_config(pool: Pool) -> tuple[list[Obj], list[Obj]]:
    kmod = str(_sub(pool.driver, "kernelModuleConfig").get("name") or "")
    if not kmod:
        return [], []
    return [dict(m) for m in pool.config_mounts.get("kernel-module-config", ())], [{"name": "kernel-module-config", "configMap": {"name": kmod}}]


def _config_mounts(pool: Pool, driver: dict[str, Any]) -> tuple[list[Obj], list[Obj]]:
    """ConfigMap/Secret-backed files: repo and CA configs by OS, kernel module params, licensing,
    virtual topology.

    The operator lists a ConfigMap's keys from the API and mounts one file per key, so the
    image's own files stay visible; with no API at build time the keys are declared in values
    (``driver.repoConfig.keys``, ``driver.certConfig.keys``, ``driver.kernelModuleConfig.keys``).
    """
    mounts: list[Obj] = []
    volumes: list[Obj] = []
    licensing = _sub(driver, "licensingConfig")
    secret = str(licensing.get("secretName") or "")
    config_map = str(licensing.get("configMapName") or licensing.get("name") or "")
    if secret or config_map:
        items = [{"key": "gridd.conf", "path": "gridd.conf"}]
        mounts.append({"name": "licensing-config", "mountPath": "/drivers/gridd.conf", "subPath": "gridd.conf", "readOnly": True})
        if licensing.get("nlsEnabled", True):
            token = "client_configuration_token.tok"
            items.append({"key": token, "path": token})
            mounts.append({"name": "licensing-config", "mountPath": f"/drivers/ClientConfigToken/{token}", "subPath": token, "readOnly": True})
        if secret:
            volumes.append({"name": "licensing-config", "secret": {"secretName": secret, "items": items}})
        else:
            volumes.append({"name": "licensing-config", "configMap": {"name": config_map, "items": items}})
    # the NVIDIADriver field (a pool's driver) or the ClusterPolicy's
    topology = str(_sub(driver, "virtualTopologyConfig").get("name") or _sub(driver, "virtualTopology").get("config") or "")
    if topology:
        conf = "nvidia-topologyd.conf"
        mounts.append({"name": "topology-config", "mountPath": f"/etc/nvidia/{conf}", "subPath": conf, "readOnly": True})
        volumes.append({"name": "topology-config", "configMap": {"name": topology, "items": [{"key": conf, "path": conf}]}})
    kmod_mounts, kmod_volumes = _kernel_module_config(pool)
    repo_mounts, repo_volumes = _repo_cert(pool)
    return [*mounts, *kmod_mounts, *repo_mounts], [*volumes, *kmod_volumes, *repo_volumes]


def _sys_devices(model: Model) -> tuple[Obj, Obj]:
    """v26.7 mounts all of ``/sys/devices/system`` (a Directory); earlier releases only the
    memory auto-online switch."""
    if model.release == "v26.7":
        return c.mount("host-sys-devices-system", "/sys/devices/system"), c.host_path("host-sys-devices-system", "/sys/devices/system", "Directory")
    path = "/sys/devices/system/memory/auto_online_blocks"
    return c.mount("sysfs-memory-online", path), c.host_path("sysfs-memory-online", path)


def _ready_files(model: Model) -> str:
    return f"{READY_FILE} {DAEMONS_STATUS_FILE}" if model.release == "v26.7" else READY_FILE


def _driver_container(model: Model, pool: Pool) -> Obj:
    driver = pool.driver
    probe = _sub(driver, "startupProbe")
    mounts = [
        c.mount("run-nvidia", "/run/nvidia", propagation="Bidirectional"),
        c.mount("run-nvidia-fabricmanager", "/run/nvidia-fabricmanager"),
        c.mount("run-nvidia-topologyd", "/run/nvidia-topologyd"),
        c.mount("var-log", "/var/log"),
        c.mount("dev-log", "/dev/log"),
        c.mount("host-os-release", "/host-etc/os-release", read_only=True),
    ]
    if pool.driver_type == VGPU_HOST:
        mounts += [c.mount("cgroup", "/sys/fs/cgroup"), c.mount("vfio", "/dev/vfio")]
    mounts += [
        c.mount("mlnx-ofed-usr-src", "/run/mellanox/drivers/usr/src", propagation="HostToContainer"),
        c.mount("run-mellanox-drivers", "/run/mellanox/drivers", propagation="HostToContainer"),
        _sys_devices(model)[0],
        c.mount("firmware-search-path", "/sys/module/firmware_class/parameters/path"),
        c.mount("nv-firmware", "/lib/firmware"),
        {"name": "driver-startup-probe-script", "mountPath": PROBE_PATH, "subPath": "startup-probe.sh"},
    ]
    ctr: Obj = {
        "name": "nvidia-driver-ctr",
        "image": pool.image,
        "imagePullPolicy": driver.get("imagePullPolicy", "IfNotPresent"),
        "command": ["nvidia-driver"],
        "args": ["init", *(str(a) for a in driver.get("args") or [])],
        "env": _driver_env(model, pool),
        "securityContext": {"privileged": True, "seLinuxOptions": {"level": "s0"}},
        "volumeMounts": mounts,
    }
    if pool.driver_type != VGPU_HOST:
        # the vGPU host manager has no nvidia-smi probe and no ready file to withdraw (operator manifest)
        ctr["startupProbe"] = {
            "exec": {"command": ["sh", PROBE_PATH]},
            "initialDelaySeconds": int(probe.get("initialDelaySeconds", 60)),
            "periodSeconds": int(probe.get("periodSeconds", 10)),
            "timeoutSeconds": int(probe.get("timeoutSeconds", 60)),
            "failureThreshold": int(probe.get("failureThreshold", 120)),
            "successThreshold": 1,
        }
        ctr["lifecycle"] = {"preStop": {"exec": {"command": ["/bin/sh", "-c", f"rm -f {_ready_files(model)}"]}}}
    _secret_env(ctr, driver)
    _resources(ctr, driver)
    return ctr


def _secret_env(ctr: Obj, driver: dict[str, Any]) -> None:
    secret_env = str(driver.get("secretEnv") or "")
    if secret_env:
        ctr["envFrom"] = [{"secretRef": {"name": secret_env}}]


def _resources(ctr: Obj, driver: dict[str, Any]) -> None:
    """``driver.resources`` go on every main container of the driver pod (as the operator sets them;
    its init container from v26.7, :func:`_manager_container`)."""
    if driver.get("resources"):
        ctr["resources"] = c.resources(driver)


def _manager_container(model: Model, driver: dict[str, Any]) -> Obj:
    manager = _sub(driver, "manager")
    ctr: Obj = {
        "name": "k8s-driver-manager",
        "image": c.image_ref(manager),
        "imagePullPolicy": manager.get("imagePullPolicy", "IfNotPresent"),
        "command": ["driver-manager"],
        "args": ["uninstall_driver"],
        "env": manager_env(model, driver),
        "securityContext": {"privileged": True},
        "volumeMounts": [
            c.mount("run-nvidia", "/run/nvidia", propagation="Bidirectional"),
            c.mount("host-root", "/host", read_only=True, propagation="HostToContainer"),
            c.mount("host-sys", "/sys"),
            c.mount("run-mellanox-drivers", "/run/mellanox/drivers", propagation="HostToContainer"),
        ],
    }
    # state-driver's k8s-driver-manager takes the NVIDIADriver's resources from v26.7 on only
    return c.init_resources(ctr, model, driver)


SIDECAR_INSTALL = {"gds": "nvidia-gds-driver", "gdrcopy": "nvidia-gdrcopy-driver"}
"""The install command of each kernel-module sidecar (by values section)."""


def sidecar_script(key: str) -> list[str]:
    """The ``args`` a kernel-module sidecar (``gds``, ``gdrcopy``) runs when its section sets
    none: wait for the driver root, then install the module. The chart values carry it in
    place of an empty ``args`` (:func:`renderer.emit.helm_values.chart_values`)."""
    wait = "until [ -d /run/nvidia/driver/usr/src ] && lsmod | grep nvidia; do echo  Waiting for nvidia-driver to be installed...; sleep 10; done"
    return [f"{wait}; exec {SIDECAR_INSTALL[key]} install"]


def _module_sidecar(name: str, image: str, section: dict[str, Any], key: str, module: str, pool: Pool) -> Obj:
    """A kernel-module sidecar (nvidia-fs, gdrdrv) that builds once the driver root is up."""
    ctr: Obj = {
        "name": name,
        "image": image,
        "imagePullPolicy": section.get("imagePullPolicy", pool.driver.get("imagePullPolicy", "IfNotPresent")),
        "command": ["bash", "-xc"],
        # the section's own list as it is (strings, the schema), as the device plugin's: a copy
        # keeps the chart's placeholder whole, where `str()` of each item made it text
        "args": list(section.get("args") or sidecar_script(key)),
        "securityContext": {"privileged": True, "seLinuxOptions": {"level": "s0"}},
        "volumeMounts": [
            c.mount("run-nvidia", "/run/nvidia", propagation="HostToContainer"),
            c.mount("var-log", "/var/log"),
            c.mount("dev-log", "/dev/log", read_only=True),
            *_repo_cert(pool)[0],
        ],
        "startupProbe": {
            "exec": {"command": ["sh", "-c", f"lsmod | grep {module}"]},
            "initialDelaySeconds": 10,
            "periodSeconds": 10,
            "timeoutSeconds": 10,
            "failureThreshold": 120,
            "successThreshold": 1,
        },
    }
    if section.get("env"):
        ctr["env"] = c.env_list(extra=section["env"])
    _secret_env(ctr, pool.driver)
    _resources(ctr, pool.driver)
    return ctr


def _peermem_sidecar(pool: Pool) -> Obj:
    probe = {"exec": {"command": ["sh", "-c", "nvidia-driver probe_nvidia_peermem"]}}
    ctr: Obj = {
        "name": "nvidia-peermem-ctr",
        "image": pool.image,
        "imagePullPolicy": pool.driver.get("imagePullPolicy", "IfNotPresent"),
        "command": ["nvidia-driver"],
        "args": ["reload_nvidia_peermem"],
        "env": c.env_list(("NVIDIA_VISIBLE_DEVICES", "void"), *_rdma_pairs(pool.driver)[1:]),
        "securityContext": {"privileged": True, "seLinuxOptions": {"level": "s0"}},
        "volumeMounts": [
            c.mount("run-nvidia", "/run/nvidia", propagation="Bidirectional"),
            c.mount("var-log", "/var/log"),
            c.mount("dev-log", "/dev/log", read_only=True),
            c.mount("run-mellanox-drivers", "/run/mellanox/drivers", propagation="HostToContainer"),
            *_kernel_module_config(pool)[0],
        ],
        "startupProbe": {**probe, "initialDelaySeconds": 10, "periodSeconds": 10, "timeoutSeconds": 10, "failureThreshold": 120, "successThreshold": 1},
        "livenessProbe": {**probe, "initialDelaySeconds": 30, "periodSeconds": 30, "timeoutSeconds": 10, "failureThreshold": 1, "successThreshold": 1},
    }
    _resources(ctr, pool.driver)
    return ctr


def pool_image(pool: Pool, key: str) -> str:
    """An OS-suffixed image the pool resolved (``gds``, ``gdrcopy``); a bug if it is missing."""
    image = pool.images.get(key)
    if not image:
        raise KeyError(f"node pool {pool.name!r} has no resolved {key} image")
    return image


def _volumes(model: Model, pool: Pool) -> list[Obj]:
    mofed_src = "/usr/src" if _sub(pool.driver, "rdma").get("useHostMofed") else "/run/mellanox/drivers/usr/src"
    vols = [
        c.host_path("run-nvidia", "/run/nvidia", "DirectoryOrCreate"),
        c.host_path("var-log", "/var/log"),
        c.host_path("dev-log", "/dev/log"),
        c.host_path("host-os-release", "/etc/os-release"),
    ]
    if pool.driver_type == VGPU_HOST:
        vols += [c.host_path("cgroup", "/sys/fs/cgroup"), c.host_path("vfio", "/dev/vfio")]
    vols += [
        c.host_path("run-nvidia-fabricmanager", "/run/nvidia-fabricmanager", "DirectoryOrCreate"),
        c.host_path("run-nvidia-topologyd", "/run/nvidia-topologyd", "DirectoryOrCreate"),
        c.host_path("mlnx-ofed-usr-src", mofed_src, "DirectoryOrCreate"),
        c.host_path("run-mellanox-drivers", "/run/mellanox/drivers", "DirectoryOrCreate"),
        c.host_path("run-nvidia-validations", c.VALIDATIONS_DIR, "DirectoryOrCreate"),
        c.host_path("host-root", c.host_root(model)),
        c.host_path("host-sys", "/sys", "Directory"),
        c.host_path("firmware-search-path", "/sys/module/firmware_class/parameters/path"),
        _sys_devices(model)[1],
        c.host_path("nv-firmware", c.NV_FIRMWARE, "DirectoryOrCreate"),
        {"name": "driver-startup-probe-script", "configMap": {"name": PROBE_CM, "defaultMode": 0o755}},
    ]
    return vols


def pod_spec(model: Model, pool: Pool) -> Obj:
    driver_ctr = _driver_container(model, pool)
    containers = [driver_ctr]
    volumes = _volumes(model, pool)
    cfg_mounts, cfg_volumes = _config_mounts(pool, pool.driver)
    driver_ctr["volumeMounts"] += [*cfg_mounts, *pool.host_mounts]
    volumes += [*cfg_volumes, *pool.host_volumes]
    if _sub(pool.driver, "rdma").get("enabled") and pool.driver_type != VGPU_HOST:
        containers.append(_peermem_sidecar(pool))
    if extra_enabled(model, pool, "gds"):
        containers.append(_module_sidecar("nvidia-fs-ctr", pool_image(pool, "gds"), extra(model, pool, "gds"), "gds", "nvidia_fs", pool))
    if extra_enabled(model, pool, "gdrcopy"):
        containers.append(_module_sidecar("nvidia-gdrcopy-ctr", pool_image(pool, "gdrcopy"), extra(model, pool, "gdrcopy"), "gdrcopy", "gdrdrv", pool))
    operand = "vgpu-manager" if pool.driver_type == VGPU_HOST else "driver"
    pod: Obj = {
        "serviceAccountName": NAME,
        "hostPID": True,
        "nodeSelector": dict(pool.node_selector),
        "affinity": {
            **c.deploy_affinity(operand, exclude=("false", c.PAUSED, c.PRE_INSTALLED)),
            "podAntiAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": [
                    {
                        "labelSelector": {
                            "matchExpressions": [{"key": "app.kubernetes.io/component", "operator": "In", "values": [COMPONENT, "nvidia-vgpu-manager"]}]
                        },
                        "topologyKey": "kubernetes.io/hostname",
                    }
                ]
            },
        },
        "initContainers": [_manager_container(model, pool.driver)],
        "containers": containers,
        "volumes": volumes,
    }
    if pool.driver_type == VGPU_HOST:
        pod["terminationGracePeriodSeconds"] = 120
    if pool.driver.get("hostNetwork"):
        pod["hostNetwork"] = True
        pod["dnsPolicy"] = "ClusterFirstWithHostNet"
    return pod


# After a new driver pod's startup probe passes, the DaemonSet controller waits this long
# before it counts the pod available and replaces the next node's: time for the toolkit, device
# plugin and validator to come back on the node before another one goes down.
MIN_READY_SECONDS = 60


def upgrade_budget(policy: dict[str, Any]) -> int | str:
    """``maxUnavailable`` of a rolling driver update from ``maxParallelUpgrades``/``maxUnavailable``.

    The operator upgrades min(maxParallelUpgrades, maxUnavailable) nodes at a time (0 parallel
    = no limit); a DaemonSet has one bound, so: both integers -> the smaller; a percentage with
    a parallel limit -> the limit; a percentage without one -> the percentage. 0 means no node
    may go down (the caller then keeps OnDelete).
    """
    parallel = int(policy.get("maxParallelUpgrades", 1) or 0)
    raw = policy.get("maxUnavailable", "25%")
    if isinstance(raw, str) and raw.endswith("%"):
        if int(raw[:-1] or 0) == 0:
            return 0
        return parallel if parallel > 0 else raw
    count = int(raw)
    return min(count, parallel) if parallel > 0 else count


def update_strategy(driver: dict[str, Any], budget: int | str | None = None, held: bool | None = None) -> Obj:
    """``autoUpgrade`` (the operator's default, true): the DaemonSet controller rolls driver pods
    within the policy's budget (``budget``, the pool's fact when given); false (or a zero
    budget, ``held``: the pool's fact when given): OnDelete, pods change only when deleted."""
    policy = _sub(driver, "upgradePolicy")
    budget = upgrade_budget(policy) if budget is None else budget
    held = not budget if held is None else held
    if not policy.get("autoUpgrade", True) or held:
        return {"type": "OnDelete"}
    return {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": budget, "maxSurge": 0}}


def _pull_secrets(model: Model, pool: Pool) -> list[Any]:
    """Pull secrets of every image in the pod: driver, manager, and the enabled GDS / GDRCopy."""
    out: list[Any] = []
    lists = [pool.driver.get("imagePullSecrets"), _sub(pool.driver, "manager").get("imagePullSecrets")]
    for key in ("gds", "gdrcopy"):
        if extra_enabled(model, pool, key):
            lists.append(extra(model, pool, key).get("imagePullSecrets"))
    for items in lists:
        for item in items or []:
            if item not in out:
                out.append(item)
    return out


def daemonset(model: Model, pool: Pool) -> Obj:
    labels = {"nvidia.com/node.os-version": pool.os_tag, "nvidia.com/precompiled": _flag(pool.precompiled)}
    if pool.precompiled:
        labels["nvidia.com/precompiled.kernel-version"] = pool.kernel_name
    own = {str(k): str(v) for k, v in (pool.driver.get("labels") or {}).items()}
    labels.update(own)
    component = "nvidia-vgpu-host-manager" if pool.driver_type == VGPU_HOST else COMPONENT
    annotations = {str(k): str(v) for k, v in (pool.driver.get("annotations") or {}).items()}
    strategy = update_strategy(pool.driver, pool.upgrade_budget, pool.upgrade_held)
    ds = c.daemonset(
        pool.daemonset_name,
        model,
        operand="vgpu-manager" if pool.driver_type == VGPU_HOST else "driver",
        pod_spec=pod_spec(model, pool),
        component=component,
        section={"imagePullSecrets": _pull_secrets(model, pool)},
        strategy=strategy,
        pod_annotations={"kubectl.kubernetes.io/default-container": "nvidia-driver-ctr", **annotations},
        extra_labels=labels,
        stable_pod_labels=True,
    )
    if annotations:
        ds["metadata"].setdefault("annotations", {}).update(annotations)
    spec = ds["spec"]["template"]["spec"]
    spec["tolerations"] += [dict(t) for t in pool.driver.get("tolerations") or []]
    if pool.driver.get("priorityClassName"):
        spec["priorityClassName"] = str(pool.driver["priorityClassName"])
    if pool.driver.get("podSecurityContext"):  # the NVIDIADriver's own (v26.3): in daemonsets.podSecurityContext's place
        spec["securityContext"] = dict(pool.driver["podSecurityContext"])
    set_config_digest(spec)
    if strategy["type"] == "RollingUpdate":
        ds["spec"]["minReadySeconds"] = MIN_READY_SECONDS
    return ds


def set_config_digest(spec: Obj) -> None:
    """``DRIVER_CONFIG_DIGEST`` on k8s-driver-manager and the driver container, computed from the
    finished pod spec as the operator does: an unchanged digest lets a replaced driver pod skip
    the reinstall (and the manager skip the GPU pod eviction)."""
    value = driverdigest.of_pod_spec(spec)
    for ctr in [*spec["initContainers"], *spec["containers"]]:
        if ctr["name"] in ("k8s-driver-manager", "nvidia-driver-ctr"):
            c.set_env(ctr.setdefault("env", []), DIGEST_ENV, value)


def rbac(model: Model) -> list[Obj]:
    """The operator's driver ClusterRole: what k8s-driver-manager calls to pause operands (node
    labels), cordon, evict GPU pods and drain (the drain helper GETs a pod's DaemonSet); from
    v26.7 (k8s-driver-manager v0.12) it also GETs pods' ResourceClaims to find DRA GPU pods."""
    rules = [
        c.rule([""], ["nodes"], ["get", "list", "watch", "patch", "update"]),
        c.rule([""], ["pods"], ["get", "list", "watch"]),
        c.rule([""], ["pods/eviction"], ["create"]),
    ]
    if model.release == "v26.7" or model.dra:  # with DRA it checks no pod still holds a GPU claim
        rules.append(c.rule(["resource.k8s.io"], ["resourceclaims"], ["get", "list"]))
    rules.append(c.rule(["apps"], ["daemonsets"], ["get"]))
    return [c.service_account(NAME, model), c.cluster_role(NAME, rules), c.cluster_role_binding(NAME, model)]


def build(model: Model) -> list[Obj]:
    labels = c.labels(NAME, COMPONENT)
    probe = c.config_map(PROBE_CM, model, {"startup-probe.sh": startup_probe(model.release)}, lbls=labels)
    return [*rbac(model), probe, *(daemonset(model, pool) for pool in model.pools)]
