"""Issue 27's attack: a node points its Node status at a listener it controls and waits for the
API server's kubelet credential. The API server now presents a client certificate, never a
bearer token, so the listener captures nothing it can replay; with
--kubelet-certificate-authority the handshake fails and the listener receives no request at
all, and the call fails as kube-apiserver's does (500, ``Get "URL": ...``)."""

from __future__ import annotations

import asyncio
import datetime

import pytest
from aiohttp import web

from kvert.api.errors import ApiError
from kvert.apiserver.certs import ensure_client_cert, ensure_pki, kubelet_client_context
from kvert.apiserver.kubeletclient import RemoteNode
from kvert.auth.user import KUBELET_CLIENT

NOW = datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC)


async def _rogue(tmp_path, seen: list):
    """A listener with a certificate of its own CA (the node's self-made one)."""
    rogue = ensure_pki(tmp_path / "rogue", NOW, names=("127.0.0.1",))

    async def capture(request: web.Request) -> web.Response:
        seen.append(dict(request.headers))
        return web.Response(text="ok")
    app = web.Application()
    app.router.add_get("/{tail:.*}", capture)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0, ssl_context=rogue.server_context())
    await site.start()
    return runner, runner.addresses[0][1]


def _client_tls(tmp_path, verify: bool):
    pki = ensure_pki(tmp_path / "cluster", NOW)
    ensure_client_cert(pki, "apiserver-kubelet-client", KUBELET_CLIENT, ("kubeadm:cluster-admins",), NOW)
    d = pki.ca_cert.parent
    return kubelet_client_context(d / "apiserver-kubelet-client.crt", d / "apiserver-kubelet-client.key",
                                  pki.ca_cert if verify else None)


def test_without_the_ca_the_listener_gets_no_bearer_token(tmp_path):
    async def main():
        seen: list = []
        runner, port = await _rogue(tmp_path, seen)
        try:
            await RemoteNode(f"https://127.0.0.1:{port}", _client_tls(tmp_path, verify=False)).get_text("metrics")
        finally:
            await runner.cleanup()
        return seen
    seen = asyncio.run(main())
    assert len(seen) == 1 and "Authorization" not in seen[0]


def test_with_the_ca_the_handshake_fails_before_any_request(tmp_path):
    async def main():
        seen: list = []
        runner, port = await _rogue(tmp_path, seen)
        try:
            with pytest.raises(ApiError) as e:
                await RemoteNode(f"https://127.0.0.1:{port}", _client_tls(tmp_path, verify=True)).get_text("metrics")
        finally:
            await runner.cleanup()
        return seen, e.value, port
    seen, error, port = asyncio.run(main())
    assert seen == []
    assert error.code == 500
    assert error.message.startswith(f'Get "https://127.0.0.1:{port}/metrics": tls: failed to verify certificate')
