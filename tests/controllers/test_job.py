"""The Job controller against an in-process cluster, in virtual time (no node agent: the
tests finish pods themselves). Cases follow TestControllerSyncJob and friends in
pkg/controller/job/job_controller_test.go."""

import pytest

from kvert.api.meta import format_time
from kvert.controllers.job import backoff_delay

from .helpers import NS, eventually, run

JOBS = "batch/jobs"


def job(name="pi", **spec):
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name, "namespace": NS},
            "spec": {"template": {"spec": {"restartPolicy": "Never",
                                           "containers": [{"name": "c", "image": "busybox"}]}},
                     **spec}}


async def finish(env, pod, phase, code=None):
    code = (0 if phase == "Succeeded" else 1) if code is None else code
    pod = await env.client.get("pods", pod["metadata"]["name"], NS)
    now = format_time(env.clock.now())
    pod["status"]["phase"] = phase
    pod["status"]["containerStatuses"] = [{
        "name": "c", "image": "busybox", "imageID": "", "ready": False, "restartCount": 0,
        "state": {"terminated": {"exitCode": code, "reason": "Completed" if code == 0 else "Error",
                                 "startedAt": now, "finishedAt": now}}}]
    return await env.client.update_status("pods", pod)


async def active_pods(env, n, job_name="pi"):
    pods = await env.pods(f"job-name={job_name}")
    return pods if len(pods) == n else None


def condition(job, type_):
    return next((c for c in (job.get("status") or {}).get("conditions") or [] if c["type"] == type_), None)


async def job_condition(env, type_, name="pi"):
    j = await env.get(JOBS, name)
    c = condition(j, type_)
    return j if c and c["status"] == "True" else None


def test_job_start_creates_parallelism_pods_with_tracking_finalizer_then_completes():
    # TestControllerSyncJob "job start" (parallelism 2, completions 5) and "job finish"
    async def scenario(env):
        env.start_manager(controllers=["job"])
        created = await env.client.create(JOBS, job(parallelism=2, completions=5))
        pods = await eventually(env, lambda: active_pods(env, 2), what="2 pods")
        for p in pods:
            assert p["metadata"]["finalizers"] == ["batch.kubernetes.io/job-tracking"]
            assert p["metadata"]["ownerReferences"][0]["uid"] == created["metadata"]["uid"]
            assert p["metadata"]["labels"]["batch.kubernetes.io/controller-uid"] == created["metadata"]["uid"]
        j = await env.get(JOBS, "pi")
        assert j["status"]["active"] == 2 and j["status"]["startTime"]
        assert j["status"]["ready"] == 0 and j["status"]["uncountedTerminatedPods"] == {}
        for _ in range(5):
            pods = await eventually(env, lambda: env.pods("job-name=pi"), what="an active pod")
            await finish(env, pods[0], "Succeeded")
            await env.clock.sleep(1)
        done = await eventually(env, lambda: job_condition(env, "Complete"), what="Complete")
        assert done["status"]["succeeded"] == 5 and done["status"]["active"] == 0
        assert done["status"]["completionTime"]
        met = condition(done, "SuccessCriteriaMet")
        assert met["reason"] == "CompletionsReached"
        assert condition(done, "Complete")["message"] == "Reached expected number of succeeded pods"
        everything = await env.pods("job-name=pi", active_only=False)
        assert len(everything) == 5
        assert all(not p["metadata"].get("finalizers") for p in everything)
        assert [e["message"] for e in await env.events("Completed")] == ["Job completed"]

    run(scenario)


def test_work_queue_job_completes_when_one_succeeded_and_the_rest_finish():
    # TestControllerSyncJob "WQ job finishing" / "WQ job all finished"
    async def scenario(env):
        env.start_manager(controllers=["job"])
        await env.client.create(JOBS, job(parallelism=2))
        pods = await eventually(env, lambda: active_pods(env, 2), what="2 pods")
        await finish(env, pods[0], "Succeeded")
        await env.clock.sleep(5)
        j = await env.get(JOBS, "pi")
        assert j["status"]["succeeded"] == 1 and j["status"]["active"] == 1
        assert condition(j, "Complete") is None
        assert len(await env.pods("job-name=pi")) == 1          # no replacement
        await finish(env, pods[1], "Succeeded")
        done = await eventually(env, lambda: job_condition(env, "Complete"), what="Complete")
        assert done["status"]["succeeded"] == 2

    run(scenario)


def test_too_many_failures_fail_the_job_with_backoff_limit_exceeded():
    # TestControllerSyncJob "too many job failures" (backoffLimit 0)
    async def scenario(env):
        env.start_manager(controllers=["job"])
        await env.client.create(JOBS, job(backoffLimit=0))
        pods = await eventually(env, lambda: active_pods(env, 1), what="a pod")
        await finish(env, pods[0], "Failed")
        failed = await eventually(env, lambda: job_condition(env, "Failed"), what="Failed")
        c = condition(failed, "Failed")
        assert (c["reason"], c["message"]) == ("BackoffLimitExceeded", "Job has reached the specified backoff limit")
        assert condition(failed, "FailureTarget")["reason"] == "BackoffLimitExceeded"
        assert failed["status"]["failed"] == 1 and "completionTime" not in failed["status"]

    run(scenario)


