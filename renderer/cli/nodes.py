"""``gpu-render nodes import|check``: node pools from ``kubectl get nodes -o json``."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click

from renderer.cli import EXIT_OK, EXIT_PROBLEMS
from renderer.cli.output import print_problems
from renderer.cli.params import cluster_option, given


@dataclass(frozen=True)
class NodesOptions:
    nodes: Path | None
    values: Path
    overlays: Path
    cluster: str | None
    fmt: str = "text"
    precompiled: bool | None = None
    write: bool = False
    fresh: bool = False
    overlays_given: bool = False


def _nodes_file(opts: NodesOptions) -> Path:
    if opts.nodes is not None:
        return opts.nodes
    if opts.cluster:
        candidate = opts.overlays / opts.cluster / "nodes.json"
        if candidate.is_file():
            return candidate
    raise click.UsageError("give NODES_JSON (kubectl get nodes -o json), or --cluster with an overlays/<cluster>/nodes.json")


def _read_nodes(opts: NodesOptions) -> list[Any] | None:
    from renderer.inputs import MAX_NODES_BYTES, display, read_policy_file
    from renderer.nodes import parse_nodes
    from renderer.problems import UserError

    path = _nodes_file(opts)
    if not path.is_file():
        raise UserError(f"nodes file not found: {display(path)}", hint="kubectl get nodes -o json > nodes.json")
    if opts.nodes is None:  # the overlay's own nodes.json: read as a build reads it
        data = read_policy_file(path, _repo_of(opts), MAX_NODES_BYTES)
    else:
        try:
            data = path.read_bytes()
        except OSError as exc:
            raise UserError(f"cannot read {display(path)}: {exc.strerror or exc}") from None
    nodes, problems = parse_nodes(data, display(path))
    if problems:
        print_problems(problems, opts.fmt)
        return None
    return nodes


def _merged_values(opts: NodesOptions) -> dict[str, Any] | None:
    """Fleet values (+ the cluster overlay), defaulted; not validated (import fixes pools)."""
    from renderer.inputs import display, read_policy_file
    from renderer.loader import load_text
    from renderer.merge import from_source, merge
    from renderer.resolve import with_defaults

    data: dict[str, Any] = {}
    if opts.values.is_file():
        src, problems = load_text(read_policy_file(opts.values, opts.values.absolute().parent), display(opts.values))
        overlay = opts.overlays / (opts.cluster or "") / "values.yaml"
        if src is not None and opts.cluster and overlay.is_file():
            over, more = load_text(read_policy_file(overlay, _repo_of(opts)), display(overlay))
            problems += more
            if over is not None:
                data = merge(from_source(src), over).data
        elif src is not None:
            data = src.data
        if problems:
            print_problems(problems, opts.fmt)
            return None
    return with_defaults(data)


def _existing_pools(values: dict[str, Any]) -> list[Any]:
    """The values' pools that resolve (import keeps those that still select nodes)."""
    from renderer import driverimage

    out = []
    for entry in values.get("nodePools") or []:
        if isinstance(entry, dict) and entry.get("name") and not [i for i in driverimage.pool_issues(values, entry) if not i.warning]:
            out.append(driverimage.resolve_pool(values, entry))
    return out


def _repo_of(opts: NodesOptions) -> Path:
    """The policy repo of the overlays: the folder holding them (as :func:`renderer.inputs.read_inputs` takes it)."""
    return opts.overlays.absolute().parent


def _overlays_ok(opts: NodesOptions) -> None:
    """The overlays folder is one (or absent, when not named), inside the policy repo."""
    import os

    from renderer.inputs import check_overlays

    if opts.cluster or opts.overlays_given or os.path.lexists(opts.overlays):
        check_overlays(opts.values, opts.overlays, given=opts.overlays_given)


