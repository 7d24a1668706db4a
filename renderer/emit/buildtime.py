"""The chart's build-time keys: the digest of each one's value, which NOTES.txt checks.

A build-time key is one the templates read nowhere (its value was used at build time: resolved
into the pools' facts, or fixed in a template where the analysis could not make it a knob). A
``--set`` of it would change nothing, a silent difference between what the user asked for and
what helm renders. So the chart values carry, for each such key, the sha256 of its value as
Helm's ``toJson`` prints it (``generated."build-time/<key>"``), and ``templates/NOTES.txt``
refuses values whose digest is another: change the policy and rebuild. Each cluster's values
file carries the digests of its own values, so a cluster whose build-time keys differ and that
the chart still reproduces (its facts say the rest) renders; a pool removed by values is not
checked (removing one is allowed).

Keys with a refusal of their own in NOTES.txt, which says more (:data:`CHECKED_ELSEWHERE`), and
keys a dot in a name would make ambiguous are left out.
"""

from __future__ import annotations

import hashlib
import json
import math
from decimal import Decimal
from typing import Any

from renderer.emit.helm_values import get

Path = tuple[str, ...]

PREFIX = "build-time/"
"""Prefix of the digests' keys in the chart values' ``generated``."""

CHECKED_ELSEWHERE = frozenset(
    {
        ("nfd", "master", "extraLabelNs"),
        ("nfd", "worker", "pciDeviceClassWhitelist"),
        ("nfd", "worker", "pciDeviceLabelFields"),
        ("vgpuManager", "kernelModuleConfig", "keys"),
    }
)
"""Build-time keys NOTES.txt checks against what was made from them (the NFD config files in
``generated``, the mounts in the pools' facts), with a message naming that; each pool's
``repoConfig`` / ``certConfig`` / ``kernelModuleConfig`` ``keys`` too (:func:`_checked_elsewhere`)."""

_POOL_KEYS = frozenset({("repoConfig", "keys"), ("certConfig", "keys"), ("kernelModuleConfig", "keys")})

_HTML = str.maketrans({"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"})


def _checked_elsewhere(path: Path) -> bool:
    return path in CHECKED_ELSEWHERE or (path[:2] == ("driver", "pools") and path[3:] in _POOL_KEYS)


def digests(values: dict[str, Any], fixed: set[Path]) -> dict[str, str]:
    """``generated`` entries: ``build-time/<key>`` -> sha256 of :func:`go_json` of its value in
    ``values`` (null when absent), for each key of ``fixed`` checked here."""
    out: dict[str, str] = {}
    for path in sorted(fixed):
        if _checked_elsewhere(path) or any("." in key or not key for key in path):
            continue
        if path[:2] == ("driver", "pools") and not isinstance(get(values, path[:3]), dict):
            continue  # a pool the values do not have: nothing to check
        try:
            out[PREFIX + ".".join(path)] = digest(get(values, path))
        except (TypeError, ValueError, UnicodeEncodeError):  # not what a values file holds
            continue
    return out


POOL_DIGEST = "DRIVER_CONFIG_DIGEST"
"""The computed leaf of a driver pool whose inputs the chart checks (:func:`pool_inputs`)."""
INPUTS = "inputs/driver/"
"""Prefix of each driver pool's inputs digest in ``generated``."""
NOT_HASHED = (
    "annotations", "hostNetwork", "imagePullPolicy", "imagePullSecrets", "labels", "livenessProbe", "nodeSelector",
    "priorityClassName", "readinessProbe", "resources", "startupProbe", "tolerations",
)  # fmt: skip
"""A pool's settings that no field of the operator's ``DriverInstallState`` takes
(``renderer/driverdigest.py``): a ``--set`` of one keeps the digest."""


DIGEST_SUFFIX = f"/env/{POOL_DIGEST}/value"


FLEET_INPUTS: tuple[tuple[str, ...], ...] = (("gds",), ("gdrcopy",), ("hostPaths", "rootFS"), ("cluster", "operatorRelease"))
"""The fleet values a driver pool's digest inputs list after the pool's settings (the chart's
``poolInputs`` helper lists the same, in this order)."""


def is_pool_digest(key: str) -> bool:
    """Is ``key`` (a ``generated`` key, ``driver/<pool>/<container>/env/DRIVER_CONFIG_DIGEST/value``)
    a driver pool's config digest?"""
    return key.startswith("driver/") and key.endswith(DIGEST_SUFFIX) and key.count("/") >= 6


def pool_inputs(values: dict[str, Any], pool: str) -> list[Any]:
    """What a driver pool's ``DRIVER_CONFIG_DIGEST`` is computed from, as the chart's helper
    ``driverDigest`` lists it: the pool's settings but :data:`NOT_HASHED`, and the fleet's
    ``gds``, ``gdrcopy``, ``hostPaths.rootFS`` and release, which the driver template reads."""
    settings = get(values, ("driver", "pools", pool))
    own = {k: v for k, v in settings.items() if k not in NOT_HASHED} if isinstance(settings, dict) else None
    return [own, *(get(values, path) for path in FLEET_INPUTS)]


def pool_input_digests(values: dict[str, Any]) -> dict[str, str]:
    """``generated`` entries ``inputs/driver/<pool>``: the sha256 of :func:`pool_inputs` as
    Helm's ``toJson`` prints it, for each pool of ``values``. While a release's values give the
    same, the template prints the build's digest; otherwise an empty one, which
    k8s-driver-manager reads as a changed configuration (it reinstalls the driver), where the
    build's digest would have kept the old driver loaded."""
    out: dict[str, str] = {}
    pools = get(values, ("driver", "pools"))
    for name in sorted(pools) if isinstance(pools, dict) else []:
        if isinstance(pools[name], dict) and "." not in name:
            try:
                out[INPUTS + name] = digest(pool_inputs(values, name))
            except (TypeError, ValueError, UnicodeEncodeError):  # not what a values file holds
                continue
    return out


