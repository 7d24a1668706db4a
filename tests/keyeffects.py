"""Leaf keys of the policy schema and a changed value for each (for tests/test_key_effects.py)."""

from __future__ import annotations

import copy
import re
from collections.abc import Iterator
from typing import Any

from renderer.schema import load_schema

SCHEMA = load_schema()
DEFS = SCHEMA.get("$defs", {})

SAMPLES_BY_REF: dict[str, Any] = {
    "tolerations": [{"key": "example.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
    "env": [{"name": "EXAMPLE", "value": "1"}],
    "imagePullSecrets": ["pull-secret"],
    "resources": {"limits": {"memory": "512Mi"}},
    "duration": "45s",
    "imagePullPolicy": "Always",
}
STRING_CANDIDATES = ("example", "1.33", "Replace=true", "0302", "/example", "registry.example.com/x", "v9.9.9", "9.9", "45s", "512Mi", "a-b", "x.example.com", "Example", "OnDelete", "25%", "2", "*", "example.yaml")


def resolve(node: dict[str, Any]) -> tuple[dict[str, Any], str]:
    ref = ""
    while "$ref" in node:
        ref = node["$ref"].rsplit("/", 1)[-1]
        node = {**DEFS[ref], **{k: v for k, v in node.items() if k != "$ref"}}
    return node, ref


def leaves(node: dict[str, Any] | None = None, path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], dict[str, Any], str]]:
    """(path, schema, $ref name) of every leaf: scalars, lists and free-form maps.

    ``nodePools`` items are walked as ``("nodePools", "*", ...)``."""
    node, ref = resolve(SCHEMA if node is None else node)
    props = node.get("properties")
    if node.get("type") == "array" and path and path[-1] == "nodePools":
        yield from leaves(node["items"], (*path, "*"))
        return
    if props and not ref:
        for key, sub in props.items():
            yield from leaves(sub, (*path, key))
        return
    if props and ref:
        for key, sub in props.items():
            yield from leaves(sub, (*path, key))
        return
    yield path, node, ref


SAMPLES_BY_PATH: dict[tuple[str, ...], Any] = {
    # not the first value of the enum: that is the default
    ("nodePools", "*", "driver", "kernelModuleType"): "proprietary",
    ("nodePools", "*", "driver", "driverType"): "vgpu",
    ("driver", "licensingConfig", "nlsEnabled"): False,
    ("nodePools", "*", "driver", "licensingConfig", "nlsEnabled"): False,
    ("nodePools", "*", "runtime"): "crio",
    ("devicePlugin", "config", "data"): {"a": "version: v1\n", "b": "version: v1\n"},
    ("daemonsets", "rollingUpdate", "maxUnavailable"): "25%",
    ("driver", "upgradePolicy", "maxUnavailable"): "50%",
    ("nodePools", "*", "driver", "upgradePolicy", "maxUnavailable"): "50%",
    ("nodePools", "*", "driver", "upgradePolicy", "autoUpgrade"): False,
    ("nodePools", "*", "driver", "upgradePolicy", "maxParallelUpgrades"): 3,
    ("gitops", "syncPolicy", "syncOptions"): ["PruneLast=true"],
    ("cluster", "operatorRelease"): "v26.3",
    ("nodePools", "*", "runtimeVersion"): "1.6.0",
    ("nodePools", "*", "driver", "upgradePolicy", "drain", "enable"): False,
    ("draDriver", "gpus", "kubeletPlugin", "healthcheck", "enabled"): False,
    ("draDriver", "computeDomains", "kubeletPlugin", "healthcheck", "enabled"): False,
    # the overlay of file-level renders carries the patch example.yaml (tests/test_key_effects.py)
    ("gitops", "userPatches", "allow"): [{"file": "example.yaml", "checks": ["host-network"], "reason": "a reviewed exception"}],
}
"""Values for keys whose schema alone gives no useful sample."""


