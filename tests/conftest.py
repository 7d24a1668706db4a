"""Shared fixtures: real tools, CLI runner, golden update flag, strict schema validation."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from hypothesis import settings

from tests import realtools

ROOT = Path(__file__).resolve().parent.parent


# Upstream data the tests read (CRDs, the GPU Operator chart values): copied into the repo,
# each file's source, version and licence in tests/data/README.md. No test reads outside the checkout.
DATA = ROOT / "tests" / "data"

# Hypothesis profiles: a quick one for the README's test command, a thorough one for CI
# (selected by CI=true, which CI services set, or by HYPOTHESIS_PROFILE=ci|dev). Both are
# derandomized: a run's examples depend only on the code, so a failure reproduces anywhere.
CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")
settings.register_profile("dev", deadline=None, derandomize=True, database=None, max_examples=20)
settings.register_profile("ci", deadline=None, derandomize=True, database=None, max_examples=100, print_blob=True)
PROFILE = os.environ.get("HYPOTHESIS_PROFILE") or ("ci" if CI else "dev")
settings.load_profile(PROFILE)


def examples(thorough: int) -> int:
    """A property test's example count: ``thorough`` under the ci profile, a fifth otherwise."""
    return thorough if PROFILE == "ci" else max(10, thorough // 5)


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--update-golden", action="store_true", help="rewrite golden expected output")


@pytest.fixture(scope="session")
def update_golden(request: pytest.FixtureRequest) -> bool:
    return bool(request.config.getoption("--update-golden"))


@pytest.fixture(scope="session")
def helm() -> str:
    return realtools.tool("helm")


@pytest.fixture(scope="session")
def kubectl() -> str:
    return realtools.tool("kubectl")


@pytest.fixture
def run_cli() -> Callable[..., Result]:
    from renderer.cli import main

    def run(*args: str, input: str | None = None) -> Result:
        runner = CliRunner()
        return runner.invoke(main, list(args), input=input, catch_exceptions=False)

    return run



@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The example policy repo (values.yaml, overlays/) copied into ``tmp_path``, the working
    folder. Modules with a repo of their own define their own ``repo``."""
    import shutil

    shutil.copy(ROOT / "values.yaml", tmp_path / "values.yaml")
    shutil.copytree(ROOT / "overlays", tmp_path / "overlays")
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.fixture
def rendered(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Names of the clusters a build renders (not the fleet's own render), in order."""
    import renderer.render

    seen: list[str] = []
    real = renderer.render.objects

    def counting(model: Any, *args: Any, **kwargs: Any) -> Any:
        if model.cluster != "fleet":
            seen.append(model.cluster)
        return real(model, *args, **kwargs)

    monkeypatch.setattr(renderer.render, "objects", counting)
    return seen


def run_tool(argv: list[str], cwd: Path | None = None) -> str:
    proc = subprocess.run(argv, capture_output=True, text=True, cwd=cwd, timeout=300)
    if proc.returncode != 0:
        raise AssertionError(f"{' '.join(argv)} failed ({proc.returncode}):\n{proc.stderr}")
    return proc.stdout


def strict_validate(objs: Iterable[dict[str, Any]], kube_version: str) -> list[str]:
    """Errors of every built-in object against the strict schema of ``kube_version``.

    Custom resources (NodeFeatureRule, ServiceMonitor, Argo CD kinds, CRDs' own instances)
    are checked against their CRDs by the tests that emit them.
    """
    import kubernetes_validate

    errors: list[str] = []
    for obj in objs:
        try:
            kubernetes_validate.validate(obj, kube_version, strict=True)
        except kubernetes_validate.utils.SchemaNotFoundError:
            if "." not in obj["apiVersion"].split("/")[0] or obj["apiVersion"].split("/")[0].endswith(".k8s.io"):
                errors.append(f"{obj['kind']}/{obj['metadata']['name']}: no schema for {obj['apiVersion']}")
        except kubernetes_validate.ValidationError as exc:
            path = ".".join(str(p) for p in exc.path)
            errors.append(f"{obj['kind']}/{obj['metadata']['name']}: {path}: {exc.message}")
    return errors


@pytest.fixture
def write_tree(tmp_path: Path) -> Callable[[dict[str, str]], Path]:
    """Build a folder from {relative path: text}; returns its root."""

    def build(files: dict[str, str]) -> Path:
        for rel, text in files.items():
            target = tmp_path / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8")
        return tmp_path

    return build
