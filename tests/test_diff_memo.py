"""`gpu-render diff` renders both sides through one component memo: the same JSON as without it."""

from __future__ import annotations

import shutil
from pathlib import Path

from renderer import diff_report
from renderer.cli.diff import DiffOptions, compute
from tests.test_memo import varied_fleet

CHANGES = {
    # fleet-wide: a driver bump and a component turned on; per cluster: a pool added, a component off
    "values.yaml": "driver:\n  version: \"580.95.05\"\ndcgm:\n  enabled: true\n",
    "overlays/c004/values.yaml": "nodePools:\n  - name: extra\n    os: {id: ubuntu, version: \"22.04\"}\n    kernel: 5.15.0-1040-nvidia\n",
    "overlays/c007/values.yaml": "gfd:\n  enabled: false\n",
}


def test_diff_json_is_the_same_with_and_without_the_memo(tmp_path: Path) -> None:
    old = varied_fleet(tmp_path / "old", 24)
    new = tmp_path / "new"
    shutil.copytree(old, new)
    for rel, text in CHANGES.items():
        target = new / rel
        target.write_text(target.read_text() + text)
    shutil.rmtree(new / "overlays" / "c010")  # a cluster removed
    opts = DiffOptions(str(old), str(new), Path("values.yaml"), Path("overlays"), "json", True, False, (), None, 65536)
    memoised = diff_report.json_text(compute(opts, tmp_path), show_noise=True)
    fresh = diff_report.json_text(compute(opts, tmp_path, memoise=False), show_noise=True)
    assert memoised == fresh
    assert '"driver-reload"' in memoised  # the diff found the changes it should

