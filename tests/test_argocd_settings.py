"""Every Argo CD setting is honoured or refused: the checks on ``gitops`` and what they keep."""

from __future__ import annotations

from typing import Any

import pytest

from renderer import yamlio
from renderer.inputs import ClusterInput, Inputs
from renderer.pipeline import plan
from renderer.problems import Problem, Severity
from renderer.render import render
from renderer.waves import SYNC_OPTIONS

POOLS = "nodePools: [{name: ubuntu2204, os: {id: ubuntu, version: '22.04'}}]\n"
REPO = "https://git.example.com/gpu.git"


def _inputs(gitops: str, clusters: dict[str, str]) -> Inputs:
    values = POOLS + (f"gitops: {gitops}\n" if gitops else "")
    return Inputs(values.encode(), "values.yaml", tuple(ClusterInput(n, v.encode(), f"overlays/{n}/values.yaml") for n, v in sorted(clusters.items())))


def problems(gitops: str, clusters: dict[str, str]) -> list[Problem]:
    return [p for p in plan(_inputs(gitops, clusters)).problems if p.code.startswith("gitops-")]


def test_empty_repo_url_is_an_error_with_a_hint() -> None:
    """values.yaml configures Argo CD (a gitops section) but names no repository."""
    (p,) = problems("{project: gpu}", {"a": "gitops: {destination: {name: a}}\n"})
    assert p.severity is Severity.ERROR and p.pointer == "/gitops/repoURL" and p.file == "values.yaml"
    assert "Git repository" in p.hint


def test_empty_repo_url_without_a_gitops_section_warns() -> None:
    """A policy that never mentions Argo CD (kubectl or Helm only) is warned, not stopped."""
    (p,) = problems("", {"a": "gitops: {destination: {name: a}}\n"})
    assert p.severity is Severity.WARNING and p.pointer == "/gitops/repoURL"


def test_empty_repo_url_without_overlays_is_fine() -> None:
    """No overlay, no Argo CD intended: base/ and the chart are used on their own."""
    assert problems("", {}) == []


def test_fleet_for_argo_cd_without_overlays_warns() -> None:
    (p,) = problems(f"{{repoURL: {REPO}}}", {})
    assert p.severity is Severity.WARNING and p.code == "gitops-no-clusters"
    assert "generates no Application" in p.message


@pytest.mark.parametrize("key", ["targetRevision: v2", "group: canary", "destination: {server: https://x.example.com}"])
def test_clusters_generator_refuses_per_cluster_settings(key: str) -> None:
    (p,) = problems(f"{{repoURL: {REPO}, generator: clusters}}", {"a": f"gitops: {{{key}}}\n"})
    assert p.severity is Severity.ERROR and p.file == "overlays/a/values.yaml"
    assert p.pointer == "/gitops/" + key.split(":")[0] and "generator: clusters" in p.message


def test_list_generator_carries_per_cluster_settings() -> None:
    files = render(_inputs(f"{{repoURL: {REPO}}}", {"a": "gitops: {targetRevision: v2, group: canary, destination: {name: a}}\n", "b": "gitops: {destination: {name: b}}\n"}))
    (appset,) = yamlio.load_all(files["argocd/applicationset.yaml"])
    elements = {e["cluster"]: e for e in appset["spec"]["generators"][0]["list"]["elements"]}
    assert (elements["a"]["targetRevision"], elements["a"]["group"], elements["a"]["destinationName"]) == ("v2", "canary", "a")
    assert (elements["b"]["targetRevision"], elements["b"]["group"]) == ("HEAD", "default")


@pytest.mark.parametrize("key", ["syncPolicy: {automated: null}", "repoURL: https://other.example.com/r.git", "rollingSync: {enabled: true}"])
def test_overlays_cannot_change_fleet_settings(key: str) -> None:
    (p,) = problems(f"{{repoURL: {REPO}}}", {"a": f"gitops: {{destination: {{name: a}}, {key}}}\n"})
    assert p.severity is Severity.ERROR and p.file == "overlays/a/values.yaml" and "fleet setting" in p.message


def test_applications_layout_refuses_rolling_sync() -> None:
    (p,) = problems(f"{{repoURL: {REPO}, layout: applications, rollingSync: {{enabled: true}}}}", {"a": ""})
    assert p.severity is Severity.ERROR and p.pointer == "/gitops/rollingSync/enabled"


def _template_sync_policy(gitops: str) -> Any:
    files = render(_inputs(gitops, {"a": "gitops: {group: canary}\n"}))
    (appset,) = yamlio.load_all(files["argocd/applicationset.yaml"])
    return appset["spec"]["template"]["spec"].get("syncPolicy")


def test_rolling_sync_drops_self_heal_with_a_warning() -> None:
    gitops = f"{{repoURL: {REPO}, rollingSync: {{enabled: true}}}}"
    (p,) = problems(gitops, {"a": "gitops: {group: canary}\n"})
    assert p.severity is Severity.WARNING and p.pointer == "/gitops/syncPolicy/automated"
    assert _template_sync_policy(gitops) == {"automated": {"prune": True}}


def test_rolling_sync_with_prune_only_is_quiet() -> None:
    gitops = f"{{repoURL: {REPO}, rollingSync: {{enabled: true}}, syncPolicy: {{automated: {{prune: true, selfHeal: false}}}}}}"
    assert problems(gitops, {"a": "gitops: {group: canary}\n"}) == []


def test_without_rolling_sync_automated_is_kept() -> None:
    assert _template_sync_policy(f"{{repoURL: {REPO}}}") == {"automated": {"prune": True, "selfHeal": True}}


def test_servicemonitor_skips_dry_run_when_its_crd_is_missing() -> None:
    values = POOLS + "cluster: {capabilities: {serviceMonitor: true}}\ndcgmExporter: {serviceMonitor: {enabled: true}}\n"
    files = render(Inputs(values.encode(), "values.yaml"))
    monitors = [d for p, t in files.items() if p.startswith("base/") for d in yamlio.load_all(t) if d.get("kind") == "ServiceMonitor"]
    assert monitors
    for sm in monitors:
        assert sm["metadata"]["annotations"][SYNC_OPTIONS] == "SkipDryRunOnMissingResource=true"
    off = POOLS + "cluster: {capabilities: {serviceMonitor: false}}\ndcgmExporter: {serviceMonitor: {enabled: true}}\n"
    files = render(Inputs(off.encode(), "values.yaml"))
    assert not [p for p in files if "servicemonitor" in p.lower() and p.startswith("base/")]
