"""Crash safety of ``gpu-render build``: SIGKILL at every kind of moment, concurrent builds,
read-only and full output folders, user files, paths that try to leave the output folder.

"Never a mix" as checked here: once recovery has run (it runs at the start of every
gpu-render command that reads the output folder), the files gpu-render generated are exactly
the files ``gpu-render.lock`` lists, with its hashes, and they are byte for byte either the
previous build (A) or the new one (B). User files are always still there, unchanged.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from renderer.problems import UserError

ROOT = Path(__file__).resolve().parent.parent

VALUES_A = """\
nodePools:
  - name: ubuntu2204
    os: {id: ubuntu, version: "22.04"}
"""
VALUES_B = """\
cluster:
  namespace: gpu-b
nodePools:
  - name: ubuntu2204
    os: {id: ubuntu, version: "22.04"}
devicePlugin:
  enabled: false
"""
USER_FILE = "NOTES.md"
USER_TEXT = "my own notes, not generated\n"


def snapshot(out: Path) -> dict[str, bytes]:
    """Every file of ``out`` that is not internal (``.gpu-render-*``)."""
    from renderer.write import INTERNAL_PREFIX

    found: dict[str, bytes] = {}
    for path in sorted(out.rglob("*")):
        rel = path.relative_to(out).as_posix()
        if path.is_file() and not any(part.startswith(INTERNAL_PREFIX) for part in rel.split("/")):
            found[rel] = path.read_bytes()
    return found


def lock_agrees(files: dict[str, bytes]) -> list[str]:
    """Disagreements between gpu-render.lock and the generated files next to it."""
    listed = json.loads(files["gpu-render.lock"])["files"]
    generated = {k: v for k, v in files.items() if k not in ("gpu-render.lock", USER_FILE)}
    wrong = [f"missing {p}" for p in sorted(set(listed) - set(generated))]
    wrong += [f"unlisted {p}" for p in sorted(set(generated) - set(listed))]
    wrong += [f"hash {p}" for p in sorted(set(listed) & set(generated)) if hashlib.sha256(generated[p]).hexdigest() != listed[p]]
    return wrong


def cli(repo: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    full_env = {**os.environ, "PYTHONPATH": str(ROOT), **(env or {})}
    return subprocess.run([sys.executable, "-m", "renderer", *args], cwd=repo, env=full_env, capture_output=True, text=True, timeout=120)


@pytest.fixture(scope="module")
def states(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    """Reference trees A and B (with a user file), and how many file operations A -> B takes."""
    from renderer import write
    from renderer.inputs import read_inputs
    from renderer.render import render

    work = tmp_path_factory.mktemp("ref")
    (work / "a.yaml").write_text(VALUES_A)
    (work / "b.yaml").write_text(VALUES_B)
    files_a = render(read_inputs(work / "a.yaml", None))
    files_b = render(read_inputs(work / "b.yaml", None))
    out = work / "out"
    out.mkdir()
    (out / USER_FILE).write_text(USER_TEXT)
    write.write_tree(out, files_a, force=True)
    a = snapshot(out)
    before = write.OPS.count
    write.write_tree(out, files_b, force=True)
    ops = write.OPS.count - before
    b = snapshot(out)
    assert a != b and not lock_agrees(a) and not lock_agrees(b)
    return {"a": a, "b": b, "ops": ops}


def make_repo(tmp_path: Path, a: dict[str, bytes]) -> Path:
    """A policy repo whose output/ holds build A and a user file; values.yaml is B."""
    out = tmp_path / "output"
    for rel, data in a.items():
        (out / rel).parent.mkdir(parents=True, exist_ok=True)
        (out / rel).write_bytes(data)
    (tmp_path / "values.yaml").write_text(VALUES_B)
    return tmp_path


def assert_a_or_b(out: Path, states: dict[str, object]) -> str:
    now = snapshot(out)
    assert now.get(USER_FILE) == USER_TEXT.encode(), "user file lost or changed"
    assert not lock_agrees(now), lock_agrees(now)
    if now == states["a"]:
        return "a"
    assert now == states["b"], f"mixed output: {sorted(set(now) ^ set(states['b']))}"  # type: ignore[operator]
    return "b"


def kill_points(total: int, budget: int) -> list[int]:
    """1..total+1 when it fits in ``budget``, else evenly spread with both ends kept."""
    every = list(range(0, total + 2))
    if len(every) <= budget:
        return every
    step = (len(every) - 1) / (budget - 1)
    return sorted({every[round(i * step)] for i in range(budget)})


@pytest.mark.slow
def test_sigkill_at_kill_points_never_mixes(tmp_path: Path, states: dict[str, object]) -> None:
    total = int(states["ops"])  # type: ignore[call-overload]
    seen: dict[str, int] = {"a": 0, "b": 0}
    points = kill_points(total, 16)
    for n in points:
        repo = make_repo(tmp_path / f"k{n}", states["a"])  # type: ignore[arg-type]
        killed = cli(repo, "build", "-q", "--force", env={"GPU_RENDER_TEST_KILL_AFTER": str(n)})
        if n <= total:
            assert killed.returncode == -signal.SIGKILL, (n, killed.stderr)
        assert "Traceback" not in killed.stderr
        check = cli(repo, "build", "--check", "-q")  # recovery runs here
        assert "Traceback" not in check.stderr
        seen[assert_a_or_b(repo / "output", states)] += 1
        assert not (repo / "output" / ".gpu-render-staging").exists()
        if n % 4 == 0:  # a rebuild converges (in process: the subprocesses above are the slow part)
            from renderer import write

            write.write_tree(repo / "output", {k: v.decode() for k, v in states["b"].items() if k != USER_FILE}, force=True)  # type: ignore[attr-defined]
            assert snapshot(repo / "output") == states["b"]
    assert seen["a"] and seen["b"], seen  # both sides of the commit point were hit


@pytest.mark.slow
def test_sigkill_at_random_times(tmp_path: Path, states: dict[str, object]) -> None:
    rng = random.Random(8)
    for i in range(3):
        repo = make_repo(tmp_path / f"r{i}", states["a"])  # type: ignore[arg-type]
        proc = subprocess.Popen(
            [sys.executable, "-m", "renderer", "build", "-q", "--force"],
            cwd=repo,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        time.sleep(rng.uniform(0.2, 1.5))
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        assert cli(repo, "build", "--check", "-q").returncode in (0, 1)
        assert_a_or_b(repo / "output", states)
        assert cli(repo, "build", "-q", "--force").returncode == 0
        assert snapshot(repo / "output") == states["b"]


@pytest.mark.slow
def test_recovery_is_itself_crash_safe(tmp_path: Path, states: dict[str, object]) -> None:
    """A build killed after its commit point, then a recovery killed too, then recovery."""
    from renderer import write

    total = int(states["ops"])  # type: ignore[call-overload]
    repo = make_repo(tmp_path, states["a"])  # type: ignore[arg-type]
    staged = len(states["b"]) - 1  # type: ignore[arg-type]
    cut = min(total - 2, staged + 3)  # after the journal, in the middle of the renames
    assert cli(repo, "build", "-q", "--force", env={write.KILL_ENV: str(cut)}).returncode == -signal.SIGKILL
    assert (repo / "output" / ".gpu-render-staging" / "journal.json").is_file()
    assert cli(repo, "build", "--check", "-q", env={write.KILL_ENV: "2"}).returncode == -signal.SIGKILL
    assert cli(repo, "build", "--check", "-q").returncode == 0  # rolled forward to B
    assert assert_a_or_b(repo / "output", states) == "b"


def test_incomplete_staging_is_discarded(tmp_path: Path, states: dict[str, object]) -> None:
    from renderer import write

    repo = make_repo(tmp_path, states["a"])  # type: ignore[arg-type]
    assert cli(repo, "build", "-q", "--force", env={write.KILL_ENV: "2"}).returncode == -signal.SIGKILL
    assert (repo / "output" / ".gpu-render-staging").is_dir()
    assert not (repo / "output" / ".gpu-render-staging" / "journal.json").exists()
    assert cli(repo, "build", "--check", "-q").returncode == 1  # stale: A is still there
    assert assert_a_or_b(repo / "output", states) == "a"


@pytest.mark.slow
def test_two_concurrent_builds_do_not_corrupt(tmp_path: Path, states: dict[str, object]) -> None:
    repo = make_repo(tmp_path, states["a"])  # type: ignore[arg-type]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    procs = [
        subprocess.Popen([sys.executable, "-m", "renderer", "build", "-q", "--force"], cwd=repo, env=env, stderr=subprocess.PIPE, text=True)
        for _ in range(3)
    ]
    results = [(p.communicate(timeout=120)[1], p.returncode) for p in procs]
    assert all(code == 0 for _, code in results), results
    assert snapshot(repo / "output") == states["b"]
    left = sorted(n for n in os.listdir(repo / "output") if n != ".gpu-render-cache")  # the incremental build's cache stays
    assert left == sorted({rel.split("/")[0] for rel in states["b"]})  # type: ignore[attr-defined]


def test_lock_waits_for_holder(tmp_path: Path) -> None:
    """A second writer blocks while the first holds the folder's lock."""
    import fcntl

    from renderer import write

    out = tmp_path / "out"
    out.mkdir()
    with write.open_output(out, create=True):
        fd = os.open(out / write.MUTEX, os.O_RDWR)
        with pytest.raises(BlockingIOError):
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        os.close(fd)
    assert not (out / write.MUTEX).exists()


