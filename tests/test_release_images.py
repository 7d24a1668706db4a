"""An older imitated release with gpu-render's default (newest) images: warned at
``cluster.operatorRelease``, naming what that release's chart deploys (renderer/releaseimages.py)."""

from __future__ import annotations

import pytest

from renderer.inputs import Inputs
from renderer.pipeline import plan
from renderer.releaseimages import CODE, VERSIONS
from renderer.resolve import defaults

POOL = "nodePools:\n  - name: a\n    os: {id: ubuntu, version: '22.04'}\n"


def warnings(values: str) -> list[str]:
    return [p.format() for p in plan(Inputs(values.encode(), "values.yaml")).problems if p.code == CODE]


def test_an_older_release_with_default_images_is_warned_with_the_versions_to_pin() -> None:
    (found,) = warnings("cluster:\n  operatorRelease: v26.3\n" + POOL)
    assert found.startswith("values.yaml:2:20: /cluster/operatorRelease: warning: operator release v26.3 deploys its own chart's component versions")
    assert "toolkit v1.19.1" in found and "devicePlugin v0.19.3" in found and "validator v26.3.3" in found
    assert "dcgm " not in found and "gds " not in found and "ccManager" not in found  # not deployed


def test_pinned_images_and_the_newest_release_are_quiet() -> None:
    table = VERSIONS["v26.3"]
    pins = "".join(
        f"{top}:\n  version: {version!r}\n" for top, version in table.items() if "." not in top and top in ("toolkit", "devicePlugin", "gfd", "dcgmExporter", "migManager", "validator")
    )
    pools = "nodePools:\n  - name: a\n    os: {id: ubuntu, version: '22.04'}\n    driver: {version: '580.126.20'}\n"
    assert warnings("cluster:\n  operatorRelease: v26.3\n" + pools + pins + "driver:\n  manager: {version: v0.11.0}\n") == []
    assert warnings("cluster:\n  operatorRelease: v26.7\n" + POOL) == []
    assert warnings(POOL) == []  # the default release: the defaults are its chart's


def test_an_image_reference_with_its_own_tag_is_pinned() -> None:
    found = warnings("cluster:\n  operatorRelease: v25.10\n" + POOL + "toolkit:\n  repository: ''\n  version: ''\n  image: registry.example.com/toolkit:v1.18.1\n")
    (text,) = found
    unpinned = text.split("sets no version: ")[1].split(" (pin what")[0].split(", ")
    assert "toolkit" not in unpinned and "devicePlugin" in unpinned


@pytest.mark.parametrize("release", sorted(VERSIONS))
def test_every_listed_section_is_an_image_section_of_the_defaults(release: str) -> None:
    data = defaults()
    for dotted in VERSIONS[release]:
        node = data
        for key in dotted.split("."):
            node = node[key]
        assert "version" in node, dotted
