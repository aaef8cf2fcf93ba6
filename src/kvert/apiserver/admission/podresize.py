"""PodResizeValidator (``plugin/pkg/admission/podresize``, Kubernetes 1.36): a resize is
refused at admission when the pod's node cannot hold it at all, instead of being accepted and
reported Infeasible by the node later (kubernetes#136043).

On an update of ``pods/resize`` that changes the spec of a pod bound to a node:

- the node is missing -> 403 ``node "N" not found``;
- the node is not Linux (label ``kubernetes.io/os`` set and not ``linux``) -> 403
  ``pod resize is only supported on linux nodes, node "N" is "windows"``, cause type
  ``UnsupportedPlatform``;
- the pod's requests (component-helpers ``PodRequests``: containers, init containers,
  pod-level resources, overhead) exceed the node's ``status.allocatable`` cpu or memory ->
  403 ``node didn't have enough allocatable resources: cpu, requested: 5000, allocatable:
  4000`` (millicores for cpu, bytes for memory, joined with ``; ``), cause type
  ``NodeCapacity``.

Upstream skips the check when the pod's generation did not change; kvert's store bumps the
generation after admission, so the same test is made on the spec itself. The plugin is on
while the InPlacePodVerticalScaling gate is, which is locked on since 1.35; kvert's
``KvertResizeInfeasibleAtNode`` gate turns it off, for seed 000's walk-through in which the
node reports such a resize Infeasible (as Kubernetes 1.35 did).
"""

from __future__ import annotations

from kvert.api.errors import Cause, NotFound
from kvert.api.features import server_enabled
from kvert.api.pods import pod_requests
from kvert.api.quantity import QuantityError
from kvert.api.resources import parse_resource_list
from kvert.api.types import Obj
from kvert.registry.admission import UPDATE, Attributes
from kvert.store.base import Store

from .common import PODS, forbidden, pod_spec

NODES = "nodes"
OS_LABEL = "kubernetes.io/os"
REASON_NODE_CAPACITY = "NodeCapacity"
REASON_UNSUPPORTED_PLATFORM = "UnsupportedPlatform"


class PodResizeValidator:
    name = "PodResizeValidator"
    resources = frozenset({PODS})

    def __init__(self, store: Store):
        self.store = store

    async def validate(self, attrs: Attributes) -> None:
        if attrs.operation != UPDATE or attrs.subresource != "resize" \
                or server_enabled("KvertResizeInfeasibleAtNode"):
            return
        pod, old = attrs.object, attrs.old_object
        if not isinstance(pod, dict) or not isinstance(old, dict):
            return
        node_name = pod_spec(pod).get("nodeName")
        if not node_name or pod_spec(pod) == pod_spec(old):
            return
        try:
            node = self.store.get(NODES, "", node_name)
        except NotFound:
            raise forbidden(attrs, f'node "{node_name}" not found') from None
        os_name = ((node.get("metadata") or {}).get("labels") or {}).get(OS_LABEL)
        if os_name is not None and os_name != "linux":
            raise forbidden(attrs, f'pod resize is only supported on linux nodes, node "{node_name}" '
                                   f'is "{os_name}"', [_cause(REASON_UNSUPPORTED_PLATFORM)])
        problem = allocatable_problem(pod, node)
        if problem:
            raise forbidden(attrs, problem, [_cause(REASON_NODE_CAPACITY)])


def allocatable_problem(pod: Obj, node: Obj) -> str | None:
    """``validateRequestsWithinAllocatable``: what of the pod's cpu and memory requests the
    node's allocatable cannot hold, or None."""
    try:
        requests = pod_requests(pod)
        allocatable = parse_resource_list((node.get("status") or {}).get("allocatable"))
    except (QuantityError, ValueError, TypeError):
        return None     # malformed quantities are the validation's to report
    parts = []
    for name in ("cpu", "memory"):
        requested, available = requests.get(name, 0), allocatable.get(name, 0)
        if requested > available:
            parts.append(f"{name}, requested: {requested}, allocatable: {available}")
    return "node didn't have enough allocatable resources: " + "; ".join(parts) if parts else None


def _cause(reason: str) -> Cause:
    return Cause("", "", reason)


__all__ = ["PodResizeValidator", "allocatable_problem"]
