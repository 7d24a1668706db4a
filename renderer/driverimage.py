"""Which driver image each node pool gets, and how the pool's nodes are selected.

The GPU Operator picks the driver image at runtime from a node's NFD labels. gpu-render does it
at build time, per node pool, imitating the OS-tag rule of the configured operator release
(``cluster.operatorRelease``). Everything here is pure: plain data in, :class:`Pool` out.

Rules (see docs/driver-images.md):

* OS tag: ``ID + VERSION_ID``; RHEL-like systems keep only the major version, depending on the
  release (:data:`RELEASES`).
* ``repository/image:version-<ostag>``; a digest version (``sha256:...``) is used as given,
  without a suffix; an image-only reference (repository and version empty) is used verbatim.
* Precompiled: ``repository/image:<branch>-<kernel>-<ostag>``; needs the pool's kernel and
  refuses digests.
* The same OS suffix rule for the GDS (nvidia-fs), GDRCopy (gdrdrv) and vGPU manager images.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from renderer._version import OPERATOR_RELEASE
from renderer.merge import merged_view
from renderer.model import TOOLKIT_PATHS, Pool

NFD = "feature.node.kubernetes.io"
LABEL_ID = f"{NFD}/system-os_release.ID"
LABEL_VERSION = f"{NFD}/system-os_release.VERSION_ID"
LABEL_MAJOR = f"{NFD}/system-os_release.VERSION_ID.major"
LABEL_KERNEL = f"{NFD}/kernel-version.full"

DRIVER_TYPES = ("gpu", "vgpu", "vgpu-host-manager")
DAEMONSET_PREFIX = {
    "gpu": "nvidia-driver-daemonset",
    "vgpu": "nvidia-vgpu-driver-daemonset",
    "vgpu-host-manager": "nvidia-vgpu-manager-daemonset",
}
MAX_NAME = 63


def _major_only_v25_10(os_id: str, major: int | None) -> bool:
    return False


def _major_only_v26_3(os_id: str, major: int | None) -> bool:
    return os_id == "rocky" or (os_id == "rhel" and major is not None and major >= 10)


def _major_only_v26_7(os_id: str, major: int | None) -> bool:
    return os_id in ("rhel", "rocky", "ol")


RELEASES: dict[str, Callable[[str, int | None], bool]] = {
    "v25.10": _major_only_v25_10,
    "v26.3": _major_only_v26_3,
    "v26.7": _major_only_v26_7,
}
"""Operator release -> does its OS-tag rule keep only the major version of this OS?"""
NEWEST = OPERATOR_RELEASE


def _major(version: str) -> str:
    return version.split(".")[0]


def major_only(os_id: str, version: str, release: str = NEWEST) -> bool:
    """True when the release's OS tag (and so the pool's selector) drops the minor version."""
    rule = RELEASES.get(release)
    if rule is None:
        raise ValueError(f"unknown operator release {release!r}")
    major = _major(version)
    return rule(os_id, int(major) if major.isdigit() else None)


def os_tag(os_id: str, version: str, release: str = NEWEST) -> str:
    """``ID + VERSION_ID`` with the release's major-only rule for RHEL-like systems."""
    if major_only(os_id, version, release):
        return f"{os_id}{_major(version)}"
    return f"{os_id}{version}"


def os_selector(os_id: str, version: str, release: str = NEWEST) -> dict[str, str]:
    """NFD labels that select this OS: ``ID`` plus ``VERSION_ID`` or ``VERSION_ID.major``."""
    if major_only(os_id, version, release):
        return {LABEL_ID: os_id, LABEL_MAJOR: _major(version)}
    return {LABEL_ID: os_id, LABEL_VERSION: version}


_ARCH = re.compile(r"(x86_64|aarch64)([_+]64k)?")
_NOT_DNS = re.compile(r"[^a-z0-9.-]+")


def sanitize_kernel(kernel: str) -> str:
    """Kernel version as a name part: arch suffix stripped, ``_`` -> ``.``, lowercase, DNS-safe.

    ``5.14.0-427.37.1.el9_4.x86_64`` -> ``5.14.0-427.37.1.el9.4``.
    """
    out = _ARCH.sub("", kernel).replace("_", ".").lower()
    out = _NOT_DNS.sub("-", out)
    out = re.sub(r"([.-])[.-]+", r"\1", out)
    return out.strip(".-")


def dns_name(name: str, limit: int = MAX_NAME) -> str:
    """``name`` cut to ``limit`` characters; a cut name ends in a hash of the whole name."""
    if len(name) <= limit:
        return name
    digest = hashlib.sha256(name.encode("utf-8")).hexdigest()[:8]
    return f"{name[: limit - len(digest) - 1].rstrip('.-')}-{digest}"


