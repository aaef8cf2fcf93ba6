"""Custom resources: serving CustomResourceDefinitions, and the VPA's own CRDs.

What apiextensions-apiserver's controllers do, in one controller running inside the API
server (:class:`CRDController`):

* **naming** (``NamingConditionController``): a CRD's names are accepted unless another
  resource of the same group already uses them; the ``NamesAccepted`` condition says so
  (``NoConflicts``, or ``PluralConflict``/``SingularConflict``/``ShortNamesConflict``/
  ``KindConflict``/``ListKindConflict`` with ``"x" is already in use``), and
  ``status.acceptedNames`` carries the names in force;
* **establishing**: once its names are accepted the CRD's served versions are registered in
  :mod:`kvert.api.kinds` (with their schema and printer columns; the CRD's types replace a
  built-in type of the same resource, as for the VPA kinds) and ``Established`` becomes
  ``True`` (``InitialNamesAccepted``). ``status.storedVersions`` records the storage version;
* **finalizing** (``CRDFinalizer``): an established CRD carries the
  ``customresourcecleanup.apiextensions.k8s.io`` finalizer (Kubernetes adds it when the
  deletion is requested; kvert's registry cannot, so kvert adds it on establishing). When the
  CRD is deleted, ``Terminating`` reports progress while every stored object of the resource
  is deleted; then the finalizer is removed, the store removes the CRD, and the resource is
  no longer served.

:func:`vpa_crds` returns the VerticalPodAutoscaler and VerticalPodAutoscalerCheckpoint CRDs as
the VPA's ``deploy/vpa-v1-crd-gen.yaml`` installs them (v1 served and stored, v1beta2 kept but
not served), with today's v1 fields and printer columns.
"""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import Iterable
from typing import Any

from kvert.api import conditions, kinds
from kvert.api.errors import AlreadyExists, ApiError, Conflict, Invalid, NotFound
from kvert.api.kinds import ResourceType
from kvert.api.meta import deep_copy, format_time
from kvert.api.validation.crd import condition_true, defaulted_crd, storage_version
from kvert.apiserver.tables import VPA_PRINTER_COLUMNS
from kvert.client.base import Client
from kvert.client.informer import Informer
from kvert.clock import Clock

log = logging.getLogger(__name__)

CRD_RESOURCE = "apiextensions.k8s.io/customresourcedefinitions"
CLEANUP_FINALIZER = "customresourcecleanup.apiextensions.k8s.io"
NAMES_ACCEPTED = "NamesAccepted"
ESTABLISHED = "Established"
TERMINATING = "Terminating"
_RETRY_SECONDS = 1.0


# ---- types and status -------------------------------------------------------------------------

def _crd_names(crd: dict) -> dict:
    names = (crd.get("spec") or {}).get("names")
    return names if isinstance(names, dict) else {}


def resource_types_for(crd: dict, names: dict | None = None) -> list[ResourceType]:
    """The types a CRD serves: one per served version, the storage version last (so
    ``kinds.by_key`` returns it once all are registered). ``names`` overrides
    ``spec.names`` (the controller passes ``status.acceptedNames``)."""
    crd = defaulted_crd(crd)
    spec = crd.get("spec") or {}
    names = names or _crd_names(crd)
    group = spec.get("group") or ""
    plural = names.get("plural") or _crd_names(crd).get("plural") or ""
    kind = names.get("kind") or _crd_names(crd).get("kind") or ""
    namespaced = spec.get("scope") == "Namespaced"
    versions = [v for v in spec.get("versions") or [] if isinstance(v, dict) and v.get("served")]
    versions.sort(key=lambda v: v.get("storage") is True)  # stable: storage version last
    out = []
    for v in versions:
        sub = v["subresources"] if isinstance(v.get("subresources"), dict) else {}
        subresources = frozenset(name for name in ("status", "scale")
                                 if isinstance(sub.get(name), dict))
        schema = (v.get("schema") or {}).get("openAPIV3Schema")
        out.append(ResourceType(
            group=group, version=v.get("name") or "", kind=kind, plural=plural,
            namespaced=namespaced, subresources=subresources,
            short_names=tuple(names.get("shortNames") or ()),
            categories=tuple(names.get("categories") or ()),
            schema=deep_copy(schema) if isinstance(schema, dict) else None,
            printer_columns=tuple(deep_copy(c) for c in v.get("additionalPrinterColumns") or ()
                                  if isinstance(c, dict)),
        ))
    return out


