"""Hand-written Kustomize patches (``overlays/<cluster>/patches/*.yaml``): checks as Problems.

They are strategic-merge patches, one or more documents per file, each naming its target by
apiVersion, kind and metadata.name; they apply after gpu-render's own overlay patches.

A patch is repository content like any other (docs/security.md), so it passes the same rules
as gpu-render's own objects, and more:

* it is read by the one loader (:func:`renderer.loader.load_documents`) with the same limits,
  duplicate keys refused and anchors/aliases refused (Kustomize expands aliases without any
  limit: a 479-byte alias bomb made its repo server use gigabytes);
* it may only target objects this cluster renders (:func:`target_problems`), and may not set
  ``gpu-render.dev/`` annotations or labels (the lint exemption travels there);
* what it adds that needs a justification (:data:`CHECKS`: a privileged container, a host
  namespace, a host path, an added capability, an RBAC rule or binding, a floating image, a
  ``$patch: delete``, ...) is an error at its ``file:line:col`` unless the policy allows that
  check for that file: ``gitops.userPatches.allow: [{file, checks, reason}]``. The rendered
  objects' own exemptions never cover a patch: they are scoped to what gpu-render renders.

The allowed checks and their reasons are written into the copied patch's header
(:func:`header`), where ``gpu-render lint`` reads them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from typing import Any

from renderer import lint
from renderer.loader import MAX_BYTES, Source, load_documents
from renderer.problems import Problem, Severity

UserPatches = tuple[tuple[str, bytes], ...]
"""(file name, raw bytes) per patch file, in file-name order."""

FILE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,200}\.ya?ml")
MAX_PATCH_BYTES = MAX_BYTES
"""A patch file over this size is refused before it is read (and so never copied to the output)."""
RESERVED_PREFIX = "gpu-render.dev/"

CHECKS: dict[str, str] = {
    **{k: v for k, v in lint.CHECKS.items() if k not in ("service-account-token", "secret-rendered")},
    "service-account-token": "the patch mounts a ServiceAccount token (automountServiceAccountToken: true)",
    "service-account": "the patch changes the pod's ServiceAccount (and so its API rights)",
    "host-port": "a container binds a port of the host",
    "rbac-change": "the patch changes RBAC rules, subjects or roleRef",
    "patch-delete": "a $patch directive deletes or replaces (an object, a list or a map)",
    "privileged-code": "the patch changes what a privileged container runs (image, command, args, lifecycle, workingDir, env, envFrom, volumeMounts, an exec probe, or a ConfigMap it mounts), or the runtime handler of a RuntimeClass",
    "access-to-secrets": "an RBAC rule can read Secrets, or the pod gets a Secret's values (a secret volume or projected source, secretKeyRef, secretRef)",
    "host-path": "the pod mounts a folder or file of the host (a hostPath volume, or a container mounting one of the rendered pod's)",
    "host-network": "the pod uses the host's network namespace, or the patch changes its name resolution (hostAliases, dnsConfig, dnsPolicy)",
    "privilege-escalation": "a container allows privilege escalation explicitly, or the patch sets SELinux options (spc_t runs unconfined)",
}
"""What a hand-written patch may only do when the policy allows it (check -> what it finds)."""


def patches_dir(values_path: str) -> str:
    """Display path of a cluster's patch folder, next to its values file."""
    folder = values_path.rsplit("/", 1)[0] if "/" in values_path else "."
    return f"{folder}/patches"


def parse(raw: bytes, path: str = "patch.yaml") -> list[Source]:
    """The documents of a patch file that passed :func:`check_user_patches`."""
    docs, _ = load_documents(raw, path, anchors=False)
    return docs or []


def _problem(path: str, message: str, hint: str = "", line: int = 1, col: int = 1, pointer: str = "", code: str = "user-patch") -> Problem:
    return Problem(path, line, col, pointer, message, hint=hint, code=code)


def _is_smp(doc: Any) -> bool:
    if not isinstance(doc, dict) or not isinstance(doc.get("apiVersion"), str) or not isinstance(doc.get("kind"), str):
        return False
    meta = doc.get("metadata")
    return isinstance(meta, dict) and isinstance(meta.get("name"), str) and bool(meta["name"]) and isinstance(meta.get("namespace", ""), str)


Allowed = dict[str, dict[str, str]]
"""patch file name -> check -> reason."""


