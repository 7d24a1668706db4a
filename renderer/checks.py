"""Semantic checks the JSON Schema cannot express (cross-key rules), as Problems."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from functools import cache
from typing import Any

from renderer.components.container_toolkit import READ_ENV
from renderer.envfrom import value_from_warnings
from renderer.merge import Located
from renderer.problems import Problem, Severity, pointer_of
from renderer.releasegate import release_rules
from renderer.releaseimages import release_defaults, release_images

DNS_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?")
"""Used with ``fullmatch`` only (``$`` would accept a trailing newline)."""


def cluster_name(name: str, path: str) -> list[Problem]:
    """Cluster folder names become folder and object names: DNS labels only."""
    if DNS_LABEL.fullmatch(name) and name != "fleet":
        return []
    return [
        Problem(
            path,
            1,
            1,
            "",
            f"cluster name {name[:80]!r} is not a DNS label",
            hint="use lowercase letters, digits and '-', at most 63 characters (and not 'fleet')",
            code="cluster-name",
        )
    ]


def semantic(located: Located, cluster: str, defaulted: dict[str, Any] | None = None) -> list[Problem]:
    """Cross-field rules; run only on values that passed the schema.

    ``defaulted`` is ``with_defaults(located.data)`` when the caller has it (read only here).
    """
    problems: list[Problem] = []
    pools = located.data.get("nodePools") or []
    seen: dict[str, int] = {}
    for index, pool in enumerate(pools):
        name = str(pool.get("name", ""))
        if name in seen:
            pointer = f"/nodePools/{index}/name"
            file, line, col = located.locate(pointer)
            problems.append(Problem(file, line, col, pointer, f"duplicate node pool name {name!r}", hint=f"also used by /nodePools/{seen[name]}", code="pool-duplicate"))
        seen.setdefault(name, index)
    problems += pool_rules(located, defaulted)
    problems += text_rules(located)
    problems += image_rules(located, defaulted)
    problems += gitops_rules(located, cluster, defaulted)
    problems += value_from_warnings(located)
    from renderer.resolve import with_defaults

    values = with_defaults(located.data) if defaulted is None else defaulted
    problems += release_rules(located, values)
    problems += sharing_rules(located, values)
    problems += copy_rules(located, values)
    problems += validator_rules(located, values)
    problems += driver_rules(located)
    problems += driver_crd_rules(located, values)
    problems += own_image_rules(located, values)
    problems += gpu_present_rules(located)
    problems += sandbox_gate_rules(located, values)
    problems += docker_runtime_rules(located, values)
    problems += relative_host_path_rules(located)
    problems += manual_upgrade_drain_rules(located, values)
    problems += drain_shared_rules(located, values)
    problems += scrape_timeout_rules(located, values)
    problems += operator_fallback_rules(located)
    problems += default_config_name_rules(located)
    problems += nri_rules(located, values)
    problems += config_map_keys_rules(located)
    problems += operand_args(located)
    problems += host_root_env(located)
    problems += nfd_version_rules(located, values)
    problems += vgpu_host_pool_rules(located, values)
    problems += drop_in_host_path_rules(located, values)
    problems += dcgm_localhost_rules(located, values)
    problems += image_parts_rules(located, values)
    problems += config_manager_resources(located, values)
    problems += label_rules(located)
    problems += release_images(located, values)
    problems += release_defaults(located, values)
    return problems


def config_manager_resources(located: Located, values: dict[str, Any]) -> list[Problem]:
    """A warning at ``devicePlugin.resources`` / ``gfd.resources`` with a plugin config: the
    operator gives the config-manager sidecar the pod section's resources (and, from v26.7,
    config-manager-init), gpu-render gives config-manager none (docs/fidelity.md)."""
    if not ((values.get("devicePlugin") or {}).get("config") or {}).get("name"):
        return []
    out: list[Problem] = []
    for key in ("devicePlugin", "gfd"):
        section, mine = values.get(key) or {}, located.data.get(key)
        if not section.get("enabled", True) or not isinstance(mine, dict) or not mine.get("resources"):
            continue
        out.append(_problem(
            located,
            f"/{key}/resources",
            f"the operator gives the config-manager containers of the {key} pods these resources too; gpu-render gives config-manager none",
            "config-manager only copies a file and signals the main process; give the namespace a LimitRange if its containers need limits",
            "config-manager-resources",
            Severity.WARNING,
        ))
    return out


IMAGE_SECTIONS = {
    "validator": (), "toolkit": (), "devicePlugin": (), "dcgm": (), "dcgmExporter": (), "gfd": (), "migManager": (),
    "nodeStatusExporter": (), "vfioManager": ("sandboxWorkloads",), "vfioManager/driverManager": ("sandboxWorkloads",),
    "vgpuDeviceManager": ("sandboxWorkloads",), "sandboxDevicePlugin": ("sandboxWorkloads",),
    "kataSandboxDevicePlugin": ("sandboxWorkloads",), "ccManager": ("sandboxWorkloads",),
}
"""Operand image settings the operator's transforms read with ``gpuv1.ImagePath`` -> the further
sections whose ``enabled: false`` leaves the operand out (its own is always one)."""


def image_parts_rules(located: Located, values: dict[str, Any]) -> list[Problem]:
    """An error where an enabled operand's image names a repository or version but not all of
    repository, image and version: the operator's ImagePath refuses it ("invalid image
    specification"), its transform fails and the operand is never deployed; gpu-render would
    render a reference without tag (``:latest``) or registry. Only an image with neither
    repository nor version is taken as a whole reference. An empty validator or node status
    exporter version is the release's (:func:`renderer.resolve.operator_fallbacks`)."""
    from renderer.resolve import APP_VERSION_SECTIONS

    out: list[Problem] = []
    for key, needs in IMAGE_SECTIONS.items():
        top, _, sub = key.partition("/")
        section, mine = values.get(top), located.data.get(top)
        if not isinstance(section, dict) or not isinstance(mine, dict) or not section.get("enabled", True):
            continue
        if any(not (values.get(n) or {}).get("enabled") for n in needs):
            continue
        if sub:
            section, mine = section.get(sub), mine.get(sub)
            if not isinstance(section, dict) or not isinstance(mine, dict):
                continue
        parts = {f: str(section.get(f) or "") for f in ("repository", "image", "version")}
        if key in APP_VERSION_SECTIONS and not parts["version"]:
            parts["version"] = "release"
        if not (parts["repository"] or parts["version"]) or all(parts.values()):
            continue
        empty = [f for f in ("repository", "image", "version") if not parts[f]]
        written = [f for f in empty if f in mine] or [f for f in ("repository", "image", "version") if f in mine]
        if not written:
            continue  # the policy sets none of them here: the defaults' own
        out.append(_problem(
            located,
            f"/{key}/{written[0]}",
            f"{key.replace('/', '.')} has no {' and no '.join(empty)}: the operator refuses an image without all of repository, image and version (its ImagePath: invalid image specification), so the operand would never be deployed",
            f"set {key.replace('/', '.')}.{empty[0]}, or leave repository and version empty and give the whole reference in image",
            "image-incomplete",
        ))
    return out


def dcgm_localhost_rules(located: Located, values: dict[str, Any]) -> list[Problem]:
    """A warning at a ``DCGM_REMOTE_HOSTENGINE_INFO`` of ``localhost...`` in ``dcgmExporter.env``
    without standalone DCGM and without ``dcgmExporter.hostNetwork``: gpu-render then runs the
    exporter on the host network, so that it reaches the host's DCGM. The operator's
    TransformDCGMExporter means to do the same, but reads the variable before it applies
    ``dcgmExporter.env``, where the asset has none: its exporter stays on the pod network and
    cannot connect (docs/fidelity.md)."""
    from renderer.components.dcgm_exporter import REMOTE_ENV
    from renderer.releasegate import ADDED_IN, has

    exporter, dcgm = values.get("dcgmExporter") or {}, values.get("dcgm") or {}
    if not exporter.get("enabled", True) or dcgm.get("enabled"):
        return []
    release = str((values.get("cluster") or {}).get("operatorRelease", ""))
    if exporter.get("hostNetwork") and has(release, ADDED_IN["/dcgmExporter/hostNetwork"]):
        return []  # the operator's exporter is on the host network by the key
    mine = (located.data.get("dcgmExporter") or {}).get("env")
    out: list[Problem] = []
    for index, item in enumerate(mine if isinstance(mine, list) else []):
        if isinstance(item, dict) and item.get("name") == REMOTE_ENV and str(item.get("value", "")).startswith("localhost"):
            out.append(_problem(
                located,
                f"/dcgmExporter/env/{index}/value",
                "gpu-render runs dcgm-exporter on the host network for a DCGM on localhost; the operator does not (it reads this variable before it applies dcgmExporter.env), so its exporter cannot reach the host's DCGM",
                "set dcgmExporter.hostNetwork: true (from v26.3) to say so and render what the operator renders",
                "dcgm-localhost",
                Severity.WARNING,
            ))
    return out


def operator_fallback_rules(located: Located) -> list[Problem]:
    """A warning at an empty ``daemonsets.tolerations`` or ``daemonsets.priorityClassName``: the
    operator keeps its assets' toleration / priority class then, and so does gpu-render
    (:func:`renderer.resolve.operator_fallbacks`); whoever wrote it empty meant none."""
    from renderer.resolve import ASSET_PRIORITY_CLASS, ASSET_TOLERATIONS

    common = located.data.get("daemonsets")
    if not isinstance(common, dict):
        return []
    out: list[Problem] = []
    if common.get("tolerations") == []:
        tol = ASSET_TOLERATIONS[0]
        out.append(_problem(
            located,
            "/daemonsets/tolerations",
            f"an empty daemonsets.tolerations leaves every operand pod its asset's toleration ({tol['key']} {tol['operator']} {tol['effect']}), as the operator sets tolerations only from a non-empty list",
            "leave the key out for that toleration, or list the tolerations the pods should have instead",
            "operator-fallback",
            Severity.WARNING,
        ))
    if common.get("priorityClassName") == "":
        out.append(_problem(
            located,
            "/daemonsets/priorityClassName",
            f"an empty daemonsets.priorityClassName leaves every operand pod its asset's priority class {ASSET_PRIORITY_CLASS}, as the operator sets it only from a non-empty name",
            "leave the key out, or name the priority class the pods should have",
            "operator-fallback",
            Severity.WARNING,
        ))
    return out


CONFIG_MAP_KEYS = {"certConfig": "the CA certificates", "kernelModuleConfig": "the kernel module parameters"}
"""ConfigMaps of the driver mounted one file per key, and what goes missing without keys (a
``repoConfig`` without keys is mounted whole: docs/fidelity.md)."""


