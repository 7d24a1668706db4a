"""``gpu-render explain KEY`` and ``gpu-render schema``."""

from __future__ import annotations

import json

import click


@click.command("explain")
@click.argument("key")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
def explain_cmd(key: str, fmt: str) -> None:
    """Describe one policy key (e.g. driver.upgradePolicy.drain) and the objects it affects."""
    from renderer.explain import explain, format_text

    result = explain(key)
    click.echo(json.dumps(result.to_json(), indent=2, sort_keys=True) if fmt == "json" else format_text(result))


@click.command("schema")
@click.option("--format", "fmt", type=click.Choice(["json", "markdown"]), default="json", show_default=True, help="json: the JSON Schema; markdown: the reference page (docs/reference.md).")
def schema_cmd(fmt: str) -> None:
    """Print the JSON Schema of the policy (values.yaml and overlays)."""
    if fmt == "markdown":
        from renderer.refdoc import reference_markdown

        click.echo(reference_markdown(), nl=False)
        return
    from renderer.schema import schema_text

    click.echo(schema_text(), nl=False)


COMMANDS = [explain_cmd, schema_cmd]
