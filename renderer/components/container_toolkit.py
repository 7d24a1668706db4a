"""NVIDIA Container Toolkit: installs the runtime hook/CDI specs and configures the node's runtime.

The operator detects the container runtime from the nodes; here it is input: each node pool
names its ``runtime`` (``containerd``, ``crio``, ``docker``; default ``cluster.containerRuntime``)
and may override host paths with ``runtimeConfig`` (``config``, ``dropInConfig``, ``socket``,
``configSource``), which k3s and RKE2 need. Pools that agree share one DaemonSet; when pools
differ, one DaemonSet per distinct runtime setup is rendered, each selecting its pools' nodes.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass
from typing import Any

from renderer.components import common as c
from renderer.components.common import Obj
from renderer.model import Model, Pool
from renderer.releasegate import ASSET_VALUE_FROM, has

NAME = "nvidia-container-toolkit-daemonset"
SA = "nvidia-container-toolkit"
ENTRYPOINT_CM = "nvidia-container-toolkit-entrypoint"
CONFIG_DIR = "/runtime/config-dir/"
DROP_IN_DIR = "/runtime/config-dir.d/"
SOCKET_DIR = "/runtime/sock-dir/"
NRI_SOCKET_DIR = "/runtime/nri-sock-dir/"
DEFAULT_NRI_SOCKET = "/var/run/nri/nri.sock"

DEFAULTS: dict[str, dict[str, str]] = {
    "containerd": {
        "config": "/etc/containerd/config.toml",
        "dropInConfig": "/etc/containerd/conf.d/99-nvidia.toml",
        "socket": "/run/containerd/containerd.sock",
    },
    "crio": {"config": "/etc/crio/config.toml", "dropInConfig": "/etc/crio/crio.conf.d/99-nvidia.conf", "socket": ""},
    "docker": {"config": "/etc/docker/daemon.json", "dropInConfig": "", "socket": "/var/run/docker.sock"},
}
CONFIG_ENV = {"containerd": "CONTAINERD_CONFIG", "crio": "CRIO_CONFIG", "docker": "DOCKER_CONFIG"}
SOCKET_ENV = {"containerd": "CONTAINERD_SOCKET", "docker": "DOCKER_SOCKET"}

ENTRYPOINT = f"""#!/bin/sh
# Toolkit entrypoint (gpu-render): wait for the driver validation, take over what it found
# (driver root, whether the driver is the host's), then install and configure the runtime.
{c.WAIT_FOR_DRIVER_READY}sleep 5
exec nvidia-toolkit "$@"
"""


@dataclass(frozen=True)
class RuntimeSetup:
    """Everything about a node's container runtime that changes the toolkit pod."""

    runtime: str
    config: str
    drop_in: str
    socket: str
    config_source: str = ""


READ_ENV: dict[str, dict[str, tuple[str, ...]]] = {
    "containerd": {"config": ("CONTAINERD_CONFIG", "RUNTIME_CONFIG"), "dropInConfig": ("RUNTIME_DROP_IN_CONFIG",), "socket": ("CONTAINERD_SOCKET",)},
    "crio": {"config": ("CRIO_CONFIG", "RUNTIME_CONFIG"), "dropInConfig": ("RUNTIME_DROP_IN_CONFIG",)},
    "docker": {"config": ("DOCKER_CONFIG", "RUNTIME_CONFIG"), "socket": ("DOCKER_SOCKET",)},
}
"""The ``toolkit.env`` names the operator reads a runtime's host paths from, first found wins
(``getRuntimeConfigFiles``, ``getRuntimeSocketFile``: the runtime's own variable before
``RUNTIME_CONFIG``; the socket only from ``CONTAINERD_SOCKET`` / ``DOCKER_SOCKET``, none for
CRI-O; no drop-in file for Docker). Names a runtime does not read stay in the container's env
as written; the ones it sets (:func:`_runtime_env`) are replaced in place."""


def _user_paths(model: Model, runtime: str) -> dict[str, str]:
    """Host paths given through ``toolkit.env`` the way the operator reads them for ``runtime``
    (an empty value is no value, as its ``getContainerEnv(...) != ""``)."""
    env = {str(e.get("name")): str(e.get("value", "") or "") for e in model.section("toolkit").get("env") or []}
    out: dict[str, str] = {}
    for key, names in {**READ_ENV[runtime], "configSource": ("RUNTIME_CONFIG_SOURCE",)}.items():
        for name in names:
            if env.get(name):
                out[key] = env[name]
                break
    return out


