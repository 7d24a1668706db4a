"""Least privilege of the rendered stack, object by object, over the example policy and every
golden case: privileges only where renderer.security.GRANTS says why, ServiceAccount tokens
only where the component talks to the API, RBAC rules inside each component's allowlist, no
Secrets, digest-pinnable images. Data-driven by component name, so new components are
checked as soon as they are registered.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from renderer import lint, security
from renderer.components.common import Obj
from tests.golden import CASES, case_names

ROOT = Path(__file__).resolve().parent.parent
DIGEST = "sha256:" + "0123456789abcdef" * 4


def policies() -> list[tuple[str, Path, Path]]:
    out = [("example", ROOT / "values.yaml", ROOT / "overlays")]
    out += [(name, CASES / name / "values.yaml", CASES / name / "overlays") for name in case_names()]
    return out


def rendered_objects(values: Path, overlays: Path) -> list[tuple[str, str, dict[str, list[Obj]]]]:
    """(policy part, cluster, {component: objects}) for the fleet and every cluster."""
    from renderer.inputs import read_inputs
    from renderer.pipeline import plan
    from renderer.render import objects

    p = plan(read_inputs(values, overlays))
    assert p.base is not None, [x.format() for x in p.errors]
    models = {"fleet": p.base, **p.clusters}
    return [(values.parent.name, name, objects(model)) for name, model in models.items()]


ALL = [(name, cluster, objs) for name, values, overlays in policies() for _, cluster, objs in rendered_objects(values, overlays)]
IDS = [f"{name}:{cluster}" for name, cluster, _ in ALL]


def rbac_rules(obj: Obj) -> list[tuple[str, str, str]]:
    return [
        (str(group), str(resource), str(verb))
        for rule in obj.get("rules") or []
        for group in rule.get("apiGroups") or [""]
        for resource in rule.get("resources") or []
        for verb in rule.get("verbs") or []
    ]


@pytest.mark.parametrize(("name", "cluster", "objs"), ALL, ids=IDS)
def test_privileges_only_where_the_table_says_why(name: str, cluster: str, objs: dict[str, list[Obj]]) -> None:
    wrong = []
    for component, items in objs.items():
        for obj in items:
            for check, message in lint.check_object(obj):
                if check == "service-account-token":
                    continue  # its own test below
                exempt = lint.exemptions(obj).get(check)
                if not exempt:
                    wrong.append(f"{component}: {obj['kind']}/{obj['metadata']['name']}: {check}: {message}")
                elif check not in security.grant(component).privileges:
                    assert exempt.startswith("requested by the policy"), (component, check, exempt)
    assert not wrong, "privileges without a reason in renderer/security.py GRANTS:\n" + "\n".join(wrong)


@pytest.mark.parametrize(("name", "cluster", "objs"), ALL, ids=IDS)
def test_token_mounted_only_where_the_component_talks_to_the_api(name: str, cluster: str, objs: dict[str, list[Obj]]) -> None:
    bound = security.bound_service_accounts(objs)
    for component, items in objs.items():
        for obj in items:
            pod = lint.pod_spec(obj)
            if pod is None:
                continue
            where = f"{component}: {obj['kind']}/{obj['metadata']['name']}"
            sa = (obj["metadata"].get("namespace", ""), pod.get("serviceAccountName") or "default")
            if pod.get("automountServiceAccountToken") is False:
                continue
            assert security.grant(component).api, f"{where} mounts a token but GRANTS gives no reason to talk to the API"
            assert sa in bound, f"{where} mounts the token of {sa[1]}, which no RoleBinding/ClusterRoleBinding grants anything"


@pytest.mark.parametrize(("name", "cluster", "objs"), ALL, ids=IDS)
def test_rbac_rules_inside_each_components_allowlist(name: str, cluster: str, objs: dict[str, list[Obj]]) -> None:
    listed: list[str] = []
    wrong: list[str] = []
    for component, items in objs.items():
        allow = security.grant(component).rbac
        for obj in items:
            if obj["kind"] not in ("Role", "ClusterRole"):
                continue
            for rule in obj.get("rules") or []:
                for key in ("apiGroups", "resources", "verbs", "nonResourceURLs"):
                    assert "*" not in (rule.get(key) or []), f"{component}: {obj['kind']}/{obj['metadata']['name']}: wildcard in {key}"
                assert not rule.get("resourceNames") or rule.get("resources"), rule
            for group, resource, verb in rbac_rules(obj):
                line = f"{component}: {obj['kind']}/{obj['metadata']['name']}: {group or 'core'}/{resource}: {verb}"
                listed.append(line)
                if (group, resource, verb) not in allow:
                    wrong.append(line)
    print(f"\n{name}:{cluster}: {len(listed)} RBAC rule(s)\n" + "\n".join(listed))  # pytest -s lists them
    assert not wrong, "RBAC beyond the allowlist in renderer/security.py GRANTS:\n" + "\n".join(wrong)


@pytest.mark.parametrize(("name", "cluster", "objs"), ALL, ids=IDS)
def test_no_secrets_rendered(name: str, cluster: str, objs: dict[str, list[Obj]]) -> None:
    for component, items in objs.items():
        for obj in items:
            assert obj["kind"] != "Secret", f"{component} renders a Secret"
            checks = {c for c, _ in lint.check_object(obj)}
            assert not checks & {"secret-rendered", "env-var-secret", "access-to-secrets", "wildcard-rbac", "rbac-escalation"}, (component, obj["metadata"]["name"], checks)


@pytest.mark.parametrize(("name", "values", "overlays"), policies(), ids=[p[0] for p in policies()])
def test_lint_passes_on_every_rendered_file(name: str, values: Path, overlays: Path) -> None:
    """The annotations gpu-render writes justify every finding in its own output."""
    from renderer import yamlio
    from renderer.inputs import read_inputs
    from renderer.render import render

    files = render(read_inputs(values, overlays))
    docs = [(path, doc) for path, text in files.items() if path.endswith((".yaml", ".yml")) and "{{" not in text for doc in yamlio.load_all(text)]
    assert docs
    bad = lint.unexempted(lint.lint(docs))
    assert not bad, "\n".join(f.format() for f in bad)


def test_secret_values_stay_references(run_cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    """Pull secrets given in the policy are rendered as names, never as Secret objects."""
    (tmp_path / "values.yaml").write_text(
        "nodePools:\n  - name: p\n    os: {id: ubuntu, version: '22.04'}\n"
        "devicePlugin:\n  imagePullSecrets: [regcred]\n"
    )
    monkeypatch.chdir(tmp_path)
    assert run_cli("build", "-q").exit_code == 0
    text = "".join(p.read_text() for p in (tmp_path / "output").rglob("*.yaml"))
    assert "regcred" in text and "kind: Secret\n" not in text


def _pin_every_image(values: dict[str, Any], defaults: dict[str, Any]) -> None:
    for key, section in defaults.items():
        if isinstance(section, dict):
            if isinstance(section.get("version"), str) and section.get("repository"):
                values.setdefault(key, {})["version"] = DIGEST
            for sub, inner in section.items():
                if isinstance(inner, dict) and isinstance(inner.get("version"), str) and inner.get("repository"):
                    values.setdefault(key, {}).setdefault(sub, {})["version"] = DIGEST


def test_images_can_be_pinned_to_digests(tmp_path: Path) -> None:
    """``version: sha256:...`` for an image renders ``repository/image@sha256:...``."""
    import yaml

    from renderer.inputs import read_inputs
    from renderer.pipeline import plan
    from renderer.render import objects

    defaults = yaml.safe_load((ROOT / "renderer" / "data" / "defaults.yaml").read_text())
    values: dict[str, Any] = {"nodePools": [{"name": "p", "os": {"id": "ubuntu", "version": "22.04"}}]}
    _pin_every_image(values, defaults)
    (tmp_path / "values.yaml").write_text(yaml.safe_dump(values))
    p = plan(read_inputs(tmp_path / "values.yaml", None))
    assert p.base is not None, [x.format() for x in p.errors]
    images = sorted(
        {
            str(ctr.get("image"))
            for items in objects(p.base).values()
            for obj in items
            for ctr in lint.containers(lint.pod_spec(obj) or {})
        }
    )
    assert images
    unpinned = [i for i in images if not i.endswith("@" + DIGEST)]
    assert not unpinned, f"images that ignore a digest version: {unpinned}"


def test_privilege_table_in_docs_is_current() -> None:
    doc = (ROOT / "docs" / "security.md").read_text()
    assert security.privilege_table() in doc, "docs/security.md: paste renderer.security.privilege_table()"
    assert security.rbac_table() in doc, "docs/security.md: paste renderer.security.rbac_table()"


def test_unknown_component_gets_no_privilege() -> None:
    assert security.grant("made-up") == security.Grant()
    assert security.allowed("made-up", "privileged-container") == ""
