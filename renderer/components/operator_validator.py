"""Validator DaemonSet: the per-node ordering chain of the GPU stack.

Init containers run in order and each leaves a marker under ``/run/nvidia/validations``:
``driver-validation`` -> ``driver-ready``, ``toolkit-validation`` -> ``toolkit-ready``,
``cuda-validation`` (runs a CUDA sample in a pod it creates) -> ``cuda-ready``,
``plugin-validation`` (the node advertises GPUs) -> ``plugin-ready``. Every other operand waits
in its own init container for ``toolkit-ready``; the toolkit waits for ``driver-ready``. The main
container only sleeps and removes the markers when the pod stops, so a driver reload (which
evicts the validator) re-runs the whole chain.
"""

from __future__ import annotations

from renderer.components import common as c
from renderer.components import helpers as h
from renderer.components.common import Obj
from renderer.model import Model

NAME = "nvidia-operator-validator"

# Exactly the API calls of the v26.7 nvidia-validator (cmd/nvidia-validator/main.go): the CUDA
# and plugin workloads list/delete/create/get their pod and GET the validator DaemonSet for its
# owner references; the driver validation LISTs the driver DaemonSets (isDriverManagedByOperator);
# every validation GETs its node.
def role_rules() -> list[Obj]:
    return [c.rule([""], ["pods"], ["create", "delete", "get", "list"]), c.rule(["apps"], ["daemonsets"], ["get", "list"])]


def cluster_role_rules() -> list[Obj]:
    return [c.rule([""], ["nodes"], ["get"])]


def _validation(model: Model, component: str, pairs: list[tuple[str, str]], *, fields: tuple[str, ...] = ()) -> Obj:
    v = model.section("validator")
    # the pod's own fields right after COMPONENT, before the rest and the section's env, as the
    # operator's asset has them: a `$(NODE_NAME)` in that env is expanded from them
    own = [c.field_env(name, "spec.nodeName" if name == "NODE_NAME" else "metadata.namespace") for name in fields]
    base = [*c.env_list(("WITH_WAIT", "false"), ("COMPONENT", component)), *own, *c.env_list(*pairs)]
    env = c.env_list(extra=[*base, *((v.get(component) or {}).get("env") or [])])
    return c.validation_container(model, component, env, [c.mount("run-nvidia-validations", c.VALIDATIONS_DIR, propagation="Bidirectional")])


def _workload_env(model: Model) -> list[tuple[str, str]]:
    """What the validations that start a workload pod need to build it like this pod."""
    v = model.section("validator")
    secrets = [c.secret_name(s) for s in v.get("imagePullSecrets") or []]
    pairs = [("VALIDATOR_IMAGE", c.validator_image(model)), ("VALIDATOR_IMAGE_PULL_POLICY", str(v.get("imagePullPolicy", "IfNotPresent")))]
    if secrets:  # the operator sets these two only when there is something to say
        pairs.append(("VALIDATOR_IMAGE_PULL_SECRETS", ",".join(secrets)))
    runtime_class = c.runtime_class_name(model)
    if runtime_class:
        pairs.append(("VALIDATOR_RUNTIME_CLASS", runtime_class))
    return pairs


def init_chain(model: Model) -> list[Obj]:
    """driver -> toolkit -> cuda -> plugin (plugin only when the device plugin is rendered)."""
    strategy = str(model.section("mig").get("strategy") or "single")
    chain = [
        c.driver_validation_init(model),
        _validation(model, "toolkit", [("NVIDIA_VISIBLE_DEVICES", "all")]),
        _validation(model, "cuda", _workload_env(model), fields=("NODE_NAME", "OPERATOR_NAMESPACE")),
    ]
    if model.enabled("devicePlugin"):
        pairs = [("WITH_WORKLOAD", "false"), ("MIG_STRATEGY", strategy), *_workload_env(model)]
        chain.append(_validation(model, "plugin", pairs, fields=("NODE_NAME", "OPERATOR_NAMESPACE")))
    return chain


def daemonset(model: Model) -> Obj:
    v = model.section("validator")
    main = h.validator_main(model, NAME, "*-ready")
    c.apply_container_settings(main, v, args=False)
    pod: Obj = {
        "serviceAccountName": NAME,
        "initContainers": init_chain(model),
        "containers": [main],
        "volumes": [
            c.host_path("run-nvidia-validations", c.VALIDATIONS_DIR, "DirectoryOrCreate"),
            c.host_path("driver-install-dir", c.driver_install_dir(model)),
            *c.host_root_volumes(model),
        ],
    }
    return c.gpu_client_daemonset(NAME, model, operand="operator-validator", pod_spec=pod, section=v, gpu_container="toolkit-validation")


def build(model: Model) -> list[Obj]:
    return [
        c.service_account(NAME, model),
        c.role(NAME, model, role_rules()),
        c.role_binding(NAME, model),
        c.cluster_role(NAME, cluster_role_rules()),
        c.cluster_role_binding(NAME, model),
        daemonset(model),
    ]