def allowances(values: Any) -> Allowed:
    """``gitops.userPatches.allow`` of a cluster's (merged) values, read defensively."""
    gitops = values.get("gitops") if isinstance(values, dict) else None
    section = gitops.get("userPatches") if isinstance(gitops, dict) else None
    entries = section.get("allow") if isinstance(section, dict) else None
    out: Allowed = {}
    for entry in entries if isinstance(entries, list) else []:
        if not isinstance(entry, dict) or not isinstance(entry.get("file"), str) or not isinstance(entry.get("reason"), str):
            continue
        checks = entry.get("checks")
        for check in checks if isinstance(checks, list) else []:
            if isinstance(check, str) and entry["reason"].strip():
                out.setdefault(entry["file"], {})[check] = " ".join(entry["reason"].split()).replace(";", ",")
    return out


def check_user_patches(folder: str, patches: UserPatches, allowed: Allowed | None = None) -> list[Problem]:
    """Each file: an allowed name, within the loader's limits, only strategic-merge patch
    documents, nothing that needs a justification unless ``allowed``."""
    problems: list[Problem] = []
    for name, raw in patches:
        path = f"{folder}/{name}"
        if not FILE_NAME.fullmatch(name):
            problems.append(_problem(path, f"patch file name {name!r} is not allowed", "use letters, digits, '.', '_' and '-', ending in .yaml"))
            continue
        docs, found = load_documents(raw, path, anchors=False)
        if docs is None:
            problems += [_as_patch_problem(p) for p in found]
            continue
        if not docs:
            problems.append(_problem(path, "patch file is empty"))
            continue
        bad = next((d for d in docs if not _is_smp(d.data)), None)
        if bad is not None:
            problems.append(
                _problem(
                    path,
                    "each document must be a strategic-merge patch with apiVersion, kind and metadata.name",
                    "JSON 6902 operation lists have no target here; write the change as a partial object",
                    *bad.locate(""),
                )
            )
            continue
        mine = (allowed or {}).get(name, {})
        for doc in docs:
            for check, pointer, message in findings(doc.data):
                if check in mine:
                    continue
                line, col = doc.locate(pointer)
                hint = (
                    "gpu-render.dev/ annotations and labels are gpu-render's own"
                    if check == "reserved"
                    else f"if this is intended, allow it for this file: gitops.userPatches.allow: [{{file: {name}, checks: [{check}], reason: ...}}]"
                )
                problems.append(_problem(path, f"{check}: {message}", hint, line, col, pointer, code=f"user-patch-{check}"))
    for name in sorted(set(allowed or {}) - {n for n, _ in patches}):
        problems.append(
            Problem(folder, 1, 1, "/gitops/userPatches/allow", f"gitops.userPatches.allow names {name!r}, which is not a patch of this cluster", code="user-patch-allow", severity=Severity.WARNING)
        )
    return problems


def _as_patch_problem(p: Problem) -> Problem:
    if p.code == "root-not-mapping":
        message, hint = "each document must be a strategic-merge patch with apiVersion, kind and metadata.name", "JSON 6902 operation lists have no target here; write the change as a partial object"
    elif p.code == "syntax":
        message, hint = f"patch is not valid YAML: {p.message.removeprefix('YAML syntax error: ')}", p.hint
    else:
        message, hint = f"patch: {p.message}", p.hint
    return Problem(p.file, p.line, p.column, p.pointer, message, hint=hint, code="user-patch", severity=p.severity)


# --- what a patch document adds --------------------------------------------------------


def findings(doc: dict[str, Any]) -> list[tuple[str, str, str]]:
    """``(check, JSON pointer, message)`` for everything a patch document does that needs a
    justification. Unlike :func:`renderer.lint.check_object` it reads a partial object: only
    what the patch itself sets counts (it merges over the rendered object)."""
    out: list[tuple[str, str, str]] = []
    kind = doc.get("kind")
    meta = _dict(doc.get("metadata"))
    for field in ("annotations", "labels"):
        for key in _dict(meta.get(field)):
            if str(key).startswith(RESERVED_PREFIX):
                out.append(("reserved", f"/metadata/{field}/{_esc(key)}", f"a patch may not set the {field[:-1]} {key!r}"))
    for pointer, value in _directives(doc, ""):
        out.append(("patch-delete", pointer, f"$patch: {value}"))
    if kind in ("Role", "ClusterRole") and "rules" in doc:
        out.append(("rbac-change", "/rules", "the patch sets RBAC rules (it replaces the role's whole rule list)"))
        for check, message in lint._check_rules(doc["rules"] if isinstance(doc["rules"], list) else []):
            out.append((check, "/rules", message))
    if kind == "ClusterRole" and "aggregationRule" in doc:
        out.append(("rbac-change", "/aggregationRule", "the patch sets an aggregationRule (the role gains the rules of every ClusterRole it selects)"))
    if kind == "ServiceAccount" and "automountServiceAccountToken" in doc and doc["automountServiceAccountToken"] is not False:
        out.append(("service-account-token", "/automountServiceAccountToken", "the ServiceAccount's token is mounted into every pod that does not say otherwise"))
    if kind == "RuntimeClass" and "handler" in doc:
        out.append(("privileged-code", "/handler", f"the patch sets the RuntimeClass's handler to {doc['handler']!r} (the runtime its pods run in)"))
    if kind in ("RoleBinding", "ClusterRoleBinding"):
        for key in ("subjects", "roleRef"):
            if key in doc:
                out.append(("rbac-change", f"/{key}", f"the patch sets the binding's {key}"))
    if kind == "Secret":
        out.append(("secret-rendered", "", "Secret objects are never rendered; reference an existing Secret by name"))
    pod, base = _pod(doc)
    if pod is not None:
        out += _pod_findings(pod, base)
    return out


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _esc(key: object) -> str:
    return str(key).replace("~", "~0").replace("/", "~1")


