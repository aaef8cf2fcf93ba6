"""What a simulated container answers to exec, attach and port-forward.

exec runs ``simshell`` over the container instance's in-memory filesystem; attach streams
the container's log lines as they happen (a simulated process has no other output); a
port the pod's spec declares (``containerPort``, TCP) answers every connection with a
small HTTP response naming the pod and container, and any other port refuses, as nothing
listens there.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket

from kvert.kubelet.runtime.base import CriError
from kvert.kubelet.runtime.simshell import Filesystem, Shell, run
from kvert.kubelet.runtime.simlogs import ContainerLog

ATTACH_POLL_SECONDS = 1.0
REQUEST_HEAD_LIMIT = 64 * 1024
_tasks: set[asyncio.Task] = set()     # the responders running (a task needs a reference)


def new_filesystem(hostname: str, namespace: str) -> Filesystem:
    return Filesystem({
        "/etc/hostname": f"{hostname}\n".encode(),
        "/etc/hosts": b"127.0.0.1\tlocalhost\n::1\tlocalhost\n",
        "/etc/resolv.conf": (f"search {namespace}.svc.cluster.local svc.cluster.local cluster.local\n"
                             "nameserver 10.96.0.10\noptions ndots:5\n").encode(),
        "/etc/os-release": b'NAME="kvert simulated container"\nID=kvert\n',
    })


async def exec_in(fs: Filesystem, env: dict[str, str], main_command: str, argv, io, clock) -> int:
    shell = Shell(fs, env, clock=clock, processes=[main_command or "(simulated)", " ".join(argv)])
    return await run(shell, list(argv), io)


async def attach_to(log: ContainerLog, clock, io) -> None:
    """The container's log lines from now on, until it ends."""
    seen = clock.now()
    while not log.finished_at:
        await clock.sleep(ATTACH_POLL_SECONDS)
        now = clock.now()
        fresh = [text for t, text in log.lines(now, after=seen) if t <= now]
        seen = now
        if fresh:
            await io.write_stdout("".join(f"{line}\n" for line in fresh).encode())


async def connect(ports: set[int], port: int, banner: str) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """A connection to a declared port's built-in HTTP responder; CriError (connection
    refused) for any other port."""
    if port not in ports:
        raise CriError(f"failed to connect to localhost:{port} inside the pod: dial tcp4 "
                       f"127.0.0.1:{port}: connect: connection refused")
    ours, theirs = socket.socketpair()
    reader, writer = await asyncio.open_connection(sock=ours)
    server_reader, server_writer = await asyncio.open_connection(sock=theirs)
    task = asyncio.create_task(_respond(server_reader, server_writer, banner))
    _tasks.add(task)
    task.add_done_callback(_tasks.discard)
    return reader, writer



async def _respond(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, banner: str) -> None:
    with contextlib.suppress(ConnectionError, asyncio.IncompleteReadError, asyncio.LimitOverrunError):
        head = b""
        while b"\r\n\r\n" not in head and len(head) < REQUEST_HEAD_LIMIT:
            chunk = await reader.read(4096)
            if not chunk:
                break
            head += chunk
        body = f"{banner}\n".encode()
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain; charset=utf-8\r\n"
                     + f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode() + body)
        await writer.drain()
    writer.close()