def _condition(ctype: str, status: str, reason: str, message: str) -> dict[str, Any]:
    return {"type": ctype, "status": status, "reason": reason, "message": message}


def find_condition(crd_or_status: dict[str, Any], ctype: str) -> dict[str, Any] | None:
    """The condition of type ``ctype`` of a CRD, or of its status."""
    status = crd_or_status.get("status", crd_or_status) if isinstance(crd_or_status, dict) else {}
    return conditions.find_condition(status if isinstance(status, dict) else None, ctype)


# SetCRDCondition replaces the condition whenever it is given one (so a new reason or
# message lands even with the status kept): nothing a newly made condition matches skips it.
_REPLACE_UNLESS_IDENTICAL = ("status", "reason", "message", "lastTransitionTime")


def set_condition(status: dict[str, Any], condition: dict[str, Any], now: float | None) -> None:
    """``SetCRDCondition``: replace the condition of the same type; ``lastTransitionTime``
    moves only when the status changes (or was never set)."""
    conditions.set_condition(status, condition, now=format_time(now) if now is not None else None,
                             same=_REPLACE_UNLESS_IDENTICAL)
    # in the field order kube-apiserver writes a CRD condition
    found = status["conditions"]
    for i, c in enumerate(found):
        if isinstance(c, dict) and c.get("type") == condition["type"]:
            found[i] = _ordered_condition(c)


def _ordered_condition(c: dict[str, Any]) -> dict[str, Any]:
    order = ("type", "status", "lastTransitionTime", "reason", "message")
    return {k: c[k] for k in order if k in c} | {k: v for k, v in c.items() if k not in order}


def _used_names(crd: dict, existing: Iterable[Any]) -> tuple[set[str], set[str]]:
    """Resource names and kinds other resources of the CRD's group already use."""
    spec = crd.get("spec") or {}
    group = spec.get("group") or ""
    own_key = f"{group}/{_crd_names(crd).get('plural') or ''}"
    own_name = (crd.get("metadata") or {}).get("name")
    resources: set[str] = set()
    kinds_: set[str] = set()
    for other in existing:
        if isinstance(other, ResourceType):
            if other.group != group or other.key == own_key or not group:
                continue
            resources.update((other.plural, other.singular, *other.short_names))
            kinds_.update((other.kind, other.kind + "List"))
        elif isinstance(other, dict):
            if (other.get("metadata") or {}).get("name") == own_name \
                    or (other.get("spec") or {}).get("group") != group:
                continue
            names = (other.get("status") or {}).get("acceptedNames") or {}
            resources.update(n for n in (names.get("plural"), names.get("singular")) if n)
            resources.update(names.get("shortNames") or ())
            kinds_.update(n for n in (names.get("kind"), names.get("listKind")) if n)
    return resources, kinds_


