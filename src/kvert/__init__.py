"""kvert: Kubernetes vertical resource management, live or simulated."""

from importlib.metadata import PackageNotFoundError
from importlib.metadata import version as _version

try:
    __version__ = _version("kvert")
except PackageNotFoundError:  # running from a source tree without installing
    __version__ = "0.0.0+source"

# The image kvert's own components run from (the repository's Containerfile builds it; `kvert vpa
# manifests` names it; the cgroupfs runtime runs it as this installation's `kvert`).
IMAGE_REPOSITORY = "ghcr.io/kvert/kvert"
