"""The Job controller (``pkg/controller/job``, Kubernetes 1.35): run a Job's pods to completion.

A sync of a Job that has not finished:

1. takes the pods it controls (``ownerReferences`` with its uid) that its selector matches;
   orphans are not adopted (see docs/kubernetes-choices.md);
2. counts finished pods through the ``batch.kubernetes.io/job-tracking`` finalizer every
   pod is created with, as upstream: a terminal pod (``Succeeded``, ``Failed``, or -- with
   ``podReplacementPolicy: TerminatingOrFailed`` -- being deleted before it succeeded) that
   still has the finalizer goes into ``status.uncountedTerminatedPods``, then loses the
   finalizer, then moves into ``succeeded``/``failed``; a pod failure policy rule with
   ``Ignore`` keeps a failure out of ``failed``;
3. decides whether the Job is done: ``FailureTarget`` (reason ``PodFailurePolicy``,
   ``BackoffLimitExceeded`` when ``failed > backoffLimit`` or, with ``restartPolicy:
   OnFailure``, when its pods' container restarts reach it, or ``DeadlineExceeded`` after
   ``activeDeadlineSeconds``) or ``SuccessCriteriaMet`` (``CompletionsReached``); its
   remaining pods are deleted, and once none is left running the terminal condition
   ``Failed``/``Complete`` follows with the same reason (1.31+ ``delayTerminalCondition``),
   with ``completionTime`` for a success;
4. otherwise keeps ``min(parallelism, completions - succeeded)`` pods active (``parallelism``
   while nothing succeeded for a Job without ``completions``), after the back-off of its
   failures since the last success (10 s doubling, at most 6 min); an ``Indexed`` Job gives
   each pod the lowest index neither completed nor running (annotation and label
   ``batch.kubernetes.io/job-completion-index``, hostname ``JOB-INDEX``, env
   ``JOB_COMPLETION_INDEX``); a suspended Job has no pods, no ``startTime`` and the
   ``Suspended`` condition;
5. writes ``startTime``, ``active``, ``ready``, ``terminating``, counters,
   ``completedIndexes`` and conditions.

Events: SuccessfulCreate, SuccessfulDelete, FailedCreate, Completed, BackoffLimitExceeded,
DeadlineExceeded, PodFailurePolicy, Suspended, Resumed.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from kvert.api import conditions, jobs
from kvert.api.errors import ApiError, Conflict, NotFound
from kvert.api.meta import deep_copy, format_time, labels_of, parse_time
from kvert.api.selectors import LabelSelector, SelectorError
from kvert.client.base import Client
from kvert.client.events import EventRecorder
from kvert.clock import Clock
from kvert.controllers.base import (
    CONTROLLER_INDEX,
    Controller,
    Expectations,
    InformerFactory,
    controller_ref_of,
    index_controller_uid,
    object_key,
    safe_handler,
    split_key,
)
from kvert.controllers.util import is_deleting, is_pod_ready, pod_from_template, pod_key, uid_of

log = logging.getLogger(__name__)

JOBS = "batch/jobs"
DEFAULT_BACKOFF = 10.0
MAX_BACKOFF = 360.0
COMPLETION_INDEX_ENV = "JOB_COMPLETION_INDEX"
REASON_COMPLETIONS = "CompletionsReached"
MESSAGE_COMPLETIONS = "Reached expected number of succeeded pods"
REASON_BACKOFF = "BackoffLimitExceeded"
MESSAGE_BACKOFF = "Job has reached the specified backoff limit"
REASON_DEADLINE = "DeadlineExceeded"
MESSAGE_DEADLINE = "Job was active longer than specified deadline"
REASON_POLICY = "PodFailurePolicy"


@dataclass(frozen=True)
class _Orphans:
    """A work item: release the pods of a Job that no longer exists."""
    uid: str


@dataclass
class _Backoff:
    failures: int = 0              # failures counted since the last success
    last_failure: float = 0.0


def _terminal_phase(pod: dict) -> str:
    return (pod.get("status") or {}).get("phase") or ""


def _is_failed(pod: dict, job: dict) -> bool:
    """``isPodFailed``: with ``TerminatingOrFailed`` a pod deleted before it succeeded is a
    failure (it may never reach a phase)."""
    phase = _terminal_phase(pod)
    if phase == "Failed":
        return True
    if (job.get("spec") or {}).get("podReplacementPolicy") == "Failed":
        return False
    return is_deleting(pod) and phase != "Succeeded"


def _finish_time(pod: dict, now: float) -> float:
    """When a pod finished: its last container termination, else now."""
    times = []
    status = pod.get("status") or {}
    for field in ("containerStatuses", "initContainerStatuses"):
        for cs in status.get(field) or []:
            finished = ((cs.get("state") or {}).get("terminated") or {}).get("finishedAt")
            if finished:
                times.append(parse_time(finished))
    return max(times) if times else now


def completion_index(pod: dict) -> int | None:
    text = ((pod.get("metadata") or {}).get("annotations") or {}).get(jobs.COMPLETION_INDEX)
    if text is None:
        text = labels_of(pod).get(jobs.COMPLETION_INDEX)
    try:
        return int(text) if text is not None else None
    except ValueError:
        return None


def _exit_code_matches(rule: dict, pod: dict) -> str:
    """The name of a container whose exit code the rule's ``onExitCodes`` matches, or ""."""
    req = rule.get("onExitCodes") or {}
    values = set(req.get("values") or [])
    status = pod.get("status") or {}
    for field in ("initContainerStatuses", "containerStatuses"):
        for cs in status.get(field) or []:
            if req.get("containerName") and cs.get("name") != req["containerName"]:
                continue
            terminated = (cs.get("state") or {}).get("terminated")
            if not terminated or terminated.get("exitCode", 0) == 0:
                continue
            code = terminated["exitCode"]
            if (req.get("operator") == "In") == (code in values):
                return f"{cs.get('name')}:{code}"
    return ""


