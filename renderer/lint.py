"""Security checks on rendered Kubernetes objects, kube-linter style (pure: no disk access).

``check_object(obj)`` lists what an object does that needs a justification: privileged
containers, host namespaces, host paths, ServiceAccount tokens, wildcard RBAC, rendered
Secrets, floating image tags. An object carries its justifications in the annotation
``gpu-render.dev/lint-exempt: "check=reason; check=reason"``; gpu-render writes it for the
privileges its components need (see :mod:`renderer.security`). ``lint(documents)`` returns
every finding, exempted or not; ``gpu-render lint`` fails on the unexempted ones.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

Obj = dict[str, Any]

EXEMPT_ANNOTATION = "gpu-render.dev/lint-exempt"
"""The combined form: ``check=reason`` parts joined with ``; `` (read, no longer written)."""
EXEMPT_PREFIX = EXEMPT_ANNOTATION + "."
"""One annotation per check, ``gpu-render.dev/lint-exempt.<check>: <reason>`` (written by
gpu-render): each is one map entry, so a chart template switches each on its own condition."""

CHECKS: dict[str, str] = {
    "privileged-container": "a container runs with securityContext.privileged",
    "privilege-escalation": "a container allows privilege escalation explicitly",
    "added-capabilities": "a container adds Linux capabilities",
    "host-pid": "the pod shares the host's process namespace",
    "host-ipc": "the pod shares the host's IPC namespace",
    "host-network": "the pod uses the host's network namespace",
    "host-path": "the pod mounts a folder or file of the host",
    "writable-host-mount": "a container mounts a host path read-write",
    "service-account-token": "the pod mounts a ServiceAccount token (the API is reachable with its rights)",
    "wildcard-rbac": "an RBAC rule uses '*' for groups, resources or verbs",
    "access-to-secrets": "an RBAC rule can read Secrets",
    "rbac-escalation": "an RBAC rule grants escalate, bind or impersonate",
    "secret-rendered": "a Secret object is part of the output (only references belong there)",
    "env-var-secret": "an environment variable carries a literal secret-looking value",
    "latest-tag": "an image has no tag or digest, or uses ':latest'",
}

_WORKLOADS = {"DaemonSet", "Deployment", "StatefulSet", "ReplicaSet", "Job", "ReplicationController"}
_SECRET_ENV = re.compile(r"(?i)(passw(or)?d|secret|token|api_?key|private_?key|credentials?)$")


@dataclass(frozen=True, order=True)
class Finding:
    file: str
    kind: str
    namespace: str
    name: str
    check: str
    message: str
    exempt: str = ""
    """The justification from the object's annotation, or empty when not exempted."""

    @property
    def where(self) -> str:
        ns = f"{self.namespace}/" if self.namespace else ""
        return f"{self.kind}/{ns}{self.name}"

    def format(self) -> str:
        text = f"{self.file}: {self.where}: {self.check}: {self.message}"
        return f"{text} (exempt: {self.exempt})" if self.exempt else text

    def to_json(self) -> dict[str, str]:
        return {
            "file": self.file,
            "kind": self.kind,
            "namespace": self.namespace,
            "name": self.name,
            "check": self.check,
            "message": self.message,
            "exempt": self.exempt,
        }


def _map(value: Any) -> Obj:
    """``value`` if it is a mapping, else an empty one: a field of the wrong shape is skipped
    by the checks that read it (the API server rejects such an object; linting never fails)."""
    return value if isinstance(value, dict) else {}


def _seq(value: Any) -> list[Any] | tuple[Any, ...]:
    """``value`` if it is a list (or tuple), else an empty one (see :func:`_map`)."""
    return value if isinstance(value, (list, tuple)) else ()


def _text(value: Any) -> str:
    """``str(value)``, or a placeholder for a value Python refuses to print: an integer longer
    than ``sys.get_int_max_str_digits()`` (YAML reads a long hex number as one), or a list or
    mapping holding one."""
    try:
        return str(value)
    except ValueError:
        return f"<{type(value).__name__} too long to print>"


def pod_spec(obj: Obj) -> Obj | None:
    """The pod spec of a Pod, a workload or a CronJob; None for other kinds (and for a spec of
    the wrong shape)."""
    kind = obj.get("kind")
    spec = obj.get("spec")
    if not isinstance(spec, dict) or not isinstance(kind, str):
        return None
    if kind == "Pod":
        return spec
    if kind == "CronJob":
        spec = _map(spec.get("jobTemplate") or {}).get("spec") or {}
    elif kind not in _WORKLOADS:
        return None
    template = spec.get("template") if isinstance(spec, dict) else None
    inner = template.get("spec") if isinstance(template, dict) else None
    return inner if isinstance(inner, dict) else None


def containers(pod: Obj) -> list[Obj]:
    found: list[Obj] = []
    for key in ("initContainers", "containers", "ephemeralContainers"):
        found += [c for c in _seq(pod.get(key) or []) if isinstance(c, dict)]
    return found


