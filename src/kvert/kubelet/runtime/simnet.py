"""A simulated pod's network namespace, and the programs that listen in it.

The containers of a pod share one ``PodNetwork``: a program that listens on a port puts a
handler there, and ``kubectl port-forward`` (the runtime's ``port_forward``) connects to
it. The programs are shell commands (``simshell``) a simulated container's process or an
exec can run:

* ``nc -l [-k] [-p] PORT [-e PROG]`` (busybox netcat): one connection (``-k``: one after
  another, forever); without ``-e`` what arrives goes to stdout and stdin is sent to the
  peer, with ``-e`` the connection is PROG's stdin and stdout (``nc -lk -p 8080 -e cat``
  is an echo server).
* ``httpd -f -p [ADDR:]PORT [-h HOME]`` (busybox httpd): the files under HOME (default
  the working directory), 404 for others. Without ``-f`` busybox daemonizes; here it
  serves in the foreground either way (the container's process is the server).
* ``agnhost`` (registry.k8s.io/e2e-test-images/agnhost) with ``netexec`` (HTTP on
  ``--http-port``, default 8080: ``/``, ``/echo?msg=&code=``, ``/hostname``,
  ``/hostName``, ``/healthz``, ``/clientip``, ``/shell?cmd=``, ``/exit?code=``,
  ``/shutdown``), ``serve-hostname`` (HTTP on ``--port``, default 9376: the hostname) and
  ``pause`` (sleeps until stopped); other subcommands are "unknown command".
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import posixpath
import shlex
import time
from collections.abc import Awaitable, Callable
from urllib.parse import parse_qs, urlsplit

from kvert.client.httpstream.portforward import pipe
from kvert.kubelet.runtime.simshell import Command, Ctx, Serve, Shell

REQUEST_HEAD_LIMIT = 64 * 1024
NETEXEC_PORT = 8080            # agnhost netexec's --http-port default
SERVE_HOSTNAME_PORT = 9376     # agnhost serve-hostname's --port default
_REASONS = {200: "OK", 301: "Moved Permanently", 302: "Found", 307: "Temporary Redirect",
            400: "Bad Request", 404: "Not Found", 412: "Precondition Failed", 417: "Expectation Failed",
            500: "Internal Server Error"}

# what an HTTP handler answers for (method, target): (status, content type, body)
Answer = Callable[[str, str], Awaitable[tuple[int, str, bytes]]]


class PodNetwork:
    """The ports programs of one pod listen on."""

    def __init__(self) -> None:
        self.listeners: dict[int, Serve] = {}

    def listen(self, port: int, serve: Serve) -> None:
        if port in self.listeners:
            raise OSError(98, "Address already in use")
        self.listeners[port] = serve

    def close(self, port: int) -> None:
        self.listeners.pop(port, None)

    async def dial(self, port: int) -> tuple[asyncio.StreamReader, asyncio.StreamWriter] | None:
        """A connection to whoever listens on ``port``; None when nobody does."""
        serve = self.listeners.get(port)
        return None if serve is None else await pipe(serve)


def _reader(stream: asyncio.StreamReader) -> Callable[[], Awaitable[bytes | None]]:
    async def read() -> bytes | None:
        try:
            data = await stream.read(65536)
        except ConnectionError:
            return None
        return data or None
    return read


def _writer(stream: asyncio.StreamWriter) -> Callable[[bytes], Awaitable[None]]:
    async def write(data: bytes) -> None:
        with contextlib.suppress(ConnectionError):
            stream.write(data)
            await stream.drain()
    return write


async def _listen(sh: Shell, ctx: Ctx, name: str, port: int, serve: Serve, *, once: bool = False,
                  until: asyncio.Future[int] | None = None) -> int:
    """Listen on ``port`` until stopped (``once``: until the first connection is served;
    ``until``: until that is done, whose result is the exit status)."""
    if sh.network is None:
        await ctx.err(f"{name}: bind: Cannot assign requested address\n".encode())
        return 1
    network = sh.network
    served = asyncio.Event()
    closed = False

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        nonlocal closed
        if once and not closed:
            closed = True
            network.close(port)     # the next connection is refused, as nc stops listening
        try:
            await serve(reader, writer)
        finally:
            writer.close()
            served.set()
    try:
        network.listen(port, handle)
    except OSError as e:
        await ctx.err(f"{name}: bind: {e.strerror}\n".encode())
        return 1
    try:
        if once:
            await served.wait()
        elif until is not None:
            return await until
        else:
            await asyncio.Event().wait()
    finally:
        if not closed:
            network.close(port)
    return 0


def _port(text: str) -> int:
    port = int(text.rsplit(":", 1)[-1])
    if not 0 < port < 65536:
        raise ValueError(f"invalid port {text}")
    return port


# -- nc ---------------------------------------------------------------------------------------

async def _nc(sh: Shell, args: list[str], ctx: Ctx) -> int:
    listen = keep = False
    port: int | None = None
    program: list[str] = []
    rest = list(args)
    while rest:
        arg = rest.pop(0)
        if arg == "-e":
            program = rest[:] if rest else []
            break
        if arg.startswith("-") and len(arg) > 1:
            flags = arg[1:]
            for i, flag in enumerate(flags):
                if flag == "l":
                    listen = True
                elif flag == "k":
                    keep = True
                elif flag == "p":
                    value = flags[i + 1:] or (rest.pop(0) if rest else "")
                    port = _port(value)
                    break
                elif flag in "vn":
                    continue
                else:
                    await ctx.err(f"nc: invalid option -- '{flag}'\n".encode())
                    return 1
        elif port is None:
            port = _port(arg)
    if not listen or port is None:
        # connecting out needs a peer this simulation does not have
        await ctx.err(b"nc: can't connect to remote host: Connection refused\n")
        return 1

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if program:
            child = Shell(sh.fs, dict(sh.env), clock=sh.clock, processes=sh.processes,
                          commands=sh.commands, network=sh.network, max_sleep=sh.max_sleep)
            await child.run(program if len(program) > 1 else shlex.split(program[0]),
                            Ctx(_reader(reader), _writer(writer), ctx.err))
            return

        async def send() -> None:
            while (chunk := await ctx.stdin()) is not None:
                await _writer(writer)(chunk)
        sender = asyncio.ensure_future(send())
        try:
            read = _reader(reader)
            while (data := await read()) is not None:
                await ctx.out(data)
        finally:
            sender.cancel()
    return await _listen(sh, ctx, "nc", port, serve, once=not keep)


# -- HTTP -------------------------------------------------------------------------------------

async def read_request_line(reader: asyncio.StreamReader) -> tuple[str, str]:
    """The method and target of the HTTP request ``reader`` brings (its head read whole, up to
    a bound); ``GET /`` for what is no request line."""
    head = b""
    while b"\r\n\r\n" not in head and len(head) < REQUEST_HEAD_LIMIT:
        chunk = await reader.read(4096)
        if not chunk:
            break
        head += chunk
    parts = head.split(b"\r\n", 1)[0].split()
    if len(parts) < 2:
        return "GET", "/"
    return parts[0].decode("latin-1"), parts[1].decode("latin-1")


def http_server(answer: Answer) -> Serve:
    """A connection handler answering one HTTP request with ``answer``."""
    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        with contextlib.suppress(ConnectionError, asyncio.IncompleteReadError, asyncio.LimitOverrunError):
            method, target = await read_request_line(reader)
            status, kind, body = await answer(method, target)
            writer.write(f"HTTP/1.1 {status} {_REASONS.get(status, 'Unknown')}\r\nContent-Type: {kind}\r\n"
                         f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode()
                         + (b"" if method == "HEAD" else body))
            await writer.drain()
    return serve


_TEXT = "text/plain; charset=utf-8"
_HTML = "text/html"


async def _httpd(sh: Shell, args: list[str], ctx: Ctx) -> int:
    port, home = 80, sh.cwd
    rest = list(args)
    while rest:
        arg = rest.pop(0)
        if arg == "-p" and rest:
            port = _port(rest.pop(0))
        elif arg == "-h" and rest:
            home = sh.fs.resolve(sh.cwd, rest.pop(0))
        elif arg in ("-f", "-v", "-vv"):
            continue
        else:
            await ctx.err(f"httpd: unrecognized option '{arg}'\n".encode())
            return 1

    async def answer(method: str, target: str) -> tuple[int, str, bytes]:
        path = sh.fs.resolve(home, "." + posixpath.normpath("/" + urlsplit(target).path))
        if sh.fs.is_dir(path):
            path = posixpath.join(path, "index.html")
        try:
            body = sh.fs.read(path)
        except OSError:
            return 404, _HTML, b"<HTML><HEAD><TITLE>404 Not Found</TITLE></HEAD>\n<BODY><H1>404 Not Found</H1>\n" \
                               b"The requested URL was not found\n</BODY></HTML>\n"
        return 200, _HTML if path.endswith((".html", ".htm")) else _TEXT, body
    return await _listen(sh, ctx, "httpd", port, http_server(answer))


# -- agnhost ----------------------------------------------------------------------------------

def _flag(args: list[str], name: str, default: int) -> int:
    for i, arg in enumerate(args):
        if arg.startswith(f"--{name}="):
            return int(arg.split("=", 1)[1])
        if arg == f"--{name}" and i + 1 < len(args):
            return int(args[i + 1])
    return default


async def _netexec(sh: Shell, args: list[str], ctx: Ctx) -> int:
    port = _flag(args, "http-port", NETEXEC_PORT)
    hostname = sh.env.get("HOSTNAME", "")
    exiting: asyncio.Future[int] = asyncio.get_running_loop().create_future()

    async def answer(method: str, target: str) -> tuple[int, str, bytes]:
        url = urlsplit(target)
        query = {k: v[-1] for k, v in parse_qs(url.query, keep_blank_values=True).items()}
        await ctx.err(f"GET {url.path}\n".encode())
        if url.path in ("/hostname", "/hostName"):
            return 200, _TEXT, hostname.encode()
        if url.path == "/echo":
            code = query.get("code", "")
            return (int(code) if code.isdigit() else 200), _TEXT, query.get("msg", "").encode()
        if url.path == "/healthz":
            return 200, _TEXT, b""
        if url.path == "/clientip":
            return 200, _TEXT, b"127.0.0.1:0"
        if url.path == "/shell":
            command = query.get("shellCommand") or query.get("cmd", "")
            captured: list[bytes] = []

            async def keep(data: bytes) -> None:
                captured.append(data)
            child = Shell(sh.fs, dict(sh.env), clock=sh.clock, commands=sh.commands, network=sh.network)
            status = await child.run(["sh", "-c", command], Ctx(_no_input, keep, keep))
            output: dict[str, str] = {}
            if captured:
                output["output"] = b"".join(captured).decode("utf-8", "replace")
            if status:
                output["error"] = f"exit status {status}"
            return 200, _TEXT, json.dumps(output, separators=(",", ":")).encode()
        if url.path in ("/exit", "/shutdown"):
            code = query.get("code", "0") or "0"
            if not exiting.done():
                exiting.set_result(int(code) if code.isdigit() else 0)
            return 200, _TEXT, b""
        # Go's time.Now() format, in the container's clock
        now = sh.clock.now()
        stamp = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(now)) + f".{int(now % 1 * 1e9):09d} +0000 UTC"
        return 200, _TEXT, f"NOW: {stamp}".encode()

    await ctx.err(f"Started HTTP server on port {port}\n".encode())
    return await _listen(sh, ctx, "netexec", port, http_server(answer), until=exiting)


async def _no_input() -> bytes | None:
    return None


async def _serve_hostname(sh: Shell, args: list[str], ctx: Ctx) -> int:
    port = _flag(args, "port", SERVE_HOSTNAME_PORT)
    hostname = sh.env.get("HOSTNAME", "").encode()

    async def answer(method: str, target: str) -> tuple[int, str, bytes]:
        return 200, _TEXT, hostname
    await ctx.err(f"Serving on port {port}.\n".encode())
    return await _listen(sh, ctx, "serve-hostname", port, http_server(answer))


async def _pause(sh: Shell, args: list[str], ctx: Ctx) -> int:
    await ctx.err(b"Paused\n")
    await asyncio.Event().wait()
    return 0


_AGNHOST: dict[str, Command] = {"netexec": _netexec, "serve-hostname": _serve_hostname, "pause": _pause}


async def _agnhost(sh: Shell, args: list[str], ctx: Ctx) -> int:
    sub = _AGNHOST.get(args[0]) if args else None
    if sub is None:
        name = args[0] if args else ""
        await ctx.err(f'Error: unknown command "{name}" for "agnhost"\n'.encode())
        return 1
    return await sub(sh, args[1:], ctx)


COMMANDS: dict[str, Command] = {"nc": _nc, "httpd": _httpd, "agnhost": _agnhost, "pause": _pause}

__all__ = ["COMMANDS", "NETEXEC_PORT", "PodNetwork", "SERVE_HOSTNAME_PORT", "http_server"]
