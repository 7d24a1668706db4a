"""Speed-ups must not change results: memoised and fresh evaluations agree everywhere."""

from __future__ import annotations

from pathlib import Path

import pytest

from renderer.emit import helm_eval, helm_ir, helm_tree
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
    memo = helm_eval.EvalMemo()
    cases = [base_values]
    for model in p.clusters.values():
        values = chart_values(model)
        generated = generated_for(templates, static_objects(model), values)
        if generated:
            values["generated"] = generated
        cases.append(values)
    # twice over: the second pass is answered from the memo alone
    for values in cases + cases:
        assert helm_eval.render_templates(templates, values, memo) == helm_eval.render_templates(templates, values)
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
    assert helm_eval.render_templates(templates2, values2) == helm_eval.render_templates(templates, values)
    assert pickle.loads(pickle.dumps(helm_tree.MISSING)) is helm_tree.MISSING


@pytest.mark.slow
@pytest.mark.parametrize("folder", [ROOT, CASES / "sandbox-kubevirt"], ids=lambda f: f.name)
def test_skipping_unread_knobs_changes_no_template(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The analysis skips builds that change only values a build never read: with every value
    taken as read, it must find the very same templates."""
    p = plan(read_inputs(folder / "values.yaml", folder / "overlays"))
    assert p.base is not None
    fast = templates_for(p.base)
    monkeypatch.setattr(helm_ir, "_may_read", lambda *_: True)
    assert templates_for(p.base) == fast


def test_section_records_what_is_read() -> None:
    from renderer.emit.helm_values import DeepReads, unwrap_sections

    seen: set[str] = set()
    paths: set[tuple[str, ...]] = set()
    values = DeepReads({"a": {"x": 1, "y": {"z": 2}}, "b": {"k": 3}, "c": [1], "d": {"q": 4}}, seen, paths)
    section = values["a"]
    assert section.get("x") == 1 and "y" in section
    assert paths == {("a", "x"), ("a", "y")} and seen == {"a"}
    assert values.get("c") == [1] and ("c",) in paths
    assert dict(values["b"]) == {"k": 3} and ("b",) in paths  # copied whole
    assert values["a"] is section
    leaked = unwrap_sections([{"spec": values["d"]}])
    assert leaked == [{"spec": {"q": 4}}] and type(leaked[0]["spec"]) is dict and ("d",) in paths
    assert values.get("missing") is None and "missing" in seen