def accepted_status(crd: dict, existing_types: Iterable[Any], *, now: float | None = None) -> dict:
    """The status the naming and establishing controllers give ``crd``.

    ``existing_types`` are what else is served: :class:`ResourceType` s (built-in types and
    other CRDs' types; those of the CRD's own resource are its own) and/or other CRD
    objects (their ``status.acceptedNames`` count). Returns the whole new status: conditions
    ``NamesAccepted`` and ``Established`` (other conditions kept), ``acceptedNames``,
    ``storedVersions``. ``now`` stamps ``lastTransitionTime`` of conditions that change.
    """
    crd = defaulted_crd(crd)
    requested = _crd_names(crd)
    status = deep_copy(crd["status"]) if isinstance(crd.get("status"), dict) else {}
    accepted = status["acceptedNames"] if isinstance(status.get("acceptedNames"), dict) else {}
    used_resources, used_kinds = _used_names(crd, existing_types)
    new_names = dict(accepted)
    problem: tuple[str, str] | None = None

    def check(field: str, used: set[str], reason: str) -> None:
        nonlocal problem
        want, have = requested.get(field), accepted.get(field)
        if want == have or want not in used:
            if want is not None:
                new_names[field] = want
        else:
            problem = (reason, f'"{want}" is already in use')

    check("plural", used_resources, "PluralConflict")
    check("singular", used_resources, "SingularConflict")
    want_short = list(requested.get("shortNames") or [])
    have_short = list(accepted.get("shortNames") or [])
    if want_short != have_short:
        clashes = [f'"{s}" is already in use' for s in want_short
                   if s not in have_short and s not in (accepted.get("plural"), accepted.get("singular"))
                   and s in used_resources]
        if clashes:
            problem = ("ShortNamesConflict",
                       clashes[0] if len(clashes) == 1 else "[" + ", ".join(clashes) + "]")
        elif want_short:
            new_names["shortNames"] = want_short
        else:
            new_names.pop("shortNames", None)
    check("kind", used_kinds, "KindConflict")
    check("listKind", used_kinds, "ListKindConflict")
    if requested.get("categories"):
        new_names["categories"] = list(requested["categories"])
    else:
        new_names.pop("categories", None)

    if problem is None:
        names_cond = _condition(NAMES_ACCEPTED, "True", "NoConflicts", "no conflicts found")
    else:
        names_cond = _condition(NAMES_ACCEPTED, "False", problem[0], problem[1])
    old_established = find_condition(status, ESTABLISHED)
    established: dict[str, Any]
    if old_established is not None and old_established.get("status") == "True":
        established = {k: old_established[k] for k in ("type", "status", "reason", "message")
                       if k in old_established}
    elif problem is None:
        established = _condition(ESTABLISHED, "True", "InitialNamesAccepted",
                                 "the initial names have been accepted")
    elif old_established is not None:
        established = {k: old_established[k] for k in ("type", "status", "reason", "message")
                       if k in old_established}
    else:
        established = _condition(ESTABLISHED, "False", "NotAccepted", "not all names are accepted")
    set_condition(status, names_cond, now)
    set_condition(status, established, now)

    stored = [v for v in status.get("storedVersions") or [] if isinstance(v, str)]
    current = storage_version(crd)
    if current and current not in stored:
        stored.append(current)
    ordered = {"conditions": status.pop("conditions"), "acceptedNames": new_names,
               "storedVersions": stored}
    status.pop("acceptedNames", None)
    status.pop("storedVersions", None)
    ordered.update(status)
    return ordered


# ---- the controller ---------------------------------------------------------------------------

