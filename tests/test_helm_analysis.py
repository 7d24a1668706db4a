"""The chart analysis's shortcuts (renderer/emit/helm_ir.py): they choose which builds to make,
never what the templates are. Each is checked against the plain search it replaces."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from renderer.components import COMPONENTS
from renderer.emit import helm_ir
from renderer.emit.helm import templates_for
from renderer.emit.helm_values import (
    POOL_ATTR,
    POOL_NAMES_READ,
    POOLS_READ,
    Recorded,
    chart_values,
    model_of,
    pool_of,
)
from renderer.inputs import read_inputs
from renderer.pipeline import plan
from tests.conftest import ROOT
from tests.golden import CASES, case_names


def _base(values: Path, overlays: Path) -> Any:
    p = plan(read_inputs(values, overlays))
    assert p.base is not None
    return p.base


def _shape(found: tuple[dict[str, Any], list[helm_ir.Template]]) -> str:
    values, templates = found
    return repr((values, [(t.name, t.gate, t.objects, sorted(t.fixed), sorted(t.knobs), t.derived, t.generated, t.pooled, t.pool_key, t.pool_derived) for t in templates]))


CASES_AND_EXAMPLE = ["example", *case_names()]


@pytest.mark.parametrize("name", CASES_AND_EXAMPLE)
def test_shortcuts_give_the_templates_of_the_plain_search(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Suspects before bisection, and variants not built when the pools a build read come out
    the same, leave every template, knob, build-time key and digest as the plain search has them."""
    folder = ROOT if name == "example" else CASES / name
    model = _base(folder / "values.yaml", folder / "overlays")
    fast = _shape(templates_for(model))
    monkeypatch.setattr(helm_ir, "SHORTCUTS", False)
    assert _shape(templates_for(model)) == fast


def _example_values() -> dict[str, Any]:
    return chart_values(_base(ROOT / "values.yaml", ROOT / "overlays"))


def test_a_build_tells_its_own_reads_from_the_pool_resolutions() -> None:
    """The driver reads pool attributes (recorded as POOL_ATTR paths); resolving the pools reads
    the whole fleet `driver` section, which is in the union of reads but not in `direct`."""
    values = _example_values()
    driver = next(c for c in COMPONENTS if c.name == "driver")
    seen, paths = Recorded(), Recorded()
    assert helm_ir.build_tree(driver, values, "fleet", seen, None, paths)
    assert POOLS_READ in seen.direct
    assert ("driver",) in paths and ("driver",) not in paths.direct
    read = {p[2] for p in paths.direct if p[0] == POOL_ATTR}
    assert {"image", "node_selector", "daemonset_name"} <= read


def test_no_dra_pool_is_a_read_of_the_pool_names_only() -> None:
    """Without a DRA pool, `model.dra_pools` depends on which pools there are, not on their
    settings: the DRA components' enabling search does not try those."""
    values = _example_values()
    seen: set[str] = set()
    model = model_of(values, "fleet", seen, set())
    assert model.dra_pools == ()
    assert POOL_NAMES_READ in seen and POOLS_READ not in seen and "nodePools" not in seen
    assert helm_ir._may_read(seen, set(), ("driver", "pools", "ubuntu2204"))
    assert not helm_ir._may_read(seen, set(), ("driver", "pools", "ubuntu2204", "usePrecompiled"))


def test_pool_of_resolves_one_pool_as_the_model_does() -> None:
    values = _example_values()
    pools = model_of(values, "fleet").pools
    for pool in pools:
        assert pool_of(values, "fleet", pool.name) == pool
    assert pool_of(values, "fleet", "no-such-pool") is None
