"""The ClusterRole aggregation controller (kube-controller-manager's ``clusterrole-aggregation``).

A ClusterRole with an ``aggregationRule`` owns no rules of its own: its rules are the union
of the rules of every other ClusterRole some ``clusterRoleSelectors`` entry selects by
label, selectors in order, roles by name within one, each rule once. That is how
``admin``, ``edit`` and ``view`` gain the rules of ``rbac.authorization.k8s.io/aggregate-to-*``
roles, including those of custom resources installed later.

As upstream, any change to any ClusterRole requeues every aggregated one (cheap: there
are few), and a role whose aggregated rules already match is not written. Upstream writes
with server-side apply and falls back to an update; kvert updates.
"""

from __future__ import annotations

import logging
from typing import Any

from kvert.api.selectors import SelectorError, label_selector_from_dict
from kvert.client.base import Client
from kvert.clock import Clock
from kvert.controllers.base import Controller, InformerFactory, safe_handler

log = logging.getLogger(__name__)

CLUSTER_ROLES = "rbac.authorization.k8s.io/clusterroles"
_RULE_FIELDS = ("verbs", "apiGroups", "resources", "resourceNames", "nonResourceURLs")


def _name(obj: dict) -> str:
    return (obj.get("metadata") or {}).get("name", "")


def _normal(rule: Any) -> tuple:
    """A rule for comparison: absent and empty lists are the same (equality.Semantic)."""
    if not isinstance(rule, dict):
        return ()
    return tuple(tuple(rule.get(f) or ()) for f in _RULE_FIELDS)


def aggregated_rules(role: dict, cluster_roles: list[dict]) -> list[dict]:
    """The rules ``role``'s aggregation rule selects (``syncClusterRole``)."""
    rules: list[dict] = []
    seen: set[tuple] = set()
    for selector in (role.get("aggregationRule") or {}).get("clusterRoleSelectors") or ():
        matcher = label_selector_from_dict(selector)
        for other in sorted(cluster_roles, key=_name):
            if _name(other) == _name(role):
                continue
            if not matcher.matches((other.get("metadata") or {}).get("labels") or {}):
                continue
            for rule in other.get("rules") or ():
                key = _normal(rule)
                if key not in seen:
                    seen.add(key)
                    rules.append(rule)
    return rules


class ClusterRoleAggregationController(Controller):
    name = "clusterrole-aggregation-controller"

    def __init__(self, client: Client, clock: Clock, *, informers: InformerFactory | None = None,
                 workers: int = 1):
        super().__init__(client, clock, informers=informers, workers=workers)
        self.cluster_roles = self.use(CLUSTER_ROLES)
        changed = safe_handler(lambda *_: self._enqueue_aggregated())
        self.cluster_roles.add_handlers(changed, changed, changed)

    def _enqueue_aggregated(self) -> None:
        for role in self.cluster_roles.list():
            if role.get("aggregationRule") is not None:
                self.enqueue(_name(role))

    async def sync(self, key: str) -> None:
        role = self.cluster_roles.get(key, "")
        if role is None or role.get("aggregationRule") is None:
            return
        try:
            rules = aggregated_rules(role, self.cluster_roles.list())
        except SelectorError as e:
            log.warning("%s: ClusterRole %s has an invalid aggregation selector: %s", self.name, key, e)
            return
        if [_normal(r) for r in rules] == [_normal(r) for r in role.get("rules") or ()]:
            return
        await self.client.update(CLUSTER_ROLES, {**role, "rules": rules})
