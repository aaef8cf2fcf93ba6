"""The CronJob controller (``pkg/controller/cronjob/cronjob_controllerv2.go``): Jobs on a
schedule, in the clock's time (virtual time in tests).

A sync of a CronJob:

1. reconciles ``status.active`` with the Jobs it controls: a finished Job leaves the list
   (event SawCompletedJob), a vanished one too (MissingJob); a succeeded Job's
   ``completionTime`` advances ``lastSuccessfulTime``;
2. unless it is being deleted or suspended, finds the most recent scheduled time after
   ``lastScheduleTime`` (else the creation time) that is not in the future
   (``mostRecentScheduleTime``), in ``spec.timeZone`` (UTC when unset: see
   docs/kubernetes-choices.md); past ``startingDeadlineSeconds`` it is missed
   (MissSchedule); ``Forbid`` skips it while a Job is active (JobAlreadyActive);
   ``Replace`` deletes the active Jobs first;
3. creates the Job ``NAME-<scheduled time in minutes since the epoch>`` from the job
   template with the annotation ``batch.kubernetes.io/cronjob-scheduled-timestamp`` (the
   time in RFC 3339, in the schedule's zone), adds it to ``active`` and sets
   ``lastScheduleTime`` (SuccessfulCreate "Created job NAME");
4. deletes the oldest finished Jobs beyond ``successfulJobsHistoryLimit`` /
   ``failedJobsHistoryLimit`` (SuccessfulDelete "Deleted job NAME"), and syncs again at the
   next scheduled time (plus 100 ms, as upstream).
"""

from __future__ import annotations

import logging
import zoneinfo
from datetime import UTC, datetime, timedelta
from typing import Any

from kvert.api import cron, jobs
from kvert.api.errors import AlreadyExists, ApiError, NotFound
from kvert.api.meta import deep_copy, format_time, parse_time
from kvert.client.base import Client
from kvert.client.events import EventRecorder
from kvert.clock import Clock
from kvert.controllers.base import (
    CONTROLLER_INDEX,
    Controller,
    InformerFactory,
    controller_ref_of,
    index_controller_uid,
    object_key,
    safe_handler,
    split_key,
)
from kvert.controllers.util import controller_ref, is_deleting, uid_of

log = logging.getLogger(__name__)

CRONJOBS = "batch/cronjobs"
JOBS = "batch/jobs"
NEXT_SCHEDULE_DELTA = 0.1


def job_name(cronjob_name: str, scheduled: datetime) -> str:
    """``getJobName``: the scheduled time in minutes since the epoch makes it unique."""
    return f"{cronjob_name}-{int(scheduled.timestamp()) // 60}"


def _zone(cj: dict) -> Any:
    name = (cj.get("spec") or {}).get("timeZone")
    return zoneinfo.ZoneInfo(name) if name else UTC


def most_recent_schedule_time(cj: dict, schedule: cron.Schedule, now: datetime) -> datetime | None:
    """The latest scheduled time after ``lastScheduleTime`` (else creation) and not after
    ``now``; ``startingDeadlineSeconds`` moves the earliest time up to ``now - deadline``."""
    status, spec = cj.get("status") or {}, cj.get("spec") or {}
    earliest = parse_time(status.get("lastScheduleTime") or cj["metadata"]["creationTimestamp"])
    deadline = spec.get("startingDeadlineSeconds")
    if deadline is not None:
        earliest = max(earliest, now.timestamp() - deadline)
    latest = schedule.previous_before(now + timedelta(seconds=1))
    return latest if latest.timestamp() > earliest else None


def rfc3339(t: datetime) -> str:
    """Go's ``time.RFC3339``: a zero offset is written ``Z``."""
    text = t.replace(microsecond=0).isoformat()
    return text[:-6] + "Z" if t.utcoffset() == timedelta(0) else text


def job_from_template(cj: dict, scheduled: datetime) -> dict:
    """``getJobFromTemplate2``."""
    template = (cj.get("spec") or {}).get("jobTemplate") or {}
    tmeta = template.get("metadata") or {}
    annotations = dict(tmeta.get("annotations") or {})
    annotations[jobs.CRONJOB_SCHEDULED_TIMESTAMP] = rfc3339(scheduled)
    meta: dict[str, Any] = {"name": job_name(cj["metadata"]["name"], scheduled),
                            "namespace": cj["metadata"]["namespace"], "annotations": annotations,
                            "ownerReferences": [controller_ref(cj)]}
    if tmeta.get("labels"):
        meta["labels"] = dict(tmeta["labels"])
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": meta,
            "spec": deep_copy(template.get("spec") or {})}


