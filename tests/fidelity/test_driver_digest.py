"""``DRIVER_CONFIG_DIGEST`` equals the operator's, and ``diff`` tells restart-only from reinstall.

Check values are the operator's own (v26.7): ``TestTransformDriver`` "driver spec with secret
env" in controllers/transforms_test.go expects 4204546510 for its transformed pod spec (the
ClusterPolicy path, which gpu-render follows); the golden ``driver-minimal.yaml`` carries
886542011 for the NVIDIADriver state of its inputs (image, manager image, driver type).
"""

from __future__ import annotations

from typing import Any

from renderer import driverdigest, yamlio
from renderer.components.common import Obj
from renderer.diff import diff_sides, side_from_tree
from renderer.render import objects
from tests.test_operands_a import UBUNTU, ctr, ds, env, model, pod


def test_hash_of_the_operators_transform_driver_test_pod_spec() -> None:
    spec = {
        "initContainers": [{"name": "k8s-driver-manager", "image": "nvcr.io/nvidia/cloud-native/k8s-driver-manager:v0.8.0"}],
        "containers": [
            {
                "name": "nvidia-driver-ctr",
                "image": "nvcr.io/nvidia/driver:570.172.08-ubuntu20.04",
                "envFrom": [{"secretRef": {"name": "test-env-secret"}}],
                "env": [{"name": "GDRCOPY_ENABLED", "value": "true"}, {"name": "GDS_ENABLED", "value": "true"}],
            },
            # named without -ctr in that test, so the operator's extraction skips them
            {"name": "nvidia-fs", "image": "nvcr.io/nvidia/cloud-native/nvidia-fs:2.20.5-ubuntu20.04"},
            {"name": "nvidia-gdrcopy", "image": "nvcr.io/nvidia/cloud-native/gdrdrv:v2.5-ubuntu20.04"},
        ],
    }
    assert driverdigest.of_pod_spec(spec) == "4204546510"


def test_hash_of_the_golden_minimal_nvidiadriver_state() -> None:
    state = {
        "DriverImage": "nvcr.io/nvidia/driver:525.85.03-ubuntu22.04",
        "DriverManagerImage": "nvcr.io/nvidia/cloud-native/k8s-driver-manager:devel",
        "DriverType": "gpu",
        "HostRoot": "",  # empty fields do not count
        "DriverEnv": [],
    }
    assert driverdigest.digest(state) == "886542011"


def test_records_print_every_field_in_declaration_order() -> None:
    state: dict[str, Any] = {"AdditionalVolumeMounts": [{"Name": "a", "MountPath": "/a"}]}
    text = "AdditionalVolumeMounts:([]config.VolumeMountConfig)[{Name:(string)a MountPath:(string)/a SubPath:(string) ReadOnly:(bool)false}]"
    assert driverdigest.digest(state) == str(driverdigest.fnv32a(text.encode()))


def _spec(extra: dict[str, Any] | None = None) -> Obj:
    return pod(ds(model(extra, [UBUNTU]), "driver"))


def test_rendered_digest_is_the_hash_of_the_rendered_pod_spec() -> None:
    spec = _spec()
    digest = env(ctr(spec, "nvidia-driver-ctr"))["DRIVER_CONFIG_DIGEST"]
    assert env(ctr(spec, "k8s-driver-manager"))["DRIVER_CONFIG_DIGEST"] == digest
    stripped = yamlio.load_all(yamlio.dump_file([spec]))[0]
    for c in [*stripped["initContainers"], *stripped["containers"]]:
        c["env"] = [e for e in c.get("env", []) if e["name"] != "DRIVER_CONFIG_DIGEST"]
    assert driverdigest.of_pod_spec(stripped) == digest


def test_install_settings_change_the_digest_and_probes_do_not() -> None:
    def digest(extra: dict[str, Any]) -> str:
        return env(ctr(_spec(extra), "nvidia-driver-ctr"))["DRIVER_CONFIG_DIGEST"]

    base = digest({})
    assert digest({"driver": {"startupProbe": {"initialDelaySeconds": 5}}}) == base
    assert digest({"driver": {"resources": {"limits": {"memory": "2Gi"}}}}) == base
    assert digest({"driver": {"version": "600.10.02"}}) != base
    assert digest({"driver": {"kernelModuleType": "open"}}) != base
    assert digest({"driver": {"env": [{"name": "X", "value": "1"}]}}) != base


def _tree(extra: dict[str, Any]) -> dict[str, str]:
    objs = objects(model(extra, [UBUNTU]))
    (d,) = [o for o in objs["driver"] if o["kind"] == "DaemonSet"]
    return {f"base/driver/daemonset-{d['metadata']['name']}.yaml": yamlio.dump_file([d])}


def test_diff_says_restart_only_when_the_digest_stays() -> None:
    d = diff_sides(side_from_tree("a", _tree({})), side_from_tree("b", _tree({"driver": {"startupProbe": {"initialDelaySeconds": 5}}})))
    (obj,) = d.objects
    assert obj.classes[0] == "pod-restart"
    assert "restart-only" in obj.causes[0].reason


def test_diff_says_reinstall_when_the_digest_changes() -> None:
    d = diff_sides(side_from_tree("a", _tree({})), side_from_tree("b", _tree({"driver": {"version": "600.10.02"}})))
    (obj,) = d.objects
    assert obj.classes[0] == "driver-reload"
    assert any("DRIVER_CONFIG_DIGEST changes" in c.reason for c in obj.causes)
