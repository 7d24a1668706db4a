"""Driver, toolkit, validator, device plugin, MPS daemon, GFD and the common DaemonSet settings.

Inputs are built inline as values dicts and resolved directly; every rendered object is also
checked against the strict Kubernetes schemas of 1.31 and 1.35.
"""

from __future__ import annotations

from typing import Any

import pytest

from renderer.components import container_toolkit, driver
from renderer.components.common import Obj
from renderer.merge import deep_merge
from renderer.model import Model
from renderer.render import objects
from renderer.resolve import resolve
from tests.conftest import strict_validate
from tests.golden import case_names, render_case

UBUNTU = {"name": "ubuntu2204", "os": {"id": "ubuntu", "version": "22.04"}}
RHEL = {"name": "rhel94", "os": {"id": "rhel", "version": "9.4"}}


def model(extra: dict[str, Any] | None = None, pools: list[dict[str, Any]] | None = None) -> Model:
    values = deep_merge({"nodePools": pools if pools is not None else [UBUNTU, RHEL]}, extra or {})
    return resolve(values, "fleet")


def find(objs: dict[str, list[Obj]], component: str, kind: str, name: str | None = None) -> list[Obj]:
    return [o for o in objs.get(component, []) if o["kind"] == kind and (name is None or o["metadata"]["name"] == name)]


def ds(m: Model, component: str, name: str | None = None) -> Obj:
    found = find(objects(m), component, "DaemonSet", name)
    assert len(found) == 1, [o["metadata"]["name"] for o in found]
    return found[0]


def pod(daemonset: Obj) -> Obj:
    spec: Obj = daemonset["spec"]["template"]["spec"]
    return spec


def ctr(p: Obj, name: str) -> Obj:
    for c in [*p.get("initContainers", []), *p["containers"]]:
        if c["name"] == name:
            return c
    raise AssertionError(f"no container {name}")


def env(c: Obj) -> dict[str, str]:
    return {e["name"]: e.get("value", "<ref>") for e in c.get("env", [])}


def mounts(c: Obj) -> dict[str, str]:
    return {m["mountPath"]: m["name"] for m in c.get("volumeMounts", [])}


def volumes(p: Obj) -> dict[str, Obj]:
    return {v["name"]: v for v in p["volumes"]}


