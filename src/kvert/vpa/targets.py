"""Which pods a VerticalPodAutoscaler controls (``target/fetcher.go`` and the updater's
replica counting upstream).

``spec.targetRef`` (``{apiVersion, kind, name}``) names a workload in the VPA's namespace:
Deployment, ReplicaSet, StatefulSet, DaemonSet, Job, ReplicationController, or any object
kvert serves whose ``spec.selector`` is a label selector (a CronJob's is the one of its job
template's labels). ``resolve_target`` reads it and answers the selector, the workload object
and, when the target cannot be used, the problem (the recommender's ``ConfigUnsupported``
condition message, upstream's wording):

* the object cannot be read, or has no selector: ``Cannot read targetRef. Reason: ...``;
* the object has a controlling owner (a ReplicaSet of a Deployment): ``The targetRef
  controller has a parent but it should point to a topmost well-known or scalable
  controller``.

``controlled_pods`` lists the pods the selector matches; ``live_pods`` drops the ones being
deleted or finished; ``configured_replicas`` is the workload's configured size (the
updater's ``configured``: ``spec.replicas``, a DaemonSet's desired number scheduled; None
when the workload does not say, e.g. a Job -- use the live pod count then).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, Protocol, TypeVar

from kvert.api import kinds
from kvert.api.errors import ApiError
from kvert.api.selectors import LabelSelector, SelectorError


class ObjectReader(Protocol):
    """Where the VPA components read objects: a ``kvert.client.Client`` or the informer caches
    of a ``kvert.client.cache.InformerFactory`` (both answer a list as ``{"items": [...]}``)."""

    async def get(self, resource: str, name: str, namespace: str = "") -> dict[str, Any]: ...

    async def list(self, resource: str, *, namespace: str | None = None) -> dict[str, Any]: ...


_WELL_KNOWN = {
    "Deployment": "apps/deployments", "ReplicaSet": "apps/replicasets",
    "StatefulSet": "apps/statefulsets", "DaemonSet": "apps/daemonsets",
    "Job": "batch/jobs", "CronJob": "batch/cronjobs",
    "ReplicationController": "replicationcontrollers",
}

PARENT_MESSAGE = ("The targetRef controller has a parent but it should point to a topmost "
                  "well-known or scalable controller")


@dataclass
class Target:
    """A resolved ``targetRef``: ``selector`` is ``LabelSelector.nothing()`` when unusable."""

    selector: LabelSelector
    workload: dict | None = None
    problem: str | None = None
    resource: str | None = None
    pods: list[dict] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.problem is None


def target_resource(target_ref: Mapping[str, Any]) -> str:
    """The resource key (``apps/deployments``) a targetRef names."""
    kind = target_ref.get("kind") or ""
    api_version = target_ref.get("apiVersion") or ""
    try:
        return kinds.by_gvk(api_version, kind).key
    except KeyError:
        pass
    if kind in _WELL_KNOWN:
        return _WELL_KNOWN[kind]
    group = api_version.split("/")[0] if "/" in api_version else ""
    plural = kind.lower() + ("es" if kind.lower().endswith("s") else "s")
    return f"{group}/{plural}" if group else plural


_SELECTORS: dict[tuple[str, str], LabelSelector] = {}     # (uid, resourceVersion) -> selector
_SELECTORS_MAX = 50_000


def workload_selector(workload: Mapping[str, Any]) -> LabelSelector:
    """The label selector of a workload object (raises SelectorError when it has none);
    remembered per object version, since every pass of the VPA components asks again."""
    meta = workload.get("metadata") or {}
    key = (meta.get("uid") or "", meta.get("resourceVersion") or "")
    if all(key):
        selector = _SELECTORS.get(key)
        if selector is None:
            if len(_SELECTORS) >= _SELECTORS_MAX:
                _SELECTORS.clear()
            selector = _SELECTORS[key] = _workload_selector(workload)
        return selector
    return _workload_selector(workload)


def _workload_selector(workload: Mapping[str, Any]) -> LabelSelector:
    spec = workload.get("spec") or {}
    if workload.get("kind") == "CronJob":
        labels = ((((spec.get("jobTemplate") or {}).get("spec") or {}).get("template") or {})
                  .get("metadata") or {}).get("labels")
        if not labels:
            raise SelectorError("the CronJob's job template has no labels")
        return LabelSelector.from_dict({"matchLabels": labels})
    sel = spec.get("selector")
    if sel is None:
        raise SelectorError(f"{workload.get('kind', 'the target')} has no spec.selector")
    if isinstance(sel, Mapping) and sel and "matchLabels" not in sel and "matchExpressions" not in sel:
        sel = {"matchLabels": dict(sel)}          # ReplicationController: a plain map
    selector = LabelSelector.from_dict(sel)
    return selector


async def resolve_target(client: ObjectReader, vpa: Mapping[str, Any]) -> Target:
    """Read the VPA's ``spec.targetRef`` and answer its selector (``Target``)."""
    meta = vpa.get("metadata") or {}
    namespace = meta.get("namespace") or "default"
    ref = (vpa.get("spec") or {}).get("targetRef")
    if not isinstance(ref, Mapping) or not ref.get("name") or not ref.get("kind"):
        return Target(LabelSelector.nothing(), problem="Cannot read targetRef")
    resource = target_resource(ref)
    try:
        workload = await client.get(resource, ref["name"], namespace)
    except (ApiError, KeyError, ValueError) as e:
        return Target(LabelSelector.nothing(), resource=resource,
                      problem=f"Cannot read targetRef. Reason: {_reason(e)}")
    try:
        selector = workload_selector(workload)
    except SelectorError as e:
        return Target(LabelSelector.nothing(), workload, f"Cannot read targetRef. Reason: {e}", resource)
    owners = (workload.get("metadata") or {}).get("ownerReferences") or []
    if any(o.get("controller") for o in owners):
        return Target(LabelSelector.nothing(), workload, PARENT_MESSAGE, resource)
    return Target(selector, workload, None, resource)


