"""Driver image and node selector per pool: the OS-tag rule of each operator release."""

from __future__ import annotations

from typing import Any

import pytest

from renderer import driverimage as di
from renderer.inputs import ClusterInput, Inputs
from renderer.pipeline import plan
from renderer.resolve import resolve

DRIVER = "nvcr.io/nvidia/driver:595.91.07"
ID = "feature.node.kubernetes.io/system-os_release.ID"
VER = "feature.node.kubernetes.io/system-os_release.VERSION_ID"
MAJOR = "feature.node.kubernetes.io/system-os_release.VERSION_ID.major"
KERNEL = "feature.node.kubernetes.io/kernel-version.full"


def pool_of(release: str, pool: dict[str, Any], **fleet: Any) -> Any:
    values = {"cluster": {"operatorRelease": release}, "nodePools": [pool], **fleet}
    (resolved,) = resolve(values, "test").pools
    return resolved


# (os id, VERSION_ID, release, expected tag, selector: "full" = VERSION_ID, "major" = VERSION_ID.major)
OS_TABLE = [
    ("ubuntu", "20.04", "v25.10", "ubuntu20.04", "full"),
    ("ubuntu", "20.04", "v26.3", "ubuntu20.04", "full"),
    ("ubuntu", "20.04", "v26.7", "ubuntu20.04", "full"),
    ("ubuntu", "22.04", "v25.10", "ubuntu22.04", "full"),
    ("ubuntu", "22.04", "v26.3", "ubuntu22.04", "full"),
    ("ubuntu", "22.04", "v26.7", "ubuntu22.04", "full"),
    ("ubuntu", "24.04", "v25.10", "ubuntu24.04", "full"),
    ("ubuntu", "24.04", "v26.3", "ubuntu24.04", "full"),
    ("ubuntu", "24.04", "v26.7", "ubuntu24.04", "full"),
    ("rhel", "8.10", "v25.10", "rhel8.10", "full"),
    ("rhel", "8.10", "v26.3", "rhel8.10", "full"),
    ("rhel", "8.10", "v26.7", "rhel8", "major"),
    ("rhel", "9.4", "v25.10", "rhel9.4", "full"),
    ("rhel", "9.4", "v26.3", "rhel9.4", "full"),
    ("rhel", "9.4", "v26.7", "rhel9", "major"),
    ("rhel", "9.6", "v25.10", "rhel9.6", "full"),
    ("rhel", "9.6", "v26.3", "rhel9.6", "full"),
    ("rhel", "9.6", "v26.7", "rhel9", "major"),
    ("rhel", "10.1", "v25.10", "rhel10.1", "full"),
    ("rhel", "10.1", "v26.3", "rhel10", "major"),
    ("rhel", "10.1", "v26.7", "rhel10", "major"),
    ("rocky", "9.4", "v25.10", "rocky9.4", "full"),
    ("rocky", "9.4", "v26.3", "rocky9", "major"),
    ("rocky", "9.4", "v26.7", "rocky9", "major"),
    ("ol", "9.4", "v25.10", "ol9.4", "full"),
    ("ol", "9.4", "v26.3", "ol9.4", "full"),
    ("ol", "9.4", "v26.7", "ol9", "major"),
    ("rhcos", "4.16", "v25.10", "rhcos4.16", "full"),
    ("rhcos", "4.16", "v26.3", "rhcos4.16", "full"),
    ("rhcos", "4.16", "v26.7", "rhcos4.16", "full"),
    ("sles", "15.6", "v25.10", "sles15.6", "full"),
    ("sles", "15.6", "v26.3", "sles15.6", "full"),
    ("sles", "15.6", "v26.7", "sles15.6", "full"),
    ("sl-micro", "6.0", "v25.10", "sl-micro6.0", "full"),
    ("sl-micro", "6.0", "v26.3", "sl-micro6.0", "full"),
    ("sl-micro", "6.0", "v26.7", "sl-micro6.0", "full"),
    ("talos", "v1.12.6", "v25.10", "talosv1.12.6", "full"),
    ("talos", "v1.12.6", "v26.3", "talosv1.12.6", "full"),
    ("talos", "v1.12.6", "v26.7", "talosv1.12.6", "full"),
    ("archlinux", "rolling", "v25.10", "archlinuxrolling", "full"),
    ("archlinux", "rolling", "v26.3", "archlinuxrolling", "full"),
    ("archlinux", "rolling", "v26.7", "archlinuxrolling", "full"),
]


