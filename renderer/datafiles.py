"""The data files gpu-render ships (``renderer/data/``), read as the files they are.

``importlib.resources`` cost about 5 ms of a cold build's CPU, to import and to set up its
readers (which import ``zipfile``), for a few reads of files that sit beside the code in an
installed package and in a checkout alike. :func:`data_text` opens the file beside this module
and asks ``importlib.resources`` only when it is not there (a package that is no folder).
"""

from __future__ import annotations

import os

_DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")


def data_text(name: str) -> str:
    """The text of ``renderer/data/<name>`` (UTF-8; newlines read as ``open`` reads them, as
    ``importlib.resources``' ``read_text`` does)."""
    try:
        with open(os.path.join(_DATA, name), encoding="utf-8") as f:
            return f.read()
    except OSError:  # pragma: no cover - not a folder install: the import system knows where it is
        from importlib import resources

        return resources.files("renderer.data").joinpath(name).read_text(encoding="utf-8")