def config_map_keys_rules(located: Located) -> list[Problem]:
    """A warning where a certificate or kernel module ConfigMap is named without ``keys`` (the
    fleet's ``driver``, a pool's own, ``vgpuManager.kernelModuleConfig``): the operator reads the
    ConfigMap's keys from the API and mounts each; gpu-render reads no cluster, so it mounts
    none, and what the ConfigMap holds never reaches the driver."""
    pools = located.data.get("nodePools")
    fleet = located.data.get("driver")
    driver = not (isinstance(fleet, dict) and fleet.get("enabled") is False)  # else no driver pod would mount them
    places: list[tuple[str, Any, tuple[str, ...]]] = [
        *([("/driver", fleet, tuple(CONFIG_MAP_KEYS))] if driver else []),
        ("/vgpuManager", located.data.get("vgpuManager"), ("kernelModuleConfig",)),
        *((f"/nodePools/{i}/driver", p.get("driver"), tuple(CONFIG_MAP_KEYS)) for i, p in enumerate(pools if isinstance(pools, list) else []) if isinstance(p, dict) and driver),
    ]
    out: list[Problem] = []
    for where, section, keys in places:
        for key in keys:
            config = section.get(key) if isinstance(section, dict) else None
            if isinstance(config, dict) and config.get("name") and not config.get("keys"):
                dotted = where.strip("/").replace("/", ".")
                out.append(_problem(
                    located,
                    f"{where}/{key}/name",
                    f"{dotted}.{key} names a ConfigMap but declares no keys: the operator mounts each key it reads from the API, gpu-render reads no cluster and mounts none, so {CONFIG_MAP_KEYS[key]} never reach the driver",
                    f"list the ConfigMap's keys in {dotted}.{key}.keys (one file is mounted per key)",
                    "config-map-keys",
                    Severity.WARNING,
                ))
    return out


def nri_rules(located: Located, values: dict[str, Any]) -> list[Problem]:
    """``cdi.nriPluginEnabled`` with CDI off (from v26.3) or the container toolkit off (v26.7):
    the operator's ``validateClusterPolicySpec`` refuses the ClusterPolicy and deploys nothing,
    so gpu-render refuses the policy (the operands' NRI annotation would reach no NRI plugin)."""
    from renderer.releasegate import has

    release = str((values.get("cluster") or {}).get("operatorRelease") or "")
    cdi, toolkit = values.get("cdi") or {}, values.get("toolkit") or {}
    if not has(release, "v26.3") or not isinstance(cdi, dict) or cdi.get("nriPluginEnabled") is not True:
        return []
    if cdi.get("enabled") is False:
        needs = "cdi.enabled: the operator refuses the ClusterPolicy (the NRI Plugin cannot be enabled when CDI is disabled)"
    elif has(release, "v26.7") and isinstance(toolkit, dict) and toolkit.get("enabled") is False:
        needs = "the container toolkit, which runs the NRI plugin: the operator refuses the ClusterPolicy (the NRI Plugin cannot be enabled when the Container Toolkit is disabled)"
    else:
        return []
    message = f"cdi.nriPluginEnabled needs {needs} and deploys nothing"
    return [_problem(located, "/cdi/nriPluginEnabled", message, "switch cdi.nriPluginEnabled off, or turn on what it needs", "nri-needs", Severity.ERROR)]


def default_config_name_rules(located: Located) -> list[Problem]:
    """A warning at ``migManager.config.name: default-mig-parted-config`` with ``data`` of its
    own: the operator creates that ConfigMap with its default profiles and updates it back to
    them (``createConfigMap``: the default name is no custom ConfigMap), over what the chart
    created; gpu-render renders the default profiles too (:func:`renderer.resolve.operator_fallbacks`)."""
    from renderer.resolve import MIG_DEFAULT_CONFIG, default_mig_profiles

    mig = located.data.get("migManager")
    config = mig.get("config") if isinstance(mig, dict) else None
    if not isinstance(config, dict) or config.get("name") != MIG_DEFAULT_CONFIG:
        return []
    data = config.get("data")
    if not data or data == default_mig_profiles():
        return []
    return [
        _problem(
            located,
            "/migManager/config/data",
            f"migManager.config.data is replaced by the operator's default MIG profiles: the operator creates the ConfigMap {MIG_DEFAULT_CONFIG} from its own assets and updates it back to them (the default name is no custom config to it), and gpu-render renders what it would",
            "give the ConfigMap another name (migManager.config.name) for these profiles to be used",
            "default-config-name",
            Severity.WARNING,
        )
    ]


# --- what the render multiplies --------------------------------------------------------------

MAX_ANNOTATION_BYTES = 256 * 1024
"""Kubernetes refuses an object whose annotations (keys and values) exceed 256 KiB in total."""
MAX_COPIED_BYTES = 2 * 1024 * 1024
"""Bytes of values the render copies into its DaemonSets: the ``daemonsets.*`` pod settings
times the DaemonSets that carry them, the fleet ``driver`` section times the pools."""
MAX_COPIED_ENTRIES = 50_000
"""List entries and map keys the render copies that way (the cost is per entry as much as per byte)."""
OPERAND_DAEMONSETS = 20
"""At least as many operand DaemonSets as one cluster renders besides the per-pool driver ones."""
_SHARED = ("labels", "annotations", "tolerations", "podSecurityContext")
_ANNOTATIONS = ("/daemonsets/annotations", "/operator/annotations", "/operator/podAnnotations", "/dcgmExporter/annotations", "/driver/annotations")


def _size(value: Any) -> tuple[int, int]:
    """Serialized bytes and entries (list items plus map keys) of ``value``."""
    return len(json.dumps(value, separators=(",", ":"), default=str).encode()), _entries(value)


def _entries(value: Any) -> int:
    if isinstance(value, dict):
        return len(value) + sum(_entries(v) for v in value.values())
    if isinstance(value, list):
        return len(value) + sum(_entries(v) for v in value)
    return 0


def _annotation_bytes(value: Any) -> int:
    if not isinstance(value, dict):
        return 0
    return sum(len(str(k).encode()) + len(str(v).encode()) for k, v in value.items())


def copy_rules(located: Located, values: dict[str, Any]) -> list[Problem]:
    """The render copies ``daemonsets.labels/annotations/tolerations/podSecurityContext`` into
    every DaemonSet and the fleet driver section into every pool's driver DaemonSet: bound what that multiplies,
    before anything is rendered (the schema bounds each list and map at 256 entries)."""
    problems: list[Problem] = []
    pools = [p for p in (located.data.get("nodePools") or []) if isinstance(p, dict)]
    pointers = list(_ANNOTATIONS) + [f"/nodePools/{i}/driver/annotations" for i in range(len(pools))]
    for pointer in pointers:
        found, value = _lookup(located.data, pointer)
        size = _annotation_bytes(value) if found else 0
        if size > MAX_ANNOTATION_BYTES:
            problems.append(_problem(located, pointer, f"annotations of {size:,} bytes, at most {MAX_ANNOTATION_BYTES:,} are accepted", "Kubernetes refuses an object whose annotations exceed 256 KiB in total", "annotations-too-large"))
    shared: dict[str, Any] = values.get("daemonsets") or {}
    driver: dict[str, Any] = values.get("driver") or {}
    parts: list[tuple[str, int, int]] = []
    for key in _SHARED:
        size, entries = _size(shared.get(key) or {})
        parts.append((f"/daemonsets/{key}", size * (len(pools) + OPERAND_DAEMONSETS), entries * (len(pools) + OPERAND_DAEMONSETS)))
    size, entries = _size(driver)
    parts.append(("/driver", size * len(pools), entries * len(pools)))
    total_bytes = sum(b for _, b, _ in parts)
    total_entries = sum(e for _, _, e in parts)
    if total_bytes > MAX_COPIED_BYTES or total_entries > MAX_COPIED_ENTRIES:
        largest = max(parts, key=lambda p: (p[1], p[2]))[0]
        pointer = largest if _lookup(located.data, largest)[0] else ""
        problems.append(_problem(
            located, pointer,
            f"the render would copy {total_bytes:,} bytes ({total_entries:,} entries) into its DaemonSets, at most {MAX_COPIED_BYTES:,} bytes and {MAX_COPIED_ENTRIES:,} entries are accepted",
            f"daemonsets.labels, annotations, tolerations and podSecurityContext go into every DaemonSet ({len(pools)} pool(s) + up to {OPERAND_DAEMONSETS} operands), "
            "the fleet driver section into every pool's driver DaemonSet: shorten them, or set them per pool",
            "copied-too-large"))
    return problems


def _lookup(data: Any, pointer: str) -> tuple[bool, Any]:
    node = data
    for part in [p for p in pointer.split("/") if p]:
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            return False, None
    return True, node


# --- labels: what Kubernetes accepts as a label key and value ---------------------------------

_LABEL_NAME = re.compile(r"[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?")
_DNS_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
LABEL_MAPS = (
    "/daemonsets/labels",
    "/dcgmExporter/serviceMonitor/additionalLabels",
    "/nfd/gc/nodeSelector",
    "/nfd/master/nodeSelector",
    "/nfd/worker/nodeSelector",
    "/driver/nvidiaDriverCRD/nodeSelector",
    "/gitops/clusterSelector/matchLabels",
)
"""Maps the render writes as Kubernetes labels or label selectors (a pool's driver ``labels`` and
``nodeSelector`` too): the API server refuses an object whose label key or value breaks the
label syntax, so the operator's DaemonSets (and gpu-render's) would never be created."""
ANNOTATION_MAPS = ("/daemonsets/annotations", "/dcgmExporter/annotations")
"""Maps written as annotations: their keys follow the label key syntax (values are free)."""


def label_key_error(key: str) -> str:
    """Why ``key`` is no Kubernetes label key (an optional DNS-subdomain prefix and ``/``, then a
    name of at most 63 characters), or ``""``."""
    prefix, slash, name = key.rpartition("/")
    if slash and not (len(prefix) <= 253 and _DNS_SUBDOMAIN.fullmatch(prefix)):
        return f"its prefix {prefix[:80]!r} is not a DNS subdomain (lowercase letters, digits, '-' and '.', at most 253 characters)"
    if not _LABEL_NAME.fullmatch(name):
        return f"its name {name[:80]!r} is not 1 to 63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit"
    return ""


def label_value_error(value: str) -> str:
    """Why ``value`` is no Kubernetes label value (empty, or a label name), or ``""``."""
    if value == "" or _LABEL_NAME.fullmatch(value):
        return ""
    return "a label value is empty or 1 to 63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit"


