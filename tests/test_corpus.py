"""Real-world GPU Operator values files (tests/corpus/, each naming its source on its first
line): imported, validated and rendered, and every expectation of its ``.expect.yaml`` found
in the output (or the refusal it expects, at its key).

Expectation list: ``expect:`` items name an object (``kind``, ``name``: the name or its
prefix) and what it must show: ``contains`` (strings in its JSON), ``env`` (a container's env
var values) or ``absent: true``. ``pool:`` replaces the example node pool the importer adds;
``refuse:`` names the problem ``validate`` must report instead; ``warn:`` lists warnings
(``code``, ``pointer``) it must report besides rendering.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from renderer import yamlio
from renderer.inputs import Inputs
from renderer.migrate import import_values
from renderer.pipeline import plan
from renderer.render import objects

CORPUS = Path(__file__).resolve().parent / "corpus"
FILES = sorted(p for p in CORPUS.glob("*.yaml") if not p.name.endswith(".expect.yaml"))


def _env(obj: dict[str, Any]) -> dict[str, str]:
    pod = obj.get("spec", {}).get("template", {}).get("spec", {})
    out: dict[str, str] = {}
    for ctr in [*pod.get("initContainers", []), *pod.get("containers", [])]:
        for item in ctr.get("env", []):
            if "value" in item:
                out.setdefault(str(item["name"]), str(item["value"]))
    return out


def test_corpus_is_big_enough() -> None:
    assert len(FILES) >= 20
    for path in FILES:
        first = path.read_text(encoding="utf-8").splitlines()[0]
        assert first.startswith("# source: github.com/") and " @ " in first, path.name
        assert path.with_name(path.stem + ".expect.yaml").is_file(), path.name


@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_corpus_file(path: Path) -> None:
    expect = yamlio.load(path.with_name(path.stem + ".expect.yaml").read_text(encoding="utf-8"))
    imported = import_values(path.read_bytes(), path.name)
    policy = yamlio.load(imported.text)
    assert isinstance(policy, dict)
    if "pool" in expect:
        policy["nodePools"] = [expect["pool"]]
    p = plan(Inputs(yamlio.dump(policy).encode(), "values.yaml"))
    errors = [x for x in p.problems if x.severity.name == "ERROR"]
    if "refuse" in expect:
        want = expect["refuse"]
        assert any(x.pointer == want["pointer"] and want["message"] in x.message for x in errors), [x.format() for x in errors]
        return
    assert not errors, [x.format() for x in errors]
    warned = {(x.code, x.pointer) for x in p.problems if x.severity.name == "WARNING"}
    for want in expect.get("warn") or []:
        assert (want["code"], want["pointer"]) in warned, (want, sorted(warned))
    assert p.base is not None
    rendered = [o for objs in objects(p.base).values() for o in objs]
    for item in expect["expect"]:
        found = [o for o in rendered if o["kind"] == item["kind"] and str(o["metadata"]["name"]).startswith(item["name"])]
        if item.get("absent"):
            assert not found, item
            continue
        assert found, f"no {item['kind']} {item['name']}*"
        text = json.dumps(found, sort_keys=True)
        for needle in item.get("contains", []):
            assert needle in text, (item, needle)
        for name, value in (item.get("env") or {}).items():
            assert any(_env(o).get(name) == str(value) for o in found), (item, name, [_env(o).get(name) for o in found])


BUILT = [p for p in FILES if "refuse" not in (yamlio.load(p.with_name(p.stem + ".expect.yaml").read_text(encoding="utf-8")) or {})]


@pytest.mark.slow
@pytest.mark.parametrize("path", BUILT, ids=[p.stem for p in BUILT])
def test_corpus_file_builds_whole(path: Path) -> None:
    """The whole build of each accepted file: Helm chart, cluster values and the self-check too
    (a precompiled first pool, as Garden Linux's file has, ended in an internal error there)."""
    from renderer.render import render

    expect = yamlio.load(path.with_name(path.stem + ".expect.yaml").read_text(encoding="utf-8"))
    policy = yamlio.load(import_values(path.read_bytes(), path.name).text)
    assert isinstance(policy, dict) and isinstance(expect, dict)
    if "pool" in expect:
        policy["nodePools"] = [expect["pool"]]
    files = render(Inputs(yamlio.dump(policy).encode(), "values.yaml"))
    assert "chart/gpu-stack/templates/driver.yaml" in files or not any(k.startswith("base/driver/") for k in files)
