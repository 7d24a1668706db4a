"""One table says where every GPU Operator chart key (releases 1.0 to 26.7) goes; the importer
moves what has an equivalent and removes only what has none, saying why."""

from __future__ import annotations

from typing import Any

import pytest

from renderer import chartkeys, yamlio
from renderer.inputs import Inputs
from renderer.migrate import import_values
from renderer.pipeline import plan
from renderer.schema import load_schema


def test_every_chart_key_has_a_fate() -> None:
    schema = load_schema()
    releases, keys = chartkeys.chart_keys()
    assert releases[0] == "1.0.0" and releases[-1] == "v26.7.0" and len(keys) > 300
    refused = [k for k in keys if chartkeys.fate(k, schema)[0] == "refused"]
    assert refused == []
    for key in keys:
        status, to, why = chartkeys.fate(key, schema)
        if status == "moved":
            assert to is not None and chartkeys.schema_node(schema, to) is not None, (key, to)
        if status in ("moved", "removed"):
            assert why, key


def test_removed_in_names_the_next_release() -> None:
    assert chartkeys.removed_in("driver.repoConfig.destinationDir") == "v1.9.1"
    assert chartkeys.removed_in("driver.version") == ""


def _import(text: str, refused: frozenset[str] = frozenset()) -> tuple[dict[str, Any], Any]:
    """Import ``text``; the result validates, but for the error codes in ``refused``."""
    result = import_values(text.encode(), "upstream.yaml")
    data = yamlio.load(result.text)
    assert isinstance(data, dict)
    p = plan(Inputs(result.text.encode(), "values.yaml"))
    errors = [x for x in p.problems if x.severity.name == "ERROR"]
    assert {x.code for x in errors} == set(refused), [x.format() for x in p.problems]
    return data, result


def test_equivalents_move() -> None:
    data, result = _import(
        "operator: {defaultRuntime: crio}\nplatform: {openshift: true}\n"
        "node-feature-discovery:\n  worker:\n    tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]\n",
        refused=frozenset({"openshift-unsupported"}),  # moved, then refused until OpenShift is rendered whole
    )
    assert data["cluster"]["containerRuntime"] == "crio"
    assert data["cluster"]["capabilities"]["openshift"] is True
    assert data["nfd"]["worker"]["tolerations"][0]["key"] == "nvidia.com/gpu"
    assert {m[0] for m in result.moved} == {"operator.defaultRuntime", "platform.openshift", "node-feature-discovery.worker.tolerations"}
    assert "operator" not in data and "platform" not in data and "node-feature-discovery" not in data


