"""Bad input: each case asserts the exact ``file:line:col: pointer: message`` (and hint).

Inputs go through the real pipeline (load, merge, schema, semantic checks) as bytes, the way
the CLI feeds them; one line per expected problem, in the yamllint style.
"""

from __future__ import annotations

import json

import pytest

from renderer.inputs import ClusterInput, Inputs
from renderer.pipeline import plan

POOL = "nodePools:\n  - name: a\n    os: {id: ubuntu, version: '22.04'}\n"


def found(values: str, overlay: str | None = None) -> list[str]:
    clusters = () if overlay is None else (ClusterInput("prod", overlay.encode(), "overlays/prod/values.yaml"),)
    result = plan(Inputs(values.encode(), "values.yaml", clusters))
    return [p.format() for p in result.problems]


RELEASE_V26_3 = (
    "values.yaml:4:28: /cluster/operatorRelease: warning: operator release v26.3 deploys its own chart's component versions; gpu-render renders v26.3's objects "
    "with its default images (the newest release's) where the policy sets no version: driver, driver.manager, toolkit, devicePlugin, dcgmExporter, gfd, migManager, "
    "validator (pin what that release deploys: driver 580.126.20, driver.manager v0.11.0, toolkit v1.19.1, devicePlugin v0.19.3, dcgmExporter 4.5.3-4.8.2-distroless, "
    "gfd v0.19.3, migManager v0.14.2, validator v26.3.3 (each as <section>.version))"
)
RELEASE_DEFAULTS_V26_3 = (
    "values.yaml:4:28: /cluster/operatorRelease: warning: operator release v26.3's chart has other defaults than gpu-render's (the newest release's) for keys "
    "the policy leaves out: dcgmExporter.serviceMonitor.enabled (set what that release's chart sets to deploy what it deploys: "
    "dcgmExporter.serviceMonitor.enabled: false (rendered: true))"
)

