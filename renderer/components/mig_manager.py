"""MIG manager: applies the MIG profile named by the node label ``nvidia.com/mig.config``.

Since mig-manager v0.15 profiles are generated from the hardware; the operator's default
profile ConfigMap (kept as upstream data) is mounted as the fallback file. A custom config
(``migManager.config.name``, optionally created from ``config.data``) replaces it.
"""

from __future__ import annotations

from renderer import yamlio
from renderer.components import common as c
from renderer.components import facts
from renderer.components import helpers as h
from renderer.components.common import Obj
from renderer.model import Model
from renderer.releasegate import has

NAME = "nvidia-mig-manager"
DEFAULT_CONFIG = "default-mig-parted-config"
DEFAULT_CLIENTS = "default-gpu-clients"
ENTRYPOINT = f"{NAME}-entrypoint"
GPU_CLIENTS = (
    "nvsm.service",
    "nvsm-mqtt.service",
    "nvsm-core.service",
    "nvsm-api-gateway.service",
    "nvsm-notifier.service",
    "nv_peer_mem.service",
    "nvidia-dcgm.service",
    "dcgm.service",
    "dcgm-exporter.service",
)
"""Host systemd services mig-manager stops while it repartitions (operator's default list)."""

ENTRYPOINT_SCRIPT = """\
#!/bin/sh
until [ -f /run/nvidia/validations/driver-ready ]
do
  echo "waiting for the driver validations to be ready..."
  sleep 5
done
set -o allexport
cat /run/nvidia/validations/driver-ready
. /run/nvidia/validations/driver-ready
export WITH_SHUTDOWN_HOST_GPU_CLIENTS=$IS_HOST_DRIVER
echo "WITH_SHUTDOWN_HOST_GPU_CLIENTS=$WITH_SHUTDOWN_HOST_GPU_CLIENTS"
echo "Starting nvidia-mig-manager"
exec nvidia-mig-manager
"""


def custom_config_name(model: Model) -> str:
    return str(model.section("migManager").get("config", {}).get("name") or "")


def clients_config_name(model: Model) -> str:
    return str(model.section("migManager").get("gpuClientsConfig", {}).get("name") or "")


def _configmap(name: str, model: Model, data: dict[str, str]) -> Obj:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": c.meta(name, model, lbls=c.labels(NAME)), "data": data}


def configmaps(model: Model) -> list[Obj]:
    """Default profiles and GPU clients unless custom ones are named; the user's config if created here."""
    out: list[Obj] = []
    cfg = model.section("migManager").get("config", {})
    if not custom_config_name(model):
        out.append(_configmap(DEFAULT_CONFIG, model, facts.configmap_data(facts.MIG_PARTED_CONFIG)))
    elif cfg.get("create") and cfg.get("data"):
        data = {str(k): v if isinstance(v, str) else yamlio.dump(v) for k, v in cfg["data"].items()}
        out.append(_configmap(custom_config_name(model), model, data))
    if not clients_config_name(model):
        clients = yamlio.dump({"version": "v1", "systemd-services": list(GPU_CLIENTS)})
        out.append(_configmap(DEFAULT_CLIENTS, model, {"clients.yaml": clients}))
    out.append(_configmap(ENTRYPOINT, model, {"entrypoint.sh": ENTRYPOINT_SCRIPT}))
    return out


def _default_file(model: Model) -> bool:
    """The default profiles are the fallback file ``config-default.yaml`` (``DEFAULT_CONFIG_FILE``,
    for when the MIG manager cannot derive profiles from the hardware): from v26.3. v25.10 mounts
    them as ``config.yaml`` and points ``CONFIG_FILE`` there, as for a custom config."""
    return has(model.release, "v26.3")


