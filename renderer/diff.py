"""Semantic diff of two renders: objects matched by identity, field paths, disruption classes.

Pure: takes objects (or ``{path: text}`` output trees) and resolved models, returns a
:class:`Diff`. Reading git refs and folders is done by :mod:`renderer.gitsource` and the CLI;
formatting by :mod:`renderer.diff_report`.

Vocabulary: a *scope* is one cluster (or ``fleet``, the base policy; ``base``/``argocd`` for
output folders); objects are matched per scope by (group, kind, namespace, name). Each
change gets one or more *disruption classes* from the tables below, which are keyed by
component name and kind so that new components only add a row.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NamedTuple

from renderer.model import Model

if TYPE_CHECKING:
    from renderer.memo import Memo

Obj = dict[str, Any]

# --------------------------------------------------------------------------------------
# Tables: what each class means, which class each component / kind / field causes.
# --------------------------------------------------------------------------------------

CLASSES: dict[str, str] = {
    "driver-reload": "driver pods are replaced (rolled by the DaemonSet controller, or under OnDelete when you delete them) and reload the kernel modules; GPU workloads on those nodes are evicted or drained per driver.upgradePolicy",
    "runtime-restart": "the container toolkit reconfigures and restarts containerd/CRI-O on those GPU nodes",
    "gpu-reset": "MIG configuration or strategy changes: GPUs are repartitioned/reset and the GPU resources nodes advertise change",
    "stack-switch": "a node pool changes resourceAllocation: its GPUs move between the device plugin (nvidia.com/gpu) and DRA ResourceClaims; drain GPU workloads from those nodes first",
    "scheduling-pause": "device plugin pods restart: no new GPU pods are scheduled on those nodes until it re-registers",
    "claim-pause": "DRA kubelet plugin or ComputeDomain controller pods restart: no new ResourceClaims are prepared on those nodes until the plugin re-registers",
    "metrics-gap": "DCGM / DCGM exporter pods restart: GPU metrics have a gap",
    "node-label-churn": "NFD/GFD rules or workers change: node labels are recomputed and selectors may flip",
    "pod-restart": "operand pods restart; running GPU workloads are not touched",
    "none": "metadata or non-pod objects only: nothing restarts",
}
"""Class name -> one-line explanation, most disruptive first (this order is the report order)."""

COMPONENT_CLASSES: dict[str, str] = {
    "driver": "driver-reload",
    "gds": "driver-reload",
    "gdrcopy": "driver-reload",
    "vgpu-manager": "driver-reload",
    "vfio-manager": "driver-reload",
    "container-toolkit": "runtime-restart",
    "toolkit": "runtime-restart",
    "mig-manager": "gpu-reset",
    "vgpu-device-manager": "gpu-reset",
    "cc-manager": "gpu-reset",
    "device-plugin": "scheduling-pause",
    "dra-driver": "claim-pause",
    "mps-control-daemon": "scheduling-pause",
    "sandbox-device-plugin": "scheduling-pause",
    "kata-sandbox-device-plugin": "scheduling-pause",
    "dcgm": "metrics-gap",
    "dcgm-exporter": "metrics-gap",
    "dcgm-exporter-dra": "metrics-gap",
    "node-status-exporter": "metrics-gap",
    "nfd": "node-label-churn",
    "node-labeller": "node-label-churn",
    "gpu-feature-discovery": "node-label-churn",
    "gfd": "node-label-churn",
}
"""Component (folder name in output/base) -> class of a change that restarts its pods.
Components not listed restart as ``pod-restart``."""

NAME_HINTS: tuple[tuple[str, str], ...] = (
    ("nvidia-driver-daemonset", "driver"),
    ("nvidia-container-toolkit", "container-toolkit"),
    ("nvidia-device-plugin", "device-plugin"),
    ("nvidia-dra-driver", "dra-driver"),
    ("nvidia-mig-manager", "mig-manager"),
    ("nvidia-vfio-manager", "vfio-manager"),
    ("nvidia-vgpu-device-manager", "vgpu-device-manager"),
    ("nvidia-cc-manager", "cc-manager"),
    ("nvidia-node-status-exporter", "node-status-exporter"),
    ("nvidia-dcgm-exporter", "dcgm-exporter"),
    ("nvidia-dcgm", "dcgm"),
    ("gpu-feature-discovery", "gpu-feature-discovery"),
    ("node-feature-discovery", "nfd"),
    ("nfd-", "nfd"),
)
"""Object-name prefix -> component, for objects whose path does not name a component."""

POD_TEMPLATE: dict[str, tuple[str, ...]] = {
    "DaemonSet": ("spec", "template"),
    "Deployment": ("spec", "template"),
    "StatefulSet": ("spec", "template"),
    "ReplicaSet": ("spec", "template"),
    "Job": ("spec", "template"),
    "CronJob": ("spec", "jobTemplate", "spec", "template"),
    "Pod": ("spec",),
}
"""Kinds that run pods, and where their pod template lives: a change under it restarts pods."""

CONFIG_KINDS = frozenset({"ConfigMap", "Secret"})
LABEL_RULE_KINDS = frozenset({"NodeFeatureRule", "NodeFeatureGroup"})

FIELD_RULES: tuple[tuple[re.Pattern[str], str, str], ...] = (
    (re.compile(r"env\[name=([A-Z_]*MIG[A-Z_]*)\]"), "gpu-reset", "MIG settings change ({names})"),
    (re.compile(r"env\[name=(RUNTIME|CONTAINERD_[A-Z_]+|CRIO_[A-Z_]+|RUNTIME_[A-Z_]+)\]"), "runtime-restart", "container runtime settings change ({names})"),
)
"""Field-path patterns that add a class whatever the component (a MIG env var, a runtime
setting); group 1 names the setting in the one-line reason."""

POLICY_CLASSES: dict[str, tuple[str, str]] = {
    "driver": ("driver-reload", "driver"),
    "gds": ("driver-reload", "gds"),
    "gdrcopy": ("driver-reload", "gdrcopy"),
    "vgpuManager": ("driver-reload", "vgpuManager"),
    "vfioManager": ("driver-reload", "vfioManager"),
    "toolkit": ("runtime-restart", "toolkit"),
    "cdi": ("runtime-restart", "toolkit"),
    "mig": ("gpu-reset", ""),
    "migManager": ("gpu-reset", "migManager"),
    "vgpuDeviceManager": ("gpu-reset", "vgpuDeviceManager"),
    "ccManager": ("gpu-reset", "ccManager"),
    "devicePlugin": ("scheduling-pause", "devicePlugin"),
    "draDriver": ("claim-pause", ""),
    "sandboxDevicePlugin": ("scheduling-pause", "sandboxDevicePlugin"),
    "kataSandboxDevicePlugin": ("scheduling-pause", "kataSandboxDevicePlugin"),
    "dcgm": ("metrics-gap", "dcgm"),
    "dcgmExporter": ("metrics-gap", "dcgmExporter"),
    "nfd": ("node-label-churn", "nfd"),
    "gfd": ("node-label-churn", "gfd"),
    "nodeLabeller": ("node-label-churn", "nodeLabeller"),
    "validator": ("pod-restart", ""),
    "daemonsets": ("pod-restart", ""),
    "nodeStatusExporter": ("metrics-gap", "nodeStatusExporter"),
}
"""Top-level policy key -> (class, values key whose ``enabled`` gates it; empty: always)."""

POOL_FIELD_CLASSES: tuple[tuple[re.Pattern[str], str, str], ...] = (
    (re.compile(r"^(driver|kernel|os)$"), "driver-reload", "driver"),
    (re.compile(r"^runtimeVersion$"), "none", ""),  # a statement about the nodes, rendered nowhere
    (re.compile(r"(?i)runtime"), "runtime-restart", "toolkit"),
    (re.compile(r"(?i)mig"), "node-label-churn", "migManager"),
    (re.compile(r"^resourceAllocation$"), "stack-switch", ""),
    (re.compile(r"(?i)deviceplugin"), "node-label-churn", "devicePlugin"),
)
"""Field of a ``nodePools`` entry -> (class, gating values key). A pool's ``mig.config`` and
``devicePluginConfig`` are seeded by the node labeller on nodes that have no such label: no
GPU is repartitioned and no plugin restarts on a node already labelled."""

SEED_ONLY = {
    "mig": "seeds nvidia.com/mig.config only on nodes without it; labelled nodes keep their profile (relabel one to repartition it)",
    "devicePluginConfig": "seeds nvidia.com/device-plugin.config only on nodes without it; labelled nodes keep theirs",
}
"""Pool fields whose change reaches only nodes that join later: the reason diff gives."""

CLUSTER_FIELD_CLASSES: dict[str, tuple[str, str]] = {
    "containerRuntime": ("runtime-restart", "toolkit"),
}

NOISE_KEY = re.compile(r"(^app\.kubernetes\.io/version$|^helm\.sh/chart$|^checksum/|gpu-render[^/]*/.*(version|checksum|hash)|(version|checksum|hash)[^/]*gpu-render)")
"""Label/annotation keys that change with every tool release or input hash: noise."""

NOISE_FILES = frozenset({"gpu-render.lock"})

# --------------------------------------------------------------------------------------
# Field-path diff
# --------------------------------------------------------------------------------------


class Keyed(NamedTuple):
    """A list item matched by its name key: ``containers[name=driver]``."""

    key: str
    value: str


Segment = str | int | Keyed
FieldPath = tuple[Segment, ...]


class _Missing:
    def __repr__(self) -> str:
        return "<missing>"


MISSING: Any = _Missing()
_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]*$")
LIST_KEYS = ("name", "key", "mountPath", "containerPort")


def format_path(path: Iterable[Segment]) -> str:
    """``spec.template.spec.containers[name=driver].image``; odd keys as ``labels["a/b"]``."""
    out = ""
    for seg in path:
        if isinstance(seg, Keyed):
            out += f"[{seg.key}={seg.value}]"
        elif isinstance(seg, int):
            out += f"[{seg}]"
        elif _IDENT.match(seg):
            out += f".{seg}" if out else seg
        else:
            out += f'["{seg}"]'
    return out


def _list_key(old: list[Any], new: list[Any]) -> str | None:
    items = old + new
    if not items or not all(isinstance(i, dict) for i in items):
        return None
    for key in LIST_KEYS:
        unique = len({str(i.get(key)) for i in old}) == len(old) and len({str(i.get(key)) for i in new}) == len(new)
        if unique and all(key in i for i in items):
            return key
    return None


def field_diff(old: Any, new: Any, path: FieldPath = ()) -> Iterator[tuple[FieldPath, Any, Any]]:
    """(path, old, new) for every leaf that differs; MISSING marks an absent side."""
    if old == new:
        return
    if isinstance(old, dict) and isinstance(new, dict):
        for k in [*old, *(k for k in new if k not in old)]:
            yield from field_diff(old.get(k, MISSING), new.get(k, MISSING), (*path, k))
        return
    if isinstance(old, list) and isinstance(new, list):
        key = _list_key(old, new)
        if key is not None:
            by_old = {str(i[key]): i for i in old}
            by_new = {str(i[key]): i for i in new}
            for name in [*by_old, *(n for n in by_new if n not in by_old)]:
                yield from field_diff(by_old.get(name, MISSING), by_new.get(name, MISSING), (*path, Keyed(key, name)))
            if [str(i[key]) for i in old if str(i[key]) in by_new] != [str(i[key]) for i in new if str(i[key]) in by_old]:
                yield ((*path, "(order)"), [str(i[key]) for i in old], [str(i[key]) for i in new])
            return
        if all(isinstance(i, dict) for i in old + new):
            for i in range(max(len(old), len(new))):
                yield from field_diff(old[i] if i < len(old) else MISSING, new[i] if i < len(new) else MISSING, (*path, i))
            return
    yield (path, old, new)


def leaf_paths(value: Any, path: FieldPath = ()) -> Iterator[FieldPath]:
    """Path of every leaf under ``value`` (mappings only; lists and scalars are leaves)."""
    if isinstance(value, dict) and value:
        for k, v in value.items():
            yield from leaf_paths(v, (*path, k))
    else:
        yield path


# --------------------------------------------------------------------------------------
# Result types
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class FieldChange:
    path: str
    old: Any
    new: Any
    noise: bool = False

    @property
    def op(self) -> str:
        if self.old is MISSING:
            return "added"
        if self.new is MISSING:
            return "removed"
        return "changed"


@dataclass(frozen=True)
class Cause:
    """One disruption class of a change, why, and which pools it hits (empty: all)."""

    cls: str
    reason: str
    pools: tuple[str, ...] = ()


@dataclass(frozen=True)
class ObjectChange:
    scope: str
    component: str
    group: str
    kind: str
    namespace: str
    name: str
    op: str
    """``added``, ``removed``, ``changed`` or ``renamed``."""
    fields: tuple[FieldChange, ...] = ()
    causes: tuple[Cause, ...] = ()
    old_name: str = ""

    @property
    def noise(self) -> bool:
        return self.op == "changed" and all(f.noise for f in self.fields)

    @property
    def ident(self) -> str:
        ns = f"{self.namespace}/" if self.namespace else ""
        return f"{self.kind}/{ns}{self.name}"

    @property
    def classes(self) -> tuple[str, ...]:
        return _ordered({c.cls for c in self.causes})


@dataclass(frozen=True)
class PolicyChange:
    """A change of the resolved policy values of one scope (what the user edited)."""

    scope: str
    path: str
    old: Any
    new: Any
    causes: tuple[Cause, ...] = ()

    @property
    def classes(self) -> tuple[str, ...]:
        return _ordered({c.cls for c in self.causes})

    @property
    def op(self) -> str:
        return "added" if self.old is MISSING else "removed" if self.new is MISSING else "changed"


@dataclass(frozen=True)
class FileChange:
    """A generated file that is not a Kubernetes object (chart templates, lock file)."""

    path: str
    op: str
    noise: bool = False


@dataclass(frozen=True)
class VersionChange:
    """``driver pool ubuntu2204: 570.124.06 -> 580.95.05`` in the scopes listed."""

    label: str
    old: str
    new: str
    scopes: tuple[str, ...]


@dataclass(frozen=True)
class Disruption:
    cls: str
    explanation: str
    scopes: tuple[str, ...]
    pools: tuple[str, ...]
    """Pools hit; ``("*",)`` when every GPU node of those scopes is hit."""
    reasons: tuple[str, ...]


@dataclass(frozen=True)
class Diff:
    base: str
    head: str
    scopes_added: tuple[str, ...] = ()
    scopes_removed: tuple[str, ...] = ()
    scopes: tuple[str, ...] = ()
    objects: tuple[ObjectChange, ...] = ()
    policy: tuple[PolicyChange, ...] = ()
    files: tuple[FileChange, ...] = ()
    versions: tuple[VersionChange, ...] = field(default=())

    @property
    def real_objects(self) -> tuple[ObjectChange, ...]:
        return tuple(o for o in self.objects if not o.noise)

    @property
    def noise(self) -> tuple[str, ...]:
        """Every hidden change, one line each: never silently dropped."""
        out = [f"{f.path}: file changed" for f in self.files if f.noise]
        for o in self.objects:
            for f in o.fields:
                if f.noise:
                    out.append(f"{o.scope}: {o.ident}: {f.path}: {_short(f.old)} -> {_short(f.new)}")
        return tuple(out)

    @property
    def changed(self) -> bool:
        return bool(self.real_objects or self.policy or [f for f in self.files if not f.noise] or self.scopes_added or self.scopes_removed)

    def disruptions(self) -> list[Disruption]:
        causes: dict[str, list[tuple[str, Cause]]] = {}
        for o in self.real_objects:
            for c in o.causes:
                causes.setdefault(c.cls, []).append((o.scope, c))
        for p in self.policy:
            for c in p.causes:
                causes.setdefault(c.cls, []).append((p.scope, c))
        out = []
        for cls in CLASSES:
            if cls not in causes:
                continue
            items = causes[cls]
            scopes = tuple(sorted({s for s, _ in items}, key=scope_order))
            pools: set[str] = set()
            for _, c in items:
                pools.update(c.pools or ("*",))
            reasons = tuple(dict.fromkeys(c.reason for _, c in items))
            out.append(Disruption(cls, CLASSES[cls], scopes, tuple(sorted(pools)), reasons))
        return out

    def classes(self) -> tuple[str, ...]:
        return tuple(d.cls for d in self.disruptions())


def scope_order(scope: str) -> tuple[bool, bool, str]:
    """``fleet`` first, clusters by name, ``argocd`` last."""
    return (scope != "fleet", scope == "argocd", scope)


def _ordered(classes: set[str]) -> tuple[str, ...]:
    return tuple(c for c in CLASSES if c in classes)


def _short(value: Any, limit: int = 80) -> str:
    if value is MISSING:
        return "(none)"
    text = value if isinstance(value, str) else repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


# --------------------------------------------------------------------------------------
# Classification
# --------------------------------------------------------------------------------------


def component_of(obj: Obj, hint: str = "") -> str:
    """The component an object belongs to: the output folder if known, else its name or label."""
    if hint:
        return hint
    name = str(obj.get("metadata", {}).get("name", ""))
    for prefix, comp in NAME_HINTS:
        if name.startswith(prefix):
            return comp
    label = obj.get("metadata", {}).get("labels", {}).get("app.kubernetes.io/component")
    return str(label) if label else "other"


def pools_of(name: str, pools: Iterable[str]) -> tuple[str, ...]:
    """The pool an object is built for (per-pool DaemonSets end in ``-<pool>``); () = all."""
    hits = [p for p in pools if name.endswith(f"-{p}")]
    return (max(hits, key=len),) if hits else ()


def _is_noise(path: FieldPath, kind: str) -> bool:
    template = POD_TEMPLATE.get(kind, ())
    for prefix in (("metadata",), (*template, "metadata") if template else ("metadata",)):
        n = len(prefix)
        if path[:n] == prefix and len(path) > n + 1 and path[n] in ("labels", "annotations"):
            key = path[n + 1]
            return isinstance(key, str) and bool(NOISE_KEY.search(key))
    return False


def rollout(obj: Obj | None, component: str) -> str:
    """How a pod template change reaches the pods of ``obj``: said from its update strategy."""
    if not obj or obj.get("kind") != "DaemonSet":
        return "its pods restart"
    strategy = (obj.get("spec") or {}).get("updateStrategy") or {}
    if strategy.get("type") == "OnDelete":
        who = "driver pods" if component == "driver" else "its pods"
        return f"nothing restarts by itself: OnDelete waits for you to delete {who}"
    budget = (strategy.get("rollingUpdate") or {}).get("maxUnavailable", 1)
    unit = "of the nodes" if isinstance(budget, str) and budget.endswith("%") else "node(s)"
    return f"the DaemonSet controller rolls {budget} {unit} at a time"


def classify(component: str, kind: str, op: str, paths: list[FieldPath], pools: tuple[str, ...], name: str = "", obj: Obj | None = None, *, digests: bool = False) -> tuple[Cause, ...]:
    """Disruption causes of one object change (``paths``: the non-noise changed fields;
    ``obj``: the new object, whose update strategy says how its pods are replaced;
    ``digests``: both sides are driver pods carrying ``DRIVER_CONFIG_DIGEST``)."""
    comp_cls = COMPONENT_CLASSES.get(component, "pod-restart")
    label = f"{component} {kind}/{name}" if name else f"{component} {kind}"
    if kind in LABEL_RULE_KINDS:
        return (Cause("node-label-churn", f"{label} {op}: NFD recomputes node labels", pools),)
    template = POD_TEMPLATE.get(kind)
    if op in ("added", "removed", "renamed"):
        if template is not None:
            verb = {"added": "start", "removed": "stop", "renamed": "are replaced"}[op]
            return (Cause(comp_cls, f"{label} {op}: its pods {verb}", pools),)
        if kind in CONFIG_KINDS and component in COMPONENT_CLASSES:
            return (Cause(comp_cls, f"{label} {op}: configuration of {component} changes", pools),)
        return (Cause("none", f"{label} {op}: no pods restart", pools),)
    causes: list[Cause] = []
    hits: dict[tuple[str, str], dict[str, None]] = {}
    for path in paths:
        text = format_path(path)
        if component == "node-labeller":
            break  # its env names labels it seeds once (MIG_CONFIG_DEFAULT): no GPU is reset by it
        for pattern, cls, why in FIELD_RULES:
            m = pattern.search(text)
            if m:
                hits.setdefault((cls, why), {})[m.group(1)] = None
    for (cls, why), names in hits.items():
        causes.append(Cause(cls, f"{label}: " + why.format(names=", ".join(names)), pools))
    if template is not None and any(p[: len(template)] == template for p in paths):
        causes.append(_template_cause(comp_cls, label, paths, pools, digests, rollout(obj, component)))
    elif kind in CONFIG_KINDS and any(p[:1] in (("data",), ("binaryData",), ("stringData",)) for p in paths):
        cls = COMPONENT_CLASSES.get(component, "none")
        causes.append(Cause(cls, f"{label}: configuration of {component} changes", pools))
    if not causes:
        only_meta = all(p[:1] == ("metadata",) for p in paths)
        causes.append(Cause("none", f"{label}: {'metadata only' if only_meta else 'no pod template change'}", pools))
    return tuple(dict.fromkeys(causes))


DIGEST_ENV = "DRIVER_CONFIG_DIGEST"
DIGEST_PATH = re.compile(r"env\[name=DRIVER_CONFIG_DIGEST\]")


def _template_cause(comp_cls: str, label: str, paths: list[FieldPath], pools: tuple[str, ...], digests: bool, how: str) -> Cause:
    """A pod template change (``how``: how its pods are replaced); between driver pods with
    ``DRIVER_CONFIG_DIGEST``, the digest says reinstall (it changes) or restart-only (it stays:
    the driver and its modules stay loaded)."""
    if not digests:
        return Cause(comp_cls, f"{label}: pod template changes, {how}", pools)
    if any(DIGEST_PATH.search(format_path(p)) for p in paths):
        return Cause(comp_cls, f"{label}: DRIVER_CONFIG_DIGEST changes: replaced driver pods reinstall the driver; {how}", pools)
    return Cause("pod-restart", f"{label}: DRIVER_CONFIG_DIGEST unchanged: replaced driver pods restart without a reinstall (restart-only); {how}", pools)


# --------------------------------------------------------------------------------------
# Object sets
# --------------------------------------------------------------------------------------


class Ident(NamedTuple):
    group: str
    kind: str
    namespace: str
    name: str


@dataclass(frozen=True)
class Entry:
    obj: Obj
    component: str


Scope = dict[Ident, Entry]
"""One cluster's objects by identity."""


