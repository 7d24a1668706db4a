"""Validate-time rules of ``resourceAllocation: dra`` pools, as Problems with file:line:col.

* Kubernetes 1.34+: DRA objects are rendered for ``resource.k8s.io/v1`` only. In 1.32/1.33 the
  DRA API is beta (``v1beta1``/``v1beta2``) and off unless the API server enables it, and
  k8s-driver-manager (v0.12) reads ResourceClaims through ``v1``: refused with that reason.
* Driver versions: 565 or newer on a ``dra`` pool; 570.158.01 or newer with ComputeDomains.
* CDI in the runtime: the DRA driver hands devices to containers as CDI names, which the
  runtime itself resolves: containerd 1.7 with CDI enabled (``cdi.enabled: true`` makes the
  toolkit set ``enable_cdi``), containerd 2.0+ (on by default), CRI-O 1.23+; never Docker.
* One owner of the ComputeDomain CRD: ``gpuCluster.deployCR: true`` would make the GPU
  Operator deploy its own DRA driver and CRDs beside gpu-render's.
* The device-plugin operands' exclusion of ``dra`` pools stays small (``dra-selector-size``).

Overlapping pools (one node in two pools, so possibly under both stacks) are refused for
every pool by ``pool-overlap`` in :mod:`renderer.checks`.
"""

from __future__ import annotations

import re
from typing import Any

from renderer.merge import Located
from renderer.problems import Problem, Severity, pointer_of

GPU_MIN = (565,)
CD_MIN = (570, 158, 1)
KUBE_MIN = (1, 34)
CONTAINERD_CDI = (1, 7)
CONTAINERD_CDI_DEFAULT = (2, 0)
CRIO_CDI = (1, 23)


def _version(text: str) -> tuple[int, ...] | None:
    m = re.match(r"^v?(\d+(?:\.\d+)*)", text.strip())
    return tuple(int(x) for x in m.group(1).split(".")) if m else None


def _text(v: tuple[int, ...]) -> str:
    return ".".join(f"{x:02d}" if i == 2 and len(v) == 3 and v[0] >= 500 else str(x) for i, x in enumerate(v))


def _where(located: Located, *pointers: str) -> tuple[str, str, int, int]:
    for pointer in pointers:
        if pointer in located.origins:
            file, line, col = located.locate(pointer)
            return pointer, file, line, col
    pointer = pointers[-1]
    file, line, col = located.locate(pointer)
    return pointer, file, line, col


def _problem(located: Located, pointers: tuple[str, ...], message: str, hint: str, code: str, severity: Severity = Severity.ERROR) -> Problem:
    pointer, file, line, col = _where(located, *pointers)
    return Problem(file, line, col, pointer, message, hint=hint, code=code, severity=severity)


def rules(located: Located, values: dict[str, Any]) -> list[Problem]:
    """Every DRA rule over defaulted ``values`` (``located`` gives the places)."""
    pools = [(i, p) for i, p in enumerate(values.get("nodePools") or []) if isinstance(p, dict) and p.get("resourceAllocation") == "dra"]
    if not pools:
        return []
    first = pointer_of(["nodePools", pools[0][0], "resourceAllocation"])
    dra = values.get("draDriver") or {}
    cd = bool((dra.get("computeDomains") or {}).get("enabled", True))
    problems: list[Problem] = []
    kube = _version(str(values["cluster"].get("kubeVersion") or ""))
    if kube is not None and kube < KUBE_MIN:
        problems.append(
            _problem(
                located,
                ("/cluster/kubeVersion", first),
                f"node pool {pools[0][1].get('name')!r} uses DRA, which gpu-render renders for resource.k8s.io/v1 (Kubernetes 1.34+); the target is {values['cluster'].get('kubeVersion')}",
                "in 1.32/1.33 DRA is beta (resource.k8s.io/v1beta1, v1beta2) and off by default, and k8s-driver-manager reads claims through v1: upgrade to 1.34 or keep the pool on device-plugin",
                "dra-kube-version",
            )
        )
    gpu_cluster = values.get("gpuCluster") or {}
    if isinstance(gpu_cluster, dict) and gpu_cluster.get("deployCR"):
        owner = str(((dra.get("computeDomains") or {}).get("crd") or {}).get("owner") or "gpu-render")
        problems.append(
            _problem(
                located,
                ("/gpuCluster/deployCR", "/gpuCluster"),
                "gpuCluster.deployCR: true makes the GPU Operator deploy its own DRA driver and the computedomains.resource.nvidia.com CRD"
                + (", which gpu-render also renders (draDriver.computeDomains.crd.owner: gpu-render)" if owner == "gpu-render" else "")
                + ": two owners with different schemas make Argo CD flip between them",
                "set gpuCluster.deployCR: false (gpu-render renders the DRA stack per pool), or keep every pool on device-plugin",
                "dra-crd-owner",
            )
        )
    for index, pool in pools:
        problems += _pool(located, values, index, pool, cd)
    problems += _selector_size(located, values, pools, first)
    return problems


