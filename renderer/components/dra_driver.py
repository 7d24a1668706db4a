"""The NVIDIA DRA driver on ``resourceAllocation: dra`` pools (the operator's ``state-dra-driver``).

* DeviceClasses ``gpu.nvidia.com``, ``mig.nvidia.com``, ``vfio.gpu.nvidia.com`` and, with
  ComputeDomains, ``compute-domain-daemon.nvidia.com`` and ``compute-domain-default-channel.nvidia.com``;
* the kubelet-plugin DaemonSet (``gpus`` and ``compute-domains`` containers after a
  ``driver-validation`` init container), one node-selector term per ``dra`` pool;
* the ComputeDomain controller Deployment and, when gpu-render owns them, the
  ``computedomains`` / ``computedomaincliques`` CRDs;
* ServiceAccounts, least-privilege RBAC (rules in :mod:`renderer.security`), and the
  ValidatingAdmissionPolicy that lets a kubelet plugin write only its own node's ResourceSlices.
"""

from __future__ import annotations

from typing import Any

from renderer.components import common as c
from renderer.components import dra_common as d
from renderer.components.common import Obj
from renderer.model import Model

NAME = "nvidia-dra-driver"
PLUGIN = "nvidia-dra-driver-kubelet-plugin"
"""DaemonSet and pod label ``app``: k8s-driver-manager waits for pods with this label to end."""
PLUGIN_SA = "nvidia-dra-driver-kubeletplugin"
CONTROLLER = "nvidia-dra-driver-controller"
CD_DAEMON_SA = "compute-domain-daemon-service-account"
CD_DAEMON_ROLE = "compute-domain-daemon"
POLICY = "resourceslices-policy-nvidia-dra-driver"
GPUS_PORT = 51516
CD_PORT = 51515
CRD_GROUP = "resource.nvidia.com"

PLUGIN_SCRIPT = """\
# gpu-render: take over what the driver validation found (NVIDIA_DRIVER_ROOT, DRIVER_ROOT_CTR_PATH)
set -a
. {validations}/driver-ready
set +a
# Optionally keep this container from recreating missing GPU device nodes (e.g. under nvkind).
if [ "${{MASK_NVIDIA_DRIVER_PARAMS}}" = "true" ]; then
  cp /proc/driver/nvidia/params /root/gpu-params
  sed -i 's/^ModifyDeviceFiles: 1$/ModifyDeviceFiles: 0/' /root/gpu-params
  mount --bind /root/gpu-params /proc/driver/nvidia/params
fi
exec {binary} -v "${{LOG_VERBOSITY}}"
"""


def section(model: Model) -> dict[str, Any]:
    return model.section("draDriver")


def _sub(model: Model, *keys: str) -> dict[str, Any]:
    node: Any = section(model)
    for key in keys:
        node = (node or {}).get(key) if isinstance(node, dict) else None
    return node if isinstance(node, dict) else {}


def image(model: Model) -> str:
    return c.image_ref(section(model))


PASSTHROUGH_MOUNTS = (("lib-modules", "/lib/modules/", True, "HostToContainer"), ("sysfs", "/sys/", False, "Bidirectional"), ("procfs", "/proc/", False, "Bidirectional"))
"""(volume, host folder mounted at the same path, read-only, propagation) of the ``gpus``
plugin with ``featureGates.PassthroughSupport``; go-nvlib's nvpassthrough finds the vfio-pci
driver variant of a GPU there."""


def passthrough(model: Model) -> bool:
    """``draDriver.featureGates.PassthroughSupport``: the ``gpus`` plugin also manages GPUs
    bound to vfio-pci, with the host's modules, sysfs and procfs (state-dra-driver)."""
    return (section(model).get("featureGates") or {}).get("PassthroughSupport") is True


def feature_gates(model: Model) -> str:
    gates = section(model).get("featureGates") or {}
    return ",".join(f"{k}={'true' if v else 'false'}" for k, v in sorted(gates.items()))


def _device_class(name: str, expression: str) -> Obj:
    return {
        "apiVersion": d.RESOURCE_API,
        "kind": "DeviceClass",
        "metadata": c.meta(name),
        "spec": {"selectors": [{"cel": {"expression": expression}}]},
    }