def _directives(node: Any, pointer: str) -> Iterator[tuple[str, str]]:
    if isinstance(node, dict):
        for key, value in node.items():
            here = f"{pointer}/{_esc(key)}"
            if str(key).lower() == "$patch" and (not isinstance(value, str) or value != "merge"):
                yield here, str(value)
            elif str(key).lower() == "$retainkeys" or str(key).lower().startswith("$deletefromprimitivelist/"):
                yield here, f"{key} (removes fields)"
            else:
                yield from _directives(value, here)
    elif isinstance(node, list):
        for index, item in enumerate(node):
            yield from _directives(item, f"{pointer}/{index}")


def _pod(doc: dict[str, Any]) -> tuple[dict[str, Any] | None, str]:
    """The pod spec a patch sets, and its pointer."""
    spec = doc.get("spec")
    if not isinstance(spec, dict):
        return None, ""
    if doc.get("kind") == "Pod":
        return spec, "/spec"
    base = "/spec"
    if doc.get("kind") == "CronJob":
        job = spec.get("jobTemplate")
        spec = job.get("spec") if isinstance(job, dict) else None
        base = "/spec/jobTemplate/spec"
        if not isinstance(spec, dict):
            return None, ""
    template = spec.get("template")
    inner = template.get("spec") if isinstance(template, dict) else None
    return (inner, f"{base}/template/spec") if isinstance(inner, dict) else (None, "")


def _pod_findings(pod: dict[str, Any], base: str) -> list[tuple[str, str, str]]:
    out: list[tuple[str, str, str]] = []
    for key, check in (("hostPID", "host-pid"), ("hostIPC", "host-ipc"), ("hostNetwork", "host-network")):
        if pod.get(key) is True:
            out.append((check, f"{base}/{key}", f"{key}: true"))
    if "automountServiceAccountToken" in pod and pod["automountServiceAccountToken"] is not False:
        out.append(("service-account-token", f"{base}/automountServiceAccountToken", f"automountServiceAccountToken: {_json(pod['automountServiceAccountToken'])} (the ServiceAccount's token is mounted)"))
    for key in ("hostAliases", "dnsConfig"):
        if pod.get(key) is not None:
            out.append(("host-network", f"{base}/{key}", f"the patch sets {key} (it changes what the pod's names resolve to)"))
    for key in ("serviceAccountName", "serviceAccount"):
        if key in pod:
            out.append(("service-account", f"{base}/{key}", f"{key}: {pod[key]!r}"))
    host_volumes: set[str] = set()
    for index, volume in enumerate(pod.get("volumes") or [] if isinstance(pod.get("volumes"), list) else []):
        if isinstance(volume, dict) and isinstance(volume.get("hostPath"), dict):
            host_volumes.add(str(volume.get("name")))
            out.append(("host-path", f"{base}/volumes/{index}/hostPath", f"mounts the host path {(volume['hostPath']).get('path')!r}"))
        if isinstance(volume, dict):
            out += _volume_findings(volume, f"{base}/volumes/{index}")
    for pointer, ctr in _containers(pod, base):
        out += _container_findings(ctr, pointer, host_volumes)
    return out


def _json(value: Any) -> str:
    return "null" if value is None else "true" if value is True else "false" if value is False else repr(value)


SECRET_REFS = ("secretRef", "nodePublishSecretRef", "secretName")
"""The fields by which a volume source names a Secret the kubelet reads for it."""


