"""What a simulated container answers to exec, attach and port-forward.

exec runs ``simshell`` over the container instance's in-memory filesystem; attach to a
container without a program (``simprograms``) streams its log lines as they happen; a
port a program listens on answers as that program does (``simnet``); otherwise a
port the pod's spec declares (``containerPort``, TCP) answers HTTP: an image with a known
web root (nginx, httpd) serves the files under it from that filesystem (an index page to
begin with, 404 for what is not there), any other image a short page naming the pod and
container; a port not declared refuses, as nothing listens there.
"""

from __future__ import annotations

import asyncio
import contextlib
import posixpath
from collections.abc import Sequence

from kvert.client.httpstream.portforward import pipe
from kvert.clock.base import Clock
from kvert.kubelet.runtime.base import CriError, StreamIO
from kvert.kubelet.runtime.simlogs import ContainerLog
from kvert.kubelet.runtime.simnet import COMMANDS, read_request_line
from kvert.kubelet.runtime.simshell import Filesystem, Network, Shell, run

ATTACH_POLL_SECONDS = 1.0


# where a web server image serves its files from, and its first page
WEB_ROOTS = {"nginx": "/usr/share/nginx/html", "httpd": "/usr/local/apache2/htdocs"}
WEB_PORT = 80          # where those images listen, declared or not
# the headline of each image's own first page, which clients look for
HEADLINES = {"nginx": "Welcome to nginx!", "httpd": "It works!"}
INDEX_PAGE = ("<!DOCTYPE html>\n<html>\n<head><title>{headline}</title></head>\n<body>\n<h1>{headline}</h1>\n"
              "<p>A kvert simulated container of image {image}.</p>\n</body>\n</html>\n")


def _image_name(image: str) -> str:
    return image.rsplit("/", 1)[-1].split(":", 1)[0].split("@", 1)[0]


def web_root(image: str) -> str | None:
    return WEB_ROOTS.get(_image_name(image))


def new_filesystem(hostname: str, namespace: str, image: str = "") -> Filesystem:
    root = web_root(image)
    index = {f"{root}/index.html": INDEX_PAGE.format(headline=HEADLINES[_image_name(image)],
                                                      image=image).encode()} if root else {}
    return Filesystem({
        **index,
        "/etc/hostname": f"{hostname}\n".encode(),
        "/etc/hosts": b"127.0.0.1\tlocalhost\n::1\tlocalhost\n",
        "/etc/resolv.conf": (f"search {namespace}.svc.cluster.local svc.cluster.local cluster.local\n"
                             "nameserver 10.96.0.10\noptions ndots:5\n").encode(),
        "/etc/os-release": b'NAME="kvert simulated container"\nID=kvert\n',
    })


async def exec_in(fs: Filesystem, env: dict[str, str], main_command: str, argv: Sequence[str], io: StreamIO,
                  clock: Clock, network: Network | None = None) -> int:
    shell = Shell(fs, env, clock=clock, processes=[main_command or "(simulated)", " ".join(argv)],
                  commands=COMMANDS, network=network)
    return await run(shell, list(argv), io)


async def attach_to(log: ContainerLog, clock: Clock, io: StreamIO) -> None:
    """The container's log lines from now on, until it ends."""
    seen = clock.now()
    while not log.finished_at:
        await clock.sleep(ATTACH_POLL_SECONDS)
        now = clock.now()
        fresh = [text for t, text in log.lines(now, after=seen) if t <= now]
        seen = now
        if fresh:
            await io.write_stdout("".join(f"{line}\n" for line in fresh).encode())


def responder(fs: Filesystem, image: str, banner: str):
    """What GET PATH answers: (status, body)."""
    root = web_root(image)

    def answer(path: str) -> tuple[int, bytes]:
        if root is None:
            return 200, f"{banner}\n".encode()
        target = fs.resolve(root, "." + posixpath.normpath("/" + path.split("?", 1)[0]))
        if fs.is_dir(target):
            target = posixpath.join(target, "index.html")
        try:
            return 200, fs.read(target)
        except OSError:
            return 404, b"<html><body><h1>404 Not Found</h1></body></html>\n"
    return answer


async def connect(ports: set[int], port: int, answer) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """A connection to a declared port's built-in HTTP responder (``answer(path)``);
    CriError (connection refused) for any other port."""
    if port not in ports:
        raise CriError(f"failed to connect to localhost:{port} inside the pod: dial tcp4 "
                       f"127.0.0.1:{port}: connect: connection refused")
    return await pipe(lambda reader, writer: _respond(reader, writer, answer))


async def _respond(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, answer) -> None:
    with contextlib.suppress(ConnectionError, asyncio.IncompleteReadError, asyncio.LimitOverrunError):
        method, path = await read_request_line(reader)
        status, body = answer(path)
        reason = {200: "OK", 404: "Not Found"}[status]
        kind = "text/html" if body.lstrip().startswith(b"<") else "text/plain; charset=utf-8"
        writer.write(f"HTTP/1.1 {status} {reason}\r\nContent-Type: {kind}\r\nContent-Length: "
                     f"{len(body)}\r\nConnection: close\r\n\r\n".encode() + (b"" if method == "HEAD" else body))
        await writer.drain()
    writer.close()