def test_the_nfd_charts_newer_keys_move_and_the_others_are_named() -> None:
    """The NFD chart of v23.6 and later holds the master's label namespaces in master.config,
    and names its image whole (a mirror, in an air-gapped file); where each NFD pod runs is its
    role's nodeSelector / affinity / tolerations (a Civo Talos file of the corpus keeps the
    worker to GPU instance types, a vCluster one the master and gc to the CPU pool). All were
    removed with the subtree, unnamed: the pods pulled from registry.k8s.io and ran anywhere.
    A key with no place here is named in the reason, not only its subtree."""
    text = (
        "node-feature-discovery:\n"
        "  image: {repository: mirror.example/nfd/node-feature-discovery, tag: v0.14.2, pullPolicy: Always}\n"
        "  master:\n    config: {extraLabelNs: [nvidia.com, example.com]}\n    nodeSelector: {workload.example.com/pool: cpu}\n"
        "  worker:\n    affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchExpressions: [{key: gpu, operator: Exists}]}]}}}\n"
        "    serviceAccount: {create: false}\n    annotations: {example.com/team: gpu}\n"
        "  gc:\n    nodeSelector: {kubernetes.io/os: linux}\n    tolerations: [{key: dedicated, operator: Exists}]\n"
    )
    data, result = _import(text)
    nfd = data["nfd"]
    assert (nfd["repository"], nfd["image"], nfd["version"], nfd["imagePullPolicy"]) == ("mirror.example/nfd", "node-feature-discovery", "v0.14.2", "Always")
    assert nfd["master"]["extraLabelNs"] == ["nvidia.com", "example.com"]
    why = dict(result.dropped)["node-feature-discovery"]
    # a label map is one key (its label names have dots and slashes of their own)
    assert why.endswith(": worker.serviceAccount.create, worker.annotations"), why
    p = plan(Inputs(result.text.encode(), "values.yaml"))
    assert p.base is not None
    from renderer.render import objects

    built = {(o["kind"], o["metadata"]["name"]): o for objs in objects(p.base).values() for o in objs}
    worker = built[("DaemonSet", "node-feature-discovery-worker")]["spec"]["template"]["spec"]
    ctr = worker["containers"][0]
    assert (ctr["image"], ctr["imagePullPolicy"]) == ("mirror.example/nfd/node-feature-discovery:v0.14.2", "Always")
    assert worker["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"][0]["matchExpressions"][0]["key"] == "gpu"
    master = built[("Deployment", "node-feature-discovery-master")]["spec"]["template"]["spec"]
    assert master["nodeSelector"] == {"workload.example.com/pool": "cpu"}
    assert master["tolerations"][0]["key"] == "node-role.kubernetes.io/control-plane"  # the NFD chart's default, kept
    gc = built[("Deployment", "node-feature-discovery-gc")]["spec"]["template"]["spec"]
    assert gc["nodeSelector"] == {"kubernetes.io/os": "linux"} and gc["tolerations"] == [{"key": "dedicated", "operator": "Exists"}]
    conf = built[("ConfigMap", "node-feature-discovery-master-conf")]
    assert "example.com" in conf["data"]["nfd-master.conf"]


@pytest.mark.parametrize(
    ("text", "gone", "where"),
    [
        ("driver:\n  rollingUpdate: {maxUnavailable: 1}\n", "driver.rollingUpdate.maxUnavailable", ("driver", "upgradePolicy", "maxUnavailable")),
        ("gfd:\n  podSecurityContext: {runAsUser: 0}\n", "gfd.podSecurityContext", None),  # passed on up to 1.7 only
        ("toolkit:\n  securityContext: {privileged: true}\n", "toolkit.securityContext", None),
        ("driver:\n  repoConfig: {configMapName: repo, destinationDir: /etc/yum.repos.d}\n", "driver.repoConfig.destinationDir", None),
    ],
)
def test_older_keys_are_migrated_not_rejected(text: str, gone: str, where: tuple[str, ...] | None) -> None:
    data, result = _import(text)
    if where is None:
        assert any(k == gone for k, _ in result.dropped)
    else:
        node: Any = data
        for part in where:
            node = node[part]
        assert any(k == gone for k, _, _ in result.moved)


def test_numbers_become_strings_with_a_note() -> None:
    data, result = _import("driver:\n  version: 590\ntoolkit:\n  version: 1.10\n")
    assert data["driver"]["version"] == "590" and data["toolkit"]["version"] == "1.10"
    notes = dict(result.notes)
    assert "digits would be lost" in notes["toolkit.version"] and "digits" not in notes["driver.version"]


def test_migration_doc_table_is_current() -> None:
    from tests.conftest import ROOT

    text = (ROOT / "docs" / "migrating-from-gpu-operator.md").read_text(encoding="utf-8")
    begin, end = "<!-- chart-keys:begin -->\n", "<!-- chart-keys:end -->"
    table = text[text.index(begin) + len(begin) : text.index(end)]
    assert table == chartkeys.markdown_table(load_schema()), "regenerate the table with renderer.chartkeys.markdown_table"


@pytest.mark.parametrize("key", ["fullnameOverride", "nameOverride"])
def test_chart_name_overrides_are_removed_with_their_reason(key: str) -> None:
    """The chart's helpers read these (no values.yaml of a release declares them): they name the
    operator's own objects, so the importer removes them, and a policy that keeps one warns."""
    data, result = _import(f"{key}: gpu-operator\n")
    assert key not in data and any(k == key and "deploys no operator" in why for k, why in result.dropped)
    p = plan(Inputs(f"{key}: gpu-operator\n".encode(), "values.yaml"))
    assert [x.code for x in p.problems if x.pointer == f"/{key}"] == ["operator-only"]
    assert not [x for x in p.problems if x.pointer == f"/{key}" and x.severity.name == "ERROR"]


