"""The one version source of gpu-render."""

__version__ = "0.1.0"

# The GPU Operator release whose behaviour (image tags, labels, defaults) is imitated by default.
OPERATOR_RELEASE = "v26.7"
