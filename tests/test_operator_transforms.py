"""What the operator's per-operand transforms (controllers/object_controls.go) make of a
ClusterPolicy field, checked key by key against gpu-render's render of the same key.

Each test names the operator function it mirrors. Inputs are inline values; the operator's
behaviour is stated as facts read from its source (v25.10.1, v26.3.0, v26.7.0), not copied.
"""

from __future__ import annotations

from typing import Any

import pytest

from renderer.merge import deep_merge
from renderer.model import Model
from renderer.resolve import resolve
from tests.test_operands_a import UBUNTU, ctr, ds, env, pod

CPU1 = {"limits": {"cpu": "1"}, "requests": {"cpu": "100m"}}
CPU2 = {"limits": {"cpu": "2"}}
SANDBOX = {"sandboxWorkloads": {"enabled": True, "mode": "kubevirt"}, "vgpuDeviceManager": {"enabled": True}, "sandboxDevicePlugin": {"enabled": True}}
KATA = {"sandboxWorkloads": {"enabled": True, "mode": "kata"}, "kataSandboxDevicePlugin": {"enabled": True}}


def model(values: dict[str, Any]) -> Model:
    return resolve(deep_merge({"nodePools": [UBUNTU]}, values), "fleet")


def released(release: str, values: dict[str, Any]) -> Model:
    return model(deep_merge({"cluster": {"operatorRelease": release}}, values))


# -- resources ------------------------------------------------------------------------------


@pytest.mark.parametrize(("component", "main"), [
    ("device-plugin", "nvidia-device-plugin"),
    ("gpu-feature-discovery", "gpu-feature-discovery"),
    ("mps-control-daemon", "mps-control-daemon-ctr"),
])
def test_config_manager_takes_no_resources_with_a_warning(component: str, main: str) -> None:
    """TransformDevicePlugin / TransformGPUDiscoveryPlugin / TransformMPSControlDaemon give
    their section's resources to every container of the asset, the config-manager sidecar
    included, and from v26.7 transformConfigManagerInitContainer to config-manager-init
    (configManagerResourceRequirements). gpu-render gives config-manager none and warns at the
    key (docs/fidelity.md)."""
    from renderer import yamlio
    from renderer.inputs import Inputs
    from renderer.pipeline import plan

    values = {"nodePools": [UBUNTU], "devicePlugin": {"config": {"name": "sharing", "default": "any"}, "resources": CPU1}, "gfd": {"resources": CPU2}}
    p = plan(Inputs(yamlio.dump(values).encode(), "values.yaml"))
    found = [(x.pointer, x.severity.name) for x in p.problems if x.code == "config-manager-resources"]
    assert found == [("/devicePlugin/resources", "WARNING"), ("/gfd/resources", "WARNING")]
    assert p.base is not None
    spec = pod(ds(p.base, component))
    assert ctr(spec, main)["resources"] == (CPU2 if component == "gpu-feature-discovery" else CPU1)
    assert "resources" not in ctr(spec, "config-manager") and "resources" not in ctr(spec, "config-manager-init")


