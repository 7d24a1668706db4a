"""The node labeller's script, run by /bin/sh against a fake kubectl: per-pool config labels
are seeded once, never overwritten, and the MIG default only on MIG-capable nodes."""

from __future__ import annotations

import os
import stat
import subprocess
from pathlib import Path

from renderer.components import node_labeller
from renderer.inputs import Inputs
from renderer.pipeline import plan

FAKE_KUBECTL = r"""#!/bin/sh
# get node N -o jsonpath={.metadata.labels.KEY} | label node N KEY=VALUE
db="$LABELS_FILE"
if [ "$1" = get ]; then
  key=$(printf '%s' "$5" | sed -e 's/^jsonpath={.metadata.labels.//' -e 's/}$//' -e 's/\\\././g')
  grep -F "$key=" "$db" | while IFS= read -r line; do
    case "$line" in "$key="*) printf '%s' "${line#*=}" ;; esac
  done
  exit 0
fi
if [ "$1" = label ]; then
  key=${4%%=*}
  if grep -q -F "$key=" "$db"; then echo "already has $key" >&2; exit 1; fi
  echo "$4" >> "$db"; exit 0
fi
exit 2
"""


def _env_of(values: str) -> dict[str, str]:
    p = plan(Inputs(values.encode(), "values.yaml"))
    assert not [x for x in p.problems if x.severity.name == "ERROR"], p.problems
    model = p.base
    assert model is not None
    return {e["name"]: e["value"] for e in node_labeller._env(model) if "value" in e}


def _run(tmp_path: Path, env: dict[str, str], labels: dict[str, str]) -> dict[str, str]:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(parents=True)
    for name, text in (("kubectl", FAKE_KUBECTL), ("sleep", "#!/bin/sh\nexit 0\n")):
        exe = bin_dir / name
        exe.write_text(text)
        exe.chmod(exe.stat().st_mode | stat.S_IEXEC)
    db = tmp_path / "labels"
    db.write_text("".join(f"{k}={v}\n" for k, v in labels.items()))
    run_env = {**env, "PATH": f"{bin_dir}:{os.environ['PATH']}", "LABELS_FILE": str(db), "NODE_NAME": "n1"}
    subprocess.run(["/bin/sh", "-c", node_labeller.SCRIPT], env=run_env, check=True, capture_output=True, timeout=60)
    return dict(line.split("=", 1) for line in db.read_text().splitlines())


POLICY = """
nodePools:
  - name: a100
    os: {id: ubuntu, version: "22.04"}
    mig: {config: all-1g.10gb}
    devicePluginConfig: a100-sliced
  - name: rhel
    os: {id: rhel, version: "9.4"}
devicePlugin:
  config: {create: true, name: plugin-configs, default: any, data: {any: "version: v1\\n", a100-sliced: "version: v1\\n"}}
"""

UBUNTU = {"feature.node.kubernetes.io/system-os_release.ID": "ubuntu", "feature.node.kubernetes.io/system-os_release.VERSION_ID": "22.04"}


def test_pool_labels_seeded_once(tmp_path: Path) -> None:
    env = _env_of(POLICY)
    assert "device-plugin" in env["POOL_RULES"] or ";a100-sliced;" in env["POOL_RULES"]
    got = _run(tmp_path / "a", env, {**UBUNTU, "nvidia.com/mig.capable": "true"})
    assert got["nvidia.com/device-plugin.config"] == "a100-sliced"
    assert got["nvidia.com/mig.config"] == "all-1g.10gb"
    assert got["nvidia.com/gpu.deploy.device-plugin"] == "true"


def test_user_relabel_is_kept(tmp_path: Path) -> None:
    env = _env_of(POLICY)
    got = _run(tmp_path, env, {**UBUNTU, "nvidia.com/mig.capable": "true", "nvidia.com/mig.config": "all-disabled", "nvidia.com/device-plugin.config": "any"})
    assert got["nvidia.com/mig.config"] == "all-disabled"
    assert got["nvidia.com/device-plugin.config"] == "any"


def test_other_pool_gets_only_the_operator_default(tmp_path: Path) -> None:
    env = _env_of(POLICY)
    rhel = {"feature.node.kubernetes.io/system-os_release.ID": "rhel", "feature.node.kubernetes.io/system-os_release.VERSION_ID": "9.4"}
    got = _run(tmp_path / "r", env, {**rhel, "nvidia.com/mig.capable": "true"})
    assert "nvidia.com/device-plugin.config" not in got
    assert got["nvidia.com/mig.config"] == "all-disabled"  # migManager.config.default, as the operator seeds it
    got = _run(tmp_path / "n", env, {**rhel, "nvidia.com/mig.capable": "false"})
    assert "nvidia.com/mig.config" not in got


def test_non_disabled_default_is_not_seeded(tmp_path: Path) -> None:
    """The env carries the policy's default (so the chart takes it from values); the script seeds
    it only when it is ``all-disabled``, as the operator does."""
    env = _env_of(POLICY + "migManager: {config: {default: all-1g.10gb}}\n")
    assert env["MIG_CONFIG_DEFAULT"] == "all-1g.10gb"
    rhel = {"feature.node.kubernetes.io/system-os_release.ID": "rhel", "feature.node.kubernetes.io/system-os_release.VERSION_ID": "9.4"}
    got = _run(tmp_path, env, {**rhel, "nvidia.com/mig.capable": "true"})
    assert "nvidia.com/mig.config" not in got


SANDBOX = """
nodePools:
  - name: vms
    os: {id: ubuntu, version: "22.04"}
sandboxWorkloads: {enabled: true, defaultWorkload: vm-passthrough}
"""


def test_an_invalid_workload_label_seeds_the_default_workload(tmp_path: Path) -> None:
    """As the operator's getWorkloadConfig: a `nvidia.com/gpu.workload.config` value that names
    no workload (a typo) counts as `sandboxWorkloads.defaultWorkload`; a valid one is kept."""
    env = _env_of(SANDBOX)
    typo = _run(tmp_path / "typo", env, {"nvidia.com/gpu.workload.config": "vm-passthru", "nvidia.com/mig.capable": "false"})
    assert typo["nvidia.com/gpu.deploy.vfio-manager"] == "true" and typo["nvidia.com/gpu.deploy.driver"] == "false"
    container = _run(tmp_path / "container", env, {"nvidia.com/gpu.workload.config": "container", "nvidia.com/mig.capable": "false"})
    assert container["nvidia.com/gpu.deploy.driver"] == "true" and container["nvidia.com/gpu.deploy.vfio-manager"] == "false"
