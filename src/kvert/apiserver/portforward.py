"""``pods/NAME/portforward``, as kube-apiserver serves it: the pod's node, then the
connections (``kvert.client.httpstream.portforward``: SPDY, SPDY tunnelled in a WebSocket,
or WebSocket channels) dialled inside the pod by its node agent, in this process or
through its kubelet endpoint (``kvert.apiserver.kubeletclient``).
"""

from __future__ import annotations

from aiohttp import web

from kvert.api.errors import BadRequest
from kvert.apiserver import kubeletclient
from kvert.apiserver.context import ServerContext
from kvert.apiserver.requestinfo import RequestInfo
from kvert.client.httpstream import portforward


async def serve(server: ServerContext, request: web.Request, info: RequestInfo) -> web.StreamResponse:
    pod = server.registry.get("pods", info.name, info.namespace)
    node = (pod.get("spec") or {}).get("nodeName")
    if not node:
        raise BadRequest(f"pod {info.name} does not have a host assigned")
    target = kubeletclient.node_target(server, node)

    async def dial(port: int):
        return await target.port_forward(info.namespace, info.name, port)
    return await portforward.serve(request, dial, info.name, (pod.get("metadata") or {}).get("uid", ""))