def _volume_findings(volume: dict[str, Any], at: str) -> list[tuple[str, str, str]]:
    """A volume that hands the pod a Secret's values or a ServiceAccount token (the kubelet
    reads them, whatever the pod's own RBAC)."""
    name = volume.get("name")
    out: list[tuple[str, str, str]] = []
    if volume.get("secret") is not None:
        out.append(("access-to-secrets", f"{at}/secret", f"the volume {name} holds the Secret {_dict(volume.get('secret')).get('secretName')!r}"))
    for key, value in volume.items():  # a CSI, CephFS, RBD, ... volume whose Secret the kubelet reads
        ref = next((k for k in SECRET_REFS if isinstance(value, dict) and key not in ("secret", "projected") and value.get(k) is not None), None)
        if ref is not None:
            out.append(("access-to-secrets", f"{at}/{_esc(key)}/{ref}", f"the volume {name} reads the Secret its {key}.{ref} names"))
    sources = _dict(volume.get("projected")).get("sources")
    for index, source in enumerate(sources if isinstance(sources, list) else []):
        if not isinstance(source, dict):
            continue
        if source.get("secret") is not None:
            out.append(("access-to-secrets", f"{at}/projected/sources/{index}/secret", f"the volume {name} holds the Secret {_dict(source.get('secret')).get('name')!r}"))
        if source.get("serviceAccountToken") is not None:
            out.append(("service-account-token", f"{at}/projected/sources/{index}/serviceAccountToken", f"the volume {name} holds a ServiceAccount token"))
    return out


def _containers(pod: dict[str, Any], base: str) -> Iterator[tuple[str, dict[str, Any]]]:
    for key in ("initContainers", "containers", "ephemeralContainers"):
        items = pod.get(key)
        for index, ctr in enumerate(items if isinstance(items, list) else []):
            if isinstance(ctr, dict):
                yield f"{base}/{key}/{index}", ctr


def _container_findings(ctr: dict[str, Any], at: str, host_volumes: set[str]) -> list[tuple[str, str, str]]:
    out: list[tuple[str, str, str]] = []
    name = str(ctr.get("name"))
    ctx = _dict(ctr.get("securityContext"))
    if ctx.get("privileged") is True:
        out.append(("privileged-container", f"{at}/securityContext/privileged", f"container {name} is privileged"))
    if ctx.get("allowPrivilegeEscalation") is True:
        out.append(("privilege-escalation", f"{at}/securityContext/allowPrivilegeEscalation", f"container {name} allows privilege escalation"))
    caps = _dict(ctx.get("capabilities"))
    if caps.get("add"):
        out.append(("added-capabilities", f"{at}/securityContext/capabilities/add", f"container {name} adds {caps['add']}"))
    if "image" in ctr and lint._floating(str(ctr.get("image") or "")):
        out.append(("latest-tag", f"{at}/image", f"container {name} uses the image {ctr.get('image')!r} (no tag or digest, or ':latest')"))
    mounts = ctr.get("volumeMounts")
    for index, mount in enumerate(mounts if isinstance(mounts, list) else []):
        if isinstance(mount, dict) and str(mount.get("name")) in host_volumes and mount.get("readOnly") is not True:
            out.append(("writable-host-mount", f"{at}/volumeMounts/{index}", f"container {name} mounts host volume {mount.get('name')!r} read-write"))
    ports = ctr.get("ports")
    for index, port in enumerate(ports if isinstance(ports, list) else []):
        if isinstance(port, dict) and port.get("hostPort"):
            out.append(("host-port", f"{at}/ports/{index}/hostPort", f"container {name} binds host port {port['hostPort']}"))
    out += _env_findings(ctr, at, name)
    return out


def _env_findings(ctr: dict[str, Any], at: str, name: str) -> list[tuple[str, str, str]]:
    out: list[tuple[str, str, str]] = []
    env = ctr.get("env")
    for index, item in enumerate(env if isinstance(env, list) else []):
        if not isinstance(item, dict):
            continue
        if item.get("value") and lint._SECRET_ENV.search(str(item.get("name", ""))):
            out.append(("env-var-secret", f"{at}/env/{index}/value", f"container {name} sets {item['name']} to a literal value"))
        ref = _dict(item.get("valueFrom")).get("secretKeyRef")
        if ref is not None:
            out.append(("access-to-secrets", f"{at}/env/{index}/valueFrom/secretKeyRef", f"container {name} reads {item.get('name')} from the Secret {_dict(ref).get('name')!r}"))
    env_from = ctr.get("envFrom")
    for index, item in enumerate(env_from if isinstance(env_from, list) else []):
        if isinstance(item, dict) and item.get("secretRef") is not None:
            out.append(("access-to-secrets", f"{at}/envFrom/{index}/secretRef", f"container {name} reads every key of the Secret {_dict(item.get('secretRef')).get('name')!r}"))
    return out