def setup_for(model: Model, runtime: str, overrides: dict[str, Any] | None = None) -> RuntimeSetup:
    """A runtime's host paths: upstream defaults, then ``toolkit.env``, then the pool's ``runtimeConfig``."""
    if runtime not in DEFAULTS:
        raise ValueError(f"unknown container runtime {runtime!r}")
    paths = {**DEFAULTS[runtime], "configSource": ""}
    paths.update(_user_paths(model, runtime))
    paths.update({k: str(v) for k, v in (overrides or {}).items() if k in paths})
    # as the operator (getRuntimeConfigFiles, getRuntimeSocketFile): Docker takes no drop-in
    # file and the toolkit talks to no CRI-O socket, whatever the env or runtimeConfig says
    paths["dropInConfig"] = paths["dropInConfig"] if runtime != "docker" else ""
    paths["socket"] = paths["socket"] if runtime != "crio" else ""
    return RuntimeSetup(runtime, paths["config"], paths["dropInConfig"], paths["socket"], paths["configSource"])


def pool_setup(model: Model, pool: Pool) -> RuntimeSetup:
    return setup_for(model, pool.runtime, pool.values.get("runtimeConfig") or {})


def groups(model: Model) -> list[tuple[RuntimeSetup, list[Pool]]]:
    """Distinct runtime setups in pool order, each with the pools that use it."""
    if not model.pools:
        return [(setup_for(model, c.cluster_runtime(model)), [])]
    out: dict[RuntimeSetup, list[Pool]] = {}
    for pool in model.pools:
        out.setdefault(pool_setup(model, pool), []).append(pool)
    return list(out.items())


def _clean(path: str) -> str:
    """Go's ``path.Clean`` of an absolute path (Python's ``normpath`` keeps a leading ``//``)."""
    out = posixpath.normpath(path)
    return "/" + out.lstrip("/") if out.startswith("//") else out


def _host_dir(path: str) -> str:
    """Go's ``path.Dir``, as the operator takes a runtime file's directory."""
    return _clean(path[: path.rfind("/") + 1] or ".")


def _base(path: str) -> str:
    """Go's ``path.Base``, as the operator takes a runtime file's name."""
    trimmed = path.rstrip("/")
    return trimmed[trimmed.rfind("/") + 1 :] if trimmed else ("/" if path else ".")


def _container_sources(sources: str) -> str:
    """``RUNTIME_CONFIG_SOURCE`` as the toolkit container reads it: a ``file=`` source is a
    host path, read under ``/host`` (the operator's ``filepath.Join("/host", ...)``)."""
    out = []
    for item in sources.split(","):
        kind, eq, value = item.partition("=")
        out.append(f"file={_clean('/host/' + value)}" if kind == "file" and eq else item)
    return ",".join(out)


def facts_of(setup: RuntimeSetup) -> dict[str, str]:
    """What the toolkit pod takes from a runtime setup (:data:`renderer.model.TOOLKIT_PATHS`):
    the runtime, the directory and the name of the config file, of the drop-in file and of the
    socket (empty for none), and the config sources as the container reads them."""
    config, drop_in, socket = setup.config, setup.drop_in, setup.socket
    return {
        "toolkitRuntime": setup.runtime,
        "toolkitConfigDir": _host_dir(config) if config else "",
        "toolkitConfigFile": _base(config) if config else "",
        "toolkitDropIn": drop_in,
        "toolkitDropInDir": _host_dir(drop_in) if drop_in else "",
        "toolkitDropInFile": _base(drop_in) if drop_in else "",
        "toolkitSocketDir": _host_dir(socket) if socket else "",
        "toolkitSocketFile": _base(socket) if socket else "",
        "toolkitConfigSource": _container_sources(setup.config_source) if setup.config_source else "",
    }


def pool_paths(model: Model, pool: Pool) -> dict[str, str]:
    """The pool's runtime setup as the toolkit pod takes it: facts of each pool in the chart
    values (``node.toolkitRuntime``, ``node.toolkitConfigDir``, ...), resolved at build time
    because no template takes a directory or a file name out of a path (its ``runtimeConfig``
    over ``toolkit.env`` over the runtime's defaults)."""
    return facts_of(pool_setup(model, pool))


