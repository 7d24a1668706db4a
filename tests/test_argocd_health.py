"""The Lua health checks of argocd-cm-patch.yaml, run with lupa the way Argo CD runs them.

Argo CD runs a health script in gopher-lua (Lua 5.1) with only the base, table and a reduced
os library, and the live object as the global ``obj``; the harness gives the script exactly
that (no ``string``, no ``math``), so a script that needs more fails here as it would there.
"""

from __future__ import annotations

import copy
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from renderer import yamlio
from renderer.emit import argocd_health
from renderer.inputs import Inputs
from renderer.render import render

DATA = Path(__file__).parent / "data"
BASE_GLOBALS = ("assert", "error", "ipairs", "next", "pairs", "pcall", "select", "tonumber", "tostring", "type", "unpack", "table")


@cache
def _runtime() -> Any:
    import lupa.lua51 as lua51

    runtime = lua51.LuaRuntime(unpack_returned_tuples=True)
    runtime.execute(
        "function gpu_render_run(src, obj, names)\n"
        "  local env = {obj = obj, os = {time = os.time, date = os.date, clock = os.clock}}\n"
        "  for _, n in ipairs(names) do env[n] = _G[n] end\n"
        "  local f = assert(loadstring(src))\n"
        "  setfenv(f, env)\n"
        "  return f()\n"
        "end"
    )
    return runtime


def _table(runtime: Any, value: Any) -> Any:
    if isinstance(value, dict):
        return runtime.table_from({k: _table(runtime, v) for k, v in value.items()})
    if isinstance(value, list):
        return runtime.table_from([_table(runtime, v) for v in value])
    return value


def run(script: str, obj: dict[str, Any]) -> tuple[str, str]:
    """(status, message) of ``script`` over ``obj``, as Argo CD reads them."""
    runtime = _runtime()
    hs = runtime.globals().gpu_render_run(script, _table(runtime, obj), runtime.table_from(list(BASE_GLOBALS)))
    status = str(hs["status"])
    assert status in ("Healthy", "Progressing", "Degraded", "Suspended", "Missing", "Unknown"), status
    message = hs["message"]
    return status, "" if message is None else str(message)


@cache
def _rendered() -> dict[str, str]:
    values = "cluster: {capabilities: {serviceMonitor: true}}\ndcgmExporter: {serviceMonitor: {enabled: true}}\nnodePools: [{name: ubuntu2204, os: {id: ubuntu, version: '22.04'}}]\n"
    return render(Inputs(values.encode(), "values.yaml"))


def rendered(kind: str, fragment: str) -> dict[str, Any]:
    for path, text in _rendered().items():
        if path.startswith("base/") and path.endswith(".yaml") and fragment in path:
            for doc in yamlio.load_all(text):
                if doc.get("kind") == kind:
                    return copy.deepcopy(doc)
    raise AssertionError(f"no {kind} {fragment} rendered")


def cm_scripts() -> dict[str, str]:
    (cm,) = yamlio.load_all(_rendered()["argocd/argocd-cm-patch.yaml"])
    return {str(k): str(v) for k, v in cm["data"].items()}


# -- what is shipped ---------------------------------------------------------------


def test_the_patch_ships_the_daemonset_and_servicemonitor_checks() -> None:
    prefix = "resource.customizations.health."
    scripts = cm_scripts()
    assert sorted(scripts) == [prefix + "apps_DaemonSet", prefix + "monitoring.coreos.com_ServiceMonitor"]
    assert scripts[prefix + "apps_DaemonSet"] == argocd_health.DAEMONSET_LUA
    assert scripts[prefix + "monitoring.coreos.com_ServiceMonitor"] == argocd_health.SERVICE_MONITOR_LUA


def test_nodefeaturerule_has_no_status_to_read() -> None:
    """No script for NodeFeatureRule: NFD's CRD gives it no status (nothing could be read)."""
    from renderer.components import nfd  # noqa: F401  (the CRDs it renders)

    crds = [o for o in yamlio.load_all(_rendered()["base/nfd/" + _crd_file("nodefeaturerules")]) if o.get("kind") == "CustomResourceDefinition"]
    (crd,) = crds
    for version in crd["spec"]["versions"]:
        assert "status" not in version["schema"]["openAPIV3Schema"].get("properties", {})
        assert "status" not in (version.get("subresources") or {})


