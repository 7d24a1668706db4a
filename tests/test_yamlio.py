"""The fast YAML dumper and loader must give exactly what PyYAML's own paths give.

The reference below is the dumper gpu-render used before the fast one (PyYAML's C-backed
SafeDumper, with our str style), kept here verbatim: every output byte depends on it.
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from renderer import yamlio
from tests.conftest import examples
from tests.golden import CASES, case_names

ROOT = Path(__file__).resolve().parent.parent

_YAML12_NUMBER = re.compile(r"[-+]?(?:[0-9][0-9_]*(?:\.[0-9_]*)?|\.[0-9][0-9_]*)[eE][-+]?[0-9]+|0o[0-7_]+|0b[01_]+")


def _str_representer(dumper: Any, data: str) -> yaml.Node:
    style = "|" if "\n" in data else ("'" if _YAML12_NUMBER.fullmatch(data) else None)
    node: yaml.Node = dumper.represent_scalar("tag:yaml.org,2002:str", data, style=style)
    return node


class _ReferenceDumper(yaml.CSafeDumper):
    def ignore_aliases(self, data: Any) -> bool:  # generated files never carry anchors
        return True


_ReferenceDumper.add_representer(str, _str_representer)


def reference_dump(obj: Any) -> str:
    return str(yaml.dump(obj, Dumper=_ReferenceDumper, sort_keys=False, default_flow_style=False, width=1000, allow_unicode=True))


def reference_load_all(text: str) -> list[Any]:
    return [d for d in yaml.load_all(text, Loader=yaml.CSafeLoader) if d is not None]


TRICKY = [
    "", " ", "yes", "no", "on", "off", "y", "n", "true", "False", "null", "Null", "~", "-", "--", "---", "...", ":", "a:b", "a: b",
    "#", "a #b", "- x", "? x", "!x", "&a", "*a", "%x", "@x", "`x", "|", ">", "'", '"', "{", "}", "[", "]", ",",
    "1e3", "1E3", "-1e-3", "1.5e3", ".5e3", "0o7", "0o17", "0b101", "0x1f", "0777", "1_000", "1:20", "1.0", ".inf", "-.inf", ".nan",
    "2001-12-14", "2001-12-14t21:59:43.10-05:00", "=", "<<", " lead", "trail ", "in  side", "tab\there", "\t",
    "é", "日本語", "emoji 🎉", "\u00a0", "\u2028", "\x85", "\r", "a\rb", "\x00", "\x07", "\ufeff", "\ud7ff",
    "a\nb", "a\nb\n", "a\n\n", "\n", "\nlead", " a\nb", "a \nb", "a\n b\n", "a\n\nb\n", "line\n" * 3, "x" * 127, "x" * 128, "x" * 2000,
    " ".join(["word"] * 300), "a" * 995 + " b c", "'quoted'", '"dq"', "a'b", 'a"b', "C:\\path", "http://x:1/y?z#w", "-1", "+1",
]

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from(TRICKY),
    st.text(max_size=40),
    st.text(alphabet=st.sampled_from(list("ab :-#'\"\n\t 01e.xo")), max_size=30),
    st.sampled_from(TRICKY).flatmap(lambda s: st.integers(0, 3).map(lambda n: (s + " ") * n + s)),
)
keys = st.one_of(st.sampled_from(TRICKY), st.text(max_size=20), st.integers(), st.booleans(), st.none(), st.floats(allow_nan=False))
json_like = st.recursive(
    scalars,
    lambda children: st.one_of(st.lists(children, max_size=5), st.dictionaries(keys, children, max_size=5)),
    max_leaves=40,
)


@settings(max_examples=examples(800), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(json_like)
@example({"a": "l1\nl2\n", "b": ["x\n  y", " lead\n"], "c": {"d": "t\n\n"}, "e": [{"f": "a\nb"}]})
@example({"k": [["x", -0.0], {"y": 0.0, "z": 1, "w": True, "v": 1.0}]})
@example({"x" * 200: ["y" * 995 + " z"]})
def test_dump_equals_the_reference(data: Any) -> None:
    assert yamlio.dump(data) == reference_dump(data)


@settings(max_examples=examples(800), deadline=None)
@given(st.one_of(st.from_regex(yamlio._PLAIN, fullmatch=True), st.sampled_from(sorted(yamlio._WORDS))), st.integers(0, 990))
@example("x" * 128, 0)
@example("x" * 129, 0)
@example("a" * 990, 0)
def test_a_plain_string_prints_as_libyaml_prints_it(text: str, column: int) -> None:
    """The strings printed without asking libyaml (``yamlio._plain``) print as its emitter
    prints them, as values at any column and as keys."""
    data = {"k" * column: text}
    assert yamlio.dump(data) == reference_dump(data)
    assert yamlio.dump({text: [text]}) == reference_dump({text: [text]})


@settings(max_examples=examples(300), deadline=None)
@given(json_like)
def test_load_all_equals_the_reference(data: Any) -> None:
    text = reference_dump(data) + "---\n" + reference_dump([data])
    fast, ref = yamlio.load_all(text), reference_load_all(text)
    assert repr(fast) == repr(ref)
    if not _has_nan(ref):
        assert fast == ref


mappings = st.dictionaries(keys, json_like, max_size=6)


@settings(max_examples=examples(500), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(mappings, min_size=1, max_size=4), st.sampled_from(TRICKY))
@example([{"a": "t\n\n", "b": 1}, {"b": 1, "a": "t\n\n"}, {"probe": "x\n\n", "b": [True]}], "")
@example([{"a": 1, "b": True}, {"a": True, "b": 1.0}, {"a": "1", "b": "\n"}], "")
def test_an_entry_printer_prints_what_dump_prints(datas: list[dict[Any, Any]], shared: str) -> None:
    """Mappings printed entry by entry, sharing entries (the same value under the same key,
    a literal ending in blank lines first or last), are the bytes dump prints."""
    printer = yamlio.EntryPrinter()
    for data in [*datas, *({**d, "shared": shared} for d in datas), *datas]:
        try:
            text = printer.dump(data)
        except yamlio.ParseBackError:  # only for data that does not survive the round trip
            back = reference_load_all(reference_dump(data))
            assert back != [data] and repr(back) != repr([data])
            continue
        assert text == reference_dump(data)


def test_an_entry_printer_refuses_a_text_that_does_not_parse_back(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(yamlio, "dump", lambda data: "a: [\n")
    with pytest.raises(yamlio.ParseBackError, match="does not parse back"):
        yamlio.EntryPrinter().dump({"a": 1})


def _has_nan(data: Any) -> bool:
    if isinstance(data, float):
        return math.isnan(data)
    if isinstance(data, dict):
        return any(_has_nan(k) or _has_nan(v) for k, v in data.items())
    if isinstance(data, list):
        return any(_has_nan(v) for v in data)
    return False


def test_shared_objects_are_written_in_full_never_as_anchors() -> None:
    shared = {"x": [1, 2]}
    data = {"a": shared, "b": [shared, shared["x"]], "c": shared}
    text = yamlio.dump(data)
    assert text == reference_dump(data)
    assert "&" not in text and "*" not in text
    assert yaml.safe_load(text) == data


def test_a_collection_that_contains_itself_is_refused() -> None:
    loop: list[Any] = [1]
    loop.append(loop)
    with pytest.raises(ValueError, match="contains itself"):
        yamlio.dump({"a": loop})


@pytest.mark.parametrize(
    "data",
    [(1, 2), {"a": (1,)}, {"a": {1, 2}}, "root", 3, None, [], {}, {(1, 2): 3}, {"a": b"bytes"}],
    ids=repr,
)
def test_other_shapes_take_pyyaml_s_path(data: Any) -> None:
    try:
        expected = reference_dump(data)
    except yaml.YAMLError as exc:
        with pytest.raises(type(exc)):
            yamlio.dump(data)
    else:
        assert yamlio.dump(data) == expected


@pytest.mark.parametrize(
    "text",
    [
        "a: &x [1]\nb: *x\n",
        "<<: {a: 1}\nb: 2\n",
        "a: 2001-12-14\n",
        "=: 1\n",
        "a: !!binary aGk=\n",
        "a: !!set {x}\n",
        "a: 0x1f\nb: 1_000\nc: .inf\nd: yes\ne: 0o17\nf: 1:20\n",
        "",
        "---\n---\na: 1\n",
        "[1, {a: b}]\n",
    ],
)
def test_load_all_unusual_documents(text: str) -> None:
    assert repr(yamlio.load_all(text)) == repr(reference_load_all(text))


@pytest.mark.parametrize("text", ["a: [\n", "a: b: c\n", "a: !python/object:os.system x\n", "a: *nope\n"])
def test_load_all_errors_are_pyyaml_s(text: str) -> None:
    with pytest.raises(yaml.YAMLError) as expected:
        reference_load_all(text)
    with pytest.raises(type(expected.value)):
        yamlio.load_all(text)


@pytest.mark.parametrize("name", [*case_names(), "output"])
def test_every_golden_document_dumps_and_loads_the_same(name: str) -> None:
    root = ROOT / "output" if name == "output" else CASES / name / "expected"
    files = sorted(p for p in root.rglob("*.yaml") if "templates" not in p.parts and ".gpu-render-cache" not in p.parts)
    assert files
    for path in files:
        text = path.read_text(encoding="utf-8")
        docs = reference_load_all(text)
        assert yamlio.load_all(text) == docs, path
        for doc in docs:
            assert yamlio.dump(doc) == reference_dump(doc), path


def test_dump_embedded_quotes_strings_that_end_in_blank_lines() -> None:
    """A `|+` block ends its document (`...`) and a template's `{{-` would trim its blank lines:
    inside a larger text such a string is double-quoted; every other value prints as `dump`."""
    value = {"data": {"a.csv": "x\n\n", "b.csv": "y\n"}, "n": 1}
    text = yamlio.dump_embedded(value)
    assert "..." not in text and '"x\\n\\n"' in text and yamlio.load(text) == value
    plain = {"data": {"b.csv": "y\nz\n"}}
    assert yamlio.dump_embedded(plain) == yamlio.dump(plain)
