"""Keys an imitated operator release does not have (``cdi.nriPluginEnabled`` before v26.3):
rendered as that release renders, warned about at the key. A ``value:`` over an env name the
operator's asset sets by ``valueFrom``: refused (the operator's pod would carry both fields,
which the API server rejects)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from renderer.inputs import Inputs
from renderer.pipeline import plan
from renderer.releasegate import ADDED_IN, ASSET_VALUE_FROM, RELEASE_CODE, RELEASES, has
from renderer.releaseimages import CODE as RELEASE_IMAGES
from renderer.releaseimages import DEFAULTS_CODE as RELEASE_DEFAULTS
from renderer.render import objects
from renderer.resolve import resolve

POOL = "nodePools:\n  - name: a\n    os: {id: ubuntu, version: '22.04'}\n"
NRI = "cdi:\n  enabled: true\n  nriPluginEnabled: true\n"


def problems(values: str) -> list[str]:
    """The problems of a policy but the release-images and release-defaults warnings
    (tests/test_release_images.py): these policies leave images and keys to the defaults on purpose."""
    return [p.format() for p in plan(Inputs(values.encode(), "values.yaml")).problems if p.code not in (RELEASE_IMAGES, RELEASE_DEFAULTS)]


def release(name: str) -> str:
    return f"cluster:\n  operatorRelease: {name}\n"


def test_nri_on_v25_10_warns_at_the_key() -> None:
    assert problems(release("v25.10") + POOL + NRI) == [
        "values.yaml:8:3: /cdi/nriPluginEnabled: warning: cdi.nriPluginEnabled: operator release v25.10 has no cdi.nriPluginEnabled "
        "(its ClusterPolicy CRD prunes it, so the operator ignores it; v26.3 adds it): rendered as v25.10 renders, without it "
        "(set cluster.operatorRelease to v26.3 or later, or remove the key)"
    ]


@pytest.mark.parametrize("name", ["v26.3", "v26.7"])
def test_nri_on_later_releases_is_quiet(name: str) -> None:
    assert problems(release(name) + POOL + NRI) == []


def _toolkit(values: dict[str, Any]) -> dict[str, Any]:
    (ds,) = [o for o in objects(resolve(values, "fleet"))["container-toolkit"] if o["kind"] == "DaemonSet"]
    return dict(ds)


def _values(name: str, cdi: dict[str, Any] | None) -> dict[str, Any]:
    values: dict[str, Any] = {"cluster": {"operatorRelease": name}, "nodePools": [{"name": "a", "os": {"id": "ubuntu", "version": "22.04"}}]}
    if cdi is not None:
        values["cdi"] = cdi
    return values


def test_nri_on_v25_10_renders_as_without_it() -> None:
    with_key = objects(resolve(_values("v25.10", {"enabled": True, "nriPluginEnabled": True}), "fleet"))
    without = objects(resolve(_values("v25.10", {"enabled": True}), "fleet"))
    assert with_key == without
    ds = _toolkit(_values("v25.10", {"enabled": True, "nriPluginEnabled": True}))
    text = json.dumps(ds)
    assert "NRI" not in text and "nri" not in text
    assert any(o["kind"] == "RuntimeClass" for objs in with_key.values() for o in objs)  # none in NRI mode


def test_nri_on_v26_3_renders_nri_mode() -> None:
    ds = _toolkit(_values("v26.3", {"enabled": True, "nriPluginEnabled": True}))
    env = {e["name"]: e.get("value") for e in ds["spec"]["template"]["spec"]["containers"][0]["env"]}
    assert env["ENABLE_NRI_PLUGIN"] == "true" and "NRI_SOCKET" in env


def why(dotted: str, name: str) -> str:
    return (
        f"{dotted}: {name}: the operator's asset sets {name} by valueFrom and the operator sets value on that entry, keeping the valueFrom: "
        f"the API server rejects a pod with both, so the operator would not deploy this operand (remove {name} from {dotted}: it is set for you)"
    )


def test_nri_namespace_value_is_refused() -> None:
    assert problems(POOL + "toolkit:\n  env:\n    - name: NRI_NAMESPACE\n      value: gpu\n") == [
        f"values.yaml:7:7: /toolkit/env/0/value: {why('toolkit.env', 'NRI_NAMESPACE')}"
    ]


def test_nri_namespace_value_on_v25_10_is_appended_quietly() -> None:
    # the v25.10 asset has no NRI_NAMESPACE: setContainerEnv appends the user's entry
    assert problems(release("v25.10") + POOL + "toolkit:\n  env:\n    - {name: NRI_NAMESPACE, value: gpu}\n") == []


def test_other_names_and_other_operands() -> None:
    found = problems(POOL + "dcgmExporter:\n  env:\n    - {name: A, value: '1'}\n    - {name: NODE_NAME, value: x}\n")
    assert found == [f"values.yaml:7:25: /dcgmExporter/env/1/value: {why('dcgmExporter.env', 'NODE_NAME')}"]
    assert problems(POOL + "toolkit:\n  env:\n    - {name: OTHER, value: x}\n") == []


OWN_VALUE_FROM = {"/ccManager/env": {"OPERATOR_NAMESPACE"}}
"""Names gpu-render sets by valueFrom where the operator's asset sets none (docs/fidelity.md): a
user's value there is appended by the operator, and replaces gpu-render's entry."""
KATA_ONLY = ("cc-manager", "kata-sandbox-device-plugin")  # from v26.3, with sandboxWorkloads.mode: kata
# (env pointer -> component, container kind, container name) the table's names are checked against
CONTAINERS = {
    "/toolkit/env": ("container-toolkit", "containers", "nvidia-container-toolkit-ctr"),
    "/gfd/env": ("gpu-feature-discovery", "containers", "gpu-feature-discovery"),
    "/dcgmExporter/env": ("dcgm-exporter", "containers", "nvidia-dcgm-exporter"),
    "/migManager/env": ("mig-manager", "containers", "nvidia-mig-manager"),
    "/validator/cuda/env": ("operator-validator", "initContainers", "cuda-validation"),
    "/validator/plugin/env": ("operator-validator", "initContainers", "plugin-validation"),
    "/validator/driver/env": ("operator-validator", "initContainers", "driver-validation"),
    "/ccManager/env": ("cc-manager", "containers", "nvidia-cc-manager"),
    "/nodeStatusExporter/env": ("node-status-exporter", "containers", "nvidia-node-status-exporter"),
    "/sandboxDevicePlugin/env": ("sandbox-device-plugin", "containers", "nvidia-sandbox-device-plugin-ctr"),
    "/kataSandboxDevicePlugin/env": ("kata-sandbox-device-plugin", "containers", "nvidia-kata-sandbox-device-plugin-ctr"),
    "/vgpuDeviceManager/env": ("vgpu-device-manager", "containers", "nvidia-vgpu-device-manager"),
    "/validator/vfioPCI/env": ("sandbox-validator", "initContainers", "vfio-pci-validation"),
    "/validator/vgpuManager/env": ("sandbox-validator", "initContainers", "vgpu-manager-validation"),
    "/validator/vgpuDevices/env": ("sandbox-validator", "initContainers", "vgpu-devices-validation"),
    "/driver/env": ("driver", "containers", "nvidia-driver-ctr"),
    "/driver/manager/env": ("driver", "initContainers", "k8s-driver-manager"),
    "/vgpuManager/driverManager/env": ("vgpu-manager", "initContainers", "k8s-driver-manager"),
    "/vfioManager/driverManager/env": ("vfio-manager", "initContainers", "k8s-driver-manager"),
}


@pytest.mark.parametrize("name", RELEASES)
def test_the_table_is_what_the_render_sets_by_value_from(name: str) -> None:
    assert set(CONTAINERS) == set(ASSET_VALUE_FROM)
    renders = {}
    for mode in ("kubevirt", "kata"):
        values = _values(name, None)
        values.update(migManager={"enabled": True}, nodeStatusExporter={"enabled": True}, sandboxWorkloads={"enabled": True, "mode": mode}, vgpuManager={"enabled": True})
        renders[mode] = objects(resolve(values, "fleet"))
    for pointer, (component, kind, container) in CONTAINERS.items():
        expected = {n for n, since in ASSET_VALUE_FROM[pointer].items() if has(name, since)}
        objs = renders["kata" if component in KATA_ONLY else "kubevirt"]
        if not objs.get(component):  # v25.10 has no kata device plugin
            assert component == "kata-sandbox-device-plugin" and not expected, (name, pointer)
            continue
        (ds,) = [o for o in objs[component] if o["kind"] == "DaemonSet"]
        (ctr,) = [c for c in ds["spec"]["template"]["spec"][kind] if c["name"] == container]
        rendered = {e["name"] for e in ctr.get("env") or [] if "valueFrom" in e}
        assert rendered - OWN_VALUE_FROM.get(pointer, set()) == expected, (name, pointer)


def test_cli_validate_refuses(tmp_path, run_cli, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.chdir(tmp_path)
    (tmp_path / "values.yaml").write_text(POOL + "toolkit:\n  env:\n    - name: NRI_NAMESPACE\n      value: gpu\n")
    result = run_cli("validate", "--format", "json")
    assert result.exit_code != 0
    (problem,) = json.loads(result.stdout)["problems"]
    assert (problem["line"], problem["column"], problem["pointer"]) == (7, 7, "/toolkit/env/0/value")
    assert (problem["code"], problem["severity"]) == ("env-over-value-from", "error")


def test_an_overlay_release_gates_the_fleet_key_once() -> None:
    from renderer.inputs import ClusterInput

    overlay = ClusterInput("old", release("v25.10").encode(), "overlays/old/values.yaml")
    found = [p.format() for p in plan(Inputs((POOL + NRI).encode(), "values.yaml", (overlay,))).problems if "/gitops/" not in p.pointer and p.code not in (RELEASE_IMAGES, RELEASE_DEFAULTS)]
    assert [p.split(": warning:")[0] for p in found] == ["values.yaml:6:3: /cdi/nriPluginEnabled"]


@pytest.mark.parametrize(
    "values",
    [
        "dcgmExporter:\n  enabled: false\n  env:\n    - {name: NODE_NAME, value: x}\n",
        "devicePlugin: {enabled: false}\nvalidator:\n  plugin:\n    env:\n      - {name: NODE_NAME, value: x}\n",
    ],
    ids=["disabled-operand", "plugin-validation-without-device-plugin"],
)
def test_an_operand_not_deployed_is_not_refused(values: str) -> None:
    assert [p for p in problems(POOL + values) if "env-over" in p or "valueFrom" in p] == []


def test_driver_and_manager_env_over_the_asset_are_refused() -> None:
    found = problems(POOL + "driver:\n  env:\n    - {name: NODE_IP, value: 10.0.0.1}\n  manager:\n    env:\n      - {name: OPERATOR_NAMESPACE, value: gpu}\n")
    assert found == [
        f"values.yaml:6:23: /driver/env/0/value: {why('driver.env', 'NODE_IP')}",
        f"values.yaml:9:36: /driver/manager/env/0/value: {why('driver.manager.env', 'OPERATOR_NAMESPACE')}",
    ]
    assert problems(POOL + "driver:\n  enabled: false\n  env:\n    - {name: NODE_IP, value: 10.0.0.1}\n") == []


def test_a_pools_own_driver_env_is_not_refused() -> None:
    # its NVIDIADriver's template appends the entry after the asset's: the later one wins
    assert problems(POOL + "    driver:\n      env:\n        - {name: NODE_NAME, value: x}\n") == []


def test_vgpu_manager_driver_manager_env_is_refused_only_with_sandbox_workloads() -> None:
    env = "vgpuManager:\n  enabled: true\n  repository: registry.example.com\n  version: '580.95.05'\n  driverManager:\n    env:\n      - {name: NODE_NAME, value: x}\n"
    assert problems(POOL + env) == []
    assert problems(POOL + "sandboxWorkloads: {enabled: true}\n" + env) == [
        f"values.yaml:11:27: /vgpuManager/driverManager/env/0/value: {why('vgpuManager.driverManager.env', 'NODE_NAME')}"
    ]


def test_validator_plugin_with_the_device_plugin_is_refused() -> None:
    found = problems(POOL + "validator:\n  plugin:\n    env:\n      - {name: NODE_NAME, value: x}\n")
    assert found == [f"values.yaml:7:27: /validator/plugin/env/0/value: {why('validator.plugin.env', 'NODE_NAME')}"]


# --- every key a later release adds (ADDED_IN): warned at the key, rendered as without it ---

SANDBOX = {"sandboxWorkloads": {"enabled": True}}
KATA = {"sandboxWorkloads": {"enabled": True, "mode": "kata"}}
VGPU = {"sandboxWorkloads": {"enabled": True}, "vgpuManager": {"enabled": True}}
SAMPLES: dict[str, tuple[Any, dict[str, Any]]] = {
    # pointer: (a value that changes the render on the release that has the key, the context it needs)
    "/cdi/nriPluginEnabled": (True, {"cdi": {"enabled": True}}),
    "/daemonsets/podSecurityContext": ({"runAsUser": 0}, {}),
    "/dcgmExporter/hostNetwork": (True, {}),
    "/kataSandboxDevicePlugin": ({"enabled": False}, KATA),  # on by default
    "/sandboxWorkloads/mode": ("kata", SANDBOX),
    "/vgpuManager/kernelModuleConfig": ({"name": "vgpu-kmod", "keys": ["nvidia.conf"]}, VGPU),
    "/nodePools/*/driver/podSecurityContext": ({"runAsUser": 0}, {}),
    "/ccManager/hostNetwork": (True, KATA),
    "/dcgm/hostNetwork": (True, {"dcgm": {"enabled": True}}),
    "/devicePlugin/hostNetwork": (True, {}),
    "/driver/hostNetwork": (True, {}),
    "/gfd/hostNetwork": (True, {}),
    "/kataSandboxDevicePlugin/hostNetwork": (True, KATA),
    "/migManager/hostNetwork": (True, {"migManager": {"enabled": True}}),
    "/nodeStatusExporter/hostNetwork": (True, {"nodeStatusExporter": {"enabled": True}}),
    "/sandboxDevicePlugin/hostNetwork": (True, SANDBOX),
    "/toolkit/hostNetwork": (True, {}),
    "/validator/hostNetwork": (True, {}),
    "/vfioManager/hostNetwork": (True, SANDBOX),
    "/vgpuDeviceManager/hostNetwork": (True, SANDBOX),
    "/vgpuManager/hostNetwork": (True, VGPU),
    "/dcgmExporter/annotations": ({"team": "ml"}, {}),
    "/dcgmExporter/enablePodLabels": (True, {}),
    "/dcgmExporter/enablePodUID": (True, {}),
    "/dcgmExporter/podLabelAllowlistRegex": (["^app$"], {}),
    "/dcgmExporter/serviceMonitor/scrapeTimeout": ("20s", {"cluster": {"capabilities": {"serviceMonitor": True}}, "dcgmExporter": {"serviceMonitor": {"enabled": True}}}),
    "/hostPaths/kubeletRootDir": ("/var/lib/k0s/kubelet", {}),
    "/nodePools/*/driver/hostNetwork": (True, {}),
    "/nodePools/*/driver/upgradePolicy": ({"maxParallelUpgrades": 0, "maxUnavailable": 3}, {}),
}


def _with_key(release_name: str, pointer: str, value: Any, context: dict[str, Any], with_key: bool = True) -> dict[str, Any]:
    from renderer.merge import deep_merge

    values: dict[str, Any] = deep_merge({"cluster": {"operatorRelease": release_name}, "nodePools": [{"name": "a", "os": {"id": "ubuntu", "version": "22.04"}}]}, context)
    if with_key:
        node: Any = values
        parts = pointer[1:].split("/")
        for part in parts[:-1]:
            node = node[0] if part == "*" else node.setdefault(part, {})
        node[parts[-1]] = deep_merge(node[parts[-1]], value) if isinstance(value, dict) and isinstance(node.get(parts[-1]), dict) else value
    return values


def test_every_added_key_has_a_sample() -> None:
    assert set(SAMPLES) == set(ADDED_IN)


@pytest.mark.parametrize("pointer", sorted(ADDED_IN))
def test_an_added_key_renders_as_the_release_without_it(pointer: str) -> None:
    value, context = SAMPLES[pointer]
    since = ADDED_IN[pointer]
    for name in RELEASES:
        with_key = objects(resolve(_with_key(name, pointer, value, context), "fleet"))
        without = objects(resolve(_with_key(name, pointer, value, context, with_key=False), "fleet"))
        if has(name, since):
            assert with_key != without, (name, "the sample changes nothing: the test would prove nothing")
        else:
            assert with_key == without, name


@pytest.mark.parametrize("pointer", sorted(ADDED_IN))
def test_an_added_key_warns_at_the_key_before_its_release(pointer: str) -> None:
    from renderer import yamlio

    value, context = SAMPLES[pointer]
    since = ADDED_IN[pointer]
    for name in RELEASES:
        text = yamlio.dump(_with_key(name, pointer, value, context))
        where = pointer.replace("*", "0")
        if pointer == "/kataSandboxDevicePlugin/hostNetwork" and not has(name, ADDED_IN["/kataSandboxDevicePlugin"]):
            where = "/kataSandboxDevicePlugin"  # warned once, at the section the release has not
        problems = plan(Inputs(text.encode(), "values.yaml")).problems
        found = [p for p in problems if p.code == RELEASE_CODE and (p.pointer + "/").startswith(where.rsplit("/", 1)[0] + "/")]
        found = [p for p in found if p.pointer == where or where.startswith(p.pointer + "/")]  # not the context's own (sandboxWorkloads.mode)
        if has(name, since):
            assert found == [], name
            continue
        (problem,) = found
        key = where.rsplit("/", 1)[-1]
        assert (problem.pointer, problem.severity.value) == (where, "warning")
        assert text.splitlines()[problem.line - 1][problem.column - 1 :].startswith(f"{key}:"), (problem.line, problem.column)
        dotted = where[1:].replace("/", ".")
        adds = ADDED_IN[pointer if where == pointer.replace("*", "0") else where]
        owner = "NVIDIADriver" if pointer.startswith("/nodePools/") else "ClusterPolicy"
        assert problem.message == (
            f"{dotted}: operator release {name} has no {dotted} (its {owner} CRD prunes it, so the operator ignores it; "
            f"{adds} adds it): rendered as {name} renders, without it"
        )


def test_v25_10_deploys_the_cc_manager_whatever_the_mode() -> None:
    # v25.10's ClusterPolicy has no sandboxWorkloads.mode: its cc-manager deploys with
    # sandboxWorkloads.enabled and ccManager.enabled; v26.3 adds the mode and only kata has it
    for name, expected in (("v25.10", True), ("v26.3", False), ("v26.7", False)):
        objs = objects(resolve(_with_key(name, "/sandboxWorkloads/enabled", True, {}), "fleet"))
        assert bool(objs.get("cc-manager")) is expected, name
        assert bool(objs.get("sandbox-device-plugin")), name


def test_the_v25_10_sandbox_device_plugin_is_that_releases() -> None:
    # v25.10's asset: its command, no env, no CDI folder, no Role (v26.3 adds all three)
    for name, newer in (("v25.10", False), ("v26.3", True)):
        objs = objects(resolve(_with_key(name, "/sandboxWorkloads/enabled", True, {}), "fleet"))["sandbox-device-plugin"]
        (ds,) = [o for o in objs if o["kind"] == "DaemonSet"]
        (ctr,) = ds["spec"]["template"]["spec"]["containers"]
        assert ("command" in ctr) is not newer and ("env" in ctr) is newer, name
        assert any(v["name"] == "cdi-root" for v in ds["spec"]["template"]["spec"]["volumes"]) is newer, name
        assert any(o["kind"] == "Role" for o in objs) is newer, name


def test_dcgm_exporter_pod_metadata_rights_per_release() -> None:
    # pod labels by the exporter's own env: v26.3 (v26.3.2) adds the ClusterRole reading pods;
    # before, the exporter's Role reads ConfigMaps and pods in its namespace only
    env = {"dcgmExporter": {"env": [{"name": "DCGM_EXPORTER_KUBERNETES_ENABLE_POD_LABELS", "value": "true"}]}}
    for name, cluster_wide in (("v25.10", False), ("v26.3", True), ("v26.7", True)):
        objs = objects(resolve(_with_key(name, "/dcgmExporter/hostPID", False, env), "fleet"))["dcgm-exporter"]
        (role,) = [o for o in objs if o["kind"] == "Role"]
        assert role["rules"][0]["resources"] == (["configmaps"] if cluster_wide else ["configmaps", "pods"]), name
        assert any(o["kind"] == "ClusterRole" for o in objs) is cluster_wide, name


def test_v25_10_mig_manager_reads_the_default_profiles_as_its_config() -> None:
    # v26.3 remaps the default ConfigMap to config-default.yaml (DEFAULT_CONFIG_FILE, the fallback
    # of profiles derived from the hardware); v25.10 mounts it whole and sets CONFIG_FILE
    for name, fallback in (("v25.10", False), ("v26.3", True), ("v26.7", True)):
        objs = objects(resolve(_with_key(name, "/migManager/enabled", True, {}), "fleet"))["mig-manager"]
        (ds,) = [o for o in objs if o["kind"] == "DaemonSet"]
        spec = ds["spec"]["template"]["spec"]
        env = {e["name"]: e.get("value") for e in spec["containers"][0]["env"]}
        (volume,) = [v for v in spec["volumes"] if v["name"] == "mig-parted-config"]
        assert ("DEFAULT_CONFIG_FILE" in env, "CONFIG_FILE" in env) == (fallback, not fallback), name
        assert ("items" in volume["configMap"]) is fallback, name
