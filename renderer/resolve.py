"""Resolve merged values into a :class:`~renderer.model.Model`: defaults, pools, images.

Pure: takes plain data, returns the model. Per-pool driver image and selector rules live in
:mod:`renderer.driverimage`.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from renderer import yamlio
from renderer.datafiles import data_text
from renderer.jsondata import clone
from renderer.merge import deep_merge
from renderer.model import Model, Pool


@lru_cache(maxsize=1)
def _defaults_text() -> str:
    return data_text("defaults.yaml")


@lru_cache(maxsize=1)
def _defaults() -> dict[str, Any]:
    data = yamlio.load(_defaults_text())
    assert isinstance(data, dict)
    return data


def defaults() -> dict[str, Any]:
    """The defaults of every key (parsed once per process; each caller gets its own copy)."""
    return clone(_defaults())


def with_defaults(values: dict[str, Any]) -> dict[str, Any]:
    return deep_merge(_defaults(), values)


ASSET_TOLERATIONS = ({"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"},)
"""The tolerations every operand DaemonSet of the operator's assets carries."""
ASSET_PRIORITY_CLASS = "system-node-critical"
"""The priority class every operand DaemonSet of the operator's assets carries."""


APP_VERSION_SECTIONS = ("validator", "nodeStatusExporter")
"""Sections whose empty ``version`` the operator's chart fills with its own version
(``default .Chart.AppVersion`` in its ClusterPolicy template): the operator's image tag."""


def operator_fallbacks(full: dict[str, Any]) -> None:
    """The operator's values where the policy leaves one empty, in place.

    An empty ``validator.version`` / ``nodeStatusExporter.version`` is the release's (as the
    operator's chart fills it). The operator's applyCommonDaemonsetConfig sets tolerations only from a non-empty list and
    the priority class only from a non-empty name; otherwise each pod keeps its asset's
    (``nvidia.com/gpu`` ``Exists`` ``NoSchedule``, ``system-node-critical``). Here in the model,
    so the static render and the chart values both carry them (``validate`` warns,
    ``operator-fallback``)."""
    for key in APP_VERSION_SECTIONS:
        section = full.get(key)
        if isinstance(section, dict) and section.get("version") == "":
            section["version"] = _defaults()[key]["version"]
    _default_config_names(full)
    _metrics_text(full)
    _without_claims(full)
    _own_labels_kept(full)
    for section in ("devicePlugin", "migManager"):
        _last_entry_trimmed(full, section)
    common = full.get("daemonsets")
    if not isinstance(common, dict):
        return
    if common.get("tolerations") == []:
        common["tolerations"] = [dict(t) for t in ASSET_TOLERATIONS]
    if common.get("priorityClassName") == "":
        common["priorityClassName"] = ASSET_PRIORITY_CLASS


OWN_LABELS = ("app", "app.kubernetes.io/part-of")
"""Labels of every operand that ``daemonsets.labels`` does not replace (the operator's
applyCommonDaemonsetMetadata skips them: ``app`` is the DaemonSet's selector)."""


def _own_labels_kept(full: dict[str, Any]) -> None:
    """``daemonsets.labels`` without :data:`OWN_LABELS` (``validate`` warns, ``noeffect``). Here
    in the model, so the chart's values do not carry them either."""
    common = full.get("daemonsets")
    labels = common.get("labels") if isinstance(common, dict) else None
    if isinstance(common, dict) and isinstance(labels, dict) and any(k in labels for k in OWN_LABELS):
        common["labels"] = {k: v for k, v in labels.items() if k not in OWN_LABELS}


def _without_claims(full: dict[str, Any]) -> None:
    """Each operand's ``resources`` without ``claims``, as the ClusterPolicy keeps them (its CRD
    prunes ``claims``; ``validate`` warns, ``noeffect``). Here in the model, so neither the static
    render nor the chart's values carry them. NFD and the node labeller take the same rule."""
    sections: list[Any] = [full.get(key) for key in sorted(full)]
    nfd = full.get("nfd")
    if isinstance(nfd, dict):
        sections += [nfd.get(pod) for pod in ("master", "worker", "gc")]
    sections += [pool.get("driver") for pool in full.get("nodePools") or [] if isinstance(pool, dict)]
    for section in sections:
        res = section.get("resources") if isinstance(section, dict) else None
        if isinstance(res, dict) and "claims" in res:
            section["resources"] = {k: v for k, v in res.items() if k != "claims"}


def _config(full: dict[str, Any], section: str) -> dict[str, Any] | None:
    """``<section>.config`` of the values, when it is a map."""
    parent = full.get(section)
    config = parent.get("config") if isinstance(parent, dict) else None
    return config if isinstance(config, dict) else None


