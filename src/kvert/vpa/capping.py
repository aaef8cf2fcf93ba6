"""Capping a recommendation to a container as it runs (``pkg/utils/vpa/capping.go``, the part the
admission controller and the updater share with upstream VPA 1.8).

* :func:`container_requests_and_limits` -- upstream's ``ContainerRequestsAndLimits``: the
  container's actual resources from its status (``containerStatuses[].resources``, which the
  kubelet reports once in-place resize is on) when present, else the pod spec's.
* :func:`cap_to_container_limit` -- ``capRecommendationToContainerLimit``: with
  ``controlledValues: RequestsOnly`` limits stay as they are, so a recommendation above a
  limit would make an invalid pod (request > limit); it is lowered to the limit, with the note
  ``"<resource> capped to container limit"``. Every limit the container has is a cap (an unset
  limit is infinite); values compare in millis, as upstream's ``MilliValue``.
* :func:`requests_only` -- whether a container's policy says ``RequestsOnly``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kvert.api.quantity import Quantity
from kvert.vpa.recommendation import container_policy, resource_quantities

REQUESTS_ONLY = "RequestsOnly"
REQUESTS_AND_LIMITS = "RequestsAndLimits"
CAPPED_TO_LIMIT = "capped to container limit"


def controlled_values(vpa: Mapping | None, container_name: str) -> str:
    """``GetContainerControlledValues``: the container policy's ``controlledValues``, default
    RequestsAndLimits."""
    policy = container_policy(vpa, container_name) or {}
    return policy.get("controlledValues") or REQUESTS_AND_LIMITS


def requests_only(vpa: Mapping | None, container_name: str) -> bool:
    return controlled_values(vpa, container_name) == REQUESTS_ONLY


def _named(items: Any, name: str) -> Mapping | None:
    for item in items or ():
        if isinstance(item, Mapping) and item.get("name") == name:
            return item
    return None


def container_requests_and_limits(pod: Mapping, container_name: str
                                  ) -> tuple[dict[str, Quantity], dict[str, Quantity]]:
    """The container's (requests, limits): its status resources when the status has them,
    else the spec's."""
    status = _named((pod.get("status") or {}).get("containerStatuses"), container_name)
    resources = (status or {}).get("resources")
    if not isinstance(resources, Mapping):
        resources = (_named((pod.get("spec") or {}).get("containers"), container_name) or {}).get("resources")
    resources = resources if isinstance(resources, Mapping) else {}
    return resource_quantities(resources.get("requests")), resource_quantities(resources.get("limits"))


def cap_to_container_limit(recommendation: Mapping[str, Quantity], limits: Mapping[str, Quantity]
                           ) -> tuple[dict[str, Quantity], list[str]]:
    """(the recommendation with no value above the container's limit, the capping notes)."""
    out = dict(recommendation)
    notes: list[str] = []
    for resource, limit in limits.items():
        value = out.get(resource)
        if value is not None and value.milli_value() > limit.milli_value():
            out[resource] = limit
            notes.append(f"{resource} {CAPPED_TO_LIMIT}")
    return out, notes


__all__ = ["CAPPED_TO_LIMIT", "REQUESTS_AND_LIMITS", "REQUESTS_ONLY", "cap_to_container_limit",
           "container_requests_and_limits", "controlled_values", "requests_only"]
