"""NVIDIA device plugin DaemonSet (advertises ``nvidia.com/gpu``), its RBAC and configs.

Also home of the plugin-config plumbing shared with GPU feature discovery and the MPS control
daemon: with ``devicePlugin.config.name`` set, a ``config-manager-init`` init container and a
``config-manager`` sidecar pick the node's config (label ``nvidia.com/device-plugin.config``,
else ``devicePlugin.config.default``) from the ConfigMap, and SIGHUP the main process on change.
:func:`config_map` builds the ConfigMap from ``devicePlugin.config.data`` (time-slicing or MPS
sharing configs) when ``create`` is set, as the operator's chart does (``plugin_config.yaml``).
"""

from __future__ import annotations

from typing import Any

from renderer import yamlio
from renderer.components import common as c
from renderer.components.common import Obj
from renderer.model import Model
from renderer.releasegate import has

NAME = "nvidia-device-plugin-daemonset"
SA = "nvidia-device-plugin"
ENTRYPOINT_CM = "nvidia-device-plugin-entrypoint"
CONFIG_LABEL = "nvidia.com/device-plugin.config"
DEFAULT_MPS_ROOT = "/run/nvidia/mps"

ENTRYPOINT = f"""#!/bin/sh
# Device plugin entrypoint (gpu-render): wait for the driver validation, take over what it
# found (driver root, host or containerized driver), then start the plugin. As the operator's
# entrypoint: a loaded gdrdrv / nvidia_fs module turns on the plugin's GDRCOPY_ENABLED /
# GDS_ENABLED + MOFED_ENABLED (it then injects /dev/gdrdrv, /dev/nvidia-fs*, /dev/infiniband),
# unless the env already sets them.
{c.WAIT_FOR_DRIVER_READY}set +u
if lsmod | grep -q '^gdrdrv '; then
  [ -n "$GDRCOPY_ENABLED" ] || export GDRCOPY_ENABLED=true
fi
if lsmod | grep -q '^nvidia_fs '; then
  [ -n "$GDS_ENABLED" ] || export GDS_ENABLED=true
  [ -n "$MOFED_ENABLED" ] || export MOFED_ENABLED=true
fi
exec nvidia-device-plugin "$@"
"""

ENTRYPOINT_V25_10 = f"""#!/bin/sh
# Device plugin entrypoint (gpu-render): wait for the driver validation, take over what it
# found (driver root, host or containerized driver), then start the plugin (operator v25.10's
# entrypoint turns on no GDS / GDRCopy feature flag: v26.3 added that).
{c.WAIT_FOR_DRIVER_READY}exec nvidia-device-plugin "$@"
"""


def entrypoint(model: Model) -> str:
    """The entrypoint script of the imitated release (feature flags from v26.3)."""
    return ENTRYPOINT if has(model.release, "v26.3") else ENTRYPOINT_V25_10


def plugin_config(model: Model) -> dict[str, Any]:
    value = model.section("devicePlugin").get("config") or {}
    assert isinstance(value, dict)
    return value


def config_name(model: Model) -> str:
    return str(plugin_config(model).get("name") or "")


def mps_root(model: Model) -> str:
    return str((model.section("devicePlugin").get("mps") or {}).get("root") or DEFAULT_MPS_ROOT)


def mig_env(model: Model) -> list[tuple[str, str]]:
    """``MIG_STRATEGY`` and, unless it is ``none``, ``NVIDIA_MIG_MONITOR_DEVICES=all``."""
    strategy = str(model.section("mig").get("strategy") or "single")
    pairs = [("MIG_STRATEGY", strategy)]
    if strategy != "none":
        pairs.append(("NVIDIA_MIG_MONITOR_DEVICES", "all"))
    return pairs


