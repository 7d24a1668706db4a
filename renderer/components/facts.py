"""Upstream fact files kept as data under ``renderer/data/`` (CRDs, default configs).

Read from the installed package (like the defaults), parsed once, and handed out as deep
copies so no builder can change what another one sees.
"""

from __future__ import annotations

import pickle
from functools import cache
from importlib import resources
from typing import Any

from renderer import yamlio

NFD_CRDS = "nfd-api-crds.yaml"
MIG_PARTED_CONFIG = "default-mig-parted-config.yaml"
VGPU_DEVICES_CONFIG = "default-vgpu-devices-config.yaml"


@cache
def _documents(name: str) -> bytes:
    text = resources.files("renderer.data").joinpath(name).read_text(encoding="utf-8")
    # kept pickled: unpickling is the fastest way to hand out a fresh deep copy
    return pickle.dumps(yamlio.load_all(text), protocol=pickle.HIGHEST_PROTOCOL)


def documents(name: str) -> list[dict[str, Any]]:
    """Every YAML document of the data file ``name``, as fresh copies."""
    docs: list[dict[str, Any]] = pickle.loads(_documents(name))
    return docs


def configmap_data(name: str) -> dict[str, str]:
    """The ``data`` of the single ConfigMap stored in the data file ``name``."""
    (doc,) = documents(name)
    assert doc["kind"] == "ConfigMap"
    return {str(k): str(v) for k, v in doc["data"].items()}


def nfd_crds() -> list[dict[str, Any]]:
    """NodeFeature, NodeFeatureGroup and NodeFeatureRule CRDs (NFD v0.19.0), upstream order."""
    return documents(NFD_CRDS)
