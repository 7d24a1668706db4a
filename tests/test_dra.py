"""DRA per node pool: selectors prove one stack per node, validate-time gates, one CRD owner,
and the dra-mixed golden case through the real helm and strict 1.34 schemas."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from renderer import yamlio
from renderer.emit.helm import normalise, static_objects
from renderer.inputs import Inputs, read_inputs
from renderer.model import Model
from renderer.pipeline import Plan, plan
from renderer.render import objects, render
from tests.conftest import run_tool, strict_validate
from tests.golden import CASES

CASE = CASES / "dra-mixed"
ID = "feature.node.kubernetes.io/system-os_release.ID"
VERSION = "feature.node.kubernetes.io/system-os_release.VERSION_ID"

MIXED = """\
cluster:
  kubeVersion: "1.34"
cdi:
  enabled: true
driver:
  version: "580.95.05"
nodePools:
  - name: h100
    os: {id: ubuntu, version: "22.04"}
  - name: gb200
    os: {id: ubuntu, version: "24.04"}
    resourceAllocation: dra
"""


def _plan(text: str) -> Plan:
    return plan(Inputs(textwrap.dedent(text).encode(), "values.yaml"))


def _model(text: str = MIXED) -> Model:
    p = _plan(text)
    assert not p.errors, [e.format() for e in p.errors]
    assert p.base is not None
    return p.base


def _errors(text: str) -> list[str]:
    return [e.format() for e in _plan(text).errors]


# --- node affinity, evaluated the way the scheduler does --------------------------------------


def _expr_ok(expr: dict[str, Any], labels: dict[str, str]) -> bool:
    value = labels.get(expr["key"])
    op = expr["operator"]
    if op == "In":
        return value in expr["values"]
    if op == "NotIn":
        return value not in expr["values"]
    if op == "Exists":
        return value is not None
    if op == "DoesNotExist":
        return value is None
    raise AssertionError(op)


def schedulable(pod_spec: dict[str, Any], labels: dict[str, str]) -> bool:
    if not all(labels.get(k) == v for k, v in (pod_spec.get("nodeSelector") or {}).items()):
        return False
    required = ((pod_spec.get("affinity") or {}).get("nodeAffinity") or {}).get("requiredDuringSchedulingIgnoredDuringExecution")
    if not required:
        return True
    return any(all(_expr_ok(e, labels) for e in term.get("matchExpressions") or []) for term in required["nodeSelectorTerms"])


def _daemonsets(model: Model) -> dict[str, dict[str, Any]]:
    out = {}
    for comp, items in objects(model).items():
        for obj in items:
            if obj["kind"] == "DaemonSet":
                out[f"{comp}/{obj['metadata']['name']}"] = obj["spec"]["template"]["spec"]
    return out


DRA_STACK = ("dra-driver/", "dra-validator/", "dcgm-exporter-dra/")
DP_STACK = ("device-plugin/", "gpu-feature-discovery/", "mig-manager/", "mps-control-daemon/", "operator-validator/", "dcgm-exporter/")


def _node(os_id: str, version: str, **extra: str) -> dict[str, str]:
    """A GPU node's labels as NFD writes them (``VERSION_ID`` and its ``.major``/``.minor``)."""
    major, _, minor = version.partition(".")
    return {
        "nvidia.com/gpu.present": "true",
        ID: os_id,
        VERSION: version,
        f"{VERSION}.major": major,
        f"{VERSION}.minor": minor,
        "nvidia.com/mps.capable": "true",
        **extra,
    }


@pytest.mark.parametrize(
    "labels",
    [
        _node("ubuntu", "22.04"),
        _node("ubuntu", "24.04"),
        _node("rhel", "9.4"),
        _node("ubuntu", "24.04", **{"nvidia.com/gpu.deploy.dra-driver": "true", "nvidia.com/gpu.deploy.device-plugin": "true"}),
    ],
)
def test_no_node_is_selected_by_both_stacks(labels: dict[str, str]) -> None:
    ds = _daemonsets(_model())
    dra = [n for n, spec in ds.items() if n.startswith(DRA_STACK) and schedulable(spec, labels)]
    dp = [n for n, spec in ds.items() if n.startswith(DP_STACK) and schedulable(spec, labels)]
    assert not (dra and dp), (labels, dra, dp)
    # the DRA pool gets the whole DRA stack, the device-plugin pool the whole device-plugin stack
    if labels[VERSION] == "24.04":
        assert len(dra) == 3 and not dp
    elif labels[ID] == "ubuntu":
        assert not dra and {n.split("/")[0] for n in dp} >= {"device-plugin", "gpu-feature-discovery", "operator-validator"}


