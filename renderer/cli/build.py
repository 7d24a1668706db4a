"""``gpu-render build`` and ``gpu-render validate``."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import click

from renderer.cli import EXIT_OK, EXIT_PROBLEMS, F
from renderer.cli.output import print_problems, print_user_error


@dataclass(frozen=True)
class BuildOptions:
    values: Path
    overlays: Path
    out: Path
    check: bool = False
    dry_run: bool = False
    force: bool = False
    fmt: str = "text"
    quiet: bool = False
    cache: bool = True
    jobs: int = 1
    """Processes the chart analysis may use (:mod:`renderer.workers`)."""
    overlays_given: bool = False
    """``--overlays`` was given: one that is not a folder is an error (:func:`renderer.inputs.read_inputs`)."""


def input_options(f: F) -> F:
    f = click.option("--overlays", type=click.Path(path_type=Path), default=Path("overlays"), show_default=True, help="Folder of per-cluster overlays.")(f)
    f = click.option("--values", "values", type=click.Path(path_type=Path), default=Path("values.yaml"), show_default=True, help="Fleet values file.")(f)
    return f


def jobs_option(f: F) -> F:
    return click.option(
        "-j",
        "--jobs",
        type=click.IntRange(1),
        default=None,
        envvar="GPU_RENDER_JOBS",
        help="Processes the chart analysis may use (also GPU_RENDER_JOBS; default: the cores this process may run on). The output is the same whatever it is.",
    )(f)


def jobs_of(jobs: int | None) -> int:
    from renderer import workers

    return workers.available() if jobs is None else jobs


def format_option(f: F) -> F:
    return click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True, help="Output format.")(f)


def execute_build(opts: BuildOptions) -> int:
    from renderer import gcpause

    with gcpause.paused():  # a build's data is freed by reference counting (see renderer.gcpause)
        return _execute_build(opts)


def _execute_build(opts: BuildOptions) -> int:
    from renderer.inputs import read_inputs
    from renderer.problems import UserError
    from renderer.write import open_output, plan_changes, write_tree

    inputs = read_inputs(opts.values, opts.overlays, given=opts.overlays_given)
    _refuse_dropping_clusters(opts, inputs)
    use_cache = opts.cache and not opts.check  # a check proves the output from the inputs alone
    built = _build(inputs, opts, _load_cache(opts.out, inputs, opts) if use_cache else None)
    if isinstance(built, int):
        return built
    files = dict(sorted(built.files.items()))
    if opts.check:
        try:
            with open_output(opts.out):  # finishes an interrupted build before comparing
                changes = plan_changes(opts.out, files, force=True)
        except UserError as exc:
            print_user_error(exc, opts.fmt)
            return EXIT_PROBLEMS
        stale = [c for c in changes if c.verb != "unchanged"]
        _report(stale, opts, check=True)
        return EXIT_PROBLEMS if stale else EXIT_OK
    unread = built.reuse.unread | built.reuse.printed.keys() - files.keys() if built.reuse is not None else frozenset()
    changes = write_tree(opts.out, files, dry_run=opts.dry_run, force=opts.force, kept=unread)
    if opts.cache and not opts.dry_run:
        _save_cache(opts.out, inputs, built)
    _report(changes, opts)
    return EXIT_OK


def _refuse_dropping_clusters(opts: BuildOptions, inputs: Any) -> None:
    """A named ``--overlays`` that is absent, while the output holds rendered clusters: a typo
    would delete them all; refused (an absent default ``overlays`` is a fleet without clusters)."""
    import os

    from renderer.problems import UserError

    if not opts.overlays_given or inputs.clusters or os.path.lexists(opts.overlays) or opts.check or opts.dry_run:
        return
    rendered = opts.out / "overlays"
    try:
        names = sorted(e.name for e in os.scandir(rendered) if e.is_dir(follow_symlinks=False)) if rendered.is_dir() and not rendered.is_symlink() else []
    except OSError:
        names = []
    if names:
        raise UserError(
            f"the overlays folder {opts.overlays} does not exist, and {rendered} holds {len(names)} rendered cluster(s) ({', '.join(names[:3])}{', ...' if len(names) > 3 else ''}) that the build would delete",
            hint="pass --overlays with the folder that holds the cluster overlays",
        )


def _build(inputs: Any, opts: BuildOptions, reuse: _Reuse | None) -> Any:
    """Plan and render what changed (everything without a usable cache); an exit code on problems."""
    from renderer import cache
    from renderer.inputs import Inputs
    from renderer.pipeline import plan
    from renderer.render import self_check

    kept = reuse.kept if reuse is not None else {}
    p = plan(Inputs(inputs.values, inputs.values_path, tuple(c for c in inputs.clusters if c.name not in kept), inputs.problems), complete=False) if kept else plan(inputs)
    if p.errors or p.base is None:
        print_problems(p.problems, opts.fmt)
        return EXIT_PROBLEMS
    found = list(p.warnings)
    destinations = {name: cache.destination_of(loc) for name, loc in p.located.items() if name in p.clusters}
    if kept:
        assert reuse is not None and reuse.state is not None
        destinations.update({name: reuse.state.clusters[name].destination for name in kept})
        changed = {c.name: cache.folder(c.values_path) for c in inputs.clusters if c.name not in kept}
        told = cache.warnings(reuse.state, found, changed, sorted(kept), cache.shared_destinations(destinations))
        if told is None:  # only a plan of every cluster can tell the warnings: render it all
            return _build(inputs, opts, None)
        found = told
    if found and opts.fmt == "text" and not opts.quiet:
        print_problems(found)
    built = _render_with_progress(p, opts, kept, reuse.chart if reuse is not None else None, reuse.printed if reuse is not None else None)
    self_check({path: built.files[path] for path in (_unchecked(opts.out, built) if kept else built.fresh)}, built.verified)
    return _Built(built.files, built.units, built.chart, tuple(found), reuse, destinations)


def _unchecked(out: Path, built: Any) -> list[str]:
    """The fresh files of an incremental build whose text is not the one the last build wrote
    (by the old and new lock's hashes): the self-check parsed that text back then, and parsing
    is a function of the text alone."""
    from renderer.emit.lock import LOCK, parse
    from renderer.write import previous_files

    old = previous_files(out)
    new = parse(built.files[LOCK]) if LOCK in built.files else {}
    return [path for path in built.fresh if path == LOCK or path not in old or old[path] != new.get(path)]


def _render_with_progress(p: Any, opts: BuildOptions, kept: dict[str, Any], chart: Any, printed: dict[str, str] | None = None) -> Any:
    """A progress bar on stderr for fleet builds, only when stderr is a terminal."""
    import sys

    from renderer.emit import emit_units

    clusters = len(p.clusters)
    if opts.quiet or opts.fmt == "json" or clusters < 2 or not sys.stderr.isatty():
        return emit_units(p, None, kept, chart, printed, opts.jobs)
    with click.progressbar(length=clusters, label="rendering clusters", file=sys.stderr) as bar:
        return emit_units(p, lambda _name: bar.update(1), kept, chart, printed, opts.jobs)


# --- the incremental build's cache (see renderer/cache.py): the I/O half ------------------


@dataclass(frozen=True)
class _Reuse:
    state: Any
    """The cache's state (``cache.State``)."""
    kept: dict[str, Any]
    """Clusters whose inputs did not change and whose files are as written: name -> ``ClusterUnit``."""
    stats: dict[str, tuple[int, int, int, int]]
    """``cache.Stat`` of every kept file."""
    chart: Any
    """The fleet's chart analysis, or None."""
    unread: frozenset[str] = frozenset()
    """Kept files trusted by their stat, not read: in no unit's ``files``; the writer keeps them as they are."""
    printed: dict[str, str] = field(default_factory=dict)
    """The chart templates the last build printed for this fleet key, as written (path -> sha256):
    not printed again when the kept chart analysis passes its check (``cache.kept_templates``)."""


@dataclass(frozen=True)
class _Built:
    files: dict[str, str]
    units: dict[str, Any]
    chart: Any
    warnings: tuple[Any, ...]
    reuse: _Reuse | None
    destinations: dict[str, dict[str, Any]]


def _load_cache(out: Path, inputs: Any, opts: BuildOptions | None = None) -> _Reuse | None:
    import os

    from renderer import cache
    from renderer.write import read_internal

    tracked = _tracked_cache_files(out)
    if tracked:
        if opts is None or (opts.fmt == "text" and not opts.quiet):
            print_problems([cache.tracked_warning(out, tracked)])
        return None
    data = read_internal(out, cache.STATE, cache.MAX_CACHE_BYTES)
    state = cache.loads(data) if data is not None else None
    if state is None:
        return None
    data = read_internal(out, cache.CHART, cache.MAX_CACHE_BYTES)
    chart = cache.chart_loads(data, cache.fleet_key(inputs)) if data is not None else None
    kept: dict[str, Any] = {}
    stats: dict[str, tuple[int, int, int, int]] = {}
    unread: set[str] = set()
    root_s = os.fspath(out)
    for name, entry in cache.candidates(state, inputs).items():
        unit = _read_unit(root_s, name, entry, stats, unread)
        if unit is not None:
            kept[name] = unit
    printed: dict[str, str] = {}
    if chart is not None:
        now = {path: _stat(root_s, path) for path in state.templates}
        printed = cache.kept_templates(state, inputs, now)
        stats.update({path: st for path, st in now.items() if st is not None and path in printed})
    return _Reuse(state, kept, stats, chart, frozenset(unread), printed)


def _stat(out: str, path: str) -> Any:
    """``cache.Stat`` of a regular file under ``out``, or None (gone, a link, not a file)."""
    import os
    import stat

    from renderer import cache

    try:
        st = os.stat(f"{out}/{path}", follow_symlinks=False)
    except OSError:
        return None
    return cache.stat_of(st) if stat.S_ISREG(st.st_mode) else None


def _tracked_cache_files(out: Path) -> list[str]:
    """The files of ``out/.gpu-render-cache/`` that git tracks (a cache committed to the policy
    repository, e.g. force-added in a pull request). None tracked when git or a repo is missing."""
    import os
    import subprocess

    from renderer import cache

    if not (out / cache.CACHE_DIR).is_dir() or out.is_symlink():
        return []
    try:
        proc = subprocess.run(
            ["git", "ls-files", "-z", "--", cache.CACHE_DIR],
            cwd=out, capture_output=True, timeout=60, env={**os.environ, "GIT_OPTIONAL_LOCKS": "0"},
        )
    except (OSError, subprocess.SubprocessError):
        return []
    if proc.returncode != 0:
        return []
    return sorted(p.decode("utf-8", "replace") for p in proc.stdout.split(b"\0") if p)


def _read_unit(out: str, name: str, entry: Any, stats: dict[str, tuple[int, int, int, int]], unread: set[str]) -> Any:
    """The cluster's unit, or None when any of its files was edited, removed or replaced.

    A file whose size, mtime, inode and ctime are as recorded is trusted unread (it goes in
    ``unread``, not in the unit's files); one whose stat moved is read and hashed again and
    kept if its hash is as recorded."""
    import hashlib
    import os
    import stat

    from renderer import cache
    from renderer.emit import ClusterUnit

    files: dict[str, str] = {}
    seen: dict[str, tuple[int, int, int, int]] = {}
    trusted: list[str] = []
    for path, recorded in entry.files.items():
        target = f"{out}/{path}"
        try:
            st = os.stat(target, follow_symlinks=False)
            if not stat.S_ISREG(st.st_mode) or st.st_size != recorded[1]:
                return None
            now = cache.stat_of(st)
            if cache.trusted(recorded, now):
                trusted.append(path)
                seen[path] = now
                continue
            with open(target, "rb") as handle:
                data = handle.read()
        except OSError:
            return None
        if hashlib.sha256(data).hexdigest() != recorded[0]:
            return None
        try:
            files[path] = data.decode("utf-8")
        except UnicodeDecodeError:
            return None
        seen[path] = now
    stats.update(seen)
    unread.update(trusted)
    return ClusterUnit(name, files, entry.summary, {p: f[0] for p, f in entry.files.items()})


def _save_cache(out: Path, inputs: Any, built: _Built) -> None:
    """Record this build for the next one; a cache that cannot be written is simply not there."""
    import contextlib
    import os

    from renderer import cache
    from renderer.emit import helm
    from renderer.emit.lock import sha256
    from renderer.write import write_internal

    try:
        write_internal(out, ".gitignore", cache.GITIGNORE.encode("utf-8"), keep=True)
        write_internal(out, "CACHEDIR.TAG", cache.CACHEDIR_TAG.encode("utf-8"), keep=True)
        fleet = cache.fleet_key(inputs)
        folders = {c.name: cache.folder(c.values_path) for c in inputs.clusters}
        fleet_warnings, own = cache.split_warnings(list(built.warnings), folders)
        known = built.reuse.stats if built.reuse is not None else {}
        entries = {}
        for ci in inputs.clusters:
            unit = built.units[ci.name]
            files = {}
            for path in sorted(unit.hashes):  # every file of the unit; ``files`` lacks the unread ones
                now = known.get(path)
                if now is None:
                    now = cache.stat_of(os.stat(out.joinpath(*path.split("/")), follow_symlinks=False))
                files[path] = (unit.hashes[path], *now)
            entries[ci.name] = cache.Entry(cache.cluster_key(fleet, ci), unit.summary, files, own.get(ci.name, ()), built.destinations[ci.name])
        templates = {}
        for path in sorted(helm.template_paths(helm.Chart(*built.chart))):
            now = known.get(path)
            if path in built.files:
                sha, now = sha256(built.files[path]), None  # printed (or rewritten) now: stat it as written
            elif built.reuse is not None and path in built.reuse.printed:
                sha = built.reuse.printed[path]
            else:
                continue
            if now is None:
                now = cache.stat_of(os.stat(out.joinpath(*path.split("/")), follow_symlinks=False))
            templates[path] = (sha, *now)
        write_internal(out, cache.STATE, cache.dumps(cache.State(fleet, entries, fleet_warnings, templates)))
        with contextlib.suppress(FileNotFoundError):
            os.unlink(out / cache.CACHE_DIR / "chart.pickle")  # what gpu-render 0.x kept there: never read
        if built.reuse is None or built.reuse.chart is None or built.chart[1] is not built.reuse.chart[1]:  # none kept, or the kept one failed its check
            chart = cache.chart_dumps(fleet, built.chart)
            if chart is not None:
                write_internal(out, cache.CHART, chart)
    except OSError:
        return


def _report(changes: list, opts: BuildOptions, check: bool = False) -> None:  # type: ignore[type-arg]
    if opts.fmt == "json":
        click.echo(json.dumps({"changes": [{"path": c.path, "verb": c.verb} for c in changes], "stale": check and bool(changes)}, indent=2, sort_keys=True))
        return
    if check:
        for c in changes:
            click.echo(f"stale: {c.verb.replace('created', 'missing').replace('deleted', 'extra')} {opts.out / c.path}", err=True)
        if changes:
            click.echo(f"{opts.out} is out of date: {len(changes)} file(s) differ; run gpu-render build", err=True)
        elif not opts.quiet:
            click.echo(f"{opts.out} is up to date")
        return
    counts: dict[str, int] = {}
    for c in changes:
        counts[c.verb] = counts.get(c.verb, 0) + 1
        if c.verb != "unchanged" and not opts.quiet:
            click.echo(f"{c.verb:>9} {opts.out / c.path}")
    if not opts.quiet:
        prefix = "would write: " if opts.dry_run else ""
        summary = ", ".join(f"{counts.get(v, 0)} {v}" for v in ("created", "updated", "deleted", "unchanged"))
        click.echo(f"{prefix}{summary}")


@click.command("build")
@click.pass_context
@input_options
@click.option("--out", type=click.Path(path_type=Path), default=Path("output"), show_default=True, help="Output folder.")
@click.option("--check", is_flag=True, help="Write nothing; exit 1 when the output folder is stale.")
@click.option("--dry-run", is_flag=True, help="Report what would change; write nothing.")
@click.option("--force", is_flag=True, help="Build even if the output folder holds files gpu-render did not generate (they are kept).")
@format_option
@click.option("-q", "--quiet", is_flag=True, help="Print only problems.")
@click.option("--no-cache", is_flag=True, help="Render every cluster; neither read nor write OUT/.gpu-render-cache/.")
@jobs_option
def build_cmd(ctx: click.Context, values: Path, overlays: Path, out: Path, check: bool, dry_run: bool, force: bool, fmt: str, quiet: bool, no_cache: bool, jobs: int | None) -> None:
    """Render the policy into OUT: Helm chart, Kustomize base and overlays, Argo CD apps.

    Clusters whose inputs and output files did not change since the last build are not
    rendered again (their files are read back); --check always renders everything."""
    from renderer.cli.params import given

    code = execute_build(BuildOptions(values, overlays, out, check, dry_run, force, fmt, quiet, not no_cache, jobs_of(jobs), given(ctx, "overlays")))
    if code:
        raise SystemExit(code)


@click.command("validate")
@click.pass_context
@input_options
@format_option
def validate_cmd(ctx: click.Context, values: Path, overlays: Path, fmt: str) -> None:
    """Check the policy and every overlay; print problems, write nothing."""
    from renderer.cli.params import given
    from renderer.inputs import read_inputs
    from renderer.pipeline import plan

    p = plan(read_inputs(values, overlays, given=given(ctx, "overlays")))
    print_problems(p.problems, fmt)
    if fmt == "text" and not p.errors:
        click.echo(f"ok: {values} and {len(p.located) - 1} overlay(s) are valid")
    raise SystemExit(EXIT_PROBLEMS if p.errors else EXIT_OK)


COMMANDS = [build_cmd, validate_cmd]
