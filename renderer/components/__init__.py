"""One module per component of the GPU stack; this registry fixes their order.

To find where an object is built: ``renderer/components/<component>.py``. Each module has
``build(model) -> list[dict]`` and may have ``enabled(model) -> bool``; otherwise the
component's values key ``<key>.enabled`` decides.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from renderer.components import (
    cc_manager,
    container_toolkit,
    dcgm,
    dcgm_exporter,
    device_plugin,
    dra_dcgm_exporter,
    dra_driver,
    dra_validator,
    driver,
    gpu_feature_discovery,
    kata_sandbox_device_plugin,
    mig_manager,
    mps_control_daemon,
    namespace,
    nfd,
    node_labeller,
    node_status_exporter,
    operator_validator,
    runtimeclass,
    sandbox_device_plugin,
    sandbox_validator,
    vfio_manager,
    vgpu_device_manager,
    vgpu_manager,
)
from renderer.components.common import Obj
from renderer.model import Model


@dataclass(frozen=True)
class Component:
    name: str
    """Folder name in output/base/ and chart template file name."""
    key: str
    """Values key that switches it (``<key>.enabled``); empty when always on."""
    build: Callable[[Model], list[Obj]]
    gate: Callable[[Model], bool] | None = None
    computed: tuple[tuple[str, tuple[Any, ...]], ...] = ()
    """Leaves (object ``Kind/name``, path; a named list item as ``("@", name)``) computed from
    the whole pool list: the Helm chart takes them from its computed values."""
    terms: str = ""
    """The object (``Kind/name``) whose required node-selector terms come from the pool list
    (the ``dra`` pools' selectors: :mod:`renderer.components.dra_common`): the Helm chart takes
    them from its computed values, ``generated."<component>/nodeSelectorTerms"``."""
    pool_objects: tuple[str, ...] = ()
    """Objects (``Kind/name``) built once per pool that says so in its facts, though not named
    after it when there is one (the container toolkit's DaemonSet): the chart prints them in the
    range over the pools, like an object named after its pool."""

    def enabled(self, model: Model) -> bool:
        if self.gate is not None:
            return self.gate(model)
        return not self.key or model.enabled(self.key)


COMPONENTS: tuple[Component, ...] = (
    Component("namespace", "", namespace.build),
    Component("runtimeclass", "", runtimeclass.build, runtimeclass.enabled),
    Component("nfd", "nfd", nfd.build, computed=nfd.COMPUTED),
    Component("node-labeller", "nodeLabeller", node_labeller.build, computed=node_labeller.COMPUTED),
    Component("driver", "driver", driver.build, driver.enabled),
    Component("container-toolkit", "toolkit", container_toolkit.build, pool_objects=(f"DaemonSet/{container_toolkit.NAME}",)),
    Component("operator-validator", "", operator_validator.build, terms=f"DaemonSet/{operator_validator.NAME}"),
    Component("dra-driver", "", dra_driver.build, dra_driver.enabled, terms=f"DaemonSet/{dra_driver.PLUGIN}"),  # on with a resourceAllocation: dra pool
    Component("dra-validator", "", dra_validator.build, dra_validator.enabled, terms=f"DaemonSet/{dra_validator.NAME}"),
    Component("device-plugin", "devicePlugin", device_plugin.build, terms=f"DaemonSet/{device_plugin.NAME}"),
    Component("plugin-config", "", device_plugin.config_map, device_plugin.config_created),
    Component("mps-control-daemon", "devicePlugin", mps_control_daemon.build, terms=f"DaemonSet/{mps_control_daemon.NAME}"),
    Component("dcgm", "dcgm", dcgm.build),
    Component("dcgm-exporter", "dcgmExporter", dcgm_exporter.build, terms=f"DaemonSet/{dcgm_exporter.NAME}"),
    Component("dcgm-exporter-dra", "dcgmExporter", dra_dcgm_exporter.build, dra_dcgm_exporter.enabled, terms=f"DaemonSet/{dra_dcgm_exporter.NAME}"),
    Component("gpu-feature-discovery", "gfd", gpu_feature_discovery.build, terms=f"DaemonSet/{gpu_feature_discovery.NAME}"),
    Component("mig-manager", "migManager", mig_manager.build, terms=f"DaemonSet/{mig_manager.NAME}"),
    Component("node-status-exporter", "nodeStatusExporter", node_status_exporter.build),
    Component("vgpu-manager", "vgpuManager", vgpu_manager.build, vgpu_manager.enabled),
    Component("vgpu-device-manager", "vgpuDeviceManager", vgpu_device_manager.build, vgpu_device_manager.enabled),
    Component("sandbox-validator", "", sandbox_validator.build, sandbox_validator.enabled),
    Component("vfio-manager", "vfioManager", vfio_manager.build, vfio_manager.enabled),
    Component("sandbox-device-plugin", "sandboxDevicePlugin", sandbox_device_plugin.build, sandbox_device_plugin.enabled),
    Component(
        "kata-sandbox-device-plugin",
        "kataSandboxDevicePlugin",
        kata_sandbox_device_plugin.build,
        kata_sandbox_device_plugin.enabled,
    ),
    Component("cc-manager", "ccManager", cc_manager.build, cc_manager.enabled),
)


def by_name(name: str) -> Component:
    for comp in COMPONENTS:
        if comp.name == name:
            return comp
    raise KeyError(name)