def _unprivileged() -> Callable[[], None] | None:
    """Root ignores file modes: drop the capabilities that let it (for the child only)."""
    if os.geteuid() != 0:
        return None

    def drop() -> None:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        pr_capbset_drop = 24
        for cap in (1, 2, 3):  # CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH, CAP_FOWNER
            if libc.prctl(pr_capbset_drop, cap, 0, 0, 0) != 0:
                raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP)")

    return drop


def test_read_only_output_folder_clear_error_no_partial_state(states: dict[str, object]) -> None:
    base = Path(tempfile.mkdtemp(prefix="gpu-render-ro-"))
    try:
        os.chmod(base, 0o755)
        repo = make_repo(base, states["a"])  # type: ignore[arg-type]
        for folder, _, _ in os.walk(repo):
            os.chmod(folder, 0o555)
        os.chmod(repo, 0o755)
        os.chmod(repo / "values.yaml", 0o644)
        proc = subprocess.run(
            [sys.executable, "-m", "renderer", "build", "--force"],
            cwd=repo,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
            capture_output=True,
            text=True,
            timeout=120,
            preexec_fn=_unprivileged(),
        )
        assert proc.returncode == 1, proc.stderr
        assert "cannot write to output" in proc.stderr and "read-only" in proc.stderr
        assert "Traceback" not in proc.stderr
        for folder, _, _ in os.walk(repo):
            os.chmod(folder, 0o755)
        assert snapshot(repo / "output") == states["a"]
        assert sorted(os.listdir(repo / "output")) == sorted({rel.split("/")[0] for rel in states["a"]})  # type: ignore[attr-defined]
    finally:
        for folder, _, _ in os.walk(base):
            os.chmod(folder, 0o755)
        import shutil

        shutil.rmtree(base)


