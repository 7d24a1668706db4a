"""renderer.datafiles reads the shipped data files as importlib.resources reads them."""

from __future__ import annotations

from importlib import resources

from renderer.datafiles import data_text


def test_data_text_is_what_importlib_resources_reads() -> None:
    names = sorted(t.name for t in resources.files("renderer.data").iterdir() if t.is_file() and not t.name.endswith((".py", ".pyc")))
    assert names
    for name in names:
        assert data_text(name) == resources.files("renderer.data").joinpath(name).read_text(encoding="utf-8"), name
