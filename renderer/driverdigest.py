"""``DRIVER_CONFIG_DIGEST``: the operator's hash of a driver pod's install-relevant settings.

The GPU Operator (v26.7, ClusterPolicy path) extracts a ``DriverInstallState`` from the
finished driver pod spec (``extractDriverInstallConfig`` in ``controllers/object_controls.go``)
and hashes its non-empty fields (``utils.GetObjectHashIgnoreEmptyKeys``): for each field, in
alphabetical order of the field names, ``Name:`` followed by go-spew's ``%#v`` rendering of the
value, all fed to FNV-32a; the decimal hash is the digest. k8s-driver-manager and the driver
container compare it with the one the node last installed: equal means restart only (no
reinstall, no eviction).

This module rebuilds the same text from the rendered pod spec, so the digest is a pure
function of it. Only the shapes the state holds are needed: strings, booleans, string lists
and lists of the three small records below.
"""

from __future__ import annotations

from typing import Any

# Field -> Go type of DriverInstallState (internal/config/driver_config_digest.go, v26.7).
FIELDS: dict[str, str] = {
    "DriverImage": "string",
    "DriverManagerImage": "string",
    "PeermemImage": "string",
    "GDSImage": "string",
    "GDRCopyImage": "string",
    "DTKImage": "string",
    "DriverType": "string",
    "KernelModuleType": "string",
    "DriverCommand": "[]string",
    "DriverArgs": "[]string",
    "DriverEnv": "[]config.EnvVar",
    "ManagerEnv": "[]config.EnvVar",
    "GDSEnv": "[]config.EnvVar",
    "GDRCopyEnv": "[]config.EnvVar",
    "SecretEnvSource": "string",
    "GPUDirectRDMAEnabled": "bool",
    "UseHostMOFED": "bool",
    "GDSEnabled": "bool",
    "GDRCopyEnabled": "bool",
    "LicensingConfigName": "string",
    "VirtualTopologyConfig": "string",
    "KernelModuleConfig": "string",
    "RepoConfig": "string",
    "CertConfig": "string",
    "UsePrecompiled": "bool",
    "KernelVersion": "string",
    "OpenshiftVersion": "string",
    "DTKEnabled": "bool",
    "RHCOSVersion": "string",
    "HTTPProxy": "string",
    "HTTPSProxy": "string",
    "NoProxy": "string",
    "TrustedCAConfigMapName": "string",
    "AdditionalVolumes": "[]config.VolumeConfig",
    "AdditionalVolumeMounts": "[]config.VolumeMountConfig",
    "HostRoot": "string",
}
# Record fields in declaration order (go-spew prints every field of a struct, empty or not).
RECORDS: dict[str, tuple[tuple[str, str], ...]] = {
    "config.EnvVar": (("Name", "string"), ("Value", "string")),
    "config.VolumeConfig": (("Name", "string"), ("ConfigMapName", "string"), ("SecretName", "string"), ("HostPath", "string")),
    "config.VolumeMountConfig": (("Name", "string"), ("MountPath", "string"), ("SubPath", "string"), ("ReadOnly", "bool")),
}


def fnv32a(data: bytes, h: int = 0x811C9DC5) -> int:
    """FNV-1a, 32 bits (``h``: the state to go on from, the offset basis to start). Four bytes a
    step, reduced once: a byte's xor only touches the low bits, so reducing modulo 2**32 after
    four steps gives what reducing after each does."""
    prime, mask = 0x01000193, 0xFFFFFFFF
    whole = len(data) - len(data) % 4
    quads = iter(data[:whole])
    for a, b, c, d in zip(quads, quads, quads, quads, strict=True):
        h = (((((h ^ a) * prime ^ b) * prime ^ c) * prime ^ d) * prime) & mask
    for byte in data[whole:]:
        h = ((h ^ byte) * prime) & mask
    return h


def _plain(value: Any, go_type: str) -> str:
    """go-spew's ``%#v`` of a value whose type was already printed (or is elided in a list)."""
    if go_type == "string":
        return str(value)
    if go_type == "bool":
        return "true" if value else "false"
    if go_type.startswith("[]"):
        item = go_type[2:]
        if item == "string":
            return "[" + " ".join([str(v) for v in value]) + "]"
        if item in RECORDS:
            return "[" + " ".join([_record(v, item) for v in value]) + "]"
        return "[" + " ".join([_plain(v, item) for v in value]) + "]"
    return _record(value, go_type)


def _record(value: dict[str, Any], go_type: str) -> str:
    """go-spew's ``%#v`` of a record: every field, in declaration order, a missing one empty."""
    fields = _RECORD_TEXT[go_type]
    return "{" + " ".join([head + (str(value.get(name, "")) if text else ("true" if value.get(name) else "false")) for name, head, text in fields]) + "}"


_RECORD_TEXT = {go_type: tuple((name, f"{name}:({t})", t == "string") for name, t in fields) for go_type, fields in RECORDS.items()}
"""Of each record: (field, ``Name:(type)``, whether it is a string; else a bool)."""