@pytest.mark.parametrize("fail_at", [1, 2, -1])
def test_full_disk_clear_error_previous_output_kept(tmp_path: Path, states: dict[str, object], monkeypatch: pytest.MonkeyPatch, fail_at: int) -> None:
    """ENOSPC while staging (first file, second file, the journal): a UserError naming the
    cause, build A untouched, no staging left behind."""
    from renderer import write
    from renderer.inputs import read_inputs
    from renderer.render import render

    repo = make_repo(tmp_path, states["a"])  # type: ignore[arg-type]
    files_b = render(read_inputs(repo / "values.yaml", None))
    real_write = os.write
    calls = {"n": 0}

    def failing_write(fd: int, data: bytes) -> int:
        calls["n"] += 1
        journal = bytes(data).startswith(b'{\n "format"')
        if (fail_at > 0 and calls["n"] >= fail_at) or (fail_at < 0 and journal):
            raise OSError(errno.ENOSPC, "No space left on device")
        return real_write(fd, data)

    monkeypatch.setattr(write.os, "write", failing_write)
    with pytest.raises(UserError) as caught:
        write.write_tree(repo / "output", files_b, force=True)
    assert "No space left on device" in caught.value.message and "disk is full" in caught.value.hint
    monkeypatch.undo()
    assert snapshot(repo / "output") == states["a"]
    assert not (repo / "output" / write.STAGING).exists()


