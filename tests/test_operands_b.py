"""Operands (NFD, node labeller, DCGM, exporter, MIG manager, node status exporter, sandbox):
strict schemas, CRs against their CRDs, per-component on/off, and what output must never hold.
"""

from __future__ import annotations

import copy
import json
import os
import stat
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from jsonschema import Draft7Validator

from renderer import yamlio
from renderer.components import COMPONENTS, dcgm_exporter, facts, nfd, node_labeller
from renderer.inputs import Inputs
from renderer.merge import deep_merge
from renderer.model import Model
from renderer.render import objects, render
from renderer.resolve import resolve
from tests.conftest import strict_validate

DATA = Path(__file__).resolve().parent / "data"

POOLS: list[dict[str, Any]] = [
    {"name": "ubuntu2204", "os": {"id": "ubuntu", "version": "22.04"}, "kernel": "5.15.0-1040-nvidia"},
    {"name": "rhel94", "os": {"id": "rhel", "version": "9.4"}, "kernel": "5.14.0-427.37.1.el9_4.x86_64"},
]

SCENARIOS: dict[str, dict[str, Any]] = {
    "full-container": {
        "dcgm": {"enabled": True},
        "nodeStatusExporter": {"enabled": True},
        "nfd": {"nodefeaturerules": True},
        "dcgmExporter": {
            "enablePodLabels": True,
            "podLabelAllowlistRegex": ["^app$"],
            "hpcJobMapping": {"enabled": True},
            "config": {"name": "custom-metrics", "create": True, "data": "DCGM_FI_DEV_SM_CLOCK, gauge, SM clock.\n"},
        },
        "migManager": {"config": {"name": "custom-mig", "create": True, "data": {"config.yaml": "version: v1\nmig-configs: {}\n"}}},
    },
    "sandbox-kubevirt": {
        "sandboxWorkloads": {"enabled": True, "mode": "kubevirt", "defaultWorkload": "vm-passthrough"},
        "vgpuManager": {
            "enabled": True,
            "repository": "registry.example.com/nvidia",
            "version": "595.91.07",
            "kernelModuleConfig": {"name": "vgpu-kmod", "keys": ["nvidia.conf"]},
        },
    },
    "sandbox-kata": {
        "sandboxWorkloads": {"enabled": True, "mode": "kata", "defaultWorkload": "vm-passthrough"},
        "vgpuManager": {"enabled": True, "repository": "registry.example.com/nvidia", "version": "595.91.07"},
    },
    "nri-no-monitor": {
        "cdi": {"enabled": True, "nriPluginEnabled": True},
        "cluster": {"capabilities": {"serviceMonitor": False}},
        "dcgmExporter": {"env": [{"name": "DCGM_REMOTE_HOSTENGINE_INFO", "value": "localhost:5555"}]},
    },
}

COUPLED: dict[str, set[str]] = {
    "dcgm": {"dcgm-exporter"},  # the exporter falls back to its embedded hostengine
    "ccManager": {"sandbox-validator"},  # its cc-manager-validation init container goes too
    "toolkit": {"mig-manager", "device-plugin"},  # no toolkit, no NVIDIA_CDI_HOOK_PATH
    "migManager": {"node-labeller"},  # no MIG manager, no mig.config seeding (MIG_CONFIG_DEFAULT)
    "devicePlugin": {"operator-validator", "node-labeller"},  # and no per-pool device-plugin.config seeding
}
"""Values key -> components whose objects switching that key off legitimately edits (never
adds or removes one): the operator wires them the same way (remote hostengine, validation
init containers, the toolkit's CDI hook path)."""


def values(name: str) -> dict[str, Any]:
    return deep_merge({"nodePools": copy.deepcopy(POOLS)}, copy.deepcopy(SCENARIOS[name]))


def model(vals: dict[str, Any]) -> Model:
    return resolve(copy.deepcopy(vals), "fleet")


def all_objects(vals: dict[str, Any]) -> list[dict[str, Any]]:
    return [o for objs in objects(model(vals)).values() for o in objs]


def identity(obj: dict[str, Any]) -> tuple[str, str, str, str]:
    return (obj["apiVersion"], obj["kind"], obj["metadata"].get("namespace", ""), obj["metadata"]["name"])


