"""remotecommand: a process's stdin, stdout, stderr and terminal size over one connection
(what ``pods/NAME/exec`` and ``attach`` carry, and the kubelet's ``/exec`` and ``/attach``).

Two transports carry the same streams:

* WebSocket channels (``k8s.io/apimachinery/pkg/util/httpstream/wsstream``): every
  message is one channel byte (0 stdin, 1 stdout, 2 stderr, 3 error, 4 resize) and data;
  ``v5.channel.k8s.io`` (kubectl 1.30+) adds message ``[255, channel]`` closing a channel
  (stdin's end of file); the ``base64`` variants send text frames of an ASCII channel
  digit and base64 data. kubectl 1.37 uses this first.
* SPDY/3.1 (``Upgrade: SPDY/3.1``): one stream per channel, named by its ``streamtype``
  header; kubectl falls back to it when the WebSocket upgrade is refused, and older
  clients use only it.

``v4`` and later end with a ``metav1.Status`` on the error channel (``Success``, or a
``NonZeroExitCode`` failure whose cause carries the exit code, which kubectl exits with);
older protocols write only an error's text. Options are ``PodExecOptions`` /
``PodAttachOptions``. ``serve`` answers a request on either transport; ``connect`` is the
client's end (a WebSocket v5 session bridged to a ``StreamIO``).
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass
from typing import Any

from aiohttp import WSMsgType, web
from multidict import MultiMapping

from kvert.api.errors import BadRequest
from kvert.api.types import Obj
from kvert.client.httpstream import upgrade
from kvert.client.httpstream.spdy import SpdySession, SpdyStream

STDIN, STDOUT, STDERR, ERROR, RESIZE = 0, 1, 2, 3, 4
CLOSE_SIGNAL = 255                      # v5: [255, channel] closes a channel
WEBSOCKET_PROTOCOLS = ("v5.channel.k8s.io", "v4.channel.k8s.io", "v4.base64.channel.k8s.io",
                       "v3.channel.k8s.io", "v2.channel.k8s.io", "channel.k8s.io",
                       "base64.channel.k8s.io")
SPDY_PROTOCOLS = ("v4.channel.k8s.io", "v3.channel.k8s.io", "v2.channel.k8s.io", "channel.k8s.io")
STREAM_TYPES = {"stdin": STDIN, "stdout": STDOUT, "stderr": STDERR, "error": ERROR, "resize": RESIZE}
STREAM_WAIT_SECONDS = 30.0              # upstream's stream-creation timeout


def protocol_version(name: str) -> int:
    """``v4.channel.k8s.io`` -> 4; the unversioned ``channel.k8s.io`` is 1."""
    return int(name[1]) if name.startswith("v") and name[1:2].isdigit() else 1


@dataclass
class StreamOptions:
    stdin: bool = False
    stdout: bool = False
    stderr: bool = False
    tty: bool = False
    container: str = ""
    command: tuple[str, ...] = ()


def stream_options(query: MultiMapping[str], *, exec_: bool) -> StreamOptions:
    """``PodExecOptions`` / ``PodAttachOptions`` from the query, checked as upstream."""
    def flag(name: str, default: bool = False) -> bool:
        # Convert_Slice_string_To_bool: only "false" and "0" are false
        value = query.get(name)
        return default if value is None else value not in ("0",) and value.lower() != "false"
    # SetDefaults_PodExecOptions / SetDefaults_PodAttachOptions: stdout and stderr on
    opts = StreamOptions(stdin=flag("stdin"), stdout=flag("stdout", True),
                         stderr=flag("stderr", True), tty=flag("tty"), container=query.get("container", ""),
                         command=tuple(query.getall("command", ())) if exec_ else ())
    if exec_ and not opts.command:
        raise BadRequest("you must specify at least 1 command")
    if not (opts.stdin or opts.stdout or opts.stderr):
        raise BadRequest("you must specify at least 1 of stdin, stdout, stderr")
    if opts.tty and opts.stderr:
        # the kubelet's rule: a terminal has one output stream
        opts.stderr = False
    return opts


def success_status() -> Obj:
    return {"metadata": {}, "status": "Success"}


def exit_status(code: int, command: tuple[str, ...]) -> Obj:
    message = (f"command terminated with non-zero exit code: error executing command "
               f"[{' '.join(command)}], exit code {code}")
    return {"metadata": {}, "status": "Failure", "message": message, "reason": "NonZeroExitCode",
            "details": {"causes": [{"reason": "ExitCode", "message": str(code)}]}}


def error_status(message: str) -> Obj:
    return {"metadata": {}, "status": "Failure", "message": message, "reason": "InternalError",
            "details": {"causes": [{"message": message}]}, "code": 500}


# -- the two transports, each a kvert.kubelet.runtime.base.StreamIO ---------------------------

class _Streams:
    """What both transports share: stdin and resize queues fed by a reader."""

    def __init__(self, opts: StreamOptions, version: int) -> None:
        self.tty = opts.tty
        self.stdin = opts.stdin
        self.opts = opts
        self.version = version
        self._stdin: asyncio.Queue[bytes | None] = asyncio.Queue()
        self._resize: asyncio.Queue[tuple[int, int] | None] = asyncio.Queue()
        self._resize_buffer = b""
        if not opts.stdin:
            self._stdin.put_nowait(None)
        if not opts.tty:
            self._resize.put_nowait(None)

    async def read_stdin(self) -> bytes | None:
        chunk = await self._stdin.get()
        if chunk is None:
            self._stdin.put_nowait(None)     # stays closed for every later read
        return chunk

    async def next_resize(self) -> tuple[int, int] | None:
        size = await self._resize.get()
        if size is None:
            self._resize.put_nowait(None)
        return size

    def _stdin_data(self, data: bytes) -> None:
        if data and self.opts.stdin:
            self._stdin.put_nowait(data)

    def _resize_data(self, data: bytes) -> None:
        # a stream of JSON TerminalSize values ({"Width": w, "Height": h}), one after another
        self._resize_buffer += data
        decoder = json.JSONDecoder()
        text = self._resize_buffer.decode("utf-8", "replace")
        at = 0
        while True:
            while at < len(text) and text[at].isspace():
                at += 1
            try:
                value, end = decoder.raw_decode(text, at)
            except ValueError:
                break
            at = end
            if isinstance(value, dict):
                width, height = value.get("Width"), value.get("Height")
                if isinstance(width, int) and isinstance(height, int):
                    self._resize.put_nowait((width, height))
        self._resize_buffer = text[at:].encode()

    def _end(self) -> None:
        self._stdin.put_nowait(None)
        self._resize.put_nowait(None)

    async def finish(self, status: Obj) -> None:
        """The error channel's last word: a Status (v4+), or an error's text."""
        if self.version >= 4:
            await self._error(json.dumps(status, separators=(",", ":")).encode())
        elif status.get("status") != "Success":
            await self._error(status.get("message", "").encode())

    async def _error(self, data: bytes) -> None:
        raise NotImplementedError

    async def write_stdout(self, data: bytes) -> None:
        raise NotImplementedError

    async def write_stderr(self, data: bytes) -> None:
        raise NotImplementedError

    async def pump(self) -> None:
        """Feed the stdin and resize queues from the client until it is done."""
        raise NotImplementedError


class WebSocketStreams(_Streams):
    def __init__(self, ws: web.WebSocketResponse, opts: StreamOptions, protocol: str) -> None:
        super().__init__(opts, protocol_version(protocol))
        self.ws = ws
        self.base64 = "base64" in protocol

    async def _send(self, channel: int, data: bytes) -> None:
        if self.ws.closed:
            return
        with contextlib.suppress(ConnectionError, RuntimeError):
            if self.base64:
                await self.ws.send_str(chr(ord("0") + channel) + base64.b64encode(data).decode())
            else:
                await self.ws.send_bytes(bytes([channel]) + data)

    async def write_stdout(self, data: bytes) -> None:
        if self.opts.stdout:
            await self._send(STDOUT, data)

    async def write_stderr(self, data: bytes) -> None:
        if self.tty:
            await self.write_stdout(data)
        elif self.opts.stderr:
            await self._send(STDERR, data)

    async def _error(self, data: bytes) -> None:
        await self._send(ERROR, data)

    async def pump(self) -> None:
        """Read the client's messages until it closes."""
        try:
            async for msg in self.ws:
                if msg.type == WSMsgType.TEXT and self.base64:
                    text = msg.data
                    if not text:
                        continue
                    try:
                        data = bytes([ord(text[0]) - ord("0")]) + base64.b64decode(text[1:])
                    except ValueError:
                        continue
                elif msg.type == WSMsgType.BINARY:
                    data = msg.data
                elif msg.type == WSMsgType.TEXT:
                    # wsstream reads a frame's bytes whatever its opcode (the Python client
                    # sends str data as text frames)
                    data = msg.data.encode()
                else:
                    continue
                if not data:
                    continue
                channel, payload = data[0], data[1:]
                if channel == STDIN:
                    self._stdin_data(payload)
                elif channel == RESIZE:
                    self._resize_data(payload)
                elif channel == CLOSE_SIGNAL and self.version >= 5 and payload[:1] == bytes([STDIN]):
                    self._stdin.put_nowait(None)
        finally:
            self._end()


