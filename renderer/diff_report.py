"""Formatters of a :class:`~renderer.diff.Diff`: text, markdown (split into PR comments), json.

Pure functions from a Diff to text; the CLI prints or writes what they return. Every format
starts with the summary (like a plan), then disruptions, versions, policy, objects, noise.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from renderer.diff import CLASSES, MISSING, Diff, ObjectChange, PolicyChange

COMMENT_LIMIT = 65_536
"""GitHub's limit on one comment body, in characters."""
MARKER = "<!-- gpu-render-diff part {i}/{n} -->"
MARKER_RE = re.compile(r"^<!-- gpu-render-diff part (\d+)/(\d+) -->\n")
SYMBOL = {"added": "+", "removed": "-", "changed": "~", "renamed": ">"}
COLOR = {"added": "green", "removed": "red", "changed": "yellow", "renamed": "cyan"}
OPS = ("added", "changed", "removed", "renamed")


# ----------------------------------------------------------------------------- shared


def counts(changes: list[ObjectChange]) -> dict[str, int]:
    out = dict.fromkeys(OPS, 0)
    for o in changes:
        out[o.op] += 1
    return out


def per_scope_component(diff: Diff) -> dict[tuple[str, str], list[ObjectChange]]:
    out: dict[tuple[str, str], list[ObjectChange]] = {}
    for o in diff.real_objects:
        out.setdefault((o.scope, o.component), []).append(o)
    return out


def grouped_policy(diff: Diff) -> list[tuple[PolicyChange, list[str]]]:
    """Identical policy changes of several scopes, once each with the scopes listed."""
    seen: dict[str, tuple[PolicyChange, list[str]]] = {}
    for p in diff.policy:
        key = json.dumps([p.path, value(p.old), value(p.new), p.classes], sort_keys=True, default=str)
        seen.setdefault(key, (p, []))[1].append(p.scope)
    return list(seen.values())


def value(v: Any) -> Any:
    return None if v is MISSING else v


def short(v: Any, limit: int = 100) -> str:
    if v is MISSING:
        return "(none)"
    text = v if isinstance(v, str) else json.dumps(v, sort_keys=True, default=str)
    text = text.replace("\n", "\\n")
    return text if len(text) <= limit else text[: limit - 3] + "..."


NOT_CLUSTERS = ("fleet", "base", "argocd")
"""Scopes that are not clusters: the fleet policy and the output folders outside overlays/."""


def cluster_count(scopes: tuple[str, ...] | list[str]) -> int:
    return len([s for s in scopes if s not in NOT_CLUSTERS])


def scopes_text(scopes: tuple[str, ...] | list[str], total: int, limit: int = 8) -> str:
    """``scopes`` for a line; ``total``: how many clusters the diff has (the fleet is none)."""
    others = [s for s in scopes if s in NOT_CLUSTERS]
    clusters = [s for s in scopes if s not in NOT_CLUSTERS]
    if len(clusters) == total and total > 1:
        named = [f"all {total} clusters"]
    elif len(clusters) <= limit:
        named = clusters
    else:
        named = [", ".join(clusters[:limit]) + f" and {len(clusters) - limit} more"]
    return ", ".join([*others, *named])


def plan_line(diff: Diff) -> str:
    c = counts(list(diff.real_objects))
    text = f"{c['added']} to add, {c['changed']} to change, {c['removed']} to remove, {c['renamed']} renamed"
    extra = []
    if diff.scopes_added:
        extra.append(f"clusters added: {', '.join(diff.scopes_added)}")
    if diff.scopes_removed:
        extra.append(f"clusters removed: {', '.join(diff.scopes_removed)}")
    if diff.policy:
        extra.append(f"{len(grouped_policy(diff))} policy value(s) changed")
    return text + ("; " + "; ".join(extra) if extra else "")


# ----------------------------------------------------------------------------- text


