"""Argo CD sync waves, applied to every rendered object by kind and component name.

Order: CRDs and the namespace, then RBAC and config, then NFD, driver, toolkit, then the
validator together with everything else (device plugin, GFD, DCGM, exporter, MIG manager,
...). The validator cannot have a wave of its own: Argo CD starts a wave only when the one
before is healthy, and the validator's pods become ready only after its plugin-validation
init container has seen the device plugin advertise GPUs, while the device plugin in turn
waits for the toolkit-ready marker the validator writes. Within a wave the validator's
marker files order them on each node. A component
added later gets its wave from its name without touching this module; a builder that
sets the annotation itself keeps its own value. CRDs also get ``ServerSideApply=true`` on
the resource (large schemas overflow the client-side last-applied annotation); never at
application level, where it would change how every wave is applied.

CRDs and the Namespace also get ``Delete=false`` and ``Prune=false``: deleting an
Application (or its ApplicationSet element) or dropping them from the render never deletes
them, since a CRD takes every object of its kind with it (all NodeFeatures) and the
Namespace everything in it. ServiceMonitors get ``SkipDryRunOnMissingResource=true``: their
CRD is not rendered and may be absent, and a missing kind would otherwise fail the dry run
of the whole sync instead of that one object.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from renderer.components.common import Obj

WAVE = "argocd.argoproj.io/sync-wave"
SYNC_OPTIONS = "argocd.argoproj.io/sync-options"
KEEP = "Delete=false,Prune=false"
CRD_SYNC_OPTIONS = f"ServerSideApply=true,{KEEP}"
KIND_SYNC_OPTIONS = {
    "CustomResourceDefinition": CRD_SYNC_OPTIONS,
    "Namespace": KEEP,
    "ServiceMonitor": "SkipDryRunOnMissingResource=true",
}

FIRST = 0
CONFIG = 1
NFD = 2
DRIVER = 3
TOOLKIT = 4
OPERANDS = 5
VALIDATOR = OPERANDS

FIRST_KINDS = frozenset({"CustomResourceDefinition", "Namespace"})
CONFIG_KINDS = frozenset(
    {
        "ServiceAccount",
        "Role",
        "RoleBinding",
        "ClusterRole",
        "ClusterRoleBinding",
        "ConfigMap",
        "Secret",
        "RuntimeClass",
        "PriorityClass",
        "SecurityContextConstraints",
        "ResourceQuota",
        "LimitRange",
    }
)

# First match wins, so the more specific names come first.
COMPONENT_WAVES: tuple[tuple[str, int], ...] = (
    ("nfd", NFD),
    ("node-feature", NFD),
    ("toolkit", TOOLKIT),
    ("validat", VALIDATOR),
    ("driver", DRIVER),
    ("vgpu-manager", DRIVER),
    ("vfio-manager", DRIVER),
    ("gds", DRIVER),
    ("gdrcopy", DRIVER),
)


def wave(component: str, kind: str) -> int:
    """The sync wave of an object of ``kind`` built by ``component`` (known per pair: every
    object of every build of the chart analysis asks)."""
    found = _WAVES.get((component, kind))
    if found is None:
        if len(_WAVES) >= 1024:
            _WAVES.clear()
        found = _WAVES[(component, kind)] = _wave(component, kind)
    return found


_WAVES: dict[tuple[str, str], int] = {}


def _wave(component: str, kind: str) -> int:
    if kind in FIRST_KINDS:
        return FIRST
    if kind in CONFIG_KINDS:
        return CONFIG
    for fragment, value in COMPONENT_WAVES:
        if fragment in component:
            return value
    return OPERANDS


def annotate(component: str, obj: Obj) -> Obj:
    """``obj`` with its wave (and its kind's sync options); a shallow copy, the input is not changed."""
    meta: dict[str, Any] = obj.get("metadata") or {}
    annotations: dict[str, str] = dict(meta.get("annotations") or {})
    kind = str(obj.get("kind", ""))
    annotations.setdefault(WAVE, str(wave(component, kind)))
    options = KIND_SYNC_OPTIONS.get(kind)
    if options:
        annotations.setdefault(SYNC_OPTIONS, options)
    return {**obj, "metadata": {**meta, "annotations": annotations}}


def annotate_all(objs: Mapping[str, list[Obj]]) -> dict[str, list[Obj]]:
    return {component: [annotate(component, o) for o in items] for component, items in objs.items()}