def _crd_file(plural: str) -> str:
    names = [p.removeprefix("base/nfd/") for p in _rendered() if p.startswith("base/nfd/") and plural in p]
    assert names, plural
    return names[0]


# -- Argo CD's own answers for every DaemonSet gpu-render did not render -----------


def _foreign_daemonset(case: dict[str, Any]) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": "fluentd-elasticsearch", "namespace": "kube-system", "labels": {"k8s-app": "fluentd-logging"}}
    if "generation" in case:
        meta["generation"] = case["generation"]
    obj: dict[str, Any] = {"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": meta, "spec": {"selector": {"matchLabels": {"name": "x"}}}}
    if "updateStrategy" in case:
        obj["spec"]["updateStrategy"] = case["updateStrategy"]
    if "status" in case:
        obj["status"] = case["status"]
    return obj


ARGO_CASES = yamlio.load((DATA / "argocd-daemonset-health.yaml").read_text())["cases"]


@pytest.mark.parametrize("case", ARGO_CASES, ids=[c["name"] for c in ARGO_CASES])
def test_other_daemonsets_get_argo_cds_own_answer(case: dict[str, Any]) -> None:
    assert run(argocd_health.DAEMONSET_LUA, _foreign_daemonset(case)) == (case["health"], case["message"])
    assert go_daemonset_health(_foreign_daemonset(case)) == (case["health"], case["message"])


def go_daemonset_health(obj: dict[str, Any]) -> tuple[str, str]:
    """gitops-engine's getAppsv1DaemonSetHealth, transcribed (missing numbers are Go's zero)."""
    status = obj.get("status") or {}
    generation = (obj.get("metadata") or {}).get("generation", 0)
    desired, updated, available = (status.get(k, 0) for k in ("desiredNumberScheduled", "updatedNumberScheduled", "numberAvailable"))
    name = obj["metadata"]["name"]
    if generation > status.get("observedGeneration", 0):
        return "Progressing", "Waiting for rollout to finish: observed daemon set generation less than desired generation"
    if ((obj.get("spec") or {}).get("updateStrategy") or {}).get("type") == "OnDelete":
        return "Healthy", f"daemon set {updated} out of {desired} new pods have been updated"
    if updated < desired:
        return "Progressing", f'Waiting for daemon set "{name}" rollout to finish: {updated} out of {desired} new pods have been updated...'
    if available < desired:
        return "Progressing", f'Waiting for daemon set "{name}" rollout to finish: {available} of {desired} updated pods are available...'
    return "Healthy", ""


COUNT = st.integers(min_value=0, max_value=6)
STATUS = st.fixed_dictionaries(
    {},
    optional={
        "observedGeneration": COUNT,
        "desiredNumberScheduled": COUNT,
        "updatedNumberScheduled": COUNT,
        "numberAvailable": COUNT,
        "numberUnavailable": COUNT,
        "numberReady": COUNT,
        "currentNumberScheduled": COUNT,
    },
)


@settings(max_examples=300, deadline=None)
@given(
    status=STATUS,
    generation=st.one_of(st.none(), COUNT),
    strategy=st.sampled_from([None, {"type": "OnDelete"}, {"type": "RollingUpdate"}, {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1}}]),
    labels=st.sampled_from([{}, {"app.kubernetes.io/managed-by": "Helm"}, {"app.kubernetes.io/managed-by": "gpu-render-not"}]),
)
def test_other_daemonsets_match_argo_cd_on_any_status(status: dict[str, Any], generation: int | None, strategy: Any, labels: dict[str, str]) -> None:
    case: dict[str, Any] = {"status": status}
    if generation is not None:
        case["generation"] = generation
    if strategy is not None:
        case["updateStrategy"] = strategy
    obj = _foreign_daemonset(case)
    obj["metadata"]["labels"].update(labels)
    assert run(argocd_health.DAEMONSET_LUA, obj) == go_daemonset_health(obj)