FACTS = "facts/driver/"
"""Prefix of each RHEL / SLES pool's subscription-inputs digest in ``generated``."""
SUBSCRIBING = ("rhel", "suse")
"""OS families whose driver mounts the host's subscription files unless the pool says otherwise
(``driverimage.subscriptions``: not for a precompiled driver, not for RHEL with a repo config)."""


def pool_fact_inputs(pool: dict[str, Any]) -> list[bool]:
    """What a RHEL / SLES pool's host mounts (``node.hostMounts``) were derived from, of the
    pool's settings, as NOTES.txt lists it: ``usePrecompiled`` and whether a repository
    ConfigMap is named (``repoConfig.configMapName`` or ``name``)."""
    repo = pool.get("repoConfig")
    named = f"{repo.get('configMapName') or ''}{repo.get('name') or ''}" if isinstance(repo, dict) else ""
    return [str(pool.get("usePrecompiled")).lower() == "true", named != ""]


def pool_fact_digests(values: dict[str, Any]) -> dict[str, str]:
    """``generated`` entries ``facts/driver/<pool>``: the sha256 of :func:`pool_fact_inputs` for
    each RHEL / SLES pool; NOTES.txt refuses values whose inputs differ (the mounts would not
    follow: helm kept the entitlement mounts of a pool given a repository ConfigMap)."""
    out: dict[str, str] = {}
    pools = get(values, ("driver", "pools"))
    for name in sorted(pools) if isinstance(pools, dict) else []:
        pool = pools[name]
        if isinstance(pool, dict) and "." not in name and get(pool, ("node", "osFamily")) in SUBSCRIBING:
            out[FACTS + name] = digest(pool_fact_inputs(pool))
    return out


RELEASED = "releases/driver/"
"""Prefix of each pool's list of the releases its OS tag holds for, in ``generated``."""


def pool_releases(values: dict[str, Any]) -> dict[str, list[str]]:
    """``generated`` entries ``releases/driver/<pool>``: the operator releases whose OS-tag rule
    gives the pool the OS tag (and selector) its facts hold, for each pool where some release
    gives another (RHEL 9.4 is ``rhel9.4`` up to v26.3, ``rhel9`` in v26.7). NOTES.txt refuses a
    ``cluster.operatorRelease`` outside the list: the image tags, labels and selectors of the
    pool's facts would not follow."""
    from renderer.driverimage import NEWEST, RELEASES, os_tag

    release = str(get(values, ("cluster", "operatorRelease")) or NEWEST)
    entries = {str(p.get("name")): p for p in values.get("nodePools") or [] if isinstance(p, dict)}
    pools = get(values, ("driver", "pools"))
    out: dict[str, list[str]] = {}
    for name in sorted(pools) if isinstance(pools, dict) and release in RELEASES else []:
        os_info = (entries.get(name) or {}).get("os") or {}
        if not isinstance(pools[name], dict) or "." in name or not isinstance(os_info, dict):
            continue
        os_id, version = str(os_info.get("id", "ubuntu")), str(os_info.get("version", "22.04"))
        same = [r for r in RELEASES if os_tag(os_id, version, r) == os_tag(os_id, version, release)]
        if len(same) < len(RELEASES):
            out[RELEASED + name] = same
    return out


def digest(value: Any) -> str:
    """What Helm's ``toJson <value> | sha256sum`` prints for a values file's ``value``."""
    return hashlib.sha256(go_json(value).encode("utf-8")).hexdigest()


def go_json(value: Any) -> str:
    """``value`` as Go's ``encoding/json`` (Helm's ``toJson``) prints Helm's parse of it: keys
    sorted, no spaces, ``<`` ``>`` ``&`` U+2028 U+2029 escaped, numbers as float64 (a values
    file's numbers are float64 in Helm: ``1`` and ``1.0`` print ``1``). ValueError for a number
    Go cannot print (NaN, infinity) or Helm does not read back (an integer of 2**53 or more),
    TypeError for what JSON has not."""
    if value is None or isinstance(value, (bool, str)):
        return json.dumps(value, ensure_ascii=False).translate(_HTML)
    if isinstance(value, int) and abs(value) >= 2**53:
        raise ValueError("an integer a float64 does not hold (Helm prints 2**53 + 1 as null)")
    if isinstance(value, (int, float)):
        return _go_float(float(value))
    if isinstance(value, dict):
        if not all(isinstance(k, str) for k in value):
            raise TypeError("a map key that is no string")
        return "{" + ",".join(go_json(k) + ":" + go_json(value[k]) for k in sorted(value)) + "}"
    if isinstance(value, list):
        return "[" + ",".join(go_json(v) for v in value) + "]"
    raise TypeError(f"{type(value).__name__} is no JSON value")


def _go_float(f: float) -> str:
    """A float64 as ``encoding/json`` prints it: the shortest digits, as a plain decimal from
    1e-6 up to 1e21, else in exponent form (``1e-7``, ``1e+21``)."""
    if not math.isfinite(f):
        raise ValueError("NaN or infinity")
    if f == 0:
        return "-0" if math.copysign(1.0, f) < 0 else "0"
    if 1e-6 <= abs(f) < 1e21:
        text = format(Decimal(repr(f)), "f")
        return text.rstrip("0").rstrip(".") if "." in text else text
    text = repr(f)  # the shortest digits, exponent of at least two digits, as Go's 'e' format
    mantissa, _, exponent = text.partition("e")
    sign, digits = exponent[0], exponent[1:].lstrip("0") or "0"
    return f"{mantissa}e{sign}{digits.zfill(2) if sign == '+' else digits}"