def test_exclusion_holds_for_several_dra_pools() -> None:
    text = MIXED + """\
  - name: rhel-dra
    os: {id: rhel, version: "9.4"}
    resourceAllocation: dra
"""
    ds = _daemonsets(_model(text))
    for labels in (_node("ubuntu", "24.04"), _node("rhel", "9.4"), _node("ubuntu", "22.04"), _node("rhel", "9.6")):
        dra = [n for n, spec in ds.items() if n.startswith(DRA_STACK) and schedulable(spec, labels)]
        dp = [n for n, spec in ds.items() if n.startswith(DP_STACK) and schedulable(spec, labels)]
        assert bool(dra) != bool(dp), (labels, dra, dp)


def test_overlapping_pools_are_refused() -> None:
    text = MIXED + """\
  - name: gb200-copy
    os: {id: ubuntu, version: "24.04"}
"""
    errors = _errors(text)
    assert any("select the same nodes" in e and "/nodePools/2" in e for e in errors), errors


def test_device_plugin_only_fleet_is_unchanged() -> None:
    model = _model(MIXED.replace("    resourceAllocation: dra\n", ""))
    assert "dra-driver" not in objects(model)
    ds = _daemonsets(model)
    assert not [n for n, spec in ds.items() if "system-os_release" in str(spec.get("affinity"))]


# --- the CRD: exactly once, one owner ---------------------------------------------------------


def _kinds(model: Model) -> list[tuple[str, str]]:
    return [(o["kind"], o["metadata"]["name"]) for items in objects(model).values() for o in items]


def test_compute_domain_crd_rendered_exactly_once() -> None:
    kinds = _kinds(_model())
    assert kinds.count(("CustomResourceDefinition", "computedomains.resource.nvidia.com")) == 1
    assert kinds.count(("CustomResourceDefinition", "computedomaincliques.resource.nvidia.com")) == 1


def test_external_crd_owner_renders_no_crd_but_the_controller() -> None:
    kinds = _kinds(_model(MIXED + "draDriver:\n  computeDomains:\n    crd:\n      owner: external\n"))
    assert not [k for k in kinds if k[0] == "CustomResourceDefinition" and "nvidia.com" in k[1]]
    assert ("Deployment", "nvidia-dra-driver-controller") in kinds


def test_crd_owner_conflict_is_refused() -> None:
    errors = _errors(MIXED + "gpuCluster:\n  deployCR: true\n")
    assert any(e.startswith("values.yaml:") and "/gpuCluster/deployCR" in e and "two owners" in e for e in errors), errors


def test_compute_domains_off_renders_gpus_only() -> None:
    model = _model(MIXED + "draDriver:\n  computeDomains:\n    enabled: false\n")
    kinds = _kinds(model)
    assert ("DeviceClass", "gpu.nvidia.com") in kinds and ("DeviceClass", "compute-domain-daemon.nvidia.com") not in kinds
    assert not [k for k in kinds if k[0] in ("CustomResourceDefinition", "Deployment") and "nvidia" in k[1]]


# --- version and runtime gates at validate time -----------------------------------------------


@pytest.mark.parametrize(
    ("text", "where", "message"),
    [
        (MIXED.replace('"1.34"', '"1.33"'), "values.yaml:2:16: /cluster/kubeVersion", "Kubernetes 1.34+"),
        (MIXED.replace("580.95.05", "560.35.03"), "values.yaml:6:12: /driver/version", "565 or newer"),
        (MIXED.replace("580.95.05", "570.124.06"), "values.yaml:6:12: /driver/version", "570.158.01"),
        (MIXED.replace("    resourceAllocation: dra\n", "    resourceAllocation: dra\n    runtime: docker\n"), "/nodePools/1/runtime", "Docker"),
        (MIXED.replace("    resourceAllocation: dra\n", "    resourceAllocation: dra\n    runtimeVersion: '1.6.28'\n"), "/nodePools/1/runtimeVersion", "1.7+"),
        (MIXED.replace("  enabled: true\n", "  enabled: false\n", 1), "/cdi/enabled", "enable_cdi"),
        (
            MIXED.replace("    resourceAllocation: dra\n", "    resourceAllocation: dra\n    runtime: crio\n    runtimeVersion: '1.22.5'\n"),
            "/nodePools/1/runtimeVersion",
            "CRI-O 1.22.5",
        ),
    ],
)
def test_gates_are_refused_with_their_place(text: str, where: str, message: str) -> None:
    errors = _errors(text)
    assert any(where in e and message in e for e in errors), errors


