"""The chart's values: the resolved policy, with each node pool's driver settings under ``driver.pools``.

``chart_values(model)`` turns a resolved model into the values a chart release uses, and
``model_of(values, cluster)`` turns chart values back into a model, so the chart and the static
render are two views of one function: ``objects(model_of(chart_values(m))) == objects(m)``.

Helm replaces lists wholesale under ``--set``, so per-pool settings live in a map keyed by pool
name (``driver.pools.<pool>``), holding the pool's driver settings fully merged over ``driver``.
Setting a pool to ``null`` in a values file removes it (and its DaemonSet). ``gitops`` settings
reach no object and are left out.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any, cast

from renderer.driverimage import FAMILIES
from renderer.model import Model, Pool
from renderer.releasegate import ADDED_IN

Path = tuple[str, ...]

NOT_CHART_VALUES = ("gitops",)
"""Policy keys that reach no object (Argo CD settings): not values of the chart."""


DRA_ON = "enabled"
"""``draDriver.enabled``: a chart value (not a policy key) derived from the pool list, true when
some pool has ``resourceAllocation: dra``. The chart's model reads it (``Model.dra``) where the
static render asks the pools, so the DRA stack's templates are gated on a value."""

RESOLVED_INTO_POOLS: tuple[Path, ...] = (("cluster", "containerRuntime"), ("vgpuManager", "kernelModuleConfig", "keys"))
"""Policy keys the chart values resolve into each pool's facts at build time: the runtime a pool
without its own ``runtime`` takes (``node.runtime``, and the toolkit's ``node.toolkitRuntime``
and host paths). With pools the chart reads none of them, so they are "(build-time)": the
toolkit's runtime setup cannot be resolved in a template (its host paths are taken apart into
directories and names), and a runtime that reached the other operands' ``runtimeClassName``
but not the toolkit would be a silent half of a change. And the vGPU manager's kernel module
ConfigMap keys, one mount each (``node.vgpuKernelModuleMounts``: the analysis writes no ``range``
over a list of names)."""


RELEASE: Path = ("cluster", "operatorRelease")
"""The imitated operator release: a knob like any other (an enum), that also decides which keys
the operator's CRDs keep (:func:`renderer.releasegate.prune`). The chart's values keep those
keys whatever the release (:func:`chart_values`) and its model prunes them as the static
render does (:func:`model_of`), so a template reads such a key behind a condition on the
release: a build that reads where a pruned key would be records a read of the release
(:func:`record_gated_reads`), so that the analysis varies it. A pool's own settings are not
pruned there: ``driver.pools.<pool>`` is the pool's resolved copy, made from what its release
keeps (a pool's ``upgradePolicy`` on v26.3 is ``driver.upgradePolicy``'s), as the pools'
facts are."""

GATED_READS: frozenset[Path] = frozenset(
    tuple(p[1:].split("/"))[:n] for p in ADDED_IN if not p.startswith("/nodePools/") for n in (1, 2)
)
"""The recorded reads (a section, or a key of one) at which a pruned key may be (or not be)."""


def added_in(path: Path) -> str | None:
    """The release that adds the policy key at ``path`` (or the section holding it), when a
    release prunes it (:data:`renderer.releasegate.ADDED_IN`; not a pool's own keys: the chart's
    pools are resolved copies). On an older release its value changes no build."""
    for pointer, since in ADDED_IN.items():
        parts = tuple(pointer[1:].split("/"))
        if parts[0] != "nodePools" and path[: len(parts)] == parts:
            return since
    return None


def record_gated_reads(seen: set[str], paths: set[Path]) -> None:
    """A build that read where :func:`renderer.releasegate.prune` may have taken a key away read
    the release too: which keys it found there depends on it."""
    own = paths.direct if isinstance(paths, Recorded) else paths  # the builder's own reads (not the pools')
    if RELEASE not in own and not GATED_READS.isdisjoint(own):
        seen.add(RELEASE[0])
        paths.add(RELEASE)
        if isinstance(paths, Recorded):
            paths.gated = True


def build_time_keys(values: dict[str, Any]) -> set[Path]:
    """The keys resolved at build time, which the chart reads nowhere: :data:`RELEASE`, those of
    :data:`RESOLVED_INTO_POOLS` when the chart values have pools, and each pool's own settings of
    :data:`FACT_INPUTS` that it sets."""
    names = pool_names(values)
    out = set(RESOLVED_INTO_POOLS) if names else set()
    for name in names:
        out |= {("driver", "pools", name, *key) for key in FACT_INPUTS if get(values, ("driver", "pools", name, *key)) is not None}
    return out