def _pool_paths(model: Model, pool: Pool) -> dict[str, str]:
    """The pool's setup facts: from the chart values when they carry them, else :func:`pool_paths`."""
    return dict(pool.toolkit_paths) if pool.toolkit_paths is not None else pool_paths(model, pool)


def _runtime_env(model: Model, facts: dict[str, str]) -> tuple[list[tuple[str, str]], list[Obj], list[Obj]]:
    """Env, mounts and volumes that point the toolkit at the runtime's config and socket
    (``facts``: :func:`facts_of`). Which files there are follows the runtime alone (a config
    file for each, no drop-in for Docker, no socket for CRI-O: :func:`setup_for`); in NRI mode
    v26.7 sets up the NRI socket alone, earlier releases the NRI socket besides."""
    rt = facts["toolkitRuntime"]
    pairs: list[tuple[str, str]] = [("RUNTIME", rt)]
    mounts: list[Obj] = []
    volumes: list[Obj] = []
    nri = model.nri_plugin
    if nri and model.release == "v26.7":
        # v26.7 (transformForRuntime): in NRI mode the installer configures no runtime, so
        # neither the runtime class, the config files nor the socket are set or mounted
        _nri_socket(model, pairs, mounts, volumes)
        return pairs, mounts, volumes
    if rt == "containerd":
        pairs.append(("CONTAINERD_RUNTIME_CLASS", str(model.values["cluster"].get("runtimeClass") or "nvidia")))
    target = CONFIG_DIR + facts["toolkitConfigFile"]
    pairs += [("RUNTIME_CONFIG", target), (CONFIG_ENV[rt], target)]
    mounts.append(c.mount(f"{rt}-config", CONFIG_DIR))
    volumes.append(c.host_path(f"{rt}-config", facts["toolkitConfigDir"], "DirectoryOrCreate"))
    if rt != "docker":
        pairs += [
            ("RUNTIME_DROP_IN_CONFIG", DROP_IN_DIR + facts["toolkitDropInFile"]),
            ("RUNTIME_DROP_IN_CONFIG_HOST_PATH", facts["toolkitDropIn"]),
        ]
        mounts.append(c.mount(f"{rt}-drop-in-config", DROP_IN_DIR))
        volumes.append(c.host_path(f"{rt}-drop-in-config", facts["toolkitDropInDir"], "DirectoryOrCreate"))
    if facts["toolkitConfigSource"]:
        pairs.append(("RUNTIME_CONFIG_SOURCE", facts["toolkitConfigSource"]))
    if rt != "crio":
        target = SOCKET_DIR + facts["toolkitSocketFile"]
        pairs += [("RUNTIME_SOCKET", target), (SOCKET_ENV[rt], target)]
        mounts.append(c.mount(f"{rt}-socket", SOCKET_DIR))
        volumes.append(c.host_path(f"{rt}-socket", facts["toolkitSocketDir"]))
    if nri:
        _nri_socket(model, pairs, mounts, volumes)
    return pairs, mounts, volumes


def _nri_socket(model: Model, pairs: list[tuple[str, str]], mounts: list[Obj], volumes: list[Obj]) -> None:
    """The NRI socket, as the operator sets it up: the host path from ``toolkit.env``'s
    ``NRI_SOCKET`` (else the default), its directory mounted, its name under the target."""
    env = {str(e.get("name")): str(e.get("value", "") or "") for e in model.section("toolkit").get("env") or []}
    host = env.get("NRI_SOCKET") or DEFAULT_NRI_SOCKET
    target = NRI_SOCKET_DIR + _base(host)
    pairs.append(("NRI_SOCKET", _clean(target) if model.release == "v26.7" else target))  # v26.7: path.Join
    mounts.append(c.mount("nri-socket", NRI_SOCKET_DIR))
    volumes.append(c.host_path("nri-socket", _host_dir(host), "DirectoryOrCreate"))


