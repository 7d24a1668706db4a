"""Loader: positions of every key and item, and hostile input as Problems (never tracebacks)."""

from __future__ import annotations

import tracemalloc

import pytest

from renderer import loader
from renderer.loader import load_text
from renderer.problems import Problem


def problems(src: str | bytes) -> list[Problem]:
    source, found = load_text(src, "v.yaml")
    assert (source is None) == bool(found)
    return found


def check(src: str | bytes, problem: tuple[int, int], message: str, code: str = "") -> None:
    """One-line position test: exactly one problem, at (line, column), with this message."""
    found = problems(src)
    assert [(p.line, p.column, p.message) for p in found] == [(*problem, message)]
    if code:
        assert found[0].code == code


def data(src: str) -> object:
    source, found = load_text(src, "v.yaml")
    assert found == [] and source is not None
    return source.data


# --- positions ---------------------------------------------------------------------------


def test_positions_of_keys_values_and_items() -> None:
    source, _ = load_text("a:\n  b: 1\n  list:\n    - x\n    - {c: 2}\n", "v.yaml")
    assert source is not None
    assert source.key_positions["/a/b"] == (2, 3)
    assert source.positions["/a/b"] == (2, 6)
    assert source.positions["/a/list/0"] == (4, 7)
    assert source.positions["/a/list/1/c"] == (5, 11)
    assert source.locate("/a/list/1/c/missing") == (5, 11)
    assert source.locate("/nowhere") == (1, 1)


def test_alias_content_points_at_the_anchor() -> None:
    source, _ = load_text("base: &b\n  x: 1\nuse: *b\n", "v.yaml")
    assert source is not None
    assert source.data == {"base": {"x": 1}, "use": {"x": 1}}
    assert source.positions["/use/x"] == (2, 6)


def test_plain_data_comes_out() -> None:
    assert data("a: 1\nb: 1.5\nc: true\nd: ~\ne: text\nf: [1, 'two']\n") == {"a": 1, "b": 1.5, "c": True, "d": None, "e": "text", "f": [1, "two"]}
    assert data("") == {}
    assert data("# only a comment\n") == {}
    assert data("\ufeffa: 1\n") == {"a": 1}


def test_yaml_1_2_keeps_on_and_yes_as_strings() -> None:
    assert data("a: on\nb: yes\nc: no\n") == {"a": "on", "b": "yes", "c": "no"}


def test_timestamps_stay_text_as_helm_reads_them() -> None:
    assert data("a: 2024-01-02\nb: 2024-01-02T10:00:00Z\n") == {"a": "2024-01-02", "b": "2024-01-02T10:00:00Z"}


def test_keys_become_strings() -> None:
    assert data("1: a\n2.5: c\n") == {"1": "a", "2.5": "c"}
    assert data("true: b\nfalse: c\n") == {"true": "b", "false": "c"}


def test_merge_keys_are_expanded() -> None:
    assert data("base: &b {x: 1}\nd:\n  <<: *b\n  y: 2\n") == {"base": {"x": 1}, "d": {"y": 2, "x": 1}}


def test_explicit_str_tag_is_plain() -> None:
    assert data("a: !!str 5\n") == {"a": "5"}


# --- hostile input, one line each -----------------------------------------------------------


def test_syntax_error() -> None:
    check("a: 1\nb: [1, 2\nc: 3\n", (3, 2), "YAML syntax error: expected ',' or ']', but got ':'", "syntax")


def test_syntax_error_says_where_the_construct_started() -> None:
    (p,) = problems("a: 1\nb: [1, 2\nc: 3\n")
    assert p.hint == "while parsing a flow sequence at line 2, column 4"


def test_syntax_errors_name_the_collection_being_parsed() -> None:
    assert problems("a: 1\nb: [1, 2\nc: 3\n")[0].pointer == "/b"
    assert problems("driver:\n  env:\n    - name: a\n      value: [1\n  x: 2\n")[0].pointer == "/driver/env/0/value"
    assert problems("a: {b: 1, c: [1, 2}\n")[0].pointer == "/a/c"
    assert problems("a:\n  b: 1\n c: 2\n")[0].pointer == ""


def test_bad_indentation() -> None:
    check("a:\n  b: 1\n c: 2\n", (3, 2), "YAML syntax error: expected <block end>, but found '<block mapping start>'")


def test_tab_indentation() -> None:
    check("a:\n\tb: 1\n", (2, 1), "YAML syntax error: found character '\\t' that cannot start any token")


def test_undefined_alias() -> None:
    check("a: *nope\n", (1, 4), "YAML syntax error: found undefined alias 'nope'")


def test_duplicate_key() -> None:
    check("a: 1\nb: 2\na: 3\n", (3, 1), 'duplicate key "a"', "duplicate-key")
    assert problems("a: 1\nb: 2\na: 3\n")[0].hint == "first defined at line 1"