DRIVER_READ = ("enabled", "pools", "resources")
"""The fleet ``driver`` keys the templates read as they are (the gate, the pools, the resources a
pool's merge over): with pools, every other one reaches the templates only through each pool's
copy (``driver.pools.<pool>``), made at build time (:func:`hidden_driver_keys`)."""


def hidden_driver_keys(values: dict[str, Any]) -> set[Path]:
    """The leaves of the fleet ``driver`` section that the pools' copies hide, when the chart
    values have pools: a ``--set driver.version`` changed nothing (the pools' versions stay), so
    they are build-time: NOTES.txt refuses another value (set ``driver.pools.<pool>.<key>``, or
    change the policy and rebuild)."""
    driver = values.get("driver")
    if not pool_names(values) or not isinstance(driver, dict):
        return set()
    out: set[Path] = set()

    def walk(value: Any, path: Path) -> None:
        if isinstance(value, dict) and value:
            for key, child in value.items():
                walk(child, (*path, str(key)))
        else:
            out.add(path)

    for key, value in driver.items():
        if key not in DRIVER_READ:
            walk(value, ("driver", str(key)))
    return out


NODE = "node"
"""Key of ``driver.pools.<pool>`` holding what gpu-render derived from the pool's OS and kernel."""

NODE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "description": "Derived: do not set. What gpu-render derived from the pool's `nodePools` entry (OS, kernel, runtime) for the imitated operator release (build-time: change `nodePools` and rebuild).",
    "properties": {
        "osTag": {"type": "string", "description": "OS suffix of the pool's images (`ID` + `VERSION_ID`, major only for RHEL-like systems where the release says so)."},
        "osSelector": {
            "type": "object",
            "description": "NFD labels that select the pool's OS.",
            "additionalProperties": {"type": "string"},
        },
        "osFamily": {
            "type": "string",
            "enum": list(FAMILIES),
            "description": "Where the OS keeps repositories and CA certificates, and which host subscription files the driver build mounts.",
        },
        "kernel": {"type": "string", "description": "Kernel release of the pool's nodes (precompiled image tag and node selector)."},
        "kernelName": {"type": "string", "description": "The kernel as a name part (precompiled DaemonSet name and label)."},
        "runtime": {"type": "string", "enum": ["", "containerd", "crio", "docker"], "description": "Container runtime of the pool's nodes (`nodePools[].runtime`, else `cluster.containerRuntime`, resolved at build time)."},
        "hostMounts": {
            "type": "array",
            "items": {"type": "object"},
            "description": "Host files the driver container mounts for the pool's OS: the RHEL/SLES subscription files (none on OpenShift, for precompiled drivers, for RHEL with CRI-O or a repo config), the host's /lib/modules for a precompiled driver on SUSE.",
        },
        "hostVolumes": {"type": "array", "items": {"type": "object"}, "description": "The hostPath volumes of `hostMounts`."},
        "repoDir": {"type": "string", "description": "Where the pool's repository ConfigMap is mounted (the OS family's directory); empty for none (precompiled, an OS without one)."},
        "certDir": {"type": "string", "description": "Where the pool's CA certificate ConfigMap is mounted; empty for none."},
        **{
            key: {"type": "array", "items": {"type": "object"}, "description": f"The {whose} container's mounts of {what} when it is named: {how}."}
            for key, whose, what, how in (
                ("repoMounts", "driver", "the repository ConfigMap (`repoConfig`)", "one file per `repoConfig.keys` entry in `repoDir`, the whole ConfigMap at `repoDir` without keys; none without `repoDir`"),
                ("certMounts", "driver", "the CA certificate ConfigMap (`certConfig`)", "one file per `certConfig.keys` entry in `certDir`; none without `certDir`"),
                ("kernelModuleMounts", "driver", "the kernel module ConfigMap (`kernelModuleConfig`)", "one file per `kernelModuleConfig.keys` entry in `/drivers`"),
                ("vgpuKernelModuleMounts", "vGPU manager", "the vGPU manager's kernel module ConfigMap (`vgpuManager.kernelModuleConfig`)", "one file per `vgpuManager.kernelModuleConfig.keys` entry in `/drivers`"),
            )
        },
        "vgpuImage": {"type": "string", "description": "The vGPU manager image of a vgpu-host-manager pool that names its own (repository, image or version in its driver settings); empty for `vgpuManager`'s."},
        "toolkitLeader": {"type": "boolean", "description": "The container toolkit DaemonSet of this pool's runtime setup is rendered for this pool (the first pool of that setup)."},
        "toolkitDaemonSet": {"type": "string", "description": "Name of that DaemonSet (with the pool's name when pools differ in runtime setup)."},
        "toolkitTerms": {
            "type": "array",
            "items": {"type": "object"},
            "description": "Node-selector terms of that DaemonSet: one per pool of the setup when pools differ in runtime setup (it is then named after this pool), the operand's own when all pools agree; empty for a pool that leads none.",
        },
        "toolkitRuntime": {"type": "string", "enum": ["containerd", "crio", "docker"], "description": "The runtime the container toolkit configures on the pool's nodes (`runtime`, else `cluster.containerRuntime`)."},
        **{
            key: {"type": "string", "description": f"{what} (the pool's `runtimeConfig`, else `toolkit.env`, else the runtime's default)."}
            for key, what in (
                ("toolkitConfigDir", "Host directory of the runtime's config file, mounted into the toolkit"),
                ("toolkitConfigFile", "Name of the runtime's config file"),
                ("toolkitDropIn", "Host path of the drop-in config file the toolkit writes (empty for Docker)"),
                ("toolkitDropInDir", "Host directory of that drop-in file, mounted into the toolkit"),
                ("toolkitDropInFile", "Name of that drop-in file"),
                ("toolkitSocketDir", "Host directory of the runtime's socket, mounted into the toolkit (empty for CRI-O)"),
                ("toolkitSocketFile", "Name of the runtime's socket"),
                ("toolkitConfigSource", "The toolkit's RUNTIME_CONFIG_SOURCE, a `file=` source read under /host (empty: none)"),
            )
        },
        "upgradeBudget": {
            "type": ["integer", "string"],
            "description": "The driver DaemonSet's `maxUnavailable` from the pool's `upgradePolicy` (the smaller of `maxParallelUpgrades` and `maxUnavailable`, a percentage when there is no parallel limit); 0 keeps OnDelete.",
        },
        "upgradeHeld": {"type": "boolean", "description": "The pool's upgrade budget is zero (`maxUnavailable: 0` or `\"0%\"`): the driver DaemonSet stays OnDelete."},
        "selectorExpressions": {
            "type": "array",
            "items": {"type": "object"},
            "description": "The pool's node selector (OS labels, precompiled kernel, `nodeSelector`) as node-affinity matchExpressions (the vGPU manager's affinity).",
        },
    },
    "additionalProperties": False,
}


