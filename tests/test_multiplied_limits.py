"""What the render multiplies is bounded: every list and map of the schema has a size limit,
daemonsets.* and the fleet driver section, copied into every DaemonSet, are bounded by what
they copy in total, and annotations by Kubernetes' own 256 KiB. One over each is refused with
file:line:col, before anything is rendered."""

from __future__ import annotations

import re
from typing import Any

import pytest

from renderer import checks, schema
from renderer.inputs import ClusterInput, Inputs
from renderer.pipeline import plan
from tests.conftest import ROOT

BASE = (ROOT / "values.yaml").read_text()


def errors(extra: str, overlay: str | None = None) -> list[str]:
    clusters = () if overlay is None else (ClusterInput("c1", overlay.encode(), "overlays/c1/values.yaml"),)
    p = plan(Inputs((BASE + extra).encode(), "values.yaml", clusters))
    return [x.format() for x in p.problems if x.severity.value == "error"]


def test_every_list_and_map_of_the_schema_is_bounded() -> None:
    unbounded: list[str] = []

    def walk(node: Any, where: str) -> None:
        if isinstance(node, dict):
            types = node.get("type") if isinstance(node.get("type"), list) else [node.get("type")]
            if "array" in types and "maxItems" not in node:
                unbounded.append(where)
            if "object" in types and "properties" not in node and "maxProperties" not in node:
                unbounded.append(where)
            for key, value in node.items():
                if key not in ("default", "examples", "enum", "const"):
                    walk(value, f"{where}/{key}")
        elif isinstance(node, list):
            for value in node:
                walk(value, where)

    walk(schema.load_schema(), "")
    assert unbounded == []


def _labels(n: int) -> str:
    return "".join(f"    example.com/l{i}: v\n" for i in range(n))


ONE_OVER = [
    ("daemonsets-labels", "daemonsets:\n  labels:\n" + _labels(257), "/daemonsets/labels", "257 keys, at most 256"),
    ("daemonsets-annotations", "daemonsets:\n  annotations:\n" + _labels(257), "/daemonsets/annotations", "257 keys, at most 256"),
    ("daemonsets-tolerations", "daemonsets:\n  tolerations:\n" + "".join(f"    - {{key: k{i}, operator: Exists}}\n" for i in range(257)), "/daemonsets/tolerations", "257 entries, at most 256"),
    ("env", "devicePlugin:\n  env:\n" + "".join(f"    - {{name: E{i}, value: v}}\n" for i in range(257)), "/devicePlugin/env", "257 entries, at most 256"),
    ("args", "toolkit:\n  args: [" + ",".join(["a"] * 257) + "]\n", "/toolkit/args", "257 entries, at most 256"),
    ("pull-secrets", "gfd:\n  imagePullSecrets: [" + ",".join(f"s{i}" for i in range(257)) + "]\n", "/gfd/imagePullSecrets", "257 entries, at most 256"),
    ("operator-pod-labels", "operator:\n  podLabels:\n" + _labels(257), "/operator/podLabels", "257 keys, at most 256"),
]


@pytest.mark.parametrize(("case", "extra", "pointer", "message"), ONE_OVER, ids=[c[0] for c in ONE_OVER])
def test_one_over_the_schema_limit_is_refused_with_a_position(case: str, extra: str, pointer: str, message: str) -> None:
    found = errors(extra)
    assert len(found) == 1, found
    assert re.match(rf"values\.yaml:\d+:\d+: {re.escape(pointer)}: {message} are accepted \(", found[0]), found


def test_the_limit_itself_is_accepted() -> None:
    assert errors("daemonsets:\n  labels:\n" + _labels(256)) == []


def test_too_many_node_pools_are_refused_with_a_position() -> None:
    pools = "".join(f"  - name: p{i}\n    os: {{id: ubuntu, version: \"30.{i}\"}}\n" for i in range(257))
    p = plan(Inputs(BASE.replace("nodePools:\n", "nodePools:\n" + pools, 1).encode(), "values.yaml"))
    found = [x.format() for x in p.problems if x.severity.value == "error"]
    assert any(re.match(r"values\.yaml:8:3: /nodePools: 259 entries, at most 256 are accepted", f) for f in found), found[:3]