def daemonset_name(pool_name: str, driver_type: str = "gpu", kernel_name: str = "") -> str:
    """``nvidia-driver-daemonset-<pool>`` (``-<kernel_name>``, the sanitised kernel, for
    precompiled drivers), <= 63 chars."""
    name = f"{DAEMONSET_PREFIX.get(driver_type, DAEMONSET_PREFIX['gpu'])}-{pool_name}"
    if kernel_name:
        name = f"{name}-{kernel_name}"
    return dns_name(name)


@dataclass(frozen=True)
class PoolIssue:
    """Something wrong with one pool's settings; ``key`` is the path inside the merged pool."""

    key: tuple[str, ...]
    message: str
    hint: str = ""
    code: str = ""
    warning: bool = False
    """A warning does not stop resolution (the image may still exist)."""


class PoolError(ValueError):
    """Raised by :func:`resolve_pool` for a pool that :func:`pool_issues` would reject."""

    def __init__(self, pool: str, issue: PoolIssue) -> None:
        super().__init__(f"node pool {pool!r}: {issue.message}")
        self.issue = issue


def _text(section: dict[str, Any], key: str) -> str:
    value = section.get(key)
    return "" if value is None else str(value)


def _is_digest(version: str) -> bool:
    return version.startswith("sha256:")


def image_path(section: dict[str, Any]) -> str:
    """``repository/image:version``, ``repository/image@sha256:...``, or the image alone."""
    repository, image, version = _text(section, "repository"), _text(section, "image"), _text(section, "version")
    if not repository and not version:
        return image
    ref = f"{repository}/{image}" if repository else image
    if _is_digest(version):
        return f"{ref}@{version}"
    return f"{ref}:{version}" if version else ref


def _image_only(section: dict[str, Any]) -> bool:
    return not _text(section, "repository") and not _text(section, "version")


def image_named(section: dict[str, Any]) -> bool:
    """False for an image-only section whose image has no tag or digest (``vgpu-manager``)."""
    return not _image_only(section) or bool(re.search(r"[:@]", _text(section, "image")))


def suffixed_image(section: dict[str, Any], tag: str) -> str:
    """The OS-suffixed image of a driver-like section (driver, GDS, GDRCopy, vGPU manager)."""
    ref = image_path(section)
    if _image_only(section) or "sha256:" in ref:
        return ref
    return f"{ref}-{tag}"


def precompiled_image(section: dict[str, Any], kernel: str, tag: str) -> str:
    """``repository/image:<branch>-<kernel>-<ostag>``; an image-only reference is used verbatim."""
    if _image_only(section):
        return _text(section, "image")
    return f"{image_path(section)}-{kernel}-{tag}"


def driver_type(driver: dict[str, Any]) -> str:
    """A pool's ``driver.driverType`` (the NVIDIADriver field). The chart's
    ``driver.nvidiaDriverCRD.driverType`` is not read: without ``nvidiaDriverCRD.enabled`` the
    operator deploys the ClusterPolicy's GPU driver whatever it says, and with it ``validate``
    refuses a type other than ``gpu`` (``driver-crd-driver-type``)."""
    return str(driver.get("driverType") or "gpu")


