"""One module per component of the GPU stack; this registry fixes their order.

To find where an object is built: ``renderer/components/<component>.py``. Each module has
``build(model) -> list[dict]`` and may have ``enabled(model) -> bool``; otherwise the
component's values key ``<key>.enabled`` decides.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from renderer.components import device_plugin, namespace, runtimeclass
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

    def enabled(self, model: Model) -> bool:
        if self.gate is not None:
            return self.gate(model)
        return not self.key or model.enabled(self.key)


COMPONENTS: tuple[Component, ...] = (
    Component("namespace", "", namespace.build),
    Component("runtimeclass", "", runtimeclass.build, runtimeclass.enabled),
    Component("device-plugin", "devicePlugin", device_plugin.build),
)


def by_name(name: str) -> Component:
    for comp in COMPONENTS:
        if comp.name == name:
            return comp
    raise KeyError(name)
