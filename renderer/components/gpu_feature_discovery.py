"""GPU feature discovery: labels GPU nodes (``nvidia.com/gpu.product``, MIG, sharing, CUDA...).

Labels go through NFD: the NodeFeature API (the RBAC below) and the ``features.d`` host
directory as a fallback. Shares the device plugin's config (time-slicing/MPS) when one is named.
"""

from __future__ import annotations

from renderer.components import common as c
from renderer.components import device_plugin as dpl
from renderer.components.common import Obj
from renderer.model import Model

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
            c.field_env("POD_NAME", "metadata.name"),
            *c.env_list(("GFD_SLEEP_INTERVAL", "60s"), ("GFD_FAIL_ON_INIT_ERROR", "true"), *dpl.mig_env(model)),
        ],
        "securityContext": {"privileged": True},
        "volumeMounts": [
            c.mount("output-dir", FEATURES_DIR),
            c.mount("host-sys", "/sys", read_only=True),
            c.mount("driver-install-dir", "/driver-root", read_only=True, propagation="HostToContainer"),
        ],
    }
    c.apply_container_settings(main, gfd)
    pod: Obj = {
        "serviceAccountName": SA,
        "initContainers": [c.toolkit_validation_init(model)],
        "containers": [main],
        "volumes": [
            c.host_path("output-dir", FEATURES_DIR, "DirectoryOrCreate"),
            c.host_path("host-sys", "/sys", "Directory"),
            c.host_path("driver-install-dir", c.driver_install_dir(model), "DirectoryOrCreate"),
            c.host_path("run-nvidia-validations", c.VALIDATIONS_DIR, "DirectoryOrCreate"),
        ],
    }
    dpl.apply_plugin_config(model, pod, main, "gpu-feature-discovery")
    return c.gpu_client_daemonset(NAME, model, operand="gpu-feature-discovery", pod_spec=pod, section=gfd, gpu_container="gpu-feature-discovery")


def build(model: Model) -> list[Obj]:
    return [
        c.service_account(SA, model),
        c.role(
            SA,
            model,
            [
                c.rule(["nfd.k8s-sigs.io"], ["nodefeatures"], ["get", "list", "watch", "create", "update"]),
                c.rule([""], ["pods"], ["get"]),
            ],
        ),
        c.role_binding(SA, model),
        c.cluster_role(SA, [c.rule([""], ["nodes"], ["get", "list", "watch"])]),
        c.cluster_role_binding(SA, model),
        daemonset(model),
    ]