def test_operator_keys_with_a_place_here_are_refused_where_the_chart_had_them() -> None:
    """A policy written by hand from chart values keeps `operator.defaultRuntime: crio`: left
    there it would render containerd, so validate refuses it and names the key it is here."""
    text = "operator:\n  defaultRuntime: crio\n  runtimeClass: nvidia-cdi\n  resources: {limits: {cpu: 500m}}\n"
    p = plan(Inputs(text.encode(), "values.yaml"))
    moved = sorted((x.pointer, x.line, x.severity.name) for x in p.problems if x.code == "chart-key-moved")
    assert moved == [("/operator/defaultRuntime", 2, "ERROR"), ("/operator/runtimeClass", 3, "ERROR")]
    data, result = _import(text)
    assert data["cluster"]["runtimeClass"] == "nvidia-cdi" and data["cluster"]["containerRuntime"] == "crio"
    assert {m[0] for m in result.moved} == {"operator.defaultRuntime", "operator.runtimeClass"}
    quiet = "operator:\n  defaultRuntime: containerd\n  runtimeClass: nvidia\nplatform: {openshift: false}\n"
    assert not [x for x in plan(Inputs(quiet.encode(), "values.yaml")).problems if x.code == "chart-key-moved"]  # the defaults here: nothing lost


def test_the_charts_default_runtime_is_removed_not_moved() -> None:
    """`operator.defaultRuntime: docker` is in every full values file of charts 1.0 to 24.9, and
    the operator has not read it since v1.9 (it finds the runtime on the GPU nodes, containerd
    when it cannot tell): moved, it made the toolkit configure Docker on containerd nodes. Another
    value is taken as what the nodes run."""
    data, result = _import("operator:\n  defaultRuntime: docker\ngfd:\n  enabled: true\n")  # gfd.enabled: chart 22.9 on
    assert "containerRuntime" not in data["cluster"]
    assert [k for k, why in result.dropped if "not read since v1.9" in why] == ["operator.defaultRuntime"]
    p = plan(Inputs(yamlio.dump(data).encode(), "values.yaml"))
    assert p.base is not None and p.base.pools[0].runtime == "containerd"
    refused = [x for x in plan(Inputs(b"operator:\n  defaultRuntime: docker\n", "values.yaml")).problems if x.code == "chart-key-moved"]
    assert [(x.pointer, x.severity.name) for x in refused] == [("/operator/defaultRuntime", "ERROR")]
    assert refused[0].hint.startswith("remove it: docker is the chart's default") and "cluster.containerRuntime: docker" in refused[0].hint
    data, result = _import("operator:\n  defaultRuntime: crio\n")
    assert data["cluster"]["containerRuntime"] == "crio" and [m[0] for m in result.moved] == ["operator.defaultRuntime"]
    # a file of charts up to 1.8 (the operator read it then), or one saying nothing else: docker is meant
    data, _ = _import("operator:\n  defaultRuntime: docker\ndriver:\n  tolerations: []\n")
    assert data["cluster"]["containerRuntime"] == "docker"