OPTIONAL_FACTS: dict[str, Any] = {"repoDir": "", "certDir": "", "toolkitConfigSource": "", "vgpuImage": "", "upgradeHeld": False}
"""Pool facts whose empty value means "none" to the builder (no ``RUNTIME_CONFIG_SOURCE``
entry, no held upgrade), with that value: the range body is read with them empty, so that the template asks for each pool
whether it has one, whatever the first pool says (the analysis varies an empty scalar that
breaks its placeholder as "empty" / "set"; a set one it would print always)."""


FACT_INPUTS = (
    ("upgradePolicy", "maxParallelUpgrades"),
    ("upgradePolicy", "maxUnavailable"),
    ("repoConfig", "keys"),
    ("certConfig", "keys"),
    ("kernelModuleConfig", "keys"),
)
"""Pool settings the builder reads only through a pool fact (``node.upgradeBudget``, the driver
DaemonSet's ``maxUnavailable``; ``node.repoMounts``, ``node.certMounts``,
``node.kernelModuleMounts``, one mount per key): build-time keys of each pool, like the fact."""


POOL_SECTIONS = ("gds", "gdrcopy")
"""Top-level sections a pool's driver settings override key by key (``nodePools[].driver.gds``:
the driver builder merges the pool's section over the fleet's). Inside the range over the pools
the templates read them merged (``$gds``: ``include "gpu-stack.merged" (list $.Values.gds
$pool.gds) | fromYaml``), and so does ``helm_eval``; the range body is read with the first
pool's own sections left out, so that it reads the fleet's."""


SCRIPTED_ARGS = ("gds", "gdrcopy")
"""Sections whose sidecar runs a script of its own when ``args`` is empty (the GDS and GDRCopy
kernel-module sidecars: wait for the driver, install the module). The chart values carry that
script in place of an empty list (the fleet's, and a pool's own empty one), so the template
prints ``args`` as it is (``toYaml``) and the key is a settable knob: ``--set gds.args`` reaches
the sidecar. An empty list (``--set gds.args=null``) would print no ``args`` where gpu-render
writes the script: ``NOTES.txt`` refuses it. The validators' main container is the same
case, fleet-wide only: its idle loop in place of an empty ``validator.args``."""


