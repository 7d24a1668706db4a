"""Pieces every component shares: labels, images, DaemonSet skeleton, validation init.

Builders return plain dicts. Nothing here reads files or the clock.
"""

from __future__ import annotations

from typing import Any

from renderer.jsondata import clone
from renderer.model import Model
from renderer.releasegate import has

Obj = dict[str, Any]

MANAGED_BY = {"app.kubernetes.io/managed-by": "gpu-render"}
VALIDATIONS_DIR = "/run/nvidia/validations"
NV_FIRMWARE = "/run/nvidia/driver/lib/firmware"
"""Host folder of the driver container's firmware (``nv-firmware``): fixed in the operator's driver and
vGPU manager assets, whatever ``hostPaths.driverInstallDir`` says (its transform rewrites only a
``driver-install-dir`` volume, which these pods lack)."""
PAUSED = "paused-for-driver-upgrade"
CC_PAUSED = "paused-for-cc-mode-change"
CC_PAUSED_OPERANDS = frozenset({"vfio-manager", "vgpu-manager", "sandbox-validator", "sandbox-device-plugin", "vgpu-device-manager"})
"""The deploy labels k8s-cc-manager (v0.4.3, gpu_operator_eviction.py) sets to
``paused-for-cc-mode-change`` (``<value>_paused-for-cc-mode-change`` for a value other than
``true``/``false``) while it switches the node's GPUs' CC mode: their pods must leave the node."""
DEVICE_PLUGIN_OPERANDS = frozenset({"device-plugin", "gpu-feature-discovery", "mig-manager", "operator-validator", "dcgm-exporter"})
"""Operands kept off ``resourceAllocation: dra`` pools, where DRA operands stand in for them
(see :mod:`renderer.components.dra_common`)."""

# Shell lines an entrypoint starts with when it needs the driver: wait for the validator's
# driver-ready marker, then take over what it found (driver root, host or container driver).
WAIT_FOR_DRIVER_READY = f"""set -eu
until [ -f {VALIDATIONS_DIR}/driver-ready ]; do
  echo waiting for the driver validation to finish
  sleep 5
done
set -a
. {VALIDATIONS_DIR}/driver-ready
set +a
"""
PRE_INSTALLED = "pre-installed"
DEFAULT_DRIVER_INSTALL_DIR = "/run/nvidia/driver"


def validation_security(selinux: bool = False) -> Obj:
    """Security context of the validator's init containers (a fresh dict: no shared YAML anchors):
    root, as the operator's transform sets; the driver validation also gets the ``s0`` level."""
    out: Obj = {"privileged": True, "runAsUser": 0}
    if selinux:
        out["seLinuxOptions"] = {"level": "s0"}
    return out

VERSION_LABELS = ("helm.sh/chart", "app.kubernetes.io/version")
"""Labels that change with every release: kept off pod templates that must not restart for them."""


def image_ref(section: dict[str, Any], default_version: str = "") -> str:
    """``repository/image:version``, ``@sha256:...`` for digests, or the image alone."""
    repository = str(section.get("repository") or "")
    image = str(section.get("image") or "")
    version = str(section.get("version") or default_version or "")
    if not repository and not section.get("version") and image:
        return image
    ref = f"{repository}/{image}" if repository else image
    if version.startswith("sha256:"):
        return f"{ref}@{version}"
    return f"{ref}:{version}" if version else ref


def labels(app: str, component: str | None = None) -> dict[str, str]:
    out = {"app": app, "app.kubernetes.io/name": app, "app.kubernetes.io/part-of": "gpu-stack"}
    if component:
        out["app.kubernetes.io/component"] = component
    out.update(MANAGED_BY)
    return out


def meta(name: str, model: Model | None = None, *, lbls: dict[str, str] | None = None) -> Obj:
    out: Obj = {"name": name}
    if model is not None:
        out["namespace"] = model.namespace
    out["labels"] = dict(lbls) if lbls else dict(MANAGED_BY)
    return out


