"""Emitters: objects -> files. Each owns one output folder.

A build is a map over clusters and a reduce over what they have in common:

* :func:`cluster_unit` turns one cluster's objects into its own files
  (``overlays/<cluster>/**``, the chart's ``values-<cluster>.yaml``, its Argo CD
  Application under the ``applications`` layout) and a small JSON-able summary of what
  the aggregate files need from it (list-generator element, AppProject destination,
  kinds rendered, why the chart does not reproduce it);
* :func:`aggregate` writes the fleet's files (base, chart, Argo CD project and
  ApplicationSet, gpu-render.lock) from the fleet context and every cluster's summary.

:func:`emit_all` streams: plan a cluster, render its objects, make its unit, drop the
objects; so a build never holds every cluster's objects at once. A unit's summary and file
hashes are all an incremental build needs to keep of a cluster it does not render again.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from renderer.emit.lock import sha256

if TYPE_CHECKING:  # importing an emitter (the writer imports lock) must not load them all
    from renderer.components.common import Obj
    from renderer.emit import helm
    from renderer.emit.kustomize import OverlayCache
    from renderer.memo import Memo
    from renderer.model import Model
    from renderer.pipeline import Plan
    from renderer.userpatches import UserPatches

Objects = dict[str, list["Obj"]]


@dataclass(frozen=True)
class FleetContext:
    """What every cluster's unit is made against: the fleet model, its render and its chart."""

    fleet: Model
    base_objs: Objects
    chart: helm.Chart
    memo: Memo
    """The build's component memo: clusters sharing a component's configuration share its objects."""
    overlays: OverlayCache
    """The build's overlay patches and texts of those shared objects, made once."""


@dataclass(frozen=True)
class ClusterUnit:
    """One cluster's own output files and the summary the aggregate files are made from."""

    name: str
    files: dict[str, str]
    summary: dict[str, Any]
    """JSON-able: ``argocd`` and ``chart`` parts (see those emitters' ``cluster_summary``)."""
    hashes: dict[str, str]
    """sha256 of each of ``files``."""
    verified: frozenset[str] = frozenset()
    """Those of ``files`` already parsed back to the data they were printed from (its chart
    values file), which the self-check need not parse again."""


def fleet_context(p: Plan, chart: tuple[dict[str, Any], list[Any]] | None = None, jobs: int = 1) -> FleetContext:
    """The fleet's render and chart analysis (``chart``: a kept ``helm.templates_for`` result;
    ``jobs``: processes the analysis may use)."""
    from renderer.emit import helm
    from renderer.emit.kustomize import OverlayCache
    from renderer.memo import Memo
    from renderer.render import objects

    assert p.base is not None
    memo = Memo()
    base_objs = objects(p.base, memo)
    return FleetContext(p.base, base_objs, helm.analyse(p.base, base_objs, chart, jobs), memo, OverlayCache())


def cluster_unit(ctx: FleetContext, name: str, model: Model, objs: Objects, user: UserPatches = (), user_dir: str = "") -> ClusterUnit:
    """Map step: one cluster's files and summary; ``user``: its hand-written patches, read from ``user_dir``."""
    from renderer.emit import argocd, helm, kustomize
    from renderer.userpatches import allowances

    flat = [o for items in objs.values() for o in items]
    files = kustomize.emit_cluster(name, ctx.base_objs, objs, user, user_dir, ctx.overlays, allowances(model.values))
    files.update(argocd.cluster_files(ctx.fleet, name, model, flat))
    text, reason = helm.cluster_values(ctx.chart, name, model, objs)
    verified = frozenset({helm.cluster_values_path(name)}) if text is not None else frozenset()
    if text is not None:
        files[helm.cluster_values_path(name)] = text
    summary = {
        "argocd": argocd.cluster_summary(ctx.fleet, name, model, flat),
        "chart": helm.cluster_summary(text, reason),
    }
    return ClusterUnit(name, files, summary, {path: sha256(t) for path, t in files.items()}, verified)


