"""What request handlers and route providers get of the API server: its ``ServerContext``.

The handlers (``rest``, ``watch``, ``reviews``, ``metrics``, ``podlogs``, ...) are called by
the server, so they may not import it: they are handed this context instead, which the
server builds and keeps current (the kubelet-client TLS settings or a RecommendationQuery service
set on the server after it was built is set here). This module sits below every handler
and imports none of them.
"""

from __future__ import annotations

import ssl
from dataclasses import dataclass
from typing import Any, Protocol

from aiohttp import web

from kvert.api.kinds import ResourceType
from kvert.apiserver.nodeprovider import NodeMetricsProvider
from kvert.apiserver.requestinfo import RequestInfo
from kvert.auth.authorizer import Authorizer
from kvert.auth.user import User
from kvert.clock import Clock
from kvert.registry import Registry
from kvert.store.base import Store

# the audiences a TokenReview without its own checks tokens against (--api-audiences)
DEFAULT_API_AUDIENCES: tuple[str, ...] = ("https://kubernetes.default.svc.cluster.local",)


class RequestAuthenticator(Protocol):
    """Who an ``Authorization`` header authenticates (kvert.auth's authenticators)."""

    def authenticate(self, authorization: str | None, /) -> User | None: ...


class WatchServing(Protocol):
    """Serves one watch request as a stream of events (``kvert.apiserver.watch.WatchHub``)."""

    async def serve(self, request: web.Request, rt: ResourceType,
                    info: RequestInfo) -> web.StreamResponse: ...

    def terminated_samples(self) -> list[tuple[dict[str, str], float]]:
        """apiserver_terminated_watchers_total: streams cut off for not reading."""
        ...


class RequestSamples(Protocol):
    """The server's request counters, as ``/metrics`` exposes them."""

    def samples(self) -> list[tuple[dict[str, str], float]]: ...


class RecommendationService(Protocol):
    """Answers a RecommendationQuery (``kvert.vpa.query.QueryService``)."""

    async def answer(self, query: dict[str, Any], namespace: str, /) -> dict[str, Any]: ...


@dataclass
class ServerContext:
    """The collaborators of one API server that its request handlers use."""

    store: Store
    clock: Clock
    registry: Registry
    watches: WatchServing
    request_metrics: RequestSamples
    # None: every request is anonymous (no authentication configured)
    authenticator: RequestAuthenticator | None = None
    # None: every authenticated request is allowed
    authorizer: Authorizer | None = None
    # the node agents of this process (node proxy, logs, exec, metrics.k8s.io), or None
    metrics_provider: NodeMetricsProvider | None = None
    api_audiences: tuple[str, ...] = DEFAULT_API_AUDIENCES
    # how this server dials node agents' kubelet endpoints: its client certificate and the CA
    # their serving certificates must chain to (kubeletclient); None: it reaches none
    kubelet_tls: ssl.SSLContext | None = None
    # autoscaling.kvert.io RecommendationQuery, or None: the group is not served
    recommendation_query: RecommendationService | None = None
