"""The TTL-after-finished controller (``pkg/controller/ttlafterfinished``): a finished Job
with ``spec.ttlSecondsAfterFinished`` is deleted (foreground propagation, with a uid
precondition) that many seconds after its Complete or Failed condition's
``lastTransitionTime``; before that the Job is synced again when it expires. The Job is
read again from the API server first, so a TTL changed meanwhile is honoured."""

from __future__ import annotations

from kvert.api import jobs
from kvert.api.errors import NotFound
from kvert.api.meta import parse_time
from kvert.client.base import Client
from kvert.clock import Clock
from kvert.controllers.base import Controller, InformerFactory, object_key, safe_handler, split_key
from kvert.controllers.util import is_deleting, uid_of

JOBS = "batch/jobs"


def expires_at(job: dict) -> float | None:
    """When a finished Job with a TTL may go (None: it does not, or not yet finished)."""
    ttl = (job.get("spec") or {}).get("ttlSecondsAfterFinished")
    if ttl is None or is_deleting(job):
        return None
    finished = jobs.finished_condition(job)
    if not finished:
        return None
    since = (jobs.condition(job, finished) or {}).get("lastTransitionTime")
    if not since:
        return None
    return parse_time(since) + int(ttl)


class TTLAfterFinishedController(Controller):
    name = "ttl-after-finished-controller"

    def __init__(self, client: Client, clock: Clock, *, informers: InformerFactory | None = None,
                 workers: int = 1):
        super().__init__(client, clock, informers=informers, workers=workers)
        self.job_informer = self.use(JOBS)
        self.job_informer.add_handlers(safe_handler(self._changed),
                                       safe_handler(lambda o, n: self._changed(n)),
                                       safe_handler(lambda j: None))

    def _changed(self, job: dict) -> None:
        if expires_at(job) is not None:
            self.enqueue(object_key(job))

    async def sync(self, key: str) -> None:
        namespace, name = split_key(key)
        cached = self.job_informer.get(name, namespace)
        if cached is None or expires_at(cached) is None:
            return
        try:
            fresh = await self.client.get(JOBS, name, namespace)
        except NotFound:
            return
        at = expires_at(fresh)
        if at is None:
            return
        now = self.clock.now()
        if at > now:
            self.enqueue_after(key, at - now)
            return
        try:
            await self.client.delete(JOBS, name, namespace=namespace, propagation_policy="Foreground",
                                     preconditions={"uid": uid_of(fresh)})
        except NotFound:
            return