def service_account(name: str, model: Model) -> Obj:
    return {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": meta(name, model)}


def role(name: str, model: Model, rules: list[Obj]) -> Obj:
    return {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "Role",
        "metadata": meta(name, model),
        "rules": rules,
    }


def role_binding(name: str, model: Model, sa: str | None = None) -> Obj:
    return {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "RoleBinding",
        "metadata": meta(name, model),
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": name},
        "subjects": [{"kind": "ServiceAccount", "name": sa or name, "namespace": model.namespace}],
    }


def cluster_role(name: str, rules: list[Obj]) -> Obj:
    return {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRole",
        "metadata": meta(name),
        "rules": rules,
    }


def cluster_role_binding(name: str, model: Model, sa: str | None = None) -> Obj:
    return {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRoleBinding",
        "metadata": meta(name),
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": name},
        "subjects": [{"kind": "ServiceAccount", "name": sa or name, "namespace": model.namespace}],
    }


def rule(groups: list[str], resources: list[str], verbs: list[str]) -> Obj:
    return {"apiGroups": groups, "resources": resources, "verbs": verbs}


def deploy_affinity(operand: str, *, exclude: tuple[str, ...] = ("false", PAUSED)) -> Obj:
    """Schedule on GPU nodes unless the operand's deploy label opts the node out or pauses it
    (for the operands k8s-cc-manager pauses, also its pause values)."""
    values = list(exclude)
    if operand in CC_PAUSED_OPERANDS:
        values += [CC_PAUSED, *(f"{v}_{CC_PAUSED}" for v in exclude if v != "false")]
    return {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {
                        "matchExpressions": [
                            {"key": "nvidia.com/gpu.present", "operator": "In", "values": ["true"]},
                            {
                                "key": f"nvidia.com/gpu.deploy.{operand}",
                                "operator": "NotIn",
                                "values": values,
                            },
                        ]
                    }
                ]
            }
        }
    }


def env_list(*pairs: tuple[str, str], extra: list[Obj] | None = None) -> list[Obj]:
    """Env vars in order; ``extra`` (user env) overrides same-named entries in place."""
    out: list[Obj] = [{"name": k, "value": v} for k, v in pairs]
    for item in extra or []:
        for i, existing in enumerate(out):
            if existing["name"] == item.get("name"):
                out[i] = clone(item)
                break
        else:
            out.append(clone(item))
    return out


def host_path(name: str, path: str, kind: str | None = None) -> Obj:
    hp: Obj = {"path": path}
    if kind:
        hp["type"] = kind
    return {"name": name, "hostPath": hp}


def mount(name: str, path: str, *, read_only: bool = False, propagation: str | None = None) -> Obj:
    m: Obj = {"name": name, "mountPath": path}
    if read_only:
        m["readOnly"] = True
    if propagation:
        m["mountPropagation"] = propagation
    return m


def validator_image(model: Model) -> str:
    return image_ref(model.section("validator"))


def toolkit_validation_init(model: Model) -> Obj:
    """Init container that waits for the toolkit-ready marker written by the validator."""
    v = model.section("validator")
    out: Obj = {
        "name": "toolkit-validation",
        "image": validator_image(model),
        "imagePullPolicy": v.get("imagePullPolicy", "IfNotPresent"),
        "command": ["sh", "-c"],
        "args": [
            f"until [ -f {VALIDATIONS_DIR}/toolkit-ready ]; do echo waiting for nvidia container stack to be setup; sleep 5; done"
        ],
        "securityContext": {"privileged": True, "runAsUser": 0},
        "volumeMounts": [mount("run-nvidia-validations", VALIDATIONS_DIR, propagation="HostToContainer")],
    }
    toolkit_env = _section_env(v, "toolkit")
    if toolkit_env:
        # transformValidationInitContainer: `validator.toolkit.env` reaches every operand's
        # toolkit-validation, not only the validator's
        out["env"] = env_list(extra=toolkit_env)
    init_resources(out, model, v)
    return out


INIT_RESOURCES_SINCE = "v26.7"
"""The first release whose operator gives managed init containers (validations, config-manager-init,
mps-control-daemon-mounts, k8s-driver-manager) their section's ``resources`` (object_controls.go,
``applyResourceRequirements``); before, only the main containers get them."""


