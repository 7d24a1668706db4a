"""Memo: each component's objects rendered once per distinct configuration within one build.

A component's ``build`` (with its ``enabled`` gate) and its share of ``render.finish``
(``security.harden`` and ``waves.annotate_all``) are pure functions of the model data they
read. The first time a component is rendered, it runs against a *read-tracking view* of the
model that records every path it reads and what it saw there; the next cluster whose model
gives the same answers to those reads gets the same result back, without running anything.

Reads, as recorded (``Path`` tuples; ``v`` = ``model.values``, ``p`` = ``model.pools``,
``c`` = ``model.cluster``, ``b`` = "is this ServiceAccount bound by some RoleBinding"):

* ``d[k]``, ``d.get(k)``, ``k in d`` and truthiness read one key: its scalar value, whether
  it is absent, or only that it holds a non-empty dict or list (then the tracker hands out a
  view of that dict, so deeper reads are recorded too). An empty dict or list is read whole.
* Anything else on a dict or list (iteration, ``len``, ``keys``/``items``/``values``, copies,
  equality, ``repr``, ``+``, ``|``) reads the whole subtree; a list is always read whole.
* ``model.pools`` reads its length; each pool's fields are read one by one.
* Views refuse to be changed (builders never write into the model).

Each component keeps a decision tree over these reads (as ``helm_eval.EvalMemo`` does for
chart templates): a node names the next read, its children are keyed by the answer, a leaf
holds the result. A cluster walks the tree doing only the reads; a miss renders for real and
adds its branch.

Fail safe, never a wrong hit: on every miss the component is also rendered on the plain
model and the two results must be identical (same ``repr``, so same order) and every
recorded read must give the same answer when looked up again; a builder that reads
something the views cannot see (a C function that bypasses the overridden methods sees an
empty container, so the results differ), raises on a view, or writes into it is marked
untracked and is rendered fresh for every cluster from then on.

**Results are shared, never copied**: clusters that agree get the very same lists and
objects. Rendered objects are therefore immutable downstream: emitters and everything after
``render.objects`` must copy before they change anything (``tests/test_memo.py`` renders a
fleet, snapshots it, runs every emitter and compares).
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Callable, Container, Iterator
from typing import Any, NoReturn

from renderer.components import COMPONENTS, Component
from renderer.components.common import Obj
from renderer.jsondata import clone
from renderer.model import Model, Pool

Path = tuple[Any, ...]
Objects = dict[str, list[Obj]]

_ABSENT: Any = object()
_INVALID: Any = object()
_POOL_FIELDS = frozenset(f.name for f in dataclasses.fields(Pool))
_SCALARS = frozenset({str, int, bool, float, type(None)})


def _key(value: Any, whole: bool) -> str:
    """What a read saw, as a string: equal strings mean the reader could not tell the values apart."""
    if type(value) in _SCALARS:
        return repr(value)
    if value is _ABSENT:
        return "<absent>"
    if value is _INVALID:
        return "<invalid>"
    if not whole:
        if isinstance(value, dict):
            return "<dict>" if value else "{}"
        if isinstance(value, list):
            return "<list>" if value else "[]"
        if isinstance(value, tuple):
            return f"<tuple {len(value)}>"
        if isinstance(value, Pool):
            return "<pool>"
    return repr(value)


class _Log:
    """The reads of one tracked render, in order, each recorded once."""

    __slots__ = ("reads", "seen", "wholes")

    def __init__(self) -> None:
        self.reads: list[tuple[Path, bool, str]] = []
        self.seen: set[tuple[Path, bool]] = set()
        self.wholes: set[Path] = set()

    def note(self, path: Path, whole: bool, value: Any) -> None:
        if (path, whole) in self.seen:
            return
        for i in range(1, len(path) + 1):
            if path[:i] in self.wholes:
                return  # already read as part of a whole subtree
        self.seen.add((path, whole))
        if whole:
            self.wholes.add(path)
        self.reads.append((path, whole, _key(value, whole)))


def _read_only(*_: Any, **__: Any) -> NoReturn:
    raise TypeError("the model is read-only while a component renders")


def _wrap(value: Any, path: Path, log: _Log) -> Any:
    if isinstance(value, dict):
        if not value:
            log.note(path, True, value)
            return value
        return _DictView(value, path, log)
    if isinstance(value, list):
        if not value:
            log.note(path, True, value)
            return value
        return _ListView(value, path, log)
    return value


class _DictView(dict):  # type: ignore[type-arg]
    """A dict of the model that records what is read. Its own storage stays empty on purpose:
    code that bypasses these methods sees an empty dict, so the miss check catches it."""

    __slots__ = ("_data", "_kids", "_log", "_path")

    def __init__(self, data: dict[Any, Any], path: Path, log: _Log) -> None:
        super().__init__()
        self._data = data
        self._path = path
        self._log = log
        self._kids: dict[Any, Any] = {}

    def _whole(self) -> dict[Any, Any]:
        self._log.note(self._path, True, self._data)
        return self._data

    def _child(self, key: Any, default: Any) -> Any:
        if key in self._kids:
            return self._kids[key]
        path = (*self._path, key)
        if key not in self._data:
            self._log.note(path, False, _ABSENT)
            return default
        value = self._data[key]
        self._log.note(path, False, value)
        kid = self._kids[key] = _wrap(value, path, self._log)
        return kid

    def __getitem__(self, key: Any) -> Any:
        value = self._child(key, _ABSENT)
        if value is _ABSENT:
            raise KeyError(key)
        return value

    def get(self, key: Any, default: Any = None) -> Any:
        return self._child(key, default)

    def __contains__(self, key: object) -> bool:
        return self._child(key, _ABSENT) is not _ABSENT

    def __bool__(self) -> bool:
        self._log.note(self._path, False, self._data)
        return bool(self._data)

    def __len__(self) -> int:
        return len(self._whole())

    def __iter__(self) -> Iterator[Any]:
        return iter(self._whole())

    def __reversed__(self) -> Iterator[Any]:
        return iter(reversed(self._whole()))

    def keys(self) -> Any:
        return self._whole().keys()

    def values(self) -> Any:
        return self._whole().values()

    def items(self) -> Any:
        return self._whole().items()

    def copy(self) -> dict[Any, Any]:
        return dict(self._whole())

    def __copy__(self) -> dict[Any, Any]:
        return dict(self._whole())

    def __deepcopy__(self, memo: dict[int, Any]) -> dict[Any, Any]:
        return copy.deepcopy(self._whole(), memo)

    def __eq__(self, other: object) -> bool:
        return self._whole() == (other._whole() if isinstance(other, _DictView) else other)

    def __ne__(self, other: object) -> bool:
        return not self == other

    __hash__ = None

    def __repr__(self) -> str:
        return repr(self._whole())

    def __or__(self, other: Any) -> dict[Any, Any]:
        return self._whole() | other  # type: ignore[no-any-return]

    def __ror__(self, other: Any) -> dict[Any, Any]:
        return other | self._whole()  # type: ignore[no-any-return]

    def __reduce_ex__(self, protocol: Any) -> NoReturn:
        raise TypeError("a tracked view is not copied by reduction")

    __setitem__ = __delitem__ = setdefault = pop = popitem = clear = update = __ior__ = _read_only


class _ListView(list):  # type: ignore[type-arg]
    """A list of the model: any use reads it whole (elements are handed out untracked)."""

    __slots__ = ("_data", "_log", "_path")

    def __init__(self, data: list[Any], path: Path, log: _Log) -> None:
        super().__init__()
        self._data = data
        self._path = path
        self._log = log

    def _whole(self) -> list[Any]:
        self._log.note(self._path, True, self._data)
        return self._data

    def __bool__(self) -> bool:
        self._log.note(self._path, False, self._data)
        return bool(self._data)

    def __getitem__(self, index: Any) -> Any:
        return self._whole()[index]

    def __len__(self) -> int:
        return len(self._whole())

    def __iter__(self) -> Iterator[Any]:
        return iter(self._whole())

    def __reversed__(self) -> Iterator[Any]:
        return iter(reversed(self._whole()))

    def __contains__(self, item: object) -> bool:
        return item in self._whole()

    def index(self, *args: Any) -> int:
        return self._whole().index(*args)

    def count(self, item: Any) -> int:
        return self._whole().count(item)

    def copy(self) -> list[Any]:
        return list(self._whole())

    def __copy__(self) -> list[Any]:
        return list(self._whole())

    def __deepcopy__(self, memo: dict[int, Any]) -> list[Any]:
        return copy.deepcopy(self._whole(), memo)

    def _other(self, other: Any) -> Any:
        return other._whole() if isinstance(other, _ListView) else other

    def __eq__(self, other: object) -> bool:
        return bool(self._whole() == self._other(other))

    def __ne__(self, other: object) -> bool:
        return not self == other

    def __lt__(self, other: Any) -> bool:
        return self._whole() < self._other(other)  # type: ignore[no-any-return]

    def __le__(self, other: Any) -> bool:
        return self._whole() <= self._other(other)  # type: ignore[no-any-return]

    def __gt__(self, other: Any) -> bool:
        return self._whole() > self._other(other)  # type: ignore[no-any-return]

    def __ge__(self, other: Any) -> bool:
        return self._whole() >= self._other(other)  # type: ignore[no-any-return]

    __hash__ = None

    def __repr__(self) -> str:
        return repr(self._whole())

    def __add__(self, other: Any) -> list[Any]:
        return self._whole() + self._other(other)  # type: ignore[no-any-return]

    def __radd__(self, other: Any) -> list[Any]:
        return self._other(other) + self._whole()  # type: ignore[no-any-return]

    def __mul__(self, n: Any) -> list[Any]:
        return list(self._whole() * n)

    __rmul__ = __mul__

    def __reduce_ex__(self, protocol: Any) -> NoReturn:
        raise TypeError("a tracked view is not copied by reduction")

    __setitem__ = __delitem__ = append = extend = insert = pop = remove = sort = reverse = clear = _read_only
    __iadd__ = __imul__ = _read_only


class _PoolView(Pool):
    """One node pool whose field reads are recorded (dict fields are handed out as views)."""

    def __getattribute__(self, name: str) -> Any:
        if name in _POOL_FIELDS:
            real, path, log, kids = object.__getattribute__(self, "_track")
            if name not in kids:
                value = getattr(real, name)
                log.note((*path, name), False, value)
                kids[name] = _wrap(value, (*path, name), log)
            return kids[name]
        return object.__getattribute__(self, name)

    def _whole(self) -> Pool:
        real, path, log, _ = object.__getattribute__(self, "_track")
        log.note(path, True, real)
        return real  # type: ignore[no-any-return]

    def __eq__(self, other: object) -> bool:
        return self._whole() == (other._whole() if isinstance(other, _PoolView) else other)

    def __hash__(self) -> int:
        return hash(self._whole())

    def __repr__(self) -> str:
        return repr(self._whole())

    def __reduce_ex__(self, protocol: Any) -> NoReturn:
        raise TypeError("a tracked view is not copied by reduction")


def _pool_view(real: Pool, path: Path, log: _Log) -> _PoolView:
    view = object.__new__(_PoolView)
    object.__setattr__(view, "_track", (real, path, log, {}))
    return view


class _PoolsView(tuple):  # type: ignore[type-arg]
    """``model.pools``: iteration and indexing read its length; each pool is a view."""

    _real: tuple[Pool, ...]
    _log: _Log
    _views: list[_PoolView]

    def _length(self) -> int:
        self._log.note(("p",), False, self._real)
        return len(self._real)

    def _whole(self) -> tuple[Pool, ...]:
        self._log.note(("p",), True, self._real)
        return self._real

    def __len__(self) -> int:
        return self._length()

    def __bool__(self) -> bool:
        return self._length() > 0

    def __iter__(self) -> Iterator[Pool]:
        self._length()
        return iter(self._views)

    def __getitem__(self, index: Any) -> Any:
        self._length()
        return self._views[index]

    def __contains__(self, item: object) -> bool:
        return item in self._whole()

    def __eq__(self, other: object) -> bool:
        return self._whole() == (other._whole() if isinstance(other, _PoolsView) else other)

    def __ne__(self, other: object) -> bool:
        return not self == other

    def __hash__(self) -> int:
        return hash(self._whole())

    def __repr__(self) -> str:
        return repr(self._whole())

    def __add__(self, other: Any) -> Any:
        return self._whole() + other

    def __radd__(self, other: Any) -> Any:
        return other + self._whole()

    def __mul__(self, n: Any) -> Any:
        return list(self._whole() * n)

    __rmul__ = __mul__

    def index(self, *args: Any) -> int:
        return self._whole().index(*args)

    def count(self, item: Any) -> int:
        return self._whole().count(item)

    def __reduce_ex__(self, protocol: Any) -> NoReturn:
        raise TypeError("a tracked view is not copied by reduction")


def _pools_view(real: tuple[Pool, ...], log: _Log) -> _PoolsView:
    view = tuple.__new__(_PoolsView)
    view._real = real
    view._log = log
    view._views = [_pool_view(p, ("p", i), log) for i, p in enumerate(real)]
    return view


class _ModelView(Model):
    """A :class:`Model` whose values, pools and cluster name are read through the views."""

    def __getattribute__(self, name: str) -> Any:
        if name == "cluster":
            real, log = object.__getattribute__(self, "_track")
            log.note(("c",), False, real)
            return real
        return object.__getattribute__(self, name)

    def __eq__(self, other: object) -> NoReturn:
        raise TypeError("a tracked model is not compared")

    def __hash__(self) -> NoReturn:
        raise TypeError("a tracked model is not hashed")

    def __reduce_ex__(self, protocol: Any) -> NoReturn:
        raise TypeError("a tracked view is not copied by reduction")


def _model_view(model: Model, log: _Log) -> Model:
    view = object.__new__(_ModelView)
    object.__setattr__(view, "values", _DictView(model.values, ("v",), log))
    object.__setattr__(view, "pools", _pools_view(model.pools, log))
    object.__setattr__(view, "_track", (model.cluster, log))
    return view


class _BoundView:
    """The set of bound ServiceAccounts: each membership test is a read."""

    __slots__ = ("_log", "_real")

    def __init__(self, real: Container[tuple[str, str]], log: _Log) -> None:
        self._real = real
        self._log = log

    def __contains__(self, item: object) -> bool:
        found = item in self._real
        if isinstance(item, tuple):
            self._log.note(("b", *item), False, found)
        else:  # pragma: no cover - harden only asks for (namespace, name) pairs
            self._log.note(("b", repr(item)), True, found)
        return found


def _lookup(model: Model, bound: Container[tuple[str, str]] | None, path: Path) -> Any:
    """The value a recorded read finds in ``model`` (``_ABSENT``/``_INVALID`` when it cannot)."""
    head = path[0]
    cur: Any
    if head == "v":
        cur, rest = model.values, path[1:]
    elif head == "c":
        return model.cluster
    elif head == "b":
        return bound is not None and tuple(path[1:]) in bound
    else:  # "p"
        if len(path) == 1:
            return model.pools
        index = path[1]
        if index >= len(model.pools):
            return _INVALID
        cur = model.pools[index]
        if len(path) == 2:
            return cur
        cur, rest = getattr(cur, path[2]), path[3:]
    for key in rest:
        if not isinstance(cur, dict):
            return _INVALID
        cur = cur.get(key, _ABSENT)
    return cur


class _Node:
    __slots__ = ("children", "path", "read", "result", "whole")

    def __init__(self) -> None:
        self.path: Path | None = None
        self.whole = False
        self.read: tuple[Path, bool] = ((), False)
        """``(path, whole)``: the key of this read in one model's answers."""
        self.children: dict[str, _Node] = {}
        self.result: list[Obj] | None = None


