"""NVIDIA driver: one DaemonSet per node pool, its RBAC and the startup-probe ConfigMap.

The image, node selector and DaemonSet name of each pool come resolved from
:mod:`renderer.driverimage` (``model.pools``); this module only builds the objects.

Controller-less differences (see docs/fidelity.md): ``driver.upgradePolicy`` is carried out by
the k8s-driver-manager init container (eviction/drain env) instead of the operator's upgrade
controller, the DaemonSet is ``OnDelete`` and its pod template carries no release-bearing label.
No ``DRIVER_CONFIG_DIGEST`` is set: a hash of the values would pin every driver setting at build
time in the Helm chart, so a restarted driver pod always reinstalls.
"""

from __future__ import annotations

from typing import Any

from renderer.components import common as c
from renderer.components.common import Obj
from renderer.model import Model, Pool

NAME = "nvidia-driver"
COMPONENT = "nvidia-driver"
PROBE_CM = "nvidia-driver-startup-probe"
PROBE_PATH = "/usr/local/bin/startup-probe.sh"
READY_FILE = f"{c.VALIDATIONS_DIR}/.driver-ctr-ready"

# Where each OS keeps package repositories and trusted CA certificates (the operator's maps,
# extended to the RHEL rebuilds and SUSE that the OS-tag rule also knows).
REPO_DIRS = {
    "centos": "/etc/yum.repos.d",
    "rhel": "/etc/yum.repos.d",
    "rhcos": "/etc/yum.repos.d",
    "rocky": "/etc/yum.repos.d",
    "ol": "/etc/yum.repos.d",
    "debian": "/etc/apt/sources.list.d",
    "ubuntu": "/etc/apt/sources.list.d",
    "sles": "/etc/zypp/repos.d",
    "sl-micro": "/etc/zypp/repos.d",
}
CERT_DIRS = {
    "centos": "/etc/pki/ca-trust/extracted/pem",
    "rhel": "/etc/pki/ca-trust/extracted/pem",
    "rhcos": "/etc/pki/ca-trust/extracted/pem",
    "rocky": "/etc/pki/ca-trust/extracted/pem",
    "ol": "/etc/pki/ca-trust/extracted/pem",
    "debian": "/usr/local/share/ca-certificates",
    "ubuntu": "/usr/local/share/ca-certificates",
    "sles": "/etc/pki/trust/anchors",
    "sl-micro": "/etc/pki/trust/anchors",
}
# Host subscription files the driver build needs to reach the distribution's packages.
SUBSCRIPTIONS: dict[str, list[tuple[str, str, str, str]]] = {
    "rhel": [
        ("subscription-entitlement", "/etc/pki/entitlement", "/run/secrets/etc-pki-entitlement", "Directory"),
        ("subscription-redhat-repo", "/etc/yum.repos.d/redhat.repo", "/run/secrets/redhat.repo", "File"),
        ("subscription-rhsm", "/etc/rhsm", "/run/secrets/rhsm", "Directory"),
    ],
    "sles": [
        ("subscription-zypp-credentials", "/etc/zypp/credentials.d", "/etc/zypp/credentials.d", "Directory"),
        ("subscription-suseconnect", "/etc/SUSEConnect", "/etc/SUSEConnect", "FileOrCreate"),
    ],
}
SUBSCRIPTIONS["sl-micro"] = SUBSCRIPTIONS["sles"]

STARTUP_PROBE_TEMPLATE = """#!/bin/sh
# Driver container startup probe (gpu-render). Succeeds once the kernel module is loaded and
# nvidia-smi answers, then publishes .driver-ctr-ready with the enabled extras (GDS, GDRCopy, RDMA).
set -eu
mkdir -p "@DIR@"
if [ ! -e /sys/module/nvidia/refcnt ]; then
  echo "nvidia kernel module is not loaded yet"
  exit 1
fi
if ! nvidia-smi >/dev/null 2>&1; then
  echo "nvidia-smi does not answer yet"
  exit 1
fi
tmp="@READY@.tmp"
printf 'GDRCOPY_ENABLED: %s\\nGDS_ENABLED: %s\\nGPU_DIRECT_RDMA_ENABLED: %s\\n' \\
  "${GDRCOPY_ENABLED:-false}" "${GDS_ENABLED:-false}" "${GPU_DIRECT_RDMA_ENABLED:-false}" > "$tmp"
mv "$tmp" "@READY@"
"""
STARTUP_PROBE = STARTUP_PROBE_TEMPLATE.replace("@DIR@", c.VALIDATIONS_DIR).replace("@READY@", READY_FILE)


