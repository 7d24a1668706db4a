"""output/argocd/: what Argo CD needs to sync the overlays, nothing more.

* ``appproject.yaml``: an AppProject allowing the policy's repository, the clusters'
  destinations and exactly the kinds rendered (cluster-scoped and namespaced lists).
* ``applicationset.yaml`` (``gitops.layout: applicationset``): one Application per cluster
  from a list generator (or a cluster generator selecting Argo CD clusters by label), with
  optional RollingSync steps (the canary group first);
  ``applications/<cluster>.yaml`` (``gitops.layout: applications``): the same Applications
  written out one per cluster.
* ``kustomization.yaml`` over the project and the apps, for an app-of-apps or ``kubectl apply -k``.
* ``argocd-cm-patch.yaml``: Lua health checks (:mod:`renderer.emit.argocd_health`) for the
  kinds rendered that have one (DaemonSet, ServiceMonitor), to merge into the Argo CD
  install's ``argocd-cm``.

Sync options never carry Replace or Force (the schema refuses them), and ServerSideApply is
set per CRD by :mod:`renderer.waves`, not for the whole application.

Deletion never takes a cluster's GPU stack by surprise: the ApplicationSet sets
``preserveResourcesOnDeletion`` (its controller then adds no resources finalizer to the
Applications it generates) and the Applications of the ``applications`` layout carry none, so
deleting an Application leaves its objects in the cluster; CRDs and the Namespace also carry
``Delete=false,Prune=false`` (:mod:`renderer.waves`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from renderer import yamlio
from renderer.components.common import MANAGED_BY, Obj
from renderer.emit import argocd_health
from renderer.model import Model
from renderer.waves import WAVE

ROOT = "argocd"
API = "argoproj.io/v1alpha1"
CLUSTER_LABEL = "gpu-render.io/cluster"
GROUP_LABEL = "gpu-render.io/group"
CANARY = "canary"
FLEET_LABEL = "gpu-render.io/fleet"

Objects = dict[str, list[Obj]]



def _gitops(model: Model) -> dict[str, Any]:
    return model.section("gitops")


def group_of(api_version: str) -> str:
    return api_version.rpartition("/")[0]


def destination(model: Model) -> Obj:
    """Where one cluster's app syncs to: ``name`` wins over ``server`` when both are set."""
    dest = _gitops(model).get("destination") or {}
    out: Obj = {"name": str(dest["name"])} if dest.get("name") else {"server": str(dest.get("server") or "")}
    out["namespace"] = model.namespace
    return out


def _meta(name: str, namespace: str, wave: int, labels: dict[str, str] | None = None) -> Obj:
    meta: Obj = {"name": name, "namespace": namespace, "labels": {**MANAGED_BY, **(labels or {})}}
    meta["annotations"] = {WAVE: str(wave)}
    return meta


def source_path(fleet: Model, cluster: str) -> str:
    root = str(_gitops(fleet).get("path") or "").strip("/")
    return f"{root}/overlays/{cluster}" if root else f"overlays/{cluster}"


def sync_policy(model: Model) -> Obj:
    """The Applications' sync policy. Under RollingSync the ApplicationSet controller turns
    automated sync off and starts each step's syncs itself, reading only ``automated.prune``:
    selfHeal and allowEmpty are dropped there (the checks warn), never rendered to be ignored."""
    policy = _gitops(model).get("syncPolicy") or {}
    out: Obj = {}
    automated = policy.get("automated")
    if automated and rolling_sync(model) is not None and _gitops(model).get("layout", "applicationset") == "applicationset":
        automated = {k: v for k, v in automated.items() if k == "prune"}
    if automated:
        out["automated"] = {k: bool(v) for k, v in automated.items()}
    if policy.get("syncOptions"):
        out["syncOptions"] = [str(s) for s in policy["syncOptions"]]
    if policy.get("retry"):
        out["retry"] = policy["retry"]
    return out


