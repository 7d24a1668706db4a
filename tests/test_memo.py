"""The per-build component memo: memoised renders equal fresh ones, shared objects stay unchanged."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from renderer import memo as memo_mod
from renderer import render
from renderer.components import COMPONENTS, Component
from renderer.components.common import Obj
from renderer.inputs import read_inputs
from renderer.memo import Memo
from renderer.model import Model
from renderer.pipeline import Plan, plan
from tests.conftest import ROOT
from tests.golden import CASES, case_names

FOLDERS = [ROOT, *(CASES / name for name in case_names())]

# Overrides known to be valid together; cluster i of the varied fleet takes those whose bit is set in i.
_POOLS = [
    ("ubuntu2204", "ubuntu", "22.04", "5.15.0-1040-nvidia"),
    ("rhel94", "rhel", "9.4", "5.14.0-427.37.1.el9_4.x86_64"),
    ("ubuntu2404", "ubuntu", "24.04", "6.8.0-1015-nvidia"),
    ("rocky95", "rocky", "9.5", "5.14.0-503.14.1.el9_5.x86_64"),
]
_OVERRIDES = [
    "mig:\n  strategy: mixed\n",
    "dcgmExporter:\n  enabled: false\n",
    "cdi:\n  enabled: false\n",
    "driver:\n  version: \"580.95.05\"\n  rdma:\n    enabled: true\n",
    "dcgm:\n  enabled: true\n",
    "daemonsets:\n  tolerations:\n    - {key: gpu, operator: Exists, effect: NoSchedule}\n",
    "devicePlugin:\n  config:\n    create: true\n    name: plugin-config\n    default: any\n"
    "    data:\n      any: |-\n        version: v1\n        sharing:\n          timeSlicing:\n"
    "            resources:\n              - name: nvidia.com/gpu\n                replicas: 4\n",
]


def _pools_yaml(i: int) -> str:
    out = ["nodePools:"]
    for k in range(1 + i % 3):
        name, os_id, version, kernel = _POOLS[(i + k) % len(_POOLS)]
        out += [f"  - name: {name}", f"    os: {{id: {os_id}, version: \"{version}\"}}", f"    kernel: {kernel}"]
        if i % 5 == 1 and k == 0:
            out += ["    gpuProduct: NVIDIA-H100-80GB-HBM3"]
    return "\n".join(out) + "\n"


def varied_fleet(folder: Path, clusters: int) -> Path:
    """A fleet whose clusters vary pools (count, OS, GPU) and combinations of overrides."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "values.yaml").write_text(_pools_yaml(0) + "gitops:\n  repoURL: https://git.example.com/gpu/fleet.git\n")
    for i in range(clusters):
        cdir = folder / "overlays" / f"c{i:03d}"
        cdir.mkdir(parents=True)
        text = f"# cluster {i}\n" + (_pools_yaml(i) if i % 4 else "")
        text += "".join(o for bit, o in enumerate(_OVERRIDES) if (i * 37 >> bit) % 2)
        if i % 6 == 5:
            text += "cluster:\n  namespace: gpu-system\n"
        (cdir / "values.yaml").write_text(text)
    return folder


def bench_fleet(folder: Path, clusters: int) -> Path:
    """The fleet ``scripts/bench`` measures (same generator), smaller."""
    import runpy

    bench = runpy.run_path(str(ROOT / "scripts" / "bench"), run_name="bench")
    bench["make_fleet"](folder, clusters)
    return folder


def _plan(folder: Path) -> Plan:
    p = plan(read_inputs(folder / "values.yaml", folder / "overlays"))
    assert p.base is not None, [str(x) for x in p.errors]
    return p


def _models(p: Plan) -> list[Model]:
    assert p.base is not None
    return [p.base, *p.clusters.values()]


def _same(memoised: Any, fresh: Any) -> None:
    # repr keeps key order: the YAML written from them would be byte-identical
    assert repr(memoised) == repr(fresh)


@pytest.mark.parametrize("folder", FOLDERS, ids=lambda f: f.name)
def test_memoised_objects_equal_fresh(folder: Path) -> None:
    models = _models(_plan(folder))
    memo = Memo()
    # twice over: the second pass is answered from the memo alone
    for model in models + models:
        _same(render.objects(model, memo), render.objects(model))
    assert not memo.untracked
    assert memo.misses <= memo.hits


def test_memoised_fleet_equals_fresh(tmp_path: Path) -> None:
    models = _models(_plan(varied_fleet(tmp_path / "fleet", 48)))
    memo = Memo()
    for model in models:
        _same(render.objects(model, memo), render.objects(model))
    assert not memo.untracked
    assert memo.hits > memo.misses


def test_bench_fleet_renders_each_configuration_once(tmp_path: Path) -> None:
    models = _models(_plan(bench_fleet(tmp_path / "fleet", 240)))
    memo = Memo()
    shared = [render.objects(m, memo) for m in models]
    assert not memo.untracked
    # build + finish per component: the whole fleet has a few dozen distinct configurations
    assert memo.misses <= 80, memo.misses
    assert memo.hits + memo.misses == sum(len(COMPONENTS) + len(objs) for objs in shared)
    # clusters that agree share the very same lists
    lists = {id(items) for objs in shared for items in objs.values()}
    assert len(lists) <= memo.misses


