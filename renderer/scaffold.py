"""``gpu-render init``: the files of a new policy repo, as {path: text} (written by the CLI)."""

from __future__ import annotations

import json
import shlex
from importlib import resources
from pathlib import Path
from typing import Any
from urllib.parse import urlparse
from urllib.request import url2pathname

from renderer._version import __version__

DIST = "gpu-render"

FILES = {
    "values.yaml": "values.yaml.j2",
    "overlays/{cluster}/values.yaml": "overlay-values.yaml.j2",
    ".gitignore": "gitignore.j2",
    ".gitattributes": "gitattributes.j2",
    ".pre-commit-config.yaml": "pre-commit-config.yaml.j2",
    ".github/workflows/gpu-render.yml": "workflow.yaml.j2",
    "README.md": "README.md.j2",
}


def spec_from_direct_url(direct_url: str | None, version: str, source_tree: Path | None = None) -> str:
    """The pip requirement that installs this gpu-render again, from where it came from.

    ``direct_url`` is the distribution's ``direct_url.json`` (PEP 610), written by pip for an
    install from a VCS URL, an archive (wheel or sdist, path or URL) or a local folder; then
    the requirement names that origin (a VCS URL pinned to the installed commit). Without it,
    gpu-render came from a package index, which serves ``gpu-render==<version>``. Without an
    installed distribution at all (``source_tree``: the checkout the code runs from), the
    requirement is that folder.
    """
    if direct_url is None:
        if source_tree is not None:
            return f"{DIST} @ {source_tree.resolve().as_uri()}"
        return f"{DIST}=={version}"
    info: dict[str, Any] = json.loads(direct_url)
    url = str(info["url"])
    fragment = f"#subdirectory={info['subdirectory']}" if info.get("subdirectory") else ""
    vcs = info.get("vcs_info")
    if isinstance(vcs, dict):
        rev = vcs.get("commit_id") or vcs.get("requested_revision")
        return f"{DIST} @ {vcs['vcs']}+{url}{'@' + str(rev) if rev else ''}{fragment}"
    return f"{DIST} @ {url}{fragment}"


def default_install_spec() -> str:
    """:func:`spec_from_direct_url` for the gpu-render running now (reads its metadata)."""
    from importlib import metadata

    try:
        dist = metadata.distribution(DIST)
    except metadata.PackageNotFoundError:
        tree = Path(__file__).resolve().parent.parent
        return spec_from_direct_url(None, __version__, tree if (tree / "pyproject.toml").is_file() else None)
    direct_url = dist.read_text("direct_url.json")
    if direct_url is not None:
        info = json.loads(direct_url)
        if "dir_info" in info and str(info.get("url", "")).startswith("file:"):
            # a local checkout: its public remote at the checked-out commit, where CI can fetch it
            vcs = _checkout_origin(Path(url2pathname(urlparse(info["url"]).path)))
            if vcs is not None:
                return spec_from_direct_url(json.dumps({"url": vcs[0], "vcs_info": {"vcs": "git", "commit_id": vcs[1]}}), dist.version)
    return spec_from_direct_url(direct_url, dist.version)


def _checkout_origin(folder: Path) -> tuple[str, str] | None:
    """(remote URL, HEAD commit) of a git checkout whose ``origin`` is a network URL."""
    import subprocess

    if not (folder / ".git").exists():
        return None
    try:
        remote = subprocess.run(["git", "-C", str(folder), "remote", "get-url", "origin"], capture_output=True, text=True, timeout=30)
        head = subprocess.run(["git", "-C", str(folder), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return None
    url, commit = remote.stdout.strip(), head.stdout.strip()
    if remote.returncode or head.returncode or not commit or not url.startswith(("https://", "http://", "ssh://")):
        return None
    return url, commit


def is_local(spec: str) -> bool:
    """A requirement naming a file or folder of this machine (a CI runner will not have it)."""
    target = spec.split(" @ ", 1)[1] if " @ " in spec else spec
    return target.startswith(("file:", "/", ".", "~")) or Path(target).exists()


def check_install_spec(spec: str) -> str | None:
    """Why ``spec`` cannot stand in the workflow's ``pip install`` line, or None."""
    if not spec.strip():
        return "the install source is empty"
    if any(ord(ch) < 32 or ord(ch) == 127 for ch in spec):
        return "the install source holds a line break or control character"
    if "${{" in spec:
        return "the install source holds a GitHub Actions expression"
    return None


def unsafe_text(text: str) -> str | None:
    """Why ``text`` cannot be written into a scaffold file as it is, or None."""
    if any(ord(ch) < 32 or 127 <= ord(ch) < 160 or ch in "\u2028\u2029" for ch in text):
        return "it holds a line break or control character"
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return "it is not UTF-8 text"
    return None


def check_repo_url(url: str) -> str | None:
    """Why ``url`` cannot be the Argo CD ``repoURL`` of the scaffold, or None."""
    if not url.strip():
        return "the repository URL is empty"
    return unsafe_text(url)


def yaml_scalar(text: str) -> str:
    """``text`` as a YAML scalar that parses back to exactly ``text``: plain when it does
    (``https://...``), else double-quoted (``'#'``, ``: ``, a leading quote, ``yes``)."""
    import yaml

    try:
        if yaml.safe_load(f"k: {text}\n") == {"k": text} and text == text.strip():
            return text
    except yaml.YAMLError:
        pass
    return json.dumps(text)


def scaffold(
    name: str,
    cluster: str = "example",
    repo_url: str = "https://github.com/example/gpu-policy.git",
    install: str | None = None,
) -> dict[str, str]:
    """Render the scaffold with a sandboxed, strict Jinja environment.

    ``install`` is the pip requirement the policy repo's CI and README install gpu-render
    with (default: :func:`default_install_spec`).
    """
    from jinja2 import StrictUndefined
    from jinja2.sandbox import SandboxedEnvironment

    spec = default_install_spec() if install is None else install
    why = check_install_spec(spec)
    if why is not None:
        raise ValueError(why)
    from renderer.checks import DNS_LABEL

    if not DNS_LABEL.fullmatch(cluster) or cluster == "fleet":
        raise ValueError(f"cluster {cluster!r} is not a DNS label (or is 'fleet')")
    for what, text in (("name", name), ("repo_url", repo_url)):
        why = unsafe_text(text)
        if why is not None:
            raise ValueError(f"{what} {text!r}: {why}")
    env = SandboxedEnvironment(undefined=StrictUndefined, keep_trailing_newline=True, autoescape=False)
    context = {"name": name, "cluster": cluster, "repo_url": yaml_scalar(repo_url), "version": __version__, "install": spec, "pip_install": f"python -m pip install {shlex.quote(spec)}"}
    folder = resources.files("renderer.data").joinpath("init")
    out: dict[str, str] = {}
    for target, template in sorted(FILES.items()):
        text = folder.joinpath(template).read_text(encoding="utf-8")
        out[target.format(cluster=cluster)] = env.from_string(text).render(context)
    return out