def _reason(e: Exception) -> str:
    message = getattr(e, "message", None) or str(e)
    return str(message)


def is_live(pod: Mapping[str, Any]) -> bool:
    """Not being deleted and not finished."""
    if (pod.get("metadata") or {}).get("deletionTimestamp"):
        return False
    return (pod.get("status") or {}).get("phase") not in ("Succeeded", "Failed")


_Pod = TypeVar("_Pod", bound=Mapping[str, Any])


class PodIndex(Generic[_Pod]):
    """Pods grouped by namespace and label set (the replicas of a workload share theirs),
    with the label sets indexed by their key=value pairs: matching a selector tests only
    the label sets that carry one of the values it requires, not every pod."""

    def __init__(self, pods: Iterable[_Pod]) -> None:
        self._groups: dict[str, dict[tuple, list[_Pod]]] = {}
        self._by_pair: dict[str, dict[tuple[str, str], list[tuple]]] = {}
        for p in pods:
            meta = p.get("metadata") or {}
            ns = meta.get("namespace", "default")
            labels = tuple(sorted((meta.get("labels") or {}).items()))
            by_labels = self._groups.setdefault(ns, {})
            if labels not in by_labels:
                by_labels[labels] = []
                pairs = self._by_pair.setdefault(ns, {})
                for pair in labels:
                    pairs.setdefault(pair, []).append(labels)
            by_labels[labels].append(p)

    def select(self, namespace: str, selector: LabelSelector) -> list[_Pod]:
        """The namespace's pods the selector matches, by name."""
        groups = self._groups.get(namespace) or {}
        required = selector.required_values()
        if required is None:
            candidates = list(groups)
        else:
            pairs = self._by_pair.get(namespace) or {}
            key, values = required
            candidates = [labels for v in values for labels in pairs.get((key, v), ())]
        out: list[_Pod] = []
        for labels in candidates:
            if selector.matches(dict(labels)):
                out.extend(groups[labels])
        out.sort(key=lambda p: p["metadata"]["name"])
        return out