def ident(obj: Obj) -> Ident:
    api = str(obj.get("apiVersion", ""))
    group = api.rsplit("/", 1)[0] if "/" in api else ""
    meta = obj.get("metadata") or {}
    return Ident(group, str(obj.get("kind", "")), str(meta.get("namespace", "") or ""), str(meta.get("name", "")))


def scope_of(objs: Mapping[str, Iterable[Obj]]) -> Scope:
    """``{component: [obj]}`` (as :func:`renderer.render.objects` returns) -> a scope."""
    out: Scope = {}
    for component, items in objs.items():
        for obj in items:
            out[ident(obj)] = Entry(obj, component_of(obj, component))
    return out


def _rename_key(obj: Obj, k: Ident) -> str:
    """The object's content without its name and namespace (and their mentions, e.g. a
    handler or selector that repeats the name): equal keys mean a rename or a move."""
    import json

    body = {key: v for key, v in obj.items() if key != "metadata"}
    meta = {key: v for key, v in (obj.get("metadata") or {}).items() if key not in ("name", "namespace")}
    text = json.dumps({"m": meta, "b": body}, sort_keys=True, default=str)
    for word, mark in ((k.name, "\x00"), (k.namespace, "\x01")):
        if word:
            text = re.sub(r"(?<![A-Za-z0-9./:-])" + re.escape(json.dumps(word)[1:-1]) + r"(?![A-Za-z0-9./:-])", mark, text)
    return text


