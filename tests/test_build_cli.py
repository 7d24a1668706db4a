"""build / validate through click's CliRunner: exit codes, check, dry-run, ownership."""

from __future__ import annotations

from pathlib import Path

import pytest

VALUES = """\
nodePools:
  - name: ubuntu2204
    os: {id: ubuntu, version: "22.04"}
"""


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "values.yaml").write_text(VALUES)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_build_then_check_is_clean(repo: Path, run_cli) -> None:  # type: ignore[no-untyped-def]
    assert run_cli("build").exit_code == 0
    first = {p: p.read_bytes() for p in (repo / "output").rglob("*") if p.is_file()}
    assert run_cli("build").exit_code == 0
    second = {p: p.read_bytes() for p in (repo / "output").rglob("*") if p.is_file()}
    assert first == second
    assert run_cli("build", "--check").exit_code == 0


def test_check_catches_hand_edit(repo: Path, run_cli) -> None:  # type: ignore[no-untyped-def]
    assert run_cli("build").exit_code == 0
    target = next((repo / "output" / "base").rglob("daemonset-*.yaml"))
    target.write_text(target.read_text() + "# edited\n")
    result = run_cli("build", "--check")
    assert result.exit_code == 1
    assert "stale: updated" in result.stderr


def test_dry_run_writes_nothing(repo: Path, run_cli) -> None:  # type: ignore[no-untyped-def]
    result = run_cli("build", "--dry-run")
    assert result.exit_code == 0
    assert "would write:" in result.stdout
    assert not (repo / "output").exists()


def test_bad_values_exit_1_and_write_nothing(repo: Path, run_cli) -> None:  # type: ignore[no-untyped-def]
    (repo / "values.yaml").write_text("devicePlugn:\n  enabled: true\n")
    result = run_cli("build")
    assert result.exit_code == 1
    assert "values.yaml:1:1: /devicePlugn: unknown key 'devicePlugn' (did you mean 'devicePlugin'?)" in result.stderr
    assert not (repo / "output").exists()


def test_refuses_foreign_files(repo: Path, run_cli) -> None:  # type: ignore[no-untyped-def]
    (repo / "output").mkdir()
    (repo / "output" / "notes.txt").write_text("mine")
    result = run_cli("build")
    assert result.exit_code == 1
    assert "did not generate" in result.stderr
    assert run_cli("build", "--force").exit_code == 0
    assert (repo / "output" / "notes.txt").read_text() == "mine"


def test_version(run_cli) -> None:  # type: ignore[no-untyped-def]
    result = run_cli("--version")
    assert result.exit_code == 0
    assert "imitates GPU Operator v26.7" in result.stdout


def _build_stderr(repo: Path, tty: bool) -> str:
    import os
    import subprocess
    import sys

    from tests.conftest import ROOT

    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    argv = [sys.executable, "-m", "renderer", "build", "--out", "out-tty" if tty else "out-pipe"]
    if not tty:
        return subprocess.run(argv, cwd=repo, env=env, capture_output=True, text=True, check=True).stderr
    master, slave = os.openpty()
    try:
        proc = subprocess.Popen(argv, cwd=repo, env=env, stdout=subprocess.DEVNULL, stderr=slave)
        os.close(slave)
        chunks = []
        while True:
            try:
                data = os.read(master, 4096)
            except OSError:
                break
            if not data:
                break
            chunks.append(data)
        assert proc.wait() == 0
    finally:
        os.close(master)
    return b"".join(chunks).decode(errors="replace")


def test_progress_bar_only_on_a_terminal(repo: Path) -> None:
    for name in ("a", "b", "c"):
        (repo / "overlays" / name).mkdir(parents=True)
        (repo / "overlays" / name / "values.yaml").write_text("mig:\n  strategy: mixed\n")
    assert "rendering clusters" in _build_stderr(repo, tty=True)
    assert "rendering clusters" not in _build_stderr(repo, tty=False)


def test_command_table_names_each_command_by_its_module() -> None:
    """``gpu-render build`` loads only the build module: the table that says where each command
    lives must name every command of every module of renderer/cli, and nothing else."""
    import importlib
    import pkgutil

    import renderer.cli as cli

    found = {}
    for info in pkgutil.iter_modules(cli.__path__):
        module = importlib.import_module(f"renderer.cli.{info.name}")
        for command in getattr(module, "COMMANDS", ()):
            found[command.name] = info.name
    assert found == cli.COMMAND_MODULES
    ctx = cli.click.Context(cli.main)
    assert cli.main.list_commands(ctx) == sorted(found)
    assert all(cli.main.get_command(ctx, name) is not None for name in found)
