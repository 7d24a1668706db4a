"""The schema closes the gaps a hostile policy used: every value it accepts renders output the
cluster accepts (int32/int64 ranges, quantities, image references, no trailing newlines, no
control or bidi characters in names, tags and paths, bounded identifiers)."""

from __future__ import annotations

import re
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from renderer import schema
from renderer.inputs import Inputs
from renderer.pipeline import plan
from tests.conftest import ROOT

BASE = (ROOT / "values.yaml").read_text()
PREFIX_ONLY = {r"\S", "^/", "^(Replace|Force|ServerSideApply)="}
"""Patterns that check how a value starts (or that it is not blank), not where it ends: the
line-break and control-character rules (``checks.text_rules``) cover their fields."""


def all_patterns() -> list[str]:
    found: set[str] = set()
    stack: list[Any] = [schema.load_schema()]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            if isinstance(node.get("pattern"), str):
                found.add(node["pattern"])
            if isinstance(node.get("patternProperties"), dict):
                found.update(node["patternProperties"])
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return sorted(found)


def test_the_schema_has_patterns() -> None:
    assert len(all_patterns()) > 10


@pytest.mark.parametrize("pattern", all_patterns())
@settings(max_examples=10, deadline=None)
@given(data=st.data())
def test_every_schema_pattern_refuses_a_trailing_newline(pattern: str, data: st.DataObject) -> None:
    matching = data.draw(st.from_regex(re.compile(schema.anchored(pattern)), fullmatch=False).filter(lambda s: "\n" not in s))
    compiled = schema._compiled(pattern)
    assert compiled.search(matching)
    if pattern in PREFIX_ONLY:
        return
    assert pattern.endswith("$"), f"{pattern!r}: end-anchor it, or list it in PREFIX_ONLY"
    assert not compiled.search(matching + "\n"), f"{pattern!r} accepts {matching!r} + newline"


def problems(extra: str, overlay: str | None = None, base: str = BASE) -> list[str]:
    clusters = ()
    if overlay is not None:
        from renderer.inputs import ClusterInput

        clusters = (ClusterInput("c1", overlay.encode(), "overlays/c1/values.yaml"),)
    p = plan(Inputs((base + extra).encode(), "values.yaml", clusters))
    return [f"{x.format()}" for x in p.problems if x.severity.value == "error"]


REFUSED = [
    ("namespace-newline", 'cluster:\n  namespace: "gpu-operator\\n"\n'),
    ("pool-newline", 'nodePools:\n  - name: "gpu\\n"\n    os: {id: ubuntu, version: "22.04"}\n'),
    ("cpu-inf", "devicePlugin:\n  resources:\n    limits:\n      cpu: 1e400\n"),
    ("cpu-nan", "devicePlugin:\n  resources:\n    limits:\n      cpu: .nan\n"),
    ("cpu-string-exponent", 'devicePlugin:\n  resources:\n    limits:\n      cpu: "1e400"\n'),
    ("cpu-two-suffixes", 'devicePlugin:\n  resources:\n    limits:\n      cpu: "1e3Ki"\n'),
    ("cpu-dots", 'devicePlugin:\n  resources:\n    limits:\n      cpu: "1.2.3"\n'),
    ("toleration-int64", "daemonsets:\n  tolerations:\n    - key: a\n      operator: Exists\n      tolerationSeconds: 9223372036854775808\n"),
    ("probe-int32", "driver:\n  startupProbe:\n    initialDelaySeconds: 2147483648\n"),
    ("image-nul", 'devicePlugin:\n  version: "v1\\0"\n'),
    ("image-bidi", 'devicePlugin:\n  image: "k8s-device-plugin\\u202e"\n'),
    ("image-space", 'devicePlugin:\n  repository: "nvcr.io/nvidia evil"\n'),
    ("image-huge", "devicePlugin:\n  image: " + "a" * 120_000 + "\n"),
    ("tag-newline", 'devicePlugin:\n  version: "v0.20.0\\n"\n'),
    ("tag-upper-digest", "devicePlugin:\n  version: sha256:" + "A" * 64 + "\n"),
    ("path-newline", 'hostPaths:\n  rootFS: "/\\nevil"\n'),
    ("label-key-newline", 'daemonsets:\n  labels:\n    "a\\nb": c\n'),
    ("bidi-anywhere", 'daemonsets:\n  annotations:\n    note: "safe\\u202eevil"\n'),
]


@pytest.mark.parametrize(("case", "extra"), REFUSED, ids=[c for c, _ in REFUSED])
def test_hostile_values_are_refused(case: str, extra: str) -> None:
    found = problems(extra)
    assert found, f"{case} was accepted"
    assert all(re.match(r"values\.yaml:\d+:\d+: ", p) for p in found), found


def test_the_limits_still_accept_real_values() -> None:
    ok = (
        "daemonsets:\n  tolerations:\n    - key: a\n      operator: Exists\n      tolerationSeconds: 9223372036854775807\n"
        "devicePlugin:\n  version: sha256:" + "a" * 64 + "\n  resources:\n    limits:\n      cpu: 500m\n      memory: 1.5Gi\n    requests:\n      cpu: 0.25\n      memory: 1e3\n"
        "driver:\n  version: \"595.91.07\"\n  startupProbe:\n    initialDelaySeconds: 2147483647\n"
    )
    assert problems(ok, base=BASE.replace('driver:\n  version: "595.91.07"\n', "")) == []


def test_an_overlay_cannot_set_a_namespace_with_a_newline() -> None:
    found = problems("", 'cluster:\n  namespace: "gpu-operator\\n"\n')
    assert any(p.startswith("overlays/c1/values.yaml:2:14: /cluster/namespace") for p in found), found


def test_cluster_names_are_anchored() -> None:
    from renderer.checks import cluster_name

    assert cluster_name("prod\n", "overlays/prod\n/values.yaml")
    assert cluster_name("prod", "overlays/prod/values.yaml") == []
