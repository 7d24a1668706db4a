"""Values the operator v26.7 refuses, ignores or makes something else of, with the source it
was read from (controllers/state_manager.go, controllers/object_controls.go, assets/)."""

from __future__ import annotations

from typing import Any

from renderer import yamlio
from renderer.inputs import Inputs
from renderer.pipeline import plan
from renderer.render import objects
from renderer.resolve import resolve

UBUNTU = {"name": "ubuntu2204", "os": {"id": "ubuntu", "version": "22.04"}}


def _problems(values: dict[str, Any]) -> list[tuple[str, str, str]]:
    """(severity, pointer, code) of the policy ``values`` (with one Ubuntu pool unless given)."""
    text = yamlio.dump({"nodePools": [UBUNTU], **values})
    return sorted((p.severity.value, p.pointer, p.code) for p in plan(Inputs(text.encode(), "values.yaml")).problems if p.code)


def test_nri_without_cdi_or_the_toolkit_is_refused() -> None:
    """validateClusterPolicySpec: no NRI plugin with CDI off (v26.3 on) or the toolkit off (v26.7)."""
    assert ("error", "/cdi/nriPluginEnabled", "nri-needs") in _problems({"cdi": {"enabled": False, "nriPluginEnabled": True}})
    assert ("error", "/cdi/nriPluginEnabled", "nri-needs") in _problems({"cdi": {"nriPluginEnabled": True}, "toolkit": {"enabled": False}})
    older = {"cluster": {"operatorRelease": "v26.3"}, "cdi": {"nriPluginEnabled": True}, "toolkit": {"enabled": False}}
    assert not [p for p in _problems(older) if p[2] == "nri-needs"]  # v26.3 checks CDI only
    assert not [p for p in _problems({"cdi": {"nriPluginEnabled": True}}) if p[2] == "nri-needs"]


def test_args_the_operator_does_not_pass_are_warned_about() -> None:
    found = _problems({"devicePlugin": {"args": ["--fail-on-init-error=false"]}, "toolkit": {"args": ["--x"]}})
    assert ("warning", "/devicePlugin/args", "device-plugin-args") in found
    assert ("warning", "/toolkit/args", "toolkit-args") in found
    assert not [p for p in _problems({}) if p[2] in ("device-plugin-args", "toolkit-args")]


def test_repository_and_certificate_config_maps_need_an_os_the_operator_knows() -> None:
    """getRepoConfigPath / getCertConfigPath fail for an OS outside their maps: no driver DaemonSet."""
    amzn = {"name": "al2023", "os": {"id": "amzn", "version": "2023"}}
    config = {"repoConfig": {"configMapName": "repo"}, "certConfig": {"name": "certs"}}
    found = _problems({"nodePools": [amzn, UBUNTU], "driver": config})
    assert [p for p in found if p[2] == "pool-config-dir"] == [
        ("error", "/driver/certConfig", "pool-config-dir"),
        ("error", "/driver/repoConfig", "pool-config-dir"),
    ]
    precompiled = {**amzn, "kernel": "6.1.0-1", "driver": {"usePrecompiled": True, "version": "595"}}
    assert not [p for p in _problems({"nodePools": [precompiled], "driver": config}) if p[2] == "pool-config-dir"]  # takes neither


def test_certificate_and_module_config_maps_without_keys_are_warned_about() -> None:
    """The operator mounts each key of the ConfigMap it reads from the API; without declared
    keys gpu-render mounts none (a repository ConfigMap without keys is mounted whole)."""
    pool = {**UBUNTU, "driver": {"kernelModuleConfig": {"name": "kmod"}}}
    found = _problems({"nodePools": [pool], "driver": {"certConfig": {"name": "certs"}, "repoConfig": {"configMapName": "repos"}}, "vgpuManager": {"kernelModuleConfig": {"name": "vkmod"}}})
    assert [p for p in found if p[2] == "config-map-keys"] == [
        ("warning", "/driver/certConfig/name", "config-map-keys"),
        ("warning", "/nodePools/0/driver/kernelModuleConfig/name", "config-map-keys"),
        ("warning", "/vgpuManager/kernelModuleConfig/name", "config-map-keys"),
    ]
    declared = {"driver": {"certConfig": {"name": "certs", "keys": ["ca.crt"]}}}
    assert not [p for p in _problems(declared) if p[2] == "config-map-keys"]


