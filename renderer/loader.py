"""Load YAML safely, keeping the line and column of every key and item.

The loader is the only place that parses user YAML. It returns plain Python data plus a map
from JSON pointer to 1-based (line, column), so that any later check can point at the source.
Hostile input becomes :class:`~renderer.problems.Problem` values, never tracebacks:

* syntax errors, duplicate keys, undefined aliases: the parser's own position;
* non-UTF-8 bytes: the position of the first bad byte;
* a root that is not a mapping, several documents in one file;
* files over :data:`MAX_BYTES` (ruamel parses about 100 KiB a second, so the limit also
  bounds the time a load can take);
* nesting deeper than :data:`MAX_DEPTH`, strings longer than :data:`MAX_STRING`;
* alias bombs ("billion laughs"): ruamel keeps an alias as a shared reference, and the walk
  that turns nodes into plain data stops once one anchor is expanded more than
  :data:`MAX_ALIASES` times, or the expanded data passes :data:`MAX_NODES` values or
  :data:`MAX_CHARS` characters of strings, so time and memory stay bounded;
* tags that construct objects (``!!python/...``, custom ``!tags``, ``!!binary``, ``!!set``,
  ``!!omap``, ``!!pairs``): refused at the tag. Implicit timestamps stay strings, as
  Helm reads them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from renderer.problems import Problem, pointer_of

MAX_BYTES = 512 * 1024
MAX_DEPTH = 64
MAX_NODES = 50_000
MAX_ALIASES = 100
MAX_STRING = 128 * 1024
MAX_CHARS = 4 * 1024 * 1024
MAX_DOCUMENTS = 100
"""YAML documents in one file (``---``), empty ones included: patches may hold several."""
MAX_CAREFUL_BYTES = 160 * 1024
"""Files the fast (libyaml) path cannot take (anchors, tags, odd scalars, errors) are parsed by
ruamel, about 100 KiB a second: over this size they are refused instead (docs/security.md)."""

Position = tuple[int, int]

CORE_STR_TAG = "tag:yaml.org,2002:str"


@dataclass(frozen=True)
class Source:
    """One loaded YAML file: plain data and where each value stands in it."""

    path: str
    data: dict[str, Any]
    positions: dict[str, Position] = field(default_factory=dict)
    key_positions: dict[str, Position] = field(default_factory=dict)

    def locate(self, pointer: str, *, key: bool = False) -> Position:
        """Position of ``pointer``, or of its nearest located ancestor."""
        table = self.key_positions if key else self.positions
        probe = pointer
        while True:
            if probe in table:
                return table[probe]
            if key and probe in self.positions:
                return self.positions[probe]
            if not probe:
                return (1, 1)
            probe = probe.rsplit("/", 1)[0]


def _problem(path: str, line: int, col: int, message: str, code: str, hint: str = "", pointer: str = "") -> Problem:
    return Problem(path, line, col, pointer, message, hint=hint, code=code)


def load_text(raw: bytes | str, path: str) -> tuple[Source | None, list[Problem]]:
    """Parse one YAML document; return it with positions, or the problems that stop it."""
    docs, problems = load_documents(raw, path, multi=False)
    if docs is None:
        return None, problems
    return (docs[0] if docs else Source(path, {})), problems


def load_documents(raw: bytes | str, path: str, *, multi: bool = True, anchors: bool = True) -> tuple[list[Source] | None, list[Problem]]:
    """Every YAML document of a file, each a mapping with positions, under the same limits as
    :func:`load_text` (``multi``: more than one document allowed, up to :data:`MAX_DOCUMENTS`;
    ``anchors``: anchors and aliases allowed, else refused at their position). Empty documents
    are dropped."""
    text, problem = decode(raw, path)
    if text is None:
        assert problem is not None
        return None, [problem]
    separators = _SEPARATOR.findall(text)
    if len(separators) > MAX_DOCUMENTS:
        return None, [_problem(path, 1, 1, f"more than {MAX_DOCUMENTS} YAML documents ('---' separators)", "too-many-documents")]
    if not anchors:
        found = _anchor(text, path)
        if found is not None:
            return None, [found]
    docs, problems = _parse(text, path, multi)
    # only an escape ("\ud800") makes a lone surrogate, only a long run of digits a huge number
    if docs is not None and ("\\" in text or _LONG_NUMBER.search(text)):
        for source in docs:
            bad = _unprintable_at(source.data, "")
            if bad is not None:
                pointer, (message, hint) = bad
                return None, [_problem(path, *source.locate(pointer), message, "encoding" if message == _SURROGATE else "too-long", hint, pointer)]
    return docs, problems


_LONG_NUMBER = re.compile(r"[0-9a-fA-F_]{64}")
MAX_INT_BITS = 128
"""Integers beyond this are refused (Kubernetes' are int64): Python will not even print one of
over 4,300 digits, which a long hex number in YAML is."""
_HUGE = (f"an integer of more than {MAX_INT_BITS} bits: no Kubernetes field holds one", "quote it if it is text")


def _unprintable_at(data: Any, pointer: str) -> tuple[str, tuple[str, str]] | None:
    """(pointer, (message, hint)) of the first key or value of ``data`` that no output can hold:
    a string with a lone surrogate, an integer over :data:`MAX_INT_BITS` bits."""
    if isinstance(data, str):
        return (pointer, (_SURROGATE, _SURROGATE_HINT)) if _SURROGATES.search(data) else None
    if isinstance(data, int) and not isinstance(data, bool):
        return (pointer, _HUGE) if data.bit_length() > MAX_INT_BITS else None
    if isinstance(data, dict):
        for key, value in data.items():
            at = f"{pointer}/{_pointer_key(key)}"
            found = _unprintable_at(key, at) if isinstance(key, (str, int)) else None
            found = found or _unprintable_at(value, at)
            if found is not None:
                return found
    elif isinstance(data, list):
        for index, item in enumerate(data):
            found = _unprintable_at(item, f"{pointer}/{index}")
            if found is not None:
                return found
    return None


def _pointer_key(key: Any) -> str:
    if isinstance(key, int) and not isinstance(key, bool) and key.bit_length() > MAX_INT_BITS:
        return "<huge integer>"
    return str(key).replace("~", "~0").replace("/", "~1")


_SURROGATE = "a lone UTF-16 surrogate escape (\\ud800-\\udfff) is not a character: no UTF-8 file can hold it"
_SURROGATE_HINT = "write the character itself, or a character above U+FFFF as one \\U escape (\\U0001F600); Go's YAML, which Helm and Kustomize use, refuses these escapes too"
_SURROGATES = re.compile("[\ud800-\udfff]")


_SEPARATOR = re.compile(r"^(?:---|\.\.\.)(?=[ \t\r\n]|$)", re.M)
_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\u202a-\u202e\u2066-\u2069\ufeff]")


def decode(raw: bytes | str, path: str, limit: int = MAX_BYTES) -> tuple[str | None, Problem | None]:
    """The text of an input file: size limit, UTF-8, a leading BOM dropped; control and
    bidi characters (outside comments too) refused at their position."""
    if isinstance(raw, bytes):
        if len(raw) > limit:
            return None, _too_large(path, len(raw), limit)
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            line = raw[: exc.start].count(b"\n") + 1
            col = exc.start - (raw.rfind(b"\n", 0, exc.start) + 1) + 1
            return None, _problem(path, line, col, f"not valid UTF-8 (byte 0x{raw[exc.start]:02x})", "encoding", hint="save the file as UTF-8")
    else:
        text = raw
        size = len(text.encode("utf-8", "surrogatepass"))
        if size > limit:
            return None, _too_large(path, size, limit)
    if text.startswith("\ufeff"):
        text = text[1:]
    bad = _CONTROL.search(text)
    if bad is not None:
        line, col = _offset_position(text, bad.start())
        what = "control" if bad.group() < "\x80" else "bidirectional-text" if bad.group() != "\ufeff" else "byte-order-mark"
        return None, _problem(path, line, col, f"{what} character U+{ord(bad.group()):04X} is not allowed in YAML", "syntax", hint="remove it: it is invisible or reorders the text a reviewer sees")
    return text, None


def _too_large(path: str, size: int, limit: int = MAX_BYTES) -> Problem:
    return _problem(path, 1, 1, f"file is {size} bytes, over the limit of {limit}", "too-large", hint="split the policy into overlays, or move large configs out of it")


def _anchor(text: str, path: str) -> Problem | None:
    """The first anchor or alias of ``text`` (libyaml's events), or None (also on a syntax error:
    the parse reports it)."""
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        for event in yaml.parse(text, Loader=loader):
            if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None):
                mark = event.start_mark
                line, col = (mark.line + 1, mark.column + 1) if mark is not None else (1, 1)
                return _problem(path, line, col, "anchors and aliases are not allowed here", "alias", hint="write the values out: Kustomize expands aliases without limits")
    except (yaml.YAMLError, RecursionError):
        return None
    return None


def _parse(text: str, path: str, multi: bool = False) -> tuple[list[Source] | None, list[Problem]]:
    from renderer import fastyaml

    fast = fastyaml.load_all(text, MAX_DEPTH, MAX_STRING, MAX_NODES)
    if isinstance(fast, fastyaml.Limit):
        line, col = fast.position
        return None, [_problem(path, line, col, fast.message, fast.code)]
    if fast is not None and (multi or len(fast) <= 1) and all(isinstance(d[0], dict) for d in fast):
        return [Source(path, d[0], d[1], d[2]) for d in fast], []
    if len(text.encode("utf-8", "surrogatepass")) > MAX_CAREFUL_BYTES:
        return None, [_careful_too_large(text, path)]
    return _roundtrip_all(text, path, multi)


def _careful_too_large(text: str, path: str) -> Problem:
    """A file over :data:`MAX_CAREFUL_BYTES` that needs the slow parser: libyaml's error, if any."""
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        list(yaml.compose_all(text, Loader=loader))
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark
        line, col = (mark.line + 1, mark.column + 1) if mark is not None else (1, 1)
        return _problem(path, line, col, f"YAML syntax error: {exc.problem}", "syntax")
    except (yaml.YAMLError, RecursionError):
        pass
    return _problem(
        path, 1, 1,
        f"file uses anchors, tags or unusual scalars and is over {MAX_CAREFUL_BYTES} bytes",
        "too-large", hint="write the values out plainly, or split the file",
    )


def _parse_roundtrip(text: str, path: str) -> tuple[Source | None, list[Problem]]:
    """One document by the careful path (what the fast path's tests compare with)."""
    docs, problems = _roundtrip_all(text, path, False)
    if docs is None:
        return None, problems
    return (docs[0] if docs else Source(path, {})), problems


def _roundtrip_all(text: str, path: str, multi: bool = False) -> tuple[list[Source] | None, list[Problem]]:
    """The careful path: ruamel.yaml round-trip, with a Problem for everything it refuses."""
    from ruamel.yaml.error import MarkedYAMLError, YAMLError
    from ruamel.yaml.reader import ReaderError

    yaml = _yaml()
    try:
        docs = list(yaml.load_all(text))
    except MarkedYAMLError as exc:
        return None, [_marked_problem(exc, path, text)]
    except ReaderError as exc:
        line, col = _offset_position(text, exc.position)
        char = exc.character if isinstance(exc.character, int) else ord(str(exc.character)[:1] or " ")
        return None, [_problem(path, line, col, f"control character U+{char:04X} is not allowed in YAML", "syntax")]
    except YAMLError as exc:
        return None, [_problem(path, 1, 1, f"YAML error: {str(exc).splitlines()[0]}", "syntax")]
    except RecursionError:
        return None, [_problem(path, 1, 1, f"nesting deeper than {MAX_DEPTH} levels", "too-deep")]
    except (ValueError, OverflowError) as exc:  # ruamel's own constructors choke on e.g. `a: ._`
        line, col, value = _unreadable_scalar(text)
        return None, [_problem(path, line, col, f"the value {value!r} cannot be read ({exc})", "syntax", hint="quote it to make it a string")]
    docs = [d for d in docs if d is not None]
    if not docs:
        return [], []
    if len(docs) > 1 and not multi:
        return None, [_problem(path, 1, 1, "expected one YAML document, found several", "multi-doc", hint="remove the '---' separators")]
    out: list[Source] = []
    walker = _Walker(path)  # one walker: the limits hold for the whole file
    for doc in docs:
        walker.positions, walker.key_positions = {}, {}
        data = walker.walk(doc, (), 0)
        if walker.problems:
            return None, walker.problems
        if not isinstance(data, dict):
            line, col = _root_position(doc, text)
            return None, [_problem(path, line, col, f"the top level must be a mapping, not {_kind(data)}", "root-not-mapping", hint="a values file is keys and values, e.g. 'driver:' at the start of a line")]
        out.append(Source(path, data, walker.positions, walker.key_positions))
    return out, []


MAX_JSON_DEPTH = 64


def load_json(raw: bytes, path: str, limit: int = MAX_BYTES, max_values: int = MAX_NODES) -> tuple[Any, list[Problem]]:
    """A JSON input (nodes.json): the same limits as YAML (size before parsing, depth, values,
    string length, control characters), duplicate keys refused; ``(None, problems)`` when refused."""
    import json

    text, problem = decode(raw, path, limit)
    if text is None:
        assert problem is not None
        return None, [problem]
    depth = _json_depth(text)
    if depth > MAX_JSON_DEPTH:
        return None, [_problem(path, 1, 1, f"nesting deeper than {MAX_JSON_DEPTH} levels", "too-deep")]
    count = [0]
    duplicate: list[str] = []

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        count[0] += len(items)
        out: dict[str, Any] = {}
        for key, value in items:
            if key in out and not duplicate:
                duplicate.append(key)
            out[key] = value
        return out

    try:
        data = json.loads(text, object_pairs_hook=pairs)
    except json.JSONDecodeError as exc:
        return None, [_problem(path, exc.lineno, exc.colno, f"not valid JSON: {exc.msg}", "syntax")]
    except (ValueError, RecursionError) as exc:  # an integer over Python's digit limit
        return None, [_problem(path, 1, 1, f"not valid JSON: {exc}", "syntax")]
    if duplicate:
        return None, [_problem(path, 1, 1, f"duplicate key {duplicate[0]!r}", "duplicate-key", hint="JSON readers disagree on which one wins")]
    problem = _json_limits(data, path, max_values, "\\u" in text)
    return (None, [problem]) if problem is not None else (data, [])


def _json_limits(data: Any, path: str, max_values: int, escapes: bool) -> Problem | None:
    """The value count and string length limits of parsed JSON, and (``escapes``: the text has
    ``\\u`` escapes) no lone surrogate."""
    if escapes:
        found = _unprintable_at(data, "")
        if found is not None:
            return _problem(path, 1, 1, _SURROGATE, "encoding", _SURROGATE_HINT, found[0])
    stack = [data]
    values = 0
    while stack:
        item = stack.pop()
        values += 1
        if values > max_values:
            return _problem(path, 1, 1, f"more than {max_values} values", "too-many-nodes")
        if isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
        elif isinstance(item, str) and len(item) > MAX_STRING:
            return _problem(path, 1, 1, f"string of {len(item)} characters, over the limit of {MAX_STRING}", "too-long")
    return None


def _json_depth(text: str) -> int:
    """The deepest bracket nesting of a JSON text, strings skipped (bounded: one pass, in C)."""
    plain = _JSON_STRING.sub("", text)
    brackets = _NOT_BRACKET.sub("", plain)
    depth = deepest = 0
    for chunk in _OPENERS.finditer(brackets):
        depth += len(chunk.group(1))
        deepest = max(deepest, depth)
        depth -= len(chunk.group(2))
    return deepest


_JSON_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")
_OPENERS = re.compile(r"([\[{]*)([\]}]*)")


def _root_position(node: Any, text: str) -> tuple[int, int]:
    """1-based start of the root node: its own mark, else the first line that is not a comment."""
    lc = getattr(node, "lc", None)
    if lc is not None and getattr(lc, "line", None) is not None:
        return int(lc.line) + 1, int(lc.col) + 1
    for number, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        if stripped and not stripped.startswith("#") and stripped != "---":
            return number, len(line) - len(line.lstrip()) + 1
    return 1, 1


def _unreadable_scalar(text: str) -> tuple[int, int, str]:
    """Where the plain scalar that a ruamel constructor failed on stands (found by scanning)."""
    from ruamel.yaml import YAML
    from ruamel.yaml.tokens import ScalarToken

    try:
        for token in YAML(typ="rt").scan(text):
            if isinstance(token, ScalarToken) and token.plain and token.value.replace("_", "").lstrip("+-") in (".", ""):
                return token.start_mark.line + 1, token.start_mark.column + 1, str(token.value)
    except Exception:  # the scan is best effort: the problem is reported at 1:1 then
        pass
    return 1, 1, ""


def _yaml() -> Any:
    from ruamel.yaml import YAML

    yaml = YAML(typ="rt")
    yaml.allow_duplicate_keys = False
    yaml.Constructor = _constructor_class()
    if hasattr(yaml, "max_depth"):  # ruamel.yaml >= 0.19: stops the composer itself
        yaml.max_depth = MAX_DEPTH + 1
    return yaml


def _marked_problem(exc: Any, path: str, text: str) -> Problem:
    mark = exc.problem_mark or exc.context_mark
    line, col = (mark.line + 1, mark.column + 1) if mark is not None else (1, 1)
    problem = str(exc.problem or "").strip() or str(exc).splitlines()[0]
    if "maximum depth" in problem:
        return _problem(path, line, col, f"nesting deeper than {MAX_DEPTH} levels", "too-deep")
    if "found duplicate key" in problem:
        key = problem.replace("found duplicate key", "").split(" with value")[0].strip()
        hint = ""
        if exc.context_mark is not None and exc.context_mark is not mark:
            hint = f"first defined at line {exc.context_mark.line + 1}"
        pointer = _pointer_at(text, line, col)
        return _problem(path, line, col, f"duplicate key {key}", "duplicate-key", hint=hint, pointer=pointer)
    if getattr(exc, "code", "") == "tag":
        hint = "only plain YAML values are allowed: mappings, lists, strings, numbers, booleans, null"
        return _problem(path, line, col, problem, "tag", hint=hint, pointer=_pointer_at(text, line, col))
    if getattr(exc, "code", "") == "scalar":
        return _problem(path, line, col, problem, "syntax", hint="quote it to make it a string", pointer=_pointer_at(text, line, col))
    if getattr(exc, "code", "") == "int":
        return _problem(path, line, col, problem, "syntax", pointer=_pointer_at(text, line, col))
    hint = ""
    context = str(exc.context or "").strip()
    if context and exc.context_mark is not None and exc.context_mark is not mark:
        hint = f"{context} at line {exc.context_mark.line + 1}, column {exc.context_mark.column + 1}"
    return _problem(path, line, col, f"YAML syntax error: {problem}", "syntax", hint=hint, pointer=_pointer_before_error(text))


def _pointer_at(text: str, line: int, col: int) -> str:
    """JSON pointer of the key or value that starts at (line, col), or "" when none does.

    Used for problems the constructor raises (duplicate keys, refused tags), which know only
    a position: the node graph is composed again (no construction, so no tags run and no
    duplicate check) and searched for that position.
    """
    from ruamel.yaml.error import YAMLError
    from ruamel.yaml.nodes import MappingNode, SequenceNode

    try:
        root = _yaml().compose(text)
    except (YAMLError, RecursionError):  # pragma: no cover - the text composed before
        return ""
    target = (line - 1, col - 1)
    seen: set[int] = set()
    stack: list[tuple[Any, tuple[object, ...]]] = [(root, ())]
    while stack:
        node, path = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        if (node.start_mark.line, node.start_mark.column) == target and path:
            return pointer_of(path)
        if isinstance(node, MappingNode):
            for key, value in node.value:
                name = str(key.value) if not isinstance(key.value, list) else "?"
                if (key.start_mark.line, key.start_mark.column) == target:
                    return pointer_of((*path, name))
                stack.append((value, (*path, name)))
        elif isinstance(node, SequenceNode):
            stack.extend((item, (*path, index)) for index, item in enumerate(node.value))
    return ""


def _pointer_before_error(text: str) -> str:
    """JSON pointer of the collection the parser was inside when it hit a syntax error.

    Replays the parser's events (which stop at the error) and tracks the path they build.
    """
    from ruamel.yaml.error import YAMLError
    from ruamel.yaml.events import (
        AliasEvent,
        CollectionEndEvent,
        MappingStartEvent,
        ScalarEvent,
        SequenceStartEvent,
    )

    # frames: [path, is_mapping, pending key or None, next index]
    frames: list[list[Any]] = []
    try:
        for event in _yaml().parse(text):
            top = frames[-1] if frames else None
            if isinstance(event, CollectionEndEvent):
                frames.pop()
                continue
            if not isinstance(event, (ScalarEvent, AliasEvent, MappingStartEvent, SequenceStartEvent)):
                continue
            if top is not None and top[1] and top[2] is None:  # a key
                top[2] = str(event.value) if isinstance(event, ScalarEvent) else "?"
                if isinstance(event, (MappingStartEvent, SequenceStartEvent)):
                    frames.append([(*top[0], "?"), isinstance(event, MappingStartEvent), None, 0])
                continue
            if top is None:
                child: tuple[object, ...] = ()
            elif top[1]:
                child, top[2] = (*top[0], top[2]), None
            else:
                child, top[3] = (*top[0], top[3]), top[3] + 1
            if isinstance(event, (MappingStartEvent, SequenceStartEvent)):
                frames.append([child, isinstance(event, MappingStartEvent), None, 0])
    except (YAMLError, RecursionError):
        pass
    return pointer_of(frames[-1][0]) if frames else ""


def _offset_position(text: str, offset: int) -> Position:
    offset = max(0, min(offset, len(text)))
    line = text.count("\n", 0, offset) + 1
    return line, offset - (text.rfind("\n", 0, offset) + 1) + 1


@cache
def _constructor_class() -> Any:
    """A round-trip constructor that refuses object-constructing tags, with their position."""
    from ruamel.yaml.constructor import ConstructorError, RoundTripConstructor

    class TagError(ConstructorError):
        code = "tag"

    class IntError(ConstructorError):
        code = "int"

    class ScalarError(ConstructorError):
        code = "scalar"

    class SafeConstructor(RoundTripConstructor):
        def refuse(self, node: Any) -> None:
            raise TagError(None, None, f"YAML tag {_tag_text(node.tag)!r} is not allowed", node.start_mark)

        def timestamp_as_text(self, node: Any) -> str:
            return str(node.value)

        def construct_yaml_float(self, node: Any) -> Any:
            try:
                return super().construct_yaml_float(node)
            except ValueError:  # the resolver takes `._` for a float, the constructor does not
                raise ScalarError(None, None, f"the value {str(node.value)!r} cannot be read as a number", node.start_mark) from None

        def construct_yaml_int(self, node: Any) -> Any:
            try:
                return super().construct_yaml_int(node)
            except ValueError:
                raise IntError(None, None, f"integer with {len(str(node.value))} digits is too long", node.start_mark) from None

    SafeConstructor.add_constructor("tag:yaml.org,2002:int", SafeConstructor.construct_yaml_int)
    SafeConstructor.add_constructor("tag:yaml.org,2002:float", SafeConstructor.construct_yaml_float)
    for tag in ("binary", "omap", "pairs", "set"):
        SafeConstructor.add_constructor(f"tag:yaml.org,2002:{tag}", SafeConstructor.refuse)
    SafeConstructor.add_constructor(None, SafeConstructor.refuse)
    SafeConstructor.add_constructor("tag:yaml.org,2002:timestamp", SafeConstructor.timestamp_as_text)
    return SafeConstructor


def _tag_text(tag: object) -> str:
    """``tag:yaml.org,2002:python/name:os.system`` -> ``!!python/name:os.system``."""
    return str(tag).replace("tag:yaml.org,2002:", "!!")


def _kind(value: object) -> str:
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    return "a string"


class _Walker:
    """Turn ruamel's round-trip nodes into plain data, recording positions and limits."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.positions: dict[str, Position] = {}
        self.key_positions: dict[str, Position] = {}
        self.problems: list[Problem] = []
        self.nodes = 0
        self.chars = 0
        self.seen: dict[int, int] = {}

    def fail(self, pointer: str, message: str, code: str, hint: str = "") -> None:
        line, col = self.positions.get(pointer, (1, 1))
        self.problems.append(_problem(self.path, line, col, message, code, hint=hint, pointer=pointer))

    def walk(self, node: Any, path: tuple[object, ...], depth: int) -> Any:
        from ruamel.yaml.comments import CommentedMap, CommentedSeq

        if self.problems:
            return None
        self.nodes += 1
        pointer = pointer_of(path)
        if depth > MAX_DEPTH:
            self.fail(pointer, f"nesting deeper than {MAX_DEPTH} levels", "too-deep")
            return None
        if self.nodes > MAX_NODES:
            self.fail(pointer, f"more than {MAX_NODES} values after expanding aliases", "too-many-nodes")
            return None
        if isinstance(node, (CommentedMap, CommentedSeq)):
            count = self.seen.get(id(node), 0) + 1
            self.seen[id(node)] = count
            if count > MAX_ALIASES:
                self.fail(pointer, f"an anchor is expanded more than {MAX_ALIASES} times", "alias-limit", hint="aliases that multiply (a 'billion laughs' document) are refused")
                return None
        if isinstance(node, CommentedMap):
            return self._mapping(node, path, depth)
        if isinstance(node, CommentedSeq):
            return self._sequence(node, path, depth)
        return self._scalar(node, pointer)

    def _mapping(self, node: Any, path: tuple[object, ...], depth: int) -> Any:
        out: dict[str, Any] = {}
        for key in node:
            if key is None or not isinstance(key, (str, int, float, bool)):
                line, col = self._key_pos(node, key, self.positions.get(pointer_of(path), (1, 1)))
                self.problems.append(_problem(self.path, line, col, "mapping keys must be plain strings or numbers", "bad-key", pointer=pointer_of(path)))
                return None
            name = self._key_text(key)
            child = (*path, name)
            cp = pointer_of(child)
            kl, kc = self._key_pos(node, key, self.positions.get(pointer_of(path), (1, 1)))
            if name in out:
                self.problems.append(_problem(self.path, kl, kc, f"duplicate key {name!r}", "duplicate-key", pointer=cp))
                return None
            self.key_positions[cp] = (kl, kc)
            self.positions[cp] = self._value_pos(node, key, (kl, kc))
            out[name] = self.walk(node[key], child, depth + 1)
        return out

    def _sequence(self, node: Any, path: tuple[object, ...], depth: int) -> Any:
        items: list[Any] = []
        for index, item in enumerate(node):
            child = (*path, index)
            cp = pointer_of(child)
            try:
                line, col = node.lc.item(index)
                self.positions[cp] = (line + 1, col + 1)
            except (AttributeError, KeyError, TypeError, IndexError):
                self.positions[cp] = self.positions.get(pointer_of(path), (1, 1))
            self.key_positions[cp] = self.positions[cp]
            items.append(self.walk(item, child, depth + 1))
        return items

    def _key_text(self, key: object) -> str:
        if isinstance(key, bool):
            return "true" if key else "false"
        return str(key)

    def _scalar(self, value: Any, pointer: str) -> Any:
        """Strip ruamel's scalar wrappers down to plain str/int/float/bool/None."""
        from ruamel.yaml.comments import TaggedScalar

        if isinstance(value, TaggedScalar):
            if str(value.tag) != CORE_STR_TAG:
                self.fail(pointer, f"YAML tag {_tag_text(value.tag)!r} is not allowed", "tag")
                return None
            value = str(value.value)
        if value is None or isinstance(value, bool):
            return value
        if isinstance(value, int):
            return int(value)
        if isinstance(value, float):
            return float(value)
        if isinstance(value, str):
            self.chars += len(value)
            if len(value) > MAX_STRING:
                self.fail(pointer, f"string of {len(value)} characters, over the limit of {MAX_STRING}", "too-long")
                return None
            if self.chars > MAX_CHARS:
                self.fail(pointer, f"more than {MAX_CHARS} characters of strings after expanding aliases", "too-many-chars")
                return None
            return str(value)
        self.fail(pointer, f"unsupported YAML value of type {type(value).__name__}", "tag")
        return None

    @staticmethod
    def _key_pos(node: Any, key: object, fallback: Position) -> Position:
        try:
            line, col = node.lc.key(key)
            return (line + 1, col + 1)
        except (AttributeError, KeyError, TypeError):
            return fallback

    @staticmethod
    def _value_pos(node: Any, key: object, fallback: Position) -> Position:
        try:
            line, col = node.lc.value(key)
            return (line + 1, col + 1)
        except (AttributeError, KeyError, TypeError):
            return fallback
