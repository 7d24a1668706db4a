"""``gpu-render import-operator-values FILE``."""

from __future__ import annotations

from pathlib import Path

import click


@click.command("import-operator-values")
@click.argument("values_file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path), help="Write the policy here instead of stdout (never overwrites).")
def import_cmd(values_file: Path, output: Path | None) -> None:
    """Turn a GPU Operator chart values file into a gpu-render policy."""
    from renderer.inputs import display
    from renderer.migrate import import_values
    from renderer.problems import UserError

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


COMMANDS = [import_cmd]
