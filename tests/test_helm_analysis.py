"""The chart analysis's shortcuts (renderer/emit/helm_ir.py): they choose which builds to make,
never what the templates are. Each is checked against the plain search it replaces."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from renderer.components import COMPONENTS
from renderer.emit import helm_eval, helm_ir, helm_tree, helm_values
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
    the same, leave every template, knob, build-time key and digest as the plain search has them."""
    folder = ROOT if name == "example" else CASES / name
    model = _base(folder / "values.yaml", folder / "overlays")
    fast = _shape(templates_for(model))
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
