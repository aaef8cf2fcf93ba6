"""Taking over an HTTP connection for a streaming protocol: WebSocket (aiohttp's) or
``Upgrade: SPDY/3.1`` (``k8s.io/apimachinery/pkg/util/httpstream``'s handshake).

Both negotiate a subprotocol the way upstream does: the first protocol in the client's
order that the server supports. aiohttp upgrades only to WebSocket by itself; for SPDY the
101 is written and the connection's later bytes are fed to a queue instead of the HTTP
parser (the same hook aiohttp's WebSocketResponse uses).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from aiohttp import hdrs, web

from kvert.api.errors import BadRequest

STREAM_PROTOCOL_HEADER = "X-Stream-Protocol-Version"
WEBSOCKET_PROTOCOL_HEADER = "Sec-WebSocket-Protocol"


def wants_websocket(request: web.Request) -> bool:
    return (request.headers.get(hdrs.UPGRADE, "").lower() == "websocket"
            and "upgrade" in request.headers.get(hdrs.CONNECTION, "").lower())


def wants_spdy(request: web.Request) -> bool:
    return (request.headers.get(hdrs.UPGRADE, "").lower().startswith("spdy/3.1")
            and "upgrade" in request.headers.get(hdrs.CONNECTION, "").lower())


def _offered(request: web.Request, header: str) -> list[str]:
    return [p.strip() for value in request.headers.getall(header, ())
            for p in value.split(",") if p.strip()]


def negotiate(offered: Sequence[str], supported: Sequence[str]) -> str | None:
    """The client's first protocol the server supports; "" when the client offered none
    (the unversioned protocol), None when it offered only unknown ones."""
    if not offered:
        return ""
    return next((p for p in offered if p in supported), None)


async def websocket(request: web.Request, supported: Sequence[str]) -> tuple[web.WebSocketResponse, str]:
    offered = _offered(request, WEBSOCKET_PROTOCOL_HEADER)
    protocol = negotiate(offered, supported)
    if protocol is None:
        raise BadRequest(f"unable to upgrade: none of the requested protocols {offered} are "
                         f"supported (supported: {list(supported)})")
    ws = web.WebSocketResponse(protocols=[protocol] if protocol else (), autoping=True,
                               max_msg_size=0)
    await ws.prepare(request)
    return ws, protocol


class _Feeder:
    """Where aiohttp's protocol puts an upgraded connection's bytes (its payload-parser hook)."""

    def __init__(self) -> None:
        self.queue: asyncio.Queue[bytes] = asyncio.Queue()

    def feed_data(self, data: bytes) -> tuple[bool, bytes]:
        self.queue.put_nowait(bytes(data))
        return False, b""

    def feed_eof(self) -> None:
        self.queue.put_nowait(b"")


class RawConnection:
    """An HTTP connection after a 101 to SPDY/3.1: bytes in, bytes out."""

    def __init__(self, request: web.Request, feeder: _Feeder):
        self._transport = request.transport
        self._feeder = feeder
        self._eof = False

    async def read(self) -> bytes:
        if self._eof:
            return b""
        chunk = await self._feeder.queue.get()
        if not chunk:
            self._eof = True
        return chunk

    async def write(self, data: bytes) -> None:
        transport = self._transport
        if transport is None or transport.is_closing():
            raise ConnectionResetError("connection closed")
        transport.write(data)

    def close(self) -> None:
        if self._transport is not None and not self._transport.is_closing():
            self._transport.close()


async def spdy(request: web.Request, supported: Sequence[str]) -> tuple[RawConnection, str]:
    """Answer ``Upgrade: SPDY/3.1`` with a 101 naming the negotiated stream protocol."""
    offered = _offered(request, STREAM_PROTOCOL_HEADER)
    protocol = negotiate(offered, supported)
    if protocol is None:
        raise web.HTTPForbidden(text=f"unable to upgrade: unable to negotiate protocol: client "
                                     f"supports {offered}, server supports {list(supported)}")
    headers: dict[str, str] = {hdrs.CONNECTION: "Upgrade", hdrs.UPGRADE: "SPDY/3.1"}
    if protocol:
        headers[STREAM_PROTOCOL_HEADER] = protocol
    # the parser hook goes in before the 101 leaves: the client's first frames may follow at once
    feeder = _Feeder()
    request.protocol.set_parser(feeder)      # type: ignore[arg-type]
    request.protocol.keep_alive(False)
    response = web.StreamResponse(status=101, headers=headers)
    await response.prepare(request)
    return RawConnection(request, feeder), protocol