def check_object(obj: Obj) -> list[tuple[str, str]]:
    """``(check, message)`` for everything ``obj`` does that needs a justification."""
    return object_findings(obj, pod_spec(obj))


def object_findings(obj: Obj, pod: Obj | None) -> list[tuple[str, str]]:
    """:func:`check_object` given ``pod_spec(obj)`` (``security.harden`` has it already)."""
    out: list[tuple[str, str]] = []
    kind = obj.get("kind")
    if kind == "Secret":
        out.append(("secret-rendered", "Secret objects are never rendered; reference an existing Secret by name"))
    if kind in ("Role", "ClusterRole"):
        out += _check_rules(obj.get("rules") or [])
    if pod is not None:
        out += _check_pod(pod)
    return out


def _check_rules(rules: Any) -> list[tuple[str, str]]:
    """The findings of a rule list; a list the components build (plain rules of plain string
    lists) is checked once per process: every build of the chart analysis checks the same
    few rule lists again (:data:`_RULES_SEEN`)."""
    key = _rules_key(rules)
    if key is None:
        return _rules_findings(rules)
    found = _RULES_SEEN.get(key)
    if found is None:
        if len(_RULES_SEEN) >= _RULES_KEEP:
            _RULES_SEEN.clear()
        found = _RULES_SEEN[key] = tuple(_rules_findings(rules))
    return list(found)


_RULES_SEEN: dict[tuple[Any, ...], tuple[tuple[str, str], ...]] = {}
"""Findings by rule list (:func:`_rules_key`): data only, a pure function of the key."""
_RULES_KEEP = 4096


def _rules_key(rules: Any) -> tuple[Any, ...] | None:
    """``rules`` as a hashable value equal for equal lists, or None unless it is a plain list of
    plain dicts whose values are plain lists of strings: then reading it has no side effect (no
    read-recording view) and the findings depend on nothing else."""
    if type(rules) is not list:
        return None
    key: list[Any] = []
    for rule in rules:
        if type(rule) is not dict:
            return None
        for field, values in rule.items():
            if type(field) is not str or type(values) is not list:
                return None
            for value in values:
                if type(value) is not str:
                    return None
            key.append((field, *values))
        key.append(None)  # the end of a rule
    return tuple(key)


def _rules_findings(rules: Any) -> list[tuple[str, str]]:
    """The findings of a rule list; a rule, or a rule's field, of the wrong shape is skipped."""
    out: list[tuple[str, str]] = []
    for i, rule in enumerate(_seq(rules)):
        if not isinstance(rule, dict):
            continue
        fields = {k: [_text(v) for v in _seq(rule.get(k) or [])] for k in ("apiGroups", "resources", "verbs", "nonResourceURLs")}
        wild = [k for k, values in fields.items() if "*" in values or any(v.endswith("/*") for v in values)]
        if wild:
            out.append(("wildcard-rbac", f"rule {i} has '*' in {', '.join(wild)}"))
        verbs = set(fields["verbs"])
        if ("secrets" in fields["resources"] or "*" in fields["resources"]) and verbs & {"get", "list", "watch", "*"}:
            out.append(("access-to-secrets", f"rule {i} can {'/'.join(sorted(verbs & {'get', 'list', 'watch', '*'}))} secrets"))
        risky = sorted(verbs & {"escalate", "bind", "impersonate"})
        if risky:
            out.append(("rbac-escalation", f"rule {i} grants {', '.join(risky)}"))
    return out


def _check_pod(pod: Obj) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    for key, check in (("hostPID", "host-pid"), ("hostIPC", "host-ipc"), ("hostNetwork", "host-network")):
        if pod.get(key) is True:
            out.append((check, f"{key}: true"))
    host_volumes = {
        _text(v.get("name")): _text((v.get("hostPath") or {}).get("path"))
        for v in _seq(pod.get("volumes") or [])
        if isinstance(v, dict) and isinstance(v.get("hostPath"), dict)
    }
    if host_volumes:
        out.append(("host-path", "mounts " + ", ".join(sorted(set(host_volumes.values())))))
    if pod.get("automountServiceAccountToken") is not False:
        out.append(("service-account-token", f"automountServiceAccountToken is not false (ServiceAccount {_text(pod.get('serviceAccountName') or 'default')})"))
    return out + _check_containers(pod, host_volumes)


