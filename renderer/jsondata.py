"""Helpers for JSON-like data (dicts, lists, scalars), faster than the general ``copy`` module."""

from __future__ import annotations

from typing import Any, TypeVar

T = TypeVar("T")


def clone(value: T) -> T:
    """A deep copy of JSON-like data: several times faster than ``copy.deepcopy`` on it,
    because it knows there are no cycles, no shared references to keep, no custom classes."""
    data: Any = value
    kind = type(data)
    if kind is dict or (kind is not list and isinstance(data, dict)):
        out = {}
        for k, v in data.items():  # (the common leaves are not passed down: a third faster)
            leaf = type(v)
            out[k] = v if leaf is str or leaf is int or leaf is bool or v is None else clone(v)
        return out  # type: ignore[return-value]
    if kind is list or isinstance(data, list):
        return [v if type(v) is str else clone(v) for v in data]  # type: ignore[return-value]
    return value
