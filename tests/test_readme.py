"""README.md's tour, run as a user would in a git copy of the example policy.

The blocks the README shows (indented code in the tour) are read from README.md itself, so
the README and this test cannot drift: change an output and the README must follow.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from renderer import yamlio
from tests.conftest import ROOT, run_tool

README = ROOT / "README.md"
KEEP = "helm.sh/resource-policy"


def section(title: str) -> str:
    text = README.read_text(encoding="utf-8")
    start = text.index(f"\n## {title}\n")
    end = text.find("\n## ", start + 1)
    return text[start : end if end != -1 else len(text)]


def indented_blocks(text: str, indent: int) -> list[list[str]]:
    """Markdown indented code blocks at ``indent`` spaces (blank-line separated), dedented."""
    blocks: list[list[str]] = []
    current: list[str] = []
    prefix = " " * indent
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if line.startswith(prefix) and line.strip() and (current or i == 0 or not lines[i - 1].strip()):
            current.append(line[indent:])
            continue
        if current and not line.strip() and i + 1 < len(lines) and lines[i + 1].startswith(prefix) and lines[i + 1].strip():
            current.append("")  # a blank line inside the block
            continue
        if current:
            blocks.append(current)
            current = []
    if current:
        blocks.append(current)
    return blocks


TOUR = section("A five-minute tour")
BLOCKS = indented_blocks(TOUR, 7)  # the tour's blocks sit in a numbered list
OUTPUT_TREE, MISTAKE, EDIT, DIFF = BLOCKS if len(BLOCKS) == 4 else ([], [], [], [])


def commands(prefix: str) -> list[str]:
    """The tour's inline commands that start with ``prefix`` (single-line code spans)."""
    return [c for c in re.findall(r"`([^`\n]+)`", re.sub(r"\n\s+", " ", TOUR)) if c.startswith(prefix)]


def gpu_render(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "NO_COLOR": "1"}
    return subprocess.run([sys.executable, "-m", "renderer", *args], cwd=repo, env=env, capture_output=True, text=True, timeout=300)


def git(repo: Path, *args: str) -> None:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com"}
    subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True, timeout=60)


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The example policy in a fresh git repo, built and committed (tour step 1)."""
    repo = tmp_path_factory.mktemp("tour")
    shutil.copy2(ROOT / "values.yaml", repo / "values.yaml")
    shutil.copytree(ROOT / "overlays", repo / "overlays")
    git(repo, "init", "-q", "-b", "main")
    proc = gpu_render(repo, "build")
    assert proc.returncode == 0, proc.stderr
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "policy and output")
    return repo


@pytest.fixture
def repo(built: Path, tmp_path: Path) -> Path:
    """A copy of the built tour repo that a test may change."""
    return Path(shutil.copytree(built, tmp_path / "repo", symlinks=True))


def files(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_the_tour_shows_its_four_blocks() -> None:
    assert len(BLOCKS) == 4, BLOCKS


def test_build_writes_what_the_tour_lists(built: Path) -> None:
    clusters = sorted(p.name for p in (built / "overlays").iterdir() if p.is_dir())
    assert clusters
    for line in OUTPUT_TREE:
        listed = line.split()[0]
        for cluster in clusters:
            path = built / listed.replace("<cluster>", cluster)
            assert path.is_dir() if listed.endswith("/") else path.is_file(), listed
    assert gpu_render(built, "build", "--check").returncode == 0


def test_a_mistake_is_reported_as_shown_and_nothing_is_written(repo: Path) -> None:
    before = files(repo / "output")
    values = repo / "values.yaml"
    text = values.read_text(encoding="utf-8")
    assert "\ndriver:\n  version:" in text
    values.write_text(text.replace("\ndriver:\n  version:", "\ndriver:\n  versoin:"), encoding="utf-8")
    proc = gpu_render(repo, "build")
    assert proc.returncode == 1
    assert proc.stderr.splitlines() == MISTAKE
    assert files(repo / "output") == before


def test_the_driver_edit_and_its_diff_print_what_the_tour_shows(repo: Path) -> None:
    values = repo / "values.yaml"
    edit = "\n".join(EDIT) + "\n"
    wanted = yamlio.load(edit)
    text, n = re.subn(r"^driver:\n  version: [^\n]*\n", edit, values.read_text(encoding="utf-8"), flags=re.M)
    assert n == 1
    values.write_text(text, encoding="utf-8")
    assert yamlio.load(text)["driver"]["version"] == wanted["driver"]["version"]
    assert gpu_render(repo, "build").returncode == 0
    assert gpu_render(repo, "build", "--check").returncode == 0
    proc = gpu_render(repo, "diff")
    assert proc.returncode == 0, proc.stderr
    shown = DIFF
    printed = proc.stdout.splitlines()
    starts = [i for i, line in enumerate(printed) if line == shown[0]]
    assert any(printed[i : i + len(shown)] == shown for i in starts), f"the README's diff lines are not in:\n{proc.stdout}"
    markdown = gpu_render(repo, "diff", "--format", "markdown")
    assert markdown.returncode == 0 and markdown.stdout.startswith("<!-- gpu-render-diff part 1/1 -->")
    gate = gpu_render(repo, "diff", "--fail-on", "driver-reload")
    assert gate.returncode == 1


def _objects(text: str) -> dict[tuple[str, str, str], dict[str, Any]]:
    out = {}
    for obj in yamlio.load_all(text):
        if obj:
            meta = obj["metadata"]
            out[(obj["kind"], meta.get("namespace", ""), meta["name"])] = obj
    return out


def _without_keep(obj: dict[str, Any]) -> dict[str, Any]:
    meta = dict(obj["metadata"])
    ann = {k: v for k, v in (meta.pop("annotations", None) or {}).items() if k != KEEP}
    if ann:
        meta["annotations"] = ann
    return {**obj, "metadata": meta}


def _run(built: Path, command: str, helm: str, kubectl: str) -> str:
    argv = command.split()
    argv[0] = {"helm": helm, "kubectl": kubectl}[argv[0]]
    return run_tool(argv, cwd=built)


@pytest.mark.realtools
def test_helm_template_gives_the_overlays_objects_but_one_annotation(built: Path, helm: str, kubectl: str) -> None:
    (kustomize,) = commands("kubectl kustomize output/overlays/")
    templates = commands("helm template ")
    (with_values,) = [c for c in templates if " -f " in c]
    (plain,) = [c for c in templates if " -f " not in c]
    (base,) = commands("kubectl kustomize output/base")
    for chart_cmd, kustomize_cmd in ((with_values, kustomize), (plain, base)):
        chart = _objects(_run(built, chart_cmd, helm, kubectl))
        synced = _objects(_run(built, kustomize_cmd, helm, kubectl))
        assert chart.keys() == synced.keys(), chart_cmd
        differ = sorted(k for k in chart if chart[k] != synced[k])
        assert differ and {k[0] for k in differ} == {"CustomResourceDefinition"}, differ
        for key in differ:
            assert chart[key]["metadata"]["annotations"][KEEP] == "keep"
            assert _without_keep(chart[key]) == synced[key], key