def text(diff: Diff, *, show_noise: bool = False, color: bool = False) -> str:
    def st(s: str, **kw: Any) -> str:
        if not color:
            return s
        import click

        return click.style(s, **kw)

    lines = [st(f"gpu-render diff {diff.base} -> {diff.head}", bold=True)]
    lines.append(f"Plan: {plan_line(diff)}" if diff.changed else "No changes.")
    groups = per_scope_component(diff)
    lines += _text_summary(diff, groups, st)
    lines += _text_disruptions(diff, st)
    if groups:
        lines += ["", st("Objects", bold=True)]
        for (scope, comp), items in groups.items():
            lines.append(f"  {st(scope, bold=True)} / {comp}")
            for o in items:
                lines.extend("    " + ln for ln in _object_lines(o, show_noise, st))
    real_files = [f for f in diff.files if not f.noise]
    if real_files:
        lines += ["", st("Files", bold=True)]
        lines += [f"  {SYMBOL[f.op]} {f.path}" for f in real_files]
    lines += _noise_lines(diff, show_noise)
    return "\n".join(lines) + "\n"


def _text_summary(diff: Diff, groups: dict[tuple[str, str], list[ObjectChange]], st: Callable[..., str]) -> list[str]:
    lines: list[str] = []
    if groups:
        lines += ["", st("Summary", bold=True)]
        rows: dict[tuple[str, str], list[ObjectChange]] = groups
        if len(groups) > SUMMARY_ROWS:  # one line per component, over all clusters
            rows = {}
            for (_, comp), items in groups.items():
                rows.setdefault((_scope_tally({s for s, c in groups if c == comp}), comp), []).extend(items)
        width = max(len(s) for s, _ in rows)
        cwidth = max(len(c) for _, c in rows)
        for (scope, comp), items in rows.items():
            c = counts(items)
            tally = "  ".join(f"{SYMBOL[op]}{c[op]}" for op in OPS if c[op])
            lines.append(f"  {scope:<{width}}  {comp:<{cwidth}}  {tally}  [{', '.join(classes_of(items))}]")
    if diff.versions:
        lines += ["", st("Versions", bold=True)]
        for v in diff.versions:
            lines.append(f"  {v.label}: {v.old} -> {v.new}  ({scopes_text(v.scopes, cluster_count(diff.scopes))})")
    return lines


def _text_disruptions(diff: Diff, st: Callable[..., str]) -> list[str]:
    total = cluster_count(diff.scopes)
    lines: list[str] = []
    disruptions = diff.disruptions()
    if disruptions:
        lines += ["", st("Disruptions", bold=True)]
    for d in disruptions:
        fg = "red" if d.cls in ("driver-reload", "runtime-restart", "gpu-reset") else "yellow" if d.cls != "none" else None
        lines.append(f"  {st(d.cls, fg=fg, bold=True)}: {d.explanation}")
        lines.append(f"      clusters: {scopes_text(d.scopes, total)}; pools: {', '.join(d.pools).replace('*', 'all')}")
        lines += [f"      - {r}" for r in d.reasons[:10]]
        if len(d.reasons) > 10:
            lines.append(f"      - ... and {len(d.reasons) - 10} more")
    if diff.policy:
        lines += ["", st("Policy changes", bold=True)]
        for p, scopes in grouped_policy(diff):
            lines.append(f"  {p.path}: {short(p.old)} -> {short(p.new)}  [{', '.join(p.classes)}]  ({scopes_text(scopes, total)})")
    return lines


def _scope_tally(scopes: set[str]) -> str:
    """``fleet + 3 clusters``: how many clusters, the fleet (and output folders) named, not counted."""
    others = sorted(s for s in scopes if s in NOT_CLUSTERS)
    n = cluster_count(sorted(scopes))
    parts = [*others, f"{n} cluster{'' if n == 1 else 's'}"] if n or not others else others
    return " + ".join(parts)