def default_args(key: str) -> list[str]:
    """What runs where the section ``key`` (of :data:`SCRIPTED_ARGS` or ``validator``) sets no
    ``args``."""
    from renderer.components.driver import sidecar_script
    from renderer.components.helpers import IDLE

    return list(IDLE) if key == "validator" else sidecar_script(key)


NUMBERS: tuple[Path, ...] = (("daemonsets", "rollingUpdate", "maxUnavailable"),)
"""Keys of a number or a percentage (``intOrPercent``) that the builders parse: a number written
as text (``"1"``, the default) becomes the number it stands for. The chart values carry it so
(``maxUnavailable: 1``), and the template prints the value unquoted, which gives the number a
rebuild gives for ``1`` and the text for ``25%``: the key is a settable knob, not build-time.
From a million on it stays text: Helm reads a values file's numbers as floats, which print as
``1e+06`` (the cluster's values file is then checked against text, and the cluster listed)."""


def _numbers(values: dict[str, Any]) -> None:
    """:data:`NUMBERS` as numbers in ``values`` (new maps along each path, the rest shared)."""
    for path in NUMBERS:
        found = get(values, path)
        if isinstance(found, str) and found.isdigit() and int(found) < 1_000_000:
            node = values
            for key in path[:-1]:
                node[key] = dict(node.get(key) or {})
                node = node[key]
            node[path[-1]] = int(found)


POOL_ONLY: dict[str, Any] = {"labels": {}, "annotations": {}, "nodeSelector": {}, "tolerations": [], "priorityClassName": ""}
"""Settings only a pool has (``nodePools[].driver``), with their empty value: every pool's chart
values carry them, so that the one template body reads them for any pool."""


def pool_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """Schema of ``driver.pools.<pool>``: the fleet's ``driver`` keys, a pool's own
    (``nodePools[].driver``: ``driverType``, ``nodeSelector``, ...) and ``node``."""
    props = schema.get("properties") or {}
    driver = props.get("driver") or {}
    own = (((props.get("nodePools") or {}).get("items") or {}).get("properties") or {}).get("driver") or {}
    fleet = {k: v for k, v in (driver.get("properties") or {}).items() if k not in FLEET_ONLY}
    merged = {**(own.get("properties") or {}), **fleet, NODE: NODE_SCHEMA}
    return {**driver, "properties": merged}


FLEET_ONLY = ("enabled", "nvidiaDriverCRD", "useNvidiaDriverCRD")
"""``driver`` keys of the fleet alone: no pool template reads them in a pool (``driver.enabled``
gates the whole component), so the pool schema refuses them (a pool's ``enabled: false`` passed
and changed nothing)."""


def chart_values(model: Model) -> dict[str, Any]:
    """The chart values of ``model``: new maps down to ``driver.pools.<pool>``, the rest shared
    with the model (every cluster's values are read, never changed; copy before changing)."""
    from renderer.components.container_toolkit import pool_groups, pool_paths
    from renderer.components.driver import upgrade_budget
    from renderer.driverimage import pool_facts

    # every key whatever the release (the model's prune again takes away what it does not keep),
    # but the pools as their release resolved them
    values: dict[str, Any] = {**(model.unpruned or model.values), "nodePools": model.values.get("nodePools") or []}
    for key in NOT_CHART_VALUES:
        values.pop(key, None)
    driver = values["driver"] = dict(values.get("driver") or {})
    driver.pop("pools", None)
    pools: dict[str, Any] = {}
    toolkit = pool_groups(model)
    for pool in model.pools:
        settings = {**POOL_ONLY, **pool.driver, "driverType": pool.driver_type}
        for key in ("pools", *FLEET_ONLY):
            settings.pop(key, None)
        for key in SCRIPTED_ARGS:  # a pool's own empty args: the script, over the fleet's list
            own = settings.get(key)
            if isinstance(own, dict) and "args" in own and not own["args"]:
                settings[key] = {**own, "args": default_args(key)}
        leader, name, terms = toolkit[pool.name]
        grouping = {"toolkitLeader": leader, "toolkitDaemonSet": name, "toolkitTerms": [dict(t) for t in terms]}
        amount = upgrade_budget(settings.get("upgradePolicy") or {})
        budget = {"upgradeBudget": amount, "upgradeHeld": not amount}
        settings[NODE] = {**pool_facts(model.values, pool), **grouping, **pool_paths(model, pool), **budget}
        pools[pool.name] = settings
    driver["pools"] = pools
    for key in (*SCRIPTED_ARGS, "validator"):
        section = values.get(key)
        if isinstance(section, dict) and not section.get("args"):
            values[key] = {**section, "args": default_args(key)}
    values["draDriver"] = {DRA_ON: model.dra, **(values.get("draDriver") or {})}
    _numbers(values)
    out: dict[str, Any] = secret_maps(values)
    return out