def _strict(schema: Any) -> Any:
    """A CRD schema that also rejects unknown fields (the API server would prune them)."""
    if isinstance(schema, list):
        return [_strict(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out = {k: _strict(v) for k, v in schema.items()}
    if out.get("type") == "object" and "properties" in out and not out.get("x-kubernetes-preserve-unknown-fields"):
        out.setdefault("additionalProperties", False)
    return out


def crd_validator(crds: list[dict[str, Any]], kind: str) -> Draft7Validator:
    for crd in crds:
        if crd["spec"]["names"]["kind"] == kind:
            version = next(v for v in crd["spec"]["versions"] if v.get("storage"))
            schema = _strict(version["schema"]["openAPIV3Schema"])
            schema["properties"]["metadata"] = {"type": "object"}
            return Draft7Validator(schema)
    raise KeyError(kind)


def service_monitor_crd() -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all((DATA / "monitoring.coreos.com_servicemonitors.yaml").read_text()) if d]


@pytest.mark.parametrize("kube_version", [pytest.param("1.31", marks=pytest.mark.slow), "1.35"])  # 1.31: in CI
@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
def test_built_in_objects_pass_strict_schemas(scenario: str, kube_version: str) -> None:
    objs = [o for o in all_objects(values(scenario)) if o["kind"] not in ("NodeFeatureRule", "ServiceMonitor")]
    assert strict_validate(objs, kube_version) == []


@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
def test_custom_resources_match_their_crds(scenario: str) -> None:
    validators = {
        "NodeFeatureRule": crd_validator(facts.nfd_crds(), "NodeFeatureRule"),
        "ServiceMonitor": crd_validator(service_monitor_crd(), "ServiceMonitor"),
    }
    checked = 0
    for obj in all_objects(values(scenario)):
        if obj["kind"] in validators:
            errors = [e.message for e in validators[obj["kind"]].iter_errors(obj)]
            assert errors == [], f"{obj['kind']}/{obj['metadata']['name']}"
            checked += 1
    assert checked or scenario == "nri-no-monitor"


def test_strict_crd_check_catches_a_bad_rule() -> None:
    rule = nfd.gpu_present_rule()
    rule["spec"]["rules"][0]["matchFeatures"][0]["matchExpressions"]["vendor"]["op"] = "Equals"
    rule["spec"]["rules"][0]["labelz"] = {}
    errors = list(crd_validator(facts.nfd_crds(), "NodeFeatureRule").iter_errors(rule))
    assert len(errors) == 2


def _switch_off(vals: dict[str, Any], key: str) -> dict[str, Any]:
    return deep_merge(vals, {key: {"enabled": False}})


def _cases() -> Iterator[tuple[str, str]]:
    """(scenario, values key) for every key that switches an enabled component there."""
    for scenario in sorted(SCENARIOS):
        m = model(values(scenario))
        keys = {comp.key for comp in COMPONENTS if comp.key and comp.enabled(m)}
        for key in sorted(keys):
            yield scenario, key


@pytest.mark.parametrize(("scenario", "key"), list(_cases()))
def test_turning_a_component_off_removes_exactly_its_objects(scenario: str, key: str) -> None:
    """``<key>.enabled: false`` removes the objects of the components it switches, nothing else."""
    before = objects(model(values(scenario)))
    after = objects(model(_switch_off(values(scenario), key)))
    switched = {c.name for c in COMPONENTS if c.key == key and c.name in before}
    assert switched and all(before[name] for name in switched)
    assert set(after) == set(before) - switched
    for name, objs in after.items():
        if name in COUPLED.get(key, set()):
            assert [identity(o) for o in objs] == [identity(o) for o in before[name]], name
        else:
            assert objs == before[name], f"turning {key} off changed {name}"


def test_every_component_is_covered_by_the_on_off_test() -> None:
    covered = {key for _, key in _cases()}
    switchable = {c.key for c in COMPONENTS if c.key}
    assert switchable - covered == set()


def test_nfd_off_leaves_no_nfd_object_at_all() -> None:
    objs = all_objects(_switch_off(values("full-container"), "nfd"))
    nfd_words = ("nfd", "node-feature", "nodefeature")
    # GFD still writes its labels through NFD (the cluster's own NFD then): it may say so
    leftovers = [identity(o) for o in objs if any(w in json.dumps(o["metadata"]).lower() for w in nfd_words) and o["metadata"]["name"] != "gpu-feature-discovery"]
    assert leftovers == []
    assert not [o for o in objs if o["apiVersion"].startswith("nfd.k8s-sigs.io")]


def test_gpu_present_rule_matches_nvidia_display_and_3d_controllers() -> None:
    rule = nfd.gpu_present_rule()["spec"]["rules"][0]
    assert rule["labels"] == {"nvidia.com/gpu.present": "true"}
    (feature,) = rule["matchFeatures"]
    assert feature["feature"] == "pci.device"
    assert feature["matchExpressions"] == {"vendor": {"op": "In", "value": ["10de"]}, "class": {"op": "In", "value": ["0300", "0302"]}}


def test_nfd_worker_on_the_host_network_as_the_nfd_chart() -> None:
    """EKS hybrid nodes reach the API server only from the host: the NFD chart's
    worker.hostNetwork / dnsPolicy / extraEnvs (gpu-render's nfd.worker.*) reach the worker, its
    extra env after its own, and the host network is exempted with the policy as the reason."""
    vals = values("full-container")
    vals["nfd"] = deep_merge(vals.get("nfd", {}), {"worker": {"hostNetwork": True, "dnsPolicy": "Default", "extraEnvs": [{"name": "KUBERNETES_SERVICE_HOST", "value": "api.example"}]}})
    m = model(vals)
    (ds,) = [o for o in objects(m)["nfd"] if o["kind"] == "DaemonSet"]
    pod = ds["spec"]["template"]["spec"]
    assert pod["hostNetwork"] is True and pod["dnsPolicy"] == "Default"
    assert [e["name"] for e in pod["containers"][0]["env"]] == ["NODE_NAME", "POD_NAME", "POD_UID", "KUBERNETES_SERVICE_HOST"]
    assert ds["metadata"]["annotations"]["gpu-render.dev/lint-exempt.host-network"] == "requested by the policy (nfd.worker.hostNetwork: true)"
    (plain,) = [o for o in objects(model(values("full-container")))["nfd"] if o["kind"] == "DaemonSet"]
    assert "hostNetwork" not in plain["spec"]["template"]["spec"] and plain["spec"]["template"]["spec"]["dnsPolicy"] == "ClusterFirstWithHostNet"


def test_nfd_pods_are_placed_as_the_nfd_chart_places_them() -> None:
    """The NFD chart's nodeSelector / affinity / tolerations of each role (gpu-render's
    nfd.{master,worker,gc}.*): a vCluster Platform file of the corpus keeps the master and gc to
    its CPU pool and the worker to its GPU pool, a Civo one the worker to GPU instance types.
    Each is printed only when set; the master keeps the NFD chart's control-plane defaults."""
    affinity = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [{"matchExpressions": [{"key": "gpu", "operator": "Exists"}]}]}}}
    vals = values("full-container")
    vals["nfd"] = deep_merge(
        vals.get("nfd", {}),
        {"master": {"nodeSelector": {"pool": "cpu"}}, "worker": {"affinity": affinity}, "gc": {"nodeSelector": {"pool": "cpu"}, "tolerations": [{"key": "dedicated", "operator": "Exists"}]}},
    )
    pods = {o["metadata"]["name"]: o["spec"]["template"]["spec"] for o in objects(model(vals))["nfd"] if o["kind"] in ("Deployment", "DaemonSet")}
    master, worker, gc = (pods[f"node-feature-discovery-{r}"] for r in ("master", "worker", "gc"))
    assert master["nodeSelector"] == {"pool": "cpu"} and master["tolerations"][0]["key"] == "node-role.kubernetes.io/control-plane"
    assert master["affinity"]["nodeAffinity"]["preferredDuringSchedulingIgnoredDuringExecution"][0]["weight"] == 1
    assert worker["affinity"] == affinity and "nodeSelector" not in worker
    assert gc["nodeSelector"] == {"pool": "cpu"} and gc["tolerations"] == [{"key": "dedicated", "operator": "Exists"}] and "affinity" not in gc
    plain = {o["metadata"]["name"]: o["spec"]["template"]["spec"] for o in objects(model(values("full-container")))["nfd"] if o["kind"] in ("Deployment", "DaemonSet")}
    assert not {"nodeSelector", "tolerations", "affinity"} & set(plain["node-feature-discovery-gc"])


