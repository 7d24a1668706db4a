"""``gpu-render init [DIR]``: scaffold a policy repo that builds green at once."""

from __future__ import annotations

from pathlib import Path

import click


@click.command("init")
@click.argument("directory", type=click.Path(path_type=Path), default=Path("."))
@click.option("--cluster", default="example", show_default=True, help="Name of the example overlay (a DNS label).")
@click.option("--repo-url", default="https://github.com/example/gpu-policy.git", show_default=True, help="Git URL Argo CD pulls the output from.")
def init_cmd(directory: Path, cluster: str, repo_url: str) -> None:
    """Create values.yaml, an example overlay, CI workflow and pre-commit config in DIRECTORY."""
    from renderer.checks import DNS_LABEL
    from renderer.problems import UserError
    from renderer.scaffold import scaffold

    if not DNS_LABEL.match(cluster):
        raise UserError(f"cluster name {cluster!r} is not a DNS label")
    files = scaffold(directory.resolve().name or "gpu-policy", cluster, repo_url)
    existing = [p for p in files if (directory / p).exists()]
    if existing:
        raise UserError(f"{directory / existing[0]} exists; init never overwrites files", hint="run init in an empty folder")
    for rel, text in files.items():
        target = directory / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
        click.echo(f"  created {target}")
    click.echo(f"next: cd {directory} && gpu-render build")


COMMANDS = [init_cmd]
