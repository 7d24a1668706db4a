"""The operator-fidelity fixes, one behaviour per test (issue: operator fidelity, pool driver keys).

Inputs are inline values; the facts asserted are the GPU Operator v26.7 ones (its driver
manifests, ``object_controls.go`` and the validator's source), per imitated release where they differ.
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
from pathlib import Path
from typing import Any

import pytest

from renderer.components import common as c
from renderer.components.common import Obj
from renderer.render import objects
from tests.test_operands_a import UBUNTU, ctr, ds, env, find, model, mounts, pod

VGPU_HOST = {"name": "hosts", "os": {"id": "ubuntu", "version": "22.04"}, "driver": {"driverType": "vgpu-host-manager"}}


def driver_pod(extra: dict[str, Any] | None = None, pools: list[dict[str, Any]] | None = None, name: str = "nvidia-driver-daemonset-ubuntu2204") -> Obj:
    return pod(ds(model(extra, pools or [UBUNTU]), "driver", name))


def volumes(p: Obj) -> dict[str, Obj]:
    return {v["name"]: v for v in p["volumes"]}


@pytest.mark.parametrize(
    ("release", "name", "path", "kind"),
    [
        ("v26.7", "host-sys-devices-system", "/sys/devices/system", "Directory"),
        ("v26.3", "sysfs-memory-online", "/sys/devices/system/memory/auto_online_blocks", None),
        ("v25.10", "sysfs-memory-online", "/sys/devices/system/memory/auto_online_blocks", None),
    ],
)
def test_sys_devices_mount_follows_the_release(release: str, name: str, path: str, kind: str | None) -> None:
    p = driver_pod({"cluster": {"operatorRelease": release}})
    assert mounts(ctr(p, "nvidia-driver-ctr"))[path] == name
    assert volumes(p)[name]["hostPath"] == ({"path": path, "type": kind} if kind else {"path": path})


@pytest.mark.parametrize(("release", "checks"), [("v26.7", True), ("v26.3", False)])
def test_startup_probe_waits_for_the_driver_daemons_in_v26_7(release: str, checks: bool) -> None:
    objs = objects(model({"cluster": {"operatorRelease": release}}, [UBUNTU]))
    (cm,) = find(objs, "driver", "ConfigMap", "nvidia-driver-startup-probe")
    script = cm["data"]["startup-probe.sh"]
    assert ('"$status" != "Ready"' in script) is checks
    assert ".driver-daemons-status" in script if checks else ".driver-daemons-status" not in script
    stop = ctr(driver_pod({"cluster": {"operatorRelease": release}}), "nvidia-driver-ctr")["lifecycle"]["preStop"]["exec"]["command"][-1]
    assert (".driver-daemons-status" in stop) is checks


def test_driver_resources_reach_every_container_of_the_pod() -> None:
    res = {"limits": {"memory": "1Gi"}}
    p = driver_pod({"driver": {"resources": res, "rdma": {"enabled": True}}, "gds": {"enabled": True}, "gdrcopy": {"enabled": True}})
    names = [x["name"] for x in [*p["initContainers"], *p["containers"]]]
    assert names == ["k8s-driver-manager", "nvidia-driver-ctr", "nvidia-peermem-ctr", "nvidia-fs-ctr", "nvidia-gdrcopy-ctr"]
    assert all(ctr(p, n)["resources"] == res for n in names)


def test_pull_secrets_secret_env_and_host_mofed() -> None:
    p = driver_pod(
        {
            "driver": {"imagePullSecrets": ["drv"], "manager": {"imagePullSecrets": ["mgr"]}, "secretEnv": "creds", "rdma": {"enabled": True, "useHostMofed": True}},
            "gds": {"enabled": True, "imagePullSecrets": ["gds"]},
            "gdrcopy": {"enabled": True, "imagePullSecrets": ["gdr", "drv"]},
        }
    )
    assert p["imagePullSecrets"] == [{"name": n} for n in ("drv", "mgr", "gds", "gdr")]
    for name in ("nvidia-driver-ctr", "nvidia-fs-ctr", "nvidia-gdrcopy-ctr"):
        assert ctr(p, name)["envFrom"] == [{"secretRef": {"name": "creds"}}]
    for name in ("nvidia-driver-ctr", "nvidia-peermem-ctr", "k8s-driver-manager"):
        assert env(ctr(p, name))["USE_HOST_MOFED"] == "true"
    assert volumes(p)["mlnx-ofed-usr-src"]["hostPath"]["path"] == "/usr/src"


def test_rdma_without_host_mofed_sets_no_use_host_mofed() -> None:
    p = driver_pod({"driver": {"rdma": {"enabled": True}}})
    assert all("USE_HOST_MOFED" not in env(ctr(p, n)) for n in ("nvidia-driver-ctr", "nvidia-peermem-ctr", "k8s-driver-manager"))


def test_args_follow_init_and_the_driver_runs_with_runc() -> None:
    drv = ctr(driver_pod({"driver": {"args": ["--debug"]}}), "nvidia-driver-ctr")
    assert drv["args"] == ["init", "--debug"]
    assert drv["env"][0] == {"name": "NVIDIA_VISIBLE_DEVICES", "value": "void"}


def test_anti_affinity_with_the_vgpu_manager_and_nvidiadriver_labels() -> None:
    d = ds(model({}, [UBUNTU]), "driver", "nvidia-driver-daemonset-ubuntu2204")
    term = d["spec"]["template"]["spec"]["affinity"]["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][0]
    assert term["labelSelector"]["matchExpressions"][0]["values"] == ["nvidia-driver", "nvidia-vgpu-manager"]
    for lbls in (d["metadata"]["labels"], d["spec"]["template"]["metadata"]["labels"]):
        assert lbls["nvidia.com/node.os-version"] == "ubuntu22.04"
        assert lbls["nvidia.com/precompiled"] == "false"


def test_precompiled_pools_carry_the_kernel_label() -> None:
    pool = {**UBUNTU, "kernel": "5.15.0-1040-nvidia", "driver": {"usePrecompiled": True, "version": "570"}}
    (d,) = find(objects(model({}, [pool])), "driver", "DaemonSet")
    assert d["metadata"]["labels"]["nvidia.com/precompiled.kernel-version"] == "5.15.0-1040-nvidia"


def test_vgpu_host_manager_pool_is_the_operators_vgpu_manager_pod() -> None:
    d = ds(model({"vgpuManager": {"repository": "registry.example.com/nvidia", "version": "595.91.07"}}, [VGPU_HOST]), "driver")
    p = d["spec"]["template"]["spec"]
    main = ctr(p, "nvidia-driver-ctr")
    assert main["image"] == "registry.example.com/nvidia/vgpu-manager:595.91.07-ubuntu22.04"
    assert "startupProbe" not in main and "lifecycle" not in main
    assert mounts(main)["/dev/vfio"] == "vfio" and mounts(main)["/sys/fs/cgroup"] == "cgroup"
    assert p["terminationGracePeriodSeconds"] == 120
    assert d["metadata"]["labels"]["app.kubernetes.io/component"] == "nvidia-vgpu-host-manager"
    expr = p["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"][0]["matchExpressions"]
    cc_paused = [c.CC_PAUSED, f"{c.PAUSED}_{c.CC_PAUSED}", f"{c.PRE_INSTALLED}_{c.CC_PAUSED}"]
    assert {"key": "nvidia.com/gpu.deploy.vgpu-manager", "operator": "NotIn", "values": ["false", c.PAUSED, c.PRE_INSTALLED, *cc_paused]} in expr


SANDBOX = {"sandboxWorkloads": {"enabled": True, "mode": "kata"}, "vgpuManager": {"enabled": True}, "vgpuDeviceManager": {"enabled": True}}


@pytest.mark.parametrize(
    ("component", "operand"),
    [
        ("vfio-manager", "vfio-manager"),
        ("vgpu-manager", "vgpu-manager"),
        ("vgpu-device-manager", "vgpu-device-manager"),
        ("sandbox-validator", "sandbox-validator"),
        ("cc-manager", "cc-manager"),
        ("kata-sandbox-device-plugin", "kata-sandbox-device-plugin"),
    ],
)
def test_operands_k8s_cc_manager_pauses_leave_the_node(component: str, operand: str) -> None:
    """k8s-cc-manager sets the deploy labels of vfio-manager, vgpu-manager, vgpu-device-manager,
    sandbox-validator and sandbox-device-plugin to ``paused-for-cc-mode-change`` and waits for
    their pods to go before it switches the CC mode: their affinity must not match that value
    (the operator's ``=true`` selectors do not); other operands' labels it leaves alone."""
    objs = objects(model(SANDBOX, [UBUNTU]))
    (d,) = [o for o in objs[component] if o["kind"] == "DaemonSet"]
    terms = d["spec"]["template"]["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
    (values,) = {tuple(e["values"]) for t in terms for e in t["matchExpressions"] if e["key"] == f"nvidia.com/gpu.deploy.{operand}"}
    paused = operand in c.CC_PAUSED_OPERANDS
    assert (c.CC_PAUSED in values) is paused and (f"{c.PAUSED}_{c.CC_PAUSED}" in values) is paused
    assert {"false", c.PAUSED} <= set(values)


def test_cc_manager_waits_in_its_own_namespace() -> None:
    objs = objects(model({**SANDBOX, "cluster": {"namespace": "gpu-stack"}}, [UBUNTU]))
    (d,) = [o for o in objs["cc-manager"] if o["kind"] == "DaemonSet"]
    assert {"name": "OPERATOR_NAMESPACE", "valueFrom": {"fieldRef": {"fieldPath": "metadata.namespace"}}} in ctr(pod(d), "nvidia-cc-manager")["env"]
    assert d["metadata"]["namespace"] == "gpu-stack"


def test_pool_driver_keys_render() -> None:
    pool = {
        **UBUNTU,
        "driver": {
            "labels": {"team": "ml"},
            "annotations": {"note": "x"},
            "tolerations": [{"key": "dedicated", "operator": "Exists", "effect": "NoSchedule"}],
            "priorityClassName": "gpu-critical",
            "manager": {"imagePullSecrets": ["mgr"]},
            "gds": {"enabled": True},
            "gdrcopy": {"enabled": True},
        },
    }
    d = ds(model({}, [pool]), "driver")
    p = d["spec"]["template"]["spec"]
    assert d["metadata"]["labels"]["team"] == "ml" and d["spec"]["template"]["metadata"]["labels"]["team"] == "ml"
    assert d["metadata"]["annotations"]["note"] == "x" and d["spec"]["template"]["metadata"]["annotations"]["note"] == "x"
    assert {"key": "dedicated", "operator": "Exists", "effect": "NoSchedule"} in p["tolerations"]
    assert p["priorityClassName"] == "gpu-critical"
    assert {"name": "mgr"} in p["imagePullSecrets"]
    assert [x["name"] for x in p["containers"]] == ["nvidia-driver-ctr", "nvidia-fs-ctr", "nvidia-gdrcopy-ctr"]
    assert env(ctr(p, "nvidia-driver-ctr"))["GDS_ENABLED"] == "true"


def test_pool_can_turn_fleet_gds_off() -> None:
    pool = {**UBUNTU, "driver": {"gds": {"enabled": False}}}
    p = pod(ds(model({"gds": {"enabled": True}}, [pool]), "driver"))
    assert [x["name"] for x in p["containers"]] == ["nvidia-driver-ctr"]


def test_licensing_config_map_virtual_topology_and_repo_config_without_keys() -> None:
    p = driver_pod(
        {
            "driver": {
                "licensingConfig": {"configMapName": "licensing", "nlsEnabled": False},
                "virtualTopology": {"config": "topology"},
                "repoConfig": {"configMapName": "repos"},
            }
        }
    )
    m = mounts(ctr(p, "nvidia-driver-ctr"))
    assert m["/drivers/gridd.conf"] == "licensing-config"
    assert volumes(p)["licensing-config"]["configMap"] == {"name": "licensing", "items": [{"key": "gridd.conf", "path": "gridd.conf"}]}
    assert m["/etc/nvidia/nvidia-topologyd.conf"] == "topology-config"
    assert volumes(p)["topology-config"]["configMap"]["name"] == "topology"
    assert m["/etc/apt/sources.list.d"] == "repo-config"


def test_repo_and_cert_configs_reach_the_module_sidecars() -> None:
    p = driver_pod({"driver": {"repoConfig": {"configMapName": "repos", "keys": ["a.list"]}}, "gds": {"enabled": True}})
    assert mounts(ctr(p, "nvidia-fs-ctr"))["/etc/apt/sources.list.d/a.list"] == "repo-config"


@pytest.mark.parametrize(("release", "claims"), [("v26.7", True), ("v26.3", False), ("v25.10", False)])
def test_driver_cluster_role_resource_claims_per_release(release: str, claims: bool) -> None:
    (role,) = find(objects(model({"cluster": {"operatorRelease": release}}, [UBUNTU])), "driver", "ClusterRole")
    rule = {"apiGroups": ["resource.k8s.io"], "resources": ["resourceclaims"], "verbs": ["get", "list"]}
    assert (rule in role["rules"]) is claims


def test_validator_runs_as_root_and_plugin_validation_can_start_its_workload() -> None:
    p = pod(ds(model({}, [UBUNTU]), "operator-validator"))
    assert all(x["securityContext"]["runAsUser"] == 0 for x in [*p["initContainers"], *p["containers"]])
    plugin = env(ctr(p, "plugin-validation"))
    assert {"VALIDATOR_IMAGE", "VALIDATOR_IMAGE_PULL_POLICY", "VALIDATOR_RUNTIME_CLASS"} <= set(plugin)


def test_device_plugin_entrypoint_keeps_the_module_checks() -> None:
    (cm,) = find(objects(model({}, [UBUNTU])), "device-plugin", "ConfigMap", "nvidia-device-plugin-entrypoint")
    script = cm["data"]["entrypoint.sh"]
    for line in ("lsmod | grep -q '^gdrdrv '", "lsmod | grep -q '^nvidia_fs '", "GDRCOPY_ENABLED=true", "GDS_ENABLED=true", "MOFED_ENABLED=true"):
        assert line in script


# --- the driver gate, run for real under sh with a fake nvidia-validator ------------------


FAKE_VALIDATOR = """#!/bin/sh
echo "$COMPONENT" >> "$LOG"
if [ "$COMPONENT" = driver ]; then
  mkdir -p "$OUTPUT_DIR"
  printf 'IS_HOST_DRIVER=%s\\nNVIDIA_DRIVER_ROOT=/run/nvidia/driver\\n' "$HOST" > "$OUTPUT_DIR/driver-ready"
fi
exit "${FAIL:-0}"
"""


def run_gate(tmp_path: Path, *, host: bool, ctr_ready: str | None, fail: str = "0") -> tuple[int, list[str], bool]:
    validations = tmp_path / "validations"
    validations.mkdir()
    if ctr_ready is not None:
        (validations / ".driver-ctr-ready").write_text(ctr_ready)
    bindir = tmp_path / "bin"
    bindir.mkdir()
    fake = bindir / "nvidia-validator"
    fake.write_text(FAKE_VALIDATOR)
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    script = c.driver_validation_init(model({}, [UBUNTU]))["args"][0].replace(c.VALIDATIONS_DIR, str(validations))
    script = script.replace("sleep 5", "exit 7")  # a wait would loop forever in a test: stop instead
    log = tmp_path / "log"
    environ = {**os.environ, "PATH": f"{bindir}:{os.environ['PATH']}", "LOG": str(log), "HOST": "true" if host else "false", "COMPONENT": "driver", "FAIL": fail}
    sh = shutil.which("sh")
    assert sh
    done = subprocess.run([sh, "-c", script], env=environ, capture_output=True, text=True, check=False)
    ran = log.read_text().split() if log.exists() else []
    return done.returncode, ran, (validations / "driver-ready").exists()


FEATURES = "GDRCOPY_ENABLED: true\nGDS_ENABLED: true\nGPU_DIRECT_RDMA_ENABLED: false\n"


def test_gate_runs_the_driver_container_checks_the_operator_runs(tmp_path: Path) -> None:
    code, ran, ready = run_gate(tmp_path, host=False, ctr_ready=FEATURES)
    assert (code, ran, ready) == (0, ["driver", "nvidia-fs", "gdrcopy"], True)


def test_gate_waits_for_the_driver_container_ready_file(tmp_path: Path) -> None:
    code, ran, ready = run_gate(tmp_path, host=False, ctr_ready=None)
    assert (code, ran, ready) == (7, ["driver"], False)


def test_gate_skips_the_container_checks_for_a_host_driver(tmp_path: Path) -> None:
    code, ran, ready = run_gate(tmp_path, host=True, ctr_ready=None)
    assert (code, ran, ready) == (0, ["driver"], True)


def test_gate_writes_no_driver_ready_when_a_check_fails(tmp_path: Path) -> None:
    code, _ran, ready = run_gate(tmp_path, host=False, ctr_ready=FEATURES, fail="1")
    assert code != 0 and not ready


def test_openshift_is_refused_with_its_place_and_a_hint(tmp_path: Path) -> None:
    from renderer.inputs import read_inputs
    from renderer.pipeline import plan

    (tmp_path / "values.yaml").write_text('cluster:\n  capabilities:\n    openshift: true\nnodePools:\n  - name: a\n    os: {id: rhcos, version: "4.16"}\n')
    p = plan(read_inputs(tmp_path / "values.yaml", tmp_path / "overlays"))
    (problem,) = [x for x in p.errors if x.code == "openshift-unsupported"]
    assert (problem.line, problem.column, problem.pointer) == (3, 16, "/cluster/capabilities/openshift")
    assert "Driver Toolkit" in problem.message and problem.hint


def test_fleet_vgpu_manager_image_builds_a_chart_for_vgpu_host_pools(tmp_path: Path) -> None:
    """The chart's per-pool values carry the fleet driver's image keys: they must not pass for
    the pool's own vGPU manager image (the chart check failed: ChartMismatch, exit 3)."""
    from renderer.emit import helm
    from renderer.inputs import read_inputs
    from renderer.pipeline import plan

    (tmp_path / "values.yaml").write_text(
        "nodePools:\n  - name: hosts\n    os: {id: ubuntu, version: '22.04'}\n    driver: {driverType: vgpu-host-manager}\n"
        "vgpuManager: {repository: registry.example.com/nvidia, version: 595.91.07}\n"
    )
    p = plan(read_inputs(tmp_path / "values.yaml", tmp_path / "overlays"))
    assert p.base is not None and not p.errors
    chart = helm.analyse(p.base)
    (d,) = [o for o in helm.static_objects(p.base) if o["kind"] == "DaemonSet" and o["metadata"]["name"].startswith("nvidia-vgpu-manager")]
    assert ctr(d["spec"]["template"]["spec"], "nvidia-driver-ctr")["image"] == "registry.example.com/nvidia/vgpu-manager:595.91.07-ubuntu22.04"
    assert chart.templates


def _problems(policy: dict[str, Any], code: str) -> list[tuple[str, str]]:
    from renderer import yamlio
    from renderer.inputs import Inputs
    from renderer.pipeline import plan

    p = plan(Inputs(yamlio.dump(policy).encode(), "values.yaml"))
    return [(x.pointer, x.severity.name) for x in p.problems if x.code == code]


PRECOMPILED = {**UBUNTU, "kernel": "5.15.0-1040-nvidia"}


@pytest.mark.parametrize(
    ("policy", "pool_driver"),
    [
        ({"driver": {"usePrecompiled": True, "version": "570"}, "gds": {"enabled": True}}, {}),
        ({"driver": {"usePrecompiled": True, "version": "570"}}, {"gdrcopy": {"enabled": True}}),
        ({"gdrcopy": {"enabled": True}}, {"usePrecompiled": True, "version": "570"}),
    ],
)
def test_gds_and_gdrcopy_with_precompiled_drivers_are_refused_as_the_operator(policy: dict[str, Any], pool_driver: dict[str, Any]) -> None:
    """transformGDSContainer / transformGDRCopyContainer return "... is not supported along with
    pre-compiled NVIDIA drivers" (no driver DaemonSet), and the NVIDIADriver controller marks
    such a CR NotReady: refused at usePrecompiled, where it was written."""
    pool = {**PRECOMPILED, "driver": pool_driver} if pool_driver else PRECOMPILED
    where = "/nodePools/0/driver/usePrecompiled" if "usePrecompiled" in pool_driver else "/driver/usePrecompiled"
    assert _problems({**policy, "nodePools": [pool]}, "pool-precompiled-sidecar") == [(where, "ERROR")]


def test_precompiled_without_sidecars_and_a_pool_turning_gds_off_still_render() -> None:
    pool = {**PRECOMPILED, "driver": {"gds": {"enabled": False}}}
    assert _problems({"driver": {"usePrecompiled": True, "version": "570"}, "gds": {"enabled": True}, "nodePools": [pool]}, "pool-precompiled-sidecar") == []


def test_a_leading_init_in_driver_args_is_refused_and_the_importer_takes_it_out() -> None:
    """transformDriverContainer puts ClusterPolicy driver.args in place of the asset's ["init"]:
    its values files write `init` first, which gpu-render (NVIDIADriver: args after init) would
    render as `init init`. The importer drops it; validate refuses it where it is written."""
    from renderer.migrate import import_values

    assert _problems({"driver": {"args": ["init", "--accept-license"]}, "nodePools": [UBUNTU]}, "driver-args-init") == [("/driver/args/0", "ERROR")]
    assert _problems({"driver": {"args": ["--accept-license"]}, "nodePools": [UBUNTU]}, "driver-args-init") == []
    imported = import_values(b"driver:\n  args: [init, --accept-license]\n", "values.yaml")
    assert "args: [--accept-license]" in imported.text
    assert [key for key, _ in imported.notes] == ["driver.args"]
    assert "\n  args:" not in import_values(b"driver:\n  args: [init]\n  version: '570'\n", "values.yaml").text


def test_zero_startup_delay_warns_as_the_operator_keeps_its_default() -> None:
    """setContainerProbe copies only the non-zero fields of driver.startupProbe: 0 keeps the
    asset's 60 seconds; gpu-render renders the 0, as the NVIDIADriver template does, and warns."""
    policy = {"driver": {"startupProbe": {"initialDelaySeconds": 0}}, "nodePools": [UBUNTU]}
    assert _problems(policy, "driver-probe-zero") == [("/driver/startupProbe/initialDelaySeconds", "WARNING")]
    assert ctr(driver_pod(policy), "nvidia-driver-ctr")["startupProbe"]["initialDelaySeconds"] == 0
    assert _problems({"driver": {"startupProbe": {"initialDelaySeconds": 5}}, "nodePools": [UBUNTU]}, "driver-probe-zero") == []


def test_sidecar_args_the_operator_never_reads_warn() -> None:
    """transformGDSContainer, transformGDRCopyContainer and the NVIDIADriver template set no
    args on the nvidia-fs / gdrdrv sidecars (the asset's install script always runs): the
    GDS/GDRCopy `args` gpu-render runs in its place warn, fleet and per pool."""
    pool = {**UBUNTU, "driver": {"gdrcopy": {"enabled": True, "args": ["exec my-install"]}}}
    policy = {"gds": {"enabled": True, "args": ["exec my-gds"]}, "gdrcopy": {"args": []}, "nodePools": [pool]}
    assert _problems(policy, "sidecar-args") == [("/gds/args", "WARNING"), ("/nodePools/0/driver/gdrcopy/args", "WARNING")]
    assert _problems({"gds": {"enabled": True}, "nodePools": [UBUNTU]}, "sidecar-args") == []


def test_image_only_references_with_a_tag_warn_as_the_operator_suffixes_them() -> None:
    """resolveDriverTag appends `-<ostag>` (precompiled: `-<kernel>-<ostag>`) to an image-only
    driver, GDS or GDRCopy reference unless it is a digest; gpu-render pulls it as written (the
    same image as before) and warns where it is written, once for the fleet."""
    ref = "registry.example.com/mirror/driver:595.91.07"
    image_only = {"repository": "", "version": "", "image": ref}
    policy = {"driver": image_only, "gds": {"enabled": True, "repository": "", "version": "", "image": "registry.example.com/nvidia-fs:2.26.6"}, "nodePools": [UBUNTU, {**UBUNTU, "name": "b"}]}
    assert _problems(policy, "image-only-verbatim") == [("/driver/image", "WARNING"), ("/gds/image", "WARNING")]
    assert ctr(driver_pod(policy), "nvidia-driver-ctr")["image"] == ref
    digest = {"repository": "", "version": "", "image": "registry.example.com/mirror/driver@sha256:" + "ef" * 32}
    assert _problems({"driver": digest, "nodePools": [UBUNTU]}, "image-only-verbatim") == []
    pool = {**PRECOMPILED, "driver": {**image_only, "image": "registry.example.com/driver:570", "usePrecompiled": True}}
    (found,) = [x for x in _messages({"nodePools": [pool]}) if x.code == "image-only-verbatim"]
    assert found.pointer == "/nodePools/0/driver/image" and "'registry.example.com/driver:570-5.15.0-1040-nvidia-ubuntu22.04'" in found.message


def _messages(policy: dict[str, Any]) -> list[Any]:
    from renderer import yamlio
    from renderer.inputs import Inputs
    from renderer.pipeline import plan

    return list(plan(Inputs(yamlio.dump(policy).encode(), "values.yaml")).problems)


@pytest.mark.parametrize(
    ("gds", "kmt", "refused"),
    [
        ({"enabled": True}, "auto", True),  # the default GDS release needs the open modules
        ({"enabled": True}, "open", False),
        ({"enabled": True, "version": "2.17.4"}, "proprietary", False),
        ({"enabled": True, "version": "v2.17.5-rc1"}, "auto", False),
        ({"enabled": True, "version": "2.17"}, "auto", False),
        ({"enabled": True, "version": "sha256:" + "ab" * 32}, "auto", True),
    ],
)
def test_a_pools_own_gds_without_open_kernel_modules_warns_as_the_nvidiadriver_controller_refuses_it(gds: dict[str, Any], kmt: str, refused: bool) -> None:
    """The NVIDIADriver controller refuses a CR whose GDS IsOpenKernelModulesRequired (a digest,
    or v2.17.5 on: consts.MinimumGDSVersionForOpenRM) without kernelModuleType open: a warning
    at the pool's own gds; the ClusterPolicy path does not check, so the fleet's gds does not."""
    pool = {**UBUNTU, "driver": {"gds": gds, "kernelModuleType": kmt}}
    assert _problems({"nodePools": [pool]}, "pool-gds-open-modules") == ([("/nodePools/0/driver/gds/enabled", "WARNING")] if refused else [])
    assert _problems({"gds": gds, "driver": {"kernelModuleType": kmt}, "nodePools": [UBUNTU]}, "pool-gds-open-modules") == []
