"""PyYAML's import without its slowest line: one regular expression compiled when first used.

``yaml.reader`` compiles ``Reader.NON_PRINTABLE``, a character class over most of Unicode, when
it is imported: 5 to 7 ms of CPU, about a tenth of the imports of a cold build, for a pattern
only PyYAML's pure-Python reader uses (gpu-render reads YAML with libyaml's parser or its own,
:mod:`renderer.fastyaml`). :func:`prime` puts a stand-in under that pattern's key in the
``re`` module's cache before anything imports ``yaml``, so ``re.compile`` hands the class the
stand-in, which compiles the pattern on its first use (the same pattern: ``(?:...)`` around it
only gives it another cache key). Where ``re`` keeps no such cache (another Python), nothing
is put in it and the pattern is compiled at the import, as before.
"""

from __future__ import annotations

import re
from typing import Any

NON_PRINTABLE = "[^\x09\x0a\x0d\x20-\x7e\x85\xa0-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]"
"""``yaml.reader.Reader.NON_PRINTABLE``'s pattern, as PyYAML writes it."""


class LazyPattern:
    """A compiled pattern made on first use: every attribute is the compiled pattern's."""

    def __init__(self, pattern: str) -> None:
        self._source = pattern
        self._compiled: re.Pattern[str] | None = None

    def __getattr__(self, name: str) -> Any:
        if self._compiled is None:
            self._compiled = re.compile("(?:" + self._source + ")")
        return getattr(self._compiled, name)


def prime() -> None:
    """The stand-in in ``re``'s cache, unless ``yaml`` is imported already (or ``re`` has no cache)."""
    import sys

    cache = getattr(re, "_cache", None)
    if "yaml" in sys.modules or not isinstance(cache, dict):
        return
    cache.setdefault((str, NON_PRINTABLE, 0), LazyPattern(NON_PRINTABLE))


prime()