class SpdyStreams(_Streams):
    def __init__(self, session: SpdySession, opts: StreamOptions, protocol: str) -> None:
        super().__init__(opts, protocol_version(protocol))
        self.session = session
        self.streams: dict[int, SpdyStream] = {}

    def expected(self) -> set[int]:
        wanted = {ERROR}
        if self.opts.stdin:
            wanted.add(STDIN)
        if self.opts.stdout:
            wanted.add(STDOUT)
        if self.opts.stderr:
            wanted.add(STDERR)
        if self.opts.tty and self.version >= 3:
            wanted.add(RESIZE)
        return wanted

    async def gather(self) -> None:
        """Wait for the client to open every stream the options call for."""
        async def until_all() -> None:
            while not self.expected() <= set(self.streams):
                stream = await self.session.new_streams.get()
                if stream is None:
                    raise ConnectionError("the client closed the connection")
                kind = STREAM_TYPES.get(stream.headers.get("streamtype", ""))
                if kind is None:
                    await self.session.reset(stream)
                else:
                    self.streams[kind] = stream
        await asyncio.wait_for(until_all(), STREAM_WAIT_SECONDS)

    async def write_stdout(self, data: bytes) -> None:
        if STDOUT in self.streams:
            await self.streams[STDOUT].write(data)

    async def write_stderr(self, data: bytes) -> None:
        target = self.streams.get(STDOUT if self.tty else STDERR)
        if target is not None:
            await target.write(data)

    async def _error(self, data: bytes) -> None:
        await self.streams[ERROR].write(data)

    async def pump(self) -> None:
        """Copy the stdin and resize streams into the queues."""
        async def copy(stream: SpdyStream, into: Callable[[bytes], None]) -> None:
            while chunk := await stream.read():
                into(chunk)
        tasks: list[Coroutine[Any, Any, None]] = []
        if STDIN in self.streams:
            async def stdin() -> None:
                await copy(self.streams[STDIN], self._stdin_data)
                self._stdin.put_nowait(None)
            tasks.append(stdin())
        if RESIZE in self.streams:
            tasks.append(copy(self.streams[RESIZE], self._resize_data))
        try:
            await asyncio.gather(*tasks)
        finally:
            if not tasks:
                await asyncio.Event().wait()    # nothing to read: wait to be cancelled
            self._end()

    async def close(self) -> None:
        for stream in self.streams.values():
            await stream.close()
        await self.session.go_away()


