"""The namespace every namespaced object lives in, with Pod Security labels when asked."""

from __future__ import annotations

from renderer.components.common import MANAGED_BY, Obj
from renderer.model import Model


def build(model: Model) -> list[Obj]:
    labels = dict(MANAGED_BY)
    if model.enabled("psa"):
        for mode in ("enforce", "audit", "warn"):
            labels[f"pod-security.kubernetes.io/{mode}"] = "privileged"
    if model.dra:  # the DRA validator takes GPUs with admin access (ResourceClaim adminAccess)
        labels["resource.kubernetes.io/admin-access"] = "true"
    return [
        {
            "apiVersion": "v1",
            "kind": "Namespace",
            "metadata": {"name": model.namespace, "labels": labels},
        }
    ]
