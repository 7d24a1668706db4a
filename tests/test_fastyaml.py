"""The loader's fast path (libyaml) must read every document it accepts exactly as the
round-trip path (ruamel) does: same data, same positions. Anything else it must decline."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from renderer import fastyaml
from renderer.loader import MAX_DEPTH, MAX_NODES, MAX_STRING, _parse_roundtrip
from tests.conftest import DATA, ROOT, examples


def both(text: str) -> tuple[Any, Any]:
    fast = fastyaml.load(text, MAX_DEPTH, MAX_STRING, MAX_NODES)
    slow, problems = _parse_roundtrip(text, "v.yaml")
    return fast, (slow, problems)


def assert_same(text: str) -> bool:
    fast, (slow, problems) = both(text)
    if fast is None:
        return False
    if not isinstance(fast[0], dict):
        return True  # not a mapping: the loader takes the careful path for its problem
    assert slow is not None, problems
    assert fast[0] == slow.data
    assert fast[1] == slow.positions
    assert fast[2] == slow.key_positions
    return True


def policy_files() -> list[Path]:
    files = [ROOT / "values.yaml", *sorted((ROOT / "overlays").glob("*/values.yaml"))]
    files += sorted((ROOT / "tests" / "cases").glob("*/values.yaml"))
    files += sorted((ROOT / "tests" / "cases").glob("*/overlays/*/values.yaml"))
    return files


@pytest.mark.parametrize("path", policy_files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_policy_files_take_the_fast_path_and_agree(path: Path) -> None:
    assert assert_same(path.read_text()), f"{path} fell back to the slow path"


def test_upstream_values_agree() -> None:
    assert_same((DATA / "gpu-operator" / "values.yaml").read_text())


@pytest.mark.parametrize(
    "text",
    [
        "a: !foo 1\n",  # tag
        "a: &x [1]\nb: *x\n",  # alias
        "a: 0777\n",  # YAML 1.1 vs 1.2 octal
        "a: 1_000\n",
        "a: .inf\n",
        "a:\n",  # empty value: ruamel places it at the next token
        "a: 1\na: 2\n",  # duplicate
        "<<: {a: 1}\n",  # merge key
        "a: 1\n---\nb: 2\n",  # two documents
        "a: [1\n",  # syntax error
        "? '\x85  '\n: null\n",  # NEL, LS, PS: line breaks to libyaml (YAML 1.1), not to ruamel
        "a: 1\x85b: 2\n",
        "a: x\u2028y\nb: 2\n",
        "a: 1\u2029b: 2\n",
    ],
)
def test_declines_what_needs_the_careful_path(text: str) -> None:
    fast, _ = both(text)
    assert fast is None


@pytest.mark.parametrize(
    "text",
    [
        "a: 1\rb: 2\r",
        "a: 1\r\nb:\r\n  - 2\r\n  - 'x\r\n  y'\r\nc: 3\r\n",
        "a: 'x\ry'\rb: 1\r",
        'a: "x\r\n\r\n  y"\nb: [1,\r2]\r\n',
        "a: |\r\n  x\r\n  y\r\nb: 1\n",
        "a: >\r  x\r  y\rb: 1\r",
    ],
)
def test_cr_and_crlf_positions_agree(text: str) -> None:
    assert assert_same(text)


def test_timestamps_stay_the_text_written() -> None:
    assert assert_same("a: 2001-01-01\nb: 2001-12-14t21:59:43.10-05:00\n")


def test_yaml_1_1_booleans_are_strings_as_in_yaml_1_2() -> None:
    fast = fastyaml.load("a: yes\nb: on\nc: Off\n", MAX_DEPTH, MAX_STRING, MAX_NODES)
    assert fast is not None and fast[0] == {"a": "yes", "b": "on", "c": "Off"}
    assert assert_same("a: yes\nb: on\nc: Off\n")


# every character YAML treats as a line break somewhere: LF, CR (alone and in CRLF), and the
# YAML 1.1 breaks NEL, LINE SEPARATOR, PARAGRAPH SEPARATOR
LINE_BREAKS = ["\n", "\r", "\r\n", "\x85", "\u2028", "\u2029"]

def texts(min_size: int, max_size: int) -> st.SearchStrategy[str]:
    """Any text, with the line breaks (CRLF counts as one piece) drawn often."""
    pieces = st.one_of(st.characters(codec="utf-8"), st.sampled_from(LINE_BREAKS))
    return st.lists(pieces, min_size=min_size, max_size=max_size).map("".join)



scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**20), max_value=10**20),
    st.floats(allow_nan=False, allow_infinity=False),
    texts(0, 20),
    st.sampled_from(["yes", "no", "on", "off", "~", "null", "True", "0x1f", "1e3", "22.04", "5.15.0-1040", "-", ":", "#x", "'q'", "a: b", "- x"]),
)
keys = st.one_of(texts(1, 12), st.sampled_from(["on", "yes", "1", "true", "null", "nodePools", "a b"]))
trees = st.recursive(scalars, lambda children: st.one_of(st.lists(children, max_size=4), st.dictionaries(keys, children, max_size=4)), max_leaves=20)


@settings(max_examples=examples(300), deadline=None, derandomize=True, database=None, suppress_health_check=[HealthCheck.too_slow])
@given(tree=st.dictionaries(keys, trees, min_size=1, max_size=5), flow=st.booleans(), width=st.sampled_from([20, 80, 1000]))
@example(tree={"\x85": None}, flow=False, width=80)  # NEL: libyaml's line 3, ruamel's line 2
@example(tree={"a": "x\u2028y", "b\r\nc": ["\u2029", "\r"]}, flow=True, width=20)
def test_fast_path_agrees_on_generated_documents(tree: dict[str, Any], flow: bool, width: int) -> None:
    text = yaml.safe_dump(tree, default_flow_style=flow, width=width, allow_unicode=True)
    assert_same(text)


@settings(max_examples=examples(300), deadline=None, derandomize=True, database=None)
@given(text=st.lists(st.sampled_from([*"ab: -[]{},'\"#&*!|>  01.~", *LINE_BREAKS]), max_size=40).map("".join))
def test_fast_path_agrees_on_arbitrary_text(text: str) -> None:
    assert_same(text)
