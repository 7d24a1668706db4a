"""Write-once seeding of the per-operand deploy labels ``nvidia.com/gpu.deploy.<operand>``.

Without the operator nothing labels GPU nodes for each operand, and NFD must not: it would
put ``true`` back while k8s-driver-manager holds an operand at ``paused-for-driver-upgrade``.
This DaemonSet runs a stock kubectl image on every GPU node, adds each deploy label that is
missing (``true`` for the operands of the node's workload, ``false`` for the others) and
never touches a label that exists. Then it sleeps; there is no reconcile loop.
"""

from __future__ import annotations

from renderer.components import common as c
from renderer.components.common import Obj
from renderer.model import Model

NAME = "nvidia-node-labeller"

CONTAINER_OPERANDS = (
    "driver",
    "container-toolkit",
    "operator-validator",
    "device-plugin",
    "gpu-feature-discovery",
    "dcgm",
    "dcgm-exporter",
    "mig-manager",
    "node-status-exporter",
)
"""The operator's label set for the ``container`` workload (``gpuStateLabels``)."""

SCRIPT = """\
set -u
label() { kubectl get node "$NODE_NAME" -o "jsonpath={.metadata.labels.$1}"; }
wanted=$CONTAINER_OPERANDS
if [ "$SANDBOX_WORKLOADS" = true ]; then
  workload=$(label 'nvidia\\.com/gpu\\.workload\\.config') || exit 1
  case "$workload" in container|vm-passthrough|vm-vgpu) ;; *) workload=$DEFAULT_WORKLOAD ;; esac
  case "$workload" in
    vm-passthrough) wanted=$VM_PASSTHROUGH_OPERANDS ;;
    vm-vgpu) wanted=$VM_VGPU_OPERANDS ;;
  esac
fi
opt_out=$(label 'nvidia\\.com/gpu\\.deploy\\.operands') || exit 1
if [ "$opt_out" = false ]; then wanted=""; fi
for operand in $ALL_OPERANDS; do
  key="nvidia.com/gpu.deploy.$operand"
  current=$(label "nvidia\\.com/gpu\\.deploy\\.$operand") || exit 1
  if [ -n "$current" ]; then echo "kept $key=$current"; continue; fi
  value=false
  case " $wanted " in *" $operand "*) value=true ;; esac
  kubectl label node "$NODE_NAME" "$key=$value" || exit 1
done
seed() {
  current=$(label "$1") || exit 1
  if [ -n "$current" ]; then echo "kept $2=$current"; return 0; fi
  kubectl label node "$NODE_NAME" "$2=$3" || exit 1
}
matches() {
  saved_ifs=$IFS; IFS=,; set -f; set -- $1; set +f; IFS=$saved_ifs
  for term; do
    value=$(label "${term%%=*}") || exit 1
    [ "$value" = "${term#*=}" ] || return 1
  done
}
pool_plugin=""; pool_mig=""
case "$POOL_RULES" in *'nvidia\\.com/gpu\\.product='*)
  waited=0
  until product=$(label 'nvidia\\.com/gpu\\.product') && [ -n "$product" ] || [ "$waited" -ge 360 ]; do waited=$((waited + 1)); sleep 10; done ;;
esac
saved_ifs=$IFS; IFS='
'; set -f
for rule in $POOL_RULES; do
  IFS=$saved_ifs; set +f
  rest=${rule#*;}
  if matches "${rule%%;*}"; then pool_plugin=${rest%%;*}; pool_mig=${rest#*;}; break; fi
done
IFS=$saved_ifs; set +f
if [ -n "$pool_plugin" ]; then
  seed 'nvidia\\.com/device-plugin\\.config' nvidia.com/device-plugin.config "$pool_plugin"
fi
mig_default=$MIG_CONFIG_DEFAULT
[ "$mig_default" = all-disabled ] || mig_default=""
mig=${pool_mig:-$mig_default}
if [ -n "$mig" ]; then
  waited=0
  until capable=$(label 'nvidia\\.com/mig\\.capable') && [ -n "$capable" ] || [ "$waited" -ge 360 ]; do waited=$((waited + 1)); sleep 10; done
  if [ "$capable" = true ]; then
    seed 'nvidia\\.com/mig\\.config' nvidia.com/mig.config "$mig"
  fi
fi
exec sleep infinity
"""
"""Adds missing labels only: ``kubectl label`` without ``--overwrite`` refuses to change one.

After the deploy labels, a node of a pool (``POOL_RULES``: one line per pool, its node
selector and ``gpuProduct`` as escaped-key=value terms, then the pool's ``devicePluginConfig`` and ``mig.config``,
separated by ``;``) gets ``nvidia.com/device-plugin.config`` and, once GPU feature discovery
has labelled it MIG-capable (it waits up to an hour for GFD), ``nvidia.com/mig.config`` (the pool's, else
``MIG_CONFIG_DEFAULT`` when that is ``all-disabled``), each only when missing.
"""

COMPUTED = (("DaemonSet/nvidia-node-labeller", ("spec", "template", "spec", "containers", ("@", "seed-deploy-labels"), "env", ("@", "POOL_RULES"), "value")),)
"""Leaves computed from the whole pool list (object, path), which a chart's values cannot
express as settings: the chart takes them from its computed values (``generated``), which
each cluster's values file carries for that cluster's pools."""

