"""Fact-by-fact fidelity with the GPU Operator v26.7 (its driver goldens, its RBAC and binaries).

Every fact of the operator's object is rendered by gpu-render and nothing more, or the
difference is in tests/fidelity/differences.yaml (shown in docs/fidelity.md) with its reason.
``pytest -s`` prints matched/total per case.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from renderer.inputs import read_inputs
from renderer.pipeline import plan
from renderer.yamlio import dump_file
from tests.fidelity import harness as h

ROOT = Path(__file__).resolve().parents[2]
CASES = sorted(h.driver_cases()["cases"])
RENDERED = [c for c in CASES if not h.driver_cases()["cases"][c].get("refused")]


def test_every_operator_driver_golden_has_a_case() -> None:
    assert len(CASES) == 16
    assert sorted(p.stem for p in (h.HERE / "expected").glob("*.yaml")) == sorted([*RENDERED, *h.operand_cases()])


GPUCLUSTER_GOLDENS = [
    "gpucluster-dcgm",
    "gpucluster-dcgm-exporter-embedded",
    "gpucluster-dcgm-exporter-pod-metadata",
    "gpucluster-dcgm-exporter-remote-engine",
    "gpucluster-dra-driver-full-spec",
    "gpucluster-dra-driver-gpus-only",
    "gpucluster-dra-driver-passthrough-support",
    "gpucluster-dra-validation",
]
"""The operator's GPUCluster goldens (v26.7.0 internal/state/testdata/golden)."""


def test_every_operator_gpucluster_golden_has_a_case() -> None:
    assets = [c["asset"].split()[1] for c in h.operand_cases().values() if c.get("dra")]
    assert sorted(assets) == GPUCLUSTER_GOLDENS


@pytest.mark.parametrize("case", RENDERED)
def test_driver_golden_facts(case: str) -> None:
    matched, total, unlisted = h.compare(case, h.expected(case), h.rendered(case))
    print(f"\n{case}: {matched}/{total} facts of the operator's objects rendered as they are")
    assert not unlisted, "differences not in tests/fidelity/differences.yaml:\n" + "\n".join(unlisted)


@pytest.mark.parametrize("case", sorted(h.operand_cases()))
def test_operand_facts(case: str) -> None:
    matched, total, unlisted = h.compare(case, h.expected(case), h.rendered_operand(case))
    print(f"\n{case}: {matched}/{total} facts of the operator's objects rendered as they are")
    assert not unlisted, "differences not in tests/fidelity/differences.yaml:\n" + "\n".join(unlisted)


@pytest.mark.parametrize("case", [c for c in CASES if c not in RENDERED])
def test_openshift_goldens_are_refused(case: str, tmp_path: Path) -> None:
    (tmp_path / "values.yaml").write_text(dump_file([h.case_values(case)]))
    codes = {p.code for p in plan(read_inputs(tmp_path / "values.yaml", tmp_path / "overlays")).errors}
    assert h.driver_cases()["cases"][case]["refused"] in codes


def test_every_allowed_difference_is_used() -> None:
    """A listed difference that no case shows any more is stale: remove it."""
    used = set()
    pairs = [(c, h.rendered(c)) for c in RENDERED] + [(c, h.rendered_operand(c)) for c in h.operand_cases()]
    for case, got in pairs:
        want = h.expected(case)
        for d in h.differences():
            facts = want - got if d.side == "missing" else got - want
            if any(d.allows(d.side, case, f) for f in facts):
                used.add(d)
    assert [d.pattern for d in h.differences() if d not in used] == []


def test_docs_show_the_allowed_differences() -> None:
    doc = (ROOT / "docs" / "fidelity.md").read_text(encoding="utf-8")
    assert h.doc_table() in doc, "docs/fidelity.md: paste tests.fidelity.harness.doc_table()"