def enabled(model: Model) -> bool:
    """Rendered when ``driver.enabled``; with no node pool there is no driver DaemonSet to build."""
    return model.enabled("driver") and bool(model.pools)


def _flag(value: Any) -> str:
    return "true" if value else "false"


def _sub(section: dict[str, Any], key: str) -> dict[str, Any]:
    value = section.get(key) or {}
    assert isinstance(value, dict)
    return value


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
    rdma = _sub(driver, "rdma")
    if not rdma.get("enabled"):
        return []
    return [("GPU_DIRECT_RDMA_ENABLED", "true"), ("USE_HOST_MOFED", _flag(rdma.get("useHostMofed")))]


def _driver_env(model: Model, driver: dict[str, Any]) -> list[Obj]:
    kmt = str(driver.get("kernelModuleType") or "auto")
    pairs: list[tuple[str, str]] = [("KERNEL_MODULE_TYPE", kmt)]
    if kmt == "open":
        pairs.append(("OPEN_KERNEL_MODULES_ENABLED", "true"))
    if model.enabled("gds"):
        pairs.append(("GDS_ENABLED", "true"))
    if model.enabled("gdrcopy"):
        pairs.append(("GDRCOPY_ENABLED", "true"))
    pairs += _rdma_pairs(driver)
    env = [c.field_env("NODE_NAME", "spec.nodeName"), c.field_env("NODE_IP", "status.hostIP")]
    return c.env_list(extra=[*env, *c.env_list(*pairs), *(driver.get("env") or [])])


def _config_keys(section: dict[str, Any], name_key: str) -> tuple[str, list[str]]:
    name = str(section.get(name_key) or "")
    keys = [str(k) for k in section.get("keys") or []]
    return name, keys


def _config_mounts(pool: Pool, driver: dict[str, Any]) -> tuple[list[Obj], list[Obj]]:
    """ConfigMap/Secret-backed files: repo and CA configs by OS, kernel module params, licensing.

    The operator lists a ConfigMap's keys from the API and mounts one file per key, so the
    image's own files stay visible; with no API at build time the keys are declared in values
    (``driver.repoConfig.keys``, ``driver.certConfig.keys``, ``driver.kernelModuleConfig.keys``).
    """
    mounts: list[Obj] = []
    volumes: list[Obj] = []

    def per_key(volume: str, cm: str, keys: list[str], directory: str) -> None:
        volumes.append({"name": volume, "configMap": {"name": cm}})
        for key in keys:
            mounts.append({"name": volume, "mountPath": f"{directory}/{key}", "subPath": key, "readOnly": True})

    repo_section = _sub(driver, "repoConfig")
    repo, repo_keys = _config_keys(repo_section, "configMapName" if repo_section.get("configMapName") else "name")
    if repo and pool.os_id in REPO_DIRS:
        per_key("repo-config", repo, repo_keys, REPO_DIRS[pool.os_id])
    cert, cert_keys = _config_keys(_sub(driver, "certConfig"), "name")
    if cert and pool.os_id in CERT_DIRS:
        per_key("cert-config", cert, cert_keys, CERT_DIRS[pool.os_id])
    kmod, kmod_keys = _config_keys(_sub(driver, "kernelModuleConfig"), "name")
    if kmod:
        per_key("kernel-module-config", kmod, kmod_keys, "/drivers")
    licensing = _sub(driver, "licensingConfig")
    secret = str(licensing.get("secretName") or "")
    if secret:
        items = [{"key": "gridd.conf", "path": "gridd.conf"}]
        mounts.append({"name": "licensing-config", "mountPath": "/drivers/gridd.conf", "subPath": "gridd.conf", "readOnly": True})
        if licensing.get("nlsEnabled", True):
            token = "client_configuration_token.tok"
            items.append({"key": token, "path": token})
            mounts.append({"name": "licensing-config", "mountPath": f"/drivers/ClientConfigToken/{token}", "subPath": token, "readOnly": True})
        volumes.append({"name": "licensing-config", "secret": {"secretName": secret, "items": items}})
    return mounts, volumes


