"""The example's output/base builds with the real kustomize and passes strict schemas."""

from __future__ import annotations

from pathlib import Path

import pytest

from renderer import yamlio
from renderer.inputs import read_inputs
from renderer.render import render
from tests.conftest import ROOT, run_tool, strict_validate


@pytest.fixture(scope="module")
def example_output(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("out")
    files = render(read_inputs(ROOT / "values.yaml", ROOT / "overlays"))
    for rel, text in files.items():
        (out / rel).parent.mkdir(parents=True, exist_ok=True)
        (out / rel).write_text(text)
    return out


def test_kustomize_builds_base(example_output: Path, kubectl: str) -> None:
    out = run_tool([kubectl, "kustomize", str(example_output / "base")])
    objs = yamlio.load_all(out)
    assert {o["kind"] for o in objs} >= {"Namespace", "DaemonSet", "ServiceAccount"}


@pytest.mark.parametrize("kube_version", ["1.31", "1.35"])
def test_base_objects_pass_strict_schemas(example_output: Path, kube_version: str) -> None:
    objs = [o for p in sorted((example_output / "base").rglob("*.yaml")) if p.name != "kustomization.yaml" for o in yamlio.load_all(p.read_text())]
    assert objs
    assert strict_validate(objs, kube_version) == []


def test_committed_output_is_current() -> None:
    """output/ in the repo is what `gpu-render build` renders from the example."""
    files = render(read_inputs(ROOT / "values.yaml", ROOT / "overlays"))
    for rel, text in files.items():
        assert (ROOT / "output" / rel).read_text() == text, f"output/{rel} is stale: run gpu-render build"
