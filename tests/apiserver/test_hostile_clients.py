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
import copy
import json
import socket
from urllib.parse import urlsplit

from aiohttp import ClientSession, TCPConnector

from kvert.apiserver.admission import default_chain
from kvert.apiserver.inflight import InflightLimit
from kvert.apiserver.responses import encode_chunks, encode_json
from kvert.apiserver.server import ApiServer
from kvert.auth.tokens import ADMIN, TokenAuthenticator
from kvert.clock import WallClock
from kvert.store import open_store


def run(tmp_path, scenario, *, request_timeout: float = 60.0, inflight: InflightLimit | None = None,
        user: str = ADMIN):
    async def main():
        store = open_store("memory", clock=WallClock())
        tokens = TokenAuthenticator.load_or_create(tmp_path / "tokens.csv")
        server = ApiServer(store, WallClock(), authenticator=tokens, seed=1,
                           admission=default_chain(store, WallClock()))
        server.request_timeout = request_timeout
        if inflight is not None:
            server.inflight = inflight
        await server.bootstrap()
        url = await server.start("127.0.0.1", 0)
        # an ordinary user: system:masters is served over the in-flight limits
        token = tokens.ensure("mallory") if user == "mallory" else tokens.token_for(ADMIN)
        try:
            return await scenario(url, token, server, store)
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
            # the server closes the connection: an end of stream, or a reset when the kernel
            # still held body bytes the server never read (both mean closed)
            try:
                closed = await reader.read() == b""
            except ConnectionResetError:
                closed = True
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


# ---- watchers that stop reading -------------------------------------------------------------

BIG = "x" * 200_000          # so a few events fill the sockets' buffers


async def _stalled_watch(url: str, token: str, query: str) -> socket.socket:
    """A watch whose client sends its request and then never reads (a tiny receive window)."""
    parts = urlsplit(url)
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.setblocking(False)
    loop = asyncio.get_running_loop()
    await loop.sock_connect(sock, (parts.hostname, parts.port))
    await loop.sock_sendall(sock, (f"GET /api/v1/namespaces/default/configmaps?watch=true&{query} HTTP/1.1\r\n"
                                   f"Host: {parts.netloc}\r\nAuthorization: Bearer {token}\r\n\r\n").encode())
    return sock


async def _wait_for(condition, what: str) -> None:
    for _ in range(500):
        if condition():
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"never: {what}")


def _reset(sock: socket.socket) -> bool:
    """Whether the server cut the connection (reading what is left ends in EOF or a reset)."""
    sock.setblocking(True)
    sock.settimeout(10)
    try:
        while sock.recv(1 << 20):
            pass
    except ConnectionResetError:
        return True
    except TimeoutError:
        return False
    return True


def test_watchers_that_stop_reading_are_dropped_and_the_others_get_every_event(tmp_path):
    """The attack: watchers that send their request and never read while the resource is
    written (issue 27: +140 MB for 50 of them over 12 000 writes, growing). Now no watch
    queues more than the bound, each stalled one is cut off and counted in
    apiserver_terminated_watchers_total, and a watcher that reads gets every event."""
    writes = 60

    async def scenario(url, token, server, store):
        server.watches.max_pending = 10
        start = str(store.current_revision())
        stalled = [await _stalled_watch(url, token, f"resourceVersion={start}") for _ in range(5)]
        headers = {"Authorization": f"Bearer {token}"}
        most_pending = 0
        async with ClientSession(headers=headers) as session:
            async with session.get(url + f"/api/v1/namespaces/default/configmaps?watch=true"
                                         f"&resourceVersion={start}") as reader:
                await _wait_for(lambda: len(server.watches._active) == 6, "six watches served")
                seen: list[str] = []

                async def read() -> None:
                    while len(seen) < writes:
                        event = json.loads(await reader.content.readline())
                        seen.append(event["object"]["metadata"]["name"])
                reading = asyncio.ensure_future(read())
                for i in range(writes):
                    async with session.post(url + "/api/v1/namespaces/default/configmaps",
                                            json=_configmap(f"cm-{i}", BIG)) as created:
                        assert created.status == 201
                    most_pending = max([most_pending, *(w.pending() for w in server.watches._active)])
                await asyncio.wait_for(reading, 30)
                async with session.get(url + "/metrics") as metrics:
                    exposed = await metrics.text()
        cut = [_reset(sock) for sock in stalled]
        for sock in stalled:
            sock.close()
        return most_pending, seen, dict(server.watches.terminated), cut, exposed

    most_pending, seen, terminated, cut, exposed = run(tmp_path, scenario)
    assert most_pending <= 10 + 1                     # the bound, and the event that crossed it
    assert seen == [f"cm-{i}" for i in range(writes)]
    assert terminated == {("", "configmaps"): 5}
    assert cut == [True] * 5
    assert 'apiserver_terminated_watchers_total{group="",resource="configmaps"} 5' in exposed


