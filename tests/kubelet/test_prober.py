"""Container probes (kvert.kubelet.prober): thresholds, initial delay and the startup gate as the
kubelet's prober workers keep them, the HTTP and TCP checks' results and messages, and, for
real processes under cgroupfs, a pod that is Ready only once its readiness probe passes and a
container restarted when its liveness probe fails."""

from __future__ import annotations

import asyncio
import json
import os
import sys

import pytest

from kvert.clock import VirtualClock, WallClock
from kvert.kubelet.prober import Prober, http_probe, tcp_probe
from kvert.kubelet.runtime.cgroupfs import CgroupfsRuntime, unavailable

from tests.kubelet.test_agent_support import cluster, events, run_pod, start_agent, stop, wait_for


class ExecRuntime:
    """Exec probes answer what ``results`` says next (True: exit 0)."""

    def __init__(self):
        self.result = True
        self.calls = 0

    async def exec(self, container_id, command, io):
        self.calls += 1
        return 0 if self.result else 1


def _prober(kind, **probe):
    clock = VirtualClock()
    runtime = ExecRuntime()
    events: list[str] = []

    async def event(type_, reason, message):
        events.append(message)
    prober = Prober(clock, runtime, lambda: None, event)
    spec = {"name": "c", f"{kind}Probe": {"exec": {"command": ["/bin/true"]}, "periodSeconds": 1, **probe}}
    return clock, runtime, prober, spec, events


def test_failure_threshold():
    # upstream: TestFailureThreshold (pkg/kubelet/prober/worker_test.go): readiness with
    # successThreshold 1, failureThreshold 3; one probe a second, each result read between two
    clock, runtime, prober, spec, _ = _prober("readiness", successThreshold=1, failureThreshold=3)

    async def main():
        prober.update([(spec, "cid", clock.now())])        # the first probe at once
        await clock.sleep(0.5)
        for i in range(2):
            runtime.result = True
            for j in range(3):
                if i or j:
                    await clock.sleep(1)
                assert prober.ready("cid"), (i, j, "success")
            runtime.result = False
            for j in range(2):
                await clock.sleep(1)
                assert prober.ready("cid"), (i, j, "failing")
            for j in range(3):
                await clock.sleep(1)
                assert not prober.ready("cid"), (i, j, "failure")
        prober.stop()
    clock.run(main())


def test_success_threshold():
    # upstream: TestSuccessThreshold (pkg/kubelet/prober/worker_test.go): successThreshold 3,
    # failureThreshold 1, starting out failed
    clock, runtime, prober, spec, _ = _prober("readiness", successThreshold=3, failureThreshold=1)

    async def main():
        prober.update([(spec, "cid", clock.now())])
        await clock.sleep(0.5)
        for i in range(2):
            runtime.result = True
            for j in range(2):
                if i or j:
                    await clock.sleep(1)
                assert not prober.ready("cid"), (i, j, "success below the threshold")
            for j in range(3):
                await clock.sleep(1)
                assert prober.ready("cid"), (i, j, "success")
            runtime.result = False
            await clock.sleep(1)
            assert not prober.ready("cid"), (i, "1 failure")
        prober.stop()
    clock.run(main())


@pytest.mark.parametrize(("kind", "before"), [("readiness", False), ("liveness", True)])
def test_initial_delay(kind, before):
    # upstream: TestInitialDelay (pkg/kubelet/prober/worker_test.go): nothing is probed during
    # initialDelaySeconds; readiness is failure meanwhile, liveness success
    clock, runtime, prober, spec, _ = _prober(kind, initialDelaySeconds=10)

    async def main():
        prober.update([(spec, "cid", clock.now())])
        await clock.sleep(9.5)
        assert runtime.calls == 0
        assert prober.ready("cid") is before and not prober.failed("cid")
        await clock.sleep(1)
        assert runtime.calls == 1 and prober.ready("cid") and not prober.failed("cid")
        prober.stop()
    clock.run(main())


def test_liveness_and_readiness_wait_for_the_startup_probe():
    # upstream: TestStartupProbeDisabledByStarted / the worker's "startup probe not
    # succeeded" gate (pkg/kubelet/prober/worker.go): until it passes the container is not
    # started, not ready, and its liveness probe does not run
    clock = VirtualClock()
    runtime = ExecRuntime()
    runtime.result = False
    messages: list[str] = []

    async def event(type_, reason, message):
        messages.append(f"{reason}: {message}")
    prober = Prober(clock, runtime, lambda: None, event)
    spec = {"name": "c", "startupProbe": {"exec": {"command": ["check"]}, "periodSeconds": 1, "failureThreshold": 5},
            "livenessProbe": {"exec": {"command": ["check"]}, "periodSeconds": 1, "failureThreshold": 1}}

    async def main():
        prober.update([(spec, "cid", clock.now())])
        await clock.sleep(2.5)
        assert not prober.started("cid") and not prober.ready("cid") and not prober.failed("cid")
        assert messages and all(m.startswith("Unhealthy: Startup probe failed") for m in messages)
        runtime.result = True
        await clock.sleep(1)
        assert prober.started("cid") and prober.ready("cid")
        runtime.result = False
        await clock.sleep(2)
        assert prober.failed("cid") == "liveness"
        prober.stop()
    clock.run(main())


def test_startup_failure_restarts_the_container():
    # upstream: a startup probe past its failureThreshold kills the container (worker.go:
    # "startup probe failed, will be restarted")
    clock, runtime, prober, spec, events = _prober("startup", failureThreshold=3)
    runtime.result = False

    async def main():
        prober.update([(spec, "cid", clock.now())])
        await clock.sleep(1.5)
        assert prober.failed("cid") == ""
        await clock.sleep(1)
        assert prober.failed("cid") == "startup"
        assert events == ["Startup probe failed: "] * 3
        prober.stop()
    clock.run(main())


