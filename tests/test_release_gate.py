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
from renderer.releasegate import ASSET_VALUE_FROM, RELEASES, has
from renderer.render import objects
from renderer.resolve import resolve

POOL = "nodePools:\n  - name: a\n    os: {id: ubuntu, version: '22.04'}\n"
NRI = "cdi:\n  enabled: true\n  nriPluginEnabled: true\n"


def problems(values: str) -> list[str]:
    return [p.format() for p in plan(Inputs(values.encode(), "values.yaml")).problems]


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


# (env pointer -> component, container kind, container name) the table's names are checked against
CONTAINERS = {
    "/toolkit/env": ("container-toolkit", "containers", "nvidia-container-toolkit-ctr"),
    "/gfd/env": ("gpu-feature-discovery", "containers", "gpu-feature-discovery"),
    "/dcgmExporter/env": ("dcgm-exporter", "containers", "nvidia-dcgm-exporter"),
    "/migManager/env": ("mig-manager", "containers", "nvidia-mig-manager"),
    "/validator/cuda/env": ("operator-validator", "initContainers", "cuda-validation"),
    "/validator/plugin/env": ("operator-validator", "initContainers", "plugin-validation"),
    "/validator/driver/env": ("operator-validator", "initContainers", "driver-validation"),
}


@pytest.mark.parametrize("name", RELEASES)
def test_the_table_is_what_the_render_sets_by_value_from(name: str) -> None:
    assert set(CONTAINERS) == set(ASSET_VALUE_FROM)
    values = _values(name, None)
    values["migManager"] = {"enabled": True}
    objs = objects(resolve(values, "fleet"))
    for pointer, (component, kind, container) in CONTAINERS.items():
        (ds,) = [o for o in objs[component] if o["kind"] == "DaemonSet"]
        (ctr,) = [c for c in ds["spec"]["template"]["spec"][kind] if c["name"] == container]
        rendered = {e["name"] for e in ctr.get("env") or [] if "valueFrom" in e}
        assert rendered == {n for n, since in ASSET_VALUE_FROM[pointer].items() if has(name, since)}, (name, pointer)


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
    found = [p.format() for p in plan(Inputs((POOL + NRI).encode(), "values.yaml", (overlay,))).problems if "/gitops/" not in p.pointer]
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


def test_validator_plugin_with_the_device_plugin_is_refused() -> None:
    found = problems(POOL + "validator:\n  plugin:\n    env:\n      - {name: NODE_NAME, value: x}\n")
    assert found == [f"values.yaml:7:27: /validator/plugin/env/0/value: {why('validator.plugin.env', 'NODE_NAME')}"]
