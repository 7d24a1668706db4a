"""Minimal conditions: two-level minimisation (Quine-McCluskey over multi-valued variables).

A template condition is a choice over a few knobs (booleans and enums). The analysis knows,
for every combination of their values, which case of an ``if/else if/else`` the static render
needs, and which combinations cannot be seen at all (the component or the object is left out
there): those are don't-cares. :func:`minimise` gives the smallest sum of products that holds
on every combination of the case, on none of the cases that must not take it, and anything on
the don't-cares.

A variable's literal is a set of its values: all of them (the variable is left out), one
(``x`` / ``not x``, ``eq x "v"``), all but one (``ne x "v"``) or any other subset (``has x
(list ...)``). Cost: fewest products, then fewest literals.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable
from typing import Any

Minterm = tuple[Any, ...]
Cube = tuple[frozenset[Any], ...]

MAX_UNIVERSE = 4096
"""Larger choices are left as they are (never met: groups vary at most 64 combinations)."""


def _minterms(cube: Cube) -> Iterable[Minterm]:
    """The cube's minterms, in no particular order (they are only counted and looked up)."""
    return itertools.product(*cube)


def _contains(big: Cube, small: Cube) -> bool:
    return all(s <= b for b, s in zip(big, small, strict=True))


def primes(on: set[Minterm], dc: set[Minterm], domains: list[tuple[Any, ...]]) -> list[Cube]:
    """Prime implicants of ``on`` with don't-cares ``dc``: cubes inside ``on | dc``, maximal.

    Level by level: level k holds every cube inside ``on | dc`` whose parts' sizes add up to
    the number of variables plus k (each is a cube of the level below grown by one value), so
    ``every`` holds all such cubes up to the level being grown."""
    allowed = on | dc
    level: set[Cube] = {tuple(frozenset([v]) for v in m) for m in allowed}
    every: set[Cube] = set(level)
    grew: set[Cube] = set()
    singles = [{v: frozenset([v]) for v in dom} for dom in domains]
    while level:
        nxt: set[Cube] = set()
        for cube in level:
            for i, dom in enumerate(domains):
                for value in dom:
                    if value in cube[i]:
                        continue
                    grown = (*cube[:i], cube[i] | singles[i][value], *cube[i + 1 :])
                    if grown in nxt:
                        grew.add(cube)
                        continue
                    # grown is inside `allowed` when the slice it adds is: a cube no larger
                    # than this one, so in `every` exactly when it is inside `allowed`
                    if (*cube[:i], singles[i][value], *cube[i + 1 :]) in every:
                        nxt.add(grown)
                        grew.add(cube)
        every |= nxt
        level = nxt
    # a cube that no single added value keeps inside `allowed` is contained in no larger one
    out = [c for c in every if c not in grew]
    return [c for c in sorted(out, key=_cube_key) if any(m in on for m in _minterms(c))]


def _cube_key(cube: Cube) -> tuple[tuple[str, ...], ...]:
    """A sort key independent of set order (string hashes differ between processes)."""
    return tuple(tuple(sorted(repr(v) for v in part)) for part in cube)


def literal_cost(cube: Cube, domains: list[tuple[Any, ...]]) -> int:
    cost = 0
    for part, dom in zip(cube, domains, strict=True):
        if len(part) == len(dom):
            continue
        cost += 1 if len(part) in (1, len(dom) - 1) else len(part)
    return cost


def cover(on: set[Minterm], cubes: list[Cube], domains: list[tuple[Any, ...]]) -> list[Cube]:
    """The cheapest set of ``cubes`` covering ``on`` (exact for small inputs, else greedy)."""
    covers = [frozenset(m for m in _minterms(c) if m in on) for c in cubes]
    need = frozenset(on)
    if len(cubes) <= 16:
        best: tuple[int, int, tuple[int, ...]] | None = None
        for size in range(1, len(cubes) + 1):
            for pick in itertools.combinations(range(len(cubes)), size):
                if frozenset().union(*(covers[i] for i in pick)) >= need:
                    cost = (size, sum(literal_cost(cubes[i], domains) for i in pick), pick)
                    if best is None or cost < best:
                        best = cost
            if best is not None:
                return [cubes[i] for i in best[2]]
    chosen: list[Cube] = []
    left = set(need)
    while left:
        i = max(range(len(cubes)), key=lambda j: (len(covers[j] & left), -literal_cost(cubes[j], domains), -j))
        chosen.append(cubes[i])
        left -= covers[i]
    return chosen


def minimise(on: set[Minterm], dc: set[Minterm], domains: list[tuple[Any, ...]]) -> list[Cube]:
    """A minimal sum of products for ``on`` (``[]``: never; one full cube: always)."""
    if not on:
        return []
    key = (frozenset(on), frozenset(dc - on), tuple(domains))
    found = _MEMO.get(key)
    if found is None:
        size = 1
        for dom in domains:
            size *= len(dom)
        if len(key[0]) + len(key[1]) == size:
            found = [tuple(frozenset(dom) for dom in domains)]
        else:
            found = cover(on, primes(on, dc - on, domains), domains)
        _MEMO[key] = found
    return list(found)


_MEMO: dict[tuple[frozenset[Minterm], frozenset[Minterm], tuple[tuple[Any, ...], ...]], list[Cube]] = {}
"""Conditions already minimised (a group's knobs choose many paths the same way)."""
