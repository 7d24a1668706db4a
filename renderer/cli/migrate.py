"""``gpu-render import-operator-values FILE``."""

from __future__ import annotations

from pathlib import Path

import click


@click.command("import-operator-values")
@click.argument("values_file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path), help="Write the policy here instead of stdout (never overwrites).")
def import_cmd(values_file: Path, output: Path | None) -> None:
    """Turn a GPU Operator chart values file into a gpu-render policy.

    The policy is written as imported, then checked as ``validate`` checks it: its problems are
    printed at their place in the written policy, and the exit code is 1 when it has errors
    (a key the importer keeps for the user to fix, a value no release accepts), so CI and
    scripts never take a policy that cannot build for an import that went through."""
    from renderer.cli import EXIT_PROBLEMS
    from renderer.cli.output import print_problems
    from renderer.inputs import Inputs, display
    from renderer.migrate import import_values
    from renderer.pipeline import plan
    from renderer.problems import Severity, UserError

    result = import_values(values_file.read_bytes(), display(values_file))
    if output is None:
        click.echo(result.text, nl=False)
    else:
        if output.exists():
            raise UserError(f"{output} exists; import never overwrites files")
        output.write_text(result.text, encoding="utf-8")
        click.echo(f"wrote {output}", err=True)
    for key, to, why in result.moved:
        click.echo(f"moved {key} -> {to}: {why}", err=True)
    for key, why in result.dropped:
        click.echo(f"removed {key}: {why}", err=True)
    for key, note in result.notes:
        click.echo(f"changed {key}: {note}", err=True)
    if result.unpinned:
        click.echo(f"not pinned: {result.unpinned}", err=True)
    if result.defaults:
        click.echo(f"defaults changed: {result.defaults}", err=True)
    where = "<stdout>" if output is None else display(output)
    problems = plan(Inputs(result.text.encode("utf-8"), where)).problems
    print_problems(problems)
    if any(p.severity is Severity.ERROR for p in problems):
        click.echo(f"{where} needs the changes above before gpu-render builds it (gpu-render validate --values {where} checks again)", err=True)
        raise SystemExit(EXIT_PROBLEMS)


COMMANDS = [import_cmd]
