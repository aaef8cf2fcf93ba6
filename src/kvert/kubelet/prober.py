"""Container probes (pkg/kubelet/prober): startup, readiness and liveness, run against the
real processes of a runtime that has them (``runtime.real_processes``: cgroupfs), and the
exec probes of a simulated container that runs a program (``runtime.runs_program``); any
other simulated container has no process to ask, and is started and ready once it runs.

One worker per probe of a running container instance (app containers and sidecars), as the
kubelet's prober workers:

* nothing is probed before ``initialDelaySeconds`` have passed since the container
  started, then every ``periodSeconds``, each attempt bounded by ``timeoutSeconds``;
* a readiness result starts as failure, a liveness result as success; it flips after
  ``successThreshold`` / ``failureThreshold`` consecutive results the other way;
* while a startup probe has not succeeded the container is not ``started`` and its other
  probes do not run; once it succeeds it is never run again for that instance;
* a liveness or startup failure means the container is killed and restarted (the pod
  worker does it, ``failed``); each failed attempt is a ``Warning Unhealthy`` event
  (``Readiness probe failed: ...``).

Handlers: ``httpGet`` (HTTP or HTTPS without verification, ``host`` defaulting to
127.0.0.1 since the containers share the host's network; a named port is the container's
``ports[].name``; a 2xx or 3xx answer is success), ``tcpSocket`` (a connection), ``exec``
(the command in the container, exit code 0). ``grpc`` is not probed (success).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import ssl
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kvert.api.version import KUBERNETES_RELEASE
from kvert.clock.base import Clock
from kvert.kubelet.runtime.base import CriError, Runtime

log = logging.getLogger(__name__)

USER_AGENT = f"kube-probe/{KUBERNETES_RELEASE}"  # the kubelet's: kube-probe/<major>.<minor>
PROBE_HOST = "127.0.0.1"
MAX_BODY = 10 * 1024
KINDS = ("startup", "readiness", "liveness")
_FIELDS = {"startup": "startupProbe", "readiness": "readinessProbe", "liveness": "livenessProbe"}

EventSink = Callable[[str, str, str], Awaitable[None]]     # (type, reason, message)


def probes_run(runtime: Runtime) -> bool:
    """Whether the runtime's containers are processes a probe can reach (all of them, or,
    in the simulated runtime, the containers running a program: ``runs_program``)."""
    return bool(getattr(runtime, "real_processes", False)) or callable(getattr(runtime, "runs_program", None))


def _probed_kinds(runtime: Runtime, container_id: str) -> tuple[str, ...]:
    """The probe handlers that run for a container: every one for a real process (or a
    runtime that does not say which of its containers run programs); ``exec`` only for a
    simulated container's program (its ports are not the host's, so an httpGet
    or tcpSocket probe passes as it did before); none for a simulated workload."""
    runs_program = getattr(runtime, "runs_program", None)
    if getattr(runtime, "real_processes", False) or not callable(runs_program):
        return ("httpGet", "tcpSocket", "exec", "grpc")
    return ("exec",) if runs_program(container_id) else ()


@dataclass
class _State:
    """One probe of one container instance."""
    kind: str
    probe: Mapping[str, Any]
    result: bool
    successes: int = 0
    failures: int = 0
    done: bool = False                 # a startup probe that succeeded


@dataclass
class _Instance:
    container_id: str
    name: str
    spec: Mapping[str, Any]
    started_at: float
    states: dict[str, _State] = field(default_factory=dict)
    tasks: list[asyncio.Task[None]] = field(default_factory=list)
    failed: str = ""                   # "liveness" / "startup": to be restarted


def _int(probe: Mapping[str, Any], key: str, default: int) -> int:
    value = probe.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) else default


class _Exec:
    """A StreamIO collecting an exec probe's output."""
    tty = False
    stdin = False

    def __init__(self) -> None:
        self.output = b""

    async def read_stdin(self) -> bytes | None:
        return None

    async def write_stdout(self, data: bytes) -> None:
        self.output += data

    async def write_stderr(self, data: bytes) -> None:
        self.output += data

    async def next_resize(self) -> tuple[int, int] | None:
        return None


