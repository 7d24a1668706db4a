"""Command line: parse arguments, call the core, print, pick the exit code.

Exit codes: 0 ok; 1 problems, stale output or (diff) changes when asked; 2 usage error;
3 internal error (a bug in gpu-render: a short traceback is printed).
Commands live one per module in this package; click is used nowhere else.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any, TypeVar

import click

from renderer._version import OPERATOR_RELEASE, __version__

EXIT_OK = 0
EXIT_PROBLEMS = 1
EXIT_USAGE = 2
EXIT_INTERNAL = 3

F = TypeVar("F", bound=Callable[..., Any])


class GpuRenderGroup(click.Group):
    """Catches user errors once, and turns anything else into a short traceback + exit 3.
    Commands are loaded when asked for (:data:`COMMAND_MODULES`)."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(set(super().list_commands(ctx)) | COMMAND_MODULES.keys())

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands and cmd_name in COMMAND_MODULES:
            _load(cmd_name)
        return super().get_command(ctx, cmd_name)

    def invoke(self, ctx: click.Context) -> Any:
        from renderer.problems import UserError

        try:
            return super().invoke(ctx)
        except UserError as exc:
            from renderer.cli.output import print_user_error

            print_user_error(exc)
            ctx.exit(EXIT_PROBLEMS)
        except (click.exceptions.Exit, click.ClickException, click.Abort, SystemExit):
            raise
        except KeyboardInterrupt:
            click.echo("interrupted", err=True)
            ctx.exit(130)
        except Exception as exc:
            import traceback

            tb = traceback.extract_tb(exc.__traceback__)[-3:]
            click.echo("gpu-render: internal error (a bug; please report it):", err=True)
            click.echo("".join(traceback.format_list(tb)).rstrip(), err=True)
            click.echo(f"{type(exc).__name__}: {exc}", err=True)
            ctx.exit(EXIT_INTERNAL)


@click.group(cls=GpuRenderGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "--version", prog_name="gpu-render", message=f"%(prog)s %(version)s (imitates GPU Operator {OPERATOR_RELEASE})")
def main() -> None:
    """Compile a GPU cluster policy into a Helm chart, Kustomize overlays and Argo CD apps."""


COMMAND_MODULES = {
    "build": "build",
    "validate": "build",
    "diff": "diff",
    "explain": "explain",
    "schema": "explain",
    "images": "images",
    "init": "init",
    "lint": "lint",
    "import-operator-values": "migrate",
    "nodes": "nodes",
}
"""Command name -> the module of this package that defines it (in its ``COMMANDS`` list): a
command's module is imported when the command is asked for, so ``gpu-render build`` does not
load the other commands. ``tests/test_build_cli.py`` checks the table against the modules."""


def _load(name: str) -> None:
    import importlib

    module = importlib.import_module(f"{__name__}.{COMMAND_MODULES[name]}")
    for command in getattr(module, "COMMANDS", ()):
        main.add_command(command)


def run() -> None:  # pragma: no cover - console entry point alternative
    sys.exit(main())
