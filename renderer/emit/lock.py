"""gpu-render.lock: tool version, input hashes and the sha256 of every emitted file.

The writer uses it to know which files it generated (and may update or delete).
"""

from __future__ import annotations

import hashlib
import json

from renderer._version import OPERATOR_RELEASE, __version__

LOCK = "gpu-render.lock"


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def emit_hashes(hashes: dict[str, str]) -> dict[str, str]:
    """The lock file listing every emitted file by its sha256 (``hashes``: path -> sha256)."""
    body = {
        "generator": "gpu-render",
        "version": __version__,
        "operatorRelease": OPERATOR_RELEASE,
        "files": dict(sorted(hashes.items())),
    }
    return {LOCK: json.dumps(body, indent=2, sort_keys=True) + "\n"}


def parse(text: str) -> dict[str, str]:
    """The ``files`` table of a lock file; empty when it is not one of ours."""
    try:
        data = json.loads(text)
    except ValueError:
        return {}
    files = data.get("files") if isinstance(data, dict) else None
    if not isinstance(files, dict):
        return {}
    return {str(k): str(v) for k, v in files.items()}
