"""How the API server reaches a node's agent, as kube-apiserver reaches the kubelet: the
agent in this process directly (``ApiServer.metrics_provider``), or a node agent run
elsewhere through its HTTPS endpoint (``kvert node-agent``'s kubelet port, at the node's
``InternalIP`` and ``status.daemonEndpoints.kubeletEndpoint.Port``).

The remote endpoint is called as kube-apiserver calls it: presenting the API server's
kubelet-client certificate (``kube-apiserver-kubelet-client``, bound to
``system:kubelet-api-admin``; never a bearer token, so a listener that captures the call
learns nothing it can replay), and, with ``--kubelet-certificate-authority``, verifying the
node agent's serving certificate against that CA and the address dialled (a Node whose
status points elsewhere gets no request at all: the TLS handshake fails first). A dial that
fails answers as kube-apiserver's: 500 with ``Get "URL": ...`` for logs and proxied GETs, and
``error dialing backend: ...`` for streams.
Streams go over WebSocket (remotecommand ``v5.channel.k8s.io``; port-forward's
``v4.channel.k8s.io`` channels, one connection per forwarded port).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import ssl
import struct
from dataclasses import dataclass
from typing import Any, Protocol
from urllib.parse import quote, urlencode

import aiohttp
from aiohttp import WSMsgType, web

from kvert.api.errors import ApiError, NotFound
from kvert.apiserver.nodeprovider import NodeMetricsProvider
from kvert.client.httpstream.portforward import pipe
from kvert.client.httpstream.remotecommand import CLOSE_SIGNAL, ERROR, RESIZE, STDERR, STDIN, STDOUT
from kvert.registry import Registry

CONNECT_TIMEOUT = 10.0


class RemoteCommandError(Exception):
    """The kubelet's Status of a failed exec that is not an exit code."""


@dataclass
class LocalNode:
    """A node agent in this process."""
    provider: NodeMetricsProvider
    node: str
    remote = False

    async def exec(self, namespace: str, pod: str, container: str, command, io) -> int:
        return await self.provider.exec(self.node, namespace, pod, container, command, io)

    async def attach(self, namespace: str, pod: str, container: str, io) -> None:
        await self.provider.attach(self.node, namespace, pod, container, io)

    async def port_forward(self, namespace: str, pod: str, port: int):
        return await self.provider.port_forward(self.node, namespace, pod, port)

    def container_log(self, namespace: str, pod: str, container: str, *, previous: bool = False):
        return self.provider.container_log(self.node, namespace, pod, container, previous=previous)


@dataclass
class RemoteNode:
    """A node agent reached through its kubelet endpoint."""
    base: str            # https://HOST:PORT
    tls: ssl.SSLContext  # the client certificate, and the CA serving certificates must chain to
    remote = True

    def _headers(self) -> dict[str, str]:
        return {}        # the client certificate is the credential

    def _session(self) -> aiohttp.ClientSession:
        return aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=None, sock_connect=CONNECT_TIMEOUT),
                                     connector=aiohttp.TCPConnector(ssl=self.tls))

    @staticmethod
    def _path(*parts: str) -> str:
        return "/".join(quote(p, safe="") for p in parts)

    async def _remotecommand(self, kind: str, namespace: str, pod: str, container: str,
                             command, io) -> int:
        query = [("command", c) for c in command or ()] + [
            ("stdin", str(getattr(io, "stdin", False)).lower()), ("stdout", "true"),
            ("stderr", "false" if io.tty else "true"), ("tty", str(io.tty).lower())]
        url = f"{self.base}/{kind}/{self._path(namespace, pod, container)}?{urlencode(query)}"
        async with self._session() as session:
            try:
                ws = await session.ws_connect(url, protocols=["v5.channel.k8s.io"], headers=self._headers(),
                                              max_msg_size=0)
            except aiohttp.WSServerHandshakeError as e:
                raise RemoteCommandError(f"the node agent refused: {e.status} {e.message}") from e
            except aiohttp.ClientError as e:
                raise RemoteCommandError(f"error dialing backend: {_reason(e)}") from e
            async with ws:
                return await _bridge(ws, io)

    async def exec(self, namespace: str, pod: str, container: str, command, io) -> int:
        return await self._remotecommand("exec", namespace, pod, container, command, io)

    async def attach(self, namespace: str, pod: str, container: str, io) -> None:
        await self._remotecommand("attach", namespace, pod, container, (), io)

    async def port_forward(self, namespace: str, pod: str, port: int):
        url = f"{self.base}/portForward/{self._path(namespace, pod)}?ports={port}"
        session = self._session()
        try:
            ws = await session.ws_connect(url, protocols=["v4.channel.k8s.io"], headers=self._headers(),
                                          max_msg_size=0)
        except aiohttp.ClientError as e:
            await session.close()
            raise ConnectionError(f"error dialing backend: {_reason(e)}") from e
        return await pipe(lambda reader, writer: _forward(ws, session, reader, writer))

    async def get_text(self, path: str) -> str:
        """A GET of the agent's ``path`` (its metrics, health)."""
        url = f"{self.base}/{path}"
        async with self._session() as session:
            try:
                async with session.get(url, headers=self._headers()) as answer:
                    if answer.status == 404:
                        raise NotFound("nodes", "", f"the node agent serves no /{path}")
                    if answer.status != 200:
                        raise ApiError(f"the node agent answered {answer.status}: {await answer.text()}",
                                       503, "ServiceUnavailable")
                    return await answer.text()
            except aiohttp.ClientError as e:
                raise dial_error(url, e) from None

    async def proxy_log(self, request: web.Request, namespace: str, pod: str, container: str) -> web.StreamResponse:
        url = f"{self.base}/containerLogs/{self._path(namespace, pod, container)}"
        async with self._session() as session:
            try:
                upstream = await session.get(url, params=list(request.query.items()), headers=self._headers())
            except aiohttp.ClientError as e:
                raise dial_error(url, e) from None
            async with upstream:
                response = web.StreamResponse(status=upstream.status, headers={
                    "Content-Type": upstream.headers.get("Content-Type", "text/plain")})
                await response.prepare(request)
                async for chunk in upstream.content.iter_any():
                    await response.write(chunk)
                await response.write_eof()
                return response