def test_compute_domains_off_allows_an_older_565_driver_and_containerd_2_without_cdi_key() -> None:
    text = MIXED.replace("580.95.05", "565.57.01").replace("  enabled: true\n", "  enabled: false\n", 1)
    text = text.replace("    resourceAllocation: dra\n", "    resourceAllocation: dra\n    runtimeVersion: '2.0.5'\n")
    assert _errors(text + "draDriver:\n  computeDomains:\n    enabled: false\n") == []


# --- the golden case through the real tools ---------------------------------------------------


def _case_plan() -> Plan:
    p = plan(read_inputs(CASE / "values.yaml", CASE / "overlays"))
    assert not p.errors, [e.format() for e in p.errors]
    return p


def _builtin(objs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [o for o in objs if "." not in o["apiVersion"].split("/")[0] or o["apiVersion"].split("/")[0].endswith(".k8s.io")]


def test_dra_mixed_passes_strict_schemas_for_1_34_and_1_35() -> None:
    p = _case_plan()
    for model in (p.base, *p.clusters.values()):
        assert model is not None
        objs = [o for items in objects(model).values() for o in items]
        for version in ("1.34", "1.35"):
            assert strict_validate(_builtin(objs), version) == []


def test_compute_domain_crd_accepts_a_compute_domain() -> None:
    import jsonschema

    model = _model()
    crd = next(o for items in objects(model).values() for o in items if o["metadata"]["name"] == "computedomains.resource.nvidia.com")
    schema = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    domain = {
        "apiVersion": "resource.nvidia.com/v1beta1",
        "kind": "ComputeDomain",
        "metadata": {"name": "imex"},
        "spec": {"numNodes": 2, "channel": {"resourceClaimTemplate": {"name": "imex-channel"}}},
    }
    jsonschema.validate(domain, schema)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({**domain, "spec": {"numNodes": 2}}, schema)


@pytest.mark.realtools
def test_helm_template_equals_static_render(helm: str, tmp_path: Path) -> None:
    p = _case_plan()
    for rel, text in render(read_inputs(CASE / "values.yaml", CASE / "overlays")).items():
        target = tmp_path / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    chart = tmp_path / "chart" / "gpu-stack"
    got = [o for o in yamlio.load_all(run_tool([helm, "template", "gpu-stack", str(chart)])) if o]
    assert p.base is not None
    assert normalise(got) == normalise(static_objects(p.base))
    for name, model in sorted(p.clusters.items()):
        values = chart / f"values-{name}.yaml"
        if values.is_file():
            got = [o for o in yamlio.load_all(run_tool([helm, "template", "gpu-stack", str(chart), "-f", str(values)])) if o]
            assert normalise(got) == normalise(static_objects(model)), name


# --- teardown, driver reloads, diff ----------------------------------------------------------


def _wave(obj: dict[str, Any]) -> int:
    return int(obj["metadata"]["annotations"]["argocd.argoproj.io/sync-wave"])


def test_prune_order_is_claim_holders_then_kubelet_plugin_then_driver() -> None:
    """Argo CD prunes higher waves first: the validator's claim, then the plugin, then the driver."""
    objs = {(comp, o["kind"], o["metadata"]["name"]): o for comp, items in objects(_model()).items() for o in items}
    plugin = _wave(objs[("dra-driver", "DaemonSet", "nvidia-dra-driver-kubelet-plugin")])
    validator = _wave(objs[("dra-validator", "DaemonSet", "nvidia-dra-validator")])
    exporter = _wave(objs[("dcgm-exporter-dra", "DaemonSet", "nvidia-dcgm-exporter-dra")])
    claim = _wave(objs[("dra-validator", "ResourceClaimTemplate", "nvidia-dra-validator-gpu")])
    driver = max(_wave(o) for (comp, kind, _), o in objs.items() if comp == "driver" and kind == "DaemonSet")
    policy = _wave(objs[("dra-driver", "ValidatingAdmissionPolicy", "resourceslices-policy-nvidia-dra-driver")])
    crd = _wave(objs[("dra-driver", "CustomResourceDefinition", "computedomains.resource.nvidia.com")])
    assert validator > plugin > driver
    assert exporter > plugin
    assert claim > plugin
    assert plugin > policy > crd


def test_driver_manager_contract_for_dra() -> None:
    """k8s-driver-manager (v0.12) pauses gpu.deploy.dra-* and waits for app=nvidia-dra-driver-kubelet-plugin."""
    model = _model()
    objs = objects(model)
    plugin = next(o for o in objs["dra-driver"] if o["kind"] == "DaemonSet")
    assert plugin["spec"]["template"]["metadata"]["labels"]["app"] == "nvidia-dra-driver-kubelet-plugin"
    assert plugin["metadata"]["namespace"] == model.namespace
    for name, label in (("dra-driver", "dra-driver"), ("dra-validator", "dra-validator"), ("dcgm-exporter-dra", "dcgm-exporter-dra")):
        spec = next(o for o in objs[name] if o["kind"] == "DaemonSet")["spec"]["template"]["spec"]
        paused = _node("ubuntu", "24.04", **{f"nvidia.com/gpu.deploy.{label}": "paused-for-driver-upgrade"})
        assert not schedulable(spec, paused) and schedulable(spec, _node("ubuntu", "24.04"))
    labeller = next(o for o in objs["node-labeller"] if o["kind"] == "DaemonSet")
    env = {e["name"]: e.get("value") for e in labeller["spec"]["template"]["spec"]["containers"][0]["env"]}
    assert {"dra-driver", "dra-validator", "dcgm-exporter-dra"} <= set(env["CONTAINER_OPERANDS"].split())
    role = next(o for o in objs["driver"] if o["kind"] == "ClusterRole")
    assert {"apiGroups": ["resource.k8s.io"], "resources": ["resourceclaims"], "verbs": ["get", "list"]} in role["rules"]
    ns = next(o for o in objs["namespace"] if o["kind"] == "Namespace")
    assert ns["metadata"]["labels"]["resource.kubernetes.io/admin-access"] == "true"


def _classes(before: str, after: str) -> tuple[str, ...]:
    from renderer import diff

    a, b = _model(before), _model(after)
    return diff.diff_sides(diff.side_from_models("a", a, {}), diff.side_from_models("b", b, {})).classes()


def test_diff_classes_for_dra_changes() -> None:
    device_plugin_only = MIXED.replace("    resourceAllocation: dra\n", "")
    assert "stack-switch" in _classes(device_plugin_only, MIXED)
    assert "claim-pause" in _classes(MIXED, MIXED + "draDriver:\n  version: v0.5.1\n")
    assert "stack-switch" not in _classes(MIXED, MIXED + "draDriver:\n  version: v0.5.1\n")


def test_mig_or_device_plugin_config_on_a_dra_pool_warns() -> None:
    text = MIXED.replace("    resourceAllocation: dra\n", "    resourceAllocation: dra\n    mig: {config: all-1g.10gb}\n")
    p = _plan(text)
    assert not p.errors
    assert any(w.code == "dra-ignored" and "/nodePools/1/mig" in w.pointer for w in p.warnings), [w.format() for w in p.warnings]


@pytest.mark.parametrize("version", ["sha256:" + "a" * 64, "570", "latest", "v580.1"])
def test_odd_driver_versions_never_crash(version: str) -> None:
    p = _plan(MIXED.replace('"580.95.05"', f'"{version}"'))
    assert all(e.file == "values.yaml" for e in p.errors)


OSES = [("ubuntu", "22.04"), ("ubuntu", "24.04"), ("rhel", "9.4"), ("rhel", "9.6"), ("rocky", "9.4")]


@settings(deadline=None, max_examples=25, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.sampled_from(range(len(OSES))), st.booleans()), min_size=1, max_size=4, unique_by=lambda t: t[0]))
def test_property_one_stack_per_node(pools: list[tuple[int, bool]]) -> None:
    """Any set of pools, any mix of stacks: every GPU node runs the operands of exactly one
    stack, and that is its pool's (a node of no pool gets the device plugin)."""
    lines = ["cluster:", '  kubeVersion: "1.35"', "cdi:", "  enabled: true", "nodePools:"]
    for n, (index, dra) in enumerate(pools):
        os_id, version = OSES[index]
        lines += [f"  - name: p{n}", f"    os: {{id: {os_id}, version: '{version}'}}"]
        if dra:
            lines.append("    resourceAllocation: dra")
    p = _plan("\n".join(lines) + "\n")
    assume(not p.errors)  # pools that would share nodes are refused (pool-overlap)
    assert p.base is not None
    ds = _daemonsets(p.base)
    chosen = {OSES[index]: dra for index, dra in pools}
    for os_id, version in OSES:
        labels = _node(os_id, version)
        dra = [n for n, spec in ds.items() if n.startswith(DRA_STACK) and schedulable(spec, labels)]
        dp = [n for n, spec in ds.items() if n.startswith(DP_STACK) and schedulable(spec, labels)]
        assert bool(dra) != bool(dp), (labels, dra, dp)
        pool = next((k for k in chosen if k == (os_id, version)), None)
        if pool is not None:
            assert bool(dra) == chosen[pool]