def match_pod_failure_policy(job: dict, pod: dict) -> tuple[str, str]:
    """``matchPodFailurePolicy``: the action of the first matching rule and the message a
    ``FailJob`` gives, or ("", "")."""
    meta = pod.get("metadata") or {}
    pod_name = f"{meta.get('namespace')}/{meta.get('name')}"
    rules = (((job.get("spec") or {}).get("podFailurePolicy") or {}).get("rules")) or []
    for i, rule in enumerate(rules):
        action = rule.get("action") or ""
        if rule.get("onExitCodes") is not None:
            hit = _exit_code_matches(rule, pod)
            if hit:
                name, code = hit.split(":")
                return action, (f"Container {name} for pod {pod_name} failed with exit code {code} "
                                f"matching {action} rule at index {i}")
            continue
        for pattern in rule.get("onPodConditions") or []:
            for c in (pod.get("status") or {}).get("conditions") or []:
                if c.get("type") == pattern.get("type") and c.get("status") == (pattern.get("status") or "True"):
                    return action, (f"Pod {pod_name} has condition {c.get('type')} matching {action} "
                                    f"rule at index {i}")
    return "", ""


def past_backoff_limit_on_failure(job: dict, pods: list[dict], limit: int) -> bool:
    """``pastBackoffLimitOnFailure``: with ``restartPolicy: OnFailure`` failures are restarts in
    place, so the running and pending pods' container restarts count against the limit."""
    template_spec = (((job.get("spec") or {}).get("template") or {}).get("spec")) or {}
    if template_spec.get("restartPolicy") != "OnFailure":
        return False
    restarts = 0
    for pod in pods:
        status = pod.get("status") or {}
        if status.get("phase") in ("Running", "Pending"):
            for field in ("initContainerStatuses", "containerStatuses"):
                restarts += sum(int(cs.get("restartCount") or 0) for cs in status.get(field) or [])
    return restarts > 0 if limit == 0 else restarts >= limit


def backoff_delay(failures: int, last_failure: float, now: float) -> float:
    """``getRemainingTimeForFailuresCount``: seconds left before the next pod may start."""
    if failures == 0:
        return 0.0
    delay = DEFAULT_BACKOFF
    for _ in range(1, failures):
        delay *= 2
        if delay >= MAX_BACKOFF:
            delay = MAX_BACKOFF
            break
    elapsed = now - last_failure
    return 0.0 if delay < elapsed else delay - elapsed


