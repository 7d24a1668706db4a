"""The fast path of the loader: libyaml's C composer plus positions, for plain documents.

ruamel.yaml's round-trip loader reads about 100 KiB a second; a fleet of a thousand overlays
spent most of its load time there. libyaml composes the same document into nodes with start
marks a hundred times faster. This module turns those nodes into plain data and positions
exactly as the ruamel path does (YAML 1.2 scalars, 1-based line and column of every key,
value and item), but only for documents whose meaning is plain: no anchors or aliases, no
tags, no merge keys, no scalar whose YAML 1.2 reading is subtle (octal, underscores,
timestamps, ``.inf``), no duplicate key, nothing over a limit. For anything else it answers
``None`` and the loader takes the ruamel path, which reports problems in detail. A property
test holds both paths equal on documents they both accept.
"""

from __future__ import annotations

import re
from typing import Any

from renderer.problems import pointer_of

Position = tuple[int, int]

_NULL = {"", "~", "null", "Null", "NULL"}
_TRUE = {"true", "True", "TRUE"}
_FALSE = {"false", "False", "FALSE"}
_INT = re.compile(r"[-+]?(?:0|[1-9][0-9]{0,17})\Z")
_FLOAT = re.compile(r"[-+]?(?:0|[1-9][0-9]{0,14})\.[0-9]{1,15}\Z")
# YAML 1.2 numbers as ruamel.yaml resolves them: a plain scalar that matches one of these but
# not the simple forms above (octal, binary, hex, underscores, exponents, .inf, .nan, ...)
# is left to ruamel, whose reading of it is the reference.
_NUMBER = re.compile(
    r"""(?:[-+]?0b[0-1_]+|[-+]?0o?[0-7_]+|[-+]?[0-9_]+|[-+]?0x[0-9a-fA-F_]+
    |[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+]?[0-9]+)?
    |[-+]?(?:[0-9][0-9_]*)(?:[eE][-+]?[0-9]+)
    |[-+]?\.[0-9_]+(?:[eE][-+][0-9]+)?
    |[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN)|<<)\Z""",
    re.X,
)

# NEL, LINE SEPARATOR and PARAGRAPH SEPARATOR are line breaks to libyaml (YAML 1.1) and
# ordinary characters to ruamel (YAML 1.2): libyaml would count lines differently, or accept
# a document ruamel rejects. A text holding any of them takes the ruamel path. (CR and CRLF
# are line breaks to both, and both count them alike.)
_YAML11_BREAKS = re.compile("[\x85\u2028\u2029]")

_MAP = "tag:yaml.org,2002:map"
_SEQ = "tag:yaml.org,2002:seq"


class _Fallback(Exception):
    """The document needs the ruamel path."""


class Limit:
    """A limit the document passes: refused here, without the (slow) ruamel path."""

    def __init__(self, position: Position, message: str, code: str) -> None:
        self.position, self.message, self.code = position, message, code


class _Over(Exception):
    def __init__(self, limit: Limit) -> None:
        self.limit = limit


Doc = tuple[Any, dict[str, Position], dict[str, Position]]


def _count(text: str, loader: Any, max_nodes: int) -> Limit | None:
    """A :class:`Limit` when the text holds more than ``max_nodes`` values (scalars, aliases,
    collections), found from libyaml's events before any node is built: composing costs
    about five times as much, so a file of a million tiny values is refused in bounded time."""
    import yaml

    count = 0
    try:
        for event in yaml.parse(text, Loader=loader):
            if isinstance(event, (yaml.ScalarEvent, yaml.AliasEvent, yaml.CollectionStartEvent)):
                count += 1
                if count > max_nodes:
                    return Limit(_pos(event), f"more than {max_nodes} values", "too-many-nodes")
    except (yaml.YAMLError, RecursionError, ValueError):
        return None  # the parse reports it
    return None


def load_all(text: str, max_depth: int, max_string: int, max_nodes: int) -> list[Doc] | Limit | None:
    """(data, positions, key positions) of each non-empty document of a plain file; a
    :class:`Limit` when the file passes one (values or string length: aliases cannot be the
    cause here, the fast path takes none); None to fall back."""
    import yaml

    loader = getattr(yaml, "CSafeLoader", None)
    if loader is None:  # pragma: no cover - PyYAML built without libyaml
        return None
    if _YAML11_BREAKS.search(text):
        return None  # line breaks of YAML 1.1 only: libyaml and ruamel disagree on positions
    counted = _count(text, loader, max_nodes)
    if counted is not None:
        return counted
    try:
        nodes = [d for d in yaml.compose_all(text, Loader=loader) if d is not None]
    except (yaml.YAMLError, RecursionError, ValueError):
        return None
    out: list[Doc] = []
    walker = _Walk(text, max_depth, max_string, max_nodes)
    walker.strict = True
    for root in nodes:
        walker.positions, walker.key_positions = {}, {}
        try:
            data = walker.node(root, (), 0)
        except _Over as over:
            return over.limit
        except (_Fallback, RecursionError):
            return None
        out.append((data, walker.positions, walker.key_positions))
    return out