def _port(value: Any, container: Mapping[str, Any]) -> int:
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    text = str(value or "")
    if text.isdigit():
        return int(text)
    for port in container.get("ports") or []:
        if isinstance(port, dict) and port.get("name") == text and isinstance(port.get("containerPort"), int):
            return int(port["containerPort"])
    raise ValueError(f"unable to find port {text!r} in container {container.get('name', '')!r}")


def _dial_error(e: OSError, host: str, port: int) -> str:
    if isinstance(e, ConnectionRefusedError):
        return f"dial tcp {host}:{port}: connect: connection refused"
    return f"dial tcp {host}:{port}: connect: {(e.strerror or str(e)).lower()}"


async def http_probe(action: Mapping[str, Any], container: Mapping[str, Any], timeout: float) -> tuple[bool, str]:
    """``httpGet``: (success, output)."""
    host = str(action.get("host") or PROBE_HOST)
    port = _port(action.get("port"), container)
    scheme = str(action.get("scheme") or "HTTP").lower()
    path = str(action.get("path") or "/")
    if not path.startswith("/"):
        path = "/" + path
    url = f"{scheme}://{host}:{port}{path}"
    headers = {"Host": f"{host}:{port}", "User-Agent": USER_AGENT, "Accept": "*/*"}
    for header in action.get("httpHeaders") or []:
        if isinstance(header, dict) and header.get("name"):
            headers[str(header["name"])] = str(header.get("value") or "")
    context = None
    if scheme == "https":
        context = ssl.create_default_context()
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE     # the kubelet does not verify a probe's certificate
    try:
        async with asyncio.timeout(timeout):
            try:
                reader, writer = await asyncio.open_connection(host, port, ssl=context)
            except OSError as e:
                return False, f'Get "{url}": {_dial_error(e, host, port)}'
            try:
                request = f"GET {path} HTTP/1.1\r\n" + "".join(f"{k}: {v}\r\n" for k, v in headers.items())
                writer.write((request + "Connection: close\r\n\r\n").encode())
                await writer.drain()
                status_line = await reader.readline()
                body = await reader.read(MAX_BODY)
            finally:
                writer.close()
                with contextlib.suppress(OSError, ssl.SSLError):
                    await writer.wait_closed()
    except TimeoutError:
        return False, f'Get "{url}": context deadline exceeded (Client.Timeout exceeded while awaiting headers)'
    except (OSError, ssl.SSLError) as e:
        return False, f'Get "{url}": {e}'
    parts = status_line.decode("latin-1").split()
    if len(parts) < 2 or not parts[1].isdigit():
        return False, f'Get "{url}": malformed HTTP response {status_line[:64]!r}'
    code = int(parts[1])
    if 200 <= code < 400:
        return True, body.partition(b"\r\n\r\n")[2].decode("utf-8", "replace")
    return False, f"HTTP probe failed with statuscode: {code}"


async def tcp_probe(action: Mapping[str, Any], container: Mapping[str, Any], timeout: float) -> tuple[bool, str]:
    host = str(action.get("host") or PROBE_HOST)
    port = _port(action.get("port"), container)
    try:
        async with asyncio.timeout(timeout):
            _, writer = await asyncio.open_connection(host, port)
    except TimeoutError:
        return False, f"dial tcp {host}:{port}: i/o timeout"
    except OSError as e:
        return False, _dial_error(e, host, port)
    writer.close()
    return True, ""