class CRDController:
    """Serves the CRDs stored in the API server (names, establishing, cleanup on delete)."""

    def __init__(self, client: Client, clock: Clock, *, deletion_poll_seconds: float = 5.0,
                 deletion_timeout_seconds: float = 60.0):
        self.client = client
        self.clock = clock
        self.deletion_poll_seconds = deletion_poll_seconds
        self.deletion_timeout_seconds = deletion_timeout_seconds
        self.informer = Informer(client, CRD_RESOURCE, clock=clock)
        self.informer.add_handlers(on_add=self._on_event,
                                   on_update=lambda old, new: self._on_event(new),
                                   on_delete=self._on_event)
        self._queue: asyncio.Queue[str] = asyncio.Queue()
        self._queued: set[str] = set()
        self._served: dict[str, str] = {}          # CRD name -> resource key registered
        self._established: set[str] = set()
        self._waiters: dict[str, asyncio.Event] = {}
        self._finalizing: dict[str, asyncio.Task] = {}
        self._tasks: set[asyncio.Task] = set()
        self._no_finalizer: set[str] = set()        # CRDs whose finalizer the server refused
        self._task: asyncio.Task | None = None

    # ---- public ---------------------------------------------------------------------------

    async def run(self) -> None:
        """Follow the CRDs until stopped."""
        self._task = asyncio.current_task()
        informer_task = asyncio.ensure_future(self.informer.run())
        try:
            await self.informer.wait_synced()
            while True:
                name = await self._queue.get()
                self._queued.discard(name)
                try:
                    await self._sync(name)
                except asyncio.CancelledError:
                    raise
                except Exception:  # a bad CRD must not stop the others
                    log.exception("customresourcedefinition %s: sync failed; retrying", name)
                    self._retry_later(name, _RETRY_SECONDS)
        finally:
            self.informer.stop()
            informer_task.cancel()
            for task in [*self._tasks, *self._finalizing.values()]:
                task.cancel()

    def stop(self) -> None:
        if self._task is not None and self._task is not asyncio.current_task():
            self._task.cancel()

    async def install(self, crds: list[dict]) -> None:
        """Create each CRD, or update it where the stored one differs (spec, labels,
        annotations). Does not wait for them to be established (see :meth:`wait_established`)."""
        for crd in crds:
            name = crd["metadata"]["name"]
            for _ in range(8):
                try:
                    await self.client.create(CRD_RESOURCE, deep_copy(crd))
                    break
                except AlreadyExists:
                    pass
                current = await self.client.get(CRD_RESOURCE, name)
                desired = deep_copy(current)
                desired["spec"] = deep_copy(crd["spec"])
                meta = desired.setdefault("metadata", {})
                for field in ("labels", "annotations"):
                    wanted = (crd.get("metadata") or {}).get(field) or {}
                    if wanted:
                        meta[field] = {**(meta.get(field) or {}), **wanted}
                if defaulted_crd(desired) == defaulted_crd(current):
                    break
                try:
                    await self.client.update(CRD_RESOURCE, desired)
                    break
                except Conflict:
                    continue

    def established(self, name: str) -> bool:
        """Whether the CRD ``name`` is Established and its resource served."""
        return name in self._established

    async def wait_established(self, name: str) -> None:
        """Return once the CRD ``name`` is established (needs :meth:`run` running)."""
        if name in self._established:
            return
        await self._waiters.setdefault(name, asyncio.Event()).wait()

    # ---- events ---------------------------------------------------------------------------

    def _on_event(self, obj: dict) -> None:
        name = (obj.get("metadata") or {}).get("name")
        if name:
            self._enqueue(name)

    def _enqueue(self, name: str) -> None:
        if name not in self._queued:
            self._queued.add(name)
            self._queue.put_nowait(name)

    def _retry_later(self, name: str, delay: float) -> None:
        async def later() -> None:
            await self.clock.sleep(delay)
            self._enqueue(name)
        task = asyncio.ensure_future(later())
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    # ---- sync -----------------------------------------------------------------------------

    async def _sync(self, name: str) -> None:
        crd = self.informer.get(name)
        if crd is None:
            await self._forget(name)
            return
        if (crd.get("metadata") or {}).get("deletionTimestamp"):
            # Still served while its objects are deleted (also after a restart).
            if condition_true(crd, ESTABLISHED) and name not in self._served:
                self._serve(name, crd, (crd.get("status") or {}).get("acceptedNames") or {})
            if name not in self._finalizing:
                task = asyncio.ensure_future(self._finalize(name))
                self._finalizing[name] = task
                task.add_done_callback(functools.partial(self._finalized, name))
            return
        existing: list[Any] = list(kinds.all_types())
        existing.extend(c for c in self.informer.list()
                        if (c.get("metadata") or {}).get("name") != name)
        status = accepted_status(crd, existing, now=self.clock.now())
        established = find_condition(status, ESTABLISHED) or {}
        if established.get("status") == "True":
            self._serve(name, crd, status.get("acceptedNames") or {})
        if status != crd.get("status"):
            try:
                crd = await self.client.update_status(CRD_RESOURCE, {**crd, "status": status})
            except (Conflict, NotFound):
                return  # changed or gone meanwhile: its event brings us back
        if established.get("status") != "True":
            return
        self._established.add(name)
        waiter = self._waiters.pop(name, None)
        if waiter is not None:
            waiter.set()
        finalizers = list((crd.get("metadata") or {}).get("finalizers") or [])
        if CLEANUP_FINALIZER not in finalizers and name not in self._no_finalizer:
            updated = deep_copy(crd)
            updated["metadata"]["finalizers"] = finalizers + [CLEANUP_FINALIZER]
            try:
                await self.client.update(CRD_RESOURCE, updated)
            except Conflict:
                self._enqueue(name)
            except NotFound:
                pass
            except Invalid as e:
                # The server's validation refuses the finalizer: the objects are then
                # deleted after the CRD is gone instead (see _forget).
                log.warning("customresourcedefinition %s: cannot add finalizer %s: %s", name,
                            CLEANUP_FINALIZER, e)
                self._no_finalizer.add(name)

    def _serve(self, name: str, crd: dict, accepted_names: dict) -> None:
        types = resource_types_for(crd, accepted_names)
        spec = crd.get("spec") or {}
        key = f"{spec.get('group')}/{accepted_names.get('plural') or _crd_names(crd).get('plural')}"
        previous = self._served.get(name)
        if previous and previous != key:
            kinds.unregister(previous)
        kinds.unregister(key)
        for rt in types:
            kinds.register(rt)
        self._served[name] = key

    async def _forget(self, name: str) -> None:
        """The CRD is gone: stop serving its resource; its names are free for others.

        Objects left behind (the CRD was removed without our finalizer having run) are
        deleted first, best effort, while the resource is still known."""
        key = self._served.pop(name, None)
        self._no_finalizer.discard(name)
        if key is not None:
            try:
                for obj in await self._list_all(key):
                    meta = obj.get("metadata") or {}
                    try:
                        await self.client.delete(key, meta.get("name", ""),
                                                 namespace=meta.get("namespace", ""))
                    except NotFound:
                        pass
            except ApiError as e:
                log.warning("%s: could not delete the objects of a deleted CRD: %s", key, e)
            kinds.unregister(key)
        self._established.discard(name)
        group = name.split(".", 1)[1] if "." in name else ""
        for other in self.informer.list():
            if (other.get("spec") or {}).get("group") == group:
                self._enqueue(other["metadata"]["name"])

    # ---- deletion -------------------------------------------------------------------------

    def _finalized(self, name: str, _task: asyncio.Task[None]) -> None:
        self._finalizing.pop(name, None)

    async def _finalize(self, name: str) -> None:
        """``CRDFinalizer``: delete every object of the resource, then drop our finalizer."""
        crd = self.informer.get(name)
        if crd is None or CLEANUP_FINALIZER not in ((crd.get("metadata") or {}).get("finalizers")
                                                   or []):
            return
        crd = await self._set_condition(name, _condition(
            TERMINATING, "True", "InstanceDeletionInProgress",
            "CustomResource deletion is in progress"))
        if crd is None:
            return
        key = self._served.get(name)
        if condition_true(crd, ESTABLISHED) and key is not None:
            condition = await self._delete_instances(key)
        else:
            condition = _condition(TERMINATING, "False", "NeverEstablished",
                                   "resource was never established")
        crd = await self._set_condition(name, condition)
        if crd is None:
            return
        if condition["status"] == "True":  # deletion failed or not confirmed: try again later
            self._retry_later(name, self.deletion_poll_seconds)
            return
        for _ in range(8):
            finalizers = [f for f in (crd["metadata"].get("finalizers") or [])
                          if f != CLEANUP_FINALIZER]
            updated = deep_copy(crd)
            updated["metadata"]["finalizers"] = finalizers
            try:
                await self.client.update(CRD_RESOURCE, updated)
                return
            except NotFound:
                return
            except Conflict:
                crd = await self._get(name)
                if crd is None:
                    return

    async def _get(self, name: str) -> dict | None:
        try:
            return await self.client.get(CRD_RESOURCE, name)
        except NotFound:
            return None

    async def _set_condition(self, name: str, condition: dict) -> dict | None:
        """Write one condition through /status (retrying on conflict); the CRD after, or None."""
        for _ in range(8):
            crd = await self._get(name)
            if crd is None:
                return None
            status = deep_copy(crd.get("status") or {})
            set_condition(status, condition, self.clock.now())
            if status == crd.get("status"):
                return crd
            try:
                return await self.client.update_status(CRD_RESOURCE, {**crd, "status": status})
            except NotFound:
                return None
            except Conflict:
                continue
        return await self._get(name)

    async def _list_all(self, key: str) -> list[dict]:
        items: list[dict] = []
        token = ""
        while True:
            page = await self.client.list(key, limit=500, continue_token=token)
            items.extend(page.get("items") or [])
            token = (page.get("metadata") or {}).get("continue", "")
            if not token:
                return items

    async def _delete_instances(self, key: str) -> dict:
        try:
            items = await self._list_all(key)
        except ApiError as e:
            return _condition(TERMINATING, "True", "InstanceDeletionFailed",
                              f"could not list instances: {e}")
        failures: list[str] = []
        for obj in items:
            meta = obj.get("metadata") or {}
            try:
                await self.client.delete(key, meta.get("name", ""),
                                         namespace=meta.get("namespace", ""))
            except NotFound:
                continue
            except ApiError as e:
                failures.append(str(e))
        if failures:
            text = failures[0] if len(failures) == 1 else "[" + ", ".join(failures) + "]"
            return _condition(TERMINATING, "True", "InstanceDeletionFailed",
                              f"could not issue all deletes: {text}")
        deadline = self.clock.now() + self.deletion_timeout_seconds
        while True:
            try:
                remaining = await self._list_all(key)
            except ApiError as e:
                return _condition(TERMINATING, "True", "InstanceDeletionCheck",
                                  f"could not confirm zero CustomResources remaining: {e}")
            if not remaining:
                return _condition(TERMINATING, "False", "InstanceDeletionCompleted",
                                  "removed all instances")
            if self.clock.now() >= deadline:
                return _condition(TERMINATING, "True", "InstanceDeletionCheck",
                                  "could not confirm zero CustomResources remaining: timed out "
                                  "waiting for the condition")
            await self.clock.sleep(self.deletion_poll_seconds)


