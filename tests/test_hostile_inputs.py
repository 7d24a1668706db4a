"""Every hostile input file ends in a Problem with a position (exit 1), never a traceback
(exit 3), and the slow-but-small inputs are refused in bounded work."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from renderer import loader
from renderer.nodes import parse_nodes
from tests.conftest import ROOT


def refused(run_cli: Any, *want: str) -> str:
    result = run_cli("validate")
    assert result.exit_code == 1, result.output
    for text in want:
        assert text in result.output, result.output
    return str(result.output)


def test_an_overlay_folder_with_a_newline_in_its_name(repo: Path, run_cli: Any) -> None:
    (repo / "overlays" / "prod\n").mkdir()
    (repo / "overlays" / "prod\n" / "values.yaml").write_text("mig: {strategy: single}\n")
    refused(run_cli, "cluster name 'prod\\n' is not a DNS label")


def test_a_pool_name_with_a_newline(repo: Path, run_cli: Any) -> None:
    values = repo / "values.yaml"
    values.write_text(values.read_text().replace("- name: ubuntu2204", '- name: "ubuntu2204\\n"'))
    refused(run_cli, "values.yaml:8:11: /nodePools/0/name")


@pytest.mark.parametrize("kind", ["loop", "fifo", "folder", "dangling"])
def test_an_overlay_values_file_that_is_not_a_file(repo: Path, run_cli: Any, kind: str) -> None:
    path = repo / "overlays" / "staging" / "values.yaml"
    path.unlink()
    if kind == "loop":
        path.symlink_to("values.yaml")
    elif kind == "fifo":
        os.mkfifo(path)
    elif kind == "folder":
        path.mkdir()
    else:
        path.symlink_to("gone.yaml")
    refused(run_cli, "overlays/staging/values.yaml:1:1:")


@pytest.mark.parametrize(("name", "right"), [("values.yml", "values.yaml"), ("nodes.yaml", "nodes.json")])
def test_misnamed_overlay_files_are_reported(repo: Path, run_cli: Any, name: str, right: str) -> None:
    (repo / "overlays" / "staging" / name).write_text("mig: {strategy: single}\n")
    refused(run_cli, f"overlays/staging/{name}:1:1:", f"gpu-render reads {right}")


def test_the_fleet_values_file_is_confined_to_the_repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, run_cli: Any) -> None:
    (tmp_path / "secret.yaml").write_text("driver: {enabled: false}\n")
    repo = tmp_path / "repo"
    shutil.copytree(ROOT / "overlays", repo / "overlays")
    (repo / "values.yaml").symlink_to(tmp_path / "secret.yaml")
    monkeypatch.chdir(repo)
    result = run_cli("validate")
    assert result.exit_code == 1 and "outside the policy repo" in result.output


def test_a_fleet_values_fifo_is_refused(repo: Path, run_cli: Any) -> None:
    (repo / "values.yaml").unlink()
    os.mkfifo(repo / "values.yaml")
    result = run_cli("validate")
    assert result.exit_code == 1 and "not a regular file" in result.output


def test_a_huge_sparse_overlay_is_refused_before_reading(repo: Path, run_cli: Any) -> None:
    with (repo / "overlays" / "staging" / "values.yaml").open("wb") as f:
        f.truncate(8 * 1024**3)
    refused(run_cli, "over the limit")


@pytest.mark.parametrize(
    ("raw", "want"),
    [
        (b"[" * 100_000 + b"]" * 100_000, "nesting deeper than"),
        (b'{"items": [{"metadata": {"name": "a", "labels": ["x"]}}]}', "labels must be a mapping"),
        (b'{"items": [{"metadata": {"name": "a", "labels": {"x": 1}}}]}', "labels must be a mapping"),
        (b'{"items": [{"metadata": {"name": "a\\n", "labels": {}}}]}', "not a DNS name"),
        (b'{"items": [], "items": []}', "duplicate key"),
        (b"\xef\xbb\xbf" + b'{"items": [{"metadata": {"name": "a"}}]}', ""),
        (b"[" + b"1," * 1_000_001 + b"1]", "more than"),
        (b'{"a": ' + b"9" * 5000 + b"}", "not valid JSON"),
    ],
)
def test_hostile_nodes_json(raw: bytes, want: str) -> None:
    nodes, problems = parse_nodes(raw, "nodes.json")
    if not want:
        assert problems == [] and [n.name for n in nodes] == ["a"]
        return
    assert problems and want in problems[0].message, problems
    assert problems[0].file == "nodes.json" and problems[0].line >= 1


def test_nodes_cli_on_a_deep_document(tmp_path: Path, run_cli: Any) -> None:
    path = tmp_path / "nodes.json"
    path.write_bytes(b"[" * 100_000 + b"]" * 100_000)
    result = run_cli("nodes", "check", str(path))
    assert result.exit_code == 1 and "nesting deeper than" in result.output


def count_compose(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many times a document is composed into nodes (the costly step)."""
    import yaml

    calls = [0]
    real = yaml.compose_all

    def counting(*args: Any, **kwargs: Any) -> Any:
        calls[0] += 1
        return real(*args, **kwargs)

    monkeypatch.setattr(yaml, "compose_all", counting)
    return calls


def test_a_huge_flow_list_is_refused_before_it_is_composed(monkeypatch: pytest.MonkeyPatch) -> None:
    text = "a: [" + ",".join(["1"] * 250_000) + "]\n"
    assert len(text) <= loader.MAX_BYTES
    calls = count_compose(monkeypatch)
    source, problems = loader.load_text(text, "values.yaml")
    assert source is None and problems[0].code == "too-many-nodes"
    assert (problems[0].line, problems[0].column) != (0, 0)
    assert calls[0] == 0


def test_many_empty_documents_are_refused_before_parsing(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = count_compose(monkeypatch)
    source, problems = loader.load_text("---\n" * 100_000, "values.yaml")
    assert source is None and problems[0].code == "too-many-documents"
    assert calls[0] == 0


def test_a_large_file_that_needs_the_slow_parser_is_refused() -> None:
    text = "a: &x 1\nb: *x\n" + "".join(f"k{i}: v{i}\n" for i in range(20_000))
    assert loader.MAX_CAREFUL_BYTES < len(text) <= loader.MAX_BYTES
    source, problems = loader.load_text(text, "values.yaml")
    assert source is None and "anchors, tags or unusual scalars" in problems[0].message


def test_a_bom_is_dropped(repo: Path, run_cli: Any) -> None:
    values = repo / "overlays" / "staging" / "values.yaml"
    values.write_bytes(b"\xef\xbb\xbf" + values.read_bytes())
    assert run_cli("validate").exit_code == 0


def test_json_problems_have_positions() -> None:
    data, problems = loader.load_json(b'{\n  "a": [1,\n}', "x.json")
    assert data is None and (problems[0].line, problems[0].column) == (3, 1)
    assert json.dumps(loader.load_json(b'{"a": [1]}', "x.json")[0]) == '{"a": [1]}'
