"""``gpu-render import-operator-values``: turn a GPU Operator chart values file into a policy.

A GPU Operator values file is already a valid policy (operator-only keys only warn). Import
makes it tidy: it keeps the user's comments and every key that maps 1:1, removes the keys that
have no effect without the controller (listing each with the reason in a header comment), and
adds the ``cluster`` and ``nodePools`` sections the operator would have discovered live.
"""

from __future__ import annotations

import io
from dataclasses import dataclass
from typing import Any

from renderer.loader import load_text
from renderer.problems import UserError
from renderer.schema import OPERATOR_ONLY


@dataclass(frozen=True)
class Imported:
    text: str
    dropped: tuple[tuple[str, str], ...]


def import_values(raw: bytes, path: str) -> Imported:
    source, problems = load_text(raw, path)
    if source is None:
        raise UserError(f"{path} cannot be read as YAML", problems=problems)
    from ruamel.yaml import YAML

    yaml = YAML(typ="rt")
    yaml.width = 100
    doc: Any = yaml.load(raw)
    dropped: list[tuple[str, str]] = []
    for pointer, why in OPERATOR_ONLY.items():
        parts = [p.replace("~1", "/").replace("~0", "~") for p in pointer[1:].split("/")]
        node = doc
        for part in parts[:-1]:
            node = node.get(part) if hasattr(node, "get") else None
        if node is not None and hasattr(node, "get") and parts[-1] in node:
            del node[parts[-1]]
            dropped.append((".".join(parts), why))
    from ruamel.yaml.comments import CommentedMap, CommentedSeq

    if "cluster" not in doc:
        cluster = CommentedMap([("kubeVersion", "1.35"), ("namespace", "gpu-operator")])
        doc.insert(0, "cluster", cluster)
        doc.yaml_set_comment_before_after_key("cluster", before="gpu-render: the target clusters (drives API versions and schema checks)")
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
    if dropped:
        header.append("# Removed, since they have no effect without the operator controller:")
        header += [f"#   {key}: {why}" for key, why in dropped]
    return Imported("\n".join(header) + "\n" + buf.getvalue(), tuple(dropped))
