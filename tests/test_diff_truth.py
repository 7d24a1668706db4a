"""gpu-render diff says what a change really does: how driver pods are replaced, and counts
that match the sections (the fleet policy is not a cluster)."""

from __future__ import annotations

from renderer import diff_report
from renderer.diff import Diff, diff_sides, side_from_models
from renderer.inputs import ClusterInput, Inputs
from renderer.pipeline import plan

POOLS = "nodePools: [{name: ubuntu2204, os: {id: ubuntu, version: '22.04'}}]\ngitops: {repoURL: https://git.example.com/gpu.git}\n"
CLUSTERS = {"east": "gitops: {destination: {name: east}}\n", "west": "gitops: {destination: {name: west}}\n"}


def _side(label: str, values: str, clusters: dict[str, str]):  # type: ignore[no-untyped-def]
    p = plan(Inputs(values.encode(), "values.yaml", tuple(ClusterInput(n, v.encode(), f"overlays/{n}/values.yaml") for n, v in sorted(clusters.items()))))
    assert p.base is not None, [x.format() for x in p.problems]
    return side_from_models(label, p.base, p.clusters)


def _diff(old: str, new: str, clusters: dict[str, str] | None = None) -> Diff:
    clusters = CLUSTERS if clusters is None else clusters
    return diff_sides(_side("old", old, clusters), _side("new", new, clusters))


def _driver_reasons(d: Diff) -> list[str]:
    (reload,) = [x for x in d.disruptions() if x.cls == "driver-reload"]
    return [r for r in reload.reasons if "DaemonSet/nvidia-driver-daemonset" in r]


def test_rolling_driver_says_how_many_nodes_at_a_time() -> None:
    d = _diff(POOLS + "driver: {version: '570.124.06'}\n", POOLS + "driver: {version: '580.65.06'}\n")
    reasons = _driver_reasons(d)
    assert reasons and all("the DaemonSet controller rolls 1 node(s) at a time" in r for r in reasons), reasons
    assert not [r for r in reasons if "pods restart" in r]


def test_on_delete_driver_waits_for_you() -> None:
    policy = "driver: {version: '%s', upgradePolicy: {autoUpgrade: false}}\n"
    d = _diff(POOLS + policy % "570.124.06", POOLS + policy % "580.65.06")
    reasons = _driver_reasons(d)
    assert reasons and all("OnDelete waits for you to delete driver pods" in r for r in reasons), reasons
    assert not [r for r in reasons if "restart" in r and "nothing restarts" not in r]


def test_budget_from_the_policy_shows() -> None:
    policy = "driver: {version: '%s', upgradePolicy: {maxParallelUpgrades: 3, maxUnavailable: 2}}\n"
    d = _diff(POOLS + policy % "570.124.06", POOLS + policy % "580.65.06")
    assert all("rolls 2 node(s) at a time" in r for r in _driver_reasons(d))


def test_the_fleet_is_not_counted_as_a_cluster() -> None:
    d = _diff(POOLS + "driver: {version: '570.124.06'}\n", POOLS + "driver: {version: '580.65.06'}\n")
    assert set(d.scopes) == {"fleet", "east", "west"}
    out = diff_report.text(d)
    assert "all 2 clusters" in out and "all 3 clusters" not in out
    assert "fleet, all 2 clusters" in out
    md = diff_report.markdown(d)
    assert "| fleet + 2 clusters |" in md and "all 3 clusters" not in md


def test_one_cluster_is_named_not_all() -> None:
    d = _diff(POOLS + "driver: {version: '570.124.06'}\n", POOLS + "driver: {version: '580.65.06'}\n", {"east": CLUSTERS["east"]})
    assert "all 1 clusters" not in diff_report.text(d)


def test_plan_counts_match_the_sections() -> None:
    d = _diff(POOLS + "driver: {version: '570.124.06'}\n", POOLS + "driver: {version: '580.65.06'}\n")
    out = diff_report.text(d)
    plan_line = next(line for line in out.splitlines() if line.startswith("Plan: "))
    policy_section = out.split("\nPolicy changes\n", 1)[1].split("\n\n", 1)[0]
    listed = [line for line in policy_section.splitlines() if line.startswith("  ")]
    assert f"{len(listed)} policy value(s) changed" in plan_line, (plan_line, listed)
    objects = out.split("\nObjects\n", 1)[1].split("\n\n", 1)[0]
    changed = [line for line in objects.splitlines() if line.startswith("    ~ ")]
    assert f"{len(changed)} to change" in plan_line, (plan_line, len(changed))