def test_resource_claims_are_dropped_with_a_warning_as_the_clusterpolicy_crd_prunes_them() -> None:
    """The ClusterPolicy CRD's ResourceRequirements has only limits and requests
    (api/nvidia/v1/clusterpolicy_types.go): the chart passes `resources.claims`, the API
    server prunes it, so no operand container has claims. A claim there would also name no
    entry of the pod's resourceClaims, and the API server would refuse the DaemonSet. gpu-render
    drops it in the model and warns at the key (NFD and the node labeller alike)."""
    from renderer import yamlio
    from renderer.inputs import Inputs
    from renderer.pipeline import plan
    from renderer.render import objects

    claims = [{"name": "gpu"}]
    values = {
        "nodePools": [{**UBUNTU, "driver": {"resources": {"claims": claims}}}],
        "driver": {"resources": {**CPU1, "claims": claims}},
        "validator": {"resources": {"claims": claims}},
        "nfd": {"worker": {"resources": {"claims": claims}}},
    }
    p = plan(Inputs(yamlio.dump(values).encode(), "values.yaml"))
    warned = sorted(x.pointer for x in p.problems if "has no effect" in x.message and x.pointer.endswith("/claims"))
    assert warned == ["/driver/resources/claims", "/nfd/worker/resources/claims", "/nodePools/0/driver/resources/claims", "/validator/resources/claims"]
    assert p.base is not None
    for items in objects(p.base).values():
        for obj in items:
            spec = (obj.get("spec") or {}).get("template", {}).get("spec") or {}
            if "resourceClaims" in spec:
                continue  # the DRA operands' own claims
            for c in [*spec.get("initContainers", []), *spec.get("containers", [])]:
                assert "claims" not in (c.get("resources") or {}), (obj["metadata"]["name"], c["name"])
    assert ctr(pod(ds(p.base, "driver")), "nvidia-driver-ctr")["resources"] == CPU1


@pytest.mark.parametrize("release", ["v26.3", "v26.7"])
def test_mps_mounts_init_takes_device_plugin_resources_from_v26_7(release: str) -> None:
    """TransformMPSControlDaemon: applyResourceRequirements on mps-control-daemon-mounts (v26.7)."""
    p = pod(ds(released(release, {"devicePlugin": {"resources": CPU1}}), "mps-control-daemon"))
    assert ctr(p, "mps-control-daemon-mounts").get("resources") == (CPU1 if release == "v26.7" else None)


@pytest.mark.parametrize("release", ["v26.3", "v26.7"])
@pytest.mark.parametrize(("values", "component", "inits"), [
    ({}, "gpu-feature-discovery", ["toolkit-validation"]),
    ({}, "operator-validator", ["driver-validation", "toolkit-validation", "cuda-validation", "plugin-validation"]),
    ({}, "container-toolkit", ["driver-validation"]),
    (SANDBOX, "vgpu-device-manager", ["vgpu-manager-validation"]),
    (SANDBOX, "sandbox-device-plugin", ["vfio-pci-validation", "vgpu-devices-validation"]),
    (SANDBOX, "sandbox-validator", ["vfio-pci-validation", "vgpu-manager-validation", "vgpu-devices-validation"]),
    (KATA, "kata-sandbox-device-plugin", ["vfio-pci-validation"]),
])
def test_validation_inits_take_validator_resources_from_v26_7(release: str, values: dict[str, Any], component: str, inits: list[str]) -> None:
    """transformValidationInitContainer and TransformValidatorComponent: every `*validation`
    init container gets validator.resources from v26.7 (commit "Apply resources to managed init
    containers"); v26.3 and v25.10 leave them without."""
    p = pod(ds(released(release, deep_merge(values, {"validator": {"resources": CPU1}})), component))
    for name in inits:
        assert ctr(p, name).get("resources") == (CPU1 if release == "v26.7" else None), name


@pytest.mark.parametrize("release", ["v26.3", "v26.7"])
def test_vfio_manager_driver_manager_init_takes_vfio_resources_from_v26_7(release: str) -> None:
    """TransformVFIOManager: transformDriverManagerInitContainer(..., VFIOManager.Resources) (v26.7)."""
    values = deep_merge(SANDBOX, {"vfioManager": {"enabled": True, "resources": CPU1}})
    p = pod(ds(released(release, values), "vfio-manager"))
    assert ctr(p, "nvidia-vfio-manager")["resources"] == CPU1
    assert ctr(p, "k8s-driver-manager").get("resources") == (CPU1 if release == "v26.7" else None)