def diff_scope(scope: str, old: Scope, new: Scope, pools: Iterable[str] = ()) -> list[ObjectChange]:
    """Object changes of one scope: changed in place, renamed, added, removed."""
    pool_names = tuple(pools)
    out: list[ObjectChange] = []
    removed = [k for k in old if k not in new]
    added = [k for k in new if k not in old]
    renames: dict[Ident, Ident] = {}
    by_content: dict[tuple[str, str, str], list[Ident]] = {}
    for k in removed:
        by_content.setdefault((k.group, k.kind, _rename_key(old[k].obj, k)), []).append(k)
    for k in added:
        candidates = by_content.get((k.group, k.kind, _rename_key(new[k].obj, k)))
        if candidates:
            renames[k] = candidates.pop(0)
    gone = set(renames.values())
    for k in sorted(set(old) & set(new)):
        if old[k].obj == new[k].obj:
            continue
        raw = [(p, a, b, _is_noise(p, k.kind)) for p, a, b in field_diff(old[k].obj, new[k].obj)]
        fields = tuple(FieldChange(format_path(p), a, b, noise) for p, a, b, noise in raw)
        real = [p for p, _, _, noise in raw if not noise]
        comp = new[k].component
        pl = pools_of(k.name, pool_names)
        digests = comp == "driver" and DIGEST_ENV in str(old[k].obj) and DIGEST_ENV in str(new[k].obj)
        causes = classify(comp, k.kind, "changed", real, pl, k.name, new[k].obj, digests=digests) if real else ()
        out.append(ObjectChange(scope, comp, *k, "changed", fields, causes))
    for k in sorted(added):
        comp = new[k].component
        pl = pools_of(k.name, pool_names)
        if k in renames:
            was = renames[k]
            old_name = f"{was.namespace}/{was.name}" if was.namespace != k.namespace else was.name
            out.append(ObjectChange(scope, comp, *k, "renamed", (), classify(comp, k.kind, "renamed", [], pl, k.name), old_name))
        else:
            out.append(ObjectChange(scope, comp, *k, "added", (), classify(comp, k.kind, "added", [], pl, k.name)))
    for k in sorted(removed):
        if k in gone:
            continue
        comp = old[k].component
        pl = pools_of(k.name, pool_names)
        out.append(ObjectChange(scope, comp, *k, "removed", (), classify(comp, k.kind, "removed", [], pl, k.name)))
    return out