# ---- the VPA's CRDs ---------------------------------------------------------------------------

_QUANTITY_PATTERN = (r"^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|"
                     r"([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$")


def _s(description: str = "", **extra: Any) -> dict:
    out: dict[str, Any] = {"type": "string", **extra}
    if description:
        out["description"] = description
    return out


def _int(fmt: str = "", description: str = "", **extra: Any) -> dict:
    out: dict[str, Any] = {"type": "integer", **extra}
    if fmt:
        out["format"] = fmt
    if description:
        out["description"] = description
    return out


def _obj(properties: dict | None = None, required: list[str] | None = None,
         description: str = "", **extra: Any) -> dict:
    out: dict[str, Any] = {"type": "object"}
    if properties is not None:
        out["properties"] = properties
    if required:
        out["required"] = required
    if description:
        out["description"] = description
    out.update(extra)
    return out


def _arr(items: dict, description: str = "") -> dict:
    out: dict[str, Any] = {"type": "array", "items": items}
    if description:
        out["description"] = description
    return out


def _quantity(description: str = "") -> dict:
    out: dict[str, Any] = {"anyOf": [{"type": "integer"}, {"type": "string"}],
                           "pattern": _QUANTITY_PATTERN, "x-kubernetes-int-or-string": True}
    if description:
        out["description"] = description
    return out