def _ref(job: dict) -> dict:
    meta = job["metadata"]
    return {"kind": "Job", "namespace": meta["namespace"], "name": meta["name"], "uid": meta["uid"],
            "apiVersion": "batch/v1", "resourceVersion": meta.get("resourceVersion", "")}


def _start_key(job: dict) -> tuple:
    """``byJobStartTime``: unstarted last, then by start time, then by name."""
    start = (job.get("status") or {}).get("startTime")
    return (start is None, parse_time(start) if start else 0.0, job["metadata"]["name"])


class CronJobController(Controller):
    name = "cronjob-controller"

    def __init__(self, client: Client, clock: Clock, *, informers: InformerFactory | None = None,
                 workers: int = 1):
        super().__init__(client, clock, informers=informers, workers=workers)
        self.recorder = EventRecorder(client, clock, self.name)
        self.cj_informer = self.use(CRONJOBS)
        self.job_informer = self.use(JOBS)
        self.job_informer.add_index(CONTROLLER_INDEX, index_controller_uid)
        self.cj_informer.add_handlers(safe_handler(lambda c: self.enqueue(object_key(c))),
                                      safe_handler(lambda o, n: self.enqueue(object_key(n))),
                                      safe_handler(lambda c: None))
        self.job_informer.add_handlers(safe_handler(self._job_changed),
                                       safe_handler(lambda o, n: self._job_changed(n)),
                                       safe_handler(self._job_changed))

    def _job_changed(self, job: dict) -> None:
        ref = controller_ref_of(job)
        if ref is not None and ref.get("kind") == "CronJob":
            self.enqueue(f"{job['metadata'].get('namespace', '')}/{ref.get('name', '')}")

    async def sync(self, key: str) -> None:
        namespace, name = split_key(key)
        cached = self.cj_informer.get(name, namespace)
        if cached is None:
            return
        cj = deep_copy(cached)
        children = [j for j in self.job_informer.by_index(CONTROLLER_INDEX, uid_of(cj))
                    if j["metadata"].get("namespace") == namespace]
        status = cj.setdefault("status", {})
        before = deep_copy(status)
        await self._reconcile_active(cj, children)
        requeue = await self._schedule(cj)
        await self._cleanup(cj, children)
        if status != before:
            try:
                await self.client.update_status(CRONJOBS, cj)
            except NotFound:
                return
        if requeue is not None:
            self.enqueue_after(key, requeue)

    async def _reconcile_active(self, cj: dict, children: list[dict]) -> None:
        status = cj["status"]
        active_uids = {ref.get("uid") for ref in status.get("active") or []}
        for job in children:
            finished = jobs.is_finished(job)
            if uid_of(job) in active_uids and finished:
                status["active"] = [r for r in status["active"] if r.get("uid") != uid_of(job)]
                await self.recorder.record(cj, "Normal", "SawCompletedJob",
                                           f"Saw completed job: {job['metadata']['name']}, "
                                           f"condition: {jobs.finished_condition(job)}")
            elif uid_of(job) not in active_uids and not finished:
                # the cache may predate this controller's own status write: ask the server
                try:
                    fresh = await self.client.get(CRONJOBS, cj["metadata"]["name"], cj["metadata"]["namespace"])
                except NotFound:
                    fresh = {}
                fresh_active = (fresh.get("status") or {}).get("active") or []
                if any(r.get("uid") == uid_of(job) for r in fresh_active):
                    cj["metadata"] = fresh["metadata"]
                    status.clear()
                    status.update(deep_copy(fresh["status"]))
                    active_uids = {r.get("uid") for r in fresh_active}
                    continue
                await self.recorder.record(cj, "Warning", "UnexpectedJob",
                                           "Saw a job that the controller did not create or forgot: "
                                           f"{job['metadata']['name']}")
            if jobs.has_condition(job, jobs.COMPLETE):
                done = (job.get("status") or {}).get("completionTime")
                last = status.get("lastSuccessfulTime")
                if done and (not last or parse_time(done) > parse_time(last)):
                    status["lastSuccessfulTime"] = done
        child_uids = {uid_of(j) for j in children}
        for ref in list(status.get("active") or []):
            if ref.get("uid") in child_uids:
                continue
            try:
                await self.client.get(JOBS, ref.get("name", ""), ref.get("namespace", ""))
                continue
            except NotFound:
                pass
            await self.recorder.record(cj, "Normal", "MissingJob", f"Active job went missing: {ref.get('name')}")
            status["active"] = [r for r in status["active"] if r.get("uid") != ref.get("uid")]
        if not status.get("active"):
            status.pop("active", None)

    async def _schedule(self, cj: dict) -> float | None:
        """Steps 2 and 3; returns the delay until the next sync (None: none)."""
        spec, status = cj.get("spec") or {}, cj["status"]
        if is_deleting(cj) or spec.get("suspend"):
            return None
        try:
            zone = _zone(cj)
        except (zoneinfo.ZoneInfoNotFoundError, ValueError):
            await self.recorder.record(cj, "Warning", "UnknownTimeZone",
                                       f"invalid timeZone: {spec.get('timeZone')!r}")
            return None
        try:
            schedule = cron.parse(spec.get("schedule") or "")
        except cron.CronError as e:
            await self.recorder.record(cj, "Warning", "UnparseableSchedule",
                                       f"unparseable schedule: {spec.get('schedule')!r} : {e}")
            return None
        now = datetime.fromtimestamp(self.clock.now(), tz=zone)
        until_next = (schedule.next_after(now) - now).total_seconds() + NEXT_SCHEDULE_DELTA
        scheduled = most_recent_schedule_time(cj, schedule, now)
        if scheduled is None:
            return until_next
        name = job_name(cj["metadata"]["name"], scheduled)
        last = status.get("lastScheduleTime")
        if any(r.get("name") == name for r in status.get("active") or []) or \
                (last and parse_time(last) == scheduled.timestamp()):
            return until_next
        active = status.get("active") or []
        policy = spec.get("concurrencyPolicy") or "Allow"
        if policy == "Forbid" and active:
            await self.recorder.record(cj, "Normal", "JobAlreadyActive", "Not starting job because prior "
                                       "execution is running and concurrency policy is Forbid")
            return until_next
        if policy == "Replace":
            for ref in list(active):
                await self._delete_job(cj, ref.get("name", ""))
        try:
            created = await self.client.create(JOBS, job_from_template(cj, scheduled),
                                               namespace=cj["metadata"]["namespace"])
        except AlreadyExists:
            return until_next
        except ApiError as e:
            await self.recorder.record(cj, "Warning", "FailedCreate", f"Error creating job: {e}")
            raise
        await self.recorder.record(cj, "Normal", "SuccessfulCreate", f"Created job {created['metadata']['name']}")
        status.setdefault("active", []).append(_ref(created))
        status["lastScheduleTime"] = format_time(scheduled.timestamp())
        return until_next

    async def _cleanup(self, cj: dict, children: list[dict]) -> None:
        """``cleanupFinishedJobs``: the history limits."""
        spec = cj.get("spec") or {}
        for type_, field in ((jobs.COMPLETE, "successfulJobsHistoryLimit"), (jobs.FAILED, "failedJobsHistoryLimit")):
            limit = spec.get(field)
            if limit is None:
                continue
            finished = sorted((j for j in children if jobs.finished_condition(j) == type_), key=_start_key)
            for job in finished[:max(0, len(finished) - int(limit))]:
                await self._delete_job(cj, job["metadata"]["name"])

    async def _delete_job(self, cj: dict, name: str) -> None:
        """``deleteJob``: background propagation; the Job leaves ``active``."""
        try:
            await self.client.delete(JOBS, name, namespace=cj["metadata"]["namespace"],
                                     propagation_policy="Background")
        except NotFound:
            pass
        except ApiError as e:
            await self.recorder.record(cj, "Warning", "FailedDelete", f"Deleted job: {e}")
            raise
        else:
            await self.recorder.record(cj, "Normal", "SuccessfulDelete", f"Deleted job {name}")
        status = cj["status"]
        if status.get("active"):
            status["active"] = [r for r in status["active"] if r.get("name") != name]
            if not status["active"]:
                status.pop("active")
