"""``gpu-render import-operator-values``: turn a GPU Operator chart values file into a policy.

Keeps the user's comments (those of block-style YAML: ruamel drops the ones inside a flow
mapping, and a file written as one is imported in block style) and every key the policy schema accepts, moves what has an
equivalent (renamed chart keys, older per-component keys, what the operator discovered live)
and removes only what has none, each with its reason: all from one table,
:mod:`renderer.chartkeys`. Numbers written where the schema wants a string (``version: 590``,
``1.10``) are taken as the text written, with a note when helm would have read other digits.
Adds the ``cluster`` and ``nodePools`` sections the operator would have discovered live.
"""

from __future__ import annotations

import io
import re
from dataclasses import dataclass
from typing import Any

from renderer import chartkeys
from renderer.loader import load_text
from renderer.problems import UserError


@dataclass(frozen=True)
class Imported:
    text: str
    dropped: tuple[tuple[str, str], ...]
    """(chart key, why) of every key removed."""
    moved: tuple[tuple[str, str, str], ...] = ()
    """(chart key, policy key, why) of every key moved."""
    notes: tuple[tuple[str, str], ...] = ()
    """(policy key, note): values changed in form (numbers taken as strings)."""
    unpinned: str = ""
    """Which images the file leaves to the chart's defaults, which are gpu-render's newest
    release's here (:func:`_unpinned`); or ""."""
    defaults: str = ""
    """Which keys the file leaves out whose chart default changed since an older chart
    (:func:`_changed_defaults`); or ""."""


def _schema() -> dict[str, Any]:
    from renderer.schema import load_schema

    return load_schema()


TOKEN = re.compile(r"[^\s,#\]}]+")