def secret_maps(node: Any, depth: int = 0) -> Any:
    """``node`` with every ``imagePullSecrets`` list's names as ``{name: ...}`` maps (new maps and
    lists along the way, the rest shared). The policy takes names, as the GPU Operator chart
    does, and the builders turn them into a pod's references; the chart's templates print the
    list as it is (``toYaml``), so its values carry the references: a name printed there was an
    invalid pod (``imagePullSecrets: [regcred]``). The chart's schema takes maps only.

    Only maps are walked, and the ``nodePools`` list (the schema puts no pull secrets in any
    other list): a cluster's values are walked once per build, so the lists of env, tolerations
    and configs are not (a walk of everything cost 0.26 ms a cluster)."""
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] | None = None
    for key, value in node.items():
        if key == "imagePullSecrets" and isinstance(value, list) and any(isinstance(v, str) for v in value):
            new: Any = [{"name": v} if isinstance(v, str) else v for v in value]
        elif isinstance(value, dict):
            new = secret_maps(value, depth + 1)
        elif depth == 0 and key == "nodePools" and isinstance(value, list):
            items = [secret_maps(v, 1) for v in value]
            new = value if all(a is b for a, b in zip(items, value, strict=True)) else items
        else:
            continue
        if new is not value:
            out = dict(node) if out is None else out
            out[key] = new
    return node if out is None else out


def pool_names(values: dict[str, Any]) -> list[str]:
    """The pools a chart release renders, in the order Helm's ``range`` visits them (sorted keys;
    a pool set to ``null`` or ``{}`` is left out, as ``{{ if $pool }}`` leaves it out)."""
    pools = get(values, ("driver", "pools"))
    if not isinstance(pools, dict):
        return []
    return [name for name in sorted(pools) if isinstance(pools[name], dict) and pools[name]]


POOLS_READ = "\x00pools"
"""Put in ``Reads.seen`` when a build looks at ``model.pools`` (the resolved ``driver.pools``)."""

POOL_NAMES_READ = "\x00pool-names"
"""Put in ``Reads.seen`` when a build looks only at which pools there are and at their
``nodePools`` entries' ``resourceAllocation`` (``model.dra_pools`` with no DRA pool): no pool
setting (``driver.pools.<pool>.<key>``) reaches it."""


POOL_ATTR = "\x00pool-attr"
"""``(POOL_ATTR, pool name, attribute)`` in the paths of a build with :class:`Recorded` paths:
it read that attribute of that resolved pool (:class:`TrackedPool`)."""


def pool_section(pool: str, attr: str) -> str:
    """The section name under which a :class:`TrackedPool` records the keys of its ``values``
    or ``driver`` that a build read."""
    return f"{POOL_ATTR}\x00{pool}\x00{attr}"


class Recorded(set[Any]):
    """Reads (sections, or section keys) that also keeps, in ``direct``, the ones the builder
    made itself: not those of resolving the pools (``muted`` meanwhile), which reach it only
    as the resolved pools' attributes (recorded as ``POOL_ATTR`` paths)."""

    def __init__(self) -> None:
        super().__init__()
        self.direct: set[Any] = set()
        self.muted = False
        self.gated = False
        """Set when :func:`record_gated_reads` added :data:`RELEASE` (the builder read where a
        pruned key may be, not the release itself)."""

    def add(self, item: Any) -> None:
        set.add(self, item)
        if not self.muted:
            self.direct.add(item)

    def update(self, *others: Any) -> None:
        for other in others:
            items = list(other)
            set.update(self, items)
            if not self.muted:
                self.direct.update(items)


class TrackedPool:
    """A resolved pool that records which of its attributes a build reads (into ``paths``); its
    ``values`` and ``driver`` record the keys read (:class:`Section`)."""

    __slots__ = ("_parts", "_paths", "_pool")

    def __init__(self, pool: Pool, paths: set[Path]) -> None:
        self._pool = pool
        self._paths = paths
        self._parts: dict[str, Section] = {}

    def __getattr__(self, name: str) -> Any:
        pool: Pool = object.__getattribute__(self, "_pool")
        value = getattr(pool, name)
        if name in ("values", "driver") and isinstance(value, dict):
            parts: dict[str, Section] = object.__getattribute__(self, "_parts")
            part = parts.get(name)
            if part is None:
                part = parts[name] = Section(value, pool_section(pool.name, name), object.__getattribute__(self, "_paths"))
            return part
        object.__getattribute__(self, "_paths").add((POOL_ATTR, pool.name, name))
        return value