def ignore_differences(objs: Iterable[Obj], server_side_diff: bool = True) -> list[Obj]:
    """Narrow ignore rules for fields the API server rewrites and we could not render as stored.

    Resource quantities are canonicalised by the API server (``1000m`` is stored as ``1``,
    ``0.5`` as ``500m``): when a rendered quantity is not in canonical form, that one field
    is ignored, on that one object. Without server-side diff, zero values the API server
    drops (``omitempty``: an env var's empty ``value``, ``hostPID: false``, empty lists) are
    ignored the same way, since Argo CD's client-side diff would report them as missing.
    """
    out: list[Obj] = []
    for o in objs:
        found = _noncanonical_quantities(o) + ([] if server_side_diff else _dropped_zero_values(o))
        pointers = sorted(set(found))
        if pointers:
            entry: Obj = {"group": group_of(str(o["apiVersion"])), "kind": o["kind"], "name": o["metadata"]["name"]}
            if o["metadata"].get("namespace"):
                entry["namespace"] = o["metadata"]["namespace"]
            entry["jsonPointers"] = pointers
            out.append(entry)
    return out


def _pod_spec(obj: Obj) -> Obj | None:
    spec = obj.get("spec") or {}
    template = spec.get("template") if isinstance(spec, dict) else None
    if isinstance(template, dict) and isinstance(template.get("spec"), dict):
        pod: Obj = template["spec"]
        return pod
    return None


def _noncanonical_quantities(obj: Obj) -> list[str]:
    pod = _pod_spec(obj)
    if pod is None:
        return []
    found: list[str] = []
    for field in ("initContainers", "containers"):
        for i, ctr in enumerate(pod.get(field) or []):
            for section in ("requests", "limits"):
                for res, value in ((ctr.get("resources") or {}).get(section) or {}).items():
                    if not canonical_quantity(value):
                        name = res.replace("~", "~0").replace("/", "~1")
                        found.append(f"/spec/template/spec/{field}/{i}/resources/{section}/{name}")
    return found


POD_OMITEMPTY_BOOLS = ("hostNetwork", "hostPID", "hostIPC", "shareProcessNamespace")
POD_OMITEMPTY_LISTS = ("initContainers", "volumes", "tolerations", "imagePullSecrets")
CONTAINER_OMITEMPTY_LISTS = ("command", "args", "env", "envFrom", "volumeMounts", "ports")


def _dropped_zero_values(obj: Obj) -> list[str]:
    """Pod template fields whose zero value the API server does not store."""
    pod = _pod_spec(obj)
    if pod is None:
        return []
    base = "/spec/template/spec"
    found = [f"{base}/{k}" for k in POD_OMITEMPTY_BOOLS if pod.get(k) is False]
    found += [f"{base}/{k}" for k in POD_OMITEMPTY_LISTS if pod.get(k) == []]
    for field in ("initContainers", "containers"):
        for i, ctr in enumerate(pod.get(field) or []):
            where = f"{base}/{field}/{i}"
            found += [f"{where}/{k}" for k in CONTAINER_OMITEMPTY_LISTS if ctr.get(k) == []]
            found += [f"{where}/env/{j}/value" for j, env in enumerate(ctr.get("env") or []) if env.get("value") == ""]
            found += [f"{where}/volumeMounts/{j}/readOnly" for j, m in enumerate(ctr.get("volumeMounts") or []) if m.get("readOnly") is False]
    return found


def canonical_quantity(value: Any) -> bool:
    """True when the API server would store ``value`` exactly as written (a conservative test)."""
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        return False
    text = str(value)
    if isinstance(value, int):
        return False  # stored as a string: "1", not 1
    import re

    m = re.fullmatch(r"([0-9]+)(m|k|M|G|T|P|E|Ki|Mi|Gi|Ti|Pi|Ei)?", text)
    if not m:
        return False
    number, suffix = m.group(1), m.group(2) or ""
    if number != "0" and number.startswith("0"):
        return False
    if number == "0":
        return suffix == ""
    if suffix == "m":
        return not number.endswith("000")
    if suffix in ("", "k", "M", "G", "T", "P"):
        return not number.endswith("000")
    return True


def _labels_for(cluster: str, model: Model) -> dict[str, str]:
    return {CLUSTER_LABEL: cluster, GROUP_LABEL: str(_gitops(model).get("group") or "default")}