def changed_value(schema: dict[str, Any], ref: str, current: Any) -> Any:
    """A valid value different from ``current``."""
    if ref in SAMPLES_BY_REF and SAMPLES_BY_REF[ref] != current:
        return copy.deepcopy(SAMPLES_BY_REF[ref])
    if "enum" in schema:
        return next(v for v in schema["enum"] if v != current)
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next(k for k in kind if k != "null")
    if kind == "boolean":
        return not bool(current)
    if kind == "integer" or kind == "number":
        low = schema.get("minimum", 0)
        value = (current if isinstance(current, int | float) and not isinstance(current, bool) else low) + 1
        if "maximum" in schema and value > schema["maximum"]:
            value = low
        return value
    if kind == "string":
        pattern = schema.get("pattern")
        for cand in STRING_CANDIDATES:
            if cand != current and (pattern is None or re.search(pattern, cand)) and len(cand) <= schema.get("maxLength", 99):
                return cand
        raise AssertionError(f"no sample string for pattern {pattern!r}")
    if kind == "array":
        items, iref = resolve(schema.get("items") or {})
        if iref in SAMPLES_BY_REF:
            return [copy.deepcopy(SAMPLES_BY_REF[iref])]
        if items.get("type") == "object" or "properties" in items:
            props = items.get("properties") or {}
            item = {k: changed_value(resolve(props[k])[0], resolve(props[k])[1], None) for k in items.get("required", list(props)[:1])}
            return [item] if item else [{"example": "x"}]
        return [changed_value(items, iref, None)]
    if kind == "object" or kind is None:
        extra = schema.get("additionalProperties")
        if isinstance(extra, dict):
            sub, sref = resolve(extra)
            return {"example.com/key": changed_value(sub, sref, None)}
        return {"example.com/key": "example"}
    raise AssertionError(f"no sample for {schema}")


BASE: dict[str, Any] = {
    "nodePools": [
        {"name": "pool-a", "os": {"id": "ubuntu", "version": "22.04"}, "kernel": "5.15.0-1040-nvidia", "gpuProduct": "NVIDIA-H100-80GB-HBM3"},
    ],
    "driver": {"version": "595.91.07"},
}

DRA_POOL: dict[str, Any] = {**BASE["nodePools"][0], "runtime": "containerd", "runtimeVersion": "2.0.5", "resourceAllocation": "dra"}