def test_failed_pod_is_replaced_after_the_backoff():
    async def scenario(env):
        env.start_manager(controllers=["job"])
        await env.client.create(JOBS, job())
        pods = await eventually(env, lambda: active_pods(env, 1), what="a pod")
        first = pods[0]["metadata"]["name"]
        await finish(env, pods[0], "Failed")
        await env.clock.sleep(5)
        assert await env.pods("job-name=pi") == []              # 10 s back-off
        pods = await eventually(env, lambda: active_pods(env, 1), timeout=10, what="replacement")
        assert pods[0]["metadata"]["name"] != first
        assert (await env.get(JOBS, "pi"))["status"]["failed"] == 1

    run(scenario)


@pytest.mark.parametrize("failures, elapsed, expected", [
    # TestGetRemainingBackoffTime-like cases of backoff_utils_test.go: 10 s doubling, 6 min cap
    (0, 0, 0), (1, 0, 10), (1, 3, 7), (2, 0, 20), (3, 0, 40), (6, 0, 320), (7, 0, 360), (20, 0, 360),
    (1, 15, 0),
])
def test_backoff_delay(failures, elapsed, expected):
    assert backoff_delay(failures, 100.0, 100.0 + elapsed) == expected


def test_active_deadline_fails_the_job_and_deletes_its_pods():
    # TestSyncJobPastDeadline "activeDeadlineSeconds less than single pod execution"
    async def scenario(env):
        env.start_manager(controllers=["job"])
        await env.client.create(JOBS, job(activeDeadlineSeconds=10))
        await eventually(env, lambda: active_pods(env, 1), what="a pod")
        failed = await eventually(env, lambda: job_condition(env, "Failed"), timeout=60, what="Failed")
        c = condition(failed, "Failed")
        assert (c["reason"], c["message"]) == ("DeadlineExceeded", "Job was active longer than specified deadline")
        assert failed["status"]["active"] == 0
        assert await env.pods("job-name=pi", active_only=False) == []   # deleted, finalizer removed

    run(scenario)


def test_suspend_deletes_pods_and_resume_starts_again():
    # TestControllerSyncJob "suspending a job with satisfied expectations" / "resuming a suspended job"
    async def scenario(env):
        env.start_manager(controllers=["job"])
        await env.client.create(JOBS, job(parallelism=2, completions=4))
        await eventually(env, lambda: active_pods(env, 2), what="2 pods")
        j = await env.get(JOBS, "pi")
        j["spec"]["suspend"] = True
        await env.client.update(JOBS, j)
        suspended = await eventually(env, lambda: job_condition(env, "Suspended"), what="Suspended")
        c = condition(suspended, "Suspended")
        assert (c["reason"], c["message"]) == ("JobSuspended", "Job suspended")
        await eventually(env, lambda: _no_pods(env), what="no pods")
        j = await env.get(JOBS, "pi")
        assert "startTime" not in j["status"]
        j["spec"]["suspend"] = False
        await env.client.update(JOBS, j)
        await eventually(env, lambda: active_pods(env, 2), what="2 pods again")
        c = condition(await env.get(JOBS, "pi"), "Suspended")
        assert (c["status"], c["reason"], c["message"]) == ("False", "JobResumed", "Job resumed")

    run(scenario)


async def _no_pods(env):
    return await env.pods("job-name=pi", active_only=False) == []


def test_indexed_job_gives_each_pod_an_index():
    # TestControllerSyncJob "indexed job start" and "indexed job completed"
    async def scenario(env):
        env.start_manager(controllers=["job"])
        await env.client.create(JOBS, job(parallelism=2, completions=3, completionMode="Indexed"))
        pods = await eventually(env, lambda: active_pods(env, 2), what="2 pods")
        indexes = sorted(p["metadata"]["annotations"]["batch.kubernetes.io/job-completion-index"] for p in pods)
        assert indexes == ["0", "1"]
        for p in pods:
            index = p["metadata"]["annotations"]["batch.kubernetes.io/job-completion-index"]
            assert p["metadata"]["labels"]["batch.kubernetes.io/job-completion-index"] == index
            assert p["spec"]["hostname"] == f"pi-{index}"
            assert p["metadata"]["name"].startswith(f"pi-{index}-")
            assert p["spec"]["containers"][0]["env"][0]["name"] == "JOB_COMPLETION_INDEX"
        await finish(env, pods[0], "Succeeded")
        pods = await eventually(env, lambda: _with_index(env, "2"), what="index 2")
        for p in pods:
            await finish(env, p, "Succeeded")
        done = await eventually(env, lambda: job_condition(env, "Complete"), what="Complete")
        assert done["status"]["completedIndexes"] == "0-2" and done["status"]["succeeded"] == 3

    run(scenario)