def test_a_changed_value_misses_only_where_it_is_read() -> None:
    p = _plan(ROOT)
    assert p.base is not None
    memo = Memo()
    first = render.objects(p.base, memo)
    values = copy.deepcopy(p.base.values)
    values["dcgmExporter"]["serviceMonitor"]["interval"] = "45s"
    changed = Model(values=values, cluster=p.base.cluster, pools=p.base.pools)
    misses = memo.misses
    second = render.objects(changed, memo)
    _same(second, render.objects(changed))
    assert memo.misses == misses + 2  # dcgm-exporter's build, then its finish
    assert second["dcgm-exporter"] is not first["dcgm-exporter"]
    assert all(second[name] is first[name] for name in first if name != "dcgm-exporter")


def test_a_pool_change_misses_where_pools_are_read() -> None:
    p = _plan(CASES / "default-stack")
    assert p.base is not None
    memo = Memo()
    first = render.objects(p.base, memo)
    pools = (p.base.pools[0], p.base.pools[1].__class__(**{**p.base.pools[1].__dict__, "kernel": "5.14.0-1.el9_4.x86_64"}))
    changed = Model(values=p.base.values, cluster=p.base.cluster, pools=pools)
    second = render.objects(changed, memo)
    _same(second, render.objects(changed))
    assert second["namespace"] is first["namespace"]
    assert second["nfd"] is first["nfd"]


def test_emitters_never_change_rendered_objects(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Objects are shared between clusters: every emitter must leave them as rendered."""
    from renderer.emit import emit_all

    p = _plan(varied_fleet(tmp_path / "fleet", 12))
    seen: list[tuple[dict[str, list[Obj]], str]] = []
    fresh_objects = render.objects

    def recording(model: Model, memo: Memo | None = None) -> dict[str, list[Obj]]:
        objs = fresh_objects(model, memo)
        seen.append((objs, json.dumps(objs)))
        return objs

    monkeypatch.setattr(render, "objects", recording)
    emit_all(p)
    assert len(seen) >= 1 + len(p.clusters)
    for objs, snapshot in seen:
        assert json.dumps(objs) == snapshot


def _extra(name: str, build: Any) -> tuple[Component, ...]:
    return (*COMPONENTS, Component(name, "", build))


@pytest.mark.parametrize(
    "build",
    [
        # reads the model past the views (dict.get is not the view's get): sees an empty dict
        lambda m: [{"kind": "ConfigMap", "data": {"v": str(dict.get(m.values["cluster"], "namespace"))}}],
        # writes into the model
        lambda m: [{"kind": "ConfigMap", "data": {"v": m.values["cluster"].setdefault("x", "y")}}],
        # json's C encoder skips the view's methods (and sees an empty dict)
        lambda m: [{"kind": "ConfigMap", "data": {"v": json.dumps(m.values["cluster"])}}],
        # tells views from dicts by exact type
        lambda m: [{"kind": "ConfigMap", "data": {"v": str(type(m.values["cluster"]) is dict)}}],
    ],
    ids=["bypass", "write", "json", "exact-type"],
)
def test_reads_the_views_cannot_see_are_never_memoised(build: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(memo_mod, "COMPONENTS", _extra("odd", build))
    monkeypatch.setattr(render, "COMPONENTS", _extra("odd", build))
    memo = Memo()
    for model in _models(_plan(CASES / "fleet-os-pools")):
        _same(memo.objects(copy.deepcopy(model)), render.objects(copy.deepcopy(model)))
    assert memo.untracked == {"odd"}


def test_what_reads_a_whole_subtree() -> None:
    """Iterating, copying, measuring or comparing a dict reads all of it; one key reads only it."""
    data = {"a": {"b": 1, "c": [1, 2]}, "d": "x"}
    cases: list[tuple[Any, set[tuple[Any, ...]]]] = [
        (lambda v: v["a"]["b"], set()),
        (lambda v: v.get("a", {}).get("zz"), set()),
        (lambda v: "d" in v, set()),
        (lambda v: bool(v["a"]), set()),
        (lambda v: dict(v["a"]), {("v", "a")}),
        (lambda v: {**v["a"]}, {("v", "a")}),
        (lambda v: copy.deepcopy(v["a"]), {("v", "a")}),
        (lambda v: len(v["a"]), {("v", "a")}),
        (lambda v: v["a"] == {"b": 1, "c": [1, 2]}, {("v", "a")}),
        (lambda v: list(v["a"]["c"]), {("v", "a", "c")}),
        (lambda v: v["a"]["c"][0], {("v", "a", "c")}),
        (lambda v: [0, *v["a"]["c"]], {("v", "a", "c")}),
        (lambda v: [0] + v["a"]["c"], {("v", "a", "c")}),
        (lambda v: ",".join(v["d"]), set()),
    ]
    for read, wholes in cases:
        log = memo_mod._Log()
        read(memo_mod._DictView(data, ("v",), log))
        assert {path for path, whole, _ in log.reads if whole} == wholes, read