def _subscription_mounts(model: Model, pool: Pool) -> tuple[list[Obj], list[Obj]]:
    """RHEL/SLES entitlement files from the host (not on OpenShift, not with CRI-O, as upstream)."""
    if model.values["cluster"].get("capabilities", {}).get("openshift") or pool.runtime == "crio":
        return [], []
    entries = SUBSCRIPTIONS.get(pool.os_id, [])
    mounts = [c.mount(name, ctr_path, read_only=True) for name, _, ctr_path, _ in entries]
    volumes = [c.host_path(name, host, kind) for name, host, _, kind in entries]
    return mounts, volumes


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
        c.mount("mlnx-ofed-usr-src", "/run/mellanox/drivers/usr/src", propagation="HostToContainer"),
        c.mount("run-mellanox-drivers", "/run/mellanox/drivers", propagation="HostToContainer"),
        c.mount("sysfs-memory-online", "/sys/devices/system/memory/auto_online_blocks"),
        c.mount("firmware-search-path", "/sys/module/firmware_class/parameters/path"),
        c.mount("nv-firmware", "/lib/firmware"),
        {"name": "driver-startup-probe-script", "mountPath": PROBE_PATH, "subPath": "startup-probe.sh"},
    ]
    if pool.precompiled and pool.os_id in ("sles", "sl-micro"):
        mounts.append(c.mount("lib-modules", "/lib/modules", read_only=True))
    ctr: Obj = {
        "name": "nvidia-driver-ctr",
        "image": pool.image,
        "imagePullPolicy": driver.get("imagePullPolicy", "IfNotPresent"),
        "command": ["nvidia-driver"],
        "args": [str(a) for a in driver.get("args") or ["init"]],
        "env": _driver_env(model, driver),
        "securityContext": {"privileged": True, "seLinuxOptions": {"level": "s0"}},
        "volumeMounts": mounts,
        "startupProbe": {
            "exec": {"command": ["sh", PROBE_PATH]},
            "initialDelaySeconds": int(probe.get("initialDelaySeconds", 60)),
            "periodSeconds": int(probe.get("periodSeconds", 10)),
            "timeoutSeconds": int(probe.get("timeoutSeconds", 60)),
            "failureThreshold": int(probe.get("failureThreshold", 120)),
            "successThreshold": 1,
        },
        "lifecycle": {
            "preStop": {
                "exec": {"command": ["/bin/sh", "-c", f"rm -f {READY_FILE} {c.VALIDATIONS_DIR}/.driver-daemons-status"]}
            }
        },
    }
    secret_env = str(driver.get("secretEnv") or "")
    if secret_env:
        ctr["envFrom"] = [{"secretRef": {"name": secret_env}}]
    if driver.get("resources"):
        ctr["resources"] = c.resources(driver)
    return ctr


def _manager_container(model: Model, driver: dict[str, Any]) -> Obj:
    manager = _sub(driver, "manager")
    return {
        "name": "k8s-driver-manager",
        "image": c.image_ref(manager),
        "imagePullPolicy": manager.get("imagePullPolicy", "IfNotPresent"),
        "command": ["driver-manager"],
        "args": ["uninstall_driver"],
        "env": manager_env(model, driver),
        "securityContext": {"privileged": True, "seLinuxOptions": {"level": "s0"}},
        "volumeMounts": [
            c.mount("run-nvidia", "/run/nvidia", propagation="Bidirectional"),
            c.mount("host-root", "/host", read_only=True, propagation="HostToContainer"),
            c.mount("host-sys", "/sys"),
            c.mount("run-mellanox-drivers", "/run/mellanox/drivers", propagation="HostToContainer"),
        ],
    }