# --- against the cluster's render ------------------------------------------------------


def target_problems(folder: str, rendered: Iterable[tuple[str, str, str, str]], patches: UserPatches, objects: Iterable[dict[str, Any]] = (), allowed: Allowed | None = None) -> list[Problem]:
    """Patches whose target (apiVersion, kind, namespace, name) the cluster does not render,
    and (with the rendered ``objects``) containers that mount one of the target's host-path
    volumes read-write.

    Kustomize matches a strategic-merge patch on all four: a namespaced object's patch must
    name its namespace. What a rendered privileged container runs is privileged too: a patch
    that changes its image, command, args, lifecycle hooks or working folder trips
    ``privileged-code`` (the container's privilege came with gpu-render's own exemption, which
    never covers a patch).
    """
    known = set(rendered)
    by_id = {_ident(o): o for o in objects}
    problems: list[Problem] = []
    for fname, raw in patches:
        path = f"{folder}/{fname}"
        for source in parse(raw, path):
            doc = source.data
            key = _ident(doc)
            if key not in known:
                problems.append(_problem(path, *_missing(key, known), *source.locate("/metadata/name")))
                continue
            target = by_id.get(key)
            mine = (allowed or {}).get(fname, {})
            for pointer, message in [*_shape(doc, target, ""), *_directive_shapes(doc, "")] if target is not None else ():
                line, col = source.locate(pointer)
                problems.append(_problem(path, message, "write the patch in the shape of the rendered object (kubectl kustomize refuses it otherwise)", line, col, pointer, code="user-patch-shape"))
            if target is not None and "privileged-code" not in mine and doc.get("kind") == "ConfigMap":
                for reader in _privileged_readers(str(_dict(doc.get("metadata")).get("name")), by_id.values()):
                    line, col = source.locate("/metadata/name")
                    hint = f"if this is intended, allow it for this file: gitops.userPatches.allow: [{{file: {fname}, checks: [privileged-code], reason: ...}}]"
                    problems.append(_problem(path, f"privileged-code: the patch changes a ConfigMap that the privileged container {reader} mounts", hint, line, col, "/metadata/name", code="user-patch-privileged-code"))
            pod, base = _pod(doc)
            real = lint.pod_spec(target) if target is not None else None
            if pod is None or real is None:
                continue
            for check, pointer, message in _against_pod(pod, base, real):
                if check in mine:
                    continue
                hint = (
                    "allow it for this file (gitops.userPatches.allow) if intended, or set readOnly: true"
                    if check == "writable-host-mount"
                    else f"if this is intended, allow it for this file: gitops.userPatches.allow: [{{file: {fname}, checks: [{check}], reason: ...}}]"
                )
                line, col = source.locate(pointer)
                problems.append(_problem(path, f"{check}: {message}", hint, line, col, pointer, code=f"user-patch-{check}"))
    return problems


def _against_pod(pod: dict[str, Any], base: str, real: dict[str, Any]) -> list[tuple[str, str, str]]:
    """What a patch of a rendered pod does that only the render shows: mounts of the pod's
    host-path volumes, a changed dnsPolicy, changes of what its privileged containers run."""
    out = _host_mounts(pod, base, real)
    if "dnsPolicy" in pod and (pod["dnsPolicy"] or "ClusterFirst") != (real.get("dnsPolicy") or "ClusterFirst"):
        out.append(("host-network", f"{base}/dnsPolicy", f"the patch changes dnsPolicy from {real.get('dnsPolicy') or 'ClusterFirst'!r} to {pod['dnsPolicy']!r} (what the pod's names resolve to)"))
    return out + _selinux(pod, base, real) + _privileged_code(pod, base, real)


def _selinux(pod: dict[str, Any], base: str, real: dict[str, Any]) -> list[tuple[str, str, str]]:
    """SELinux options a patch sets on the pod or a container that differ from the render's
    (``type: spc_t`` runs the container unconfined; restating the render's is no change)."""
    out: list[tuple[str, str, str]] = []
    ctx = _dict(pod.get("securityContext"))
    if "seLinuxOptions" in ctx and ctx["seLinuxOptions"] != _dict(real.get("securityContext")).get("seLinuxOptions"):
        out.append(("privilege-escalation", f"{base}/securityContext/seLinuxOptions", "the patch sets the pod's SELinux options"))
    rendered = {(key, str(ctr.get("name"))): ctr for key, _, ctr in _keyed_containers(real, "")}
    for key, at, ctr in _keyed_containers(pod, base):
        mine = _dict(ctr.get("securityContext"))
        theirs = _dict(_dict(rendered.get((key, str(ctr.get("name"))))).get("securityContext"))
        if "seLinuxOptions" in mine and mine["seLinuxOptions"] != theirs.get("seLinuxOptions"):
            out.append(("privilege-escalation", f"{at}/securityContext/seLinuxOptions", f"the patch sets the SELinux options of container {ctr.get('name')}"))
    return out


