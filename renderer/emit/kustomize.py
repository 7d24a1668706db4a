"""output/overlays/<cluster>/: the smallest Kustomize overlay that turns base into a cluster.

Objects are matched by identity (apiVersion, kind, namespace, name). Per cluster:

* a changed object gets one JSON 6902 patch file, ``patches/<component>/<kind>-<name>.yaml``
  (exact, list order included; a strategic merge would merge lists by key and reorder);
* an object only the cluster has is a resource, ``resources/<component>/<kind>-<name>.yaml``
  (for example the cluster's own per-pool driver DaemonSets);
* an object only the base has is deleted by a ``$patch: delete`` file at the same place
  as a patch would be;
* the user's hand-written ``overlays/<cluster>/patches/*.yaml`` come last, copied to
  ``user-patches/``, so they apply to the cluster's render.

Unchanged base objects never appear in an overlay.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from renderer import yamlio
from renderer.components.common import Obj
from renderer.emit import patchdiff
from renderer.emit.base import object_filename
from renderer.problems import UserError
from renderer.userpatches import Allowed, UserPatches, target_problems

ROOT = "overlays"
BASE = "../../base"
USER_DIR = "user-patches"

Objects = dict[str, list[Obj]]
Ident = tuple[str, str, str, str]


def ident(obj: Obj) -> Ident:
    meta = obj.get("metadata") or {}
    return (str(obj["apiVersion"]), str(obj["kind"]), str(meta.get("namespace") or ""), str(meta["name"]))


def index(objs: Objects) -> dict[Ident, tuple[str, Obj]]:
    """identity -> (component, object)."""
    return {ident(o): (component, o) for component, items in objs.items() for o in items}


def target(obj: Obj) -> Obj:
    """A Kustomize patch target selecting exactly ``obj`` (names are regular expressions)."""
    api = str(obj["apiVersion"])
    group, _, version = api.rpartition("/")
    meta = obj["metadata"]
    out: Obj = {}
    if group:
        out["group"] = group
    out["version"] = version
    out["kind"] = obj["kind"]
    out["name"] = re.sub(r"([^A-Za-z0-9_-])", r"\\\1", str(meta["name"]))
    if meta.get("namespace"):
        out["namespace"] = meta["namespace"]
    return out


def delete_patch(obj: Obj) -> Obj:
    meta: Obj = {"name": obj["metadata"]["name"]}
    if obj["metadata"].get("namespace"):
        meta["namespace"] = obj["metadata"]["namespace"]
    return {"apiVersion": obj["apiVersion"], "kind": obj["kind"], "metadata": meta, "$patch": "delete"}


class OverlayCache:
    """One build's patches and YAML texts of objects, keyed by object identity.

    The component memo hands clusters that share a configuration the same (read-only)
    objects, so most clusters' overlays diff and print the same objects again. Every entry
    holds the objects it was made from: an id cannot be reused while its entry lives. Past
    ``LIMIT`` entries nothing more is kept (objects no other cluster shares would only hold
    memory).
    """

    LIMIT = 50_000

    def __init__(self) -> None:
        self._patches: dict[tuple[int, int], tuple[Obj, Obj, list[patchdiff.Op], str]] = {}
        self._texts: dict[int, tuple[Obj, str]] = {}

    def patch(self, base_obj: Obj, obj: Obj) -> tuple[list[patchdiff.Op], str]:
        """The JSON 6902 operations from ``base_obj`` to ``obj`` and their file text."""
        hit = self._patches.get((id(base_obj), id(obj)))
        if hit is not None and hit[0] is base_obj and hit[1] is obj:
            return hit[2], hit[3]
        ops = patchdiff.diff(base_obj, obj)
        text = yamlio.dump_file([ops]) if ops else ""
        if len(self._patches) < self.LIMIT:
            self._patches[(id(base_obj), id(obj))] = (base_obj, obj, ops, text)
        return ops, text

    def text(self, obj: Obj) -> str:
        """``obj`` as a file of its own."""
        hit = self._texts.get(id(obj))
        if hit is not None and hit[0] is obj:
            return hit[1]
        text = yamlio.dump_file([obj])
        if len(self._texts) < self.LIMIT:
            self._texts[id(obj)] = (obj, text)
        return text


@dataclass(frozen=True)
class Overlay:
    """What one cluster's overlay holds, before it becomes files."""

    patches: dict[str, tuple[Obj, list[patchdiff.Op], str]]
    """path -> (target object, JSON 6902 operations, their file text)."""
    deletions: dict[str, Obj]
    resources: dict[str, Obj]


