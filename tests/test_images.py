"""gpu-render images: every image the rendered objects pull, per cluster."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from renderer.images import images_of


def workload(kind: str, containers: list[dict[str, Any]], init: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    pod: dict[str, Any] = {"containers": containers}
    if init:
        pod["initContainers"] = init
    if kind == "Pod":
        return {"kind": kind, "spec": pod}
    if kind == "CronJob":
        return {"kind": kind, "spec": {"schedule": "@daily", "jobTemplate": {"spec": {"template": {"spec": pod}}}}}
    return {"kind": kind, "spec": {"template": {"spec": pod}}}


def test_walks_every_workload_kind_and_image_env() -> None:
    objs = [
        workload("DaemonSet", [{"name": "a", "image": "r/a:1", "env": [{"name": "VALIDATOR_IMAGE", "value": "r/v:1"}, {"name": "OTHER", "value": "x"}]}], init=[{"name": "i", "image": "r/i:1"}]),
        workload("Deployment", [{"name": "b", "image": "r/b:1"}]),
        workload("Job", [{"name": "c", "image": "r/c@sha256:" + "0" * 64}]),
        workload("CronJob", [{"name": "d", "image": "r/d:1"}]),
        workload("Pod", [{"name": "e", "image": "r/a:1"}]),
        workload("StatefulSet", [{"name": "f", "image": "r/f:1", "env": [{"name": "X_IMAGE", "valueFrom": {"configMapKeyRef": {"name": "c", "key": "k"}}}]}]),
        {"kind": "ConfigMap", "data": {"image": "not/pulled:1"}},
    ]
    assert images_of(objs) == ["r/a:1", "r/b:1", "r/c@sha256:" + "0" * 64, "r/d:1", "r/f:1", "r/i:1", "r/v:1"]


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "values.yaml").write_text('nodePools:\n  - {name: jammy, os: {id: ubuntu, version: "22.04"}}\n')
    (tmp_path / "overlays" / "prod").mkdir(parents=True)
    (tmp_path / "overlays" / "prod" / "values.yaml").write_text("devicePlugin:\n  repository: mirror.example.com/nvidia\n")
    (tmp_path / "overlays" / "lab").mkdir(parents=True)
    (tmp_path / "overlays" / "lab" / "values.yaml").write_text("devicePlugin:\n  version: sha256:" + "a" * 64 + "\n")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_cli_images_text_is_sorted_unique_union(repo: Path, run_cli) -> None:  # type: ignore[no-untyped-def]
    result = run_cli("images")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines == sorted(set(lines))
    assert "mirror.example.com/nvidia/k8s-device-plugin:v0.20.0" in lines
    assert "nvcr.io/nvidia/k8s-device-plugin@sha256:" + "a" * 64 in lines
    # every cluster overrides the device plugin's image; GPU feature discovery ships in the same
    # image but has its own gfd.* keys, so the upstream tag is still pulled for it
    assert "nvcr.io/nvidia/k8s-device-plugin:v0.20.0" in lines


def test_cli_images_per_cluster(repo: Path, run_cli) -> None:  # type: ignore[no-untyped-def]
    prod = run_cli("images", "--cluster", "prod").stdout.splitlines()
    assert "mirror.example.com/nvidia/k8s-device-plugin:v0.20.0" in prod
    assert not any("sha256" in line for line in prod)
    fleet = run_cli("images", "--cluster", "fleet").stdout.splitlines()
    assert "nvcr.io/nvidia/k8s-device-plugin:v0.20.0" in fleet
    data = json.loads(run_cli("images", "--format", "json").stdout)
    assert sorted(data["clusters"]) == ["lab", "prod"]
    assert data["images"] == sorted({i for images in data["clusters"].values() for i in images})
    assert run_cli("images", "--cluster", "nope").exit_code == 2


def test_cli_images_refuses_bad_values(repo: Path, run_cli) -> None:  # type: ignore[no-untyped-def]
    (repo / "values.yaml").write_text('nodePools:\n  - {name: a, os: {id: ubuntu, version: "22.04"}}\n  - {name: b, os: {id: ubuntu, version: "22.04"}}\n')
    result = run_cli("images")
    assert result.exit_code == 1
    assert "values.yaml:3:5: /nodePools/1: node pools 'b' and 'a' (values.yaml:2:5) select the same nodes" in result.stderr


def test_per_pool_os_suffixed_images_are_listed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, run_cli) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "values.yaml").write_text(
        """\
cluster: {operatorRelease: v26.3}
sandboxWorkloads: {enabled: true, defaultWorkload: vm-vgpu}
vgpuManager: {enabled: true, repository: registry.example.com/nvidia, version: "595.10"}
nodePools:
  - {name: jammy, os: {id: ubuntu, version: "22.04"}}
  - {name: rhel94, os: {id: rhel, version: "9.4"}}
  - {name: rocky9, os: {id: rocky, version: "9.4"}}
"""
    )
    monkeypatch.chdir(tmp_path)
    lines = run_cli("images").stdout.splitlines()
    assert {line for line in lines if "vgpu-manager" in line} == {
        "registry.example.com/nvidia/vgpu-manager:595.10-ubuntu22.04",
        "registry.example.com/nvidia/vgpu-manager:595.10-rhel9.4",
        "registry.example.com/nvidia/vgpu-manager:595.10-rocky9",
    }