def _check_containers(pod: Obj, host_volumes: dict[str, str]) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    privileged: list[str] = []
    escalate: list[str] = []
    caps: list[str] = []
    writable: list[str] = []
    floating: list[str] = []
    secrets: list[str] = []
    for ctr in containers(pod):
        name = _text(ctr.get("name"))
        ctx = _map(ctr.get("securityContext") or {})
        if ctx.get("privileged") is True:
            privileged.append(name)
        if ctx.get("allowPrivilegeEscalation") is True and ctx.get("privileged") is not True:
            escalate.append(name)
        added = _seq(_map(ctx.get("capabilities") or {}).get("add") or [])
        if added:
            caps.append(f"{name} ({', '.join(_text(a) for a in added)})")
        for m in _seq(ctr.get("volumeMounts") or []):
            if isinstance(m, dict) and isinstance(m.get("name"), str) and m.get("name") in host_volumes and m.get("readOnly") is not True:
                writable.append(f"{name}:{host_volumes[str(m['name'])]}")
        image = _text(ctr.get("image") or "")
        if _floating(image):
            floating.append(f"{name} ({image or 'no image'})")
        for env in _seq(ctr.get("env") or []):
            if isinstance(env, dict) and env.get("value") and _secret_name(_text(env.get("name", ""))):
                secrets.append(f"{name}:{env['name']}")
    for check, items in (
        ("privileged-container", privileged),
        ("privilege-escalation", escalate),
        ("added-capabilities", caps),
        ("writable-host-mount", sorted(set(writable))),
        ("latest-tag", floating),
        ("env-var-secret", secrets),
    ):
        if items:
            out.append((check, ", ".join(items)))
    return out


def _secret_name(name: str) -> bool:
    """Does an env var of this name look like it holds a secret (:data:`_SECRET_ENV`)? Known
    per name: the chart analysis checks the same few dozen names in every build."""
    found = _SECRET_NAMES.get(name)
    if found is None:
        if len(_SECRET_NAMES) >= _RULES_KEEP:
            _SECRET_NAMES.clear()
        found = _SECRET_NAMES[name] = _SECRET_ENV.search(name) is not None
    return found


_SECRET_NAMES: dict[str, bool] = {}


def _floating(image: str) -> bool:
    if not image or "@sha256:" in image:
        return not image
    last = image.rsplit("/", 1)[-1]
    return ":" not in last or last.endswith(":latest")


def exemptions(obj: Obj) -> dict[str, str]:
    """``check -> reason`` from the object's ``gpu-render.dev/lint-exempt.<check>`` annotations
    and its combined ``gpu-render.dev/lint-exempt`` annotation (a per-check one wins)."""
    meta = obj.get("metadata") or {}
    annotations = meta.get("annotations") if isinstance(meta, dict) else None
    if not isinstance(annotations, dict):
        return {}
    out = parse_exemptions(_text(annotations.get(EXEMPT_ANNOTATION) or ""))
    for key, reason in annotations.items():
        text = _text(key)
        check = text[len(EXEMPT_PREFIX) :] if text.startswith(EXEMPT_PREFIX) else ""
        if check.strip() and _text(reason or "").strip():
            out[check.strip()] = _text(reason).strip()
    return out


def parse_exemptions(text: str) -> dict[str, str]:
    """``check -> reason`` from the combined form ``check=reason; check=reason``."""
    out: dict[str, str] = {}
    for part in text.split(";"):
        check, sep, reason = part.partition("=")
        if sep and check.strip() and reason.strip():
            out[check.strip()] = reason.strip()
    return out


def format_exemptions(reasons: dict[str, str]) -> str:
    """The combined form (a copied patch's header line)."""
    return "; ".join(f"{check}={reason}" for check, reason in sorted(reasons.items()))


def exemption_annotations(reasons: dict[str, str]) -> dict[str, str]:
    """The annotations gpu-render writes: one ``gpu-render.dev/lint-exempt.<check>`` per check, sorted."""
    return {EXEMPT_PREFIX + check: reason for check, reason in sorted(reasons.items())}


USER_PATCHES = "user-patches/"
"""The folder of an overlay that holds the copied hand-written patches."""


def lint(documents: Iterable[tuple[str, Any]], patch_allowed: dict[str, dict[str, str]] | None = None) -> list[Finding]:
    """Every finding of every ``(file, object)``; exempted ones carry their reason.

    Hand-written patches (``user-patches/``) are checked as patches (what they set:
    ``userpatches.findings``), exempted only by what the policy allowed that file
    (``patch_allowed``: file -> check -> reason, from the copied patch's header), never by an
    annotation of the object they patch: those cover only what gpu-render renders."""
    from renderer import userpatches

    found: list[Finding] = []
    for file, obj in documents:
        if not isinstance(obj, dict) or "kind" not in obj:
            continue
        meta = obj.get("metadata")
        if not isinstance(meta, dict):
            meta = {}
        if USER_PATCHES in file:
            allowed = (patch_allowed or {}).get(file, {})
            for check, pointer, message in userpatches.findings(obj):
                found.append(Finding(file, _text(obj.get("kind")), _text(meta.get("namespace") or ""), _text(meta.get("name") or ""), check, f"{message} (patch, at {pointer or '/'})", allowed.get(check, "")))
            continue
        if "$patch" in obj:
            continue  # gpu-render's own deletion patches (partial objects)
        reasons = exemptions(obj)
        for check, message in check_object(obj):
            found.append(Finding(file, _text(obj.get("kind")), _text(meta.get("namespace") or ""), _text(meta.get("name") or ""), check, message, reasons.get(check, "")))
    return sorted(found)


def unexempted(findings: Iterable[Finding]) -> list[Finding]:
    return [f for f in findings if not f.exempt]