PodKey = tuple[str, str]      # (namespace, pod name)
VpaKey = tuple[str, str]      # (namespace, VPA name)
Labels = tuple[tuple[str, str], ...]


class PodAssignment:
    """Which VPA controls each live pod: the oldest VPA (creation time, then name) of the pod's
    namespace whose target selector matches the pod's labels. Kept up to date by calls as
    VPAs, their targets and pods change (the recommender feeds it informer events): the
    replicas of a workload share a label set, so an owner is looked up once per label set,
    among the VPAs whose selector requires one of the set's label values.

    ``changed`` collects the pods whose owner changed (the reader clears it); ``version``
    counts such changes. ``keep`` says which pods are kept (default: live ones)."""

    def __init__(self, keep: Callable[[Mapping[str, Any]], bool] | None = None) -> None:
        self.keep = keep or is_live
        self.pods: dict[PodKey, dict] = {}
        self.owner: dict[PodKey, VpaKey] = {}
        self.members: dict[VpaKey, set[PodKey]] = {}
        self.changed: set[PodKey] = set()
        self.version = 0
        self._vpas: dict[VpaKey, tuple[tuple, LabelSelector]] = {}
        self._by_pair: dict[str, dict[tuple[str, str], set[VpaKey]]] = {}
        self._unindexed: dict[str, set[VpaKey]] = {}
        self._groups: dict[str, dict[Labels, set[str]]] = {}
        self._labels: dict[PodKey, Labels] = {}
        self._dirty: set[str] = set()

    # -- VPAs ------------------------------------------------------------------------------------

    def set_vpa(self, key: VpaKey, created: str, selector: LabelSelector) -> None:
        """The VPA (creationTimestamp ``created``) selects with ``selector`` (its target's;
        ``LabelSelector.nothing()`` when the target is unusable)."""
        entry = ((created, key), selector)
        old = self._vpas.get(key)
        if old is not None and old[0] == entry[0] and old[1] == selector:
            return
        self._unindex(key)
        self._vpas[key] = entry
        self._dirty.add(key[0])
        if selector == LabelSelector.nothing():
            return
        required = selector.required_values()
        if required is None:
            self._unindexed.setdefault(key[0], set()).add(key)
        else:
            pairs = self._by_pair.setdefault(key[0], {})
            for value in required[1]:
                pairs.setdefault((required[0], value), set()).add(key)

    def remove_vpa(self, key: VpaKey) -> None:
        if key in self._vpas:
            self._unindex(key)
            del self._vpas[key]
            self._dirty.add(key[0])

    def _unindex(self, key: VpaKey) -> None:
        old = self._vpas.get(key)
        if old is None:
            return
        self._unindexed.get(key[0], set()).discard(key)
        required = old[1].required_values()
        if required is not None:
            pairs = self._by_pair.get(key[0], {})
            for value in required[1]:
                pairs.get((required[0], value), set()).discard(key)

    # -- pods ------------------------------------------------------------------------------------

    def add_pod(self, pod: dict) -> None:
        """A pod was created or changed (a pod no longer kept is removed)."""
        meta = pod.get("metadata") or {}
        key = (meta.get("namespace") or "default", meta.get("name", ""))
        if not self.keep(pod):
            self.remove_pod(key)
            return
        labels = tuple(sorted((meta.get("labels") or {}).items()))
        self.pods[key] = pod
        old = self._labels.get(key)
        if old == labels:
            return
        if old is not None:
            self._leave(key, old)
        self._labels[key] = labels
        groups = self._groups.setdefault(key[0], {})
        group = groups.get(labels)
        if group is None:
            group = groups[labels] = set()
        group.add(key[1])
        if key[0] not in self._dirty:
            self._set_owner(key, self._owner_of(key[0], labels))

    def remove_pod(self, key: PodKey) -> None:
        self.pods.pop(key, None)
        labels = self._labels.pop(key, None)
        if labels is not None:
            self._leave(key, labels)
        self._set_owner(key, None)

    def _leave(self, key: PodKey, labels: Labels) -> None:
        groups = self._groups.get(key[0], {})
        group = groups.get(labels)
        if group is not None:
            group.discard(key[1])
            if not group:
                del groups[labels]

    # -- owners ----------------------------------------------------------------------------------

    def refresh(self) -> None:
        """Find the owners again in the namespaces whose VPAs or targets changed."""
        for ns in sorted(self._dirty):
            for labels, names in (self._groups.get(ns) or {}).items():
                owner = self._owner_of(ns, labels)
                for name in names:
                    self._set_owner((ns, name), owner)
        self._dirty.clear()

    def _owner_of(self, ns: str, labels: Labels) -> VpaKey | None:
        pairs = self._by_pair.get(ns) or {}
        candidates = set(self._unindexed.get(ns) or ())
        for pair in labels:
            candidates.update(pairs.get(pair) or ())
        if not candidates:
            return None
        as_dict = dict(labels)
        best = None
        for key in candidates:
            order, selector = self._vpas[key]
            if (best is None or order < best[0]) and selector.matches(as_dict):
                best = (order, key)
        return None if best is None else best[1]

    def _set_owner(self, pod: PodKey, owner: VpaKey | None) -> None:
        old = self.owner.get(pod)
        if old == owner:
            return
        if old is not None:
            members = self.members.get(old)
            if members is not None:
                members.discard(pod)
        if owner is None:
            del self.owner[pod]
        else:
            self.owner[pod] = owner
            self.members.setdefault(owner, set()).add(pod)
        self.changed.add(pod)
        self.version += 1