GARDEN_RULE = {
    "name": "gardenlinux-version",
    "labelsTemplate": "{{ range .system.osrelease }}feature.node.kubernetes.io/system-os_release.VERSION_ID=0\n{{ end }}\n",
    "matchFeatures": [{"feature": "system.osrelease", "matchExpressions": {"GARDENLINUX_VERSION": {"op": "Exists"}}}],
}


def test_nfd_custom_sources_go_into_the_worker_config_as_written() -> None:
    vals = values("full-container")
    vals["nfd"] = deep_merge(vals.get("nfd", {}), {"worker": {"customSources": [GARDEN_RULE]}})
    config = yaml.safe_load(nfd.worker_config(model(vals)))
    assert config["sources"]["custom"] == [GARDEN_RULE] and "pci" in config["sources"]
    assert "custom" not in yaml.safe_load(nfd.worker_config(model(values("full-container"))))["sources"]


@pytest.mark.parametrize(("version", "warned"), [("1592.4", True), ("0", False)])
def test_a_custom_rule_that_relabels_the_os_warns_for_pools_that_say_otherwise(version: str, warned: bool) -> None:
    """Garden Linux's rule labels VERSION_ID=0, the version its driver images are tagged with: a
    pool that says 1592.4 selects no node (or pulls an image that does not exist)."""
    from renderer.pipeline import plan

    policy = {
        "nodePools": [{"name": "garden", "os": {"id": "gardenlinux", "version": version}, "kernel": "6.6.62-cloud-amd64"}],
        "nfd": {"worker": {"customSources": [GARDEN_RULE]}},
    }
    found = [p for p in plan(Inputs(yamlio.dump(policy).encode(), "values.yaml")).problems if p.code == "nfd-os-label"]
    assert [(p.pointer, p.severity.name) for p in found] == ([("/nfd/worker/customSources/0", "WARNING")] if warned else [])
    if warned:
        assert "version '0'" in found[0].message and "garden" in found[0].message


