"""Build-time keys of the chart: a value other than the one the templates were made with is
refused by NOTES.txt (renderer/emit/buildtime.py), with the real helm; the digest it compares is
the one Helm's ``toJson | sha256sum`` gives."""

from __future__ import annotations

import hashlib
import json
import random
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from renderer import yamlio
from renderer.emit.buildtime import PREFIX, digests, go_json
from renderer.inputs import read_inputs
from renderer.render import render
from tests.conftest import ROOT, run_tool
from tests.golden import CASES, case_names

CHART = "gpu-stack"


def _sample(rng: random.Random, depth: int = 0) -> Any:
    """A value a values file may hold, with the characters and numbers Go and Python print apart."""
    kind = rng.randrange(7 if depth < 3 else 4)
    if kind == 0:
        return rng.choice([True, False, None])
    if kind == 1:
        return rng.choice([0, 1, -3, 25, 4096, 2**40, 10**15])
    if kind == 2:
        return rng.choice([0.5, 1.25, -2.5, 0.1, 1e-7, 3.5e-6, 2.5e21, 1e22, 123456.789, 0.001])
    if kind == 3:
        parts = ["a", "<b>", "&", "é", "日本", "\u2028", "\t", "\n", '"', "\\", "\x01", "\x7f", "25%", "'", "{{ x }}"]
        return "".join(rng.choice(parts) for _ in range(rng.randrange(5)))
    if kind in (4, 5):
        return {rng.choice(["z", "a", "B", "é", "a1", "<k>", "1"]) + str(i): _sample(rng, depth + 1) for i in range(rng.randrange(4))}
    return [_sample(rng, depth + 1) for _ in range(rng.randrange(4))]


def test_go_json_prints_what_helms_to_json_prints(helm: str, write_tree: Callable[[dict[str, str]], Path]) -> None:
    """300 values (fixed seed) and the edge cases by hand, printed into a chart's values.yaml as
    gpu-render prints values: helm's ``toJson | sha256sum`` of its parse equals the digest of
    :func:`go_json` of gpu-render's value, for every one."""
    rng = random.Random(20261202)
    cases: dict[str, Any] = {f"c{i:03d}": _sample(rng) for i in range(300)}
    by_hand = [None, True, "", "containerd", "25%", [], {}, 1, 1.0, 100.0, 1e21, 1e-6, 1e-7, -0.5, ["02", "0200"], {"b": 1, "a": [1, "x<y"]}]
    cases.update({f"h{i:03d}": value for i, value in enumerate(by_hand)})
    text = yamlio.dump({"cases": cases})
    assert yamlio.load(text) == {"cases": cases}  # the values helm reads are the ones digested
    template = (
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: out\ndata:\n"
        "{{- range $k, $v := .Values.cases }}\n  {{ $k }}: {{ toJson $v | sha256sum }}\n{{- end }}\n"
    )
    chart = write_tree({"Chart.yaml": "apiVersion: v2\nname: probe\nversion: 0.1.0\n", "values.yaml": text, "templates/out.yaml": template})
    got = yamlio.load(run_tool([helm, "template", "probe", str(chart)]))["data"]
    want = {k: hashlib.sha256(go_json(v).encode("utf-8")).hexdigest() for k, v in cases.items()}
    wrong = {k: go_json(cases[k]) for k in want if got.get(k) != want[k]}
    assert not wrong, wrong


def test_go_json_by_hand() -> None:
    assert go_json({"b": [1.0, 2.5, None], "a": "<&>"}) == '{"a":"\\u003c\\u0026\\u003e","b":[1,2.5,null]}'
    assert [go_json(f) for f in (1e21, 1e-7, 1.5e-7, 1e-6, 1e20, -0.0)] == ["1e+21", "1e-7", "1.5e-7", "0.000001", "100000000000000000000", "-0"]
    with pytest.raises(ValueError):
        go_json(float("nan"))
    with pytest.raises(ValueError):  # helm reads 2**53 + 1 back as null: such a key is not checked
        go_json(2**53 + 1)
    with pytest.raises(TypeError):
        go_json({1: "x"})


def test_digests_leave_out_what_is_checked_elsewhere_or_not_there() -> None:
    values = {
        "cluster": {"containerRuntime": "containerd"},
        "nfd": {"worker": {"pciDeviceClassWhitelist": ["02"]}},
        "driver": {"pools": {"a": {"repoConfig": {"keys": []}, "upgradePolicy": {"maxUnavailable": "25%"}}}},
        "odd": {"a.b": 1, "nan": float("nan")},
    }
    fixed = {
        ("cluster", "containerRuntime"),
        ("nfd", "worker", "pciDeviceClassWhitelist"),  # NOTES.txt's NFD list check
        ("driver", "pools", "a", "repoConfig", "keys"),  # NOTES.txt's mount check
        ("driver", "pools", "a", "upgradePolicy", "maxUnavailable"),
        ("driver", "pools", "gone", "usePrecompiled"),  # a pool the values do not have
        ("odd", "a.b"),  # a dot in a name: not a path NOTES.txt can walk
        ("odd", "nan"),  # no JSON value
        ("cluster", "unset"),  # absent: digested as null
    }
    got = digests(values, fixed)
    sha = lambda text: hashlib.sha256(text.encode()).hexdigest()  # noqa: E731
    assert got == {
        PREFIX + "cluster.containerRuntime": sha('"containerd"'),
        PREFIX + "cluster.unset": sha("null"),
        PREFIX + "driver.pools.a.upgradePolicy.maxUnavailable": sha('"25%"'),
    }


