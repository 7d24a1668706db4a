"""Semantic checks the JSON Schema cannot express (cross-key rules), as Problems."""

from __future__ import annotations

import re

from renderer.merge import Located
from renderer.problems import Problem

DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$")


def cluster_name(name: str, path: str) -> list[Problem]:
    """Cluster folder names become folder and object names: DNS labels only."""
    if DNS_LABEL.match(name) and name != "fleet":
        return []
    return [
        Problem(
            path,
            1,
            1,
            "",
            f"cluster name {name!r} is not a DNS label",
            hint="use lowercase letters, digits and '-', at most 63 characters (and not 'fleet')",
            code="cluster-name",
        )
    ]


def semantic(located: Located, cluster: str) -> list[Problem]:
    """Cross-field rules; run only on values that passed the schema."""
    problems: list[Problem] = []
    pools = located.data.get("nodePools") or []
    seen: dict[str, int] = {}
    for index, pool in enumerate(pools):
        name = str(pool.get("name", ""))
        if name in seen:
            pointer = f"/nodePools/{index}/name"
            file, line, col = located.locate(pointer)
            problems.append(Problem(file, line, col, pointer, f"duplicate node pool name {name!r}", hint=f"also used by /nodePools/{seen[name]}", code="pool-duplicate"))
        seen.setdefault(name, index)
    return problems
