"""How much the chart analysis costs: CPU time of ``helm.templates_for`` on a policy's fleet
model (imports and the plan excluded, best of N), the number of component builds, and where
they go (by phase of ``renderer/emit/helm_ir.py``).

    python scripts/chart_speed.py                   # the example (values.yaml, overlays/)
    python scripts/chart_speed.py -n 10 tests/cases/dra-pools
    python scripts/chart_speed.py --profile         # cProfile of one run, by own time

Nothing is written. The figures of docs/helm-chart.md ("Speed") come from this script.
"""

from __future__ import annotations

import argparse
import collections
import cProfile
import os
import pstats
import sys
import time
from pathlib import Path
from typing import Any

from renderer import driverdigest, lint, waves
from renderer.emit import helm, helm_ir
from renderer.inputs import read_inputs
from renderer.pipeline import plan

PHASES = (
    "enabling",
    "_guided",
    "_settle",
    "_culprits",
    "_culprits_of",
    "_vary",
    "_presence",
    "_precedence",
    "_pair_nameless",
    "_compared_defaults",
    "_item_order",
    "_pair_siblings",
    "_apply_group",
    "_ranged",
    "_pooled",
    "analyse",
)
"""Analysis steps a build is counted under: the innermost one on the stack."""


def cold() -> None:
    """Forget what one analysis leaves for the next in the same process (the digests, the
    lint findings of rule lists, the secret look of env names, the sync waves)."""
    driverdigest._STEPS.clear()
    lint._RULES_SEEN.clear()
    lint._SECRET_NAMES.clear()
    waves._WAVES.clear()


def count_builds(model: Any) -> collections.Counter[str]:
    """Component builds of one analysis, by phase."""
    real = helm_ir.build_tree
    counts: collections.Counter[str] = collections.Counter()

    def counting(*args: Any, **kwargs: Any) -> Any:
        frame: Any = sys._getframe(1)
        while frame is not None and frame.f_code.co_name not in PHASES:
            frame = frame.f_back
        counts[frame.f_code.co_name if frame is not None else "other"] += 1
        return real(*args, **kwargs)

    helm_ir.build_tree = counting
    try:
        cold()
        helm.templates_for(model)
    finally:
        helm_ir.build_tree = real
    return counts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("policy", nargs="?", default=".", help="folder with values.yaml and overlays/ (default: the example)")
    parser.add_argument("-n", type=int, default=5, help="runs (best of)")
    parser.add_argument("--profile", action="store_true", help="print a cProfile of one run")
    args = parser.parse_args()
    folder = Path(args.policy)
    p = plan(read_inputs(folder / "values.yaml", folder / "overlays"))
    if p.base is None:
        sys.exit("the policy has problems: run gpu-render validate")
    counts = count_builds(p.base)
    times = []
    for _ in range(args.n):
        cold()
        start = time.process_time()
        helm.templates_for(p.base)
        times.append(time.process_time() - start)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"analysis CPU: best {min(times) * 1000:.0f} ms of {args.n} ({', '.join(f'{t * 1000:.0f}' for t in times)}), load {load:.2f}")
    print(f"component builds: {sum(counts.values())} ({', '.join(f'{k} {v}' for k, v in counts.most_common())})")
    if args.profile:
        cold()
        prof = cProfile.Profile()
        prof.enable()
        helm.templates_for(p.base)
        prof.disable()
        pstats.Stats(prof).sort_stats("tottime").print_stats(30)


if __name__ == "__main__":
    main()