GPU_PRODUCT = "nvidia.com/gpu.product"


def _escaped(key: str) -> str:
    """A label key as a kubectl jsonpath member name (dots escaped)."""
    return key.replace(".", "\\.")


def pool_rules(model: Model) -> str:
    """``POOL_RULES``: the pools that seed a device-plugin config or a MIG profile."""
    mig_on = model.enabled("migManager")
    lines = []
    for pool in model.pools:
        plugin = str(pool.values.get("devicePluginConfig") or "") if model.enabled("devicePlugin") else ""
        mig = str((pool.values.get("mig") or {}).get("config") or "") if mig_on else ""
        if not (plugin or mig):
            continue
        selector = dict(pool.node_selector)
        if pool.values.get("gpuProduct"):
            selector[GPU_PRODUCT] = str(pool.values["gpuProduct"])  # set by GFD: the seeder waits for it
        terms = ",".join(f"{_escaped(k)}={v}" for k, v in sorted(selector.items()))
        lines.append(f"{terms};{plugin};{mig}")
    return "\n".join(lines)


def mig_config_default(model: Model) -> str:
    """``migManager.config.default`` with the MIG manager on, else empty. The operator seeds it
    on a MIG-capable node without ``nvidia.com/mig.config`` only when it is ``all-disabled``
    (nodelabeling_controller.go): the script checks that, so the value is the policy's own (a
    chart can take it from values)."""
    if not model.enabled("migManager"):
        return ""
    return str((model.section("migManager").get("config") or {}).get("default") or "")


def _sandbox_device_plugin(model: Model) -> str:
    return "kata-sandbox-device-plugin" if model.sandbox_mode == "kata" else "sandbox-device-plugin"


def workload_operands(model: Model) -> dict[str, tuple[str, ...]]:
    """Operands labelled ``true`` per workload type, as the operator's node labelling does."""
    container: tuple[str, ...] = CONTAINER_OPERANDS
    if model.dra:  # their DaemonSets also select the dra pools, so true is safe on every node
        container += ("dra-driver", "dra-validator", "dcgm-exporter-dra")
    out: dict[str, tuple[str, ...]] = {"container": container}
    if model.enabled("sandboxWorkloads"):
        # the sandbox mode picks the device plugin of passthrough nodes only
        # (getEffectiveStateLabels): vm-vgpu nodes keep the KubeVirt plugin's label, whose
        # DaemonSet is not deployed in kata mode, so they get no plugin then
        dp = _sandbox_device_plugin(model)
        out["vm-passthrough"] = (dp, "sandbox-validator", "vfio-manager", "cc-manager")
        out["vm-vgpu"] = ("sandbox-device-plugin", "vgpu-manager", "vgpu-device-manager", "sandbox-validator", "cc-manager")
    return out


def _env(model: Model) -> list[Obj]:
    per_workload = workload_operands(model)
    every: list[str] = []
    for operands in per_workload.values():
        every += [o for o in operands if o not in every]
    sandbox = model.section("sandboxWorkloads")
    pairs = [
        ("HOME", "/tmp"),
        ("SANDBOX_WORKLOADS", "true" if sandbox.get("enabled") else "false"),
        ("DEFAULT_WORKLOAD", str(sandbox.get("defaultWorkload", "container"))),
        ("ALL_OPERANDS", " ".join(every)),
        ("CONTAINER_OPERANDS", " ".join(per_workload["container"])),
        ("VM_PASSTHROUGH_OPERANDS", " ".join(per_workload.get("vm-passthrough", ()))),
        ("VM_VGPU_OPERANDS", " ".join(per_workload.get("vm-vgpu", ()))),
        ("POOL_RULES", pool_rules(model)),
        ("MIG_CONFIG_DEFAULT", mig_config_default(model)),
    ]
    node = {"name": "NODE_NAME", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}}
    return [node, *c.env_list(*pairs)]


def daemonset(model: Model) -> Obj:
    section = model.section("nodeLabeller")
    container: Obj = {
        "name": "seed-deploy-labels",
        "image": c.image_ref(section),
        "imagePullPolicy": section.get("imagePullPolicy", "IfNotPresent"),
        "command": ["/bin/sh", "-c", SCRIPT],
        "env": _env(model),
        "securityContext": {
            "allowPrivilegeEscalation": False,
            "capabilities": {"drop": ["ALL"]},
            "readOnlyRootFilesystem": True,
            "runAsNonRoot": True,
            "runAsUser": 65534,
        },
        "volumeMounts": [c.mount("tmp", "/tmp")],
    }
    if section.get("resources"):
        container["resources"] = c.resources(section)
    affinity = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {"matchExpressions": [{"key": "nvidia.com/gpu.present", "operator": "In", "values": ["true"]}]}
                ]
            }
        }
    }
    pod: Obj = {
        "serviceAccountName": NAME,
        "affinity": affinity,
        "containers": [container],
        "volumes": [{"name": "tmp", "emptyDir": {}}],
    }
    return c.daemonset(NAME, model, operand="node-labeller", pod_spec=pod, section=section, component="node-labeller")


def build(model: Model) -> list[Obj]:
    return [
        c.service_account(NAME, model),
        c.cluster_role(NAME, [c.rule([""], ["nodes"], ["get", "patch"])]),
        c.cluster_role_binding(NAME, model),
        daemonset(model),
    ]
