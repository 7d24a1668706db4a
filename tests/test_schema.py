"""schemas/values.schema.json: well-formed, consistent with defaults.yaml and upstream values."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import yaml
from jsonschema import Draft202012Validator

from renderer import resolve
from renderer.schema import OPERATOR_ONLY, load_schema
from tests.conftest import DATA

UPSTREAM = DATA / "gpu-operator" / "values.yaml"


def properties(node: dict[str, Any], path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], dict[str, Any]]]:
    """Every named property of the schema (array items are entered as ``*``)."""
    for key, sub in (node.get("properties") or {}).items():
        yield (*path, key), sub
        yield from properties(sub, (*path, key))
    if isinstance(node.get("items"), dict):
        yield from properties(node["items"], (*path, "*"))


def leaves(data: dict[str, Any], path: tuple[str, ...] = (), whole: frozenset[tuple[str, ...]] = frozenset()) -> Iterator[tuple[tuple[str, ...], Any]]:
    """Every leaf of ``data``; a map at a path in ``whole`` (a free-form value such as
    resources) is one leaf."""
    for key, value in data.items():
        if isinstance(value, dict) and value and (*path, key) not in whole:
            yield from leaves(value, (*path, key), whole)
        else:
            yield (*path, key), value


def lookup(data: Any, path: tuple[str, ...]) -> tuple[bool, Any]:
    for key in path:
        if not isinstance(data, dict) or key not in data:
            return False, None
        data = data[key]
    return True, data


def test_schema_is_valid_2020_12() -> None:
    Draft202012Validator.check_schema(load_schema())


def test_every_key_has_a_description() -> None:
    missing = [".".join(p) for p, sub in properties(load_schema()) if not sub.get("description")]
    assert missing == []


def test_defaults_yaml_validates() -> None:
    errors = [e.message for e in Draft202012Validator(load_schema()).iter_errors(resolve.defaults())]
    assert errors == []


def test_every_defaults_leaf_has_the_same_schema_default() -> None:
    schema = dict(properties(load_schema()))
    whole = frozenset(path for path, sub in schema.items() if "$ref" in sub and "properties" not in sub)
    wrong = [
        (".".join(path), value, schema.get(path, {}).get("default", "<none>"))
        for path, value in leaves(resolve.defaults(), whole=whole)
        if schema.get(path, {}).get("default", "<none>") != value
    ]
    assert wrong == []


def test_every_schema_default_equals_defaults_yaml_or_upstream() -> None:
    """gpu-render keys take their default from defaults.yaml; operator-only ones from upstream."""
    ours = resolve.defaults()
    upstream = yaml.safe_load(UPSTREAM.read_text())
    wrong = []
    for path, sub in properties(load_schema()):
        if "default" not in sub or "*" in path:
            continue
        operator_only = any("/" + "/".join(path[: n + 1]) in OPERATOR_ONLY for n in range(len(path)))
        found, value = lookup(ours, path)
        if not found and operator_only:
            found, value = lookup(upstream, path)
        if not found or value != sub["default"]:
            wrong.append((".".join(path), sub["default"], value if found else "<absent>"))
    assert wrong == []


def test_every_upstream_key_is_in_the_schema() -> None:
    schema = dict(properties(load_schema()))
    upstream = yaml.safe_load(UPSTREAM.read_text())
    missing = []
    for path, _ in leaves(upstream):
        # stop at free-form maps (no properties): their inner keys are data
        for n in range(1, len(path) + 1):
            node = schema.get(path[:n])
            if node is None:
                missing.append(".".join(path))
                break
            if "properties" not in node:
                break
    assert missing == []


@pytest.mark.parametrize(
    ("pointer", "allowed"),
    [
        (("mig", "strategy"), ["none", "single", "mixed"]),
        (("driver", "kernelModuleType"), ["auto", "open", "proprietary"]),
        (("daemonsets", "updateStrategy"), ["RollingUpdate", "OnDelete"]),
        (("sandboxWorkloads", "mode"), ["kubevirt", "kata"]),
        (("sandboxWorkloads", "defaultWorkload"), ["container", "vm-passthrough", "vm-vgpu"]),
        (("dcgmExporter", "service", "internalTrafficPolicy"), ["Cluster", "Local"]),
        (("cluster", "operatorRelease"), ["v25.10", "v26.3", "v26.7"]),
        (("cluster", "containerRuntime"), ["containerd", "crio", "docker"]),
        (("gitops", "layout"), ["applicationset", "applications"]),
        (("nodePools", "*", "driver", "driverType"), ["gpu", "vgpu", "vgpu-host-manager"]),
    ],
)
def test_enums(pointer: tuple[str, ...], allowed: list[str]) -> None:
    assert dict(properties(load_schema()))[pointer]["enum"] == allowed


def test_upstream_values_validate_without_errors(run_cli) -> None:  # type: ignore[no-untyped-def]
    result = run_cli("validate", "--values", str(UPSTREAM), "--overlays", str(UPSTREAM.parent / "no-overlays"))
    # the one error: the chart's driver is on and gpu-render needs the node pools it would serve
    assert result.exit_code == 1, result.stderr
    errors = [line for line in result.stderr.splitlines() if ": " in line and "warning:" not in line and "error(s)" not in line]
    assert len(errors) == 1 and "driver.enabled is true but there are no nodePools" in errors[0], errors
    assert "'operator' has no effect" in result.stderr
