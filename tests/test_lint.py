"""``gpu-render lint``: kube-linter-style checks on any folder, exemptions by annotation."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from renderer import lint

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
    with pytest.raises(TypeError):
        lint._check_rules([{"verbs": 7}])  # not iterable: fails as before, never kept
    assert lint._rules_key([{"a": ["b"]}, {}]) != lint._rules_key([{}, {"a": ["b"]}])
