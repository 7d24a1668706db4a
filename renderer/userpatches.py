"""Hand-written Kustomize patches (``overlays/<cluster>/patches/*.yaml``): checks as Problems.

They are strategic-merge patches, one or more documents per file, each naming its target by
apiVersion, kind and metadata.name; they apply after gpu-render's own overlay patches.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

import yaml

from renderer import yamlio
from renderer.problems import Problem

UserPatches = tuple[tuple[str, bytes], ...]
"""(file name, raw bytes) per patch file, in file-name order."""

FILE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*\.ya?ml$")


def patches_dir(values_path: str) -> str:
    """Display path of a cluster's patch folder, next to its values file."""
    folder = values_path.rsplit("/", 1)[0] if "/" in values_path else "."
    return f"{folder}/patches"


def parse(raw: bytes) -> list[Any]:
    return yamlio.load_all(raw.decode("utf-8"))


def _problem(path: str, message: str, hint: str = "", line: int = 1, col: int = 1) -> Problem:
    return Problem(path, line, col, "", message, hint=hint, code="user-patch")


def _is_smp(doc: Any) -> bool:
    if not isinstance(doc, dict) or not doc.get("apiVersion") or not doc.get("kind"):
        return False
    meta = doc.get("metadata")
    return isinstance(meta, dict) and bool(meta.get("name"))


def check_user_patches(folder: str, patches: UserPatches) -> list[Problem]:
    """Each file: an allowed name, UTF-8 YAML, only strategic-merge patch documents."""
    problems: list[Problem] = []
    for name, raw in patches:
        path = f"{folder}/{name}"
        if not FILE_NAME.match(name):
            problems.append(_problem(path, f"patch file name {name!r} is not allowed", "use letters, digits, '.', '_' and '-', ending in .yaml"))
            continue
        try:
            docs = parse(raw)
        except UnicodeDecodeError:
            problems.append(_problem(path, "patch is not UTF-8 text"))
            continue
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            line, col = (mark.line + 1, mark.column + 1) if mark is not None else (1, 1)
            problems.append(_problem(path, f"patch is not valid YAML: {getattr(exc, 'problem', None) or exc}", line=line, col=col))
            continue
        if not docs:
            problems.append(_problem(path, "patch file is empty"))
        elif not all(_is_smp(d) for d in docs):
            problems.append(
                _problem(
                    path,
                    "each document must be a strategic-merge patch with apiVersion, kind and metadata.name",
                    "JSON 6902 operation lists have no target here; write the change as a partial object",
                )
            )
    return problems


def target_problems(folder: str, rendered: Iterable[tuple[str, str, str, str]], patches: UserPatches) -> list[Problem]:
    """Patches whose target (apiVersion, kind, namespace, name) the cluster does not render.

    Kustomize matches a strategic-merge patch on all four: a namespaced object's patch must
    name its namespace.
    """
    known = set(rendered)
    problems: list[Problem] = []
    for fname, raw in patches:
        for doc in parse(raw):
            meta = doc["metadata"]
            key = (str(doc["apiVersion"]), str(doc["kind"]), str(meta.get("namespace") or ""), str(meta["name"]))
            if key in known:
                continue
            near = sorted(k for k in known if k[1] == key[1] and k[3] == key[3])
            hint = "check the kind and name, and whether the component is enabled for this cluster"
            if near:
                api, _, ns, _ = near[0]
                hint = f"the cluster renders it as apiVersion {api}" + (f" in namespace {ns}" if ns else ", cluster-scoped") + "; the patch must say the same"
            where = f" in namespace {key[2]}" if key[2] else ""
            problems.append(
                _problem(
                    f"{folder}/{fname}",
                    f"patch targets {key[0]} {key[1]}/{key[3]}{where}, which this cluster does not render",
                    hint,
                )
            )
    return problems