def init_resources(ctr: Obj, model: Model, section: dict[str, Any]) -> Obj:
    """``section.resources`` on a managed init container, from the release that sets them."""
    if section.get("resources") and has(model.release, INIT_RESOURCES_SINCE):
        ctr["resources"] = resources(section)
    return ctr


def host_root(model: Model) -> str:
    """``hostPaths.rootFS``: where the host's root filesystem is (``/`` unless a sandbox moves it)."""
    return str(model.section("hostPaths").get("rootFS") or "/")


def driver_install_dir(model: Model) -> str:
    """``hostPaths.driverInstallDir``: where the containerized driver exposes its root."""
    return str(model.section("hostPaths").get("driverInstallDir") or DEFAULT_DRIVER_INSTALL_DIR)


def kubelet_root_dir(model: Model) -> str:
    """``hostPaths.kubeletRootDir`` without a trailing ``/`` (``/var/lib/kubelet`` when unset):
    the kubelet's pod-resources socket, plugin registry and plugin sockets are under it."""
    return str(model.section("hostPaths").get("kubeletRootDir") or "/var/lib/kubelet").rstrip("/")


def common_pod_labels(model: Model, lbls: dict[str, str], stable: bool = False) -> dict[str, str]:
    """``lbls`` with ``daemonsets.labels`` added, as the operator puts them on its pod templates
    (``app`` and ``app.kubernetes.io/part-of`` skipped; ``stable``: the release-bearing
    :data:`VERSION_LABELS` too, for pods that must not restart on a chart bump)."""
    out = dict(lbls)
    for k, v in (model.section("daemonsets").get("labels") or {}).items():
        if k in ("app", "app.kubernetes.io/part-of") or (stable and k in VERSION_LABELS):
            continue
        out[k] = str(v)
    return out


def host_root_volumes(model: Model) -> list[Obj]:
    """``host-root`` and ``host-dev-char`` volumes, following ``hostPaths.rootFS``."""
    root = host_root(model)
    return [
        host_path("host-root", root),
        host_path("host-dev-char", "/dev/char" if root == "/" else f"{root.rstrip('/')}/dev/char"),
    ]


def validation_container(model: Model, component: str, env: list[Obj], mounts: list[Obj], security: Obj | None = None) -> Obj:
    """One ``nvidia-validator`` init container: validates ``component`` and writes its marker.

    The operator validator, the toolkit and the sandbox validator build theirs with it.
    """
    v = model.section("validator")
    out: Obj = {
        "name": f"{component}-validation",
        "image": validator_image(model),
        "imagePullPolicy": v.get("imagePullPolicy", "IfNotPresent"),
        "command": ["sh", "-c"],
        "args": ["nvidia-validator"],
        "env": env,
        "securityContext": validation_security() if security is None else security,
        "volumeMounts": mounts,
    }
    return init_resources(out, model, v)


DRIVER_GATE = f"""set -eu
# The full driver gate of the operator's validator without an operator-owned driver DaemonSet:
# nvidia-validator runs its driver-container checks (.driver-ctr-ready, GDS/GDRCopy/peermem) only
# when a ClusterPolicy or NVIDIADriver owns the driver DaemonSet, so this script runs them itself.
# driver-ready appears only once every check has passed.
out={VALIDATIONS_DIR}/.driver-validation
rm -f {VALIDATIONS_DIR}/driver-ready
mkdir -p "$out"
OUTPUT_DIR="$out" nvidia-validator
if grep -q '^IS_HOST_DRIVER=false' "$out/driver-ready"; then
  until [ -f {VALIDATIONS_DIR}/.driver-ctr-ready ]; do
    echo waiting for the driver container to report ready
    sleep 5
  done
  for check in GDS_ENABLED:nvidia-fs GDRCOPY_ENABLED:gdrcopy GPU_DIRECT_RDMA_ENABLED:nvidia-peermem; do
    if grep -q "^${{check%%:*}}: true" {VALIDATIONS_DIR}/.driver-ctr-ready; then
      COMPONENT="${{check#*:}}" nvidia-validator
    fi
  done
fi
mv "$out/driver-ready" {VALIDATIONS_DIR}/driver-ready
"""
"""What the driver validation runs (see docs/fidelity.md, "driver validation")."""