def terms(p: Obj) -> list[list[Obj]]:
    sel = p["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
    return [t["matchExpressions"] for t in sel]


# -- every object valid ---------------------------------------------------------------------


VARIANTS: dict[str, dict[str, Any]] = {
    "defaults": {},
    "cdi-off-crio": {"cdi": {"enabled": False}, "cluster": {"containerRuntime": "crio"}},
    "nri": {"cdi": {"nriPluginEnabled": True}},
    "everything": {
        "driver": {
            "rdma": {"enabled": True, "useHostMofed": True},
            "repoConfig": {"configMapName": "repos", "keys": ["cuda.list"]},
            "certConfig": {"name": "certs", "keys": ["ca.crt"]},
            "kernelModuleConfig": {"name": "kmod", "keys": ["nvidia.conf"]},
            "licensingConfig": {"secretName": "licensing"},
            "secretEnv": "driver-secrets",
            "resources": {"limits": {"memory": "4Gi"}},
        },
        "devicePlugin": {"config": {"create": True, "name": "cfg", "default": "a", "data": {"a": "version: v1\n"}}},
        "hostPaths": {"rootFS": "/host-root", "driverInstallDir": "/opt/nvidia/driver"},
        "daemonsets": {"podSecurityContext": {"runAsNonRoot": False}, "updateStrategy": "OnDelete", "labels": {"team": "gpu"}},
        "validator": {"imagePullSecrets": ["regcred"], "resources": {"requests": {"cpu": "10m"}}},
    },
}


@pytest.mark.parametrize("kube_version", [pytest.param("1.31", marks=pytest.mark.slow), "1.35"])  # 1.31: in CI
@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_objects_pass_strict_schemas(variant: str, kube_version: str) -> None:
    objs = [o for items in objects(model(VARIANTS[variant])).values() for o in items]
    assert strict_validate(objs, kube_version) == []


@pytest.mark.parametrize(
    ("case", "kube_version"),
    [
        pytest.param(case, version, marks=pytest.mark.slow) if version == "1.31" else (case, version)  # 1.31: in CI
        for case in case_names()
        if case != "minimal"
        for version in ("1.31", "1.35")
        if not (case.startswith("dra-") and version == "1.31")  # DRA needs 1.34+ (validate refuses older; test_dra checks 1.34 and 1.35)
    ],
)
def test_golden_cases_pass_strict_schemas(case: str, kube_version: str) -> None:
    from renderer import yamlio

    files = render_case(case)
    objs = [o for path, text in files.items() if path.startswith("base/") and not path.endswith("kustomization.yaml") for o in yamlio.load_all(text)]
    assert objs
    assert strict_validate(objs, kube_version) == []


# -- driver -----------------------------------------------------------------------------------


def test_one_driver_daemonset_per_pool_with_pool_image_and_selector() -> None:
    m = model()
    found = find(objects(m), "driver", "DaemonSet")
    assert [d["metadata"]["name"] for d in found] == [p.daemonset_name for p in m.pools]
    for d, pool in zip(found, m.pools, strict=True):
        p = pod(d)
        assert ctr(p, "nvidia-driver-ctr")["image"] == pool.image
        assert p["nodeSelector"] == pool.node_selector
        assert d["spec"]["updateStrategy"]["type"] == "RollingUpdate"  # autoUpgrade: true, the default
        assert p["hostPID"] is True


def test_no_pools_no_driver() -> None:
    assert "driver" not in objects(model(pools=[]))


def test_driver_affinity_excludes_opt_out_pause_and_preinstalled() -> None:
    p = pod(ds(model(pools=[UBUNTU]), "driver"))
    deploy = next(e for e in terms(p)[0] if e["key"] == "nvidia.com/gpu.deploy.driver")
    assert deploy == {"key": "nvidia.com/gpu.deploy.driver", "operator": "NotIn", "values": ["false", "paused-for-driver-upgrade", "pre-installed"]}
    anti = p["affinity"]["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][0]
    assert anti["topologyKey"] == "kubernetes.io/hostname"


def test_driver_pod_template_has_no_release_labels_but_daemonset_does() -> None:
    labels = {"helm.sh/chart": "gpu-stack-1.2.3", "app.kubernetes.io/version": "1.2.3", "team": "gpu"}
    m = model({"daemonsets": {"labels": labels}}, pools=[UBUNTU])
    d = ds(m, "driver")
    tpl = d["spec"]["template"]["metadata"]["labels"]
    assert "helm.sh/chart" not in tpl and "app.kubernetes.io/version" not in tpl
    assert tpl["team"] == "gpu"
    assert d["metadata"]["labels"]["helm.sh/chart"] == "gpu-stack-1.2.3"
    # other operands do take them, as with the operator
    assert pod(ds(m, "device-plugin")) and ds(m, "device-plugin")["spec"]["template"]["metadata"]["labels"]["helm.sh/chart"]


def test_driver_manager_env_follows_upgrade_policy_and_user_env_wins() -> None:
    policy = {
        "gpuPodDeletion": {"force": True, "timeoutSeconds": 120, "deleteEmptyDir": True},
        "drain": {"enable": True, "force": False, "podSelector": "app=x", "timeoutSeconds": 600, "deleteEmptyDir": False},
    }
    m = model({"driver": {"upgradePolicy": policy, "manager": {"env": [{"name": "ENABLE_GPU_POD_EVICTION", "value": "false"}]}}}, pools=[UBUNTU])
    e = env(ctr(pod(ds(m, "driver")), "k8s-driver-manager"))
    assert e["ENABLE_AUTO_DRAIN"] == "true"
    assert e["DRAIN_USE_FORCE"] == "true"
    assert e["DRAIN_POD_SELECTOR_LABEL"] == "app=x"
    assert e["DRAIN_TIMEOUT_SECONDS"] == "600s"
    assert e["DRAIN_DELETE_EMPTYDIR_DATA"] == "true"
    assert e["ENABLE_GPU_POD_EVICTION"] == "false"
    default = env(ctr(pod(ds(model(pools=[UBUNTU]), "driver")), "k8s-driver-manager"))
    assert default["ENABLE_AUTO_DRAIN"] == "false"
    assert default["DRAIN_TIMEOUT_SECONDS"] == "300s"


def test_driver_config_maps_mount_per_declared_key_at_os_paths() -> None:
    cfg = {
        "repoConfig": {"configMapName": "repos", "keys": ["cuda.list", "extra.list"]},
        "certConfig": {"name": "certs", "keys": ["ca.crt"]},
        "kernelModuleConfig": {"name": "kmod", "keys": ["nvidia.conf"]},
    }
    objs = objects(model({"driver": cfg}))
    ubuntu = ctr(pod(find(objs, "driver", "DaemonSet", "nvidia-driver-daemonset-ubuntu2204")[0]), "nvidia-driver-ctr")
    rhel = ctr(pod(find(objs, "driver", "DaemonSet", "nvidia-driver-daemonset-rhel94")[0]), "nvidia-driver-ctr")
    assert mounts(ubuntu)["/etc/apt/sources.list.d/cuda.list"] == "repo-config"
    assert mounts(ubuntu)["/etc/apt/sources.list.d/extra.list"] == "repo-config"
    assert mounts(ubuntu)["/usr/local/share/ca-certificates/ca.crt"] == "cert-config"
    assert mounts(rhel)["/etc/yum.repos.d/cuda.list"] == "repo-config"
    assert mounts(rhel)["/etc/pki/ca-trust/extracted/pem/ca.crt"] == "cert-config"
    assert mounts(rhel)["/drivers/nvidia.conf"] == "kernel-module-config"
    assert "/run/secrets/rhsm" not in mounts(rhel)  # a RHEL repo config replaces the host subscription (operator)
    assert "/run/secrets/rhsm" not in mounts(ubuntu)


def test_driver_secret_env_is_a_reference_only() -> None:
    m = model({"driver": {"secretEnv": "driver-secrets", "licensingConfig": {"secretName": "lic"}}}, pools=[UBUNTU])
    objs = objects(m)
    c = ctr(pod(ds(m, "driver")), "nvidia-driver-ctr")
    assert c["envFrom"] == [{"secretRef": {"name": "driver-secrets"}}]
    assert not [o for items in objs.values() for o in items if o["kind"] == "Secret"]
    lic = volumes(pod(ds(m, "driver")))["licensing-config"]["secret"]
    assert lic["secretName"] == "lic"
    assert [i["key"] for i in lic["items"]] == ["gridd.conf", "client_configuration_token.tok"]


def test_driver_secret_env_reaches_a_precompiled_driver_only_from_the_pool() -> None:
    """The ClusterPolicy's `driver.secretEnv` is not attached to a precompiled driver
    (`transformDriverContainer` returns before it, as before the repository and certificate
    ConfigMaps): a precompiled pool that inherits it gets no `envFrom`, so a Secret that is not
    there does not keep its driver pod from starting. A pool's own `secretEnv` (an NVIDIADriver's,
    which the state-driver template attaches whatever the driver) is attached; a pool that
    compiles its driver takes the fleet's. The chart's pool values carry the same (`''`)."""
    kernel = {"kernel": "5.15.0-1060-aws"}
    pools = [
        {**UBUNTU, **kernel, "name": "pre", "driver": {"usePrecompiled": True, "version": "595"}},
        {**UBUNTU, **kernel, "name": "own", "os": {"id": "ubuntu", "version": "24.04"}, "driver": {"usePrecompiled": True, "version": "595", "secretEnv": "own-env"}},
        RHEL,
    ]
    m = model({"driver": {"secretEnv": "fleet-env"}}, pools=pools)
    drivers = {o["metadata"]["name"]: o for o in find(objects(m), "driver", "DaemonSet")}
    env_from = {name: ctr(pod(o), "nvidia-driver-ctr").get("envFrom") for name, o in drivers.items()}
    assert env_from == {
        "nvidia-driver-daemonset-pre-5.15.0-1060-aws": None,
        "nvidia-driver-daemonset-own-5.15.0-1060-aws": [{"secretRef": {"name": "own-env"}}],
        "nvidia-driver-daemonset-rhel94": [{"secretRef": {"name": "fleet-env"}}],
    }
    from renderer.emit.helm_values import chart_values

    pooled = chart_values(m)["driver"]["pools"]
    assert {name: pooled[name]["secretEnv"] for name in ("pre", "own", "rhel94")} == {"pre": "", "own": "own-env", "rhel94": "fleet-env"}


def test_host_mofed_sources_need_rdma_unless_the_pool_says_so() -> None:
    """The ClusterPolicy's `driver.rdma.useHostMofed` mounts the host's /usr/src only with
    GPUDirect RDMA on (`transformDriverContainer`); a pool's own `useHostMofed` (an
    NVIDIADriver's: the state-driver template checks no `enabled`) mounts it whatever."""

    def source(m: Model, name: str) -> str:
        vols = volumes(pod(ds(m, "driver", name)))
        return str(vols["mlnx-ofed-usr-src"]["hostPath"]["path"])

    fleet = model({"driver": {"rdma": {"enabled": False, "useHostMofed": True}}}, pools=[UBUNTU])
    assert source(fleet, "nvidia-driver-daemonset-ubuntu2204") == "/run/mellanox/drivers/usr/src"
    on = model({"driver": {"rdma": {"enabled": True, "useHostMofed": True}}}, pools=[UBUNTU])
    assert source(on, "nvidia-driver-daemonset-ubuntu2204") == "/usr/src"
    own = model(pools=[{**UBUNTU, "driver": {"rdma": {"useHostMofed": True}}}])
    assert source(own, "nvidia-driver-daemonset-ubuntu2204") == "/usr/src"


def test_driver_rdma_gds_gdrcopy_sidecars_and_env() -> None:
    m = model({"driver": {"rdma": {"enabled": True, "useHostMofed": True}}}, pools=[UBUNTU])
    p = pod(ds(m, "driver"))
    assert [c["name"] for c in p["containers"]] == ["nvidia-driver-ctr", "nvidia-peermem-ctr"]
    e = env(ctr(p, "nvidia-driver-ctr"))
    assert e["GPU_DIRECT_RDMA_ENABLED"] == "true" and e["USE_HOST_MOFED"] == "true"
    assert volumes(p)["mlnx-ofed-usr-src"]["hostPath"]["path"] == "/usr/src"
    plain = pod(ds(model(pools=[UBUNTU]), "driver"))
    assert [c["name"] for c in plain["containers"]] == ["nvidia-driver-ctr"]


def test_gds_and_gdrcopy_take_the_pool_images() -> None:
    m = model({"gds": {"enabled": True}, "gdrcopy": {"enabled": True}}, pools=[UBUNTU])
    pool = m.pools[0]
    assert {"gds", "gdrcopy"} <= set(pool.images)
    p = pod(ds(m, "driver"))
    assert ctr(p, "nvidia-fs-ctr")["image"] == pool.images["gds"]
    assert ctr(p, "nvidia-gdrcopy-ctr")["image"] == pool.images["gdrcopy"]
    assert env(ctr(p, "nvidia-driver-ctr"))["GDS_ENABLED"] == "true"
    assert env(ctr(pod(ds(m, "device-plugin")), "nvidia-device-plugin"))["GDRCOPY_ENABLED"] == "true"


def test_driver_rbac_is_least_privilege() -> None:
    objs = objects(model(pools=[UBUNTU]))
    (cr,) = find(objs, "driver", "ClusterRole")
    verbs = {(tuple(r["apiGroups"]), r["resources"][0]): set(r["verbs"]) for r in cr["rules"]}
    assert "*" not in {v for vs in verbs.values() for v in vs}
    assert verbs[(("",), "pods/eviction")] == {"create"}
    assert verbs[(("apps",), "daemonsets")] == {"get"}  # the drain helper GETs a pod's DaemonSet; nothing lists them
    assert not find(objs, "driver", "Role")


def test_startup_probe_configmap_and_probe() -> None:
    objs = objects(model(pools=[UBUNTU]))
    (cm,) = find(objs, "driver", "ConfigMap", driver.PROBE_CM)
    assert ".driver-ctr-ready" in cm["data"]["startup-probe.sh"]
    probe = ctr(pod(ds(model(pools=[UBUNTU]), "driver")), "nvidia-driver-ctr")["startupProbe"]
    assert probe["exec"]["command"] == ["sh", driver.PROBE_PATH]
    assert (probe["initialDelaySeconds"], probe["failureThreshold"]) == (60, 120)


# -- container toolkit ------------------------------------------------------------------------


def test_toolkit_containerd_defaults() -> None:
    p = pod(ds(model(), "container-toolkit"))
    c = ctr(p, "nvidia-container-toolkit-ctr")
    e = env(c)
    assert e["RUNTIME"] == "containerd"
    assert e["CONTAINERD_CONFIG"] == e["RUNTIME_CONFIG"] == "/runtime/config-dir/config.toml"
    assert e["RUNTIME_DROP_IN_CONFIG_HOST_PATH"] == "/etc/containerd/conf.d/99-nvidia.toml"
    assert e["CONTAINERD_SOCKET"] == "/runtime/sock-dir/containerd.sock"
    assert e["CDI_ENABLED"] == "true" and e["NVIDIA_CONTAINER_RUNTIME_MODE"] == "cdi"
    assert volumes(p)["containerd-config"]["hostPath"]["path"] == "/etc/containerd"
    assert volumes(p)["containerd-socket"]["hostPath"]["path"] == "/run/containerd"
    assert [i["name"] for i in p["initContainers"]] == ["driver-validation"]
    assert "runtimeClassName" not in p


def test_toolkit_crio_without_cdi_uses_the_hook() -> None:
    m = model({"cluster": {"containerRuntime": "crio"}, "cdi": {"enabled": False}}, pools=[RHEL])
    p = pod(ds(m, "container-toolkit"))
    e = env(ctr(p, "nvidia-container-toolkit-ctr"))
    assert e["RUNTIME"] == "crio" and e["CRIO_CONFIG_MODE"] == "hook"
    assert e["CRIO_CONFIG"] == "/runtime/config-dir/config.toml"
    assert "RUNTIME_SOCKET" not in e and "CDI_ENABLED" not in e
    assert volumes(p)["crio-hooks"]["hostPath"]["path"] == "/usr/share/containers/oci/hooks.d"
    assert "runtimeClassName" not in pod(ds(m, "device-plugin"))


def test_toolkit_docker() -> None:
    e = env(ctr(pod(ds(model({"cluster": {"containerRuntime": "docker"}}), "container-toolkit")), "nvidia-container-toolkit-ctr"))
    assert e["DOCKER_CONFIG"] == "/runtime/config-dir/daemon.json"
    assert e["DOCKER_SOCKET"] == "/runtime/sock-dir/docker.sock"
    assert "RUNTIME_DROP_IN_CONFIG" not in e


def test_toolkit_env_host_paths_become_mounts() -> None:
    user = [{"name": "CONTAINERD_CONFIG", "value": "/etc/k0s/containerd.toml"}, {"name": "CONTAINERD_SOCKET", "value": "/run/k0s/containerd.sock"}]
    p = pod(ds(model({"toolkit": {"env": user}}), "container-toolkit"))
    e = env(ctr(p, "nvidia-container-toolkit-ctr"))
    assert e["CONTAINERD_CONFIG"] == "/runtime/config-dir/containerd.toml"
    assert volumes(p)["containerd-config"]["hostPath"]["path"] == "/etc/k0s"
    assert volumes(p)["containerd-socket"]["hostPath"]["path"] == "/run/k0s"


TOOLKIT_ENV_CASES = {
    # the runtime's own variable before RUNTIME_CONFIG (getRuntimeConfigFiles)
    "containerd: CONTAINERD_CONFIG over RUNTIME_CONFIG": (
        "containerd",
        {"RUNTIME_CONFIG": "/etc/a/runtime.toml", "CONTAINERD_CONFIG": "/etc/b/containerd.toml"},
        {"containerd-config": "/etc/b", "containerd-socket": "/run/containerd"},
        {"RUNTIME_CONFIG": "/runtime/config-dir/containerd.toml", "CONTAINERD_CONFIG": "/runtime/config-dir/containerd.toml"},
    ),
    "containerd: RUNTIME_CONFIG alone": (
        "containerd",
        {"RUNTIME_CONFIG": "/etc/a/runtime.toml"},
        {"containerd-config": "/etc/a"},
        {"RUNTIME_CONFIG": "/runtime/config-dir/runtime.toml", "CONTAINERD_CONFIG": "/runtime/config-dir/runtime.toml"},
    ),
    # another runtime's variables are not read and stay as written; RUNTIME_SOCKET is not read
    # (getRuntimeSocketFile) but is set to the socket the runtime's own variable names
    "containerd: CRIO_CONFIG, DOCKER_*, RUNTIME_SOCKET not read": (
        "containerd",
        {"CRIO_CONFIG": "/etc/c/crio.conf", "DOCKER_CONFIG": "/etc/d/daemon.json", "RUNTIME_SOCKET": "/run/r/r.sock", "DOCKER_SOCKET": "/run/d/docker.sock"},
        {"containerd-config": "/etc/containerd", "containerd-socket": "/run/containerd"},
        {
            "CRIO_CONFIG": "/etc/c/crio.conf",
            "DOCKER_CONFIG": "/etc/d/daemon.json",
            "DOCKER_SOCKET": "/run/d/docker.sock",
            "RUNTIME_SOCKET": "/runtime/sock-dir/containerd.sock",
            "CONTAINERD_SOCKET": "/runtime/sock-dir/containerd.sock",
        },
    ),
    "containerd: CONTAINERD_SOCKET over RUNTIME_SOCKET": (
        "containerd",
        {"RUNTIME_SOCKET": "/run/r/r.sock", "CONTAINERD_SOCKET": "/run/k0s/containerd.sock"},
        {"containerd-socket": "/run/k0s"},
        {"RUNTIME_SOCKET": "/runtime/sock-dir/containerd.sock", "CONTAINERD_SOCKET": "/runtime/sock-dir/containerd.sock"},
    ),
    "crio: CRIO_CONFIG over RUNTIME_CONFIG, CONTAINERD_CONFIG not read": (
        "crio",
        {"RUNTIME_CONFIG": "/etc/a/runtime.conf", "CRIO_CONFIG": "/etc/b/crio.conf", "CONTAINERD_CONFIG": "/etc/c/config.toml"},
        {"crio-config": "/etc/b", "crio-drop-in-config": "/etc/crio/crio.conf.d"},
        {"RUNTIME_CONFIG": "/runtime/config-dir/crio.conf", "CRIO_CONFIG": "/runtime/config-dir/crio.conf", "CONTAINERD_CONFIG": "/etc/c/config.toml"},
    ),
    "crio: RUNTIME_CONFIG alone": ("crio", {"RUNTIME_CONFIG": "/etc/a/runtime.conf"}, {"crio-config": "/etc/a"}, {"CRIO_CONFIG": "/runtime/config-dir/runtime.conf"}),
    # no socket for CRI-O: the socket variables stay as written, nothing is mounted
    "crio: no socket read": (
        "crio",
        {"RUNTIME_SOCKET": "/run/r/crio.sock", "CONTAINERD_SOCKET": "/run/c/containerd.sock"},
        {"crio-config": "/etc/crio"},
        {"RUNTIME_SOCKET": "/run/r/crio.sock", "CONTAINERD_SOCKET": "/run/c/containerd.sock"},
    ),
    "docker: DOCKER_CONFIG over RUNTIME_CONFIG, DOCKER_SOCKET over RUNTIME_SOCKET": (
        "docker",
        {"RUNTIME_CONFIG": "/etc/a/runtime.json", "DOCKER_CONFIG": "/etc/b/daemon.json", "RUNTIME_SOCKET": "/run/r/r.sock", "DOCKER_SOCKET": "/run/d/docker.sock"},
        {"docker-config": "/etc/b", "docker-socket": "/run/d"},
        {"RUNTIME_CONFIG": "/runtime/config-dir/daemon.json", "DOCKER_CONFIG": "/runtime/config-dir/daemon.json", "RUNTIME_SOCKET": "/runtime/sock-dir/docker.sock", "DOCKER_SOCKET": "/runtime/sock-dir/docker.sock"},
    ),
    "docker: RUNTIME_CONFIG alone, CONTAINERD_SOCKET not read": (
        "docker",
        {"RUNTIME_CONFIG": "/etc/a/runtime.json", "CONTAINERD_SOCKET": "/run/c/containerd.sock"},
        {"docker-config": "/etc/a", "docker-socket": "/var/run"},
        {"DOCKER_CONFIG": "/runtime/config-dir/runtime.json", "CONTAINERD_SOCKET": "/run/c/containerd.sock", "DOCKER_SOCKET": "/runtime/sock-dir/docker.sock"},
    ),
}


@pytest.mark.parametrize("case", list(TOOLKIT_ENV_CASES))
def test_toolkit_env_precedence_is_the_operators(case: str) -> None:
    """toolkit.env read as the operator reads it for each runtime (getRuntimeConfigFiles,
    getRuntimeSocketFile, transformRuntimeConfigAndSocketMounts): the host directories mounted,
    and the container env: the names the runtime sets replaced in place (they keep the user's
    position), the names it does not read left as written."""
    runtime, user, host_dirs, want = TOOLKIT_ENV_CASES[case]
    written = [{"name": k, "value": v} for k, v in user.items()]
    p = pod(ds(model({"toolkit": {"env": written}, "cdi": {"enabled": False}}, pools=[{**UBUNTU, "runtime": runtime}]), "container-toolkit"))
    c = ctr(p, "nvidia-container-toolkit-ctr")
    e = env(c)
    assert e["RUNTIME"] == runtime
    assert {k: e.get(k) for k in want} == want
    assert {k: volumes(p)[k]["hostPath"]["path"] for k in host_dirs} == host_dirs
    names = [x["name"] for x in c["env"]]
    assert [n for n in names if n in user] == list(user)  # in place, in the user's order
    assert names.index(next(iter(user))) < names.index("RUNTIME")  # where the user put them, before the runtime's
    assert len(names) == len(set(names))


def test_toolkit_splits_per_distinct_runtime_setup() -> None:
    k3s = {
        **RHEL,
        "runtimeConfig": {
            "config": "/var/lib/rancher/k3s/agent/etc/containerd/config.toml",
            "socket": "/run/k3s/containerd/containerd.sock",
        },
    }
    objs = objects(model(pools=[UBUNTU, k3s]))
    dss = find(objs, "container-toolkit", "DaemonSet")
    assert [d["metadata"]["name"] for d in dss] == [f"{container_toolkit.NAME}-ubuntu2204", f"{container_toolkit.NAME}-rhel94"]
    k3s_pod = pod(dss[1])
    assert volumes(k3s_pod)["containerd-config"]["hostPath"]["path"] == "/var/lib/rancher/k3s/agent/etc/containerd"
    exprs = terms(k3s_pod)
    assert len(exprs) == 1
    assert {"key": "feature.node.kubernetes.io/system-os_release.ID", "operator": "In", "values": ["rhel"]} in exprs[0]
    # pools that agree share one DaemonSet with no pool restriction
    same = find(objects(model()), "container-toolkit", "DaemonSet")
    assert [d["metadata"]["name"] for d in same] == [container_toolkit.NAME]


def test_toolkit_takes_paths_apart_as_the_operator() -> None:
    """Go's path.Dir / path.Base and filepath.Join("/host", ...) (controllers/object_controls.go):
    a trailing slash or a dot segment gives the operator's directory and name."""
    odd = {**UBUNTU, "runtimeConfig": {"config": "/etc/k0s/./containerd.toml/", "socket": "/run//k0s/containerd.sock", "configSource": "command,file=,file=/etc/k0s/../k0s/base.toml"}}
    p = pod(ds(model(pools=[odd]), "container-toolkit"))
    e = env(ctr(p, "nvidia-container-toolkit-ctr"))
    assert e["CONTAINERD_CONFIG"] == "/runtime/config-dir/containerd.toml"
    assert volumes(p)["containerd-config"]["hostPath"]["path"] == "/etc/k0s/containerd.toml"
    assert volumes(p)["containerd-socket"]["hostPath"]["path"] == "/run/k0s"
    assert e["RUNTIME_CONFIG_SOURCE"] == "command,file=/host,file=/host/etc/k0s/base.toml"


def test_toolkit_docker_has_no_drop_in_and_crio_no_socket_whatever_is_set() -> None:
    """As the operator (getRuntimeConfigFiles, getRuntimeSocketFile): Docker gets no drop-in
    file and the toolkit no CRI-O socket, even when toolkit.env or runtimeConfig names one."""
    docker = {**UBUNTU, "runtime": "docker", "runtimeConfig": {"dropInConfig": "/etc/docker/daemon.d/nvidia.json"}}
    crio = {**RHEL, "runtime": "crio", "runtimeConfig": {"socket": "/run/crio/crio.sock"}}
    m = model({"toolkit": {"env": [{"name": "RUNTIME_DROP_IN_CONFIG", "value": "/etc/x/99-nvidia.toml"}]}}, pools=[docker, crio])
    for d in find(objects(m), "container-toolkit", "DaemonSet"):
        p = pod(d)
        e = env(ctr(p, "nvidia-container-toolkit-ctr"))
        if e["RUNTIME"] == "docker":  # not read for Docker: it stays in the env as written
            assert e["RUNTIME_DROP_IN_CONFIG"] == "/etc/x/99-nvidia.toml" and "RUNTIME_DROP_IN_CONFIG_HOST_PATH" not in e
            assert "docker-drop-in-config" not in volumes(p)
        else:
            assert "RUNTIME_SOCKET" not in e and "crio-socket" not in volumes(p)
            assert e["RUNTIME_DROP_IN_CONFIG_HOST_PATH"] == "/etc/x/99-nvidia.toml"


def test_toolkit_pool_facts_carry_the_derived_host_paths() -> None:
    """Each pool's chart values carry its runtime setup as the pod takes it (no template can take
    a directory out of a path), and the toolkit built from those facts is the one built from the
    pool's runtimeConfig."""
    from renderer.emit.helm_values import chart_values, model_of

    k3s = {**RHEL, "runtimeConfig": {"config": "/var/lib/rancher/k3s/agent/etc/containerd/config.toml", "socket": "/run/k3s/containerd/containerd.sock"}}
    m = model(pools=[UBUNTU, k3s])
    facts = chart_values(m)["driver"]["pools"]
    assert facts["rhel94"]["node"]["toolkitRuntime"] == "containerd"
    assert facts["rhel94"]["node"]["toolkitConfigDir"] == "/var/lib/rancher/k3s/agent/etc/containerd"
    assert facts["rhel94"]["node"]["toolkitSocketDir"] == "/run/k3s/containerd"
    assert facts["rhel94"]["node"]["toolkitSocketFile"] == "containerd.sock"
    assert facts["ubuntu2204"]["node"]["toolkitConfigDir"] == "/etc/containerd"
    again = model_of(chart_values(m), m.cluster)
    assert all(p.toolkit_paths is not None for p in again.pools)
    assert find(objects(again), "container-toolkit", "DaemonSet") == find(objects(m), "container-toolkit", "DaemonSet")


def test_toolkit_nri_mode() -> None:
    m = model({"cdi": {"nriPluginEnabled": True}})
    p = pod(ds(m, "container-toolkit"))
    e = env(ctr(p, "nvidia-container-toolkit-ctr"))
    assert e["ENABLE_NRI_PLUGIN"] == "true"
    assert e["NRI_SOCKET"] == "/runtime/nri-sock-dir/nri.sock"
    dp = ds(m, "device-plugin")
    assert "runtimeClassName" not in pod(dp)
    assert dp["spec"]["template"]["metadata"]["annotations"]["nvidia.cdi.k8s.io/container.nvidia-device-plugin"] == "management.nvidia.com/gpu=all"


@pytest.mark.parametrize("release", ["v26.3", "v26.7"])
def test_toolkit_nri_mode_runtime_setup_per_release(release: str) -> None:
    """transformForRuntime: v26.7 in NRI mode configures no runtime (no runtime class, config,
    drop-in or socket; a host-path variable stays as written), v26.3 sets them up and the NRI
    socket besides; both take the NRI socket's host path from toolkit.env's NRI_SOCKET."""
    user = [{"name": "NRI_SOCKET", "value": "/run/k0s/nri/nri.sock"}, {"name": "CONTAINERD_CONFIG", "value": "/etc/k0s/containerd.toml"}]
    m = model({"cluster": {"operatorRelease": release}, "cdi": {"nriPluginEnabled": True}, "toolkit": {"env": user}})
    p = pod(ds(m, "container-toolkit"))
    e = env(ctr(p, "nvidia-container-toolkit-ctr"))
    assert e["RUNTIME"] == "containerd" and e["NRI_SOCKET"] == "/runtime/nri-sock-dir/nri.sock"
    assert volumes(p)["nri-socket"]["hostPath"] == {"path": "/run/k0s/nri", "type": "DirectoryOrCreate"}
    runtime_names = {"CONTAINERD_RUNTIME_CLASS", "RUNTIME_CONFIG", "RUNTIME_DROP_IN_CONFIG", "RUNTIME_DROP_IN_CONFIG_HOST_PATH", "RUNTIME_SOCKET", "CONTAINERD_SOCKET"}
    runtime_volumes = {"containerd-config", "containerd-drop-in-config", "containerd-socket"}
    if release == "v26.7":
        assert not runtime_names & set(e) and not runtime_volumes & set(volumes(p))
        assert e["CONTAINERD_CONFIG"] == "/etc/k0s/containerd.toml"
    else:
        assert runtime_names <= set(e) and runtime_volumes <= set(volumes(p))
        assert e["CONTAINERD_CONFIG"] == "/runtime/config-dir/containerd.toml"
        assert volumes(p)["containerd-config"]["hostPath"]["path"] == "/etc/k0s"


TOOLKIT_ASSET_ENV = ["ROOT", "NVIDIA_CONTAINER_RUNTIME_MODES_CDI_DEFAULT_KIND", "NVIDIA_VISIBLE_DEVICES", "TOOLKIT_PID_FILE"]
TOOLKIT_CDI_ENV = ["CDI_ENABLED", "NVIDIA_RUNTIME_SET_AS_DEFAULT", "NVIDIA_CONTAINER_RUNTIME_MODE", "CRIO_CONFIG_MODE"]


# v25.10 has no NRI plugin mode (its ClusterPolicy has no cdi.nriPluginEnabled)
RELEASE_CDI = [(r, m) for r in ("v25.10", "v26.3", "v26.7") for m in ("off", "on", "nri") if (r, m) != ("v25.10", "nri")]


@pytest.mark.parametrize(("release", "cdi"), RELEASE_CDI)
@pytest.mark.parametrize("runtime", ["containerd", "crio", "docker"])
def test_toolkit_env_order_is_the_operators(release: str, runtime: str, cdi: str) -> None:
    """The asset's env first (NRI_NAMESPACE, from v26.3 on, last of it), then what
    transformToolkit appends (the CDI names, or CRI-O's hook mode), then transformForRuntime's."""
    settings = {"off": {"enabled": False}, "on": {"enabled": True}, "nri": {"enabled": True, "nriPluginEnabled": True}}[cdi]
    m = model({"cluster": {"operatorRelease": release}, "cdi": settings}, pools=[{**UBUNTU, "runtime": runtime}])
    names = [e["name"] for e in ctr(pod(ds(m, "container-toolkit")), "nvidia-container-toolkit-ctr")["env"]]
    asset = TOOLKIT_ASSET_ENV + ([] if release == "v25.10" else ["NRI_NAMESPACE"])
    if cdi == "off":
        appended = ["CRIO_CONFIG_MODE"] if runtime == "crio" else []
    else:
        appended = TOOLKIT_CDI_ENV + (["ENABLE_NRI_PLUGIN"] if cdi == "nri" else [])
    assert names[: len(asset) + len(appended) + 1] == [*asset, *appended, "RUNTIME"]


# -- validator --------------------------------------------------------------------------------


def test_validator_init_chain_order_and_markers() -> None:
    m = model()
    p = pod(ds(m, "operator-validator"))
    assert [c["name"] for c in p["initContainers"]] == ["driver-validation", "toolkit-validation", "cuda-validation", "plugin-validation"]
    assert [env(c)["COMPONENT"] for c in p["initContainers"]] == ["driver", "toolkit", "cuda", "plugin"]
    assert "/run/nvidia/validations/*-ready" in ctr(p, "nvidia-operator-validator")["lifecycle"]["preStop"]["exec"]["command"][2]
    assert p["runtimeClassName"] == "nvidia"
    (role,) = find(objects(m), "operator-validator", "Role")
    assert "create" in role["rules"][0]["verbs"]


def test_validator_without_device_plugin_drops_plugin_validation() -> None:
    p = pod(ds(model({"devicePlugin": {"enabled": False}}), "operator-validator"))
    assert [c["name"] for c in p["initContainers"]] == ["driver-validation", "toolkit-validation", "cuda-validation"]


def test_operands_wait_for_toolkit_ready() -> None:
    objs = objects(model())
    for comp in ("device-plugin", "mps-control-daemon", "gpu-feature-discovery"):
        (d,) = find(objs, comp, "DaemonSet")
        assert pod(d)["initContainers"][0]["name"] == "toolkit-validation"


# -- device plugin, MPS, GFD ------------------------------------------------------------------


def test_device_plugin_without_config_has_no_config_manager() -> None:
    objs = objects(model())
    p = pod(find(objs, "device-plugin", "DaemonSet")[0])
    assert [c["name"] for c in p["containers"]] == ["nvidia-device-plugin"]
    assert "shareProcessNamespace" not in p
    assert len(find(objs, "device-plugin", "ConfigMap")) == 1  # the entrypoint only


def test_device_plugin_config_manager_and_rendered_configmap() -> None:
    data = {"ts": {"version": "v1", "sharing": {"timeSlicing": {"resources": [{"name": "nvidia.com/gpu", "replicas": 4}]}}}}
    m = model({"devicePlugin": {"config": {"create": True, "name": "plugin-cfg", "default": "ts", "data": data}}})
    objs = objects(m)
    from renderer.components.device_plugin import config_map

    (cm,) = config_map(m)
    assert "replicas: 4" in cm["data"]["ts"]
    for comp, process in (("device-plugin", "nvidia-device-plugin"), ("gpu-feature-discovery", "gpu-feature-discovery"), ("mps-control-daemon", "mps-control-daemon")):
        p = pod(find(objs, comp, "DaemonSet")[0])
        sidecar = env(ctr(p, "config-manager"))
        assert sidecar["PROCESS_TO_SIGNAL"] == process and sidecar["DEFAULT_CONFIG"] == "ts"
        assert env(ctr(p, "config-manager-init"))["ONESHOT"] == "true"
        assert volumes(p)["available-configs"]["configMap"]["name"] == "plugin-cfg"
    # a named but not created ConfigMap is referenced only
    objs = objects(model({"devicePlugin": {"config": {"name": "theirs"}}}))
    assert not find(objs, "device-plugin", "ConfigMap", "theirs")


@pytest.mark.parametrize(("strategy", "monitor"), [("none", False), ("single", True), ("mixed", True)])
def test_mig_strategy_env(strategy: str, monitor: bool) -> None:
    objs = objects(model({"mig": {"strategy": strategy}}))
    for comp, name in (("device-plugin", "nvidia-device-plugin"), ("gpu-feature-discovery", "gpu-feature-discovery"), ("mps-control-daemon", "mps-control-daemon-ctr")):
        e = env(ctr(pod(find(objs, comp, "DaemonSet")[0]), name))
        assert e["MIG_STRATEGY"] == strategy
        assert ("NVIDIA_MIG_MONITOR_DEVICES" in e) is monitor


def test_cdi_env_on_device_plugin() -> None:
    on = env(ctr(pod(ds(model(), "device-plugin")), "nvidia-device-plugin"))
    assert on["DEVICE_LIST_STRATEGY"] == "cdi-annotations,cdi-cri"
    assert on["NVIDIA_CDI_HOOK_PATH"] == "/usr/local/nvidia/toolkit/nvidia-cdi-hook"
    off = env(ctr(pod(ds(model({"cdi": {"enabled": False}}), "device-plugin")), "nvidia-device-plugin"))
    assert off["DEVICE_LIST_STRATEGY"] == "envvar" and "CDI_ENABLED" not in off


def test_mps_daemon_needs_mps_capable_nodes() -> None:
    exprs = terms(pod(ds(model(), "mps-control-daemon")))[0]
    assert {"key": "nvidia.com/mps.capable", "operator": "In", "values": ["true"]} in exprs
    assert {"key": "nvidia.com/gpu.deploy.device-plugin", "operator": "NotIn", "values": ["false", "paused-for-driver-upgrade"]} in exprs


def test_gfd_rbac_for_node_feature_api() -> None:
    # GFD (v0.19+) publishes NodeFeature objects unless told to write the features.d file: a Role unless then
    assert find(objects(model({"gfd": {"env": [{"name": "USE_NODE_FEATURE_API", "value": "false"}]}})), "gpu-feature-discovery", "Role") == []
    (role,) = find(objects(model()), "gpu-feature-discovery", "Role")
    assert role["rules"][0]["apiGroups"] == ["nfd.k8s-sigs.io"]


# -- common settings --------------------------------------------------------------------------


def test_daemonsets_common_settings() -> None:
    tol = [{"key": "gpu", "operator": "Exists"}]
    common = {
        "daemonsets": {
            "tolerations": tol,
            "priorityClassName": "gpu-critical",
            "rollingUpdate": {"maxUnavailable": "2"},
            "annotations": {"a": "b"},
            "podSecurityContext": {"fsGroup": 0},
        }
    }
    m = model(common)
    d = ds(m, "device-plugin")
    p = pod(d)
    assert p["tolerations"] == tol and p["priorityClassName"] == "gpu-critical"
    assert p["securityContext"] == {"fsGroup": 0}
    assert d["spec"]["updateStrategy"] == {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 2}}
    assert d["spec"]["template"]["metadata"]["annotations"]["a"] == "b"
    assert d["metadata"]["annotations"]["a"] == "b"
    # the driver follows driver.upgradePolicy, whatever daemonsets.updateStrategy says
    assert ds(m, "driver", "nvidia-driver-daemonset-ubuntu2204")["spec"]["updateStrategy"] == {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1, "maxSurge": 0}}
    pct = model({"daemonsets": {"rollingUpdate": {"maxUnavailable": "25%"}}})
    assert ds(pct, "device-plugin")["spec"]["updateStrategy"]["rollingUpdate"]["maxUnavailable"] == "25%"


