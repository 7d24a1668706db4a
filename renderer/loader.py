"""Load YAML safely, keeping the line and column of every key and item.

The loader is the only place that parses user YAML. It returns plain Python data plus a map
from JSON pointer to 1-based (line, column), so that any later check can point at the source.
Hostile input (syntax errors, duplicate keys, alias bombs, deep nesting, huge files, non-UTF-8,
object-constructing tags) becomes :class:`~renderer.problems.Problem` values, never tracebacks.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from renderer.problems import Problem, pointer_of

MAX_BYTES = 4 * 1024 * 1024
MAX_DEPTH = 64
MAX_NODES = 200_000
MAX_ALIASES = 100

Position = tuple[int, int]


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


def _problem(path: str, line: int, col: int, message: str, code: str, hint: str = "") -> Problem:
    return Problem(path, line, col, "", message, hint=hint, code=code)


def load_text(raw: bytes | str, path: str) -> tuple[Source | None, list[Problem]]:
    """Parse one YAML document; return it with positions, or the problems that stop it."""
    if isinstance(raw, bytes):
        if len(raw) > MAX_BYTES:
            return None, [_problem(path, 1, 1, f"file is {len(raw)} bytes, over the limit of {MAX_BYTES}", "too-large")]
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            line = raw[: exc.start].count(b"\n") + 1
            col = exc.start - (raw.rfind(b"\n", 0, exc.start) + 1) + 1
            return None, [_problem(path, line, col, f"not valid UTF-8 (byte 0x{raw[exc.start]:02x})", "encoding")]
    else:
        text = raw
        if len(text.encode("utf-8", "surrogatepass")) > MAX_BYTES:
            return None, [_problem(path, 1, 1, f"file is over the limit of {MAX_BYTES} bytes", "too-large")]
    if text.startswith("\ufeff"):
        text = text[1:]
    return _parse(text, path)


def _parse(text: str, path: str) -> tuple[Source | None, list[Problem]]:
    from ruamel.yaml import YAML
    from ruamel.yaml.error import MarkedYAMLError, YAMLError

    yaml = YAML(typ="rt")
    yaml.allow_duplicate_keys = False
    try:
        docs = list(yaml.load_all(text))
    except MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line, col = (mark.line + 1, mark.column + 1) if mark is not None else (1, 1)
        message = _yaml_message(exc)
        code = "duplicate-key" if "duplicate key" in message else "syntax"
        return None, [_problem(path, line, col, message, code)]
    except YAMLError as exc:
        return None, [_problem(path, 1, 1, f"YAML error: {exc}", "syntax")]
    except RecursionError:
        return None, [_problem(path, 1, 1, f"nesting deeper than {MAX_DEPTH} levels", "too-deep")]
    docs = [d for d in docs if d is not None]
    if not docs:
        return Source(path, {}), []
    if len(docs) > 1:
        return None, [_problem(path, 1, 1, "expected one YAML document, found several", "multi-doc")]
    root = docs[0]
    walker = _Walker(path)
    data = walker.walk(root, (), 0)
    if walker.problems:
        return None, walker.problems
    if not isinstance(data, dict):
        return None, [_problem(path, 1, 1, f"the top level must be a mapping, not {_kind(data)}", "root-not-mapping")]
    return Source(path, data, walker.positions, walker.key_positions), []


def _yaml_message(exc: Exception) -> str:
    problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
    context = getattr(exc, "context", None)
    if problem and "found duplicate key" in problem:
        return problem.replace("found duplicate key", "duplicate key").split(" with value")[0]
    if context and "duplicate" in str(context):
        return f"duplicate key: {problem}"
    return f"YAML syntax error: {problem}"


def _kind(value: object) -> str:
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    if value is None:
        return "null"
    return f"a {type(value).__name__}"


class _Walker:
    """Turn ruamel's round-trip nodes into plain data, recording positions and limits."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.positions: dict[str, Position] = {}
        self.key_positions: dict[str, Position] = {}
        self.problems: list[Problem] = []
        self.nodes = 0
        self.seen: dict[int, int] = {}

    def walk(self, node: Any, path: tuple[object, ...], depth: int) -> Any:
        from ruamel.yaml.comments import CommentedMap, CommentedSeq, TaggedScalar

        if self.problems:
            return None
        self.nodes += 1
        pointer = pointer_of(path)
        if depth > MAX_DEPTH:
            line, col = self.positions.get(pointer, (1, 1))
            self.problems.append(_problem(self.path, line, col, f"nesting deeper than {MAX_DEPTH} levels", "too-deep"))
            return None
        if self.nodes > MAX_NODES:
            self.problems.append(_problem(self.path, 1, 1, f"more than {MAX_NODES} values (alias expansion or a very large file)", "too-many-nodes"))
            return None
        if isinstance(node, (CommentedMap, CommentedSeq)):
            count = self.seen.get(id(node), 0) + 1
            self.seen[id(node)] = count
            if count > MAX_ALIASES:
                line, col = self.positions.get(pointer, (1, 1))
                self.problems.append(_problem(self.path, line, col, f"an alias is expanded more than {MAX_ALIASES} times", "alias-limit"))
                return None
        if isinstance(node, CommentedMap):
            out: dict[str, Any] = {}
            for key in node:
                if isinstance(key, (CommentedMap, CommentedSeq)) or not isinstance(key, (str, int, float, bool)) or key is None:
                    line, col = self._key_pos(node, key)
                    self.problems.append(_problem(self.path, line, col, "mapping keys must be plain scalars", "bad-key"))
                    return None
                child = (*path, str(key))
                cp = pointer_of(child)
                kl, kc = self._key_pos(node, key)
                self.key_positions[cp] = (kl, kc)
                self.positions[cp] = self._value_pos(node, key, (kl, kc))
                out[str(key)] = self.walk(node[key], child, depth + 1)
            return out
        if isinstance(node, CommentedSeq):
            items: list[Any] = []
            for index, item in enumerate(node):
                child = (*path, index)
                cp = pointer_of(child)
                try:
                    line, col = node.lc.item(index)
                    self.positions[cp] = (line + 1, col + 1)
                except (AttributeError, KeyError, TypeError, IndexError):
                    self.positions[cp] = self.positions.get(pointer, (1, 1))
                self.key_positions[cp] = self.positions[cp]
                items.append(self.walk(item, child, depth + 1))
            return items
        if isinstance(node, TaggedScalar):
            line, col = self.positions.get(pointer, (1, 1))
            self.problems.append(_problem(self.path, line, col, f"YAML tag {node.tag.value!r} is not allowed", "tag"))
            return None
        return _scalar(node)

    @staticmethod
    def _key_pos(node: Any, key: object) -> Position:
        try:
            line, col = node.lc.key(key)
            return (line + 1, col + 1)
        except (AttributeError, KeyError, TypeError):
            return (1, 1)

    @staticmethod
    def _value_pos(node: Any, key: object, fallback: Position) -> Position:
        try:
            line, col = node.lc.value(key)
            return (line + 1, col + 1)
        except (AttributeError, KeyError, TypeError):
            return fallback


def _scalar(value: Any) -> Any:
    """Strip ruamel's scalar wrappers down to plain str/int/float/bool/None."""
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, str):
        return str(value)
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return float(value)
    return str(value)
