"""``gpu-render build`` and ``gpu-render validate``."""

from __future__ import annotations

import json
from dataclasses import dataclass
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


def input_options(f: F) -> F:
    f = click.option("--overlays", type=click.Path(path_type=Path), default=Path("overlays"), show_default=True, help="Folder of per-cluster overlays.")(f)
    f = click.option("--values", "values", type=click.Path(path_type=Path), default=Path("values.yaml"), show_default=True, help="Fleet values file.")(f)
    return f


def format_option(f: F) -> F:
    return click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True, help="Output format.")(f)


def execute_build(opts: BuildOptions) -> int:
    from renderer.inputs import read_inputs
    from renderer.pipeline import plan
    from renderer.problems import UserError
    from renderer.write import open_output, plan_changes, write_tree

    p = plan(read_inputs(opts.values, opts.overlays))
    if p.errors or p.base is None:
        print_problems(p.problems, opts.fmt)
        return EXIT_PROBLEMS
    if p.warnings and opts.fmt == "text" and not opts.quiet:
        print_problems(p.warnings)
    files = _render_with_progress(p, opts)
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
    changes = write_tree(opts.out, files, dry_run=opts.dry_run, force=opts.force)
    _report(changes, opts)
    return EXIT_OK


def _render_with_progress(p: Any, opts: BuildOptions) -> dict[str, str]:
    """A progress bar on stderr for fleet builds, only when stderr is a terminal."""
    import sys

    from renderer.render import render_plan

    clusters = len(p.clusters)
    if opts.quiet or opts.fmt == "json" or clusters < 2 or not sys.stderr.isatty():
        return render_plan(p)
    with click.progressbar(length=clusters, label="rendering clusters", file=sys.stderr) as bar:
        return render_plan(p, lambda _name: bar.update(1))


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
@input_options
@click.option("--out", type=click.Path(path_type=Path), default=Path("output"), show_default=True, help="Output folder.")
@click.option("--check", is_flag=True, help="Write nothing; exit 1 when the output folder is stale.")
@click.option("--dry-run", is_flag=True, help="Report what would change; write nothing.")
@click.option("--force", is_flag=True, help="Build even if the output folder holds files gpu-render did not generate (they are kept).")
@format_option
@click.option("-q", "--quiet", is_flag=True, help="Print only problems.")
def build_cmd(values: Path, overlays: Path, out: Path, check: bool, dry_run: bool, force: bool, fmt: str, quiet: bool) -> None:
    """Render the policy into OUT: Helm chart, Kustomize base and overlays, Argo CD apps."""
    code = execute_build(BuildOptions(values, overlays, out, check, dry_run, force, fmt, quiet))
    if code:
        raise SystemExit(code)


@click.command("validate")
@input_options
@format_option
def validate_cmd(values: Path, overlays: Path, fmt: str) -> None:
    """Check the policy and every overlay; print problems, write nothing."""
    from renderer.inputs import read_inputs
    from renderer.pipeline import plan

    p = plan(read_inputs(values, overlays))
    print_problems(p.problems, fmt)
    if fmt == "text" and not p.errors:
        click.echo(f"ok: {values} and {len(p.located) - 1} overlay(s) are valid")
    raise SystemExit(EXIT_PROBLEMS if p.errors else EXIT_OK)


COMMANDS = [build_cmd, validate_cmd]