# --------------------------------------------------------------------------------------
# Policy (resolved values) and versions
# --------------------------------------------------------------------------------------


def _enabled(values: Mapping[str, Any], key: str) -> bool:
    if not key:
        return True
    section = values.get(key)
    return bool(section.get("enabled", False)) if isinstance(section, dict) else False


DRIVER_KEYS = frozenset({"driver", "gds", "gdrcopy", "vgpuManager"})
"""Fleet keys that resolve per pool: only pools whose resolved driver changed are hit."""


def classify_policy(path: FieldPath, old: Mapping[str, Any], new: Mapping[str, Any], driver_pools: tuple[str, ...] | None = None) -> tuple[Cause, ...]:
    """Class of a change of the resolved values; ``driver_pools``: the pools whose resolved
    driver (version, image, sidecar images) differs, when known."""
    text = format_path(path)
    top = path[0] if path else ""
    rule: tuple[str, str] | None = None
    pools: tuple[str, ...] = ()
    if top == "nodePools" and len(path) >= 2 and isinstance(path[1], Keyed):
        pools = (path[1].value,)
        if len(path) == 2:
            rule = ("driver-reload", "driver")
        else:
            fld = str(path[2])
            for pattern, cls, key in POOL_FIELD_CLASSES:
                if pattern.search(fld):
                    rule = (cls, key)
                    break
    elif top == "cluster" and len(path) >= 2:
        rule = CLUSTER_FIELD_CLASSES.get(str(path[1]))
    elif isinstance(top, str):
        rule = POLICY_CLASSES.get(top)
    if rule is None:
        return (Cause("none", f"policy {text}: no GPU operand restarts for it", pools),)
    cls, gate = rule
    if not (_enabled(old, gate) or _enabled(new, gate)):
        return (Cause("none", f"policy {text}: {gate} is disabled on both sides", pools),)
    if top == "nodePools" and len(path) >= 3 and str(path[2]) in SEED_ONLY:
        return (Cause(cls, f"policy {text}: the node labeller {SEED_ONLY[str(path[2])]}", pools),)
    if top in DRIVER_KEYS and driver_pools is not None:
        if not driver_pools:
            return (Cause("none", f"policy {text}: no pool's resolved driver changes (each pins its own)", ()),)
        pools = driver_pools
    return (Cause(cls, f"policy {text} changes", pools),)


