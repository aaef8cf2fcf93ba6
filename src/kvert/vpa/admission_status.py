"""The admission controller's status Lease (upstream VPA 1.8, ``pkg/utils/status``).

The admission controller renews a ``coordination.k8s.io/v1`` Lease (default
``kube-system/vpa-admission-controller``; upstream's ``--status-lease-name``,
``--status-lease-namespace``, ``--status-lease-update-interval`` 10s) while it runs:
:class:`AdmissionControllerStatus`, a Component. The updater, with
``--use-admission-controller-status`` (upstream's default: true), evicts and resizes only
while that Lease is fresh (:func:`admission_controller_status_valid`): created or renewed
within ``--admission-controller-status-lease-timeout`` (default 1m), so that pods it evicts
are re-created with their recommendation rather than their old requests.

The Lease has ``holderIdentity`` (the host name) and ``leaseDurationSeconds`` (the update
interval); a renewal the API server refuses with a conflict was another replica's and counts
as done, as upstream's. kvert writes the Lease at once on start (upstream waits one interval).
"""

from __future__ import annotations

import asyncio
import logging
import socket
from collections.abc import Mapping

from kvert.api.errors import AlreadyExists, Conflict, NotFound
from kvert.api.meta import format_micro_time, parse_time
from kvert.client.base import Client
from kvert.clock import Clock
from kvert.clock.periodic import run_every

log = logging.getLogger(__name__)

LEASES = "coordination.k8s.io/leases"
STATUS_NAME = "vpa-admission-controller"
STATUS_NAMESPACE = "kube-system"
STATUS_TIMEOUT = 60.0
STATUS_UPDATE_INTERVAL = 10.0


class AdmissionControllerStatus:
    """``status.Updater``: renews the status Lease every ``interval`` seconds until stopped."""

    def __init__(self, client: Client, clock: Clock, *, name: str = STATUS_NAME,
                 namespace: str = STATUS_NAMESPACE, interval: float = STATUS_UPDATE_INTERVAL,
                 holder: str | None = None) -> None:
        if interval <= 0:
            raise ValueError("--status-lease-update-interval must be positive.")
        self.client = client
        self.clock = clock
        self.name = name
        self.namespace = namespace
        self.interval = float(interval)
        self.holder = holder if holder is not None else socket.gethostname()
        self._stop = asyncio.Event()

    async def run(self) -> None:
        await run_every(self.clock, self.interval, self.update, self._stop, log=log,
                        failure="admission controller status update failed")

    def stop(self) -> None:
        self._stop.set()

    async def update(self) -> None:
        """``UpdateStatus``: renew the Lease, creating it when missing."""
        stamp = format_micro_time(self.clock.now())
        try:
            lease = await self.client.get(LEASES, self.name, self.namespace)
        except NotFound:
            try:
                await self.client.create(LEASES, {
                    "apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                    "metadata": {"name": self.name, "namespace": self.namespace},
                    "spec": {"holderIdentity": self.holder, "leaseDurationSeconds": int(self.interval)}})
            except AlreadyExists:
                pass             # another replica made it
            return
        spec = dict(lease.get("spec") or {})
        spec["renewTime"] = stamp
        spec["holderIdentity"] = self.holder
        lease["spec"] = spec
        try:
            await self.client.update(LEASES, lease)
        except Conflict:
            pass                 # another replica renewed it


def status_valid(lease: Mapping, timeout: float, now: float) -> bool:
    """``isStatusValid``: created or renewed less than ``timeout`` seconds ago."""
    for stamp in ((lease.get("metadata") or {}).get("creationTimestamp"),
                  (lease.get("spec") or {}).get("renewTime")):
        if not stamp:
            continue
        try:
            if parse_time(str(stamp)) + timeout > now:
                return True
        except ValueError:
            continue
    return False


async def admission_controller_status_valid(client: Client, clock: Clock, *, name: str = STATUS_NAME,
                                            namespace: str = STATUS_NAMESPACE,
                                            timeout: float = STATUS_TIMEOUT) -> bool:
    """``IsStatusValid``; raises the API error that kept the Lease from being read (a missing
    Lease is NotFound: the updater then skips its loop, as upstream's)."""
    lease = await client.get(LEASES, name, namespace)
    return status_valid(lease, timeout, clock.now())


__all__ = ["AdmissionControllerStatus", "LEASES", "STATUS_NAME", "STATUS_NAMESPACE",
           "STATUS_TIMEOUT", "STATUS_UPDATE_INTERVAL", "admission_controller_status_valid", "status_valid"]
