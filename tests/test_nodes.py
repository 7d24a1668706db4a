"""nodes import / check on realistic `kubectl get nodes -o json` documents built here."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from renderer import nodes as nd
from renderer.resolve import resolve

NFD = "feature.node.kubernetes.io"


def node(
    name: str,
    os_id: str | None = None,
    version: str | None = None,
    kernel: str | None = None,
    *,
    gpu_label: str | None = f"{NFD}/pci-10de.present",
    product: str | None = None,
    runtime: str = "containerd://1.7.20",
) -> dict[str, Any]:
    """A Node as the API server returns it, with the labels NFD and GFD set."""
    labels = {
        "beta.kubernetes.io/arch": "amd64",
        "kubernetes.io/arch": "amd64",
        "kubernetes.io/hostname": name,
        "kubernetes.io/os": "linux",
        f"{NFD}/cpu-cpuid.AVX2": "true",
    }
    if os_id and version:
        labels[f"{NFD}/system-os_release.ID"] = os_id
        labels[f"{NFD}/system-os_release.VERSION_ID"] = version
        labels[f"{NFD}/system-os_release.VERSION_ID.major"] = version.split(".")[0]
        if "." in version:
            labels[f"{NFD}/system-os_release.VERSION_ID.minor"] = version.split(".")[1]
    if kernel:
        labels[f"{NFD}/kernel-version.full"] = kernel
        labels[f"{NFD}/kernel-version.major"] = kernel.split(".")[0]
    if gpu_label:
        labels[gpu_label] = "true"
    if product:
        labels["nvidia.com/gpu.product"] = product
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": labels, "annotations": {"node.alpha.kubernetes.io/ttl": "0"}, "uid": f"uid-{name}"},
        "spec": {"podCIDR": "10.244.1.0/24"},
        "status": {
            "capacity": {"cpu": "64", "memory": "528000000Ki"},
            "nodeInfo": {
                "architecture": "amd64",
                "containerRuntimeVersion": runtime,
                "kernelVersion": kernel or "6.8.0-1015-aws",
                "kubeletVersion": "v1.35.0",
                "operatingSystem": "linux",
                "osImage": "Linux",
            },
        },
    }


H100 = "NVIDIA-H100-80GB-HBM3"
FLEET_NODES = [
    node("gpu-ubuntu-a", "ubuntu", "22.04", "5.15.0-1040-nvidia", product=H100),
    node("gpu-ubuntu-b", "ubuntu", "22.04", "5.15.0-1040-nvidia", product=H100, gpu_label=f"{NFD}/pci-0302_10de.present"),
    node("gpu-ubuntu-c", "ubuntu", "22.04", "5.15.0-1041-nvidia", product=H100),
    node("gpu-noble", "ubuntu", "24.04", "6.8.0-1015-aws", gpu_label=f"{NFD}/pci-0300_10de.present"),
    node("gpu-rhel94", "rhel", "9.4", "5.14.0-427.37.1.el9_4.x86_64", runtime="cri-o://1.30.1"),
    node("gpu-rhel96", "rhel", "9.6", "5.14.0-570.12.1.el9_6.x86_64", runtime="cri-o://1.30.1"),
    node("gpu-bare", gpu_label="nvidia.com/gpu.present"),
    node("cpu-worker", "ubuntu", "22.04", "5.15.0-1040-nvidia", gpu_label=None),
    node("control-plane", "ubuntu", "22.04", "5.15.0-1040-nvidia", gpu_label=None),
]


def doc(items: list[dict[str, Any]]) -> str:
    return json.dumps({"apiVersion": "v1", "kind": "List", "items": items, "metadata": {"resourceVersion": ""}}, indent=2)


def parsed(items: list[dict[str, Any]] = FLEET_NODES) -> list[nd.Node]:
    found, problems = nd.parse_nodes(doc(items), "nodes.json")
    assert problems == []
    return found


def test_parse_finds_gpu_nodes_by_any_nvidia_label() -> None:
    found = {n.name: n for n in parsed()}
    assert {n for n, x in found.items() if x.gpu} == {"gpu-ubuntu-a", "gpu-ubuntu-b", "gpu-ubuntu-c", "gpu-noble", "gpu-rhel94", "gpu-rhel96", "gpu-bare"}
    assert found["gpu-rhel94"].runtime == "crio"
    assert found["gpu-bare"].missing_labels() == [f"{NFD}/system-os_release.ID", f"{NFD}/system-os_release.VERSION_ID"]


def test_parse_bad_json_is_a_positioned_problem() -> None:
    nodes, problems = nd.parse_nodes('{"items": [\n  {"metadata": }\n]}', "nodes.json")
    assert nodes == []
    assert [p.format() for p in problems] == ["nodes.json:2:16: /: not valid JSON: Expecting value (pass the output of `kubectl get nodes -o json`)"]


def test_import_groups_by_os_tag() -> None:
    result = nd.import_pools(parsed(), precompiled=False)
    assert result.pools == [
        {"name": "rhel9", "os": {"id": "rhel", "version": "9"}, "runtime": "crio"},
        {"name": "ubuntu2204", "os": {"id": "ubuntu", "version": "22.04"}, "runtime": "containerd", "gpuProduct": H100},
        {"name": "ubuntu2404", "os": {"id": "ubuntu", "version": "24.04"}, "runtime": "containerd"},
    ]
    assert result.members["rhel9"] == ["gpu-rhel94", "gpu-rhel96"]
    assert result.skipped == {"gpu-bare": f"missing NFD labels: {NFD}/system-os_release.ID, {NFD}/system-os_release.VERSION_ID"}
    assert result.non_gpu == 2


def test_import_under_an_older_release_keeps_minor_versions() -> None:
    result = nd.import_pools(parsed(), precompiled=False, release="v25.10")
    assert [p["name"] for p in result.pools] == ["rhel94", "rhel96", "ubuntu2204", "ubuntu2404"]


def test_import_precompiled_groups_by_kernel() -> None:
    result = nd.import_pools(parsed(), precompiled=True)
    assert [(p["name"], p.get("kernel")) for p in result.pools] == [
        ("rhel94-5-14-0-427-37-1-el9-4", "5.14.0-427.37.1.el9_4.x86_64"),
        ("rhel96-5-14-0-570-12-1-el9-6", "5.14.0-570.12.1.el9_6.x86_64"),
        ("ubuntu2204-5-15-0-1040-nvidia", "5.15.0-1040-nvidia"),
        ("ubuntu2204-5-15-0-1041-nvidia", "5.15.0-1041-nvidia"),
        ("ubuntu2404-6-8-0-1015-aws", "6.8.0-1015-aws"),
    ]
    assert result.members["ubuntu2204-5-15-0-1040-nvidia"] == ["gpu-ubuntu-a", "gpu-ubuntu-b"]


def test_imported_pools_resolve_and_cover_every_labelled_node() -> None:
    for precompiled in (False, True):
        result = nd.import_pools(parsed(), precompiled=precompiled)
        values = {"driver": {"usePrecompiled": precompiled, "version": "570"}, "nodePools": result.pools}
        report = nd.check_nodes(parsed(), resolve(values, "t").pools)
        assert {n.node: n.status for n in report.nodes if n.status != nd.OK} == {"gpu-bare": nd.NO_LABELS}
        assert report.unused_pools == []


def test_pools_yaml_is_valid_values_with_node_comments() -> None:
    from renderer.loader import load_text

    text = nd.pools_yaml(nd.import_pools(parsed(), precompiled=False))
    assert "# gpu-bare: not imported, missing NFD labels" in text
    assert "# 2 node(s): gpu-rhel94, gpu-rhel96\n  - name: rhel9\n" in text
    src, problems = load_text(text, "pasted.yaml")
    assert problems == [] and src is not None
    assert src.data["nodePools"][0] == {"name": "rhel9", "os": {"id": "rhel", "version": "9"}, "runtime": "crio"}


def test_replace_pools_keeps_comments() -> None:
    before = "# staging cluster\nmig:\n  strategy: mixed  # H100 only\nnodePools:\n  - name: old\n    os: {id: ubuntu, version: '20.04'}\n"
    after = nd.replace_pools(before, nd.import_pools(parsed(), precompiled=False))
    assert after.startswith("# staging cluster\nmig:\n  strategy: mixed  # H100 only\nnodePools:\n")
    assert "name: old" not in after and "name: ubuntu2404" in after


POOLS_1040 = [
    {"name": "jammy-1040", "os": {"id": "ubuntu", "version": "22.04"}, "kernel": "5.15.0-1040-nvidia"},
    {"name": "noble", "os": {"id": "ubuntu", "version": "24.04"}, "kernel": "6.8.0-1015-aws"},
    {"name": "rhel9", "os": {"id": "rhel", "version": "9.4"}, "kernel": "5.14.0-427.37.1.el9_4.x86_64"},
]


def test_check_reports_kernel_drift_and_missing_labels() -> None:
    values = {"driver": {"usePrecompiled": True, "version": "570"}, "nodePools": POOLS_1040}
    report = nd.check_nodes(parsed(), resolve(values, "t").pools)
    by_node = {n.node: n for n in report.nodes}
    assert by_node["gpu-ubuntu-a"].status == nd.OK
    assert by_node["gpu-ubuntu-a"].image == "nvcr.io/nvidia/driver:570-5.15.0-1040-nvidia-ubuntu22.04"
    assert by_node["gpu-rhel94"].image == "nvcr.io/nvidia/driver:570-5.14.0-427.37.1.el9_4.x86_64-rhel9"
    assert by_node["gpu-ubuntu-c"].status == nd.UNCOVERED
    assert by_node["gpu-ubuntu-c"].reason.startswith("kernel 5.15.0-1041-nvidia is covered by no pool (pools of this OS cover kernel 5.15.0-1040-nvidia)")
    assert by_node["gpu-rhel96"].reason.startswith("kernel 5.14.0-570.12.1.el9_6.x86_64 is covered by no pool")
    assert by_node["gpu-bare"].status == nd.NO_LABELS
    assert "kernel-version.full" in by_node["gpu-bare"].reason
    assert report.non_gpu == ["control-plane", "cpu-worker"]
    assert not report.ok


def test_check_reports_an_os_without_pool() -> None:
    values = {"nodePools": [{"name": "jammy", "os": {"id": "ubuntu", "version": "22.04"}}]}
    report = nd.check_nodes(parsed(), resolve(values, "t").pools)
    by_node = {n.node: n for n in report.nodes}
    assert by_node["gpu-ubuntu-c"].status == nd.OK
    assert by_node["gpu-noble"].reason == "no pool for OS ubuntu 24.04 (the pools cover ubuntu22.04)"


def test_check_reports_nodes_two_pools_select() -> None:
    from renderer.driverimage import resolve_pool
    from renderer.resolve import with_defaults

    values = with_defaults({})
    a = resolve_pool(values, {"name": "a", "os": {"id": "ubuntu", "version": "22.04"}})
    b = resolve_pool(values, {"name": "b", "os": {"id": "ubuntu", "version": "22.04"}})
    report = nd.check_nodes(parsed([FLEET_NODES[0]]), [a, b])
    assert report.nodes == [nd.NodeStatus("gpu-ubuntu-a", nd.AMBIGUOUS, "a", a.image, "selected by several pools: a, b")]


# ---------------------------------------------------------------- CLI


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "values.yaml").write_text('driver:\n  version: "570"\n  usePrecompiled: true\n')
    (tmp_path / "overlays" / "prod").mkdir(parents=True)
    (tmp_path / "overlays" / "prod" / "values.yaml").write_text("# prod: the H100 fleet\nmig:\n  strategy: mixed  # keep\n")
    (tmp_path / "nodes.json").write_text(doc(FLEET_NODES))
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_cli_import_prints_pools(repo: Path, run_cli) -> None:  # type: ignore[no-untyped-def]
    result = run_cli("nodes", "import", "nodes.json")
    assert result.exit_code == 0
    assert "  - name: ubuntu2204-5-15-0-1041-nvidia\n    os: {id: ubuntu, version: '22.04'}\n    kernel: 5.15.0-1041-nvidia\n" in result.stdout
    assert "warning: GPU node gpu-bare not imported" in result.stderr
    plain = run_cli("nodes", "import", "nodes.json", "--no-precompiled", "--format", "json")
    assert [p["name"] for p in json.loads(plain.stdout)["nodePools"]] == ["rhel9", "ubuntu2204", "ubuntu2404"]


def test_cli_import_write_then_check(repo: Path, run_cli) -> None:  # type: ignore[no-untyped-def]
    result = run_cli("nodes", "import", "nodes.json", "--cluster", "prod", "--write")
    assert result.exit_code == 0, result.stderr
    assert "updated overlays/prod/values.yaml: 5 node pool(s)" in result.stdout
    text = (repo / "overlays" / "prod" / "values.yaml").read_text()
    assert text.startswith("# prod: the H100 fleet\nmig:\n  strategy: mixed  # keep\nnodePools:\n")
    assert run_cli("nodes", "import", "nodes.json", "--cluster", "prod", "--write").stdout.startswith("unchanged")
    check = run_cli("nodes", "check", "nodes.json", "--cluster", "prod")
    assert check.exit_code == 1  # gpu-bare has no NFD labels
    assert "gpu-ubuntu-c  ok         ubuntu2204-5-15-0-1041-nvidia  nvcr.io/nvidia/driver:570-5.15.0-1041-nvidia-ubuntu22.04" in check.stdout
    assert "gpu-bare      missing-labels" in check.stdout
    assert run_cli("validate").exit_code == 0


def test_cli_check_json_and_exit_codes(repo: Path, run_cli) -> None:  # type: ignore[no-untyped-def]
    (repo / "nodes.json").write_text(doc(FLEET_NODES[:2] + FLEET_NODES[7:]))
    (repo / "values.yaml").write_text('driver: {version: "570", usePrecompiled: true}\nnodePools:\n  - {name: a, os: {id: ubuntu, version: "22.04"}, kernel: 5.15.0-1040-nvidia}\n')
    result = run_cli("nodes", "check", "nodes.json", "--format", "json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["ok"] is True
    assert report["cluster"] == "fleet"
    assert [(n["node"], n["pool"], n["image"]) for n in report["nodes"]] == [
        ("gpu-ubuntu-a", "a", "nvcr.io/nvidia/driver:570-5.15.0-1040-nvidia-ubuntu22.04"),
        ("gpu-ubuntu-b", "a", "nvcr.io/nvidia/driver:570-5.15.0-1040-nvidia-ubuntu22.04"),
    ]
    assert report["nonGpuNodes"] == ["control-plane", "cpu-worker"]
    (repo / "nodes.json").write_text(doc(FLEET_NODES[:3]))
    drift = run_cli("nodes", "check", "nodes.json", "--format", "json")
    assert drift.exit_code == 1
    assert json.loads(drift.stdout)["nodes"][2]["status"] == "uncovered"


def test_cli_check_refuses_invalid_values(repo: Path, run_cli) -> None:  # type: ignore[no-untyped-def]
    (repo / "values.yaml").write_text('driver: {version: "570", usePrecompiled: true}\nnodePools:\n  - {name: a, os: {id: ubuntu, version: "22.04"}}\n')
    result = run_cli("nodes", "check", "nodes.json")
    assert result.exit_code == 1
    assert "values.yaml:3:5: /nodePools/0: node pool 'a': usePrecompiled needs the pool's kernel" in result.stderr


def test_cli_check_uses_the_cluster_nodes_json(repo: Path, run_cli) -> None:  # type: ignore[no-untyped-def]
    (repo / "overlays" / "prod" / "nodes.json").write_text(doc([FLEET_NODES[3]]))
    (repo / "overlays" / "prod" / "values.yaml").write_text('nodePools:\n  - {name: noble, os: {id: ubuntu, version: "24.04"}, kernel: 6.8.0-1015-aws}\n')
    result = run_cli("nodes", "check", "--cluster", "prod")
    assert result.exit_code == 0, result.output
    assert "gpu-noble  ok         noble  nvcr.io/nvidia/driver:570-6.8.0-1015-aws-ubuntu24.04" in result.stdout
    assert run_cli("nodes", "check").exit_code == 2
    assert run_cli("nodes", "check", "nodes.json", "--cluster", "nope").exit_code == 2


def test_cli_bad_nodes_file(repo: Path, run_cli) -> None:  # type: ignore[no-untyped-def]
    (repo / "nodes.json").write_text("not json")
    result = run_cli("nodes", "import", "nodes.json")
    assert result.exit_code == 1
    assert result.stderr.startswith("nodes.json:1:1: /: not valid JSON")
    missing = run_cli("nodes", "check", "absent.json")
    assert missing.exit_code == 1
    assert "nodes file not found: absent.json" in missing.stderr


# ---------------------------------------------------------------- import reconciles with existing pools


def existing_pools(pools: list[dict[str, Any]], **fleet: Any) -> list[Any]:
    return list(resolve({"nodePools": pools, **fleet}, "t").pools)


def test_import_keeps_pools_and_seeds_new_kernels_from_them() -> None:
    old = [
        {"name": "jammy-1040", "os": {"id": "ubuntu", "version": "22.04"}, "kernel": "5.15.0-1040-nvidia", "driver": {"version": "575"}, "mig": {"config": "all-1g.10gb"}},
        {"name": "gone", "os": {"id": "sles", "version": "15.6"}, "kernel": "6.4.0-150600.23.25-default"},
    ]
    existing = existing_pools(old, driver={"usePrecompiled": True, "version": "570"})
    jammy = [n for n in parsed() if n.os_id == "ubuntu" and n.os_version == "22.04"]
    result = nd.import_pools(jammy, precompiled=True, existing=existing)
    assert result.pools == [
        old[0],
        {
            "name": "ubuntu2204-5-15-0-1041-nvidia",
            "os": {"id": "ubuntu", "version": "22.04"},
            "kernel": "5.15.0-1041-nvidia",
            "runtime": "containerd",
            "gpuProduct": H100,
            "driver": {"version": "575"},
            "mig": {"config": "all-1g.10gb"},
        },
    ]
    assert result.members == {"jammy-1040": ["gpu-ubuntu-a", "gpu-ubuntu-b"], "ubuntu2204-5-15-0-1041-nvidia": ["gpu-ubuntu-c"]}
    assert result.dropped == ["gone"]


def test_import_keeps_pools_split_by_node_selector() -> None:
    old = [
        {"name": "h100", "os": {"id": "ubuntu", "version": "22.04"}, "driver": {"nodeSelector": {"nvidia.com/gpu.product": H100}}},
        {"name": "rhel", "os": {"id": "rhel", "version": "9.4"}},
    ]
    result = nd.import_pools(parsed(), precompiled=False, existing=existing_pools(old))
    assert [p["name"] for p in result.pools] == ["h100", "rhel", "ubuntu2404"]
    assert result.members["h100"] == ["gpu-ubuntu-a", "gpu-ubuntu-b", "gpu-ubuntu-c"]
    assert result.members["rhel"] == ["gpu-rhel94", "gpu-rhel96"]
    assert result.dropped == []


def test_cli_import_reconciles_unless_fresh(repo: Path, run_cli) -> None:  # type: ignore[no-untyped-def]
    (repo / "overlays" / "prod" / "values.yaml").write_text(
        """\
nodePools:
  # the first H100 nodes
  - name: jammy
    os: {id: ubuntu, version: "22.04"}
    kernel: 5.15.0-1040-nvidia
    driver: {version: "575"}
"""
    )
    result = run_cli("nodes", "import", "nodes.json", "--cluster", "prod")
    assert result.exit_code == 0, result.output
    assert "  - name: jammy\n" in result.stdout
    assert "  - name: ubuntu2204-5-15-0-1040-nvidia\n" not in result.stdout
    assert "  - name: ubuntu2204-5-15-0-1041-nvidia\n    os: {id: ubuntu, version: '22.04'}\n    kernel: 5.15.0-1041-nvidia\n" in result.stdout
    assert result.stdout.count("version: '575'") == 2
    fresh = run_cli("nodes", "import", "nodes.json", "--cluster", "prod", "--fresh")
    assert "  - name: jammy\n" not in fresh.stdout
    assert "  - name: ubuntu2204-5-15-0-1040-nvidia\n" in fresh.stdout