class Reads(dict[str, Any]):
    """Top-level values that remember which sections were looked at (``seen``)."""

    def __init__(self, data: dict[str, Any], seen: set[str]) -> None:
        super().__init__(data)
        self.seen = seen

    def __getitem__(self, key: str) -> Any:
        self.seen.add(key)
        return super().__getitem__(key)

    def get(self, key: str, default: Any = None) -> Any:
        self.seen.add(key)
        return super().get(key, default)

    def __contains__(self, key: object) -> bool:
        self.seen.add(str(key))
        return super().__contains__(key)

    def _all(self) -> None:
        self.seen.update(super().keys())

    def __iter__(self) -> Any:
        self._all()
        return super().__iter__()

    def keys(self) -> Any:
        self._all()
        return super().keys()

    def items(self) -> Any:
        self._all()
        return super().items()

    def values(self) -> Any:
        self._all()
        return super().values()

    def copy(self) -> dict[str, Any]:
        self._all()
        return dict(super().items())

    def __deepcopy__(self, memo: dict[int, Any]) -> dict[str, Any]:
        self._all()
        return copy.deepcopy(dict(super().items()), memo)


class DeepReads(Reads):
    """``Reads`` that also records, in ``paths``, which keys of each section were read.

    A section (a map) is handed out as a :class:`Section`, which records ``(section, key)``
    for every key looked up and ``(section,)`` for anything that sees the whole map (iterating,
    copying, comparing, printing, changing). A list or scalar section read is ``(section,)``.
    """

    def __init__(self, data: dict[str, Any], seen: set[str], paths: set[Path]) -> None:
        super().__init__(data, seen)
        self.paths = paths
        self.sections: dict[str, Section] = {}

    def _wrap(self, key: str, value: Any) -> Any:
        if type(value) is dict:
            found = self.sections.get(key)
            if found is None:
                found = self.sections[key] = Section(value, key, self.paths)
            return found
        self.paths.add((key,))
        return value

    def __getitem__(self, key: str) -> Any:
        return self._wrap(key, super().__getitem__(key))

    def get(self, key: str, default: Any = None) -> Any:
        self.seen.add(key)
        if not dict.__contains__(self, key):
            return default
        return self._wrap(key, dict.__getitem__(self, key))

    def _all(self) -> None:
        super()._all()
        self.paths.update((key,) for key in dict.keys(self))

    def __eq__(self, other: object) -> bool:
        self._all()
        return dict.__eq__(self, other)

    def __ne__(self, other: object) -> bool:
        self._all()
        return dict.__ne__(self, other)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        self._all()
        return dict.__repr__(self)


class Section(dict[str, Any]):
    """One section of :class:`DeepReads`: see there. Its size (``len``, truth) is not recorded:
    the analysis only changes values of keys that exist, never a section's keys."""

    def __init__(self, data: dict[str, Any], name: str, paths: set[Path]) -> None:
        super().__init__(data)
        self.name = name
        self.paths = paths

    def whole(self) -> None:
        self.paths.add((self.name,))

    def __getitem__(self, key: str) -> Any:
        self.paths.add((self.name, key))
        return super().__getitem__(key)

    def get(self, key: str, default: Any = None) -> Any:
        self.paths.add((self.name, key))
        return super().get(key, default)

    def __contains__(self, key: object) -> bool:
        self.paths.add((self.name, str(key)))
        return super().__contains__(key)

    def __iter__(self) -> Any:
        self.whole()
        return super().__iter__()

    def __reversed__(self) -> Any:
        self.whole()
        return super().__reversed__()

    def keys(self) -> Any:
        self.whole()
        return super().keys()

    def items(self) -> Any:
        self.whole()
        return super().items()

    def values(self) -> Any:
        self.whole()
        return super().values()

    def copy(self) -> dict[str, Any]:
        self.whole()
        return dict.copy(self)

    def __copy__(self) -> dict[str, Any]:
        return self.copy()

    def __deepcopy__(self, memo: dict[int, Any]) -> dict[str, Any]:
        self.whole()
        return copy.deepcopy(dict.copy(self), memo)

    def __reduce_ex__(self, protocol: Any) -> Any:
        self.whole()
        return (dict, (dict.copy(self),))

    def __eq__(self, other: object) -> bool:
        self.whole()
        return dict.__eq__(self, other)

    def __ne__(self, other: object) -> bool:
        self.whole()
        return dict.__ne__(self, other)

    __hash__ = None

    def __repr__(self) -> str:
        self.whole()
        return dict.__repr__(self)

    def __or__(self, other: Any) -> Any:
        self.whole()
        return dict.__or__(dict.copy(self), other)

    def __ror__(self, other: Any) -> Any:
        self.whole()
        return dict.__or__(other, dict.copy(self)) if isinstance(other, dict) else NotImplemented

    def _changed(self) -> None:  # builders never change the values; if one does, it saw them
        self.whole()

    def __setitem__(self, key: str, value: Any) -> None:
        self._changed()
        super().__setitem__(key, value)

    def __delitem__(self, key: str) -> None:
        self._changed()
        super().__delitem__(key)

    def __ior__(self, other: Any) -> Any:
        self._changed()
        return super().__ior__(other)

    def pop(self, *args: Any) -> Any:
        self._changed()
        return super().pop(*args)

    def popitem(self) -> Any:
        self._changed()
        return super().popitem()

    def setdefault(self, *args: Any) -> Any:
        self._changed()
        return super().setdefault(*args)

    def update(self, *args: Any, **kwargs: Any) -> None:
        self._changed()
        super().update(*args, **kwargs)

    def clear(self) -> None:
        self._changed()
        super().clear()