async def _with_index(env, index):
    pods = await env.pods("job-name=pi")
    found = [p for p in pods if p["metadata"]["annotations"]["batch.kubernetes.io/job-completion-index"] == index]
    return pods if found else None


def test_pod_failure_policy_fail_job_on_exit_code():
    # TestJobPodFailurePolicy "fail job based on OnExitCodes"
    async def scenario(env):
        env.start_manager(controllers=["job"])
        policy = {"rules": [{"action": "FailJob", "onExitCodes": {"operator": "In", "values": [5]}}]}
        await env.client.create(JOBS, job(podFailurePolicy=policy))
        pods = await eventually(env, lambda: active_pods(env, 1), what="a pod")
        await finish(env, pods[0], "Failed", code=5)
        failed = await eventually(env, lambda: job_condition(env, "Failed"), what="Failed")
        c = condition(failed, "Failed")
        name = pods[0]["metadata"]["name"]
        assert c["reason"] == "PodFailurePolicy"
        assert c["message"] == f"Container c for pod {NS}/{name} failed with exit code 5 matching FailJob rule at index 0"

    run(scenario)


def test_ttl_after_finished_deletes_the_job_and_its_pods():
    # TestTimeLeft / the ttlafterfinished controller: deleted ttl seconds after finishing
    async def scenario(env):
        env.start_manager(controllers=["job", "ttl-after-finished", "garbagecollector"])
        await env.client.create(JOBS, job(ttlSecondsAfterFinished=30))
        pods = await eventually(env, lambda: active_pods(env, 1), what="a pod")
        await finish(env, pods[0], "Succeeded")
        done = await eventually(env, lambda: job_condition(env, "Complete"), what="Complete")
        finished_at = env.clock.now()
        await env.clock.sleep(20)
        assert (await env.get(JOBS, "pi"))["metadata"]["uid"] == done["metadata"]["uid"]

        async def gone():
            return not (await env.client.list(JOBS, namespace=NS))["items"]
        await eventually(env, gone, timeout=60, what="job deleted")
        assert env.clock.now() - finished_at >= 29
        await eventually(env, lambda: _no_pods(env), timeout=60, what="pods collected")

    run(scenario)


def test_pod_failure_policy_ignore_on_disruption_target():
    # TestJobPodFailurePolicy "ignore pod failure based on OnPodConditions": not counted, replaced
    async def scenario(env):
        env.start_manager(controllers=["job"])
        policy = {"rules": [{"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget"}]}]}
        await env.client.create(JOBS, job(backoffLimit=0, podFailurePolicy=policy))
        pods = await eventually(env, lambda: active_pods(env, 1), what="a pod")
        pod = await env.client.get("pods", pods[0]["metadata"]["name"], NS)
        pod["status"]["phase"] = "Failed"
        pod["status"]["conditions"] = [{"type": "DisruptionTarget", "status": "True",
                                        "reason": "EvictionByEvictionAPI"}]
        await env.client.update_status("pods", pod)

        async def replaced():
            now = await env.pods("job-name=pi")
            return now if now and now[0]["metadata"]["name"] != pod["metadata"]["name"] else None
        await eventually(env, replaced, what="a replacement, without back-off")
        j = await env.get(JOBS, "pi")
        assert j["status"].get("failed", 0) == 0 and condition(j, "Failed") is None

    run(scenario)


def test_on_failure_restarts_count_against_the_backoff_limit():
    # TestJobBackoffOnRestartPolicyOnFailure in job_controller_test.go: restartCount 2 of limit 2
    async def scenario(env):
        env.start_manager(controllers=["job"])
        obj = job(backoffLimit=2)
        obj["spec"]["template"]["spec"]["restartPolicy"] = "OnFailure"
        await env.client.create(JOBS, obj)
        pods = await eventually(env, lambda: active_pods(env, 1), what="a pod")
        pod = await env.client.get("pods", pods[0]["metadata"]["name"], NS)
        pod["status"]["phase"] = "Running"
        pod["status"]["containerStatuses"] = [{"name": "c", "image": "busybox", "imageID": "", "ready": False,
                                               "restartCount": 2, "state": {"running": {"startedAt": "2026-01-01T00:00:00Z"}}}]
        await env.client.update_status("pods", pod)
        failed = await eventually(env, lambda: job_condition(env, "Failed"), what="Failed")
        assert condition(failed, "Failed")["reason"] == "BackoffLimitExceeded"

    run(scenario)


def test_deleting_a_job_in_the_background_releases_its_pods():
    # TestFinalizersRemovedExpectations / cleanupPodFinalizers: a deleted Job's pods lose the
    # tracking finalizer, so the garbage collector can remove them
    async def scenario(env):
        env.start_manager(controllers=["job", "garbagecollector"])
        await env.client.create(JOBS, job(parallelism=2, completions=2))
        await eventually(env, lambda: active_pods(env, 2), what="2 pods")
        await env.client.delete(JOBS, "pi", namespace=NS, propagation_policy="Background")
        await eventually(env, lambda: _no_pods(env), timeout=60, what="pods gone")

    run(scenario)
