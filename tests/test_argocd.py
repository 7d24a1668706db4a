"""output/argocd/: every Argo CD object validates against the real Argo CD CRDs, strictly."""

from __future__ import annotations

import copy
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft7Validator

from renderer import yamlio
from renderer.emit import argocd
from renderer.inputs import ClusterInput, Inputs, read_inputs
from renderer.pipeline import plan
from renderer.problems import UserError
from renderer.render import objects, render
from renderer.waves import WAVE
from tests.conftest import DATA, ROOT, run_tool
from tests.golden import CASES

FLEETS = {"example": ROOT, **{p.name: p for p in sorted(CASES.iterdir()) if (p / "overlays").is_dir()}}
CRDS = {"Application": "application-crd.yaml", "ApplicationSet": "applicationset-crd.yaml", "AppProject": "appproject-crd.yaml"}


def _strict(schema: Any) -> Any:
    """The API server's strict field validation: no unknown fields where the schema lists them."""
    if isinstance(schema, dict):
        out = {k: _strict(v) for k, v in schema.items() if not k.startswith("x-kubernetes-")}
        if "properties" in schema and "additionalProperties" not in schema and not schema.get("x-kubernetes-preserve-unknown-fields"):
            out["additionalProperties"] = False
        return out
    if isinstance(schema, list):
        return [_strict(v) for v in schema]
    return schema


@cache
def validator(kind: str) -> Draft7Validator:
    crd = yamlio.load((DATA / "argocd" / CRDS[kind]).read_text())
    (version,) = [v for v in crd["spec"]["versions"] if v["name"] == "v1alpha1"]
    schema = _strict(copy.deepcopy(version["schema"]["openAPIV3Schema"]))
    return Draft7Validator(schema)


def crd_errors(obj: dict[str, Any]) -> list[str]:
    assert obj["apiVersion"] == "argoproj.io/v1alpha1"
    return [f"{obj['kind']}/{obj['metadata']['name']}: {'/'.join(map(str, e.absolute_path))}: {e.message}" for e in validator(obj["kind"]).iter_errors(obj)]


def argo_objects(files: dict[str, str]) -> list[dict[str, Any]]:
    return [
        doc
        for path, text in sorted(files.items())
        if path.startswith("argocd/") and path.endswith(".yaml")
        for doc in yamlio.load_all(text)
        if doc.get("apiVersion") == argocd.API
    ]


def render_fleet(folder: Path) -> dict[str, str]:
    return render(read_inputs(folder / "values.yaml", folder / "overlays"))


def test_strict_validator_catches_unknown_fields() -> None:
    bad = {"apiVersion": argocd.API, "kind": "AppProject", "metadata": {"name": "x"}, "spec": {"destinationz": []}}
    assert crd_errors(bad)


@pytest.mark.parametrize("fleet", sorted(FLEETS))
def test_argo_objects_validate_against_crds(fleet: str) -> None:
    objs = argo_objects(render_fleet(FLEETS[fleet]))
    assert {o["kind"] for o in objs} >= {"AppProject"}
    assert {o["kind"] for o in objs} & {"Application", "ApplicationSet"}
    for obj in objs:
        assert crd_errors(obj) == []
        assert WAVE in obj["metadata"]["annotations"]


@pytest.mark.parametrize("fleet", sorted(FLEETS))
def test_project_allows_exactly_the_rendered_kinds(fleet: str) -> None:
    inputs = read_inputs(FLEETS[fleet] / "values.yaml", FLEETS[fleet] / "overlays")
    p = plan(inputs)
    assert p.base is not None
    rendered = [o for m in [p.base, *p.clusters.values()] for items in objects(m).values() for o in items]
    cluster_scoped = {(o["apiVersion"].rpartition("/")[0], o["kind"]) for o in rendered if not o["metadata"].get("namespace")}
    namespaced = {(o["apiVersion"].rpartition("/")[0], o["kind"]) for o in rendered if o["metadata"].get("namespace")}
    files = render(inputs)
    (project,) = yamlio.load_all(files["argocd/appproject.yaml"])
    assert {(k["group"], k["kind"]) for k in project["spec"]["clusterResourceWhitelist"]} == cluster_scoped
    assert {(k["group"], k["kind"]) for k in project["spec"]["namespaceResourceWhitelist"]} == namespaced
    assert project["spec"]["sourceRepos"] == [p.base.values["gitops"]["repoURL"]]
    namespaces = {m.namespace for m in p.clusters.values()}
    assert {d["namespace"] for d in project["spec"]["destinations"]} == namespaces