class KeyProbe(Reads):
    """A values map that records, in ``asked``, each key a build looks up in it (``get``,
    ``[]``, ``in``), not the keys it goes through whole: the keys of a keyed map a builder reads
    one by one (``helm_ir.Analysis._keys``)."""

    def __init__(self, data: dict[str, Any]) -> None:
        super().__init__(data, set())

    @property
    def asked(self) -> set[str]:
        return self.seen

    def _all(self) -> None:
        pass  # a map joined or copied whole asks for none of its keys


def unwrap_sections(node: Any) -> Any:
    """``node`` with every :class:`Section` in it (handed out whole) replaced by a plain copy,
    each recorded as read whole; changed in place, returned for the top level."""
    if type(node) is Section:
        node.whole()
        return {k: unwrap_sections(v) for k, v in dict.items(node)}
    if isinstance(node, dict):
        for key, value in node.items():
            if isinstance(value, (dict, list)):
                node[key] = unwrap_sections(value)
    elif isinstance(node, list):
        for i, value in enumerate(node):
            if isinstance(value, (dict, list)):
                node[i] = unwrap_sections(value)
    return node


def model_of(values: dict[str, Any], cluster: str, seen: set[str] | None = None, paths: set[Path] | None = None) -> Model:
    """The model whose render the chart reproduces for ``values`` (not mutated).

    With ``seen``, the model's values record which top-level sections were read; with
    ``paths`` too, which keys of each section (:class:`DeepReads`).
    """
    from renderer.driverimage import pool_from_facts
    from renderer.releasegate import prune
    from renderer.resolve import resolve_pool

    out = dict(values)
    driver = dict(out.get("driver") or {})
    pools_cfg = driver.pop("pools", None) or {}
    out["driver"] = driver
    node_pools = []
    facts: list[Any] = []
    listed = set()
    wanted = set(pool_names({"driver": {"pools": pools_cfg}}))
    entries = list(out.get("nodePools") or [])
    # the pools of nodePools, in its order; then a pool only driver.pools names (the chart
    # renders one DaemonSet per entry of driver.pools), by name
    for pool in [*entries, *({"name": name} for name in sorted(wanted))]:
        name = pool.get("name")
        if name not in wanted or name in listed:
            continue
        listed.add(name)
        settings = pools_cfg[name]
        own = dict(settings)  # the pool's settings but its facts (a copy and a pop: no loop per key)
        own.pop(NODE, None)
        node_pools.append({**pool, "driver": own})
        facts.append(settings.get(NODE))
    out["nodePools"] = node_pools
    out = prune(out, pools=False)  # as resolve does: what the imitated release's CRDs keep (the pools' copies are resolved)
    node_pools = out["nodePools"]
    if seen is not None:
        out = Reads(out, seen) if paths is None else DeepReads(out, seen, paths)

    def make() -> tuple[Pool, ...]:
        recorded = [r for r in (seen, paths) if isinstance(r, Recorded)]
        for r in recorded:
            r.muted = True
        try:
            pools = tuple(pool_from_facts(out, p, f) if isinstance(f, dict) else resolve_pool(out, p) for p, f in zip(node_pools, facts, strict=True))
        finally:
            for r in recorded:
                r.muted = False
        if isinstance(paths, Recorded):
            return cast("tuple[Pool, ...]", tuple(TrackedPool(p, paths) for p in pools))
        return pools

    def one(name: str) -> Pool | None:
        for p, f in zip(node_pools, facts, strict=True):
            if p.get("name") == name:
                return pool_from_facts(out, p, f) if isinstance(f, dict) else resolve_pool(out, p)
        return None

    return _LazyPools(out, cluster, make, tuple(node_pools), one)