def label_rules(located: Located) -> list[Problem]:
    """Label keys and values, and annotation keys, as the API server checks them: a values
    file the operator reads without a word (``<GITOPS_REPOSITORY_NAME>-admin`` left by a
    template in ``daemonsets.labels``) gives DaemonSets every ``kubectl apply`` refuses."""
    pools = [p for p in (located.data.get("nodePools") or []) if isinstance(p, dict)]
    labels = [*LABEL_MAPS, *(f"/nodePools/{i}/driver/{key}" for i in range(len(pools)) for key in ("labels", "nodeSelector"))]
    annotations = [*ANNOTATION_MAPS, *(f"/nodePools/{i}/driver/annotations" for i in range(len(pools)))]
    problems = _pool_label_values(located, pools)
    for pointer in [*labels, *annotations]:
        found, value = _lookup(located.data, pointer)
        if not found or not isinstance(value, dict):
            continue
        what = "label" if pointer in labels else "annotation"
        for key, item in value.items():
            at = f"{pointer}/{str(key).replace('~', '~0').replace('/', '~1')}"
            # annotation keys are checked lowercased, as the API server does
            why = label_key_error(str(key) if what == "label" else str(key).lower())
            if why:
                file, line, col = located.locate(at, key=True)
                problems.append(Problem(file, line, col, at, f"{str(key)[:80]!r} is not a valid {what} key: {why}",
                                        hint="Kubernetes refuses the object that carries it", code="label-syntax"))
            elif what == "label" and isinstance(item, str) and (why := label_value_error(item)):
                problems.append(_problem(located, at, f"{item[:80]!r} is not a valid label value: {why}",
                                         "Kubernetes refuses the object that carries it (a placeholder left by a template?)", "label-syntax"))
    return problems


def _pool_label_values(located: Located, pools: list[dict[str, Any]]) -> list[Problem]:
    """A pool's ``devicePluginConfig`` and ``mig.config`` are seeded as the node labels
    ``nvidia.com/device-plugin.config`` and ``nvidia.com/mig.config``: label values too (the
    seeder's label write would fail on every node of the pool)."""
    problems: list[Problem] = []
    for index, pool in enumerate(pools):
        mig = pool.get("mig")
        for pointer, value in ((f"/nodePools/{index}/devicePluginConfig", pool.get("devicePluginConfig")),
                               (f"/nodePools/{index}/mig/config", mig.get("config") if isinstance(mig, dict) else None)):
            if isinstance(value, str) and (why := label_value_error(value)):
                problems.append(_problem(located, pointer, f"{value[:80]!r} is not a valid label value: {why}",
                                         "it becomes a node label of the pool's nodes, which Kubernetes refuses", "label-syntax"))
    return problems


# --- strings: control and bidi characters, identifiers, image references ------------------

_ALWAYS_BAD = re.compile("[\x00-\x08\x0b-\x0c\x0e-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ufeff]")
_LINE_BREAK = re.compile("[\t\n\r]")
_IDENTIFIER_KEY = re.compile(r"(?i).*(name|namespace|repository|image|version|tag|path|dir|root|rootfs|fs|file|socket|prefix|class|server|url|revision|project|group|key|id|digest|strategy|runtime|effect|operator|suffix)\Z")
MAX_IDENTIFIER = 4096
"""An identifier-like string (a name, tag, path, URL): no Kubernetes field of that kind is longer."""


def _strings(node: Any, path: tuple[object, ...]) -> Any:
    """(path, key or None, string) for every key and string value; (path, None, float) for non-finite numbers."""
    stack: list[tuple[Any, tuple[object, ...]]] = [(node, path)]
    while stack:
        item, at = stack.pop()
        if isinstance(item, dict):
            for key, value in item.items():
                yield (*at, key), str(key), None
                stack.append((value, (*at, key)))
        elif isinstance(item, list):
            stack.extend((value, (*at, index)) for index, value in enumerate(item))
        elif isinstance(item, str) or (isinstance(item, float) and (item != item or item in (float("inf"), float("-inf")))):
            yield at, None, item


def _identifier(path: tuple[object, ...]) -> bool:
    """Whether the value at ``path`` is a name, tag, path or URL (by its key, or its list's key)."""
    if not path:
        return False
    last = path[-1]
    if isinstance(last, int):
        return len(path) > 1 and bool(_IDENTIFIER_KEY.fullmatch(str(path[-2])))
    return bool(_IDENTIFIER_KEY.fullmatch(str(last)))


def text_rules(located: Located) -> list[Problem]:
    """Control, bidi and line-break characters where they change what a reviewer reads or
    what Kubernetes gets: nowhere in a key or an identifier-like value (names, tags, paths,
    URLs), and no control or bidi character anywhere; identifiers bounded in length; numbers finite."""
    problems: list[Problem] = []
    for path, key, value in _strings(located.data, ()):
        if isinstance(value, float):
            message, hint = f"{value} is not a finite number", "Kubernetes quantities and counts are finite"
        else:
            text = key if key is not None else value
            assert isinstance(text, str)
            bad = _ALWAYS_BAD.search(text)
            identifier = key is not None or ((len(text) > MAX_IDENTIFIER or (bad is None and _LINE_BREAK.search(text) is not None)) and _identifier(path))
            if bad is None and identifier:
                bad = _LINE_BREAK.search(text)
            if bad is not None:
                what = "key" if key is not None else "value"
                message, hint = f"the {what} holds the character U+{ord(bad.group()):04X} (control, line break or bidi)", "remove it: it is invisible or changes what a reviewer reads"
            elif identifier and len(text) > MAX_IDENTIFIER:
                message, hint = f"a {len(text)}-character {'key' if key is not None else 'value'} (at most {MAX_IDENTIFIER} here)", ""
            else:
                continue
        pointer = pointer_of(list(path))
        file, line, col = located.locate(pointer)
        problems.append(Problem(file, line, col, pointer, message, hint=hint, code="bad-text"))
    return problems


_COMPONENT = r"[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*"
_REPOSITORY = re.compile(rf"(?:[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*(?::[0-9]{{1,5}})?)(?:/{_COMPONENT})*")
_IMAGE = re.compile(rf"{_COMPONENT}(?:/{_COMPONENT})*(?::[A-Za-z0-9_][A-Za-z0-9_.-]{{0,127}})?(?:@sha256:[0-9a-f]{{64}})?")
_VERSION = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}|sha256:[0-9a-f]{64}")
MAX_REFERENCE = 255


def image_rules(located: Located, defaulted: dict[str, Any] | None = None) -> list[Problem]:
    """``repository``, ``image`` and ``version`` of every image setting are parts of an image
    reference (the OCI distribution grammar): a registry host and path, a name, a tag or digest.
    Read in the defaulted values (a version set alone sits beside the default image)."""
    problems: list[Problem] = []
    # a part of the defaulted values the policy sets nothing in or under is the defaults' own,
    # which pass (checked once per process): only the policy's parts are walked
    own = located.data if defaulted is not None and _defaults_pass() else _ALL
    for at, field, value in _bad_images(defaulted if defaulted is not None else located.data, own):
        pointer = pointer_of([*at, field])
        file, line, col = located.locate(pointer)
        shown = value if len(value) <= 80 else f"{value[:60]}... ({len(value)} characters)"
        problems.append(Problem(file, line, col, pointer, f"{shown!r} is not a valid image {field}", hint=_IMAGE_HINTS[field], code="image-reference"))
    return problems


def _bad_images(data: Any, own: Any) -> Iterator[tuple[tuple[object, ...], str, str]]:
    """(path, field, value) of each image part of ``data`` that breaks its grammar, in the
    nodes ``own`` (the policy's part of ``data``, or ``_ALL``) sets something in or under."""
    stack: list[tuple[Any, Any, tuple[object, ...]]] = [(data, own, ())]
    while stack:
        item, mine, at = stack.pop()
        if mine is _DEFAULT:
            continue
        if isinstance(item, list):
            stack.extend((v, _own(mine, i), (*at, i)) for i, v in enumerate(item))
            continue
        if not isinstance(item, dict):
            continue
        stack.extend((v, _own(mine, k), (*at, k)) for k, v in item.items() if isinstance(v, (dict, list)))
        if not isinstance(item.get("image"), str) and not isinstance(item.get("repository"), str):
            continue
        for field, grammar in (("repository", _REPOSITORY), ("image", _IMAGE), ("version", _VERSION)):
            value = item.get(field)
            if isinstance(value, str) and value and not (grammar.fullmatch(value) and len(value) <= MAX_REFERENCE):
                yield at, field, value


_ALL: Any = object()
"""The policy's part of a node, when it is not followed: every node is checked."""
_DEFAULT: Any = object()
"""The policy's part of a node it sets nothing in or under: the defaults' own."""


def _own(mine: Any, key: Any) -> Any:
    """The policy's part of the child ``key`` of a node whose policy part is ``mine``."""
    if mine is _ALL:
        return _ALL
    if isinstance(mine, dict):
        return mine.get(key, _DEFAULT)
    if isinstance(mine, list):
        return mine[key] if isinstance(key, int) and key < len(mine) else _DEFAULT
    return _ALL  # the policy set something else there: every node below is checked


@cache
def _defaults_pass() -> bool:
    """Whether the defaults' own image settings all keep the grammar."""
    from renderer.resolve import defaults

    return next(_bad_images(defaults(), _ALL), None) is None


_IMAGE_HINTS = {
    "repository": "a registry host (and port) and path, e.g. nvcr.io/nvidia",
    "image": "a lowercase image name, e.g. k8s-device-plugin",
    "version": "a tag (letters, digits, '_', '.', '-', at most 128) or sha256:<64 hex>",
}


def _pool_pointer(located: Located, index: int, key: tuple[str, ...]) -> str:
    """Where a pool setting was written: in the pool entry, else in the fleet values."""
    if key and key[0] == "cluster":
        return pointer_of(list(key))
    own = pointer_of(["nodePools", index, *key])
    if key and own in located.origins:
        return own
    fleet = pointer_of(list(key))
    if key and fleet in located.origins:
        return fleet
    return pointer_of(["nodePools", index])


def pool_rules(located: Located, defaulted: dict[str, Any] | None = None) -> list[Problem]:
    """Per-pool image rules (digest + precompiled, kernel, driverType) and overlapping pools."""
    from renderer import driverimage
    from renderer.resolve import with_defaults

    values = with_defaults(located.data) if defaulted is None else defaulted
    problems: list[Problem] = []
    resolved: list[tuple[int, str, dict[str, str]]] = []
    reported: set[tuple[str, str]] = set()
    for index, pool in enumerate(values.get("nodePools") or []):
        issues = driverimage.pool_issues(values, pool)
        for issue in issues:
            pointer = _pool_pointer(located, index, issue.key)
            if (pointer, issue.code) in reported:
                continue  # a fleet-wide setting: reported once, for the first pool
            reported.add((pointer, issue.code))
            file, line, col = located.locate(pointer)
            severity = Severity.WARNING if issue.warning else Severity.ERROR
            problems.append(Problem(file, line, col, pointer, f"node pool {pool.get('name')!r}: {issue.message}", hint=issue.hint, code=issue.code, severity=severity))
        if not any(not issue.warning for issue in issues):
            resolved.append((index, str(pool["name"]), driverimage.pool_selector(values, pool)))
    problems += _overlaps(located, resolved)
    problems += _vgpu_manager_image(located, values)
    from renderer.components import dra_rules  # resourceAllocation: dra

    problems += dra_rules.rules(located, values)
    problems += _openshift(located, values)
    problems += nfd_os_rules(located, values)
    return problems


