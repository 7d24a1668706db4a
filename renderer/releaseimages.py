"""The component versions each imitated operator release's chart deploys, and the warning that
says where a policy on an older release gets gpu-render's default (newest) images instead.

``cluster.operatorRelease`` decides which objects, keys and OS-tag rules are rendered; the
images come from ``renderer/data/defaults.yaml`` (the newest release's chart) unless the policy
pins them. A v25.10 policy that pins nothing would run v26.7's toolkit, device plugin and
validator with v25.10's objects, where that operator deploys its own chart's versions: a
difference the warning names, with the versions to pin. Facts from the operator chart's
``values.yaml`` at v25.10.1 and v26.3.3 (the validator and node status exporter take the chart's
``appVersion``).
"""

from __future__ import annotations

import json
from typing import Any

from renderer.merge import Located
from renderer.problems import Problem, Severity
from renderer.releasegate import enabled, lookup

CODE = "release-images"

VERSIONS: dict[str, dict[str, str]] = {
    "v25.10": {
        "driver": "580.105.08",
        "driver.manager": "v0.9.1",
        "toolkit": "v1.18.1",
        "devicePlugin": "v0.18.1",
        "dcgm": "4.4.2-1-ubuntu22.04",
        "dcgmExporter": "4.4.2-4.7.0-distroless",
        "gfd": "v0.18.1",
        "migManager": "v0.13.1",
        "gds": "2.26.6",
        "gdrcopy": "v2.5.1",
        "validator": "v25.10.1",
        "nodeStatusExporter": "v25.10.1",
        "vgpuManager.driverManager": "v0.9.1",
        "vgpuDeviceManager": "v0.4.1",
        "vfioManager.driverManager": "v0.9.1",
        "sandboxDevicePlugin": "v1.4.0",
        "ccManager": "v0.1.1",
    },
    "v26.3": {
        "driver": "580.126.20",
        "driver.manager": "v0.11.0",
        "toolkit": "v1.19.1",
        "devicePlugin": "v0.19.3",
        "dcgm": "4.5.2-1-ubuntu22.04",
        "dcgmExporter": "4.5.3-4.8.2-distroless",
        "gfd": "v0.19.3",
        "migManager": "v0.14.2",
        "gds": "2.27.3",
        "gdrcopy": "v2.5.2",
        "validator": "v26.3.3",
        "nodeStatusExporter": "v26.3.3",
        "vgpuManager.driverManager": "v0.11.0",
        "vgpuDeviceManager": "v0.4.2",
        "vfioManager": "v0.11.0",
        "vfioManager.driverManager": "v0.11.0",
        "sandboxDevicePlugin": "v1.5.0",
        "kataSandboxDevicePlugin": "v0.0.3",
        "ccManager": "v0.4.0",
    },
}
"""Release -> image section (dotted) -> the version its chart deploys. The newest release is
gpu-render's defaults and is not listed. v25.10's VFIO manager ran a CUDA base image
(``cuda:13.0.1-base-ubi9``), not the k8s-driver-manager image later releases and gpu-render run:
left out (no version of this image to pin)."""

NEEDS: dict[str, tuple[str, ...]] = {
    **{s: ("sandboxWorkloads",) for s in ("vgpuManager", "vgpuDeviceManager", "vfioManager", "sandboxDevicePlugin", "kataSandboxDevicePlugin", "ccManager")},
    "gds": ("driver",),  # sidecars of the driver's pods
    "gdrcopy": ("driver",),
}
"""Image section -> further sections it is deployed only with."""


def _section(values: dict[str, Any], dotted: str) -> Any:
    node: Any = values
    for key in dotted.split("."):
        node = node.get(key) if isinstance(node, dict) else None
    return node


def _deployed(values: dict[str, Any], dotted: str) -> bool:
    """Is the image's operand deployed (``values`` with defaults, which say each ``enabled``)?"""
    top = dotted.split(".")[0]
    return enabled(values, (top, *NEEDS.get(top, ())))


