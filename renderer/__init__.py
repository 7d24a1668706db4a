"""gpu-render: compile a GPU cluster policy into GitOps-ready output.

The public surface is small: :func:`renderer.render.render` turns loaded values into
``{relative path: text}``; everything that touches the disk lives in :mod:`renderer.write`
and the CLI package.
"""

from renderer._version import OPERATOR_RELEASE, __version__

__all__ = ["OPERATOR_RELEASE", "__version__"]
