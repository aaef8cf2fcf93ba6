"""``--max-requests-inflight`` / ``--max-mutating-requests-inflight`` (issue 27: 1 200 parallel
LISTs were all served at once, never a 429). Expected values: kube-apiserver's
WithMaxInFlightLimit (staging/src/k8s.io/apiserver/pkg/server/filters/maxinflight.go and
maxinflight_test.go): requests over the limit get 429 with Retry-After 1, long-running ones are
not counted, system:masters is always served."""

from __future__ import annotations

import asyncio

import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer, make_mocked_request

from kvert.apiserver.inflight import InflightLimit, is_long_running
from kvert.apiserver.requestinfo import USER
from kvert.auth.user import User

ALICE = User("alice", "", ("system:authenticated",))
ADMIN = User("admin", "", ("system:masters", "system:authenticated"))


def run(limit: InflightLimit, scenario):
    release = asyncio.Event()
    entered: list[str] = []

    @web.middleware
    async def who(request: web.Request, handler):
        request[USER] = ADMIN if request.headers.get("X-User") == "admin" else ALICE
        return await handler(request)

    async def slow(request: web.Request) -> web.Response:
        entered.append(request.path)
        await release.wait()
        return web.Response(text="done")

    async def main():
        app = web.Application(middlewares=[who, limit.middleware])
        app.router.add_route("*", "/{tail:.*}", slow)
        async with TestClient(TestServer(app)) as client:
            return await scenario(client, release, entered)
    return asyncio.run(main())


async def _wait_entered(entered: list, n: int) -> None:
    for _ in range(200):
        if len(entered) >= n:
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"only {len(entered)} requests reached the handler")


def test_read_only_requests_over_the_limit_get_429():
    async def scenario(client, release, entered):
        held = [asyncio.ensure_future(client.get("/api/v1/pods")) for _ in range(2)]
        await _wait_entered(entered, 2)
        refused = await client.get("/api/v1/pods")
        body = await refused.text()
        # mutating requests have their own count
        writing = asyncio.ensure_future(client.post("/api/v1/namespaces/default/pods"))
        await _wait_entered(entered, 3)
        release.set()
        codes = [(await r).status for r in held] + [(await writing).status]
        return refused.status, refused.headers.get("Retry-After"), body, codes
    status, retry_after, body, codes = run(InflightLimit(read_only=2, mutating=1), scenario)
    assert (status, retry_after) == (429, "1")
    assert body == "Too many requests, please try again later.\n"
    assert codes == [200, 200, 200]


def test_mutating_limit_and_masters_and_long_running():
    async def scenario(client, release, entered):
        held = asyncio.ensure_future(client.post("/api/v1/namespaces/default/pods"))
        await _wait_entered(entered, 1)
        refused = await client.delete("/api/v1/namespaces/default/pods/x")
        admin = asyncio.ensure_future(client.delete("/api/v1/namespaces/default/pods/y",
                                                    headers={"X-User": "admin"}))
        watch = asyncio.ensure_future(client.get("/api/v1/pods?watch=true"))
        logs = asyncio.ensure_future(client.get("/api/v1/namespaces/default/pods/x/log"))
        await _wait_entered(entered, 4)          # admin, the watch and the logs got in
        release.set()
        return refused.status, [(await r).status for r in (held, admin, watch, logs)]
    refused, codes = run(InflightLimit(read_only=0, mutating=1), scenario)
    assert refused == 429
    assert codes == [200, 200, 200, 200]


def test_zero_is_no_limit_and_negative_is_refused():
    async def scenario(client, release, entered):
        many = [asyncio.ensure_future(client.get("/api/v1/pods")) for _ in range(20)]
        await _wait_entered(entered, 20)
        release.set()
        return [(await r).status for r in many]
    assert run(InflightLimit(read_only=0, mutating=0), scenario) == [200] * 20
    with pytest.raises(ValueError, match="must not be negative"):
        InflightLimit(read_only=-1)


@pytest.mark.parametrize("path,long_running", [
    ("/api/v1/pods?watch=1", True), ("/api/v1/watch/pods", True),
    ("/api/v1/namespaces/d/pods/p/exec", True), ("/api/v1/namespaces/d/pods/p/attach", True),
    ("/api/v1/namespaces/d/pods/p/portforward", True), ("/api/v1/namespaces/d/pods/p/log", True),
    ("/api/v1/nodes/n/proxy/metrics", True),
    ("/api/v1/pods", False), ("/api/v1/namespaces/d/pods/p/status", False), ("/healthz", False),
])
def test_long_running_requests(path, long_running):
    # upstream: BasicLongRunningRequestCheck(sets.NewString("watch", "proxy"),
    # sets.NewString("attach", "exec", "proxy", "log", "portforward"))
    assert is_long_running(make_mocked_request("GET", path)) is long_running


def test_the_flags_reach_the_api_server(tmp_path):
    from kvert.cli.main import build_parser
    from kvert.cluster.live import ApiServerProcess

    args = build_parser().parse_args(["apiserver", "--max-requests-inflight", "7",
                                      "--max-mutating-requests-inflight", "0"])
    assert (args.max_requests_inflight, args.max_mutating_requests_inflight) == (7, 0)
    assert build_parser().parse_args(["up"]).max_requests_inflight == 400     # upstream's defaults
    assert build_parser().parse_args(["up"]).max_mutating_requests_inflight == 200
    with pytest.raises(SystemExit):
        build_parser().parse_args(["up", "--max-requests-inflight", "-1"])

    async def main():
        process = ApiServerProcess(data_dir=tmp_path / "d", store_url="memory", port=0,
                                   max_requests_inflight=7, max_mutating_requests_inflight=0)
        await process.start()
        try:
            return dict(process.server.inflight.limits)
        finally:
            await process.stop()
    assert asyncio.run(main()) == {False: 7, True: 0}
