"""Write renderer/data/chart-keys.yaml: every key of the GPU Operator chart's values.yaml,
and every key its templates read (``.Values.a.b``) that no release's values.yaml declares
(``fullnameOverride``, ``validator.driver.env``), with the first and last chart release that
has it (a declared key's releases are those of the values.yaml that declare it).

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
TEMPLATES = "deployments/gpu-operator/templates"
READ_PATTERN = r"\.Values((\.[A-Za-z_][A-Za-z0-9_]*)+)"
"""A template's reference to a value, ``.Values.driver.repoConfig.configMapName`` (group 1:
the key with a leading dot), for ``git grep -E`` and Python alike."""
READ = re.compile(READ_PATTERN)
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


def template_keys(repo: str, tag: str, declared: list[str]) -> list[str]:
    """The keys ``tag``'s templates read that its values.yaml does not declare: neither a leaf,
    nor a map holding leaves, nor inside a leaf (a list or a free-form map)."""
    found = subprocess.run(["git", "-C", repo, "grep", "-ho", "-E", READ_PATTERN, tag, "--", TEMPLATES], capture_output=True, text=True).stdout
    leaf = set(declared)
    maps = {key.rsplit(".", n)[0] for key in declared for n in range(1, key.count(".") + 1)}
    out: set[str] = set()
    for m in READ.finditer(found):
        key = m.group(1)[1:]
        parts = key.split(".")
        if key in maps or any(".".join(parts[:i]) in leaf for i in range(1, len(parts) + 1)):
            continue
        out.add(key)
    return sorted(out)


def main() -> None:
    repo = sys.argv[1]
    first: dict[str, str] = {}
    last: dict[str, str] = {}
    read_first: dict[str, str] = {}  # keys only templates read
    read_last: dict[str, str] = {}
    tags = releases(repo)
    for tag in tags:
        text = subprocess.run(["git", "-C", repo, "show", f"{tag}:{VALUES}"], capture_output=True, text=True).stdout
        if not text:
            continue
        text = re.sub(r"@[A-Z_]+@", "placeholder", text)  # early releases: build-time placeholders
        declared = leaves(yaml.safe_load(text) or {})
        for key in declared:
            first.setdefault(key, tag)
            last[key] = tag
        for key in template_keys(repo, tag, declared):
            read_first.setdefault(key, tag)
            read_last[key] = tag
    for key in read_first.keys() - first.keys():
        # a map a template tests (`if .Values.validator.driver`) is kept as the keys read in it
        if not any(other.startswith(key + ".") for other in [*first, *read_first]):
            first[key], last[key] = read_first[key], read_last[key]
    print("# Every key of the GPU Operator chart's values.yaml and every undeclared key its templates")
    print("# read, from scripts/chart_keys.py:")
    print("# keys: key -> [first release with it, last release with it]; releases: oldest first.")
    print(f"releases: [{', '.join(tags)}]")
    print("keys:")
    for key in sorted(first):
        print(f"  {key}: [{first[key]}, {last[key]}]")


if __name__ == "__main__":
    main()
