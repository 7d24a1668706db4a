"""validate sees what the cluster would refuse: CRD fields, Kubernetes version spellings,
a driver with no pool, a list at the top level (reported where the list starts)."""

from __future__ import annotations

from typing import Any

import pytest

from renderer import yamlio
from renderer.inputs import Inputs
from renderer.pipeline import plan
from renderer.schema import load_schema
from tests.conftest import ROOT

POOL = 'nodePools: [{name: a, os: {id: ubuntu, version: "22.04"}}]\n'


def _problems(text: str) -> list[Any]:
    return list(plan(Inputs(text.encode(), "values.yaml")).problems)


def test_relabel_config_is_the_crds() -> None:
    crd = yamlio.load((ROOT / "tests/data/monitoring.coreos.com_servicemonitors.yaml").read_text())
    item = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]["endpoints"]["items"]["properties"]["relabelings"]["items"]
    ours = load_schema()["$defs"]["relabelConfig"]
    assert set(ours["properties"]) == set(item["properties"])
    assert ours["properties"]["action"]["enum"] == item["properties"]["action"]["enum"]
    assert ours["additionalProperties"] is False  # the API server's strict field validation


def test_snake_case_relabeling_fails_at_its_key() -> None:
    text = POOL + "dcgmExporter:\n  serviceMonitor:\n    relabelings:\n      - source_labels: [__meta_kubernetes_pod_node_name]\n        target_label: node\n"
    got = [(p.line, p.column, p.pointer) for p in _problems(text)]
    assert (5, 9, "/dcgmExporter/serviceMonitor/relabelings/0/source_labels") in got


@pytest.mark.parametrize("version", ["1.31", "1.31.0", "v1.31.0"])
def test_kube_version_spellings(version: str) -> None:
    p = plan(Inputs(f'cluster: {{kubeVersion: "{version}"}}\n{POOL}'.encode(), "values.yaml"))
    assert not p.problems
    assert p.base is not None and p.base.kube_version == "1.31"


def test_driver_without_pools_is_an_error() -> None:
    got = _problems("driver: {enabled: true}\n")
    assert [(p.code, p.line, p.severity.name) for p in got] == [("driver-no-pools", 1, "ERROR")]
    assert "nodePools" in got[0].hint
    assert _problems("driver: {enabled: false}\n") == []
    # a policy that never names the driver: a warning only
    assert [(p.code, p.severity.name) for p in _problems("mig: {strategy: single}\n")] == [("driver-no-pools", "WARNING")]


def test_top_level_list_reported_where_it_starts() -> None:
    got = _problems("# a comment\n\n- driver\n")
    assert [(p.line, p.column, p.code) for p in got] == [(3, 1, "root-not-mapping")]
