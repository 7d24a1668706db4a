"""The chart analysis's shortcuts (renderer/emit/helm_ir.py): they choose which builds to make,
never what the templates are. Each is checked against the plain search it replaces."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from renderer import yamlio
from renderer.components import COMPONENTS
from renderer.emit import helm_eval, helm_ir, helm_text, helm_tree, helm_values
from renderer.emit.helm import mask_generated, normalise, static_objects, templates_for
from renderer.emit.helm_values import (
    POOL_ATTR,
    POOL_NAMES_READ,
    POOLS_READ,
    Recorded,
    chart_values,
    model_of,
    pool_of,
)
from renderer.inputs import read_inputs
from renderer.merge import deep_merge
from renderer.pipeline import plan
from renderer.schema import load_schema
from tests.conftest import ROOT
from tests.golden import CASES, case_names


def _base(values: Path, overlays: Path) -> Any:
    p = plan(read_inputs(values, overlays))
    assert p.base is not None
    return p.base


def _shape(found: tuple[dict[str, Any], list[helm_tree.Template]]) -> str:
    values, templates = found
    return repr((values, [(t.name, t.gate, t.objects, sorted(t.fixed), sorted(t.knobs), t.derived, t.generated, t.pooled, t.pool_key, t.pool_derived) for t in templates]))


CASES_AND_EXAMPLE = ["example", *case_names()]


@pytest.mark.parametrize("name", CASES_AND_EXAMPLE)
def test_shortcuts_give_the_templates_of_the_plain_search(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Suspects before bisection, and variants not built when the pools a build read come out
    the same, leave every template, knob, build-time key and digest as the plain search has them;
    so does spreading the components over processes (each process's shared analysis state
    sees other components before each of its own)."""
    folder = ROOT if name == "example" else CASES / name
    model = _base(folder / "values.yaml", folder / "overlays")
    fast = _shape(templates_for(model))
    assert _shape(templates_for(model, jobs=3)) == fast
    monkeypatch.setattr(helm_ir, "SHORTCUTS", False)
    assert _shape(templates_for(model)) == fast


def _example_values() -> dict[str, Any]:
    return chart_values(_base(ROOT / "values.yaml", ROOT / "overlays"))


def test_a_build_tells_its_own_reads_from_the_pool_resolutions() -> None:
    """The driver reads pool attributes (recorded as POOL_ATTR paths); resolving the pools reads
    the whole fleet `driver` section, which is in the union of reads but not in `direct`."""
    values = _example_values()
    driver = next(c for c in COMPONENTS if c.name == "driver")
    seen, paths = Recorded(), Recorded()
    assert helm_ir.build_tree(driver, values, "fleet", seen, None, paths)
    assert POOLS_READ in seen.direct
    assert ("driver",) in paths and ("driver",) not in paths.direct
    read = {p[2] for p in paths.direct if p[0] == POOL_ATTR}
    assert {"image", "node_selector", "daemonset_name"} <= read


def test_a_build_its_gate_leaves_out_reads_the_release_a_gated_key_needs() -> None:
    """The CC manager's gate reads `sandboxWorkloads.mode`, which v25.10 prunes: a build that
    leaves the component out there read the release too (on v25.10 the gate passes with the
    fleet's `kubevirt`), else the analysis would skip trying the release with it."""
    values = helm_values.assign(_example_values(), ("sandboxWorkloads", "enabled"), True)
    assert helm_values.get(values, ("sandboxWorkloads", "mode")) != "kata"
    cc = next(c for c in COMPONENTS if c.name == "cc-manager")
    seen, paths = Recorded(), Recorded()
    assert helm_ir.build_tree(cc, values, "fleet", seen, None, paths) == {}
    assert ("sandboxWorkloads", "mode") in paths and helm_values.RELEASE in paths
    assert helm_ir.build_tree(cc, helm_values.assign(values, helm_values.RELEASE, "v25.10"), "fleet")


