"""``gpu-render images``: every image the output pulls, one per line (air-gap mirroring)."""

from __future__ import annotations

import json
from pathlib import Path

import click

from renderer.cli import EXIT_OK, EXIT_PROBLEMS
from renderer.cli.output import print_problems


def execute_images(values: Path, overlays: Path, cluster: str | None, fmt: str, overlays_given: bool = False) -> int:
    from renderer.images import model_images, per_cluster
    from renderer.inputs import read_inputs
    from renderer.pipeline import plan

    p = plan(read_inputs(values, overlays, given=overlays_given))
    if p.errors or p.base is None:
        print_problems(p.problems, fmt)
        return EXIT_PROBLEMS
    if cluster is None:
        found = per_cluster(p.base, p.clusters)
    elif cluster == p.base.cluster:
        found = {cluster: model_images(p.base)}
    elif cluster in p.clusters:
        found = {cluster: model_images(p.clusters[cluster])}
    else:
        known = ", ".join([p.base.cluster, *sorted(p.clusters)])
        raise click.UsageError(f"unknown cluster {cluster!r} (known: {known})")
    union = sorted({image for images in found.values() for image in images})
    if fmt == "json":
        click.echo(json.dumps({"clusters": found, "images": union}, indent=2, sort_keys=True))
    else:
        for image in union:
            click.echo(image)
    return EXIT_OK


@click.command("images")
@click.pass_context
@click.option("--values", "values", type=click.Path(path_type=Path), default=Path("values.yaml"), show_default=True, help="Fleet values file.")
@click.option("--overlays", type=click.Path(path_type=Path), default=Path("overlays"), show_default=True, help="Folder of per-cluster overlays.")
@click.option("--cluster", default=None, help="Only this cluster's images (default: every cluster's, merged).")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True, help="text: one image a line, sorted, unique; json: per cluster.")
def images_cmd(ctx: click.Context, values: Path, overlays: Path, cluster: str | None, fmt: str) -> None:
    """Every image reference the rendered output pulls."""
    from renderer.cli.params import given

    code = execute_images(values, overlays, cluster, fmt, given(ctx, "overlays"))
    if code:
        raise SystemExit(code)


COMMANDS = [images_cmd]
