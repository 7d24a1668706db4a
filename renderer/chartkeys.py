"""Where every key of the GPU Operator chart (releases 1.0 to 26.7) goes in a gpu-render policy.

One table for the importer, ``validate`` and the docs. ``renderer/data/chart-keys.yaml`` lists
each key of the chart's ``values.yaml``, and each key its templates read that no ``values.yaml``
declares (``fullnameOverride``, ``validator.driver.env``), with the first and last release that
has it (``scripts/chart_keys.py``). A key goes one of three ways:

* **kept**: the policy schema accepts it at the same place (it renders, or is listed in
  :mod:`renderer.noeffect` with the reason it has no effect here);
* **moved**: :data:`MOVES` names its new place (renamed upstream, or gpu-render's own key for
  what the operator discovered live); the importer moves the value there;
* **removed**: :data:`MOVES` says why it has no equivalent; the importer removes it and says so.

Keys the schema accepts but the operator-only table (:data:`renderer.noeffect.OPERATOR_ONLY`)
lists are removed by the importer with that reason.
"""

from __future__ import annotations

import fnmatch
import json
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Any

from renderer import yamlio


@dataclass(frozen=True)
class Move:
    pattern: str
    """Dotted chart key; ``*`` matches one key (a component name)."""
    to: str | None
    """Dotted policy key (``*`` replaced by the matched component), or None: removed."""
    why: str


_SCHEDULING = "per-component scheduling became the fleet-wide daemonsets.* keys in v1.8"
_SECURITY = "the operator fixes each operand's security context since v1.8 (the chart key was removed in v22.9); gpu-render renders the operator's"
_SELECTOR = "gpu-render's DaemonSets select GPU nodes themselves (gpu.present and gpu.deploy.* affinity); the chart dropped these in v1.8"

DEFAULT_RUNTIME = "operator.defaultRuntime"
CHART_DEFAULT_RUNTIME = "docker"
"""The chart's ``operator.defaultRuntime`` in every release that has the key (1.0 to 24.9)."""
DEFAULT_RUNTIME_UNREAD = (
    "docker is the chart's default, which the operator has not read since v1.9: it finds the runtime on the GPU nodes"
    " (containerd when one of them runs it or none tells), and gpu-render renders containerd unless"
    " cluster.containerRuntime or a pool's runtime says otherwise (gpu-render nodes import reads them from the nodes);"
    " set cluster.containerRuntime: docker for nodes that run Docker"
)
"""Why ``operator.defaultRuntime: docker`` is not moved: every full values file of those
releases carries it, whatever its nodes run (controllers/state_manager.go ``getRuntime`` from
v1.9, controllers/clusterinfo from v24.3)."""
DEFAULT_RUNTIME_READ = (
    "operators before v1.9 configured the runtime it names, and this file has no key of a later chart:"
    " docker is taken as what the nodes run (Kubernetes 1.24 and later run Docker only through cri-dockerd;"
    " set cluster.containerRuntime to what they run now)"
)
"""Why a file of charts up to 1.8 keeps ``docker`` (moved as written)."""


OPEN_MODULES = "driver.useOpenKernelModules"
OPEN_MODULES_WHY = (
    "charts 23.9 to 24.9 ran the open kernel modules with it (OPEN_KERNEL_MODULES_ENABLED);"
    " the operator reads driver.kernelModuleType only since v25.3"
)
"""Why ``driver.useOpenKernelModules: true`` becomes ``driver.kernelModuleType: open`` (false,
the chart's default, is removed as the operator's compatibility key)."""


DRIVER_CRD = "driver.nvidiaDriverCRD"
EXTERNAL_DRIVERS_WHY = (
    "with driver.nvidiaDriverCRD.enabled and deployDefaultCR false the chart deploys no driver of its values:"
    " the ClusterPolicy leaves the driver to NVIDIADriver resources (useNvidiaDriverCRD) and the chart makes"
    " none, so the drivers are the NVIDIADriver resources created beside it, which a values file does not hold"
)
"""Why such a file's ``driver.nvidiaDriverCRD`` is kept for ``validate`` to refuse (gpu-render would
deploy the driver of ``driver.*`` on every pool)."""


