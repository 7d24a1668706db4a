"""Merge: maps merge, lists and scalars replace, null deletes; origins follow the winning file."""

from __future__ import annotations

import copy

from renderer.loader import Source, load_text
from renderer.merge import Located, deep_merge, from_source, merge
from renderer.schema import validate

FLEET = """\
driver:
  version: '550'
  env:
    - name: A
      value: a
  manager:
    version: v1
mig:
  strategy: single
psa:
  enabled: true
"""


def src(text: str, path: str) -> Source:
    source, problems = load_text(text, path)
    assert problems == [] and source is not None
    return source


def merged(overlay: str) -> Located:
    return merge(from_source(src(FLEET, "values.yaml")), src(overlay, "overlays/c/values.yaml"))


def test_maps_merge_key_by_key() -> None:
    out = merged("driver:\n  version: '560'\n")
    assert out.data["driver"]["version"] == "560"
    assert out.data["driver"]["manager"] == {"version": "v1"}
    assert out.locate("/driver/version") == ("overlays/c/values.yaml", 2, 12)
    assert out.locate("/driver/manager/version") == ("values.yaml", 7, 14)


def test_lists_replace_whole() -> None:
    out = merged("driver:\n  env:\n    - name: B\n      value: b\n")
    assert out.data["driver"]["env"] == [{"name": "B", "value": "b"}]
    assert out.locate("/driver/env/0/name") == ("overlays/c/values.yaml", 3, 13)
    # the fleet's item positions are gone, not left behind
    assert all(f == "overlays/c/values.yaml" for p, (f, _, _) in out.origins.items() if p.startswith("/driver/env"))


def test_shorter_list_leaves_no_stale_origins() -> None:
    out = merged("driver:\n  env: []\n")
    assert out.data["driver"]["env"] == []
    assert "/driver/env/0" not in out.origins and "/driver/env/0/name" not in out.key_origins
    assert out.locate("/driver/env") == ("overlays/c/values.yaml", 2, 8)


def test_scalars_replace() -> None:
    out = merged("mig:\n  strategy: mixed\n")
    assert out.data["mig"] == {"strategy": "mixed"}
    assert out.locate("/mig/strategy") == ("overlays/c/values.yaml", 2, 13)


def test_null_deletes_a_key_and_its_origins() -> None:
    out = merged("driver:\n  manager: null\npsa: ~\n")
    assert "manager" not in out.data["driver"]
    assert "psa" not in out.data
    assert not any(p.startswith(("/driver/manager", "/psa")) for p in [*out.origins, *out.key_origins])


def test_null_for_a_missing_key_is_a_no_op() -> None:
    out = merged("gds: null\n")
    assert "gds" not in out.data


def test_null_inside_a_replacing_list_is_kept_as_data() -> None:
    out = merged("driver:\n  env: [null]\n")
    assert out.data["driver"]["env"] == [None]


def test_a_map_replaces_a_scalar_and_the_other_way_round() -> None:
    out = merged("mig: off\ndriver:\n  version: {branch: '550'}\n")
    assert out.data["mig"] == "off"
    assert out.data["driver"]["version"] == {"branch": "550"}
    assert out.locate("/driver/version/branch") == ("overlays/c/values.yaml", 3, 21)


def test_new_keys_come_from_the_overlay() -> None:
    out = merged("cdi:\n  enabled: false\n")
    assert out.data["cdi"] == {"enabled": False}
    assert out.locate("/cdi/enabled") == ("overlays/c/values.yaml", 2, 12)
    assert out.locate("/cdi/enabled", key=True) == ("overlays/c/values.yaml", 2, 3)


def test_inputs_are_not_changed() -> None:
    fleet = from_source(src(FLEET, "values.yaml"))
    overlay = src("driver:\n  version: '560'\n  env: []\npsa: null\n", "o.yaml")
    before = (copy.deepcopy(fleet.data), dict(fleet.origins), copy.deepcopy(overlay.data))
    merge(fleet, overlay)
    assert (fleet.data, fleet.origins, overlay.data) == before


def test_locate_falls_back_to_the_nearest_ancestor() -> None:
    out = merged("")
    assert out.locate("/driver/manager/nope/deeper") == ("values.yaml", 7, 5)
    assert out.locate("/nowhere") == ("values.yaml", 1, 1)


def test_schema_error_from_the_overlay_points_into_the_overlay() -> None:
    out = merged("# prod\nmig:\n  strategy: bogus\ndriver:\n  manager:\n    verison: v2\n")
    found = [(p.file, p.line, p.column, p.pointer) for p in validate(out)]
    assert found == [
        ("overlays/c/values.yaml", 3, 13, "/mig/strategy"),
        ("overlays/c/values.yaml", 6, 5, "/driver/manager/verison"),
    ]


def test_schema_error_left_in_the_fleet_points_into_the_fleet() -> None:
    fleet = src("mig:\n  strategy: bogus\n", "values.yaml")
    out = merge(from_source(fleet), src("psa:\n  enabled: true\n", "o.yaml"))
    assert [(p.file, p.line, p.column) for p in validate(out)] == [("values.yaml", 2, 13)]


def test_deep_merge_follows_the_same_rules() -> None:
    base = {"a": {"b": 1, "c": [1, 2]}, "d": 1, "e": {"f": 1}}
    patch = {"a": {"c": [3]}, "d": None, "e": 5, "g": {"h": 1}}
    assert deep_merge(base, patch) == {"a": {"b": 1, "c": [3]}, "e": 5, "g": {"h": 1}}
    assert base == {"a": {"b": 1, "c": [1, 2]}, "d": 1, "e": {"f": 1}}