def _resource_list(description: str) -> dict:
    return _obj(additionalProperties=_quantity(), description=description)


def _root(spec: dict, status: dict, description: str, required: list[str] | None = None) -> dict:
    return _obj({
        "apiVersion": _s("The versioned schema of this representation of an object."),
        "kind": _s("The REST resource this object represents."),
        "metadata": {"type": "object"},
        "spec": spec,
        "status": status,
    }, required, description)


def _target_ref() -> dict:
    return _obj({
        "apiVersion": _s("API version of the referent."),
        "kind": _s("Kind of the referent."),
        "name": _s("Name of the referent."),
    }, ["kind", "name"], "The controller (e.g. a Deployment) managing the pods to autoscale.",
        **{"x-kubernetes-map-type": "atomic"})


def _startup_boost() -> dict:
    cpu = _obj({
        "durationSeconds": _int("int32", "How long the pod stays boosted after becoming Ready."),
        "factor": _int("int32", "Factor applied to the request (type Factor)."),
        "quantity": _quantity("Absolute request and limit while boosted (type Quantity)."),
        "type": _s("Kind of boost: Factor or Quantity.", enum=["Factor", "Quantity"]),
    }, ["type"], "CPU startup boost.", **{"x-kubernetes-validations": [
        {"message": "factor is required when type is Factor and forbidden otherwise",
         "rule": "(self.type == 'Factor') == has(self.factor)"},
        {"message": "quantity is required when type is Quantity and forbidden otherwise",
         "rule": "(self.type == 'Quantity') == has(self.quantity)"},
    ]})
    return _obj({"cpu": cpu}, description="Startup boost policy.")


def _conditions(observed_generation: bool) -> dict:
    props = {
        "lastTransitionTime": _s("When the condition last changed status.", format="date-time"),
        "message": _s("Human-readable details about the transition."),
        "reason": _s("Why the condition last changed."),
        "status": _s("True, False or Unknown."),
        "type": _s("Type of the condition."),
    }
    if observed_generation:
        props["observedGeneration"] = _int("int64", "metadata.generation the condition is based on.",
                                           minimum=0)
    props = dict(sorted(props.items()))
    return _arr(_obj(props, ["status", "type"]), "Conditions of the autoscaler.")