CONTEXT: dict[tuple[str, ...], dict[str, Any]] = {
    # a gitops section needs the repository Argo CD syncs from (an empty repoURL is refused)
    ("gitops",): {"gitops": {"repoURL": "https://git.example.com/gpu-policy.git"}},
    # drain settings reach k8s-driver-manager once drain is enabled; a pool's GDS/GDRCopy
    # settings once the pool enables them
    ("driver", "upgradePolicy", "drain"): {"driver": {"upgradePolicy": {"drain": {"enable": True}}}},
    ("nodePools", "*", "driver", "upgradePolicy", "drain"): {"driver": {"upgradePolicy": {"drain": {"enable": True}}}},
    ("nodePools", "*", "driver", "gds"): {"nodePools": [{**BASE["nodePools"][0], "driver": {"gds": {"enabled": True}}}]},
    ("nodePools", "*", "driver", "gdrcopy"): {"nodePools": [{**BASE["nodePools"][0], "driver": {"gdrcopy": {"enabled": True}}}]},
    # the rollout budget is min(maxParallelUpgrades, maxUnavailable): without a parallel limit
    # maxUnavailable decides it
    ("driver", "upgradePolicy", "maxUnavailable"): {"driver": {"upgradePolicy": {"maxParallelUpgrades": 0}}},
    ("nodePools", "*", "driver", "upgradePolicy", "maxUnavailable"): {"driver": {"upgradePolicy": {"maxParallelUpgrades": 0}}},
    # the DRA driver renders on pools with resourceAllocation: dra (Kubernetes 1.34+, a CDI runtime)
    ("draDriver",): {"cluster": {"kubeVersion": "1.34"}, "cdi": {"enabled": True}, "nodePools": [DRA_POOL]},
    ("nodePools", "*", "resourceAllocation"): {"cluster": {"kubeVersion": "1.34"}, "cdi": {"enabled": True}, "nodePools": [{**DRA_POOL, "resourceAllocation": "device-plugin"}]},
    # a dra pool's runtime version is checked against CDI support (validate refuses an old one)
    ("nodePools", "*", "runtimeVersion"): {"cluster": {"kubeVersion": "1.34"}, "nodePools": [DRA_POOL]},
    ("sandboxWorkloads",): {"sandboxWorkloads": {"enabled": True}},
    ("vgpuManager",): {"sandboxWorkloads": {"enabled": True}, "vgpuManager": {"enabled": True, "repository": "registry.example.com/nvidia", "version": "580.1"}},
    ("vgpuDeviceManager",): {"sandboxWorkloads": {"enabled": True}},
    ("vfioManager",): {"sandboxWorkloads": {"enabled": True}},
    ("sandboxDevicePlugin",): {"sandboxWorkloads": {"enabled": True}},
    ("kataSandboxDevicePlugin",): {"sandboxWorkloads": {"enabled": True, "mode": "kata"}},
    ("devicePlugin", "config"): {"devicePlugin": {"config": {"create": True, "name": "plugin-config", "default": "a", "data": {"a": "version: v1\n", "example": "version: v1\n"}}}},
    ("nodePools", "*", "gpuProduct"): {"nodePools": [{**BASE["nodePools"][0], "mig": {"config": "all-1g.10gb"}}]},
    ("nodePools", "*", "devicePluginConfig"): {"devicePlugin": {"config": {"create": True, "name": "plugin-config", "default": "a", "data": {"a": "version: v1\n", "example": "version: v1\n"}}}},
    ("migManager", "config"): {"migManager": {"config": {"create": True, "name": "mig-config", "data": {"config.yaml": "version: v1\n"}}}},
    ("migManager", "config", "default"): {},
    ("gitops", "clusterSelector"): {"gitops": {"generator": "clusters"}},
    ("nodePools", "*", "kernel"): {"driver": {"usePrecompiled": True, "version": "595"}},
    ("validator", "vfioPCI"): {"sandboxWorkloads": {"enabled": True}},
    ("validator", "vgpuManager"): {"sandboxWorkloads": {"enabled": True}},
    ("validator", "vgpuDevices"): {"sandboxWorkloads": {"enabled": True}},
    ("ccManager",): {"sandboxWorkloads": {"enabled": True, "mode": "kata"}},
    # a ConfigMap's keys are mounted one by one once the ConfigMap is named
    ("driver", "repoConfig", "keys"): {"driver": {"repoConfig": {"configMapName": "repo"}}},
    ("driver", "certConfig", "keys"): {"driver": {"certConfig": {"name": "certs"}}},
    ("driver", "kernelModuleConfig", "keys"): {"driver": {"kernelModuleConfig": {"name": "kmod"}}},
    ("nodePools", "*", "driver", "repoConfig", "keys"): {"nodePools": [{**BASE["nodePools"][0], "driver": {"repoConfig": {"configMapName": "repo"}}}]},
    ("nodePools", "*", "driver", "certConfig", "keys"): {"nodePools": [{**BASE["nodePools"][0], "driver": {"certConfig": {"name": "certs"}}}]},
    ("nodePools", "*", "driver", "kernelModuleConfig", "keys"): {"nodePools": [{**BASE["nodePools"][0], "driver": {"kernelModuleConfig": {"name": "kmod"}}}]},
    ("vgpuManager", "kernelModuleConfig", "keys"): {"vgpuManager": {"kernelModuleConfig": {"name": "kmod"}}},
    # the NLS client token is mounted from the licensing ConfigMap once it is named
    ("driver", "licensingConfig", "nlsEnabled"): {"driver": {"licensingConfig": {"configMapName": "licensing"}}},
    ("nodePools", "*", "driver", "licensingConfig", "nlsEnabled"): {"nodePools": [{**BASE["nodePools"][0], "driver": {"licensingConfig": {"configMapName": "licensing"}}}]},
    ("dcgmExporter", "config"): {"dcgmExporter": {"config": {"create": True, "name": "metrics", "data": "DCGM_FI_DEV_GPU_UTIL, gauge, util\n"}}},
}
"""Extra settings under which a key can have an effect (its component or feature on)."""


def deep_set(data: dict[str, Any], path: tuple[str, ...], value: Any) -> None:
    node: Any = data
    for part in path[:-1]:
        if part == "*":
            node = node[0]
            continue
        if not isinstance(node.get(part), dict | list):
            node[part] = {}
        node = node[part]
    node[path[-1]] = value


def deep_merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(base)
    for k, v in over.items():
        out[k] = deep_merge(out[k], v) if isinstance(v, dict) and isinstance(out.get(k), dict) else copy.deepcopy(v)
    return out


def context(path: tuple[str, ...]) -> dict[str, Any]:
    """BASE with every ancestor section of ``path`` switched on, plus its CONTEXT entries."""
    values = copy.deepcopy(BASE)
    node, _ = resolve(SCHEMA)
    for i, part in enumerate(path[:-1]):
        if part == "*":
            node, _ = resolve(node["items"])
            continue
        node, _ = resolve((node.get("properties") or {}).get(part, {}))
        if "enabled" in (node.get("properties") or {}) and path[i + 1] != "enabled" and path[0] != "nodePools":
            deep_set(values, (*path[: i + 1], "enabled"), True)
    for n in range(1, len(path) + 1):
        values = deep_merge(values, CONTEXT.get(path[:n], {}))
    return values


def current(values: dict[str, Any], path: tuple[str, ...]) -> Any:
    from renderer.resolve import with_defaults

    node: Any = with_defaults(values)
    for part in path:
        if part == "*":
            node = node[0] if node else None
        else:
            node = node.get(part) if isinstance(node, dict) else None
    return node
