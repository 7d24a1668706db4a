"""Validate merged values against schemas/values.schema.json, with source positions.

Errors become :class:`Problem` values that point at the line in the file the value came from
(fleet values or overlay), with hints: the closest known key for a typo, the allowed values
for an enum.
"""

from __future__ import annotations

import difflib
import json
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from renderer.merge import Located
from renderer.problems import Problem, Severity, pointer_of

SCHEMA_FILE = "values.schema.json"


def schema_text(name: str = SCHEMA_FILE) -> str:
    """The text of one of gpu-render's JSON Schemas (repo checkout or installed package)."""
    here = Path(__file__).resolve().parent.parent / "schemas" / name
    if here.is_file():
        return here.read_text(encoding="utf-8")
    return resources.files("renderer.schemas").joinpath(name).read_text(encoding="utf-8")


@cache
def load_schema(name: str = SCHEMA_FILE) -> dict[str, Any]:
    data = json.loads(schema_text(name))
    assert isinstance(data, dict)
    return data


def validate(located: Located) -> list[Problem]:
    """All schema problems of the merged values, sorted."""
    from jsonschema import Draft202012Validator

    schema = load_schema()
    validator = Draft202012Validator(schema)
    problems = [_to_problem(err, located, schema) for err in validator.iter_errors(located.data)]
    return sorted(set(problems))


def _to_problem(err: Any, located: Located, schema: dict[str, Any]) -> Problem:
    path = list(err.absolute_path)
    pointer = pointer_of(path)
    hint = ""
    message = str(err.message)
    if err.validator == "additionalProperties":
        extras = _extra_keys(err)
        if extras:
            key = extras[0]
            pointer = pointer_of([*path, key])
            message = f"unknown key {key!r}"
            known = sorted((err.schema.get("properties") or {}).keys())
            close = difflib.get_close_matches(key, known, n=1, cutoff=0.6)
            if close:
                hint = f"did you mean {close[0]!r}?"
            file, line, col = located.locate(pointer, key=True)
            return Problem(file, line, col, pointer, message, hint=hint, code="unknown-key")
    elif err.validator == "enum":
        allowed = ", ".join(json.dumps(v) for v in err.validator_value)
        message = f"{json.dumps(err.instance)} is not one of the allowed values"
        hint = f"allowed: {allowed}"
    elif err.validator == "type":
        expected = err.validator_value
        expected_text = " or ".join(expected) if isinstance(expected, list) else str(expected)
        message = f"expected {expected_text}, got {_type_name(err.instance)} {json.dumps(err.instance)[:60]}"
    elif err.validator == "required":
        missing = str(err.message).split("'")[1] if "'" in str(err.message) else ""
        message = f"missing required key {missing!r}" if missing else message
    file, line, col = located.locate(pointer)
    return Problem(file, line, col, pointer, message, hint=hint, code=f"schema-{err.validator}")


def _extra_keys(err: Any) -> list[str]:
    props = set((err.schema.get("properties") or {}).keys())
    patterns = list((err.schema.get("patternProperties") or {}).keys())
    import re

    out = []
    if isinstance(err.instance, dict):
        for key in err.instance:
            if key in props or any(re.search(p, key) for p in patterns):
                continue
            out.append(str(key))
    return sorted(out)


def _type_name(value: object) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return "null"


# Keys that only mean something to the in-cluster operator: accepted, warned about.
# Keyed by JSON pointer into the values; the text says why the key does nothing here.
OPERATOR_ONLY: dict[str, str] = {
    "/operator": "gpu-render deploys no operator controller; its Deployment settings have no effect",
    "/clusterPolicy": "no ClusterPolicy is rendered; objects are rendered directly",
    "/gpuCluster": "the experimental GPUCluster/DRA stack is not rendered by gpu-render",
    "/draDriver": "the DRA driver belongs to the GPUCluster stack, which gpu-render does not render",
    "/platform": "set cluster.capabilities.openshift instead",
    "/psp": "PodSecurityPolicy was removed in Kubernetes 1.25; use psa.enabled",
    "/kataManager": "the kata manager state is permanently disabled in the operator",
    "/node-feature-discovery": "NFD is rendered from the nfd.* keys; subchart values have no effect",
    "/extraObjects": "the chart's extra Helm-templated manifests are not rendered; use overlays/<cluster>/patches",
    "/driver/nvidiaDriverCRD": "no NVIDIADriver CRs are rendered; set per-pool driver settings in nodePools[].driver",
    "/driver/useNvidiaDriverCRD": "no NVIDIADriver CRs are rendered; set per-pool driver settings in nodePools[].driver",
    "/driver/useOpenKernelModules": "deprecated and ignored upstream too; use driver.kernelModuleType",
    "/cdi/default": "deprecated and ignored upstream too",
    "/driver/upgradePolicy/autoUpgrade": "the upgrade controller is part of the operator; driver DaemonSets use OnDelete (see gpuPodDeletion/drain for k8s-driver-manager)",
    "/driver/upgradePolicy/maxParallelUpgrades": "the upgrade controller is part of the operator; driver pods are replaced when you delete them (OnDelete)",
    "/driver/upgradePolicy/maxUnavailable": "the upgrade controller is part of the operator; driver pods are replaced when you delete them (OnDelete)",
    "/driver/upgradePolicy/waitForCompletion": "the upgrade controller is part of the operator; k8s-driver-manager does not wait for jobs",
}


def operator_only_warnings(located: Located) -> list[Problem]:
    """A warning for each operator-only key the user set (empty lists and maps are ignored)."""
    out = []
    for pointer, why in OPERATOR_ONLY.items():
        found, value = _lookup(located.data, pointer)
        if not found or value in ([], {}):
            continue
        file, line, col = located.locate(pointer, key=True)
        dotted = ".".join(_unescape(part) for part in pointer[1:].split("/"))
        out.append(Problem(file, line, col, pointer, f"{dotted!r} has no effect: {why}", code="operator-only", severity=Severity.WARNING))
    return sorted(out)


def _unescape(part: str) -> str:
    return part.replace("~1", "/").replace("~0", "~")


def _lookup(data: Any, pointer: str) -> tuple[bool, Any]:
    node = data
    for part in pointer[1:].split("/"):
        if not isinstance(node, dict) or _unescape(part) not in node:
            return False, None
        node = node[_unescape(part)]
    return True, node