def test_open_kernel_modules_of_a_24_9_file_become_the_kernel_module_type() -> None:
    """Charts 23.9 to 24.9 ran the open kernel modules with `driver.useOpenKernelModules: true`;
    the operator reads only kernelModuleType since v25.3, so removing the key lost the open
    modules. false, the chart's default, is removed; a kernelModuleType written beside it wins."""
    data, result = _import("driver:\n  useOpenKernelModules: true\n")
    assert data["driver"] == {"kernelModuleType": "open"} and [m[:2] for m in result.moved] == [("driver.useOpenKernelModules", "driver.kernelModuleType")]
    data, result = _import("driver:\n  useOpenKernelModules: false\n")
    assert "driver" not in data and [k for k, _ in result.dropped] == ["driver.useOpenKernelModules"]
    data, result = _import("driver:\n  useOpenKernelModules: 'true'\n")  # helm read the string as true there
    assert data["driver"] == {"kernelModuleType": "open"}
    data, result = _import("driver:\n  useOpenKernelModules: true\ncdi:\n  enabled: true\n")
    assert data["driver"] == {"kernelModuleType": "open"}
    # kernelModuleType (25.3 on) beside it: a file of a chart that ignored it
    data, result = _import("driver:\n  useOpenKernelModules: true\n  kernelModuleType: proprietary\n")
    assert data["driver"] == {"kernelModuleType": "proprietary"} and [k for k, _ in result.dropped] == ["driver.useOpenKernelModules"]


def test_nvidia_driver_crd_is_kept_where_the_chart_deploys_no_driver() -> None:
    """With ``deployDefaultCR: false`` the chart deploys no driver of its values (the drivers are
    NVIDIADriver resources made beside it): the key stays, for validate to refuse; with the
    default NVIDIADriver (or the driver off) it is removed, as the operator-only key it is."""
    external = frozenset({"driver-crd-external"})
    data, result = _import("driver:\n  nvidiaDriverCRD:\n    enabled: true\n    deployDefaultCR: false\n", external)
    assert data["driver"] == {"nvidiaDriverCRD": {"enabled": True, "deployDefaultCR": False}} and not result.dropped
    data, _ = _import("driver:\n  nvidiaDriverCRD:\n    enabled: 'true'\n    deployDefaultCR: 'false'\n", frozenset({"schema-type"}))  # helm reads them so
    assert "nvidiaDriverCRD" in data["driver"]
    for text in (
        "driver:\n  nvidiaDriverCRD:\n    enabled: true\n",
        "driver:\n  nvidiaDriverCRD:\n    enabled: false\n    deployDefaultCR: false\n",
        "driver:\n  enabled: false\n  nvidiaDriverCRD:\n    enabled: true\n    deployDefaultCR: false\n",
    ):
        data, result = _import(text)
        assert "nvidiaDriverCRD" not in (data.get("driver") or {}) and [k for k, _ in result.dropped] == ["driver.nvidiaDriverCRD"], text


def test_unpinned_images_are_named_with_the_version_rendered() -> None:
    """A file that names no version leaves each image to its chart's default: installed with an
    older chart, the nodes run that chart's, which the build would upgrade (a v23.9 file's driver
    535 to this release's). The import says which, unless the file has a key of the newest chart."""
    from renderer.resolve import with_defaults

    driver = with_defaults({})["driver"]["version"]
    result = import_values(b"driver:\n  repository: nvcr.io/nvidia\ntoolkit:\n  version: v1.14.3-centos7\ndcgmExporter:\n  enabled: false\n", "old.yaml")
    assert result.unpinned.startswith(f"the file names no version for driver {driver}, driver.manager ")
    assert "toolkit" not in result.unpinned and "dcgmExporter" not in result.unpinned  # pinned, off
    assert "# Versions not pinned:" in result.text
    # only what the build pulls: with VM workloads the sandbox operands the nodes run, by their
    # own section (the VFIO manager shares the driver manager's image), not the vGPU manager's
    vms = import_values(b"sandboxWorkloads:\n  enabled: true\n  defaultWorkload: vm-passthrough\n", "vms.yaml").unpinned
    assert "vfioManager " in vms and "sandboxDevicePlugin " in vms and "vgpuManager" not in vms and "nodeStatusExporter" not in vms
    # matched by tag in the section's own objects: a mirror that renames the image is no exception
    renamed = import_values(b"node-feature-discovery:\n  image:\n    repository: mirror.example/registry.k8s.io-nfd-node-feature-discovery\n", "nfd.yaml")
    assert "nfd v0." in renamed.unpinned
    newest = import_values(b"dcgmExporter:\n  serviceMonitor:\n    scrapeTimeout: 10s\n", "new.yaml")  # a key of 26.7
    assert newest.unpinned == "" and "Versions not pinned" not in newest.text