@pytest.mark.parametrize(("os_id", "version", "release", "tag", "sel"), OS_TABLE, ids=[f"{r[0]}{r[1]}-{r[2]}" for r in OS_TABLE])
def test_os_tag_image_and_selector(os_id: str, version: str, release: str, tag: str, sel: str) -> None:
    pool = pool_of(release, {"name": "p", "os": {"id": os_id, "version": version}})
    assert pool.os_tag == tag
    assert pool.image == f"{DRIVER}-{tag}"
    assert pool.images == {
        "driver": f"{DRIVER}-{tag}",
        "gds": f"nvcr.io/nvidia/cloud-native/nvidia-fs:2.29.4-{tag}",
        "gdrcopy": f"nvcr.io/nvidia/cloud-native/gdrdrv:v2.6-{tag}",
        "vgpuManager": "vgpu-manager",
    }
    expected = {ID: os_id, VER: version} if sel == "full" else {ID: os_id, MAJOR: version.split(".")[0]}
    assert pool.node_selector == expected
    assert pool.daemonset_name == "nvidia-driver-daemonset-p"
    assert not pool.precompiled


# (os id, VERSION_ID, release, kernel, image, selector-without-kernel, daemonset name)
PRECOMPILED = [
    ("ubuntu", "22.04", "v26.7", "5.15.0-1040-nvidia", "nvcr.io/nvidia/driver:570-5.15.0-1040-nvidia-ubuntu22.04", {VER: "22.04"}, "nvidia-driver-daemonset-p-5.15.0-1040-nvidia"),
    ("ubuntu", "22.04", "v25.10", "5.15.0-113-generic", "nvcr.io/nvidia/driver:570-5.15.0-113-generic-ubuntu22.04", {VER: "22.04"}, "nvidia-driver-daemonset-p-5.15.0-113-generic"),
    ("ubuntu", "24.04", "v26.3", "6.8.0-1015-aws", "nvcr.io/nvidia/driver:570-6.8.0-1015-aws-ubuntu24.04", {VER: "24.04"}, "nvidia-driver-daemonset-p-6.8.0-1015-aws"),
    ("ubuntu", "20.04", "v26.7", "5.4.0-150-generic", "nvcr.io/nvidia/driver:570-5.4.0-150-generic-ubuntu20.04", {VER: "20.04"}, "nvidia-driver-daemonset-p-5.4.0-150-generic"),
    ("rhel", "9.4", "v26.7", "5.14.0-427.37.1.el9_4.x86_64", "nvcr.io/nvidia/driver:570-5.14.0-427.37.1.el9_4.x86_64-rhel9", {MAJOR: "9"}, "nvidia-driver-daemonset-p-5.14.0-427.37.1.el9.4"),
    ("rhel", "9.4", "v26.3", "5.14.0-427.37.1.el9_4.x86_64", "nvcr.io/nvidia/driver:570-5.14.0-427.37.1.el9_4.x86_64-rhel9.4", {VER: "9.4"}, "nvidia-driver-daemonset-p-5.14.0-427.37.1.el9.4"),
    ("rhel", "9.6", "v25.10", "5.14.0-570.12.1.el9_6.x86_64", "nvcr.io/nvidia/driver:570-5.14.0-570.12.1.el9_6.x86_64-rhel9.6", {VER: "9.6"}, "nvidia-driver-daemonset-p-5.14.0-570.12.1.el9.6"),
    ("rocky", "9.4", "v26.3", "5.14.0-427.13.1.el9_4.aarch64", "nvcr.io/nvidia/driver:570-5.14.0-427.13.1.el9_4.aarch64-rocky9", {MAJOR: "9"}, "nvidia-driver-daemonset-p-5.14.0-427.13.1.el9.4"),
    ("rhel", "10.1", "v26.7", "6.12.0-124.8.1.el10_1.x86_64", "nvcr.io/nvidia/driver:580-6.12.0-124.8.1.el10_1.x86_64-rhel10", {MAJOR: "10"}, "nvidia-driver-daemonset-p-6.12.0-124.8.1.el10.1"),
    ("sles", "15.6", "v26.7", "6.4.0-150600.23.25-default", "nvcr.io/nvidia/driver:570-6.4.0-150600.23.25-default-sles15.6", {VER: "15.6"}, "nvidia-driver-daemonset-p-6.4.0-150600.23.25-default"),
]