CASES = [
    # (id, values, overlay, expected formatted problems)
    ("unknown-top-key", "devicePlugn:\n  enabled: true\n", None,
     ["values.yaml:1:1: /devicePlugn: unknown key 'devicePlugn' (did you mean 'devicePlugin'?)"]),
    ("unknown-nested-key", "driver:\n  verison: '550'\n", None,
     ["values.yaml:2:3: /driver/verison: unknown key 'verison' (did you mean 'version'?)"]),
    # `enable` for `enabled` (a k3s values file of the corpus's search): the section's own key
    # before the other sections that have `enable`
    ("unknown-key-inflected", "driver:\n  enable: true\n", None,
     ["values.yaml:2:3: /driver/enable: unknown key 'enable' (did you mean 'enabled'?)"]),
    # a near spelling of a key that has no effect says so: the hint never sends the user to a
    # key that would do nothing
    ("unknown-key-near-a-no-effect-key", "driver:\n  useOpenKmods: true\n", None,
     ["values.yaml:2:3: /driver/useOpenKmods: unknown key 'useOpenKmods' (did you mean 'useOpenKernelModules'? That key has no effect: read by charts "
      "23.9 to 24.9 only (the open kernel modules); the operator reads driver.kernelModuleType since v25.3: use it)"]),
    # the chart deploys no driver of its values (NVIDIADriver resources made beside it do): a
    # driver per pool here would be a different deployment
    ("driver-crd-external", POOL + "driver:\n  nvidiaDriverCRD: {enabled: true, deployDefaultCR: false}\n", None,
     ["values.yaml:5:3: /driver/nvidiaDriverCRD: warning: 'driver.nvidiaDriverCRD' has no effect: no NVIDIADriver CRs are rendered; set per-pool driver settings in nodePools[].driver",
      "values.yaml:5:53: /driver/nvidiaDriverCRD/deployDefaultCR: driver.nvidiaDriverCRD.enabled with deployDefaultCR false: the GPU Operator deploys no driver from "
      "these values, only the NVIDIADriver resources created beside its chart; gpu-render would deploy the driver of driver.* on every node pool (write each "
      "NVIDIADriver as the driver settings of the node pool it selects (nodePools[].driver: version, nodeSelector, ...) and remove driver.nvidiaDriverCRD; "
      "or set driver.enabled: false to deploy no driver)"]),
    # up to v26.3 the default NVIDIADriver carries the nodeSelector: its driver runs on those
    # nodes only; v26.7 prints none (no effect), nor does a disabled driver deploy anything
    ("driver-crd-node-selector-v26.3", POOL + "cluster: {operatorRelease: v26.3}\ndriver:\n  nvidiaDriverCRD: {enabled: true, nodeSelector: {gpu-driver: '550'}}\n", None,
     [RELEASE_V26_3, RELEASE_DEFAULTS_V26_3,
      "values.yaml:6:3: /driver/nvidiaDriverCRD: warning: 'driver.nvidiaDriverCRD' has no effect: no NVIDIADriver CRs are rendered; set per-pool driver settings in nodePools[].driver",
      "values.yaml:6:50: /driver/nvidiaDriverCRD/nodeSelector: driver.nvidiaDriverCRD.nodeSelector: the v26.3 chart gives it to the default NVIDIADriver, whose driver "
      "then runs only on nodes with these labels; gpu-render renders each node pool's driver on all of that pool's nodes (give each node pool whose nodes carry these "
      "labels them as nodePools[].driver.nodeSelector, list no pool for the other nodes, and remove driver.nvidiaDriverCRD)"]),
    ("driver-crd-node-selector-v26.7", POOL + "driver:\n  nvidiaDriverCRD: {enabled: true, nodeSelector: {gpu-driver: '550'}}\n", None,
     ["values.yaml:5:3: /driver/nvidiaDriverCRD: warning: 'driver.nvidiaDriverCRD' has no effect: no NVIDIADriver CRs are rendered; set per-pool driver settings in nodePools[].driver"]),
    # the default NVIDIADriver of another type: the chart's vGPU host manager of driver.*; without
    # enabled the chart makes no NVIDIADriver and the key says nothing (the ClusterPolicy's GPU driver)
    ("driver-crd-driver-type", POOL + "driver:\n  nvidiaDriverCRD: {enabled: true, driverType: vgpu-host-manager}\n", None,
     ["values.yaml:5:3: /driver/nvidiaDriverCRD: warning: 'driver.nvidiaDriverCRD' has no effect: no NVIDIADriver CRs are rendered; set per-pool driver settings in nodePools[].driver",
      "values.yaml:5:48: /driver/nvidiaDriverCRD/driverType: driver.nvidiaDriverCRD.driverType vgpu-host-manager: the chart's default NVIDIADriver is then a vGPU host "
      "manager built from driver.*, not a GPU driver; gpu-render would deploy the GPU driver of driver.* on every node pool (set nodePools[].driver.driverType: "
      "vgpu-host-manager on the pools of the vGPU hosts (with their driver image) and remove driver.nvidiaDriverCRD)"]),
    ("driver-crd-driver-type-off", POOL + "driver:\n  nvidiaDriverCRD: {driverType: vgpu-host-manager}\n", None,
     ["values.yaml:5:3: /driver/nvidiaDriverCRD: warning: 'driver.nvidiaDriverCRD' has no effect: no NVIDIADriver CRs are rendered; set per-pool driver settings in nodePools[].driver"]),
    ("driver-crd-external-driver-off", POOL + "driver:\n  enabled: false\n  nvidiaDriverCRD: {enabled: true, deployDefaultCR: false}\n", None,
     ["values.yaml:6:3: /driver/nvidiaDriverCRD: warning: 'driver.nvidiaDriverCRD' has no effect: no NVIDIADriver CRs are rendered; set per-pool driver settings in nodePools[].driver"]),
    # every image moved to a mirror but gpu-render's own node labeller: a warning at the first
    # repository; none once the labeller's is set too (or for NVIDIA's own registry)
    ("own-image-registry", POOL + "driver: {repository: mirror.example:5000/nvidia}\ntoolkit: {repository: mirror.example:5000/nvidia}\n"
     "devicePlugin: {repository: mirror.example:5000/nvidia}\n", None,
     ["values.yaml:4:22: /driver/repository: warning: every image repository the policy sets is on mirror.example:5000, but the node labeller (gpu-render's own "
      "DaemonSet, which seeds the deploy labels the operator's controller sets) pulls registry.k8s.io/kubectl:v1.35.0 (mirror that image and set "
      "nodeLabeller.repository (and imagePullSecrets), or set nodeLabeller.enabled: false where node provisioning sets the deploy labels)"]),
    ("own-image-registry-set", POOL + "driver: {repository: mirror.example:5000/nvidia}\ntoolkit: {repository: mirror.example:5000/nvidia}\n"
     "devicePlugin: {repository: mirror.example:5000/nvidia}\nnodeLabeller: {repository: mirror.example:5000/k8s}\n", None, []),
    ("own-image-registry-nvcr", POOL + "driver: {repository: nvcr.io/nvidia}\ntoolkit: {repository: nvcr.io/nvidia/k8s}\ndevicePlugin: {repository: nvcr.io/nvidia}\n", None, []),
    # an NFD installed apart: the operator labels gpu.present from its labels, gpu-render does not
    ("gpu-present-unset", POOL + "nfd: {enabled: false}\n", None,
     ["values.yaml:4:16: /nfd/enabled: warning: with nfd.enabled false no NFD object is rendered, not even the NodeFeatureRule nvidia-gpu-present: every operand "
      "selects nodes labelled nvidia.com/gpu.present=true, which the operator sets from an existing NFD's labels and gpu-render does not, so none schedules until "
      "the nodes carry it (apply the NodeFeatureRule nvidia-gpu-present to the NFD you run (docs/controller-less.md), or label the GPU nodes "
      "nvidia.com/gpu.present=true when they are provisioned)"]),
    # cc-manager switched on for VMs in the KubeVirt mode: before v26.3 it ran, from v26.3 only with kata
    ("sandbox-gated-mode", POOL + "sandboxWorkloads: {enabled: true}\nccManager: {enabled: true}\n", None,
     ["values.yaml:5:22: /ccManager/enabled: warning: ccManager.enabled: from v26.3 the GPU Operator deploys cc-manager only with sandboxWorkloads.mode kata "
      "(before, with any mode), and the mode here is kubevirt: none is deployed (set sandboxWorkloads.mode: kata for confidential computing, or remove the switch)"]),
    # an older release's chart default that is not gpu-render's: v26.3 creates no ServiceMonitor
    # unless asked (v26.7 does); said at the release, gone once the key is written
    ("release-defaults", POOL + "cluster: {operatorRelease: v26.3}\n", None, [RELEASE_V26_3, RELEASE_DEFAULTS_V26_3]),
    ("release-defaults-written", POOL + "cluster: {operatorRelease: v26.3}\ndcgmExporter: {serviceMonitor: {enabled: true}}\n", None, [RELEASE_V26_3]),
    # the driver switched off: no driver pod mounts the ConfigMap, nothing to warn about
    ("config-map-keys-driver-off", POOL + "driver:\n  enabled: false\n  kernelModuleConfig: {name: kernel-module-params}\n", None, []),
    # docker on a Kubernetes without dockershim (a v1.8 file's chart default, moved as written)
    ("docker-runtime", POOL + "cluster: {containerRuntime: docker}\n", None,
     ["values.yaml:4:29: /cluster/containerRuntime: warning: docker on Kubernetes 1.35, which has no dockershim since 1.24: nodes run Docker only through "
      "cri-dockerd, and on containerd nodes the toolkit would configure a runtime they do not use (set it to what the nodes run (gpu-render nodes import "
      "reads it from them); keep docker only for cri-dockerd nodes)"]),
    # a toolkit host path written without its leading / (a public k3s values file): mounted as written, as the operator does
    ("relative-host-path", POOL + "toolkit:\n  env:\n    - {name: CONTAINERD_CONFIG, value: var/lib/rancher/k3s/agent/etc/containerd/config.toml}\n"
     "    - {name: CONTAINERD_SOCKET, value: /run/k3s/containerd/containerd.sock}\n    - {name: NOT_A_PATH, value: relative}\n", None,
     ["values.yaml:6:40: /toolkit/env/0/value: warning: CONTAINERD_CONFIG is a relative host path ('var/lib/rancher/k3s/agent/etc/containerd/config.toml'): "
      "the toolkit's host volume is mounted as written, which the kubelet resolves against its own working directory, not the node's root "
      "(write it from the root: '/var/lib/rancher/k3s/agent/etc/containerd/config.toml')"]),
    # manual upgrades: the operator drains nothing with autoUpgrade off, gpu-render's driver manager does
    ("manual-upgrade-drain", POOL + "driver:\n  upgradePolicy:\n    autoUpgrade: false\n    drain: {enable: true}\n", None,
     ["values.yaml:7:21: /driver/upgradePolicy/drain/enable: warning: drain.enable with autoUpgrade false: the GPU Operator's upgrade controller is off then "
      "and nothing drains the node; gpu-render's driver manager drains it whenever a driver pod is replaced (keep it to have gpu-render drain on a manual "
      "upgrade (docs/controller-less.md), or remove it to upgrade as the operator's driver manager does (GPU pods evicted, no drain))"]),
    ("manual-upgrade-drain-auto", POOL + "driver:\n  upgradePolicy:\n    drain: {enable: true}\n", None, []),
    # k8s-driver-manager holds one force/timeout/emptyDir setting for the GPU pod eviction and the drain
    ("drain-shared-settings", POOL + "driver:\n  upgradePolicy:\n    drain: {enable: true, force: true}\n", None,
     ["values.yaml:6:34: /driver/upgradePolicy/drain/force: warning: gpuPodDeletion.force (false) and drain.force (true) differ with drain.enable: the "
      "operator's upgrade controller deletes GPU pods with the one and drains with the other; k8s-driver-manager has one setting for both (DRAIN_USE_FORCE), "
      "so gpu-render gives it force if either says so (set gpuPodDeletion.force and drain.force alike to say which one both steps use)"]),
    ("drain-shared-settings-alike", POOL + "driver:\n  upgradePolicy:\n    gpuPodDeletion: {force: true}\n    drain: {enable: true, force: true}\n", None, []),
    ("drain-shared-settings-drain-off", POOL + "driver:\n  upgradePolicy:\n    drain: {force: true}\n", None, []),
    ("unknown-key-wrong-case", "DevicePlugin: {}\n", None,
     ["values.yaml:1:1: /DevicePlugin: unknown key 'DevicePlugin' (did you mean 'devicePlugin'?)"]),
    ("unknown-keys-all-reported", "driver:\n  foo: 1\n  bar: 2\n", None,
     ["values.yaml:2:3: /driver/foo: unknown key 'foo' (no GPU Operator chart release (1.0 to 26.7) has driver.foo: Helm ignored it there, so the operator never read it; remove it)",
      "values.yaml:3:3: /driver/bar: unknown key 'bar' (no GPU Operator chart release (1.0 to 26.7) has driver.bar: Helm ignored it there, so the operator never read it; remove it)"]),
    # a key the GPU Operator chart has in no release (a real RKE2 values file sets validator.enabled)
    ("unknown-key-no-chart-release-has", "validator:\n  enabled: true\n", None,
     ["values.yaml:2:3: /validator/enabled: unknown key 'enabled' (no GPU Operator chart release (1.0 to 26.7) has validator.enabled: "
      "Helm ignored it there, so the operator never read it; remove it)"]),
    # a key of an older chart release, written straight into the policy: the importer's rule
    ("unknown-key-of-an-old-chart-release", "gfd:\n  migStrategy: single\n", None,
     ["values.yaml:2:3: /gfd/migStrategy: unknown key 'migStrategy' (a GPU Operator chart key: gpu-render import-operator-values moves it "
      "to mig.strategy (became the fleet-wide mig.strategy in v1.7))"]),
    # gpu-render's own sections are no chart keys: no chart hint there
    ("unknown-key-in-own-section", "cluster:\n  foo: 1\n", None,
     ["values.yaml:2:3: /cluster/foo: unknown key 'foo'"]),
    ("unknown-key-in-pool-driver", POOL + "    driver:\n      usePrecompield: true\n", None,
     ["values.yaml:5:7: /nodePools/0/driver/usePrecompield: unknown key 'usePrecompield' (did you mean 'usePrecompiled'?)"]),
    ("key-in-the-wrong-section", "kubeVersion: '1.35'\n", None,
     ["values.yaml:1:1: /kubeVersion: unknown key 'kubeVersion' ('kubeVersion' is a key of cluster)"]),
    # a key of another section says more than a near spelling: a top-level nodeSelector (Helm
    # ignored it, a Flux HelmRelease of the corpus) is no misspelt nodeLabeller
    ("key-of-other-sections-over-a-near-spelling", "nodeSelector:\n  node-pool: gpu\n", None,
     ["values.yaml:1:1: /nodeSelector: unknown key 'nodeSelector' ('nodeSelector' is a key of operator, driver.nvidiaDriverCRD, nfd.gc and 3 more; "
      "no GPU Operator chart release (1.0 to 26.7) has nodeSelector: Helm ignored it there, so the operator never read it; remove it)"]),
    # the NFD subchart's key written under daemonsets (an Argo CD app of the corpus): where it
    # belongs, and that Helm ignored it where it is
    ("chart-key-in-the-wrong-chart-section", "daemonsets:\n  node-feature-discovery:\n    worker: {}\n", None,
     ["values.yaml:2:3: /daemonsets/node-feature-discovery: unknown key 'node-feature-discovery' ('node-feature-discovery' is a key of the top level; "
      "no GPU Operator chart release (1.0 to 26.7) has daemonsets.node-feature-discovery: Helm ignored it there, so the operator never read it; remove it)"]),
    # label syntax, as the API server checks it: a template's placeholder left in a label value,
    # a bad key prefix, an annotation key with a space
    ("label-value-placeholder", POOL + "daemonsets:\n  labels:\n    owner: <REPO>-admin\n", None,
     ["values.yaml:6:12: /daemonsets/labels/owner: '<REPO>-admin' is not a valid label value: a label value is empty or 1 to 63 letters, digits, '-', '_' or '.', "
      "starting and ending with a letter or digit (Kubernetes refuses the object that carries it (a placeholder left by a template?))"]),
    ("label-key-prefix", POOL + "daemonsets:\n  labels:\n    Example.COM/team: gpu\n", None,
     ["values.yaml:6:5: /daemonsets/labels/Example.COM~1team: 'Example.COM/team' is not a valid label key: its prefix 'Example.COM' is not a DNS subdomain "
      "(lowercase letters, digits, '-' and '.', at most 253 characters) (Kubernetes refuses the object that carries it)"]),
    ("annotation-key", POOL + "daemonsets:\n  annotations:\n    'cost center': platform\n", None,
     ["values.yaml:6:5: /daemonsets/annotations/cost center: 'cost center' is not a valid annotation key: its name 'cost center' is not 1 to 63 letters, digits, "
      "'-', '_' or '.', starting and ending with a letter or digit (Kubernetes refuses the object that carries it)"]),
    ("key-of-the-pool-driver-in-fleet-driver", "driver:\n  tolerations: []\n", None,
     ["values.yaml:2:3: /driver/tolerations: unknown key 'tolerations' (a GPU Operator chart key: gpu-render import-operator-values moves it "
      "to daemonsets.tolerations (per-component scheduling became the fleet-wide daemonsets.* keys in v1.8))"]),
    ("bad-enum", "mig:\n  strategy: Mixed\n", None,
     ['values.yaml:2:13: /mig/strategy: "Mixed" is not one of the allowed values (did you mean \'mixed\'? allowed: "none", "single", "mixed")']),
    ("bad-enum-kernel-modules", "driver:\n  kernelModuleType: opn\n", None,
     ['values.yaml:2:21: /driver/kernelModuleType: "opn" is not one of the allowed values (did you mean \'open\'? allowed: "auto", "open", "proprietary")']),
    ("bad-enum-pull-policy", "toolkit:\n  imagePullPolicy: always\n", None,
     ['values.yaml:2:20: /toolkit/imagePullPolicy: "always" is not one of the allowed values (did you mean \'Always\'? allowed: "Always", "IfNotPresent", "Never")']),
    ("wrong-type-deep-in-list", "daemonsets:\n  tolerations:\n    - key: a\n      tolerationSeconds: soon\n", None,
     ['values.yaml:4:26: /daemonsets/tolerations/0/tolerationSeconds: expected an integer, got string "soon"']),
    ("env-value-not-string", "toolkit:\n  env:\n    - name: A\n      value: 1\n", None,
     ["values.yaml:4:14: /toolkit/env/0/value: expected a string, got number 1 (quote the value to keep it a string)"]),
    ("env-value-and-valueFrom", "toolkit:\n  env:\n    - name: A\n      value: x\n      valueFrom: {}\n", None,
     ["values.yaml:3:7: /toolkit/env/0: must not set both 'value' and 'valueFrom'"]),
    ("unquoted-version-float", "cluster:\n  kubeVersion: 1.30\n", None,
     ["values.yaml:2:16: /cluster/kubeVersion: expected a string, got number 1.3 (quote the value to keep it a string: YAML reads unquoted 1.30 as the number 1.3)"]),
    ("quoted-boolean", "psa:\n  enabled: 'yes'\n", None,
     ['values.yaml:2:12: /psa/enabled: expected a boolean, got string "yes" (write true or false without quotes)']),
    ("mapping-instead-of-list", "daemonsets:\n  tolerations:\n    key: a\n", None,
     ['values.yaml:3:5: /daemonsets/tolerations: expected a list, got mapping {"key": "a"} (list items start with \'- \')']),
    ("int-or-percent-bad-string", "daemonsets:\n  rollingUpdate:\n    maxUnavailable: lots\n", None,
     ['values.yaml:3:21: /daemonsets/rollingUpdate/maxUnavailable: "lots" does not match the pattern ^[0-9]+%?$ (A number of nodes or a percentage of them, e.g. 1 or 25%)']),
    ("int-or-percent-boolean", "daemonsets:\n  rollingUpdate:\n    maxUnavailable: true\n", None,
     ["values.yaml:3:21: /daemonsets/rollingUpdate/maxUnavailable: expected an integer or a string, got boolean true (A number of nodes or a percentage of them, e.g. 1 or 25%)"]),
    ("quantity-pattern", "driver:\n  resources:\n    limits:\n      cpu: lots\n", None,
     ['values.yaml:4:12: /driver/resources/limits/cpu: "lots" does not match the pattern ^[+-]?([0-9]+(\\.[0-9]*)?|\\.[0-9]+)([eE][+-]?[0-9]{1,2}|Ki|Mi|Gi|Ti|Pi|Ei|m|k|M|G|T|P|E)?$ (A Kubernetes quantity, e.g. 500m, 2, 1Gi)']),
    ("toolkit-install-dir-trailing-slash", "toolkit:\n  installDir: /opt/nvidia/\n", None,
     ["values.yaml:2:15: /toolkit/installDir: \"/opt/nvidia/\" does not match the pattern ^(/[^/\\n]+)+$ (Host folder where the toolkit is installed: an absolute path without a trailing '/' (the operator joins toolkit/nvidia-cdi-hook onto it as a clean path; write /opt/nvidia, not /opt/nvidia/))"]),
    ("pool-name-pattern", "nodePools:\n  - name: Bad_Name\n    os: {id: ubuntu, version: '22.04'}\n", None,
     ["values.yaml:2:11: /nodePools/0/name: \"Bad_Name\" does not match the pattern ^[a-z0-9]([-a-z0-9]*[a-z0-9])?$ (Pool name, used in object names: lowercase letters, digits and '-')"]),
    ("pool-missing-os", "nodePools:\n  - name: a\n", None,
     ["values.yaml:2:5: /nodePools/0: missing required key 'os'"]),
    ("duplicate-pool-name", POOL + "  - name: a\n    os: {id: rhel, version: '9.4'}\n", None,
     ["values.yaml:4:11: /nodePools/1/name: duplicate node pool name 'a' (also used by /nodePools/0)"]),
    ("duplicate-key", "driver:\n  version: '1'\n  version: '2'\n", None,
     ['values.yaml:3:3: /driver/version: duplicate key "version" (first defined at line 2)']),
    ("syntax-error", "driver:\n  version: [1, 2\nmig: {}\n", None,
     ["values.yaml:3:4: /driver/version: YAML syntax error: expected ',' or ']', but got ':' (while parsing a flow sequence at line 2, column 12)"]),
    ("root-not-a-mapping", "- driver\n", None,
     ["values.yaml:1:1: /: the top level must be a mapping, not a list (a values file is keys and values, e.g. 'driver:' at the start of a line)"]),
    ("python-tag", "driver: !!python/object/apply:os.system ['id']\n", None,
     ["values.yaml:1:9: /driver: YAML tag '!!python/object/apply:os.system' is not allowed (only plain YAML values are allowed: mappings, lists, strings, numbers, booleans, null)"]),
    ("error-inside-overlay", POOL + "mig:\n  strategy: single\n", "# prod\nmig:\n  strategy: bogus\n",
     ['overlays/prod/values.yaml:3:13: /mig/strategy: "bogus" is not one of the allowed values (allowed: "none", "single", "mixed")']),
    ("unknown-key-inside-overlay", POOL, "devicePlugin:\n  confg: {}\n",
     ["overlays/prod/values.yaml:2:3: /devicePlugin/confg: unknown key 'confg' (did you mean 'config'?)"]),
    ("overlay-list-replaces-fleet-list", POOL, "nodePools:\n  - name: b\n    os: {id: ubuntu, version: 22.04}\n",
     ["overlays/prod/values.yaml:3:31: /nodePools/0/os/version: expected a string, got number 22.04 (quote the value to keep it a string: YAML reads unquoted 1.30 as the number 1.3)"]),
    ("syntax-error-inside-overlay", POOL, "mig:\n strategy: single\n  x: 1\n",
     ["overlays/prod/values.yaml:3:4: /mig: YAML syntax error: mapping values are not allowed here"]),
    ("fleet-and-overlay-both-wrong", "psa:\n  enabled: 1\n", "psa:\n  enabled: 2\n",
     ["overlays/prod/values.yaml:2:12: /psa/enabled: expected a boolean, got number 2",
      "values.yaml:2:12: /psa/enabled: expected a boolean, got number 1"]),
]