def _app_spec(fleet: Model, project: str, dest: Obj, path: str, revision: str, ignores: list[Obj]) -> Obj:
    g = _gitops(fleet)
    spec: Obj = {
        "project": project,
        "source": {"repoURL": str(g.get("repoURL") or ""), "targetRevision": revision, "path": path},
        "destination": dest,
    }
    policy = sync_policy(fleet)
    if policy:
        spec["syncPolicy"] = policy
    if ignores:
        spec["ignoreDifferences"] = ignores
    return spec


def _ssd(fleet: Model) -> bool:
    return bool(_gitops(fleet).get("serverSideDiff", True))


def _app_annotations(fleet: Model) -> dict[str, str]:
    if _ssd(fleet):
        return {"argocd.argoproj.io/compare-options": "ServerSideDiff=true"}
    return {}


def application(fleet: Model, cluster: str, model: Model, objs: list[Obj]) -> Obj:
    g = _gitops(fleet)
    name = f"{g['applicationName']}-{cluster}"
    meta = _meta(name, str(g.get("argocdNamespace") or "argocd"), 1, _labels_for(cluster, model))
    meta["annotations"].update(_app_annotations(fleet))
    revision = str(_gitops(model).get("targetRevision") or g.get("targetRevision") or "HEAD")
    spec = _app_spec(fleet, str(g["project"]), destination(model), source_path(fleet, cluster), revision, ignore_differences(objs, _ssd(fleet)))
    return {"apiVersion": API, "kind": "Application", "metadata": meta, "spec": spec}


def rolling_sync(fleet: Model) -> Obj | None:
    rs = _gitops(fleet).get("rollingSync") or {}
    if not rs.get("enabled"):
        return None
    steps: list[Obj] = []
    for step in rs.get("steps") or [{"groups": [CANARY]}]:
        entry: Obj = {"matchExpressions": [{"key": GROUP_LABEL, "operator": "In", "values": [str(x) for x in step["groups"]]}]}
        if "maxUpdate" in step:
            entry["maxUpdate"] = step["maxUpdate"]
        steps.append(entry)
    named = sorted({str(x) for step in rs.get("steps") or [{"groups": [CANARY]}] for x in step["groups"]})
    steps.append({"matchExpressions": [{"key": GROUP_LABEL, "operator": "NotIn", "values": named}]})
    return {"type": "RollingSync", "rollingSync": {"steps": steps}}


def applicationset(fleet: Model, elements: list[Obj]) -> Obj:
    """The ApplicationSet over every cluster's list-generator element (sorted by cluster; consumed)."""
    g = _gitops(fleet)
    if g.get("generator") == "clusters":
        generator, template = _cluster_generator(fleet, [i for e in elements for i in e["ignoreDifferences"]])
        patch = ""
    else:
        generator, template, patch = _list_generator(fleet, elements)
    spec: Obj = {
        "goTemplate": True,
        "goTemplateOptions": ["missingkey=error"],
        "generators": [generator],
        "template": template,
    }
    if patch:
        spec["templatePatch"] = patch
    # No resources finalizer on the generated Applications: removing a cluster's overlay (or
    # the ApplicationSet) deletes its Application but never that cluster's GPU stack.
    spec["syncPolicy"] = {"preserveResourcesOnDeletion": True}
    strategy = rolling_sync(fleet)
    if strategy:
        spec["strategy"] = strategy
    meta = _meta(str(g["applicationName"]), str(g.get("argocdNamespace") or "argocd"), 1)
    return {"apiVersion": API, "kind": "ApplicationSet", "metadata": meta, "spec": spec}


def _template_meta(fleet: Model, name: str, group: str) -> Obj:
    meta: Obj = {
        "name": f"{_gitops(fleet)['applicationName']}-{name}",
        "labels": {**MANAGED_BY, CLUSTER_LABEL: name, GROUP_LABEL: group},
    }
    annotations = _app_annotations(fleet)
    if annotations:
        meta["annotations"] = annotations
    return meta