def driver_validation_init(model: Model) -> Obj:
    """``nvidia-validator`` for the driver: waits for a working driver and writes ``driver-ready``.

    Used by the toolkit and the validator DaemonSets. ``hostPaths.driverInstallDir`` is passed
    on the way the operator's transform does (env + mount path).
    """
    v = model.section("validator")
    install_dir = driver_install_dir(model)
    pairs: list[tuple[str, str]] = [("WITH_WAIT", "true"), ("COMPONENT", "driver")]
    if install_dir != DEFAULT_DRIVER_INSTALL_DIR:
        pairs += [("DRIVER_INSTALL_DIR", install_dir), ("DRIVER_INSTALL_DIR_CTR_PATH", install_dir)]
    env = env_list(*pairs, extra=_section_env(v, "driver"))
    env.insert(2, field_env("OPERATOR_NAMESPACE", "metadata.namespace"))
    mounts = [
        mount("driver-install-dir", install_dir, propagation="HostToContainer"),
        mount("run-nvidia-validations", VALIDATIONS_DIR, propagation="Bidirectional"),
        mount("host-root", "/host", read_only=True, propagation="HostToContainer"),
        mount("host-dev-char", "/host-dev-char"),
    ]
    ctr = validation_container(model, "driver", env, mounts, validation_security(selinux=True))
    ctr["args"] = [DRIVER_GATE]
    return clone(ctr)


def _section_env(section: dict[str, Any], sub: str) -> list[Obj]:
    value = (section.get(sub) or {}).get("env") or []
    assert isinstance(value, list)
    return value


def field_env(name: str, field_path: str) -> Obj:
    """An env var taken from the pod (``spec.nodeName``, ``metadata.namespace``, ...)."""
    return {"name": name, "valueFrom": {"fieldRef": {"fieldPath": field_path}}}


def set_env(env: list[Obj], name: str, value: str) -> None:
    """Set one env var in place, replacing an existing one of the same name."""
    for i, item in enumerate(env):
        if item.get("name") == name:
            env[i] = {"name": name, "value": value}
            return
    env.append({"name": name, "value": value})


def get_env(env: list[Obj], name: str) -> str | None:
    for item in env:
        if item.get("name") == name and "value" in item:
            return str(item["value"])
    return None


def apply_host_root(pod: Obj, model: Model, enabled: bool = True) -> None:
    """``HOST_ROOT`` on every container when ``hostPaths.rootFS`` is not ``/``. The operator's
    transformHostRootVolume sets it only in pods that mount the host's root (docs/fidelity.md:
    here in every operand pod, where the images that do not mount it never read it)."""
    root = host_root(model)
    if root == "/" or not enabled:
        return
    for ctr in [*pod.get("initContainers", []), *pod.get("containers", [])]:
        set_env(ctr.setdefault("env", []), "HOST_ROOT", root)


def apply_container_settings(ctr: Obj, section: dict[str, Any], *, env: bool = True, args: bool = True) -> Obj:
    """A component's ``resources``, ``args`` and ``env`` (user env wins) onto its main container."""
    if env and section.get("env"):
        ctr["env"] = env_list(extra=[*(ctr.get("env") or []), *section["env"]])
    if args and section.get("args"):
        ctr["args"] = [str(a) for a in section["args"]]
    if section.get("resources"):
        ctr["resources"] = resources(section)
    return ctr


def nri_annotations(model: Model, *containers: str) -> dict[str, str]:
    """In NRI plugin mode, operand containers get their GPUs by CDI annotation, not a runtime class."""
    if not model.nri_plugin:
        return {}
    return {f"nvidia.cdi.k8s.io/container.{c}": "management.nvidia.com/gpu=all" for c in containers}


def config_map(name: str, model: Model, data: dict[str, str], *, lbls: dict[str, str] | None = None) -> Obj:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta(name, model, lbls=lbls), "data": dict(data)}


