"""Label keys and values as the API server checks them: the operator copies ``daemonsets.labels``
onto every operand DaemonSet and pod without a check, so a bad one gives objects every
``kubectl apply`` refuses (found in an Argo CD Application of the corpus: a template's
``<GITOPS_REPOSITORY_NAME>-admin`` left in a label value)."""

from __future__ import annotations

from typing import Any

import pytest

from renderer import yamlio
from renderer.checks import label_key_error, label_value_error
from renderer.inputs import Inputs
from renderer.pipeline import plan

POOL = {"name": "a", "os": {"id": "ubuntu", "version": "22.04"}}


@pytest.mark.parametrize("key", ["app", "cost-center", "example.com/team", "a.b-c_d", "x" * 63, "k8s.io/" + "n" * 63, "a/b"])
def test_valid_label_keys_pass(key: str) -> None:
    assert label_key_error(key) == ""


@pytest.mark.parametrize("key", ["", "-a", "a-", "x" * 64, "Example.com/a", "a/", "/a", "a/b/c", "a b", "<x>"])
def test_invalid_label_keys_are_named(key: str) -> None:
    assert label_key_error(key)


@pytest.mark.parametrize(("value", "ok"), [("", True), ("24.3.0", True), ("x" * 63, True), ("x" * 64, False), ("<REPO>-admin", False), ("a b", False), ("-a", False)])
def test_label_values(value: str, ok: bool) -> None:
    assert (label_value_error(value) == "") is ok


def _errors(policy: dict[str, Any]) -> list[str]:
    p = plan(Inputs(yamlio.dump(policy).encode(), "values.yaml"))
    return [x.pointer for x in p.problems if x.code == "label-syntax"]


def test_every_label_map_the_render_writes_is_checked() -> None:
    pool = {**POOL, "driver": {"labels": {"ok": "<bad>"}, "nodeSelector": {"bad key": "x"}, "annotations": {"Upper.Case/Is-Fine": "x", "a b": "free text is fine"}}}
    policy = {
        "nodePools": [pool],
        "daemonsets": {"labels": {"team": "gpu", "example.com/owner": "a_b.c-d"}, "annotations": {"note": "any text: <here> too"}},
        "dcgmExporter": {"serviceMonitor": {"additionalLabels": {"release": "kube prometheus"}}},
        "nfd": {"worker": {"nodeSelector": {"node-pool": "gpu/a"}}},
    }
    assert sorted(_errors(policy)) == [
        "/dcgmExporter/serviceMonitor/additionalLabels/release",
        "/nfd/worker/nodeSelector/node-pool",
        "/nodePools/0/driver/annotations/a b",
        "/nodePools/0/driver/labels/ok",
        "/nodePools/0/driver/nodeSelector/bad key",
    ]


def test_valid_labels_render_on_every_operand() -> None:
    p = plan(Inputs(yamlio.dump({"nodePools": [POOL], "daemonsets": {"labels": {"cg-devx.metadata.version": "24.3.0"}}}).encode(), "values.yaml"))
    assert not [x for x in p.problems if x.severity.name == "ERROR"]


def test_a_pools_seeded_label_values_are_checked() -> None:
    """devicePluginConfig and mig.config become node labels of the pool's nodes."""
    pool = {**POOL, "devicePluginConfig": "a b", "mig": {"config": "all-1g.10gb"}}
    policy = {"nodePools": [pool], "devicePlugin": {"config": {"name": "plugin-config", "data": {"a b": "version: v1\n"}}}}
    assert _errors(policy) == ["/nodePools/0/devicePluginConfig"]
