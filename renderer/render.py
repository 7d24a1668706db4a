"""render(inputs) -> {relative path: text}: the pure core of gpu-render.

Components build objects from a resolved model; emitters turn objects into files; a
self-check parses every emitted YAML file back and compares it with what was meant.
"""

from __future__ import annotations

from collections.abc import Callable, Container

from renderer.components import COMPONENTS
from renderer.components.common import Obj
from renderer.inputs import Inputs
from renderer.memo import Memo
from renderer.model import Model
from renderer.pipeline import Plan, plan
from renderer.problems import GpuRenderError, UserError

Objects = dict[str, list[Obj]]


def objects(model: Model, memo: Memo | None = None) -> Objects:
    """Every enabled component's objects, in registry order, hardened, each with its sync wave.

    With a ``memo`` (one per build), components whose configuration an earlier model shared
    are not rendered again: their lists are shared, so rendered objects must never be changed
    afterwards (see :mod:`renderer.memo`)."""
    if memo is not None:
        return memo.objects(model)
    out: Objects = {}
    for comp in COMPONENTS:
        if comp.enabled(model):
            built = comp.build(model)
            if built:
                out[comp.name] = built
    return finish(model, out)


def finish(model: Model, objs: Objects, bound: Container[tuple[str, str]] | None = None) -> Objects:
    """What every render does to built objects (the chart emitter applies it per component;
    ``bound``: the ServiceAccounts bound anywhere, when ``objs`` is not the whole render)."""
    from renderer import security, waves

    return waves.annotate_all(security.harden(model, objs, _KEYS, bound))


_KEYS: dict[str, str] = {comp.name: comp.key for comp in COMPONENTS}
"""Each component's values key (``security.harden`` reads it; never changed): made once, not
per call (the chart analysis finishes each of its builds)."""


def render(inputs: Inputs) -> dict[str, str]:
    """All output files for the inputs; raises UserError carrying every problem found."""
    p = plan(inputs)
    if p.errors or p.base is None:
        raise UserError("the policy has problems; nothing was rendered", problems=p.problems)
    return render_plan(p)


def render_plan(p: Plan, progress: Callable[[str], None] | None = None, jobs: int = 1) -> dict[str, str]:
    """All output files of the plan ``p`` (``jobs``: processes the chart analysis may use)."""
    from renderer.emit import emit_units

    assert p.base is not None
    emitted = emit_units(p, progress, jobs=jobs)
    files = emitted.files
    self_check(files, emitted.verified)
    return dict(sorted(files.items()))


class SelfCheckError(GpuRenderError):
    """Emitted output does not parse back: a bug in gpu-render, never the user's fault."""


def self_check(files: dict[str, str], verified: Container[str] = ()) -> None:
    """Black's habit: every emitted YAML file must parse back (and JSON files as JSON).

    Each distinct text is parsed once (a fleet's overlays repeat the same patch files), with
    libyaml's C parser; ``verified``: paths already parsed back to the very objects they were
    written from (the base files, ``Emitted.verified``), a stronger check, not parsed again.
    """
    import json

    from renderer import yamlio

    parsed: dict[str, set[str]] = {"yaml": set(), "json": set()}
    for path, text in files.items():
        if path in verified:
            continue
        if path.endswith((".yaml", ".yml")) and "/templates/" not in path:
            kind = "yaml"
        elif path.endswith(".json"):
            kind = "json"
        else:
            continue
        if text in parsed[kind]:
            continue
        try:
            if kind == "yaml":
                yamlio.load_all(text)
            else:
                json.loads(text)
        except Exception as exc:  # pragma: no cover - a bug if it ever fires
            raise SelfCheckError(f"emitted file {path} does not parse back: {exc}") from exc
        parsed[kind].add(text)