def test_dra_exporter_takes_all_gpus_with_admin_access() -> None:
    objs = objects(_model())["dcgm-exporter-dra"]
    rct = next(o for o in objs if o["kind"] == "ResourceClaimTemplate")
    assert rct["spec"]["spec"]["devices"]["requests"][0]["exactly"] == {"deviceClassName": "gpu.nvidia.com", "allocationMode": "All", "adminAccess": True}
    pod = next(o for o in objs if o["kind"] == "DaemonSet")["spec"]["template"]["spec"]
    env = {e["name"]: e.get("value") for e in pod["containers"][0]["env"]}
    assert env["KUBERNETES_ENABLE_DRA"] == "true" and "NVIDIA_VISIBLE_DEVICES" not in env
    assert "runtimeClassName" not in pod
    assert pod["containers"][0]["resources"]["claims"] == [{"name": "admin-gpus"}]


def test_appproject_whitelists_the_dra_kinds() -> None:
    files = render(read_inputs(CASE / "values.yaml", CASE / "overlays"))
    project = yamlio.load(files["argocd/appproject.yaml"])
    cluster = {(k["group"], k["kind"]) for k in project["spec"]["clusterResourceWhitelist"]}
    namespaced = {(k["group"], k["kind"]) for k in project["spec"]["namespaceResourceWhitelist"]}
    assert {
        ("resource.k8s.io", "DeviceClass"),
        ("admissionregistration.k8s.io", "ValidatingAdmissionPolicy"),
        ("admissionregistration.k8s.io", "ValidatingAdmissionPolicyBinding"),
        ("apiextensions.k8s.io", "CustomResourceDefinition"),
    } <= cluster
    assert {("resource.k8s.io", "ResourceClaimTemplate"), ("apps", "Deployment")} <= namespaced