def _unwrap(value: Any) -> Any:
    """A tracked result as plain data: any view left in it is read whole and replaced by its data."""
    if isinstance(value, (_DictView, _ListView)):
        return _unwrap(value._whole())
    if isinstance(value, dict):
        return {k: _unwrap(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_unwrap(v) for v in value]
    return value


class _Untrackable(Exception):
    pass


class Memo:
    """One build's memo: ``objects(model)`` renders each distinct component configuration once."""

    def __init__(self) -> None:
        self._builds: dict[str, _Node] = {}
        self._shared: dict[int, tuple[list[Obj], set[tuple[str, str]], _Node]] = {}
        """Per memoised build result (by id): the result itself, the ServiceAccounts its
        bindings name, and the decision tree of its finish."""
        self._keys = {comp.name: comp.key for comp in COMPONENTS}
        self.untracked: set[str] = set()
        """Components that read something the views cannot see: rendered fresh every time."""
        self.hits = 0
        self.misses = 0

    def objects(self, model: Model) -> Objects:
        """The same as ``render.objects(model)``; lists are shared with other clusters that agree."""
        from renderer import security

        cache: dict[tuple[Path, bool], str] = {}
        built: Objects = {}
        for comp in COMPONENTS:
            root = self._builds.setdefault(comp.name, _Node())
            objs = self._render(comp.name, root, model, None, cache, lambda m, c=comp: _build(c, m))
            if objs:
                built[comp.name] = objs
        bound: set[tuple[str, str]] = set()
        for name, objs in built.items():
            if name in self.untracked:
                bound |= security.bound_service_accounts({name: objs})
                continue
            entry = self._shared.get(id(objs))
            if entry is None:  # the memo holds ``objs``, so its id is never reused
                entry = self._shared[id(objs)] = (objs, security.bound_service_accounts({name: objs}), _Node())
            bound |= entry[1]
        out: Objects = {}
        for name, objs in built.items():
            key = self._keys[name]
            root = self._shared[id(objs)][2] if name not in self.untracked else _Node()
            out[name] = self._render(name, root, model, bound, cache, lambda m, b, n=name, k=key, o=objs: _finish(m, n, k, o, b))
        return out

    def _render(
        self,
        name: str,
        root: _Node,
        model: Model,
        bound: Container[tuple[str, str]] | None,
        cache: dict[tuple[Path, bool], str],
        fn: Callable[..., list[Obj]],
    ) -> list[Obj]:
        if name in self.untracked:
            return _call(fn, model, bound)
        node: _Node | None = root
        while node is not None and node.path is not None:
            answer = cache.get(node.read)
            if answer is None:
                answer = cache[node.read] = _key(_lookup(model, bound, node.path), node.whole)
            node = node.children.get(answer)
        if node is not None and node.result is not None:
            self.hits += 1
            return node.result
        self.misses += 1
        plain = _call(fn, model, bound)
        try:
            _insert(root, _tracked_reads(fn, model, bound, plain), plain)
        except _Untrackable:
            self.untracked.add(name)
        return plain


def _build(comp: Component, model: Model) -> list[Obj]:
    return comp.build(model) if comp.enabled(model) else []


def _finish(model: Model, name: str, key: str, objs: list[Obj], bound: Container[tuple[str, str]]) -> list[Obj]:
    from renderer import security, waves

    hardened = security.harden(model, {name: clone(objs)}, {name: key}, bound)
    return waves.annotate_all(hardened)[name]


def _call(fn: Callable[..., list[Obj]], model: Model, bound: Container[tuple[str, str]] | None) -> list[Obj]:
    return fn(model) if bound is None else fn(model, bound)


def _tracked_reads(
    fn: Callable[..., list[Obj]], model: Model, bound: Container[tuple[str, str]] | None, plain: list[Obj]
) -> list[tuple[Path, bool, str]]:
    """The reads ``fn`` makes on ``model``, checked: the tracked result equals ``plain``."""
    log = _Log()
    try:
        tracked = _call(fn, _model_view(model, log), None if bound is None else _BoundView(bound, log))
        same = repr(_unwrap(tracked)) == repr(plain)
    except Exception as exc:
        raise _Untrackable from exc
    if not same:
        raise _Untrackable
    for path, whole, answer in log.reads:
        if _key(_lookup(model, bound, path), whole) != answer:
            raise _Untrackable
    return log.reads


def _insert(root: _Node, reads: list[tuple[Path, bool, str]], result: list[Obj]) -> None:
    node = root
    for path, whole, answer in reads:
        if node.path is None:
            if node.result is not None:
                raise _Untrackable  # same answers, yet more reads: not a function of its reads
            node.path, node.whole, node.read = path, whole, (path, whole)
        elif (node.path, node.whole) != (path, whole):
            raise _Untrackable
        node = node.children.setdefault(answer, _Node())
    if node.path is not None:
        raise _Untrackable
    node.result = result
