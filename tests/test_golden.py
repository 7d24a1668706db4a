"""Every golden case renders exactly to its expected/ folder."""

from __future__ import annotations

import pytest

from tests.golden import case_names, read_expected, render_case, write_expected


@pytest.mark.parametrize("name", case_names())
def test_golden(name: str, update_golden: bool) -> None:
    files = render_case(name)
    if update_golden:
        write_expected(name, files)
    expected = read_expected(name)
    assert sorted(files) == sorted(expected), "file lists differ (run pytest --update-golden)"
    for path, text in files.items():
        assert text == expected[path], f"{name}: {path} differs (run pytest --update-golden)"
