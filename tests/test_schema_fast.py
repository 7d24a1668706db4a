"""The compiled schema check (renderer/_schema_check.py, fastjsonschema) is the fast path of
``schema.validate``: it never passes what jsonschema refuses, a valid build never imports
jsonschema, and problems are worded by jsonschema as before."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from renderer import resolve, schema
from renderer.inputs import read_inputs
from renderer.pipeline import plan
from tests import test_bad_inputs
from tests.conftest import ROOT
from tests.golden import CASES, case_names

MODULE = ROOT / "renderer" / schema.FAST_MODULE


def test_compiled_module_is_current(update_golden: bool) -> None:
    want = schema.fast_source()
    if update_golden:
        MODULE.write_text(want, encoding="utf-8")
    assert MODULE.read_text(encoding="utf-8") == want, "the schema changed: python -m pytest tests/test_schema_fast.py --update-golden"
    assert schema._fast() is not None


def _fast_ok(data: Any) -> bool:
    fast = schema._fast()
    assert fast is not None
    try:
        fast(copy.deepcopy(data))
    except Exception:
        return False
    return True


def _jsonschema_ok(data: Any) -> bool:
    return not any(True for _ in schema._validator().iter_errors(data))


def _seen(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """Every document ``schema._problems`` is asked about while the test runs."""
    seen: list[dict[str, Any]] = []
    real = schema._problems

    def spy(data: dict[str, Any], located: Any) -> Any:
        seen.append(copy.deepcopy(data))
        return real(data, located)

    monkeypatch.setattr(schema, "_problems", spy)
    return seen


@pytest.mark.parametrize("folder", [ROOT, *(CASES / n for n in case_names())], ids=lambda f: f.name)
def test_valid_policies_take_the_fast_path(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    seen = _seen(monkeypatch)
    p = plan(read_inputs(folder / "values.yaml", folder / "overlays"))
    assert seen
    for data in seen:
        ok = _jsonschema_ok(data)
        assert _fast_ok(data) == ok or ok  # never a pass that jsonschema refuses
        if not [e for e in p.errors if e.code.startswith(("schema-", "unknown-key"))]:
            assert _fast_ok(data), "a valid policy should not need jsonschema"


def test_bad_inputs_agree(monkeypatch: pytest.MonkeyPatch) -> None:
    seen = _seen(monkeypatch)
    for _, values, overlay, _ in test_bad_inputs.CASES:
        test_bad_inputs.found(values, overlay)
    refused = 0
    for data in seen:
        if not _jsonschema_ok(data):
            refused += 1
            assert not _fast_ok(data), json.dumps(data)[:300]
    assert refused >= 10


_SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-3, 10**6), st.floats(allow_nan=False, width=32), st.text(max_size=12),
                     st.sampled_from(["none", "mixed", "1.35", "1.3x", "open", "Always", "10%", "abc\n", "30s", "-1", "", "a" * 70]))
_VALUES = st.recursive(_SCALARS, lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(st.sampled_from(["name", "value", "key", "enabled", "x"]), inner, max_size=3)), max_leaves=6)


def _paths(node: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [path]
    if isinstance(node, dict):
        for k, v in node.items():
            out += _paths(v, (*path, k))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            out += _paths(v, (*path, i))
    return out


BASE = {**resolve.defaults(), "nodePools": [{"name": "a", "os": {"id": "ubuntu", "version": "22.04"}, "kernel": "5.15.0-1040-nvidia"}]}
PATHS = [p for p in _paths(BASE) if p]


@settings(max_examples=300, deadline=None, derandomize=True, database=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.sampled_from(PATHS), _VALUES, st.booleans()), min_size=1, max_size=4))
def test_fast_path_never_passes_what_jsonschema_refuses(edits: list[tuple[tuple[Any, ...], Any, bool]]) -> None:
    data = copy.deepcopy(BASE)
    for path, value, as_new_key in edits:
        node: Any = data
        for step in path[:-1]:
            if not isinstance(node, (dict, list)) or (isinstance(node, dict) and step not in node) or (isinstance(node, list) and not (isinstance(step, int) and step < len(node))):
                break
            node = node[step]
        else:
            if isinstance(node, dict):
                node["extraKey" if as_new_key else path[-1]] = value
            elif isinstance(node, list) and isinstance(path[-1], int) and path[-1] < len(node):
                node[path[-1]] = value
    for section in data:  # as schema.validate asks: whole, and one top-level section at a time
        part = {section: data[section]}
        if _fast_ok(part):
            assert _jsonschema_ok(part), json.dumps(part, default=str)[:400]
    if _fast_ok(data):
        assert _jsonschema_ok(data)


def _modules_after(args: list[str], cwd: Path) -> list[str]:
    code = (
        "import sys, runpy\n"
        f"sys.argv = ['gpu-render', *{args!r}]\n"
        "try:\n    runpy.run_module('renderer', run_name='__main__')\nexcept SystemExit:\n    pass\n"
        "print('modules:', *sorted(m for m in sys.modules if m.split('.')[0] in ('jsonschema', 'fastjsonschema', 'jinja2')), file=sys.stderr)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], cwd=cwd, capture_output=True, text=True, env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    return proc.stderr.strip().splitlines()[-1].split()[1:]


def test_a_valid_build_never_imports_jsonschema(tmp_path: Path) -> None:
    for args in (["validate"], ["build", "-q", "--out", str(tmp_path / "out")]):
        modules = _modules_after([*args, "--values", str(ROOT / "values.yaml"), "--overlays", str(ROOT / "overlays")], tmp_path)
        assert "fastjsonschema" not in modules and "jsonschema" not in modules, (args, modules)  # (the check imports neither)
        assert "jinja2" not in modules, (args, modules)  # only `init` renders Jinja templates
    (tmp_path / "bad.yaml").write_text("mig:\n  strategy: Mixed\n")
    modules = _modules_after(["validate", "--values", str(tmp_path / "bad.yaml"), "--overlays", str(tmp_path / "none")], tmp_path)
    assert "jsonschema" in modules  # a problem is worded by jsonschema