def _keyed_containers(pod: dict[str, Any], base: str) -> Iterator[tuple[str, str, dict[str, Any]]]:
    """(list name, pointer, container) of a pod: containers of one list merge by name."""
    for at, ctr in _containers(pod, base):
        yield at.rsplit("/", 2)[-2], at, ctr


def _host_mounts(pod: dict[str, Any], base: str, real: dict[str, Any]) -> list[tuple[str, str, str]]:
    """Mounts a patch makes of the rendered pod's host-path volumes, each merged as strategic
    merge does (volumeMounts merge by ``mountPath``) over the rendered container's mount:
    read-write (``writable-host-mount``), or read-only by a container that did not mount that
    volume (a container the patch adds: ``host-path``, it reads the node's files)."""
    host = {str(v.get("name")): _dict(v.get("hostPath")).get("path") for v in real.get("volumes") or [] if isinstance(v, dict) and isinstance(v.get("hostPath"), dict)}
    rendered = {(key, str(ctr.get("name"))): ctr for key, _, ctr in _keyed_containers(real, "")}
    out: list[tuple[str, str, str]] = []
    for key, at, ctr in _keyed_containers(pod, base):
        name = str(ctr.get("name"))
        have = _dicts(rendered.get((key, name), {}).get("volumeMounts"))
        mounts = ctr.get("volumeMounts")
        for index, mount in enumerate(mounts if isinstance(mounts, list) else []):
            if not isinstance(mount, dict):
                continue
            match = next((m for m in have if "mountPath" in mount and m.get("mountPath") == mount.get("mountPath")), None)
            merged = {**(match or {}), **mount}
            volume = str(merged.get("name"))
            if volume not in host:
                continue
            by_name = str(mount.get("name")) in host and mount.get("readOnly") is not True
            by_path = match is not None and ("readOnly" in mount or "name" in mount) and merged.get("readOnly") is not True
            if by_name or by_path:
                out.append(("writable-host-mount", f"{at}/volumeMounts/{index}", f"container {name} mounts host volume {volume!r} read-write"))
            elif volume not in {str(m.get("name")) for m in have}:
                out.append(("host-path", f"{at}/volumeMounts/{index}", f"container {name} mounts the pod's host volume {volume!r} (host path {host[volume]!r})"))
    return out


def _dicts(value: Any) -> list[dict[str, Any]]:
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []


def _directive_shapes(node: Any, pointer: str) -> Iterator[tuple[str, str]]:
    """Strategic-merge directives Kustomize cannot read: a ``$setElementOrder/``,
    ``$retainKeys`` or ``$deleteFromPrimitiveList/`` that is no list of scalars or maps, a
    ``$patch`` that is none of merge, replace and delete."""
    if isinstance(node, list):
        for index, item in enumerate(node):
            yield from _directive_shapes(item, f"{pointer}/{index}")
        return
    if not isinstance(node, dict):
        return
    for key, value in node.items():
        at = f"{pointer}/{_esc(key)}"
        lower = str(key).lower()
        if lower.startswith(("$setelementorder/", "$deletefromprimitivelist/")) or lower == "$retainkeys":
            if not isinstance(value, list):
                yield at, f"user-patch-shape: {at} is a {_kind(value)} where {str(key).split('/')[0]} takes a list"
                continue
            for index, item in enumerate(value):
                if isinstance(item, list) or item is None:
                    yield f"{at}/{index}", f"user-patch-shape: {at}/{index} is a {_kind(item)} where {str(key).split('/')[0]} takes a scalar or a map"
        elif lower == "$patch":
            if not isinstance(value, str) or value.lower() not in ("merge", "replace", "delete"):
                yield at, f"user-patch-shape: {at} is {_json(value)}, not a $patch directive (merge, replace or delete)"
        else:
            yield from _directive_shapes(value, at)