def test_a_component_off_in_the_fleet_is_analysed_on_the_fleets_release() -> None:
    """The CC manager renders with the sandbox on and kata, or on v25.10 (no modes) whatever the
    mode: the analysis takes the first, whose release has `sandboxWorkloads.mode` and
    `ccManager.hostNetwork`. On v25.10 both are pruned: flipped alone they change nothing there,
    and the template lost kata on v26.x and the hostNetwork fields."""
    from renderer.schema import load_schema

    model = _base(ROOT / "values.yaml", ROOT / "overlays")
    analysis = helm_ir.Analysis(chart_values(model), model.cluster, load_schema())
    cc = next(c for c in COMPONENTS if c.name == "cc-manager")
    found = analysis.enabling(cc)
    assert found is not None
    assert helm_values.RELEASE not in found[0] and found[0][("sandboxWorkloads", "mode")] == "kata"


def test_no_dra_pool_is_a_read_of_the_pool_names_only() -> None:
    """Without a DRA pool, `model.dra_pools` depends on the derived `draDriver.enabled` alone;
    values without it (not the chart's) make it depend on which pools there are, not on their
    settings: the DRA components' enabling search does not try those."""
    values = _example_values()
    assert values["draDriver"]["enabled"] is False
    seen: set[str] = set()
    model = model_of(values, "fleet", seen, set())
    assert model.dra_pools == () and not model.dra
    assert seen == {"draDriver"}
    values = {**values, "draDriver": {k: v for k, v in values["draDriver"].items() if k != "enabled"}}
    seen = set()
    model = model_of(values, "fleet", seen, set())
    assert model.dra_pools == ()
    assert POOL_NAMES_READ in seen and POOLS_READ not in seen and "nodePools" not in seen
    assert helm_ir._may_read(seen, set(), ("driver", "pools", "ubuntu2204"))
    assert not helm_ir._may_read(seen, set(), ("driver", "pools", "ubuntu2204", "usePrecompiled"))


def test_pool_of_resolves_one_pool_as_the_model_does() -> None:
    values = _example_values()
    pools = model_of(values, "fleet").pools
    for pool in pools:
        assert pool_of(values, "fleet", pool.name) == pool
    assert pool_of(values, "fleet", "no-such-pool") is None


def test_values_maps_merged_into_one_map_merge_as_the_builders_do() -> None:
    """Two values maps merged into one map (the fleet's and a pool's `resources`, a pool's labels
    and `daemonsets.labels`, the OS labels and a pool's `nodeSelector`) are one merge in the
    template, in the builder's precedence: deep, a key they share once, with the winner's value
    (issue 18: they were two `toYaml` splices, a duplicate key). The evaluator says what the
    printed `gpu-stack.merged` does; tests/test_helm_chart.py's knob matrix runs the real helm."""
    values, templates = templates_for(_base(ROOT / "values.yaml", ROOT / "overlays"))
    values = copy.deepcopy(values)
    pool = values["driver"]["pools"]["ubuntu2204"]
    values["driver"]["resources"] = {"limits": {"memory": "1Gi"}, "requests": {"cpu": "100m"}}
    pool["resources"] = {"limits": {"cpu": 1}, "requests": None}
    values["daemonsets"]["labels"] = {"team": "ml"}
    pool["labels"] = {"team": "pool", "tier": "gpu"}
    os_key = next(iter(pool["node"]["osSelector"]))
    pool["nodeSelector"] = {os_key: "other", "zone": "a"}
    got = normalise(mask_generated(helm_eval.render_templates(templates, values), templates))
    want = normalise(mask_generated(static_objects(model_of(values, "fleet")), templates))
    assert got == want
    ds = next(o for o in got.values() if o["kind"] == "DaemonSet" and o["metadata"]["labels"].get("tier") == "gpu")
    pod = ds["spec"]["template"]
    assert {c["name"]: c["resources"] for c in [*pod["spec"]["initContainers"], *pod["spec"]["containers"]] if "resources" in c} and all(
        c["resources"] == {"limits": {"memory": "1Gi", "cpu": 1}} for c in pod["spec"]["containers"]
    )
    assert pod["metadata"]["labels"]["team"] == "ml" and ds["metadata"]["labels"]["team"] == "ml"
    assert pod["spec"]["nodeSelector"][os_key] == pool["node"]["osSelector"][os_key] and pod["spec"]["nodeSelector"]["zone"] == "a"