@pytest.mark.parametrize("fleet", sorted(FLEETS))
def test_one_application_per_cluster_pointing_at_its_overlay(fleet: str) -> None:
    files = render_fleet(FLEETS[fleet])
    p = plan(read_inputs(FLEETS[fleet] / "values.yaml", FLEETS[fleet] / "overlays"))
    assert p.base is not None
    prefix = p.base.values["gitops"]["path"].strip("/")
    if "argocd/applicationset.yaml" in files:
        (appset,) = yamlio.load_all(files["argocd/applicationset.yaml"])
        elements = appset["spec"]["generators"][0]["list"]["elements"]
        assert [e["cluster"] for e in elements] == sorted(p.clusters)
        paths = [e["path"] for e in elements]
    else:
        apps = [yamlio.load(files[f"argocd/applications/{c}.yaml"]) for c in sorted(p.clusters)]
        assert [a["metadata"]["labels"][argocd.CLUSTER_LABEL] for a in apps] == sorted(p.clusters)
        paths = [a["spec"]["source"]["path"] for a in apps]
    for cluster, path in zip(sorted(p.clusters), paths, strict=True):
        assert path == f"{prefix}/overlays/{cluster}"
        assert f"overlays/{cluster}/kustomization.yaml" in files


def test_applications_layout_carries_per_cluster_settings() -> None:
    files = render_fleet(CASES / "fleet-apps-rolling")
    assert "argocd/applicationset.yaml" not in files
    canary = yamlio.load(files["argocd/applications/canary-1.yaml"])
    assert canary["metadata"]["name"] == "gpu-stack-canary-1"
    assert canary["spec"]["destination"] == {"name": "canary-1", "namespace": "gpu-operator"}
    assert canary["spec"]["source"] == {"repoURL": "https://git.example.com/gpu/fleet.git", "targetRevision": "main", "path": "clusters/gpu/overlays/canary-1"}
    assert canary["spec"]["syncPolicy"]["syncOptions"] == ["PruneLast=true"]
    assert canary["metadata"]["labels"][argocd.GROUP_LABEL] == "canary"
    prod2 = yamlio.load(files["argocd/applications/prod-2.yaml"])
    assert prod2["spec"]["source"]["targetRevision"] == "release-1"
    assert prod2["spec"]["ignoreDifferences"] == [
        {
            "group": "apps",
            "kind": "DaemonSet",
            "name": "nvidia-device-plugin-daemonset",
            "namespace": "gpu-operator",
            "jsonPointers": ["/spec/template/spec/containers/0/resources/requests/memory"],
        },
        {  # the MPS control daemon takes the device plugin's resources too (its mounts init from v26.7)
            "group": "apps",
            "kind": "DaemonSet",
            "name": "nvidia-device-plugin-mps-control-daemon",
            "namespace": "gpu-operator",
            "jsonPointers": ["/spec/template/spec/containers/0/resources/requests/memory", "/spec/template/spec/initContainers/1/resources/requests/memory"],
        },
    ]
    assert "ignoreDifferences" not in yamlio.load(files["argocd/applications/prod-1.yaml"])["spec"]


def _inline(values: str, clusters: dict[str, str]) -> dict[str, str]:
    return render(
        Inputs(
            values.encode(),
            "values.yaml",
            tuple(ClusterInput(n, v.encode(), f"overlays/{n}/values.yaml") for n, v in sorted(clusters.items())),
        )
    )


def test_rolling_sync_puts_the_canary_group_first() -> None:
    values = "gitops: {repoURL: https://g.example.com/r.git, rollingSync: {enabled: true}}\n"
    files = _inline(values, {"a": "gitops: {group: canary}\n", "b": ""})
    (appset,) = yamlio.load_all(files["argocd/applicationset.yaml"])
    assert crd_errors(appset) == []
    steps = appset["spec"]["strategy"]["rollingSync"]["steps"]
    assert steps == [
        {"matchExpressions": [{"key": argocd.GROUP_LABEL, "operator": "In", "values": ["canary"]}]},
        {"matchExpressions": [{"key": argocd.GROUP_LABEL, "operator": "NotIn", "values": ["canary"]}]},
    ]
    assert [e["group"] for e in appset["spec"]["generators"][0]["list"]["elements"]] == ["canary", "default"]


