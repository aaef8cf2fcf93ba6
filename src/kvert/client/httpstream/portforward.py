"""portforward: TCP connections to a pod's ports over one HTTP connection (what
``pods/NAME/portforward`` and the kubelet's ``/portForward`` carry).

Three ways in, as upstream:

* SPDY/3.1 streams (``portforward.k8s.io``), over an HTTP ``Upgrade: SPDY/3.1``
  connection, or tunnelled in the binary messages of a WebSocket whose subprotocol is
  ``SPDY/3.1+portforward.k8s.io`` (kubectl 1.31+ tries this first). Each forwarded
  connection is a pair of streams with the same ``requestid`` and ``port`` headers: an
  ``error`` stream (a refused dial is written there as text) and a ``data`` stream.
* WebSocket channels (``v4.channel.k8s.io``, the Python client's): the ``ports`` query
  lists the ports; port *i* has data channel 2i and error channel 2i+1, and each channel's
  first message is the port as two little-endian bytes.

``serve`` answers with a ``dial(port)`` that connects inside the pod; ``connect`` is the
client's end of the channel protocol, one connection per port.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import struct
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any

from aiohttp import WSMsgType, web
from multidict import MultiMapping

from kvert.api.errors import BadRequest
from kvert.client.httpstream import upgrade
from kvert.client.httpstream.spdy import SpdySession, SpdyStream

TUNNEL_PROTOCOL = "SPDY/3.1+portforward.k8s.io"
SPDY_PROTOCOLS = ("portforward.k8s.io",)
WEBSOCKET_PROTOCOLS = (TUNNEL_PROTOCOL, "v4.channel.k8s.io", "channel.k8s.io")
CHUNK = 32 * 1024


def query_ports(query: MultiMapping[str]) -> list[int]:
    """The ``ports`` of a WebSocket channel request (repeated or comma-separated)."""
    texts = [p for value in query.getall("ports", ()) for p in value.split(",") if p]
    if not texts:
        raise BadRequest('query parameter "port" is required')
    return [_port(text) for text in texts]


def _port(text: str) -> int:
    try:
        port = int(text)
    except ValueError:
        raise BadRequest(f'unable to parse "{text}" as a port: strconv.ParseUint: parsing '
                         f'"{text}": invalid syntax') from None
    if not 0 < port < 65536:
        raise BadRequest(f'port "{text}" must be > 0' if port <= 0 else
                         f'unable to parse "{text}" as a port: value out of range')
    return port


_serving: set[asyncio.Task[None]] = set()      # the far ends of ``pipe`` (a task needs a reference)


async def pipe(serve: Callable[[asyncio.StreamReader, asyncio.StreamWriter],
                              Coroutine[Any, Any, None]]
               ) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """A connected (reader, writer) whose far end ``serve`` works in a task of its own:
    what ``dial`` returns for a port that is not a real socket."""
    ours, theirs = socket.socketpair()
    reader, writer = await asyncio.open_connection(sock=ours)
    far_reader, far_writer = await asyncio.open_connection(sock=theirs)
    task = asyncio.create_task(serve(far_reader, far_writer))
    _serving.add(task)
    task.add_done_callback(_serving.discard)
    return reader, writer


Dial = Callable[[int], Awaitable[tuple[asyncio.StreamReader, asyncio.StreamWriter]]]


class _Forwarder:
    def __init__(self, dial: Dial, pod: str, uid: str) -> None:
        self._dial = dial
        self.pod = pod
        self.uid = uid

    async def dial(self, port: int) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        try:
            return await self._dial(port)
        except Exception as e:
            raise ConnectionError(f"error forwarding port {port} to pod {self.pod}, "
                                  f"uid {self.uid}: {e}") from e

    # -- SPDY ----------------------------------------------------------------------------

    async def spdy(self, session: SpdySession) -> None:
        pairs: dict[str, dict[str, SpdyStream]] = {}
        tasks: set[asyncio.Task[None]] = set()
        try:
            while (stream := await session.new_streams.get()) is not None:
                kind = stream.headers.get("streamtype", "")
                key = stream.headers.get("requestid") or stream.headers.get("port", "")
                if kind not in ("error", "data"):
                    await session.reset(stream)
                    continue
                pair = pairs.setdefault(key, {})
                pair[kind] = stream
                if len(pair) == 2:
                    del pairs[key]
                    task = asyncio.create_task(self._pair(pair["error"], pair["data"]))
                    tasks.add(task)
                    task.add_done_callback(tasks.discard)
        finally:
            for task in tasks:
                task.cancel()

    async def _pair(self, error: SpdyStream, data: SpdyStream) -> None:
        try:
            port = _port(data.headers.get("port", ""))
            reader, writer = await self.dial(port)
        except (BadRequest, ConnectionError) as e:
            await error.write(str(e).encode())
            await error.close()
            await data.close()
            return
        async def upstream() -> None:
            while chunk := await data.read():
                writer.write(chunk)
                await writer.drain()
            if writer.can_write_eof():
                writer.write_eof()
        async def downstream() -> None:
            while chunk := await reader.read(CHUNK):
                await data.write(chunk)
            await data.close()
        try:
            await asyncio.gather(upstream(), downstream())
        except (ConnectionError, OSError):
            pass
        finally:
            writer.close()
            await error.close()
            await data.close()

    # -- WebSocket channels ------------------------------------------------------------------

    async def channels(self, ws: web.WebSocketResponse, ports: list[int]) -> None:
        writers: dict[int, asyncio.StreamWriter] = {}
        tasks: list[asyncio.Task[None]] = []

        async def send(channel: int, data: bytes) -> None:
            if not ws.closed:
                with contextlib.suppress(ConnectionError, RuntimeError):
                    await ws.send_bytes(bytes([channel]) + data)

        for i, port in enumerate(ports):
            prefix = struct.pack("<H", port)
            await send(2 * i, prefix)
            await send(2 * i + 1, prefix)
            try:
                reader, writer = await self.dial(port)
            except ConnectionError as e:
                await send(2 * i + 1, str(e).encode())
                continue
            writers[2 * i] = writer

            async def downstream(channel: int = 2 * i, reader: asyncio.StreamReader = reader) -> None:
                while chunk := await reader.read(CHUNK):
                    await send(channel, chunk)
            tasks.append(asyncio.create_task(downstream()))

        async def close_when_done(downstreams: list[asyncio.Task[None]]) -> None:
            # as the kubelet does: the connection ends once every forwarded port has ended
            await asyncio.gather(*downstreams, return_exceptions=True)
            await ws.close()
        # the downstream tasks as they are now, copied before the closer joins ``tasks``: it must
        # not wait for itself
        closer = asyncio.create_task(close_when_done(list(tasks)))
        tasks.append(closer)
        try:
            async for msg in ws:
                if msg.type != WSMsgType.BINARY or not msg.data:
                    continue
                target = writers.get(msg.data[0])
                if target is not None and len(msg.data) > 1:
                    target.write(msg.data[1:])
                    with contextlib.suppress(ConnectionError):
                        await target.drain()
        finally:
            for task in tasks:
                task.cancel()
            for writer in writers.values():
                writer.close()


async def serve(request: web.Request, dial: Dial, pod: str, uid: str) -> web.StreamResponse:
    """Upgrade the request and forward each connection through ``dial``."""
    forwarder = _Forwarder(dial, pod, uid)
    if upgrade.wants_websocket(request):
        tunnel = TUNNEL_PROTOCOL in request.headers.get(upgrade.WEBSOCKET_PROTOCOL_HEADER, "")
        ports = [] if tunnel else query_ports(request.query)   # checked before the upgrade
        ws, protocol = await upgrade.websocket(request, WEBSOCKET_PROTOCOLS)
        if protocol == TUNNEL_PROTOCOL:
            async def read() -> bytes:
                while True:
                    msg = await ws.receive()
                    if msg.type == WSMsgType.BINARY:
                        data: bytes = msg.data
                        if data:          # the client's writes may be empty messages
                            return data
                        continue
                    if msg.type in (WSMsgType.CLOSE, WSMsgType.CLOSING, WSMsgType.CLOSED, WSMsgType.ERROR):
                        return b""
            session = SpdySession(read, ws.send_bytes)
            await _run_spdy(session, forwarder)
        else:
            await forwarder.channels(ws, ports)
        await ws.close()
        return ws
    if upgrade.wants_spdy(request):
        conn, _ = await upgrade.spdy(request, SPDY_PROTOCOLS)
        try:
            await _run_spdy(SpdySession(conn.read, conn.write), forwarder)
        finally:
            conn.close()
        return web.Response()   # never sent: the connection is SPDY's now
    raise BadRequest("Upgrade request required")


async def _run_spdy(session: SpdySession, forwarder: _Forwarder) -> None:
    reader = asyncio.create_task(session.run())
    try:
        await forwarder.spdy(session)
    finally:
        reader.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await reader