def diff_policy(scope: str, old: Model, new: Model) -> list[PolicyChange]:
    before = {p.name: (p.driver, p.image, p.images) for p in old.pools}
    after = {p.name: (p.driver, p.image, p.images) for p in new.pools}
    changed = tuple(sorted(n for n in set(before) | set(after) if before.get(n) != after.get(n)))
    driver_pools = changed if (before or after) else None
    out = []
    for path, a, b in field_diff(old.values, new.values):
        out.append(PolicyChange(scope, format_path(path), a, b, classify_policy(path, old.values, new.values, driver_pools)))
    return out


def pool_versions(scope: str, old: Model, new: Model) -> list[tuple[str, str, str, str]]:
    """(scope, label, old, new) for every pool whose driver version or image changed."""
    out = []
    before = {p.name: p for p in old.pools}
    for p in new.pools:
        q = before.get(p.name)
        if q is None:
            continue
        ov, nv = str(q.driver.get("version", "")), str(p.driver.get("version", ""))
        if ov != nv:
            out.append((scope, f"driver pool {p.name}", ov, nv))
        elif q.image != p.image:
            out.append((scope, f"driver pool {p.name}", q.image, p.image))
    return out


IMAGE_FIELD = re.compile(r"\[name=([^\]]+)\]\.image$|\.env\[name=([A-Z0-9_]*IMAGE)\]\.value$")
"""A container's image, or an env var that names an image another pod pulls (``*_IMAGE``)."""