def test_cluster_generator_selects_by_label() -> None:
    values = "gitops: {repoURL: https://g.example.com/r.git, generator: clusters, clusterSelector: {matchLabels: {gpu: fleet-a}}}\n"
    files = _inline(values, {"a": ""})
    (appset,) = yamlio.load_all(files["argocd/applicationset.yaml"])
    assert crd_errors(appset) == []
    gen = appset["spec"]["generators"][0]["clusters"]
    assert gen["selector"] == {"matchLabels": {"gpu": "fleet-a"}}
    assert appset["spec"]["template"]["spec"]["source"]["path"] == "output/overlays/{{.name}}"
    (project,) = yamlio.load_all(files["argocd/appproject.yaml"])
    assert project["spec"]["destinations"] == [{"server": "*", "namespace": "gpu-operator"}]


def test_list_generator_patches_in_per_cluster_ignore_differences() -> None:
    values = "gitops: {repoURL: https://g.example.com/r.git}\n"
    files = _inline(values, {"a": "devicePlugin: {resources: {limits: {cpu: 1000m}}}\n", "b": ""})
    (appset,) = yamlio.load_all(files["argocd/applicationset.yaml"])
    assert crd_errors(appset) == []
    elements = appset["spec"]["generators"][0]["list"]["elements"]
    assert elements[0]["ignoreDifferences"][0]["jsonPointers"] == ["/spec/template/spec/containers/0/resources/limits/cpu"]
    assert elements[1]["ignoreDifferences"] == []
    assert "ignoreDifferences" in appset["spec"]["templatePatch"]


@pytest.mark.parametrize(("value", "ok"), [("1", True), ("100m", True), ("1000m", False), ("0.5", False), ("512Mi", True), ("0.5Gi", False), (1, False), ("2000", False), ("1k", True)])
def test_canonical_quantity(value: Any, ok: bool) -> None:
    assert argocd.canonical_quantity(value) is ok


@pytest.mark.parametrize("option", ["Replace=true", "Force=true", "ServerSideApply=true"])
def test_replace_force_and_app_level_ssa_are_refused(option: str) -> None:
    with pytest.raises(UserError) as exc:
        _inline(f"gitops: {{syncPolicy: {{syncOptions: ['{option}']}}}}\n", {})
    messages = [p.format() for p in exc.value.problems]
    assert any(m.startswith("values.yaml:1:") and "/gitops/syncPolicy/syncOptions/0" in m for m in messages), messages