def _pinned(located: Located, dotted: str) -> bool:
    """Did the policy set this image itself: a version, or an image reference of its own?"""
    mine = _section(located.data, dotted)
    if not isinstance(mine, dict):
        return False
    if dotted == "driver" and all(isinstance(p, dict) and ((p.get("driver") or {}).get("version")) for p in located.data.get("nodePools") or [{}]):
        return True  # every pool names its own driver
    return bool(mine.get("version")) or ("@" in str(mine.get("image", ""))) or (":" in str(mine.get("image", "")).rsplit("/", 1)[-1])


def release_images(located: Located, values: dict[str, Any]) -> list[Problem]:
    """A warning at ``cluster.operatorRelease`` when the policy imitates an older release and
    leaves deployed components' images to gpu-render's defaults (the newest release's)."""
    release, table = _imitated(located, values, VERSIONS)
    loose = [f"{dotted} {version}" for dotted, version in table.items() if _deployed(values, dotted) and not _pinned(located, dotted)]
    if not loose:
        return []
    return _at_release(
        located,
        f"operator release {release} deploys its own chart's component versions; gpu-render renders {release}'s objects with its default "
        f"images (the newest release's) where the policy sets no version: {', '.join(d.split(' ')[0] for d in loose)}",
        f"pin what that release deploys: {', '.join(loose)} (each as <section>.version)",
        CODE,
    )


def _imitated(located: Located, values: dict[str, Any], tables: dict[str, dict[str, Any]]) -> tuple[str, dict[str, Any]]:
    """The older release the policy names in ``cluster.operatorRelease`` and its entry of
    ``tables``; an empty table when the policy names none (the newest is the defaults)."""
    cluster = located.data.get("cluster")
    release = str((values.get("cluster") or {}).get("operatorRelease") or "")
    if not isinstance(cluster, dict) or "operatorRelease" not in cluster:
        return release, {}
    return release, tables.get(release) or {}


def _at_release(located: Located, message: str, hint: str, code: str) -> list[Problem]:
    """One warning at ``cluster.operatorRelease``."""
    file, line, col = located.locate("/cluster/operatorRelease")
    return [Problem(file, line, col, "/cluster/operatorRelease", message, hint=hint, code=code, severity=Severity.WARNING)]


DEFAULTS_CODE = "release-defaults"

DEFAULTS: dict[str, dict[str, Any]] = {
    "v25.10": {
        "dcgmExporter.serviceMonitor.enabled": False,
        "ccManager.enabled": False,
        "ccManager.defaultMode": "off",
        "ccManager.env": [{"name": "CC_CAPABLE_DEVICE_IDS", "value": "0x2339,0x2331,0x2330,0x2324,0x2322,0x233d"}],
    },
    "v26.3": {
        "dcgmExporter.serviceMonitor.enabled": False,
    },
}
"""Release -> chart key -> that release's chart default, where it differs from gpu-render's (the
newest release's), from the charts' values.yaml of v25.10.1, v26.3.1 and v26.7.0 (image versions
are :data:`VERSIONS`; keys a release does not have are the release gate's)."""


def release_defaults(located: Located, values: dict[str, Any]) -> list[Problem]:
    """A warning at ``cluster.operatorRelease`` when the policy imitates an older release and
    leaves a key to gpu-render's default where that release's chart has another one (v26.3's
    chart creates no ServiceMonitor unless asked; v26.7's does): with one default per key, as for
    the images, the chart of every release renders the same values, so the policy says it."""
    release, table = _imitated(located, values, DEFAULTS)
    loose = [(dotted, value) for dotted, value in table.items() if _deployed(values, dotted) and not lookup(located.data, '/' + dotted.replace('.', '/'))[0]]
    if not loose:
        return []
    shown = ", ".join(f"{dotted}: {json.dumps(value, separators=(',', ':'))} (rendered: {json.dumps(_section(values, dotted), separators=(',', ':'))})" for dotted, value in loose)
    return _at_release(
        located,
        f"operator release {release}'s chart has other defaults than gpu-render's (the newest release's) for keys the policy leaves out: {', '.join(d for d, _ in loose)}",
        f"set what that release's chart sets to deploy what it deploys: {shown}",
        DEFAULTS_CODE,
    )
