"""Speed-ups must not change results: memoised and fresh evaluations agree everywhere."""

from __future__ import annotations

from pathlib import Path

import pytest

from renderer.emit import helm_ir
from renderer.emit.helm import generated_for, static_objects, templates_for
from renderer.emit.helm_values import chart_values
from renderer.inputs import read_inputs
from renderer.pipeline import plan
from tests.conftest import ROOT
from tests.golden import CASES, case_names

FOLDERS = [ROOT, *(CASES / name for name in case_names())]


@pytest.mark.parametrize("folder", FOLDERS, ids=lambda f: f.name)
def test_memoised_chart_evaluation_equals_fresh(folder: Path) -> None:
    p = plan(read_inputs(folder / "values.yaml", folder / "overlays"))
    assert p.base is not None
    base_values, templates = templates_for(p.base)
    memo = helm_ir.EvalMemo()
    cases = [base_values]
    for model in p.clusters.values():
        values = chart_values(model)
        generated = generated_for(templates, static_objects(model))
        if generated:
            values["generated"] = generated
        cases.append(values)
    # twice over: the second pass is answered from the memo alone
    for values in cases + cases:
        assert helm_ir.render_templates(templates, values, memo) == helm_ir.render_templates(templates, values)
    assert memo.hits >= len(cases) * len(templates)


@pytest.mark.parametrize("folder", [ROOT, CASES / "gds-gdrcopy-rdma"], ids=lambda f: f.name)
def test_templates_survive_pickle(folder: Path) -> None:
    """The chart analysis may be cached across runs: its result must pickle to equal objects."""
    import pickle

    from renderer.emit.helm_text import template_text

    p = plan(read_inputs(folder / "values.yaml", folder / "overlays"))
    assert p.base is not None
    values, templates = templates_for(p.base)
    values2, templates2 = pickle.loads(pickle.dumps((values, templates)))
    assert values2 == values
    assert templates2 == templates
    assert [template_text(t, "") for t in templates2] == [template_text(t, "") for t in templates]
    assert helm_ir.render_templates(templates2, values2) == helm_ir.render_templates(templates, values)
    assert pickle.loads(pickle.dumps(helm_ir.MISSING)) is helm_ir.MISSING