def aggregate(
    ctx: FleetContext, summaries: dict[str, dict[str, Any]], unit_hashes: Iterable[dict[str, str]], printed: dict[str, str] | None = None
) -> dict[str, str]:
    """Reduce step: the fleet's own files (base, chart, Argo CD aggregates, lock).

    ``printed``: chart templates (path -> sha256) an earlier build printed from this very
    chart analysis and left as written; when they are all of them they are not printed again:
    they are in the lock, not in the result."""
    from renderer.emit import argocd, base, helm, lock

    files = base.emit_objects(ctx.base_objs)
    base.verify(files, ctx.base_objs)
    flat = [o for items in ctx.base_objs.values() for o in items]
    files.update(argocd.emit_fleet(ctx.fleet, flat, {n: s["argocd"] for n, s in summaries.items()}))
    chart_files = helm.emit_fleet(ctx.fleet, ctx.chart, {n: s["chart"] for n, s in summaries.items()}, printed or {})
    files.update(chart_files)
    hashes = {path: sha256(text) for path, text in files.items()}
    if printed and not helm.template_paths(ctx.chart) & chart_files.keys():
        hashes.update(printed)
    for h in unit_hashes:
        hashes.update(h)
    files.update(lock.emit_hashes(hashes))
    return files


@dataclass(frozen=True)
class Emitted:
    """A build's output files plus what an incremental build keeps of it."""

    files: dict[str, str]
    """Every output file."""
    units: dict[str, ClusterUnit]
    """Every cluster's unit, rendered or kept."""
    chart: tuple[dict[str, Any], list[Any]]
    """The fleet's chart analysis (a ``helm.templates_for`` result)."""
    fresh: frozenset[str]
    """The files made by this build (all but the kept units' files)."""
    verified: frozenset[str] = frozenset()
    """Fresh files already parsed back to the data they were written from (the base's:
    :func:`aggregate` calls ``base.verify``; the chart values files of the clusters rendered),
    which the self-check need not parse again."""


def emit_units(
    p: Plan,
    progress: Callable[[str], None] | None = None,
    kept: dict[str, ClusterUnit] | None = None,
    chart: tuple[dict[str, Any], list[Any]] | None = None,
    printed: dict[str, str] | None = None,
    jobs: int = 1,
) -> Emitted:
    """Units of the clusters ``p`` planned, plus the ``kept`` units of clusters it did not
    (an incremental build hands them in, files read back from the output folder), then the
    aggregates over all of them. ``chart``: a kept analysis of the same fleet; ``printed``:
    the chart templates printed from it, as :func:`aggregate` takes them (only used with the
    kept analysis, when it passed its check); ``jobs``: processes the chart analysis may use."""
    from renderer.emit import base
    from renderer.render import objects
    from renderer.userpatches import patches_dir

    ctx = fleet_context(p, chart, jobs)
    units = dict(kept or {})
    overlap = units.keys() & p.clusters.keys()
    if overlap:
        raise ValueError(f"clusters both kept and planned: {sorted(overlap)}")
    files: dict[str, str] = {}
    verified = set(base.verified(ctx.base_objs))
    for name, model in sorted(p.clusters.items()):
        ci = p.inputs.get(name)
        user, user_dir = (ci.patches, patches_dir(ci.values_path)) if ci is not None and ci.patches else ((), "")
        unit = cluster_unit(ctx, name, model, objects(model, ctx.memo), user, user_dir)
        units[name] = unit
        files.update(unit.files)
        verified |= unit.verified
        if progress is not None:
            progress(name)
    names = sorted(units)
    same = chart is not None and ctx.chart.templates is chart[1]
    files.update(aggregate(ctx, {n: units[n].summary for n in names}, (units[n].hashes for n in names), printed if same else None))
    fresh = frozenset(files)
    for name in kept or {}:
        files.update(units[name].files)
    return Emitted(files, units, (ctx.chart.values, ctx.chart.templates), fresh, frozenset(verified))


def emit_all(p: Plan, progress: Callable[[str], None] | None = None) -> dict[str, str]:
    """Every output file. ``progress`` is told each cluster's name once its unit exists."""
    return emit_units(p, progress).files
