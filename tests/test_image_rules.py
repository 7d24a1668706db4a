"""The image-reference rule reads the defaulted values but walks only what the policy set."""

from __future__ import annotations

import pytest

from renderer import checks
from renderer.inputs import ClusterInput, Inputs
from renderer.pipeline import plan
from tests.conftest import ROOT

BASE = (ROOT / "values.yaml").read_text()

OVERLAYS = {
    'driver:\n  version: "5 9"\n': "overlays/c1/values.yaml:2:12: /driver/version: '5 9' is not a valid image version",
    'devicePlugin:\n  repository: "nvcr.io/Nvidia/"\n': "overlays/c1/values.yaml:2:15: /devicePlugin/repository: 'nvcr.io/Nvidia/' is not a valid image repository",
    'dcgmExporter:\n  image: "UP"\n': "overlays/c1/values.yaml:2:10: /dcgmExporter/image: 'UP' is not a valid image image",
    "driver:\n  manager:\n    version: v1..x@\n": "overlays/c1/values.yaml:3:14: /driver/manager/version: 'v1..x@' is not a valid image version",
    'nodePools:\n  - name: a\n    os: {id: ubuntu, version: "22.04"}\n    driver:\n      repository: "a b"\n': "overlays/c1/values.yaml:5:19: /nodePools/0/driver/repository: 'a b' is not a valid image repository",
    "gfd:\n  env: []\n": "",
}


def _errors(overlay: str) -> list[str]:
    p = plan(Inputs(BASE.encode(), "values.yaml", (ClusterInput("c1", overlay.encode(), "overlays/c1/values.yaml"),)))
    return [x.format() for x in p.problems if x.code == "image-reference"]


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_an_image_part_the_policy_sets_is_checked_where_it_is_written(overlay: str) -> None:
    found = _errors(overlay)
    assert [f[: len(OVERLAYS[overlay])] for f in found] == ([OVERLAYS[overlay]] if OVERLAYS[overlay] else []), found


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_walking_the_policy_s_parts_finds_what_walking_everything_finds(overlay: str, monkeypatch: pytest.MonkeyPatch) -> None:
    walked = _errors(overlay)
    monkeypatch.setattr(checks, "_defaults_pass", lambda: False)  # as if a default broke the grammar
    assert _errors(overlay) == walked


def test_the_defaults_own_image_settings_pass() -> None:
    assert checks._defaults_pass()