OPERATOR_VERSION = "operator.version"
OPERATOR_VERSION_WHY = (
    "the operator's image, which decides what it deploys: a release gpu-render imitates becomes "
    "cluster.operatorRelease; another is removed, and the build renders what the newest release deploys"
)


def operator_release(version: object) -> tuple[str | None, str] | None:
    """The rule of ``operator.version``: (``cluster.operatorRelease`` value or None, why), or None
    when the file leaves the version to the chart (empty)."""
    from renderer.releasegate import RELEASES  # the minor releases cluster.operatorRelease takes

    if not isinstance(version, str) or not version.strip():
        return None
    tag = version.strip()
    parts = tag.removeprefix("v").split(".")
    release = f"v{parts[0]}.{parts[1]}" if len(parts) >= 2 else ""
    if release not in RELEASES:
        return None, (
            f"operator {tag} built this cluster's operands; gpu-render renders them as the newest GPU Operator "
            f"release does (cluster.operatorRelease imitates {', '.join(RELEASES)} only), so the first sync changes "
            "what that operator deployed: build and compare before you switch (gpu-render diff)"
        )
    return release, f"operator {tag} deploys the operands of {release}: the release gpu-render imitates"


def external_drivers(driver: object) -> bool:
    """Does a ``driver`` section leave every driver to NVIDIADriver resources made outside the chart
    (``nvidiaDriverCRD.enabled`` with ``deployDefaultCR: false``, the driver enabled)? As helm reads
    the values: ``deployDefaultCR`` defaults to true and ``driver.enabled`` to true."""
    if not hasattr(driver, "get"):
        return False
    crd = driver.get("nvidiaDriverCRD")
    if not hasattr(crd, "get") or not truthy(crd.get("enabled")):
        return False
    return falsy(crd.get("deployDefaultCR", True)) and not falsy(driver.get("enabled", True))


def crd_driver_type(driver: object) -> str:
    """The type of the chart's default NVIDIADriver when it is not a GPU driver
    (``nvidiaDriverCRD.enabled``, the default CR made, ``driverType`` other than ``gpu``): the
    vGPU host manager of ``driver.*``; else ""."""
    if not hasattr(driver, "get") or external_drivers(driver) or falsy(driver.get("enabled", True)):
        return ""
    crd = driver.get("nvidiaDriverCRD")
    if not hasattr(crd, "get") or not truthy(crd.get("enabled")):
        return ""
    kind = str(crd.get("driverType") or "gpu")
    return "" if kind == "gpu" else kind


def kept(key: str, parent: object) -> bool:
    """A chart key the importer would remove but keeps, for ``validate`` to refuse at its place: its
    removal would deploy something the operator did not (:func:`external_drivers`, a default
    NVIDIADriver that is no GPU driver: :func:`crd_driver_type`)."""
    return key == DRIVER_CRD and (external_drivers(parent) or bool(crd_driver_type(parent)))


_AUTO_DRAIN_ENV = [
    {"name": "ENABLE_GPU_POD_EVICTION", "value": "true"},
    {"name": "ENABLE_AUTO_DRAIN", "value": "true"},
    {"name": "DRAIN_USE_FORCE", "value": "false"},
    {"name": "DRAIN_POD_SELECTOR_LABEL", "value": ""},
    {"name": "DRAIN_TIMEOUT_SECONDS", "value": "0s"},
    {"name": "DRAIN_DELETE_EMPTYDIR_DATA", "value": "false"},
]
DEFAULT_CHANGES: tuple[tuple[str, object, str, object, str], ...] = (
    ("cdi.enabled", True, "v25.10", False, ""),
    ("ccManager.enabled", True, "v26.3", False, ""),
    ("ccManager.defaultMode", "on", "v26.3", "off", ""),
    ("dcgmExporter.serviceMonitor.enabled", True, "v26.7", False, ""),
    ("dcgm.enabled", False, "v1.10", True, "v1.8"),
    ("driver.manager.env", [], "v22.9", _AUTO_DRAIN_ENV, "v1.8"),
    ("validator.plugin.env", [], "v23.6", [{"name": "WITH_WORKLOAD", "value": "true"}], ""),
)
"""(key, its default now, the first release with it, the default of the releases before, the
first of those, "" for every one): chart defaults that changed (from the charts' values files;
image versions aside), which a values file written for an older chart relies on when it
leaves the key out. The standalone DCGM ran by default in charts 1.8 and 1.9; the driver
manager drained the node (``ENABLE_AUTO_DRAIN``) in charts 1.8 to 22.9.1; plugin validation
ran a GPU workload pod (``WITH_WORKLOAD``) up to 23.3."""


