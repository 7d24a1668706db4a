"""Golden cases: tests/cases/<name>/ holds inputs (values.yaml, overlays/) and expected/.

``pytest --update-golden`` rewrites expected/ from the current render.
"""

from __future__ import annotations

import shutil
from pathlib import Path

CASES = Path(__file__).resolve().parent / "cases"


def case_names() -> list[str]:
    return sorted(p.name for p in CASES.iterdir() if (p / "values.yaml").is_file())


def render_case(name: str) -> dict[str, str]:
    from renderer.inputs import read_inputs
    from renderer.render import render

    folder = CASES / name
    return render(read_inputs(folder / "values.yaml", folder / "overlays"))


def read_expected(name: str) -> dict[str, str]:
    root = CASES / name / "expected"
    if not root.is_dir():
        return {}
    return {
        p.relative_to(root).as_posix(): p.read_text(encoding="utf-8")
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def write_expected(name: str, files: dict[str, str]) -> None:
    root = CASES / name / "expected"
    if root.exists():
        shutil.rmtree(root)
    for rel, text in files.items():
        target = root / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