def validator_rules(located: Located, values: dict[str, Any]) -> list[Problem]:
    """Where the validator's settings differ from what the operator's would run: its retired
    image, its args in place of the idle loop."""
    return [*retired_validator_image(located, values), *validator_args(located)]


OPERAND_ARGS = (
    (
        "devicePlugin",
        "device-plugin-args",
        "devicePlugin.args differ from the operator's: it puts them in place of the asset's args (`sh -c /bin/entrypoint.sh`), so its plugin pod runs the first of them as a shell script and the plugin never starts; gpu-render passes them to nvidia-device-plugin after its entrypoint",
        "leave devicePlugin.args empty for what the operator runs; the plugin's flags have environment variables (devicePlugin.env: FAIL_ON_INIT_ERROR, ...)",
    ),
    (
        "toolkit",
        "toolkit-args",
        "toolkit.args differ from the operator's: it never reads them (its entrypoint runs nvidia-toolkit without arguments); gpu-render passes them to nvidia-toolkit",
        "leave toolkit.args empty for what the operator runs; the toolkit's settings are environment variables (toolkit.env)",
    ),
)
"""Operands whose ``args`` the operator makes something else of: (section, code, message, hint)."""


def operand_args(located: Located) -> list[Problem]:
    """A warning at ``devicePlugin.args`` / ``toolkit.args`` (:data:`OPERAND_ARGS`): gpu-render
    gives them to the operand's program, which the operator does not."""
    out: list[Problem] = []
    for key, code, message, hint in OPERAND_ARGS:
        section = located.data.get(key)
        if isinstance(section, dict) and section.get("args"):
            out.append(_problem(located, f"/{key}/args", message, hint, code, Severity.WARNING))
    return out


NFD_FLAGS_SINCE = (0, 19)
"""The first NFD release whose nfd-worker takes the flags and serves the probes gpu-render
renders, as the operator's v26.7 chart does: ``-owner-refs`` (v0.18 has only
``-no-owner-refs``), ``-port`` and HTTP ``/healthz`` (v0.18 on; v0.17 has ``-metrics`` /
``-grpc-health``)."""
_SEMVER = re.compile(r"v?(\d+)\.(\d+)(?:\.\d+)?(?:[-+].*)?")


def vgpu_host_pool_rules(located: Located, values: dict[str, Any]) -> list[Problem]:
    """An error at a pool's ``driver.driverType: vgpu-host-manager`` while the sandbox vGPU manager
    runs (``sandboxWorkloads.enabled`` and ``vgpuManager.enabled``): both put a vGPU manager
    DaemonSet, ``nvidia-vgpu-manager-daemonset-<pool>``, on the pool's nodes (two managers of one
    kernel module; one object name, which kubectl kustomize refuses)."""
    sandbox, vgpu = values.get("sandboxWorkloads") or {}, values.get("vgpuManager") or {}
    if not (isinstance(sandbox, dict) and sandbox.get("enabled") and isinstance(vgpu, dict) and vgpu.get("enabled", True)):
        return []
    out: list[Problem] = []
    for index, pool in enumerate(located.data.get("nodePools") or []):
        driver = pool.get("driver") if isinstance(pool, dict) else None
        if isinstance(driver, dict) and driver.get("driverType") == "vgpu-host-manager":
            out.append(
                _problem(
                    located,
                    f"/nodePools/{index}/driver/driverType",
                    f"node pool {pool.get('name')!r} is a vGPU host (its driver is the vGPU manager), and the sandbox vGPU manager (vgpuManager.enabled) also runs on every pool: two vGPU managers on its nodes, under one DaemonSet name",
                    "set vgpuManager.enabled: false and give each vGPU host pool driverType vgpu-host-manager, or keep the sandbox vGPU manager and remove driverType here",
                    "vgpu-host-pool",
                )
            )
    return out


_NAMED_TAG = re.compile(r"^[a-z][a-z0-9-]*?-(?=v?\d)")
"""An image's name before the version in its tag (``node-feature-discovery-v0.16.6``)."""


def nfd_version_rules(located: Located, values: dict[str, Any]) -> list[Problem]:
    """A warning at an ``nfd.version`` older than :data:`NFD_FLAGS_SINCE` (the NFD image tag of
    an older chart, which the importer keeps): the pods are rendered as the operator's chart
    renders them, with flags that image does not know, so they exit at start."""
    nfd = values.get("nfd")
    if not isinstance(nfd, dict) or not nfd.get("enabled", True) or not isinstance(nfd.get("version"), str):
        return []
    version = nfd["version"]
    # a tag may carry the image's name before its version (one mirror for every image:
    # ``node-feature-discovery-v0.16.6``)
    m = _SEMVER.fullmatch(version) or _SEMVER.fullmatch(_NAMED_TAG.sub("", version))
    if m is None or (int(m.group(1)), int(m.group(2))) >= NFD_FLAGS_SINCE:
        return []
    since = "v{}.{}".format(*NFD_FLAGS_SINCE)
    return [
        _problem(
            located,
            "/nfd/version",
            f"nfd.version {version} is older than the NFD the pods are rendered for ({since} and later, as by the operator's v26.7 chart): nfd-worker before {since} exits on its -owner-refs flag (and before v0.18 on -port, with no /healthz to probe)",
            f"remove nfd.version for gpu-render's NFD, or pin {since} or later",
            "nfd-version",
            Severity.WARNING,
        )
    ]


def drop_in_host_path_rules(located: Located, values: dict[str, Any]) -> list[Problem]:
    """A warning at ``toolkit.env`` ``RUNTIME_DROP_IN_CONFIG_HOST_PATH``: the operator sets it to
    the drop-in file it reads from ``RUNTIME_DROP_IN_CONFIG`` (or the runtime's default) over the
    written value, and so does gpu-render; the written value never reaches the toolkit."""
    from renderer.components.container_toolkit import DEFAULTS

    toolkit = located.data.get("toolkit")
    env = toolkit.get("env") if isinstance(toolkit, dict) else None
    runtime = str((values.get("cluster") or {}).get("containerRuntime") or "containerd")
    pools = [p for p in values.get("nodePools") or [] if isinstance(p, dict)]
    nri = bool((values.get("cdi") or {}).get("nriPluginEnabled")) and (values.get("cluster") or {}).get("operatorRelease", "v26.7") == "v26.7"
    if not isinstance(env, list) or not DEFAULTS.get(runtime, {}).get("dropInConfig") or nri or any(p.get("runtime") or p.get("runtimeConfig") for p in pools):
        return []  # a pool's own runtime or files, or NRI mode (no drop-in set): the value may stand
    named = {str(e.get("name")): e.get("value") for e in env if isinstance(e, dict)}
    drop_in = str(named.get("RUNTIME_DROP_IN_CONFIG") or DEFAULTS[runtime]["dropInConfig"])
    return [
        _problem(
            located,
            pointer,
            f"RUNTIME_DROP_IN_CONFIG_HOST_PATH is set to the drop-in file the toolkit writes, {drop_in} (from RUNTIME_DROP_IN_CONFIG or the {runtime} default), over this value, as the operator does",
            "name the host's drop-in file in RUNTIME_DROP_IN_CONFIG and remove RUNTIME_DROP_IN_CONFIG_HOST_PATH",
            "drop-in-host-path",
            Severity.WARNING,
        )
        for pointer, item in _env_entries(located, ("/toolkit/env",), "RUNTIME_DROP_IN_CONFIG_HOST_PATH")
        if item.get("value") != drop_in
    ]


def _env_entries(located: Located, patterns: tuple[str, ...], name: str) -> Iterator[tuple[str, dict[str, Any]]]:
    """(pointer, entry) of each env entry called ``name`` in the lists at ``patterns`` (envfrom's
    table pointers, ``*`` for any list item)."""
    from renderer.envfrom import _expand

    for pattern in patterns:
        for pointer, env in _expand(located.data, pattern):
            for index, item in enumerate(env if isinstance(env, list) else []):
                if isinstance(item, dict) and item.get("name") == name:
                    yield f"{pointer}/{index}", item


def host_root_env(located: Located) -> list[Problem]:
    """A warning at an ``env`` entry ``HOST_ROOT`` when ``hostPaths.rootFS`` is not ``/``: the
    operator's transformForHostRoot sets ``HOST_ROOT`` before the operand's transform applies the
    user's env (the user's value wins on that container); gpu-render sets ``hostPaths.rootFS``
    over every container's env, the user's included."""
    host_paths = located.data.get("hostPaths")
    root = host_paths.get("rootFS") if isinstance(host_paths, dict) else None
    if not isinstance(root, str) or root in ("", "/"):
        return []
    from renderer.envfrom import checked_pointers

    return [
        _problem(
            located,
            pointer,
            f"HOST_ROOT differs from the operator's: it keeps this value on the container, gpu-render sets hostPaths.rootFS ({root}) in its place",
            "set the host's root in hostPaths.rootFS only, or leave hostPaths.rootFS at / to keep this HOST_ROOT",
            "host-root-env",
            Severity.WARNING,
        )
        for pointer, _ in _env_entries(located, checked_pointers(), "HOST_ROOT")  # the operands' lists (no Deployment's)
    ]


def validator_args(located: Located) -> list[Problem]:
    """A warning at ``validator.args``: the operator puts them in place of the validator's idle
    loop (``sh -c "echo all validations are successful; while true; do sleep 86400; done"``), and
    so does gpu-render; unless the first of them keeps running, the validator pods exit and
    restart for ever, and the node's ready markers are removed at each stop."""
    section = located.data.get("validator")
    if not isinstance(section, dict) or not section.get("args"):
        return []
    return [
        _problem(
            located,
            "/validator/args",
            "validator.args replace the validator's idle loop, as the operator does: `sh -c` runs the first of them as the main container, which must keep running",
            "leave validator.args empty unless the first argument is a script that never ends; validator settings go in validator.env and the per-validation sections",
            "validator-args",
            Severity.WARNING,
        )
    ]


def driver_rules(located: Located) -> list[Problem]:
    """Driver settings whose meaning in the GPU Operator's ClusterPolicy differs from what the
    NVIDIADriver-shaped pools render: a leading ``init`` in ``driver.args``, a zero startup
    delay, and sidecar ``args`` the operator never reads."""
    return [*driver_args_init(located), *driver_probe_zero(located), *sidecar_args(located)]