def classes_of(items: list[ObjectChange]) -> list[str]:
    return sorted({k for o in items for k in o.classes}, key=list(CLASSES).index)


def _object_lines(o: ObjectChange, show_noise: bool, st: Callable[..., str]) -> list[str]:
    head = f"{SYMBOL[o.op]} {o.ident}"
    if o.op == "renamed":
        head += f" (was {o.old_name})"
    out = [st(head, fg=COLOR[o.op]) + f"  [{', '.join(o.classes)}]"]
    for f in o.fields:
        if f.noise and not show_noise:
            continue
        tag = " (noise)" if f.noise else ""
        out.append(f"    {f.path}: {short(f.old)} -> {short(f.new)}{tag}")
    return out


def _noise_lines(diff: Diff, show_noise: bool) -> list[str]:
    noise = diff.noise
    if not noise:
        return []
    if show_noise:
        return ["", f"Noise ({len(noise)} change(s), shown because of --show-noise)", *("  " + n for n in noise)]
    kinds = sorted({_noise_kind(n) for n in noise})
    return ["", f"Noise: {len(noise)} change(s) hidden ({', '.join(kinds)}); --show-noise lists them"]


def _noise_kind(line: str) -> str:
    if line.endswith("file changed"):
        return line.split(":", 1)[0]
    m = re.search(r'\["([^"]+)"\]', line)
    return m.group(1) if m else line.split(": ")[-2]


# ----------------------------------------------------------------------------- markdown


def md_code(v: Any, limit: int = 120) -> str:
    s = short(v, limit).replace("|", "\\|")
    return f"`` {s} ``" if "`" in s else f"`{s}`"


def markdown(diff: Diff, *, show_noise: bool = False) -> str:
    out = [f"## gpu-render diff: `{diff.base}` → `{diff.head}`", ""]
    out += [f"**Plan:** {plan_line(diff)}" if diff.changed else "No changes.", ""]
    groups = per_scope_component(diff)
    out += _md_head(diff)
    if groups:
        out += _md_summary(diff, groups)
    if diff.policy:
        grouped = grouped_policy(diff)
        out += [f"<details><summary>Policy changes ({len(grouped)})</summary>", ""]
        for p, scopes in grouped:
            out.append(f"- `{p.path}`: {md_code(p.old)} → {md_code(p.new)} · {', '.join(p.classes)} · {scopes_text(scopes, cluster_count(diff.scopes))}")
        out += ["", "</details>", ""]
    if groups:
        out += ["### Objects", ""]
        for (scope, comp), items in groups.items():
            out += _md_objects(scope, comp, items, show_noise)
    out += _md_tail(diff, show_noise)
    return "\n".join(out)


SUMMARY_ROWS = 30
"""Past this many cluster/component rows the per-cluster table is folded in <details>."""


def _md_summary(diff: Diff, groups: dict[tuple[str, str], list[ObjectChange]]) -> list[str]:
    """Per component over all clusters, then per cluster and component."""
    header = "| added | changed | removed | renamed | classes |"
    rule = "| --: | --: | --: | --: | --- |"
    by_comp: dict[str, list[ObjectChange]] = {}
    clusters: dict[str, set[str]] = {}
    for (scope, comp), items in groups.items():
        by_comp.setdefault(comp, []).extend(items)
        clusters.setdefault(comp, set()).add(scope)
    out = ["### Summary", "", f"| component | clusters {header}", f"| --- | --: {rule}"]
    for comp, items in by_comp.items():
        c = counts(items)
        out.append(f"| {comp} | {_scope_tally(clusters[comp])} | {c['added']} | {c['changed']} | {c['removed']} | {c['renamed']} | {', '.join(classes_of(items))} |")
    out.append("")
    folded = len(groups) > SUMMARY_ROWS
    if folded:
        out += [f"<details><summary>Per cluster ({len(groups)} rows)</summary>", ""]
    out += [f"| cluster | component {header}", f"| --- | --- {rule}"]
    for (scope, comp), items in groups.items():
        c = counts(items)
        out.append(f"| {scope} | {comp} | {c['added']} | {c['changed']} | {c['removed']} | {c['renamed']} | {', '.join(classes_of(items))} |")
    out.append("")
    if folded:
        out += ["</details>", ""]
    return out


