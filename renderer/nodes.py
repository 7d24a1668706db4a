"""Node inventory: turn ``kubectl get nodes -o json`` into node pools, and check coverage.

Pure: the CLI reads the file and passes its text. ``import`` groups GPU nodes by OS (and by
kernel when precompiled drivers are on) into ``nodePools`` entries; ``check`` matches every GPU
node against the resolved pools of a cluster and says which image it would get, which nodes no
pool covers (a kernel upgrade that outran the precompiled pools, missing NFD labels) and which
nodes two pools fight over.
"""

from __future__ import annotations

import copy
import io
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from renderer import driverimage as di
from renderer.model import Pool
from renderer.problems import Problem

GPU_LABELS = (
    "feature.node.kubernetes.io/pci-10de.present",
    "feature.node.kubernetes.io/pci-0300_10de.present",
    "feature.node.kubernetes.io/pci-0302_10de.present",
    "nvidia.com/gpu.present",
)
PRODUCT_LABEL = "nvidia.com/gpu.product"
_NAME = re.compile(r"[a-z0-9]([-.a-z0-9]{0,251}[a-z0-9])?")
RUNTIMES = {"containerd": "containerd", "cri-o": "crio", "docker": "docker"}
"""``status.nodeInfo.containerRuntimeVersion`` scheme -> the pool's ``runtime`` value."""


@dataclass(frozen=True)
class Node:
    """What gpu-render needs from one Node object."""

    name: str
    labels: dict[str, str]
    runtime: str = ""
    kernel_info: str = ""
    """``status.nodeInfo.kernelVersion`` (used only to explain missing NFD labels)."""

    @property
    def gpu(self) -> bool:
        return any(self.labels.get(k) == "true" for k in GPU_LABELS)

    @property
    def os_id(self) -> str:
        return self.labels.get(di.LABEL_ID, "")

    @property
    def os_version(self) -> str:
        return self.labels.get(di.LABEL_VERSION, "")

    @property
    def kernel(self) -> str:
        return self.labels.get(di.LABEL_KERNEL, "")

    def missing_labels(self, precompiled: bool = False) -> list[str]:
        """NFD labels the driver DaemonSet selects on that this node lacks."""
        wanted = [di.LABEL_ID, di.LABEL_VERSION] + ([di.LABEL_KERNEL] if precompiled else [])
        return [k for k in wanted if not self.labels.get(k)]


def parse_nodes(text: str | bytes, path: str) -> tuple[list[Node], list[Problem]]:
    """Nodes of a ``kubectl get nodes -o json`` document (a List, a NodeList or one Node)."""
    from renderer.inputs import MAX_NODES_BYTES, MAX_NODES_VALUES
    from renderer.loader import load_json

    doc, found = load_json(text.encode("utf-8", "surrogatepass") if isinstance(text, str) else text, path, MAX_NODES_BYTES, MAX_NODES_VALUES)
    if found:
        return [], [Problem(p.file, p.line, p.column, p.pointer, p.message, hint="pass the output of `kubectl get nodes -o json`", code="nodes-json") for p in found]
    if isinstance(doc, dict) and doc.get("kind") == "Node":
        items: Any = [doc]
    elif isinstance(doc, dict) and isinstance(doc.get("items"), list):
        items = doc["items"]
    elif isinstance(doc, list):
        items = doc
    else:
        return [], [Problem(path, 1, 1, "", "expected a Node list (`kubectl get nodes -o json`)", code="nodes-shape")]
    nodes: list[Node] = []
    problems: list[Problem] = []
    for index, item in enumerate(items):
        meta = item.get("metadata") if isinstance(item, dict) else None
        if not isinstance(meta, dict) or not meta.get("name"):
            problems.append(Problem(path, 1, 1, f"/items/{index}", "item is not a Node with metadata.name", code="nodes-shape"))
            continue
        status: dict[str, Any] = item["status"] if isinstance(item.get("status"), dict) else {}
        info: dict[str, Any] = status["nodeInfo"] if isinstance(status.get("nodeInfo"), dict) else {}
        raw_labels = meta.get("labels") or {}
        if not isinstance(raw_labels, dict) or not all(isinstance(v, str) for v in raw_labels.values()):
            problems.append(Problem(path, 1, 1, f"/items/{index}/metadata/labels", "labels must be a mapping of strings", code="nodes-shape"))
            continue
        if not isinstance(meta["name"], str) or not _NAME.fullmatch(meta["name"]):
            problems.append(Problem(path, 1, 1, f"/items/{index}/metadata/name", f"node name {str(meta['name'])[:80]!r} is not a DNS name", code="nodes-shape"))
            continue
        runtime = RUNTIMES.get(str(info.get("containerRuntimeVersion") or "").split("://")[0], "")
        labels = {str(k): v for k, v in raw_labels.items()}
        nodes.append(Node(str(meta["name"]), labels, runtime, str(info.get("kernelVersion") or "")))
    return sorted(nodes, key=lambda n: n.name), problems


