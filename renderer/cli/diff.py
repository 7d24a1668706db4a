"""``gpu-render diff [BASE] [HEAD]``: what a policy change does to the rendered objects.

Each side is a git ref (the policy at that commit, read with git into memory), a policy
folder (``values.yaml`` + ``overlays/``), or an output folder (``gpu-render.lock`` or
``base/``). Default: the merge base with the default branch vs the working tree.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import click

from renderer.cli import EXIT_OK, EXIT_PROBLEMS
from renderer.cli.build import jobs_of, jobs_option
from renderer.problems import UserError

if TYPE_CHECKING:  # renderer.diff is imported when diff runs, not by every command's start-up
    from renderer.diff import Diff, Side
    from renderer.inputs import Inputs
    from renderer.memo import Memo


class DisruptionClass(click.Choice[str]):
    """``click.Choice`` over :data:`renderer.diff.CLASSES`, read only when the option is parsed
    or its help shown: ``gpu-render --help`` and the other commands never import the diff."""

    def __init__(self) -> None:
        super().__init__(())

    @property  # type: ignore[override]
    def choices(self) -> Sequence[str]:
        from renderer.diff import CLASSES

        return tuple(CLASSES)

    @choices.setter
    def choices(self, _value: Sequence[str]) -> None:
        pass


@dataclass(frozen=True)
class DiffOptions:
    base: str | None
    head: str | None
    values: Path
    overlays: Path
    fmt: str
    show_noise: bool
    exit_code: bool
    fail_on: tuple[str, ...]
    parts_dir: Path | None
    comment_limit: int
    jobs: int = 1
    """Processes the chart analysis may use, when a side is an output folder (its other side is rendered whole)."""
    overlays_given: bool = False
    """``--overlays`` was given: the working tree's must then be a folder (see :func:`renderer.inputs.read_inputs`)."""


@dataclass(frozen=True)
class Source:
    """A side before rendering: either policy inputs or an output tree."""

    label: str
    inputs: Inputs | None = None
    tree: dict[str, str] | None = None


def resolve_source(arg: str | None, opts: DiffOptions, cwd: Path, *, is_base: bool) -> Source:
    from renderer import gitsource
    from renderer.inputs import read_inputs

    if arg is None:
        if is_base:
            label, sha = gitsource.merge_base(cwd)
            return Source(f"{label} {sha[:12]}", gitsource.read_inputs_at(sha, label, cwd, str(opts.values), str(opts.overlays)))
        return Source("working tree", read_inputs(opts.values, opts.overlays, given=opts.overlays_given))
    folder = Path(arg)
    if folder.is_dir():
        if (folder / "gpu-render.lock").is_file() or (folder / "base").is_dir():
            return Source(arg, tree=gitsource.read_folder(folder))
        if (folder / "values.yaml").is_file():
            return Source(arg, read_inputs(folder / "values.yaml", folder / "overlays"))
        raise UserError(f"{arg}: neither an output folder (gpu-render.lock, base/) nor a policy folder (values.yaml)")
    commit = gitsource.commit_of(arg, cwd)
    if commit is None:
        raise UserError(f"{arg}: not a folder and not a git commit here", hint="pass a git ref (main, HEAD~1, a sha) or a folder")
    return Source(f"{arg} {commit[:12]}", gitsource.read_inputs_at(commit, arg, cwd, str(opts.values), str(opts.overlays)))


def _plan(src: Source):  # type: ignore[no-untyped-def]
    from renderer.pipeline import plan

    assert src.inputs is not None
    p = plan(src.inputs)
    if p.errors or p.base is None:
        raise UserError(f"{src.label}: the policy has problems; nothing to diff", problems=p.problems)
    return p


def to_side(src: Source, as_tree: bool, memo: Memo | None = None, jobs: int = 1) -> Side:
    from renderer.diff import side_from_models, side_from_tree
    from renderer.render import render_plan

    if src.tree is not None:
        return side_from_tree(src.label, src.tree)
    p = _plan(src)
    if as_tree:
        return side_from_tree(src.label, render_plan(p, jobs=jobs))
    patches = {c.name: c.patches for c in src.inputs.clusters} if src.inputs is not None else {}
    return side_from_models(src.label, p.base, p.clusters, patches, memo=memo)


def compute(opts: DiffOptions, cwd: Path, *, memoise: bool = True) -> Diff:
    """The diff of the two sides; both render through one component memo (``memoise``: a
    test compares with and without), so a component configuration the sides share renders once."""
    from renderer.diff import diff_sides
    from renderer.memo import Memo

    old = resolve_source(opts.base, opts, cwd, is_base=True)
    new = resolve_source(opts.head, opts, cwd, is_base=False)
    as_tree = old.tree is not None or new.tree is not None
    memo = Memo() if memoise else None
    return diff_sides(to_side(old, as_tree, memo, opts.jobs), to_side(new, as_tree, memo, opts.jobs))


