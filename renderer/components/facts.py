"""Upstream fact files kept as data under ``renderer/data/`` (CRDs, default configs).

Read from the installed package (like the defaults), parsed once, and handed out as deep
copies so no builder can change what another one sees.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from renderer import yamlio
from renderer.datafiles import data_text
from renderer.jsondata import clone

NFD_CRDS = "nfd-api-crds.yaml"
MIG_PARTED_CONFIG = "default-mig-parted-config.yaml"
VGPU_DEVICES_CONFIG = "default-vgpu-devices-config.yaml"


@cache
def _documents(name: str) -> tuple[Any, ...]:
    text = data_text(name)
    return tuple(yamlio.load_all(text))


def documents(name: str) -> list[dict[str, Any]]:
    """Every YAML document of the data file ``name``, as fresh copies."""
    return [clone(doc) for doc in _documents(name)]


def configmap_data(name: str) -> dict[str, str]:
    """The ``data`` of the single ConfigMap stored in the data file ``name``."""
    (doc,) = documents(name)
    assert doc["kind"] == "ConfigMap"
    return {str(k): str(v) for k, v in doc["data"].items()}


def nfd_crds() -> list[dict[str, Any]]:
    """NodeFeature, NodeFeatureGroup and NodeFeatureRule CRDs (NFD v0.19.0), upstream order."""
    return documents(NFD_CRDS)