def test_kubelet_plugin_paths_follow_the_kubelet_root_dir() -> None:
    """state-dra-driver puts the plugin registry and the plugin sockets under
    `hostPaths.kubeletRootDir` (env, mounts and host paths): a kubelet elsewhere (k0s, MicroK8s)
    finds the plugin only there."""
    pod = _daemonsets(_model(MIXED + "hostPaths: {kubeletRootDir: /data/kubelet}\n"))["dra-driver/nvidia-dra-driver-kubelet-plugin"]
    assert {v["name"]: v["hostPath"]["path"] for v in pod["volumes"] if v["name"].startswith("plugins")} == {
        "plugins-registry": "/data/kubelet/plugins_registry",
        "plugins": "/data/kubelet/plugins",
    }
    for ctr in pod["containers"]:
        env = {e["name"]: e.get("value") for e in ctr["env"]}
        assert env["KUBELET_REGISTRAR_DIRECTORY_PATH"] == "/data/kubelet/plugins_registry"
        assert env["KUBELET_PLUGINS_DIRECTORY_PATH"] == "/data/kubelet/plugins"
        assert {m["mountPath"] for m in ctr["volumeMounts"] if m["name"].startswith("plugins")} == {"/data/kubelet/plugins_registry", "/data/kubelet/plugins"}