def test_nfd_rules_never_manage_deploy_labels() -> None:
    for obj in all_objects(values("full-container")):
        if obj["kind"] == "NodeFeatureRule":
            labels = [k for r in obj["spec"]["rules"] for k in r.get("labels", {})]
            assert not [k for k in labels if k.startswith("nvidia.com/gpu.deploy.")]


def test_dcgm_exporter_wiring() -> None:
    m = model(values("full-container"))
    objs = {identity(o)[1:]: o for o in objects(m)["dcgm-exporter"]}
    ds = objs[("DaemonSet", "gpu-operator", "nvidia-dcgm-exporter")]
    pod = ds["spec"]["template"]["spec"]
    env = {e["name"]: e.get("value") for e in pod["containers"][0]["env"]}
    assert env["DCGM_REMOTE_HOSTENGINE_INFO"] == "nvidia-dcgm:5555"
    assert env["DCGM_EXPORTER_COLLECTORS"] == "/etc/dcgm-exporter/dcgm-metrics.csv"
    assert env[dcgm_exporter.POD_LABELS_ENV] == "true"
    assert pod["automountServiceAccountToken"] is True
    assert ("ClusterRole", "", "nvidia-dcgm-exporter-read-pods") in objs
    assert objs[("ConfigMap", "gpu-operator", "custom-metrics")]["data"] == {"dcgm-metrics.csv": "DCGM_FI_DEV_SM_CLOCK, gauge, SM clock.\n"}


def test_dcgm_exporter_without_pod_metadata_has_no_api_access() -> None:
    objs = objects(model({"nodePools": POOLS}))["dcgm-exporter"]
    assert {o["kind"] for o in objs} == {"ServiceAccount", "DaemonSet", "Service", "ServiceMonitor"}
    (ds,) = [o for o in objs if o["kind"] == "DaemonSet"]
    assert ds["spec"]["template"]["spec"]["automountServiceAccountToken"] is False


def test_dcgm_exporter_kubelet_root_dir() -> None:
    m = model(deep_merge({"nodePools": POOLS}, {"hostPaths": {"kubeletRootDir": "/var/lib/k0s/kubelet"}}))
    (ds,) = [o for o in objects(m)["dcgm-exporter"] if o["kind"] == "DaemonSet"]
    paths = {v["name"]: v.get("hostPath", {}).get("path") for v in ds["spec"]["template"]["spec"]["volumes"]}
    assert paths["pod-gpu-resources"] == "/var/lib/k0s/kubelet/pod-resources"


def test_localhost_hostengine_means_host_network() -> None:
    (ds,) = [o for o in objects(model(values("nri-no-monitor")))["dcgm-exporter"] if o["kind"] == "DaemonSet"]
    pod = ds["spec"]["template"]["spec"]
    assert pod["hostNetwork"] is True
    assert ds["spec"]["template"]["metadata"]["annotations"] == {
        "nvidia.cdi.k8s.io/container.nvidia-dcgm-exporter": "management.nvidia.com/gpu=all"
    }
    assert "runtimeClassName" not in pod


def test_service_monitor_needs_the_capability() -> None:
    kinds = {o["kind"] for o in all_objects(values("nri-no-monitor"))}
    assert "ServiceMonitor" not in kinds


def test_mig_manager_default_profiles_are_the_upstream_data() -> None:
    objs = {o["metadata"]["name"]: o for o in objects(model({"nodePools": POOLS}))["mig-manager"]}
    profiles = yaml.safe_load(objs["default-mig-parted-config"]["data"]["config.yaml"])
    assert profiles["version"] == "v1"
    assert {"all-disabled", "all-enabled", "all-1g.10gb"} <= set(profiles["mig-configs"])
    pod = objs["nvidia-mig-manager"]["spec"]["template"]["spec"]
    env = {e["name"]: e.get("value") for e in pod["containers"][0]["env"]}
    assert env["DEFAULT_CONFIG_FILE"] == "/mig-parted-config/config-default.yaml"
    volume = next(v for v in pod["volumes"] if v["name"] == "mig-parted-config")
    assert volume["configMap"] == {"name": "default-mig-parted-config", "items": [{"key": "config.yaml", "path": "config-default.yaml"}]}


def test_mig_manager_custom_config_replaces_the_default() -> None:
    objs = {o["metadata"]["name"]: o for o in objects(model(values("full-container")))["mig-manager"]}
    assert "default-mig-parted-config" not in objs
    assert objs["custom-mig"]["data"] == {"config.yaml": "version: v1\nmig-configs: {}\n"}
    env = {e["name"]: e.get("value") for e in objs["nvidia-mig-manager"]["spec"]["template"]["spec"]["containers"][0]["env"]}
    assert env["CONFIG_FILE"] == "/mig-parted-config/config.yaml"