def _module_sidecar(name: str, image: str, section: dict[str, Any], install: str, module: str, pull_policy: str) -> Obj:
    """A kernel-module sidecar (nvidia-fs, gdrdrv) that builds once the driver root is up."""
    wait = "until [ -d /run/nvidia/driver/usr/src ] && lsmod | grep -q nvidia; do echo waiting for the nvidia driver to be installed; sleep 10; done"
    ctr: Obj = {
        "name": name,
        "image": image,
        "imagePullPolicy": section.get("imagePullPolicy", pull_policy),
        "command": ["bash", "-xc"],
        "args": [f"{wait}; exec {install} install"],
        "securityContext": {"privileged": True, "seLinuxOptions": {"level": "s0"}},
        "volumeMounts": [
            c.mount("run-nvidia", "/run/nvidia", propagation="HostToContainer"),
            c.mount("var-log", "/var/log"),
            c.mount("dev-log", "/dev/log", read_only=True),
        ],
        "startupProbe": {
            "exec": {"command": ["sh", "-c", f"lsmod | grep -q {module}"]},
            "initialDelaySeconds": 10,
            "periodSeconds": 10,
            "timeoutSeconds": 10,
            "failureThreshold": 120,
            "successThreshold": 1,
        },
    }
    if section.get("env"):
        ctr["env"] = c.env_list(extra=section["env"])
    if section.get("args"):
        ctr["args"] = [str(a) for a in section["args"]]
    return ctr


def _peermem_sidecar(pool: Pool) -> Obj:
    probe = {"exec": {"command": ["sh", "-c", "nvidia-driver probe_nvidia_peermem"]}}
    return {
        "name": "nvidia-peermem-ctr",
        "image": pool.image,
        "imagePullPolicy": pool.driver.get("imagePullPolicy", "IfNotPresent"),
        "command": ["nvidia-driver"],
        "args": ["reload_nvidia_peermem"],
        "securityContext": {"privileged": True, "seLinuxOptions": {"level": "s0"}},
        "volumeMounts": [
            c.mount("run-nvidia", "/run/nvidia", propagation="Bidirectional"),
            c.mount("var-log", "/var/log"),
            c.mount("dev-log", "/dev/log", read_only=True),
            c.mount("run-mellanox-drivers", "/run/mellanox/drivers", propagation="HostToContainer"),
        ],
        "startupProbe": {**probe, "initialDelaySeconds": 10, "periodSeconds": 10, "timeoutSeconds": 10, "failureThreshold": 120, "successThreshold": 1},
        "livenessProbe": {**probe, "initialDelaySeconds": 30, "periodSeconds": 30, "timeoutSeconds": 10, "failureThreshold": 1, "successThreshold": 1},
    }


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
        c.host_path("run-nvidia-fabricmanager", "/run/nvidia-fabricmanager", "DirectoryOrCreate"),
        c.host_path("run-nvidia-topologyd", "/run/nvidia-topologyd", "DirectoryOrCreate"),
        c.host_path("mlnx-ofed-usr-src", mofed_src, "DirectoryOrCreate"),
        c.host_path("run-mellanox-drivers", "/run/mellanox/drivers", "DirectoryOrCreate"),
        c.host_path("run-nvidia-validations", c.VALIDATIONS_DIR, "DirectoryOrCreate"),
        c.host_path("host-root", c.host_root(model)),
        c.host_path("host-sys", "/sys", "Directory"),
        c.host_path("firmware-search-path", "/sys/module/firmware_class/parameters/path"),
        c.host_path("sysfs-memory-online", "/sys/devices/system/memory/auto_online_blocks"),
        c.host_path("nv-firmware", f"{c.driver_install_dir(model)}/lib/firmware", "DirectoryOrCreate"),
        {"name": "driver-startup-probe-script", "configMap": {"name": PROBE_CM, "defaultMode": 0o755}},
    ]
    if pool.precompiled and pool.os_id in ("sles", "sl-micro"):
        vols.append(c.host_path("lib-modules", "/lib/modules"))
    return vols