# ---------------------------------------------------------------- import


@dataclass(frozen=True)
class ImportResult:
    pools: list[dict[str, Any]]
    members: dict[str, list[str]]
    """pool name -> node names."""
    skipped: dict[str, str] = field(default_factory=dict)
    """GPU node name -> why it is in no pool (missing NFD labels)."""
    non_gpu: int = 0
    dropped: list[str] = field(default_factory=list)
    """Existing pools that select no node of the inventory."""


def _pool_name(os_id: str, version: str, kernel: str) -> str:
    base = re.sub(r"[^a-z0-9]+", "", f"{os_id}{version}".lower()) or "pool"
    if kernel:
        base = f"{base}-{re.sub(r'[^a-z0-9]+', '-', di.sanitize_kernel(kernel))}"
    base = base.strip("-")[:40].rstrip("-")
    return base


INHERITED = ("driver", "runtime", "runtimeConfig", "gpuProduct", "mig", "devicePluginConfig")
"""Settings a new pool takes over from a dropped or kept pool of the same OS."""


def import_pools(nodes: Iterable[Node], *, precompiled: bool, release: str = di.NEWEST, existing: Sequence[Pool] = ()) -> ImportResult:
    """Group GPU nodes by OS tag (and kernel when precompiled) into ``nodePools`` entries.

    Versions that the release's OS tag merges (rhel 9.4 and 9.6 under v26.7) become one pool
    whose ``os.version`` is the major version. With ``existing`` pools (the values' own), import
    reconciles instead of starting over: a pool that still selects nodes is kept as written
    (name, driver settings, selectors), nodes no pool selects get new pools that inherit the
    settings of an existing pool of the same OS (a kernel upgrade keeps its driver settings),
    and pools that select no node any more are dropped (listed in ``dropped``).
    """
    keep = [p for p in existing if p.precompiled == precompiled]
    groups: dict[tuple[str, str, str], list[Node]] = {}
    kept: dict[str, list[Node]] = {p.name: [] for p in keep}
    skipped: dict[str, str] = {}
    non_gpu = 0
    for node in nodes:
        if not node.gpu:
            non_gpu += 1
            continue
        owners = [p for p in keep if di.matches(p.node_selector, node.labels)]
        if len(owners) == 1:
            kept[owners[0].name].append(node)
            continue
        missing = node.missing_labels(precompiled)
        if missing:
            skipped[node.name] = "missing NFD labels: " + ", ".join(missing)
            continue
        tag = di.os_tag(node.os_id, node.os_version, release)
        groups.setdefault((node.os_id, tag, node.kernel if precompiled else ""), []).append(node)
    pools: list[dict[str, Any]] = []
    members: dict[str, list[str]] = {}
    for pool in keep:
        if kept[pool.name]:
            pools.append(copy.deepcopy(pool.values))
            members[pool.name] = [n.name for n in kept[pool.name]]
    dropped = [p.name for p in existing if p.name not in members]
    used = {p.name for p in existing}
    for (os_id, tag, kernel), group in sorted(groups.items()):
        entry = _new_pool(os_id, tag, kernel, group, used, _same_os(existing, os_id, tag, release))
        pools.append(entry)
        members[entry["name"]] = [n.name for n in group]
    return ImportResult(pools, members, skipped, non_gpu, dropped)