def _recommendation() -> dict:
    return _obj({"containerRecommendations": _arr(_obj({
        "containerName": _s("Name of the container."),
        "lowerBound": _resource_list("Minimum recommended resources."),
        "target": _resource_list("Recommended resources."),
        "uncappedTarget": _resource_list("Recommendation before the resource policy is applied."),
        "upperBound": _resource_list("Maximum recommended resources."),
    }, ["target"]), "Recommendations per container.")},
        description="The most recent recommendation for the controlled pods.")


def _vpa_v1_schema() -> dict:
    container_policy = _obj({
        "containerName": _s("Container name, or * for the default policy."),
        "controlledResources": _arr(_s(), "Resources to recommend for (default cpu, memory)."),
        "controlledValues": _s("Which values to control (default RequestsAndLimits).",
                               enum=["RequestsAndLimits", "RequestsOnly"]),
        "maxAllowed": _resource_list("Maximum resources that will be recommended."),
        "memoryAggregationIntervalCount": _int("int64", "Memory aggregation intervals in the "
                                                        "window.", minimum=1),
        "memoryAggregationIntervalSeconds": _int("int32", "Length of one memory aggregation "
                                                          "interval.", minimum=1),
        "minAllowed": _resource_list("Minimum resources that will be recommended."),
        "mode": _s("Whether autoscaling is enabled for the container (default Auto).",
                   enum=["Auto", "Off"]),
        "oomBumpUpRatio": _quantity("Ratio to increase memory by after an OOM."),
        "oomMinBumpUp": _quantity("Minimum memory increase after an OOM."),
        "startupBoost": _startup_boost(),
        "targetCPUPercentile": _quantity("CPU usage percentile used as the target, in (0, 1]."),
        "targetMemoryPercentile": _quantity("Memory usage percentile used as the target, in (0, 1]."),
    }, description="How the autoscaler computes recommendations for a container.")
    spec = _obj({
        "recommenders": _arr(_obj({"name": _s("Name of the recommender.")}, ["name"]),
                             "The recommender responsible (empty or exactly one)."),
        "resourcePolicy": _obj({"containerPolicies": _arr(container_policy,
                                                          "Per-container resource policies.")},
                               description="Constraints on the recommendations."),
        "startupBoost": _startup_boost(),
        "targetRef": _target_ref(),
        "updatePolicy": _obj({
            "evictAfterOOMSeconds": _int("int32", "Seconds after an OOM before the pod may be "
                                                  "evicted.", minimum=1),
            "evictionRequirements": _arr(_obj({
                "changeRequirement": _s("Required relation of target to requests.",
                                        enum=["TargetHigherThanRequests", "TargetLowerThanRequests"]),
                "resources": _arr(_s(), "Resources the requirement applies to."),
            }, ["changeRequirement", "resources"]), "All must hold for a pod to be evicted."),
            "minReplicas": _int("int32", "Replicas that must be alive for the updater to evict."),
            "updateMode": _s("When recommendations are applied (default Recreate).",
                             enum=["Off", "Initial", "Recreate", "InPlaceOrRecreate", "InPlace",
                                   "Auto"]),
        }, description="How changes are applied to the pods."),
    }, ["targetRef"], "The desired behaviour of the autoscaler.")
    status = _obj({
        "conditions": _conditions(observed_generation=True),
        "observedGeneration": _int("int64", "The most recent generation observed.", minimum=0),
        "recommendation": _recommendation(),
    }, description="The current state of the autoscaler.")
    return _root(spec, status, "VerticalPodAutoscaler: automatic management of the resources "
                               "of a set of pods.", ["spec"])


def _vpa_v1beta2_schema() -> dict:
    spec = _obj({
        "resourcePolicy": _obj({"containerPolicies": _arr(_obj({
            "containerName": _s("Container name, or * for the default policy."),
            "maxAllowed": _resource_list("Maximum resources that will be recommended."),
            "minAllowed": _resource_list("Minimum resources that will be recommended."),
            "mode": _s("Whether autoscaling is enabled for the container.", enum=["Auto", "Off"]),
        }), "Per-container resource policies.")}),
        "targetRef": _target_ref(),
        "updatePolicy": _obj({"updateMode": _s("When recommendations are applied (default Auto).",
                                               enum=["Off", "Initial", "Recreate", "Auto"])}),
    }, ["targetRef"])
    status = _obj({"conditions": _conditions(observed_generation=False),
                   "recommendation": _recommendation()})
    return _root(spec, status, "VerticalPodAutoscaler (deprecated v1beta2).", ["spec"])