def manual_upgrade_drain_rules(located: Located, values: dict[str, Any]) -> list[Problem]:
    """A warning at ``driver.upgradePolicy.drain.enable: true`` (the fleet's or a pool's) with
    ``autoUpgrade: false``: the operator's upgrade controller is off then, and nothing drains (its
    driver manager keeps the asset's ``ENABLE_AUTO_DRAIN=false``); gpu-render's driver manager
    carries the policy (:func:`renderer.components.driver.manager_env`), so it drains the node
    whenever a driver pod is replaced by hand (docs/fidelity.md, driver upgrades)."""
    fleet = (values.get("driver") or {}).get("upgradePolicy") or {}
    pools = located.data.get("nodePools")
    places = [("/driver", located.data.get("driver"), fleet)]
    places += [(f"/nodePools/{i}/driver", p.get("driver"), fleet) for i, p in enumerate(pools if isinstance(pools, list) else []) if isinstance(p, dict)]
    out: list[Problem] = []
    for where, mine, default in places:
        policy = mine.get("upgradePolicy") if isinstance(mine, dict) else None
        if not isinstance(policy, dict) or not isinstance(policy.get("drain"), dict) or policy["drain"].get("enable") is not True:
            continue
        if policy.get("autoUpgrade", default.get("autoUpgrade", True)) is not False:
            continue
        out.append(_problem(
            located,
            f"{where}/upgradePolicy/drain/enable",
            "drain.enable with autoUpgrade false: the GPU Operator's upgrade controller is off then and nothing drains the node; gpu-render's driver manager drains it whenever a driver pod is replaced",
            "keep it to have gpu-render drain on a manual upgrade (docs/controller-less.md), or remove it to upgrade as the operator's driver manager does (GPU pods evicted, no drain)",
            "manual-upgrade-drain",
            Severity.WARNING,
        ))
    return out


DRAIN_SHARED = {"force": "DRAIN_USE_FORCE", "timeoutSeconds": "DRAIN_TIMEOUT_SECONDS", "deleteEmptyDir": "DRAIN_DELETE_EMPTYDIR_DATA"}
"""``gpuPodDeletion`` / ``drain`` settings k8s-driver-manager holds once, for both steps."""
_DRAIN_MERGED = {
    "force": "force if either says so",
    "timeoutSeconds": "the drain's timeout",
    "deleteEmptyDir": "emptyDir pods deleted if either says so",
}


def drain_shared_rules(located: Located, values: dict[str, Any]) -> list[Problem]:
    """A warning where ``drain.enable`` is on and ``gpuPodDeletion`` and ``drain`` disagree on
    ``force``, ``timeoutSeconds`` or ``deleteEmptyDir`` (the fleet's, or a pool's that writes
    either): the operator's upgrade controller runs the two steps with their own settings;
    k8s-driver-manager, which runs both here, reads one env var for each pair (its
    ``DrainOptions`` serve the GPU pod eviction and the drain alike), so
    :func:`renderer.components.driver.manager_env` merges them (force or deleteEmptyDir if
    either says so, the drain's timeout)."""
    fleet = (values.get("driver") or {}).get("upgradePolicy") or {}
    pools = located.data.get("nodePools")
    mine = located.data.get("driver")
    places: list[tuple[str, Any]] = [("/driver", mine.get("upgradePolicy") if isinstance(mine, dict) else None)]
    for i, pool in enumerate(pools if isinstance(pools, list) else []):
        own = pool.get("driver") if isinstance(pool, dict) else None
        policy = own.get("upgradePolicy") if isinstance(own, dict) else None
        if isinstance(policy, dict) and ("drain" in policy or "gpuPodDeletion" in policy):
            places.append((f"/nodePools/{i}/driver", policy))
    out: list[Problem] = []
    fleet_warns: set[str] = set()  # keys the fleet's warning covers for pools that inherit them
    for where, policy in places:
        written = policy if isinstance(policy, dict) else {}
        deletion = _merged_section(fleet, written, "gpuPodDeletion")
        drain = _merged_section(fleet, written, "drain")
        if drain.get("enable") is not True:
            continue
        for key, env in DRAIN_SHARED.items():
            if deletion.get(key) == drain.get(key):
                continue
            own = [sec for sec in ("drain", "gpuPodDeletion") if isinstance(written.get(sec), dict) and key in written[sec]]
            if where == "/driver":
                fleet_warns.add(key)
            elif not own and key in fleet_warns:
                continue
            pointer = f"{where}/upgradePolicy/{own[0]}/{key}" if own else f"{where}/upgradePolicy/drain/enable"
            out.append(_problem(
                located,
                pointer,
                f"gpuPodDeletion.{key} ({json.dumps(deletion.get(key))}) and drain.{key} ({json.dumps(drain.get(key))}) differ with drain.enable: the operator's upgrade controller deletes GPU pods with the one and drains with the other; k8s-driver-manager has one setting for both ({env}), so gpu-render gives it {_DRAIN_MERGED[key]}",
                f"set gpuPodDeletion.{key} and drain.{key} alike to say which one both steps use",
                "drain-shared-settings",
                Severity.WARNING,
            ))
    return out


def _merged_section(fleet: dict[str, Any], written: dict[str, Any], key: str) -> dict[str, Any]:
    base, own = fleet.get(key), written.get(key)
    return {**(base if isinstance(base, dict) else {}), **(own if isinstance(own, dict) else {})}


def docker_runtime_rules(located: Located, values: dict[str, Any]) -> list[Problem]:
    """A warning at a ``docker`` runtime (the cluster's or a pool's) on Kubernetes 1.24 or later,
    which has no dockershim: such nodes run Docker only through cri-dockerd. A values file of a
    chart before v1.9 names the chart's default docker and has it moved here; the operator of
    today would find containerd on most of those nodes, and the toolkit configured for Docker
    leaves the GPU runtime out of the one they run."""
    version = str((values.get("cluster") or {}).get("kubeVersion") or "")
    major, _, minor = version.partition(".")
    if not (major.isdigit() and minor.isdigit()) or (int(major), int(minor)) < (1, 24):
        return []
    cluster = located.data.get("cluster")
    places = [("/cluster/containerRuntime", cluster.get("containerRuntime") if isinstance(cluster, dict) else None)]
    pools = located.data.get("nodePools")
    places += [(f"/nodePools/{i}/runtime", p.get("runtime")) for i, p in enumerate(pools if isinstance(pools, list) else []) if isinstance(p, dict)]
    return [
        _problem(
            located,
            pointer,
            f"docker on Kubernetes {version}, which has no dockershim since 1.24: nodes run Docker only through cri-dockerd, and on containerd nodes the toolkit would configure a runtime they do not use",
            "set it to what the nodes run (gpu-render nodes import reads it from them); keep docker only for cri-dockerd nodes",
            "docker-runtime",
            Severity.WARNING,
        )
        for pointer, runtime in places
        if runtime == "docker"
    ]


HOST_PATH_ENV = frozenset({name for names in READ_ENV.values() for fields in names.values() for name in fields})
"""The ``toolkit.env`` names whose value the operator mounts as a host path (the runtime's
configuration, drop-in file and socket: ``getRuntimeConfigFiles``, ``getRuntimeSocketFile``)."""


def relative_host_path_rules(located: Located) -> list[Problem]:
    """A warning at a ``toolkit.env`` host path written without its leading ``/``
    (``var/lib/rancher/k3s/agent/etc/containerd/config.toml``): the operator mounts its folder as
    written (``path.Dir``), and so does the render, but the kubelet takes a relative host path
    from its own working directory, not the node's root (the schema refuses the same in a
    pool's ``runtimeConfig``)."""
    toolkit = located.data.get("toolkit")
    env = toolkit.get("env") if isinstance(toolkit, dict) else None
    return [
        _problem(
            located,
            f"/toolkit/env/{i}/value",
            f"{item['name']} is a relative host path ({item['value']!r}): the toolkit's host volume is mounted as written, which the kubelet resolves against its own working directory, not the node's root",
            f"write it from the root: '/{item['value']}'",
            "relative-host-path",
            Severity.WARNING,
        )
        for i, item in enumerate(env if isinstance(env, list) else [])
        if isinstance(item, dict) and item.get("name") in HOST_PATH_ENV and isinstance(item.get("value"), str) and item["value"] and not item["value"].startswith("/")
    ]


def sandbox_gate_rules(located: Located, values: dict[str, Any]) -> list[Problem]:
    """A warning at ``ccManager.enabled: true`` with sandbox workloads in another mode than kata:
    up to v25.10 the operator ran cc-manager with any sandbox mode, from v26.3 only with kata
    (``isStateEnabled``), so a file written for an older chart that switched it on for its VMs
    (a Confidential Containers install script) gets none. The render follows the operator; the
    written switch said otherwise. (Left alone without sandbox workloads: the chart's own values
    write every sandbox operand on, and nothing deploys them there, as with the operator.)"""
    from renderer.releasegate import has

    sandbox = values.get("sandboxWorkloads") or {}
    release = str((values.get("cluster") or {}).get("operatorRelease") or "")
    mode = str(sandbox.get("mode") or "kubevirt")
    mine = located.data.get("ccManager")
    if not isinstance(mine, dict) or mine.get("enabled") is not True or not sandbox.get("enabled") or mode == "kata" or not has(release, "v26.3"):
        return []
    return [
        _problem(
            located,
            "/ccManager/enabled",
            f"ccManager.enabled: from v26.3 the GPU Operator deploys cc-manager only with sandboxWorkloads.mode kata (before, with any mode), and the mode here is {mode}: none is deployed",
            "set sandboxWorkloads.mode: kata for confidential computing, or remove the switch",
            "sandbox-gated",
            Severity.WARNING,
        )
    ]


def gpu_present_rules(located: Located) -> list[Problem]:
    """A warning at ``nfd.enabled: false``: gpu-render then renders no NFD object, not even the
    NodeFeatureRule that labels the GPU nodes ``nvidia.com/gpu.present=true``, on which every
    operand's DaemonSet selects. The operator sets that label itself from an existing NFD's PCI
    labels, so a values file that relies on an NFD installed apart (a common choice) deploys;
    here nothing schedules until the label comes from somewhere (docs/fidelity.md)."""
    nfd = located.data.get("nfd")
    if not isinstance(nfd, dict) or nfd.get("enabled") is not False:
        return []
    return [
        _problem(
            located,
            "/nfd/enabled",
            "with nfd.enabled false no NFD object is rendered, not even the NodeFeatureRule nvidia-gpu-present: every operand selects nodes labelled nvidia.com/gpu.present=true, which the operator sets from an existing NFD's labels and gpu-render does not, so none schedules until the nodes carry it",
            "apply the NodeFeatureRule nvidia-gpu-present to the NFD you run (docs/controller-less.md), or label the GPU nodes nvidia.com/gpu.present=true when they are provisioned",
            "gpu-present-unset",
            Severity.WARNING,
        )
    ]


