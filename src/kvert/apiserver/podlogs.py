"""``GET pods/NAME/log``: a container's log, as kube-apiserver serves it from the kubelet.

The options are ``PodLogOptions`` (``container``, ``follow``, ``previous``, ``sinceSeconds``,
``sinceTime``, ``timestamps``, ``tailLines``, ``limitBytes``), converted and validated as
upstream (``ValidatePodLogOptions``: a 422 ``PodLogOptions`` Invalid), the container chosen
as ``pod.LogLocation`` chooses it (400s with upstream's messages), then the node's agent is
asked, as the API server asks the kubelet's ``/containerLogs``: the node provider
(``ApiServer.metrics_provider``) for node agents in this process, the node agent's kubelet
endpoint for one run elsewhere (``kvert.apiserver.kubeletclient``). ``follow`` streams new
lines until the container ends or the client goes.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass
from typing import Any

from aiohttp import web

from kvert.api.errors import BadRequest, Invalid, NotFound, forbidden, invalid
from kvert.api.meta import parse_time
from kvert.apiserver import kubeletclient
from kvert.apiserver.context import ServerContext
from kvert.apiserver.options import first, parse_bool, parse_int64
from kvert.apiserver.requestinfo import RequestInfo
from kvert.clock import Clock

FOLLOW_POLL_SECONDS = 1.0


@dataclass
class LogOptions:
    container: str = ""
    follow: bool = False
    previous: bool = False
    timestamps: bool = False
    since_seconds: int | None = None
    since_time: float | None = None
    tail_lines: int | None = None
    limit_bytes: int | None = None


def log_options(query: Any, pod_name: str) -> LogOptions:
    def integer(name: str) -> int | None:
        text = first(query, name)
        return None if text is None else parse_int64(text)

    since_time = first(query, "sinceTime")
    options = LogOptions(container=first(query, "container") or "",
                         follow=parse_bool(first(query, "follow")),
                         previous=parse_bool(first(query, "previous")),
                         timestamps=parse_bool(first(query, "timestamps")),
                         since_seconds=integer("sinceSeconds"), tail_lines=integer("tailLines"),
                         limit_bytes=integer("limitBytes"))
    if since_time is not None:
        try:
            options.since_time = parse_time(since_time)
        except ValueError:
            raise BadRequest(f'parsing time "{since_time}" as "2006-01-02T15:04:05Z07:00": cannot '
                             f"parse it as RFC 3339") from None
    causes = []
    if options.tail_lines is not None and options.tail_lines < 0:
        causes.append(invalid("tailLines", options.tail_lines, "must be greater than or equal to 0"))
    if options.limit_bytes is not None and options.limit_bytes < 1:
        causes.append(invalid("limitBytes", options.limit_bytes, "must be greater than 0"))
    if options.since_seconds is not None and options.since_time is not None:
        causes.append(forbidden("", "at most one of `sinceTime` or `sinceSeconds` may be specified"))
    if options.since_seconds is not None and options.since_seconds < 1:
        causes.append(invalid("sinceSeconds", options.since_seconds, "must be greater than 0"))
    if causes:
        raise Invalid("PodLogOptions", pod_name, causes)
    return options


def choose_container(pod: dict, wanted: str) -> str:
    """``LogLocation``'s choice: the named container, or the pod's only one."""
    spec = pod.get("spec") or {}
    name = (pod.get("metadata") or {}).get("name", "")
    names = [c.get("name", "") for c in spec.get("containers") or []]
    inits = [c.get("name", "") for c in spec.get("initContainers") or []]
    ephemeral = [c.get("name", "") for c in spec.get("ephemeralContainers") or []]
    if not wanted:
        if len(names) == 1:
            return names[0]
        message = f"a container name must be specified for pod {name}, choose one of: [{' '.join(names)}]"
        if inits:
            message += f" or one of the init containers: [{' '.join(inits)}]"
        if ephemeral:
            message += f" or one of the ephemeral containers: [{' '.join(ephemeral)}]"
        raise BadRequest(message)
    if wanted not in names and wanted not in inits and wanted not in ephemeral:
        raise BadRequest(f"container {wanted} is not valid for pod {name}")
    return wanted


def _waiting(pod: dict, container: str) -> str:
    """The waiting reason of a container that has not started (the kubelet's refusal)."""
    status = pod.get("status") or {}
    for cs in ((status.get("containerStatuses") or []) + (status.get("initContainerStatuses") or [])
               + (status.get("ephemeralContainerStatuses") or [])):
        if cs.get("name") == container:
            state = cs.get("state") or {}
            if "waiting" in state and not cs.get("lastState", {}).get("terminated"):
                return (state["waiting"] or {}).get("reason", "ContainerCreating")
            return ""
    return "ContainerCreating"


def _select(lines: list[tuple[float, str]], options: LogOptions, now: float) -> list[tuple[float, str]]:
    since = options.since_time
    if options.since_seconds is not None:
        since = now - options.since_seconds
    if since is not None:
        lines = [item for item in lines if item[0] >= since]
    if options.tail_lines is not None:
        lines = lines[-options.tail_lines:] if options.tail_lines else []
    return lines


def _render(lines: list[tuple[float, str]], timestamps: bool) -> str:
    if not timestamps:
        return "".join(f"{text}\n" for _, text in lines)
    return "".join(f"{_nano_time(t)} {text}\n" for t, text in lines)


def _nano_time(t: float) -> str:
    stamp = datetime.datetime.fromtimestamp(t, tz=datetime.UTC)
    return stamp.strftime("%Y-%m-%dT%H:%M:%S.") + f"{stamp.microsecond:06d}000Z"


async def serve(server: ServerContext, request: web.Request, info: RequestInfo) -> web.StreamResponse:
    pod = server.registry.get("pods", info.name, info.namespace)
    options = log_options(request.query, info.name)
    container = choose_container(pod, options.container)
    node = (pod.get("spec") or {}).get("nodeName")
    if not node:
        raise BadRequest(f"pod {info.name} does not have a host assigned")
    target = kubeletclient.node_target(server, node)
    if isinstance(target, kubeletclient.RemoteNode):
        return await target.proxy_log(request, info.namespace, info.name, container)
    log = target.container_log(info.namespace, info.name, container, previous=options.previous)
    if log is None:
        if options.previous:
            raise BadRequest(f'previous terminated container "{container}" in pod "{info.name}" not found')
        waiting = _waiting(pod, container)
        if waiting:
            raise BadRequest(f'container "{container}" in pod "{info.name}" is waiting to start: {waiting}')
        raise NotFound("pods/log", info.name, f'container "{container}" has no log on node "{node}"')
    return await stream_log(request, log, options, server.clock)


async def stream_log(request: web.Request, log: Any, options: LogOptions,
                     clock: Clock) -> web.StreamResponse:
    """A container log (``lines(now, after)``, ``finished_at``) as the options select it,
    followed while the container runs when asked (the kubelet's ``/containerLogs``)."""
    now = clock.now()
    text = _render(_select(log.lines(now), options, now), options.timestamps).encode()
    if options.limit_bytes is not None:
        text = text[:options.limit_bytes]
    if not options.follow or log.finished_at or options.limit_bytes is not None:
        return web.Response(body=text, headers={"Content-Type": "text/plain"})
    response = web.StreamResponse(headers={"Content-Type": "text/plain"})
    await response.prepare(request)
    await response.write(text)
    seen = now
    while not log.finished_at:
        await clock.sleep(FOLLOW_POLL_SECONDS)
        now = clock.now()
        fresh = [item for item in log.lines(now, after=seen) if item[0] <= now]
        seen = now
        if fresh:
            await response.write(_render(fresh, options.timestamps).encode())
    await response.write_eof()
    return response