def execute_import(opts: NodesOptions) -> int:
    from renderer.nodes import import_pools, pools_yaml, replace_pools

    _overlays_ok(opts)
    nodes = _read_nodes(opts)
    values = _merged_values(opts)
    if nodes is None or values is None:
        return EXIT_PROBLEMS
    precompiled = opts.precompiled if opts.precompiled is not None else bool(values["driver"].get("usePrecompiled"))
    release = str(values["cluster"].get("operatorRelease"))
    existing = [] if opts.fresh else _existing_pools(values)
    result = import_pools(nodes, precompiled=precompiled, release=release, existing=existing)
    for name, why in sorted(result.skipped.items()):
        click.echo(f"warning: GPU node {name} not imported: {why}", err=True)
    for name in result.dropped:
        click.echo(f"note: pool {name} selects no node of the inventory; left out", err=True)
    if not opts.write:
        if opts.fmt == "json":
            click.echo(json.dumps({"nodePools": result.pools, "members": result.members, "skipped": result.skipped, "dropped": result.dropped}, indent=2, sort_keys=True))
        else:
            click.echo(pools_yaml(result), nl=False)
        return EXIT_OK
    if not opts.cluster:
        raise click.UsageError("--write needs --cluster NAME (pools are written into overlays/<cluster>/values.yaml)")
    from renderer.inputs import confined, read_policy_file
    from renderer.problems import UserError

    target = opts.overlays / opts.cluster / "values.yaml"
    confined(target, _repo_of(opts))
    try:
        old = read_policy_file(target, _repo_of(opts)).decode("utf-8") if target.is_file() else ""
    except UnicodeDecodeError:
        raise UserError(f"{target} is not UTF-8 text; nodes import rewrites only a YAML file it can read") from None
    new = replace_pools(old, result)
    if new == old:
        click.echo(f"unchanged {target}")
        return EXIT_OK
    try:
        _write_atomic(target, new)
    except OSError as exc:
        raise UserError(f"cannot write {target}: {exc.strerror or exc}") from None
    click.echo(f"{'updated' if old else 'created'} {target}: {len(result.pools)} node pool(s)")
    return EXIT_OK


def _write_atomic(target: Path, text: str) -> None:
    import tempfile

    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def execute_check(opts: NodesOptions) -> int:
    from renderer.inputs import read_inputs
    from renderer.nodes import check_nodes, report_text
    from renderer.pipeline import plan

    _overlays_ok(opts)
    nodes = _read_nodes(opts)
    if nodes is None:
        return EXIT_PROBLEMS
    p = plan(read_inputs(opts.values, opts.overlays, given=opts.overlays_given))
    if p.errors or p.base is None:
        print_problems(p.problems, opts.fmt)
        return EXIT_PROBLEMS
    if opts.cluster and opts.cluster not in p.clusters:
        known = ", ".join(sorted(p.clusters)) or "none"
        raise click.UsageError(f"unknown cluster {opts.cluster!r} (overlays: {known})")
    model = p.clusters[opts.cluster] if opts.cluster else p.base
    report = check_nodes(nodes, model.pools)
    if opts.fmt == "json":
        click.echo(json.dumps({"cluster": model.cluster, **report.to_json()}, indent=2, sort_keys=True))
    else:
        click.echo(report_text(report), nl=False)
    return EXIT_OK if report.ok else EXIT_PROBLEMS


def _common(f: Any) -> Any:
    f = click.option("--cluster", default=None, callback=cluster_option, help="Overlay (cluster) whose pools to use, a DNS label; default: the fleet values.")(f)
    f = click.option("--overlays", type=click.Path(path_type=Path), default=Path("overlays"), show_default=True, help="Folder of per-cluster overlays.")(f)
    f = click.option("--values", "values", type=click.Path(path_type=Path), default=Path("values.yaml"), show_default=True, help="Fleet values file.")(f)
    f = click.argument("nodes_json", required=False, type=click.Path(path_type=Path))(f)
    return f


@click.group("nodes")
def nodes_group() -> None:
    """Node pools from a node inventory (kubectl get nodes -o json)."""


@nodes_group.command("import")
@click.pass_context
@_common
@click.option("--precompiled/--no-precompiled", default=None, help="Group by kernel too (default: driver.usePrecompiled of the values).")
@click.option("--write", is_flag=True, help="Write the pools into overlays/<cluster>/values.yaml (comments kept).")
@click.option("--fresh", is_flag=True, help="Ignore the pools already in the values (default: keep those that still select nodes).")
@click.option("--format", "fmt", type=click.Choice(["yaml", "json"]), default="yaml", show_default=True, help="Output format.")
def import_cmd(ctx: click.Context, nodes_json: Path | None, values: Path, overlays: Path, cluster: str | None, precompiled: bool | None, write: bool, fresh: bool, fmt: str) -> None:
    """Group GPU nodes by OS (and kernel for precompiled drivers) into nodePools.

    Pools already in the values that still select nodes are kept as written; nodes no pool
    selects get new pools (seeded with the settings of a pool of the same OS).
    """
    code = execute_import(NodesOptions(nodes_json, values, overlays, cluster, "text" if fmt == "yaml" else fmt, precompiled, write, fresh, given(ctx, "overlays")))
    if code:
        raise SystemExit(code)


@nodes_group.command("check")
@click.pass_context
@_common
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True, help="Output format.")
def check_cmd(ctx: click.Context, nodes_json: Path | None, values: Path, overlays: Path, cluster: str | None, fmt: str) -> None:
    """Every GPU node matched by exactly one pool, and the driver image it would get; exit 1 otherwise."""
    code = execute_check(NodesOptions(nodes_json, values, overlays, cluster, fmt, overlays_given=given(ctx, "overlays")))
    if code:
        raise SystemExit(code)


COMMANDS = [nodes_group]
