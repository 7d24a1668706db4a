"""``gpu-render init``: the install line its CI and README carry is one pip can resolve, and
the workflow does what its comments say."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
import yaml

from renderer._version import __version__
from renderer.scaffold import default_install_spec, is_local, scaffold, spec_from_direct_url


@pytest.fixture
def in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


def stub_wheel(folder: Path) -> Path:
    """A wheel of gpu-render with metadata only: enough for pip to resolve it, offline."""
    dist = f"gpu_render-{__version__}"
    wheel = folder / f"{dist}-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as zf:
        zf.writestr(f"{dist}.dist-info/METADATA", f"Metadata-Version: 2.1\nName: gpu-render\nVersion: {__version__}\n")
        zf.writestr(f"{dist}.dist-info/WHEEL", "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n")
        zf.writestr(f"{dist}.dist-info/RECORD", "")
    return wheel


def install_step(workflow: str) -> list[str]:
    """argv of the workflow's ``Install gpu-render`` step."""
    jobs = yaml.safe_load(workflow)["jobs"]
    (step,) = [s for job in jobs.values() for s in job["steps"] if s.get("name") == "Install gpu-render"]
    (line,) = step["run"].strip().splitlines()
    return shlex.split(line)


def pip_resolves(argv: list[str]) -> subprocess.CompletedProcess[str]:
    assert argv[:4] == ["python", "-m", "pip", "install"], argv
    cmd = [sys.executable, "-m", "pip", "install", "--dry-run", "--ignore-installed", "--no-deps", "--no-index", "--disable-pip-version-check", *argv[4:]]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize("as_url", [False, True], ids=["path", "file-url"])
def test_the_scaffold_installs_from_where_it_is_told_and_pip_resolves_it(in_tmp: Path, run_cli, as_url: bool) -> None:  # type: ignore[no-untyped-def]
    wheel = stub_wheel(in_tmp)
    source = wheel.as_uri() if as_url else str(wheel)
    spec = f"gpu-render @ {source}" if as_url else source
    result = run_cli("init", "policy", "--install-from", spec)
    assert result.exit_code == 0, result.output
    workflow = (in_tmp / "policy" / ".github" / "workflows" / "gpu-render.yml").read_text()
    argv = install_step(workflow)
    assert argv[4:] == [spec]
    proc = pip_resolves(argv)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert f"Would install gpu-render-{__version__}" in proc.stdout
    # the README shows the same line
    assert shlex.join(argv) in (in_tmp / "policy" / "README.md").read_text()
    assert "a path of this machine" in result.stderr


def test_a_requirement_pip_cannot_resolve_fails_the_check(in_tmp: Path) -> None:
    """The check above is real: the old pin to an unpublished version does not resolve."""
    argv = install_step(scaffold("policy", install="gpu-render==0.0.0.dev0")[".github/workflows/gpu-render.yml"])
    assert pip_resolves(argv).returncode != 0


@pytest.mark.parametrize(
    ("direct_url", "expected"),
    [
        (None, f"gpu-render=={__version__}"),
        ({"url": "https://github.com/o/gpu-render.git", "vcs_info": {"vcs": "git", "commit_id": "abc123", "requested_revision": "v1"}}, "gpu-render @ git+https://github.com/o/gpu-render.git@abc123"),
        ({"url": "https://github.com/o/mono", "subdirectory": "gpu-render", "vcs_info": {"vcs": "git", "commit_id": "abc"}}, "gpu-render @ git+https://github.com/o/mono@abc#subdirectory=gpu-render"),
        ({"url": "file:///wheels/gpu_render-1.0-py3-none-any.whl", "archive_info": {}}, "gpu-render @ file:///wheels/gpu_render-1.0-py3-none-any.whl"),
        ({"url": "file:///src/gpu-render", "dir_info": {"editable": True}}, "gpu-render @ file:///src/gpu-render"),
    ],
)
def test_default_source_is_the_installed_distributions_origin(direct_url: dict[str, object] | None, expected: str) -> None:
    assert spec_from_direct_url(None if direct_url is None else json.dumps(direct_url), __version__) == expected


def test_default_without_an_installed_distribution_is_the_source_tree(tmp_path: Path) -> None:
    assert spec_from_direct_url(None, __version__, tmp_path) == f"gpu-render @ {tmp_path.resolve().as_uri()}"


def test_default_is_written_and_says_when_it_is_local(in_tmp: Path, run_cli) -> None:  # type: ignore[no-untyped-def]
    result = run_cli("init", "policy")
    assert result.exit_code == 0, result.output
    spec = default_install_spec()
    assert install_step((in_tmp / "policy" / ".github" / "workflows" / "gpu-render.yml").read_text())[4:] == [spec]
    assert ("a path of this machine" in result.stderr) == is_local(spec)


@pytest.mark.parametrize("bad", ["", "gpu-render\nrm -rf /", "gpu-render==${{ github.token }}"])
def test_install_source_that_cannot_stand_in_a_run_line_is_refused(in_tmp: Path, run_cli, bad: str) -> None:  # type: ignore[no-untyped-def]
    result = run_cli("init", "policy", "--install-from", bad)
    assert result.exit_code == 1
    assert "--install-from" in result.stderr
    assert not (in_tmp / "policy").exists()


def test_every_pull_request_from_the_repo_gets_its_diff_comment() -> None:
    """The workflow's header promises a PR comment: a step posts it, with the permission to."""
    text = scaffold("policy", install="gpu-render==1.0")[".github/workflows/gpu-render.yml"]
    assert "posted as a PR comment" in text
    workflow = yaml.safe_load(text)
    assert workflow["permissions"]["pull-requests"] == "write"
    steps = workflow["jobs"]["check"]["steps"]
    (render,) = [s for s in steps if s.get("name") == "Render the diff"]
    assert "--parts-dir" in render["run"] and "GITHUB_STEP_SUMMARY" in render["run"]
    (post,) = [s for s in steps if s.get("uses", "").startswith("actions/github-script@")]
    assert "pull_request" in post["if"]
    for call in ("listComments", "createComment", "updateComment"):
        assert f"github.rest.issues.{call}" in post["with"]["script"]