DEPLOYED_WITH = {"validator.plugin.env": "devicePlugin"}
"""A key of :data:`DEFAULT_CHANGES` whose effect is on another section's operand than its own
(plugin validation runs where the device plugin is deployed)."""


def shown(value: object) -> str:
    """A default as the importer's notes print it: an env list as ``[NAME=value, ...]``, else JSON."""
    if isinstance(value, list) and value and all(isinstance(e, dict) and set(e) == {"name", "value"} for e in value):
        return "[" + ", ".join(f"{e['name']}={e['value']}" for e in value) + "]"
    return json.dumps(value)


NRI_WITHOUT_CDI = "the chart writes cdi.nriPluginEnabled into the ClusterPolicy only with cdi.enabled: with CDI off the operator never read it"


BY_VALUE: dict[str, tuple[str, str]] = {
    DEFAULT_RUNTIME: ("moved to `cluster.containerRuntime`; `docker` removed", DEFAULT_RUNTIME_UNREAD),
    OPEN_MODULES: ("`true`: `driver.kernelModuleType: open`; `false` removed", OPEN_MODULES_WHY),
    OPERATOR_VERSION: ("v25.10, v26.3 or v26.7: moved to `cluster.operatorRelease`; another release removed", OPERATOR_VERSION_WHY),
    "cdi.nriPluginEnabled": ("removed beside `cdi.enabled: false`; else kept", NRI_WITHOUT_CDI),
    f"{DRIVER_CRD}.deployDefaultCR": ("`false` beside `enabled: true`: `driver.nvidiaDriverCRD` kept, which `validate` refuses; else removed", EXTERNAL_DRIVERS_WHY),
}
"""The keys the importer treats by their value (:mod:`renderer.migrate`), as the migration
table shows them."""


def by_value(key: str, value: object, written_since: Callable[[str], bool], parent: object = None) -> tuple[str | None, object, str] | None:
    """The rule of a key whose fate depends on its value and on the chart the file was written
    for (``written_since("v1.9")``: it has a key of that release or later): (destination, or None
    for removed; the value there; why), or None where :data:`MOVES` and :func:`fate` decide."""
    if key == DEFAULT_RUNTIME and value == CHART_DEFAULT_RUNTIME:
        return (None, None, DEFAULT_RUNTIME_UNREAD) if written_since("v1.9") else ("cluster.containerRuntime", value, DEFAULT_RUNTIME_READ)
    if key == "cdi.nriPluginEnabled" and hasattr(parent, "get") and falsy(parent.get("enabled", True)):
        return None, None, NRI_WITHOUT_CDI
    if key == OPERATOR_VERSION and (rule := operator_release(value)) is not None:
        release, why = rule
        return (None, None, why) if release is None else ("cluster.operatorRelease", release, why)
    if key == OPEN_MODULES and truthy(value) and not written_since("v25.3"):
        return "driver.kernelModuleType", "open", OPEN_MODULES_WHY
    return None


def truthy(value: object) -> bool:
    """True as helm reads it (YAML 1.1; the chart prints the value unquoted into the ClusterPolicy):
    ``true``, and ``'true'``, ``yes``, ``on`` that the importer's round trip keeps as strings."""
    return value is True or (isinstance(value, str) and value.lower() in ("true", "yes", "on"))


