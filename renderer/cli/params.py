"""Checks of command-line values that become paths or YAML text (no command here).

A ``--cluster`` becomes ``overlays/<cluster>/``: anything but a DNS label could lead out of the
policy repo (``../x``, ``/tmp/x``, ``a/b``) or break the YAML it is written into (a newline).
"""

from __future__ import annotations

import click

RESERVED_CLUSTER = "fleet"
"""The fleet's own name in the output (``renderer.checks.cluster_name`` refuses an overlay by it)."""


def cluster_problem(name: str) -> str | None:
    """Why ``name`` cannot be a cluster (overlay folder) name, or None."""
    from renderer.checks import DNS_LABEL

    if not DNS_LABEL.fullmatch(name):
        return f"cluster name {name[:80]!r} is not a DNS label (lowercase letters, digits and '-', at most 63 characters)"
    if name == RESERVED_CLUSTER:
        return f"cluster name {name!r} is reserved for the fleet's own output"
    return None


def cluster_option(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """click callback: a ``--cluster`` that is a DNS label and not ``fleet`` (else a usage error)."""
    if value is None:
        return None
    why = cluster_problem(value)
    if why is not None:
        raise click.BadParameter(why, ctx=ctx, param=param)
    return value


def given(ctx: click.Context, name: str) -> bool:
    """Was option ``name`` given on the command line or by the environment (not its default)?"""
    from click.core import ParameterSource

    return ctx.get_parameter_source(name) not in (ParameterSource.DEFAULT, ParameterSource.DEFAULT_MAP, None)