# a schema extension whose name is no Python keyword argument
_PRESERVE_UNKNOWN_FIELDS: dict[str, Any] = {"x-kubernetes-preserve-unknown-fields": True}


def _checkpoint_schema() -> dict:
    def histogram(what: str) -> dict:
        return _obj({
            "bucketWeights": _obj(description="Bucket index to bucket weight.",
                                  **_PRESERVE_UNKNOWN_FIELDS),
            "referenceTimestamp": _s("Reference time of the samples.", format="date-time",
                                     nullable=True),
            "totalWeight": {"type": "number", "description": "Sum of the sample weights."},
        }, description=f"Checkpoint of the {what} usage histogram.")
    spec = _obj({
        "containerName": _s("Name of the checkpointed container."),
        "vpaObjectName": _s("Name of the VerticalPodAutoscaler the checkpoint belongs to."),
    }, description="What the checkpoint is of.")
    status = _obj({
        "cpuHistogram": histogram("CPU"),
        "firstSampleStart": _s("Time of the first sample.", format="date-time", nullable=True),
        "lastSampleStart": _s("Time of the last sample.", format="date-time", nullable=True),
        "lastUpdateTime": _s("When the checkpoint was last written.", format="date-time",
                             nullable=True),
        "memoryHistogram": histogram("memory"),
        "totalSamplesCount": _int(description="Number of samples in the histograms."),
        "version": _s("Format version of the stored data."),
    }, description="The checkpointed recommender state.")
    return _root(spec, status, "VerticalPodAutoscalerCheckpoint: the recommender's state for one "
                               "container, to recover after a restart.")


_VPA_ANNOTATIONS = {
    "api-approved.kubernetes.io": "https://github.com/kubernetes/kubernetes/pull/63797",
    "controller-gen.kubebuilder.io/version": "v0.21.0",
}


def _crd(plural: str, kind: str, short: str, versions: list[dict]) -> dict:
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{plural}.autoscaling.k8s.io", "annotations": dict(_VPA_ANNOTATIONS)},
        "spec": {
            "group": "autoscaling.k8s.io",
            "names": {"kind": kind, "listKind": f"{kind}List", "plural": plural,
                      "shortNames": [short], "singular": kind.lower()},
            "scope": "Namespaced",
            "versions": versions,
        },
    }


def vpa_crds() -> list[dict]:
    """The VerticalPodAutoscalerCheckpoint and VerticalPodAutoscaler CRDs (fresh copies)."""
    checkpoint = _crd("verticalpodautoscalercheckpoints", "VerticalPodAutoscalerCheckpoint",
                      "vpacheckpoint", [
                          {"name": "v1", "schema": {"openAPIV3Schema": _checkpoint_schema()},
                           "served": True, "storage": True},
                          {"name": "v1beta2", "schema": {"openAPIV3Schema": _checkpoint_schema()},
                           "served": False, "storage": False},
                      ])
    vpa = _crd("verticalpodautoscalers", "VerticalPodAutoscaler", "vpa", [
        {"additionalPrinterColumns": [dict(c) for c in VPA_PRINTER_COLUMNS], "name": "v1",
         "schema": {"openAPIV3Schema": _vpa_v1_schema()}, "served": True, "storage": True,
         "subresources": {"status": {}}},
        {"deprecated": True, "deprecationWarning": "autoscaling.k8s.io/v1beta2 API is deprecated",
         "name": "v1beta2", "schema": {"openAPIV3Schema": _vpa_v1beta2_schema()},
         "served": False, "storage": False, "subresources": {"status": {}}},
    ])
    return [checkpoint, vpa]


__all__ = ["CRDController", "resource_types_for", "accepted_status", "vpa_crds", "find_condition",
           "set_condition", "CRD_RESOURCE", "CLEANUP_FINALIZER", "VPA_PRINTER_COLUMNS"]