def test_merged_maps_is_the_builders_merge() -> None:
    """helm_tree.merged_maps (what `gpu-stack.merged` prints): renderer.merge's rules, unlike
    Sprig's `merge` (which keeps a later map's `false`, `0`, `""` or `[]` out)."""
    fleet = {"limits": {"memory": "1Gi", "cpu": 2}, "requests": {"cpu": "1"}, "list": [1, 2], "off": True}
    own = {"limits": {"cpu": 0}, "requests": None, "list": [], "off": False}
    assert helm_tree.merged_maps([fleet, None, own]) == deep_merge(fleet, own) == {"limits": {"memory": "1Gi", "cpu": 0}, "list": [], "off": False}
    assert helm_tree.merged_maps([]) == {} and fleet["requests"] == {"cpu": "1"}


def test_integer_knobs_parsed_with_int_are_settable_and_compared_ones_are_not() -> None:
    """An integer knob's placeholder is a number ``int()`` passes through: the startup probe's
    timings and the drain timeouts become values. ``maxParallelUpgrades``, which the builder
    compares (``> 0``), is read only through the pool fact ``node.upgradeBudget`` (a value of
    the body), and the chart marks it build-time (``helm_values.FACT_INPUTS``)."""
    _, templates = templates_for(_base(ROOT / "values.yaml", ROOT / "overlays"))
    (driver,) = [t for t in templates if t.name == "driver"]
    pool = ("driver", "pools", "ubuntu2204")
    assert (*pool, "node", "upgradeBudget") in driver.knobs
    assert (*pool, *helm_values.FACT_INPUTS[0]) == (*pool, "upgradePolicy", "maxParallelUpgrades")
    for key in [("startupProbe", "periodSeconds"), ("upgradePolicy", "drain", "timeoutSeconds"), ("upgradePolicy", "gpuPodDeletion", "timeoutSeconds")]:
        assert (*pool, *key) not in driver.fixed
        assert (*pool, *key) in driver.knobs
    assert helm_ir.SENTINEL.fullmatch(str(helm_ir.INT_BASE - 7))
    assert not helm_ir.SENTINEL.search(str(-helm_ir.INT_BASE))  # a positive number is never one


# --- keys a release prunes (renderer.releasegate.prune) --------------------------------


def test_a_values_map_spliced_in_on_one_side_only_is_a_splice_behind_the_variant() -> None:
    """`dcgmExporter.annotations` spliced into the pod's annotations on v26.7 and pruned on
    v26.3: the map's diff goes down to the placeholder's entry, which becomes the splice behind
    the release's variant (it was printed as a key named after the placeholder holding the whole
    block, and the chart failed its own check); the text gives the map only where it holds."""
    sid = helm_ir.BLOCK.format(7)
    path = ("dcgmExporter", "annotations")
    assert helm_ir.diff({"a": "1", sid: sid}, {"a": "1"}) == [(sid,)]
    sent = helm_ir.Sentinels()
    sent.make(helm_ir.Knob(path, "block"), {"team": "ml"})
    sid = next(iter(sent.knob))
    atom = helm_tree.Atom(("cluster", "operatorRelease"), "eq", "v26.7")
    node = {"a": "1", sid: helm_tree.Variant([(((atom,),), sid), (((),), helm_tree.MISSING)])}
    got = helm_ir._convert(node, sent)
    splice = helm_tree.Splice(path, True)
    assert got == {"a": "1", splice: helm_tree.Variant([(((atom,),), None), (((),), helm_tree.MISSING)])}
    values = {"cluster": {"operatorRelease": "v26.3"}, "dcgmExporter": {"annotations": {"team": "ml"}}}
    assert helm_eval.evaluate(got, values) == {"a": "1"}
    values["cluster"]["operatorRelease"] = "v26.7"
    assert helm_eval.evaluate(got, values) == {"a": "1", "team": "ml"}
    assert helm_text.splice_source(splice, got[splice]) == 'and (eq .Values.cluster.operatorRelease "v26.7") .Values.dcgmExporter.annotations'


