"""Priority (``plugin/pkg/admission/priority``): pod priority from PriorityClasses.

On pod creation (subresources are ignored):

- ``priorityClassName`` set: the class must exist, else 403 ``no PriorityClass with name X
  was found``; the pod gets ``spec.priority`` = the class value and
  ``spec.preemptionPolicy`` = the class's policy;
- no class name: the ``globalDefault`` class (the lowest-valued one, should a race have
  made two) names the pod's class and sets priority and policy; with none, priority 0
  and ``PreemptLowerPriority``;
- a pod that already carries a different ``spec.priority`` or ``spec.preemptionPolicy``
  is refused (403, Kubernetes' wording).

On pod update, a priority or preemptionPolicy the client dropped is restored from the
stored pod (validation forbids changing them).

PriorityClass create/update: only one ``globalDefault`` may exist (403 ``PriorityClass X is
already marked as default. Only one default can exist``). Names with the ``system-``
prefix and values above 1e9 are API validation's business (422), as in Kubernetes.

The two built-in classes (:func:`builtin_priority_classes`) are created by the API
server at start, as kube-apiserver's scheduling post-start hook does; deleting one is
refused (403) by the PriorityClass strategy (kvert.registry.strategies.scheduling), as
upstream's PriorityClass storage does, whatever admission plugins are enabled.
"""

from __future__ import annotations

from kvert.api.errors import NotFound
from kvert.registry.admission import CREATE, UPDATE, Attributes
from kvert.store.base import Store

from .common import PODS, forbidden, is_pod, pod_spec

PRIORITY_CLASSES = "scheduling.k8s.io/priorityclasses"
SYSTEM_CLUSTER_CRITICAL = "system-cluster-critical"
SYSTEM_NODE_CRITICAL = "system-node-critical"
SYSTEM_CRITICAL_PRIORITY = 2_000_000_000
DEFAULT_PRIORITY_WHEN_NO_DEFAULT_CLASS_EXISTS = 0
PREEMPT_LOWER_PRIORITY = "PreemptLowerPriority"


def builtin_priority_classes() -> list[dict]:
    """``scheduling.SystemPriorityClasses()``: what the API server creates at start."""
    return [
        {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
         "metadata": {"name": SYSTEM_NODE_CRITICAL},
         "value": SYSTEM_CRITICAL_PRIORITY + 1000,
         "description": "Used for system critical pods that must not be moved from their current "
                        "node."},
        {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
         "metadata": {"name": SYSTEM_CLUSTER_CRITICAL},
         "value": SYSTEM_CRITICAL_PRIORITY,
         "description": "Used for system critical pods that must run in the cluster, but can be "
                        "moved to another node if necessary."},
    ]


class Priority:
    name = "Priority"
    resources = frozenset({PODS, PRIORITY_CLASSES})

    def __init__(self, store: Store):
        self.store = store

    # -- pods ---------------------------------------------------------------------------

    async def admit(self, attrs: Attributes) -> None:
        if attrs.subresource or not is_pod(attrs) or not isinstance(attrs.object, dict):
            return
        if attrs.operation == UPDATE:
            self._keep_priority(attrs)
        elif attrs.operation == CREATE:
            self._admit_new_pod(attrs)

    def _keep_priority(self, attrs: Attributes) -> None:
        spec, old_spec = pod_spec(attrs.object), (attrs.old_object or {}).get("spec") or {}
        for field in ("priority", "preemptionPolicy"):
            if spec.get(field) is None and old_spec.get(field) is not None:
                spec[field] = old_spec[field]

    def _admit_new_pod(self, attrs: Attributes) -> None:
        spec = pod_spec(attrs.object)
        class_name = spec.get("priorityClassName") or ""
        if not class_name:
            default = self.default_class()
            if default is not None:
                class_name = default["metadata"]["name"]
                priority, policy = _value(default), default.get("preemptionPolicy")
            else:
                priority, policy = DEFAULT_PRIORITY_WHEN_NO_DEFAULT_CLASS_EXISTS, PREEMPT_LOWER_PRIORITY
            spec["priorityClassName"] = class_name
            if not class_name:
                spec.pop("priorityClassName")
        else:
            try:
                pc = self.store.get(PRIORITY_CLASSES, "", class_name)
            except NotFound:
                raise forbidden(attrs, f"no PriorityClass with name {class_name} was found") from None
            priority, policy = _value(pc), pc.get("preemptionPolicy")
        given = spec.get("priority")
        if given is not None and given != priority:
            raise forbidden(attrs, f"the integer value of priority ({given}) must not be provided "
                                   f"in pod spec; priority admission controller computed {priority} "
                                   "from the given PriorityClass name")
        spec["priority"] = priority
        if policy is not None:
            given_policy = spec.get("preemptionPolicy")
            if given_policy is not None and given_policy != policy:
                raise forbidden(attrs, f"the string value of PreemptionPolicy ({given_policy}) must "
                                       "not be provided in pod spec; priority admission controller "
                                       f"computed {policy} from the given PriorityClass name")
            spec["preemptionPolicy"] = policy

    # -- priority classes ---------------------------------------------------------------

    async def validate(self, attrs: Attributes) -> None:
        if attrs.subresource or attrs.resource != PRIORITY_CLASSES:
            return
        if attrs.operation not in (CREATE, UPDATE) or not isinstance(attrs.object, dict):
            return
        if not attrs.object.get("globalDefault"):
            return
        default = self.default_class()
        if default is None:
            return
        default_name = default["metadata"]["name"]
        if attrs.operation == CREATE or default_name != attrs.name:
            raise forbidden(attrs, f"PriorityClass {default_name} is already marked as default. "
                                   "Only one default can exist")

    def default_class(self) -> dict | None:
        """The globalDefault class; with several (a race), the lowest-valued one."""
        best = None
        for pc in self.store.list(PRIORITY_CLASSES).items:
            if pc.get("globalDefault") and (best is None or _value(pc) < _value(best)):
                best = pc
        return best


def _value(pc: dict) -> int:
    value = pc.get("value", 0)
    return value if isinstance(value, int) and not isinstance(value, bool) else 0