def _registry(repository: str) -> str:
    """The registry host of an image repository (``docker.io`` for a bare path, as the runtime reads it)."""
    first, slash, _ = repository.partition("/")
    return first if slash and ("." in first or ":" in first or first == "localhost") else "docker.io"


def own_image_rules(located: Located, values: dict[str, Any]) -> list[Problem]:
    """A warning where the policy moves every image it names to one registry (a mirror, an
    air-gapped cluster's) but leaves the node labeller's default: that DaemonSet is gpu-render's
    own (the operator labels the nodes from its controller), so a file written for the operator
    never names it, and its stock kubectl image would be pulled from a registry the cluster may
    not reach, the one pod the operator did not have failing to start. At the first repository
    the policy sets (three at least: one alone says nothing about the rest), other than NVIDIA's
    own registry."""
    labeller = values.get("nodeLabeller") or {}
    if not labeller.get("enabled") or _lookup(located.data, "/nodeLabeller/repository")[0]:
        return []
    repos: list[tuple[str, str]] = []
    for key, section in located.data.items():
        if not isinstance(section, dict) or key == "nodeLabeller":
            continue
        for at, node in ((f"/{key}", section), *((f"/{key}/{k}", v) for k, v in section.items() if isinstance(v, dict))):
            if isinstance(node.get("repository"), str) and node["repository"]:
                repos.append((f"{at}/repository", node["repository"]))
    hosts = {_registry(r) for _, r in repos}
    own = str(labeller.get("repository") or "")
    if len(repos) < 3 or len(hosts) != 1 or hosts & {_registry(own), "nvcr.io"}:
        return []  # (nvcr.io: the chart's own registry, which a copied values file names everywhere)
    image = f"{own}/{labeller.get('image')}:{labeller.get('version')}"
    return [
        _problem(
            located,
            repos[0][0],
            f"every image repository the policy sets is on {hosts.pop()}, but the node labeller (gpu-render's own DaemonSet, which seeds the deploy labels the operator's controller sets) pulls {image}",
            "mirror that image and set nodeLabeller.repository (and imagePullSecrets), or set nodeLabeller.enabled: false where node provisioning sets the deploy labels",
            "own-image-registry",
            Severity.WARNING,
        )
    ]


def driver_crd_rules(located: Located, values: dict[str, Any]) -> list[Problem]:
    """Errors where the chart's NVIDIADriver switch changes which nodes get a driver, which
    gpu-render cannot render (it makes no NVIDIADriver resources: a pool's driver settings are
    its NVIDIADriver):

    * ``nvidiaDriverCRD.enabled`` with ``deployDefaultCR: false`` (the driver enabled): the chart
      deploys no driver at all (:func:`renderer.chartkeys.external_drivers`), where gpu-render
      would deploy the driver of ``driver.*`` on every pool;
    * with the default NVIDIADriver, a ``nodeSelector``: up to v26.3 the chart gives it to that
      resource, whose driver then runs only on the nodes that carry those labels; every pool's
      driver would run on all its nodes here (v26.7 prints no ``nodeSelector`` there: no effect)."""
    from renderer import chartkeys
    from renderer.releasegate import has

    driver = located.data.get("driver")
    if not isinstance(driver, dict):
        return []
    if chartkeys.external_drivers(driver):
        return [
            _problem(
                located,
                "/driver/nvidiaDriverCRD/deployDefaultCR",
                "driver.nvidiaDriverCRD.enabled with deployDefaultCR false: the GPU Operator deploys no driver from these values, only the NVIDIADriver resources created beside its chart; gpu-render would deploy the driver of driver.* on every node pool",
                "write each NVIDIADriver as the driver settings of the node pool it selects (nodePools[].driver: version, nodeSelector, ...) and remove driver.nvidiaDriverCRD; or set driver.enabled: false to deploy no driver",
                "driver-crd-external",
            )
        ]
    kind = chartkeys.crd_driver_type(driver)
    if kind:
        return [
            _problem(
                located,
                "/driver/nvidiaDriverCRD/driverType",
                f"driver.nvidiaDriverCRD.driverType {kind}: the chart's default NVIDIADriver is then a vGPU host manager built from driver.*, not a GPU driver; gpu-render would deploy the GPU driver of driver.* on every node pool",
                "set nodePools[].driver.driverType: vgpu-host-manager on the pools of the vGPU hosts (with their driver image) and remove driver.nvidiaDriverCRD",
                "driver-crd-driver-type",
            )
        ]
    crd = driver.get("nvidiaDriverCRD")
    release = str((values.get("cluster") or {}).get("operatorRelease") or "")
    if not isinstance(crd, dict) or crd.get("enabled") is not True or not crd.get("nodeSelector") or has(release, "v26.7") or driver.get("enabled") is False:
        return []
    return [
        _problem(
            located,
            "/driver/nvidiaDriverCRD/nodeSelector",
            f"driver.nvidiaDriverCRD.nodeSelector: the {release} chart gives it to the default NVIDIADriver, whose driver then runs only on nodes with these labels; gpu-render renders each node pool's driver on all of that pool's nodes",
            "give each node pool whose nodes carry these labels them as nodePools[].driver.nodeSelector, list no pool for the other nodes, and remove driver.nvidiaDriverCRD",
            "driver-crd-node-selector",
        )
    ]


def driver_args_init(located: Located) -> list[Problem]:
    """An error at a ``driver.args`` that starts with ``init``. The operator's ClusterPolicy puts
    ``driver.args`` in the place of the driver container's ``["init"]`` (transformDriverContainer),
    so a values file written for it names ``init`` first; gpu-render renders ``init`` and then
    ``driver.args``, as an NVIDIADriver does (``nodePools[].driver.args``), which would make the
    driver container run ``nvidia-driver init init ...``: the script takes no extra argument and
    exits with its usage, where the operator's driver runs. Refused rather than reinterpreted, so
    that the fleet and pool keys keep one meaning."""
    section = located.data.get("driver")
    args = section.get("args") if isinstance(section, dict) else None
    if not isinstance(args, list) or not args or str(args[0]) != "init":
        return []
    return [
        _problem(
            located,
            "/driver/args/0",
            "driver.args starts with `init`: the GPU Operator puts driver.args in place of the driver container's `init`, gpu-render renders `init` before them (as an NVIDIADriver does), so the driver would run `nvidia-driver init init ...` and exit with its usage",
            "remove the leading `init` from driver.args: gpu-render always runs `nvidia-driver init` followed by them",
            "driver-args-init",
        )
    ]


def driver_probe_zero(located: Located) -> list[Problem]:
    """A warning at ``driver.startupProbe.initialDelaySeconds: 0`` (the one probe field the
    schema lets be 0): the ClusterPolicy has no unset value but 0, and setContainerProbe copies
    only non-zero fields, so the operator keeps its asset's 60 seconds; gpu-render renders the
    0 written, as an NVIDIADriver's template does."""
    section = located.data.get("driver")
    probe = section.get("startupProbe") if isinstance(section, dict) else None
    if not isinstance(probe, dict) or probe.get("initialDelaySeconds") != 0:
        return []
    return [
        _problem(
            located,
            "/driver/startupProbe/initialDelaySeconds",
            "driver.startupProbe.initialDelaySeconds: 0 is unset to the GPU Operator's ClusterPolicy (setContainerProbe copies only non-zero fields), which keeps 60 seconds; gpu-render renders 0, as an NVIDIADriver does",
            "remove the key for the operator's 60 seconds, or keep 0 for probes from the start",
            "driver-probe-zero",
            Severity.WARNING,
        )
    ]


SIDECAR_SECTIONS = {"gds": ("nvidia-fs", "transformGDSContainer"), "gdrcopy": ("gdrdrv", "transformGDRCopyContainer")}
"""The kernel-module sidecars whose ``args`` the operator's API has and never reads: (module,
the ClusterPolicy transform that sets no args)."""


def sidecar_args(located: Located) -> list[Problem]:
    """A warning at each non-empty ``gds.args`` / ``gdrcopy.args`` (fleet, or a pool's own
    ``nodePools[].driver.{gds,gdrcopy}.args``). The ClusterPolicy and NVIDIADriver APIs have the
    field, but neither the operator's transforms nor its NVIDIADriver template read it: the
    sidecar always runs the asset's script (wait for the driver, install the module). gpu-render
    runs the args written in the script's place, which the operator never does."""
    places: list[tuple[str, Any]] = [(f"/{key}", located.data.get(key)) for key in SIDECAR_SECTIONS]
    for index, pool in enumerate(located.data.get("nodePools") or []):
        driver = pool.get("driver") if isinstance(pool, dict) else None
        if isinstance(driver, dict):
            places += [(pointer_of(["nodePools", index, "driver", key]), driver.get(key)) for key in SIDECAR_SECTIONS]
    problems: list[Problem] = []
    for pointer, section in places:
        if not isinstance(section, dict) or not section.get("args"):
            continue
        key = pointer.rsplit("/", 1)[-1]
        module, transform = SIDECAR_SECTIONS[key]
        problems.append(
            _problem(
                located,
                f"{pointer}/args",
                f"{key}.args is never read by the GPU Operator ({transform} and its NVIDIADriver template set no args: the {module} sidecar always runs its wait-and-install script); gpu-render runs these args in the script's place",
                f"remove {key}.args to run the operator's install script; keep them only for a script of your own that waits for the driver and installs {module}",
                "sidecar-args",
                Severity.WARNING,
            )
        )
    return problems


RETIRED_VALIDATOR = "gpu-operator-validator"
"""The validator's own image up to v25.3; from v25.10 the validator is a binary of the
operator's image (``nvcr.io/nvidia/gpu-operator``, upstream commit "Consolidate operator and
validator into one image"), and no ``gpu-operator-validator`` image is published for it."""