class _Importer:
    def __init__(self, raw: bytes, schema: dict[str, Any]) -> None:
        self.lines = raw.decode("utf-8", errors="replace").splitlines()
        self.schema = schema
        self.dropped: list[tuple[str, str]] = []
        self.moved: list[tuple[str, str, str]] = []
        self.notes: list[tuple[str, str]] = []
        self.pending: list[tuple[str, Any, str, str]] = []  # (to, value, from, why)
        self.newest: tuple[int, str] | None = None
        """The file's key that came last to the chart, with its first release's index
        (:func:`_newest_key`)."""
        self.operator: tuple[int, ...] | None = None
        """The minor release of the file's ``operator.version`` (its chart's), when it names one."""

    def walk(self, node: Any, prefix: str) -> None:
        from ruamel.yaml.comments import CommentedMap

        if not isinstance(node, CommentedMap):
            return
        for key in list(node.keys()):
            dotted = f"{prefix}.{key}" if prefix else str(key)
            status, to, why = chartkeys.fate(dotted, self.schema)
            value = node[key]
            if status == "kept" and self.taken_out(node, key, dotted):
                continue
            if status == "kept":
                self.coerce(node, key, dotted)
                sub = chartkeys.schema_node(self.schema, dotted) or {}
                if isinstance(value, CommentedMap) and value and ("properties" in sub or "$ref" in sub):
                    self.walk(value, dotted)
                    if not value:
                        del node[key]  # everything in it moved or was removed
                continue
            if status == "refused" and isinstance(value, CommentedMap) and any(k.startswith(dotted + ".") for k in chartkeys.chart_keys()[1]):
                self.walk(value, dotted)  # a subtree with moved or removed keys inside
                if not value:
                    del node[key]
                continue
            if status == "refused" or chartkeys.kept(dotted, node):
                continue  # left for validate to report at its place
            if self.by_value(node, key, dotted):
                continue
            if status == "removed" and isinstance(value, CommentedMap):
                self.extract(value, dotted)  # e.g. node-feature-discovery.worker.tolerations
            if status == "moved" and to is not None and (later := self.ignored_then(dotted)):
                self.dropped.append((dotted, f"{later}: Helm ignored it there, so the operator never read it ({to} is what it meant)"))
            elif status == "moved" and to is not None:
                self.pending.append((to, value, dotted, why))
            elif value not in ({}, [], None):
                left = _leaves(value, "") if dotted in chartkeys.NAMED_REMOVALS else []
                self.dropped.append((dotted, f"{why}: {', '.join(left)}" if left else why))
            del node[key]

    def taken_out(self, node: Any, key: Any, dotted: str) -> bool:
        """Take out a kept key written with no value (:meth:`dropped_null`) or whose value (or its
        section's) says the chart never passed it on (:meth:`by_value`): True when taken out."""
        if node[key] is None and self.dropped_null(node, key, dotted):
            return True
        return dotted in chartkeys.BY_VALUE and self.by_value(node, key, dotted)

    def by_value(self, node: Any, key: Any, dotted: str) -> bool:
        """Apply :func:`chartkeys.by_value` to ``node[key]``: True when it decided (the key is
        taken out, moved or removed)."""
        rule = chartkeys.by_value(dotted, node[key], self.written_since, node)
        if rule is None:
            return False
        to, value, why = rule
        if to is None:
            self.dropped.append((dotted, why))
        else:
            self.pending.append((to, value, dotted, why))
        del node[key]
        return True

    def written_since(self, minor: str) -> bool:
        """Does the file have a key that first came to the chart in release ``minor`` (``v25.3``)
        or later (so it was written for such a chart)?"""
        if self.operator is not None and self.operator >= _minor(minor):
            return True  # the operator's version names the chart: v25.10.1 is chart 25.10's
        releases = chartkeys.chart_keys()[0]
        return self.newest is not None and _minor(releases[self.newest[0]]) >= _minor(minor)

    def ignored_then(self, dotted: str) -> str:
        """Why an older release's key (one a wildcard rule moves) is not moved: the file has a key
        first in a release after that key's last (it was written for a chart without the key),
        or "" when it has none."""
        if self.newest is None or chartkeys.find_move(dotted, wildcards=False) is not None:
            return ""
        releases, keys = chartkeys.chart_keys()
        span = keys.get(dotted)
        if span is None or releases.index(span[1]) >= self.newest[0]:
            return ""
        first, last, since = (chartkeys.minor(r) for r in (span[0], span[1], releases[self.newest[0]]))
        return f"a key of charts {first} to {last}, and this file has {self.newest[1]} (chart {since} on)"

    def extract(self, node: Any, prefix: str) -> None:
        """Take out of a removed subtree the keys a rule names exactly (they move)."""
        for key in list(node.keys()):
            dotted = f"{prefix}.{key}"
            move = chartkeys.find_move(dotted, wildcards=False)
            parts = chartkeys.split_image(node[key]) if dotted == chartkeys.NFD_IMAGE and isinstance(node[key], str) else None
            if parts is not None:
                self.pending += [("nfd.repository", parts[0], dotted, chartkeys.NFD_IMAGE_WHY), ("nfd.image", parts[1], dotted, chartkeys.NFD_IMAGE_WHY)]
                del node[key]
            elif self.by_value(node, key, dotted):
                pass
            elif move is not None and move.to is not None:
                self.pending.append((move.to, node[key], dotted, move.why))
                del node[key]
            elif hasattr(node[key], "keys"):
                self.extract(node[key], dotted)
                if not node[key]:
                    del node[key]  # everything in it moved: nothing left to say removed

    def dropped_null(self, node: Any, key: Any, dotted: str) -> bool:
        """Take out a list or map key written with no value (``env:`` with every entry commented
        out): Helm drops a null value with the chart's default under it, so the chart prints no
        entries, as the policy does without the key when its default is empty. True when taken
        out; a null whose default is not empty stays, for validate to refuse."""
        sub = chartkeys.schema_node(self.schema, dotted) or {}
        if sub.get("type") not in ("array", "object") or sub.get("default") not in (None, [], {}):
            return False
        del node[key]
        self.notes.append((dotted, "written with no value, which Helm drops with the chart's empty default: no entries, as without the key"))
        return True

    def coerce(self, node: Any, key: Any, dotted: str) -> None:
        value = node[key]
        if isinstance(value, bool) or not isinstance(value, int | float):
            return
        sub = chartkeys.schema_node(self.schema, dotted) or {}
        if sub.get("type") != "string":
            return
        text = self.written(node, key) or str(value)
        node[key] = text
        note = f"the number {text} is taken as the string {text!r}"
        if isinstance(value, float) and repr(value) != text:
            note += f" (helm reads it as {value!r}: digits would be lost)"
        self.notes.append((dotted, note))

    def written(self, node: Any, key: Any) -> str:
        try:
            line, col = node.lc.value(key)
        except (KeyError, AttributeError, TypeError):
            return ""
        if line >= len(self.lines):
            return ""
        m = TOKEN.match(self.lines[line], col)
        return m.group(0).strip("'\"") if m else ""

    def place(self, doc: Any) -> None:
        from ruamel.yaml.comments import CommentedMap

        for to, value, source, why in self.pending:
            parts = to.split(".")
            node = doc
            for part in parts[:-1]:
                if part not in node or not isinstance(node[part], CommentedMap):
                    node[part] = CommentedMap()
                node = node[part]
            last = parts[-1]
            if last in node and node[last] != value:
                if isinstance(node[last], list) and isinstance(value, list):
                    node[last].extend(v for v in value if v not in node[last])
                else:
                    self.dropped.append((source, f"{to} is already set; kept that value ({why})"))
                    continue
            else:
                node[last] = value
            self.moved.append((source, to, why))