def _driver_source(values: dict[str, Any], pool: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """(merged driver settings of the pool, the pool's own ``driver`` entry), for reading."""
    own = pool.get("driver") or {}
    return merged_view(values.get("driver") or {}, own), own


def _vgpu_section(values: dict[str, Any], own: dict[str, Any]) -> dict[str, Any]:
    """``vgpuManager`` with the image keys a vgpu-host-manager pool sets in its own ``driver``."""
    fleet = values.get("driver") or {}
    # A key the pool states only counts when it is the pool's own: a pool entry that carries the
    # fleet driver's settings merged in (the chart's per-pool values do) keeps vgpuManager's image.
    return merged_view(values.get("vgpuManager") or {}, _vgpu_own(fleet, own))


def _vgpu_own(fleet: dict[str, Any], own: dict[str, Any]) -> dict[str, Any]:
    """The image keys a pool's own ``driver`` sets away from the fleet driver's."""
    return {k: own[k] for k in ("repository", "image", "version") if k in own and own[k] != fleet.get(k)}


def _main_section(values: dict[str, Any], driver: dict[str, Any], own: dict[str, Any]) -> dict[str, Any]:
    """Where the pool's main image comes from: the driver, or the vGPU manager for host pools."""
    if driver_type(driver) == "vgpu-host-manager":
        return _vgpu_section(values, own)
    return driver


def pool_issues(values: dict[str, Any], pool: dict[str, Any]) -> list[PoolIssue]:
    """Every reason this pool's image or selector cannot be resolved (empty when fine).

    ``values`` must already carry the defaults (:func:`renderer.resolve.with_defaults`).
    """
    driver, own = _driver_source(values, pool)
    kind = driver_type(driver)
    issues = _issues(values, pool, driver, kind, _main_section(values, driver, own))
    # refusals of combinations the operator refuses, which the pool still resolves: the chart's
    # analysis varies usePrecompiled / kernelModuleType through resolve_pool, and a variant that
    # raised would freeze those keys in every chart with GDS
    if bool(driver.get("usePrecompiled")):
        issues += _precompiled_sidecars(values, driver, kind)
    return issues + _pool_gds_open(values, pool, driver, kind)


def _issues(values: dict[str, Any], pool: dict[str, Any], driver: dict[str, Any], kind: str, main: dict[str, Any]) -> list[PoolIssue]:
    """:func:`pool_issues` given the pool's merged driver settings, its driver type and main
    image section (which resolving the pool needs too: made once)."""
    issues: list[PoolIssue] = []
    if kind not in DRIVER_TYPES:
        key = ("driver", "driverType")
        issues.append(PoolIssue(key, f"unknown driverType {kind!r}", "allowed: " + ", ".join(DRIVER_TYPES), "pool-driver-type"))
    release = str((values.get("cluster") or {}).get("operatorRelease") or NEWEST)
    if release not in RELEASES:
        issues.append(PoolIssue(("cluster", "operatorRelease"), f"unknown operator release {release!r}", "allowed: " + ", ".join(RELEASES), "operator-release"))
    if bool(driver.get("usePrecompiled")):
        version = _text(main, "version")
        if _is_digest(version) or (_image_only(main) and "@sha256:" in _text(main, "image")):
            issues.append(PoolIssue(("driver", "version") if version else ("driver", "image"), "a digest cannot be used with usePrecompiled: precompiled images are tagged per kernel", "set driver.version to the driver branch (e.g. '570') or turn usePrecompiled off", "pool-precompiled-digest"))
        if version and not _is_digest(version) and not _image_only(main) and not re.fullmatch(r"[0-9]+", version):
            issues.append(PoolIssue(("driver", "version"), f"precompiled images are tagged by driver branch, not by full version ({version!r})", f"use the branch, e.g. {_major(version)!r}", "pool-precompiled-branch", warning=True))
        if not str(pool.get("kernel") or ""):
            issues.append(PoolIssue((), "usePrecompiled needs the pool's kernel (the image tag and node selector contain it)", "add kernel: <uname -r of the pool's nodes>, as NFD reports it in kernel-version.full", "pool-precompiled-kernel"))
    issues += _verbatim_images(values, pool, driver, kind, main)
    issues += _config_dirs(pool, driver, kind)
    if kind == "vgpu-host-manager" and not image_named(main):
        issues.append(PoolIssue(("driver", "driverType"), f"the vGPU manager image has no repository or version ({_text(main, 'image')!r})", "set vgpuManager.repository and vgpuManager.version to the image you built from the NVIDIA vGPU software", "pool-vgpu-image"))
    return issues


def _config_dirs(pool: dict[str, Any], driver: dict[str, Any], kind: str) -> list[PoolIssue]:
    """A repository or certificate ConfigMap for an OS the operator has no folder for: its
    ``getRepoConfigPath`` / ``getCertConfigPath`` fail ("not supported for distribution"), the
    driver transform returns the error and no driver DaemonSet is created (a precompiled driver
    takes neither ConfigMap). gpu-render would have left the files out without a word."""
    os_id = str((pool.get("os") or {}).get("id", "ubuntu"))
    if kind == "vgpu-host-manager" or bool(driver.get("usePrecompiled")) or os_id in OS_FAMILIES:
        return []
    supported = ", ".join(sorted(OS_FAMILIES))
    issues: list[PoolIssue] = []
    repo = driver.get("repoConfig") or {}
    if isinstance(repo, dict) and (repo.get("configMapName") or repo.get("name")):
        issues.append(PoolIssue(("driver", "repoConfig"), f"the operator has no repository folder for OS {os_id!r} (repository configuration not supported for distribution): it creates no driver DaemonSet", f"leave repoConfig out for this pool (OSes with one: {supported})", "pool-config-dir"))
    cert = driver.get("certConfig") or {}
    if isinstance(cert, dict) and cert.get("name"):
        issues.append(PoolIssue(("driver", "certConfig"), f"the operator has no certificate folder for OS {os_id!r} (certificate configuration not supported for distribution): it creates no driver DaemonSet", f"leave certConfig out for this pool (OSes with one: {supported})", "pool-config-dir"))
    return issues


SIDECAR_NAMES = {"gds": "GPUDirect Storage (nvidia-fs)", "gdrcopy": "GDRCopy (gdrdrv)"}


GDS_OPEN_RM = (2, 17, 5)
"""The first GDS release supported only with the open kernel modules (the operator's
``consts.MinimumGDSVersionForOpenRM``, v2.17.5)."""


def _needs_open_modules(version: str) -> bool:
    """``IsOpenKernelModulesRequired`` of an NVIDIADriver's GDS: a digest, or a version from
    v2.17.5 on (one that does not read as a version is compared as semver does: lower)."""
    if version.startswith("sha256"):
        return True
    found = re.fullmatch(r"v?(\d+)(?:\.(\d+))?(?:\.(\d+))?(-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?", version)
    if not found:
        return False
    numbers = tuple(int(x or 0) for x in found.groups()[:3])
    return numbers > GDS_OPEN_RM or (numbers == GDS_OPEN_RM and not found.group(4))  # a pre-release sorts before its release


def _pool_gds_open(values: dict[str, Any], pool: dict[str, Any], driver: dict[str, Any], kind: str) -> list[PoolIssue]:
    """A warning for a pool whose own ``driver.gds.enabled`` is true (an NVIDIADriver's GDS: the
    ClusterPolicy has its GDS at the top level) with a GDS release that needs the open kernel
    modules and a ``kernelModuleType`` other than ``open``: the NVIDIADriver controller refuses
    the CR (NotReady, no driver DaemonSet); the ClusterPolicy path does not check, so the
    fleet's ``gds`` does not warn. Not refused: ``auto`` picks the open modules on the GPUs and
    driver branches GDS runs on, and the pool-level sidecar is a knob of the chart."""
    own = (pool.get("driver") or {}).get("gds") or {}
    if kind == "vgpu-host-manager" or not own.get("enabled") or str(driver.get("kernelModuleType") or "auto") == "open":
        return []
    version = _text(merged_view(values.get("gds") or {}, own), "version")
    if not _needs_open_modules(version):
        return []
    message = f"GPUDirect Storage {version!r} needs the open kernel modules: the GPU Operator refuses a pool's own (NVIDIADriver) GDS with kernelModuleType {str(driver.get('kernelModuleType') or 'auto')!r} and deploys no driver; gpu-render renders it, and nvidia-fs loads only if the driver picks the open modules"
    hint = "set kernelModuleType: open for this pool (or the fleet's driver.kernelModuleType)"
    return [PoolIssue(("driver", "gds", "enabled"), message, hint, "pool-gds-open-modules", warning=True)]


def _pool_tag(values: dict[str, Any], pool: dict[str, Any]) -> str:
    """The pool's OS tag as its release makes it (``<ostag>`` under an unknown release)."""
    release = str((values.get("cluster") or {}).get("operatorRelease") or NEWEST)
    os_info = pool.get("os") or {}
    if release not in RELEASES:
        return "<ostag>"
    return os_tag(str(os_info.get("id", "ubuntu")), str(os_info.get("version", "22.04")), release)


def _verbatim_images(values: dict[str, Any], pool: dict[str, Any], driver: dict[str, Any], kind: str, main: dict[str, Any]) -> list[PoolIssue]:
    """A warning for each image-only reference with a tag that the pool pulls (driver or vGPU
    manager, GDS, GDRCopy): gpu-render pulls it verbatim, where the operator's
    ``resolveDriverTag`` (and the NVIDIADriver's ``GetImagePath``) append the node's OS tag,
    and ``-<kernel>`` before it for a precompiled driver, to anything but a digest."""
    own = pool.get("driver") or {}
    sections: list[tuple[tuple[str, ...], dict[str, Any], bool]] = []
    if kind == "vgpu-host-manager":
        sections.append((("driver", "image") if "image" in own else ("vgpuManager", "image"), main, False))
    else:
        sections.append((("driver", "image"), main, bool(driver.get("usePrecompiled"))))
        for key in SIDECAR_NAMES:
            section = merged_view(values.get(key) or {}, driver.get(key) or {})
            if section.get("enabled"):
                place: tuple[str, ...] = ("driver", key, "image") if "image" in (own.get(key) or {}) else (key, "image")
                sections.append((place, section, False))
    out: list[PoolIssue] = []
    for place, section, precompiled in sections:
        ref = _text(section, "image")
        if not _image_only(section) or "sha256:" in ref or not re.search(r":[^/]+$", ref):
            continue
        kernel = str(pool.get("kernel") or "<kernel>")
        tag = _pool_tag(values, pool)
        theirs = f"{ref}-{kernel}-{tag}" if precompiled else f"{ref}-{tag}"
        message = f"the image-only reference {ref!r} is pulled as written; the GPU Operator appends the node's OS tag to it ({theirs!r}, resolveDriverTag), unless it is a digest"
        hint = "to pull what the operator pulls, set repository, image and version (gpu-render adds the suffix); keep the full reference if it is the exact image to pull"
        out.append(PoolIssue(place, message, hint, "image-only-verbatim", warning=True))
    return out


def _precompiled_sidecars(values: dict[str, Any], driver: dict[str, Any], kind: str) -> list[PoolIssue]:
    """GDS / GDRCopy on a precompiled pool (the fleet section with the pool's own over it): the
    operator refuses the pair on both paths (``transformGDSContainer`` /
    ``transformGDRCopyContainer`` return an error, the NVIDIADriver controller marks the CR
    NotReady), so no driver DaemonSet is deployed; the sidecar would build its module against
    a precompiled driver container, which ships no kernel sources to build it with."""
    if kind == "vgpu-host-manager":
        return []  # no GDS / GDRCopy sidecars on vGPU host pools
    found = [key for key in SIDECAR_NAMES if merged_view(values.get(key) or {}, driver.get(key) or {}).get("enabled")]
    if not found:
        return []
    names = " and ".join(SIDECAR_NAMES[key] for key in found)
    message = f"{names} cannot be used with usePrecompiled: the GPU Operator refuses the combination and deploys no driver (the sidecar builds its module from driver sources a precompiled image does not have)"
    keys = " and ".join(f"{key}.enabled" for key in found)
    hint = f"turn usePrecompiled off for this pool, or set {keys} false (fleet-wide, or in the pool's nodePools[].driver)"
    return [PoolIssue(("driver", "usePrecompiled"), message, hint, "pool-precompiled-sidecar")]


OS_FAMILIES = {
    "debian": "apt",
    "ubuntu": "apt",
    "rhel": "rhel",
    "centos": "yum",
    "rhcos": "yum",
    "rocky": "yum",
    "ol": "yum",
    "sles": "suse",
    "sl-micro": "suse",
}
"""OS ``ID`` -> what the driver pod mounts for it: ``apt``/``yum``/``suse`` repository and CA
directories, ``rhel`` (yum plus the host's subscription files), ``suse`` (with its credentials);
any other OS (``other``) gets none of them."""
FAMILIES = ("apt", "rhel", "yum", "suse", "other")


REPO_DIRS = {"apt": "/etc/apt/sources.list.d", "rhel": "/etc/yum.repos.d", "yum": "/etc/yum.repos.d", "suse": "/etc/zypp/repos.d"}
CERT_DIRS = {
    "apt": "/usr/local/share/ca-certificates",
    "rhel": "/etc/pki/ca-trust/extracted/pem",
    "yum": "/etc/pki/ca-trust/extracted/pem",
    "suse": "/etc/pki/trust/anchors",
}
"""Where the driver container reads repository files and CA certificates, by OS family (a pool
mounts its ConfigMaps there; none for precompiled drivers)."""


def os_family(os_id: str) -> str:
    return OS_FAMILIES.get(os_id, "other")


def subscriptions(values: dict[str, Any], family: str, runtime: str, precompiled: bool, driver: dict[str, Any]) -> str:
    """The host's RHEL/SLES entitlement files the driver build mounts (``rhel``, ``suse`` or ""):
    not on OpenShift, not for RHEL with CRI-O or with a repo config, not for precompiled
    drivers, as upstream."""
    if family not in ("rhel", "suse") or precompiled or ((values.get("cluster") or {}).get("capabilities") or {}).get("openshift"):
        return ""
    repo = driver.get("repoConfig") or {}
    if family == "rhel" and (runtime == "crio" or repo.get("configMapName") or repo.get("name")):
        return ""
    return family


SUBSCRIPTIONS: dict[str, list[tuple[str, str, str, str]]] = {
    "rhel": [
        ("subscription-entitlement", "/etc/pki/entitlement", "/run/secrets/etc-pki-entitlement", "Directory"),
        ("subscription-redhat-repo", "/etc/yum.repos.d/redhat.repo", "/run/secrets/redhat.repo", "File"),
        ("subscription-rhsm", "/etc/rhsm", "/run/secrets/rhsm", "Directory"),
    ],
    "suse": [
        ("subscription-zypp-credentials", "/etc/zypp/credentials.d", "/etc/zypp/credentials.d", "Directory"),
        ("subscription-suseconnect", "/etc/SUSEConnect", "/etc/SUSEConnect", "FileOrCreate"),
    ],
}
"""Host subscription files the driver build needs to reach the distribution's packages:
(volume, host path, container path, hostPath type)."""


def host_files(subscription: str, host_modules: bool) -> tuple[tuple[dict[str, Any], ...], tuple[dict[str, Any], ...]]:
    """The driver container's mounts and volumes of host files for the pool's OS: the
    subscription files of ``subscription`` (:func:`subscriptions`), and ``/lib/modules`` for a
    precompiled driver on SUSE (``host_modules``; never both, as upstream)."""
    entries = [*SUBSCRIPTIONS.get(subscription, [])]
    if host_modules:
        entries.append(("lib-modules", "/lib/modules", "/run/host/lib/modules", "Directory"))
    mounts = tuple({"name": name, "mountPath": ctr, "readOnly": True} for name, _, ctr, _ in entries)
    volumes = tuple({"name": name, "hostPath": {"path": host, "type": kind}} for name, host, _, kind in entries)
    return mounts, volumes


CONFIG_MOUNTS = {
    "repo-config": "repoMounts",
    "cert-config": "certMounts",
    "kernel-module-config": "kernelModuleMounts",
    "vgpu-kernel-module-config": "vgpuKernelModuleMounts",
}
"""The pool's ConfigMaps (by volume; the vGPU manager's kernel module ConfigMap apart) and the
chart's pool facts of their mounts (``node.<fact>``)."""


def config_mounts(values: dict[str, Any], driver: dict[str, Any], repo_dir: str, cert_dir: str) -> dict[str, tuple[dict[str, Any], ...]]:
    """What each of the pool's ConfigMaps mounts into the driver container (the vGPU manager's,
    ``vgpuManager.kernelModuleConfig``, into its container) once it is named
    (``Pool.config_mounts``): one file per declared key (the operator lists the keys from the
    API; here ``repoConfig.keys``, ``certConfig.keys``, ``kernelModuleConfig.keys``), a
    repository ConfigMap without keys whole at the repository directory, nothing for the
    repository or the certificates where the OS has no directory (precompiled drivers)."""

    def keys(section: str, source: dict[str, Any] = driver) -> list[str]:
        return [str(k) for k in (source.get(section) or {}).get("keys") or []]

    def per_key(volume: str, names: list[str], directory: str) -> tuple[dict[str, Any], ...]:
        return tuple({"name": volume, "mountPath": f"{directory}/{key}", "subPath": key, "readOnly": True} for key in names)

    repo = keys("repoConfig")
    return {
        "repo-config": (per_key("repo-config", repo, repo_dir) if repo else ({"name": "repo-config", "mountPath": repo_dir, "readOnly": True},)) if repo_dir else (),
        "cert-config": per_key("cert-config", keys("certConfig"), cert_dir) if cert_dir else (),
        "kernel-module-config": per_key("kernel-module-config", keys("kernelModuleConfig"), "/drivers"),
        "vgpu-kernel-module-config": per_key("kernel-module-config", keys("kernelModuleConfig", values.get("vgpuManager") or {}), "/drivers"),
    }


def resolve_pool(values: dict[str, Any], pool: dict[str, Any]) -> Pool:
    """Resolve one ``nodePools`` entry; ``values`` must already carry the defaults."""
    release = str(values["cluster"].get("operatorRelease") or NEWEST)
    os_info = pool.get("os") or {}
    os_id = str(os_info.get("id", "ubuntu"))
    os_version = str(os_info.get("version", "22.04"))
    kernel = str(pool.get("kernel") or "")
    if release not in RELEASES:  # reported by pool_issues below
        return _assemble(values, pool, "", {}, "other", kernel, "")
    facts = (os_tag(os_id, os_version, release), os_selector(os_id, os_version, release), os_family(os_id))
    return _assemble(values, pool, *facts, kernel, sanitize_kernel(kernel))


def pool_facts(values: dict[str, Any], pool: Pool) -> dict[str, Any]:
    """What :func:`resolve_pool` derived from the pool's OS and kernel, as chart values
    (``driver.pools.<pool>.node``): :func:`pool_from_facts` resolves the pool from them alone."""
    release = str(values["cluster"].get("operatorRelease") or NEWEST)
    return {
        "osTag": pool.os_tag,
        "osSelector": os_selector(pool.os_id, pool.os_version, release),
        "osFamily": pool.os_family,
        "kernel": pool.kernel,
        "kernelName": pool.kernel_name,
        "runtime": pool.runtime,  # resolved: the chart does not read cluster.containerRuntime
        "hostMounts": [dict(m) for m in pool.host_mounts],
        "hostVolumes": [dict(v) for v in pool.host_volumes],
        "repoDir": pool.repo_dir,
        "certDir": pool.cert_dir,
        **{fact: [dict(m) for m in pool.config_mounts.get(volume, ())] for volume, fact in CONFIG_MOUNTS.items()},
        "selectorExpressions": [dict(e) for e in pool.selector_expressions],
        "vgpuImage": pool.vgpu_image,
    }


def pool_from_facts(values: dict[str, Any], pool: dict[str, Any], facts: dict[str, Any]) -> Pool:
    """The pool of a ``nodePools`` entry whose OS-derived parts are given (:func:`pool_facts`).

    The chart analysis resolves a pool for most of its builds: the fields are worked out once
    and the :class:`Pool` made once from them (not made, then replaced field by field)."""
    kernel = str(facts.get("kernel") or "")
    entry = dict(pool)  # the nodePools entry as it is, with what the facts say over it
    for key, fact in (("kernel", kernel), ("runtime", str(facts.get("runtime") or ""))):
        if fact and entry.get(key) != fact:
            entry[key] = fact
    selector = {str(k): str(v) for k, v in (facts.get("osSelector") or {}).items()}
    made = _fields(values, entry, str(facts.get("osTag") or ""), selector, str(facts.get("osFamily") or "other"), kernel, str(facts.get("kernelName") or ""))
    vgpu = str(facts.get("vgpuImage") or "") or suffixed_image(values.get("vgpuManager") or {}, made["os_tag"])
    if made["driver_type"] == "vgpu-host-manager" and not made["precompiled"]:  # its main image is the vGPU manager's
        made["image"] = vgpu
    made.update(
        host_mounts=tuple(facts["hostMounts"]) if isinstance(facts.get("hostMounts"), list) else (),
        host_volumes=tuple(facts["hostVolumes"]) if isinstance(facts.get("hostVolumes"), list) else (),
        repo_dir=str(facts.get("repoDir") or ""),
        cert_dir=str(facts.get("certDir") or ""),
        config_mounts={volume: tuple(facts[fact]) if isinstance(facts.get(fact), list) else () for volume, fact in CONFIG_MOUNTS.items()},
        selector_expressions=tuple(facts["selectorExpressions"]) if isinstance(facts.get("selectorExpressions"), list) else made["selector_expressions"],
        vgpu_image=str(facts.get("vgpuImage") or ""),
        upgrade_budget=facts["upgradeBudget"] if isinstance(facts.get("upgradeBudget"), (int, str)) else None,
        upgrade_held=bool(facts["upgradeHeld"]) if "upgradeHeld" in facts else None,
        toolkit=(bool(facts["toolkitLeader"]), str(facts.get("toolkitDaemonSet") or ""), tuple(facts.get("toolkitTerms") or ())) if "toolkitLeader" in facts else None,
        toolkit_paths={k: str(v or "") for k, v in facts.items() if k in TOOLKIT_PATHS} if "toolkitRuntime" in facts else None,
        # the fact says whether the pool's own image keys win (the chart's pool values carry the
        # fleet's keys merged in, so they cannot tell)
        images={**made["images"], "vgpuManager": vgpu},
    )
    return Pool(**made)


def _assemble(values: dict[str, Any], pool: dict[str, Any], tag: str, os_labels: dict[str, str], family: str, kernel: str, kernel_name: str) -> Pool:
    return Pool(**_fields(values, pool, tag, os_labels, family, kernel, kernel_name))


def _fields(values: dict[str, Any], pool: dict[str, Any], tag: str, os_labels: dict[str, str], family: str, kernel: str, kernel_name: str) -> dict[str, Any]:
    """The :class:`Pool` fields of a ``nodePools`` entry given what its OS and kernel decide."""
    name = str(pool["name"])
    driver, own = _driver_source(values, pool)
    kind = driver_type(driver)
    main = _main_section(values, driver, own)
    issues = [i for i in _issues(values, pool, driver, kind, main) if not i.warning]
    if issues:
        raise PoolError(name, issues[0])
    os_info = pool.get("os") or {}
    precompiled = bool(driver.get("usePrecompiled"))
    # what transformDriverContainer applies only under a condition, a fleet setting taken out where
    # it does not hold: secretEnv not for a precompiled driver (it returns before it), the host's
    # MOFED sources only with GPUDirect RDMA on
    if precompiled:
        driver = _without_fleet(driver, own, "", "secretEnv", "")
    if not (driver.get("rdma") or {}).get("enabled"):
        driver = _without_fleet(driver, own, "rdma", "useHostMofed", False)
    image = precompiled_image(main, kernel, tag) if precompiled else suffixed_image(main, tag)
    selector = _with_driver_labels(dict(os_labels), kernel, precompiled, driver)
    gds = merged_view(values.get("gds") or {}, driver.get("gds") or {})
    gdrcopy = merged_view(values.get("gdrcopy") or {}, driver.get("gdrcopy") or {})
    vgpu = _vgpu_section(values, own if kind == "vgpu-host-manager" else {})
    images = {
        "driver": image,
        "gds": suffixed_image(gds, tag),
        "gdrcopy": suffixed_image(gdrcopy, tag),
        "vgpuManager": suffixed_image(vgpu, tag),
    }
    runtime = str(pool.get("runtime") or values["cluster"].get("containerRuntime", "containerd"))
    mounts, volumes = host_files(subscriptions(values, family, runtime, precompiled, driver), precompiled and family == "suse")
    repo_dir = "" if precompiled else REPO_DIRS.get(family, "")
    cert_dir = "" if precompiled else CERT_DIRS.get(family, "")
    return dict(
        name=name,
        os_id=str(os_info.get("id", "ubuntu")),
        os_version=str(os_info.get("version", "22.04")),
        kernel=kernel,
        runtime=runtime,
        driver=driver,  # (_driver_source made it: the fleet driver settings with the pool's own over them)
        os_tag=tag,
        image=image,
        node_selector=selector,
        daemonset_name=daemonset_name(name, kind, kernel_name if precompiled and kernel else ""),
        precompiled=precompiled,
        images=images,
        driver_type=kind,
        values=dict(pool),
        os_family=family,
        kernel_name=kernel_name,
        host_mounts=mounts,
        host_volumes=volumes,
        repo_dir=repo_dir,
        cert_dir=cert_dir,
        config_mounts=config_mounts(values, driver, repo_dir, cert_dir),
        selector_expressions=selector_expressions(selector),
        vgpu_image=images["vgpuManager"] if kind == "vgpu-host-manager" and _vgpu_own(values.get("driver") or {}, own) else "",
    )


def _without_fleet(driver: dict[str, Any], own: dict[str, Any], section: str, key: str, off: Any) -> dict[str, Any]:
    """``driver`` with ``key`` (of ``section``, "" for the top) set to ``off`` where its value is
    the fleet's: the ClusterPolicy's transform leaves it out there. A pool's own setting (an
    NVIDIADriver's, which the state-driver template applies whatever) stays."""
    where = driver.get(section) if section else driver
    mine = own.get(section) if section else own
    if not isinstance(where, dict) or not where.get(key) or key in (mine if isinstance(mine, dict) else {}):
        return driver
    changed = {**where, key: off}
    return {**driver, section: changed} if section else changed


def selector_expressions(selector: dict[str, str]) -> tuple[dict[str, Any], ...]:
    """A node selector as node-affinity ``matchExpressions``, sorted by key."""
    return tuple({"key": key, "operator": "In", "values": [value]} for key, value in sorted(selector.items()))


def _selector(os_id: str, os_version: str, release: str, kernel: str, precompiled: bool, driver: dict[str, Any]) -> dict[str, str]:
    return _with_driver_labels(os_selector(os_id, os_version, release), kernel, precompiled, driver)


def _with_driver_labels(selector: dict[str, str], kernel: str, precompiled: bool, driver: dict[str, Any]) -> dict[str, str]:
    """The OS labels plus the kernel (precompiled) and the pool's own ``driver.nodeSelector``."""
    if precompiled:
        selector[LABEL_KERNEL] = kernel
    for key, value in sorted((driver.get("nodeSelector") or {}).items()):
        selector.setdefault(str(key), str(value))
    return selector


def pool_selector(values: dict[str, Any], pool: dict[str, Any]) -> dict[str, str]:
    """The node selector :func:`resolve_pool` gives the pool, without resolving the rest."""
    release = str(values["cluster"].get("operatorRelease") or NEWEST)
    os_info = pool.get("os") or {}
    driver, _ = _driver_source(values, pool)
    return _selector(str(os_info.get("id", "ubuntu")), str(os_info.get("version", "22.04")), release, str(pool.get("kernel") or ""), bool(driver.get("usePrecompiled")), driver)


def selectors_overlap(a: dict[str, str], b: dict[str, str]) -> bool:
    """Could one node carry both selectors' labels? (No shared key with different values.)"""
    for key in a.keys() & b.keys():
        if a[key] != b[key]:
            return False
    for one, other in ((a, b), (b, a)):
        if LABEL_VERSION in one and LABEL_MAJOR in other and _major(one[LABEL_VERSION]) != other[LABEL_MAJOR]:
            return False
    return True


def matches(selector: dict[str, str], labels: dict[str, str]) -> bool:
    """Does a node with ``labels`` satisfy ``selector``?"""
    return all(labels.get(k) == v for k, v in selector.items())
