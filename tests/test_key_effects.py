"""The key-effect contract: every leaf key of the policy schema (fleet level and the
``nodePools[]`` level; overlays take the same keys) either changes at least one rendered
object or output file when its value changes, or is listed in the one no-effect table
(:mod:`renderer.noeffect`), and then ``validate`` warns with the reason whenever it is set.

The test walks the schema, so a key added later without an effect fails here.
"""

from __future__ import annotations

import copy
import functools
import json
from typing import Any

import pytest

from renderer import noeffect, yamlio
from renderer.inputs import ClusterInput, Inputs
from renderer.pipeline import plan
from renderer.problems import UserError
from renderer.render import objects, render
from tests.keyeffects import changed_value, context, current, deep_set, leaves

FILE_LEVEL = ("gitops", "cluster")
"""Keys that may act on output files (Argo CD apps, chart metadata), not only on objects."""


USER_PATCH = "apiVersion: apps/v1\nkind: DaemonSet\nmetadata:\n  name: nvidia-device-plugin-daemonset\n  namespace: {namespace}\nspec:\n  template:\n    metadata:\n      labels:\n        team: ml\n"
"""A patch that trips no check, in the namespace of the values it is rendered with."""


REFUSED_BY_DESIGN = {
    "cluster.capabilities.openshift": "OpenShift is refused until it is rendered whole (docs/fidelity.md)",
    "nodePools.*.runtimeVersion": "a statement about the nodes: its effect is the DRA pool's CDI check at validate time",
    # chart keys with a place of their own here: left where the chart had them they would be
    # ignored, so they are refused there (chart-key-moved), the importer moves them
    "operator.defaultRuntime": "cluster.containerRuntime here",
    "operator.runtimeClass": "cluster.runtimeClass here",
    "platform.openshift": "cluster.capabilities.openshift here",
    # beside nvidiaDriverCRD.enabled, the chart deploys no driver of its values (driver-crd-external)
    "driver.nvidiaDriverCRD.deployDefaultCR": "false leaves the drivers to NVIDIADriver resources made beside the chart",
    # beside nvidiaDriverCRD.enabled, a default NVIDIADriver of another type (driver-crd-driver-type)
    "driver.nvidiaDriverCRD.driverType": "vgpu-host-manager makes the default NVIDIADriver a vGPU host manager of driver.*",
}
"""Keys whose changed value is refused at validate time on purpose (their effect is the refusal)."""


def _pointer(path: tuple[str, ...]) -> str:
    return "/" + "/".join("0" if p == "*" else p for p in path)


class Renders:
    def __init__(self) -> None:
        self.cache: dict[tuple[str, bool], tuple[str, Any]] = {}
        self.warned: dict[str, set[str]] = {}

    def __call__(self, values: dict[str, Any], files: bool) -> tuple[str, Any]:
        text = yamlio.dump(values)
        key = (text, files)
        if key not in self.cache:
            # file-level keys are rendered with one overlay cluster (its Argo CD Application) and
            # one hand-written patch that trips no check (gitops.userPatches.allow names it)
            overlay = (ClusterInput("c1", b"{}\n", "overlays/c1/values.yaml", patches=(("example.yaml", USER_PATCH.format(namespace=(values.get("cluster") or {}).get("namespace", "gpu-operator")).encode()),)),) if files else ()
            inputs = Inputs(text.encode(), "values.yaml", overlay)
            p = plan(inputs)
            errors = [x.format() for x in p.problems if x.severity.name == "ERROR"]
            self.warned[text] = {x.pointer for x in p.problems if x.severity.name == "WARNING"}
            if errors or p.base is None:
                self.cache[key] = ("refused", errors)
            elif files:
                try:
                    out = render(inputs)
                except UserError as exc:  # e.g. the patch no longer applies: the build refuses
                    self.cache[key] = ("refused", [str(exc)])
                else:
                    self.cache[key] = ("ok", {k: v for k, v in out.items() if not k.endswith("gpu-render.lock")})
            else:
                self.cache[key] = ("ok", json.dumps(objects(p.base), sort_keys=True, default=str))
        return self.cache[key]