def test_user_files_never_deleted_or_overwritten(tmp_path: Path, states: dict[str, object]) -> None:
    repo = make_repo(tmp_path, states["a"])  # type: ignore[arg-type]
    out = repo / "output"
    (out / "base" / "mine.yaml").write_text("kind: Mine\n")
    refused = cli(repo, "build")
    assert refused.returncode == 1 and "base/mine.yaml" in refused.stderr
    assert snapshot(out) == {**states["a"], "base/mine.yaml": b"kind: Mine\n"}  # type: ignore[dict-item]
    assert cli(repo, "build", "-q", "--force").returncode == 0
    assert (out / "base" / "mine.yaml").read_text() == "kind: Mine\n"
    assert (out / USER_FILE).read_text() == USER_TEXT
    # a user file where a generated file would go: refused by name, nothing written
    (repo / "values.yaml").write_text(VALUES_A)
    target = next(p for p in states["a"] if p.startswith("base/device-plugin/"))  # type: ignore[attr-defined]
    (out / target).parent.mkdir(parents=True, exist_ok=True)
    (out / target).write_text("hand made\n")
    before = snapshot(out)
    clobber = cli(repo, "build", "--force")
    assert clobber.returncode == 1 and target in clobber.stderr and "would be overwritten" in clobber.stderr
    assert snapshot(out) == before


def test_forged_lock_cannot_delete_outside(tmp_path: Path, states: dict[str, object]) -> None:
    """A lock file edited in a pull request cannot make gpu-render delete outside output/."""
    repo = make_repo(tmp_path, states["a"])  # type: ignore[arg-type]
    victim = tmp_path / "victim.txt"
    victim.write_text("keep")
    lock = json.loads((repo / "output" / "gpu-render.lock").read_text())
    lock["files"]["../victim.txt"] = "0" * 64
    (repo / "output" / "gpu-render.lock").write_text(json.dumps(lock))
    proc = cli(repo, "build", "--force")
    assert proc.returncode == 0, proc.stderr  # only files found inside output/ are candidates
    assert victim.read_text() == "keep"
    assert "../victim.txt" not in json.loads((repo / "output" / "gpu-render.lock").read_text())["files"]


def test_forged_journal_cannot_escape(tmp_path: Path, states: dict[str, object]) -> None:
    """A committed staging folder with a hostile journal is discarded, nothing leaves output/."""
    repo = make_repo(tmp_path, states["a"])  # type: ignore[arg-type]
    victim = tmp_path / "victim.txt"
    victim.write_text("keep")
    staging = repo / "output" / ".gpu-render-staging"
    (staging / "files").mkdir(parents=True)
    (staging / "journal.json").write_text(json.dumps({"format": "gpu-render-journal/1", "writes": ["../victim.txt"], "deletes": ["../victim.txt", USER_FILE]}))
    assert cli(repo, "build", "--check", "-q").returncode == 1
    assert victim.read_text() == "keep" and not staging.exists()
    assert (repo / "output" / USER_FILE).read_text() == USER_TEXT


@pytest.mark.parametrize("bad", ["../escape.yaml", "/etc/escape.yaml", "base/../../escape.yaml", "a\\b.yaml", "", "base//x.yaml", ".gpu-render-staging/x"])
def test_output_paths_cannot_escape(tmp_path: Path, bad: str) -> None:
    from renderer import write

    out = tmp_path / "out"
    with pytest.raises(UserError):
        write.write_tree(out, {bad: "x\n", "gpu-render.lock": "{}\n"})
    assert not (tmp_path / "escape.yaml").exists()


def test_symlink_inside_output_is_not_followed(tmp_path: Path) -> None:
    from renderer import write

    outside = tmp_path / "elsewhere"
    outside.mkdir()
    out = tmp_path / "out"
    out.mkdir()
    (out / "base").symlink_to(outside, target_is_directory=True)
    with pytest.raises(UserError, match="symlink"):
        write.write_tree(out, {"base/x.yaml": "x\n", "gpu-render.lock": "{}\n"}, force=True)
    assert list(outside.iterdir()) == []
    (out / "base").unlink()
    (out / "base").mkdir()
    (outside / "target.yaml").write_text("outside\n")
    (out / "base" / "x.yaml").symlink_to(outside / "target.yaml")
    with pytest.raises(UserError):
        write.write_tree(out, {"base/x.yaml": "x\n", "gpu-render.lock": "{}\n"}, force=True)
    assert (outside / "target.yaml").read_text() == "outside\n"