def plan_overlay(base: Objects, cluster: Objects, cache: OverlayCache | None = None) -> Overlay:
    cache = cache or OverlayCache()
    base_index = index(base)
    cluster_index = index(cluster)
    patches: dict[str, tuple[Obj, list[patchdiff.Op], str]] = {}
    resources: dict[str, Obj] = {}
    deletions: dict[str, Obj] = {}
    for key, (component, obj) in cluster_index.items():
        path = f"{component}/{object_filename(obj)}"
        if key not in base_index:
            resources[f"resources/{path}"] = obj
            continue
        ops, text = cache.patch(base_index[key][1], obj)
        if ops:
            patches[f"patches/{path}"] = (obj, ops, text)
    for key, (component, obj) in base_index.items():
        if key not in cluster_index:
            deletions[f"patches/{component}/{object_filename(obj)}"] = delete_patch(obj)
    return Overlay(patches, deletions, resources)


def kustomization(overlay: Overlay, user_files: Iterable[str]) -> Obj:
    patches: list[Obj] = []
    entries: dict[str, Obj] = {}
    for path, (obj, _, _) in overlay.patches.items():
        entries[path] = {"path": path, "target": target(obj)}
    for path in overlay.deletions:
        entries[path] = {"path": path}
    patches += [entries[p] for p in sorted(entries)]
    patches += [{"path": f"{USER_DIR}/{name}"} for name in user_files]
    out: Obj = {
        "apiVersion": "kustomize.config.k8s.io/v1beta1",
        "kind": "Kustomization",
        "sortOptions": {"order": "legacy"},
        "resources": [BASE, *sorted(overlay.resources)],
    }
    if patches:
        out["patches"] = patches
    return out


def user_patch_header(cluster: str, name: str, allowed: dict[str, str] | None = None) -> str:
    from renderer.userpatches import header

    return header(cluster, name, allowed or {})


def emit_cluster(
    name: str, base: Objects, cluster: Objects, user: UserPatches = (), user_dir: str = "", cache: OverlayCache | None = None,
    allowed: Allowed | None = None,
) -> dict[str, str]:
    """One cluster's overlay files; ``user_dir`` is where its hand-written patches were read;
    ``cache``: the build's, shared by all its clusters; ``allowed``: what the policy allows
    each hand-written patch (``gitops.userPatches.allow``)."""
    cache = cache or OverlayCache()
    overlay = plan_overlay(base, cluster, cache)
    flat = [o for items in cluster.values() for o in items]
    problems = target_problems(user_dir or f"overlays/{name}/patches", [ident(o) for o in flat], user, flat, allowed)
    if problems:
        raise UserError(f"hand-written patches of cluster {name!r} do not apply", problems=problems)
    root = f"{ROOT}/{name}"
    files: dict[str, str] = {}
    for path, (_, _, text) in overlay.patches.items():
        files[f"{root}/{path}"] = text
    for path, doc in overlay.deletions.items():
        files[f"{root}/{path}"] = yamlio.dump_file([doc])
    for path, obj in overlay.resources.items():
        files[f"{root}/{path}"] = cache.text(obj)
    for fname, raw in user:
        files[f"{root}/{USER_DIR}/{fname}"] = user_patch_header(name, fname, (allowed or {}).get(fname)) + raw.decode("utf-8-sig")
    files[f"{root}/kustomization.yaml"] = yamlio.dump_file([kustomization(overlay, [f for f, _ in user])])
    return files