def _leaves(node: Any, prefix: str) -> list[str]:
    """The dotted keys under ``node`` that hold a value (an empty map or list says nothing); a
    map of labels (``nodeSelector``: keys with dots or slashes) is named as one key."""
    if not hasattr(node, "keys") or (prefix and any("." in str(k) or "/" in str(k) for k in node)):
        return [prefix] if prefix and node not in ({}, [], None, "") else []
    out: list[str] = []
    for key in node:
        out += _leaves(node[key], f"{prefix}.{key}" if prefix else str(key))
    return out


def _driver_args(doc: Any, notes: list[tuple[str, str]]) -> None:
    """A leading ``init`` taken out of ``driver.args``: the operator's ClusterPolicy puts
    ``driver.args`` in place of the driver container's ``init``, so its values files name it
    first; gpu-render renders ``init`` before ``driver.args`` (as an NVIDIADriver does) and
    refuses a second one (``driver-args-init``). The same command line either way."""
    driver = doc.get("driver")
    args = driver.get("args") if hasattr(driver, "get") else None
    if not isinstance(args, list) or not args or str(args[0]) != "init":
        return
    del args[0]
    if not args:
        del driver["args"]
    notes.append(("driver.args", "the leading `init` is taken out: gpu-render runs `nvidia-driver init` before driver.args, where the operator runs driver.args in its place"))


def _minor(tag: str) -> tuple[int, ...]:
    """``v25.3.4`` or ``v25.3`` -> (25, 3)."""
    return tuple(int(x) for x in chartkeys.minor(tag).split("."))


def _operator_minor(doc: Any) -> tuple[int, ...] | None:
    """(25, 10) for ``operator.version: v25.10.1``: the chart the file was written for (charts
    pin the operator's image to their own release), or None."""
    found = re.match(r"v?(\d+)\.(\d+)", str(_at(doc, "operator.version") or "").strip())
    return (int(found[1]), int(found[2])) if found else None


def _newest_key(doc: Any) -> tuple[int, str] | None:
    """The chart key of ``doc`` whose first release is the newest (the file was written for that
    release or a later one), with that release's index, or None when it has no chart key."""
    releases, keys = chartkeys.chart_keys()
    order = {r: i for i, r in enumerate(releases)}
    best: tuple[int, str] | None = None
    stack: list[tuple[Any, str]] = [(doc, "")]
    while stack:
        node, prefix = stack.pop()
        for key, value in node.items():
            dotted = f"{prefix}.{key}" if prefix else str(key)
            span = keys.get(dotted)
            if span is not None and (best is None or (order[span[0]], dotted) > best):
                best = (order[span[0]], dotted)
            if hasattr(value, "items"):
                stack.append((value, dotted))
    return best


def _at(doc: Any, dotted: str) -> Any:
    """The value at ``dotted`` (``driver.manager``) in ``doc``, or None."""
    from renderer.releasegate import lookup

    return lookup(doc, "/" + dotted.replace(".", "/"))[1]