def _list_generator(fleet: Model, elements: list[Obj]) -> tuple[Obj, Obj, str]:
    """Elements carry everything that differs per cluster; empty server or name means unset."""
    g = _gitops(fleet)
    patch = ""
    if any(e["ignoreDifferences"] for e in elements):
        patch = "{{- if .ignoreDifferences }}\nspec:\n  ignoreDifferences: {{ toJson .ignoreDifferences }}\n{{- end }}\n"
    else:
        for e in elements:
            del e["ignoreDifferences"]
    dest: Obj = {"server": "{{.server}}", "name": "{{.destinationName}}", "namespace": "{{.namespace}}"}
    spec = _app_spec(fleet, str(g["project"]), dest, "{{.path}}", "{{.targetRevision}}", [])
    template = {"metadata": _template_meta(fleet, "{{.cluster}}", "{{.group}}"), "spec": spec}
    return {"list": {"elements": elements}}, template, patch


def _cluster_generator(fleet: Model, found: list[Obj]) -> tuple[Obj, Obj]:
    """Argo CD cluster secrets selected by label; the secret's name is the cluster's folder."""
    g = _gitops(fleet)
    selector = g.get("clusterSelector") or {"matchLabels": {FLEET_LABEL: str(g["project"])}}
    revision = str(g.get("targetRevision") or "HEAD")
    generator = {"clusters": {"selector": selector, "values": {"namespace": fleet.namespace, "targetRevision": revision}}}
    dest: Obj = {"server": "{{.server}}", "namespace": "{{.values.namespace}}"}
    ignores = _dedupe(found)
    spec = _app_spec(fleet, str(g["project"]), dest, source_path(fleet, "{{.name}}"), "{{.values.targetRevision}}", ignores)
    group = f'{{{{index .metadata.labels "{GROUP_LABEL}" | default "default"}}}}'
    return generator, {"metadata": _template_meta(fleet, "{{.name}}", group), "spec": spec}


def _dedupe(items: list[Obj]) -> list[Obj]:
    import json

    seen: dict[str, Obj] = {}
    for item in items:
        seen.setdefault(json.dumps(item, sort_keys=True), item)
    return [seen[k] for k in sorted(seen)]


def _element(fleet: Model, cluster: str, model: Model, objs: list[Obj]) -> Obj:
    dest = destination(model)
    g = _gitops(fleet)
    return {
        "cluster": cluster,
        "group": str(_gitops(model).get("group") or "default"),
        "server": str(dest.get("server", "")),
        "destinationName": str(dest.get("name", "")),
        "namespace": model.namespace,
        "path": source_path(fleet, cluster),
        "targetRevision": str(_gitops(model).get("targetRevision") or g.get("targetRevision") or "HEAD"),
        "ignoreDifferences": ignore_differences(objs, _ssd(fleet)),
    }


def _cluster_generated(fleet: Model) -> bool:
    g = _gitops(fleet)
    return g.get("generator") == "clusters" and g.get("layout", "applicationset") == "applicationset"


def project_destination(fleet: Model, model: Model) -> tuple[str, str, str]:
    """The AppProject destination ``(field, value, namespace)`` one cluster (or the fleet) needs."""
    if _cluster_generated(fleet):
        return ("server", "*", model.namespace)
    dest = destination(model)
    field = "name" if "name" in dest else "server"
    return (field, str(dest[field]), model.namespace)


def appproject(fleet: Model, dests: Iterable[Sequence[str]], cluster_kinds: list[Obj], namespaced_kinds: list[Obj]) -> Obj:
    g = _gitops(fleet)
    destinations = {(str(f), str(v), str(ns)) for f, v, ns in dests}
    if not destinations or _cluster_generated(fleet):
        destinations.add(project_destination(fleet, fleet))
    return {
        "apiVersion": API,
        "kind": "AppProject",
        "metadata": _meta(str(g["project"]), str(g.get("argocdNamespace") or "argocd"), 0),
        "spec": {
            "description": "The NVIDIA GPU stack rendered by gpu-render: only its repository, clusters and kinds.",
            "sourceRepos": [str(g.get("repoURL") or "")],
            "destinations": [{field: value, "namespace": ns} for field, value, ns in sorted(destinations)],
            "clusterResourceWhitelist": cluster_kinds,
            "namespaceResourceWhitelist": namespaced_kinds,
        },
    }