def _same_os(existing: Sequence[Pool], os_id: str, tag: str, release: str) -> dict[str, Any]:
    """The first existing pool with this OS tag: its settings seed a new pool."""
    for pool in existing:
        if pool.os_id == os_id and di.os_tag(pool.os_id, pool.os_version, release) == tag:
            return pool.values
    return {}


def _new_pool(os_id: str, tag: str, kernel: str, group: list[Node], used: set[str], seed: dict[str, Any]) -> dict[str, Any]:
    versions = sorted({n.os_version for n in group})
    version = versions[0] if len(versions) == 1 else tag[len(os_id) :]
    name = _pool_name(os_id, version, kernel)
    candidate, suffix = name, 2
    while candidate in used:
        candidate = f"{name[: 40 - len(str(suffix)) - 1]}-{suffix}"
        suffix += 1
    used.add(candidate)
    pool: dict[str, Any] = {"name": candidate, "os": {"id": os_id, "version": version}}
    if kernel:
        pool["kernel"] = kernel
    runtimes = {n.runtime for n in group if n.runtime}
    if len(runtimes) == 1:
        pool["runtime"] = runtimes.pop()
    products = {n.labels.get(PRODUCT_LABEL, "") for n in group}
    if len(products) == 1 and "" not in products:
        pool["gpuProduct"] = products.pop()
    for key in INHERITED:
        if key in seed and key not in pool:
            pool[key] = copy.deepcopy(seed[key])
    return pool


def _yaml() -> Any:
    from ruamel.yaml import YAML

    yaml = YAML(typ="rt")
    yaml.indent(mapping=2, sequence=4, offset=2)
    yaml.width = 4096
    return yaml


def _commented_pools(result: ImportResult) -> Any:
    from ruamel.yaml.comments import CommentedMap, CommentedSeq

    seq = CommentedSeq()
    for index, pool in enumerate(result.pools):
        item = CommentedMap()
        for key, value in pool.items():
            item[key] = CommentedMap(value) if isinstance(value, dict) else value
        if "os" in item:
            item["os"].fa.set_flow_style()
        seq.append(item)
        nodes = result.members.get(pool["name"], [])
        shown = ", ".join(nodes[:5]) + (f", ... ({len(nodes)} in all)" if len(nodes) > 5 else "")
        seq.yaml_set_comment_before_after_key(index, before=f"{len(nodes)} node(s): {shown}", indent=2)
    return seq


def pools_yaml(result: ImportResult) -> str:
    """``nodePools:`` YAML ready to paste into values, each pool headed by its nodes."""
    from ruamel.yaml.comments import CommentedMap

    doc = CommentedMap()
    doc["nodePools"] = _commented_pools(result)
    buf = io.StringIO()
    _yaml().dump(doc, buf)
    lines = [f"# {name}: not imported, {why}" for name, why in sorted(result.skipped.items())]
    return "".join(f"{line}\n" for line in lines) + buf.getvalue()


def replace_pools(text: str, result: ImportResult) -> str:
    """``text`` (a values file) with its ``nodePools`` replaced; comments elsewhere survive."""
    from ruamel.yaml.comments import CommentedMap

    yaml = _yaml()
    doc = yaml.load(text) if text.strip() else None
    if doc is None:
        doc = CommentedMap()
    if not isinstance(doc, CommentedMap):
        raise ValueError("the values file's top level is not a mapping")
    pools = _commented_pools(result)
    if "nodePools" in doc:
        position = list(doc).index("nodePools")
        del doc["nodePools"]
        doc.ca.items.pop("nodePools", None)  # ruamel keeps the old first pool's comment on the key
        doc.insert(position, "nodePools", pools)
    else:
        doc["nodePools"] = pools
    buf = io.StringIO()
    yaml.dump(doc, buf)
    return buf.getvalue()


# ---------------------------------------------------------------- check

