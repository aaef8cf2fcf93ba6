"""The registry: every write's path from request to store, shared by all front ends.

create/update/patch/delete run: kind checks -> strategy -> defaulting -> mutating
admission -> validation -> validating admission -> store. The in-process client and
the HTTP API server both call this, so an object written either way is treated alike.
The steps are the same for every kind; what a kind (or one of its subresources) decides is
its strategy's, looked up in ``kvert.registry.strategies``.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from typing import Any

from kvert.api import defaults
from kvert.api.errors import (
    AlreadyExists,
    ApiError,
    BadRequest,
    Cause,
    Conflict,
    Invalid,
    NotFound,
    RouteNotFound,
    invalid,
    required,
    status_success,
)
from kvert.api.kinds import ResourceType, by_key
from kvert.api.meta import deep_copy, format_time, name_of, namespace_of
from kvert.api.selectors import LabelSelector
from kvert.api.types import Obj
from kvert.auth.user import User
from kvert.clock import Clock, WallClock
from kvert.registry import deletion
from kvert.registry.admission import CREATE, DELETE, UPDATE, AdmissionChain, Attributes
from kvert.registry.apply import ApplyConflict, server_side_apply, update_managed_fields_no_errors
from kvert.registry.eviction import evict
from kvert.registry.patch import APPLY, apply_patch, content_type_of
from kvert.registry.serviceip import DEFAULT_SERVICE_CIDR, ServiceAllocator
from kvert.registry.strategies import main_strategy, strategy_for
from kvert.registry.tokenrequest import TokenRequests
from kvert.store.base import Store, Watch

# Kubernetes' generateName alphabet: no vowels (no words), no look-alike characters.
_SUFFIX_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"
_PATCH_RETRIES = 8

# ``list`` in the class's annotations is its method
_Objects = list[Obj]
_Strings = list[str]


class Registry:
    def __init__(self, store: Store, clock: Clock | None = None,
                 admission: AdmissionChain | None = None, seed: int | None = None,
                 token_requests: TokenRequests | None = None,
                 service_cidr: str = DEFAULT_SERVICE_CIDR) -> None:
        """``token_requests``: the ``serviceaccounts/token`` subresource (a signer); None
        leaves it unserved, as kube-apiserver without a service account issuer.
        ``service_cidr``: ``--service-cluster-ip-range``."""
        self.store = store
        self.clock: Clock = clock or WallClock()
        self.admission = admission or AdmissionChain()
        self.token_requests = token_requests
        self._random = random.Random(seed)
        self.services = ServiceAllocator(store, service_cidr, seed=seed)

    # ---- reads -----------------------------------------------------------------

    def get(self, resource: str, name: str, namespace: str = "") -> Obj:
        rt = by_key(resource)
        return self.store.get(resource, _scope(rt, namespace), name)

    def list(self, resource: str, *, namespace: str | None = None, label_selector: str = "",
             field_selector: str = "", limit: int = 0, continue_token: str = "",
             resource_version: str = "") -> Obj:
        rt = by_key(resource)
        result = self.store.list(resource, namespace=namespace if rt.namespaced else None,
                                 label_selector=label_selector, field_selector=field_selector,
                                 limit=limit, continue_token=continue_token,
                                 resource_version=resource_version)
        metadata: dict[str, Any] = {"resourceVersion": result.resource_version}
        if result.continue_token:
            metadata["continue"] = result.continue_token
        if result.remaining_item_count:
            metadata["remainingItemCount"] = result.remaining_item_count
        return {"apiVersion": rt.api_version, "kind": f"{rt.kind}List", "metadata": metadata,
                "items": result.items}

    def watch(self, resource: str, **options: Any) -> Watch:
        rt = by_key(resource)
        if not rt.namespaced:
            options["namespace"] = None
        return self.store.watch(resource, **options)

    # ---- writes ----------------------------------------------------------------

    async def create(self, resource: str, obj: Obj, *, namespace: str | None = None,
                     dry_run: bool = False, user: str = "", field_manager: str = "",
                     requester: User | None = None) -> Obj:
        """``requester``: the authenticated user in full (``user`` is its name), for the
        kinds that record who created them (a CertificateSigningRequest)."""
        rt = by_key(resource)
        strategy = main_strategy(rt)
        obj = deep_copy(obj)
        _check_kind(rt, obj)
        meta = _metadata(obj)
        _place(rt, meta, namespace)
        strategy.decode(rt, obj)
        defaults.apply_defaults(obj)
        attrs = Attributes(CREATE, resource, namespace_of(obj), name_of(obj), obj,
                           dry_run=dry_run, user=user)
        await self.admission.admit(attrs)
        # Mutating plugins may have replaced any part of the object (a webhook's JSON patch).
        obj = _admitted(attrs)
        meta = _metadata(obj)
        # As kube-apiserver's BeforeCreate: after mutation, so status (a pod's QoS class)
        # describes the object as admitted.
        if not meta.get("name") and meta.get("generateName"):
            meta["name"] = meta["generateName"] + "".join(
                self._random.choice(_SUFFIX_ALPHABET) for _ in range(5))
        # upstream fills the uid before the strategy runs
        uid = self.store.new_uid() if strategy.names_own_uid(rt) else ""
        if uid:
            meta["uid"] = uid
        strategy.prepare_for_create(rt, obj, requester or (User(user) if user else None))
        if field_manager:
            obj = update_managed_fields_no_errors(None, obj, field_manager, now=format_time(self.clock.now()))
            attrs.object = obj
        # As upstream's BeginCreate: allocated before validation, given back if the write fails.
        with self._allocation(rt, obj, None):
            defaults.apply_defaults(obj)    # what admission added, as a webhook's patch is decoded
            _raise_invalid(rt, obj, strategy.check_schema(rt, obj) + strategy.validate(rt, obj))
            await self.admission.validate(attrs)
            if dry_run:
                self._must_not_exist(resource, rt, obj)
                return obj
            return self.store.create(resource, obj, uid=uid)

    async def update(self, resource: str, obj: Obj, *, subresource: str = "",
                     dry_run: bool = False, user: str = "", field_manager: str = "") -> Obj:
        return await self._update(resource, _own_copy(obj, subresource), None, subresource=subresource,
                                  dry_run=dry_run, user=user, field_manager=field_manager)

    async def _update(self, resource: str, obj: Obj, old: Obj | None, *, subresource: str,
                      dry_run: bool, user: str, field_manager: str) -> Obj:
        """``update`` of ``obj`` (the caller's to change); ``old``: the stored object when the
        caller has just read it (a patch), else read here."""
        rt = by_key(resource)
        _check_kind(rt, obj)
        meta = _metadata(obj)
        _place(rt, meta, meta.get("namespace"))
        if subresource and subresource not in rt.subresources:
            raise RouteNotFound()
        if old is None:
            old = self.store.get(resource, namespace_of(obj), name_of(obj))
        # As kube-apiserver's storage does before anything else: a stale write is a conflict
        # (not a validation error), and generation is the server's to set.
        rv = meta.get("resourceVersion")
        if rv and rv != old["metadata"]["resourceVersion"]:
            raise Conflict(resource, name_of(obj), "the object has been modified; please apply "
                           "your changes to the latest version and try again")
        if "generation" in old["metadata"]:
            meta["generation"] = old["metadata"]["generation"]
        strategy = strategy_for(rt, subresource)
        if strategy is None:
            raise BadRequest(f"subresource {subresource!r} of {resource} cannot be updated")
        strategy.decode(rt, obj)
        new = strategy.prepare_for_update(rt, obj, old, self.clock)
        causes: list[Cause] = []
        if subresource:
            # A subresource's write is validated as its strategy made it, before mutating
            # admission: what a plugin changes then (LimitRanger on a resize) is not checked.
            causes = strategy.validate_update(rt, _defaulted(new, old), old)
        else:
            defaults.apply_defaults(new)
        attrs = Attributes(UPDATE, resource, namespace_of(new), name_of(new), new, old,
                           subresource=subresource, dry_run=dry_run, user=user)
        await self.admission.admit(attrs)
        new = _admitted(attrs)
        if field_manager:
            new = update_managed_fields_no_errors(old, new, field_manager,
                                                  now=format_time(self.clock.now()),
                                                  subresource=subresource)
            attrs.object = new
        with self._allocation(rt, new, old, subresource):
            if not subresource:
                causes = strategy.validate_update(rt, _defaulted(new, old), old)
            causes = strategy.check_schema(rt, new) + causes
            _raise_invalid(rt, new, causes)
            await self.admission.validate(attrs)
            if dry_run:
                return new
            return self.store.update(resource, new)

    async def patch(self, resource: str, name: str, patch: Any, patch_type: str = "merge", *,
                    namespace: str = "", subresource: str = "", dry_run: bool = False,
                    user: str = "", field_manager: str = "",
                    decode: Callable[[Obj], Obj] | None = None) -> Obj:
        """Apply a patch to the stored object; retried on conflict unless the patch pins a version.

        ``decode``: what the patched object must decode as (the API server's typed decoding:
        a patch may give any field any shape)."""
        if content_type_of(patch_type) == APPLY:
            obj, _ = await self.apply(resource, name, patch, namespace=namespace,
                                      manager=field_manager, subresource=subresource,
                                      dry_run=dry_run, user=user)
            return obj
        rt = by_key(resource)
        namespace = _scope(rt, namespace)
        for attempt in range(_PATCH_RETRIES):
            current = self.store.get(resource, namespace, name)
            patched = apply_patch(current, patch, patch_type)
            if not isinstance(patched, dict):
                raise BadRequest("the patch must produce an object")
            if decode is not None:
                patched = decode(patched)
            meta = _metadata(patched)
            pinned = meta.get("resourceVersion") != current["metadata"]["resourceVersion"]
            if meta.get("name", name) != name or meta.get("namespace", namespace) != namespace:
                raise BadRequest("the name or namespace of a patched object may not change")
            meta.setdefault("resourceVersion", current["metadata"]["resourceVersion"])
            try:
                # nothing awaited since the read: ``current`` is still the stored object
                return await self._update(resource, patched, current, subresource=subresource,
                                          dry_run=dry_run, user=user, field_manager=field_manager)
            except Conflict:
                if pinned or attempt == _PATCH_RETRIES - 1:
                    raise
        raise AssertionError("unreachable")

    async def apply(self, resource: str, name: str, applied: Any, *, namespace: str = "",
                    manager: str, force: bool = False, subresource: str = "",
                    dry_run: bool = False, user: str = "") -> tuple[Obj, bool]:
        """Server-side apply; returns the object and whether it was created."""
        rt = by_key(resource)
        namespace = _scope(rt, namespace)
        if not isinstance(applied, dict):
            raise BadRequest("the applied configuration must be an object")
        meta = applied.get("metadata") or {}
        if not isinstance(meta, dict):
            raise BadRequest("metadata must be an object")
        if meta.get("name", name) != name:
            raise BadRequest(f"the name of the object ({meta.get('name')}) does not match the name "
                             f"on the URL ({name})")
        for attempt in range(_PATCH_RETRIES):
            try:
                live = self.store.get(resource, namespace, name)
            except NotFound:
                live = None
            if live is None and subresource:
                raise NotFound(resource, name)
            merged = server_side_apply(live, applied, manager, force, rt.api_version, rt.kind,
                                       format_time(self.clock.now()), subresource=subresource)
            merged.setdefault("metadata", {})["name"] = name
            try:
                if live is None:
                    return await self.create(resource, merged, namespace=namespace or None,
                                             dry_run=dry_run, user=user), True
                merged["metadata"]["resourceVersion"] = live["metadata"]["resourceVersion"]
                return await self.update(resource, merged, subresource=subresource,
                                         dry_run=dry_run, user=user), False
            except ApplyConflict:
                raise   # another manager owns the fields: only force helps, not a retry
            except (Conflict, AlreadyExists):
                if attempt == _PATCH_RETRIES - 1:
                    raise
        raise AssertionError("unreachable")

    async def delete(self, resource: str, name: str, *, namespace: str = "",
                     grace_period_seconds: int | None = None,
                     preconditions: dict[str, Any] | None = None, dry_run: bool = False,
                     user: str = "", propagation_policy: str | None = None,
                     orphan_dependents: bool | None = None) -> Obj:
        """Delete (or mark for deletion) one object; see ``kvert.registry.deletion`` for the
        options. Returns the object as it is now (its last state when it is gone)."""
        main_strategy(by_key(resource)).check_delete(by_key(resource), name)
        return await self._delete(resource, name, namespace=namespace,
                                  grace_period_seconds=grace_period_seconds,
                                  preconditions=preconditions, dry_run=dry_run, user=user,
                                  propagation_policy=propagation_policy,
                                  orphan_dependents=orphan_dependents)

    async def _delete(self, resource: str, name: str, *, namespace: str,
                      grace_period_seconds: int | None, preconditions: dict[str, Any] | None,
                      dry_run: bool, user: str, propagation_policy: str | None,
                      orphan_dependents: bool | None) -> Obj:
        rt = by_key(resource)
        strategy = main_strategy(rt)
        namespace = _scope(rt, namespace)
        deletion.validate_options(propagation_policy, orphan_dependents)
        old = self.store.get(resource, namespace, name)
        attrs = Attributes(DELETE, resource, namespace, name, None, old, dry_run=dry_run, user=user)
        await self.admission.admit(attrs)
        await self.admission.validate(attrs)
        # a negative grace period means "as soon as possible": the store makes it 1s
        grace_period_seconds = strategy.grace_period_seconds(rt, old, grace_period_seconds)
        finalizers = deletion.gc_finalizers(old, propagation_policy, orphan_dependents,
                                            strategy.gc_policy(rt))
        mark = strategy.deletion_mark(rt)
        if dry_run:
            return old
        obj, _ = self.store.delete(resource, namespace, name,
                                   grace_period_seconds=grace_period_seconds,
                                   preconditions=preconditions, finalizers=finalizers, mark=mark)
        return obj

    async def delete_collection(self, resource: str, *, namespace: str = "", label_selector: str = "",
                                field_selector: str = "", grace_period_seconds: int | None = None,
                                dry_run: bool = False, user: str = "",
                                propagation_policy: str | None = None,
                                orphan_dependents: bool | None = None) -> _Objects:
        """``deletecollection``: delete every matching object, each through the delete path."""
        deletion.validate_options(propagation_policy, orphan_dependents)
        listing = self.list(resource, namespace=namespace or None, label_selector=label_selector,
                            field_selector=field_selector)
        deleted = []
        for obj in listing["items"]:
            try:
                deleted.append(await self._delete(resource, name_of(obj), namespace=namespace_of(obj),
                                                  grace_period_seconds=grace_period_seconds,
                                                  preconditions=None, dry_run=dry_run, user=user,
                                                  propagation_policy=propagation_policy,
                                                  orphan_dependents=orphan_dependents))
            except NotFound:
                continue   # gone meanwhile: that is what was asked
        return deleted

    # ---- scale -----------------------------------------------------------------

    def get_scale(self, resource: str, name: str, namespace: str) -> Obj:
        """The ``autoscaling/v1`` Scale of a workload (``deployments/scale``, ``statefulsets/scale``, ...)."""
        rt = by_key(resource)
        if "scale" not in rt.subresources:
            raise RouteNotFound()
        return _scale_of(self.store.get(resource, namespace, name))

    async def update_scale(self, resource: str, name: str, scale: Obj, *, namespace: str,
                           dry_run: bool = False, user: str = "") -> Obj:
        replicas = (scale.get("spec") or {}).get("replicas")
        if not isinstance(replicas, int) or isinstance(replicas, bool) or replicas < 0:
            raise Invalid("Scale", name, [invalid("spec.replicas", replicas,
                                                  "must be greater than or equal to 0")],
                          "autoscaling")
        self.get_scale(resource, name, namespace)
        obj = self.store.get(resource, namespace, name)
        rv = (scale.get("metadata") or {}).get("resourceVersion")
        if rv:
            obj["metadata"]["resourceVersion"] = rv
        obj["spec"]["replicas"] = replicas
        return _scale_of(await self.update(resource, obj, dry_run=dry_run, user=user))

    # ---- pod subresources ------------------------------------------------------

    async def bind(self, namespace: str, name: str, binding: Obj, *, dry_run: bool = False) -> Obj:
        """``pods/binding``: assign an unscheduled pod to a node (the scheduler's one write)."""
        target = binding.get("target") or {}
        node = target.get("name")
        if not node:
            raise Invalid("Binding", name, [required("target.name")])
        for _ in range(_PATCH_RETRIES):
            pod = self.store.get("pods", namespace, name)
            if pod["metadata"].get("deletionTimestamp"):
                raise BindingConflict(name, f"pod {name} is being deleted, cannot be assigned to a host")
            current = pod["spec"].get("nodeName")
            if current:
                raise BindingConflict(name, f"pod {name} is already assigned to node \"{current}\"")
            # As upstream's BindingREST: a pod not yet ready for scheduling cannot be bound.
            if pod["spec"].get("schedulingGates"):
                raise BindingConflict(name, f"pod {name} has non-empty .spec.schedulingGates")
            pod["spec"]["nodeName"] = node
            # As kube-apiserver: the binding's annotations land on the pod in the same write.
            extra = (binding.get("metadata") or {}).get("annotations") or {}
            if extra:
                pod["metadata"].setdefault("annotations", {}).update(extra)
            status = pod.setdefault("status", {})
            conditions = [c for c in status.get("conditions") or [] if c.get("type") != "PodScheduled"]
            conditions.append({"type": "PodScheduled", "status": "True", "lastProbeTime": None,
                               "lastTransitionTime": format_time(self.clock.now())})
            status["conditions"] = conditions
            if dry_run:
                return status_success(201)
            try:
                self.store.update("pods", pod)
                return status_success(201)
            except Conflict:
                continue
        raise Conflict("pods", name, "too many concurrent writes; try again")

    async def evict(self, namespace: str, name: str, eviction: Obj | None = None, *,
                    user: str = "") -> Obj:
        """``pods/eviction``: admitted as the create of that subresource (NodeRestriction
        holds a node to its own pods), then the pod deleted within its disruption budget."""
        eviction = eviction or {}
        attrs = Attributes(CREATE, "pods", namespace, name, deep_copy(eviction),
                           subresource="eviction", user=user)
        await self.admission.admit(attrs)
        await self.admission.validate(attrs)
        return await evict(self, namespace, name, eviction)

    # ---- service accounts ------------------------------------------------------

    async def create_token(self, namespace: str, name: str, request: Any, *, user: str = "",
                           warnings: _Strings | None = None) -> Obj:
        """``serviceaccounts/token``: a TokenRequest answered with a signed token (see
        :mod:`kvert.registry.tokenrequest`); ``warnings`` collects what the client should
        be told."""
        if self.token_requests is None:
            raise NotFound("serviceaccounts", name, "the server could not find the requested "
                                                    "resource")
        return await self.token_requests.create(self, namespace, name, request, user=user,
                                                warnings=warnings)

    # ---- helpers ---------------------------------------------------------------

    def _allocation(self, rt: ResourceType, obj: Obj, old: Obj | None,
                    subresource: str = "") -> AbstractContextManager[None]:
        """A Service's ClusterIP and NodePorts, held while the write is made (``old``: None
        on create, the stored object on update)."""
        if rt.group != "" or rt.kind != "Service" or subresource:
            return nullcontext()
        if old is None:
            return self.services.allocate_create(obj)
        return self.services.allocate_update(obj, old)

    def _must_not_exist(self, resource: str, rt: ResourceType, obj: Obj) -> None:
        try:
            self.store.get(resource, namespace_of(obj), name_of(obj))
        except NotFound:
            return
        raise AlreadyExists(resource, name_of(obj))


class BindingConflict(Conflict):
    """409 on ``pods/binding``: upstream names the subresource as the resource
    (``Operation cannot be fulfilled on pods/binding "web": ...``, details kind ``pods/binding``)."""

    def __init__(self, name: str, detail: str) -> None:
        ApiError.__init__(self, f'Operation cannot be fulfilled on pods/binding "{name}": {detail}',
                          409, "Conflict", {"name": name, "kind": "pods/binding"})


def _scale_of(obj: Obj) -> Obj:
    meta = obj["metadata"]
    selector = (obj.get("spec") or {}).get("selector")
    if selector and obj.get("kind") == "ReplicationController":
        # an RC's selector is a plain label map (labels.SelectorFromSet)
        selector = {"matchLabels": selector}
    return {
        "kind": "Scale", "apiVersion": "autoscaling/v1",
        "metadata": {k: meta[k] for k in ("name", "namespace", "uid", "resourceVersion",
                                          "creationTimestamp") if k in meta},
        "spec": {"replicas": (obj.get("spec") or {}).get("replicas", 0)},
        "status": {"replicas": (obj.get("status") or {}).get("replicas", 0),
                   "selector": str(LabelSelector.from_dict(selector)) if selector else ""},
    }


def _admitted(attrs: Attributes) -> Obj:
    """The object mutating admission made of a create's or an update's (never dropped)."""
    assert attrs.object is not None
    return attrs.object


def _scope(rt: ResourceType, namespace: str | None) -> str:
    return (namespace or "") if rt.namespaced else ""


def _check_kind(rt: ResourceType, obj: Obj) -> None:
    if not isinstance(obj, dict):
        raise BadRequest("the request body must be a JSON object")
    kind, api_version = obj.get("kind"), obj.get("apiVersion")
    if kind is None and api_version is None:
        obj["kind"], obj["apiVersion"] = rt.kind, rt.api_version
        return
    if kind != rt.kind or api_version != rt.api_version:
        raise BadRequest(f"the API version in the data ({api_version}) does not match the expected "
                         f"API version ({rt.api_version}) and kind ({rt.kind}) of {rt.key}")


def _metadata(obj: Obj) -> dict[str, Any]:
    """The object's metadata, made an empty object when unset; any other shape is refused
    before anything reads it."""
    meta = obj.get("metadata")
    if meta is None:
        meta = obj["metadata"] = {}
    if not isinstance(meta, dict):
        raise BadRequest("metadata must be an object")
    return meta


def _place(rt: ResourceType, meta: dict[str, Any], namespace: str | None) -> None:
    """Fill or check metadata.namespace against the namespace the request addressed."""
    if not rt.namespaced:
        if meta.get("namespace"):
            meta.pop("namespace")
        return
    given = meta.get("namespace")
    if namespace and given and given != namespace:
        raise BadRequest("the namespace of the provided object does not match the namespace sent on "
                         "the request")
    meta["namespace"] = given or namespace or "default"


def _own_copy(obj: Any, subresource: str) -> Any:
    """What an update may change of the caller's object, copied: all of it, or for
    ``/status`` its top level, metadata and status -- the rest of a status write is never
    read past its kind (the stored object supplies it), so a kubelet's status write does not
    copy the pod's spec."""
    if subresource != "status" or not isinstance(obj, dict):
        return deep_copy(obj)
    mine = dict(obj)
    for part in ("metadata", "status"):
        if part in mine:
            mine[part] = deep_copy(mine[part])
    return mine


def _defaulted(new: Obj, old: Obj) -> Obj:
    """``new`` and the stored ``old`` (both this request's own) defaulted in place, as
    kube-apiserver decodes both before validating; returns ``new``."""
    defaults.apply_defaults(new)
    defaults.apply_defaults(old)
    return new


def _raise_invalid(rt: ResourceType, obj: Obj, causes: list[Cause]) -> None:
    if causes:
        raise Invalid(rt.kind, name_of(obj), causes, rt.group)


__all__ = ["Registry", "ApiError"]