def test_host_paths_transforms() -> None:
    m = model({"hostPaths": {"rootFS": "/sandbox", "driverInstallDir": "/opt/nvidia/driver"}})
    p = pod(ds(m, "container-toolkit"))
    assert volumes(p)["host-root"]["hostPath"]["path"] == "/sandbox"
    assert volumes(p)["host-dev-char"]["hostPath"]["path"] == "/sandbox/dev/char"
    assert volumes(p)["driver-install-dir"]["hostPath"]["path"] == "/opt/nvidia/driver"
    val = ctr(p, "driver-validation")
    assert env(val)["DRIVER_INSTALL_DIR"] == "/opt/nvidia/driver"
    assert mounts(val)["/opt/nvidia/driver"] == "driver-install-dir"
    for c in [*p["initContainers"], *p["containers"]]:
        assert env(c)["HOST_ROOT"] == "/sandbox"
    assert "HOST_ROOT" not in env(ctr(pod(ds(model(), "container-toolkit")), "nvidia-container-toolkit-ctr"))


def test_pull_secrets_resources_env_args() -> None:
    values = {
        "devicePlugin": {"imagePullSecrets": ["dp-cred"], "resources": {"limits": {"cpu": "1"}}, "env": [{"name": "X", "value": "1"}], "args": ["--fail-on-init-error=false"]},
        "validator": {"imagePullSecrets": ["val-cred"]},
        "gfd": {"env": [{"name": "GFD_SLEEP_INTERVAL", "value": "10s"}]},
    }
    m = model(values)
    p = pod(ds(m, "device-plugin"))
    assert p["imagePullSecrets"] == [{"name": "val-cred"}, {"name": "dp-cred"}]  # the validator's first (transformValidationInitContainer)
    main = ctr(p, "nvidia-device-plugin")
    assert main["resources"] == {"limits": {"cpu": "1"}}
    assert env(main)["X"] == "1" and main["args"] == ["--fail-on-init-error=false"]
    assert env(ctr(pod(ds(m, "gpu-feature-discovery")), "gpu-feature-discovery"))["GFD_SLEEP_INTERVAL"] == "10s"


@pytest.mark.parametrize(
    ("values", "expected"),
    [
        ({}, "nvidia"),
        ({"cluster": {"runtimeClass": "nvidia-x"}}, "nvidia-x"),
        ({"cdi": {"enabled": False}, "cluster": {"containerRuntime": "crio"}}, None),
        ({"cdi": {"enabled": True}, "cluster": {"containerRuntime": "crio"}}, "nvidia"),
        ({"cdi": {"nriPluginEnabled": True}}, None),
    ],
)
def test_runtime_class_rules(values: dict[str, Any], expected: str | None) -> None:
    objs = objects(model(values, pools=[]))
    for comp in ("device-plugin", "gpu-feature-discovery", "operator-validator", "mps-control-daemon"):
        assert pod(find(objs, comp, "DaemonSet")[0]).get("runtimeClassName") == expected
