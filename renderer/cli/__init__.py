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
    """Catches user errors once, and turns anything else into a short traceback + exit 3."""

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


def _register() -> None:
    """Add every ``COMMANDS`` list found in the modules of this package (one module a command).

    Command modules keep their heavy imports inside the command functions, so importing them
    all here stays cheap.
    """
    import importlib
    import pkgutil

    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        if info.name.startswith("_") or info.name == "output":
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        for command in getattr(module, "COMMANDS", ()):
            main.add_command(command)


_register()


def run() -> None:  # pragma: no cover - console entry point alternative
    sys.exit(main())
