"""RuntimeClasses ``nvidia`` (and ``nvidia-cdi``/``nvidia-legacy`` with CDI): the operator's pre-requisites state."""

from __future__ import annotations

from renderer.components.common import MANAGED_BY, Obj
from renderer.model import Model

CDI_CLASSES = ("nvidia-cdi", "nvidia-legacy")
"""The RuntimeClasses the operator adds with CDI, whatever ``cluster.runtimeClass`` is."""


def _runtime_class(name: str) -> Obj:
    return {
        "apiVersion": "node.k8s.io/v1",
        "kind": "RuntimeClass",
        "metadata": {"name": name, "labels": {**MANAGED_BY, "app.kubernetes.io/component": "gpu-operator"}},
        "handler": name,
    }


def enabled(model: Model) -> bool:
    """No RuntimeClass at all in NRI plugin mode, as with the operator."""
    return not model.nri_plugin


def build(model: Model) -> list[Obj]:
    """``cluster.runtimeClass`` first, then the CDI ones (``nvidia-cdi``, ``nvidia-legacy``) that
    it is not: the first object is the one the setting names, wherever its name sorts."""
    main = str(model.values["cluster"].get("runtimeClass") or "nvidia")
    names = [main]
    if model.section("cdi").get("enabled"):
        names += [n for n in CDI_CLASSES if n != main]
    return [_runtime_class(n) for n in names]
