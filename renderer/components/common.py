"""Pieces every component shares: labels, images, DaemonSet skeleton, validation init.

Builders return plain dicts. Nothing here reads files or the clock.
"""

from __future__ import annotations

import copy
from typing import Any

from renderer.jsondata import clone
from renderer.model import Model

Obj = dict[str, Any]

MANAGED_BY = {"app.kubernetes.io/managed-by": "gpu-render"}
VALIDATIONS_DIR = "/run/nvidia/validations"
PAUSED = "paused-for-driver-upgrade"


def image_ref(section: dict[str, Any], default_version: str = "") -> str:
    """``repository/image:version``, ``@sha256:...`` for digests, or the image alone."""
    repository = str(section.get("repository") or "")
    image = str(section.get("image") or "")
    version = str(section.get("version") or default_version or "")
    if not repository and not section.get("version") and image:
        return image
    ref = f"{repository}/{image}" if repository else image
    if version.startswith("sha256:"):
        return f"{ref}@{version}"
    return f"{ref}:{version}" if version else ref


def labels(app: str, component: str | None = None) -> dict[str, str]:
    out = {"app": app, "app.kubernetes.io/name": app, "app.kubernetes.io/part-of": "gpu-stack"}
    if component:
        out["app.kubernetes.io/component"] = component
    out.update(MANAGED_BY)
    return out


def meta(name: str, model: Model | None = None, *, lbls: dict[str, str] | None = None) -> Obj:
    out: Obj = {"name": name}
    if model is not None:
        out["namespace"] = model.namespace
    out["labels"] = dict(lbls) if lbls else dict(MANAGED_BY)
    return out


def service_account(name: str, model: Model) -> Obj:
    return {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": meta(name, model)}


def role(name: str, model: Model, rules: list[Obj]) -> Obj:
    return {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "Role",
        "metadata": meta(name, model),
        "rules": rules,
    }


def role_binding(name: str, model: Model, sa: str | None = None) -> Obj:
    return {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "RoleBinding",
        "metadata": meta(name, model),
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": name},
        "subjects": [{"kind": "ServiceAccount", "name": sa or name, "namespace": model.namespace}],
    }


def cluster_role(name: str, rules: list[Obj]) -> Obj:
    return {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRole",
        "metadata": meta(name),
        "rules": rules,
    }


def cluster_role_binding(name: str, model: Model, sa: str | None = None) -> Obj:
    return {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRoleBinding",
        "metadata": meta(name),
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": name},
        "subjects": [{"kind": "ServiceAccount", "name": sa or name, "namespace": model.namespace}],
    }


def rule(groups: list[str], resources: list[str], verbs: list[str]) -> Obj:
    return {"apiGroups": groups, "resources": resources, "verbs": verbs}


def deploy_affinity(operand: str, *, exclude: tuple[str, ...] = ("false", PAUSED)) -> Obj:
    """Schedule on GPU nodes unless the operand's deploy label opts the node out or pauses it."""
    return {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {
                        "matchExpressions": [
                            {"key": "nvidia.com/gpu.present", "operator": "In", "values": ["true"]},
                            {
                                "key": f"nvidia.com/gpu.deploy.{operand}",
                                "operator": "NotIn",
                                "values": list(exclude),
                            },
                        ]
                    }
                ]
            }
        }
    }


def env_list(*pairs: tuple[str, str], extra: list[Obj] | None = None) -> list[Obj]:
    """Env vars in order; ``extra`` (user env) overrides same-named entries in place."""
    out: list[Obj] = [{"name": k, "value": v} for k, v in pairs]
    for item in extra or []:
        for i, existing in enumerate(out):
            if existing["name"] == item.get("name"):
                out[i] = copy.deepcopy(item)
                break
        else:
            out.append(copy.deepcopy(item))
    return out


def host_path(name: str, path: str, kind: str | None = None) -> Obj:
    hp: Obj = {"path": path}
    if kind:
        hp["type"] = kind
    return {"name": name, "hostPath": hp}


