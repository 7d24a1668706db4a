"""Each component's rendered RBAC allows the API calls its binary makes, and nothing more
than tests/fidelity/api_calls.yaml lists with a reason (the calls were read in the sources)."""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from renderer.merge import deep_merge
from renderer.render import objects
from renderer.resolve import resolve
from tests.fidelity.facts import rbac_facts
from tests.fidelity.harness import HERE

UBUNTU = {"name": "ubuntu2204", "os": {"id": "ubuntu", "version": "22.04"}}
CALLS: dict[str, Any] = yaml.safe_load((HERE / "api_calls.yaml").read_text(encoding="utf-8"))


def granted(component: str, policy: dict[str, Any], names: list[str] | None = None) -> set[str]:
    """The rules of the component's Roles and ClusterRoles (only those named ``names``, if given:
    one ServiceAccount's of a component with several)."""
    objs = objects(resolve(deep_merge({"nodePools": [UBUNTU]}, policy), "fleet")).get(component, [])
    facts: set[str] = set()
    for obj in objs:
        if obj["kind"] in ("Role", "ClusterRole") and (names is None or obj["metadata"]["name"] in names):
            facts |= {f.removeprefix("rbac ") for f in rbac_facts(obj)}
    return {f for f in facts if "security.openshift.io" not in f and "config.openshift.io" not in f}


@pytest.mark.parametrize("name", sorted(CALLS))
def test_rbac_allows_the_binarys_calls_and_nothing_more(name: str) -> None:
    entry = CALLS[name]
    have = granted(entry["component"], entry["policy"], entry.get("objects"))
    calls = set(entry["calls"])
    beyond = {b["fact"] for b in entry["beyond"]}
    assert sorted(calls - have) == [], f"{name}: calls of {entry['binary']} its RBAC does not allow"
    assert sorted(have - calls - beyond) == [], f"{name}: RBAC beyond the calls of {entry['binary']}"
    assert sorted(beyond - have) == [], f"{name}: listed as granted beyond the calls but not granted"