def test_controller_takes_the_daemonsets_settings() -> None:
    """The operator's controller Deployment takes `daemonsets.tolerations` after its three
    control-plane ones (a cluster whose every worker is tainted schedules it), and the priority
    class, pod labels and annotations of `daemonsets.*`."""
    extra = (
        "daemonsets:\n  priorityClassName: gpu-high\n  labels: {team: ml}\n  annotations: {owner: ml}\n"
        "  tolerations: [{key: dedicated, operator: Equal, value: gpu, effect: NoSchedule}]\n"
    )
    objs = [o for o in objects(_model(MIXED + extra))["dra-driver"] if o["kind"] == "Deployment"]
    template = objs[0]["spec"]["template"]
    assert template["spec"]["priorityClassName"] == "gpu-high"
    assert template["spec"]["tolerations"][3:] == [{"key": "dedicated", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"}]
    assert template["metadata"]["labels"]["team"] == "ml" and template["metadata"]["annotations"] == {"owner": "ml"}
    default = next(o for o in objects(_model())["dra-driver"] if o["kind"] == "Deployment")["spec"]["template"]["spec"]
    assert default["priorityClassName"] == "system-node-critical"
    assert default["tolerations"][3:] == [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]  # the chart's default


def test_passthrough_support_mounts_the_hosts_modules_sysfs_and_procfs() -> None:
    """With `featureGates.PassthroughSupport` the operator's `gpus` container mounts /lib/modules
    (read-only), /sys and /proc (Bidirectional) from `type: Directory` host paths."""
    pod = _daemonsets(_model(MIXED + "draDriver: {featureGates: {PassthroughSupport: true}}\n"))["dra-driver/nvidia-dra-driver-kubelet-plugin"]
    gpus = next(ctr for ctr in pod["containers"] if ctr["name"] == "gpus")
    mounts = {m["name"]: (m["mountPath"], m.get("mountPropagation"), m.get("readOnly", False)) for m in gpus["volumeMounts"]}
    assert mounts["lib-modules"] == ("/lib/modules/", "HostToContainer", True)
    assert mounts["sysfs"] == ("/sys/", "Bidirectional", False) and mounts["procfs"] == ("/proc/", "Bidirectional", False)
    assert {v["name"]: v["hostPath"] for v in pod["volumes"] if v["name"] in ("lib-modules", "sysfs", "procfs")} == {
        "lib-modules": {"path": "/lib/modules/", "type": "Directory"},
        "sysfs": {"path": "/sys/", "type": "Directory"},
        "procfs": {"path": "/proc/", "type": "Directory"},
    }
    plain = _daemonsets(_model())["dra-driver/nvidia-dra-driver-kubelet-plugin"]
    assert not {"lib-modules", "sysfs", "procfs"} & {v["name"] for v in plain["volumes"]}


def test_dra_validator_takes_the_dra_drivers_pull_secrets_beside_the_validators() -> None:
    """The operator's DRA validator pod takes `draDriver.imagePullSecrets` (its GPUCluster
    spec); gpu-render's validator pods take `validator.imagePullSecrets`. The DRA validator
    takes both, each name once, so a secret given in either place reaches the pod."""
    extra = "validator: {imagePullSecrets: [reg-a]}\ndraDriver: {imagePullSecrets: [reg-b, reg-a]}\n"
    pod = _daemonsets(_model(MIXED + extra))["dra-validator/nvidia-dra-validator"]
    assert pod["imagePullSecrets"] == [{"name": "reg-a"}, {"name": "reg-b"}]
    only_dra = _daemonsets(_model(MIXED + "draDriver: {imagePullSecrets: [reg-b]}\n"))["dra-validator/nvidia-dra-validator"]
    assert only_dra["imagePullSecrets"] == [{"name": "reg-b"}]
    assert "imagePullSecrets" not in _daemonsets(_model())["dra-validator/nvidia-dra-validator"]
