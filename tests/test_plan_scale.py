"""Planning at fleet scale: the shortcuts give exactly what the plain way gives.

* the schema check of an overlay validates only the top-level sections it changed, reusing
  the fleet's problems for the rest (same problems, same file:line:col);
* the merge copies on write (untouched sections are the fleet's own objects, never changed);
* image rules read merged sections through views instead of deep copies.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from renderer import driverimage, schema
from renderer.inputs import ClusterInput, Inputs, read_inputs
from renderer.loader import Source, load_text
from renderer.merge import Located, deep_merge, from_source, merge, merged_view
from renderer.pipeline import FLEET, plan
from renderer.resolve import resolve, with_defaults
from tests.conftest import examples
from tests.golden import CASES, case_names

ROOT = Path(__file__).resolve().parent.parent


def src(text: str, path: str) -> Source:
    source, problems = load_text(text, path)
    assert problems == [] and source is not None, problems
    return source


def sectioned_equals_full(fleet: Located, clusters: dict[str, Located]) -> None:
    sections = schema.FleetSections(fleet)
    for name, loc in clusters.items():
        assert schema.validate(loc, sections) == schema.validate(loc), name


def located_of(folder: Path) -> tuple[Located, dict[str, Located]]:
    inputs = read_inputs(folder / "values.yaml", folder / "overlays")
    p = plan(inputs)
    fleet = p.located[FLEET]
    return fleet, {name: loc for name, loc in p.located.items() if name != FLEET}


@pytest.mark.parametrize("name", [*case_names(), "example"])
def test_sectioned_validation_equals_full_validation_on_every_case(name: str) -> None:
    folder = ROOT if name == "example" else CASES / name
    fleet, clusters = located_of(folder)
    sectioned_equals_full(fleet, clusters)


FLEET_TEXT = """\
driver:
  version: '550'
  bogus: 1
mig:
  strategy: weird
psa:
  enabled: true
unknownTop: 1
cluster:
  kubeVersion: "1.35"
"""

OVERLAYS = [
    "mig:\n  strategy: mixed\n",
    "driver:\n  version: 560\n",
    "driver:\n  bogus: null\n  typo: x\n",
    "unknownTop: null\nanotherUnknown: {a: 1}\n",
    "psa: true\n",
    "mig: null\npsa:\n  enabled: 'yes'\n",
    "nodePools:\n  - name: a\n    os: {id: ubuntu, version: 22.04}\n  - name: a\n    kernel: [1]\n",
    "cluster:\n  kubeVersion: 1.35\n  nope: 1\n",
    "",
]


def test_sectioned_validation_keeps_every_problem_and_its_position() -> None:
    fleet = from_source(src(FLEET_TEXT, "values.yaml"))
    clusters = {f"c{i}": merge(fleet, src(text, f"overlays/c{i}/values.yaml")) for i, text in enumerate(OVERLAYS)}
    sectioned_equals_full(fleet, clusters)
    # the fleet's problems point into values.yaml, the overlay's into the overlay
    problems = schema.validate(clusters["c1"], schema.FleetSections(fleet))
    files = {(p.pointer, p.file) for p in problems}
    assert ("/driver/version", "overlays/c1/values.yaml") in files
    assert ("/mig/strategy", "values.yaml") in files
    assert ("/unknownTop", "values.yaml") in files


section_values = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 3),
    st.sampled_from(["x", "single", "mixed", "550", "1.35", ""]),
    st.dictionaries(st.sampled_from(["enabled", "version", "strategy", "bogus", "repository", "env"]), st.one_of(st.none(), st.booleans(), st.sampled_from(["a", "1"]), st.integers(0, 2)), max_size=3),
)
overlays = st.dictionaries(st.sampled_from(["driver", "mig", "psa", "dcgmExporter", "toolkit", "unknownTop", "cdi", "gitops"]), section_values, max_size=4)


@settings(max_examples=examples(150), deadline=None)
@given(overlays)
@example({"unknownTop": 1})  # the fleet's value again: the problem points into the overlay
def test_sectioned_validation_equals_full_validation_on_random_overlays(overlay: dict[str, Any]) -> None:
    fleet = from_source(src(FLEET_TEXT, "values.yaml"))
    cluster = merge(fleet, Source("overlays/c/values.yaml", overlay, {}, {}))
    sectioned_equals_full(fleet, {"c": cluster})


def test_merge_copies_on_write() -> None:
    fleet = from_source(src(FLEET_TEXT, "values.yaml"))
    before = copy.deepcopy(fleet.data)
    out = merge(fleet, src("driver:\n  version: '560'\nmig: null\n", "overlays/c/values.yaml"))
    assert fleet.data == before  # the fleet is never changed
    assert out.data["psa"] is fleet.data["psa"]  # untouched: shared
    assert out.data["driver"] is not fleet.data["driver"]  # written: copied
    assert out.data["driver"] == {"version": "560", "bogus": 1}
    assert "mig" not in out.data and "mig" in fleet.data


plain = st.recursive(
    st.one_of(st.none(), st.integers(0, 3), st.sampled_from(["a", "b"])),
    lambda children: st.dictionaries(st.sampled_from(["a", "b", "c", "d"]), children, max_size=4),
    max_leaves=15,
)


@settings(max_examples=examples(200), deadline=None)
@given(st.dictionaries(st.sampled_from(["a", "b", "c"]), plain, max_size=4), st.dictionaries(st.sampled_from(["a", "b", "c"]), plain, max_size=4))
def test_merged_view_equals_deep_merge(base: dict[str, Any], patch: dict[str, Any]) -> None:
    base_copy, patch_copy = copy.deepcopy(base), copy.deepcopy(patch)
    assert merged_view(base, patch) == deep_merge(base, patch)
    assert base == base_copy and patch == patch_copy


def test_pool_selector_is_resolve_pool_s() -> None:
    pools = [
        {"name": "a", "os": {"id": "ubuntu", "version": "22.04"}},
        {"name": "b", "os": {"id": "rhel", "version": "9.4"}, "kernel": "5.14.0-1", "driver": {"usePrecompiled": True, "version": "570"}},
        {"name": "c", "os": {"id": "ubuntu", "version": "24.04"}, "driver": {"nodeSelector": {"x": "y", "feature.node.kubernetes.io/system-os_release.ID": "z"}}},
    ]
    values = with_defaults({"nodePools": pools, "driver": {"nodeSelector": {"fleet": "1"}}})
    for pool in pools:
        assert driverimage.pool_selector(values, pool) == driverimage.resolve_pool(values, pool).node_selector


def test_plan_models_are_the_plain_resolve_s() -> None:
    inputs = read_inputs(ROOT / "values.yaml", ROOT / "overlays")
    p = plan(inputs)
    assert p.base is not None and p.base == resolve(p.located[FLEET].data, FLEET)
    for name, model in p.clusters.items():
        assert model == resolve(p.located[name].data, name)
    # models do not share values with each other or the defaults
    first, second = list(p.clusters.values())[:2]
    assert first.values is not second.values and first.values["cluster"] is not second.values["cluster"]


def test_plan_problems_unchanged_for_many_overlays() -> None:
    fleet = FLEET_TEXT.encode()
    clusters = tuple(ClusterInput(f"c{i}", text.encode(), f"overlays/c{i}/values.yaml") for i, text in enumerate(OVERLAYS))
    p = plan(Inputs(fleet, "values.yaml", clusters))
    expected: set[Any] = set()
    for loc in p.located.values():
        expected.update(schema.validate(loc))
    got = {q for q in p.problems if q.code.startswith("schema-") or q.code == "unknown-key"}
    assert got == expected
