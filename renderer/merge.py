"""Deep-merge fleet values with a cluster overlay, remembering where each value came from.

Rules: mappings merge key by key, lists and scalars replace, ``null`` deletes the key.
The result keeps, for every JSON pointer, the file and position of the value that won, so a
schema error in a merged value points into the overlay when the overlay set it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from renderer.jsondata import clone
from renderer.loader import Position, Source
from renderer.problems import pointer_of

Origin = tuple[str, int, int]


@dataclass(frozen=True)
class Located:
    """Merged values plus the origin (file, line, column) of every pointer."""

    data: dict[str, Any]
    origins: dict[str, Origin] = field(default_factory=dict)
    key_origins: dict[str, Origin] = field(default_factory=dict)
    default_file: str = "values.yaml"
    overlaid: frozenset[str] | None = None
    """The top-level keys an overlay set (``merge``); every other section is the base's own."""

    def locate(self, pointer: str, *, key: bool = False) -> Origin:
        """Origin of ``pointer``, or of its nearest ancestor that has one."""
        table = self.key_origins if key else self.origins
        probe = pointer
        while True:
            if probe in table:
                return table[probe]
            if key and probe in self.origins:
                return self.origins[probe]
            if not probe:
                return (self.default_file, 1, 1)
            probe = probe.rsplit("/", 1)[0]


def from_source(source: Source) -> Located:
    return Located(
        clone(source.data),
        _origins(source.path, source.positions),
        _origins(source.path, source.key_positions),
        source.path,
    )


def _origins(path: str, positions: dict[str, Position]) -> dict[str, Origin]:
    return {p: (path, line, col) for p, (line, col) in positions.items()}


def merge(base: Located, overlay: Source) -> Located:
    """Return ``base`` with ``overlay`` merged over it; neither input is changed.

    Copy on write: only the mappings on the path to a value the overlay sets are copied; every
    other value (a whole untouched top-level section, say) is the base's own object, shared.
    The result is for reading: the schema check relies on it (with ``overlaid``) to know that a
    section is the fleet's, already validated.
    """
    data = dict(base.data)
    origins = dict(base.origins)
    key_origins = dict(base.key_origins)
    _merge_into(data, overlay.data, (), origins, key_origins, overlay)
    return Located(data, origins, key_origins, base.default_file, frozenset(overlay.data))


def _drop_under(table: dict[str, Origin], pointer: str) -> None:
    prefix = pointer + "/"
    for key in [k for k in table if k == pointer or k.startswith(prefix)]:
        del table[key]


def _merge_into(
    target: dict[str, Any],
    patch: dict[str, Any],
    path: tuple[object, ...],
    origins: dict[str, Origin],
    key_origins: dict[str, Origin],
    src: Source,
) -> None:
    for key, value in patch.items():
        child = (*path, key)
        pointer = pointer_of(child)
        if value is None:
            target.pop(key, None)
            _drop_under(origins, pointer)
            _drop_under(key_origins, pointer)
            continue
        if isinstance(value, dict) and isinstance(target.get(key), dict):
            key_origins[pointer] = (src.path, *src.key_positions.get(pointer, (1, 1)))
            target[key] = dict(target[key])  # the copy on the written path; the base's stays
            _merge_into(target[key], value, child, origins, key_origins, src)
            continue
        target[key] = clone(value)
        _drop_under(origins, pointer)
        _drop_under(key_origins, pointer)
        prefix = pointer + "/"
        for p, pos in src.positions.items():
            if p == pointer or p.startswith(prefix):
                origins[p] = (src.path, *pos)
        for p, pos in src.key_positions.items():
            if p == pointer or p.startswith(prefix):
                key_origins[p] = (src.path, *pos)


def deep_merge(base: dict[str, Any], patch: dict[str, Any]) -> dict[str, Any]:
    """The same rules on plain data, without origins (used for defaults and pool settings)."""
    out = clone(base)
    _merge_plain(out, patch)
    return out


def _merge_plain(target: dict[str, Any], patch: dict[str, Any]) -> None:
    for key, value in patch.items():
        if value is None:
            target.pop(key, None)
        elif isinstance(value, dict) and isinstance(target.get(key), dict):
            _merge_plain(target[key], value)
        else:
            target[key] = clone(value)


def merged_view(base: dict[str, Any], patch: dict[str, Any]) -> dict[str, Any]:
    """``deep_merge(base, patch)`` without the copies: equal data, sharing the inputs' values.

    For reading only (image and selector rules look up a few keys of large sections).
    """
    if not patch:
        return base
    out = dict(base)
    for key, value in patch.items():
        if value is None:
            out.pop(key, None)
        elif isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = merged_view(out[key], value)
        else:
            out[key] = value
    return out
