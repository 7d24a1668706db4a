"""Fuzz smoke tests (hypothesis): no input makes load, merge, validate or plan raise.

Example counts are fixed and the runs derandomized, so CI is stable and the file stays fast.
"""

from __future__ import annotations

import copy
import io
import json
import random
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from ruamel.yaml import YAML

from renderer import resolve
from renderer.inputs import ClusterInput, Inputs
from renderer.loader import load_text
from renderer.merge import from_source, merge
from renderer.pipeline import plan
from renderer.schema import load_schema, validate
from tests.conftest import examples

FAST = settings(max_examples=examples(100), deadline=None, derandomize=True, database=None, suppress_health_check=[HealthCheck.too_slow])

# --- strategies ---------------------------------------------------------------------------

TOKENS = [
    "a", "driver", "version", "nodePools", "name", ":", ": ", "- ", "-", "\n", "  ", "    ", "\t",
    "[", "]", "{", "}", ",", "'", '"', "#", "&x ", "*x", "<<: ", "!!python/object/apply:os.system ",
    "!foo ", "!!str ", "!!binary ", "? ", "|", ">", "---", "...", "%YAML 1.1", "~", "null", "true",
    "1.30", "0x1f", "1e400", "é", "\ufeff", "\x00", "\\", "%", "._", "-.", "+.__", "0o", "0b", "0x",
    ".inf", ".NaN", "1_000", "2024-01-02", "=", "<<",
]
yaml_like = st.lists(st.sampled_from(TOKENS), max_size=40).map("".join)

# Printable text: YAML emitters and loaders disagree on line breaks such as U+0085, which is
# not what these tests are about (arbitrary characters go through the raw-text tests above).
TEXT = st.characters(blacklist_categories=("Cs", "Cc", "Zl", "Zp"), blacklist_characters="\x85\ufeff")
SCALARS = st.one_of(
    st.none(), st.booleans(), st.integers(-(2**70), 2**70), st.floats(allow_nan=False),
    st.text(TEXT, max_size=20),
)
KEYS = st.one_of(st.sampled_from([*sorted(load_schema()["properties"]), "name", "enabled", "version", "env", "os"]), st.text(TEXT, min_size=1, max_size=10))
trees = st.recursive(
    SCALARS,
    lambda children: st.one_of(st.lists(children, max_size=4), st.dictionaries(KEYS, children, max_size=5)),
    max_leaves=25,
)
roots = st.dictionaries(KEYS, trees, max_size=6)


def as_yaml(tree: object) -> str:
    """Block-style YAML 1.2 (ruamel's emitter: PyYAML's 1.1 rules read some characters differently)."""
    out = io.StringIO()
    dumper = YAML(typ="safe", pure=True)
    dumper.default_flow_style = False
    dumper.dump(tree, out)
    return out.getvalue()


def values_inputs(fleet: str, overlay: str | None = None) -> Inputs:
    clusters = () if overlay is None else (ClusterInput("prod", overlay.encode("utf-8", "surrogatepass"), "overlays/prod/values.yaml"),)
    return Inputs(fleet.encode("utf-8", "surrogatepass"), "values.yaml", clusters)


# --- properties -------------------------------------------------------------------------


@FAST
@given(st.text(max_size=200))
def test_arbitrary_text_never_raises(text: str) -> None:
    source, problems = load_text(text, "v.yaml")
    assert (source is None) == bool(problems)


@FAST
@given(st.binary(max_size=200))
def test_arbitrary_bytes_never_raise(raw: bytes) -> None:
    source, problems = load_text(raw, "v.yaml")
    assert (source is None) == bool(problems)


@FAST
@given(yaml_like, yaml_like)
def test_yaml_like_text_never_raises_through_plan(fleet: str, overlay: str) -> None:
    result = plan(values_inputs(fleet, overlay))
    for p in result.problems:
        assert p.line >= 1 and p.column >= 1 and p.file in ("values.yaml", "overlays/prod/values.yaml")


@settings(FAST, max_examples=examples(50))
@given(roots)
def test_json_like_trees_load_back_equal(tree: dict[str, Any]) -> None:
    source, problems = load_text(as_yaml(tree), "v.yaml")
    assert problems == [] and source is not None
    assert source.data == json.loads(json.dumps(tree))


@settings(FAST, max_examples=examples(40))
@given(roots, roots)
def test_json_like_trees_never_raise_in_merge_validate_plan(fleet: dict[str, Any], overlay: dict[str, Any]) -> None:
    fleet_src, _ = load_text(as_yaml(fleet), "values.yaml")
    overlay_src, _ = load_text(as_yaml(overlay), "overlays/prod/values.yaml")
    assert fleet_src is not None and overlay_src is not None
    located = merge(from_source(fleet_src), overlay_src)
    for p in validate(located):
        assert p.file in ("values.yaml", "overlays/prod/values.yaml") and p.line >= 1
    plan(values_inputs(as_yaml(fleet), as_yaml(overlay)))


def mutations(defaults: dict[str, Any], rng: random.Random, count: int) -> dict[str, Any]:
    """defaults.yaml with a few leaves changed to other schema-valid values."""
    from jsonschema import Draft202012Validator

    validator = Draft202012Validator(load_schema())
    out = copy.deepcopy(defaults)
    leaves: list[tuple[list[str], Any]] = []

    def walk(node: dict[str, Any], path: list[str]) -> None:
        for key, value in node.items():
            if isinstance(value, dict) and value:
                walk(value, [*path, key])
            else:
                leaves.append(([*path, key], value))

    walk(out, [])
    for path, value in rng.sample(leaves, min(count, len(leaves))):
        node = out
        for key in path[:-1]:
            node = node[key]
        for candidate in _alternatives(value, rng):
            node[path[-1]] = candidate
            if validator.is_valid(out):
                break
            node[path[-1]] = value
    return out


def _alternatives(value: Any, rng: random.Random) -> list[Any]:
    if isinstance(value, bool):
        return [not value]
    if isinstance(value, int):
        return [value + rng.randint(1, 5), 0]
    if isinstance(value, str):
        return ["none", "single", "mixed", "open", "proprietary", "OnDelete", "kata", "vm-vgpu", "Local", "crio", "docker", "applications", "clusters", "v25.10", "v26.3", "1.33", "Always", value + "x", ""][rng.randint(0, 8) :]
    if isinstance(value, list):
        return [[], value[:1]]
    return []


@settings(FAST, max_examples=examples(20))
@given(st.integers(0, 2**32), st.integers(1, 12))
def test_plan_of_mutated_defaults_never_raises(seed: int, count: int) -> None:
    values = mutations(resolve.defaults(), random.Random(seed), count)
    values["nodePools"] = [{"name": "a", "os": {"id": "ubuntu", "version": "22.04"}}]
    result = plan(values_inputs(as_yaml(values)))
    assert all(p.line >= 1 for p in result.problems)
