"""Emitters: objects -> files. Each owns one output folder."""

from __future__ import annotations

from renderer.pipeline import Plan


def emit_all(p: Plan) -> dict[str, str]:
    from renderer.emit import base, lock

    assert p.base is not None
    files: dict[str, str] = {}
    files.update(base.emit(p.base))
    files.update(lock.emit(p, files))
    return files