def _config_manager(model: Model, *, oneshot: bool, process: str) -> Obj:
    """config-manager, the init or the sidecar, without resources (docs/fidelity.md: the
    operator gives them the pod section's; ``validate`` warns, ``config-manager-resources``)."""
    dp = model.section("devicePlugin")
    cfg = plugin_config(model)
    env = [
        {"name": "ONESHOT", "value": "true" if oneshot else "false"},
        {"name": "KUBECONFIG", "value": ""},
        c.field_env("NODE_NAME", "spec.nodeName"),
        {"name": "NODE_LABEL", "value": CONFIG_LABEL},
        {"name": "CONFIG_FILE_SRCDIR", "value": "/available-configs"},
        {"name": "CONFIG_FILE_DST", "value": "/config/config.yaml"},
        {"name": "DEFAULT_CONFIG", "value": str(cfg.get("default") or "")},
        {"name": "FALLBACK_STRATEGIES", "value": "empty"},
        {"name": "SEND_SIGNAL", "value": "false" if oneshot else "true"},
        {"name": "SIGNAL", "value": "" if oneshot else "1"},
        {"name": "PROCESS_TO_SIGNAL", "value": "" if oneshot else process},
    ]
    ctr: Obj = {
        "name": "config-manager-init" if oneshot else "config-manager",
        "image": c.image_ref(dp),
        "imagePullPolicy": dp.get("imagePullPolicy", "IfNotPresent"),
        "command": ["config-manager"],
        "env": env,
        "volumeMounts": [c.mount("available-configs", "/available-configs"), c.mount("config", "/config")],
    }
    if not oneshot:
        # The sidecar signals the plugin's process (shared PID namespace); the one-shot init
        # only copies a file and runs unprivileged, as in the operator's asset.
        ctr["securityContext"] = {"privileged": True}
    return ctr


def _named(env: Any, name: str) -> bool:
    return any(isinstance(e, dict) and e.get("name") == name for e in env or [])


def apply_plugin_config(model: Model, pod: Obj, main: Obj, process: str, section: dict[str, Any]) -> None:
    """Wire the plugin-config ConfigMap into a pod (device plugin, GFD, MPS daemon) when one is
    named; ``section`` is the pod's values section (its env)."""
    name = config_name(model)
    if not name:
        return
    env = main.setdefault("env", [])
    # the device plugin's env takes devicePlugin.env last (TransformDevicePlugin: after
    # handleDevicePluginConfig), so the user's CONFIG_FILE wins there; GFD's does not
    if not (process == "nvidia-device-plugin" and _named(section.get("env"), "CONFIG_FILE")):
        c.set_env(env, "CONFIG_FILE", "/config/config.yaml")
    main.setdefault("volumeMounts", []).append(c.mount("config", "/config"))
    pod.setdefault("initContainers", []).append(_config_manager(model, oneshot=True, process=process))
    pod["containers"].append(_config_manager(model, oneshot=False, process=process))
    pod["volumes"] += [{"name": "available-configs", "configMap": {"name": name}}, {"name": "config", "emptyDir": {}}]
    if not pod.get("hostPID"):
        pod["shareProcessNamespace"] = True


def _env(model: Model) -> list[Obj]:
    dp = model.section("devicePlugin")
    cdi = model.section("cdi").get("enabled", False)
    pairs: list[tuple[str, str]] = [
        ("PASS_DEVICE_SPECS", "true"),
        ("FAIL_ON_INIT_ERROR", "true"),
        ("DEVICE_LIST_STRATEGY", "cdi-annotations,cdi-cri" if cdi else "envvar"),
        ("DEVICE_ID_STRATEGY", "uuid"),
        ("NVIDIA_VISIBLE_DEVICES", "all"),
        ("NVIDIA_DRIVER_CAPABILITIES", "all"),
        ("MPS_ROOT", mps_root(model)),
        *mig_env(model),
    ]
    if model.enabled("gds"):
        pairs += [("GDS_ENABLED", "true"), ("MOFED_ENABLED", "true")]
    if model.enabled("gdrcopy"):
        pairs.append(("GDRCOPY_ENABLED", "true"))
    if cdi:
        pairs += [("CDI_ENABLED", "true"), ("CDI_ANNOTATION_PREFIX", "cdi.k8s.io/")]
        if model.enabled("toolkit"):
            install_dir = str(model.section("toolkit").get("installDir") or "/usr/local/nvidia")
            pairs.append(("NVIDIA_CDI_HOOK_PATH", f"{install_dir}/toolkit/nvidia-cdi-hook"))
    return c.env_list(*pairs, extra=dp.get("env") or [])


