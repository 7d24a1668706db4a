"""Helpers for JSON-like data (dicts, lists, scalars), faster than the general ``copy`` module."""

from __future__ import annotations

from typing import TypeVar

T = TypeVar("T")


def clone(value: T) -> T:
    """A deep copy of JSON-like data: several times faster than ``copy.deepcopy`` on it,
    because it knows there are no cycles, no shared references to keep, no custom classes."""
    if isinstance(value, dict):
        return {k: clone(v) for k, v in value.items()}  # type: ignore[return-value]
    if isinstance(value, list):
        return [clone(v) for v in value]  # type: ignore[return-value]
    return value