@pytest.mark.parametrize(("os_id", "version", "release", "kernel", "image", "selector", "ds"), PRECOMPILED, ids=[f"{r[0]}{r[1]}-{r[2]}-{r[3]}" for r in PRECOMPILED])
def test_precompiled_image_selector_and_name(os_id: str, version: str, release: str, kernel: str, image: str, selector: dict[str, str], ds: str) -> None:
    branch = image.split(":")[1].split("-")[0]
    pool = pool_of(release, {"name": "p", "os": {"id": os_id, "version": version}, "kernel": kernel, "driver": {"usePrecompiled": True, "version": branch}})
    assert pool.precompiled
    assert pool.image == image
    assert pool.node_selector == {ID: os_id, **selector, KERNEL: kernel}
    assert pool.daemonset_name == ds
    assert len(pool.daemonset_name) <= 63


@pytest.mark.parametrize(
    ("kernel", "sanitized"),
    [
        ("5.14.0-427.37.1.el9_4.x86_64", "5.14.0-427.37.1.el9.4"),
        ("5.14.0-427.13.1.el9_4.aarch64", "5.14.0-427.13.1.el9.4"),
        ("5.14.0-427.13.1.el9_4.aarch64_64k", "5.14.0-427.13.1.el9.4"),
        ("5.14.0-427.13.1.el9_4.aarch64+64k", "5.14.0-427.13.1.el9.4"),
        ("4.18.0-553.el8_10.x86_64", "4.18.0-553.el8.10"),
        ("5.15.0-1040-NVIDIA", "5.15.0-1040-nvidia"),
        ("6.1.0+rpt-rpi-v8", "6.1.0-rpt-rpi-v8"),
    ],
)
def test_sanitize_kernel(kernel: str, sanitized: str) -> None:
    assert di.sanitize_kernel(kernel) == sanitized


@pytest.mark.parametrize(("os_id", "version", "release"), [("ubuntu", "22.04", "v26.7"), ("rhel", "9.4", "v26.7"), ("rhel", "9.4", "v25.10")])
def test_digest_is_used_as_given(os_id: str, version: str, release: str) -> None:
    digest = "sha256:" + "ab" * 32
    pool = pool_of(release, {"name": "p", "os": {"id": os_id, "version": version}}, driver={"version": digest}, gds={"version": "sha256:" + "cd" * 32})
    assert pool.image == f"nvcr.io/nvidia/driver@{digest}"
    assert pool.images["gds"] == "nvcr.io/nvidia/cloud-native/nvidia-fs@sha256:" + "cd" * 32
    assert pool.images["gdrcopy"].endswith("-" + pool.os_tag)


@pytest.mark.parametrize(
    "image",
    ["registry.example.com/mirror/driver:595.91.07-ubuntu22.04", "registry.example.com/mirror/driver@sha256:" + "ef" * 32],
)
def test_image_only_is_verbatim(image: str) -> None:
    pool = pool_of("v26.7", {"name": "p", "os": {"id": "ubuntu", "version": "22.04"}, "driver": {"repository": "", "version": "", "image": image}})
    assert pool.image == image


def test_image_only_precompiled_is_verbatim() -> None:
    image = "registry.example.com/driver:570-5.15.0-1040-nvidia-ubuntu22.04"
    driver = {"repository": "", "version": "", "image": image, "usePrecompiled": True}
    pool = pool_of("v26.7", {"name": "p", "os": {"id": "ubuntu", "version": "22.04"}, "kernel": "5.15.0-1040-nvidia", "driver": driver})
    assert pool.image == image


