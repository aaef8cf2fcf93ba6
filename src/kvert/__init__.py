"""kvert: Kubernetes vertical resource management, live or simulated."""

from importlib.metadata import PackageNotFoundError
from importlib.metadata import version as _version

try:
    __version__ = _version("kvert")
except PackageNotFoundError:  # running from a source tree without installing
    __version__ = "0.0.0+source"
