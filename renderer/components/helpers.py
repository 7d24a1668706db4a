"""Small helpers several operand builders share, next to :mod:`renderer.components.common`."""

from __future__ import annotations

from typing import Any

from renderer.components import common as c
from renderer.components.common import Obj
from renderer.model import Model


def nri_annotation(model: Model, container: str) -> dict[str, str]:
    """In NRI plugin mode the operator asks for the GPU by pod annotation, not runtime class."""
    if not model.nri_plugin:
        return {}
    return {f"nvidia.cdi.k8s.io/container.{container}": "management.nvidia.com/gpu=all"}


def field_env(name: str, path: str) -> Obj:
    return {"name": name, "valueFrom": {"fieldRef": {"fieldPath": path}}}


def host_root(model: Model) -> str:
    return str(model.section("hostPaths").get("rootFS", "/"))


def driver_install_dir(model: Model) -> str:
    return str(model.section("hostPaths").get("driverInstallDir", "/run/nvidia/driver"))


def main_container(name: str, section: dict[str, Any], **fields: Any) -> Obj:
    """A container with the image, pull policy, args and resources of its values section."""
    ctr: Obj = {"name": name, "image": c.image_ref(section), "imagePullPolicy": section.get("imagePullPolicy", "IfNotPresent")}
    ctr.update(fields)
    if section.get("args"):
        ctr["args"] = list(section["args"])
    if section.get("resources"):
        ctr["resources"] = c.resources(section)
    return ctr


def service_monitor(name: str, model: Model, port: str, job_label: str, settings: dict[str, Any] | None = None) -> Obj:
    """A ServiceMonitor for the Service ``name``; ``settings`` holds the values' serviceMonitor keys."""
    settings = settings or {}
    lbls = c.labels(name)
    lbls.update({str(k): str(v) for k, v in (settings.get("additionalLabels") or {}).items()})
    endpoint: Obj = {"port": port, "path": "/metrics"}
    if settings.get("interval"):
        endpoint["interval"] = str(settings["interval"])
    if settings.get("scrapeTimeout"):
        endpoint["scrapeTimeout"] = str(settings["scrapeTimeout"])
    if "honorLabels" in settings:
        endpoint["honorLabels"] = bool(settings["honorLabels"])
    if settings.get("relabelings"):
        endpoint["relabelings"] = [dict(r) for r in settings["relabelings"]]
    return {
        "apiVersion": "monitoring.coreos.com/v1",
        "kind": "ServiceMonitor",
        "metadata": c.meta(name, model, lbls=lbls),
        "spec": {
            "endpoints": [endpoint],
            "jobLabel": job_label,
            "namespaceSelector": {"matchNames": [model.namespace]},
            "selector": {"matchLabels": {"app": name}},
        },
    }


def service_monitor_possible(model: Model) -> bool:
    """The cluster has the ServiceMonitor CRD (``cluster.capabilities.serviceMonitor``)."""
    caps = model.values["cluster"].get("capabilities") or {}
    return bool(caps.get("serviceMonitor", False))


def sandbox_enabled(model: Model, key: str = "", mode: str = "") -> bool:
    """Sandbox operands exist only with ``sandboxWorkloads.enabled`` (and their mode, if any, on
    a release that has modes)."""
    sandbox = model.section("sandboxWorkloads")
    if not sandbox.get("enabled"):
        return False
    if mode and model.sandbox_mode and model.sandbox_mode != mode:  # v25.10 has no mode
        return False
    return not key or model.enabled(key)


def default_workload(model: Model) -> str:
    return str(model.section("sandboxWorkloads").get("defaultWorkload", "container"))


IDLE = ["echo all validations are successful; while true; do sleep 86400; done"]
"""The validator's main container once its validations are through (the operator's asset); the
chart values carry it in place of an empty ``validator.args`` (``helm_values.chart_values``)."""


def validator_main(model: Model, name: str, clear: str) -> Obj:
    """The main container of a validator DaemonSet: it only idles once its init containers
    (the validations) are through, and on stop removes the markers ``clear`` matches.
    ``validator.args`` replace its idle loop, as the operator's TransformValidatorShared does
    (``validate`` warns: ``sh -c`` then runs the first of them)."""
    v = model.section("validator")
    return {
        "name": name,
        "image": c.validator_image(model),
        "imagePullPolicy": v.get("imagePullPolicy", "IfNotPresent"),
        "command": ["sh", "-c"],
        # the list as it is (strings, the schema): a copy keeps the chart's placeholder whole
        "args": list(v.get("args") or IDLE),
        "securityContext": {"privileged": True, "runAsUser": 0},
        "lifecycle": {"preStop": {"exec": {"command": ["sh", "-c", f"rm -f {c.VALIDATIONS_DIR}/{clear}"]}}},
        "volumeMounts": [c.mount("run-nvidia-validations", c.VALIDATIONS_DIR, propagation="Bidirectional")],
    }


def validator_init(model: Model, name: str, script: str, *, propagation: str = "HostToContainer", void: bool = True) -> Obj:
    """An init container (validator image) that waits on marker files with a shell line
    (``void``: with ``NVIDIA_VISIBLE_DEVICES=void``, where the operator's asset sets it)."""
    v = model.section("validator")
    out: Obj = {
        "name": name,
        "image": c.validator_image(model),
        "imagePullPolicy": v.get("imagePullPolicy", "IfNotPresent"),
        "command": ["sh", "-c"],
        "args": [script],
        "env": [{"name": "NVIDIA_VISIBLE_DEVICES", "value": "void"}],
        "securityContext": {"privileged": True, "runAsUser": 0},
        "volumeMounts": [c.mount("run-nvidia-validations", c.VALIDATIONS_DIR, propagation=propagation)],
    }
    if not void:
        del out["env"]
    return c.init_resources(out, model, v)  # transformValidationInitContainer (a `validation` init)


def driver_manager_init(model: Model, key: str) -> Obj:
    """k8s-driver-manager as the vGPU/VFIO managers use it: unload drivers, never evict or drain."""
    section = model.section(key)
    dm = section.get("driverManager") or {}
    env = [
        field_env("NODE_NAME", "spec.nodeName"),
        {"name": "NVIDIA_VISIBLE_DEVICES", "value": "void"},
        {"name": "ENABLE_GPU_POD_EVICTION", "value": "false"},
        {"name": "ENABLE_AUTO_DRAIN", "value": "false"},
        field_env("OPERATOR_NAMESPACE", "metadata.namespace"),
    ]
    ctr: Obj = {
        "name": "k8s-driver-manager",
        "image": c.image_ref(dm),
        "imagePullPolicy": dm.get("imagePullPolicy", "IfNotPresent"),
        "command": ["driver-manager"],
        "args": ["uninstall_driver"],
        "env": c.env_list(extra=env + list(dm.get("env") or [])),
        "securityContext": {"privileged": True},
        "volumeMounts": [
            c.mount("run-nvidia", "/run/nvidia", propagation="Bidirectional"),
            c.mount("host-root", "/host", read_only=True, propagation="HostToContainer"),
            c.mount("host-sys", "/sys"),
        ],
    }
    return c.init_resources(ctr, model, section)  # transformDriverManagerInitContainer's `resources`