@pytest.mark.parametrize(("values", "overlay", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_bad_input(values: str, overlay: str | None, expected: list[str]) -> None:
    assert found(values, overlay) == expected


def test_there_are_enough_cases() -> None:
    assert len(CASES) >= 15


def test_problems_are_sorted_and_deduplicated() -> None:
    """A fleet error shows once even though the fleet and every cluster are validated."""
    problems = found("psa:\n  enabled: 1\nmig:\n  strategy: x\n", "cdi:\n  enabled: true\n")
    assert problems == sorted(problems)
    assert len(problems) == 2


def test_cli_validate_prints_problems_and_exits_1(tmp_path, run_cli, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.chdir(tmp_path)
    (tmp_path / "values.yaml").write_text("devicePlugn: {}\nmig:\n  strategy: Mixed\n")
    result = run_cli("validate")
    assert result.exit_code == 1
    assert result.stderr.splitlines() == [
        "values.yaml:1:1: /devicePlugn: unknown key 'devicePlugn' (did you mean 'devicePlugin'?)",
        'values.yaml:3:13: /mig/strategy: "Mixed" is not one of the allowed values (did you mean \'mixed\'? allowed: "none", "single", "mixed")',
        "2 error(s), 0 warning(s)",
    ]
    assert not (tmp_path / "output").exists()


def test_cli_validate_json_has_the_same_problems(tmp_path, run_cli, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.chdir(tmp_path)
    (tmp_path / "values.yaml").write_text("devicePlugn: {}\noperator: {image: x}\n")
    result = run_cli("validate", "--format", "json")
    assert result.exit_code == 1
    report = json.loads(result.stdout)
    assert report["problems"] == [
        {
            "file": "values.yaml", "line": 1, "column": 1, "pointer": "/devicePlugn",
            "message": "unknown key 'devicePlugn'", "hint": "did you mean 'devicePlugin'?",
            "code": "unknown-key", "severity": "error",
        },
        {
            "file": "values.yaml", "line": 2, "column": 1, "pointer": "/operator",
            "message": "'operator' has no effect: gpu-render deploys no operator controller; its Deployment settings have no effect",
            "hint": "", "code": "operator-only", "severity": "warning",
        },
    ]
    assert (report["errors"], report["warnings"]) == (1, 1)