def test_duplicate_nested_key() -> None:
    check("x:\n  a: 1\n  a: 2\n", (3, 3), 'duplicate key "a"')
    assert problems("x:\n  - y: 1\n    y: 2\n")[0].pointer == "/x/0/y"


def test_constructor_problems_carry_the_pointer() -> None:
    assert problems("a:\n  list:\n    - !!binary aGk=\n")[0].pointer == "/a/list/0"
    assert problems("a:\n  b: !foo {x: 1}\n")[0].pointer == "/a/b"
    assert problems("a:\n  b: " + "9" * 5000 + "\n")[0].pointer == "/a/b"
    assert problems("r: &r [*r, !foo x]\n")[0].pointer == "/r/1"


def test_keys_equal_once_stringified_are_duplicates() -> None:
    check("1: a\n'1': b\n", (2, 1), "duplicate key '1'")


@pytest.mark.parametrize(
    ("src", "kind"),
    [("- 1\n- 2\n", "a list"), ("hello\n", "a string"), ("42\n", "a number"), ("true\n", "a boolean")],
)
def test_root_not_mapping(src: str, kind: str) -> None:
    check(src, (1, 1), f"the top level must be a mapping, not {kind}", "root-not-mapping")


def test_several_documents() -> None:
    check("a: 1\n---\nb: 2\n", (1, 1), "expected one YAML document, found several")


def test_not_utf8() -> None:
    check(b"a: 1\nb: \xff\xfe\n", (2, 4), "not valid UTF-8 (byte 0xff)", "encoding")


def test_control_character() -> None:
    check("a: 1\nb: \x00\n", (2, 4), "control character U+0000 is not allowed in YAML")


@pytest.mark.parametrize(
    ("src", "tag"),
    [
        ("a: !!python/object/apply:os.system ['echo hi']\n", "!!python/object/apply:os.system"),
        ("a: !!python/object:collections.OrderedDict {x: 1}\n", "!!python/object:collections.OrderedDict"),
        ("a: !!python/name:os.system\n", "!!python/name:os.system"),
        ("a: !!python/tuple [1, 2]\n", "!!python/tuple"),
        ("a: !foo {x: 1}\n", "!foo"),
        ("a: !foo [1]\n", "!foo"),
        ("a: !foo bar\n", "!foo"),
        ("a: !!binary aGVsbG8=\n", "!!binary"),
        ("a: !!set {x, y}\n", "!!set"),
        ("a: !!omap [x: 1]\n", "!!omap"),
        ("a: !!pairs [x: 1]\n", "!!pairs"),
    ],
)
def test_object_constructing_tags_are_refused(src: str, tag: str) -> None:
    check(src, (1, 4), f"YAML tag {tag!r} is not allowed", "tag")


def test_null_and_complex_keys() -> None:
    check("~: 1\n", (1, 1), "mapping keys must be plain strings or numbers")
    check("? [a, b]\n: 1\n", (1, 3), "mapping keys must be plain strings or numbers")


def test_scalar_the_float_constructor_refuses() -> None:
    check("x: 1\nb:\n  c: -._\n", (3, 6), "the value '-._' cannot be read as a number", "syntax")
    assert problems("l: [1, +.__]\n")[0].pointer == "/l/1"


def test_huge_integer() -> None:
    check("a: " + "9" * 5000 + "\n", (1, 4), "integer with 5000 digits is too long")


# --- limits ------------------------------------------------------------------------------------


def test_file_size_limit() -> None:
    big = b"a: '" + b"x" * loader.MAX_BYTES + b"'\n"
    check(big, (1, 1), f"file is {len(big)} bytes, over the limit of {loader.MAX_BYTES}", "too-large")
    check(big.decode(), (1, 1), f"file is {len(big)} bytes, over the limit of {loader.MAX_BYTES}", "too-large")


def test_long_string_limit() -> None:
    text = "a: 1\nb: " + "x" * (loader.MAX_STRING + 1) + "\n"
    check(text, (2, 4), f"string of {loader.MAX_STRING + 1} characters, over the limit of {loader.MAX_STRING}", "too-long")


def test_nesting_limit_block_style() -> None:
    text = "".join("  " * n + f"k{n}:\n" for n in range(loader.MAX_DEPTH + 2)) + "  " * (loader.MAX_DEPTH + 2) + "leaf\n"
    found = problems(text)
    assert [p.message for p in found] == [f"nesting deeper than {loader.MAX_DEPTH} levels"]


def test_nesting_limit_flow_style() -> None:
    """10 000 nested flow sequences end in one problem (the speed is the benchmark's business)."""
    text = "a: " + "[" * 10_000 + "]" * 10_000 + "\n"
    found = problems(text)
    assert [p.message for p in found] == [f"nesting deeper than {loader.MAX_DEPTH} levels"]


