"""load -> merge -> validate -> resolve: from input bytes to one Model per cluster.

Pure: no disk access. Problems from every file are collected and returned together.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from renderer import checks, schema
from renderer.inputs import ClusterInput, Inputs
from renderer.loader import load_text
from renderer.merge import Located, from_source, merge
from renderer.model import Model
from renderer.problems import Problem, Severity
from renderer.resolve import resolve, with_defaults
from renderer.userpatches import allowances, check_user_patches, patches_dir

FLEET = "fleet"


@dataclass(frozen=True)
class Plan:
    """What the inputs resolve to, and everything found wrong on the way."""

    base: Model | None
    clusters: dict[str, Model] = field(default_factory=dict)
    located: dict[str, Located] = field(default_factory=dict)
    problems: tuple[Problem, ...] = ()
    inputs: dict[str, ClusterInput] = field(default_factory=dict)
    """Each cluster's raw inputs (hand-written patches, nodes.json), by cluster name."""

    @property
    def errors(self) -> list[Problem]:
        return [p for p in self.problems if p.severity is Severity.ERROR]

    @property
    def warnings(self) -> list[Problem]:
        return [p for p in self.problems if p.severity is Severity.WARNING]


def _driver_pools(located: dict[str, Located], defaulted: dict[str, dict[str, Any]], complete: bool = True) -> list[Problem]:
    """The driver-without-pools check on each cluster (on the fleet when it is alone; an
    incremental build's inputs, not ``complete``, may lack the overlays that give the pools)."""
    overlays = any(name != FLEET for name in located) or not complete
    out: list[Problem] = []
    for name, loc in located.items():
        if name in defaulted and (name != FLEET or not overlays):
            out += checks.driver_without_pools(loc, defaulted[name], overlays=overlays)
    return out


def plan(inputs: Inputs, *, complete: bool = True) -> Plan:
    """The checked, resolved models; ``complete`` is false when ``inputs`` hold only some of the
    fleet's clusters (an incremental build), so fleet-wide findings about them are not made."""
    problems: list[Problem] = list(inputs.problems)
    fleet_src, found = load_text(inputs.values, inputs.values_path)
    problems += found
    fleet = from_source(fleet_src) if fleet_src is not None else None
    located: dict[str, Located] = {}
    if fleet is not None:
        located[FLEET] = fleet
    for cluster in inputs.clusters:
        problems += checks.cluster_name(cluster.name, cluster.values_path)
        src, found = load_text(cluster.values, cluster.values_path)
        problems += found
        if fleet is not None and src is not None:
            located[cluster.name] = merge(fleet, src)
        allowed = allowances(located[cluster.name].data) if cluster.name in located else {}
        problems += check_user_patches(patches_dir(cluster.values_path), cluster.patches, allowed)
    seen: set[Problem] = set()
    sections = schema.FleetSections(fleet) if fleet is not None else None
    defaulted: dict[str, dict[str, Any]] = {}
    for name, loc in located.items():
        schema_problems = schema.validate(loc, sections if name != FLEET else None)
        for p in [*schema_problems, *schema.operator_only_warnings(loc)]:
            if p not in seen:
                seen.add(p)
                problems.append(p)
        if not schema_problems:
            # defaulted once per cluster: read by the checks, then taken over by its model
            defaulted[name] = with_defaults(loc.data)
            for p in checks.semantic(loc, name, defaulted[name]):
                if p not in seen:
                    seen.add(p)
                    problems.append(p)
    for p in _driver_pools(located, defaulted, complete):
        if p not in seen:
            seen.add(p)
            problems.append(p)
    if not any(p.severity is Severity.ERROR for p in problems):
        problems += sorted(set(checks.shared_destinations(located, FLEET)))
        if complete:
            problems += checks.fleet_without_clusters(located, FLEET)
    problems.sort()
    if any(p.severity is Severity.ERROR for p in problems) or fleet is None:
        return Plan(None, {}, located, tuple(problems))
    base = resolve(fleet.data, FLEET, defaulted.get(FLEET))
    clusters = {name: resolve(loc.data, name, defaulted.get(name)) for name, loc in located.items() if name != FLEET}
    return Plan(base, clusters, located, tuple(problems), {c.name: c for c in inputs.clusters})
