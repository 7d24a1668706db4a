"""MPS control daemon: runs ``nvidia-cuda-mps-control`` on nodes whose plugin config shares GPUs by MPS.

Scheduled only where GPU feature discovery has labelled ``nvidia.com/mps.capable=true`` (it does
so when the node's device-plugin config asks for MPS sharing), so with no MPS config nothing
runs. It is switched with ``devicePlugin``. Its own ServiceAccount (the operator's asset runs it
as the device plugin's ``nvidia-device-plugin``) holds only its config-manager's rules.
"""

from __future__ import annotations

from renderer.components import common as c
from renderer.components import device_plugin as dpl
from renderer.components.common import Obj
from renderer.model import Model

NAME = "nvidia-device-plugin-mps-control-daemon"
SA = NAME


def affinity() -> Obj:
    """The device plugin's deploy affinity, plus ``nvidia.com/mps.capable=true``."""
    base = c.deploy_affinity("device-plugin")
    term = base["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"][0]
    term["matchExpressions"].append({"key": "nvidia.com/mps.capable", "operator": "In", "values": ["true"]})
    return base


def daemonset(model: Model) -> Obj:
    dp = model.section("devicePlugin")
    root = dpl.mps_root(model)
    image = c.image_ref(dp)
    pull = dp.get("imagePullPolicy", "IfNotPresent")
    main: Obj = {
        "name": "mps-control-daemon-ctr",
        "image": image,
        "imagePullPolicy": pull,
        "command": ["mps-control-daemon"],
        "env": c.env_list(
            ("NVIDIA_VISIBLE_DEVICES", "all"),
            ("NVIDIA_DRIVER_CAPABILITIES", "compute,utility"),
            *dpl.mig_env(model),
        ),
        "securityContext": {"privileged": True},
        "volumeMounts": [c.mount("mps-shm", "/dev/shm"), c.mount("mps-root", "/mps")],
    }
    main["env"].insert(0, c.field_env("NODE_NAME", "spec.nodeName"))
    if dp.get("resources"):
        main["resources"] = c.resources(dp)
    mounts_init: Obj = {
        "name": "mps-control-daemon-mounts",
        "image": image,
        "imagePullPolicy": pull,
        "command": ["mps-control-daemon", "mount-shm"],
        "securityContext": {"privileged": True},
        "volumeMounts": [c.mount("mps-root", "/mps", propagation="Bidirectional")],
    }
    pod: Obj = {
        "serviceAccountName": SA,
        "hostPID": True,
        "affinity": affinity(),
        "initContainers": [
            c.toolkit_validation_init(model),
            c.init_resources(mounts_init, model, dp),  # v26.7: the init gets devicePlugin.resources
        ],
        "containers": [main],
        "volumes": [
            c.host_path("run-nvidia-validations", c.VALIDATIONS_DIR, "DirectoryOrCreate"),
            c.host_path("mps-root", root, "DirectoryOrCreate"),
            c.host_path("mps-shm", f"{root}/shm"),
        ],
    }
    dpl.apply_plugin_config(model, pod, main, "mps-control-daemon", dp)
    return c.gpu_client_daemonset(NAME, model, operand="device-plugin", pod_spec=pod, section=c.with_validator_secrets(model, dp), gpu_container="mps-control-daemon-ctr")


def build(model: Model) -> list[Obj]:
    return [
        c.service_account(SA, model),
        *dpl.config_manager_rbac(SA, model),
        daemonset(model),
    ]
