"""Emitters: objects -> files. Each owns one output folder."""

from __future__ import annotations

from collections.abc import Callable

from renderer.pipeline import Plan


def emit_all(p: Plan, progress: Callable[[str], None] | None = None) -> dict[str, str]:
    """Every output file. ``progress`` is told each cluster's name once its objects exist."""
    from renderer.emit import argocd, base, helm, kustomize, lock
    from renderer.memo import Memo
    from renderer.render import objects
    from renderer.userpatches import patches_dir

    assert p.base is not None
    memo = Memo()
    base_objs = objects(p.base, memo)
    cluster_objs = {}
    for name, model in p.clusters.items():
        cluster_objs[name] = objects(model, memo)
        if progress is not None:
            progress(name)
    user = {name: (patches_dir(ci.values_path), ci.patches) for name, ci in p.inputs.items() if ci.patches}
    files: dict[str, str] = {}
    files.update(base.emit_objects(base_objs))
    base.verify(files, base_objs)
    files.update(kustomize.emit(base_objs, cluster_objs, user))
    files.update(argocd.emit(p.base, base_objs, p.clusters, cluster_objs))
    files.update(helm.emit(p, base_objs, cluster_objs))
    files.update(lock.emit(p, files))
    return files
