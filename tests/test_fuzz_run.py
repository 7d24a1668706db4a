"""scripts/fuzz runs briefly in the test suite: every target, a bounded number of examples,
0 tracebacks (the long run's figures are in docs/reliability.md)."""

from __future__ import annotations

import importlib.machinery
import importlib.util
import sys
from types import ModuleType

import pytest

from tests.conftest import ROOT


@pytest.fixture(scope="module")
def fuzz() -> ModuleType:
    loader = importlib.machinery.SourceFileLoader("gpu_render_fuzz", str(ROOT / "scripts" / "fuzz"))
    spec = importlib.util.spec_from_loader("gpu_render_fuzz", loader)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["gpu_render_fuzz"] = module
    loader.exec_module(module)
    return module


BRIEF = {
    "yaml text": 15,
    "raw bytes": 15,
    "values-shaped trees (+ overlays)": 10,
    "mutated valid policies": 10,
    "limit attacks": 3,
    "hand-written patches": 20,
    "nodes.json": 30,
    "policy repos on disk": 8,
    "output folders (build cache)": 2,
}


def test_every_target_runs_here(fuzz: ModuleType) -> None:
    assert set(BRIEF) == set(fuzz.TARGETS)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(BRIEF))
def test_a_brief_fuzz_run_finds_no_traceback(fuzz: ModuleType, name: str) -> None:
    strategy, checker, _ = fuzz.TARGETS[name]
    calls, failure = fuzz.run_target(name, strategy, BRIEF[name], 8, checker)
    assert failure == "", failure
    assert calls >= 1
