"""Every image reference the rendered output pulls, per cluster (for registry mirroring).

Pure: reads the rendered objects, not the values, so an image that no object uses is never
listed and one that some component hard-codes is never missed. Walks the containers,
initContainers and ephemeralContainers of every workload (DaemonSet, Deployment, Job, CronJob,
...) and image-valued env vars such as ``VALIDATOR_IMAGE`` (images a pod starts other pods with).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from renderer.model import Model

CONTAINER_LISTS = ("initContainers", "containers", "ephemeralContainers")


def _pod_specs(obj: dict[str, Any]) -> Iterator[dict[str, Any]]:
    kind = obj.get("kind")
    spec = obj.get("spec") or {}
    if kind == "Pod":
        yield spec
    elif kind == "CronJob":
        yield from _pod_specs({"kind": "Job", "spec": (spec.get("jobTemplate") or {}).get("spec") or {}})
    elif isinstance(spec.get("template"), dict):
        yield (spec["template"].get("spec") or {})


def _env_images(container: dict[str, Any]) -> Iterator[str]:
    for env in container.get("env") or []:
        name, value = str(env.get("name", "")), env.get("value")
        if name.endswith("_IMAGE") and isinstance(value, str) and value:
            yield value


def object_images(obj: dict[str, Any]) -> Iterator[str]:
    """Images one object pulls (directly or by starting pods with an image from env)."""
    for spec in _pod_specs(obj):
        for key in CONTAINER_LISTS:
            for container in spec.get(key) or []:
                if container.get("image"):
                    yield str(container["image"])
                yield from _env_images(container)


def images_of(objs: Iterable[dict[str, Any]]) -> list[str]:
    """Sorted, unique image references of the objects."""
    return sorted({image for obj in objs for image in object_images(obj)})


def model_images(model: Model) -> list[str]:
    from renderer.render import objects

    return images_of(obj for objs in objects(model).values() for obj in objs)


def per_cluster(base: Model, clusters: dict[str, Model]) -> dict[str, list[str]]:
    """Images per cluster; the fleet base stands in when there is no overlay."""
    if not clusters:
        return {base.cluster: model_images(base)}
    return {name: model_images(model) for name, model in sorted(clusters.items())}