def _one_newline(text: str) -> str:
    """``text`` ending in exactly one newline, as a ``|`` block prints it."""
    return text.rstrip("\n") + "\n"


def _metrics_text(full: dict[str, Any]) -> None:
    """``dcgmExporter.config.data`` as the operator's chart prints it into the ConfigMap: a ``|``
    block of its lines, which ends in exactly one newline (blank lines at the end dropped, one
    added where it has none). Here in the model, so the static render and the chart's values
    carry the same text, which the chart's template takes as it is."""
    config = _config(full, "dcgmExporter")
    data = config.get("data") if config is not None else None
    if config is not None and isinstance(data, str) and data.strip("\n"):
        config["data"] = _one_newline(data)


def _last_entry_trimmed(full: dict[str, Any], section: str) -> None:
    """``<section>.config.data`` as the operator's chart prints it: ``toYaml`` of the map (keys
    sorted) and then ``{{- end }}``, which trims the blank lines a ``|+`` block of the last
    entry ends in: that entry's text ends in one newline."""
    config = _config(full, section)
    data = config.get("data") if config is not None else None
    if not isinstance(data, dict) or not data:
        return
    last = max(data, key=str)
    text = data[last]
    if isinstance(text, str) and text.endswith("\n\n") and text.strip("\n"):
        data[last] = _one_newline(text)


DEFAULT_CONFIG_MAPS = (
    (("migManager", "gpuClientsConfig"), "default-gpu-clients"),
    (("vgpuDeviceManager", "config"), "default-vgpu-devices-config"),
)
"""Config sections whose ConfigMap name the operator counts as no custom ConfigMap when it is
the default's (``GetConfigMapName``: ``name != defaultName``): it creates that default
ConfigMap and mounts it, as for an empty name, so the name is taken as empty here."""

MIG_DEFAULT_CONFIG = "default-mig-parted-config"


def default_mig_profiles() -> dict[str, str]:
    """The data of the operator's ``default-mig-parted-config`` ConfigMap."""
    from renderer.components import facts

    return facts.configmap_data(facts.MIG_PARTED_CONFIG)


def _default_config_names(full: dict[str, Any]) -> None:
    """A ConfigMap name that is the operator's default ConfigMap's, as the operator takes it.

    For the GPU clients and the vGPU devices the name is taken as empty (the same objects).
    ``migManager.config.name: default-mig-parted-config`` is the MIG manager's custom config
    for the pod (``hasCustomConfig``: any name; ``CONFIG_FILE``, no ``config-default.yaml``
    remap) but not for ``createConfigMap``, which creates that ConfigMap with the default
    profiles and updates it back to them when it exists (over the chart's ``create`` / ``data``):
    so the config is created here with the default profiles (``validate`` warns where ``data``
    says otherwise, ``default-config-name``)."""
    for (section, key), default in DEFAULT_CONFIG_MAPS:
        parent = full.get(section)
        config = parent.get(key) if isinstance(parent, dict) else None
        if isinstance(config, dict) and config.get("name") == default:
            config["name"] = ""
    mig = full.get("migManager")
    config = mig.get("config") if isinstance(mig, dict) else None
    if isinstance(config, dict) and config.get("name") == MIG_DEFAULT_CONFIG:
        config["create"] = True
        config["data"] = default_mig_profiles()


def kube_minor(version: str) -> str:
    """``1.31``, ``1.31.0`` and ``v1.31.0`` (Helm's ``--kube-version`` spellings) -> ``1.31``."""
    parts = version.removeprefix("v").split(".")
    return ".".join(parts[:2]) if len(parts) >= 2 else version


def resolve(values: dict[str, Any], cluster: str, defaulted: dict[str, Any] | None = None) -> Model:
    """Defaulted values plus resolved pools for one cluster (or the fleet base).

    ``defaulted`` is ``with_defaults(values)`` when the caller already made it (the model
    takes it over; the caller must not keep using it). Keys the imitated operator release does
    not have are left out (:func:`renderer.releasegate.prune`): its CRD prunes them.
    """
    from renderer.releasegate import prune

    full = with_defaults(values) if defaulted is None else defaulted
    full["cluster"]["name"] = cluster
    full["cluster"]["kubeVersion"] = kube_minor(str(full["cluster"]["kubeVersion"]))
    operator_fallbacks(full)
    kept = prune(full)
    pools = tuple(resolve_pool(kept, p) for p in kept.get("nodePools") or [])
    return Model(values=kept, cluster=cluster, pools=pools, unpruned=None if kept is full else full)


def resolve_pool(values: dict[str, Any], pool: dict[str, Any]) -> Pool:
    from renderer import driverimage

    return driverimage.resolve_pool(values, pool)
