"""kube-apiserver's ``--max-requests-inflight`` / ``--max-mutating-requests-inflight``
(``WithMaxInFlightLimit``): at most so many requests are served at once, read-only (GET,
HEAD) and mutating ones counted apart; one more is answered 429 ``Too many requests, please
try again later.`` with ``Retry-After: 1`` before any of its work is done.

As upstream: long-running requests (watches, proxies, and the attach, exec, log, portforward
and proxy subresources: ``BasicLongRunningRequestCheck``) are not counted, a limit of 0 means
none, and a member of ``system:masters`` is served even over the limit (upstream: "a
super-admin or a loopback connection should always get an answer").
"""

from __future__ import annotations

from aiohttp import web
from aiohttp.typedefs import Handler

from kvert.apiserver.requestinfo import USER, resolve
from kvert.auth.user import MASTERS

DEFAULT_MAX_REQUESTS_INFLIGHT = 400
DEFAULT_MAX_MUTATING_REQUESTS_INFLIGHT = 200
RETRY_AFTER = "1"
MESSAGE = "Too many requests, please try again later."
LONG_RUNNING_SUBRESOURCES = frozenset({"attach", "exec", "proxy", "log", "portforward"})
READ_ONLY_METHODS = frozenset({"GET", "HEAD"})


def is_long_running(request: web.Request) -> bool:
    """``BasicLongRunningRequestCheck(watch, proxy; attach, exec, proxy, log, portforward)``."""
    info = resolve(request.path)
    if not info.is_resource:
        return False
    if info.legacy_watch or request.query.get("watch") in ("1", "true", "True"):
        return True
    return info.subresource in LONG_RUNNING_SUBRESOURCES or request.path.startswith("/api/v1/proxy/")


class InflightLimit:
    """The two limits and their counts; ``middleware`` runs after authentication (it reads
    the request's user)."""

    def __init__(self, read_only: int = DEFAULT_MAX_REQUESTS_INFLIGHT,
                 mutating: int = DEFAULT_MAX_MUTATING_REQUESTS_INFLIGHT) -> None:
        if read_only < 0 or mutating < 0:
            raise ValueError("--max-requests-inflight and --max-mutating-requests-inflight must not be negative")
        self.limits = {False: read_only, True: mutating}
        self.in_flight = {False: 0, True: 0}

    @web.middleware
    async def middleware(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        mutating = request.method not in READ_ONLY_METHODS
        most = self.limits[mutating]
        if most == 0 or is_long_running(request):
            return await handler(request)
        if self.in_flight[mutating] >= most:
            user = request.get(USER)
            if user is None or MASTERS not in user.groups:
                # http.Error's answer: plain text, not a Status
                return web.Response(status=429, text=MESSAGE + "\n",
                                    headers={"Retry-After": RETRY_AFTER, "X-Content-Type-Options": "nosniff"})
        self.in_flight[mutating] += 1
        try:
            return await handler(request)
        finally:
            self.in_flight[mutating] -= 1


__all__ = ["DEFAULT_MAX_MUTATING_REQUESTS_INFLIGHT", "DEFAULT_MAX_REQUESTS_INFLIGHT", "InflightLimit",
           "is_long_running"]
