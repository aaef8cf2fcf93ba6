"""kube-apiserver's ``--request-timeout`` (60 s) where a client can stall a request: its body.

Upstream, ``WithRequestDeadline`` gives every request that is not long-running a context
deadline of ``--request-timeout`` and ``WithTimeoutForNonLongRunningRequests`` answers one
still running at that deadline with 504 ``Timeout: request did not complete within the
allotted timeout`` (its http.Server has no ReadTimeout: the body is bounded by this deadline
alone). A handler here only waits for its body (its other work is bounded by its own
timeouts: webhooks', the store's), so the deadline bounds the body read: a body trickled in
more slowly than that is answered with upstream's 504 Status and the connection closed (the
rest of the body is never read: nothing is left to keep the connection for).

Watches, proxies and the streaming subresources are long-running (``inflight.is_long_running``)
and get no deadline, as upstream.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from aiohttp import web
from aiohttp.typedefs import Handler

from kvert.api.errors import Timeout
from kvert.apiserver.inflight import is_long_running

DEFAULT_REQUEST_TIMEOUT = 60.0
MESSAGE = "Timeout: request did not complete within the allotted timeout"
# the loop time by which a request's body must have been read
DEADLINE = web.RequestKey("deadline", float)
# set when the body was cut off: the answer is the connection's last
CUT_OFF = web.RequestKey("body-cut-off", bool)


class RequestDeadline:
    """Stamps each request that is not long-running with its deadline (``timeout`` seconds
    after its headers arrived; 0: none)."""

    def __init__(self, timeout: float = DEFAULT_REQUEST_TIMEOUT) -> None:
        if timeout < 0:
            raise ValueError("--request-timeout must not be negative")
        self.timeout = timeout

    @web.middleware
    async def middleware(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        if self.timeout > 0 and not is_long_running(request):
            request[DEADLINE] = asyncio.get_running_loop().time() + self.timeout
        response = await handler(request)
        if request.get(CUT_OFF):
            # sent, then the connection closed: aiohttp would otherwise linger reading the
            # rest of the body (10 s) before closing
            await response.prepare(request)
            await response.write_eof()
            request.protocol.force_close()
        return response


@asynccontextmanager
async def body_deadline(request: web.Request) -> AsyncIterator[None]:
    """Reading the body within the request's deadline, else 504 and the connection closed."""
    deadline = request.get(DEADLINE)
    if deadline is None:
        yield
        return
    try:
        async with asyncio.timeout_at(deadline):
            yield
    except TimeoutError:
        request[CUT_OFF] = True
        raise Timeout(MESSAGE, retry_after_seconds=0) from None


__all__ = ["DEFAULT_REQUEST_TIMEOUT", "RequestDeadline", "body_deadline"]
