"""The DRA validator on ``resourceAllocation: dra`` pools (the operator's ``state-dra-validation``).

It stands in for the operator validator there (that one's ``plugin-validation`` waits for
``nvidia.com/gpu``, which a DRA node never advertises): ``driver-validation`` and
``toolkit-validation`` write the markers the other operands wait for, then ``gpu-validation``
runs ``nvidia-smi -L`` on a GPU taken through an admin-access ResourceClaimTemplate, which
proves the kubelet plugin prepares claims on this node. The main container sleeps and removes
the markers when it stops, so a driver reload re-runs the chain.
"""

from __future__ import annotations

from typing import Any

from renderer.components import common as c
from renderer.components import dra_common as d
from renderer.components.common import Obj
from renderer.model import Model

NAME = "nvidia-dra-validator"
CLAIM = "nvidia-dra-validator-gpu"
REQUEST = "validation-gpu"


def pull_settings(model: Model) -> dict[str, Any]:
    """``validator`` with the DRA driver's pull secrets after its own: the operator's
    ``state-dra-validation`` pod takes ``draDriver.imagePullSecrets`` (its GPUCluster spec),
    gpu-render's other validator pods take ``validator.imagePullSecrets``; with both, a registry
    secret named in either place reaches the pod."""
    joined = c.with_validator_secrets(model, model.section("draDriver"))["imagePullSecrets"]
    return {**model.section("validator"), "imagePullSecrets": joined}


def daemonset(model: Model) -> Obj:
    v = model.section("validator")
    markers = c.mount("run-nvidia-validations", c.VALIDATIONS_DIR, propagation="Bidirectional")
    toolkit = c.validation_container(model, "toolkit", c.env_list(("WITH_WAIT", "false"), ("COMPONENT", "toolkit"), ("NVIDIA_VISIBLE_DEVICES", "all")), [markers])
    gpu: Obj = {
        "name": "gpu-validation",
        "image": c.validator_image(model),
        "imagePullPolicy": v.get("imagePullPolicy", "IfNotPresent"),
        "command": ["sh", "-c", "nvidia-smi -L"],
        "resources": {"claims": [{"name": REQUEST}]},
    }
    main: Obj = {
        "name": NAME,
        "image": c.validator_image(model),
        "imagePullPolicy": v.get("imagePullPolicy", "IfNotPresent"),
        "command": ["sh", "-c"],
        "args": ["echo all validations are successful; sleep infinity"],
        "securityContext": {"privileged": True},
        "lifecycle": {"preStop": {"exec": {"command": ["/bin/sh", "-c", f"rm -f {c.VALIDATIONS_DIR}/*-ready"]}}},
        "volumeMounts": [dict(markers)],
    }
    pod: Obj = {
        "serviceAccountName": NAME,
        "priorityClassName": "system-node-critical",
        "affinity": d.pool_affinity(model.dra_pools, d.VALIDATOR_LABEL),
        "initContainers": [c.driver_validation_init(model), toolkit, gpu],
        "containers": [main],
        "resourceClaims": [{"name": REQUEST, "resourceClaimTemplateName": CLAIM}],
        "volumes": [
            c.host_path("run-nvidia-validations", c.VALIDATIONS_DIR, "DirectoryOrCreate"),
            c.host_path("driver-install-dir", c.driver_install_dir(model), "DirectoryOrCreate"),
            *c.host_root_volumes(model),
        ],
    }
    ds = c.gpu_client_daemonset(NAME, model, operand=d.VALIDATOR_LABEL, pod_spec=pod, section=pull_settings(model), gpu_container="toolkit-validation")
    spec = ds["spec"]["template"]["spec"]
    if "priorityClassName" not in spec:
        spec["priorityClassName"] = "system-node-critical"
    return ds


def build(model: Model) -> list[Obj]:
    return [
        c.service_account(NAME, model),
        d.admin_claim_template(CLAIM, REQUEST, model, d.RESOURCE_API),
        daemonset(model),
    ]


enabled = d.enabled
