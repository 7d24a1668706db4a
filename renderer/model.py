"""The resolved model: fully defaulted values plus everything derived from them.

``resolve`` produces one :class:`Model` per cluster (or one for the fleet base). Component
builders read only the model, never files, so rendering is a pure function of it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

TOOLKIT_PATHS = ("toolkitRuntime", "toolkitConfigDir", "toolkitConfigFile", "toolkitDropIn", "toolkitDropInDir", "toolkitDropInFile", "toolkitSocketDir", "toolkitSocketFile", "toolkitConfigSource")
"""Keys of :attr:`Pool.toolkit_paths`, as the pool's facts in the chart values (``node.<key>``)."""


@dataclass(frozen=True)
class Pool:
    """One node pool with its driver settings resolved to an image and a node selector."""

    name: str
    os_id: str
    os_version: str
    kernel: str
    runtime: str
    driver: dict[str, Any]
    os_tag: str
    image: str
    node_selector: dict[str, str]
    daemonset_name: str
    precompiled: bool = False
    images: dict[str, str] = field(default_factory=dict)
    """Per-pool OS-suffixed images: ``driver``, ``gds``, ``gdrcopy``, ``vgpuManager``."""
    values: dict[str, Any] = field(default_factory=dict)
    """The pool's own entry from ``nodePools`` (gpuProduct, mig, devicePluginConfig, ...)."""
    driver_type: str = "gpu"
    """``gpu``, ``vgpu`` (guest driver) or ``vgpu-host-manager`` (image is the vGPU manager's)."""
    os_family: str = "other"
    """How the OS keeps packages and certificates (:data:`renderer.driverimage.OS_FAMILIES`)."""
    kernel_name: str = ""
    """The kernel as a name part (:func:`renderer.driverimage.sanitize_kernel`)."""
    host_mounts: tuple[dict[str, Any], ...] = ()
    """Host files the driver container mounts for the pool's OS (after its other mounts): the
    RHEL/SLES subscription files (:func:`renderer.driverimage.subscriptions`) or, for a
    precompiled driver on SUSE, ``/lib/modules`` (:func:`renderer.driverimage.host_files`)."""
    host_volumes: tuple[dict[str, Any], ...] = ()
    """The hostPath volumes of :attr:`host_mounts`."""
    repo_dir: str = ""
    """Where a repository ConfigMap is mounted (the OS family's directory); empty for none
    (precompiled drivers, an OS without one)."""
    cert_dir: str = ""
    """Where a CA certificate ConfigMap is mounted; empty for none."""
    config_mounts: dict[str, tuple[dict[str, Any], ...]] = field(default_factory=dict)
    """What the pool's ConfigMaps mount when they are named, by volume (``repo-config``,
    ``cert-config``, ``kernel-module-config``; the chart's ``node.repoMounts``, ``node.certMounts``,
    ``node.kernelModuleMounts``): one file per declared key (``keys``), the whole repository
    directory when the repository ConfigMap declares none; none where the OS has no directory
    (:func:`renderer.driverimage.config_mounts`)."""
    vgpu_image: str = ""
    """The vGPU manager image of a ``vgpu-host-manager`` pool whose own ``driver`` names one
    (repository, image or version of its own); empty when ``vgpuManager``'s is used."""
    toolkit: tuple[bool, str, tuple[dict[str, Any], ...]] | None = None
    """The container toolkit's grouping as facts of this pool (the chart's ``node.toolkitLeader``,
    ``node.toolkitDaemonSet``, ``node.toolkitTerms``): whether the pool's runtime setup gets its
    DaemonSet from this pool, that DaemonSet's name, and its node-selector terms (narrowed to
    the setup's pools when pools differ, the operand's own when they agree). None:
    computed from the pool list (:func:`renderer.components.container_toolkit.pool_groups`)."""
    toolkit_paths: dict[str, str] | None = None
    """The pool's runtime setup as the container toolkit's pod takes it (the chart's
    ``node.toolkitRuntime``, ``node.toolkitConfigDir``, ``node.toolkitSocketFile``, ...: keys
    :data:`TOOLKIT_PATHS`). None: worked out from the pool's ``runtime`` and ``runtimeConfig``
    (:func:`renderer.components.container_toolkit.pool_paths`)."""
    selector_expressions: tuple[dict[str, Any], ...] = ()
    upgrade_budget: int | str | None = None
    """The driver DaemonSet's ``maxUnavailable`` from the pool's ``upgradePolicy`` (the chart's
    ``node.upgradeBudget``; 0: OnDelete). None: worked out from the policy
    (:func:`renderer.components.driver.upgrade_budget`)."""
    upgrade_held: bool | None = None
    """The budget is zero, so the driver DaemonSet stays OnDelete (the chart's ``node.upgradeHeld``:
    a boolean fact, so that the chart asks it beside ``autoUpgrade`` for each pool, not only the
    first pool's budget). None: ``not upgrade_budget``."""
    """``node_selector`` as node-affinity ``matchExpressions`` (``In`` one value, sorted by key)."""

    @property
    def resource_allocation(self) -> str:
        """``device-plugin`` (default) or ``dra``: which stack hands the pool's GPUs to pods."""
        return str(self.values.get("resourceAllocation") or "device-plugin")


@dataclass(frozen=True)
class Model:
    """Everything a component builder may read."""

    values: dict[str, Any]
    cluster: str
    pools: tuple[Pool, ...] = ()
    unpruned: dict[str, Any] | None = field(default=None, compare=False, repr=False)
    """``values`` before :func:`renderer.releasegate.prune` took away the keys the imitated
    release does not have (None: the same). No builder reads it: the chart's values keep every
    key (:func:`renderer.emit.helm_values.chart_values`)."""

    @property
    def namespace(self) -> str:
        return str(self.values["cluster"]["namespace"])

    @property
    def kube_version(self) -> str:
        return str(self.values["cluster"]["kubeVersion"])

    @property
    def release(self) -> str:
        return str(self.values["cluster"]["operatorRelease"])

    @property
    def nri_plugin(self) -> bool:
        """NRI plugin mode (``cdi.nriPluginEnabled``). A release whose ClusterPolicy has no such
        key never sees it here: :func:`renderer.releasegate.prune` took it out of ``values``."""
        return bool(self.section("cdi").get("nriPluginEnabled"))

    @property
    def sandbox_mode(self) -> str:
        """``sandboxWorkloads.mode`` (``kubevirt``, ``kata``); empty on a release whose
        ClusterPolicy has no such field (v25.10: every sandbox operand deploys with its own
        ``enabled``, whatever the mode; :func:`renderer.releasegate.prune` left it out)."""
        return str(self.section("sandboxWorkloads").get("mode") or "")

    @property
    def dra_pools(self) -> tuple[Pool, ...]:
        """The pools whose GPUs the NVIDIA DRA driver allocates (``resourceAllocation: dra``)."""
        return tuple(p for p in self.pools if p.resource_allocation == "dra")

    @property
    def dra(self) -> bool:
        """The DRA stack runs: some pool has ``resourceAllocation: dra``. (The chart's model
        reads the value ``draDriver.enabled`` instead, which is derived from the pool list.)"""
        return bool(self.dra_pools)

    def section(self, key: str) -> dict[str, Any]:
        value = self.values.get(key) or {}
        assert isinstance(value, dict)
        return value

    def enabled(self, key: str) -> bool:
        return bool(self.section(key).get("enabled", False))