def test_a_list_written_with_no_value_is_taken_out() -> None:
    """``env:`` with every entry commented out is null: Helm drops it with the chart's empty
    default, so the chart prints no entries; the policy without the key does the same."""
    data, result = _import("driver:\n  version: '570.148.08'\n  env:\n  #  - {name: X, value: y}\n")
    assert data["driver"] == {"version": "570.148.08"}
    assert [k for k, _ in result.notes] == ["driver.env"]


def test_changed_chart_defaults_a_file_relies_on_are_named() -> None:
    """Charts before 25.10 defaulted cdi.enabled to false, before 26.7 created no ServiceMonitor:
    a file that leaves those keys out ran that way; the import names each with both defaults,
    unless the file has a key of the release that changed it or writes the key."""
    old = import_values(b"driver:\n  useOpenKernelModules: true\n", "v24.9.yaml").defaults  # a key of charts 23.9 to 24.9
    assert "cdi.enabled true (before 25.10: false)" in old and "dcgmExporter.serviceMonitor.enabled true (before 26.7: false)" in old
    assert "ccManager" not in old  # no sandbox workloads: cc-manager is not deployed either way
    assert "# Defaults that changed since older charts:" in import_values(b"driver:\n  useOpenKernelModules: true\n", "v24.9.yaml").text
    written = import_values(b"cdi:\n  enabled: false\ndcgmExporter:\n  enabled: false\nvalidator:\n  plugin:\n    env: [{name: WITH_WORKLOAD, value: 'true'}]\n", "off.yaml").defaults
    assert written == ""
    v26_3 = import_values(b"sandboxWorkloads:\n  enabled: true\n  mode: kata\n", "v26.3.yaml").defaults  # mode: a key of 26.3
    assert v26_3.startswith("the file leaves out dcgmExporter.serviceMonitor.enabled true (before 26.7: false):")


def test_old_chart_defaults_that_deployed_more_are_named() -> None:
    """Charts 1.8 and 1.9 ran the standalone DCGM, 1.8 to 22.9.1 had the driver manager drain the
    node, and up to 23.3 plugin validation ran a GPU workload pod: a file of such a chart that
    leaves the key out relied on it (a v1.7 file had neither DCGM nor the driver manager)."""
    v1_9 = import_values(b"operator:\n  version: v1.9.1\n", "v1.9.yaml").defaults
    assert "dcgm.enabled false (before 1.10: true)" in v1_9
    assert "driver.manager.env [] (before 22.9: [ENABLE_GPU_POD_EVICTION=true, ENABLE_AUTO_DRAIN=true," in v1_9
    assert "validator.plugin.env [] (before 23.6: [WITH_WORKLOAD=true])" in v1_9
    v1_7 = import_values(b"driver:\n  version: '470'\n", "v1.7.yaml").defaults  # no key newer than 1.7
    assert "dcgm.enabled" not in v1_7 and "driver.manager.env" not in v1_7 and "validator.plugin.env" in v1_7
    no_plugin = import_values(b"operator:\n  version: v23.3.2\ndevicePlugin:\n  enabled: false\n", "v23.3.yaml").defaults
    assert "validator.plugin.env" not in no_plugin  # no plugin, no plugin validation


def test_operator_version_names_the_release() -> None:
    """`operator.version` of a release gpu-render imitates becomes cluster.operatorRelease (and
    dates the file); an older operator is removed with what the build does instead."""
    new = import_values(b"operator:\n  version: v25.10.1\n", "v25.10.yaml")
    assert yamlio.load(new.text)["cluster"]["operatorRelease"] == "v25.10"
    assert "cdi.enabled" not in new.defaults  # chart 25.10's default already
    old = import_values(b"operator:\n  version: v23.3.2\n", "v23.3.yaml")
    assert "operator" not in yamlio.load(old.text) and "operatorRelease" not in yamlio.load(old.text)["cluster"]
    ((_key, why),) = [d for d in old.dropped if d[0] == "operator.version"]
    assert why.startswith("operator v23.3.2 built this cluster's operands; gpu-render renders them as the newest GPU Operator release does")
    assert all("built this cluster" not in why for _, why in import_values(b"operator:\n  version: ''\n", "empty.yaml").dropped)