def argocd_cm_patch(fleet: Model, all_objs: list[Obj]) -> Obj:
    return _cm_patch(fleet, {(group_of(str(o["apiVersion"])), str(o["kind"])) for o in all_objs})


def _cm_patch(fleet: Model, kinds: set[tuple[str, str]]) -> Obj:
    data = argocd_health.checks(kinds)
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "name": "argocd-cm",
            "namespace": str(_gitops(fleet).get("argocdNamespace") or "argocd"),
            "labels": {"app.kubernetes.io/name": "argocd-cm", "app.kubernetes.io/part-of": "argocd"},
        },
        "data": data,
    }


def flat(objs: Objects) -> list[Obj]:
    return [o for items in objs.values() for o in items]


def _kind_keys(objs: Iterable[Obj]) -> list[list[Any]]:
    """``[group, kind, namespaced]`` of every kind rendered, sorted (JSON-able)."""
    keys = {(group_of(str(o["apiVersion"])), str(o["kind"]), bool(o["metadata"].get("namespace"))) for o in objs}
    return [list(k) for k in sorted(keys)]


def cluster_summary(fleet: Model, cluster: str, model: Model, objs: list[Obj]) -> dict[str, Any]:
    """What the aggregate files need from one cluster (JSON-able): its list-generator element,
    its AppProject destination and the kinds it renders."""
    return {
        "element": _element(fleet, cluster, model, objs),
        "destination": list(project_destination(fleet, model)),
        "kinds": _kind_keys(objs),
    }


def cluster_files(fleet: Model, cluster: str, model: Model, objs: list[Obj]) -> dict[str, str]:
    """The cluster's own files: its Application under the ``applications`` layout."""
    if _gitops(fleet).get("layout", "applicationset") != "applications":
        return {}
    return {f"{ROOT}/applications/{cluster}.yaml": yamlio.dump_file([application(fleet, cluster, model, objs)])}


def emit_fleet(fleet: Model, base: list[Obj], summaries: dict[str, dict[str, Any]]) -> dict[str, str]:
    """The aggregate files of output/argocd/, from the base render and every cluster's summary."""
    g = _gitops(fleet)
    names = sorted(summaries)
    keys = {(str(gr), str(k), bool(ns)) for gr, k, ns in _kind_keys(base)}
    for name in names:
        keys.update((str(gr), str(k), bool(ns)) for gr, k, ns in summaries[name]["kinds"])
    cluster_kinds = [{"group": gr, "kind": k} for gr, k in sorted({(gr, k) for gr, k, ns in keys if not ns})]
    namespaced_kinds = [{"group": gr, "kind": k} for gr, k in sorted({(gr, k) for gr, k, ns in keys if ns})]
    project = appproject(fleet, [summaries[n]["destination"] for n in names], cluster_kinds, namespaced_kinds)
    files: dict[str, str] = {f"{ROOT}/appproject.yaml": yamlio.dump_file([project])}
    resources = ["appproject.yaml"]
    if g.get("layout", "applicationset") == "applications":
        resources += [f"applications/{name}.yaml" for name in names]  # the clusters' own files
    else:
        elements = [dict(summaries[n]["element"]) for n in names]  # shallow: the generator drops a key
        files[f"{ROOT}/applicationset.yaml"] = yamlio.dump_file([applicationset(fleet, elements)])
        resources.append("applicationset.yaml")
    resources.sort()
    files[f"{ROOT}/kustomization.yaml"] = yamlio.dump_file(
        [{"apiVersion": "kustomize.config.k8s.io/v1beta1", "kind": "Kustomization", "sortOptions": {"order": "legacy"}, "resources": resources}]
    )
    files[f"{ROOT}/argocd-cm-patch.yaml"] = yamlio.dump_file([_cm_patch(fleet, {(gr, k) for gr, k, _ in keys})])
    return files