def update_strategy(model: Model) -> Obj:
    ds = model.section("daemonsets")
    if ds.get("updateStrategy") == "OnDelete":
        return {"type": "OnDelete"}
    max_unavailable = ds.get("rollingUpdate", {}).get("maxUnavailable", "1")
    value: int | str = max_unavailable
    if isinstance(max_unavailable, str) and max_unavailable.isdigit():
        value = int(max_unavailable)
    return {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": value}}


def daemonset(
    name: str,
    model: Model,
    *,
    operand: str,
    pod_spec: Obj,
    component: str | None = None,
    section: dict[str, Any] | None = None,
    strategy: Obj | None = None,
    pod_annotations: dict[str, str] | None = None,
    extra_labels: dict[str, str] | None = None,
    stable_pod_labels: bool = False,
    common_annotations_win: bool = False,
    host_root: bool = True,
) -> Obj:
    """A DaemonSet with the common ``daemonsets.*`` settings applied.

    ``stable_pod_labels`` keeps release-bearing labels (``helm.sh/chart``, ...) off the pod
    template, for DaemonSets whose pods must not restart on a mere chart bump (the driver).
    ``hostPaths.rootFS`` is applied (``HOST_ROOT`` env) to every container.
    ``host_root``: False for a pod whose ``HOST_ROOT`` values are its own, whatever
    ``hostPaths.rootFS`` says (the DRA kubelet plugin: the operator's state-dra-driver manifest
    fixes ``/`` and ``/host``, and no ClusterPolicy transform touches it).
    ``common_annotations_win``: ``daemonsets.annotations`` over
    ``pod_annotations`` on a shared key (else the other way round).
    """
    common = model.section("daemonsets")
    lbls = labels(name, component)
    if extra_labels:
        lbls.update(extra_labels)
    pod_labels = common_pod_labels(model, lbls, stable_pod_labels)
    if common_annotations_win:
        # the operator's applyCommonDaemonsetMetadata runs after the operand's transform: on a
        # shared key daemonsets.annotations win over the operand's own (dcgmExporter.annotations)
        annotations = dict(pod_annotations or {})
        annotations.update(common.get("annotations") or {})
    else:
        annotations = dict(common.get("annotations") or {})
        annotations.update(pod_annotations or {})
    spec = clone(pod_spec)  # JSON data: clone is several times faster than deepcopy
    apply_host_root(spec, model, host_root)
    spec.setdefault("affinity", deploy_affinity(operand))
    if operand in DEVICE_PLUGIN_OPERANDS and model.dra:
        from renderer.components import dra_common  # imports this module

        spec["affinity"] = dra_common.exclude_dra_pools(spec["affinity"], model)  # never on a DRA pool
    if common.get("priorityClassName"):
        spec["priorityClassName"] = common["priorityClassName"]
    spec["tolerations"] = clone(common.get("tolerations") or [])
    if common.get("podSecurityContext"):
        spec["securityContext"] = clone(common["podSecurityContext"])
    sec = section or {}
    refs = pull_secret_refs(sec)
    if refs:
        spec["imagePullSecrets"] = refs
    if sec.get("hostNetwork"):
        spec["hostNetwork"] = True
        spec["dnsPolicy"] = "ClusterFirstWithHostNet"
    template_meta: Obj = {"labels": pod_labels}
    if annotations:
        template_meta["annotations"] = {k: str(v) for k, v in annotations.items()}
    selector = {"app": name}
    ds_labels = dict(lbls)
    for k, v in (common.get("labels") or {}).items():
        if k not in ("app", "app.kubernetes.io/part-of"):
            ds_labels[k] = str(v)
    ds_meta = meta(name, model, lbls=ds_labels)
    if common.get("annotations"):
        ds_meta["annotations"] = {k: str(v) for k, v in common["annotations"].items()}
    return {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": ds_meta,
        "spec": {
            "selector": {"matchLabels": selector},
            "updateStrategy": strategy or update_strategy(model),
            "template": {"metadata": template_meta, "spec": spec},
        },
    }


def secret_name(ref: Any) -> str:
    """A pull secret's name: the name itself, or the one value of its ``{name: ...}`` reference
    (the schema allows no other key; so the Helm chart's placeholder map gives its sentinel, and
    the analysis finds the list printed as its names joined)."""
    if isinstance(ref, str):
        return ref
    return str(next(iter(ref.values()), "")) if isinstance(ref, dict) else str(ref)


def with_manager_secrets(section: dict[str, Any]) -> dict[str, Any]:
    """``section`` with its k8s-driver-manager's pull secrets first in ``imagePullSecrets``, as
    the operator's transformDriverManagerInitContainer adds them before the main image's (the
    vGPU and VFIO managers' pods pull both images)."""
    manager = section.get("driverManager") or {}
    lists = [manager.get("imagePullSecrets") if isinstance(manager, dict) else None, section.get("imagePullSecrets")]
    return {**section, "imagePullSecrets": [item for items in lists for item in items or []]}


def with_validator_secrets(model: Model, section: dict[str, Any]) -> dict[str, Any]:
    """``section`` with ``validator.imagePullSecrets`` first in ``imagePullSecrets``: the
    operator's transformValidationInitContainer, which the Transform of each operand with
    validation init containers calls first (GFD, toolkit, device plugin and MPS daemon, DCGM,
    DCGM exporter, MIG manager, sandbox plugins, vGPU device manager), adds the validator
    image's pull secrets to the pod before the Transform adds the operand's own."""
    lists = [model.section("validator").get("imagePullSecrets"), section.get("imagePullSecrets")]
    return {**section, "imagePullSecrets": [item for items in lists for item in items or []]}


def pull_secret_refs(section: dict[str, Any]) -> list[Obj]:
    """``section.imagePullSecrets`` (names or ``{name}`` maps) as a pod's references, each name
    once, the first kept (the operator's addPullSecrets skips a name the pod already has)."""
    refs: list[Obj] = []
    names: set[str] = set()
    for secret in section.get("imagePullSecrets") or []:
        name = secret_name(secret)
        if name not in names:
            names.add(name)
            refs.append({"name": secret} if isinstance(secret, str) else dict(secret))
    return refs


def deployment(name: str, model: Model, lbls: dict[str, str], pod: Obj, annotations: dict[str, str] | None = None) -> Obj:
    """A one-replica Deployment selected by ``app: <name>`` (NFD master and gc, the DRA controller)."""
    template_meta: Obj = {"labels": dict(lbls)}
    if annotations:
        template_meta["annotations"] = annotations
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": meta(name, model, lbls=lbls),
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": {"app": name}},
            "template": {"metadata": template_meta, "spec": pod},
        },
    }


