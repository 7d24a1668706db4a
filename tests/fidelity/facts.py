"""Behaviour-bearing facts of rendered objects, as comparable strings.

A fact is one thing a container or a pod does on a node, written so that the operator's object
and gpu-render's can be compared as sets, whatever the object names: container x env
name/value, mount path x volume source x options, probe, security context, image, command,
args, resources, scheduling, pull secrets, labels that select, replicas, RBAC verb x resource;
for DRA, the pod's resource claims, each ResourceClaimTemplate's claim, each DeviceClass (its
name is what claims ask for) and the ValidatingAdmissionPolicy's rules. Names of the objects
themselves (DaemonSet, ServiceAccount, volume, template names) are not facts.
"""

from __future__ import annotations

import json
from typing import Any

Obj = dict[str, Any]

SELECTING_LABELS = ("app.kubernetes.io/component", "nvidia.com/node.os-version", "nvidia.com/precompiled", "nvidia.com/precompiled.kernel-version")


def _j(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


def _source(volume: Obj) -> str:
    if "hostPath" in volume:
        hp = volume["hostPath"]
        return f"host:{hp['path']}" + (f"({hp['type']})" if hp.get("type") else "")
    if "configMap" in volume:
        cm = volume["configMap"]
        items = ",".join(i["key"] for i in cm.get("items") or [])
        return f"configMap:{cm.get('name')}" + (f"[{items}]" if items else "")
    if "secret" in volume:
        sec = volume["secret"]
        items = ",".join(i["key"] for i in sec.get("items") or [])
        return f"secret:{sec.get('secretName')}" + (f"[{items}]" if items else "")
    if "emptyDir" in volume:
        return "emptyDir"
    return _j(volume)


def _env(value: Obj) -> str:
    if "value" in value or "valueFrom" not in value:
        return f"{value['name']}={value.get('value', '')}"
    ref = value["valueFrom"]
    if "fieldRef" in ref:
        return f"{value['name']}<-field:{ref['fieldRef']['fieldPath']}"
    return f"{value['name']}<-{_j(ref)}"


def _script(arg: Any) -> Any:
    """A shell script argument without its comment lines (what it runs is the fact)."""
    if not isinstance(arg, str) or "\n" not in arg:
        return arg
    return "\n".join(line for line in arg.splitlines() if not line.lstrip().startswith("#")).rstrip("\n")


def container_facts(ctr: Obj, volumes: dict[str, Obj], role: str) -> set[str]:
    name = f"{role} {ctr['name']}"
    out = {f"{name} image {ctr.get('image')}", f"{name} pullPolicy {ctr.get('imagePullPolicy', 'IfNotPresent')}"}
    if ctr.get("command"):
        out.add(f"{name} command {_j(ctr['command'])}")
    if ctr.get("args"):
        out.add(f"{name} args {_j([_script(a) for a in ctr['args']])}")
    for env in ctr.get("env") or []:
        out.add(f"{name} env {_env(env)}")
    for source in ctr.get("envFrom") or []:
        out.add(f"{name} envFrom {_j(source)}")
    for m in ctr.get("volumeMounts") or []:
        vol = volumes.get(m["name"], {"missing": m["name"]})
        opts = [f"sub={m['subPath']}" if m.get("subPath") else "", "ro" if m.get("readOnly") else "", m.get("mountPropagation", "")]
        out.add(f"{name} mount {m['mountPath']} <- {_source(vol)} {' '.join(o for o in opts if o)}".rstrip())
    for probe in ("startupProbe", "livenessProbe", "readinessProbe"):
        if probe in ctr:
            out.add(f"{name} {probe} {_j(ctr[probe])}")
    if ctr.get("securityContext"):
        out.add(f"{name} securityContext {_j(ctr['securityContext'])}")
    if ctr.get("resources"):
        out.add(f"{name} resources {_j(ctr['resources'])}")
    if ctr.get("lifecycle"):
        out.add(f"{name} lifecycle {_j(ctr['lifecycle'])}")
    return out


def _listed_facts(spec: Obj) -> set[str]:
    """A pod's node selector, tolerations, pull secrets and resource claims."""
    out = {f"pod nodeSelector {k}={v}" for k, v in (spec.get("nodeSelector") or {}).items()}
    out |= {f"pod toleration {_j(tol)}" for tol in spec.get("tolerations") or []}
    out |= {f"pod imagePullSecret {secret['name']}" for secret in spec.get("imagePullSecrets") or []}
    return out | {f"pod resourceClaim {claim['name']}" for claim in spec.get("resourceClaims") or []}


def pod_facts(obj: Obj) -> set[str]:
    """Facts of a DaemonSet or Deployment (its pod template, the labels that select it, how it rolls)."""
    template = obj["spec"]["template"]
    spec = template["spec"]
    volumes = {v["name"]: v for v in spec.get("volumes") or []}
    out: set[str] = set()
    for ctr in spec.get("initContainers") or []:
        out |= container_facts(ctr, volumes, "init")
    for ctr in spec.get("containers") or []:
        out |= container_facts(ctr, volumes, "container")
    for key in ("hostPID", "hostIPC", "hostNetwork", "dnsPolicy", "terminationGracePeriodSeconds", "priorityClassName", "runtimeClassName", "enableServiceLinks"):
        if key in spec:
            out.add(f"pod {key} {spec[key]}")
    out |= _listed_facts(spec)
    anti = (spec.get("affinity") or {}).get("podAntiAffinity")
    if anti:
        out.add(f"pod podAntiAffinity {_j(anti)}")
    preferred = ((spec.get("affinity") or {}).get("nodeAffinity") or {}).get("preferredDuringSchedulingIgnoredDuringExecution")
    if preferred:
        out.add(f"pod preferredNodeAffinity {_j(preferred)}")
    for key, value in (template["metadata"].get("labels") or {}).items():
        if key in SELECTING_LABELS:
            out.add(f"pod label {key}={value}")
    if obj["spec"].get("updateStrategy"):
        out.add(f"updateStrategy {_j(obj['spec']['updateStrategy'])}")
    if obj["kind"] == "Deployment":
        out.add(f"replicas {obj['spec'].get('replicas', 1)}")
        if obj["spec"].get("strategy"):
            out.add(f"strategy {_j(obj['spec']['strategy'])}")
    return out


def rbac_facts(obj: Obj) -> set[str]:
    """``<Kind> <group>/<resource> <verb>`` for every verb of every rule."""
    out: set[str] = set()
    scope = "cluster" if obj["kind"] == "ClusterRole" else "namespace"
    for rule in obj.get("rules") or []:
        names = ",".join(rule.get("resourceNames") or [])
        for group in rule.get("apiGroups") or [""]:
            for resource in rule.get("resources") or []:
                for verb in rule.get("verbs") or []:
                    out.add(f"rbac {scope} {group or 'core'}/{resource}{'[' + names + ']' if names else ''} {verb}")
    return out


def dra_facts(obj: Obj) -> set[str]:
    """A DeviceClass (by name: claims name it), a ResourceClaimTemplate's claim, an admission
    policy's rules and its binding's actions (not the names that tie them)."""
    spec = obj.get("spec") or {}
    if obj["kind"] == "DeviceClass":
        return {f"deviceClass {obj['metadata']['name']} {_j(spec)}"}
    if obj["kind"] == "ResourceClaimTemplate":
        return {f"claimTemplate {_j(spec.get('spec'))}"}
    if obj["kind"] == "ValidatingAdmissionPolicy":
        return {f"admissionPolicy {_j(spec)}"}
    return {f"admissionPolicyBinding {_j({k: v for k, v in spec.items() if k != 'policyName'})}"}


DRA_KINDS = ("DeviceClass", "ResourceClaimTemplate", "ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding")
KINDS = ("DaemonSet", "Deployment", "Role", "ClusterRole", *DRA_KINDS)
"""The kinds whose objects have facts."""


def object_facts(objs: list[Obj]) -> set[str]:
    out: set[str] = set()
    for obj in objs:
        if obj["kind"] in ("DaemonSet", "Deployment"):
            out |= pod_facts(obj)
        elif obj["kind"] in ("Role", "ClusterRole"):
            out |= rbac_facts(obj)
        elif obj["kind"] in DRA_KINDS:
            out |= dra_facts(obj)
    return out
