"""output/base/: the fleet policy as plain manifests, one file per object, plus kustomization.yaml."""

from __future__ import annotations

from renderer import yamlio
from renderer.components.common import Obj
from renderer.model import Model

ROOT = "base"


def object_filename(obj: Obj) -> str:
    """``<kind>-<name>.yaml``, lowercase."""
    return f"{obj['kind']}-{obj['metadata']['name']}".lower() + ".yaml"


def layout(objs: dict[str, list[Obj]]) -> dict[str, Obj]:
    """``<component>/<kind>-<name>.yaml`` -> object, for every object."""
    out: dict[str, Obj] = {}
    seen: dict[tuple[str, str, str, str], str] = {}
    for component, items in objs.items():
        for obj in items:
            path = f"{component}/{object_filename(obj)}"
            if path in out:
                raise AssertionError(f"two objects map to {path}")
            meta = obj.get("metadata") or {}
            ident = (str(obj.get("apiVersion")), str(obj.get("kind")), str(meta.get("namespace") or ""), str(meta.get("name")))
            if ident in seen:  # kustomize refuses a second resource of one id: never write such a base
                raise AssertionError(f"{seen[ident]} and {path} are one object ({ident[1]} {ident[3]})")
            seen[ident] = path
            out[path] = obj
    return out


def kustomization(resources: list[str]) -> Obj:
    return {
        "apiVersion": "kustomize.config.k8s.io/v1beta1",
        "kind": "Kustomization",
        "sortOptions": {"order": "legacy"},
        "resources": resources,
    }


def emit(model: Model) -> dict[str, str]:
    from renderer.render import objects

    return emit_objects(objects(model))


def emit_objects(objs: dict[str, list[Obj]]) -> dict[str, str]:
    files = {f"{ROOT}/{path}": yamlio.dump_file([obj]) for path, obj in layout(objs).items()}
    resources = sorted(p[len(ROOT) + 1 :] for p in files)
    files[f"{ROOT}/kustomization.yaml"] = yamlio.dump_file([kustomization(resources)])
    return files


def verify(files: dict[str, str], objs: dict[str, list[Obj]]) -> None:
    """Black's habit: every base file parses back to exactly the object it was written from
    (the files of :func:`verified`, which the build's self-check need not parse again)."""
    from renderer.render import SelfCheckError

    for path, obj in layout(objs).items():
        back = yamlio.load_all(files[f"{ROOT}/{path}"])
        if back != [obj]:
            raise SelfCheckError(f"{ROOT}/{path} does not parse back to the object it was written from")


def verified(objs: dict[str, list[Obj]]) -> frozenset[str]:
    """The files :func:`verify` parses back (every object's, not the kustomization)."""
    return frozenset(f"{ROOT}/{path}" for path in layout(objs))