def _new_condition(type_: str, status: str, reason: str, message: str, now: str) -> dict[str, Any]:
    return conditions.new_condition(type_, status, reason, message, now=now,
                                    times=("lastProbeTime", "lastTransitionTime"))


def _set_condition(status: dict[str, Any], cond: dict[str, Any]) -> bool:
    """Add or update a condition in place (the job controller's ``ensureJobConditionStatus``:
    the same status, reason and message is no change; lastTransitionTime moves only with the
    status)."""
    return conditions.set_condition(status, cond, same=("status", "reason", "message"))


class JobController(Controller):
    name = "job-controller"

    def __init__(self, client: Client, clock: Clock, *, informers: InformerFactory | None = None,
                 workers: int = 1):
        super().__init__(client, clock, informers=informers, workers=workers)
        self.expectations = Expectations(clock)
        self.recorder = EventRecorder(client, clock, self.name)
        self.backoffs: dict[str, _Backoff] = {}
        # uids whose finalizer this controller removed and counted: a stale cache showing
        # them with the finalizer again must not count them twice
        self.counted: dict[str, set[str]] = {}
        self.job_informer = self.use(JOBS)
        self.pod_informer = self.use("pods")
        self.pod_informer.add_index(CONTROLLER_INDEX, index_controller_uid)
        self.job_informer.add_handlers(safe_handler(lambda j: self.enqueue(object_key(j))),
                                       safe_handler(lambda o, n: self.enqueue(object_key(n))),
                                       safe_handler(self._delete_job))
        self.pod_informer.add_handlers(safe_handler(self._add_pod), safe_handler(self._update_pod),
                                       safe_handler(self._delete_pod))

    # ---- informer handlers -------------------------------------------------------------

    def _delete_job(self, job: dict) -> None:
        key = object_key(job)
        self.expectations.delete(key)
        self.backoffs.pop(key, None)
        self.counted.pop(key, None)
        # its pods must not keep the tracking finalizer forever (cleanupPodFinalizers)
        self.enqueue(_Orphans(uid_of(job)))

    def _job_of(self, pod: dict) -> dict | None:
        ref = controller_ref_of(pod)
        if ref is None or ref.get("kind") != "Job" or not (ref.get("apiVersion") or "").startswith("batch/"):
            return None
        job = self.job_informer.get(ref.get("name", ""), (pod.get("metadata") or {}).get("namespace", ""))
        return job if job is not None and uid_of(job) == ref.get("uid") else None

    def _add_pod(self, pod: dict) -> None:
        job = self._job_of(pod)
        if job is not None:
            self.expectations.creation_observed(object_key(job))
            self.enqueue(object_key(job))

    def _update_pod(self, old: dict, cur: dict) -> None:
        job = self._job_of(cur)
        if job is not None:
            self.enqueue(object_key(job))
        elif jobs.TRACKING_FINALIZER in _finalizers(cur):
            ref = controller_ref_of(cur)
            self.enqueue(_Orphans(ref.get("uid", "") if ref else ""))

    def _delete_pod(self, pod: dict) -> None:
        job = self._job_of(pod)
        if job is not None:
            key = object_key(job)
            self.expectations.deletion_observed(key, pod_key(pod))
            self.counted.get(key, set()).discard(uid_of(pod))
            self.enqueue(key)

    # ---- sync ----------------------------------------------------------------------------

    def _pods(self, job: dict) -> list[dict]:
        try:
            selector = LabelSelector.from_dict((job.get("spec") or {}).get("selector"))
        except SelectorError:
            return []
        return [p for p in self.pod_informer.by_index(CONTROLLER_INDEX, uid_of(job))
                if not selector.empty and selector.matches(labels_of(p))]

    async def sync(self, key: Any) -> None:
        if isinstance(key, _Orphans):
            await self._release_orphans(key.uid)
            return
        namespace, name = split_key(key)
        job = self.job_informer.get(name, namespace)
        if job is None:
            self.expectations.delete(key)
            return
        spec = job.get("spec") or {}
        managed_by = spec.get("managedBy")
        if managed_by and managed_by != jobs.JOB_CONTROLLER_NAME:
            return
        pods = self._pods(job)
        if jobs.is_finished(job):
            await self._remove_finalizers(key, [p for p in pods if jobs.TRACKING_FINALIZER in _finalizers(p)])
            return
        if not self.expectations.satisfied(key):
            return
        await self._sync_job(key, job, pods)

    async def _release_orphans(self, uid: str) -> None:
        """Drop the tracking finalizer of pods whose Job is gone (``uid`` "": pods without
        a controller)."""
        pods = self.pod_informer.by_index(CONTROLLER_INDEX, uid) if uid else \
            [p for p in self.pod_informer.list() if controller_ref_of(p) is None]
        orphans = [p for p in pods if jobs.TRACKING_FINALIZER in _finalizers(p) and self._job_of(p) is None]
        await self._remove_finalizers("", orphans)

    async def _sync_job(self, key: str, job: dict, pods: list[dict]) -> None:
        job = deep_copy(job)     # the informer's object stays as listed
        now = self.clock.now()
        now_text = format_time(now)
        spec = job.get("spec") or {}
        status = deep_copy(job.get("status") or {})
        status.setdefault("uncountedTerminatedPods", {})
        uncounted = status["uncountedTerminatedPods"]
        counted = self.counted.setdefault(key, set())
        indexed = spec.get("completionMode") == "Indexed"
        completions = spec.get("completions")
        completed_indexes = jobs.parse_indexes(status.get("completedIndexes"), completions or 0) \
            if indexed else set()
        backoff = self.backoffs.setdefault(key, _Backoff())

        # -- 2. newly terminated pods (still holding the finalizer, not yet recorded)
        known = set(uncounted.get("succeeded") or []) | set(uncounted.get("failed") or []) | counted
        failure_target: tuple[str, str] | None = None
        new_succeeded, new_failed = [], []
        for pod in pods:
            uid = uid_of(pod)
            if jobs.TRACKING_FINALIZER not in _finalizers(pod) or uid in known:
                continue
            if _terminal_phase(pod) == "Succeeded":
                index = completion_index(pod)
                if indexed:
                    if index is None or index >= (completions or 0):
                        continue
                    completed_indexes.add(index)
                new_succeeded.append(pod)
            elif _is_failed(pod, job):
                action, message = match_pod_failure_policy(job, pod)
                if action == "FailJob" and failure_target is None:
                    failure_target = (REASON_POLICY, message)
                if action == "Ignore":
                    counted.add(uid)   # not a failure; the finalizer just goes
                    continue
                new_failed.append(pod)
        if new_succeeded:
            backoff.failures = 0
        if new_failed:
            backoff.failures += len(new_failed)
            backoff.last_failure = max(_finish_time(p, now) for p in new_failed)
        for field, new in (("succeeded", new_succeeded), ("failed", new_failed)):
            if new:
                uncounted[field] = sorted(set(uncounted.get(field) or []) | {uid_of(p) for p in new})

        succeeded = int(status.get("succeeded") or 0) + len(uncounted.get("succeeded") or [])
        failed = int(status.get("failed") or 0) + len(uncounted.get("failed") or [])
        active = [p for p in pods if _terminal_phase(p) not in ("Succeeded", "Failed") and not is_deleting(p)]
        terminating = [p for p in pods if is_deleting(p) and _terminal_phase(p) not in ("Succeeded", "Failed")]

        # -- 3. done?
        suspended = bool(spec.get("suspend"))
        if not suspended and not status.get("startTime"):
            status["startTime"] = now_text
        deadline = spec.get("activeDeadlineSeconds")
        started = parse_time(status["startTime"]) if status.get("startTime") else None
        # an interim condition already written decides, whatever pods do afterwards
        success = jobs.has_condition(job, jobs.SUCCESS_CRITERIA_MET)
        if jobs.has_condition(job, jobs.FAILURE_TARGET):
            c = jobs.condition(job, jobs.FAILURE_TARGET) or {}
            failure_target = (c.get("reason", ""), c.get("message", ""))
        backoff_limit = spec.get("backoffLimit")
        limit = 6 if backoff_limit is None else int(backoff_limit)
        if not success and failure_target is None and (failed > limit
                                                       or past_backoff_limit_on_failure(job, pods, limit)):
            failure_target = (REASON_BACKOFF, MESSAGE_BACKOFF)
        if not success and failure_target is None and deadline is not None and started is not None \
                and not suspended and now - started >= deadline:
            failure_target = (REASON_DEADLINE, MESSAGE_DEADLINE)
        if not success and failure_target is None:
            if indexed:
                success = len(completed_indexes) >= (completions or 0)
            elif completions is None:
                success = succeeded > 0 and not active
            else:
                success = succeeded >= completions
        if indexed:
            status["completedIndexes"] = jobs.format_indexes(completed_indexes)

        # -- 4. pods
        if failure_target is not None or success:
            if failure_target is not None and _set_condition(status, _new_condition(
                    jobs.FAILURE_TARGET, "True", *failure_target, now_text)):
                await self.recorder.record(job, "Warning", failure_target[0], failure_target[1])
            if success:
                _set_condition(status, _new_condition(jobs.SUCCESS_CRITERIA_MET, "True", REASON_COMPLETIONS,
                                                      MESSAGE_COMPLETIONS, now_text))
            await self._delete_pods(key, job, active)
            terminating += active
            active = []
        elif suspended:
            if active:
                await self._delete_pods(key, job, active)
                terminating += active
                active = []
            if _set_condition(status, _new_condition(jobs.SUSPENDED, "True", "JobSuspended", "Job suspended",
                                                     now_text)):
                await self.recorder.record(job, "Normal", "Suspended", "Job suspended")
            status.pop("startTime", None)
        else:
            if jobs.has_condition(job, jobs.SUSPENDED):
                _set_condition(status, _new_condition(jobs.SUSPENDED, "False", "JobResumed", "Job resumed", now_text))
                await self.recorder.record(job, "Normal", "Resumed", "Job resumed")
            active = await self._manage(key, job, active, succeeded, completed_indexes, backoff, now)
            if deadline is not None and started is not None:
                self.enqueue_after(key, max(0.0, started + deadline - now) + 0.001)

        # -- 5. status: record the uncounted, drop finalizers, then count
        status["active"] = len(active)
        status["ready"] = sum(1 for p in active if is_pod_ready(p))
        status["terminating"] = len(terminating)
        await self._write_status(job, status)
        finished = [p for p in pods if uid_of(p) in set(uncounted.get("succeeded") or [])
                    | set(uncounted.get("failed") or []) | counted]
        if finished:
            await self._remove_finalizers(key, finished)
        for field in ("succeeded", "failed"):
            moved = uncounted.get(field) or []
            if moved:
                status[field] = int(status.get(field) or 0) + len(moved)
                counted.update(moved)
                uncounted[field] = []
        status["uncountedTerminatedPods"] = {}
        if not terminating and not active:
            if failure_target is not None:
                _set_condition(status, _new_condition(jobs.FAILED, "True", *failure_target, now_text))
            elif success:
                _set_condition(status, _new_condition(jobs.COMPLETE, "True", REASON_COMPLETIONS,
                                                      MESSAGE_COMPLETIONS, now_text))
                status["completionTime"] = now_text
                await self.recorder.record(job, "Normal", "Completed", "Job completed")
        await self._write_status(job, status)

    async def _manage(self, key: str, job: dict, active: list[dict], succeeded: int,
                      completed_indexes: set[int], backoff: _Backoff, now: float) -> list[dict]:
        """``manageJob``: create or delete pods towards the wanted number of active ones."""
        spec = job.get("spec") or {}
        parallelism_value = spec.get("parallelism")
        parallelism = int(parallelism_value) if parallelism_value is not None else 1
        completions = spec.get("completions")
        if completions is None:
            want = len(active) if succeeded > 0 else parallelism
        else:
            done = len(completed_indexes) if spec.get("completionMode") == "Indexed" else succeeded
            want = max(0, min(int(completions) - done, parallelism))
        if len(active) > want:
            extra = sorted(active, key=lambda p: (completion_index(p) is None, -(completion_index(p) or 0)))
            await self._delete_pods(key, job, extra[:len(active) - want])
            return extra[len(active) - want:]
        if len(active) == want:
            return active
        delay = backoff_delay(backoff.failures, backoff.last_failure, now)
        if delay > 0:
            self.enqueue_after(key, delay)
            return active
        indexes: list[int | None] = [None] * (want - len(active))
        if spec.get("completionMode") == "Indexed":
            assert completions is not None   # validation: an Indexed job has completions
            running = {completion_index(p) for p in active}
            free = [i for i in range(int(completions)) if i not in completed_indexes and i not in running]
            indexes = list(free[:want - len(active)])
        self.expectations.expect_creations(key, len(indexes))
        created = []
        for index in indexes:
            try:
                created.append(await self._create_pod(job, index))
            except ApiError as e:
                self.expectations.creation_observed(key)
                log.info("%s: %s: creating a pod: %s", self.name, key, e)
        return active + created

    async def _create_pod(self, job: dict, index: int | None) -> dict:
        template = deep_copy((job.get("spec") or {}).get("template") or {})
        pod = pod_from_template(template, job)
        pod["metadata"].setdefault("finalizers", []).append(jobs.TRACKING_FINALIZER)
        if index is not None:
            name = job["metadata"]["name"]
            pod["metadata"]["generateName"] = f"{name}-{index}-"
            pod["metadata"].setdefault("annotations", {})[jobs.COMPLETION_INDEX] = str(index)
            pod["metadata"].setdefault("labels", {})[jobs.COMPLETION_INDEX] = str(index)
            pod["spec"].setdefault("hostname", f"{name}-{index}")
            for c in pod["spec"].get("containers") or []:
                env = c.setdefault("env", [])
                if not any(e.get("name") == COMPLETION_INDEX_ENV for e in env):
                    env.append({"name": COMPLETION_INDEX_ENV, "valueFrom": {"fieldRef": {
                        "apiVersion": "v1",
                        "fieldPath": f"metadata.annotations['{jobs.COMPLETION_INDEX}']"}}})
        try:
            created = await self.client.create("pods", pod, namespace=job["metadata"]["namespace"])
        except ApiError as e:
            await self.recorder.record(job, "Warning", "FailedCreate", f"Error creating: {e}")
            raise
        await self.recorder.record(job, "Normal", "SuccessfulCreate", f"Created pod: {created['metadata']['name']}")
        return created

    async def _delete_pods(self, key: str, job: dict, pods: list[dict]) -> None:
        for pod in pods:
            try:
                await self.client.delete("pods", pod["metadata"]["name"], namespace=pod["metadata"]["namespace"])
            except NotFound:
                continue
            except ApiError as e:
                log.info("%s: %s: deleting pod %s: %s", self.name, key, pod_key(pod), e)
                continue
            await self.recorder.record(job, "Normal", "SuccessfulDelete", f"Deleted pod: {pod['metadata']['name']}")

    async def _remove_finalizers(self, key: str, pods: list[dict]) -> None:
        for pod in pods:
            finalizers = _finalizers(pod)
            if jobs.TRACKING_FINALIZER not in finalizers:
                continue
            patch = {"metadata": {"finalizers": [f for f in finalizers if f != jobs.TRACKING_FINALIZER],
                                  "resourceVersion": pod["metadata"].get("resourceVersion")}}
            try:
                await self.client.patch("pods", pod["metadata"]["name"], patch, "merge",
                                        namespace=pod["metadata"]["namespace"])
            except NotFound:
                continue
            except Conflict:
                if key:
                    self.enqueue_after(key, 0.001)

    async def _write_status(self, job: dict, status: dict) -> None:
        if status == (job.get("status") or {}):
            return
        obj = deep_copy(job)
        obj["status"] = deep_copy(status)
        try:
            updated = await self.client.update_status(JOBS, obj)
        except NotFound:
            return
        job["metadata"] = updated["metadata"]
        job["status"] = updated.get("status") or {}


def _finalizers(pod: dict) -> list[str]:
    return list((pod.get("metadata") or {}).get("finalizers") or [])
