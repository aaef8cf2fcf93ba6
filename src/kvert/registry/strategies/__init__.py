"""Which strategy decides each write: one table, by (resource, subresource).

A resource without an entry of its own gets the entry of ``ANY``: ``DefaultStrategy`` for
its main resource, ``StatusStrategy`` for its ``/status``. A subresource found nowhere is
not written through the registry's update (``pods/binding``, ``pods/eviction``,
``serviceaccounts/token`` and ``*/scale`` have handlers of their own).
"""

from __future__ import annotations

from collections.abc import Mapping

from kvert.api.kinds import ResourceType
from kvert.registry.strategies.base import (
    CreateStrategy,
    DefaultStrategy,
    DeleteStrategy,
    SchemaStrategy,
    StatusStrategy,
    Strategy,
    UpdateStrategy,
)
from kvert.registry.strategies.certificates import (
    CertificateSigningRequestApprovalStrategy,
    CertificateSigningRequestStatusStrategy,
    CertificateSigningRequestStrategy,
)
from kvert.registry.strategies.core import NodeStrategy, SecretStrategy, ServiceStrategy
from kvert.registry.strategies.namespaces import NamespaceFinalizeStrategy, NamespaceStrategy
from kvert.registry.strategies.pods import (
    PodEphemeralContainersStrategy,
    PodResizeStrategy,
    PodStatusStrategy,
    PodStrategy,
)
from kvert.registry.strategies.scheduling import PriorityClassStrategy
from kvert.registry.strategies.storage import PersistentVolumeStatusStrategy
from kvert.registry.strategies.workloads import (
    CreatedWithStatus,
    CustomResourceDefinitionStrategy,
    JobStrategy,
    ReplicationControllerStrategy,
)

ANY = "*"
_CSR = "certificates.k8s.io/certificatesigningrequests"

STRATEGIES: Mapping[tuple[str, str], Strategy] = {
    (ANY, ""): DefaultStrategy(),
    (ANY, "status"): StatusStrategy(),
    ("pods", ""): PodStrategy(),
    ("pods", "status"): PodStatusStrategy(),
    ("pods", "resize"): PodResizeStrategy(),
    ("pods", "ephemeralcontainers"): PodEphemeralContainersStrategy(),
    ("nodes", ""): NodeStrategy(),
    ("namespaces", ""): NamespaceStrategy(),
    ("namespaces", "finalize"): NamespaceFinalizeStrategy(),
    ("secrets", ""): SecretStrategy(),
    ("services", ""): ServiceStrategy(),
    # PrepareForCreate empties the status; decoding from storage defaults the phase
    ("persistentvolumeclaims", ""): CreatedWithStatus({"phase": "Pending"}),
    ("persistentvolumes", ""): CreatedWithStatus({"phase": "Pending"}),
    ("persistentvolumes", "status"): PersistentVolumeStatusStrategy(),
    ("replicationcontrollers", ""): ReplicationControllerStrategy({"replicas": 0}),
    ("apps/replicasets", ""): CreatedWithStatus({"replicas": 0}),
    ("apps/statefulsets", ""): CreatedWithStatus({"replicas": 0, "availableReplicas": 0}),
    ("apps/daemonsets", ""): CreatedWithStatus({"currentNumberScheduled": 0, "numberMisscheduled": 0,
                                                "desiredNumberScheduled": 0, "numberReady": 0}),
    ("autoscaling/horizontalpodautoscalers", ""): CreatedWithStatus({"currentMetrics": None,
                                                                     "desiredReplicas": 0}),
    ("batch/jobs", ""): JobStrategy(),
    ("apiextensions.k8s.io/customresourcedefinitions", ""): CustomResourceDefinitionStrategy(),
    ("scheduling.k8s.io/priorityclasses", ""): PriorityClassStrategy(),
    (_CSR, ""): CertificateSigningRequestStrategy(),
    (_CSR, "status"): CertificateSigningRequestStatusStrategy(),
    (_CSR, "approval"): CertificateSigningRequestApprovalStrategy(),
}


def strategy_for(rt: ResourceType, subresource: str = "") -> Strategy | None:
    """The strategy of a write to ``rt``'s ``subresource`` (or main resource); None when
    that subresource is not updated through a strategy."""
    found = STRATEGIES.get((rt.key, subresource))
    return found if found is not None else STRATEGIES.get((ANY, subresource))


def main_strategy(rt: ResourceType) -> Strategy:
    """The strategy of a create, an update or a delete of ``rt`` itself."""
    found = STRATEGIES.get((rt.key, ""))
    return found if found is not None else STRATEGIES[(ANY, "")]


__all__ = ["ANY", "STRATEGIES", "CreateStrategy", "DefaultStrategy", "DeleteStrategy",
           "SchemaStrategy", "StatusStrategy", "Strategy", "UpdateStrategy", "main_strategy",
           "strategy_for"]