def retired_validator_image(located: Located, values: dict[str, Any]) -> list[Problem]:
    """A warning where a values file of v25.3 or older (copied whole, as many are) still names
    the validator's retired image and leaves its tag to the release: the tag it then pulls
    (``gpu-operator-validator:v26.7.0``) was never published, so every GPU node's validator,
    and with it every operand that waits for it, would stay in ImagePullBackOff."""
    from renderer import driverimage
    from renderer.resolve import defaults

    release = (values.get("cluster") or {}).get("operatorRelease", "")
    out: list[Problem] = []
    for section in ("validator", "nodeStatusExporter"):
        mine, used = located.data.get(section), values.get(section)
        if not isinstance(mine, dict) or not isinstance(used, dict) or mine.get("version"):
            continue  # (an empty version is the release's, as the operator's chart fills it)
        if not used.get("version"):
            used = {**used, "version": defaults()[section]["version"]}
        if section == "nodeStatusExporter" and not used.get("enabled"):
            continue
        image = str(used.get("image", ""))
        if image.rsplit("/", 1)[-1] != RETIRED_VALIDATOR:
            continue  # another image, or one named with its own tag or digest
        key = "image" if "image" in mine else "repository"
        out.append(
            _problem(
                located,
                f"/{section}/{key}",
                f"{section} names the image {RETIRED_VALIDATOR}, which releases from v25.10 no longer publish "
                f"(the validator is part of the nvcr.io/nvidia/gpu-operator image), with the tag of {release}: "
                f"{driverimage.image_path(used)} does not exist",
                f"remove {section}.repository and {section}.image to take the release's image, or pin {section}.version to a tag your registry has",
                "retired-image",
                Severity.WARNING,
            )
        )
    return out


OS_LABEL = re.compile(r"feature\.node\.kubernetes\.io/system-os_release\.(ID|VERSION_ID)[\"']?\s*[=:]\s*[\"']?([A-Za-z0-9._-]+)")
"""An OS label a custom NFD rule sets: ``...VERSION_ID=0`` in a ``labelsTemplate``, or
``"...VERSION_ID": "0"`` in its ``labels`` (as JSON)."""
OS_KEYS = {"ID": "id", "VERSION_ID": "version"}


def nfd_os_rules(located: Located, values: dict[str, Any]) -> list[Problem]:
    """A warning at each custom NFD rule that sets the node's OS labels, for the pools whose
    ``os`` says otherwise: the driver DaemonSet of a pool selects its nodes by those labels, and
    the operator picks the driver image by them (Garden Linux labels ``VERSION_ID=0``, the
    version its images are tagged with: a pool that says ``1592.4`` pulls an image that does not
    exist, or never schedules)."""
    nfd = values.get("nfd") or {}
    if not nfd.get("enabled", True):
        return []
    out: list[Problem] = []
    pools = [p for p in values.get("nodePools") or [] if isinstance(p, dict)]
    for index, rule in enumerate((nfd.get("worker") or {}).get("customSources") or []):
        sets = dict(OS_LABEL.findall(json.dumps(rule)))
        other = []
        for pool in pools:
            said_os = {label: str((pool.get("os") or {}).get(key, "")) for label, key in OS_KEYS.items()}
            if sets.get("ID", said_os["ID"]) != said_os["ID"]:
                continue  # the rule labels another OS: not this pool's nodes
            if any(said_os[label] != value for label, value in sets.items()):
                other.append(str(pool.get("name")))
        if not other:
            continue
        said = ", ".join(f"{OS_KEYS[label]} {value!r}" for label, value in sorted(sets.items()))
        name = rule.get("name", index) if isinstance(rule, dict) else index
        out.append(
            _problem(
                located,
                f"/nfd/worker/customSources/{index}",
                f"custom NFD rule {name!r} labels its nodes' OS ({said}), which node pool(s) {', '.join(other)} say otherwise",
                "a pool's driver DaemonSet selects its nodes by these labels and the operator picks the driver image by them: "
                "where the rule matches a pool's nodes, write that pool's os as the rule labels it",
                "nfd-os-label",
                Severity.WARNING,
            )
        )
    return out


def _openshift(located: Located, values: dict[str, Any]) -> list[Problem]:
    """OpenShift is refused until it is rendered whole (docs/fidelity.md): the operator's Driver
    Toolkit sidecar, per-RHCOS driver DaemonSets, OPENSHIFT_VERSION, cluster proxy and trusted
    CA, and SecurityContextConstraints are not rendered, and half of them would not run."""
    caps = (values.get("cluster") or {}).get("capabilities") or {}
    if not caps.get("openshift"):
        return []
    return [
        _problem(
            located,
            "/cluster/capabilities/openshift",
            "OpenShift is not supported yet: gpu-render does not render the Driver Toolkit sidecar, per-RHCOS driver DaemonSets, proxy/trusted CA or SecurityContextConstraints that the GPU Operator deploys there",
            "deploy the GPU Operator (OLM) on OpenShift clusters; remove cluster.capabilities.openshift to render for other clusters",
            "openshift-unsupported",
        )
    ]


def _vgpu_manager_image(located: Located, values: dict[str, object]) -> list[Problem]:
    """The vGPU manager image is built by the user: with the component on, it must be named."""
    from renderer import driverimage

    sandbox = values.get("sandboxWorkloads") or {}
    vgpu = values.get("vgpuManager") or {}
    if not (isinstance(sandbox, dict) and sandbox.get("enabled") and isinstance(vgpu, dict) and vgpu.get("enabled")):
        return []
    if driverimage.image_named(vgpu):
        return []
    pointer = next((p for p in ("/vgpuManager/repository", "/vgpuManager/enabled") if p in located.origins), "/vgpuManager")
    message = f"the vGPU manager image has no repository or version ({driverimage.image_path(vgpu)!r})"
    hint = "set vgpuManager.repository and vgpuManager.version to the image you built from the NVIDIA vGPU software"
    return [_problem(located, pointer, message, hint, "vgpu-manager-image")]


def _overlaps(located: Located, resolved: list[tuple[int, str, dict[str, str]]]) -> list[Problem]:
    """Two pools must never select the same node: one node, one driver DaemonSet.

    ``resolved``: (index, name, node selector) of each pool whose image resolved.
    """
    from renderer import driverimage

    problems: list[Problem] = []
    for j, (ib, b_name, b_selector) in enumerate(resolved):
        # one problem per pool, against the first earlier pool it overlaps: n identical
        # pools give n - 1 problems, not n * (n - 1) / 2 (found by scripts/fuzz)
        first = next(((ia, a_name) for ia, a_name, a_selector in resolved[:j] if driverimage.selectors_overlap(a_selector, b_selector)), None)
        if first is not None:
            ia, a_name = first
            pa, pb = f"/nodePools/{ia}", f"/nodePools/{ib}"
            fa, la, ca = located.locate(pa)
            file, line, col = located.locate(pb)
            problems.append(
                Problem(
                    file,
                    line,
                    col,
                    pb,
                    f"node pools {b_name!r} and {a_name!r} ({fa}:{la}:{ca}) select the same nodes ({_selector_text(b_selector)})",
                    hint="give the pools different OS versions or kernels, or tell them apart with driver.nodeSelector",
                    code="pool-overlap",
                )
            )
    return problems


def _selector_text(selector: dict[str, str]) -> str:
    return ", ".join(f"{k.rsplit('/', 1)[-1]}={v}" for k, v in sorted(selector.items()))


IN_CLUSTER = "https://kubernetes.default.svc"


def shared_destinations(located: dict[str, Located], fleet: str = "fleet") -> list[Problem]:
    """Warn when two clusters' Applications would deploy to the same Argo CD destination.

    Both Applications would own the same objects and overwrite each other on every sync.
    Only for the list generator, where destinations come from the policy.
    """
    by_dest: dict[tuple[str, str], list[str]] = {}
    for name, loc in sorted(located.items()):
        if name == fleet:
            continue
        gitops = loc.data.get("gitops") or {}
        if gitops.get("generator") == "clusters" and gitops.get("layout", "applicationset") == "applicationset":
            return []
        dest = gitops.get("destination") or {}
        key = ("name", str(dest["name"])) if dest.get("name") else ("server", str(dest.get("server") or IN_CLUSTER))
        by_dest.setdefault(key, []).append(name)
    problems: list[Problem] = []
    for (field, value), names in sorted(by_dest.items()):
        if len(names) < 2:
            continue
        for name in names:
            file, line, col = located[name].locate("/gitops/destination")
            problems.append(
                Problem(
                    file,
                    line,
                    col,
                    "/gitops/destination",
                    f"clusters {', '.join(names)} all deploy to destination {field} {value}; their Argo CD Applications would overwrite each other",
                    hint="set gitops.destination.server or gitops.destination.name in each cluster's overlay values",
                    code="gitops-destination",
                    severity=Severity.WARNING,
                )
            )
    return problems


PER_CLUSTER_GITOPS = ("destination", "group", "targetRevision")
"""Argo CD settings an overlay may give its cluster's Application."""
CLUSTER_ONLY_GITOPS = ("userPatches",)
"""Settings about the overlay itself (its hand-written patches), never the fleet's."""


def _problem(located: Located, pointer: str, message: str, hint: str, code: str, severity: Severity = Severity.ERROR) -> Problem:
    file, line, col = located.locate(pointer)
    return Problem(file, line, col, pointer, message, hint=hint, code=code, severity=severity)


def gitops_rules(located: Located, cluster: str, defaulted: dict[str, Any] | None = None, fleet: str = "fleet") -> list[Problem]:
    """Every Argo CD setting is honoured or refused: none is dropped without a word."""
    from renderer.resolve import with_defaults

    values = with_defaults(located.data) if defaulted is None else defaulted
    gitops: dict[str, Any] = values.get("gitops") or {}
    if cluster == fleet:
        return _fleet_gitops(located, gitops)
    problems: list[Problem] = []
    if not str(gitops.get("repoURL") or "").strip():
        # On the fleet file (where it belongs), so every cluster reports the same one problem.
        # An error once values.yaml configures Argo CD (a gitops section); else a warning, for
        # policies used with kubectl or Helm only.
        file, line, col = located.origins.get("/gitops/repoURL", (located.default_file, 1, 1))
        configured = any(f == located.default_file for p, (f, _, _) in located.key_origins.items() if p == "/gitops" or p.startswith("/gitops/"))
        message = "gitops.repoURL is empty: the Argo CD Applications would have no repository to sync from (Argo CD rejects them)"
        hint = "set gitops.repoURL in values.yaml to the Git repository where output/ is committed"
        severity = Severity.ERROR if configured else Severity.WARNING
        problems.append(Problem(file, line, col, "/gitops/repoURL", message, hint=hint, code="gitops-repo-url", severity=severity))
    own = sorted(p.split("/")[2] for p, (file, _, _) in located.key_origins.items() if p.count("/") == 2 and p.startswith("/gitops/") and file != located.default_file)
    for key in own:
        pointer = f"/gitops/{key}"
        if key in CLUSTER_ONLY_GITOPS:
            continue
        if key not in PER_CLUSTER_GITOPS:
            problems.append(_problem(located, pointer, f"gitops.{key} is a fleet setting; a cluster's overlay cannot change it", "set it in values.yaml; an overlay may set gitops.destination, gitops.group, gitops.targetRevision and gitops.userPatches", "gitops-per-cluster"))
        elif gitops.get("generator") == "clusters" and gitops.get("layout", "applicationset") == "applicationset":
            where = {
                "destination": "the destination is the selected Argo CD cluster secret's server",
                "group": "the rollout group is the cluster secret's label gpu-render.io/group",
                "targetRevision": "every generated Application syncs the fleet's gitops.targetRevision",
            }[key]
            problems.append(_problem(located, pointer, f"gitops.{key} has no effect with gitops.generator: clusters ({where})", "remove it from the overlay, or use gitops.generator: list, which carries per-cluster settings", "gitops-per-cluster"))
    return problems