def _unpinned(newest: tuple[int, str] | None, doc: Any, rendered: dict[str, set[str]] | None) -> str:
    """The images the imported policy ``doc`` leaves to gpu-render's defaults (its newest
    release's), with their versions, unless the file has a key of that release (``newest``:
    :func:`_newest_key`): installed with an older chart, the nodes run that chart's defaults (a
    v23.9 file's driver 535), which the build would upgrade without a word. A file cannot say
    which chart it was installed with (Helm ignores keys a release does not have, so old keys stay
    in files of newer charts): the note says what changes if it was older.

    ``rendered``: :func:`_images_built`; an image setting counts when the objects of its section's
    components pull an image of its default version (a sandbox operand on VM nodes, not the driver
    it replaces; the validator's image wherever it is). None when the policy does not build: then
    the main operands it does not switch off."""
    releases = chartkeys.chart_keys()[0]
    if newest is not None and chartkeys.minor(releases[newest[0]]) == chartkeys.minor(releases[-1]):
        return ""
    from renderer.releaseimages import VERSIONS
    from renderer.resolve import with_defaults

    pinned = {dotted for table in VERSIONS.values() for dotted in table}  # what each release's chart pins
    loose = []
    for dotted, default in _image_settings(with_defaults({})):
        section = dotted.split(".")[0]
        if (_at(doc, dotted) or {}).get("version"):
            continue
        if rendered is None:
            if dotted not in pinned or not _deployed(section, doc, None):
                continue
        elif not any(n.partition(":")[2].startswith(str(default["version"])) for n in rendered.get("" if section == "validator" else section, ())):
            continue  # (by tag: a mirror may rename the image, as registry.k8s.io-nfd-node-feature-discovery)
        loose.append(f"{dotted} {default['version']}")
    if not loose:
        return ""
    return _older_chart(f"names no version for {', '.join(loose)}", "set each <section>.version to what they run, or the build upgrades them")


def _older_chart(what: str, fix: str) -> str:
    """A note on what a file written for an older chart relies on (:func:`_unpinned`, :func:`_changed_defaults`)."""
    newest = chartkeys.minor(chartkeys.chart_keys()[0][-1])
    return f"the file {what}: gpu-render renders chart {newest}'s defaults; installed with an older chart, the cluster runs that chart's ({fix})"


def _changed_defaults(importer: _Importer, doc: Any, rendered: dict[str, set[str]] | None) -> str:
    """The keys of :data:`chartkeys.DEFAULT_CHANGES` the policy ``doc`` leaves out, of an operand
    the build deploys (``rendered``: :func:`_images_built`; CDI whatever), where the file may have
    been written for a chart before the change (it has no key of that release or later): it
    relied on the old default, and gpu-render renders the new one (a v24.9 file's operands run
    with CDI here, a v26.3 file's DCGM exporter gets a ServiceMonitor)."""
    loose = []
    for key, now, since, before, first in chartkeys.DEFAULT_CHANGES:
        section = chartkeys.DEPLOYED_WITH.get(key, key.split(".")[0])
        if importer.written_since(since) or (first and not importer.written_since(first)) or _at(doc, key) is not None:
            continue
        # an operand switched off by the new default (the standalone DCGM) was deployed before
        if section != "cdi" and not (key == f"{section}.enabled" and before is True) and not _deployed(section, doc, rendered):
            continue
        loose.append(f"{key} {chartkeys.shown(now)} (before {chartkeys.minor(since)}: {chartkeys.shown(before)})")
    if not loose:
        return ""
    return _older_chart(f"leaves out {', '.join(loose)}", "write each key as the cluster has it, or the build changes it")


def _deployed(section: str, doc: Any, rendered: dict[str, set[str]] | None) -> bool:
    """Does the build deploy ``section``'s operand: its components pull an image, or, when the
    policy does not build, the switches it is deployed with (its own and those of
    :data:`renderer.releaseimages.NEEDS`, sandbox workloads for a sandbox operand) are on, as
    written or by default."""
    if rendered is not None:
        return bool(rendered.get(section))
    from renderer.releaseimages import NEEDS
    from renderer.resolve import with_defaults

    defaults = with_defaults({})
    for switch in (section, *NEEDS.get(section, ())):
        written = _at(doc, f"{switch}.enabled")
        # a quoted "false" too: the policy refuses it (so does not build), the chart printed it unquoted
        if chartkeys.falsy(written if written is not None else (defaults.get(switch) or {}).get("enabled", True)):
            return False
    return True


def _images_built(text: str) -> dict[str, set[str]] | None:
    """The images the policy ``text`` pulls when it builds (the fleet's objects), by the values
    section of the component that pulls them ("" for all of them), as ``name:tag``; else None."""
    from renderer.components import by_name
    from renderer.images import images_of
    from renderer.inputs import Inputs
    from renderer.pipeline import plan
    from renderer.render import objects

    p = plan(Inputs(text.encode("utf-8"), "values.yaml"))
    if p.base is None:
        return None
    out: dict[str, set[str]] = {"": set()}
    for name, objs in objects(p.base).items():
        names = {ref.rsplit("/", 1)[-1] for ref in images_of(objs)}
        out[""] |= names
        out.setdefault(by_name(name).key, set()).update(names)
    return out


