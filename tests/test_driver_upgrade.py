"""Driver upgrades by the DaemonSet controller: ``driver.upgradePolicy`` sets the update strategy."""

from __future__ import annotations

from typing import Any

import pytest

from renderer import yamlio
from renderer.components import driver
from renderer.inputs import Inputs
from renderer.pipeline import plan
from renderer.render import render

POOL = "nodePools: [{name: ubuntu2204, os: {id: ubuntu, version: '22.04'}}]\n"


def driver_daemonsets(values: str) -> list[dict[str, Any]]:
    files = render(Inputs((POOL + values).encode(), "values.yaml"))
    return [
        doc
        for path, text in sorted(files.items())
        if path.startswith("base/driver/daemonset-")
        for doc in yamlio.load_all(text)
    ]


def test_auto_upgrade_default_rolls_one_node_at_a_time() -> None:
    """The operator's defaults (autoUpgrade true, maxParallelUpgrades 1, maxUnavailable 25%)."""
    (ds,) = driver_daemonsets("")
    assert ds["spec"]["updateStrategy"] == {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1, "maxSurge": 0}}
    assert ds["spec"]["minReadySeconds"] == driver.MIN_READY_SECONDS


def test_auto_upgrade_false_keeps_on_delete() -> None:
    (ds,) = driver_daemonsets("driver: {upgradePolicy: {autoUpgrade: false, maxParallelUpgrades: 3}}\n")
    assert ds["spec"]["updateStrategy"] == {"type": "OnDelete"}
    assert "minReadySeconds" not in ds["spec"]


@pytest.mark.parametrize(
    ("policy", "budget"),
    [
        ({}, 1),
        ({"maxParallelUpgrades": 3}, 3),
        ({"maxParallelUpgrades": 3, "maxUnavailable": 2}, 2),
        ({"maxParallelUpgrades": 2, "maxUnavailable": 5}, 2),
        ({"maxParallelUpgrades": 0, "maxUnavailable": 4}, 4),
        ({"maxParallelUpgrades": 0, "maxUnavailable": "30%"}, "30%"),
        ({"maxParallelUpgrades": 0}, "25%"),
        ({"maxUnavailable": 0}, 0),
        ({"maxUnavailable": "0%", "maxParallelUpgrades": 0}, 0),
    ],
)
def test_budget_is_the_tighter_of_the_two_bounds(policy: dict[str, Any], budget: int | str) -> None:
    assert driver.upgrade_budget(policy) == budget


def test_a_zero_budget_keeps_on_delete() -> None:
    (ds,) = driver_daemonsets("driver: {upgradePolicy: {maxUnavailable: 0}}\n")
    assert ds["spec"]["updateStrategy"] == {"type": "OnDelete"}


def test_the_rolling_update_is_bounded_by_the_policy_per_pool() -> None:
    values = "driver: {upgradePolicy: {maxParallelUpgrades: 4, maxUnavailable: 3}}\n"
    (ds,) = driver_daemonsets(values)
    assert ds["spec"]["updateStrategy"]["rollingUpdate"] == {"maxUnavailable": 3, "maxSurge": 0}


def test_driver_manager_empties_the_node_before_the_unload() -> None:
    """Each replaced pod's k8s-driver-manager evicts GPU pods (and drains, if asked) first."""
    (ds,) = driver_daemonsets("driver: {upgradePolicy: {drain: {enable: true, timeoutSeconds: 120}}}\n")
    (manager,) = ds["spec"]["template"]["spec"]["initContainers"]
    env = {e["name"]: e.get("value") for e in manager["env"]}
    assert manager["args"] == ["uninstall_driver"]
    assert env["ENABLE_GPU_POD_EVICTION"] == "true"
    assert env["ENABLE_AUTO_DRAIN"] == "true"
    assert env["DRAIN_TIMEOUT_SECONDS"] == "120s"


@pytest.mark.parametrize("key", ["autoUpgrade: true", "maxParallelUpgrades: 2", "maxUnavailable: 1"])
def test_the_rolling_keys_no_longer_warn(key: str) -> None:
    p = plan(Inputs(f"{POOL}driver: {{upgradePolicy: {{{key}}}}}\n".encode(), "values.yaml"))
    assert not [x for x in p.problems if "upgradePolicy" in x.pointer], [x.format() for x in p.problems]


def test_wait_for_completion_still_warns() -> None:
    p = plan(Inputs(f"{POOL}driver: {{upgradePolicy: {{waitForCompletion: {{timeoutSeconds: 60}}}}}}\n".encode(), "values.yaml"))
    assert [x.code for x in p.problems if x.pointer == "/driver/upgradePolicy/waitForCompletion"] == ["operator-only"]
