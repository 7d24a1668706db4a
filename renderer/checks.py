"""Semantic checks the JSON Schema cannot express (cross-key rules), as Problems."""

from __future__ import annotations

import re
from typing import Any

from renderer.merge import Located
from renderer.problems import Problem, Severity, pointer_of

DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$")


def cluster_name(name: str, path: str) -> list[Problem]:
    """Cluster folder names become folder and object names: DNS labels only."""
    if DNS_LABEL.match(name) and name != "fleet":
        return []
    return [
        Problem(
            path,
            1,
            1,
            "",
            f"cluster name {name!r} is not a DNS label",
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
    from renderer.resolve import with_defaults

    values = with_defaults(located.data) if defaulted is None else defaulted
    problems += sharing_rules(located, values)
    return problems


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
    return problems


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
    file, line, col = located.locate(pointer)
    return [
        Problem(
            file,
            line,
            col,
            pointer,
            f"the vGPU manager image has no repository or version ({driverimage.image_path(vgpu)!r})",
            hint="set vgpuManager.repository and vgpuManager.version to the image you built from the NVIDIA vGPU software",
            code="vgpu-manager-image",
        )
    ]


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


def _at(located: Located, pointer: str, message: str, hint: str, code: str, severity: Severity = Severity.ERROR) -> Problem:
    file, line, col = located.locate(pointer)
    return Problem(file, line, col, pointer, message, hint=hint, code=code, severity=severity)


def sharing_rules(located: Located, values: dict[str, Any]) -> list[Problem]:
    """Device-plugin and MIG configs: what the pods mount must exist, what a pool names must be there."""
    problems: list[Problem] = []
    dp = values.get("devicePlugin") or {}
    cfg = dp.get("config") or {}
    data = cfg.get("data") or {}
    if cfg.get("create") and not cfg.get("name"):
        problems.append(_at(located, "/devicePlugin/config/create", "devicePlugin.config.create needs devicePlugin.config.name (the ConfigMap's name)", "set devicePlugin.config.name, e.g. time-slicing-config", "plugin-config-name"))
    elif cfg.get("create") and not data:
        problems.append(_at(located, "/devicePlugin/config/create", "devicePlugin.config.create with no data: the ConfigMap is empty and config-manager finds no configuration", "add the configs under devicePlugin.config.data, or set create: false and create the ConfigMap yourself", "plugin-config-data", Severity.WARNING))
    default = str(cfg.get("default") or "")
    if cfg.get("create") and data and default and default not in data:
        problems.append(_at(located, "/devicePlugin/config/default", f"devicePlugin.config.default {default!r} is not a key of devicePlugin.config.data", f"one of: {', '.join(sorted(map(str, data)))}", "plugin-config-default"))
    for index, pool in enumerate(values.get("nodePools") or []):
        name = str(pool.get("devicePluginConfig") or "")
        pointer = f"/nodePools/{index}/devicePluginConfig"
        if name and not cfg.get("name"):
            problems.append(_at(located, pointer, f"node pool {pool.get('name')!r}: devicePluginConfig has no effect without devicePlugin.config.name", "name the plugin ConfigMap in devicePlugin.config (and its data)", "pool-plugin-config"))
        elif name and cfg.get("create") and data and name not in data:
            problems.append(_at(located, pointer, f"node pool {pool.get('name')!r}: devicePluginConfig {name!r} is not a key of devicePlugin.config.data", f"one of: {', '.join(sorted(map(str, data)))}", "pool-plugin-config"))
        mig = (pool.get("mig") or {}).get("config")
        if mig and not (values.get("migManager") or {}).get("enabled"):
            problems.append(_at(located, f"/nodePools/{index}/mig/config", f"node pool {pool.get('name')!r}: mig.config has no effect with migManager disabled", "enable migManager, or remove the pool's mig.config", "pool-mig-config", Severity.WARNING))
    mm = values.get("migManager") or {}
    mdefault = str((mm.get("config") or {}).get("default") or "")
    if mm.get("enabled") and mdefault and mdefault != "all-disabled" and "/migManager/config/default" in located.origins:
        problems.append(_at(located, "/migManager/config/default", f"migManager.config.default {mdefault!r} is never applied: like the operator, only 'all-disabled' is seeded on MIG-capable nodes", "set nodePools[].mig.config for the pools that should get this profile", "mig-config-default", Severity.WARNING))
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
        _at(
            located,
            pointer,
            "driver.enabled is true but there are no nodePools: no driver DaemonSet would be rendered",
            "add nodePools (gpu-render nodes import nodes.json writes them), or set driver.enabled: false when the nodes have a driver installed",
            "driver-no-pools",
            severity,
        )
    ]