@pytest.mark.parametrize("release", ["v25.10", "v26.3", "v26.7"])
def test_driver_manager_init_takes_driver_resources_from_v26_7(release: str) -> None:
    """manifests/state-driver/0500_daemonset.yaml: `resources: {{ .Driver.Spec.Resources }}` on
    k8s-driver-manager from v26.7 (v26.3 and before: the driver's containers only)."""
    p = pod(ds(released(release, {"driver": {"resources": CPU1}}), "driver"))
    assert ctr(p, "nvidia-driver-ctr")["resources"] == CPU1
    assert ctr(p, "k8s-driver-manager").get("resources") == (CPU1 if release == "v26.7" else None)


def test_sandbox_validator_main_takes_validator_resources_and_env() -> None:
    """TransformSandboxValidator -> TransformValidatorShared: validator.resources on every
    container, validator.env on the main one, as on the operator validator."""
    values = deep_merge(SANDBOX, {"validator": {"resources": CPU1, "env": [{"name": "EXTRA", "value": "1"}]}})
    main = ctr(pod(ds(model(values), "sandbox-validator")), "nvidia-sandbox-validator")
    assert main["resources"] == CPU1
    assert env(main)["EXTRA"] == "1"


def test_sandbox_validator_reads_the_vgpu_managers_root_whatever_the_install_dir() -> None:
    """transformForDriverInstallDir rewrites volumes named `driver-install-dir`; the sandbox
    validator's `driver-install-path` stays on /run/nvidia/driver, where the vGPU manager's
    container writes the driver its vgpu-manager-validation chroots into."""
    values = deep_merge(SANDBOX, {"hostPaths": {"driverInstallDir": "/opt/nvidia/driver"}})
    volumes = {v["name"]: v for v in pod(ds(model(values), "sandbox-validator"))["volumes"]}
    assert volumes["driver-install-path"]["hostPath"]["path"] == "/run/nvidia/driver"


# -- env --------------------------------------------------------------------------------------


@pytest.mark.parametrize("component", ["gpu-feature-discovery", "device-plugin", "mps-control-daemon", "dcgm-exporter", "mig-manager"])
def test_validator_toolkit_env_reaches_every_toolkit_wait(component: str) -> None:
    """transformValidationInitContainer: validator.toolkit.env is set on the toolkit-validation
    init container of every operand that waits for the toolkit, not only the validator's."""
    p = pod(ds(model({"validator": {"toolkit": {"env": [{"name": "HTTPS_PROXY", "value": "http://proxy:3128"}]}}}), component))
    assert env(ctr(p, "toolkit-validation")) == {"HTTPS_PROXY": "http://proxy:3128"}
    assert "env" not in ctr(pod(ds(model({}), component)), "toolkit-validation")


# -- applyCommonDaemonsetConfig -----------------------------------------------------------------


def test_empty_tolerations_and_priority_class_keep_the_assets_with_a_warning() -> None:
    """applyCommonDaemonsetConfig sets tolerations only from a non-empty daemonsets.tolerations
    and the priority class only from a non-empty name: every operand pod keeps its asset's
    (nvidia.com/gpu Exists NoSchedule, system-node-critical). Rendering none would leave the
    pods off every GPU node tainted nvidia.com/gpu; `validate` warns that the empty key has no effect."""
    from renderer import yamlio
    from renderer.inputs import Inputs
    from renderer.pipeline import plan
    from renderer.render import objects

    values = {"nodePools": [UBUNTU], "daemonsets": {"tolerations": [], "priorityClassName": ""}}
    p = plan(Inputs(yamlio.dump(values).encode(), "values.yaml"))
    found = [(x.pointer, x.severity.name) for x in p.problems if x.code == "operator-fallback"]
    assert found == [("/daemonsets/tolerations", "WARNING"), ("/daemonsets/priorityClassName", "WARNING")]
    assert p.base is not None
    for component, items in objects(p.base).items():
        for obj in items:
            if obj["kind"] == "DaemonSet" and component != "nfd":  # NFD's are the NFD chart's
                spec = obj["spec"]["template"]["spec"]
                assert spec["tolerations"] == [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}], obj["metadata"]["name"]
                assert spec["priorityClassName"] == "system-node-critical", obj["metadata"]["name"]
    quiet = plan(Inputs(yamlio.dump({"nodePools": [UBUNTU], "daemonsets": {"tolerations": [{"key": "x", "operator": "Exists"}]}}).encode(), "values.yaml"))
    assert not [x for x in quiet.problems if x.code == "operator-fallback"]
    assert quiet.base is not None
    assert pod(ds(quiet.base, "device-plugin"))["tolerations"] == [{"key": "x", "operator": "Exists"}]


