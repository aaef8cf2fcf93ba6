"""RecommendationQuery: ask the recommender about a pod that need not exist (seed 002's
"Recommender API").

Upstream described the API but never shipped it, so kvert serves it in its own group,
``autoscaling.kvert.io/v1``, as a create-only, never-stored resource like Kubernetes'
TokenReview: the caller creates a ``RecommendationQuery`` whose ``spec.pod`` is a Pod and gets
the same object back with ``status`` filled in::

    apiVersion: autoscaling.kvert.io/v1
    kind: RecommendationQuery
    metadata: {name: q, namespace: default}
    spec:
      pod:
        metadata: {labels: {app: hamster}}
        spec: {containers: [{name: hamster}]}
    status:
      recommendation:              # RecommendedPodResources, as a VPA's status.recommendation
        containerRecommendations:
        - {containerName: hamster, target: {cpu: 587m, memory: 262144k}, lowerBound: ...,
           upperBound: ..., uncappedTarget: ...}
      # or, when there is none:  error: "<why>"

How the answer is made (:func:`answer_query`):

1. the pod is validated (:func:`validate_query`: a 422 ``Invalid`` naming the fields);
2. the VPAs that control it are found with the admission controller's rule
   (:class:`kvert.vpa.admission.VpaMatcher`: the pod's top-most controller ownerReference,
   else its labels against the VPA target's selector), and one is chosen as the admission
   controller chooses (:func:`kvert.vpa.admission.choose_vpa`: ``updateMode: Off`` skipped,
   then the oldest, then the smallest name);
3. the recommendation is computed afresh from the live recommender's aggregates of that VPA
   (``recommend()`` over ``Recommender.store``: the history up to now, capped by the VPA's
   resource policy, the pod minimum shared among the VPA's recommended containers -- so the
   numbers are those the VPA's own status shows after the recommender's next pass) and
   reduced to the pod's containers.

``status.error`` says why there is no recommendation: no VPA matches the pod, every matching
VPA has ``updateMode: Off``, the VPA is served by another recommender, or there is no usage
history yet for the pod's containers. Nothing here speaks HTTP: the API server
(:mod:`kvert.apiserver.recommendation_query`) and ``kvert vpa recommender`` serve it.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping
from typing import Any, Protocol

from kvert.api.errors import Cause, Invalid, invalid, not_supported, required
from kvert.api.recommendation_query import API_VERSION, GROUP, KIND, PLURAL, RESOURCE, VERSION
from kvert.client.base import Client
from kvert.vpa.admission import VpaMatcher, choose_vpa, stronger_key
from kvert.vpa.aggregate import AggregateStore
from kvert.vpa.recommendation import RecommenderConfig, recommend


class QueriedRecommender(Protocol):
    """What a query reads of the live recommender (``kvert.vpa.recommender.Recommender``); its
    ``name`` too when it has one."""

    @property
    def store(self) -> AggregateStore: ...

    @property
    def config(self) -> RecommenderConfig: ...

    @property
    def client(self) -> Client: ...


_TOP_FIELDS = ("apiVersion", "kind", "metadata", "spec", "status")


def _meta(obj: Mapping | None) -> dict:
    meta = (obj or {}).get("metadata") if isinstance(obj, Mapping) else None
    return meta if isinstance(meta, dict) else {}


# -- validation -----------------------------------------------------------------------------------

def validation_causes(query: Any, namespace: str = "") -> list[Cause]:
    """What is wrong with a RecommendationQuery (field paths as Kubernetes writes them)."""
    if not isinstance(query, Mapping):
        return [invalid("", type(query).__name__, "must be a RecommendationQuery object")]
    causes: list[Cause] = []
    api_version = query.get("apiVersion")
    if api_version not in (None, "", API_VERSION):
        causes.append(not_supported("apiVersion", api_version, [API_VERSION]))
    kind = query.get("kind")
    if kind not in (None, "", KIND):
        causes.append(not_supported("kind", kind, [KIND]))
    meta = query.get("metadata")
    if meta is not None and not isinstance(meta, Mapping):
        causes.append(invalid("metadata", "", "must be an object"))
    spec = query.get("spec")
    if not isinstance(spec, Mapping):
        causes.append(required("spec.pod", "the pod to recommend resources for"))
        return causes
    pod = spec.get("pod")
    if not isinstance(pod, Mapping):
        causes.append(required("spec.pod", "the pod to recommend resources for"))
        return causes
    pod_kind = pod.get("kind")
    if pod_kind not in (None, "", "Pod"):
        causes.append(not_supported("spec.pod.kind", pod_kind, ["Pod"]))
    pod_version = pod.get("apiVersion")
    if pod_version not in (None, "", "v1"):
        causes.append(not_supported("spec.pod.apiVersion", pod_version, ["v1"]))
    pod_meta = pod.get("metadata")
    if pod_meta is not None and not isinstance(pod_meta, Mapping):
        causes.append(invalid("spec.pod.metadata", "", "must be an object"))
        pod_meta = {}
    pod_meta = pod_meta or {}
    labels = pod_meta.get("labels")
    if labels is not None and (not isinstance(labels, Mapping)
                               or not all(isinstance(v, str) for v in labels.values())):
        causes.append(invalid("spec.pod.metadata.labels", "", "must be a map of strings"))
    pod_ns = pod_meta.get("namespace")
    query_ns = namespace or _meta(query).get("namespace") or ""
    if pod_ns and query_ns and pod_ns != query_ns:
        causes.append(invalid("spec.pod.metadata.namespace", pod_ns,
                              f"must be the namespace of the RecommendationQuery ({query_ns})"))
    pod_spec = pod.get("spec")
    containers = pod_spec.get("containers") if isinstance(pod_spec, Mapping) else None
    if not isinstance(containers, list) or not containers:
        causes.append(required("spec.pod.spec.containers", "the pod needs at least one container"))
        return causes
    seen: set[str] = set()
    for i, c in enumerate(containers):
        path = f"spec.pod.spec.containers[{i}]"
        if not isinstance(c, Mapping):
            causes.append(invalid(path, "", "must be a container object"))
            continue
        name = c.get("name")
        if not isinstance(name, str) or not name:
            causes.append(required(f"{path}.name"))
        elif name in seen:
            causes.append(Cause(f"{path}.name", f'Duplicate value: "{name}"', "FieldValueDuplicate"))
        else:
            seen.add(name)
    return causes


def validate_query(query: Any, namespace: str = "") -> None:
    """Raise a 422 ``Invalid`` naming every bad field."""
    causes = validation_causes(query, namespace)
    if causes:
        name = _meta(query).get("name", "") if isinstance(query, Mapping) else ""
        raise Invalid(KIND, name or "", causes, group=GROUP)


# -- the answer -----------------------------------------------------------------------------------

def _vpa_name(vpa: Mapping) -> str:
    meta = _meta(vpa)
    return f"{meta.get('namespace') or 'default'}/{meta.get('name', '')}"


def _mine(vpa: Mapping, recommender_name: str) -> bool:
    names = (vpa.get("spec") or {}).get("recommenders") or []
    return not names or any((r or {}).get("name") == recommender_name for r in names)


def recommend_for_pod(pod: Mapping, matching_vpas: Iterable[Mapping], store: AggregateStore,
                      config: RecommenderConfig | None = None,
                      recommender_name: str = "default") -> dict:
    """``status`` for a pod given the VPAs that match it (any mode) and the recommender's
    ``AggregateStore``: ``{"recommendation": {...}}`` or ``{"error": "..."}``."""
    matching = sorted((dict(v) for v in matching_vpas), key=stronger_key)
    if not matching:
        return {"error": "no VerticalPodAutoscaler matches the pod (by its controller or by the "
                         "labels its VPA target selects)"}
    chosen, _ = choose_vpa(matching)
    if chosen is None:
        names = ", ".join(_vpa_name(v) for v in matching)
        return {"error": f"the VerticalPodAutoscaler matching the pod ({names}) has updateMode Off: "
                         "it does not set resources of new pods"}
    if not _mine(chosen, recommender_name):
        names = ", ".join(str((r or {}).get("name")) for r in chosen["spec"]["recommenders"])
        return {"error": f"VerticalPodAutoscaler {_vpa_name(chosen)} is served by recommender {names}, "
                         f"not {recommender_name}"}
    meta = _meta(chosen)
    aggregates = store.for_vpa(meta.get("namespace") or "default", meta.get("name", ""))
    recommendation = recommend(aggregates, chosen, config)
    wanted = [c.get("name") for c in ((pod.get("spec") or {}).get("containers") or [])
              if isinstance(c, Mapping)]
    items = [item for item in recommendation.get("containerRecommendations") or []
             if item.get("containerName") in wanted]
    items.sort(key=lambda item: wanted.index(item["containerName"]))
    if not items:
        return {"error": f"no recommendation yet: VerticalPodAutoscaler {_vpa_name(chosen)} has no usage "
                         f"history for container(s) {', '.join(map(str, wanted))} (or their policy "
                         "mode is Off)"}
    return {"recommendation": {"containerRecommendations": items}}


def response(query: Mapping, namespace: str, status: Mapping) -> dict:
    """The query as sent, with apiVersion, kind, namespace and the ``status`` set."""
    out = copy.deepcopy(dict(query))
    out["apiVersion"] = API_VERSION
    out["kind"] = KIND
    meta = dict(out.get("metadata") or {})
    if namespace:
        meta["namespace"] = namespace
    out["metadata"] = meta
    out["status"] = dict(status)
    return {k: out[k] for k in _TOP_FIELDS if k in out}


async def answer_query(query: dict, recommender: QueriedRecommender, *, vpas: Iterable[Mapping] | None = None,
                       matcher: VpaMatcher | None = None, namespace: str = "") -> dict:
    """The answered RecommendationQuery (raises ``Invalid`` for a bad one).

    ``recommender`` is the live :class:`~kvert.vpa.recommender.Recommender` (its ``store``,
    ``config``, ``name`` and ``client`` are used). ``vpas``, when given, are the VPAs that match
    the pod; otherwise ``matcher`` (default: a :class:`VpaMatcher` over the recommender's
    client) finds them. ``namespace`` is the request's (default: the query's, else default).
    """
    namespace = namespace or _meta(query).get("namespace") or "default"
    validate_query(query, namespace)
    pod = copy.deepcopy(dict(query["spec"]["pod"]))
    pod.setdefault("apiVersion", "v1")
    pod.setdefault("kind", "Pod")
    pod_meta = dict(pod.get("metadata") or {})
    pod_meta["namespace"] = namespace
    pod["metadata"] = pod_meta
    if vpas is None:
        matcher = matcher or VpaMatcher(recommender.client)
        vpas = await matcher.matching_vpas(pod, namespace)
    status = recommend_for_pod(pod, vpas, recommender.store, recommender.config,
                               getattr(recommender, "name", "default"))
    return response(query, namespace, status)


class QueryService:
    """What a server calls: ``await service.answer(body, namespace)``."""

    def __init__(self, recommender: QueriedRecommender, matcher: VpaMatcher | None = None) -> None:
        self.recommender = recommender
        self.matcher = matcher
        self.answered = 0

    async def answer(self, query: dict, namespace: str) -> dict:
        matcher = self.matcher or VpaMatcher(self.recommender.client)
        result = await answer_query(query, self.recommender, matcher=matcher, namespace=namespace)
        self.answered += 1
        return result


__all__ = ["API_VERSION", "GROUP", "KIND", "PLURAL", "QueryService", "RESOURCE", "VERSION", "answer_query",
           "recommend_for_pod", "response", "validate_query", "validation_causes"]
