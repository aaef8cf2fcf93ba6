"""The Kubernetes release kvert follows, in one place: the API server's ``/version``, the node
agent's ``kubeletVersion``, the prober's ``User-Agent`` and the version the NodeDeclaredFeatures
registry compares with all derive from it."""

from __future__ import annotations

import kvert

MAJOR, MINOR, PATCH = 1, 36, 0

KUBERNETES_RELEASE = f"{MAJOR}.{MINOR}"
KUBERNETES_VERSION = (MAJOR, MINOR, PATCH)
# ``kubectl version`` shows the server's gitVersion; the build metadata names kvert's own.
SERVER_GIT_VERSION = f"v{MAJOR}.{MINOR}.{PATCH}+kvert-{kvert.__version__}"
KUBELET_VERSION = f"v{MAJOR}.{MINOR}.{PATCH}-kvert"

__all__ = ["KUBELET_VERSION", "KUBERNETES_RELEASE", "KUBERNETES_VERSION", "MAJOR", "MINOR", "PATCH",
           "SERVER_GIT_VERSION"]
