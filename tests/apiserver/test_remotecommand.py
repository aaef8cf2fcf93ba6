"""pods/exec and pods/attach over WebSocket channels, each protocol version, against a
stand-in node provider. Expected bytes: the channel framing of
k8s.io/apimachinery/pkg/util/httpstream/wsstream (one channel byte, or an ASCII digit and
base64 in the base64 protocols; v5's [255, channel] close), the v4 error channel's Status
as the kubelet's remotecommand server writes it (ServeExec: NonZeroExitCode with an
ExitCode cause), and SetDefaults_PodExecOptions (stdout and stderr on)."""

from __future__ import annotations

import asyncio
import base64
import json
from types import SimpleNamespace

import pytest
from aiohttp import WSMsgType, web
from aiohttp.test_utils import TestClient, TestServer
from multidict import MultiDict

from kvert.api.errors import ApiError, BadRequest
from kvert.apiserver import remotecommand
from kvert.apiserver.remotecommand import stream_options

POD = {"metadata": {"name": "web", "namespace": "default"},
       "spec": {"nodeName": "node-1", "containers": [{"name": "app"}]}, "status": {"phase": "Running"}}


class _Provider:
    """Runs a tiny fake process: echoes stdin to stdout upper-cased, says where it ran."""

    def nodes(self):
        return ["node-1"]

    async def exec(self, node, namespace, pod, container, command, io):
        if command[0] == "fail":
            return int(command[1])
        await io.write_stdout(f"{container}@{node}: {' '.join(command)}\n".encode())
        await io.write_stderr(b"to stderr\n")
        while (chunk := await io.read_stdin()) is not None:
            await io.write_stdout(chunk.upper())
        size = await io.next_resize()
        if size is not None:
            await io.write_stdout(f"size {size[0]}x{size[1]}\n".encode())
        return 0

    async def attach(self, node, namespace, pod, container, io):
        await io.write_stdout(b"attached\n")


def _app() -> web.Application:
    server = SimpleNamespace(registry=SimpleNamespace(get=lambda *a: POD), metrics_provider=_Provider())

    async def handler(request):
        info = SimpleNamespace(name="web", namespace="default", subresource=request.match_info["sub"])
        try:
            return await remotecommand.serve(server, request, info)
        except ApiError as e:
            return web.json_response(e.to_status(), status=e.code)
    app = web.Application()
    app.router.add_route("*", "/api/v1/namespaces/default/pods/web/{sub}", handler)
    return app


async def _session(query, protocol, send=()):
    async with TestClient(TestServer(_app())) as client:
        ws = await client.ws_connect(f"/api/v1/namespaces/default/pods/web/exec?{query}",
                                     protocols=[protocol])
        assert ws.protocol == protocol
        for message in send:
            await (ws.send_str(message) if isinstance(message, str) else ws.send_bytes(message))
        received = []
        async for msg in ws:
            if msg.type in (WSMsgType.BINARY, WSMsgType.TEXT):
                received.append(msg.data)
        return received


def _channels(messages):
    out: dict[int, bytes] = {}
    for m in messages:
        out[m[0]] = out.get(m[0], b"") + m[1:]
    return out


def test_v5_exec_with_stdin_closed_by_the_close_signal():
    got = _channels(asyncio.run(_session("command=cat&stdin=true", "v5.channel.k8s.io",
                                         send=[b"\x00hello", b"\xff\x00"])))
    assert got[1] == b"app@node-1: cat\nHELLO"
    assert got[2] == b"to stderr\n"
    assert json.loads(got[3]) == {"metadata": {}, "status": "Success"}


def test_v4_exit_code_status():
    got = _channels(asyncio.run(_session("command=fail&command=3", "v4.channel.k8s.io")))
    assert got[3] == (b'{"metadata":{},"status":"Failure","message":"command terminated with non-zero '
                      b'exit code: error executing command [fail 3], exit code 3","reason":"NonZeroExitCode",'
                      b'"details":{"causes":[{"reason":"ExitCode","message":"3"}]}}')


def test_tty_merges_stderr_and_reports_resizes():
    got = _channels(asyncio.run(_session(
        "command=sh&tty=true&stderr=false", "v4.channel.k8s.io",
        send=[b'\x04{"Width":120,"Height":40}'])))
    assert got[1] == b"app@node-1: sh\nto stderr\nsize 120x40\n"
    assert 2 not in got


def test_base64_protocol():
    messages = asyncio.run(_session("command=echo", "v4.base64.channel.k8s.io"))
    assert all(isinstance(m, str) for m in messages)
    decoded = {int(m[0]): base64.b64decode(m[1:]) for m in messages if m[0] in "12"}
    assert decoded[1] == b"app@node-1: echo\n"


def test_v1_writes_only_an_error_text():
    got = _channels(asyncio.run(_session("command=fail&command=2", "channel.k8s.io")))
    assert got[3].startswith(b"command terminated with non-zero exit code")


def test_options_defaults_and_refusals():
    opts = stream_options(MultiDict(command="ls"), exec_=True)
    assert (opts.stdin, opts.stdout, opts.stderr, opts.tty) == (False, True, True, False)
    with pytest.raises(BadRequest, match="you must specify at least 1 command"):
        stream_options(MultiDict(), exec_=True)
    with pytest.raises(BadRequest, match="at least 1 of stdin, stdout, stderr"):
        stream_options(MultiDict(command="ls", stdout="false", stderr="false"), exec_=True)


def test_without_an_upgrade_the_request_is_refused():
    async def main():
        async with TestClient(TestServer(_app())) as client:
            answer = await client.post("/api/v1/namespaces/default/pods/web/exec?command=ls")
            return answer.status, await answer.json()
    status, body = asyncio.run(main())
    assert status == 400 and body["message"] == "Upgrade request required"
