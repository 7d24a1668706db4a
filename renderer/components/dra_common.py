"""What the DRA stack and the device-plugin stack share: which nodes each may run on.

A node pool chooses its stack (``nodePools[].resourceAllocation``). The proof that no node gets
both is in the selectors, not in a controller:

* every DRA operand requires, in each of its node-selector terms, all labels of one ``dra``
  pool's selector (one term per ``dra`` pool);
* every device-plugin operand (:data:`DEVICE_PLUGIN_OPERANDS`) requires, for every ``dra``
  pool, one of that pool's labels to differ (``NotIn``): :func:`exclude_dra_pools` turns the
  conjunction of those negations into node-selector terms (one per combination).

A node matching a ``dra`` pool's selector therefore fails every term of the device-plugin
operands, and a node matching none fails every term of the DRA operands. ``pool-overlap``
(:mod:`renderer.checks`) keeps pools from sharing nodes in the first place.
"""

from __future__ import annotations

import itertools

from renderer.components import common as c
from renderer.components.common import Obj
from renderer.jsondata import clone
from renderer.model import Model, Pool

DEVICE_PLUGIN_OPERANDS = c.DEVICE_PLUGIN_OPERANDS
"""Operands that advertise or partition GPUs for the device plugin (the MPS control daemon
uses the device plugin's label); the operator validator's ``plugin-validation`` waits for
``nvidia.com/gpu`` and the DRA validator replaces it on ``dra`` pools; the DCGM exporter's
DRA flavour takes its GPUs through an admin-access claim there."""

TERMS = ("spec", "template", "spec", "affinity", "nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution", "nodeSelectorTerms")
"""Where a pod template's required node-selector terms are: those of the DRA operands and of
the device-plugin operands come from the pool list (``Component.terms``)."""

MAX_TERMS = 64
"""More node-selector terms than this for the exclusion is refused (``dra-selector-size``)."""

DRIVER_LABEL = "dra-driver"
VALIDATOR_LABEL = "dra-validator"
EXPORTER_LABEL = "dcgm-exporter-dra"
DEPLOY_LABELS = (DRIVER_LABEL, VALIDATOR_LABEL, EXPORTER_LABEL)
"""``nvidia.com/gpu.deploy.<label>`` of the DRA operands: seeded write-once by the node
labeller, paused by k8s-driver-manager (v0.12) on a driver reload, kubelet plugin last."""


def enabled(model: Model) -> bool:
    return model.dra


def compute_domains(model: Model) -> bool:
    return enabled(model) and bool((model.section("draDriver").get("computeDomains") or {}).get("enabled", True))


def crd_owner(model: Model) -> str:
    cd = model.section("draDriver").get("computeDomains") or {}
    return str((cd.get("crd") or {}).get("owner") or "gpu-render")


def _gpu_present() -> Obj:
    return {"key": "nvidia.com/gpu.present", "operator": "In", "values": ["true"]}


def _deploy(label: str) -> Obj:
    return {"key": f"nvidia.com/gpu.deploy.{label}", "operator": "NotIn", "values": ["false", c.PAUSED]}


def pool_affinity(pools: tuple[Pool, ...], deploy_label: str) -> Obj:
    """Required node affinity: one term per pool, each the pool's selector plus the deploy label."""
    terms = []
    for pool in pools:
        exprs = [_gpu_present(), _deploy(deploy_label)]
        exprs += [{"key": k, "operator": "In", "values": [v]} for k, v in sorted(pool.node_selector.items())]
        terms.append({"matchExpressions": exprs})
    return {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": terms}}}


def exclusion_choices(pools: tuple[Pool, ...]) -> list[tuple[tuple[str, str], ...]]:
    """Each way to pick one (label, value) of every pool's selector: a node avoiding all
    pools has, for each pool, at least one label that differs, i.e. matches one choice."""
    per_pool = [tuple(sorted(p.node_selector.items())) for p in pools]
    out: list[tuple[tuple[str, str], ...]] = []
    for combo in itertools.product(*per_pool):
        unique = tuple(sorted(set(combo)))
        if unique not in out:
            out.append(unique)
    return out


def exclude_dra_pools(affinity: Obj, model: Model) -> Obj:
    """``affinity`` (a fresh copy) whose required node-selector terms also avoid every ``dra`` pool."""
    pools = model.dra_pools
    if not pools:
        return affinity
    out = clone(affinity)
    required = out.setdefault("nodeAffinity", {}).setdefault("requiredDuringSchedulingIgnoredDuringExecution", {})
    terms = required.get("nodeSelectorTerms") or [{"matchExpressions": [_gpu_present()]}]
    new_terms: list[Obj] = []
    for term in terms:
        for choice in exclusion_choices(pools):
            exprs = list(clone(term.get("matchExpressions") or []))
            exprs += [{"key": k, "operator": "NotIn", "values": [v]} for k, v in choice]
            new_term = dict(term)
            new_term["matchExpressions"] = exprs
            new_terms.append(new_term)
    required["nodeSelectorTerms"] = new_terms
    return out


def admin_claim_template(name: str, request: str, model: Model, api_version: str) -> Obj:
    """A ResourceClaimTemplate for one GPU with admin access (monitoring, not exclusive use)."""
    return {
        "apiVersion": api_version,
        "kind": "ResourceClaimTemplate",
        "metadata": c.meta(name, model),
        "spec": {
            "spec": {
                "devices": {
                    "requests": [
                        {
                            "name": request,
                            "exactly": {
                                "deviceClassName": "gpu.nvidia.com",
                                "allocationMode": "ExactCount",
                                "count": 1,
                                "adminAccess": True,
                            },
                        }
                    ]
                }
            }
        },
    }


RESOURCE_API = "resource.k8s.io/v1"
"""DRA objects are rendered for ``resource.k8s.io/v1`` only (GA in Kubernetes 1.34)."""