# -- gpu-render's DaemonSets: healthy / progressing / degraded / upgrade pending -------


def _with_status(obj: dict[str, Any], generation: int, **status: int) -> dict[str, Any]:
    obj = copy.deepcopy(obj)
    obj["metadata"]["generation"] = generation
    obj["status"] = {"observedGeneration": generation, **status}
    return obj


def driver(update_strategy: dict[str, Any] | None = None) -> dict[str, Any]:
    ds = rendered("DaemonSet", "driver/daemonset-nvidia-driver-daemonset")
    assert ds["metadata"]["labels"]["app.kubernetes.io/managed-by"] == "gpu-render"
    if update_strategy is not None:
        ds["spec"]["updateStrategy"] = update_strategy
    return ds


ON_DELETE = {"type": "OnDelete"}
ROLLING = {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1}}


@pytest.mark.parametrize(
    ("strategy", "status", "expected", "words"),
    [
        # healthy: every scheduled pod runs the current template and is available
        (ON_DELETE, {"desiredNumberScheduled": 3, "updatedNumberScheduled": 3, "numberAvailable": 3, "numberReady": 3}, "Healthy", "all 3 pods"),
        (ROLLING, {"desiredNumberScheduled": 3, "updatedNumberScheduled": 3, "numberAvailable": 3}, "Healthy", "all 3 pods"),
        (ROLLING, {"desiredNumberScheduled": 0}, "Healthy", "all 0 pods"),
        # progressing: a first install whose driver still builds, a rolling upgrade under way
        (ON_DELETE, {"desiredNumberScheduled": 3, "updatedNumberScheduled": 3, "numberAvailable": 0, "numberUnavailable": 3}, "Progressing", "0 of 3 pods available"),
        (ROLLING, {"desiredNumberScheduled": 3, "updatedNumberScheduled": 1, "numberAvailable": 2, "numberUnavailable": 1}, "Progressing", "1 of 3 pods updated"),
        (ROLLING, {"desiredNumberScheduled": 3, "updatedNumberScheduled": 3, "numberAvailable": 2, "numberUnavailable": 1}, "Progressing", "2 of 3 pods available"),
        # degraded: more pods down than the rollout may take down, so it stops
        (ROLLING, {"desiredNumberScheduled": 4, "updatedNumberScheduled": 1, "numberAvailable": 1, "numberUnavailable": 3}, "Degraded", "rollout blocked: 3 pods unavailable, more than maxUnavailable 1"),
        # upgrade pending: OnDelete with pods on the old template
        (ON_DELETE, {"desiredNumberScheduled": 3, "updatedNumberScheduled": 0, "numberAvailable": 3}, "Suspended", "3 of 3 pods run an older template"),
        (ON_DELETE, {"desiredNumberScheduled": 3, "updatedNumberScheduled": 2, "numberAvailable": 2, "numberUnavailable": 1}, "Suspended", "1 of 3 pods"),
    ],
)
def test_driver_daemonset_health(strategy: dict[str, Any], status: dict[str, int], expected: str, words: str) -> None:
    obj = _with_status(driver(strategy), 4, **status)
    health, message = run(argocd_health.DAEMONSET_LUA, obj)
    assert (health, words in message) == (expected, True), message
    # Argo CD's own check calls every OnDelete case Healthy; ours never hides an old pod
    if strategy is ON_DELETE and status["updatedNumberScheduled"] < status["desiredNumberScheduled"]:
        assert go_daemonset_health(obj)[0] == "Healthy"


def test_unobserved_generation_is_progressing() -> None:
    obj = _with_status(driver(ON_DELETE), 4, desiredNumberScheduled=1, updatedNumberScheduled=1, numberAvailable=1)
    obj["metadata"]["generation"] = 5
    assert run(argocd_health.DAEMONSET_LUA, obj) == ("Progressing", "the DaemonSet controller has not yet seen generation 5")


