"""The writer's fast paths keep its guarantees: new folders move in whole, unchanged files are
not touched, each folder is created once, the build cache folder is left alone, and a build
killed anywhere (including between the folder renames) is rolled forward or discarded."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from renderer import write
from renderer.emit.lock import LOCK, sha256

ROOT = Path(__file__).resolve().parent.parent


def tree(files: dict[str, str]) -> dict[str, str]:
    """``files`` plus a lock naming them, as a build hands them to the writer."""
    body = {"files": {p: sha256(t) for p, t in sorted(files.items())}}
    return {**files, LOCK: json.dumps(body, indent=2, sort_keys=True) + "\n"}


FILES = tree(
    {
        "base/a/one.yaml": "one\n",
        "base/a/two.yaml": "two\n",
        "base/b/deep/three.yaml": "three\n",
        "overlays/c1/kustomization.yaml": "c1\n",
        "overlays/c2/kustomization.yaml": "c2\n",
        "top.yaml": "top\n",
    }
)


def on_disk(out: Path) -> dict[str, str]:
    found: dict[str, str] = {}
    for path in sorted(out.rglob("*")):
        rel = path.relative_to(out).as_posix()
        if path.is_file() and not any(p.startswith(write.INTERNAL_PREFIX) for p in rel.split("/")):
            found[rel] = path.read_text()
    return found


def test_cold_write_moves_new_folders_whole(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "out"
    made: list[str] = []
    real_mkdir = os.mkdir

    def counting_mkdir(path: str, *args: object, **kwargs: object) -> None:
        made.append(os.fspath(path))
        real_mkdir(path, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(write.os, "mkdir", counting_mkdir)
    before = write.OPS.count
    changes = write.write_tree(out, FILES)
    assert {c.verb for c in changes} == {"created"}
    assert on_disk(out) == FILES
    assert len(made) == len(set(made)), "a folder was created twice"
    staged_folders = {p.rpartition("/")[0] for p in FILES if "/" in p}
    staged_folders |= {f.rpartition("/")[0] for f in staged_folders if "/" in f}
    inside = [m for m in made if f"/{write.STAGING}/files/" in m]
    assert len(inside) == len(staged_folders)
    assert len(made) == len(inside) + 3  # out, staging, staging/files: the output's folders arrive by rename
    # 7 staged files + journal + 2 folder renames (base, overlays) + top.yaml + lock + staging removal
    assert write.OPS.count - before == len(FILES) + 1 + 2 + 2 + 1
    assert not (out / write.STAGING).exists()


def test_unchanged_files_are_not_rewritten(tmp_path: Path) -> None:
    out = tmp_path / "out"
    write.write_tree(out, FILES)
    inodes = {p: (out / p).stat().st_ino for p in FILES}
    assert {c.verb for c in write.write_tree(out, FILES)} == {"unchanged"}
    changed = tree({**{p: t for p, t in FILES.items() if p != LOCK}, "base/a/two.yaml": "TWO\n", "base/new/four.yaml": "four\n"})
    del changed["top.yaml"]
    changed = tree({p: t for p, t in changed.items() if p != LOCK})
    verbs = {c.path: c.verb for c in write.write_tree(out, changed)}
    assert verbs["base/a/two.yaml"] == "updated" and verbs["base/new/four.yaml"] == "created" and verbs["top.yaml"] == "deleted"
    assert verbs["base/a/one.yaml"] == "unchanged"
    assert on_disk(out) == changed
    for path, verb in verbs.items():
        if verb == "unchanged":
            assert (out / path).stat().st_ino == inodes[path], f"{path} was rewritten"


def test_hand_edit_is_seen_although_the_lock_says_unchanged(tmp_path: Path) -> None:
    out = tmp_path / "out"
    write.write_tree(out, FILES)
    (out / "base/a/one.yaml").write_text("edited\n")
    verbs = {c.path: c.verb for c in write.plan_changes(out, FILES)}
    assert verbs["base/a/one.yaml"] == "updated"
    write.write_tree(out, FILES)
    assert on_disk(out) == FILES


def test_cache_folder_is_left_alone(tmp_path: Path) -> None:
    """``<out>/.gpu-render-cache/`` belongs to the incremental build: never listed, never
    foreign, never deleted, by a cold build, a rebuild, --check or a build that deletes."""
    out = tmp_path / "out"
    cache = out / write.CACHE_DIR
    (cache / "units").mkdir(parents=True)
    (cache / "units" / "c1.json").write_text("{}\n")
    assert write.CACHE_DIR.startswith(write.INTERNAL_PREFIX)
    assert {c.verb for c in write.write_tree(out, FILES)} == {"created"}  # no --force needed
    assert write.CACHE_DIR not in write.existing_files(out) and "units/c1.json" not in str(write.existing_files(out))
    assert {c.verb for c in write.plan_changes(out, FILES)} == {"unchanged"}
    smaller = tree({"top.yaml": "top\n"})
    write.write_tree(out, smaller)
    assert on_disk(out) == smaller
    assert (cache / "units" / "c1.json").read_text() == "{}\n"
    with pytest.raises(Exception, match="outside the output folder"):
        write.write_tree(out, {f"{write.CACHE_DIR}/x": "x\n"})


def test_symlinked_folder_deep_inside_is_refused(tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    out = tmp_path / "out"
    write.write_tree(out, FILES)
    (out / "base" / "b" / "deep").rename(tmp_path / "gone")
    (out / "base" / "b" / "deep").symlink_to(outside, target_is_directory=True)
    changed = tree({**{p: t for p, t in FILES.items() if p != LOCK}, "base/b/deep/three.yaml": "3\n"})
    with pytest.raises(Exception, match="symlink"):
        write.write_tree(out, changed, force=True)
    assert list(outside.iterdir()) == []


KILLED_WRITE = """
import json, sys
from pathlib import Path
from renderer import write
write.write_tree(Path(sys.argv[1]), json.loads(sys.argv[2]))
"""


@pytest.mark.slow
def test_cold_write_killed_anywhere_is_all_or_nothing(tmp_path: Path) -> None:
    """Kill a cold write after every file operation (staged files, journal, each folder
    rename, the lock, staging removal): the next open of the folder gives nothing or all."""
    total = len(FILES) + 1 + 2 + 2 + 1
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    seen = set()
    for n in range(1, total + 1):
        out = tmp_path / f"k{n}"
        proc = subprocess.run(
            [sys.executable, "-c", KILLED_WRITE, str(out), json.dumps(FILES)],
            env={**env, write.KILL_ENV: str(n)},
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert proc.returncode == -signal.SIGKILL, (n, proc.stderr)
        with write.open_output(out):
            pass  # recovery
        now = on_disk(out)
        assert now in ({}, FILES), (n, sorted(now))
        assert not (out / write.STAGING).exists()
        seen.add("all" if now else "nothing")
    assert seen == {"all", "nothing"}


def test_forged_journal_folder_cannot_bring_in_unlisted_files(tmp_path: Path) -> None:
    out = tmp_path / "out"
    write.write_tree(out, FILES)
    staging = out / write.STAGING
    (staging / "files" / "evil").mkdir(parents=True)
    (staging / "files" / "evil" / "listed.yaml").write_text("listed\n")
    (staging / "files" / "evil" / "unlisted.yaml").write_text("unlisted\n")
    journal = {"format": write.JOURNAL_FORMAT, "writes": ["evil/listed.yaml"], "deletes": [], "folders": ["evil"]}
    (staging / write.JOURNAL).write_text(json.dumps(journal))
    assert write.recover(out) == "rolled forward"
    assert not (out / "evil" / "unlisted.yaml").exists()
    assert not staging.exists()


def test_journal_of_the_previous_format_still_rolls_forward(tmp_path: Path) -> None:
    """A journal without ``folders`` (written before they existed) moves file by file."""
    out = tmp_path / "out"
    write.write_tree(out, FILES)
    staging = out / write.STAGING
    (staging / "files" / "base" / "a").mkdir(parents=True)
    (staging / "files" / "base" / "a" / "one.yaml").write_text("ONE\n")
    (staging / write.JOURNAL).write_text(json.dumps({"format": write.JOURNAL_FORMAT, "writes": ["base/a/one.yaml"], "deletes": ["top.yaml"]}))
    assert write.recover(out) == "rolled forward"
    assert (out / "base" / "a" / "one.yaml").read_text() == "ONE\n" and not (out / "top.yaml").exists()


MANY = tree({f"overlays/c{i % 20:02d}/patches/p{i}.yaml": f"patch {i}\n" for i in range(150)} | {"base/x.yaml": "x\n"})


def test_many_files_staged_by_threads_killed_anywhere(tmp_path: Path) -> None:
    """Enough files for the threaded staging: kills while staging (any thread), right after
    the journal and during the moves still give nothing or everything."""
    out = tmp_path / "cold"
    before = write.OPS.count
    write.write_tree(out, MANY)
    assert on_disk(out) == MANY
    total = write.OPS.count - before  # staged files + journal + 2 folders + lock + staging removal
    assert total == len(MANY) + 1 + 2 + 1 + 1
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    for n in (1, 40, len(MANY) - 1, len(MANY), len(MANY) + 1, len(MANY) + 2, total):
        target = tmp_path / f"k{n}"
        proc = subprocess.run([sys.executable, "-c", KILLED_WRITE, str(target), json.dumps(MANY)], env={**env, write.KILL_ENV: str(n)}, capture_output=True, text=True, timeout=60)
        assert proc.returncode == -signal.SIGKILL, (n, proc.stderr)
        with write.open_output(target):
            pass
        assert on_disk(target) == (MANY if n > len(MANY) else {}), n
        assert not (target / write.STAGING).exists()