def test_an_emptiable_map_chosen_by_a_variant_is_left_out_when_empty() -> None:
    """A map whose entries are a splice (and optional entries), chosen by the release: left out
    when it comes out empty, as its `if` prints it (the static render has no `annotations: {}`)."""
    atom = helm_tree.Atom(("cluster", "operatorRelease"), "eq", "v26.7")
    splice = helm_tree.Splice(("daemonsets", "annotations"), is_map=True)
    node = {"annotations": helm_tree.Variant([(((atom,),), {splice: None, helm_tree.Splice(("x", "y"), is_map=True): None}), (((),), {splice: None})])}
    values = {"cluster": {"operatorRelease": "v26.3"}, "daemonsets": {"annotations": {}}, "x": {"y": {"k": "v"}}}
    assert helm_eval.evaluate(node, values) == {}
    values["cluster"]["operatorRelease"] = "v26.7"
    assert helm_eval.evaluate(node, values) == {"annotations": {"k": "v"}}


def test_a_build_that_reads_where_a_pruned_key_may_be_reads_the_release() -> None:
    """Which keys a build finds at a gated place (`dcgmExporter.annotations`, a v26.7 key)
    depends on the release: the read is recorded as the builder's own read of
    `cluster.operatorRelease`, so the analysis varies the release there (the node labeller's
    `daemonsets.podSecurityContext` was left ungated: only the pools' resolution had read it)."""
    seen, paths = Recorded(), Recorded()
    paths.muted = True
    paths.add(("cluster", "operatorRelease"))  # resolving the pools read it: not the builder's
    paths.muted = False
    paths.add(("dcgmExporter", "annotations"))
    helm_values.record_gated_reads(seen, paths)
    assert ("cluster", "operatorRelease") in paths.direct and "cluster" in seen.direct
    other = Recorded()
    other.add(("dcgmExporter", "version"))
    helm_values.record_gated_reads(Recorded(), other)
    assert ("cluster", "operatorRelease") not in other


def test_chart_values_keep_the_keys_a_release_prunes_and_the_model_prunes_them(tmp_path: Path) -> None:
    """A v25.10 fleet's chart values still hold the later releases' keys (so a v26.7 cluster's
    values file can set them and the templates read them behind the release); the chart's model
    leaves them out as the static render does. A pool's copy is its release's."""
    policy = yamlio.load((ROOT / "values.yaml").read_text())
    policy["cluster"]["operatorRelease"] = "v25.10"
    policy["dcgmExporter"] = {"annotations": {"team": "ml"}}
    policy["nodePools"][1]["driver"] = {"upgradePolicy": {"drain": {"enable": True, "force": True}}}
    (tmp_path / "values.yaml").write_text(yamlio.dump(policy))
    model = plan(read_inputs(tmp_path / "values.yaml", None)).base
    assert model is not None and "annotations" not in model.values["dcgmExporter"]
    values = chart_values(model)
    assert values["dcgmExporter"]["annotations"] == {"team": "ml"}
    assert values["dcgmExporter"]["serviceMonitor"]["scrapeTimeout"] == "10s"
    assert not values["driver"]["pools"]["rhel94"]["upgradePolicy"]["drain"].get("force")  # driver.upgradePolicy's
    again = model_of(values, "fleet")
    assert "annotations" not in again.values["dcgmExporter"]
    assert "scrapeTimeout" not in again.values["dcgmExporter"]["serviceMonitor"]


def test_nothing_as_the_else_stays_last_among_cases_with_pairs_set() -> None:
    """Each knob varied alone, "nothing" (a field the base has and one value drops) is the
    ``else`` and the base takes the negation of the other's condition (`_nothing_last`); the
    pairs of a group all set (`_together_first`) must leave that ``else`` last, not sort it
    first as a "what leaves the part out" case, where, always true, it would hide the field."""
    gds = helm_ir.Atom(("gds", "enabled"), "is", False)
    field = {"name": "GDS_ENABLED", "value": "true"}
    cases = helm_ir._nothing_last([(((gds,),), helm_ir.MISSING), (((),), field)], True)
    got = helm_ir._together_first(cases, {"DaemonSet/x": {}})
    assert got == [(((helm_ir.Atom(("gds", "enabled"), "is", True),),), field), (((),), helm_ir.MISSING)]
    # with the base as the else, a case that leaves the part out still comes first
    repo = (helm_ir.Atom(("repo",), "is", True), helm_ir.Atom(("dir",), "is", True))
    plain = [((repo,), {"with": "repo"}), (((gds,),), helm_ir.MISSING), (((),), field)]
    assert helm_ir._together_first(plain, {"DaemonSet/x": {}}) == [plain[1], plain[0], plain[2]]


