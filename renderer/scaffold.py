"""``gpu-render init``: the files of a new policy repo, as {path: text} (written by the CLI)."""

from __future__ import annotations

from importlib import resources

from renderer._version import __version__

FILES = {
    "values.yaml": "values.yaml.j2",
    "overlays/{cluster}/values.yaml": "overlay-values.yaml.j2",
    ".gitignore": "gitignore.j2",
    ".gitattributes": "gitattributes.j2",
    ".pre-commit-config.yaml": "pre-commit-config.yaml.j2",
    ".github/workflows/gpu-render.yml": "workflow.yaml.j2",
    "README.md": "README.md.j2",
}


def scaffold(name: str, cluster: str = "example", repo_url: str = "https://github.com/example/gpu-policy.git") -> dict[str, str]:
    """Render the scaffold with a sandboxed, strict Jinja environment."""
    from jinja2 import StrictUndefined
    from jinja2.sandbox import SandboxedEnvironment

    env = SandboxedEnvironment(undefined=StrictUndefined, keep_trailing_newline=True, autoescape=False)
    context = {"name": name, "cluster": cluster, "repo_url": repo_url, "version": __version__}
    folder = resources.files("renderer.data").joinpath("init")
    out: dict[str, str] = {}
    for target, template in sorted(FILES.items()):
        text = folder.joinpath(template).read_text(encoding="utf-8")
        out[target.format(cluster=cluster)] = env.from_string(text).render(context)
    return out