def pod_spec(model: Model, pool: Pool) -> Obj:
    driver_ctr = _driver_container(model, pool)
    containers = [driver_ctr]
    volumes = _volumes(model, pool)
    cfg_mounts, cfg_volumes = _config_mounts(pool, pool.driver)
    sub_mounts, sub_volumes = _subscription_mounts(model, pool)
    driver_ctr["volumeMounts"] += cfg_mounts + sub_mounts
    volumes += cfg_volumes + sub_volumes
    pull = str(pool.driver.get("imagePullPolicy", "IfNotPresent"))
    if _sub(pool.driver, "rdma").get("enabled"):
        containers.append(_peermem_sidecar(pool))
    if model.enabled("gds"):
        containers.append(_module_sidecar("nvidia-fs-ctr", pool_image(pool, "gds"), model.section("gds"), "nvidia-gds-driver", "nvidia_fs", pull))
    if model.enabled("gdrcopy"):
        containers.append(_module_sidecar("nvidia-gdrcopy-ctr", pool_image(pool, "gdrcopy"), model.section("gdrcopy"), "nvidia-gdrcopy-driver", "gdrdrv", pull))
    pod: Obj = {
        "serviceAccountName": NAME,
        "hostPID": True,
        "nodeSelector": dict(pool.node_selector),
        "affinity": {
            **c.deploy_affinity("driver", exclude=("false", c.PAUSED, c.PRE_INSTALLED)),
            "podAntiAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": [
                    {
                        "labelSelector": {
                            "matchExpressions": [{"key": "app.kubernetes.io/component", "operator": "In", "values": [COMPONENT]}]
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


def update_strategy(driver: dict[str, Any]) -> Obj:
    """``autoUpgrade`` (the operator's default, true): the DaemonSet controller rolls driver pods
    within the policy's budget; false (or a zero budget): OnDelete, pods change only when deleted."""
    policy = _sub(driver, "upgradePolicy")
    budget = upgrade_budget(policy)
    if not policy.get("autoUpgrade", True) or budget == 0:
        return {"type": "OnDelete"}
    return {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": budget, "maxSurge": 0}}


def daemonset(model: Model, pool: Pool) -> Obj:
    extra = {"nvidia.com/precompiled": _flag(pool.precompiled)}
    pull = {"imagePullSecrets": list(pool.driver.get("imagePullSecrets") or [])}
    strategy = update_strategy(pool.driver)
    ds = c.daemonset(
        pool.daemonset_name,
        model,
        operand="driver",
        pod_spec=pod_spec(model, pool),
        component=COMPONENT,
        section=pull,
        strategy=strategy,
        pod_annotations={"kubectl.kubernetes.io/default-container": "nvidia-driver-ctr"},
        extra_labels=extra,
        stable_pod_labels=True,
    )
    if strategy["type"] == "RollingUpdate":
        ds["spec"]["minReadySeconds"] = MIN_READY_SECONDS
    return ds


def rbac(model: Model) -> list[Obj]:
    """What k8s-driver-manager needs: pause operands (node labels), evict GPU pods, drain."""
    return [
        c.service_account(NAME, model),
        c.cluster_role(
            NAME,
            [
                c.rule([""], ["nodes"], ["get", "list", "watch", "patch", "update"]),
                c.rule([""], ["pods"], ["get", "list", "watch", "delete"]),
                c.rule([""], ["pods/eviction"], ["create"]),
                c.rule(["apps"], ["daemonsets"], ["get", "list"]),
                # with DRA, k8s-driver-manager checks that no pod still holds a GPU claim
                *([c.rule(["resource.k8s.io"], ["resourceclaims"], ["get"])] if model.dra_pools else []),
            ],
        ),
        c.cluster_role_binding(NAME, model),
    ]


def build(model: Model) -> list[Obj]:
    labels = c.labels(NAME, COMPONENT)
    probe = c.config_map(PROBE_CM, model, {"startup-probe.sh": STARTUP_PROBE}, lbls=labels)
    return [*rbac(model), probe, *(daemonset(model, pool) for pool in model.pools)]
