"""Render a fidelity case and compare its facts with the operator's (tests/fidelity/*.yaml)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import yaml

from renderer.merge import deep_merge
from renderer.render import objects
from renderer.resolve import resolve
from tests.fidelity.facts import KINDS, Obj, object_facts

HERE = Path(__file__).resolve().parent


@cache
def driver_cases() -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load((HERE / "driver_cases.yaml").read_text(encoding="utf-8"))
    return data


def case_values(name: str) -> dict[str, Any]:
    data = driver_cases()
    case = {k: v for k, v in data["cases"][name].items() if k != "refused"}
    values = deep_merge(data["base"], case)
    if "nodePools" in case:
        values["nodePools"] = case["nodePools"]
    return values


@cache
def operand_cases() -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load((HERE / "operand_cases.yaml").read_text(encoding="utf-8"))
    return data


POOL = {"name": "ubuntu2204", "os": {"id": "ubuntu", "version": "22.04"}}

DRA_BASE: dict[str, Any] = {
    "cluster": {"kubeVersion": "1.34", "namespace": "test-operator"},
    "nodePools": [{**POOL, "resourceAllocation": "dra"}],
    "draDriver": {
        "repository": "nvcr.io/nvidia",
        "image": "k8s-dra-driver-gpu",
        "version": "v0.1.0",
        "imagePullPolicy": "IfNotPresent",
        "featureGates": {"MPSSupport": True, "AdminAccess": False},
    },
    "daemonsets": {"tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}], "priorityClassName": "system-node-critical"},
    "validator": {"repository": "nvcr.io/nvidia", "image": "gpu-operator-validator", "version": "test"},
    "dcgmExporter": {"repository": "nvcr.io/nvidia/k8s", "image": "dcgm-exporter", "version": "test"},
    "dcgm": {"repository": "nvcr.io/nvidia/cloud-native", "image": "dcgm", "version": "test"},
}
"""The operator's GPUCluster test sample (``internal/state/dra_driver_test.go`` sampleGPUCluster,
the test's image variables) as a policy: one pool, all of it on DRA (``dra: true`` cases)."""


def rendered_operand(name: str) -> set[str]:
    """Facts of the case's component (only its ``objects``, by name, when the case lists them:
    one pod and the RBAC of its ServiceAccount)."""
    case = operand_cases()[name]
    values = deep_merge(DRA_BASE if case.get("dra") else {"nodePools": [POOL]}, case["policy"])
    objs = rendered_objects(values, case["component"])
    if case.get("objects"):
        objs = [o for o in objs if o["metadata"]["name"] in case["objects"]]
    return object_facts(objs)


def expected(name: str) -> set[str]:
    return set(yaml.safe_load((HERE / "expected" / f"{name}.yaml").read_text(encoding="utf-8")))


def rendered_objects(values: dict[str, Any], component: str = "driver") -> list[Obj]:
    return [o for o in objects(resolve(values, "fleet")).get(component, []) if o["kind"] in KINDS]


def rendered(name: str) -> set[str]:
    return object_facts(rendered_objects(case_values(name)))


@dataclass(frozen=True)
class Difference:
    """One allowed difference: facts matching ``pattern`` may be ``missing`` (operator only) or
    ``extra`` (gpu-render only) in the listed ``cases`` (``*``: all), for ``reason``."""

    side: str
    pattern: str
    cases: tuple[str, ...]
    reason: str

    def allows(self, side: str, case: str, fact: str) -> bool:
        return side == self.side and ("*" in self.cases or case in self.cases) and re.search(self.pattern, fact) is not None


@cache
def differences() -> tuple[Difference, ...]:
    rows = yaml.safe_load((HERE / "differences.yaml").read_text(encoding="utf-8"))
    return tuple(Difference(r["side"], r["pattern"], tuple(r.get("cases") or ["*"]), r["reason"]) for r in rows)


def compare(case: str, want: set[str], got: set[str]) -> tuple[int, int, list[str]]:
    """(matched, total expected, unlisted differences) of one case."""
    unlisted = [f"missing: {f}" for f in sorted(want - got) if not any(d.allows("missing", case, f) for d in differences())]
    unlisted += [f"extra: {f}" for f in sorted(got - want) if not any(d.allows("extra", case, f) for d in differences())]
    return len(want & got), len(want), unlisted


def doc_table() -> str:
    """The allowed differences as the Markdown table docs/fidelity.md shows."""
    lines = ["| side | fact (pattern) | cases | why |", "| --- | --- | --- | --- |"]
    for d in differences():
        pattern = d.pattern.replace("|", "\\|")
        lines.append(f"| {d.side} | `{pattern}` | {', '.join(d.cases)} | {d.reason} |")
    return "\n".join(lines) + "\n"