def falsy(value: object) -> bool:
    """False as helm reads it, the counterpart of :func:`truthy`."""
    return value is False or (isinstance(value, str) and value.lower() in ("false", "no", "off"))


MOVES: tuple[Move, ...] = (
    # gpu-render's own keys for what the operator found out in the cluster
    Move(
        "operator.defaultRuntime",
        "cluster.containerRuntime",
        "the runtime the toolkit configures (RUNTIME), which the operator finds on the GPU nodes since v1.9: a value other than the chart's default docker is taken as what they run; per pool: nodePools[].runtime",
    ),
    Move("operator.runtimeClass", "cluster.runtimeClass", "the name of the RuntimeClass the operator creates and the toolkit configures (CONTAINERD_RUNTIME_CLASS)"),
    Move("platform.openshift", "cluster.capabilities.openshift", "gpu-render does not probe the cluster; say it is OpenShift"),
    Move(
        "devicePlugin.mps.root",
        None,
        "the chart has the key but never writes it into the ClusterPolicy (no release's template does): the operator keeps /run/nvidia/mps",
    ),
    # the NFD subchart's values that gpu-render's own NFD renders
    Move("node-feature-discovery.worker.tolerations", "nfd.worker.tolerations", "NFD is rendered by gpu-render: worker tolerations (a tainted GPU pool needs them)"),
    Move("node-feature-discovery.worker.resources", "nfd.worker.resources", "NFD is rendered by gpu-render"),
    Move("node-feature-discovery.master.resources", "nfd.master.resources", "NFD is rendered by gpu-render"),
    Move("node-feature-discovery.master.extraLabelNs", "nfd.master.extraLabelNs", "NFD is rendered by gpu-render"),
    Move("node-feature-discovery.master.config.extraLabelNs", "nfd.master.extraLabelNs", "NFD is rendered by gpu-render (the NFD chart's master.config since v23.6)"),
    Move("node-feature-discovery.master.nodeSelector", "nfd.master.nodeSelector", "NFD is rendered by gpu-render: where nfd-master runs"),
    Move("node-feature-discovery.master.affinity", "nfd.master.affinity", "NFD is rendered by gpu-render: where nfd-master runs"),
    Move("node-feature-discovery.master.tolerations", "nfd.master.tolerations", "NFD is rendered by gpu-render: where nfd-master runs"),
    Move("node-feature-discovery.worker.nodeSelector", "nfd.worker.nodeSelector", "NFD is rendered by gpu-render: where nfd-worker runs"),
    Move("node-feature-discovery.worker.affinity", "nfd.worker.affinity", "NFD is rendered by gpu-render: where nfd-worker runs"),
    Move("node-feature-discovery.gc.nodeSelector", "nfd.gc.nodeSelector", "NFD is rendered by gpu-render: where nfd-gc runs"),
    Move("node-feature-discovery.gc.affinity", "nfd.gc.affinity", "NFD is rendered by gpu-render: where nfd-gc runs"),
    Move("node-feature-discovery.gc.tolerations", "nfd.gc.tolerations", "NFD is rendered by gpu-render: where nfd-gc runs"),
    Move("node-feature-discovery.image.tag", "nfd.version", "NFD is rendered by gpu-render: its image tag"),
    Move("node-feature-discovery.image.pullPolicy", "nfd.imagePullPolicy", "NFD is rendered by gpu-render"),
    Move("node-feature-discovery.imagePullSecrets", "nfd.imagePullSecrets", "NFD is rendered by gpu-render: the secrets its pods pull with (a private mirror)"),
    Move("node-feature-discovery.gc.enable", "nfd.gc.enabled", "NFD is rendered by gpu-render"),
    Move("node-feature-discovery.gc.resources", "nfd.gc.resources", "NFD is rendered by gpu-render"),
    Move("node-feature-discovery.gc.interval", "nfd.gc.interval", "NFD is rendered by gpu-render"),
    Move("node-feature-discovery.priorityClassName", "nfd.priorityClassName", "NFD is rendered by gpu-render"),
    Move("node-feature-discovery.worker.hostNetwork", "nfd.worker.hostNetwork", "NFD is rendered by gpu-render: the worker on the host network"),
    Move("node-feature-discovery.worker.dnsPolicy", "nfd.worker.dnsPolicy", "NFD is rendered by gpu-render"),
    Move("node-feature-discovery.worker.extraEnvs", "nfd.worker.extraEnvs", "NFD is rendered by gpu-render: the worker's extra env (an API server address)"),
    Move("node-feature-discovery.worker.config.sources.pci.deviceClassWhitelist", "nfd.worker.pciDeviceClassWhitelist", "NFD is rendered by gpu-render: the worker's PCI whitelist"),
    Move("node-feature-discovery.worker.config.sources.pci.deviceLabelFields", "nfd.worker.pciDeviceLabelFields", "NFD is rendered by gpu-render"),
    Move("node-feature-discovery.worker.config.sources.custom", "nfd.worker.customSources", "NFD is rendered by gpu-render: the worker's custom feature rules"),
    # renamed upstream
    Move("dcgmPodExporter.image", "dcgmExporter.image", "renamed dcgmExporter in 1.1"),
    Move("dcgmPodExporter.repository", "dcgmExporter.repository", "renamed dcgmExporter in 1.1"),
    Move("dcgmPodExporter.version", "dcgmExporter.version", "renamed dcgmExporter in 1.1"),
    Move("gfd.migStrategy", "mig.strategy", "became the fleet-wide mig.strategy in v1.7"),
    Move("driver.rollingUpdate.maxUnavailable", "driver.upgradePolicy.maxUnavailable", "became driver.upgradePolicy in v22.9"),
    Move("*.tolerations", "daemonsets.tolerations", _SCHEDULING),
    Move("*.priorityClassName", "daemonsets.priorityClassName", _SCHEDULING),
    Move(
        "*.podSecurityContext",
        None,
        "a pod security context per component, which the chart passed on up to 1.7; from 1.8 the operator takes none from the chart (daemonsets.podSecurityContext is a ClusterPolicy field of 26.3 that no chart writes)",
    ),
    # removed, no equivalent
    Move("*.affinity", None, "per-component affinity was removed in v1.8; gpu-render's operands select GPU nodes by labels (use nodePools[].driver.nodeSelector or overlay patches)"),
    Move("*.nodeSelector.nvidia.com/gpu.present", None, _SELECTOR),
    Move("*.nodeSelector.nvidia.com/gpu.deploy.*", None, _SELECTOR),
    Move("*.nodeSelector", None, _SELECTOR),
    Move("*.securityContext", None, _SECURITY),
    Move("*.securityContext.*", None, _SECURITY),
    Move("*.securityContext.*.*", None, _SECURITY),
    Move("driver.repoConfig.destinationDir", None, "since v1.9 repo files are mounted at the OS's package-manager folder (/etc/apt/sources.list.d, /etc/yum.repos.d), as gpu-render does"),
    Move("driver.use_ocp_driver_toolkit", None, "the OpenShift Driver Toolkit image is picked by the operator at runtime; set driver images per pool instead"),
    Move("gfd.discoveryIntervalSeconds", None, "removed in v1.7; GFD relabels every 60 s (set GFD_SLEEP_INTERVAL in gfd.env to change it)"),
    Move("replicaCount", None, "the operator Deployment's replicas; gpu-render deploys no operator"),
)


