"""Regressions for what scripts/fuzz found (docs/reliability.md lists them)."""

from __future__ import annotations

import pytest

from renderer.inputs import Inputs
from renderer.loader import load_text
from renderer.pipeline import plan


@pytest.mark.parametrize(("text", "where"), [("a: ._\n", (1, 4)), ("x: 1\nb:\n  c: -._\n", (3, 6)), ("l: [1, +.__]\n", (1, 8))])
def test_scalar_ruamel_cannot_construct_is_a_problem(text: str, where: tuple[int, int]) -> None:
    """ruamel raises ValueError building a float from ``._``: a Problem at the scalar, not a traceback."""
    source, found = load_text(text, "v.yaml")
    assert source is None
    assert [(p.line, p.column, p.code) for p in found] == [(*where, "syntax")]
    assert "quote it" in found[0].hint


def test_many_identical_pools_give_linear_problems() -> None:
    """n pools selecting the same nodes: n - 1 problems (was n * (n - 1) / 2, minutes of work);
    256 pools is the schema's limit."""
    pools = "".join(f"  - name: p{i}\n    os: {{id: ubuntu, version: '22.04'}}\n" for i in range(256))
    p = plan(Inputs(f"nodePools:\n{pools}".encode(), "values.yaml", ()))
    assert len([x for x in p.errors if x.code == "pool-overlap"]) == 255