def _fleet_gitops(located: Located, gitops: dict[str, Any]) -> list[Problem]:
    problems: list[Problem] = []
    rolling = gitops.get("rollingSync") or {}
    if not rolling.get("enabled"):
        return problems
    if gitops.get("layout", "applicationset") == "applications":
        problems.append(
            _problem(
                located,
                "/gitops/rollingSync/enabled",
                "gitops.rollingSync needs gitops.layout: applicationset; Applications written one per file have no ApplicationSet to sync them step by step",
                "use gitops.layout: applicationset, or turn rollingSync off and order the clusters' syncs yourself",
                "gitops-rolling-sync",
            )
        )
        return problems
    automated = (gitops.get("syncPolicy") or {}).get("automated") or {}
    if automated.get("selfHeal") or automated.get("allowEmpty"):
        problems.append(
            _problem(
                located,
                "/gitops/syncPolicy/automated",
                "under RollingSync Argo CD turns automated sync off (the ApplicationSet controller starts each step's syncs itself): selfHeal and allowEmpty are dropped, prune is kept for the syncs it starts",
                "set gitops.syncPolicy.automated to {prune: true} (or null), or turn gitops.rollingSync off",
                "gitops-rolling-sync",
                Severity.WARNING,
            )
        )
    return problems


def fleet_without_clusters(located: dict[str, Located], fleet: str = "fleet") -> list[Problem]:
    """A fleet set up for Argo CD (``gitops.repoURL``) with no overlay folder: the Argo CD
    output describes no cluster."""
    if fleet not in located or len(located) > 1:
        return []
    if not str(((located[fleet].data.get("gitops") or {}).get("repoURL")) or "").strip():
        return []  # no Argo CD intended: base/ and the chart are used on their own
    return [
        _problem(
            located[fleet],
            "/gitops",
            "no cluster overlay (overlays/<cluster>/values.yaml): argocd/ generates no Application",
            "add one folder per cluster under overlays/ (an empty values.yaml is enough) for Argo CD to sync it",
            "gitops-no-clusters",
            Severity.WARNING,
        )
    ]


PROM_DURATION = re.compile(r"^(?:(\d+)y)?(?:(\d+)w)?(?:(\d+)d)?(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?(?:(\d+)ms)?$")
"""A Prometheus duration (``1m30s``, ``500ms``): its units largest first, each at most once."""
_PROM_UNITS_MS = (365 * 86_400_000, 7 * 86_400_000, 86_400_000, 3_600_000, 60_000, 1000, 1)


def prometheus_ms(text: str) -> int | None:
    """Milliseconds of a Prometheus duration; None when it is not one (the schema's pattern
    or Prometheus refuses it elsewhere, with its own message)."""
    m = PROM_DURATION.match(text)
    if not text or m is None or not any(m.groups()):
        return None
    return sum(int(g) * unit for g, unit in zip(m.groups(), _PROM_UNITS_MS, strict=True) if g)


def scrape_timeout_rules(located: Located, values: dict[str, Any]) -> list[Problem]:
    """A warning where the DCGM exporter's ServiceMonitor would scrape with a timeout longer
    than its interval: the Prometheus operator rejects such a ServiceMonitor (``scrapeTimeout
    greater than scrapeInterval``), so no GPU metric is scraped. From v26.7 the chart sets
    ``scrapeTimeout: 10s`` by default, and the operator renders it as gpu-render does: a values
    file written for v26.3 or older with ``interval: 5s`` gets it without a word."""
    from renderer.releasegate import has

    exporter = values.get("dcgmExporter") or {}
    monitor = exporter.get("serviceMonitor") or {}
    caps = (values.get("cluster") or {}).get("capabilities") or {}
    release = str((values.get("cluster") or {}).get("operatorRelease") or "")
    if not (exporter.get("enabled") and monitor.get("enabled") and caps.get("serviceMonitor")) or not has(release, "v26.7"):
        return []
    interval, timeout = (prometheus_ms(str(monitor.get(k) or "")) for k in ("interval", "scrapeTimeout"))
    if interval is None or timeout is None or timeout <= interval:
        return []
    mine = (located.data.get("dcgmExporter") or {}).get("serviceMonitor") or {}
    key = "scrapeTimeout" if "scrapeTimeout" in mine or "interval" not in mine else "interval"
    written = "" if "scrapeTimeout" in mine else " (the chart's default from v26.7)"
    return [
        _problem(
            located,
            f"/dcgmExporter/serviceMonitor/{key}",
            f"dcgmExporter.serviceMonitor scrapes every {monitor['interval']} with a timeout of {monitor['scrapeTimeout']}{written}: "
            "the Prometheus operator rejects a ServiceMonitor whose scrapeTimeout is greater than its interval, so no GPU metric would be scraped "
            "(rendered as the operator renders it)",
            f"set dcgmExporter.serviceMonitor.scrapeTimeout to {monitor['interval']} or less",
            "scrape-timeout",
            Severity.WARNING,
        )
    ]


def sharing_rules(located: Located, values: dict[str, Any]) -> list[Problem]:
    """Device-plugin, exporter and MIG configs: what the pods mount must exist, what a pool names
    must be there, data written is used."""
    problems: list[Problem] = []
    dp = values.get("devicePlugin") or {}
    cfg = dp.get("config") or {}
    data = cfg.get("data") or {}
    if cfg.get("create") and not cfg.get("name"):
        problems.append(_problem(located, "/devicePlugin/config/create", "devicePlugin.config.create needs devicePlugin.config.name (the ConfigMap's name)", "set devicePlugin.config.name, e.g. time-slicing-config", "plugin-config-name"))
    elif cfg.get("create") and not data:
        problems.append(_problem(located, "/devicePlugin/config/create", "devicePlugin.config.create with no data: the ConfigMap is empty and config-manager finds no configuration", "add the configs under devicePlugin.config.data, or set create: false and create the ConfigMap yourself", "plugin-config-data", Severity.WARNING))
    for section, what in (("devicePlugin", "the device plugin's configs"), ("dcgmExporter", "the exporter's metrics CSV")):
        own = located.data.get(section)
        written = own.get("config") if isinstance(own, dict) else None
        if isinstance(written, dict) and written.get("data") and not written.get("create"):
            problems.append(
                _problem(
                    located,
                    f"/{section}/config/data",
                    f"{section}.config.data without create: true creates no ConfigMap (as the operator's chart): {what} reach no pod",
                    f"set {section}.config.create: true to create it from this data, or remove data and create the ConfigMap yourself",
                    "config-data-unused",
                    Severity.WARNING,
                )
            )
    exporter = values.get("dcgmExporter") or {}
    metrics = exporter.get("config") or {}
    if exporter.get("enabled", True) and metrics.get("create") and metrics.get("name") and not metrics.get("data"):
        problems.append(
            _problem(
                located,
                "/dcgmExporter/config/create",
                f"dcgmExporter.config.create with no data creates no ConfigMap (as the operator's chart), while the exporter mounts {metrics['name']!r} for its metrics: its pods wait for that ConfigMap",
                "add the metrics CSV under dcgmExporter.config.data, or set create: false and create the ConfigMap yourself",
                "exporter-config-data",
                Severity.WARNING,
            )
        )
    default = str(cfg.get("default") or "")
    if cfg.get("create") and data and default and default not in data:
        problems.append(_problem(located, "/devicePlugin/config/default", f"devicePlugin.config.default {default!r} is not a key of devicePlugin.config.data", f"one of: {', '.join(sorted(map(str, data)))}", "plugin-config-default"))
    for index, pool in enumerate(values.get("nodePools") or []):
        name = str(pool.get("devicePluginConfig") or "")
        pointer = f"/nodePools/{index}/devicePluginConfig"
        if name and not cfg.get("name"):
            problems.append(_problem(located, pointer, f"node pool {pool.get('name')!r}: devicePluginConfig has no effect without devicePlugin.config.name", "name the plugin ConfigMap in devicePlugin.config (and its data)", "pool-plugin-config"))
        elif name and cfg.get("create") and data and name not in data:
            problems.append(_problem(located, pointer, f"node pool {pool.get('name')!r}: devicePluginConfig {name!r} is not a key of devicePlugin.config.data", f"one of: {', '.join(sorted(map(str, data)))}", "pool-plugin-config"))
        mig = (pool.get("mig") or {}).get("config")
        if mig and not (values.get("migManager") or {}).get("enabled"):
            problems.append(_problem(located, f"/nodePools/{index}/mig/config", f"node pool {pool.get('name')!r}: mig.config has no effect with migManager disabled", "enable migManager, or remove the pool's mig.config", "pool-mig-config", Severity.WARNING))
    mm = values.get("migManager") or {}
    mdefault = str((mm.get("config") or {}).get("default") or "")
    if mm.get("enabled") and mdefault and mdefault != "all-disabled" and "/migManager/config/default" in located.origins:
        problems.append(_problem(located, "/migManager/config/default", f"migManager.config.default {mdefault!r} is never applied: like the operator, only 'all-disabled' is seeded on MIG-capable nodes", "set nodePools[].mig.config for the pools that should get this profile", "mig-config-default", Severity.WARNING))
    return problems


def driver_without_pools(located: Located, values: dict[str, Any], *, overlays: bool = False) -> list[Problem]:
    """The driver renders one DaemonSet per node pool: with none, it silently renders nothing.

    Run on each cluster's merged values (on the fleet's when there is no overlay). An error
    where the policy names the driver; for a policy that never does, a warning, and nothing
    when overlays exist (a cluster without pools may be meant to run none)."""
    if not (values.get("driver") or {}).get("enabled") or values.get("nodePools"):
        return []
    pointer = "/driver/enabled" if "/driver/enabled" in located.origins else ("/driver" if "/driver" in located.origins else "")
    if not pointer and overlays:
        return []
    severity = Severity.ERROR if pointer else Severity.WARNING
    return [
        _problem(
            located,
            pointer,
            "driver.enabled is true but there are no nodePools: no driver DaemonSet would be rendered",
            "add nodePools (gpu-render nodes import nodes.json writes them), or set driver.enabled: false when the nodes have a driver installed",
            "driver-no-pools",
            severity,
        )
    ]