def select_pods(pods: Iterable[_Pod] | PodIndex[_Pod], namespace: str, selector: LabelSelector) -> list[_Pod]:
    """The pods (a list, or a ``PodIndex`` to match many selectors against) of ``namespace``
    that ``selector`` matches, by name."""
    index = pods if isinstance(pods, PodIndex) else PodIndex(pods)
    return index.select(namespace, selector)


async def controlled_pods(client: ObjectReader, vpa: Mapping[str, Any], target: Target | None = None, *,
                          pods: list[dict] | None = None) -> list[dict]:
    """The pods of the VPA's namespace its target's selector matches (``pods``: an already
    listed set to pick from instead of listing)."""
    target = target or await resolve_target(client, vpa)
    if not target.ok:
        return []
    namespace = (vpa.get("metadata") or {}).get("namespace") or "default"
    if pods is None:
        pods = (await client.list("pods", namespace=namespace))["items"]
    return select_pods(pods, namespace, target.selector)


def live_pods(pods: list[dict]) -> list[dict]:
    return [p for p in pods if is_live(p)]


def configured_replicas(workload: Mapping[str, Any] | None) -> int | None:
    """The workload's configured number of pods (None: unknown -- count the live pods)."""
    if not workload:
        return None
    kind = workload.get("kind")
    if kind in ("Job", "CronJob"):
        return None
    if kind == "DaemonSet":
        n = (workload.get("status") or {}).get("desiredNumberScheduled")
        return int(n) if isinstance(n, int) else None
    replicas = (workload.get("spec") or {}).get("replicas")
    if replicas is None:
        return 1 if "template" in (workload.get("spec") or {}) else None
    try:
        return int(replicas)
    except (TypeError, ValueError):
        return None


__all__ = ["PARENT_MESSAGE", "PodAssignment", "PodIndex", "Target", "configured_replicas", "controlled_pods", "is_live",
           "live_pods", "resolve_target", "select_pods", "target_resource", "workload_selector"]