def _pool(located: Located, values: dict[str, Any], index: int, pool: dict[str, Any], cd: bool) -> list[Problem]:
    from renderer.merge import merged_view

    name = pool.get("name")
    out: list[Problem] = []
    own = f"/nodePools/{index}"
    driver = merged_view(values.get("driver") or {}, pool.get("driver") or {})
    version_text = str(driver.get("version") or "")
    version = _version(version_text)
    at = (f"{own}/driver/version", "/driver/version", f"{own}/resourceAllocation")
    if driver.get("enabled", True) and version is not None and not version_text.startswith("sha256:"):
        if version < GPU_MIN:
            out.append(_problem(located, at, f"node pool {name!r}: the DRA driver needs an NVIDIA driver 565 or newer, not {version_text}", "raise the pool's driver.version or keep it on device-plugin", "dra-driver-version"))
        elif cd and len(version) >= 3 and version < CD_MIN:
            out.append(
                _problem(
                    located,
                    at,
                    f"node pool {name!r}: ComputeDomains need an NVIDIA driver {_text(CD_MIN)} or newer, not {version_text}",
                    "raise the pool's driver.version or set draDriver.computeDomains.enabled: false",
                    "dra-driver-version",
                )
            )
        elif cd and len(version) < 3 and version < (571,):
            out.append(
                _problem(
                    located,
                    at,
                    f"node pool {name!r}: driver branch {version_text} may be older than {_text(CD_MIN)}, which ComputeDomains need",
                    "pin a full driver version",
                    "dra-driver-version",
                    Severity.WARNING,
                )
            )
    for key, what in (("mig", "the MIG manager"), ("devicePluginConfig", "the device plugin")):
        if pool.get(key):
            out.append(
                _problem(
                    located,
                    (f"{own}/{key}", f"{own}/resourceAllocation"),
                    f"node pool {name!r}: {key} has no effect on a dra pool ({what} does not run there)",
                    "remove it, or keep the pool on device-plugin",
                    "dra-ignored",
                    Severity.WARNING,
                )
            )
    runtime = str(pool.get("runtime") or values["cluster"].get("containerRuntime") or "containerd")
    rt_text = str(pool.get("runtimeVersion") or "")
    rt = _version(rt_text) if rt_text else None
    rt_at = (f"{own}/runtimeVersion", f"{own}/runtime", "/cluster/containerRuntime", f"{own}/resourceAllocation")
    cdi_on = bool((values.get("cdi") or {}).get("enabled"))
    hint_rt = "the DRA driver needs CDI in the runtime: containerd 1.7 with cdi.enabled: true, containerd 2.0+, or CRI-O 1.23+"
    if runtime == "docker":
        out.append(_problem(located, rt_at, f"node pool {name!r}: Docker (cri-dockerd) does not inject CDI devices, which the DRA driver hands out", hint_rt, "dra-runtime-cdi"))
    elif runtime == "crio" and rt is not None and rt < CRIO_CDI:
        out.append(_problem(located, rt_at, f"node pool {name!r}: CRI-O {rt_text} has no CDI support (1.23+)", hint_rt, "dra-runtime-cdi"))
    elif runtime == "containerd":
        if rt is not None and rt < CONTAINERD_CDI:
            out.append(_problem(located, rt_at, f"node pool {name!r}: containerd {rt_text} has no CDI support (1.7+)", hint_rt, "dra-runtime-cdi"))
        elif (rt is None or rt < CONTAINERD_CDI_DEFAULT) and not cdi_on:
            shown = f"containerd {rt_text}" if rt is not None else "containerd of unknown version (runtimeVersion not set)"
            out.append(
                _problem(
                    located,
                    (*rt_at[:2], "/cdi/enabled", f"{own}/resourceAllocation"),
                    f"node pool {name!r}: {shown} needs CDI turned on (enable_cdi), which cdi.enabled: false leaves off",
                    "set cdi.enabled: true (the toolkit then enables CDI in containerd), or state runtimeVersion 2.0 or newer",
                    "dra-runtime-cdi",
                )
            )
    return out


def _selector_size(located: Located, values: dict[str, Any], pools: list[tuple[int, dict[str, Any]]], first: str) -> list[Problem]:
    from renderer import driverimage
    from renderer.components import dra_common

    terms = 1
    for _, pool in pools:
        terms *= max(1, len(driverimage.pool_selector(values, pool)))
    if terms <= dra_common.MAX_TERMS:
        return []
    return [
        _problem(
            located,
            (first,),
            f"keeping the device-plugin operands off the {len(pools)} dra pools takes {terms} node-selector terms (at most {dra_common.MAX_TERMS})",
            "give the dra pools a shared label (driver.nodeSelector) or fewer pools",
            "dra-selector-size",
        )
    ]
