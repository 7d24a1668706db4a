"""Overlays: the real `kubectl kustomize output/overlays/<c>` equals the direct render of <c>."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from renderer import yamlio
from renderer.emit import kustomize, patchdiff
from renderer.inputs import ClusterInput, Inputs, read_inputs
from renderer.pipeline import Plan, plan
from renderer.problems import UserError
from renderer.render import objects, render
from renderer.waves import WAVE
from tests.conftest import ROOT, run_tool
from tests.golden import CASES

FLEETS = {"example": ROOT, **{p.name: p for p in sorted(CASES.iterdir()) if (p / "overlays").is_dir()}}

Ident = tuple[str, str, str, str]


def by_ident(objs: list[Any]) -> dict[Ident, Any]:
    out: dict[Ident, Any] = {}
    for o in objs:
        key = kustomize.ident(o)
        assert key not in out, f"duplicate object {key}"
        out[key] = o
    return out


def write(files: dict[str, str], root: Path) -> Path:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    return root


def fleet_inputs(folder: Path) -> Inputs:
    return read_inputs(folder / "values.yaml", folder / "overlays")


def direct_render(p: Plan, cluster: str, kubectl: str, tmp: Path) -> list[Any]:
    """render.objects of the cluster, then its hand-written patches applied by the real kustomize."""
    objs = [o for items in objects(p.clusters[cluster]).values() for o in items]
    ci = p.inputs[cluster]
    if not ci.patches:
        return objs
    folder = tmp / f"direct-{cluster}"
    files = {"all.yaml": yamlio.dump_file(objs)}
    files.update({f"p/{name}": raw.decode() for name, raw in ci.patches})
    files["kustomization.yaml"] = yamlio.dump(
        {"resources": ["all.yaml"], "patches": [{"path": f"p/{name}"} for name, _ in ci.patches]}
    )
    write(files, folder)
    return yamlio.load_all(run_tool([kubectl, "kustomize", str(folder)]))


@pytest.mark.realtools
@pytest.mark.parametrize("fleet", sorted(FLEETS))
def test_overlay_builds_to_direct_render(fleet: str, kubectl: str, tmp_path: Path) -> None:
    inputs = fleet_inputs(FLEETS[fleet])
    p = plan(inputs)
    assert not p.errors, [x.format() for x in p.errors]
    out = write(render(inputs), tmp_path / "out")
    assert p.clusters, "a fleet case needs clusters"
    for cluster in sorted(p.clusters):
        built = by_ident(yamlio.load_all(run_tool([kubectl, "kustomize", str(out / "overlays" / cluster)])))
        expected = by_ident(direct_render(p, cluster, kubectl, tmp_path))
        assert sorted(built) == sorted(expected), f"{fleet}/{cluster}: object sets differ"
        for key, obj in expected.items():
            assert built[key] == obj, f"{fleet}/{cluster}: {key} differs: {patchdiff.diff(obj, built[key])}"


@pytest.mark.parametrize("fleet", sorted(FLEETS))
def test_overlays_hold_no_copy_of_an_unchanged_base_object(fleet: str) -> None:
    inputs = fleet_inputs(FLEETS[fleet])
    p = plan(inputs)
    assert p.base is not None
    base = by_ident([o for items in objects(p.base).values() for o in items])
    files = render(inputs)
    for path, text in files.items():
        if not path.startswith("overlays/") or path.endswith("kustomization.yaml"):
            continue
        for doc in yamlio.load_all(text):
            if isinstance(doc, list):  # JSON 6902 operations: never empty
                assert doc, path
                continue
            if doc.get("$patch") == "delete":
                assert kustomize.ident(doc) in base, path
                continue
            if "/user-patches/" in path:
                continue
            key = kustomize.ident(doc)
            assert key not in base, f"{path} copies base object {key}"


def test_every_object_has_a_sync_wave_and_no_replace_or_force() -> None:
    for fleet, folder in FLEETS.items():
        files = render(fleet_inputs(folder))
        for path, text in files.items():
            if not path.endswith(".yaml"):
                continue
            assert "Replace=true" not in text and "Force=true" not in text, path
            if path.startswith(("base/", "overlays/")) and "/patches/" not in path and "/user-patches/" not in path:
                for doc in yamlio.load_all(text):
                    if doc.get("kind") != "Kustomization":
                        assert WAVE in doc["metadata"].get("annotations", {}), f"{fleet}: {path}"


def test_crds_get_server_side_apply_on_the_resource() -> None:
    from renderer.waves import SYNC_OPTIONS, annotate, wave

    crd = annotate("nfd", {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition", "metadata": {"name": "x"}})
    assert crd["metadata"]["annotations"] == {WAVE: "0", SYNC_OPTIONS: "ServerSideApply=true,Delete=false,Prune=false"}
    components = ("nfd", "driver", "container-toolkit", "operator-validator", "device-plugin", "gpu-feature-discovery", "dcgm-exporter", "mig-manager", "vgpu-manager")
    assert [wave(c, "DaemonSet") for c in components] == [2, 3, 4, 5, 5, 5, 5, 5, 3]
    assert wave("device-plugin", "ClusterRole") == 1
    assert wave("anything", "Namespace") == 0


def test_builder_waves_are_kept_and_input_is_not_changed() -> None:
    from renderer.waves import annotate

    obj = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x", "annotations": {WAVE: "9"}}}
    assert annotate("driver", obj)["metadata"]["annotations"][WAVE] == "9"
    bare = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "y"}}
    annotate("driver", bare)
    assert "annotations" not in bare["metadata"]


@pytest.mark.parametrize("name", ["../x", "A_B", "fleet", "a" * 64, "-a"])
def test_bad_cluster_names_are_rejected(name: str) -> None:
    inputs = Inputs(b"nodePools: []\n", "values.yaml", (ClusterInput(name, b"", f"overlays/{name}/values.yaml"),))
    with pytest.raises(UserError) as exc:
        render(inputs)
    messages = [p.format() for p in exc.value.problems]
    assert any(f"cluster name {name!r} is not a DNS label" in m for m in messages), messages


def test_bad_cluster_folder_fails_build_and_writes_nothing(run_cli: Any, tmp_path: Path) -> None:
    (tmp_path / "values.yaml").write_text("nodePools: []\n")
    (tmp_path / "overlays" / "A_B").mkdir(parents=True)
    (tmp_path / "overlays" / "A_B" / "values.yaml").write_text("{}\n")
    result = run_cli("build", "--values", str(tmp_path / "values.yaml"), "--overlays", str(tmp_path / "overlays"), "--out", str(tmp_path / "out"))
    assert result.exit_code == 1
    assert "cluster name 'A_B' is not a DNS label" in result.output + (result.stderr or "")
    assert not (tmp_path / "out").exists()


def _cluster(patches: tuple[tuple[str, bytes], ...], values: bytes = b"") -> Inputs:
    return Inputs(b"nodePools: []\n", "values.yaml", (ClusterInput("c1", values, "overlays/c1/values.yaml", patches=patches),))


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        ("x.yaml", b"- op: add\n  path: /a\n  value: 1\n", "strategic-merge patch"),
        ("x.yaml", b"kind: [\n", "not valid YAML"),
        ("x.yaml", b"", "empty"),
        ("../x.yaml", b"apiVersion: v1\nkind: Namespace\nmetadata: {name: gpu-operator}\n", "not allowed"),
        ("x.yaml", b"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: nope, namespace: gpu-operator}\n", "does not render"),
        ("x.yaml", b"apiVersion: v1\nkind: ServiceAccount\nmetadata: {name: nvidia-device-plugin}\n", "in namespace gpu-operator; the patch must say the same"),
        ("x.yaml", b"apiVersion: v2\nkind: Namespace\nmetadata: {name: gpu-operator}\n", "as apiVersion v1, cluster-scoped"),
    ],
)
def test_bad_user_patches_are_problems(name: str, text: bytes, message: str) -> None:
    with pytest.raises(UserError) as exc:
        render(_cluster(((name, text),)))
    formatted = [p.format() for p in exc.value.problems]
    assert any(message in m and m.startswith(f"overlays/c1/patches/{name}:") for m in formatted), formatted


def test_component_turned_off_becomes_delete_patches() -> None:
    files = render(_cluster((), b"gfd: {enabled: false}\n"))
    k = yamlio.load(files["overlays/c1/kustomization.yaml"])
    deleted = [e["path"] for e in k["patches"]]
    assert deleted == [
        "patches/gpu-feature-discovery/daemonset-gpu-feature-discovery.yaml",
        "patches/gpu-feature-discovery/role-nvidia-gpu-feature-discovery.yaml",
        "patches/gpu-feature-discovery/rolebinding-nvidia-gpu-feature-discovery.yaml",
        "patches/gpu-feature-discovery/serviceaccount-nvidia-gpu-feature-discovery.yaml",
    ]
    doc = yamlio.load(files["overlays/c1/patches/gpu-feature-discovery/daemonset-gpu-feature-discovery.yaml"])
    assert doc == {"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "gpu-feature-discovery", "namespace": "gpu-operator"}, "$patch": "delete"}


def test_patch_target_escapes_regex_in_names() -> None:
    t = kustomize.target({"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "nvidia-driver-5.15.0", "namespace": "ns"}})
    assert t == {"group": "apps", "version": "v1", "kind": "DaemonSet", "name": r"nvidia-driver-5\.15\.0", "namespace": "ns"}
    assert "group" not in kustomize.target({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}})


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ({"env": [{"name": "A"}, {"name": "B"}]}, {"env": [{"name": "A"}, {"name": "X"}, {"name": "B"}]}),
        ({"env": [{"name": "A"}, {"name": "B"}, {"name": "C"}]}, {"env": [{"name": "C"}]}),
        ({"a/b": 1, "c~d": [1, 2]}, {"a/b": 2, "c~d": [2, 1], "e": {}}),
        ({"x": True}, {"x": 1}),
        ({"x": [1, 2, 3, 4, 5, 6]}, {"x": ["a"]}),
        ({"x": {"y": {"z": 1}}}, {"x": None}),
    ],
)
def test_patchdiff_round_trips(a: Any, b: Any) -> None:
    ops = patchdiff.diff(a, b)
    assert ops
    assert patchdiff.apply(a, ops) == b
    assert patchdiff.diff(a, a) == []


def test_patchdiff_is_small_for_one_inserted_env_var() -> None:
    a = {"env": [{"name": f"V{i}", "value": str(i)} for i in range(10)]}
    b = {"env": [*a["env"][:4], {"name": "NEW", "value": "x"}, *a["env"][4:]]}
    assert patchdiff.diff(a, b) == [{"op": "add", "path": "/env/4", "value": {"name": "NEW", "value": "x"}}]


TRICKY = ["on", "off", "yes", "no", "y", "true", "1e3", "1E3", "0o7", "0b1", "0x10", "010", "1_000", "12:30", "~", "null", "2001-12-14", ".5", "+1", ".inf", "1.e3", "-1.5e-3"]


@pytest.mark.realtools
def test_strings_that_look_like_numbers_survive_kustomize(kubectl: str, tmp_path: Path) -> None:
    """Emitted YAML is read by kustomize (YAML 1.2) exactly as gpu-render (YAML 1.1) meant it."""
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}, "data": {f"k{i}": v for i, v in enumerate(TRICKY)}}
    write({"cm.yaml": yamlio.dump_file([cm]), "kustomization.yaml": yamlio.dump({"resources": ["cm.yaml"]})}, tmp_path)
    built = run_tool([kubectl, "kustomize", str(tmp_path)])
    (out,) = yamlio.load_all(built)
    assert out["data"] == cm["data"]


def test_patchdiff_sees_types_and_ignores_key_order() -> None:
    assert patchdiff.diff({"a": 1, "b": [True]}, {"b": [True], "a": 1}) == []
    assert patchdiff.diff({"a": [1]}, {"a": [True]}) == [{"op": "replace", "path": "/a/0", "value": True}]
    assert patchdiff.diff({"a": 1}, {"a": 1.0}) == [{"op": "replace", "path": "/a", "value": 1.0}]
