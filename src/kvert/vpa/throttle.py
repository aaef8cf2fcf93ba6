"""Client-side throttling as client-go's ``--kube-api-qps`` / ``--kube-api-burst`` (the VPA
components' flags; upstream's defaults 50 and 100): every request waits for a token of a
bucket refilled at ``qps`` a second and holding at most ``burst`` (client-go's
``flowcontrol.NewTokenBucketRateLimiter``; a qps <= 0 is no limit). A watch counts once, when
it starts.
"""

from __future__ import annotations

from typing import Any

from kvert.api.types import Obj
from kvert.client.base import Client, Patch, WatchStream
from kvert.clock import Clock

DEFAULT_QPS = 50.0
DEFAULT_BURST = 100


class TokenBucket:
    def __init__(self, clock: Clock, qps: float, burst: int) -> None:
        self.clock = clock
        self.qps = float(qps)
        self.burst = max(1, int(burst))
        self.tokens = float(self.burst)
        self.last = clock.now()

    async def wait(self) -> None:
        if self.qps <= 0:
            return
        now = self.clock.now()
        self.tokens = min(float(self.burst), self.tokens + (now - self.last) * self.qps)
        self.last = now
        self.tokens -= 1.0
        if self.tokens < 0:
            await self.clock.sleep(-self.tokens / self.qps)


class ThrottledClient:
    """``client`` with every request paced by one :class:`TokenBucket`."""

    def __init__(self, client: Client, clock: Clock, qps: float = DEFAULT_QPS, burst: int = DEFAULT_BURST) -> None:
        self.client = client
        self.bucket = TokenBucket(clock, qps, burst)

    async def get(self, resource: str, name: str, namespace: str = "") -> Obj:
        await self.bucket.wait()
        return await self.client.get(resource, name, namespace)

    async def list(self, resource: str, *, namespace: str | None = None, label_selector: str = "",
                   field_selector: str = "", limit: int = 0, continue_token: str = "",
                   resource_version: str = "") -> Obj:
        await self.bucket.wait()
        return await self.client.list(resource, namespace=namespace, label_selector=label_selector,
                                      field_selector=field_selector, limit=limit, continue_token=continue_token,
                                      resource_version=resource_version)

    async def create(self, resource: str, obj: Obj, *, namespace: str | None = None,
                     dry_run: bool = False) -> Obj:
        await self.bucket.wait()
        return await self.client.create(resource, obj, namespace=namespace, dry_run=dry_run)

    async def update(self, resource: str, obj: Obj, *, subresource: str = "",
                     dry_run: bool = False) -> Obj:
        await self.bucket.wait()
        return await self.client.update(resource, obj, subresource=subresource, dry_run=dry_run)

    async def patch(self, resource: str, name: str, patch: Patch, patch_type: str = "merge", *,
                    namespace: str = "", subresource: str = "", dry_run: bool = False) -> Obj:
        await self.bucket.wait()
        return await self.client.patch(resource, name, patch, patch_type, namespace=namespace,
                                       subresource=subresource, dry_run=dry_run)

    async def delete(self, resource: str, name: str, *, namespace: str = "",
                     grace_period_seconds: int | None = None, preconditions: Obj | None = None,
                     dry_run: bool = False, propagation_policy: str | None = None) -> Obj:
        await self.bucket.wait()
        return await self.client.delete(resource, name, namespace=namespace,
                                        grace_period_seconds=grace_period_seconds, preconditions=preconditions,
                                        dry_run=dry_run, propagation_policy=propagation_policy)

    async def watch(self, resource: str, *, namespace: str | None = None, label_selector: str = "",
                    field_selector: str = "", resource_version: str = "",
                    send_initial_events: bool = False,
                    allow_bookmarks: bool = False) -> WatchStream:
        await self.bucket.wait()
        return await self.client.watch(resource, namespace=namespace, label_selector=label_selector,
                                       field_selector=field_selector, resource_version=resource_version,
                                       send_initial_events=send_initial_events, allow_bookmarks=allow_bookmarks)

    async def update_status(self, resource: str, obj: Obj) -> Obj:
        await self.bucket.wait()
        return await self.client.update_status(resource, obj)

    async def bind(self, namespace: str, pod_name: str, node_name: str,
                   annotations: dict[str, str] | None = None) -> Obj:
        await self.bucket.wait()
        return await self.client.bind(namespace, pod_name, node_name, annotations)

    async def evict(self, namespace: str, pod_name: str, *,
                    grace_period_seconds: int | None = None) -> Obj:
        await self.bucket.wait()
        return await self.client.evict(namespace, pod_name, grace_period_seconds=grace_period_seconds)

    async def resize(self, namespace: str, pod_name: str, patch: Patch,
                     patch_type: str = "strategic") -> Obj:
        await self.bucket.wait()
        return await self.client.resize(namespace, pod_name, patch, patch_type)

    async def get_scale(self, resource: str, name: str, namespace: str = "") -> Obj:
        await self.bucket.wait()
        return await self.client.get_scale(resource, name, namespace)

    async def update_scale(self, resource: str, scale: Obj) -> Obj:
        await self.bucket.wait()
        return await self.client.update_scale(resource, scale)

    async def create_subresource(self, resource: str, name: str, subresource: str, body: Obj, *,
                                 namespace: str = "") -> Obj:
        await self.bucket.wait()
        return await self.client.create_subresource(resource, name, subresource, body, namespace=namespace)

    def __getattr__(self, name: str) -> Any:
        # what is not a request (the server's address, close()) is the wrapped client's
        return getattr(self.client, name)


__all__ = ["DEFAULT_BURST", "DEFAULT_QPS", "ThrottledClient", "TokenBucket"]