def test_the_firmware_folder_is_the_assets_whatever_the_install_dir() -> None:
    """nv-firmware is /run/nvidia/driver/lib/firmware in the driver and vGPU manager assets;
    transformForDriverInstallDir rewrites only a driver-install-dir volume, which they lack."""
    values = {"nodePools": [UBUNTU], "hostPaths": {"driverInstallDir": "/home/kubernetes/bin/nvidia"},
              "sandboxWorkloads": {"enabled": True}, "vgpuManager": {"enabled": True}}
    objs = objects(resolve(values, "fleet"))
    paths = {
        o["metadata"]["name"]: v["hostPath"]["path"]
        for component in ("driver", "vgpu-manager")
        for o in objs.get(component, [])
        if o["kind"] == "DaemonSet"
        for v in o["spec"]["template"]["spec"]["volumes"]
        if v["name"] == "nv-firmware"
    }
    assert len(paths) == 2 and set(paths.values()) == {"/run/nvidia/driver/lib/firmware"}, paths


def test_a_host_root_in_env_is_warned_about_with_a_root_fs() -> None:
    """transformForHostRoot runs before the operand's env is applied, so a written HOST_ROOT
    wins in the operator; here hostPaths.rootFS does (one env block in the chart)."""
    pool = {**UBUNTU, "driver": {"env": [{"name": "HOST_ROOT", "value": "/y"}]}}
    values = {"nodePools": [pool], "devicePlugin": {"env": [{"name": "A", "value": "1"}, {"name": "HOST_ROOT", "value": "/x"}]}}
    assert not [p for p in _problems(values) if p[2] == "host-root-env"]  # rootFS at /: both keep it
    rooted = {**values, "hostPaths": {"rootFS": "/host-root"}, "operator": {"env": [{"name": "HOST_ROOT", "value": "/z"}]}}
    found = _problems(rooted)
    assert [p for p in found if p[2] == "host-root-env"] == [  # not operator.env: nothing renders it
        ("warning", "/devicePlugin/env/1", "host-root-env"),
        ("warning", "/nodePools/0/driver/env/0", "host-root-env"),
    ]
    objs = objects(resolve(rooted, "fleet"))  # what the warning says: rootFS over the written value
    for component, written in (("device-plugin", "/x"), ("driver", "/y")):
        pod = next(o for o in objs[component] if o["kind"] == "DaemonSet")["spec"]["template"]["spec"]
        values_of = {e.get("value") for c in pod["containers"] for e in c.get("env", []) if e["name"] == "HOST_ROOT"}
        assert "/host-root" in values_of and written not in values_of, (component, values_of)


def test_an_nfd_image_older_than_the_rendered_flags_is_warned_about() -> None:
    """nfd-worker before v0.19 has no -owner-refs (v0.18: -no-owner-refs only; the v26.3 chart's
    NFD is v0.18.3), before v0.18 no -port (v0.17: -metrics, -grpc-health) and no /healthz: such
    an nfd.version (an older chart's NFD image tag, which the importer keeps) starts pods that exit."""
    for version, warned in (("v0.14.2", True), ("v0.17.3", True), ("v0.18.3", True), ("v0.19.0", False), ("v0.19.0-rc.1", False), ("sha256:" + "0" * 64, False),
                           # one mirror for every image, the image's name in the tag
                           ("node-feature-discovery-v0.16.6", True), ("nfd-0.17.1", True), ("node-feature-discovery-v0.19.0", False)):
        found = [p for p in _problems({"nodePools": [UBUNTU], "nfd": {"version": version}}) if p[2] == "nfd-version"]
        assert found == ([("warning", "/nfd/version", "nfd-version")] if warned else []), version
    assert not [p for p in _problems({"nodePools": [UBUNTU], "nfd": {"enabled": False, "version": "v0.14.2"}}) if p[2] == "nfd-version"]


def test_an_exporter_config_to_create_without_data_is_warned_about() -> None:
    """dcgmExporter.config.create with a name and no data: the chart creates no ConfigMap and the
    operator mounts the name (so does gpu-render): the exporter's pods wait for it; the device
    plugin's same case warns too (plugin-config-data)."""
    config = {"create": True, "name": "dcgm-metrics"}
    found = _problems({"nodePools": [UBUNTU], "dcgmExporter": {"config": config}})
    assert [p for p in found if p[2] == "exporter-config-data"] == [("warning", "/dcgmExporter/config/create", "exporter-config-data")]
    for quiet in ({**config, "data": "DCGM_FI_DEV_GPU_TEMP, gauge, t\n"}, {"name": "dcgm-metrics"}):
        assert not [p for p in _problems({"nodePools": [UBUNTU], "dcgmExporter": {"config": quiet}}) if p[2] == "exporter-config-data"]