def _reason(e: aiohttp.ClientError) -> str:
    """What failed, as Go's net/http and crypto/tls say it where Python's words differ little."""
    if isinstance(e, aiohttp.ClientConnectorCertificateError):
        return f"tls: failed to verify certificate: {e.certificate_error}"
    if isinstance(e, aiohttp.ClientConnectorError):
        return str(e.os_error) or str(e)
    return str(e) or type(e).__name__


def dial_error(url: str, e: aiohttp.ClientError) -> ApiError:
    """kube-apiserver's answer when the kubelet cannot be reached: the transport's error as a
    500 without a reason (``responsewriters.ErrorNegotiated`` of a ``*url.Error``)."""
    return ApiError(f'Get "{url}": {_reason(e)}', 500, "")


async def _bridge(ws: aiohttp.ClientWebSocketResponse, io: Any) -> int:
    """Carry ``io``'s streams over a v5 channel session; the exit code of its Status."""
    async def stdin() -> None:
        while (chunk := await io.read_stdin()) is not None:
            await ws.send_bytes(bytes([STDIN]) + chunk)
        with contextlib.suppress(ConnectionError, RuntimeError):
            await ws.send_bytes(bytes([CLOSE_SIGNAL, STDIN]))

    async def resize() -> None:
        while (size := await io.next_resize()) is not None:
            await ws.send_bytes(bytes([RESIZE]) + json.dumps({"Width": size[0], "Height": size[1]}).encode())
    senders = [asyncio.create_task(stdin()), asyncio.create_task(resize())]
    status: dict = {}
    try:
        async for msg in ws:
            if msg.type != WSMsgType.BINARY or not msg.data:
                continue
            channel, data = msg.data[0], msg.data[1:]
            if channel == STDOUT:
                await io.write_stdout(data)
            elif channel == STDERR:
                await io.write_stderr(data)
            elif channel == ERROR and data:
                status = json.loads(data)
    finally:
        for task in senders:
            task.cancel()
    if status.get("status", "Success") == "Success":
        return 0
    if status.get("reason") == "NonZeroExitCode":
        causes = (status.get("details") or {}).get("causes") or [{}]
        return int(causes[0].get("message", "1"))
    raise RemoteCommandError(status.get("message", "exec failed"))


async def _forward(ws, session, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """One forwarded connection over port-forward channels 0 (data) and 1 (error)."""
    async def upstream() -> None:
        while chunk := await reader.read(32 * 1024):
            await ws.send_bytes(b"\x00" + chunk)
    pump = asyncio.create_task(upstream())
    prefixes = 0
    try:
        async for msg in ws:
            if msg.type != WSMsgType.BINARY or not msg.data:
                continue
            channel, data = msg.data[0], msg.data[1:]
            if prefixes < 2 and len(data) == 2 and struct.unpack("<H", data):
                prefixes += 1       # each channel's first message is the port
                continue
            if channel == 0:
                writer.write(data)
                await writer.drain()
            elif channel == 1 and data:
                break               # the dial failed: the connection is refused
    except (ConnectionError, OSError):
        pass
    finally:
        pump.cancel()
        writer.close()
        await ws.close()
        await session.close()


class NodeAgents(Protocol):
    """What finding a node's agent takes: the node agents of this process and the nodes
    (an API server's ``ServerContext``, or the ApiServer itself)."""

    @property
    def metrics_provider(self) -> NodeMetricsProvider | None: ...

    @property
    def registry(self) -> Registry: ...


def node_target(server: NodeAgents, node: str) -> LocalNode | RemoteNode:
    """The node's agent: in this process, or its kubelet endpoint; NotFound when neither."""
    provider = server.metrics_provider
    if provider is not None and node in provider.nodes():
        return LocalNode(provider, node)
    return remote_node(server, node)


def remote_node(server: NodeAgents, node: str) -> RemoteNode:
    """The kubelet endpoint of a node's agent run elsewhere; NotFound when it has none this
    server can reach."""
    try:
        obj = server.registry.get("nodes", node, "")
    except NotFound:
        raise NotFound("nodes", node, f'nodes "{node}" not found') from None
    status = obj.get("status") or {}
    port = ((status.get("daemonEndpoints") or {}).get("kubeletEndpoint") or {}).get("Port")
    address = next((a.get("address") for a in status.get("addresses") or []
                    if a.get("type") == "InternalIP"), None)
    # stand-ins for a server may have no kubelet-client credential at all
    tls = getattr(server, "kubelet_tls", None)
    if not port or not address or tls is None:
        raise NotFound("nodes", node, f'node "{node}" has no node agent in this API server\'s process '
                                      "and no kubelet endpoint it can reach")
    host = f"[{address}]" if ":" in address else address
    return RemoteNode(f"https://{host}:{port}", tls)