def test_vgpu_manager_one_daemonset_per_pool_with_os_suffixed_image() -> None:
    objs = objects(model(values("sandbox-kubevirt")))["vgpu-manager"]
    dss = {o["metadata"]["name"]: o for o in objs if o["kind"] == "DaemonSet"}
    assert sorted(dss) == ["nvidia-vgpu-manager-daemonset-rhel94", "nvidia-vgpu-manager-daemonset-ubuntu2204"]
    images = {n: d["spec"]["template"]["spec"]["containers"][0]["image"] for n, d in dss.items()}
    assert images["nvidia-vgpu-manager-daemonset-rhel94"] == "registry.example.com/nvidia/vgpu-manager:595.91.07-rhel9"
    assert images["nvidia-vgpu-manager-daemonset-ubuntu2204"] == "registry.example.com/nvidia/vgpu-manager:595.91.07-ubuntu22.04"
    terms = dss["nvidia-vgpu-manager-daemonset-rhel94"]["spec"]["template"]["spec"]["affinity"]["nodeAffinity"]
    exprs = terms["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"][0]["matchExpressions"]
    assert {"key": "feature.node.kubernetes.io/system-os_release.ID", "operator": "In", "values": ["rhel"]} in exprs
    pod = dss["nvidia-vgpu-manager-daemonset-rhel94"]["spec"]["template"]["spec"]
    assert {"name": "kernel-module-config", "mountPath": "/drivers/nvidia.conf", "subPath": "nvidia.conf", "readOnly": True} in pod["containers"][0]["volumeMounts"]
    assert {"name": "kernel-module-config", "configMap": {"name": "vgpu-kmod"}} in pod["volumes"]


@pytest.mark.parametrize(
    ("mode", "present", "absent"),
    [
        ("kubevirt", {"sandbox-device-plugin", "vfio-manager", "sandbox-validator"}, {"kata-sandbox-device-plugin", "cc-manager"}),
        ("kata", {"kata-sandbox-device-plugin", "cc-manager", "vfio-manager", "sandbox-validator"}, {"sandbox-device-plugin"}),
    ],
)
def test_sandbox_mode_rules(mode: str, present: set[str], absent: set[str]) -> None:
    names = set(objects(model(values(f"sandbox-{mode}"))))
    assert present <= names
    assert not absent & names
    plain = set(objects(model({"nodePools": POOLS, "sandboxWorkloads": {"enabled": False, "mode": mode}})))
    assert not (present | absent | {"vgpu-manager", "vgpu-device-manager"}) & plain


def test_labeller_seeds_workload_operand_sets() -> None:
    sets = node_labeller.workload_operands(model(values("sandbox-kata")))
    assert sets["vm-passthrough"] == ("kata-sandbox-device-plugin", "sandbox-validator", "vfio-manager", "cc-manager")
    assert "vgpu-manager" in sets["vm-vgpu"]
    assert "device-plugin" in sets["container"]
    (cr,) = [o for o in objects(model({"nodePools": POOLS}))["node-labeller"] if o["kind"] == "ClusterRole"]
    assert cr["rules"] == [{"apiGroups": [""], "resources": ["nodes"], "verbs": ["get", "patch"]}]


def _committed_outputs() -> Iterator[tuple[str, dict[str, str]]]:
    root = Path(__file__).resolve().parent.parent
    folders = [root / "output", *sorted((root / "tests" / "cases").glob("*/expected"))]
    for folder in folders:
        files = {
            p.relative_to(folder).as_posix(): p.read_text(encoding="utf-8")
            for p in sorted(folder.rglob("*"))
            # the incremental build's cache (binary; never committed) is not output
            if p.is_file() and ".gpu-render-cache" not in p.relative_to(folder).parts
        }
        yield folder.relative_to(root).as_posix(), files


def _rendered_scenarios() -> Iterator[tuple[str, dict[str, str]]]:
    for scenario in sorted(SCENARIOS):
        yield scenario, render(Inputs(yamlio.dump(values(scenario)).encode(), "values.yaml"))


def test_no_operator_no_cluster_policy_no_hooks_no_python() -> None:
    """Over the scenarios and every committed output (example and golden cases)."""
    seen = 0
    for _, files in [*_rendered_scenarios(), *_committed_outputs()]:
        seen += 1
        for path, text in files.items():
            assert "helm.sh/hook" not in text, path
            assert "python" not in text.lower(), path
            assert "&id0" not in text, f"{path}: shared objects came out as YAML anchors"
            if not path.endswith(".yaml") or "/templates/" in path:
                continue
            for obj in yamlio.load_all(text):
                if not isinstance(obj, dict) or "kind" not in obj:
                    continue
                assert obj["kind"] not in ("ClusterPolicy", "NVIDIADriver", "GPUCluster"), path
                if obj["kind"] == "Deployment":
                    pod = obj.get("spec", {}).get("template", {}).get("spec", {})
                    images = [str(c.get("image", "")) for c in pod.get("containers") or []]
                    assert not [i for i in images if "/gpu-operator:" in i or "/gpu-operator@" in i], path
    assert seen > len(SCENARIOS)


