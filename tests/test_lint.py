"""``gpu-render lint``: kube-linter-style checks on any folder, exemptions by annotation."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from renderer import lint, yamlio
from tests.conftest import examples

POD = """\
apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: ds
  namespace: ns
{annotations}spec:
  selector: {{matchLabels: {{app: x}}}}
  template:
    metadata: {{labels: {{app: x}}}}
    spec:
      hostPID: true
      automountServiceAccountToken: false
      containers:
        - name: c
          image: {image}
          securityContext: {{privileged: true}}
          volumeMounts: [{{name: root, mountPath: /host}}]
      volumes: [{{name: root, hostPath: {{path: /}}}}]
"""


def test_each_check_fires_once(tmp_path: Path) -> None:
    obj = {
        "kind": "Pod",
        "metadata": {"name": "p"},
        "spec": {
            "hostIPC": True,
            "hostNetwork": True,
            "containers": [
                {
                    "name": "c",
                    "image": "busybox",
                    "securityContext": {"allowPrivilegeEscalation": True, "capabilities": {"add": ["NET_ADMIN"]}},
                    "env": [{"name": "DB_PASSWORD", "value": "hunter2"}, {"name": "PULL_SECRETS", "value": "regcred"}],
                }
            ],
        },
    }
    checks = [c for c, _ in lint.check_object(obj)]
    assert checks == ["host-ipc", "host-network", "service-account-token", "privilege-escalation", "added-capabilities", "latest-tag", "env-var-secret"]
    role = {"kind": "ClusterRole", "metadata": {"name": "r"}, "rules": [{"apiGroups": [""], "resources": ["secrets"], "verbs": ["get"]}, {"apiGroups": ["*"], "resources": ["pods"], "verbs": ["bind"]}]}
    assert [c for c, _ in lint.check_object(role)] == ["access-to-secrets", "wildcard-rbac", "rbac-escalation"]
    assert [c for c, _ in lint.check_object({"kind": "Secret", "metadata": {"name": "s"}})] == ["secret-rendered"]


@pytest.mark.parametrize(("image", "floating"), [("nvcr.io/x/y", True), ("y:latest", True), ("reg:5000/y", True), ("reg:5000/y:v1", False), ("y@sha256:" + "a" * 64, False), ("", True)])
def test_latest_tag(image: str, floating: bool) -> None:
    obj = {"kind": "Pod", "metadata": {"name": "p"}, "spec": {"automountServiceAccountToken": False, "containers": [{"name": "c", "image": image}]}}
    assert (("latest-tag" in [c for c, _ in lint.check_object(obj)]) is floating)


def test_lint_fails_on_unexempted_then_passes_with_annotation(tmp_path: Path, run_cli) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "ds.yaml").write_text(POD.format(annotations="", image="nvcr.io/x/y:v1"))
    result = run_cli("lint", str(tmp_path))
    assert result.exit_code == 1
    for check in ("privileged-container", "host-pid", "host-path", "writable-host-mount"):
        assert f"DaemonSet/ns/ds: {check}:" in result.stderr
    note = '  annotations:\n    gpu-render.dev/lint-exempt: "privileged-container=loads modules; host-pid=sees host processes; host-path=reads /; writable-host-mount=writes /"\n'
    (tmp_path / "ds.yaml").write_text(POD.format(annotations=note, image="nvcr.io/x/y:v1"))
    result = run_cli("lint", str(tmp_path), "--show-exempt")
    assert result.exit_code == 0, result.output
    assert "(exempt: loads modules)" in result.stdout
    body = json.loads(run_cli("lint", str(tmp_path), "--format", "json").stdout)
    assert body["unexempted"] == 0 and {f["check"] for f in body["findings"]} == {"privileged-container", "host-pid", "host-path", "writable-host-mount"}


def test_one_annotation_per_check_exempts_like_the_combined_one(tmp_path: Path, run_cli) -> None:  # type: ignore[no-untyped-def]
    note = (
        "  annotations:\n"
        "    gpu-render.dev/lint-exempt.privileged-container: loads modules\n"
        "    gpu-render.dev/lint-exempt.host-pid: sees host processes\n"
        "    gpu-render.dev/lint-exempt: host-path=reads /; writable-host-mount=writes /; host-pid=old reason\n"
    )
    (tmp_path / "ds.yaml").write_text(POD.format(annotations=note, image="nvcr.io/x/y:v1"))
    result = run_cli("lint", str(tmp_path), "--show-exempt")
    assert result.exit_code == 0, result.output
    assert "(exempt: loads modules)" in result.stdout and "(exempt: reads /)" in result.stdout
    assert "(exempt: sees host processes)" in result.stdout and "old reason" not in result.stdout  # the per-check one wins


def test_exemption_annotations_round_trip() -> None:
    reasons = {"host-pid": "sees host processes", "privileged-container": "loads modules; and more"}
    written = lint.exemption_annotations(reasons)
    assert list(written) == ["gpu-render.dev/lint-exempt.host-pid", "gpu-render.dev/lint-exempt.privileged-container"]
    assert all(len(key.split("/", 1)[1]) <= 63 for key in lint.exemption_annotations(dict.fromkeys(lint.CHECKS, "r")))
    assert lint.exemptions({"metadata": {"annotations": written}}) == reasons  # a reason may hold "; " now
    combined = {lint.EXEMPT_ANNOTATION: lint.format_exemptions({"host-pid": "x", "host-path": "y"})}
    assert lint.exemptions({"metadata": {"annotations": combined}}) == {"host-pid": "x", "host-path": "y"}


def test_partial_exemption_still_fails(tmp_path: Path, run_cli) -> None:  # type: ignore[no-untyped-def]
    note = '  annotations:\n    gpu-render.dev/lint-exempt: "privileged-container=loads modules"\n'
    (tmp_path / "ds.yaml").write_text(POD.format(annotations=note, image="y:latest"))
    result = run_cli("lint", str(tmp_path))
    assert result.exit_code == 1
    assert "latest-tag" in result.stderr and "host-pid" in result.stderr and "privileged-container:" not in result.stderr


def test_bad_yaml_and_templates(tmp_path: Path, run_cli) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "t.yaml").write_text("kind: {{ .Values.kind }}\n")
    assert run_cli("lint", str(tmp_path)).exit_code == 0
    (tmp_path / "bad.yaml").write_text("a: [\n")
    result = run_cli("lint", str(tmp_path))
    assert result.exit_code == 1 and "bad.yaml:2:1: not valid YAML" in result.stderr


def test_lint_of_own_output_is_clean(tmp_path: Path, run_cli, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "values.yaml").write_text("nodePools:\n  - name: p\n    os: {id: ubuntu, version: '22.04'}\n")
    monkeypatch.chdir(tmp_path)
    assert run_cli("build", "-q").exit_code == 0
    result = run_cli("lint")
    assert result.exit_code == 0, result.output
    assert "0 finding(s)" in result.output


def test_rule_findings_kept_per_rule_list_are_the_same() -> None:
    """The findings kept for a plain rule list (the chart analysis checks the same lists again
    and again) equal a fresh check, are handed out as a copy, and a list a view or a non-string
    could be in is checked as it is, every time."""
    rules = [{"apiGroups": ["*"], "resources": ["secrets"], "verbs": ["get", "bind"]}]
    fresh = lint._rules_findings(rules)
    assert lint._check_rules(rules) == fresh
    found = lint._check_rules(rules)
    found.clear()
    assert lint._check_rules([dict(r) for r in rules]) == fresh
    assert lint._rules_key([{"verbs": ["get", 1]}]) is None
    assert lint._check_rules([{"verbs": ["get", 1]}]) == lint._rules_findings([{"verbs": ["get", 1]}])
    assert lint._check_rules([{"verbs": 7}]) == []  # not a list: skipped, never kept
    assert lint._rules_key([{"verbs": 7}]) is None
    assert lint._rules_key([{"a": ["b"]}, {}]) != lint._rules_key([{}, {"a": ["b"]}])


def _daemonset(containers: str = "[{name: c, image: a:1}]", pod: str = "") -> str:
    return f"apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {{name: x}}\nspec:\n  template:\n    spec: {{{pod}containers: {containers}}}\n"


HUGE = "0x" + "f" * 4000  # YAML reads it as an int too long for str() (sys.get_int_max_str_digits)

MALFORMED = {
    "securityContext-scalar": _daemonset("[{name: c, image: a:1, securityContext: x}]"),
    "capabilities-scalar": _daemonset("[{name: c, image: a:1, securityContext: {capabilities: x}}]"),
    "capabilities-add-scalar": _daemonset("[{name: c, image: a:1, securityContext: {capabilities: {add: 5}}}]"),
    "capabilities-add-map": _daemonset("[{name: c, image: a:1, securityContext: {capabilities: {add: {a: b}}}}]"),
    "volumes-scalar": _daemonset(pod="volumes: 5, "),
    "volumes-item-scalar": _daemonset(pod="volumes: [5, x], "),
    "hostPath-scalar": _daemonset(pod="volumes: [{name: v, hostPath: 5}], "),
    "hostPath-path-list": _daemonset("[{name: c, image: a:1, volumeMounts: [{name: v}]}]", pod="volumes: [{name: v, hostPath: {path: [1, {a: b}]}}], "),
    "containers-scalar": _daemonset("5"),
    "containers-map": _daemonset("{name: c}"),
    "containers-item-scalar": _daemonset("[5, x, null]"),
    "initContainers-scalar": _daemonset(pod="initContainers: 5, "),
    "ephemeralContainers-scalar": _daemonset(pod="ephemeralContainers: x, "),
    "env-scalar": _daemonset("[{name: c, image: a:1, env: 5}]"),
    "env-item-scalar": _daemonset("[{name: c, image: a:1, env: [5, {name: [1], value: x}, {name: {a: b}, value: y}]}]"),
    "volumeMounts-scalar": _daemonset("[{name: c, image: a:1, volumeMounts: 5}]"),
    "volumeMounts-name-list": _daemonset("[{name: c, image: a:1, volumeMounts: [{name: [v]}, {name: {v: 1}}]}]", pod="volumes: [{name: v, hostPath: {path: /}}], "),
    "ports-resources-scalar": _daemonset("[{name: c, image: a:1, ports: 5, resources: x}]"),
    "image-and-name-list": _daemonset("[{name: [c], image: [a, b]}]"),
    "huge-int-fields": _daemonset(f"[{{name: {HUGE}, image: {HUGE}, securityContext: {{capabilities: {{add: [{HUGE}]}}}}}}]", pod=f"serviceAccountName: {HUGE}, "),
    "pod-spec-scalar": "kind: DaemonSet\nmetadata: {name: x}\nspec: {template: {spec: 5}}\n",
    "template-scalar": "kind: DaemonSet\nmetadata: {name: x}\nspec: {template: x}\n",
    "spec-scalar": "kind: Deployment\nmetadata: {name: x}\nspec: 5\n",
    "pod-spec-list": "kind: Pod\nmetadata: {name: x}\nspec: [a]\n",
    "cronjob-jobTemplate-scalar": "apiVersion: batch/v1\nkind: CronJob\nmetadata: {name: x}\nspec: {jobTemplate: x}\n",
    "cronjob-jobTemplate-spec-scalar": "kind: CronJob\nmetadata: {name: x}\nspec: {jobTemplate: {spec: 5}}\n",
    "cronjob-template-scalar": "kind: CronJob\nmetadata: {name: x}\nspec: {jobTemplate: {spec: {template: [1]}}}\n",
    "kind-list": "kind: [DaemonSet]\nmetadata: {name: x}\nspec: {template: {spec: {containers: [{name: c}]}}}\n",
    "kind-map": "kind: {a: b}\nmetadata: {name: x}\nspec: {}\n",
    "metadata-scalar": "kind: Pod\nmetadata: 5\nspec: {containers: [{name: c, image: a:1}]}\n",
    "metadata-list": "kind: Pod\nmetadata: [name, x]\nspec: {containers: [{name: c, image: a:1}]}\n",
    "name-namespace-odd": f"kind: Pod\nmetadata: {{name: [x], namespace: {HUGE}}}\nspec: {{containers: [{{name: c, image: a:1}}]}}\n",
    "labels-annotations-scalar": "kind: Pod\nmetadata: {name: x, labels: 5, annotations: x}\nspec: {containers: [{name: c, image: a:1}]}\n",
    "annotations-list": "kind: Pod\nmetadata: {name: x, annotations: [a, b]}\nspec: {containers: [{name: c, image: a:1}]}\n",
    "annotations-odd-values": f"kind: Pod\nmetadata: {{name: x, annotations: {{gpu-render.dev/lint-exempt: [1], gpu-render.dev/lint-exempt.host-pid: {{a: b}}, 5: {HUGE}}}}}\nspec: {{containers: [{{name: c, image: a:1}}]}}\n",
    "rules-scalar": "kind: ClusterRole\nmetadata: {name: r}\nrules: 5\n",
    "rules-map": "kind: Role\nmetadata: {name: r}\nrules: {verbs: ['*']}\n",
    "rules-item-scalar": "kind: ClusterRole\nmetadata: {name: r}\nrules: [5, x, null]\n",
    "rules-verbs-scalar": "kind: ClusterRole\nmetadata: {name: r}\nrules: [{verbs: 5}]\n",
    "rules-fields-scalar": "kind: ClusterRole\nmetadata: {name: r}\nrules: [{apiGroups: 5, resources: x, verbs: {get: 1}, nonResourceURLs: 1.5}]\n",
    "rules-values-odd": f"kind: ClusterRole\nmetadata: {{name: r}}\nrules: [{{apiGroups: [null, [1]], resources: [{{a: b}}], verbs: [{HUGE}, 5]}}]\n",
    "binding-subjects-roleRef-scalar": "kind: ClusterRoleBinding\nmetadata: {name: b}\nsubjects: 5\nroleRef: x\n",
    "binding-subjects-item-scalar": "kind: RoleBinding\nmetadata: {name: b}\nsubjects: [5, x]\nroleRef: [1]\n",
    "secret-odd": "kind: Secret\nmetadata: x\ndata: 5\n",
    "user-patch-rules-verbs-scalar": "kind: ClusterRole\nmetadata: {name: r}\nrules: [{verbs: 5}]\n",
    "user-patch-securityContext-scalar": _daemonset("[{name: c, image: a:1, securityContext: x, env: 5, volumeMounts: 5}]", pod="volumes: 5, "),
}


@pytest.mark.parametrize("name", sorted(MALFORMED))
def test_malformed_objects_are_linted_without_an_exception(name: str, tmp_path: Path, run_cli) -> None:  # type: ignore[no-untyped-def]
    """Any shape ends in findings (a field of the wrong shape is skipped by the checks that
    read it), never a traceback: the CLI exits 0 or 1, never 3."""
    file = ("user-patches/" if name.startswith("user-patch-") else "") + "a.yaml"
    (tmp_path / file).parent.mkdir(parents=True, exist_ok=True)
    (tmp_path / file).write_text(MALFORMED[name])
    docs = yamlio.load_all(MALFORMED[name])
    assert len(docs) == 1
    lint.lint([(file, docs[0])])
    lint.check_object(docs[0])
    result = run_cli("lint", str(tmp_path))
    assert result.exit_code in (0, 1), result.output
    assert "1 object(s)" in result.output and "not valid YAML" not in result.output
    body = json.loads(run_cli("lint", str(tmp_path), "--format", "json").stdout)
    assert body["objects"] == 1 and body["errors"] == []


def test_malformed_fields_skip_only_their_own_checks() -> None:
    """What is well shaped beside a malformed field is still checked."""
    obj = yamlio.load_all(_daemonset("[{name: c, image: y:latest, securityContext: x, env: 5}, {name: d, image: a:1, securityContext: {privileged: true}}]", pod="hostPID: true, volumes: 5, "))[0]
    assert lint.check_object(obj) == [("host-pid", "hostPID: true"), ("service-account-token", "automountServiceAccountToken is not false (ServiceAccount default)"), ("privileged-container", "d"), ("latest-tag", "c (y:latest)")]
    role = {"kind": "ClusterRole", "rules": [{"verbs": 5}, 7, {"apiGroups": [""], "resources": "secrets", "verbs": ["get"]}, {"resources": ["secrets"], "verbs": ["*"]}]}
    assert lint.check_object(role) == [("wildcard-rbac", "rule 3 has '*' in verbs"), ("access-to-secrets", "rule 3 can * secrets")]
    huge = int("f" * 4000, 16)
    assert lint._text(huge) == "<int too long to print>" and lint._text([huge]) == "<list too long to print>"


# A well-formed object of each shape lint reads, and the paths into it a random value replaces.
_WELL_FORMED: dict[str, Any] = {
    "pod": {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {"name": "ds", "namespace": "ns", "labels": {"app": "x"}, "annotations": {lint.EXEMPT_ANNOTATION: "host-pid=r", lint.EXEMPT_PREFIX + "host-path": "r"}},
        "spec": {
            "template": {
                "metadata": {"labels": {"app": "x"}},
                "spec": {
                    "hostPID": True,
                    "serviceAccountName": "sa",
                    "initContainers": [{"name": "i", "image": "a:1"}],
                    "containers": [
                        {
                            "name": "c",
                            "image": "a:1",
                            "securityContext": {"privileged": True, "capabilities": {"add": ["NET_ADMIN"]}},
                            "env": [{"name": "TOKEN", "value": "x"}],
                            "volumeMounts": [{"name": "root", "mountPath": "/host"}],
                            "ports": [{"containerPort": 1, "hostPort": 1}],
                            "resources": {"limits": {"cpu": "1"}},
                        }
                    ],
                    "volumes": [{"name": "root", "hostPath": {"path": "/"}}],
                },
            }
        },
    },
    "cronjob": {"kind": "CronJob", "metadata": {"name": "cj"}, "spec": {"jobTemplate": {"spec": {"template": {"spec": {"containers": [{"name": "c", "image": "a"}]}}}}}},
    "role": {"kind": "ClusterRole", "metadata": {"name": "r"}, "rules": [{"apiGroups": ["*"], "resources": ["secrets"], "verbs": ["get", "bind"], "nonResourceURLs": ["/x/*"]}]},
    "binding": {"kind": "ClusterRoleBinding", "metadata": {"name": "b"}, "subjects": [{"kind": "ServiceAccount", "name": "sa"}], "roleRef": {"kind": "ClusterRole", "name": "r"}},
}


def _paths(node: Any, at: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [at]
    children = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
    for key, child in children:
        out += _paths(child, (*at, key))
    return out


_PATHS = [(name, path) for name, obj in sorted(_WELL_FORMED.items()) for path in _paths(obj)[1:]]
_ODD = st.sampled_from([5, "x", 1.5, True, [5], ["x", None], [[1]], {"a": 5}, {"name": ["x"]}])
"""Wrong shapes that are not empty (an empty value reads like an absent one)."""
_VALUES = _ODD | st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8) | st.sampled_from(["*", "secrets", "get", "root", "/", "a:latest", lint.EXEMPT_ANNOTATION]),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=8) | st.sampled_from(["name", "hostPath", "path", "add", "privileged", "verbs", "spec", "template"]), children, max_size=3),
    max_leaves=8,
)


@settings(max_examples=examples(500), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(where=st.lists(st.sampled_from(_PATHS), min_size=1, max_size=3), values=st.lists(_VALUES, min_size=3, max_size=3), patch=st.booleans(), huge=st.booleans())
def test_any_value_anywhere_is_linted_without_an_exception(where: list[tuple[str, tuple[Any, ...]]], values: list[Any], patch: bool, huge: bool) -> None:
    """Random JSON-like values at any path of well-formed objects (pod specs, CronJobs, RBAC)
    never make lint raise, as a rendered object or as a hand-written patch."""
    if huge and not patch:  # (renderer.userpatches, which checks the patches, still str()s it)
        values[0] = int("f" * 4000, 16)  # too long for str(): YAML reads a long hex number so
    objs = copy.deepcopy(_WELL_FORMED)
    for (name, path), value in zip(where, values, strict=False):
        node: Any = objs[name]
        for key in path[:-1]:
            if not isinstance(node, (dict, list)) or (isinstance(node, list) and not (isinstance(key, int) and key < len(node))) or (isinstance(node, dict) and key not in node):
                break
            node = node[key]
        else:
            if isinstance(node, dict) or (isinstance(node, list) and isinstance(path[-1], int) and path[-1] < len(node)):
                node[path[-1]] = value
    folder = "user-patches/" if patch else ""
    found = lint.lint([(f"{folder}{name}.yaml", obj) for name, obj in objs.items()])
    assert all(isinstance(f, lint.Finding) for f in found)
    for obj in objs.values():
        lint.object_findings(obj, lint.pod_spec(obj))
        lint.exemptions(obj)
