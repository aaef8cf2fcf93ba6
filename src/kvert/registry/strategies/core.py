"""Core kinds with a rule or two of their own: Nodes, Secrets and Services."""

from __future__ import annotations

from kvert.api import secrets
from kvert.api.kinds import ResourceType
from kvert.api.types import Obj
from kvert.auth.user import User
from kvert.clock import Clock
from kvert.registry.strategies.base import DefaultStrategy


class NodeStrategy(DefaultStrategy):
    """A node agent registers its Node with the status it reports, so create keeps it."""

    def prepare_for_create(self, rt: ResourceType, obj: Obj, requester: User | None) -> None:
        pass


class SecretStrategy(DefaultStrategy):
    """A Secret's ``stringData`` is merged into ``data`` before anything else sees it, as
    Kubernetes' conversion to its internal type does."""

    def decode(self, rt: ResourceType, obj: Obj) -> None:
        secrets.merge_string_data(obj)


class ServiceStrategy(DefaultStrategy):
    """A Service's lone ``clusterIP`` becomes its ``clusterIPs`` (``NormalizeClusterIPs``);
    the registry allocates addresses and ports after this."""

    def prepare_for_create(self, rt: ResourceType, obj: Obj, requester: User | None) -> None:
        # an empty ServiceStatus encodes its loadBalancer member (not omitempty upstream)
        obj["status"] = {"loadBalancer": {}}
        normalize_cluster_ips(obj)

    def prepare_for_update(self, rt: ResourceType, new: Obj, old: Obj, clock: Clock) -> Obj:
        new = super().prepare_for_update(rt, new, old, clock)
        normalize_cluster_ips(new)
        return new


def normalize_cluster_ips(svc: Obj) -> None:
    """``NormalizeClusterIPs`` for a create: a lone ``clusterIP`` becomes ``clusterIPs``."""
    spec = svc.get("spec")
    if isinstance(spec, dict) and spec.get("clusterIP") and not spec.get("clusterIPs"):
        spec["clusterIPs"] = [spec["clusterIP"]]