def test_pool_driver_is_deep_merged_over_fleet_driver() -> None:
    pool = pool_of(
        "v26.7",
        {"name": "p", "os": {"id": "ubuntu", "version": "22.04"}, "driver": {"version": "600.10.02", "manager": {"version": "v0.13.0"}, "nodeSelector": {"pool": "a"}}},
        driver={"repository": "registry.example.com/nvidia", "manager": {"env": [{"name": "ENABLE_AUTO_DRAIN", "value": "true"}]}},
    )
    assert pool.image == "registry.example.com/nvidia/driver:600.10.02-ubuntu22.04"
    assert pool.driver["manager"]["version"] == "v0.13.0"
    assert pool.driver["manager"]["env"] == [{"name": "ENABLE_AUTO_DRAIN", "value": "true"}]
    assert pool.driver["manager"]["image"] == "k8s-driver-manager"
    assert pool.node_selector == {ID: "ubuntu", VER: "22.04", "pool": "a"}


def test_pool_gds_and_gdrcopy_overrides() -> None:
    pool = pool_of("v26.7", {"name": "p", "os": {"id": "rhel", "version": "9.4"}, "driver": {"gds": {"version": "2.30.0"}, "gdrcopy": {"repository": "mirror.example.com/nv"}}})
    assert pool.images["gds"] == "nvcr.io/nvidia/cloud-native/nvidia-fs:2.30.0-rhel9"
    assert pool.images["gdrcopy"] == "mirror.example.com/nv/gdrdrv:v2.6-rhel9"


def test_vgpu_host_manager_pool_uses_the_vgpu_manager_image() -> None:
    pool = pool_of(
        "v26.7",
        {"name": "vgpu", "os": {"id": "ubuntu", "version": "24.04"}, "driver": {"driverType": "vgpu-host-manager", "version": "595.10"}},
        vgpuManager={"repository": "registry.example.com/nvidia", "version": "595.00"},
    )
    assert pool.image == "registry.example.com/nvidia/vgpu-manager:595.10-ubuntu24.04"
    assert pool.images["vgpuManager"] == pool.image
    assert pool.daemonset_name == "nvidia-vgpu-manager-daemonset-vgpu"
    assert pool.driver_type == "vgpu-host-manager"


def test_long_names_are_cut_deterministically() -> None:
    name = "a-very-long-pool-name-for-the-gpu-nodes-x"[:40]
    kernel = "5.14.0-427.37.1.el9_4.x86_64"
    first = di.daemonset_name(name, "gpu", di.sanitize_kernel(kernel))
    assert len(first) <= 63
    assert first == di.daemonset_name(name, "gpu", di.sanitize_kernel(kernel))
    assert first != di.daemonset_name(name, "gpu", di.sanitize_kernel("5.14.0-427.38.1.el9_4.x86_64"))
    assert first[-1].isalnum()


def test_selectors_overlap() -> None:
    a = {ID: "rhel", VER: "9.4"}
    assert di.selectors_overlap(a, {ID: "rhel", MAJOR: "9"})
    assert not di.selectors_overlap(a, {ID: "rhel", MAJOR: "8"})
    assert not di.selectors_overlap(a, {ID: "ubuntu", VER: "9.4"})
    assert di.selectors_overlap({**a, KERNEL: "k1"}, a)
    assert not di.selectors_overlap({**a, KERNEL: "k1"}, {**a, KERNEL: "k2"})


# ---------------------------------------------------------------- errors with positions


def problems_of(values: str, overlay: str | None = None) -> list[str]:
    clusters = (ClusterInput("prod", overlay.encode(), "overlays/prod/values.yaml"),) if overlay is not None else ()
    p = plan(Inputs(values.encode(), "values.yaml", clusters))
    return [x.format() for x in p.errors]


def test_digest_with_precompiled_points_at_the_version() -> None:
    found = problems_of(
        """\
nodePools:
  - name: gpu
    os: {id: ubuntu, version: "22.04"}
    kernel: 5.15.0-1040-nvidia
    driver:
      usePrecompiled: true
      version: "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
"""
    )
    assert len(found) == 1
    assert found[0].startswith("values.yaml:7:16: /nodePools/0/driver/version: node pool 'gpu': a digest cannot be used with usePrecompiled")


