"""GPU feature discovery: labels GPU nodes (``nvidia.com/gpu.product``, MIG, sharing, CUDA...).

Labels go through NFD: the NodeFeature API (the Role below; GFD's default since v0.19), or the
``features.d`` host directory when ``gfd.env`` sets ``USE_NODE_FEATURE_API`` false. Its
ServiceAccount is bound (and a token mounted) only for the API and for the config-manager sidecar. Shares the device plugin's config (time-slicing/MPS) when one is named.
"""

from __future__ import annotations

from renderer.components import common as c
from renderer.components import device_plugin as dpl
from renderer.components.common import Obj
from renderer.model import Model
from renderer.releasegate import has

NAME = "gpu-feature-discovery"
SA = "nvidia-gpu-feature-discovery"
FEATURES_DIR = "/etc/kubernetes/node-feature-discovery/features.d"


def daemonset(model: Model) -> Obj:
    gfd = model.section("gfd")
    main: Obj = {
        "name": "gpu-feature-discovery",
        "image": c.image_ref(gfd),
        "imagePullPolicy": gfd.get("imagePullPolicy", "IfNotPresent"),
        "command": ["gpu-feature-discovery"],
        "env": [
            c.field_env("NAMESPACE", "metadata.namespace"),
            c.field_env("NODE_NAME", "spec.nodeName"),
            *([c.field_env("POD_NAME", "metadata.name")] if has(model.release, "v26.3") else []),  # v26.3: owner of its NodeFeature
            *c.env_list(("GFD_SLEEP_INTERVAL", "60s"), ("GFD_FAIL_ON_INIT_ERROR", "true"), *dpl.mig_env(model)),
        ],
        "securityContext": {"privileged": True},
        "volumeMounts": [
            c.mount("output-dir", FEATURES_DIR),
            c.mount("host-sys", "/sys", read_only=True),
        ],
    }
    c.apply_container_settings(main, gfd)
    for name, value in dpl.mig_env(model):
        # TransformGPUDiscoveryPlugin runs applyMIGConfiguration after gfd.env: mig.strategy wins
        c.set_env(main["env"], name, value)
    pod: Obj = {
        "serviceAccountName": SA,
        "initContainers": [c.toolkit_validation_init(model)],
        "containers": [main],
        "volumes": [
            c.host_path("output-dir", FEATURES_DIR, "DirectoryOrCreate"),
            c.host_path("host-sys", "/sys", "Directory"),
            c.host_path("run-nvidia-validations", c.VALIDATIONS_DIR, "DirectoryOrCreate"),
        ],
    }
    dpl.apply_plugin_config(model, pod, main, "gpu-feature-discovery", gfd)
    return c.gpu_client_daemonset(NAME, model, operand="gpu-feature-discovery", pod_spec=pod, section=c.with_validator_secrets(model, gfd), gpu_container="gpu-feature-discovery")


def uses_node_feature_api(model: Model) -> bool:
    """GFD publishes NodeFeature objects unless told not to (``USE_NODE_FEATURE_API``: on by
    default in GFD v0.19 and later, unset by the operator); then it writes the features.d file.
    It GETs its own pod (owner references) and gets, creates and updates its NodeFeature."""
    for item in model.section("gfd").get("env") or []:
        if isinstance(item, dict) and item.get("name") in ("USE_NODE_FEATURE_API", "GFD_USE_NODE_FEATURE_API"):
            return str(item.get("value", "")).lower() not in ("false", "0", "f", "no")
    return True


def build(model: Model) -> list[Obj]:
    out = [c.service_account(SA, model)]
    if uses_node_feature_api(model):
        out += [
            c.role(
                SA,
                model,
                [
                    c.rule(["nfd.k8s-sigs.io"], ["nodefeatures"], ["get", "list", "watch", "create", "update"]),
                    c.rule([""], ["pods"], ["get"]),
                ],
            ),
            c.role_binding(SA, model),
        ]
    return [*out, *dpl.config_manager_rbac(SA, model), daemonset(model)]
