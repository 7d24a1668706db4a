"""``gpu-render init [DIR]``: scaffold a policy repo that builds green at once."""

from __future__ import annotations

import os
import shlex
from pathlib import Path

import click


@click.command("init")
@click.argument("directory", type=click.Path(path_type=Path), default=Path("."))
@click.option("--cluster", default="example", show_default=True, help="Name of the example overlay (a DNS label, not 'fleet').")
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
    from renderer.cli.params import cluster_problem
    from renderer.problems import UserError
    from renderer.scaffold import (
        check_install_spec,
        check_repo_url,
        default_install_spec,
        is_local,
        scaffold,
        unsafe_text,
    )

    if os.path.lexists(directory) and not directory.is_dir():
        what = "a symlink to nothing" if directory.is_symlink() else "not a folder"
        raise click.BadParameter(f"{str(directory)!r} is {what}; init creates the policy repo in a folder", param_hint="'DIRECTORY'")
    name = directory.resolve().name or "gpu-policy"
    why = unsafe_text(str(directory)) or unsafe_text(name)
    if why is not None:
        raise click.BadParameter(f"{str(directory)!r} ({name!r}) cannot name the policy repo: {why}", param_hint="'DIRECTORY'")
    why = cluster_problem(cluster)
    if why is not None:
        raise UserError(f"--cluster: {why}")
    why = check_repo_url(repo_url)
    if why is not None:
        raise UserError(f"--repo-url {repo_url!r}: {why}")
    install = default_install_spec() if install_from is None else install_from
    why = check_install_spec(install)
    if why is not None:
        raise UserError(f"--install-from {install_from!r}: {why}")
    files = scaffold(name, cluster, repo_url, install)
    for rel in files:
        _refuse_existing(directory, rel)
    for rel, text in files.items():
        target = directory / rel
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            with open(target, "x", encoding="utf-8") as handle:  # never over a file (or a symlink) made meanwhile
                handle.write(text)
        except OSError as exc:
            raise UserError(f"cannot write {target}: {exc.strerror or exc}") from None
        click.echo(f"  created {target}")
    click.echo(f"CI installs gpu-render with: pip install {shlex.quote(install)} (change it with --install-from)")
    if is_local(install):
        click.echo("warning: that is a path of this machine, which a CI runner does not have: pass --install-from with a VCS URL or a published wheel", err=True)
    click.echo(f"next: cd {shlex.quote(str(directory))} && gpu-render build")


def _refuse_existing(directory: Path, rel: str) -> None:
    """A UserError when ``directory/rel`` exists (a dangling symlink too), or when a folder on
    its way is a symlink or not a folder: init writes only new files, inside DIRECTORY."""
    from renderer.problems import UserError

    parts = rel.split("/")
    for i in range(1, len(parts)):
        folder = directory.joinpath(*parts[:i])
        if folder.is_symlink():
            raise UserError(f"{folder} is a symlink; init writes only inside {directory}", hint="run init in an empty folder")
        if os.path.lexists(folder) and not folder.is_dir():
            raise UserError(f"{folder} exists and is not a folder; init never overwrites files", hint="run init in an empty folder")
    if os.path.lexists(directory / rel):
        raise UserError(f"{directory / rel} exists; init never overwrites files", hint="run init in an empty folder")


COMMANDS = [init_cmd]