def daemonset(model: Model) -> Obj:
    dp = model.section("devicePlugin")
    root = mps_root(model)
    container: Obj = {
        "name": "nvidia-device-plugin",
        "image": c.image_ref(dp),
        "imagePullPolicy": dp.get("imagePullPolicy", "IfNotPresent"),
        "command": ["/bin/entrypoint.sh"],
        "env": _env(model),
        "securityContext": {"privileged": True},
        "volumeMounts": [
            {"name": "nvidia-device-plugin-entrypoint", "mountPath": "/bin/entrypoint.sh", "subPath": "entrypoint.sh", "readOnly": True},
            c.mount("device-plugin", "/var/lib/kubelet/device-plugins"),
            c.mount("run-nvidia-validations", c.VALIDATIONS_DIR),
            c.mount("driver-install-dir", "/driver-root", propagation="HostToContainer"),
            c.mount("host-root", "/host", read_only=True, propagation="HostToContainer"),
            c.mount("cdi-root", "/var/run/cdi"),
            c.mount("mps-shm", "/dev/shm"),
            c.mount("mps-root", "/mps"),
        ],
    }
    if dp.get("args"):
        container["args"] = list(dp["args"])  # strings (the schema); passed on to the plugin by the entrypoint
    if dp.get("resources"):
        container["resources"] = c.resources(dp)
    pod: Obj = {
        "serviceAccountName": SA,
        "initContainers": [c.toolkit_validation_init(model)],
        "containers": [container],
        "volumes": [
            {"name": "nvidia-device-plugin-entrypoint", "configMap": {"name": ENTRYPOINT_CM, "defaultMode": 0o700}},
            c.host_path("device-plugin", "/var/lib/kubelet/device-plugins"),
            c.host_path("run-nvidia-validations", c.VALIDATIONS_DIR, "DirectoryOrCreate"),
            c.host_path("driver-install-dir", c.driver_install_dir(model), "DirectoryOrCreate"),
            c.host_path("host-root", c.host_root(model)),
            c.host_path("cdi-root", "/var/run/cdi", "DirectoryOrCreate"),
            c.host_path("mps-root", root, "DirectoryOrCreate"),
            c.host_path("mps-shm", f"{root}/shm"),
        ],
    }
    apply_plugin_config(model, pod, container, "nvidia-device-plugin", dp)
    return c.gpu_client_daemonset(NAME, model, operand="device-plugin", pod_spec=pod, section=c.with_validator_secrets(model, dp), gpu_container="nvidia-device-plugin")


def _config_text(value: Any) -> str:
    """A config file's text: strings as given, mappings dumped as YAML."""
    if isinstance(value, str):
        return value
    return yamlio.dump(value)


def config_created(model: Model) -> bool:
    """Is the plugin-config ConfigMap rendered: ``devicePlugin.config.create``, whatever the
    device plugin's and GFD's switches say, as the operator's chart creates it (its component,
    ``plugin-config``, is on its own: GFD mounts it without the device plugin too)."""
    return bool(plugin_config(model).get("create"))


def config_map(model: Model) -> list[Obj]:
    """The plugin-config ConfigMap from ``devicePlugin.config.data`` when ``create`` is set."""
    cfg = plugin_config(model)
    if not cfg.get("create"):
        return []
    # The chart also skips it when ``data`` is empty; here ``validate`` refuses create without
    # a name and warns on create without data, so the object depends on one switch only (the
    # Helm chart varies switches one at a time).
    data = cfg.get("data") or {}
    obj = c.config_map(config_name(model), model, {str(k): _config_text(v) for k, v in sorted(data.items())}, lbls=c.labels(NAME))
    if not data:
        obj.pop("data", None)
    return [obj]


CONFIG_MANAGER_VERBS = ["list", "watch"]
"""What config-manager asks of the API: an informer on its own node (list and watch of
``nodes`` with a ``metadata.name`` field selector), nothing else."""


def config_manager_rbac(sa: str, model: Model) -> list[Obj]:
    """The ClusterRole and binding the config-manager sidecar needs; none without a sidecar.

    Without them the pod's ServiceAccount is bound to nothing and :mod:`renderer.security`
    mounts no token: the device plugin, GFD and the MPS daemon never call the API themselves.
    """
    if not config_name(model):
        return []
    return [c.cluster_role(sa, [c.rule([""], ["nodes"], CONFIG_MANAGER_VERBS)]), c.cluster_role_binding(sa, model)]


def build(model: Model) -> list[Obj]:
    return [
        c.service_account(SA, model),
        *config_manager_rbac(SA, model),
        c.config_map(ENTRYPOINT_CM, model, {"entrypoint.sh": entrypoint(model)}, lbls=c.labels(NAME)),
        daemonset(model),
    ]
