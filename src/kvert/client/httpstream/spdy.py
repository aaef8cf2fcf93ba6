"""SPDY/3.1 framing, the server's half: what kubectl's exec, attach and port-forward speak
when they do not use WebSocket channels (``moby/spdystream`` on the client).

A session multiplexes streams the client opens with SYN_STREAM; each carries headers
(``streamtype``, and for port-forward ``port`` and ``requestid``), and both sides send DATA
frames on it until each has sent one with FIN. The server answers every SYN_STREAM with a
SYN_REPLY (the client waits for it), echoes PINGs, and ignores SETTINGS and WINDOW_UPDATE:
spdystream does no flow control. Header blocks are compressed with one zlib stream per
direction, primed with the dictionary of the SPDY/3 draft (section 2.6.10.1).

The bytes come from an upgraded HTTP connection (``Upgrade: SPDY/3.1``) or from the binary
messages of a WebSocket (``SPDY/3.1+portforward.k8s.io``, kubectl's tunnelled port-forward);
``SpdySession`` takes a reader and a writer and does not care which.
"""

from __future__ import annotations

import asyncio
import contextlib
import struct
import zlib
from collections.abc import Awaitable, Callable

VERSION = 3
SYN_STREAM, SYN_REPLY, RST_STREAM, SETTINGS, PING, GOAWAY, HEADERS, WINDOW_UPDATE = 1, 2, 3, 4, 6, 7, 8, 9
FLAG_FIN = 0x01
RST_CANCEL = 5
MAX_HEADER_BLOCK = 1 << 20     # a header block that inflates past this is refused


def _dictionary() -> bytes:
    words = ("options head post put delete trace accept accept-charset accept-encoding "
             "accept-language accept-ranges age allow authorization cache-control connection "
             "content-base content-encoding content-language content-length content-location "
             "content-md5 content-range content-type date etag expect expires from host if-match "
             "if-modified-since if-none-match if-range if-unmodified-since last-modified location "
             "max-forwards pragma proxy-authenticate proxy-authorization range referer retry-after "
             "server te trailer transfer-encoding upgrade user-agent vary via warning "
             "www-authenticate method get status").split()
    words += ["200 OK", "version", "HTTP/1.1", "url", "public", "set-cookie", "keep-alive", "origin"]
    tail = ("100101201202205206300302303304305306307402405406407408409410411412413414415416417"
            "502504505203 Non-Authoritative Information204 No Content301 Moved Permanently"
            "400 Bad Request401 Unauthorized403 Forbidden404 Not Found500 Internal Server Error"
            "501 Not Implemented503 Service UnavailableJan Feb Mar Apr May Jun Jul Aug Sept Oct "
            "Nov Dec 00:00:00 Mon, Tue, Wed, Thu, Fri, Sat, Sun, GMTchunked,text/html,image/png,"
            "image/jpg,image/gif,application/xml,application/xhtml+xml,text/plain,text/javascript,"
            "publicprivatemax-age=gzip,deflate,sdchcharset=utf-8charset=iso-8859-1,utf-,*,enq=0.")
    return b"".join(struct.pack(">I", len(w)) + w.encode() for w in words) + tail.encode()


DICTIONARY = _dictionary()


class SpdyError(Exception):
    """The peer broke the protocol; the session ends."""


def encode_headers(headers: dict[str, str]) -> bytes:
    out = [struct.pack(">I", len(headers))]
    for name, value in headers.items():
        n, v = name.lower().encode(), value.encode()
        out += [struct.pack(">I", len(n)), n, struct.pack(">I", len(v)), v]
    return b"".join(out)


def decode_headers(block: bytes) -> dict[str, str]:
    """A header block's pairs; several values of one name (NUL-separated) keep the first."""
    try:
        (count,), at = struct.unpack_from(">I", block), 4
        headers = {}
        for _ in range(count):
            (n,) = struct.unpack_from(">I", block, at)
            name, at = block[at + 4:at + 4 + n], at + 4 + n
            (v,) = struct.unpack_from(">I", block, at)
            value, at = block[at + 4:at + 4 + v], at + 4 + v
            if len(name) != n or len(value) != v:
                raise SpdyError("truncated header block")
            headers[name.decode("latin-1")] = value.split(b"\0")[0].decode("latin-1")
        return headers
    except struct.error as e:
        raise SpdyError("truncated header block") from e


class SpdyStream:
    """One stream the client opened: its headers, what it sent, and our half."""

    def __init__(self, session: SpdySession, stream_id: int, headers: dict[str, str]):
        self.session = session
        self.id = stream_id
        self.headers = headers
        self._incoming: asyncio.Queue[bytes] = asyncio.Queue()
        self.remote_closed = False
        self.local_closed = False

    async def read(self) -> bytes:
        """The next chunk the client sent; b"" once it has closed its half (or reset)."""
        if self.remote_closed and self._incoming.empty():
            return b""
        return await self._incoming.get()

    async def write(self, data: bytes) -> None:
        if self.local_closed or not data:
            return
        for at in range(0, len(data), 32 * 1024):
            await self.session.send_data(self.id, data[at:at + 32 * 1024], fin=False)

    async def close(self) -> None:
        """Close our half (DATA with FIN)."""
        if not self.local_closed:
            self.local_closed = True
            await self.session.send_data(self.id, b"", fin=True)

    def _received(self, data: bytes, fin: bool) -> None:
        if self.remote_closed:
            return
        if data:
            self._incoming.put_nowait(data)
        if fin:
            self.remote_closed = True
            self._incoming.put_nowait(b"")

    def _reset(self) -> None:
        self.local_closed = True
        self._received(b"", True)