OK = "ok"
UNCOVERED = "uncovered"
AMBIGUOUS = "ambiguous"
NO_LABELS = "missing-labels"


@dataclass(frozen=True)
class NodeStatus:
    node: str
    status: str
    pool: str = ""
    image: str = ""
    reason: str = ""

    def to_json(self) -> dict[str, str]:
        return {"node": self.node, "status": self.status, "pool": self.pool, "image": self.image, "reason": self.reason}


@dataclass(frozen=True)
class CheckReport:
    nodes: list[NodeStatus]
    unused_pools: list[str]
    non_gpu: list[str]

    @property
    def ok(self) -> bool:
        return all(n.status == OK for n in self.nodes)

    def to_json(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "nodes": [n.to_json() for n in self.nodes],
            "unusedPools": self.unused_pools,
            "nonGpuNodes": self.non_gpu,
        }


def _near_miss(node: Node, pools: Iterable[Pool]) -> str:
    """Why no pool matches: the kernel drifted, a selector label is missing, or no pool has its OS."""
    drift: list[str] = []
    lacking: list[str] = []
    for pool in pools:
        differ = [k for k, v in pool.node_selector.items() if k in node.labels and node.labels[k] != v]
        missing = [k for k in pool.node_selector if k not in node.labels]
        if differ == [di.LABEL_KERNEL] and not missing:
            drift.append(pool.kernel)
        elif not differ and missing:
            lacking.append(f"pool {pool.name} selects on {', '.join(missing)}, which the node lacks")
    if drift:
        return f"kernel {node.kernel} is covered by no pool (pools of this OS cover kernel {', '.join(sorted(drift))}): the precompiled image for it is missing; add a pool for the new kernel"
    if lacking:
        return "; ".join(lacking)
    tags = ", ".join(sorted({p.os_tag for p in pools})) or "nothing"
    return f"no pool for OS {node.os_id} {node.os_version} (the pools cover {tags})"


def check_nodes(nodes: Iterable[Node], pools: Iterable[Pool]) -> CheckReport:
    """Every GPU node must be selected by exactly one pool."""
    pools = list(pools)
    precompiled = any(p.precompiled for p in pools)
    statuses: list[NodeStatus] = []
    non_gpu: list[str] = []
    used: set[str] = set()
    for node in nodes:
        if not node.gpu:
            non_gpu.append(node.name)
            continue
        matched = [p for p in pools if di.matches(p.node_selector, node.labels)]
        used.update(p.name for p in matched)
        if len(matched) == 1:
            statuses.append(NodeStatus(node.name, OK, matched[0].name, matched[0].image))
        elif matched:
            names = ", ".join(p.name for p in matched)
            statuses.append(NodeStatus(node.name, AMBIGUOUS, matched[0].name, matched[0].image, f"selected by several pools: {names}"))
        elif node.missing_labels(precompiled):
            reason = "missing NFD labels: " + ", ".join(node.missing_labels(precompiled))
            statuses.append(NodeStatus(node.name, NO_LABELS, reason=reason + "; is NFD running on this node?"))
        else:
            statuses.append(NodeStatus(node.name, UNCOVERED, reason=_near_miss(node, pools)))
    unused = [p.name for p in pools if p.name not in used]
    return CheckReport(statuses, unused, non_gpu)


def report_text(report: CheckReport) -> str:
    """One line per GPU node, then a summary."""
    lines: list[str] = []
    width = max((len(n.node) for n in report.nodes), default=4)
    for n in report.nodes:
        if n.status == OK:
            lines.append(f"{n.node:<{width}}  ok         {n.pool}  {n.image}")
        else:
            lines.append(f"{n.node:<{width}}  {n.status:<9}  {n.reason}")
    for name in report.unused_pools:
        lines.append(f"pool {name} selects no node in this inventory")
    bad = sum(1 for n in report.nodes if n.status != OK)
    lines.append(f"{len(report.nodes)} GPU node(s), {bad} not covered by exactly one pool, {len(report.non_gpu)} non-GPU node(s) ignored")
    return "\n".join(lines) + "\n"