def test_a_drop_in_host_path_in_the_toolkit_env_is_warned_about() -> None:
    """transformRuntimeConfigAndSocketMounts sets RUNTIME_DROP_IN_CONFIG_HOST_PATH to the file
    RUNTIME_DROP_IN_CONFIG names (or the runtime's default) over a written value (k8s-snap's
    file sets it beside a default RUNTIME_DROP_IN_CONFIG)."""
    env = [{"name": "RUNTIME_DROP_IN_CONFIG_HOST_PATH", "value": "/var/lib/k8s-containerd/conf.d/99-nvidia.toml"}]
    found = _problems({"nodePools": [UBUNTU], "toolkit": {"env": env}})
    assert [p for p in found if p[2] == "drop-in-host-path"] == [("warning", "/toolkit/env/0", "drop-in-host-path")]
    same = [{"name": "RUNTIME_DROP_IN_CONFIG", "value": env[0]["value"]}, env[0]]
    assert not [p for p in _problems({"nodePools": [UBUNTU], "toolkit": {"env": same}}) if p[2] == "drop-in-host-path"]
    docker = {"nodePools": [UBUNTU], "cluster": {"containerRuntime": "docker"}, "toolkit": {"env": env}}
    assert not [p for p in _problems(docker) if p[2] == "drop-in-host-path"]  # no drop-in on Docker
    # a pool's own runtime or runtime files, or NRI mode (v26.7 sets no drop-in): the value may stand
    for values in (
        {"nodePools": [{**UBUNTU, "runtime": "crio"}], "toolkit": {"env": env}},
        {"nodePools": [{**UBUNTU, "runtimeConfig": {"dropInConfig": "/x/99.toml"}}], "toolkit": {"env": env}},
        {"nodePools": [UBUNTU], "cdi": {"enabled": True, "nriPluginEnabled": True}, "toolkit": {"env": env}},
    ):
        assert not [p for p in _problems(values) if p[2] == "drop-in-host-path"], values


def test_config_data_without_create_is_warned_about() -> None:
    """The chart creates the device plugin's and the exporter's ConfigMap from data only with
    create: true; data written without it is never used (an Akamai LKE file writes both so)."""
    values = {"nodePools": [UBUNTU], "devicePlugin": {"config": {"name": "tsc", "data": {"any": "version: v1\n"}}}, "dcgmExporter": {"config": {"name": "m", "data": "x, gauge, y\n"}}}
    assert [p for p in _problems(values) if p[2] == "config-data-unused"] == [
        ("warning", "/dcgmExporter/config/data", "config-data-unused"),
        ("warning", "/devicePlugin/config/data", "config-data-unused"),
    ]
    values["devicePlugin"]["config"]["create"] = True
    values["dcgmExporter"]["config"]["create"] = True
    assert not [p for p in _problems(values) if p[2] == "config-data-unused"]


def test_the_dra_plugin_keeps_its_own_host_root_whatever_the_root_fs() -> None:
    """The operator's state-dra-driver manifest sets HOST_ROOT=/host (where it mounts host-root)
    in the gpus plugin, and no ClusterPolicy transform rewrites it: hostPaths.rootFS moves only
    the volume."""
    values = {"nodePools": [{**UBUNTU, "resourceAllocation": "dra"}], "hostPaths": {"rootFS": "/hr"}}
    pod = next(o for o in objects(resolve(values, "fleet"))["dra-driver"] if o["kind"] == "DaemonSet")["spec"]["template"]["spec"]
    gpus = next(c for c in pod["containers"] if c["name"] == "gpus")
    assert [e["value"] for e in gpus["env"] if e["name"] == "HOST_ROOT"] == ["/host"]
    assert {"name": "host-root", "hostPath": {"path": "/hr"}} in pod["volumes"]


def test_a_vgpu_host_pool_beside_the_sandbox_vgpu_manager_is_refused() -> None:
    """Both render nvidia-vgpu-manager-daemonset-<pool> on the pool's nodes: two vGPU managers,
    one object id (kubectl kustomize refused the base that gpu-render wrote)."""
    host = {**UBUNTU, "driver": {"driverType": "vgpu-host-manager", "repository": "registry.example.com/nvidia", "version": "550.54.16"}}
    sandbox = {"sandboxWorkloads": {"enabled": True}, "vgpuManager": {"enabled": True, "repository": "registry.example.com/nvidia", "version": "550.54.16"}}
    found = [p for p in _problems({**sandbox, "nodePools": [host]}) if p[2] == "vgpu-host-pool"]
    assert found == [("error", "/nodePools/0/driver/driverType", "vgpu-host-pool")]
    assert not [p for p in _problems({**sandbox, "vgpuManager": {**sandbox["vgpuManager"], "enabled": False}, "nodePools": [host]}) if p[2] == "vgpu-host-pool"]