def test_a_dropped_watcher_rewatching_from_its_version_gets_every_event_or_410(tmp_path):
    """After the cut the client does what client-go's reflector does: watch again from the
    last resourceVersion it saw. It is replayed every event since; once that version is
    compacted it gets 410 Expired instead (an ERROR event, then it relists)."""
    writes = 40

    async def scenario(url, token, server, store):
        server.watches.max_pending = 5
        start = str(store.current_revision())
        sock = await _stalled_watch(url, token, f"resourceVersion={start}")
        await _wait_for(lambda: len(server.watches._active) == 1, "the watch served")
        headers = {"Authorization": f"Bearer {token}"}
        async with ClientSession(headers=headers) as session:
            for i in range(writes):
                async with session.post(url + "/api/v1/namespaces/default/configmaps",
                                        json=_configmap(f"cm-{i}", BIG)) as created:
                    assert created.status == 201
            assert server.watches.terminated[("", "configmaps")] == 1
            sock.close()
            replayed: list[str] = []
            async with session.get(url + f"/api/v1/namespaces/default/configmaps?watch=true"
                                         f"&resourceVersion={start}") as again:
                while len(replayed) < writes:
                    event = json.loads(await asyncio.wait_for(again.content.readline(), 10))
                    replayed.append(event["object"]["metadata"]["name"])
            store.compact(store.current_revision())
            async with session.get(url + f"/api/v1/namespaces/default/configmaps?watch=true"
                                         f"&resourceVersion={start}") as expired:
                gone = json.loads(await asyncio.wait_for(expired.content.readline(), 10))
                code = expired.status
        return replayed, code, gone

    replayed, code, gone = run(tmp_path, scenario)
    assert replayed == [f"cm-{i}" for i in range(writes)]
    assert code == 200
    assert gone["type"] == "ERROR"
    assert (gone["object"]["code"], gone["object"]["reason"]) == (410, "Expired")


# ---- a flood of parallel LISTs ----------------------------------------------------------------


async def _stalled_list(url: str, token: str) -> socket.socket:
    """A LIST whose client never reads its (several MB) answer."""
    parts = urlsplit(url)
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.setblocking(False)
    loop = asyncio.get_running_loop()
    await loop.sock_connect(sock, (parts.hostname, parts.port))
    await loop.sock_sendall(sock, (f"GET /api/v1/namespaces/default/configmaps HTTP/1.1\r\n"
                                   f"Host: {parts.netloc}\r\nAuthorization: Bearer {token}\r\n\r\n").encode())
    return sock


def test_1200_parallel_lists_get_200s_and_429s_and_no_5xx(tmp_path):
    """The attack: 1 200 parallel LISTs of 300 objects (issue 27: 97 MB to 2.05 GB, never a
    429). A LIST's answer is now sent from within its in-flight slot, so the answers held
    for readers that do not take them are bounded by --max-requests-inflight: with every
    slot held by such readers, all 1 200 get 429 with Retry-After 1 at once; once they are
    gone, a flood gets 200s (300 items each) and 429s, never a 5xx."""
    limit = 5
    # 300 objects of 50 KB: an answer of 15 MB, far more than loopback's socket buffers
    # (tcp_wmem up to 4 MiB) can take from a reader that never reads, so the slot stays held

    async def scenario(url, token, server, store):
        for i in range(300):
            store.create("configmaps", {**_configmap(f"cm-{i}", "y" * 50_000),
                                        "metadata": {"name": f"cm-{i}", "namespace": "default"}})
        stalled = [await _stalled_list(url, token) for _ in range(limit)]
        await _wait_for(lambda: server.inflight.in_flight[False] == limit, "the slots held")
        headers = {"Authorization": f"Bearer {token}"}

        async def list_once(session: ClientSession) -> tuple[int, str | None, int]:
            async with session.get(url + "/api/v1/namespaces/default/configmaps") as r:
                if r.status == 200:
                    return r.status, None, len((await r.json())["items"])
                return r.status, r.headers.get("Retry-After"), len(await r.read())

        async with ClientSession(headers=headers, connector=TCPConnector(limit=0)) as session:
            flooded = await asyncio.gather(*(list_once(session) for _ in range(1200)))
            held = server.inflight.in_flight[False]
            for sock in stalled:
                sock.close()
            await _wait_for(lambda: server.inflight.in_flight[False] == 0, "the slots released")
            after = await asyncio.gather(*(list_once(session) for _ in range(20)))
        return flooded, held, after

    flooded, held, after = run(tmp_path, scenario, inflight=InflightLimit(read_only=limit, mutating=limit),
                               user="mallory")
    assert {(code, retry) for code, retry, _ in flooded} == {(429, "1")}
    assert held == limit
    codes = {code for code, _, _ in after}
    assert 200 in codes and codes <= {200, 429}
    assert {n for code, _, n in after if code == 200} == {300}
    assert all(retry == "1" for code, retry, _ in after if code == 429)


def test_a_list_sent_in_chunks_is_byte_for_byte_the_one_encoded_at_once():
    """Streaming changes nothing a client sees: the chunks join into the same JSON (Go's
    escapes included), and the decoded items are let go of as they are encoded."""
    items = [{"metadata": {"name": f"o-{i}"}, "data": {"d": "<&>\u2028" + "z" * 3000}} for i in range(100)]
    body = {"apiVersion": "v1", "kind": "ConfigMapList", "metadata": {"resourceVersion": "7"},
            "items": items}
    whole = encode_json(body)
    chunks = encode_chunks(dict(body, items=list(items)))
    assert len(chunks) > 1 and b"".join(chunks) == whole
    for empty in ({"kind": "List", "items": []}, {"items": [{"a": 1}]}, {"rows": [1], "z": 2}):
        assert b"".join(encode_chunks(copy.deepcopy(empty))) == encode_json(empty)
    kept = list(items)
    encode_chunks({"items": kept})
    assert kept == [None] * 100