def mount(name: str, path: str, *, read_only: bool = False, propagation: str | None = None) -> Obj:
    m: Obj = {"name": name, "mountPath": path}
    if read_only:
        m["readOnly"] = True
    if propagation:
        m["mountPropagation"] = propagation
    return m


def validator_image(model: Model) -> str:
    return image_ref(model.section("validator"))


def toolkit_validation_init(model: Model) -> Obj:
    """Init container that waits for the toolkit-ready marker written by the validator."""
    v = model.section("validator")
    return {
        "name": "toolkit-validation",
        "image": validator_image(model),
        "imagePullPolicy": v.get("imagePullPolicy", "IfNotPresent"),
        "command": ["sh", "-c"],
        "args": [
            f"until [ -f {VALIDATIONS_DIR}/toolkit-ready ]; do echo waiting for nvidia container stack to be setup; sleep 5; done"
        ],
        "securityContext": {"privileged": True},
        "volumeMounts": [mount("run-nvidia-validations", VALIDATIONS_DIR, propagation="HostToContainer")],
    }


def update_strategy(model: Model) -> Obj:
    ds = model.section("daemonsets")
    if ds.get("updateStrategy") == "OnDelete":
        return {"type": "OnDelete"}
    max_unavailable = ds.get("rollingUpdate", {}).get("maxUnavailable", "1")
    value: int | str = max_unavailable
    if isinstance(max_unavailable, str) and max_unavailable.isdigit():
        value = int(max_unavailable)
    return {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": value}}


def daemonset(
    name: str,
    model: Model,
    *,
    operand: str,
    pod_spec: Obj,
    component: str | None = None,
    section: dict[str, Any] | None = None,
    strategy: Obj | None = None,
    pod_annotations: dict[str, str] | None = None,
    extra_labels: dict[str, str] | None = None,
) -> Obj:
    """A DaemonSet with the common ``daemonsets.*`` settings applied."""
    common = model.section("daemonsets")
    lbls = labels(name, component)
    if extra_labels:
        lbls.update(extra_labels)
    pod_labels = dict(lbls)
    for k, v in (common.get("labels") or {}).items():
        if k not in ("app", "app.kubernetes.io/part-of"):
            pod_labels[k] = str(v)
    annotations = dict(common.get("annotations") or {})
    annotations.update(pod_annotations or {})
    spec = clone(pod_spec)  # JSON data: clone is several times faster than deepcopy
    spec.setdefault("affinity", deploy_affinity(operand))
    if common.get("priorityClassName"):
        spec["priorityClassName"] = common["priorityClassName"]
    spec["tolerations"] = copy.deepcopy(common.get("tolerations") or [])
    if common.get("podSecurityContext"):
        spec["securityContext"] = copy.deepcopy(common["podSecurityContext"])
    sec = section or {}
    pull_secrets = sec.get("imagePullSecrets") or []
    if pull_secrets:
        spec["imagePullSecrets"] = [{"name": s} if isinstance(s, str) else s for s in pull_secrets]
    if sec.get("hostNetwork"):
        spec["hostNetwork"] = True
        spec["dnsPolicy"] = "ClusterFirstWithHostNet"
    template_meta: Obj = {"labels": pod_labels}
    if annotations:
        template_meta["annotations"] = {k: str(v) for k, v in annotations.items()}
    selector = {"app": name}
    ds_meta = meta(name, model, lbls=lbls)
    return {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": ds_meta,
        "spec": {
            "selector": {"matchLabels": selector},
            "updateStrategy": strategy or update_strategy(model),
            "template": {"metadata": template_meta, "spec": spec},
        },
    }


def runtime_class_name(model: Model) -> str | None:
    """The runtime class operand pods use, or None where the operator would not set one."""
    cdi = model.section("cdi")
    if cdi.get("nriPluginEnabled"):
        return None
    if not cdi.get("enabled") and model.values["cluster"].get("containerRuntime") == "crio":
        return None
    return str(model.values["cluster"].get("runtimeClass") or "nvidia")


def resources(section: dict[str, Any]) -> Obj:
    return copy.deepcopy(section.get("resources") or {})
