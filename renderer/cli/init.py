"""``gpu-render init [DIR]``: scaffold a policy repo that builds green at once."""

from __future__ import annotations

import shlex
from pathlib import Path

import click


@click.command("init")
@click.argument("directory", type=click.Path(path_type=Path), default=Path("."))
@click.option("--cluster", default="example", show_default=True, help="Name of the example overlay (a DNS label).")
@click.option("--repo-url", default="https://github.com/example/gpu-policy.git", show_default=True, help="Git URL Argo CD pulls the output from.")
@click.option(
    "--install-from",
    "install_from",
    metavar="SPEC",
    default=None,
    help="pip requirement the new repo's CI installs gpu-render with: a VCS URL (git+https://...@TAG), "
    "a wheel path or URL, a local folder, or NAME==VERSION from your package index. "
    "Default: where this gpu-render was installed from (its VCS URL and commit, archive or folder; "
    "gpu-render==VERSION when it came from a package index).",
)
def init_cmd(directory: Path, cluster: str, repo_url: str, install_from: str | None) -> None:
    """Create values.yaml, an example overlay, CI workflow and pre-commit config in DIRECTORY."""
    from renderer.checks import DNS_LABEL
    from renderer.problems import UserError
    from renderer.scaffold import check_install_spec, default_install_spec, is_local, scaffold

    if not DNS_LABEL.match(cluster):
        raise UserError(f"cluster name {cluster!r} is not a DNS label")
    install = default_install_spec() if install_from is None else install_from
    why = check_install_spec(install)
    if why is not None:
        raise UserError(f"--install-from {install_from!r}: {why}")
    files = scaffold(directory.resolve().name or "gpu-policy", cluster, repo_url, install)
    existing = [p for p in files if (directory / p).exists()]
    if existing:
        raise UserError(f"{directory / existing[0]} exists; init never overwrites files", hint="run init in an empty folder")
    for rel, text in files.items():
        target = directory / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
        click.echo(f"  created {target}")
    click.echo(f"CI installs gpu-render with: pip install {shlex.quote(install)} (change it with --install-from)")
    if is_local(install):
        click.echo("warning: that is a path of this machine, which a CI runner does not have: pass --install-from with a VCS URL or a published wheel", err=True)
    click.echo(f"next: cd {directory} && gpu-render build")


COMMANDS = [init_cmd]