def test_an_overlay_over_the_limit_is_refused_in_the_overlay() -> None:
    found = errors("", "daemonsets:\n  labels:\n" + _labels(257))
    assert found and all(f.startswith("overlays/c1/values.yaml:3:5: /daemonsets/labels: 257 keys") for f in found), found


def test_annotations_beyond_kubernetes_total_are_refused() -> None:
    value = "x" * 70_000
    extra = "daemonsets:\n  annotations:\n" + "".join(f"    example.com/a{i}: {value}\n" for i in range(4))
    found = errors(extra)
    assert any(re.match(r"values\.yaml:\d+:5: /daemonsets/annotations: annotations of 280,0\d\d bytes, at most 262,144", f) for f in found), found


def test_what_every_daemonset_copies_is_bounded() -> None:
    # 256 long labels and 256 long tolerations: each within the schema, together copied into
    # every DaemonSet far beyond the bound
    labels = "".join(f"    {'p' * 200}.example.com/k{i:03d}: {'v' * 63}\n" for i in range(256))
    tolerations = "".join(f"    - {{key: {'p' * 200}.example.com/t{i:03d}, operator: Equal, value: {'v' * 63}}}\n" for i in range(256))
    found = errors("", f"daemonsets:\n  labels:\n{labels}  tolerations:\n{tolerations}")
    assert len(found) == 1, found
    assert re.match(r"overlays/c1/values\.yaml:\d+:5: /daemonsets/(labels|tolerations): the render would copy [\d,]+ bytes \([\d,]+ entries\) into its DaemonSets, at most 2,097,152 bytes", found[0]), found


def test_the_fleet_driver_section_counts_once_per_pool() -> None:
    env = "".join(f"    - {{name: E{i:03d}, value: {'v' * 1000}}}\n" for i in range(100))
    fleet = BASE.replace('driver:\n  version: "595.91.07"\n', 'driver:\n  version: "595.91.07"\n  env:\n' + env)
    assert fleet != BASE
    pools = "".join(f"  - name: p{i}\n    os: {{id: ubuntu, version: \"30.{i}\"}}\n" for i in range(24))
    one = plan(Inputs(fleet.encode(), "values.yaml", (ClusterInput("c1", ("nodePools:\n" + pools[: pools.index("  - name: p2\n")]).encode(), "overlays/c1/values.yaml"),)))
    assert [x.format() for x in one.problems if x.severity.value == "error"] == []
    many = plan(Inputs(fleet.encode(), "values.yaml", (ClusterInput("c1", ("nodePools:\n" + pools).encode(), "overlays/c1/values.yaml"),)))
    found = [x.format() for x in many.problems if x.severity.value == "error"]
    assert len(found) == 1 and re.match(r"values\.yaml:\d+:\d+: /driver: the render would copy", found[0]), found


def test_the_largest_accepted_overlay_is_accepted() -> None:
    import importlib.machinery
    import importlib.util

    loader = importlib.machinery.SourceFileLoader("fuzz_script", str(ROOT / "scripts" / "fuzz"))
    spec = importlib.util.spec_from_loader("fuzz_script", loader)
    assert spec is not None
    fuzz = importlib.util.module_from_spec(spec)
    loader.exec_module(fuzz)
    staging = (ROOT / "overlays" / "staging" / "values.yaml").read_text()
    text = fuzz.most_copied(staging)
    clusters = (ClusterInput("staging", text.encode(), "overlays/staging/values.yaml"),)
    p = plan(Inputs(BASE.encode(), "values.yaml", clusters))
    assert [x.format() for x in p.problems if x.severity.value == "error"] == []
    assert len(text.encode()) * (2 + checks.OPERAND_DAEMONSETS) > checks.MAX_COPIED_BYTES // 2