def image_versions(changes: Iterable[ObjectChange]) -> list[tuple[str, str, str, str]]:
    """(scope, label, old, new) for every container image (or ``*_IMAGE`` env) that changed."""
    out = []
    for o in changes:
        for f in o.fields:
            m = IMAGE_FIELD.search(f.path)
            if m is None or f.old is MISSING or f.new is MISSING or not isinstance(f.new, str):
                continue
            container = m.group(1) or m.group(2)
            old, new = str(f.old), str(f.new)
            repo_old, _, tag_old = old.rpartition(":")
            repo_new, _, tag_new = new.rpartition(":")
            if repo_old == repo_new and "/" not in tag_old:
                old, new = tag_old, tag_new
            pools = next((c.pools for c in o.causes if c.pools), ())
            label = o.component + (f" pool {pools[0]}" if pools else "")
            if container.removeprefix("nvidia-").removesuffix("-ctr") != o.component:
                label += f" ({container})"
            out.append((o.scope, label, old, new))
    return out


def group_versions(rows: Iterable[tuple[str, str, str, str]]) -> tuple[VersionChange, ...]:
    grouped: dict[tuple[str, str, str], list[str]] = {}
    for scope, label, old, new in rows:
        grouped.setdefault((label, old, new), []).append(scope)
    return tuple(VersionChange(label, old, new, tuple(sorted(set(s), key=scope_order))) for (label, old, new), s in sorted(grouped.items()))