def _env(model: Model) -> list[Obj]:
    mm = model.section("migManager")
    pairs: list[tuple[str, str]] = [("GPU_CLIENTS_FILE", "/gpu-clients/clients.yaml")]
    if custom_config_name(model) or not _default_file(model):
        pairs.append(("CONFIG_FILE", "/mig-parted-config/config.yaml"))
    else:
        pairs.append(("DEFAULT_CONFIG_FILE", "/mig-parted-config/config-default.yaml"))
    if model.section("cdi").get("enabled"):
        pairs.append(("CDI_ENABLED", "true"))
        if model.enabled("toolkit"):
            install_dir = str(model.section("toolkit").get("installDir", "/usr/local/nvidia"))
            pairs.append(("NVIDIA_CDI_HOOK_PATH", f"{install_dir}/toolkit/nvidia-cdi-hook"))
    fields = [
        h.field_env("NODE_NAME", "spec.nodeName"),
        h.field_env("POD_NAME", "metadata.name"),
        h.field_env("POD_NAMESPACE", "metadata.namespace"),
        h.field_env("DEFAULT_GPU_CLIENTS_NAMESPACE", "metadata.namespace"),
    ]
    return fields + c.env_list(*pairs, extra=mm.get("env") or [])


def daemonset(model: Model) -> Obj:
    mm = model.section("migManager")
    config_volume: Obj = {"name": custom_config_name(model) or DEFAULT_CONFIG}
    if not custom_config_name(model) and _default_file(model):
        config_volume["items"] = [{"key": "config.yaml", "path": "config-default.yaml"}]
    container = h.main_container(
        NAME,
        mm,
        command=["/bin/sh", "-c"],
        env=_env(model),
        securityContext={"privileged": True},
        volumeMounts=[
            {"name": ENTRYPOINT, "mountPath": "/bin/entrypoint.sh", "subPath": "entrypoint.sh", "readOnly": True},
            c.mount("run-nvidia-validations", c.VALIDATIONS_DIR),
            c.mount("host-sys", "/sys"),
            c.mount("host-root", "/host", propagation="HostToContainer"),
            c.mount("gpu-clients", "/gpu-clients"),
            c.mount("mig-parted-config", "/mig-parted-config"),
            c.mount("driver-install-dir", "/driver-root", propagation="HostToContainer"),
            c.mount("cdi-root", "/var/run/cdi"),
        ],
    )
    container.setdefault("args", ["/bin/entrypoint.sh"])
    pod: Obj = {
        "serviceAccountName": NAME,
        "hostPID": True,
        "hostIPC": True,
        "initContainers": [c.toolkit_validation_init(model)],
        "containers": [container],
        "volumes": [
            {"name": ENTRYPOINT, "configMap": {"name": ENTRYPOINT, "defaultMode": 448}},
            c.host_path("host-sys", "/sys", "Directory"),
            c.host_path("run-nvidia-validations", c.VALIDATIONS_DIR, "DirectoryOrCreate"),
            c.host_path("driver-install-dir", h.driver_install_dir(model), "DirectoryOrCreate"),
            c.host_path("host-root", h.host_root(model)),
            {"name": "gpu-clients", "configMap": {"name": clients_config_name(model) or DEFAULT_CLIENTS}},
            {"name": "mig-parted-config", "configMap": config_volume},
            c.host_path("cdi-root", "/var/run/cdi", "DirectoryOrCreate"),
        ],
    }
    rc = c.runtime_class_name(model)
    if rc:
        pod["runtimeClassName"] = rc
    return c.daemonset(NAME, model, operand="mig-manager", pod_spec=pod, section=c.with_validator_secrets(model, mm), pod_annotations=h.nri_annotation(model, NAME))


def build(model: Model) -> list[Obj]:
    return [
        c.service_account(NAME, model),
        c.role(
            NAME,
            model,
            [
                c.rule([""], ["pods"], ["delete", "get", "list", "watch"]),
                c.rule([""], ["configmaps"], ["create", "get", "list", "patch", "update"]),
            ],
        ),
        c.role_binding(NAME, model),
        c.cluster_role(
            NAME,
            [
                c.rule([""], ["nodes"], ["get", "list", "patch", "update", "watch"]),
                c.rule([""], ["pods"], ["list"]),
            ],
        ),
        c.cluster_role_binding(NAME, model),
        *configmaps(model),
        daemonset(model),
    ]
