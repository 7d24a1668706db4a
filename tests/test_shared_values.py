"""Rendering reads the resolved values and never changes them.

A pool's driver settings share the fleet's ``driver`` section (``merged_view``: copying them
for every pool and every probe of the chart analysis cost seconds on large sections), and
components share each section they read, so a component that changed what it read would
change every later component's and pool's input. Each golden case is rendered in full (chart
analysis included) and its models must be what they were before.
"""

from __future__ import annotations

from typing import Any

import pytest

from renderer.inputs import read_inputs
from renderer.jsondata import clone
from renderer.pipeline import plan
from renderer.render import render_plan
from tests.golden import CASES, case_names


def _snapshot(model: Any) -> tuple[Any, ...]:
    return clone(model.values), [(p.name, clone(p.driver), clone(p.values), p.image, dict(p.images)) for p in model.pools]


@pytest.mark.parametrize("name", case_names())
def test_render_leaves_the_models_as_they_were(name: str) -> None:
    folder = CASES / name
    p = plan(read_inputs(folder / "values.yaml", folder / "overlays"))
    assert p.base is not None and not p.errors
    models = {"": p.base, **p.clusters}
    before = {key: _snapshot(model) for key, model in models.items()}
    render_plan(p)
    assert {key: _snapshot(model) for key, model in models.items()} == before