# --------------------------------------------------------------------------------------
# Entry points
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Side:
    """One side of a diff: objects per scope, and (when rendered from a policy) the models."""

    label: str
    scopes: dict[str, Scope]
    models: dict[str, Model] = field(default_factory=dict)
    files: dict[str, str] = field(default_factory=dict)
    """Non-object files (path -> text), compared as text."""
    patches: dict[str, dict[str, bytes]] = field(default_factory=dict)
    """Per scope, the user's raw Kustomize patches (``overlays/<cluster>/patches/*.yaml``)."""


def diff_sides(old: Side, new: Side) -> Diff:
    names = sorted(set(old.scopes) | set(new.scopes), key=scope_order)
    objects: list[ObjectChange] = []
    policy: list[PolicyChange] = []
    version_rows: list[tuple[str, str, str, str]] = []
    for name in names:
        a, b = old.scopes.get(name, {}), new.scopes.get(name, {})
        ma, mb = old.models.get(name), new.models.get(name)
        pools = {p.name for m in (ma, mb) if m is not None for p in m.pools}
        pools |= {k.name.removeprefix("nvidia-driver-daemonset-") for s in (a, b) for k in s if k.name.startswith("nvidia-driver-daemonset-")}
        objects += diff_scope(name, a, b, sorted(pools))
        if ma is not None and mb is not None:
            policy += diff_policy(name, ma, mb)
            version_rows += pool_versions(name, ma, mb)
        policy += diff_patches(name, old.patches.get(name, {}), new.patches.get(name, {}), sorted(pools))
    pooled = {(s, label) for s, label, _, _ in version_rows}
    for row in image_versions(objects):
        if (row[0], row[1].split(" (", 1)[0]) not in pooled:
            version_rows.append(row)
    files: list[FileChange] = []
    for path in sorted(set(old.files) | set(new.files)):
        ta, tb = old.files.get(path), new.files.get(path)
        if ta == tb:
            continue
        op = "added" if ta is None else "removed" if tb is None else "changed"
        files.append(FileChange(path, op, path.rsplit("/", 1)[-1] in NOISE_FILES))
    return Diff(
        base=old.label,
        head=new.label,
        scopes_added=tuple(n for n in names if n not in old.scopes),
        scopes_removed=tuple(n for n in names if n not in new.scopes),
        scopes=tuple(names),
        objects=tuple(objects),
        policy=tuple(policy),
        files=tuple(files),
        versions=group_versions(version_rows),
    )


def side_from_models(
    label: str,
    base: Model,
    clusters: Mapping[str, Model],
    patches: Mapping[str, Iterable[tuple[str, bytes]]] | None = None,
    fleet: str = "fleet",
    memo: Memo | None = None,
) -> Side:
    """Render every scope's objects directly from resolved models (the fast path for git refs).

    ``memo`` (one for both sides of a diff) renders each distinct component configuration
    once; the diff only reads the objects, so sharing them is safe."""
    from renderer.render import objects

    models = {fleet: base, **clusters}
    raw = {name: dict(items) for name, items in (patches or {}).items()}
    return Side(label, {name: scope_of(objects(m, memo)) for name, m in models.items()}, dict(models), {}, raw)


def _patch_docs(text: bytes) -> dict[Ident, Obj] | None:
    from renderer import yamlio

    try:
        docs = yamlio.load_all(text.decode("utf-8"))
    except Exception:
        return None
    return {ident(d): d for d in docs if isinstance(d, dict)}


def diff_patches(scope: str, old: Mapping[str, bytes], new: Mapping[str, bytes], pools: Iterable[str] = ()) -> list[PolicyChange]:
    """Changes of the user's raw patches, object by object and field by field, classified
    like the objects they patch (a patch of a driver pod template is a driver reload)."""
    out: list[PolicyChange] = []
    pool_names = tuple(pools)
    for fname in sorted(set(old) | set(new)):
        a, b = old.get(fname), new.get(fname)
        if a == b:
            continue
        where = f"patches/{fname}"
        da, db = _patch_docs(a or b""), _patch_docs(b or b"")
        if da is None or db is None:
            out.append(PolicyChange(scope, where, "(unparsable)" if da is None else "(file)", "(unparsable)" if db is None else "(file)", (Cause("none", f"{where} does not parse", ()),)))
            continue
        for k in [*da, *(k for k in db if k not in da)]:
            ta, tb = da.get(k, MISSING), db.get(k, MISSING)
            comp = component_of(tb if tb is not MISSING else ta)
            pl = pools_of(k.name, pool_names)
            label = f"{where}: {k.kind}/{k.name}"
            if ta is MISSING or tb is MISSING:
                paths = list(leaf_paths(tb if ta is MISSING else ta))
                out.append(PolicyChange(scope, label, ta, tb, classify(comp, k.kind, "changed", paths, pl)))
                continue
            for p, x, y in field_diff(ta, tb):
                out.append(PolicyChange(scope, f"{label}: {format_path(p)}", x, y, classify(comp, k.kind, "changed", [p], pl)))
    return out