def digest(state: dict[str, Any]) -> str:
    """``GetObjectHashIgnoreEmptyKeys`` of a DriverInstallState given as ``{field: value}``."""
    unknown = set(state) - set(FIELDS)
    if unknown:
        raise KeyError(f"not DriverInstallState fields: {sorted(unknown)}")
    h = 0x811C9DC5
    for name in sorted(state):
        if state[name]:  # field by field, from the state the fields before left (FNV is a fold)
            part = f"{name}:({FIELDS[name]}){_plain(state[name], FIELDS[name])}"
            found = _STEPS.get((h, part))
            if found is None:
                if len(_STEPS) >= _KEEP:
                    _STEPS.clear()
                found = _STEPS[(h, part)] = fnv32a(part.encode("utf-8"), h)
            h = found
    return str(h)


_STEPS: dict[tuple[int, str], int] = {}
"""FNV states by (state before, a field's text). FNV-1a is a byte loop in Python (about 0.2 ms
for a driver pod); the chart analysis builds one pod spec again and again, most builds with
only a few fields changed, so each field's step from a given state is hashed once."""
_KEEP = 16384


def _env(env: list[dict[str, Any]] | None) -> list[dict[str, str]]:
    """Direct-value env vars sorted by name (``ExtractEnvVars``); ``valueFrom`` ones are skipped,
    and so is an entry without a name (none passes the schema: the chart analysis's placeholder
    for a user env list, whose real entries the chart's digest values then come from)."""
    out = [{"name": str(e["name"]), "value": str(e.get("value", ""))} for e in env or [] if "valueFrom" not in e and "name" in e]
    return [{"Name": e["name"], "Value": e["value"]} for e in sorted(out, key=lambda e: e["name"])]


def state_of_pod_spec(spec: dict[str, Any]) -> dict[str, Any]:
    """``extractDriverInstallConfig``: the DriverInstallState of a finished driver pod spec."""
    state: dict[str, Any] = {}
    for init in spec.get("initContainers") or []:
        if init.get("name") == "k8s-driver-manager":
            state["DriverManagerImage"] = init.get("image", "")
            state["ManagerEnv"] = _env(init.get("env"))
    for ctr in spec.get("containers") or []:
        name = ctr.get("name")
        if name == "nvidia-driver-ctr":
            state["DriverImage"] = ctr.get("image", "")
            state["DriverCommand"] = [str(x) for x in ctr.get("command") or []]
            state["DriverArgs"] = [str(x) for x in ctr.get("args") or []]
            state["DriverEnv"] = _env(ctr.get("env"))
            for source in ctr.get("envFrom") or []:
                if "secretRef" in source:
                    state["SecretEnvSource"] = str(source["secretRef"].get("name", ""))
            mounts = [
                {"Name": m["name"], "MountPath": m["mountPath"], "SubPath": m.get("subPath", ""), "ReadOnly": bool(m.get("readOnly"))}
                for m in ctr.get("volumeMounts") or []
                if "name" in m  # (as in _env: the placeholder of a pool's host-file list)
            ]
            state["AdditionalVolumeMounts"] = sorted(mounts, key=lambda m: (m["Name"], m["MountPath"]))
        elif name == "nvidia-peermem-ctr":
            state["PeermemImage"] = ctr.get("image", "")
            state["GPUDirectRDMAEnabled"] = True
        elif name == "nvidia-fs-ctr":
            state["GDSImage"] = ctr.get("image", "")
            state["GDSEnabled"] = True
            state["GDSEnv"] = _env(ctr.get("env"))
        elif name == "nvidia-gdrcopy-ctr":
            state["GDRCopyImage"] = ctr.get("image", "")
            state["GDRCopyEnabled"] = True
            state["GDRCopyEnv"] = _env(ctr.get("env"))
        elif name == "openshift-driver-toolkit-ctr":
            state["DTKImage"] = ctr.get("image", "")
            state["DTKEnabled"] = True
    volumes = [_volume(vol) for vol in spec.get("volumes") or [] if "name" in vol]
    state["AdditionalVolumes"] = sorted(volumes, key=lambda v: v["Name"])
    for record in volumes:
        if record["Name"] == "host-root" and "HostPath" in record:
            state["HostRoot"] = record["HostPath"]
    return state


def _volume(vol: dict[str, Any]) -> dict[str, str]:
    """``ExtractVolumes``: a volume's name and its ConfigMap, Secret or host path."""
    record = {"Name": str(vol["name"])}
    if "configMap" in vol:
        record["ConfigMapName"] = str(vol["configMap"].get("name", ""))
    if "secret" in vol:
        record["SecretName"] = str(vol["secret"].get("secretName", ""))
    if "hostPath" in vol:
        record["HostPath"] = str(vol["hostPath"].get("path", ""))
    return record


def of_pod_spec(spec: dict[str, Any]) -> str:
    """The ``DRIVER_CONFIG_DIGEST`` the operator would set on this driver pod spec."""
    return digest(state_of_pod_spec(spec))