def test_health_checks_for_the_kinds_rendered() -> None:
    objs = [
        {"apiVersion": "nfd.k8s-sigs.io/v1alpha1", "kind": "NodeFeatureRule", "metadata": {"name": "r"}},
        {"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "d", "namespace": "n"}},
        {"apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass", "metadata": {"name": "rc"}},
    ]
    p = plan(Inputs(b"{}\n", "values.yaml"))
    assert p.base is not None
    cm = argocd.argocd_cm_patch(p.base, objs)
    assert list(cm["data"]) == ["resource.customizations.health.apps_DaemonSet"]  # NodeFeatureRule has no status to read
    assert cm["metadata"] == {"name": "argocd-cm", "namespace": "argocd", "labels": {"app.kubernetes.io/name": "argocd-cm", "app.kubernetes.io/part-of": "argocd"}}


@pytest.mark.realtools
def test_argocd_folder_builds_with_kustomize(kubectl: str, tmp_path: Path) -> None:
    files = render_fleet(ROOT)
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    built = yamlio.load_all(run_tool([kubectl, "kustomize", str(tmp_path / "argocd")]))
    assert sorted(o["kind"] for o in built) == ["AppProject", "ApplicationSet"]
    for obj in built:
        assert crd_errors(obj) == []


def test_without_server_side_diff_dropped_zero_values_are_ignored() -> None:
    ds = {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {"name": "d", "namespace": "n"},
        "spec": {
            "template": {
                "spec": {
                    "hostPID": False,
                    "hostNetwork": True,
                    "tolerations": [],
                    "containers": [
                        {"name": "c", "args": [], "env": [{"name": "A", "value": ""}, {"name": "B", "value": "x"}], "volumeMounts": [{"name": "v", "mountPath": "/v", "readOnly": False}]}
                    ],
                }
            }
        },
    }
    assert argocd.ignore_differences([ds]) == []
    (entry,) = argocd.ignore_differences([ds], server_side_diff=False)
    assert entry["jsonPointers"] == [
        "/spec/template/spec/containers/0/args",
        "/spec/template/spec/containers/0/env/0/value",
        "/spec/template/spec/containers/0/volumeMounts/0/readOnly",
        "/spec/template/spec/hostPID",
        "/spec/template/spec/tolerations",
    ]
    files = _inline("gitops: {repoURL: https://g.example.com/r.git, serverSideDiff: false}\n", {"a": ""})
    (appset,) = yamlio.load_all(files["argocd/applicationset.yaml"])
    assert crd_errors(appset) == []
    assert "annotations" not in appset["spec"]["template"]["metadata"]


def _expand(appset: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """What the ApplicationSet controller makes of a list generator: one Application per element."""
    import json
    import re

    out: dict[str, dict[str, Any]] = {}
    for element in appset["spec"]["generators"][0]["list"]["elements"]:
        text = json.dumps(appset["spec"]["template"])
        text = re.sub(r"\{\{\.(\w+)\}\}", lambda m, e=element: str(e[m.group(1)]), text)
        app = {"apiVersion": argocd.API, "kind": "Application", **json.loads(text)}
        if element.get("ignoreDifferences"):
            app["spec"]["ignoreDifferences"] = element["ignoreDifferences"]
        app["spec"]["destination"] = {k: v for k, v in app["spec"]["destination"].items() if v != ""}
        app["metadata"]["namespace"] = appset["metadata"]["namespace"]
        out[element["cluster"]] = app
    return out


@pytest.mark.parametrize("fleet", sorted(FLEETS))
def test_applicationset_generates_the_same_applications_as_the_applications_layout(fleet: str) -> None:
    folder = FLEETS[fleet]
    inputs = read_inputs(folder / "values.yaml", folder / "overlays")
    values = yamlio.load(inputs.values.decode()) or {}

    def with_layout(layout: str) -> dict[str, str]:
        from dataclasses import replace

        gitops = values.get("gitops", {})
        repo = gitops.get("repoURL") or "https://git.example.com/gpu-policy.git"  # a gitops section needs one
        changed = {**values, "gitops": {**gitops, "repoURL": repo, "layout": layout, "generator": "list"}}
        return render(replace(inputs, values=yamlio.dump(changed).encode()))

    sets = with_layout("applicationset")
    apps = with_layout("applications")
    generated = _expand(yamlio.load(sets["argocd/applicationset.yaml"]))
    for cluster, app in generated.items():
        assert crd_errors(app) == []
        written = yamlio.load(apps[f"argocd/applications/{cluster}.yaml"])
        written["metadata"]["annotations"].pop(WAVE)
        written["metadata"]["labels"] = dict(written["metadata"]["labels"])
        assert app == written, cluster


def test_two_clusters_on_one_destination_warn() -> None:
    inputs = Inputs(
        b"gitops:\n  repoURL: https://g.example.com/r.git\n",
        "values.yaml",
        (
            ClusterInput("a", b"gitops:\n  destination:\n    name: shared\n", "overlays/a/values.yaml"),
            ClusterInput("b", b"gitops:\n  destination:\n    name: shared\n", "overlays/b/values.yaml"),
            ClusterInput("c", b"", "overlays/c/values.yaml"),
        ),
    )
    warnings = [p.format() for p in plan(inputs).warnings]
    assert warnings == [
        f"overlays/{c}/values.yaml:3:5: /gitops/destination: warning: clusters a, b all deploy to destination name shared; their Argo CD Applications would overwrite each other"
        " (set gitops.destination.server or gitops.destination.name in each cluster's overlay values)"
        for c in ("a", "b")
    ]
    clusters_generator = Inputs(b"gitops: {generator: clusters}\n", "values.yaml", inputs.clusters)
    assert plan(clusters_generator).warnings == []
