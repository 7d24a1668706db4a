"""Where a cold `gpu-render build --no-cache` spends its CPU time, phase by phase.

    python scripts/build_phases.py            # the example (values.yaml, overlays/), 7 runs
    python scripts/build_phases.py -n 10 tests/cases/dra-pools

Each run is a new process (cold: imports, no digest kept) that builds into a new temporary
folder, removed afterwards, with the phases' functions wrapped to add up their CPU time
(``time.process_time``: user + system). The report gives each phase's best of the runs, so
the phases need not add up to the best total. Run it with bytecode compiled (without
PYTHONDONTWRITEBYTECODE), as pip installs gpu-render. The build runs in one process
(``--jobs 1``): the CPU a forked analysis worker spends is not in this process's time. The
figures of docs/helm-chart.md ("Speed", the cold build) come from this script.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

PHASES = (
    ("renderer.inputs", "read_inputs", "read the inputs"),
    ("renderer.pipeline", "plan", "plan (validate, resolve)"),
    ("renderer.render", "objects", "render the components"),
    ("renderer.emit.helm", "templates_for", "chart analysis"),
    ("renderer.emit.helm", "emit_fleet", "chart: print templates, values, README"),
    ("renderer.emit.helm", "cluster_values", "chart: clusters' values, checked"),
    ("renderer.emit.kustomize", "emit_cluster", "overlays"),
    ("renderer.emit.base", "emit_objects", "base: print"),
    ("renderer.emit.base", "verify", "base: parse back"),
    ("renderer.emit.argocd", "emit_fleet", "Argo CD"),
    ("renderer.render", "self_check", "self-check (parse back)"),
    ("renderer.write", "write_tree", "write (staging, sync, renames)"),
)


def one(out: str) -> dict[str, float]:
    """One build in this process: CPU ms of each phase, of the imports and of the whole."""
    import importlib

    start = time.process_time()
    import renderer.cli

    imported = time.process_time()
    for module, _, _ in PHASES:
        importlib.import_module(module)
    spent: dict[str, float] = {"import the CLI": (imported - start) * 1000, "import the build": (time.process_time() - imported) * 1000}

    def wrap(module: Any, name: str, label: str) -> None:
        real: Callable[..., Any] = getattr(module, name)

        def timed(*args: Any, **kwargs: Any) -> Any:
            begin = time.process_time()
            try:
                return real(*args, **kwargs)
            finally:
                spent[label] = spent.get(label, 0.0) + (time.process_time() - begin) * 1000

        setattr(module, name, timed)

    for module, name, label in PHASES:
        wrap(sys.modules[module], name, label)
    # one process: process time counts this process only, not the workers a build forks for the analysis
    sys.argv = ["gpu-render", "build", "--no-cache", "--jobs", "1", "--out", out, "-q"]
    try:
        renderer.cli.main(prog_name="gpu-render")
    except SystemExit as exc:
        if exc.code:
            raise
    spent["whole (after the interpreter started)"] = (time.process_time() - start) * 1000
    return spent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("policy", nargs="?", default=".", help="folder with values.yaml and overlays/ (default: the example)")
    parser.add_argument("-n", type=int, default=7, help="runs (best of)")
    parser.add_argument("--one", metavar="OUT", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(one(args.one)))
        return
    best: dict[str, float] = {}
    for _ in range(args.n):
        work = tempfile.mkdtemp(prefix="gpu-render-phases-")
        try:
            proc = subprocess.run([sys.executable, os.path.abspath(__file__), "--one", str(Path(work) / "out")], cwd=args.policy, capture_output=True, text=True, check=True)
        finally:
            shutil.rmtree(work, ignore_errors=True)
        for label, ms in json.loads(proc.stdout.splitlines()[-1]).items():
            best[label] = min(best.get(label, float("inf")), ms)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"CPU ms, best of {args.n} cold builds, load {load:.2f}")
    for label, ms in best.items():
        print(f"  {label:40s} {ms:6.1f}")


if __name__ == "__main__":
    main()