def want_color(isatty: bool, env: Mapping[str, str]) -> bool:
    """Colour on a terminal unless ``NO_COLOR`` is set to anything non-empty (no-color.org)."""
    return isatty and not env.get("NO_COLOR")


def _write_parts(folder: Path, parts: Sequence[str]) -> None:
    """``folder/part-NNN.md``, one a part, the old parts removed; what cannot be written is a UserError."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
        for old in folder.glob("part-*.md"):
            old.unlink()
        for i, part in enumerate(parts, 1):
            with open(folder / f"part-{i:03d}.md", "x", encoding="utf-8") as handle:  # a new file, never through a symlink
                handle.write(part)
    except OSError as exc:
        raise UserError(f"cannot write the markdown parts into {folder}: {exc.strerror or exc}", hint="--parts-dir names a folder gpu-render may create and write") from None


def check_parts_dir(parts_dir: Path | None, fmt: str) -> None:
    """Usage errors of ``--parts-dir``: it goes with ``--format markdown`` only, and names a folder
    (or nothing yet), not a file."""
    import os

    if parts_dir is None:
        return
    if fmt != "markdown":
        raise click.UsageError(f"--parts-dir writes the parts of the markdown report: it needs --format markdown (not {fmt})")
    if os.path.lexists(parts_dir) and not parts_dir.is_dir():
        raise click.BadParameter(f"{str(parts_dir)!r} exists and is not a folder", param_hint="'--parts-dir'")


def execute(opts: DiffOptions, cwd: Path) -> int:
    from renderer import diff_report

    d = compute(opts, cwd)
    if opts.fmt == "json":
        click.echo(diff_report.json_text(d, show_noise=opts.show_noise), nl=False)
    elif opts.fmt == "markdown":
        body = diff_report.markdown(d, show_noise=opts.show_noise)
        parts = diff_report.split_markdown(body, opts.comment_limit)
        if opts.parts_dir is not None:
            _write_parts(opts.parts_dir, parts)
        click.echo("\n".join(parts), nl=False)
    else:
        import os
        import sys

        color = want_color(sys.stdout.isatty(), os.environ)
        click.echo(diff_report.text(d, show_noise=opts.show_noise, color=color), nl=False)
    hit = [c for c in opts.fail_on if c in d.classes()]
    if hit:
        click.echo(f"gpu-render diff: failing on disruption class {', '.join(hit)}", err=True)
        return EXIT_PROBLEMS
    if opts.exit_code and d.changed:
        return EXIT_PROBLEMS
    return EXIT_OK


@click.command("diff")
@click.argument("base", required=False)
@click.argument("head", required=False)
@click.option("--values", "values", type=click.Path(path_type=Path), default=Path("values.yaml"), show_default=True, help="Fleet values file (also its path inside git refs).")
@click.option("--overlays", type=click.Path(path_type=Path), default=Path("overlays"), show_default=True, help="Overlays folder (also its path inside git refs).")
@click.option("--format", "fmt", type=click.Choice(["text", "markdown", "json"]), default="text", show_default=True, help="Output format.")
@click.option("--show-noise", is_flag=True, help="Also list generated checksums and version labels.")
@click.option("--exit-code", is_flag=True, help="Exit 1 when there are changes (noise aside).")
@click.option("--fail-on", multiple=True, type=DisruptionClass(), help="Exit 1 when a change has this disruption class (repeatable).")
@click.option("--parts-dir", type=click.Path(path_type=Path), default=None, help="With --format markdown only (else a usage error): also write each comment-sized part to DIR/part-NNN.md (old parts there removed).")
@click.option("--comment-limit", type=click.IntRange(1000), default=65_536, show_default=True, hidden=True, help="markdown: characters per part.")
@jobs_option
def diff_cmd(
    base: str | None,
    head: str | None,
    values: Path,
    overlays: Path,
    fmt: str,
    show_noise: bool,
    exit_code: bool,
    fail_on: tuple[str, ...],
    parts_dir: Path | None,
    comment_limit: int,
    jobs: int | None,
) -> None:
    """Semantic diff of the rendered stack between BASE and HEAD, with disruption classes.

    BASE and HEAD are git refs, policy folders or output folders. Default BASE: the merge
    base with the default branch; default HEAD: the working tree.
    """
    from renderer.cli.params import given

    check_parts_dir(parts_dir, fmt)
    opts = DiffOptions(base, head, values, overlays, fmt, show_noise, exit_code, fail_on, parts_dir, comment_limit, jobs_of(jobs), given(click.get_current_context(), "overlays"))
    code = execute(opts, Path.cwd())
    if code:
        raise SystemExit(code)


COMMANDS = [diff_cmd]
