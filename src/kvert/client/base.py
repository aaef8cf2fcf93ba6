"""The Client protocol: how every component reads and writes objects.

One protocol, two implementations: in-process (a Registry over a store, for
simulation and for components inside ``kvert up``) and HTTP (any Kubernetes API
server). Errors are the ApiError subclasses of ``kvert.api.errors`` either way, and a
watch yields ``WatchEvent``s and raises ``Expired`` when its version is gone.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any, Protocol

from kvert.api.types import Obj
from kvert.store.base import WatchEvent

# A patch body: an object (merge and strategic merge patches) or a JSON patch's operations.
Patch = Obj | list[Any]


class WatchStream(Protocol):
    def __aiter__(self) -> AsyncIterator[WatchEvent]: ...

    async def next(self, timeout: float | None = None) -> WatchEvent | None: ...

    def stop(self) -> None: ...


class Client(Protocol):
    async def get(self, resource: str, name: str, namespace: str = "") -> Obj: ...

    async def list(self, resource: str, *, namespace: str | None = None, label_selector: str = "",
                   field_selector: str = "", limit: int = 0, continue_token: str = "",
                   resource_version: str = "") -> Obj: ...

    async def create(self, resource: str, obj: Obj, *, namespace: str | None = None,
                     dry_run: bool = False) -> Obj: ...

    async def update(self, resource: str, obj: Obj, *, subresource: str = "",
                     dry_run: bool = False) -> Obj: ...

    async def patch(self, resource: str, name: str, patch: Patch, patch_type: str = "merge", *,
                    namespace: str = "", subresource: str = "", dry_run: bool = False) -> Obj: ...

    async def delete(self, resource: str, name: str, *, namespace: str = "",
                     grace_period_seconds: int | None = None, preconditions: Obj | None = None,
                     dry_run: bool = False, propagation_policy: str | None = None) -> Obj: ...

    async def watch(self, resource: str, *, namespace: str | None = None, label_selector: str = "",
                    field_selector: str = "", resource_version: str = "",
                    send_initial_events: bool = False,
                    allow_bookmarks: bool = False) -> WatchStream: ...

    # Subresources with their own verbs.
    async def update_status(self, resource: str, obj: Obj) -> Obj: ...

    async def bind(self, namespace: str, pod_name: str, node_name: str,
                   annotations: dict[str, str] | None = None) -> Obj: ...

    async def evict(self, namespace: str, pod_name: str, *,
                    grace_period_seconds: int | None = None) -> Obj: ...

    async def resize(self, namespace: str, pod_name: str, patch: Patch,
                     patch_type: str = "strategic") -> Obj:
        """Patch ``pods/resize`` (a strategic merge patch by default, as kubectl sends:
        containers merge by name and resources by key, so a patch may name only what changes)."""

    async def get_scale(self, resource: str, name: str, namespace: str = "") -> Obj:
        """The ``autoscaling/v1`` Scale of a workload (``deployments/NAME/scale``)."""

    async def update_scale(self, resource: str, scale: Obj) -> Obj:
        """PUT a Scale (its ``metadata.name``/``namespace`` name the workload)."""

    async def create_subresource(self, resource: str, name: str, subresource: str, body: Obj, *,
                                 namespace: str = "") -> Obj:
        """POST ``body`` to a subresource that answers with something new: a TokenRequest
        to ``serviceaccounts/NAME/token`` answers with the token (binding and eviction
        answer a Status)."""


def binding_body(namespace: str, pod_name: str, node_name: str,
                 annotations: dict[str, str] | None = None) -> Obj:
    """The ``v1 Binding`` a scheduler posts to ``pods/binding``; its annotations land on the
    pod in the same write (kube-apiserver's ``assignPod``)."""
    meta: dict[str, Any] = {"name": pod_name, "namespace": namespace}
    if annotations:
        meta["annotations"] = dict(annotations)
    return {"apiVersion": "v1", "kind": "Binding", "metadata": meta,
            "target": {"apiVersion": "v1", "kind": "Node", "name": node_name}}


def eviction_body(namespace: str, pod_name: str, grace_period_seconds: int | None = None) -> Obj:
    """The ``policy/v1 Eviction`` posted to ``pods/eviction``."""
    eviction: dict[str, Any] = {"apiVersion": "policy/v1", "kind": "Eviction",
                                "metadata": {"name": pod_name, "namespace": namespace}}
    if grace_period_seconds is not None:
        eviction["deleteOptions"] = {"gracePeriodSeconds": grace_period_seconds}
    return eviction