def test_a_fleet_with_the_gds_sidecars_on_keeps_the_driver_in_the_range() -> None:
    """gds-gdrcopy-rdma: the driver's sidecars make groups of knobs varied alone that hold the
    repository and CA pairs; its template is one body in a range over the pools, not a copy
    per fleet pool (the range's check against the fleet's own render fails otherwise)."""
    folder = CASES / "gds-gdrcopy-rdma"
    model = _base(folder / "values.yaml", folder / "overlays")
    driver = next(c for c in COMPONENTS if c.name == "driver")
    (tpl,) = helm_ir.analyse_all((driver,), copy.deepcopy(chart_values(model)), model.cluster, load_schema())
    assert tpl.pool_key and tpl.pooled
    assert not any(oid.endswith(("-ubuntu2204", "-rhel94")) for oid in tpl.objects)  # no copy per fleet pool


@pytest.mark.parametrize("name", ["example", "gds-gdrcopy-rdma"])
def test_a_sidecar_a_switch_adds_holds_its_own_variants_of_the_mounts_its_siblings_take(name: str) -> None:
    """With GDS off in the fleet (the example) or on (gds-gdrcopy-rdma), the GDS sidecar in the
    driver's range body is one item behind its switch, and the repository and CA mounts it
    takes beside the driver container (`_pair_beside`) are variants inside it (`_nested`), not
    a copy of the whole sidecar per combination of the repository and CA pairs."""
    folder = ROOT if name == "example" else CASES / name
    model = _base(folder / "values.yaml", folder / "overlays")
    driver = next(c for c in COMPONENTS if c.name == "driver")
    (tpl,) = helm_ir.analyse_all((driver,), copy.deepcopy(chart_values(model)), model.cluster, load_schema())
    (ds,) = [node for oid, node in tpl.pooled.items() if oid.startswith("DaemonSet/")]
    containers = ds["spec"]["template"]["spec"]["containers"]
    (sidecar,) = [c for c in containers if isinstance(c, helm_tree.Variant) and any(isinstance(n, dict) and n.get("name") == "nvidia-fs-ctr" for _, n in c.cases)]
    assert len(sidecar.cases) == 2 and sidecar.cases[1][1] is helm_tree.MISSING
    mounts = sidecar.cases[0][1]["volumeMounts"]
    inner = [m for m in mounts if isinstance(m, helm_tree.Variant)]
    paths = [{a.path[-2:] for conj in m.cases[0][0] for a in conj} for m in inner]
    assert paths == [{("repoConfig", "configMapName"), ("node", "repoDir")}, {("certConfig", "name"), ("node", "certDir")}]


def test_a_chart_compares_each_shared_pair_of_objects_once() -> None:
    from renderer.emit.helm import KEEP, Chart

    crd = {"apiVersion": "v1", "kind": "CRD", "metadata": {"name": "a", "annotations": {KEEP: "keep"}}}
    static = {"apiVersion": "v1", "kind": "CRD", "metadata": {"name": "a"}}
    other = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "b"}, "data": {"x": "1"}}
    changed = {**other, "data": {"x": "2"}}
    chart = Chart({}, [])
    assert chart.differing([crd, other], [static, other]) == []
    assert len(chart.agreed) == 2  # the annotation the chart alone adds is not a difference
    assert chart.differing([crd, other], [static, changed]) == ["ConfigMap/b"]
    assert chart.differing([crd], [static, other]) == ["ConfigMap/b"]
    assert len(chart.agreed) == 2