def test_operand_daemonsets_use_the_same_rule() -> None:
    ds = rendered("DaemonSet", "device-plugin/daemonset-")
    assert ds["spec"]["updateStrategy"]["type"] == "RollingUpdate"
    assert run(argocd_health.DAEMONSET_LUA, _with_status(ds, 2, desiredNumberScheduled=2, updatedNumberScheduled=2, numberAvailable=1))[0] == "Progressing"
    assert run(argocd_health.DAEMONSET_LUA, _with_status(ds, 2, desiredNumberScheduled=2, updatedNumberScheduled=2, numberAvailable=2))[0] == "Healthy"


def test_percentage_budget_never_degrades() -> None:
    """A percentage needs the string library Argo CD does not load: only Progressing then."""
    obj = _with_status(driver({"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "25%"}}), 1, desiredNumberScheduled=4, updatedNumberScheduled=0, numberAvailable=0, numberUnavailable=4)
    assert run(argocd_health.DAEMONSET_LUA, obj)[0] == "Progressing"


# -- ServiceMonitor: status.bindings[].conditions[type=Accepted] ------------------------


def _binding(status: str, generation: int = 1, reason: str = "", message: str = "") -> dict[str, Any]:
    cond: dict[str, Any] = {"type": "Accepted", "status": status, "lastTransitionTime": "2026-12-01T00:00:00Z", "observedGeneration": generation}
    if reason:
        cond["reason"] = reason
    if message:
        cond["message"] = message
    return {"group": "monitoring.coreos.com", "resource": "prometheuses", "name": "k8s", "namespace": "monitoring", "conditions": [cond]}


@cache
def _sm_status_schema() -> Any:
    crd = yamlio.load((DATA / "monitoring.coreos.com_servicemonitors.yaml").read_text())
    (version,) = crd["spec"]["versions"]
    return Draft202012Validator(version["schema"]["openAPIV3Schema"]["properties"]["status"])


@pytest.mark.parametrize(
    ("status", "expected", "words"),
    [
        (None, "Healthy", "no Prometheus reports on it"),
        ({}, "Healthy", "no Prometheus reports on it"),
        ({"bindings": [_binding("True", 2)]}, "Healthy", "accepted by 1 Prometheus"),
        ({"bindings": [_binding("True", 2), {**_binding("True", 2), "name": "other"}]}, "Healthy", "accepted by 2 Prometheus"),
        ({"bindings": [_binding("False", 2, "InvalidConfiguration", "port dcgm-metrics not found")]}, "Degraded", "prometheuses/monitoring/k8s rejected it: InvalidConfiguration port dcgm-metrics not found"),
        ({"bindings": [_binding("True", 1)]}, "Progressing", "to accept generation 2"),
        ({"bindings": [_binding("Unknown", 2)]}, "Progressing", "waiting for prometheuses/monitoring/k8s"),
        ({"bindings": [{**_binding("True", 2), "conditions": []}]}, "Progressing", "waiting for"),
        ({"bindings": [_binding("True", 2), {**_binding("False", 2, "InvalidConfiguration"), "name": "b"}]}, "Degraded", "prometheuses/monitoring/b rejected it"),
    ],
)
def test_servicemonitor_health(status: dict[str, Any] | None, expected: str, words: str) -> None:
    sm = rendered("ServiceMonitor", "dcgm-exporter/")
    sm["metadata"]["generation"] = 2
    if status is not None:
        assert list(_sm_status_schema().iter_errors(status)) == []  # the shape prometheus-operator writes
        sm["status"] = status
    health, message = run(argocd_health.SERVICE_MONITOR_LUA, sm)
    assert (health, words in message) == (expected, True), message


def test_the_old_condition_shape_is_not_read() -> None:
    """``status.conditions`` is not where prometheus-operator reports: it changes nothing."""
    sm = rendered("ServiceMonitor", "dcgm-exporter/")
    sm["status"] = {"conditions": [{"type": "Ready", "status": "False"}]}
    assert run(argocd_health.SERVICE_MONITOR_LUA, sm)[0] == "Healthy"


def test_every_script_uses_only_what_argo_cd_loads() -> None:
    for script in argocd_health.SCRIPTS.values():
        for lib in ("string.", "math.", "io.", "require", ":format", ":sub"):
            assert lib not in script