RUNS = ("image", "command", "args", "lifecycle", "workingDir", "env", "envFrom", "volumeMounts")
"""The fields of a container that say what it runs (an environment variable such as
``LD_PRELOAD`` or ``PATH``, or a mount over its binaries, changes it as much as its command)."""
PROBES = ("livenessProbe", "readinessProbe", "startupProbe")
"""Probes, whose ``exec`` runs a command in the container."""


def _privileged_code(pod: dict[str, Any], base: str, real: dict[str, Any]) -> list[tuple[str, str, str]]:
    """What a patch changes of what the rendered pod's privileged containers run."""
    privileged = {
        str(ctr.get("name"))
        for _, ctr in _containers(real, "")
        if _dict(ctr.get("securityContext")).get("privileged") is True
    }
    out: list[tuple[str, str, str]] = []
    if privileged and "runtimeClassName" in pod and pod["runtimeClassName"] != real.get("runtimeClassName"):
        out.append(("privileged-code", f"{base}/runtimeClassName", f"the patch changes the runtimeClassName of a pod with privileged containers to {pod['runtimeClassName']!r}"))
    mounted: dict[str, str] = {}  # volume -> a privileged container that mounts it
    for _, ctr in _containers(real, ""):
        mounts = ctr.get("volumeMounts")
        if str(ctr.get("name")) in privileged and isinstance(mounts, list):
            mounted.update({str(m.get("name")): str(ctr.get("name")) for m in mounts if isinstance(m, dict)})
    volumes = pod.get("volumes")
    for index, volume in enumerate(volumes if isinstance(volumes, list) else []):
        if isinstance(volume, dict) and str(volume.get("name")) in mounted:  # its source is what the container reads
            out.append(("privileged-code", f"{base}/volumes/{index}", f"the patch changes the volume {volume.get('name')} that the privileged container {mounted[str(volume.get('name'))]} mounts"))
    for at, ctr in _containers(pod, base):
        name = str(ctr.get("name"))
        if name not in privileged:
            continue
        for field in RUNS:
            if field in ctr:
                out.append(("privileged-code", f"{at}/{field}", f"the patch sets {field} of the privileged container {name}"))
        for field in PROBES:
            if "exec" in _dict(ctr.get(field)):
                out.append(("privileged-code", f"{at}/{field}/exec", f"the patch sets a command the privileged container {name} runs ({field})"))
    return out


def _privileged_readers(config_map: str, objects: Iterable[dict[str, Any]]) -> list[str]:
    """The privileged containers of the render that mount the ConfigMap ``config_map`` (its
    data is what they run: the device plugin's and the driver's entrypoint scripts)."""
    out: list[str] = []
    for obj in objects:
        pod = lint.pod_spec(obj)
        if pod is None:
            continue
        volumes = {
            str(v.get("name"))
            for v in pod.get("volumes") or []
            if isinstance(v, dict) and config_map in _config_maps_of(v)
        }
        for _, ctr in _containers(pod, ""):
            mounts = ctr.get("volumeMounts")
            listed = mounts if isinstance(mounts, list) else []
            if _dict(ctr.get("securityContext")).get("privileged") is True and any(isinstance(m, dict) and str(m.get("name")) in volumes for m in listed):
                out.append(f"{_dict(obj.get('metadata')).get('name')}/{ctr.get('name')}")
    return sorted(set(out))


def _config_maps_of(volume: dict[str, Any]) -> set[str]:
    """The ConfigMaps a pod volume reads (``configMap`` or a ``projected`` source)."""
    names = {str(_dict(volume.get("configMap")).get("name"))} if "configMap" in volume else set()
    sources = _dict(volume.get("projected")).get("sources")
    for source in sources if isinstance(sources, list) else []:
        if isinstance(source, dict) and "configMap" in source:
            names.add(str(_dict(source.get("configMap")).get("name")))
    return names


CONTAINER_FIELDS: dict[str, type] = {
    **dict.fromkeys(("args", "command", "env", "envFrom", "ports", "volumeMounts", "volumeDevices"), list),
    **dict.fromkeys(("resources", "securityContext", "lifecycle", *PROBES), dict),
}
"""The shape of a container's fields, for those a patch sets that the rendered container lacks."""
MERGE_KEYS = ("name", "mountPath", "containerPort", "devicePath")
"""What strategic merge matches list items by (the first the items have, unless the list has
its own key in :data:`LIST_KEYS`)."""
LIST_KEYS = {"volumeMounts": "mountPath", "ports": "containerPort", "volumeDevices": "devicePath"}
"""The merge key of a container's lists that do not merge by ``name`` (a volume mount has a
name too, but strategic merge matches it by its mountPath)."""


