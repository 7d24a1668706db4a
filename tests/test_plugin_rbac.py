"""Device plugin, MPS control daemon and GFD: a ServiceAccount token and RBAC only for the
config-manager sidecar (list/watch of nodes, what its node informer asks) or for GFD's
NodeFeature API when asked for."""

from __future__ import annotations

from typing import Any

import pytest

from renderer.inputs import Inputs
from renderer.pipeline import plan
from renderer.render import objects

POOLS = 'nodePools:\n  - name: u\n    os: {id: ubuntu, version: "22.04"}\n'
SHARING = POOLS + 'devicePlugin:\n  config: {create: true, name: sharing, default: ts, data: {ts: "version: v1\\n"}}\n'
COMPONENTS = {"device-plugin": "nvidia-device-plugin", "mps-control-daemon": "nvidia-device-plugin-mps-control-daemon", "gpu-feature-discovery": "nvidia-gpu-feature-discovery"}


def _render(values: str) -> dict[str, list[dict[str, Any]]]:
    p = plan(Inputs(values.encode(), "values.yaml"))
    assert p.base is not None and not [x for x in p.problems if x.severity.name == "ERROR"]
    return objects(p.base)


def _pod(objs: list[dict[str, Any]]) -> dict[str, Any]:
    ds = next(o for o in objs if o["kind"] == "DaemonSet")
    pod: dict[str, Any] = ds["spec"]["template"]["spec"]
    return pod


NO_NFD_API = "gfd:\n  env: [{name: USE_NODE_FEATURE_API, value: 'false'}]\n"


@pytest.mark.parametrize("component", sorted(COMPONENTS))
def test_no_sidecar_no_token_no_cluster_role(component: str) -> None:
    objs = _render(POOLS + NO_NFD_API)[component]
    kinds = sorted(o["kind"] for o in objs)
    assert not {"ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding"} & set(kinds)
    pod = _pod(objs)
    assert pod["automountServiceAccountToken"] is False
    assert all(c["name"] != "config-manager" for c in pod["containers"])


@pytest.mark.parametrize("component", sorted(COMPONENTS))
def test_sidecar_gets_exactly_its_verbs(component: str) -> None:
    objs = _render(SHARING + NO_NFD_API)[component]
    pod = _pod(objs)
    assert pod.get("automountServiceAccountToken") is not False
    assert any(c["name"] == "config-manager" for c in pod["containers"])
    roles = [o for o in objs if o["kind"] == "ClusterRole"]
    assert [r["rules"] for r in roles] == [[{"apiGroups": [""], "resources": ["nodes"], "verbs": ["list", "watch"]}]]
    binding = next(o for o in objs if o["kind"] == "ClusterRoleBinding")
    assert binding["subjects"][0]["name"] == COMPONENTS[component] == pod["serviceAccountName"]
    assert not [o for o in objs if o["kind"] in ("Role", "RoleBinding")]


def test_gfd_node_feature_api_gets_its_role() -> None:
    # GFD v0.19+ publishes through the NodeFeature API unless told not to
    objs = _render(POOLS)["gpu-feature-discovery"]
    assert {o["kind"] for o in objs} >= {"Role", "RoleBinding"}
    assert not [o for o in objs if o["kind"] == "ClusterRole"]
    assert _pod(objs).get("automountServiceAccountToken") is not False


def test_sharing_config_map_rendered_as_the_chart_does() -> None:
    objs = _render(SHARING)["plugin-config"]  # its own component: GFD mounts it without the plugin too
    cm = next(o for o in objs if o["kind"] == "ConfigMap" and o["metadata"]["name"] == "sharing")
    assert cm["data"] == {"ts": "version: v1\n"}
    without_plugin = _render(SHARING.replace("devicePlugin:\n", "devicePlugin:\n  enabled: false\n", 1))
    assert "device-plugin" not in without_plugin and [o["metadata"]["name"] for o in without_plugin["plugin-config"]] == ["sharing"]
    # create without data: a warning, and an empty ConfigMap (config-manager then finds no config)
    p = plan(Inputs((POOLS + "devicePlugin:\n  config: {create: true, name: sharing}\n").encode(), "values.yaml"))
    assert [x.code for x in p.problems] == ["plugin-config-data"]
    # create without a name: refused at the key
    p = plan(Inputs((POOLS + "devicePlugin:\n  config: {create: true}\n").encode(), "values.yaml"))
    assert [(x.code, x.line, x.severity.name) for x in p.problems] == [("plugin-config-name", 5, "ERROR")]


def test_validation_env_takes_the_pods_fields_first() -> None:
    """The cuda and plugin validations have NODE_NAME and OPERATOR_NAMESPACE from the pod right
    after COMPONENT, as the operator's asset: a `$(NODE_NAME)` in the section's env expands."""
    objs = _render(POOLS + "validator:\n  cuda:\n    env: [{name: WHERE, value: $(NODE_NAME)}]\n  plugin:\n    env: [{name: WHERE, value: $(NODE_NAME)}]\n")
    ds = next(o for o in objs["operator-validator"] if o["kind"] == "DaemonSet")
    for ctr in ds["spec"]["template"]["spec"]["initContainers"]:
        names = [e["name"] for e in ctr["env"]]
        if ctr["name"] in ("cuda-validation", "plugin-validation"):
            assert names.index("NODE_NAME") == names.index("COMPONENT") + 1 < names.index("OPERATOR_NAMESPACE") < names.index("WHERE"), names