@functools.cache
def classify() -> dict[str, list[str]]:
    renders = Renders()
    out: dict[str, list[str]] = {"rendered": [], "warned": [], "silent": [], "refused": [], "listed-but-rendered": [], "set-but-not-warned": []}
    for path, schema, ref in leaves():
        dotted = ".".join(path)
        base = context(path)
        new = changed_value(schema, ref, current(base, path))
        from tests.keyeffects import SAMPLES_BY_PATH

        new = copy.deepcopy(SAMPLES_BY_PATH.get(path, new))
        changed = copy.deepcopy(base)
        deep_set(changed, path, new)
        files = path[0] in FILE_LEVEL
        before, after = renders(base, files), renders(changed, files)
        assert before[0] == "ok", (dotted, before[1])
        listed = noeffect.reason(_pointer(path))
        if after[0] == "refused":
            out["refused"].append(f"{dotted}: {after[1][0]}")
        elif before != after:
            out["rendered"].append(dotted)
            if listed is not None and (noeffect.reason_in(_pointer(path), noeffect.COMPATIBILITY) or noeffect.reason_in(_pointer(path), noeffect.PENDING)):
                out["listed-but-rendered"].append(dotted)
        elif listed is not None:
            out["warned"].append(dotted)
            pointer = _pointer(path)
            if new not in ([], {}) and not any(pointer.startswith(w) for w in renders.warned[yamlio.dump(changed)]):
                out["set-but-not-warned"].append(dotted)
        else:
            out["silent"].append(dotted)
    return out


@pytest.mark.slow
def test_every_key_renders_or_warns() -> None:
    got = classify()
    assert got["silent"] == [], "keys with no effect that are not in renderer/noeffect.py:\n" + "\n".join(got["silent"])
    assert sorted(r.split(":")[0] for r in got["refused"]) == sorted(REFUSED_BY_DESIGN), got["refused"]
    assert got["listed-but-rendered"] == [], "listed in renderer/noeffect.py but they render:\n" + "\n".join(got["listed-but-rendered"])
    assert got["set-but-not-warned"] == [], got["set-but-not-warned"]
    assert len(got["rendered"]) > 300


@pytest.mark.slow
def test_counts_are_reported(capsys: Any) -> None:
    got = classify()
    with capsys.disabled():
        print(f"\nkey effects: {len(got['rendered'])} rendered, {len(got['warned'])} warned, {len(got['refused'])} refused")


def test_a_listed_key_warns_with_its_reason() -> None:
    text = 'nodePools: [{name: a, os: {id: ubuntu, version: "22.04"}, driver: {livenessProbe: {periodSeconds: 5}}}]\ndcgm: {hostPort: 5555}\n'
    p = plan(Inputs(text.encode(), "values.yaml"))
    warned = {x.pointer: x.message for x in p.problems if x.severity.name == "WARNING"}
    assert "the operator ignores too" in warned["/nodePools/0/driver/livenessProbe"]
    assert "ignored by the operator" in warned["/dcgm/hostPort"]


def test_the_nls_switch_and_a_pools_kernel_module_type_render_without_a_warning() -> None:
    """Both were listed as "not rendered yet" after the driver rendered them: a warning that
    said a key the user wrote did nothing, when it did."""
    pool = {"name": "a", "os": {"id": "ubuntu", "version": "22.04"}, "driver": {"kernelModuleType": "proprietary", "licensingConfig": {"configMapName": "lic", "nlsEnabled": False}}}
    p = plan(Inputs(yamlio.dump({"nodePools": [pool]}).encode(), "values.yaml"))
    assert not [x.format() for x in p.problems], p.problems
    assert p.base is not None
    ds = next(o for o in objects(p.base)["driver"] if o["kind"] == "DaemonSet")
    ctr = ds["spec"]["template"]["spec"]["containers"][0]
    assert {"name": "KERNEL_MODULE_TYPE", "value": "proprietary"} in ctr["env"]
    assert [m["mountPath"] for m in ctr["volumeMounts"] if m["name"] == "licensing-config"] == ["/drivers/gridd.conf"]


def test_a_pools_nvidiadriver_topology_config_is_mounted_as_the_clusterpolicys() -> None:
    """`nodePools[].driver.virtualTopologyConfig.name` is the NVIDIADriver spelling of
    `virtualTopology.config`: the operator mounts that ConfigMap's nvidia-topologyd.conf."""
    pool = {"name": "a", "os": {"id": "ubuntu", "version": "22.04"}, "driver": {"driverType": "vgpu", "virtualTopologyConfig": {"name": "topology"}}}
    p = plan(Inputs(yamlio.dump({"nodePools": [pool]}).encode(), "values.yaml"))
    assert not [x.format() for x in p.problems if x.pointer.endswith("virtualTopologyConfig/name")]
    assert p.base is not None
    ds = next(o for o in objects(p.base)["driver"] if o["kind"] == "DaemonSet")
    pod = ds["spec"]["template"]["spec"]
    assert {"name": "topology-config", "configMap": {"name": "topology", "items": [{"key": "nvidia-topologyd.conf", "path": "nvidia-topologyd.conf"}]}} in pod["volumes"]
    assert any(m["mountPath"] == "/etc/nvidia/nvidia-topologyd.conf" for m in pod["containers"][0]["volumeMounts"])
