"""Confidential computing manager (``sandboxWorkloads.mode: kata``): sets the GPUs' CC mode."""

from __future__ import annotations

from renderer.components import common as c
from renderer.components import helpers as h
from renderer.components.common import Obj
from renderer.model import Model

NAME = "nvidia-cc-manager"


def enabled(model: Model) -> bool:
    return h.sandbox_enabled(model, "ccManager", mode="kata")


def daemonset(model: Model) -> Obj:
    cc = model.section("ccManager")
    pairs = [("NVIDIA_VISIBLE_DEVICES", "void")]
    if cc.get("defaultMode"):
        pairs.append(("DEFAULT_CC_MODE", str(cc["defaultMode"])))
    # OPERATOR_NAMESPACE: where k8s-cc-manager waits for the pods it pauses to go (its default,
    # gpu-operator, is wrong for any other cluster.namespace; the operator's asset leaves it unset).
    env = [h.field_env("NODE_NAME", "spec.nodeName"), *c.env_list(*pairs), h.field_env("OPERATOR_NAMESPACE", "metadata.namespace")]
    container = h.main_container(
        NAME,
        cc,
        env=c.env_list(extra=env + list(cc.get("env") or [])),
        securityContext={"privileged": True, "seLinuxOptions": {"level": "s0"}},
        lifecycle={"preStop": {"exec": {"command": ["/bin/rm", "-f", f"{c.VALIDATIONS_DIR}/.cc-manager-ctr-ready"]}}},
        volumeMounts=[c.mount("host-sys", "/sys"), c.mount("run-nvidia", "/run/nvidia")],
    )
    container.setdefault("resources", {"limits": {"memory": "200Mi"}, "requests": {"cpu": "100m", "memory": "200Mi"}})
    pod: Obj = {
        "serviceAccountName": NAME,
        "terminationGracePeriodSeconds": 30,
        "containers": [container],
        "volumes": [c.host_path("host-sys", "/sys", "Directory"), c.host_path("run-nvidia", "/run/nvidia", "DirectoryOrCreate")],
    }
    return c.daemonset(NAME, model, operand="cc-manager", pod_spec=pod, section=cc)


def build(model: Model) -> list[Obj]:
    return [
        c.service_account(NAME, model),
        # k8s-cc-manager lists the paused operands' pods on its node; it never gets or watches them.
        c.role(NAME, model, [c.rule([""], ["pods"], ["list"])]),
        c.role_binding(NAME, model),
        c.cluster_role(NAME, [c.rule([""], ["nodes"], ["get", "list", "patch", "watch"])]),
        c.cluster_role_binding(NAME, model),
        daemonset(model),
    ]