OTHER: dict[str, Any] = {
    "containerRuntime": lambda v: "crio" if v != "crio" else "containerd",
    "maxParallelUpgrades": lambda v: int(v) + 1,
    "maxUnavailable": lambda v: "50%" if v != "50%" else "30%",
    "usePrecompiled": lambda v: not v,
    "customSources": lambda v: [] if v else [{"name": "probe", "labels": {"probe": "true"}, "matchFeatures": [{"feature": "kernel.version", "matchExpressions": {"major": {"op": "Exists"}}}]}],
    "podLabelAllowlistRegex": lambda v: [*(v or []), "^team$"],
}
"""For each build-time key's last name, a value other than ``v`` that the chart's schema takes
(so that the refusal seen is NOTES.txt's, not the schema's). A key not here fails the test."""


def _other_of_its_type(schema: dict[str, Any], key: str, value: Any) -> Any:
    """A value other than ``value`` that the chart's schema takes at ``key``: another of its enum,
    the other boolean, the next number, a longer text or list, a map with one more entry."""
    node: Any = schema
    for part in key.split("."):
        while isinstance(node, dict) and "$ref" in node:
            node = schema["$defs"][node["$ref"].rsplit("/", 1)[-1]]
        node = ((node or {}).get("properties") or {}).get(part) or (node or {}).get("additionalProperties") or {}
    while isinstance(node, dict) and "$ref" in node:
        node = schema["$defs"][node["$ref"].rsplit("/", 1)[-1]]
    if isinstance(node, dict) and node.get("enum"):
        return next(v for v in node["enum"] if v != value)
    if isinstance(value, bool):
        return not value
    if isinstance(value, (int, float)):
        return value + 1
    if isinstance(value, str):
        return value + "1" if value else "probe"
    if isinstance(value, list):
        return [*value, {"name": "probe"} if key.endswith("imagePullSecrets") else {"name": "PROBE", "value": "1"} if key.endswith("env") else "probe"]
    return {"probe": "1"}


def _charts() -> list[tuple[str, Path | None]]:
    return [("example", None), *((name, CASES / name / "expected" / "chart" / CHART) for name in case_names())]


@pytest.mark.parametrize(("name", "chart"), _charts(), ids=[n for n, _ in _charts()])
def test_a_build_time_key_set_otherwise_is_refused(helm: str, write_tree: Callable[[dict[str, str]], Path], name: str, chart: Path | None) -> None:
    """Each build-time key set to another value (one helm run per key; each key name once per
    chart) is refused by NOTES.txt, naming the key and the value, where it used to render as if
    unchanged; the values files of the clusters render (their digests are their own)."""
    if chart is None:
        files = render(read_inputs(ROOT / "values.yaml", ROOT / "overlays"))
        chart = write_tree({path: text for path, text in files.items() if path.startswith(f"chart/{CHART}/")}) / "chart" / CHART
    values = yamlio.load((chart / "values.yaml").read_text())
    entries = sorted(k[len(PREFIX) :] for k in (values.get("generated") or {}) if k.startswith(PREFIX))
    seen: set[str] = set()
    for key in entries:
        last = key.rsplit(".", 1)[-1]
        if last in seen:
            continue
        seen.add(last)
        current: Any = values
        for part in key.split("."):
            current = current.get(part) if isinstance(current, dict) else None
        if key.startswith("driver.") and not key.startswith("driver.pools."):  # a key the pools' copies hide
            other = _other_of_its_type(json.loads((chart / "values.schema.json").read_text()), key, current)
        else:
            assert last in OTHER, f"{name}: no other value to try for the build-time key {key}"
            other = OTHER[last](current)
        proc = subprocess.run([helm, "template", CHART, str(chart), "--set-json", f"{key}={json.dumps(other)}"], capture_output=True, text=True, timeout=120)
        err = " ".join(proc.stderr.split())
        assert proc.returncode != 0, f"{name}: --set-json {key}={json.dumps(other)} rendered"
        assert "templates/NOTES.txt" in err and "rebuild the chart with gpu-render build" in err, err
        # (a refusal of NOTES.txt that says more may come first: a dra pool's selector)
        assert f"{key} is {go_json(other)}, but it is build-time" in err or "is not the one its term" in err, err
    for values_file in sorted(chart.glob("values-*.yaml")):
        run_tool([helm, "template", CHART, str(chart), "-f", str(values_file)])
