"""``pods/NAME/exec`` and ``pods/NAME/attach``, as kube-apiserver serves them: the options
(``PodExecOptions`` / ``PodAttachOptions``), the container chosen as ``pod.ExecLocation``
chooses it, then the streams (``kvert.client.httpstream.remotecommand``: WebSocket channels
or SPDY) to the node agent's runtime. The node provider (``ApiServer.metrics_provider``)
answers for node agents in this process; a node agent run elsewhere is reached through its
kubelet endpoint (``kvert.apiserver.kubeletclient``).
"""

from __future__ import annotations

from typing import Any

from aiohttp import web

from kvert.api.errors import BadRequest
from kvert.apiserver import kubeletclient
from kvert.apiserver.context import ServerContext
from kvert.apiserver.podlogs import choose_container
from kvert.apiserver.requestinfo import RequestInfo
from kvert.client.httpstream import remotecommand
from kvert.client.httpstream.remotecommand import StreamOptions, stream_options


def _target(server: ServerContext, info: RequestInfo, opts: StreamOptions,
            verb: str) -> tuple[str, str]:
    pod = server.registry.get("pods", info.name, info.namespace)
    container = choose_container(pod, opts.container)
    phase = (pod.get("status") or {}).get("phase", "")
    if phase in ("Succeeded", "Failed"):
        raise BadRequest(f"cannot {verb} a container in a completed pod; current phase is {phase}")
    node = (pod.get("spec") or {}).get("nodeName")
    if not node:
        raise BadRequest(f"pod {info.name} does not have a host assigned")
    return node, container


async def serve(server: ServerContext, request: web.Request, info: RequestInfo) -> web.StreamResponse:
    exec_ = info.subresource == "exec"
    opts = stream_options(request.query, exec_=exec_)
    node, container = _target(server, info, opts, "exec into" if exec_ else "attach to")
    target = kubeletclient.node_target(server, node)

    async def run(io: Any) -> dict:
        async def do_exec(command, io):
            return await target.exec(info.namespace, info.name, container, command, io)

        async def do_attach(io):
            await target.attach(info.namespace, info.name, container, io)
        return await remotecommand.run_exec(do_exec if exec_ else None, do_attach, opts, io)
    return await remotecommand.serve(request, opts, run)
