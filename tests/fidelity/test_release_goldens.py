"""Fact-by-fact fidelity with the driver goldens of the older operator releases gpu-render imitates.

``cluster.operatorRelease: v26.3`` (resp. ``v25.10``) is compared with the driver goldens of that
release's newest patch tag, v26.3.3 (resp. v25.10.1): ``internal/state/testdata/golden/driver-*.yaml``,
whose facts are ``expected/<release>/<golden>.yaml``. Their inputs (``internal/state/driver_test.go``)
are v26.7.0's for every case the release has (v25.10.1 has no ``driver-hostnetwork``, which v26.3.1
adds; its runtime spec also names a Kubernetes version, which no golden object shows), so each case
is the ``driver_cases.yaml`` policy of the same name with ``cluster.operatorRelease`` added.

Every fact of the operator's objects is rendered and nothing more, or the difference is in
differences.yaml (where its reason holds for the release: :data:`BASE_ROWS_NOT_HOLDING`) or in
differences_releases.yaml (cases ``<release>/<golden>``); ``pytest -s`` prints matched/total per
case. Written with it and fixed: v26.3 dropped every ``hostNetwork`` key and the exporter's pod
metadata keys (gated from the v26.3.0 CRD, while the v26.3 imitated is v26.3.3).
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

import pytest
import yaml

from renderer.inputs import read_inputs
from renderer.merge import deep_merge
from renderer.pipeline import plan
from renderer.yamlio import dump_file
from tests.fidelity import harness as h
from tests.fidelity.facts import object_facts

TAGS = {"v26.3": "v26.3.3", "v25.10": "v25.10.1"}
"""Imitated release -> the operator tag whose goldens are compared."""

_COMMON = [
    "driver-additional-configs",
    "driver-full-spec",
    "driver-gdrcopy",
    "driver-gds",
    "driver-minimal",
    "driver-precompiled",
    "driver-rdma",
    "driver-rdma-hostmofed",
    "driver-secret-env",
    "driver-vgpu-host-manager",
    "driver-vgpu-licensing",
    "driver-vgpu-licensing-secret",
]
OPENSHIFT = ["driver-gdrcopy-openshift", "driver-openshift-drivertoolkit", "driver-vgpu-host-manager-openshift"]
GOLDENS = {"v26.3": sorted([*_COMMON, "driver-hostnetwork"]), "v25.10": _COMMON}
"""The non-OpenShift driver goldens of each tag (v26.3.3: 16 with OpenShift's, v25.10.1: 15)."""

BASE_ROWS_NOT_HOLDING: dict[str, tuple[tuple[str, str], ...]] = {
    # v25.10.1 sets no DRIVER_CONFIG_DIGEST at all (neither its NVIDIADriver manifest nor
    # TransformDriver: the digest arrives in v26.3.0), so "hashes another input" is no reason
    # there: differences_releases.yaml gives the reason gpu-render sets it on v25.10.
    "v25.10": (("missing", "env DRIVER_CONFIG_DIGEST="), ("extra", "env DRIVER_CONFIG_DIGEST=")),
}
"""Release -> (side, pattern) of the differences.yaml rows whose reason does not hold for it."""

CASES = [(rel, case) for rel, cases in GOLDENS.items() for case in cases]


@cache
def release_differences() -> tuple[h.Difference, ...]:
    rows = yaml.safe_load((h.HERE / "differences_releases.yaml").read_text(encoding="utf-8"))
    return tuple(h.Difference(r["side"], r["pattern"], tuple(r.get("cases") or ["*"]), r["reason"]) for r in rows)


def base_differences(release: str) -> list[h.Difference]:
    skip = BASE_ROWS_NOT_HOLDING.get(release, ())
    return [d for d in h.differences() if (d.side, d.pattern) not in skip]


def expected(release: str, case: str) -> set[str]:
    return set(yaml.safe_load((h.HERE / "expected" / release / f"{case}.yaml").read_text(encoding="utf-8")))


def values(release: str, case: str) -> dict:
    return deep_merge(h.case_values(case), {"cluster": {"operatorRelease": release}})


def rendered(release: str, case: str) -> set[str]:
    return object_facts(h.rendered_objects(values(release, case)))


def compare(release: str, case: str, want: set[str], got: set[str]) -> tuple[int, int, list[str]]:
    """(matched, total expected, unlisted differences) of one case of ``release``."""
    base = base_differences(release)

    def allowed(side: str, fact: str) -> bool:
        return any(d.allows(side, case, fact) for d in base) or any(d.allows(side, f"{release}/{case}", fact) for d in release_differences())

    unlisted = [f"missing: {f}" for f in sorted(want - got) if not allowed("missing", f)]
    unlisted += [f"extra: {f}" for f in sorted(got - want) if not allowed("extra", f)]
    return len(want & got), len(want), unlisted


@pytest.mark.parametrize("release", sorted(TAGS))
def test_every_release_golden_has_expected_facts(release: str) -> None:
    assert sorted(p.stem for p in (h.HERE / "expected" / release).glob("*.yaml")) == GOLDENS[release]
    assert set(GOLDENS[release]) | set(OPENSHIFT) <= set(h.driver_cases()["cases"])


@pytest.mark.parametrize(("release", "case"), CASES, ids=[f"{r}/{c}" for r, c in CASES])
def test_release_golden_facts(release: str, case: str) -> None:
    matched, total, unlisted = compare(release, case, expected(release, case), rendered(release, case))
    print(f"\n{release}/{case}: {matched}/{total} facts of the operator's {TAGS[release]} objects rendered as they are")
    assert not unlisted, "differences not in tests/fidelity/differences*.yaml:\n" + "\n".join(unlisted)


@pytest.mark.parametrize("release", sorted(TAGS))
@pytest.mark.parametrize("case", OPENSHIFT)
def test_release_openshift_goldens_are_refused(release: str, case: str, tmp_path: Path) -> None:
    (tmp_path / "values.yaml").write_text(dump_file([values(release, case)]))
    codes = {p.code for p in plan(read_inputs(tmp_path / "values.yaml", tmp_path / "overlays")).errors}
    assert h.driver_cases()["cases"][case]["refused"] in codes


def test_every_release_difference_is_used() -> None:
    """A row of differences_releases.yaml (or of BASE_ROWS_NOT_HOLDING) that no case needs is stale."""
    used = set()
    for release, case in CASES:
        want, got = expected(release, case), rendered(release, case)
        for d in release_differences():
            facts = want - got if d.side == "missing" else got - want
            if any(d.allows(d.side, f"{release}/{case}", f) for f in facts):
                used.add(d)
    assert [d.pattern for d in release_differences() if d not in used] == []
    rows = {(d.side, d.pattern) for d in h.differences()}
    assert [row for skip in BASE_ROWS_NOT_HOLDING.values() for row in skip if row not in rows] == []
