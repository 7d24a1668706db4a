"""Which driver image each node pool gets, and how the pool's nodes are selected.

Imitates the GPU Operator's OS-tag rule of the configured release (``cluster.operatorRelease``).
"""

from __future__ import annotations

from typing import Any

from renderer.components.common import image_ref
from renderer.merge import deep_merge
from renderer.model import Pool

NFD = "feature.node.kubernetes.io"


def os_tag(os_id: str, version: str, release: str = "v26.7") -> str:
    """``ID + VERSION_ID`` with the release's major-only rule for RHEL-like systems."""
    major = version.split(".")[0]
    if release >= "v26.7" and os_id in ("rhel", "rocky", "ol"):
        return f"{os_id}{major}"
    if release.startswith("v26.3") and (os_id == "rocky" or (os_id == "rhel" and major.isdigit() and int(major) >= 10)):
        return f"{os_id}{major}"
    return f"{os_id}{version}"


def resolve_pool(values: dict[str, Any], pool: dict[str, Any]) -> Pool:
    release = str(values["cluster"]["operatorRelease"])
    os_info = pool.get("os") or {}
    os_id = str(os_info.get("id", "ubuntu"))
    os_version = str(os_info.get("version", "22.04"))
    driver = deep_merge(values.get("driver") or {}, pool.get("driver") or {})
    tag = os_tag(os_id, os_version, release)
    base = image_ref(driver)
    image = base if "sha256:" in base else f"{base}-{tag}"
    selector = {f"{NFD}/system-os_release.ID": os_id}
    if tag.endswith(os_version):
        selector[f"{NFD}/system-os_release.VERSION_ID"] = os_version
    else:
        selector[f"{NFD}/system-os_release.VERSION_ID.major"] = os_version.split(".")[0]
    name = str(pool["name"])
    return Pool(
        name=name,
        os_id=os_id,
        os_version=os_version,
        kernel=str(pool.get("kernel", "")),
        runtime=str(pool.get("runtime") or values["cluster"].get("containerRuntime", "containerd")),
        driver=driver,
        os_tag=tag,
        image=image,
        node_selector=selector,
        daemonset_name=f"nvidia-driver-daemonset-{name}",
        images={"driver": image},
        values=dict(pool),
    )
