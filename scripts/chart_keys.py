"""Write renderer/data/chart-keys.yaml: every key of the GPU Operator chart's values.yaml,
with the first and last chart release that has it.

Run against a local clone of the GPU Operator repository (not in CI; the output is committed):

    python scripts/chart_keys.py /path/to/gpu-operator.git > renderer/data/chart-keys.yaml
"""

from __future__ import annotations

import re
import subprocess
import sys
from typing import Any

import yaml

VALUES = "deployments/gpu-operator/values.yaml"
FREE_FORM = ("node-feature-discovery", "extraObjects")
"""Subtrees kept as one key: the NFD subchart's own values and arbitrary manifests."""
RELEASE = re.compile(r"^v?(\d+)\.(\d+)\.(\d+)$")


def releases(repo: str) -> list[str]:
    """The newest patch tag of each minor release, oldest first."""
    tags = subprocess.run(["git", "-C", repo, "tag"], capture_output=True, text=True, check=True).stdout.split()
    newest: dict[tuple[int, int], tuple[int, str]] = {}
    for tag in tags:
        m = RELEASE.match(tag)
        if m:
            major, minor, patch = (int(g) for g in m.groups())
            if (major, minor) not in newest or patch > newest[(major, minor)][0]:
                newest[(major, minor)] = (patch, tag)
    return [newest[k][1] for k in sorted(newest)]


def leaves(data: Any, prefix: str = "") -> list[str]:
    if not isinstance(data, dict) or not data or prefix in FREE_FORM:
        return [prefix] if prefix else []
    out: list[str] = []
    for key, value in data.items():
        out += leaves(value, f"{prefix}.{key}" if prefix else str(key))
    return out


def main() -> None:
    repo = sys.argv[1]
    first: dict[str, str] = {}
    last: dict[str, str] = {}
    tags = releases(repo)
    for tag in tags:
        text = subprocess.run(["git", "-C", repo, "show", f"{tag}:{VALUES}"], capture_output=True, text=True).stdout
        if not text:
            continue
        text = re.sub(r"@[A-Z_]+@", "placeholder", text)  # early releases: build-time placeholders
        for key in leaves(yaml.safe_load(text) or {}):
            first.setdefault(key, tag)
            last[key] = tag
    print("# Every key of the GPU Operator chart's values.yaml, from scripts/chart_keys.py:")
    print("# keys: key -> [first release with it, last release with it]; releases: oldest first.")
    print(f"releases: [{', '.join(tags)}]")
    print("keys:")
    for key in sorted(first):
        print(f"  {key}: [{first[key]}, {last[key]}]")


if __name__ == "__main__":
    main()
