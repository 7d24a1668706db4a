"""``env[].valueFrom``: rendered as written (a gpu-render extension), warned about at the key
with what the operator does instead (its EnvVar has only name and value: the CRD prunes
valueFrom and the operator sets the variable to an empty string)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from renderer.envfrom import checked_pointers, env_pointers
from renderer.inputs import ClusterInput, Inputs
from renderer.pipeline import plan
from renderer.render import objects
from renderer.resolve import resolve

POOL = "nodePools:\n  - name: a\n    os: {id: ubuntu, version: '22.04'}\n"
SECRET = "{secretKeyRef: {name: proxy, key: url}}"


def warned(values: str, overlay: str | None = None) -> list[str]:
    clusters = () if overlay is None else (ClusterInput("prod", overlay.encode(), "overlays/prod/values.yaml"),)
    result = plan(Inputs(values.encode(), "values.yaml", clusters))
    return [p.format() for p in result.problems]


def why(dotted: str, name: str, owner: str = "ClusterPolicy") -> str:
    return (
        f"warning: {dotted}: {name}: valueFrom is rendered as written, but the operator's {owner} EnvVar has only name and value: "
        f"its CRD prunes valueFrom and the operator sets {name} to an empty string "
        "(a gpu-render extension; write value: to render what the operator renders)"
    )


CASES = [
    # (id, values, expected formatted problems)
    ("toolkit.env", POOL + f"toolkit:\n  env:\n    - name: HTTPS_PROXY\n      valueFrom: {SECRET}\n",
     [f"values.yaml:7:7: /toolkit/env/0/valueFrom: {why('toolkit.env', 'HTTPS_PROXY')}"]),
    ("driver.env", POOL + f"driver:\n  env:\n    - {{name: A, value: '1'}}\n    - name: HTTPS_PROXY\n      valueFrom: {SECRET}\n",
     [f"values.yaml:8:7: /driver/env/1/valueFrom: {why('driver.env', 'HTTPS_PROXY')}"]),
    ("pool-driver.env", POOL + f"    driver:\n      env:\n        - name: HTTPS_PROXY\n          valueFrom: {SECRET}\n",
     [f"values.yaml:7:11: /nodePools/0/driver/env/0/valueFrom: {why('nodePools.0.driver.env', 'HTTPS_PROXY', 'NVIDIADriver')}"]),
    ("devicePlugin.env", POOL + "devicePlugin:\n  env:\n    - name: NODE\n      valueFrom: {fieldRef: {fieldPath: spec.nodeName}}\n",
     [f"values.yaml:7:7: /devicePlugin/env/0/valueFrom: {why('devicePlugin.env', 'NODE')}"]),
    ("validator.plugin.env", POOL + "validator:\n  plugin:\n    env:\n      - name: NODE\n        valueFrom: {fieldRef: {fieldPath: spec.nodeName}}\n",
     [f"values.yaml:8:9: /validator/plugin/env/0/valueFrom: {why('validator.plugin.env', 'NODE')}"]),
    ("value-only-is-quiet", POOL + "toolkit:\n  env:\n    - {name: A, value: '1'}\n", []),
    # the NFD chart writes worker.extraEnvs into its pod as they are: no operator CRD to prune them
    ("nfd.worker.extraEnvs", POOL + "nfd:\n  worker:\n    extraEnvs:\n      - name: NODE\n        valueFrom: {fieldRef: {fieldPath: spec.nodeName}}\n", []),
    # operator.env is the operator's Deployment (it takes valueFrom) and renders nothing here:
    # only the no-effect warning
    ("operator.env", POOL + "operator:\n  env:\n    - name: X\n      valueFrom: {fieldRef: {fieldPath: spec.nodeName}}\n",
     ["values.yaml:4:1: /operator: warning: 'operator' has no effect: gpu-render deploys no operator controller; its Deployment settings have no effect"]),
]


@pytest.mark.parametrize(("values", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_value_from_warns_at_the_key(values: str, expected: list[str]) -> None:
    assert warned(values) == expected


def test_an_overlay_value_from_warns_at_the_overlay_line() -> None:
    problems = warned(POOL, f"toolkit:\n  env:\n    - name: HTTPS_PROXY\n      valueFrom: {SECRET}\n")
    assert [p for p in problems if "/gitops/" not in p] == [f"overlays/prod/values.yaml:4:7: /toolkit/env/0/valueFrom: {why('toolkit.env', 'HTTPS_PROXY')}"]


def test_every_env_location_of_the_schema_is_checked() -> None:
    pointers = env_pointers()
    assert {"/toolkit/env", "/driver/env", "/devicePlugin/env", "/nodePools/*/driver/env", "/nodePools/*/driver/manager/env", "/validator/cuda/env"} <= set(pointers)
    assert len(pointers) == 34
    assert "/nfd/worker/extraEnvs" in pointers and "/nfd/worker/extraEnvs" not in checked_pointers()


def test_the_value_from_is_rendered_as_written() -> None:
    ref: dict[str, Any] = {"secretKeyRef": {"name": "proxy", "key": "url"}}
    values = {
        "nodePools": [{"name": "a", "os": {"id": "ubuntu", "version": "22.04"}}],
        "toolkit": {"env": [{"name": "HTTPS_PROXY", "valueFrom": ref}]},
        "devicePlugin": {"env": [{"name": "HTTPS_PROXY", "valueFrom": ref}]},
    }
    objs = objects(resolve(values, "fleet"))
    for component, container in (("container-toolkit", "nvidia-container-toolkit-ctr"), ("device-plugin", "nvidia-device-plugin")):
        (ds,) = [o for o in objs[component] if o["kind"] == "DaemonSet"]
        (ctr,) = [c for c in ds["spec"]["template"]["spec"]["containers"] if c["name"] == container]
        assert {"name": "HTTPS_PROXY", "valueFrom": ref} in ctr["env"]


def test_cli_validate_warns_and_exits_0(tmp_path, run_cli, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.chdir(tmp_path)
    (tmp_path / "values.yaml").write_text(POOL + f"toolkit:\n  env:\n    - name: HTTPS_PROXY\n      valueFrom: {SECRET}\n")
    result = run_cli("validate", "--format", "json")
    assert result.exit_code == 0
    report = json.loads(result.stdout)
    (problem,) = report["problems"]
    assert (problem["line"], problem["column"], problem["pointer"]) == (7, 7, "/toolkit/env/0/valueFrom")
    assert (problem["code"], problem["severity"]) == ("env-value-from", "warning")
    assert "sets HTTPS_PROXY to an empty string" in problem["message"]