def pool_of(values: dict[str, Any], cluster: str, name: str) -> Pool | None:
    """The pool ``name`` of ``model_of(values, cluster).pools`` (None when it has none of that
    name), resolving only that one."""
    model = model_of(values, cluster)
    assert isinstance(model, _LazyPools)
    return model.pool_named(name)


class _LazyPools(Model):
    """A model that resolves its pools on first use: most components never look at them."""

    def __init__(
        self,
        values: dict[str, Any],
        cluster: str,
        make: Callable[[], tuple[Pool, ...]],
        raw: tuple[dict[str, Any], ...],
        one: Callable[[str], Pool | None],
    ) -> None:
        object.__setattr__(self, "values", values)
        object.__setattr__(self, "cluster", cluster)
        object.__setattr__(self, "_make", make)
        object.__setattr__(self, "_raw", raw)
        object.__setattr__(self, "_one", one)

    def pool_named(self, name: str) -> Pool | None:
        """The pool ``name`` resolved alone (not kept: ``pools`` resolves them all)."""
        one: Callable[[str], Pool | None] = self._one  # type: ignore[attr-defined]
        return one(name)

    @property
    def dra(self) -> bool:
        """``draDriver.enabled``, the chart value derived from the pool list (:data:`DRA_ON`):
        the DRA stack's templates are gated on it, so a fleet without a ``dra`` pool has them
        too. Values without it (not made by :func:`chart_values`) ask the pools."""
        flag = self.section("draDriver").get(DRA_ON)
        return flag if isinstance(flag, bool) else bool(self._dra_pools())

    @property
    def dra_pools(self) -> tuple[Pool, ...]:
        """As :attr:`Model.dra_pools` while :attr:`dra` holds (else none: the chart's DRA stack
        is off), without resolving the pools when none asks for DRA."""
        return self._dra_pools() if self.dra else ()

    def _dra_pools(self) -> tuple[Pool, ...]:
        """The ``dra`` pools, without resolving the pools when none asks for DRA: the DRA
        components ask on every probe of the analysis, and resolving copies each pool's driver
        settings. What is read is recorded as it is: which pools there are and their
        ``nodePools`` entries (``POOL_NAMES_READ``), none of their settings."""
        raw: tuple[dict[str, Any], ...] = self._raw  # type: ignore[attr-defined]
        if any(p.get("resourceAllocation") == "dra" for p in raw):
            return super().dra_pools
        if isinstance(self.values, Reads):
            self.values.seen.add(POOL_NAMES_READ)
            self.values.get("driver")
        return ()

    @property
    def pools(self) -> tuple[Pool, ...]:
        if isinstance(self.values, Reads):
            self.values.seen.add(POOLS_READ)
        cached = self.__dict__.get("_pools")
        if cached is None:
            cached = self._make()  # type: ignore[attr-defined]
            object.__setattr__(self, "_pools", cached)
        return cached  # type: ignore[no-any-return]


def get(values: Any, path: Path) -> Any:
    for key in path:
        if not isinstance(values, dict) or key not in values:
            return None
        values = values[key]
    return values


def assign(values: dict[str, Any], path: Path, value: Any) -> dict[str, Any]:
    """A copy of ``values`` with ``path`` set (or removed when ``value`` is REMOVE); shares the rest."""
    out = dict(values)
    key = path[0]
    if len(path) == 1:
        if value is REMOVE:
            out.pop(key, None)
        else:
            out[key] = value
        return out
    child = out.get(key)
    out[key] = assign(child if isinstance(child, dict) else {}, path[1:], value)
    return out


class _Remove:
    def __repr__(self) -> str:
        return "REMOVE"

    def __reduce__(self) -> str:
        return "REMOVE"


REMOVE: Any = _Remove()


def overrides(base: Any, target: Any) -> Any:
    """The smallest values file that turns ``base`` into ``target`` under Helm's coalescing.

    Maps merge (a key missing from ``target`` becomes ``null``, which Helm deletes); anything
    else is replaced. Returns ``{}`` when they are equal. Shares ``target``'s parts (it is
    printed, never changed: copy before changing).
    """
    if isinstance(base, dict) and isinstance(target, dict):
        out: dict[str, Any] = {}
        for key, value in target.items():
            if key not in base:
                out[key] = value
            elif value != base[key]:
                out[key] = overrides(base[key], value) if isinstance(value, dict) and isinstance(base[key], dict) else value
        for key in base:
            if key not in target:
                out[key] = None
        return out
    return target