def test_digest_in_fleet_with_precompiled_in_overlay() -> None:
    fleet = """\
driver:
  version: "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
nodePools:
  - name: gpu
    os: {id: ubuntu, version: "22.04"}
    kernel: 5.15.0-1040-nvidia
"""
    found = problems_of(fleet, "driver:\n  usePrecompiled: true\n")
    assert len(found) == 1
    assert found[0].startswith("values.yaml:2:12: /driver/version: node pool 'gpu': a digest cannot be used with usePrecompiled")


def test_precompiled_without_kernel_points_at_the_pool() -> None:
    found = problems_of(
        """\
driver:
  usePrecompiled: true
  version: "570"
nodePools:
  - name: ok
    os: {id: ubuntu, version: "22.04"}
    kernel: 5.15.0-1040-nvidia
  - name: nokernel
    os: {id: ubuntu, version: "24.04"}
"""
    )
    assert found == [
        "values.yaml:8:5: /nodePools/1: node pool 'nokernel': usePrecompiled needs the pool's kernel (the image tag and node selector contain it)"
        " (add kernel: <uname -r of the pool's nodes>, as NFD reports it in kernel-version.full)"
    ]


def test_unknown_driver_type_in_pool_is_a_schema_error() -> None:
    found = problems_of(
        """\
nodePools:
  - name: gpu
    os: {id: ubuntu, version: "22.04"}
    driver:
      driverType: tpu
"""
    )
    assert len(found) == 1
    assert found[0].startswith('values.yaml:5:19: /nodePools/0/driver/driverType: "tpu" is not one of the allowed values')


def test_unknown_driver_type_in_fleet_driver() -> None:
    found = problems_of(
        """\
driver:
  nvidiaDriverCRD:
    driverType: tpu
nodePools:
  - name: gpu
    os: {id: ubuntu, version: "22.04"}
"""
    )
    assert len(found) == 1
    assert found[0].startswith("values.yaml:3:17: /driver/nvidiaDriverCRD/driverType:")
    assert "tpu" in found[0]


def test_overlapping_pools_name_both_with_positions() -> None:
    found = problems_of(
        """\
nodePools:
  - name: rhel94
    os: {id: rhel, version: "9.4"}
  - name: ubuntu
    os: {id: ubuntu, version: "22.04"}
  - name: rhel96
    os: {id: rhel, version: "9.6"}
"""
    )
    assert found == [
        "values.yaml:6:5: /nodePools/2: node pools 'rhel96' and 'rhel94' (values.yaml:2:5) select the same nodes"
        " (system-os_release.ID=rhel, system-os_release.VERSION_ID.major=9)"
        " (give the pools different OS versions or kernels, or tell them apart with driver.nodeSelector)"
    ]


def test_same_pools_do_not_overlap_under_an_older_release() -> None:
    values = """\
cluster: {operatorRelease: v25.10}
nodePools:
  - name: rhel94
    os: {id: rhel, version: "9.4"}
  - name: rhel96
    os: {id: rhel, version: "9.6"}
"""
    assert problems_of(values) == []


def test_overlap_between_precompiled_pools_of_one_kernel_only() -> None:
    base = """\
driver: {usePrecompiled: true, version: "570"}
nodePools:
  - name: a
    os: {id: ubuntu, version: "22.04"}
    kernel: 5.15.0-1040-nvidia
  - name: b
    os: {id: ubuntu, version: "22.04"}
    kernel: KERNEL
"""
    assert problems_of(base.replace("KERNEL", "5.15.0-1041-nvidia")) == []
    assert len(problems_of(base.replace("KERNEL", "5.15.0-1040-nvidia"))) == 1


def test_overlap_from_an_overlay_points_into_the_overlay() -> None:
    fleet = """\
nodePools:
  - name: a
    os: {id: ubuntu, version: "22.04"}
"""
    overlay = """\
nodePools:
  - name: a
    os: {id: ubuntu, version: "22.04"}
  - name: b
    os: {id: ubuntu, version: "22.04"}
    driver: {nodeSelector: {gpu: h100}}
"""
    found = problems_of(fleet, overlay)
    assert len(found) == 1
    assert found[0].startswith("overlays/prod/values.yaml:4:5: /nodePools/1: node pools 'b' and 'a' (overlays/prod/values.yaml:2:5)")