def device_classes(model: Model) -> list[Obj]:
    def gpu(kind: str) -> str:
        return f"device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == '{kind}'"

    out = [_device_class("gpu.nvidia.com", gpu("gpu")), _device_class("mig.nvidia.com", gpu("mig")), _device_class("vfio.gpu.nvidia.com", gpu("vfio"))]
    if d.compute_domains(model):
        cd = "device.driver == 'compute-domain.nvidia.com' && device.attributes['compute-domain.nvidia.com'].type"
        out.append(_device_class("compute-domain-daemon.nvidia.com", f"{cd} == 'daemon'"))
        out.append(_device_class("compute-domain-default-channel.nvidia.com", f"{cd} == 'channel' && device.attributes['compute-domain.nvidia.com'].id == 0"))
    return out


def _status_enum() -> Obj:
    return {"type": "string", "enum": ["Ready", "NotReady"], "default": "NotReady"}


def _crd(plural: str, kind: str, schema: Obj, *, status: bool) -> Obj:
    version: Obj = {"name": "v1beta1", "served": True, "storage": True, "schema": {"openAPIV3Schema": schema}}
    if status:
        version["subresources"] = {"status": {}}
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": c.meta(f"{plural}.{CRD_GROUP}"),
        "spec": {
            "group": CRD_GROUP,
            "names": {"kind": kind, "listKind": f"{kind}List", "plural": plural, "singular": plural[:-1]},
            "scope": "Namespaced",
            "versions": [version],
        },
    }


def _member(key: str) -> Obj:
    """The schema of one node of a ComputeDomain (``name``) or one daemon of a clique (``nodeName``)."""
    return {
        "type": "object",
        "required": sorted(["cliqueID", "ipAddress", key]),
        "properties": dict(sorted({"cliqueID": {"type": "string"}, "index": {"type": "integer"}, "ipAddress": {"type": "string"}, key: {"type": "string"}, "status": _status_enum()}.items())),
    }