# --- the seeding script, run with sh against the real kubectl in --local mode -------------

FAKE_KUBECTL = """#!/bin/sh
# Stands in for the API server: the node lives in $NODE_FILE; edits go through real kubectl.
case "$1" in
  get) exec "$REAL_KUBECTL" annotate --local -f "$NODE_FILE" probe=1 -o "$5" ;;
  label)
    "$REAL_KUBECTL" label --local -f "$NODE_FILE" "$4" -o json > "$NODE_FILE.new" || exit 1
    mv "$NODE_FILE.new" "$NODE_FILE"; echo "labelled $4" ;;
  *) exit 2 ;;
esac
"""


def _run_seeder(tmp_path: Path, kubectl: str, m: Model, labels: dict[str, str]) -> dict[str, str]:
    labels = {"nvidia.com/mig.capable": "false", **labels}  # GFD has labelled the node (the seeder waits for it)
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "gpu-1", "labels": labels}}
    node_file = tmp_path / "node.json"
    node_file.write_text(json.dumps(node))
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    fake = bin_dir / "kubectl"
    fake.write_text(FAKE_KUBECTL)
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    (ds,) = [o for o in objects(m)["node-labeller"] if o["kind"] == "DaemonSet"]
    ctr = ds["spec"]["template"]["spec"]["containers"][0]
    env = {e["name"]: e["value"] for e in ctr["env"] if "value" in e}
    env.update(NODE_NAME="gpu-1", NODE_FILE=str(node_file), REAL_KUBECTL=kubectl, PATH=f"{bin_dir}:{os.environ['PATH']}", HOME=str(tmp_path))
    script = ctr["command"][2].replace("exec sleep infinity", "exit 0")
    proc = subprocess.run(["sh", "-c", script], env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    result: dict[str, str] = json.loads(node_file.read_text())["metadata"]["labels"]
    return result


def test_seeder_adds_missing_labels_and_never_overwrites(tmp_path: Path, kubectl: str) -> None:
    labels = _run_seeder(
        tmp_path,
        kubectl,
        model({"nodePools": POOLS}),
        {"nvidia.com/gpu.present": "true", "nvidia.com/gpu.deploy.device-plugin": "paused-for-driver-upgrade", "nvidia.com/gpu.deploy.dcgm": "false"},
    )
    assert labels["nvidia.com/gpu.deploy.device-plugin"] == "paused-for-driver-upgrade"
    assert labels["nvidia.com/gpu.deploy.dcgm"] == "false"
    assert labels["nvidia.com/gpu.deploy.driver"] == "true"
    assert labels["nvidia.com/gpu.deploy.container-toolkit"] == "true"


def test_seeder_follows_workload_and_opt_out(tmp_path: Path, kubectl: str) -> None:
    m = model(values("sandbox-kubevirt"))
    labels = _run_seeder(tmp_path, kubectl, m, {"nvidia.com/gpu.workload.config": "vm-vgpu"})
    assert labels["nvidia.com/gpu.deploy.vgpu-manager"] == "true"
    assert labels["nvidia.com/gpu.deploy.vfio-manager"] == "false"
    assert labels["nvidia.com/gpu.deploy.device-plugin"] == "false"
    out = _run_seeder(tmp_path, kubectl, m, {"nvidia.com/gpu.deploy.operands": "false"})
    assert {v for k, v in out.items() if k.startswith("nvidia.com/gpu.deploy.") and k != "nvidia.com/gpu.deploy.operands"} == {"false"}


@pytest.mark.parametrize(
    ("section", "warned"),
    [
        ({"validator": {"repository": "nvcr.io/nvidia/cloud-native", "image": "gpu-operator-validator"}}, ["/validator/image"]),
        ({"validator": {"repository": "nvcr.io/nvidia/cloud-native", "image": "gpu-operator-validator", "version": "v25.3.0"}}, []),
        ({"validator": {"repository": "mirror.example/nvidia"}}, []),
        ({"nodeStatusExporter": {"repository": "nvcr.io/nvidia/cloud-native", "image": "gpu-operator-validator"}}, []),
        ({"nodeStatusExporter": {"enabled": True, "repository": "nvcr.io/nvidia/cloud-native", "image": "gpu-operator-validator"}}, ["/nodeStatusExporter/image"]),
    ],
)
def test_the_validators_retired_image_warns_when_the_release_picks_its_tag(section: dict[str, Any], warned: list[str]) -> None:
    """A chart values file of v25.3 or older names nvcr.io/nvidia/cloud-native/gpu-operator-validator
    with no version: the tag is then the release's (v26.7.0), which that retired image never had."""
    from renderer.pipeline import plan

    problems = plan(Inputs(yamlio.dump(section).encode(), "values.yaml")).problems
    found = [p for p in problems if p.code == "retired-image"]
    assert [(p.pointer, p.severity.name) for p in found] == [(w, "WARNING") for w in warned]
    if warned:
        assert "gpu-operator-validator:v26.7.0 does not exist" in found[0].message


@pytest.mark.parametrize(
    ("monitor", "release", "warned"),
    [
        ({"interval": "5s"}, "v26.7", ["/dcgmExporter/serviceMonitor/interval"]),  # the v26.7 default timeout, 10s
        ({"interval": "30s", "scrapeTimeout": "1m"}, "v26.7", ["/dcgmExporter/serviceMonitor/scrapeTimeout"]),
        ({"interval": "1m30s", "scrapeTimeout": "1m"}, "v26.7", []),
        ({"interval": "10s"}, "v26.7", []),  # equal is accepted
        ({"interval": "5s", "scrapeTimeout": "5s"}, "v26.7", []),
        ({"interval": "5s"}, "v26.3", []),  # no scrapeTimeout before v26.7: Prometheus caps its own default
        ({"interval": "5s", "enabled": False}, "v26.7", []),
    ],
)
def test_a_scrape_timeout_longer_than_the_interval_warns(monitor: dict[str, Any], release: str, warned: list[str]) -> None:
    """From v26.7 the chart sets serviceMonitor.scrapeTimeout: 10s, and the operator writes it
    into the ServiceMonitor as gpu-render does; a v26.3 values file with interval: 5s then gets
    a ServiceMonitor the Prometheus operator rejects (scrapeTimeout greater than scrapeInterval):
    no GPU metric at all, and nothing said. (Found in a k3s DRA values file of the corpus.)"""
    from renderer.pipeline import plan

    policy = {"cluster": {"operatorRelease": release}, "dcgmExporter": {"serviceMonitor": {"enabled": True, **monitor}}}
    p = plan(Inputs(yamlio.dump(policy).encode(), "values.yaml"))
    found = [x for x in p.problems if x.code == "scrape-timeout"]
    assert [(x.pointer, x.severity.name) for x in found] == [(w, "WARNING") for w in warned]
    assert p.base is not None
    monitors = [o for o in objects(p.base)["dcgm-exporter"] if o["kind"] == "ServiceMonitor"]
    if monitor.get("enabled", True):
        endpoint = monitors[0]["spec"]["endpoints"][0]
        assert endpoint["interval"] == monitor["interval"]  # rendered as the operator renders it
        assert endpoint.get("scrapeTimeout") == (monitor.get("scrapeTimeout", "10s") if release == "v26.7" else None)


def test_validator_args_replace_the_idle_loop_as_the_operator_does_with_a_warning() -> None:
    """TransformValidatorShared sets the main container's args of the operator and sandbox
    validators to validator.args; `sh -c` then runs the first one (it was dropped here, warned as
    not rendered yet)."""
    from renderer.pipeline import plan

    p = plan(Inputs(yamlio.dump({"validator": {"args": ["sleep infinity"]}, "sandboxWorkloads": {"enabled": True}}).encode(), "values.yaml"))
    assert [(x.pointer, x.severity.name) for x in p.problems if x.code == "validator-args"] == [("/validator/args", "WARNING")]
    assert not [x for x in p.problems if x.code == "no-effect"]
    assert p.base is not None
    built = objects(p.base)
    for comp in ("operator-validator", "sandbox-validator"):
        ds = next(o for o in built[comp] if o["kind"] == "DaemonSet")
        main = ds["spec"]["template"]["spec"]["containers"][0]
        assert main["command"] == ["sh", "-c"] and main["args"] == ["sleep infinity"], comp


def test_the_vgpu_and_vfio_managers_pull_their_driver_manager_with_its_secrets() -> None:
    """transformDriverManagerInitContainer adds driverManager.imagePullSecrets to the pod before
    the main image's (they were accepted and warned as not rendered yet)."""
    from renderer.pipeline import plan

    manager = {"driverManager": {"imagePullSecrets": ["manager-secret"]}, "imagePullSecrets": ["main-secret", "manager-secret"]}
    vals = {
        "nodePools": [{"name": "a", "os": {"id": "ubuntu", "version": "22.04"}}],
        "sandboxWorkloads": {"enabled": True},
        "vgpuManager": {"enabled": True, "repository": "registry.example.com/nvidia", "version": "580.1", **manager},
        "vfioManager": manager,
    }
    p = plan(Inputs(yamlio.dump(vals).encode(), "values.yaml"))
    assert not [x.format() for x in p.problems if "driverManager" in x.pointer]
    assert p.base is not None
    built = objects(p.base)
    for comp in ("vgpu-manager", "vfio-manager"):
        ds = next(o for o in built[comp] if o["kind"] == "DaemonSet")
        assert ds["spec"]["template"]["spec"]["imagePullSecrets"] == [{"name": "manager-secret"}, {"name": "main-secret"}], comp


VALIDATED_PODS = {
    "gpu-feature-discovery": "gfd",
    "nvidia-container-toolkit-daemonset": "toolkit",
    "nvidia-device-plugin-daemonset": "devicePlugin",
    "nvidia-device-plugin-mps-control-daemon": "devicePlugin",
    "nvidia-dcgm": "dcgm",
    "nvidia-dcgm-exporter": "dcgmExporter",
    "nvidia-mig-manager": "migManager",
    "nvidia-sandbox-device-plugin-daemonset": "sandboxDevicePlugin",
    "nvidia-kata-sandbox-device-plugin-daemonset": "kataSandboxDevicePlugin",
    "nvidia-vgpu-device-manager": "vgpuDeviceManager",
}
"""The pods whose Transform calls transformValidationInitContainer first, and whose section's own
pull secrets it adds after the validator's (the MPS control daemon's are the device plugin's)."""


def _pods_pull_secrets(vals: dict[str, Any]) -> dict[str, list[str]]:
    """Each DaemonSet's and Deployment's pull secrets' names, by object name."""
    from renderer.pipeline import plan

    p = plan(Inputs(yamlio.dump(vals).encode(), "values.yaml"))
    assert not p.errors, [x.format() for x in p.errors]
    assert p.base is not None
    assert not [x.format() for x in p.problems if "imagePullSecrets" in x.pointer]
    out: dict[str, list[str]] = {}
    for objs in objects(p.base).values():
        for o in objs:
            if o["kind"] in ("DaemonSet", "Deployment"):
                out[o["metadata"]["name"]] = [ref["name"] for ref in o["spec"]["template"]["spec"].get("imagePullSecrets") or []]
    return out


@pytest.mark.parametrize("mode", ["kubevirt", "kata"])
def test_validator_pull_secrets_go_first_on_the_pods_with_validation_init_containers(mode: str) -> None:
    """The operator's transformValidationInitContainer adds validator.imagePullSecrets to the pods
    of GFD, the toolkit, the device plugin and MPS daemon, DCGM, the exporter, the MIG manager, the
    sandbox plugins and the vGPU device manager, then their Transform adds their own: the
    validator's first, each name once. Every other pod (driver, managers, NFD, the DRA operands,
    which the operator's GPUCluster renders with their own section's) keeps its own list only."""
    vals: dict[str, Any] = {
        "cluster": {"kubeVersion": "1.34"},
        "cdi": {"enabled": True},
        "nodePools": [
            {"name": "a", "os": {"id": "ubuntu", "version": "22.04"}},
            {"name": "gb", "os": {"id": "ubuntu", "version": "24.04"}, "runtime": "containerd", "runtimeVersion": "2.0.5", "resourceAllocation": "dra"},
        ],
        "sandboxWorkloads": {"enabled": True, "mode": mode},
        "validator": {"imagePullSecrets": ["val", "shared", "val"]},
        "dcgm": {"enabled": True},
        "nodeStatusExporter": {"enabled": True},
    }
    own = ("driver", "nodeStatusExporter", "vfioManager", "ccManager", "nfd", "nodeLabeller", "draDriver", *VALIDATED_PODS.values())
    for key in own:
        vals.setdefault(key, {})["imagePullSecrets"] = [key, {"name": "shared"}]
    pods = _pods_pull_secrets(vals)
    validated = {name: key for name, key in VALIDATED_PODS.items() if name in pods}
    assert ("nvidia-kata-sandbox-device-plugin-daemonset" in validated) == (mode == "kata")
    assert len(validated) == 9, sorted(validated)
    for name, key in validated.items():
        assert pods[name] == ["val", "shared", key], name
    assert pods["nvidia-operator-validator"] == ["val", "shared"]
    for name, got in pods.items():
        if name not in validated and "validator" not in name:
            assert "val" not in got, (name, got)
    assert pods["nvidia-dcgm-exporter-dra"] == ["dcgmExporter", "shared"]
    assert pods["nvidia-dra-driver-kubelet-plugin"] == ["draDriver", "shared"]
    assert pods["nvidia-driver-daemonset-a"][:2] == ["driver", "shared"]
    assert pods["nvidia-node-status-exporter"] == ["nodeStatusExporter", "shared"]


def test_validator_pull_secrets_alone_and_none() -> None:
    """No list: no imagePullSecrets on the pods; the validator's alone: the same names on each
    validated pod, in the validator's order."""
    base: dict[str, Any] = {"nodePools": [{"name": "a", "os": {"id": "ubuntu", "version": "22.04"}}]}
    assert not any(_pods_pull_secrets(base).values())
    pods = _pods_pull_secrets({**base, "validator": {"imagePullSecrets": [{"name": "b"}, "a"]}})
    for name in ("gpu-feature-discovery", "nvidia-container-toolkit-daemonset", "nvidia-device-plugin-daemonset", "nvidia-dcgm-exporter", "nvidia-mig-manager"):
        assert pods[name] == ["b", "a"], name
    assert pods["nvidia-driver-daemonset-a"] == []