def _md_head(diff: Diff) -> list[str]:
    total = cluster_count(diff.scopes)
    out: list[str] = []
    disruptions = diff.disruptions()
    if disruptions:
        out += ["### Disruptions", "", "| class | what happens | clusters | pools |", "| --- | --- | --- | --- |"]
        for d in disruptions:
            pools = ", ".join(d.pools).replace("*", "all")
            out.append(f"| **{d.cls}** | {d.explanation} | {scopes_text(d.scopes, total)} | {pools} |")
        out.append("")
    if diff.versions:
        out += ["### Versions", ""]
        out += [f"- {v.label}: {md_code(v.old)} → {md_code(v.new)} ({scopes_text(v.scopes, total)})" for v in diff.versions]
        out.append("")
    return out


def _md_objects(scope: str, comp: str, items: list[ObjectChange], show_noise: bool) -> list[str]:
    c = counts(items)
    tally = ", ".join(f"{c[op]} {op}" for op in OPS if c[op])
    out = [f"<details><summary><b>{scope}</b> / {comp}: {tally}</summary>", ""]
    for o in items:
        head = f"- `{SYMBOL[o.op]}` `{o.ident}`"
        if o.op == "renamed":
            head += f" (was `{o.old_name}`)"
        out.append(f"{head} · {', '.join(o.classes)}")
        for f in o.fields:
            if f.noise and not show_noise:
                continue
            out.append(f"  - `{f.path}`: {md_code(f.old)} → {md_code(f.new)}{' (noise)' if f.noise else ''}")
    return [*out, "", "</details>", ""]


def _md_tail(diff: Diff, show_noise: bool) -> list[str]:
    out: list[str] = []
    real_files = [f for f in diff.files if not f.noise]
    if real_files:
        out += [f"<details><summary>Files ({len(real_files)})</summary>", ""]
        out += [f"- `{SYMBOL[f.op]}` `{f.path}`" for f in real_files]
        out += ["", "</details>", ""]
    noise = diff.noise
    if noise:
        listed = noise if show_noise else tuple(sorted({_noise_kind(n) for n in noise}))
        out += [f"<details><summary>Noise: {len(noise)} change(s) {'shown' if show_noise else 'hidden'}</summary>", ""]
        out += [f"- `{n}`" for n in listed]
        out += ["", "</details>", ""]
    return out


CONT_CLOSE = "\n</details><!-- gpu-render-diff continued -->\n"
CONT_OPEN = "<details><summary>(continued)</summary><!-- gpu-render-diff continued -->\n\n"
"""Added around a cut that falls inside a ``<details>`` block, so each comment renders on
its own; :func:`join_parts` removes them again."""


def split_markdown(body: str, limit: int = COMMENT_LIMIT) -> list[str]:
    """Cut ``body`` into comments shorter than ``limit`` characters, each starting with a
    stable ``<!-- gpu-render-diff part i/n -->`` marker line. Cuts fall before a ``<details>``
    or heading line when possible, else at a line end (closing and reopening a ``<details>``
    block cut in two); :func:`join_parts` gives ``body`` back."""
    budget = limit - len(MARKER.format(i=99999, n=99999)) - 2 - len(CONT_CLOSE) - len(CONT_OPEN)
    blocks = _blocks(body)
    parts: list[str] = []
    current = ""
    for block in blocks:
        for piece in _fit(block, budget):
            if current and len(current) + len(piece) > budget:
                parts.append(current)
                current = ""
            current += piece
    if current or not parts:
        parts.append(current)
    opened = False
    for i, part in enumerate(parts):
        if opened:
            part = CONT_OPEN + part
        opened = _open_details(part)
        parts[i] = part + CONT_CLOSE if opened and i < len(parts) - 1 else part
    n = len(parts)
    return [MARKER.format(i=i, n=n) + "\n" + p for i, p in enumerate(parts, 1)]