NFD_IMAGE = "node-feature-discovery.image.repository"
"""The NFD chart names its image whole (``registry.k8s.io/nfd/node-feature-discovery``);
gpu-render names it as every operand's, ``nfd.repository`` and ``nfd.image``: the importer
splits it at its last ``/`` (a mirror's path, as an air-gapped file writes it, is kept)."""
NFD_IMAGE_WHY = "NFD is rendered by gpu-render: its image, as repository and image"


NAMED_REMOVALS = frozenset({"node-feature-discovery"})
"""Removed subtrees whose keys each did something in their own chart (the NFD worker's
``affinity``, its master's ``config.noPublish``): the importer names every key it removes
there, as one reason for the whole ``operator`` section would not."""


def split_image(value: str) -> tuple[str, str] | None:
    """(repository, image) of a whole image name, or None when it has no repository part."""
    head, _, tail = value.rpartition("/")
    return (head, tail) if head and tail else None


@lru_cache(maxsize=1)
def chart_keys() -> tuple[tuple[str, ...], dict[str, tuple[str, str]]]:
    """(releases oldest first, key -> (first release, last release))."""
    data = yamlio.load(resources.files("renderer.data").joinpath("chart-keys.yaml").read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    keys = {str(k): (str(v[0]), str(v[1])) for k, v in data["keys"].items()}
    return tuple(str(r) for r in data["releases"]), keys


def removed_in(key: str) -> str:
    """The first release without ``key`` (empty while the newest release still has it)."""
    releases, keys = chart_keys()
    span = keys.get(key)
    if span is None or span[1] == releases[-1]:
        return ""
    return releases[releases.index(span[1]) + 1]


def _matches(pattern: str, key: str) -> bool:
    pat, parts = pattern.split("."), key.split(".")
    if pattern.endswith(".nvidia.com/gpu.deploy.*"):
        return fnmatch.fnmatchcase(key, pattern)
    return len(pat) == len(parts) and all(p == k or (p == "*" and k not in NOT_COMPONENTS) for p, k in zip(pat, parts, strict=True))


NOT_COMPONENTS = frozenset({"node-feature-discovery", "operator", "daemonsets", "nfd", "cluster", "platform", "psp", "nodePools", "gitops"})
"""Top-level keys a ``*`` of :data:`MOVES` never stands for."""


def find_move(key: str, *, wildcards: bool = True) -> Move | None:
    """The first rule of :data:`MOVES` for a dotted chart key (exact rules only, or all)."""
    for move in MOVES:
        if (wildcards or "*" not in move.pattern) and _matches(move.pattern, key):
            return move
    return None


def schema_node(schema: dict[str, Any], key: str) -> dict[str, Any] | None:
    """The schema of a dotted policy key; {} inside free-form maps; None when refused."""
    defs = schema.get("$defs", {})
    node: dict[str, Any] = schema
    for part in key.split("."):
        while "$ref" in node:
            node = {**defs[node["$ref"].rsplit("/", 1)[-1]], **{k: v for k, v in node.items() if k != "$ref"}}
        props = node.get("properties")
        if props is not None and part in props:
            node = props[part]
            continue
        if props is None and node.get("type", "object") == "object":
            return {}
        extra = node.get("additionalProperties", True)
        if extra is False:
            return None
        node = extra if isinstance(extra, dict) else {}
    while "$ref" in node:
        node = {**defs[node["$ref"].rsplit("/", 1)[-1]], **{k: v for k, v in node.items() if k != "$ref"}}
    return node


IGNORED_BY_HELM = (
    "no GPU Operator chart release has {key}: Helm ignored it, so the operator never read it "
    "(gpu-render's policy has the key: write it there to have it)"
)


@lru_cache(maxsize=1)
def _chart_paths() -> tuple[frozenset[str], frozenset[str], frozenset[str]]:
    """(every chart key, every section that holds chart keys, the top-level sections of the chart)."""
    keys = frozenset(chart_keys()[1])
    sections = frozenset(".".join(k.split(".")[:n]) for k in keys for n in range(1, k.count(".") + 1))
    return keys, sections, frozenset(k.split(".")[0] for k in keys)


def helm_ignored(key: str) -> bool:
    """Is ``key`` (dotted, a policy key) one no chart release has, in a section of the chart
    (``daemonsets.podSecurityContext``): a chart values file that sets it had it ignored by Helm.
    gpu-render's own sections (``cluster``, ``nodePools``, ...) and keys inside a chart key's
    free-form value are not."""
    keys, sections, tops = _chart_paths()
    if key in keys or key in sections or key.split(".")[0] not in tops:
        return False
    parts = key.split(".")
    return not any(".".join(parts[:n]) in keys for n in range(1, len(parts)))


def fate(key: str, schema: dict[str, Any]) -> tuple[str, str | None, str]:
    """(``kept`` | ``moved`` | ``removed`` | ``refused``, destination, reason) of a dotted chart key.

    Order: a rule naming the key exactly; the operator-only table; the schema (kept as is);
    a wildcard rule (older per-component keys); otherwise refused.
    """
    from renderer.noeffect import OPERATOR_ONLY

    move = find_move(key, wildcards=False)
    if move is None:
        pointer = "/" + key.replace(".", "/")
        for op, why in OPERATOR_ONLY.items():
            if pointer == op or pointer.startswith(op + "/"):
                return "removed", None, why
        if schema_node(schema, key) is not None:
            if helm_ignored(key):
                return "removed", None, IGNORED_BY_HELM.format(key=key)
            return "kept", key, ""
        if key in chart_keys()[1] or any(k.startswith(key + ".") for k in chart_keys()[1]):
            move = find_move(key)  # older keys of a chart release only, never a typo
    if move is None:
        return "refused", None, "not a key of the policy schema"
    to = None if move.to is None else move.to.replace("*", key.split(".", 1)[0])
    return ("moved" if to else "removed"), to, move.why


KEPT_DIFFERENCES: dict[str, str] = {
    "driver.args": "after the driver container's `init`, where the operator puts them in its place: a leading `init` is refused and the importer takes it out (docs/fidelity.md)",
    "driver.startupProbe.initialDelaySeconds": "0 renders 0, where the operator keeps 60 seconds: a warning (docs/fidelity.md)",
    "gds.args": "never read by the operator (the sidecar runs its install script); run in the script's place here, with a warning (docs/fidelity.md)",
    "gdrcopy.args": "never read by the operator (the sidecar runs its install script); run in the script's place here, with a warning (docs/fidelity.md)",
    "devicePlugin.args": "the operator puts them in place of the asset's `sh -c /bin/entrypoint.sh` (its plugin does not start); passed to the plugin after the entrypoint here, with a warning (docs/fidelity.md)",
    "toolkit.args": "never read by the operator (its entrypoint runs nvidia-toolkit without arguments); passed to nvidia-toolkit here, with a warning (docs/fidelity.md)",
}
"""Chart keys kept whose rendering differs from the operator's in a documented way (docs/fidelity.md)."""


def markdown_table(schema: dict[str, Any]) -> str:
    """Every chart key of releases 1.0 to 26.7: where it goes, why, and the release that removed it."""
    _, keys = chart_keys()
    lines = ["| chart key | releases | here | why |", "| --- | --- | --- | --- |"]
    for key in sorted(keys):
        status, to, why = fate(key, schema)
        first, last = keys[key]
        gone = removed_in(key)
        span = f"{minor(first)} to {minor(last)}" + (f" (removed in {minor(gone)})" if gone else "")
        if status == "kept":
            from renderer.noeffect import reason

            listed = reason("/" + key.replace(".", "/"))
            if listed:
                where, why = "kept, no effect", listed
            elif key in KEPT_DIFFERENCES:
                where, why = "kept, differs", KEPT_DIFFERENCES[key]
            else:
                where, why = "kept", "renders as the operator would"
        elif status == "moved":
            where = f"moved to `{to}`"
        else:
            where = status
        if key in BY_VALUE:
            where, why = BY_VALUE[key]
        lines.append(f"| `{key}` | {span} | {where} | {why.replace('|', '/')} |")
    return "\n".join(lines) + "\n"


def minor(tag: str) -> str:
    """``v23.6.2`` -> ``23.6`` (the table names minor releases)."""
    return ".".join(tag.removeprefix("v").split(".")[:2])
