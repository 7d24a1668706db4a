"""``gpu-render lint [FOLDER]``: the security checks on any folder of rendered YAML."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import click

from renderer.cli import EXIT_OK, EXIT_PROBLEMS


def read_documents(folder: Path, patch_allowed: dict[str, dict[str, str]] | None = None) -> tuple[list[tuple[str, Any]], list[str], int]:
    """(file, object) of every YAML document under ``folder``; parse errors; skipped templates.
    ``patch_allowed`` is filled with what each copied hand-written patch's header allows."""
    from renderer import yamlio
    from renderer.lint import USER_PATCHES
    from renderer.userpatches import read_allowed
    from renderer.write import INTERNAL_PREFIX

    docs: list[tuple[str, Any]] = []
    errors: list[str] = []
    skipped = 0
    paths = [folder] if folder.is_file() else sorted(folder.rglob("*"))
    for path in paths:
        rel = path.name if folder.is_file() else path.relative_to(folder).as_posix()
        if not path.is_file() or path.suffix not in (".yaml", ".yml") or any(p.startswith(INTERNAL_PREFIX) for p in rel.split("/")):
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        if "{{" in text:
            skipped += 1  # a Helm template, not a rendered object
            continue
        display = os.path.relpath(path)
        if patch_allowed is not None and USER_PATCHES in display:
            patch_allowed[display] = read_allowed(text) or {}
        try:
            docs += [(display, d) for d in yamlio.load_all(text)]
        except Exception as exc:  # any YAML error: report it, keep linting the rest
            mark = getattr(exc, "problem_mark", None)
            where = f"{display}:{mark.line + 1}:{mark.column + 1}" if mark is not None else display
            errors.append(f"{where}: not valid YAML: {getattr(exc, 'problem', None) or exc}")
    return docs, errors, skipped


@click.command("lint")
@click.argument("folder", type=click.Path(path_type=Path, exists=True), default=Path("output"))
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True, help="Output format.")
@click.option("--show-exempt", is_flag=True, help="Also list findings exempted by a gpu-render.dev/lint-exempt annotation.")
def lint_cmd(folder: Path, fmt: str, show_exempt: bool) -> None:
    """Check rendered objects in FOLDER for privileges, host access, RBAC wildcards, Secrets and
    floating tags; exit 1 on any finding that no annotation justifies."""
    from renderer.lint import CHECKS, lint, unexempted
    from renderer.write import reading

    with reading(folder):  # finish an interrupted build before reading
        allowed: dict[str, dict[str, str]] = {}
        docs, errors, skipped = read_documents(folder, allowed)
    findings = lint(docs, allowed)
    bad = unexempted(findings)
    if fmt == "json":
        body = {
            "checks": CHECKS,
            "findings": [f.to_json() for f in findings],
            "errors": errors,
            "objects": len(docs),
            "unexempted": len(bad),
        }
        click.echo(json.dumps(body, indent=2, sort_keys=True))
    else:
        for f in findings if show_exempt else bad:
            click.echo(f.format(), err=not f.exempt)
        for e in errors:
            click.echo(e, err=True)
        tail = f", {skipped} template(s) skipped" if skipped else ""
        click.echo(f"{len(docs)} object(s), {len(bad)} finding(s), {len(findings) - len(bad)} exempted{tail}", err=bool(bad or errors))
    raise SystemExit(EXIT_PROBLEMS if bad or errors else EXIT_OK)


COMMANDS = [lint_cmd]