class SpdySession:
    """The server's end of one SPDY/3.1 connection over ``read``/``write`` callables
    (``read`` returns b"" at the end)."""

    def __init__(self, read: Callable[[], Awaitable[bytes]], write: Callable[[bytes], Awaitable[None]]):
        self._read = read
        self._write = write
        self._buffer = bytearray()
        self._inflate = zlib.decompressobj(zdict=DICTIONARY)
        self._deflate = zlib.compressobj(zlib.Z_BEST_COMPRESSION, zdict=DICTIONARY)
        self._lock = asyncio.Lock()
        self.streams: dict[int, SpdyStream] = {}
        self.new_streams: asyncio.Queue[SpdyStream | None] = asyncio.Queue()
        self.closed = False

    # -- writing ----------------------------------------------------------------------------

    async def _send(self, frame: bytes) -> None:
        if self.closed:
            return
        async with self._lock:
            with contextlib.suppress(ConnectionError, RuntimeError):
                await self._write(frame)

    async def _control(self, kind: int, flags: int, payload: bytes) -> None:
        await self._send(struct.pack(">HHI", 0x8000 | VERSION, kind, (flags << 24) | len(payload)) + payload)

    async def send_data(self, stream_id: int, data: bytes, fin: bool) -> None:
        await self._send(struct.pack(">II", stream_id & 0x7FFFFFFF,
                                     ((FLAG_FIN if fin else 0) << 24) | len(data)) + data)

    async def _reply(self, stream_id: int) -> None:
        block = self._deflate.compress(encode_headers({})) + self._deflate.flush(zlib.Z_SYNC_FLUSH)
        await self._control(SYN_REPLY, 0, struct.pack(">I", stream_id) + block)

    async def reset(self, stream: SpdyStream) -> None:
        stream._reset()
        await self._control(RST_STREAM, 0, struct.pack(">II", stream.id, RST_CANCEL))

    async def go_away(self) -> None:
        last = max(self.streams, default=0)
        await self._control(GOAWAY, 0, struct.pack(">II", last, 0))
        self.closed = True

    # -- reading ----------------------------------------------------------------------------

    async def _exactly(self, n: int) -> bytes | None:
        while len(self._buffer) < n:
            chunk = await self._read()
            if not chunk:
                return None
            self._buffer += chunk
        out = bytes(self._buffer[:n])
        del self._buffer[:n]
        return out

    def _headers(self, block: bytes) -> dict[str, str]:
        try:
            raw = self._inflate.decompress(block, MAX_HEADER_BLOCK)
        except zlib.error as e:
            raise SpdyError(f"header block: {e}") from e
        if self._inflate.unconsumed_tail:
            raise SpdyError("header block too large")
        return decode_headers(raw)

    async def run(self) -> None:
        """Read frames until the connection ends; new streams appear in ``new_streams``
        (None at the end)."""
        try:
            while not self.closed:
                head = await self._exactly(8)
                if head is None:
                    break
                first, second = struct.unpack(">II", head)
                flags, length = second >> 24, second & 0xFFFFFF
                payload = await self._exactly(length)
                if payload is None:
                    break
                if first & 0x80000000:
                    await self._on_control((first >> 16) & 0x7FFF, first & 0xFFFF, flags, payload)
                else:
                    stream = self.streams.get(first & 0x7FFFFFFF)
                    if stream is not None:
                        stream._received(payload, bool(flags & FLAG_FIN))
        except SpdyError:
            await self.go_away()
        finally:
            self.closed = True
            for stream in self.streams.values():
                stream._reset()
            self.new_streams.put_nowait(None)

    async def _on_control(self, version: int, kind: int, flags: int, payload: bytes) -> None:
        if version != VERSION:
            raise SpdyError(f"unsupported SPDY version {version}")
        if kind == SYN_STREAM:
            if len(payload) < 10:
                raise SpdyError("short SYN_STREAM")
            stream_id = struct.unpack_from(">I", payload)[0] & 0x7FFFFFFF
            stream = SpdyStream(self, stream_id, self._headers(payload[10:]))
            self.streams[stream_id] = stream
            await self._reply(stream_id)
            if flags & FLAG_FIN:
                stream._received(b"", True)
            self.new_streams.put_nowait(stream)
        elif kind == HEADERS:
            self._headers(payload[4:])           # keeps the shared zlib stream in step
        elif kind == RST_STREAM and len(payload) >= 4:
            reset = self.streams.get(struct.unpack_from(">I", payload)[0] & 0x7FFFFFFF)
            if reset is not None:
                reset._reset()
        elif kind == PING:
            await self._control(PING, 0, payload[:4])
        elif kind == GOAWAY:
            self.closed = True
        # SETTINGS, WINDOW_UPDATE, SYN_REPLY (we open no streams): nothing to do