def _image_settings(defaults: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """(dotted path, section) of each image setting of the defaults (an ``image`` and a
    ``version``), those the release tables of :mod:`renderer.releaseimages` pin first, in their
    order (the main operands, then the sandbox ones); gpu-render's own node labeller (no chart's)
    left out."""
    from renderer.releaseimages import VERSIONS

    found: list[tuple[str, dict[str, Any]]] = []
    for key, section in defaults.items():
        if not isinstance(section, dict) or key == "nodeLabeller":
            continue
        for dotted, node in ((key, section), *((f"{key}.{k}", v) for k, v in section.items() if isinstance(v, dict))):
            if isinstance(node.get("image"), str) and node.get("version"):
                found.append((dotted, node))
    rank = {d: i for i, d in enumerate(dict.fromkeys(d for table in VERSIONS.values() for d in table))}
    return sorted(found, key=lambda item: rank.get(item[0], len(rank)))


def import_values(raw: bytes, path: str) -> Imported:
    source, problems = load_text(raw, path)
    if source is None:
        raise UserError(f"{path} cannot be read as YAML", problems=problems)
    from ruamel.yaml import YAML
    from ruamel.yaml.comments import CommentedMap, CommentedSeq

    yaml = YAML(typ="rt")
    yaml.width = 100
    # ruamel reads YAML 1.2, where "off", "on", "yes" and "no" are plain strings, and so would
    # write them back unquoted; helm and gpu-render read YAML 1.1, where they are booleans
    # (`ccManager.defaultMode: "off"` became false): the user's quotes are kept as written
    yaml.preserve_quotes = True
    doc: Any = yaml.load(raw)
    if not isinstance(doc, CommentedMap):
        raise UserError(f"{path}: a GPU Operator values file is a mapping of keys", problems=problems)
    if doc.fa.flow_style():
        # a values file written as one flow mapping (`{driver: {enabled: false}}`): the policy
        # is written in block style, so that the importer's notes stand above their keys and no
        # line of the mapping is folded at column 0 (its values keep their own style)
        doc.fa.set_block_style()
    importer = _Importer(raw, _schema())
    importer.newest = _newest_key(doc)
    importer.operator = _operator_minor(doc)
    importer.walk(doc, "")
    _driver_args(doc, importer.notes)
    if "cluster" not in doc:
        cluster = CommentedMap([("kubeVersion", "1.35"), ("namespace", "gpu-operator")])
        doc.insert(0, "cluster", cluster)
        doc.yaml_set_comment_before_after_key("cluster", before="gpu-render: the target clusters (drives API versions and schema checks)")
    importer.place(doc)
    if "nodePools" not in doc:
        pools = CommentedSeq()
        pool = CommentedMap([("name", "default"), ("os", CommentedMap([("id", "ubuntu"), ("version", "22.04")]))])
        pools.append(pool)
        doc.insert(1, "nodePools", pools)
        doc.yaml_set_comment_before_after_key(
            "nodePools",
            before="gpu-render: the GPU node pools the operator discovered at runtime.\n"
            "Replace this example with `gpu-render nodes import nodes.json` output.",
        )
    buf = io.StringIO()
    yaml.dump(doc, buf)
    header = ["# Imported from a GPU Operator values file by gpu-render import-operator-values."]
    if importer.moved:
        header.append("# Moved to their gpu-render place:")
        header += [f"#   {key} -> {to}: {why}" for key, to, why in importer.moved]
    if importer.dropped:
        header.append("# Removed, since they have no effect without the operator controller or no equivalent:")
        header += [f"#   {key}: {why}" for key, why in importer.dropped]
    if importer.notes:
        header.append("# Changed in form:")
        header += [f"#   {key}: {note}" for key, note in importer.notes]
    body = buf.getvalue()
    if not body.endswith("\n"):
        body += "\n"
    rendered = _images_built("\n".join(header) + "\n" + body)
    unpinned = _unpinned(importer.newest, doc, rendered)
    if unpinned:
        header += ["# Versions not pinned:", f"#   {unpinned}"]
    defaults = _changed_defaults(importer, doc, rendered)
    if defaults:
        header += ["# Defaults that changed since older charts:", f"#   {defaults}"]
    return Imported("\n".join(header) + "\n" + body, tuple(importer.dropped), tuple(importer.moved), tuple(importer.notes), unpinned, defaults)