# ---- the checks ---------------------------------------------------------------------------

async def _server(status: int):
    async def handle(reader, writer):
        request = await reader.readuntil(b"\r\n\r\n")
        body = json.dumps({"request": request.decode()}).encode()
        writer.write(f"HTTP/1.1 {status} X\r\nContent-Length: {len(body)}\r\n\r\n".encode() + body)
        await writer.drain()
        writer.close()
    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    return server, server.sockets[0].getsockname()[1]


@pytest.mark.parametrize(("status", "ok"), [(200, True), (204, True), (302, True), (400, False), (500, False)])
def test_http_probe_status_codes(status, ok):
    # upstream: TestHTTPProbeChecker (pkg/probe/http/http_test.go): 2xx and 3xx succeed, the
    # rest fail with "HTTP probe failed with statuscode: N"; the User-Agent is kube-probe/<version>
    async def main():
        server, port = await _server(status)
        try:
            container = {"name": "c", "ports": [{"name": "web", "containerPort": port}]}
            result, output = await http_probe({"path": "/health-check", "port": "web",
                                               "httpHeaders": [{"name": "X-Probe", "value": "1"}]}, container, 1.0)
        finally:
            server.close()
        assert result is ok
        if ok:
            request = json.loads(output)["request"]
            assert request.startswith("GET /health-check HTTP/1.1\r\n")
            assert "User-Agent: kube-probe/1.36\r\n" in request and "X-Probe: 1\r\n" in request
        else:
            assert output == f"HTTP probe failed with statuscode: {status}"
    asyncio.run(main())


def test_refused_connections():
    # upstream: TestHTTPProbeChecker's "connection refused" and TestTcpHealthChecker
    # (pkg/probe/tcp/tcp_test.go): Go's dial error is the output
    async def main():
        server, port = await _server(200)
        server.close()
        await server.wait_closed()
        result, output = await http_probe({"path": "/x", "port": port}, {}, 1.0)
        assert (result, output) == (False, f'Get "http://127.0.0.1:{port}/x": dial tcp 127.0.0.1:{port}: '
                                           f'connect: connection refused')
        assert await tcp_probe({"port": port}, {}, 1.0) == \
            (False, f"dial tcp 127.0.0.1:{port}: connect: connection refused")
        server, port = await _server(200)
        try:
            assert (await tcp_probe({"port": port}, {}, 1.0))[0]
        finally:
            server.close()
    asyncio.run(main())


# ---- for real ------------------------------------------------------------------------------

@pytest.mark.skipif(unavailable() is not None, reason=f"needs root and a cgroup filesystem: {unavailable()}")
def test_a_real_process_is_ready_once_its_probe_passes_and_restarted_when_liveness_fails(tmp_path):
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    flag = tmp_path / "alive"
    flag.write_text("yes")
    clock = WallClock()

    async def main():
        client = await cluster(clock)
        runtime = CgroupfsRuntime.open(clock, f"probe-{os.getpid()}", tmp_path / "node")
        agent, task = await start_agent(client, clock, runtime, checkpoint_dir=tmp_path / "node")
        try:
            server = (f"import http.server, os\nclass H(http.server.BaseHTTPRequestHandler):\n"
                      f"  def do_GET(self):\n"
                      f"    self.send_response(200 if os.path.exists({str(flag)!r}) else 500); self.end_headers()\n"
                      f"http.server.HTTPServer(('127.0.0.1', {port}), H).serve_forever()\n")
            body = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web", "namespace": "default"},
                    "spec": {"terminationGracePeriodSeconds": 1, "containers": [{
                        "name": "c", "image": "python", "command": ["sh", "-c", f"sleep 1; exec {sys.executable} -c \"$0\"",
                                                                     server],
                        "ports": [{"name": "http", "containerPort": port}],
                        "readinessProbe": {"httpGet": {"path": "/", "port": "http"}, "periodSeconds": 1},
                        "livenessProbe": {"httpGet": {"path": "/", "port": port}, "periodSeconds": 1,
                                          "failureThreshold": 2, "initialDelaySeconds": 1}}]}}
            await run_pod(client, body)

            async def status():
                return ((await client.get("pods", "web", "default")).get("status") or {})

            async def ready():
                conditions = {c["type"]: c["status"] for c in (await status()).get("conditions") or []}
                return conditions.get("Ready")
            # running at once, ready only after the server answers
            await wait_for(clock, lambda: _running(status), timeout=20, step=0.1, what="running")
            assert await ready() == "False"
            await wait_for(clock, lambda: _is(ready, "True"), timeout=20, step=0.2, what="ready")
            flag.unlink()
            await wait_for(clock, lambda: _is(ready, "False"), timeout=20, step=0.2, what="unready")
            killed = await wait_for(clock, lambda: events(client, "web", "Killing"), timeout=20, what="killed")
            assert killed[0]["message"] == "Container c failed liveness probe, will be restarted"
            unhealthy = {e["message"] for e in await events(client, "web", "Unhealthy")}
            assert "Liveness probe failed: HTTP probe failed with statuscode: 500" in unhealthy
            flag.write_text("yes")

            async def restarted():
                statuses = (await status()).get("containerStatuses") or [{}]
                return statuses[0].get("restartCount", 0) >= 1 and statuses[0].get("ready")
            await wait_for(clock, restarted, timeout=40, step=0.2, what="restarted and ready")
        finally:
            await stop(agent, task)
    asyncio.run(main())


async def _running(status):
    statuses = (await status()).get("containerStatuses") or [{}]
    return "running" in (statuses[0].get("state") or {})


async def _is(check, value):
    return await check() == value