def test_keys_the_chart_never_passes_on_are_removed() -> None:
    """A values file's key that no chart release has (`daemonsets.podSecurityContext`, a
    ClusterPolicy field), one the chart has but no template writes (`devicePlugin.mps.root`) and
    `cdi.nriPluginEnabled` beside `cdi.enabled: false` (written only with CDI on) never reached
    the operator: the import removes them, saying so, where keeping them would render what the
    operator did not."""
    data, result = _import(
        "daemonsets:\n  podSecurityContext: {runAsNonRoot: true}\n  priorityClassName: high\n"
        "devicePlugin:\n  mps: {root: /var/mps}\ncdi:\n  enabled: false\n  nriPluginEnabled: true\n"
    )
    assert data["daemonsets"] == {"priorityClassName": "high"} and "devicePlugin" not in data and data["cdi"] == {"enabled": False}
    why = dict(result.dropped)
    assert why["daemonsets.podSecurityContext"].startswith("no GPU Operator chart release has daemonsets.podSecurityContext: Helm ignored it")
    assert "never writes it into the ClusterPolicy" in why["devicePlugin.mps.root"]
    assert why["cdi.nriPluginEnabled"] == chartkeys.NRI_WITHOUT_CDI
    kept, _ = _import("cdi:\n  nriPluginEnabled: true\n")  # CDI on by default: the chart writes it
    assert kept["cdi"] == {"nriPluginEnabled": True}
    assert not chartkeys.helm_ignored("cluster.name") and not chartkeys.helm_ignored("daemonsets.labels.team")


def test_nfd_pull_secrets_move() -> None:
    """The NFD subchart puts `imagePullSecrets` on all three NFD pods: a mirror's secrets move to
    nfd.imagePullSecrets (dropped, NFD pulled nothing from a private mirror)."""
    data, result = _import("node-feature-discovery:\n  imagePullSecrets: [{name: mirror}]\n")
    assert data["nfd"]["imagePullSecrets"] == [{"name": "mirror"}]
    assert "node-feature-discovery.imagePullSecrets" in [k for k, _, _ in result.moved]


def test_older_keys_beside_later_ones_are_removed_not_moved() -> None:
    """`driver.tolerations` (charts 1.3 to 1.7) moves to daemonsets.tolerations in a file of those
    charts; beside `gfd.enabled` (22.9 on) the chart the file was written for ignored it, and
    moving it replaced daemonsets.tolerations' default on every DaemonSet."""
    old = "driver:\n  tolerations: [{key: a, operator: Exists}]\n"
    data, result = _import(old)
    assert data["daemonsets"]["tolerations"] == [{"key": "a", "operator": "Exists"}] and [m[0] for m in result.moved] == ["driver.tolerations"]
    data, result = _import(old + "gfd:\n  enabled: true\n")
    assert "daemonsets" not in data and not result.moved
    why = dict(result.dropped)["driver.tolerations"]
    assert why.startswith("a key of charts 1.3 to 1.7, and this file has gfd.enabled (chart 22.9 on): Helm ignored it there")


def test_quoted_words_yaml_reads_as_booleans_keep_their_quotes() -> None:
    """A full chart values file of v25.3 says `ccManager.defaultMode: "off"`: written back
    unquoted, helm and gpu-render (YAML 1.1) would read it as false and refuse it."""
    text = 'ccManager:\n  defaultMode: "off"\ndevicePlugin:\n  env:\n  - {name: MPS_ROOT_OWNER, value: "yes"}\n  - name: PASS_DEVICE_SPECS\n    value: \'on\'\n'
    data, _ = _import(text)
    assert data["ccManager"]["defaultMode"] == "off"
    assert [e["value"] for e in data["devicePlugin"]["env"]] == ["yes", "on"]