def load(text: str, max_depth: int, max_string: int, max_nodes: int) -> tuple[Any, dict[str, Position], dict[str, Position]] | None:
    """(data, positions, key positions) of a plain one-document file, or None to fall back."""
    import yaml

    loader = getattr(yaml, "CSafeLoader", None)
    if loader is None:  # pragma: no cover - PyYAML built without libyaml
        return None
    if _YAML11_BREAKS.search(text):
        return None
    try:
        docs = list(yaml.compose_all(text, Loader=loader))
    except (yaml.YAMLError, RecursionError, ValueError):
        return None
    if len(docs) != 1 or docs[0] is None:
        return None
    root = docs[0]
    walker = _Walk(text, max_depth, max_string, max_nodes)
    try:
        data = walker.node(root, (), 0)
    except (_Fallback, RecursionError):
        return None
    return data, walker.positions, walker.key_positions


class _Walk:
    def __init__(self, text: str, max_depth: int, max_string: int, max_nodes: int) -> None:
        self.text = text
        self.positions: dict[str, Position] = {}
        self.key_positions: dict[str, Position] = {}
        self.max_depth = max_depth
        self.max_string = max_string
        self.max_nodes = max_nodes
        self.count = 0
        self.seen: set[int] = set()
        self.strict = False
        """Report the node and string limits (:class:`Limit`) instead of falling back."""

    def node(self, node: Any, path: tuple[object, ...], depth: int) -> Any:
        import yaml

        self.count += 1
        if self.strict and self.count > self.max_nodes and id(node) not in self.seen:
            raise _Over(Limit(_pos(node), f"more than {self.max_nodes} values", "too-many-nodes"))
        if depth > self.max_depth or self.count > self.max_nodes or id(node) in self.seen:
            raise _Fallback  # limits and aliases: the ruamel path reports them
        self.seen.add(id(node))
        if self.decorated(node):
            raise _Fallback  # an explicit tag or an anchor
        if isinstance(node, yaml.MappingNode):
            if node.tag != _MAP:
                raise _Fallback
            out: dict[str, Any] = {}
            for key_node, value_node in node.value:
                key = self.key(key_node)
                if key in out:
                    raise _Fallback
                child = (*path, key)
                pointer = pointer_of(child)
                self.key_positions[pointer] = _pos(key_node)
                self.positions[pointer] = _pos(value_node)
                out[key] = self.node(value_node, child, depth + 1)
            return out
        if isinstance(node, yaml.SequenceNode):
            if node.tag != _SEQ:
                raise _Fallback
            items = []
            for index, item in enumerate(node.value):
                child = (*path, index)
                pointer = pointer_of(child)
                self.positions[pointer] = self.key_positions[pointer] = _pos(item)
                items.append(self.node(item, child, depth + 1))
            return items
        return self.scalar(node)

    def decorated(self, node: Any) -> bool:
        """An explicit ``!tag`` or an ``&anchor`` stands in the text where the node starts
        (libyaml resolves tags with YAML 1.1 rules, so the tag alone cannot tell)."""
        index = node.start_mark.index
        return index < len(self.text) and self.text[index] in "!&*"

    def key(self, node: Any) -> str:
        import yaml

        if not isinstance(node, yaml.ScalarNode):
            raise _Fallback
        value = self.scalar(node)
        if value is None:
            raise _Fallback
        if isinstance(value, bool):
            return "true" if value else "false"
        return str(value)

    def scalar(self, node: Any) -> Any:
        value: str = node.value
        if len(value) > self.max_string:
            if self.strict:
                raise _Over(Limit(_pos(node), f"string of {len(value)} characters, over the limit of {self.max_string}", "too-long"))
            raise _Fallback
        if self.decorated(node):
            raise _Fallback
        if node.style:  # quoted or block scalar: a string
            return value
        if not value:
            raise _Fallback  # an empty value: ruamel places it at the next token
        if value in _NULL:
            return None
        if value in _TRUE:
            return True
        if value in _FALSE:
            return False
        if _INT.match(value):
            return int(value)
        if _FLOAT.match(value):
            return float(value)
        if _NUMBER.match(value):
            raise _Fallback
        return value  # timestamps too: the loader keeps them as the text written


def _pos(node: Any) -> Position:
    return (node.start_mark.line + 1, node.start_mark.column + 1)