class Prober:
    """The probes of one pod's containers. ``wake`` is called when a result changed (the pod
    worker then writes the status, or restarts a container that failed)."""

    def __init__(self, clock: Clock, runtime: Runtime, wake: Callable[[], None], event: EventSink) -> None:
        self.clock = clock
        self.runtime = runtime
        self.wake = wake
        self.event = event
        self._instances: dict[str, _Instance] = {}

    def update(self, running: Sequence[tuple[Mapping[str, Any], str, float]]) -> None:
        """The running containers now, as (spec, container id, started at): workers start for
        new instances and stop for those no longer running."""
        current = {cid for _, cid, _ in running}
        for cid in [c for c in self._instances if c not in current]:
            self._forget(cid)
        for spec, cid, started_at in running:
            if cid in self._instances:
                continue
            instance = _Instance(cid, str(spec.get("name", "")), spec, started_at)
            handlers = _probed_kinds(self.runtime, cid)
            for kind in KINDS:
                probe = spec.get(_FIELDS[kind])
                if isinstance(probe, dict) and any(h in probe for h in handlers):
                    instance.states[kind] = _State(kind, probe, result=kind == "liveness")
            self._instances[cid] = instance
            for kind in instance.states:
                instance.tasks.append(asyncio.ensure_future(self._work(instance, kind)))

    def _forget(self, cid: str) -> None:
        instance = self._instances.pop(cid)
        for task in instance.tasks:
            task.cancel()

    def stop(self) -> None:
        for cid in list(self._instances):
            self._forget(cid)

    # ---- results ----------------------------------------------------------------------------

    def started(self, cid: str) -> bool:
        instance = self._instances.get(cid)
        state = instance.states.get("startup") if instance is not None else None
        return state is None or state.result

    def ready(self, cid: str) -> bool:
        instance = self._instances.get(cid)
        if instance is None:
            return True
        if not self.started(cid):
            return False
        state = instance.states.get("readiness")
        return state is None or state.result

    def failed(self, cid: str) -> str:
        """``liveness`` or ``startup`` when the container failed that probe and must be
        restarted, else ''."""
        instance = self._instances.get(cid)
        return instance.failed if instance is not None else ""

    # ---- the workers ------------------------------------------------------------------------

    async def _work(self, instance: _Instance, kind: str) -> None:
        state = instance.states[kind]
        probe = state.probe
        period = max(1, _int(probe, "periodSeconds", 10))
        delay = _int(probe, "initialDelaySeconds", 0)
        try:
            wait = instance.started_at + delay - self.clock.now()
            if wait > 0:
                await self.clock.sleep(wait)
            while not instance.failed and not state.done:
                if kind == "startup" or self.started(instance.container_id):
                    await self._once(instance, state)
                await self.clock.sleep(period)
        except asyncio.CancelledError:
            raise
        except Exception:      # a prober bug must not leave a container unprobed silently
            log.exception("probing %s of container %s", kind, instance.name)

    async def _once(self, instance: _Instance, state: _State) -> None:
        probe = state.probe
        ok, output = await self._run(instance, probe)
        if ok:
            state.successes, state.failures = state.successes + 1, 0
            threshold = _int(probe, "successThreshold", 1)
            if not state.result and state.successes >= threshold:
                state.result = True
                if state.kind == "startup":
                    state.done = True
                self.wake()
            return
        state.failures, state.successes = state.failures + 1, 0
        await self.event("Warning", "Unhealthy", f"{state.kind.capitalize()} probe failed: {output}")
        if state.failures < _int(probe, "failureThreshold", 3):
            return
        if state.kind in ("liveness", "startup"):
            instance.failed = state.kind
            state.result = False
            self.wake()
        elif state.result:
            state.result = False
            self.wake()

    async def _run(self, instance: _Instance, probe: Mapping[str, Any]) -> tuple[bool, str]:
        timeout = float(max(1, _int(probe, "timeoutSeconds", 1)))
        try:
            if isinstance(probe.get("httpGet"), dict):
                return await http_probe(probe["httpGet"], instance.spec, timeout)
            if isinstance(probe.get("tcpSocket"), dict):
                return await tcp_probe(probe["tcpSocket"], instance.spec, timeout)
            if isinstance(probe.get("exec"), dict):
                return await self._exec(instance, [str(w) for w in probe["exec"].get("command") or []], timeout)
        except ValueError as e:
            return False, str(e)
        return True, ""

    async def _exec(self, instance: _Instance, command: list[str], timeout: float) -> tuple[bool, str]:
        io = _Exec()
        try:
            async with asyncio.timeout(timeout):
                code = await self.runtime.exec(instance.container_id, command, io)
        except TimeoutError:
            return False, f"command {' '.join(command)!r} timed out"
        except (CriError, OSError) as e:
            return False, str(e)
        return code == 0, io.output.decode("utf-8", "replace")


__all__ = ["KINDS", "Prober", "USER_AGENT", "http_probe", "probes_run", "tcp_probe"]
