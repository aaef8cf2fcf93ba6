"""The CronJob controller in virtual time, with the Job controller (pods are finished by
the tests). Cases follow TestControllerV2SyncCronJob in
pkg/controller/cronjob/cronjob_controllerv2_test.go and utils_test.go."""

from datetime import datetime, timezone

import pytest

from kvert.api import cron
from kvert.controllers.cronjob import job_name, most_recent_schedule_time, rfc3339

from .helpers import NS, eventually, run
from .test_job import finish

CRONJOBS, JOBS = "batch/cronjobs", "batch/jobs"
# 2016-05-19T10:00:00Z, a Thursday: TestControllerV2SyncCronJob's justBeforeTheHour is 09:59
T0 = datetime(2016, 5, 19, 9, 59, 30, tzinfo=timezone.utc).timestamp()


def cronjob(name="hello", schedule="0 * * * *", **spec):
    return {"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": name, "namespace": NS},
            "spec": {"schedule": schedule, **spec, "jobTemplate": {
                "metadata": {"labels": {"app": "hello"}},
                "spec": {"template": {"spec": {"restartPolicy": "OnFailure",
                                               "containers": [{"name": "c", "image": "busybox"}]}}}}}}


async def jobs_of(env, n):
    items = (await env.client.list(JOBS, namespace=NS))["items"]
    return sorted(items, key=lambda j: j["metadata"]["name"]) if len(items) == n else None


def test_job_name_is_minutes_since_the_epoch():
    # TestGetJobName-like: getTimeHashInMinutes
    t = datetime(2016, 5, 19, 10, 0, tzinfo=timezone.utc)
    # 2016-05-19T10:00:00Z is 1463652000 s, 24394200 min after the epoch
    assert job_name("mycronjob", t) == "mycronjob-24394200"
    assert rfc3339(t) == "2016-05-19T10:00:00Z"


@pytest.mark.parametrize("created, last, now, deadline, expected", [
    # TestMostRecentScheduleTime cases in utils_test.go, schedule "0 * * * *"
    ("2016-05-19T09:50:00Z", None, "2016-05-19T09:59:00Z", None, None),          # not yet
    ("2016-05-19T09:50:00Z", None, "2016-05-19T10:00:30Z", None, "2016-05-19T10:00:00Z"),
    ("2016-05-19T09:50:00Z", "2016-05-19T10:00:00Z", "2016-05-19T10:30:00Z", None, None),  # done
    ("2016-05-19T05:50:00Z", None, "2016-05-19T10:30:00Z", None, "2016-05-19T10:00:00Z"),  # many missed
    ("2016-05-19T09:50:00Z", None, "2016-05-19T10:30:00Z", 60, None),          # past the deadline
])
def test_most_recent_schedule_time(created, last, now, deadline, expected):
    cj = {"metadata": {"creationTimestamp": created}, "spec": {}, "status": {}}
    if last:
        cj["status"]["lastScheduleTime"] = last
    if deadline is not None:
        cj["spec"]["startingDeadlineSeconds"] = deadline
    n = datetime.fromisoformat(now.replace("Z", "+00:00"))
    got = most_recent_schedule_time(cj, cron.parse("0 * * * *"), n)
    assert (rfc3339(got) if got else None) == expected


def test_creates_a_job_at_the_scheduled_time_and_tracks_it():
    async def scenario(env):
        env.start_manager(controllers=["cronjob", "job"])
        await env.client.create(CRONJOBS, cronjob())
        await env.clock.sleep(10)
        assert await jobs_of(env, 0) == []
        [job] = await eventually(env, lambda: jobs_of(env, 1), timeout=60, what="a job")
        scheduled = datetime(2016, 5, 19, 10, 0, tzinfo=timezone.utc)
        assert job["metadata"]["name"] == job_name("hello", scheduled)
        assert job["metadata"]["annotations"]["batch.kubernetes.io/cronjob-scheduled-timestamp"] == \
            "2016-05-19T10:00:00Z"
        assert job["metadata"]["labels"]["app"] == "hello"
        assert job["metadata"]["ownerReferences"][0]["kind"] == "CronJob"
        cj = await env.get(CRONJOBS, "hello")
        assert cj["status"]["lastScheduleTime"] == "2016-05-19T10:00:00Z"
        assert [r["name"] for r in cj["status"]["active"]] == [job["metadata"]["name"]]
        [pod] = await eventually(env, lambda: env.pods(), what="the job's pod")
        await finish(env, pod, "Succeeded")

        async def done():
            c = await env.get(CRONJOBS, "hello")
            return c if "active" not in c["status"] and c["status"].get("lastSuccessfulTime") else None
        cj = await eventually(env, done, what="job done")
        assert [e["message"] for e in await env.events("SuccessfulCreate")
                if e["involvedObject"]["kind"] == "CronJob"] == [f"Created job {job['metadata']['name']}"]

    run(scenario, start=T0)


def test_forbid_skips_while_a_job_runs_and_replace_replaces_it():
    # TestControllerV2SyncCronJob "still active, not time, F" / "prev ran but done, is time, R"
    async def scenario(env):
        env.start_manager(controllers=["cronjob", "job"])
        await env.client.create(CRONJOBS, cronjob("f", "*/1 * * * *", concurrencyPolicy="Forbid"))
        await eventually(env, lambda: jobs_of(env, 1), timeout=60, what="first job")
        await env.clock.sleep(130)
        assert len(await jobs_of(env, 1)) == 1
        assert await env.events("JobAlreadyActive")
        cj = await env.get(CRONJOBS, "f")
        cj["spec"]["concurrencyPolicy"] = "Replace"
        await env.client.update(CRONJOBS, cj)
        first = (await jobs_of(env, 1))[0]["metadata"]["name"]

        async def replaced():
            items = await jobs_of(env, 1)
            return items if items and items[0]["metadata"]["name"] != first else None
        await eventually(env, replaced, timeout=120, what="a replacement job")

    run(scenario, start=T0)


def test_suspended_cronjob_creates_nothing_and_history_is_limited():
    async def scenario(env):
        env.start_manager(controllers=["cronjob", "job"])
        await env.client.create(CRONJOBS, cronjob("s", "*/1 * * * *", suspend=True))
        await env.clock.sleep(200)
        assert await jobs_of(env, 0) == []
        await env.client.create(CRONJOBS, cronjob("h", "*/1 * * * *", successfulJobsHistoryLimit=1))
        for _ in range(3):
            pods = await eventually(env, lambda: env.pods(), timeout=90, what="a pod")
            for p in pods:
                await finish(env, p, "Succeeded")
            await env.clock.sleep(5)
        await env.clock.sleep(5)
        items = (await env.client.list(JOBS, namespace=NS))["items"]
        finished = [j for j in items if any(c["type"] == "Complete" for c in j["status"].get("conditions", []))]
        assert len(finished) <= 1
        assert await env.events("SuccessfulDelete")

    run(scenario, start=T0)
