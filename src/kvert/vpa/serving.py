"""Each VPA component's plain-HTTP endpoint on ``--address``, as upstream's
``utils/server.Initialize``: ``/metrics`` (its Prometheus registry) and ``/health-check``
(200 ``OK``, or 500 ``Error: last activity more than D ago`` once monitoring started and the
component stopped reporting activity). Upstream's defaults: recommender ``:8942``, updater
``:8943``, admission controller ``:8944``.
"""

from __future__ import annotations

import logging
from typing import Protocol

from aiohttp import web

from kvert.api.prometheus import CONTENT_TYPE
from kvert.vpa.instruments import HealthCheck

log = logging.getLogger(__name__)

RECOMMENDER_ADDRESS = ":8942"
UPDATER_ADDRESS = ":8943"
ADMISSION_ADDRESS = ":8944"


class Exposition(Protocol):
    def exposition(self) -> bytes: ...


def parse_address(address: str) -> tuple[str, int]:
    """Go's ``host:port`` (``:8942`` is every interface); ValueError names the text."""
    host, sep, port = address.rpartition(":")
    if not sep or not port.isdigit() or int(port) > 65535:
        raise ValueError(f"--address {address!r}: want HOST:PORT (e.g. :8942)")
    host = host.strip("[]")
    return host or "0.0.0.0", int(port)


def _go_duration(seconds: float) -> str:
    whole = int(seconds)
    h, rest = divmod(whole, 3600)
    m, s = divmod(rest, 60)
    frac = seconds - whole
    sec = f"{s + frac:.9f}".rstrip("0").rstrip(".") if frac else str(s)
    if h:
        return f"{h}h{m}m{sec}s"
    if m:
        return f"{m}m{sec}s"
    return f"{sec}s"


class MetricsServer:
    """``await start()`` binds (port 0: any free port, read back from ``port``);
    ``await stop()`` closes."""

    def __init__(self, metrics: Exposition, health: HealthCheck | None, address: str) -> None:
        self.metrics = metrics
        self.health = health
        self.host, self.port = parse_address(address)
        self._runner: web.AppRunner | None = None

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_get("/metrics", self._metrics)
        app.router.add_get("/health-check", self._health)
        return app

    async def start(self) -> None:
        self._runner = web.AppRunner(self.app(), access_log=None, handle_signals=False, shutdown_timeout=1.0)
        await self._runner.setup()
        await web.TCPSite(self._runner, self.host, self.port).start()
        self.port = self._runner.addresses[0][1]
        log.info("metrics and health check on http://%s:%d", self.host, self.port)

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def _metrics(self, request: web.Request) -> web.Response:
        return web.Response(body=self.metrics.exposition(), headers={"Content-Type": CONTENT_TYPE})

    async def _health(self, request: web.Request) -> web.Response:
        if self.health is not None:
            healthy, ago = self.health.check()
            if not healthy:
                return web.Response(status=500, text=f"Error: last activity more than {_go_duration(ago)} ago\n")
        return web.Response(text="OK")


__all__ = ["ADMISSION_ADDRESS", "MetricsServer", "RECOMMENDER_ADDRESS", "UPDATER_ADDRESS", "parse_address"]
