"""Jobs live with real kubectl against ``kvert up``: a Job whose container exits after a
second (the ``kvert.io/usage`` ``exitAfter`` entry) completes, and kubectl prints it as
1.35 does."""

from __future__ import annotations

import json

from .conftest import wait_for


def _job_with_quick_exit(kubectl, name: str, code: int = 0) -> str:
    out = kubectl("create", "job", name, "--image=busybox", "--dry-run=client", "-o", "json").stdout
    job = json.loads(out)
    template = job["spec"]["template"]
    template.setdefault("metadata", {}).setdefault("annotations", {})["kvert.io/usage"] = json.dumps(
        {"*": {"exitAfter": "1s", "exitCode": code}})
    return json.dumps(job)


def test_kubectl_create_job_completes(kubectl):
    kubectl("create", "-f", "-", input=_job_with_quick_exit(kubectl, "pi"))
    kubectl("wait", "--for=condition=complete", "job/pi", "--timeout=60s")
    job = kubectl.json("get", "job", "pi")
    assert job["spec"]["completions"] == 1 and job["spec"]["backoffLimit"] == 6
    assert job["status"]["succeeded"] == 1
    assert [c["type"] for c in job["status"]["conditions"]] == ["SuccessCriteriaMet", "Complete"]
    pods = kubectl.json("get", "pods", "-l", "job-name=pi")["items"]
    assert [p["status"]["phase"] for p in pods] == ["Succeeded"]
    header, row = kubectl("get", "job", "pi").stdout.splitlines()
    assert header.split() == ["NAME", "STATUS", "COMPLETIONS", "DURATION", "AGE"]
    assert row.split()[:3] == ["pi", "Complete", "1/1"]


def test_a_failing_job_fails_with_backoff_limit_exceeded(kubectl):
    job = json.loads(_job_with_quick_exit(kubectl, "bad", code=3))
    job["spec"]["backoffLimit"] = 0
    kubectl("create", "-f", "-", input=json.dumps(job))
    kubectl("wait", "--for=condition=failed", "job/bad", "--timeout=60s")
    failed = next(c for c in kubectl.json("get", "job", "bad")["status"]["conditions"] if c["type"] == "Failed")
    assert failed["reason"] == "BackoffLimitExceeded"


def test_restart_policy_always_is_refused(kubectl):
    job = json.loads(_job_with_quick_exit(kubectl, "always"))
    job["spec"]["template"]["spec"]["restartPolicy"] = "Always"
    result = kubectl("create", "-f", "-", input=json.dumps(job), check=False)
    assert result.returncode != 0
    assert 'spec.template.spec.restartPolicy: Required value: valid values: "OnFailure", "Never"' in result.stderr


def test_cronjob_is_listed(kubectl):
    kubectl("create", "cronjob", "hello", "--image=busybox", "--schedule=*/5 * * * *")
    header, row = kubectl("get", "cronjobs").stdout.splitlines()
    assert header.split() == ["NAME", "SCHEDULE", "TIMEZONE", "SUSPEND", "ACTIVE", "LAST", "SCHEDULE", "AGE"]
    assert row.split()[:9] == ["hello", "*/5", "*", "*", "*", "*", "<none>", "False", "0"]


def test_kubectl_create_job_from_cronjob(kubectl):
    kubectl("create", "cronjob", "tmpl", "--image=busybox", "--schedule=@hourly")
    kubectl("create", "job", "manual", "--from=cronjob/tmpl")
    job = kubectl.json("get", "job", "manual")
    assert job["metadata"]["annotations"]["cronjob.kubernetes.io/instantiate"] == "manual"
    assert job["metadata"]["ownerReferences"][0]["kind"] == "CronJob"
    assert job["spec"]["selector"]["matchLabels"] == {
        "batch.kubernetes.io/controller-uid": job["metadata"]["uid"]}


def test_a_job_of_five_completions(kubectl):
    # the docs' fixed completion count Job: five pods succeed, two at a time
    job = json.loads(_job_with_quick_exit(kubectl, "five"))
    job["spec"].update(completions=5, parallelism=2)
    kubectl("create", "-f", "-", input=json.dumps(job))
    kubectl("wait", "--for=condition=complete", "job/five", "--timeout=60s")
    status = kubectl.json("get", "job", "five")["status"]
    assert status["succeeded"] == 5 and status.get("failed", 0) == 0
    pods = kubectl.json("get", "pods", "-l", "job-name=five")["items"]
    assert len(pods) == 5 and {p["status"]["phase"] for p in pods} == {"Succeeded"}
    assert kubectl("get", "job", "five").stdout.splitlines()[1].split()[:3] == ["five", "Complete", "5/5"]


def test_a_cronjob_every_minute_runs_a_job(kubectl):
    # the docs' "hello" CronJob: "* * * * *" makes a Job at the next minute, which completes
    template = json.loads(_job_with_quick_exit(kubectl, "x"))["spec"]["template"]
    cronjob = {"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "every-minute"},
               "spec": {"schedule": "* * * * *", "jobTemplate": {"spec": {"template": template}}}}
    kubectl("create", "-f", "-", input=json.dumps(cronjob))

    def finished_job():
        for job in kubectl.json("get", "jobs")["items"]:
            refs = job["metadata"].get("ownerReferences") or []
            if refs and refs[0]["name"] == "every-minute" and job.get("status", {}).get("succeeded") == 1:
                return job
        return None
    job = wait_for(finished_job, timeout=90, every=1.0)
    assert job["metadata"]["name"].startswith("every-minute-")
    cj = kubectl.json("get", "cronjob", "every-minute")
    assert cj["status"]["lastScheduleTime"]