def crds() -> list[Obj]:
    """``computedomains`` and ``computedomaincliques`` (v1beta1), the fields of the DRA driver v0.5 API."""
    node = _member("name")
    domain = {
        "type": "object",
        "description": "A set of nodes whose GPUs share memory over Multi-Node NVLink (IMEX).",
        "properties": {
            "apiVersion": {"type": "string"},
            "kind": {"type": "string"},
            "metadata": {"type": "object"},
            "spec": {
                "type": "object",
                "required": ["channel", "numNodes"],
                "x-kubernetes-validations": [{"rule": "self == oldSelf", "message": "A computeDomain.spec is immutable"}],
                "properties": {
                    "numNodes": {"type": "integer"},
                    "channel": {
                        "type": "object",
                        "required": ["resourceClaimTemplate"],
                        "properties": {
                            "allocationMode": {"type": "string", "enum": ["All", "Single"], "default": "Single"},
                            "resourceClaimTemplate": {"type": "object", "required": ["name"], "properties": {"name": {"type": "string"}}},
                        },
                    },
                },
            },
            "status": {
                "type": "object",
                "required": ["status"],
                "properties": {
                    "status": _status_enum(),
                    "nodes": {"type": "array", "items": node, "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"]},
                },
            },
        },
    }
    daemon = _member("nodeName")
    clique = {
        "type": "object",
        "description": "The ComputeDomain daemons of one NVLink clique.",
        "properties": {
            "apiVersion": {"type": "string"},
            "kind": {"type": "string"},
            "metadata": {"type": "object"},
            "daemons": {"type": "array", "items": daemon, "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["nodeName"]},
        },
    }
    return [_crd("computedomains", "ComputeDomain", domain, status=True), _crd("computedomaincliques", "ComputeDomainClique", clique, status=False)]


def _sa(name: str, model: Model, component: str) -> Obj:
    obj = c.service_account(name, model)
    obj["metadata"]["labels"] = {**c.labels(NAME, component), **obj["metadata"]["labels"]}
    return obj


def _mps(model: Model) -> bool:
    return bool((section(model).get("featureGates") or {}).get("MPSSupport"))


def _leader_election(model: Model) -> bool:
    env = _sub(model, "computeDomains", "controller").get("env") or []
    return any(isinstance(e, dict) and e.get("name") == "LEADER_ELECTION_ENABLED" and str(e.get("value")).lower() == "true" for e in env)


def rbac(model: Model) -> list[Obj]:
    """RBAC of the kubelet plugin, the controller and the ComputeDomain daemons.

    Each verb is one the binaries call (docs/security.md, "DRA driver RBAC"); the operator's
    manifests grant a few more, listed in docs/fidelity.md.
    """
    cd = d.compute_domains(model)
    plugin_rules = [
        c.rule(["resource.k8s.io"], ["resourceclaims"], ["get", "list", "watch"]),
        c.rule(["resource.k8s.io"], ["resourceslices"], ["get", "list", "watch", "create", "update", "delete"]),
        c.rule([""], ["nodes"], ["get", "list", "watch", "update", "patch"] if cd else ["get", "list", "watch"]),
        c.rule([""], ["pods"], ["get", "list", "watch"]),
    ]
    if cd:
        plugin_rules.insert(0, c.rule([CRD_GROUP], ["computedomains"], ["get", "list", "watch"]))
    out = [_sa(PLUGIN_SA, model, "kubelet-plugin"), c.cluster_role(PLUGIN_SA, plugin_rules), c.cluster_role_binding(PLUGIN_SA, model)]
    if _mps(model):  # the gpus plugin runs one MPS control daemon Deployment per shared GPU
        out += [
            c.role(f"{PLUGIN_SA}-mps", model, [c.rule(["apps"], ["deployments"], ["get", "list", "watch", "create", "delete"])]),
            c.role_binding(f"{PLUGIN_SA}-mps", model, sa=PLUGIN_SA),
        ]
    out += [
        c.role(f"{PLUGIN_SA}-driver-validation", model, [c.rule(["apps"], ["daemonsets"], ["list"])]),
        c.role_binding(f"{PLUGIN_SA}-driver-validation", model, sa=PLUGIN_SA),
    ]
    if not cd:
        return out
    controller_rules = [
        c.rule([CRD_GROUP], ["computedomains"], ["get", "list", "watch", "update"]),
        c.rule([CRD_GROUP], ["computedomains/status"], ["update"]),
        c.rule(["resource.k8s.io"], ["resourceclaimtemplates"], ["get", "list", "watch", "create", "update", "delete"]),
        c.rule([""], ["nodes"], ["get", "list", "watch", "update"]),
        c.rule([""], ["pods"], ["get", "list", "watch"]),
    ]
    if _leader_election(model):
        controller_rules.append(c.rule(["coordination.k8s.io"], ["leases"], ["get", "create", "update"]))
    out += [
        c.role(PLUGIN_SA, model, [c.rule([CRD_GROUP], ["computedomaincliques"], ["get"])]),
        c.role_binding(PLUGIN_SA, model),
        _sa(CONTROLLER, model, "controller"),
        c.cluster_role(CONTROLLER, controller_rules),
        c.cluster_role_binding(CONTROLLER, model),
        c.role(
            CONTROLLER,
            model,
            [
                c.rule(["apps"], ["daemonsets"], ["get", "list", "watch", "create", "update", "delete"]),
                c.rule([CRD_GROUP], ["computedomaincliques"], ["get", "list", "watch", "update"]),
            ],
        ),
        c.role_binding(CONTROLLER, model),
        _sa(CD_DAEMON_SA, model, "compute-domain-daemon"),
        c.cluster_role(
            CD_DAEMON_ROLE,
            [
                c.rule([CRD_GROUP], ["computedomains"], ["get", "list", "watch"]),
                c.rule([CRD_GROUP], ["computedomains/status"], ["update"]),
                c.rule([CRD_GROUP], ["computedomaincliques"], ["get", "list", "watch", "create", "update"]),
                c.rule([""], ["pods"], ["get", "list", "watch", "patch"]),
            ],
        ),
        c.cluster_role_binding(CD_DAEMON_ROLE, model, sa=CD_DAEMON_SA),
    ]
    return out


def _health(kp: dict[str, Any], default: int) -> int:
    hc = kp.get("healthcheck") or {}
    if hc.get("enabled") is False:
        return -1
    return int(hc.get("port") or default)


def _plugin_container(model: Model, name: str, binary: str, kp: dict[str, Any], default_port: int, http: str) -> Obj:
    s = section(model)
    port = _health(kp, default_port)
    pairs: list[tuple[str, str]] = [
        ("HTTP_ENDPOINT", http),
        ("METRICS_PATH", "/metrics"),
        ("LOG_VERBOSITY", str(s.get("logVerbosity", 4))),
        ("MASK_NVIDIA_DRIVER_PARAMS", ""),
        ("NVIDIA_VISIBLE_DEVICES", "void"),
        ("CDI_ROOT", "/var/run/cdi"),
    ]
    if name == "gpus":
        pairs.append(("HOST_ROOT", "/host"))
    pairs.append(("NVIDIA_MIG_CONFIG_DEVICES", "all"))
    env = c.env_list(*pairs)
    env += [c.field_env("NODE_NAME", "spec.nodeName"), c.field_env("NAMESPACE", "metadata.namespace")]
    if name == "gpus":
        env += c.env_list(("IMAGE_NAME", image(model)))
    env += c.env_list(
        ("KUBELET_REGISTRAR_DIRECTORY_PATH", f"{c.kubelet_root_dir(model)}/plugins_registry"),
        ("KUBELET_PLUGINS_DIRECTORY_PATH", f"{c.kubelet_root_dir(model)}/plugins"),
        ("HEALTHCHECK_PORT", str(port)),
    )
    if name == "compute-domains":
        env += c.env_list(("GPU_CLIQUE_LABEL_ENABLED", "true"))
    if feature_gates(model):
        env += c.env_list(("FEATURE_GATES", feature_gates(model)))
    env = c.env_list(extra=[*env, *(kp.get("env") or [])])
    install_dir = c.driver_install_dir(model)
    ctr: Obj = {
        "name": name,
        "image": image(model),
        "imagePullPolicy": s.get("imagePullPolicy", "IfNotPresent"),
        "command": ["bash", "-c"],
        "args": [PLUGIN_SCRIPT.format(validations=c.VALIDATIONS_DIR, binary=binary)],
        "env": env,
        "securityContext": {"privileged": True},
        "volumeMounts": [
            c.mount("plugins-registry", f"{c.kubelet_root_dir(model)}/plugins_registry"),
            c.mount("plugins", f"{c.kubelet_root_dir(model)}/plugins", propagation="Bidirectional"),
            c.mount("cdi", "/var/run/cdi"),
            c.mount("run-nvidia-validations", c.VALIDATIONS_DIR, read_only=True),
            c.mount("host-root", "/host", read_only=True, propagation="HostToContainer"),
            c.mount("driver-install-dir", install_dir, propagation="HostToContainer"),
        ],
    }
    if name == "gpus" and passthrough(model):
        ctr["volumeMounts"] += [c.mount(n, path, read_only=ro, propagation=prop) for n, path, ro, prop in PASSTHROUGH_MOUNTS]
    if port > 0:
        grpc = {"port": port, "service": "liveness"}
        ctr["livenessProbe"] = {"grpc": dict(grpc), "failureThreshold": 3, "periodSeconds": 30 if name == "gpus" else 10, "timeoutSeconds": 10}
        ctr["startupProbe"] = {"grpc": dict(grpc), "failureThreshold": 600, "periodSeconds": 1, "timeoutSeconds": 10}
    if kp.get("resources"):
        ctr["resources"] = c.resources(kp)
    return ctr


def _driver_validation(model: Model) -> Obj:
    init = c.driver_validation_init(model)
    # the kubelet plugin only needs the driver's files: no GPU initialisation, no /dev/char links
    c.set_env(init["env"], "DRIVER_VALIDATION_SKIP_GPU_INIT", "true")
    c.set_env(init["env"], "DISABLE_DEV_CHAR_SYMLINK_CREATION", "true")
    return init


def kubelet_plugin(model: Model) -> Obj:
    containers = [_plugin_container(model, "gpus", "gpu-kubelet-plugin", _sub(model, "gpus", "kubeletPlugin"), GPUS_PORT, ":8080")]
    if d.compute_domains(model):
        containers.append(_plugin_container(model, "compute-domains", "compute-domain-kubelet-plugin", _sub(model, "computeDomains", "kubeletPlugin"), CD_PORT, ":8081"))
    pod: Obj = {
        "serviceAccountName": PLUGIN_SA,
        "priorityClassName": "system-node-critical",
        "affinity": d.pool_affinity(model.dra_pools, d.DRIVER_LABEL),
        "initContainers": [_driver_validation(model)],
        "containers": containers,
        "volumes": [
            c.host_path("plugins-registry", f"{c.kubelet_root_dir(model)}/plugins_registry"),
            c.host_path("plugins", f"{c.kubelet_root_dir(model)}/plugins"),
            c.host_path("cdi", "/var/run/cdi"),
            c.host_path("run-nvidia-validations", c.VALIDATIONS_DIR, "DirectoryOrCreate"),
            c.host_path("driver-install-dir", c.driver_install_dir(model), "DirectoryOrCreate"),
            *c.host_root_volumes(model),
            *([c.host_path(n, path, "Directory") for n, path, _, _ in PASSTHROUGH_MOUNTS] if passthrough(model) else []),
        ],
    }
    ds = c.daemonset(PLUGIN, model, operand=d.DRIVER_LABEL, pod_spec=pod, section=section(model), component="kubelet-plugin", host_root=False)
    spec = ds["spec"]["template"]["spec"]
    if "priorityClassName" not in spec:
        spec["priorityClassName"] = "system-node-critical"
    return ds


def controller(model: Model) -> Obj:
    s = section(model)
    ctl = _sub(model, "computeDomains", "controller")
    ns = model.namespace
    env = c.env_list(("HTTP_ENDPOINT", ":8080"), ("METRICS_PATH", "/metrics"), ("PPROF_PATH", ""))
    verbosity = str(s.get("logVerbosity", 4))
    env += c.env_list(("LOG_VERBOSITY", verbosity), ("LOG_VERBOSITY_CD_DAEMON", verbosity))
    env += [c.field_env("POD_NAME", "metadata.name"), c.field_env("NAMESPACE", "metadata.namespace")]
    env += c.env_list(
        ("IMAGE_NAME", image(model)),
        ("NVIDIA_VISIBLE_DEVICES", "void"),
        ("LEADER_ELECTION_ENABLED", "false"),
        ("LEADER_ELECTION_LEASE_LOCK_NAME", CONTROLLER),
        ("LEADER_ELECTION_LEASE_LOCK_NAMESPACE", ns),
        ("LEADER_ELECTION_LEASE_DURATION", "15s"),
        ("LEADER_ELECTION_RENEW_DEADLINE", "10s"),
        ("LEADER_ELECTION_RETRY_PERIOD", "2s"),
    )
    if feature_gates(model):
        env += c.env_list(("FEATURE_GATES", feature_gates(model)))
    env = c.env_list(extra=[*env, *(ctl.get("env") or [])])
    ctr: Obj = {
        "name": "compute-domain",
        "image": image(model),
        "imagePullPolicy": s.get("imagePullPolicy", "IfNotPresent"),
        "command": ["compute-domain-controller", "-v", "$(LOG_VERBOSITY)"],
        "env": env,
        "securityContext": {
            "allowPrivilegeEscalation": False,
            "capabilities": {"drop": ["ALL"]},
        },
    }
    if ctl.get("resources"):
        ctr["resources"] = c.resources(ctl)
    lbls = c.labels(CONTROLLER, "controller")
    common = model.section("daemonsets")  # the operator's controller manifest takes them too
    pod: Obj = {
        "serviceAccountName": CONTROLLER,
        "priorityClassName": str(common.get("priorityClassName") or "system-node-critical"),
        "affinity": {
            "nodeAffinity": {
                "preferredDuringSchedulingIgnoredDuringExecution": [
                    {"weight": 100, "preference": {"matchExpressions": [{"key": "node-role.kubernetes.io/control-plane", "operator": "Exists"}]}}
                ]
            },
            "podAntiAffinity": {
                "preferredDuringSchedulingIgnoredDuringExecution": [
                    {"weight": 100, "podAffinityTerm": {"labelSelector": {"matchLabels": {"app": CONTROLLER}}, "topologyKey": "kubernetes.io/hostname"}}
                ]
            },
        },
        "containers": [ctr],
        "tolerations": [
            {"key": "node-role.kubernetes.io/control-plane", "operator": "Exists", "effect": "NoSchedule"},
            {"key": "node-role.kubernetes.io/master", "operator": "Exists", "effect": "NoSchedule"},
            {"key": "CriticalAddonsOnly", "operator": "Exists"},
            *(common.get("tolerations") or []),
        ],
    }
    secrets = c.pull_secret_refs(s)
    if secrets:
        pod["imagePullSecrets"] = secrets
    annotations = {str(k): str(v) for k, v in (common.get("annotations") or {}).items()}
    out = c.deployment(CONTROLLER, model, lbls, pod, annotations or None)
    out["spec"]["template"]["metadata"]["labels"] = c.common_pod_labels(model, lbls)
    return out


def admission_policy(model: Model) -> list[Obj]:
    """A kubelet plugin may create, update and delete only the ResourceSlices of its own node.

    The node comes from the ServiceAccount token's node claim (``ServiceAccountTokenPodNodeInfo``,
    on by default since Kubernetes 1.32); slices for all nodes or a node selector stay allowed,
    as upstream has them (the ComputeDomain plugin publishes none of those today).
    """
    user = f"system:serviceaccount:{model.namespace}:{PLUGIN_SA}"
    target = '(request.operation == "DELETE" ? oldObject : object)'
    policy = {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingAdmissionPolicy",
        "metadata": c.meta(POLICY),
        "spec": {
            "failurePolicy": "Fail",
            "matchConstraints": {
                "resourceRules": [
                    {"apiGroups": ["resource.k8s.io"], "apiVersions": ["*"], "operations": ["CREATE", "UPDATE", "DELETE"], "resources": ["resourceslices"]}
                ]
            },
            "matchConditions": [{"name": "isRestrictedUser", "expression": f'request.userInfo.username == "{user}"'}],
            "variables": [
                {"name": "userNodeName", "expression": "request.userInfo.extra[?'authentication.kubernetes.io/node-name'][0].orValue('')"},
                {"name": "objectNodeName", "expression": f'{target}.spec.?nodeName.orValue("")'},
                {"name": "nodeSelectorValue", "expression": f"{target}.spec.?nodeSelector.orValue(null)"},
                {"name": "allNodesValue", "expression": f"{target}.spec.?allNodes.orValue(false)"},
            ],
            "validations": [
                {
                    "expression": 'variables.userNodeName != ""',
                    "message": "no node association found for user, this user must run in a pod on a node and ServiceAccountTokenPodNodeInfo must be enabled",
                },
                {
                    "expression": "variables.userNodeName == variables.objectNodeName || variables.allNodesValue == true || variables.nodeSelectorValue != null",
                    "messageExpression": "\"this user running on node '\"+variables.userNodeName+\"' may not modify resourceslices of other nodes\"",
                },
            ],
        },
    }
    binding = {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingAdmissionPolicyBinding",
        "metadata": c.meta(POLICY),
        "spec": {"policyName": POLICY, "validationActions": ["Deny"]},
    }
    return [policy, binding]


PLUGIN_WAVE = "4"
"""After the driver (3), before the operands (5) that hold claims: Argo CD prunes in reverse
wave order, so claim holders go first, then the kubelet plugin that unprepares their claims,
then the driver."""
POLICY_WAVE = "1"
"""The ResourceSlice policy is in force before the plugin writes a slice, and outlives it."""


def _wave(obj: Obj, value: str) -> Obj:
    obj["metadata"].setdefault("annotations", {})["argocd.argoproj.io/sync-wave"] = value
    return obj


def build(model: Model) -> list[Obj]:
    out: list[Obj] = []
    if d.compute_domains(model) and d.crd_owner(model) == "gpu-render":
        out += crds()
    out += rbac(model)
    out += [_wave(o, POLICY_WAVE) for o in admission_policy(model)]
    out += [_wave(o, PLUGIN_WAVE) for o in device_classes(model)]
    out.append(_wave(kubelet_plugin(model), PLUGIN_WAVE))
    if d.compute_domains(model):
        out.append(_wave(controller(model), PLUGIN_WAVE))
    return out


enabled = d.enabled