def test_unknown_operator_release_is_refused() -> None:
    found = problems_of('cluster: {operatorRelease: v24.9}\nnodePools: [{name: a, os: {id: ubuntu, version: "22.04"}}]\n')
    assert len(found) == 1
    assert found[0].startswith('values.yaml:1:28: /cluster/operatorRelease: "v24.9" is not one of the allowed values')


def test_default_release_is_the_newest() -> None:
    pool = resolve({"nodePools": [{"name": "p", "os": {"id": "rhel", "version": "9.4"}}]}, "t").pools[0]
    assert pool.os_tag == "rhel9"
    assert max(di.RELEASES, key=lambda r: tuple(int(x) for x in r[1:].split("."))) == di.NEWEST


def test_vgpu_host_manager_without_image_is_an_error() -> None:
    found = problems_of(
        """\
nodePools:
  - name: vgpu
    os: {id: ubuntu, version: "22.04"}
    driver:
      driverType: vgpu-host-manager
"""
    )
    assert len(found) == 1
    assert found[0].startswith("values.yaml:5:19: /nodePools/0/driver/driverType: node pool 'vgpu': the vGPU manager image has no repository or version")


def test_every_table_os_passes_the_schema() -> None:
    pools = "".join(f'  - {{name: p{i}, os: {{id: {os_id}, version: "{version}"}}}}\n' for i, (os_id, version) in enumerate(sorted({(r[0], r[1]) for r in OS_TABLE})))
    assert problems_of("cluster: {operatorRelease: v25.10}\nnodePools:\n" + pools) == []


def test_precompiled_with_a_full_version_warns() -> None:
    values = """\
driver: {usePrecompiled: true, version: "570.86.15"}
nodePools:
  - {name: a, os: {id: ubuntu, version: "22.04"}, kernel: 5.15.0-1040-nvidia}
"""
    p = plan(Inputs(values.encode(), "values.yaml", ()))
    assert p.errors == []
    assert [w.format() for w in p.warnings] == [
        "values.yaml:1:41: /driver/version: warning: node pool 'a': precompiled images are tagged by driver branch, not by full version ('570.86.15') (use the branch, e.g. '570')"
    ]
    assert p.base is not None
    assert p.base.pools[0].image == "nvcr.io/nvidia/driver:570.86.15-5.15.0-1040-nvidia-ubuntu22.04"


def test_enabled_vgpu_manager_needs_an_image() -> None:
    values = """\
sandboxWorkloads: {enabled: true, defaultWorkload: vm-vgpu}
vgpuManager:
  enabled: true
nodePools:
  - {name: a, os: {id: ubuntu, version: "22.04"}}
"""
    found = problems_of(values)
    assert len(found) == 1
    assert found[0].startswith("values.yaml:3:12: /vgpuManager/enabled: the vGPU manager image has no repository or version ('vgpu-manager')")
    named = values.replace("  enabled: true\n", "  enabled: true\n  repository: registry.example.com/nvidia\n  version: \"595.10\"\n")
    assert problems_of(named) == []
    p = plan(Inputs(named.encode(), "values.yaml", ()))
    assert p.base is not None
    assert p.base.pools[0].images["vgpuManager"] == "registry.example.com/nvidia/vgpu-manager:595.10-ubuntu22.04"


@pytest.mark.parametrize(("data", "expected"), [(b"", 0x811C9DC5), (b"a", 0xE40C292C), (b"foobar", 0xBF9CF968)])
def test_fnv32a_known_values(data: bytes, expected: int) -> None:
    """The published FNV-1a (32-bit) test vectors."""
    from renderer.driverdigest import fnv32a

    assert fnv32a(data) == expected


def test_fnv32a_four_bytes_a_step_is_the_byte_loop() -> None:
    """Every length modulo 4, every byte value: the same hash as one byte a step."""
    from renderer.driverdigest import fnv32a

    def one_by_one(data: bytes) -> int:
        h = 0x811C9DC5
        for byte in data:
            h = ((h ^ byte) * 0x01000193) & 0xFFFFFFFF
        return h

    data = bytes(range(256)) * 2
    for n in [*range(12), 255, 256, 257, 511, 512]:
        assert fnv32a(data[:n]) == one_by_one(data[:n]), n
