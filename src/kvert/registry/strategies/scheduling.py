"""PriorityClasses: the two system classes cannot be deleted one by one."""

from __future__ import annotations

from kvert.api.errors import Forbidden
from kvert.api.kinds import ResourceType
from kvert.api.validation.policy import SYSTEM_PRIORITY_CLASSES
from kvert.registry.strategies.base import DefaultStrategy


class PriorityClassStrategy(DefaultStrategy):
    """As upstream's PriorityClass ``REST.Delete`` (pkg/registry/scheduling/priorityclass/storage):
    the refusal comes before the class is read, and a deletecollection, which goes through the
    generic store's own delete, is not refused."""

    def check_delete(self, rt: ResourceType, name: str) -> None:
        if name in SYSTEM_PRIORITY_CLASSES:
            err = Forbidden(f'priorityclasses.scheduling.k8s.io "{name}" is forbidden: '
                            "this is a system priority class and cannot be deleted")
            err.details = {"name": name, "group": "scheduling.k8s.io", "kind": "priorityclasses"}
            raise err