def _env(model: Model, facts: dict[str, str]) -> tuple[list[Obj], list[Obj], list[Obj]]:
    tk = model.section("toolkit")
    cdi = model.section("cdi")
    install_dir = str(tk.get("installDir") or "/usr/local/nvidia")
    # the asset's env (NRI_NAMESPACE from v26.3 on), then what transformToolkit sets on it
    # (appended: the CDI names come after NRI_NAMESPACE)
    env = c.env_list(
        ("ROOT", install_dir),
        ("NVIDIA_CONTAINER_RUNTIME_MODES_CDI_DEFAULT_KIND", "management.nvidia.com/gpu"),
        ("NVIDIA_VISIBLE_DEVICES", "void"),
        ("TOOLKIT_PID_FILE", "/run/nvidia/toolkit/toolkit.pid"),
    )
    if has(model.release, ASSET_VALUE_FROM["/toolkit/env"]["NRI_NAMESPACE"]):
        env.append(c.field_env("NRI_NAMESPACE", "metadata.namespace"))
    pairs: list[tuple[str, str]] = []
    if cdi.get("enabled"):
        pairs += [
            ("CDI_ENABLED", "true"),
            ("NVIDIA_RUNTIME_SET_AS_DEFAULT", "false"),
            ("NVIDIA_CONTAINER_RUNTIME_MODE", "cdi"),
            ("CRIO_CONFIG_MODE", "config"),
        ]
        if model.nri_plugin:
            pairs.append(("ENABLE_NRI_PLUGIN", "true"))
    elif facts["toolkitRuntime"] == "crio":
        pairs.append(("CRIO_CONFIG_MODE", "hook"))
    # as the operator: the user's env goes in as written (over same-named entries, in place),
    # then the runtime's setup replaces the names it sets (in place, else appended); a name the
    # runtime does not read (CRIO_CONFIG on containerd, RUNTIME_SOCKET on CRI-O) stays as written
    user = list(tk.get("env") or [])
    runtime_pairs, mounts, volumes = _runtime_env(model, facts)
    for name, value in pairs:
        c.set_env(env, name, value)
    env = c.env_list(extra=[*env, *user])
    for name, value in runtime_pairs:
        c.set_env(env, name, value)
    if not facts["toolkitConfigSource"]:  # a pool's runtimeConfig.configSource of "" drops the env's
        env[:] = [e for e in env if not (e.get("name") == "RUNTIME_CONFIG_SOURCE" and e.get("value"))]
    return env, mounts, volumes


def _crio_hooks_dir(model: Model, runtime: str) -> str:
    openshift = model.values["cluster"].get("capabilities", {}).get("openshift")
    if runtime == "crio" and not openshift:
        return "/usr/share/containers/oci/hooks.d"
    return "/run/containers/oci/hooks.d"


def pod_spec(model: Model, facts: dict[str, str], terms: list[Obj]) -> Obj:
    """The toolkit pod of a runtime setup, given as :func:`facts_of` gives it."""
    tk = model.section("toolkit")
    install_dir = str(tk.get("installDir") or "/usr/local/nvidia")
    env, rt_mounts, rt_volumes = _env(model, facts)
    ctr: Obj = {
        "name": "nvidia-container-toolkit-ctr",
        "image": c.image_ref(tk),
        "imagePullPolicy": tk.get("imagePullPolicy", "IfNotPresent"),
        "command": ["/bin/entrypoint.sh"],
        "env": env,
        "securityContext": {"privileged": True, "seLinuxOptions": {"level": "s0"}},
        "volumeMounts": [
            {"name": "nvidia-container-toolkit-entrypoint", "mountPath": "/bin/entrypoint.sh", "subPath": "entrypoint.sh", "readOnly": True},
            c.mount("toolkit-root", "/run/nvidia/toolkit"),
            c.mount("run-nvidia-validations", c.VALIDATIONS_DIR),
            c.mount("toolkit-install-dir", install_dir),
            c.mount("crio-hooks", "/usr/share/containers/oci/hooks.d"),
            c.mount("driver-install-dir", "/driver-root", propagation="HostToContainer"),
            c.mount("host-root", "/host", read_only=True, propagation="HostToContainer"),
            c.mount("cdi-root", "/var/run/cdi"),
            *rt_mounts,
        ],
    }
    if tk.get("resources"):
        ctr["resources"] = c.resources(tk)
    if tk.get("args"):
        ctr["args"] = [str(a) for a in tk["args"]]
    pod: Obj = {
        "serviceAccountName": SA,
        "hostPID": True,
        "initContainers": [c.driver_validation_init(model)],
        "containers": [ctr],
        "volumes": [
            {"name": "nvidia-container-toolkit-entrypoint", "configMap": {"name": ENTRYPOINT_CM, "defaultMode": 0o700}},
            c.host_path("toolkit-root", "/run/nvidia/toolkit", "DirectoryOrCreate"),
            c.host_path("run-nvidia-validations", c.VALIDATIONS_DIR, "DirectoryOrCreate"),
            c.host_path("driver-install-dir", c.driver_install_dir(model), "DirectoryOrCreate"),
            *c.host_root_volumes(model),
            c.host_path("toolkit-install-dir", install_dir),
            c.host_path("crio-hooks", _crio_hooks_dir(model, facts["toolkitRuntime"])),
            c.host_path("cdi-root", "/var/run/cdi", "DirectoryOrCreate"),
            *rt_volumes,
        ],
    }
    if terms:
        affinity = c.deploy_affinity("container-toolkit")
        affinity["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"] = list(terms)
        pod["affinity"] = affinity
    return pod


