"""Printing problems and changes: text (coloured on a terminal, NO_COLOR honoured) or JSON."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterable

import click

from renderer.problems import Problem, Severity, UserError


def use_color() -> bool:
    return sys.stderr.isatty() and "NO_COLOR" not in os.environ


def print_problems(problems: Iterable[Problem], fmt: str = "text") -> None:
    problems = sorted(problems)
    if fmt == "json":
        errors = sum(1 for p in problems if p.severity is Severity.ERROR)
        report = {"problems": [p.to_json() for p in problems], "errors": errors, "warnings": len(problems) - errors}
        click.echo(json.dumps(report, indent=2, sort_keys=True))
        return
    color = use_color()
    for p in problems:
        text = p.format()
        if color:
            text = click.style(text, fg="yellow" if p.severity is Severity.WARNING else "red")
        click.echo(text, err=True)
    errors = sum(1 for p in problems if p.severity is Severity.ERROR)
    warns = len(problems) - errors
    if errors or warns:
        click.echo(f"{errors} error(s), {warns} warning(s)", err=True)


def print_user_error(exc: UserError, fmt: str = "text") -> None:
    if exc.problems:
        print_problems(exc.problems, fmt)
    if fmt != "json" or not exc.problems:
        msg = f"gpu-render: {exc.message}"
        if exc.hint:
            msg += f"\n  hint: {exc.hint}"
        click.echo(click.style(msg, fg="red") if use_color() else msg, err=True)