# -- serving ----------------------------------------------------------------------------------

# What works an exec or attach session's streams: the Status it ends with.
SessionRun = Callable[[_Streams], Coroutine[Any, Any, Obj]]


async def serve(request: web.Request, opts: StreamOptions, run: SessionRun) -> web.StreamResponse:
    """Upgrade the request (WebSocket or SPDY) and let ``run(io)`` work the streams; its
    Status is the error channel's last word."""
    if upgrade.wants_websocket(request):
        ws, protocol = await upgrade.websocket(request, WEBSOCKET_PROTOCOLS)
        await _session(WebSocketStreams(ws, opts, protocol), run)
        await ws.close()
        return ws
    if upgrade.wants_spdy(request):
        conn, protocol = await upgrade.spdy(request, SPDY_PROTOCOLS)
        session = SpdySession(conn.read, conn.write)
        reader = asyncio.create_task(session.run())
        io = SpdyStreams(session, opts, protocol)
        try:
            await io.gather()
            await _session(io, run)
            await io.close()
        except (TimeoutError, ConnectionError):
            pass
        finally:
            reader.cancel()
            conn.close()
        return web.Response()   # never sent: the connection is SPDY's now
    raise BadRequest("Upgrade request required")


async def run_exec(exec_: Callable[[tuple[str, ...], _Streams], Awaitable[int]] | None,
                   attach: Callable[[_Streams], Awaitable[None]], opts: StreamOptions,
                   io: _Streams) -> Obj:
    """The Status of an exec (``exec_(command, io)``) or attach (``attach(io)``)."""
    try:
        if exec_ is not None:
            code = await exec_(opts.command, io)
            return success_status() if code == 0 else exit_status(code, opts.command)
        await attach(io)
        return success_status()
    except FileNotFoundError as e:
        return error_status(f'exec: "{e.filename or opts.command[0]}": executable file not found in $PATH')
    except Exception as e:    # the runtime's refusal (container not running, ...)
        return error_status(str(e) or type(e).__name__)


async def _session(io: _Streams, run: SessionRun) -> None:
    pump = asyncio.create_task(io.pump())
    work = asyncio.create_task(run(io))
    try:
        done, _ = await asyncio.wait({pump, work}, return_when=asyncio.FIRST_COMPLETED)
        if work in done:
            await io.finish(work.result())
        else:             # the client went away: stop what it started
            work.cancel()
    finally:
        for task in (pump, work):
            task.cancel()
        await asyncio.gather(pump, work, return_exceptions=True)