def _open_details(text: str) -> bool:
    """Whether ``text`` ends inside a ``<details>`` block (they are never nested here)."""
    depth = 0
    for line in text.splitlines():
        if line.startswith("<details>"):
            depth = 1
        elif line.startswith("</details>"):
            depth = 0
    return depth > 0


def join_parts(parts: list[str]) -> str:
    out = []
    for p in parts:
        p = MARKER_RE.sub("", p, count=1)
        p = p.removeprefix(CONT_OPEN)
        out.append(p.removesuffix(CONT_CLOSE))
    return "".join(out)


def _blocks(body: str) -> list[str]:
    blocks: list[str] = []
    current = ""
    for line in body.splitlines(keepends=True):
        if current and (line.startswith("<details>") or line.startswith("#")):
            blocks.append(current)
            current = ""
        current += line
    if current:
        blocks.append(current)
    return blocks


def _fit(block: str, budget: int) -> list[str]:
    if len(block) <= budget:
        return [block]
    out: list[str] = []
    current = ""
    for line in block.splitlines(keepends=True):
        while len(line) > budget:
            if current:
                out.append(current)
                current = ""
            out.append(line[:budget])
            line = line[budget:]
        if len(current) + len(line) > budget:
            out.append(current)
            current = ""
        current += line
    if current:
        out.append(current)
    return out


# ----------------------------------------------------------------------------- json


def to_json(diff: Diff, *, show_noise: bool = False) -> dict[str, Any]:
    objects = diff.objects if show_noise else diff.real_objects
    c = counts(list(diff.real_objects))
    return {
        "schemaVersion": 1,
        "base": diff.base,
        "head": diff.head,
        "changed": diff.changed,
        "summary": {
            **c,
            "clusters": list(diff.scopes),
            "clustersAdded": list(diff.scopes_added),
            "clustersRemoved": list(diff.scopes_removed),
            "policyChanges": len(diff.policy),
            "classes": list(diff.classes()),
        },
        "disruptions": [
            {"class": d.cls, "explanation": d.explanation, "clusters": list(d.scopes), "pools": list(d.pools), "reasons": list(d.reasons)}
            for d in diff.disruptions()
        ],
        "versions": [{"label": v.label, "old": v.old, "new": v.new, "clusters": list(v.scopes)} for v in diff.versions],
        "policy": [
            {"cluster": p.scope, "path": p.path, "op": p.op, "old": value(p.old), "new": value(p.new), "classes": list(p.classes), "reasons": [c.reason for c in p.causes]}
            for p in diff.policy
        ],
        "objects": [
            {
                "cluster": o.scope,
                "component": o.component,
                "group": o.group,
                "kind": o.kind,
                "namespace": o.namespace,
                "name": o.name,
                "oldName": o.old_name,
                "op": o.op,
                "classes": list(o.classes),
                "reasons": [c.reason for c in o.causes],
                "fields": [
                    {"path": f.path, "op": f.op, "old": value(f.old), "new": value(f.new), "noise": f.noise}
                    for f in o.fields
                    if show_noise or not f.noise
                ],
            }
            for o in objects
        ],
        "files": [{"path": f.path, "op": f.op, "noise": f.noise} for f in diff.files],
        "noise": {"count": len(diff.noise), "items": list(diff.noise)},
    }


def json_text(diff: Diff, *, show_noise: bool = False) -> str:
    return json.dumps(to_json(diff, show_noise=show_noise), indent=2, sort_keys=True, default=str) + "\n"


FORMATS = ("text", "markdown", "json")