# -- env the operator sets after the user's ---------------------------------------------------


def test_gfd_mig_env_follows_mig_strategy_over_gfd_env() -> None:
    """TransformGPUDiscoveryPlugin applies gfd.env, then applyMIGConfiguration: MIG_STRATEGY
    and NVIDIA_MIG_MONITOR_DEVICES come from mig.strategy whatever gfd.env says; other names
    stay the user's."""
    written = [{"name": "MIG_STRATEGY", "value": "none"}, {"name": "GFD_SLEEP_INTERVAL", "value": "10s"}]
    e = env(ctr(pod(ds(model({"mig": {"strategy": "mixed"}, "gfd": {"env": written}}), "gpu-feature-discovery")), "gpu-feature-discovery"))
    assert e["MIG_STRATEGY"] == "mixed" and e["NVIDIA_MIG_MONITOR_DEVICES"] == "all"
    assert e["GFD_SLEEP_INTERVAL"] == "10s"


def test_device_plugin_env_wins_over_config_file_but_gfds_does_not() -> None:
    """TransformDevicePlugin applies devicePlugin.env after handleDevicePluginConfig (the user's
    CONFIG_FILE stays); TransformGPUDiscoveryPlugin applies gfd.env before it (CONFIG_FILE is
    /config/config.yaml)."""
    own = [{"name": "CONFIG_FILE", "value": "/config/mine.yaml"}]
    m = model({"devicePlugin": {"config": {"name": "sharing", "default": "any"}, "env": own}, "gfd": {"env": own}})
    assert env(ctr(pod(ds(m, "device-plugin")), "nvidia-device-plugin"))["CONFIG_FILE"] == "/config/mine.yaml"
    assert env(ctr(pod(ds(m, "gpu-feature-discovery")), "gpu-feature-discovery"))["CONFIG_FILE"] == "/config/config.yaml"
    plain = model({"devicePlugin": {"config": {"name": "sharing", "default": "any"}}})
    assert env(ctr(pod(ds(plain, "device-plugin")), "nvidia-device-plugin"))["CONFIG_FILE"] == "/config/config.yaml"


def test_vgpu_device_manager_default_config_over_its_env() -> None:
    """TransformVGPUDeviceManager sets DEFAULT_VGPU_CONFIG from vgpuDeviceManager.config.default
    (else `default`) after vgpuDeviceManager.env."""
    values = deep_merge(SANDBOX, {"vgpuDeviceManager": {"config": {"default": "A100-4C"}, "env": [{"name": "DEFAULT_VGPU_CONFIG", "value": "mine"}, {"name": "X", "value": "1"}]}})
    e = env(ctr(pod(ds(model(values), "vgpu-device-manager")), "nvidia-vgpu-device-manager"))
    assert e["DEFAULT_VGPU_CONFIG"] == "A100-4C" and e["X"] == "1"


# -- TransformDCGMExporter ----------------------------------------------------------------------


