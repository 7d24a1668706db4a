"""Deletion never takes a cluster's GPU stack: Argo CD's finalizer and prune rules, modelled.

The model follows Argo CD's code (argoproj/argo-cd, master 2026-12):

* ApplicationSet controller (``applicationset/utils`` RenderTemplateParams): a generated
  Application gets the ``resources-finalizer.argocd.argoproj.io`` finalizer when the template
  has no finalizers and ``spec.syncPolicy.preserveResourcesOnDeletion`` is not true. An
  element that disappears (a removed or renamed overlay) deletes its Application; so does
  deleting the ApplicationSet (owner references).
* Application controller: deleting an Application with the resources finalizer deletes its
  managed objects, except those annotated ``argocd.argoproj.io/sync-options: Delete=false``;
  without the finalizer nothing is deleted. A sync with prune deletes objects that left the
  render, except those with ``Prune=false``.
"""

from __future__ import annotations

from typing import Any

from renderer import yamlio
from renderer.inputs import ClusterInput, Inputs
from renderer.render import render
from renderer.waves import SYNC_OPTIONS

FINALIZER = "resources-finalizer.argocd.argoproj.io"
FLEET = "nodePools: [{name: ubuntu2204, os: {id: ubuntu, version: '22.04'}}]\ngitops: {repoURL: https://git.example.com/gpu.git}\n"
CLUSTERS = {"east": "gitops: {destination: {name: east}}\n", "west": "gitops: {destination: {name: west}}\n"}


def _render(values: str, clusters: dict[str, str]) -> dict[str, str]:
    return render(Inputs(values.encode(), "values.yaml", tuple(ClusterInput(n, v.encode(), f"overlays/{n}/values.yaml") for n, v in sorted(clusters.items()))))


def _docs(files: dict[str, str], prefix: str) -> list[dict[str, Any]]:
    return [d for p, t in sorted(files.items()) if p.startswith(prefix) and p.endswith(".yaml") for d in yamlio.load_all(t) if d.get("kind") != "Kustomization"]


def _options(obj: dict[str, Any]) -> set[str]:
    text = str((obj["metadata"].get("annotations") or {}).get(SYNC_OPTIONS, ""))
    return {o.strip() for o in text.split(",") if o.strip()}


def generated_finalizers(appset: dict[str, Any]) -> list[str]:
    """The finalizers the ApplicationSet controller puts on each Application it generates."""
    template = appset["spec"]["template"]["metadata"].get("finalizers") or []
    preserve = (appset["spec"].get("syncPolicy") or {}).get("preserveResourcesOnDeletion") is True
    return list(template) if template or preserve else [FINALIZER]


def delete_application(finalizers: list[str], live: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """What stays in the cluster after its Application is deleted."""
    if FINALIZER not in finalizers:
        return live
    return [o for o in live if "Delete=false" in _options(o)]


def sync_with_prune(live: list[dict[str, Any]], desired: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """What stays after a prune sync: the desired objects plus the ones that refuse pruning."""
    key = lambda o: (o["apiVersion"], o["kind"], o["metadata"].get("namespace"), o["metadata"]["name"])  # noqa: E731
    wanted = {key(o) for o in desired}
    return desired + [o for o in live if key(o) not in wanted and "Prune=false" in _options(o)]


def _kinds(objs: list[dict[str, Any]]) -> set[str]:
    return {str(o["kind"]) for o in objs}


def test_removed_overlay_leaves_namespace_crds_and_driver() -> None:
    before = _render(FLEET, CLUSTERS)
    after = _render(FLEET, {"west": CLUSTERS["west"]})
    (appset,) = _docs(before, "argocd/applicationset.yaml")
    elements = lambda files: {e["cluster"] for e in _docs(files, "argocd/applicationset.yaml")[0]["spec"]["generators"][0]["list"]["elements"]}  # noqa: E731
    assert elements(before) - elements(after) == {"east"}  # the controller deletes east's Application
    live = _docs(before, "base/")  # what Argo CD synced to east (its overlay changes nothing here)
    assert {"Namespace", "CustomResourceDefinition", "DaemonSet"} <= _kinds(live)
    left = delete_application(generated_finalizers(appset), live)
    assert left == live  # no finalizer: nothing at all is deleted
    drivers = [o for o in left if o["kind"] == "DaemonSet" and o["metadata"]["name"].startswith("nvidia-driver-daemonset")]
    assert drivers


def test_without_preserve_argo_cd_would_delete_the_stack() -> None:
    """The same model on an ApplicationSet without preserveResourcesOnDeletion (as before)."""
    before = _render(FLEET, CLUSTERS)
    (appset,) = _docs(before, "argocd/applicationset.yaml")
    del appset["spec"]["syncPolicy"]
    assert generated_finalizers(appset) == [FINALIZER]
    left = delete_application(generated_finalizers(appset), _docs(before, "base/"))
    # even then the CRDs (and every NodeFeature with them) and the Namespace stay
    assert _kinds(left) == {"Namespace", "CustomResourceDefinition"}


def test_applications_layout_carries_no_finalizer() -> None:
    files = _render(FLEET.replace("gitops: {", "gitops: {layout: applications, "), CLUSTERS)
    apps = _docs(files, "argocd/applications/")
    assert len(apps) == 2
    for app in apps:
        assert "finalizers" not in app["metadata"]
        live = _docs(files, "base/")
        assert delete_application(app["metadata"].get("finalizers") or [], live) == live


def test_crds_and_namespace_refuse_delete_and_prune() -> None:
    files = _render(FLEET, CLUSTERS)
    for obj in _docs(files, "base/"):
        if obj["kind"] in ("CustomResourceDefinition", "Namespace"):
            assert {"Delete=false", "Prune=false"} <= _options(obj), obj["metadata"]["name"]
        elif obj["kind"] == "DaemonSet":
            assert not {"Delete=false", "Prune=false"} & _options(obj)


def test_turning_nfd_off_does_not_prune_its_crds() -> None:
    live = _docs(_render(FLEET, {}), "base/")
    desired = _docs(_render(FLEET + "nfd: {enabled: false}\n", {}), "base/")
    assert "CustomResourceDefinition" not in _kinds(desired)
    left = sync_with_prune(live, desired)
    crds = sorted(o["metadata"]["name"] for o in left if o["kind"] == "CustomResourceDefinition")
    assert crds == sorted(o["metadata"]["name"] for o in live if o["kind"] == "CustomResourceDefinition")
    assert not [o for o in left if o["kind"] == "Deployment" and "node-feature-discovery" in o["metadata"]["name"]]