def pool_terms(operand: str, pools: list[Pool]) -> list[Obj]:
    """The operand's deploy affinity terms, narrowed to the nodes of ``pools`` (one term per pool)."""
    term = c.deploy_affinity(operand)["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"][0]
    terms = []
    for pool in pools:
        exprs = list(term["matchExpressions"])
        exprs += [{"key": k, "operator": "In", "values": [v]} for k, v in sorted(pool.node_selector.items())]
        terms.append({"matchExpressions": exprs})
    return terms


def pool_groups(model: Model) -> dict[str, tuple[bool, str, tuple[Obj, ...]]]:
    """Per pool: does the DaemonSet of its runtime setup come from it (the setup's first pool),
    that DaemonSet's name and its node-selector terms (narrowed to the setup's pools when pools
    differ, the operand's own term when they all agree; empty for a pool that leads none).
    Facts of each pool in the chart values (``node.toolkitLeader``, ``node.toolkitDaemonSet``,
    ``node.toolkitTerms``), so that the chart's range over the pools renders what :func:`build`
    renders: the terms are given either way, so that one body serves a fleet whose pools differ
    and a cluster whose pools agree."""
    split_groups = groups(model)
    split = len(split_groups) > 1
    own = c.deploy_affinity("container-toolkit")["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
    out: dict[str, tuple[bool, str, tuple[Obj, ...]]] = {}
    for _, pools in split_groups:
        for i, pool in enumerate(pools):
            lead = i == 0
            name = (f"{NAME}-{pool.name}" if split else NAME) if lead else ""
            terms = tuple(pool_terms("container-toolkit", pools) if split else own) if lead else ()
            out[pool.name] = (lead, name, terms)
    return out


def build(model: Model) -> list[Obj]:
    out: list[Obj] = [
        c.service_account(SA, model),
        c.role(SA, model, [c.rule(["apps"], ["daemonsets"], ["list"])]),
        c.role_binding(SA, model),
        c.config_map(ENTRYPOINT_CM, model, {"entrypoint.sh": ENTRYPOINT}, lbls=c.labels(NAME)),
    ]
    # each pool says whether the DaemonSet of its runtime setup is its own (facts from the
    # chart values, else worked out from the pool list): one DaemonSet when all pools agree;
    # the runtime and host paths of the setup it leads are its facts too (no template could
    # take a directory or a file name out of a path)
    plan: list[tuple[str, dict[str, str], list[Obj]]] = []
    if not model.pools:
        plan.append((NAME, facts_of(setup_for(model, c.cluster_runtime(model))), []))
    facts = {p.name: p.toolkit for p in model.pools if p.toolkit is not None}
    if len(facts) != len(model.pools):
        facts = pool_groups(model)
    for pool in model.pools:
        leader, name, own = facts[pool.name]
        if leader:
            plan.append((name, _pool_paths(model, pool), list(own)))
    for name, setup, terms in plan:
        pod = pod_spec(model, setup, terms)
        out.append(c.daemonset(name, model, operand="container-toolkit", pod_spec=pod, section=c.with_validator_secrets(model, model.section("toolkit"))))
    return out