def billion_laughs(levels: int = 9, width: int = 9) -> str:
    lines = ["a: &a [" + ", ".join(['"lol"'] * width) + "]"]
    prev = "a"
    for n in range(levels - 1):
        name = f"l{n}"
        lines.append(f"{name}: &{name} [" + ", ".join([f"*{prev}"] * width) + "]")
        prev = name
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("width", [9, 50])
def test_billion_laughs_is_bounded_in_memory(width: int) -> None:
    """9 levels of 9 aliases would expand to 9**9 (387 million) strings."""
    tracemalloc.start()
    try:
        found = problems(billion_laughs(9, width))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert [p.code for p in found] == ["alias-limit"]
    assert found[0].message == f"an anchor is expanded more than {loader.MAX_ALIASES} times"
    assert peak < 64 * 1024 * 1024


def test_many_distinct_aliases_hit_the_node_limit() -> None:
    """Each anchor used under the per-anchor limit, but the expansion still multiplies."""
    lines = ["a0: &a0 [" + ", ".join(["x"] * 90) + "]"]
    for n in range(1, 4):
        lines.append(f"a{n}: &a{n} [" + ", ".join([f"*a{n - 1}"] * 90) + "]")
    found = problems("\n".join(lines) + "\n")
    assert [p.code for p in found] in (["alias-limit"], ["too-many-nodes"])


def test_aliased_long_strings_hit_the_character_limit() -> None:
    s = "x" * (loader.MAX_STRING - 1)
    refs = loader.MAX_CHARS // len(s) + 2
    found = problems(f"s: &s {s}\nl: [" + ", ".join(["*s"] * refs) + "]\n")
    assert [p.code for p in found] == ["too-many-chars"]


def test_modest_alias_reuse_is_fine() -> None:
    text = "tol: &tol [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]\n" + "".join(f"c{n}: {{tolerations: *tol}}\n" for n in range(20))
    value = data(text)
    assert isinstance(value, dict) and len(value) == 21


@pytest.mark.parametrize(("text", "pointer"), [
    ('toolkit:\n  env:\n    - name: A\n      value: "\\ud800"\n', "/toolkit/env/0/value"),
    ('gitops:\n  repoURL: "https://x/\\udfff"\n', "/gitops/repoURL"),
    ('driver:\n  "\\ud83d\\ude00": 1\n', "/driver/\ud83d\ude00"),
])
def test_a_lone_surrogate_escape_is_a_problem_at_its_place(text: str, pointer: str) -> None:
    """`"\\ud800"` parses to a code point no UTF-8 file can hold: it passed validate and crashed
    the build's writer. Go's YAML refuses such escapes too (a pair as well: write `\\U0001F600`)."""
    from renderer.loader import load_text

    source, problems = load_text(text.encode(), "values.yaml")
    assert source is None
    assert [(p.code, p.pointer) for p in problems] == [("encoding", pointer)]
    assert problems[0].line > 1


def test_a_character_above_ffff_written_out_or_as_one_escape_is_read() -> None:
    from renderer.loader import load_text

    source, problems = load_text('a: "\\U0001F600"\nb: "\U0001f600"\n'.encode(), "values.yaml")
    assert problems == [] and source is not None and source.data == {"a": "\U0001f600", "b": "\U0001f600"}


def test_a_lone_surrogate_escape_in_json_is_a_problem() -> None:
    from renderer.loader import load_json

    data, problems = load_json(b'{"items": [{"metadata": {"labels": {"a": "ubuntu\\ud800"}}}]}', "nodes.json")
    assert data is None and [(p.code, p.pointer) for p in problems] == [("encoding", "/items/0/metadata/labels/a")]


def test_an_integer_no_output_can_hold_is_a_problem_at_its_place() -> None:
    """A 4,000-digit hex number is an int Python refuses to print (over 4,300 digits): it
    crashed the schema check and the patch checks. No Kubernetes field holds one."""
    from renderer.loader import load_text

    source, problems = load_text(("driver:\n  version: 0x" + "f" * 4000 + "\n").encode(), "values.yaml")
    assert source is None and [(p.code, p.pointer, p.line) for p in problems] == [("too-long", "/driver/version", 2)]
    fine, problems = load_text(b"a: 0xffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff1\nb: '0xffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff'\n", "values.yaml")
    assert fine is None and problems[0].pointer == "/a"
    ok, problems = load_text(("b: '" + "f" * 4000 + "'\nc: 9223372036854775807\n").encode(), "values.yaml")
    assert problems == [] and ok is not None and ok.data["c"] == 2**63 - 1
