"""A ConfigMap named as the operator's default one: the operator's ``GetConfigMapName`` counts
the default name as no custom ConfigMap, so ``createConfigMap`` creates (and updates back) the
default ConfigMap, while the pods mount that name. gpu-render rendered no ConfigMap for any
name, so such a pod mounted a ConfigMap nothing created (renderer/resolve.py,
``_default_config_names``); the chart refuses the names it would render otherwise."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

from renderer import yamlio
from renderer.emit.helm import normalise, static_objects
from renderer.inputs import Inputs
from renderer.pipeline import plan
from renderer.render import objects, render
from renderer.resolve import default_mig_profiles, resolve
from tests.conftest import run_tool

POOL = {"name": "p1", "os": {"id": "ubuntu", "version": "22.04"}}


def _kinds(values: dict[str, Any], component: str) -> dict[str, Any]:
    objs = objects(resolve({"nodePools": [POOL], **values}, "fleet"))
    return {f"{o['kind']}/{o['metadata']['name']}": o for o in objs.get(component, [])}


def _env(container: dict[str, Any]) -> dict[str, str]:
    return {e["name"]: e.get("value", "") for e in container.get("env", [])}


def test_the_mig_managers_default_names_render_the_default_config_maps() -> None:
    named = _kinds({"migManager": {"config": {"name": "default-mig-parted-config"}, "gpuClientsConfig": {"name": "default-gpu-clients"}}}, "mig-manager")
    plain = _kinds({}, "mig-manager")
    assert named["ConfigMap/default-mig-parted-config"]["data"] == plain["ConfigMap/default-mig-parted-config"]["data"] == default_mig_profiles()
    assert named["ConfigMap/default-gpu-clients"] == plain["ConfigMap/default-gpu-clients"]
    pod = named["DaemonSet/nvidia-mig-manager"]["spec"]["template"]["spec"]
    volume = next(v for v in pod["volumes"] if v["name"] == "mig-parted-config")["configMap"]
    # the pod takes the name as a custom config (hasCustomConfig: any name): CONFIG_FILE, no remap
    assert volume == {"name": "default-mig-parted-config"}
    assert _env(pod["containers"][0])["CONFIG_FILE"] == "/mig-parted-config/config.yaml"
    # data of its own is replaced by the default profiles, as the operator updates it back
    own = _kinds({"migManager": {"config": {"name": "default-mig-parted-config", "create": True, "data": {"config.yaml": "version: v1\n"}}}}, "mig-manager")
    assert own["ConfigMap/default-mig-parted-config"]["data"] == default_mig_profiles()


def test_the_vgpu_device_managers_default_name_renders_its_config_map() -> None:
    sandbox = {"sandboxWorkloads": {"enabled": True, "defaultWorkload": "vm-vgpu"}}
    named = _kinds({**sandbox, "vgpuDeviceManager": {"config": {"name": "default-vgpu-devices-config", "default": "A100-1-5C"}}}, "vgpu-device-manager")
    plain = _kinds({**sandbox, "vgpuDeviceManager": {"config": {"default": "A100-1-5C"}}}, "vgpu-device-manager")
    assert named == plain and "ConfigMap/default-vgpu-devices-config" in named


def test_validate_warns_where_the_default_profiles_replace_data() -> None:
    text = "nodePools:\n- name: p1\n  os: {id: ubuntu, version: '22.04'}\nmigManager:\n  config:\n    name: default-mig-parted-config\n    create: true\n    data:\n      config.yaml: 'version: v1'\n"
    found = [w for w in plan(Inputs(text.encode(), "values.yaml")).warnings if w.code == "default-config-name"]
    assert [(w.pointer, w.line) for w in found] == [("/migManager/config/data", 9)]
    same = text.replace("      config.yaml: 'version: v1'\n", "").replace("    data:\n", "")
    assert not [w for w in plan(Inputs(same.encode(), "values.yaml")).warnings if w.code == "default-config-name"]


def test_the_chart_reproduces_them_and_refuses_them_set(helm: str, write_tree: Callable[[dict[str, str]], Path]) -> None:
    """With the default names in the policy, `helm template` equals the static render; set by
    values on a chart built without them, helm would render no such ConfigMap: refused."""
    values = {"nodePools": [POOL], "migManager": {"config": {"name": "default-mig-parted-config"}, "gpuClientsConfig": {"name": "default-gpu-clients"}}}
    inputs = {name: Inputs(yamlio.dump(policy).encode(), "values.yaml") for name, policy in (("named", values), ("plain", {"nodePools": [POOL]}))}
    root = write_tree({f"{name}/{rel}": body for name, given in inputs.items() for rel, body in render(given).items()})
    chart, plain_chart = root / "named" / "chart" / "gpu-stack", root / "plain" / "chart" / "gpu-stack"
    p = plan(inputs["named"])
    assert p.base is not None
    got = [o for o in yamlio.load_all(run_tool([helm, "template", "gpu-stack", str(chart)])) if o]
    assert normalise(got) == normalise(static_objects(p.base))
    cases = [
        (chart, ("--set", "migManager.config.create=false"), "migManager.config.name is default-mig-parted-config"),
        (chart, ("--set-json", 'migManager.config.data={"config.yaml":"version: v1"}'), "migManager.config.name is default-mig-parted-config"),
        (plain_chart, ("--set", "migManager.config.name=default-mig-parted-config"), "migManager.config.name is default-mig-parted-config"),
        (plain_chart, ("--set", "migManager.gpuClientsConfig.name=default-gpu-clients"), "migManager.gpuClientsConfig.name is default-gpu-clients"),
        (plain_chart, ("--set", "sandboxWorkloads.enabled=true", "--set", "vgpuDeviceManager.config.name=default-vgpu-devices-config"), "vgpuDeviceManager.config.name is default-vgpu-devices-config"),
    ]
    for target, args, message in cases:
        proc = subprocess.run([helm, "template", "gpu-stack", str(target), *args], capture_output=True, text=True, timeout=120)
        assert proc.returncode != 0 and message in proc.stderr, (args, proc.stderr)
    run_tool([helm, "template", "gpu-stack", str(plain_chart), "--set", "migManager.config.name=mine"])