def test_symlinked_overlay_outside_repo_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, run_cli) -> None:  # type: ignore[no-untyped-def]
    secret = tmp_path / "secret"
    secret.mkdir()
    (secret / "values.yaml").write_text("cluster:\n  name: stolen\n")
    repo = tmp_path / "repo"
    (repo / "overlays" / "prod").mkdir(parents=True)
    (repo / "values.yaml").write_text(VALUES_A)
    (repo / "overlays" / "prod" / "values.yaml").symlink_to(secret / "values.yaml")
    monkeypatch.chdir(repo)
    result = run_cli("build")
    assert result.exit_code == 1
    assert "overlays/prod/values.yaml" in result.stderr and "outside the policy repo" in result.stderr
    assert not (repo / "output").exists()
    # a whole overlay folder linked from outside, and a patch file
    (repo / "overlays" / "prod" / "values.yaml").unlink()
    (repo / "overlays" / "prod" / "patches").mkdir()
    (repo / "overlays" / "prod" / "patches" / "p.yaml").symlink_to(secret / "values.yaml")
    assert "outside the policy repo" in run_cli("build").stderr
    (repo / "overlays" / "east").symlink_to(secret, target_is_directory=True)
    assert "outside the policy repo" in run_cli("build").stderr
    assert not (repo / "output").exists()


@pytest.mark.parametrize("where", ["values.yaml", "nodes.json", "folder"])
def test_a_symlinked_overlay_input_inside_the_repo_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, run_cli, where: str) -> None:  # type: ignore[no-untyped-def]
    """``gpu-render diff`` between refs reads the committed tree, where a link is no file: a
    change made through a link inside the repo would build without showing in the review."""
    repo = tmp_path
    (repo / "shared").mkdir()
    (repo / "values.yaml").write_text(VALUES_A)
    (repo / "shared" / "values.yaml").write_text("devicePlugin:\n  enabled: false\n")
    (repo / "shared" / "nodes.json").write_text('{"items": []}\n')
    (repo / "overlays").mkdir()
    if where == "folder":
        (repo / "overlays" / "prod").symlink_to(repo / "shared", target_is_directory=True)
    else:
        (repo / "overlays" / "prod").mkdir()
        (repo / "overlays" / "prod" / where).symlink_to(repo / "shared" / where)
    monkeypatch.chdir(repo)
    result = run_cli("validate")
    assert result.exit_code == 1 and "may not be a symlink" in result.output


@pytest.mark.parametrize("pool", ["../../escape", "/abs", "a/b", "..", "x\\y"])
def test_hostile_pool_and_cluster_names_stay_inside(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, run_cli, pool: str) -> None:  # type: ignore[no-untyped-def]
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "values.yaml").write_text(f'nodePools:\n  - name: "{pool}"\n    os: {{id: ubuntu, version: "22.04"}}\n'.replace("\\", "\\\\"))
    (repo / "overlays" / "..prod").mkdir(parents=True)
    monkeypatch.chdir(repo)
    result = run_cli("build")
    assert result.exit_code in (0, 1)
    outside = sorted(p.name for p in tmp_path.iterdir())
    assert outside == ["repo"]
    for path in (repo / "output").rglob("*") if (repo / "output").exists() else []:
        assert path.resolve().is_relative_to((repo / "output").resolve())


@pytest.mark.parametrize("reader", ["lint", "diff"])
def test_read_only_commands_recover_first(tmp_path: Path, states: dict[str, object], reader: str) -> None:
    """lint and diff read output/ only after an interrupted build was rolled forward."""
    from renderer import write

    repo = make_repo(tmp_path, states["a"])  # type: ignore[arg-type]
    staged = len(states["b"]) - 1  # type: ignore[arg-type]
    cut = min(int(states["ops"]) - 2, staged + 2)  # type: ignore[call-overload]  # unchanged files are not staged
    assert cli(repo, "build", "-q", "--force", env={write.KILL_ENV: str(cut)}).returncode == -signal.SIGKILL
    assert (repo / "output" / write.STAGING / write.JOURNAL).is_file()
    if reader == "lint":
        cli(repo, "lint", "output")
    else:
        from renderer.gitsource import read_folder

        seen = read_folder(repo / "output")
        assert {k: v.encode() for k, v in seen.items()} == states["b"]
    assert not (repo / "output" / write.STAGING).exists()
    assert assert_a_or_b(repo / "output", states) == "b"


def test_folder_in_the_way_is_refused_before_anything_is_written(tmp_path: Path, states: dict[str, object]) -> None:
    from renderer import write

    repo = make_repo(tmp_path, states["a"])  # type: ignore[arg-type]
    target = next(p for p in states["b"] if p.startswith("base/") and p not in states["a"])  # type: ignore[attr-defined]
    (repo / "output" / target).mkdir(parents=True)
    before = snapshot(repo / "output")
    proc = cli(repo, "build", "--force")
    assert proc.returncode == 1 and "is a folder where gpu-render writes a file" in proc.stderr
    assert snapshot(repo / "output") == before and not (repo / "output" / write.STAGING).exists()