def side_from_tree(label: str, files: Mapping[str, str]) -> Side:
    """An output tree ``{relative path: text}`` as scopes of objects.

    ``base/<component>/*.yaml`` is the ``fleet`` scope; each ``overlays/<cluster>/`` is
    rebuilt into its cluster's full object set the way ``kubectl kustomize`` would: base,
    plus its ``resources/``, with its JSON 6902 ``patches/`` applied and ``$patch: delete``
    files removing objects; hand-written ``user-patches/`` (strategic merges) are compared
    as patches. ``argocd/`` is a scope of its own. Every other file (chart, lock) and any
    file that cannot be read this way is compared as text, so nothing is left out.
    """
    other: dict[str, str] = {}
    fleet: Scope = {}
    scopes: dict[str, Scope] = {}
    clusters: set[str] = set()
    for path, text in files.items():
        parts = path.split("/")
        if parts[0] == "overlays" and len(parts) >= 3:
            clusters.add(parts[1])
            continue
        objs = _objects_of(text) if path.endswith((".yaml", ".yml")) and parts[-1] != "kustomization.yaml" else None
        if parts[0] == "base" and len(parts) == 3 and objs is not None:
            for obj in objs:
                fleet[ident(obj)] = Entry(obj, component_of(obj, parts[1]))
        elif parts[0] == "argocd" and objs is not None:
            for obj in objs:
                scopes.setdefault("argocd", {})[ident(obj)] = Entry(obj, "argocd")
        elif not (parts[0] == "base" and parts[-1] == "kustomization.yaml"):
            other[path] = text
    if fleet:
        scopes["fleet"] = fleet
    patches: dict[str, dict[str, bytes]] = {}
    for cluster in sorted(clusters):
        root = f"overlays/{cluster}/"
        mine = {p[len(root) :]: t for p, t in files.items() if p.startswith(root)}
        scope, user, leftover = _rebuild(fleet, mine)
        scopes[cluster] = scope
        patches[cluster] = user
        other.update({root + p: t for p, t in leftover.items()})
    return Side(label, scopes, {}, other, patches)


def _objects_of(text: str) -> list[Obj] | None:
    """The Kubernetes objects of a YAML file, or None when it holds anything else."""
    from renderer import yamlio

    try:
        docs = yamlio.load_all(text)
    except Exception:
        return None
    if not docs or not all(isinstance(d, dict) and d.get("kind") and isinstance(d.get("metadata"), dict) for d in docs):
        return None
    return docs


def _target_ident(target: Mapping[str, Any]) -> Ident:
    name = re.sub(r"\\(.)", r"\1", str(target.get("name", "")))
    return Ident(str(target.get("group", "")), str(target.get("kind", "")), str(target.get("namespace", "")), name)


def _rebuild(fleet: Scope, files: dict[str, str]) -> tuple[Scope, dict[str, bytes], dict[str, str]]:
    """(cluster scope, user patches, files not understood) from one overlay folder."""
    import copy

    from renderer import yamlio
    from renderer.emit import patchdiff

    leftover = dict(files)
    scope: Scope = dict(fleet)
    user: dict[str, bytes] = {}
    try:
        kz = yamlio.load(leftover.pop("kustomization.yaml"))
    except Exception:
        return scope, user, files
    for res in kz.get("resources") or []:
        objs = _objects_of(leftover.get(str(res), ""))
        if objs is None:
            continue
        del leftover[str(res)]
        hint = str(res).split("/")[1] if str(res).count("/") >= 2 else ""
        for obj in objs:
            scope[ident(obj)] = Entry(obj, component_of(obj, hint))
    for entry in kz.get("patches") or []:
        path = str(entry.get("path", ""))
        if path not in leftover:
            continue
        if path.startswith("user-patches/"):
            user[path.split("/", 1)[1]] = _strip_header(leftover.pop(path)).encode("utf-8")
            continue
        try:
            docs = yamlio.load_all(leftover[path])
            if len(docs) == 1 and isinstance(docs[0], list) and "target" in entry:
                key = _target_ident(entry["target"])
                scope[key] = Entry(patchdiff.apply(copy.deepcopy(scope[key].obj), docs[0]), scope[key].component)
            elif len(docs) == 1 and isinstance(docs[0], dict) and docs[0].get("$patch") == "delete":
                del scope[ident(docs[0])]
            else:
                continue
        except (KeyError, IndexError, ValueError, TypeError):
            continue
        del leftover[path]
    return scope, user, leftover


def _strip_header(text: str) -> str:
    """A copied user patch without the generated header lines gpu-render put on top."""
    lines = text.splitlines(keepends=True)
    while lines and lines[0].startswith("# ") and ("gpu-render" in lines[0] or "Copied from" in lines[0]):
        lines.pop(0)
    return "".join(lines)
