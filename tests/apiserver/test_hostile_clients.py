"""Issue 27's hostile clients against a real API server over HTTP: bodies trickled a byte at
a time, watchers that stop reading, and a flood of parallel LISTs.

Expected values are upstream's:
- a body not read within ``--request-timeout``: ``WithTimeoutForNonLongRunningRequests``
  (k8s.io/apiserver/pkg/server/filters/timeout.go) answers 504 with the Status of
  ``apierrors.NewTimeoutError("request did not complete within the allotted timeout", 0)``
  (timeout_test.go's TestTimeout expects http.StatusGatewayTimeout);
- a watcher whose buffer is full is terminated (cacher's cacheWatcher.add: "Forcing ...
  watcher close due to unresponsiveness", counted in apiserver_terminated_watchers_total);
  a client re-watching from its last resourceVersion gets every later event, or 410 Expired
  when that version was compacted (cacher_test.go's TestWatcherTimeout / TestCacheWatcherDraining...);
- requests over ``--max-requests-inflight`` get 429 with Retry-After 1 (maxinflight_test.go).
"""

from __future__ import annotations

import asyncio
import json
from urllib.parse import urlsplit

from aiohttp import ClientSession

from kvert.apiserver.admission import default_chain
from kvert.apiserver.inflight import InflightLimit
from kvert.apiserver.server import ApiServer
from kvert.auth.tokens import ADMIN, TokenAuthenticator
from kvert.clock import WallClock
from kvert.store import open_store


def run(tmp_path, scenario, *, request_timeout: float = 60.0, inflight: InflightLimit | None = None,
        history: int | None = None):
    async def main():
        store = open_store("memory", clock=WallClock())
        if history is not None:
            store._history = history
        tokens = TokenAuthenticator.load_or_create(tmp_path / "tokens.csv")
        server = ApiServer(store, WallClock(), authenticator=tokens, seed=1,
                           admission=default_chain(store, WallClock()))
        server.request_timeout = request_timeout
        if inflight is not None:
            server.inflight = inflight
        await server.bootstrap()
        url = await server.start("127.0.0.1", 0)
        try:
            return await scenario(url, tokens.token_for(ADMIN), server, store)
        finally:
            await server.stop()
            store.close()

    return asyncio.run(main())


def _configmap(name: str, data: str = "x") -> dict:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": {"d": data}}


async def _read_response(reader: asyncio.StreamReader) -> tuple[int, dict[str, str], bytes]:
    head = await reader.readuntil(b"\r\n\r\n")
    lines = head.decode().split("\r\n")
    status = int(lines[0].split()[1])
    headers = {k.lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:] if line)}
    body = await reader.readexactly(int(headers.get("content-length", "0")))
    return status, headers, body


# ---- bodies trickled a byte at a time -------------------------------------------------------


def test_a_body_trickled_a_byte_at_a_time_is_cut_off_at_the_request_timeout(tmp_path):
    """The attack: 20 connections each sending a ConfigMap's body one byte a time (issue 27:
    20 of 20 still open after 75 s). Now each is answered 504 at the (here 1 s) request
    timeout and its connection closed; nothing was created."""
    async def scenario(url, token, server, store):
        parts = urlsplit(url)
        body = json.dumps(_configmap("slow")).encode()

        async def trickle() -> tuple[int, dict, bytes, bool]:
            reader, writer = await asyncio.open_connection(parts.hostname, parts.port)
            writer.write((f"POST /api/v1/namespaces/default/configmaps HTTP/1.1\r\n"
                          f"Host: {parts.netloc}\r\nAuthorization: Bearer {token}\r\n"
                          f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n").encode())
            answer = asyncio.ensure_future(_read_response(reader))
            for i in range(len(body)):
                if answer.done():
                    break
                writer.write(body[i:i + 1])
                await writer.drain()
                await asyncio.wait({answer}, timeout=0.1)
            status, headers, payload = await answer
            closed = await reader.read() == b""      # the server closes the connection
            writer.close()
            return status, headers, payload, closed

        results = await asyncio.gather(*(trickle() for _ in range(20)))
        listed = store.list("configmaps", namespace="default").items
        return results, listed

    results, listed = run(tmp_path, scenario, request_timeout=1.0)
    for status, headers, payload, closed in results:
        assert status == 504
        assert json.loads(payload) == {
            "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": "Timeout: request did not complete within the allotted timeout",
            "reason": "Timeout", "details": {}, "code": 504}
        assert closed
    assert [o["metadata"]["name"] for o in listed if o["metadata"]["name"] == "slow"] == []


def test_a_body_sent_in_time_is_served_and_watches_have_no_request_deadline(tmp_path):
    """The limit takes nothing from well-behaved clients: a body sent at once is served, and
    a watch (long-running, no deadline upstream either) outlives the request timeout."""
    async def scenario(url, token, server, store):
        headers = {"Authorization": f"Bearer {token}"}
        async with ClientSession(headers=headers) as session:
            async with session.get(url + "/api/v1/namespaces/default/configmaps?watch=true") as watch:
                await asyncio.sleep(1.5)        # past the 1 s request timeout
                async with session.post(url + "/api/v1/namespaces/default/configmaps",
                                        json=_configmap("fast")) as created:
                    code = created.status
                line = await asyncio.wait_for(watch.content.readline(), 10)
        return code, json.loads(line)

    code, event = run(tmp_path, scenario, request_timeout=1.0)
    assert code == 201
    assert (event["type"], event["object"]["metadata"]["name"]) == ("ADDED", "fast")