def cluster_runtime(model: Model) -> str:
    """The one runtime the operator would detect: containerd if any GPU node uses it.

    Pools name their runtime (``nodePools[].runtime``), falling back to ``cluster.containerRuntime``.
    """
    runtimes = [p.runtime for p in model.pools] or [str(model.values["cluster"].get("containerRuntime") or "containerd")]
    return "containerd" if "containerd" in runtimes else runtimes[0]


def runtime_class_name(model: Model) -> str | None:
    """The runtime class operand pods use, or None where the operator would not set one."""
    cdi = model.section("cdi")
    if model.nri_plugin:
        return None
    if not cdi.get("enabled") and cluster_runtime(model) == "crio":
        return None
    return str(model.values["cluster"].get("runtimeClass") or "nvidia")


def resources(section: dict[str, Any]) -> Obj:
    return clone(section.get("resources") or {})


def gpu_client_daemonset(name: str, model: Model, *, operand: str, pod_spec: Obj, section: dict[str, Any], gpu_container: str) -> Obj:
    """The DaemonSet of an operand that uses the GPU through the container runtime: the
    ``nvidia`` runtime class (where the operator sets one) or, in NRI mode, the CDI
    annotation for ``gpu_container``."""
    rc = runtime_class_name(model)
    if rc:
        pod_spec["runtimeClassName"] = rc
    return daemonset(name, model, operand=operand, pod_spec=pod_spec, section=section, pod_annotations=nri_annotations(model, gpu_container))