def _shape(patch: Any, real: Any, pointer: str, fields: dict[str, type] | None = None) -> Iterator[tuple[str, str]]:
    """Where a patch gives a value of another shape than the rendered object has there (a map
    for a list, a scalar for a map, ...): Kustomize's merge refuses such a patch ("wrong node
    kind"), so the cluster would never sync. ``null`` (a strategic-merge delete) and ``$``
    directives are not shapes. ``fields``: the shapes of the keys of a container."""
    if patch is None:
        return
    want = dict if isinstance(real, dict) else list if isinstance(real, list) else None
    if want is None:
        if isinstance(patch, (dict, list)) and real is not None:
            yield pointer or "/", f"user-patch-shape: {pointer or '/'} is a {_kind(patch)} where the rendered object has a {_kind(real)}"
        return
    if not isinstance(patch, want):
        yield pointer or "/", f"user-patch-shape: {pointer or '/'} is a {_kind(patch)} where the rendered object has a {_kind(real)}"
        return
    if isinstance(patch, dict):
        for key, value in patch.items():
            at = f"{pointer}/{_esc(key)}"
            if str(key).startswith("$"):
                continue
            if key in real:
                yield from _shape(value, real[key], at, CONTAINER_FIELDS if key in ("containers", "initContainers") else None)
            elif fields and key in fields and value is not None and not isinstance(value, fields[key]):
                yield at, f"user-patch-shape: {at} is a {_kind(value)} where a container has a {_kind(fields[key]())}"
        return
    items = [i for i in real if isinstance(i, dict)]
    for index, item in enumerate(patch):
        at = f"{pointer}/{index}"
        if items and not isinstance(item, dict):
            yield at, f"user-patch-shape: {at} is a {_kind(item)} where the rendered list holds maps"
            continue
        if not isinstance(item, dict):
            continue
        own = LIST_KEYS.get(pointer.rsplit("/", 1)[-1])
        key = own if own is not None and own in item else next((k for k in MERGE_KEYS if k in item), None)
        match = next((i for i in items if key is not None and i.get(key) == item.get(key)), None)
        if match is not None:
            yield from _shape(item, match, at, fields)
        elif fields:
            yield from _shape(item, {k: v() for k, v in fields.items() if k in item}, at)


def _kind(value: Any) -> str:
    return "map" if isinstance(value, dict) else "list" if isinstance(value, list) else "null" if value is None else "scalar"


def _ident(doc: dict[str, Any]) -> tuple[str, str, str, str]:
    meta = _dict(doc.get("metadata"))
    return (str(doc.get("apiVersion")), str(doc.get("kind")), str(meta.get("namespace") or ""), str(meta.get("name")))


def _missing(key: tuple[str, str, str, str], known: set[tuple[str, str, str, str]]) -> tuple[str, str]:
    near = sorted(k for k in known if k[1] == key[1] and k[3] == key[3])
    hint = "check the kind and name, and whether the component is enabled for this cluster"
    if near:
        api, _, ns, _ = near[0]
        hint = f"the cluster renders it as apiVersion {api}" + (f" in namespace {ns}" if ns else ", cluster-scoped") + "; the patch must say the same"
    where = f" in namespace {key[2]}" if key[2] else ""
    return f"patch targets {key[0]} {key[1]}/{key[3]}{where}, which this cluster does not render", hint


# --- the copied patch's header ---------------------------------------------------------

ALLOWED_MARK = " Allowed by the policy: "
"""Where the ``# Copied from`` header line of a copied patch lists what the policy allowed it."""


def header(cluster: str, name: str, allowed: dict[str, str]) -> str:
    """The header of a copied patch: generated, its source, and what the policy allowed it.

    All on gpu-render's own two lines: the patch's own text starts on the third, so nothing it
    says can read as an allowance (:func:`read_allowed` reads only line 2)."""
    from renderer import yamlio

    line = f"# Copied from overlays/{cluster}/patches/{name}; edit it there."
    if allowed:
        line += ALLOWED_MARK + lint.format_exemptions(allowed)
    return f"{yamlio.HEADER}{line}\n"


def read_allowed(text: str) -> dict[str, str] | None:
    """What a copied patch's header allows (check -> reason), or None when ``text`` is not a
    patch gpu-render copied."""
    from renderer import yamlio

    first, _, rest = text.partition("\n")
    second = rest.partition("\n")[0]
    if f"{first}\n" != yamlio.HEADER or not second.startswith("# Copied from "):
        return None
    _, mark, allowed = second.partition(ALLOWED_MARK)
    return lint.parse_exemptions(allowed) if mark else {}