@pytest.mark.parametrize(("values", "warned"), [
    ({}, True),
    ({"cluster": {"operatorRelease": "v25.10"}, "dcgmExporter": {"hostNetwork": True}}, True),  # no such key in v25.10's CRD
    ({"dcgmExporter": {"hostNetwork": True}}, False),
    ({"dcgm": {"enabled": True}}, False),
])
def test_dcgm_exporter_on_localhost_takes_the_host_network_with_a_warning(values: dict[str, Any], warned: bool) -> None:
    """TransformDCGMExporter turns on hostNetwork for a DCGM_REMOTE_HOSTENGINE_INFO of
    localhost only as read from the asset's env, before dcgmExporter.env is applied: a user's
    localhost never reaches it. gpu-render reads the user's (the exporter could not reach the
    host's DCGM otherwise) and warns where the operator's pod would differ (docs/fidelity.md)."""
    from renderer import yamlio
    from renderer.inputs import Inputs
    from renderer.pipeline import plan

    written = deep_merge({"nodePools": [UBUNTU], "dcgmExporter": {"env": [{"name": "DCGM_REMOTE_HOSTENGINE_INFO", "value": "localhost:5555"}]}}, values)
    p = plan(Inputs(yamlio.dump(written).encode(), "values.yaml"))
    found = [(x.pointer, x.severity.name) for x in p.problems if x.code == "dcgm-localhost"]
    assert found == ([("/dcgmExporter/env/0/value", "WARNING")] if warned else [])
    assert p.base is not None
    spec = pod(ds(p.base, "dcgm-exporter"))
    assert spec.get("hostNetwork") is (None if values.get("dcgm") else True)


def test_daemonsets_annotations_win_over_the_exporters_own() -> None:
    """preProcessDaemonSet runs applyCommonDaemonsetMetadata after TransformDCGMExporter's
    addExtraAnnotations: on a key both set, daemonsets.annotations win; the others merge."""
    m = model({"daemonsets": {"annotations": {"shared": "fleet", "team": "gpu"}}, "dcgmExporter": {"annotations": {"shared": "exporter", "own": "x"}}})
    got = ds(m, "dcgm-exporter")["spec"]["template"]["metadata"]["annotations"]
    assert got == {"shared": "fleet", "own": "x", "team": "gpu"}


# -- gpuv1.ImagePath ----------------------------------------------------------------------------


@pytest.mark.parametrize(("values", "refused"), [
    ({"dcgm": {"enabled": True, "version": ""}}, "/dcgm/version"),
    ({"migManager": {"repository": ""}}, "/migManager/repository"),
    ({"devicePlugin": {"repository": "", "version": ""}}, None),  # the image alone: a whole reference
    ({"dcgm": {"version": ""}}, None),  # DCGM is off: no transform reads it
    ({"sandboxWorkloads": {"enabled": True}, "vfioManager": {"driverManager": {"image": ""}}}, "/vfioManager/driverManager/image"),
    ({"validator": {"version": ""}}, None),  # the operator's chart fills the release's version
])
def test_partial_image_settings_are_refused_as_the_operator_refuses_them(values: dict[str, Any], refused: str | None) -> None:
    """ImagePath (api/nvidia/v1) takes an image alone as a whole reference, else needs all of
    repository, image and version ("invalid image specification"): the transform fails and the
    operand is never deployed. gpu-render refuses what the operator would not deploy."""
    from renderer import yamlio
    from renderer.inputs import Inputs
    from renderer.pipeline import plan

    p = plan(Inputs(yamlio.dump(deep_merge({"nodePools": [UBUNTU]}, values)).encode(), "values.yaml"))
    found = [(x.pointer, x.severity.name) for x in p.problems if x.code == "image-incomplete"]
    assert found == ([(refused, "ERROR")] if refused else [])


def test_empty_validator_version_is_the_releases() -> None:
    """The operator chart's ClusterPolicy template writes `validator.version | default
    .Chart.AppVersion` (and the node status exporter's alike): an empty version is the operator's own tag."""
    m = model({"validator": {"version": ""}, "nodeStatusExporter": {"enabled": True, "version": ""}})
    assert ctr(pod(ds(m, "operator-validator")), "nvidia-operator-validator")["image"] == "nvcr.io/nvidia/gpu-operator:v26.7.0"
    assert ctr(pod(ds(m, "node-status-exporter")), "nvidia-node-status-exporter")["image"] == "nvcr.io/nvidia/gpu-operator:v26.7.0"
