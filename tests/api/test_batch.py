"""batch/v1 Job and CronJob: defaulting, validation, the generated selector, cron schedules."""

from datetime import datetime, timezone

import pytest
from hypothesis import given, strategies as st

from kvert.api import cron, defaults, jobs, validation
from kvert.api.errors import Invalid
from kvert.registry import AdmissionChain, Registry
from kvert.client import InProcessClient
from kvert.clock import VirtualClock
from kvert.store import open_store


def job(**spec):
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "pi", "namespace": "default"},
            "spec": {"template": {"spec": {"restartPolicy": "Never",
                                           "containers": [{"name": "pi", "image": "busybox"}]}},
                     **spec}}


def cron_job(schedule="*/1 * * * *", **spec):
    return {"apiVersion": "batch/v1", "kind": "CronJob",
            "metadata": {"name": "hello", "namespace": "default"},
            "spec": {"schedule": schedule, "jobTemplate": {"spec": job()["spec"]}, **spec}}


# TestSetDefaultJob in pkg/apis/batch/v1/defaults_test.go
@pytest.mark.parametrize("spec, expected", [
    ({}, {"completions": 1, "parallelism": 1, "backoffLimit": 6, "completionMode": "NonIndexed",
          "suspend": False, "podReplacementPolicy": "TerminatingOrFailed", "manualSelector": False}),
    ({"parallelism": 3}, {"parallelism": 3, "backoffLimit": 6}),     # completions stays unset
    ({"completions": 3}, {"completions": 3, "parallelism": 1}),
    ({"backoffLimitPerIndex": 1, "completionMode": "Indexed", "completions": 2},
     {"backoffLimit": 2147483647}),
    ({"podFailurePolicy": {"rules": [{"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget"}]}]}},
     {"podReplacementPolicy": "Failed"}),
])
def test_job_defaults(spec, expected):
    out = defaults.defaulted(job(**spec))
    for field, value in expected.items():
        assert out["spec"][field] == value, field
    if "parallelism" in spec and "completions" not in spec:
        assert "completions" not in out["spec"]
    if "podFailurePolicy" in spec:
        assert out["spec"]["podFailurePolicy"]["rules"][0]["onPodConditions"][0]["status"] == "True"


def test_job_labels_default_from_template_when_it_has_none():
    # TestSetDefaultJob "labels from template"
    obj = job()
    obj["spec"]["template"]["metadata"] = {"labels": {"app": "pi"}}
    assert defaults.defaulted(obj)["metadata"]["labels"] == {"app": "pi"}


def test_cron_job_defaults():
    # TestSetDefaultCronJob in pkg/apis/batch/v1/defaults_test.go
    out = defaults.defaulted(cron_job())
    spec = out["spec"]
    assert (spec["concurrencyPolicy"], spec["suspend"], spec["successfulJobsHistoryLimit"],
            spec["failedJobsHistoryLimit"]) == ("Allow", False, 3, 1)
    assert spec["jobTemplate"]["spec"]["template"]["spec"]["dnsPolicy"] == "ClusterFirst"


@pytest.fixture
def registry():
    clock = VirtualClock()
    store = open_store("memory", clock=clock)
    yield clock, InProcessClient(Registry(store, clock, AdmissionChain(), seed=7))
    store.close()


def test_create_generates_selector_and_template_labels(registry):
    clock, client = registry
    created = clock.run(client.create("batch/jobs", job(), namespace="default"))
    uid = created["metadata"]["uid"]
    assert created["spec"]["selector"] == {"matchLabels": {"batch.kubernetes.io/controller-uid": uid}}
    assert created["spec"]["template"]["metadata"]["labels"] == {
        "batch.kubernetes.io/controller-uid": uid, "batch.kubernetes.io/job-name": "pi",
        "controller-uid": uid, "job-name": "pi"}
    assert "status" not in created


def test_restart_policy_always_is_refused_with_upstreams_message(registry):
    # TestValidateJob "spec.template.spec.restartPolicy:Required value" in
    # pkg/apis/batch/validation/validation_test.go
    clock, client = registry
    obj = job()
    del obj["spec"]["template"]["spec"]["restartPolicy"]
    with pytest.raises(Invalid) as e:
        clock.run(client.create("batch/jobs", obj, namespace="default"))
    assert 'spec.template.spec.restartPolicy: Required value: valid values: "OnFailure", "Never"' \
        in str(e.value.message)


def test_manual_selector_must_match_template(registry):
    clock, client = registry
    obj = job(manualSelector=True, selector={"matchLabels": {"a": "b"}})
    with pytest.raises(Invalid) as e:
        clock.run(client.create("batch/jobs", obj, namespace="default"))
    assert "`selector` does not match template `labels`" in str(e.value.message)


def test_selector_is_immutable(registry):
    clock, client = registry
    created = clock.run(client.create("batch/jobs", job(), namespace="default"))
    created["spec"]["selector"] = {"matchLabels": {"x": "y"}}
    with pytest.raises(Invalid) as e:
        clock.run(client.update("batch/jobs", created))
    assert "spec.selector: Invalid value" in str(e.value.message) and "field is immutable" in str(e.value.message)


@pytest.mark.parametrize("spec, message", [
    # TestValidateJob cases
    ({"completionMode": "Indexed", "parallelism": 2}, "spec.completions: Required value: when completion mode is Indexed"),
    ({"parallelism": -1}, "spec.parallelism: Invalid value: -1: must be greater than or equal to 0"),
    ({"backoffLimit": -1}, "spec.backoffLimit: Invalid value: -1: must be greater than or equal to 0"),
    ({"completionMode": "Foo"}, 'spec.completionMode: Unsupported value: "Foo"'),
    ({"podReplacementPolicy": "Foo"}, 'spec.podReplacementPolicy: Unsupported value: "Foo"'),
])
def test_job_spec_validation(spec, message):
    obj = defaults.defaulted(job(**spec))
    obj["metadata"]["uid"] = "u"
    jobs.generate_selector(obj)
    causes = validation.validate(obj)
    assert any(message in f"{c.field}: {c.message}" for c in causes), causes


# TestValidateCronJob in pkg/apis/batch/validation/validation_test.go
@pytest.mark.parametrize("spec, message", [
    ({"schedule": "error"}, "spec.schedule: Invalid value: \"error\": expected exactly 5 fields, found 1: [error]"),
    ({"schedule": "TZ=UTC 0 * * * *"},
     "spec.schedule: Invalid value: \"TZ=UTC 0 * * * *\": cannot use TZ or CRON_TZ in schedule, "
     "use timeZone field instead"),
    ({"timeZone": "Continent/Zone"}, 'spec.timeZone: Invalid value: "Continent/Zone": unknown time zone Continent/Zone'),
    ({"timeZone": "Local"}, "timeZone must be an explicit time zone"),
    ({"timeZone": ""}, "timeZone must be nil or non-empty string"),
    ({"concurrencyPolicy": "Sometimes"}, 'spec.concurrencyPolicy: Unsupported value: "Sometimes"'),
    ({"startingDeadlineSeconds": -1}, "spec.startingDeadlineSeconds: Invalid value: -1"),
    ({"successfulJobsHistoryLimit": -1}, "spec.successfulJobsHistoryLimit: Invalid value: -1"),
])
def test_cron_job_validation(spec, message):
    obj = defaults.defaulted(cron_job(**spec))
    causes = validation.validate(obj)
    assert any(message in f"{c.field}: {c.message}" for c in causes), causes


def test_cron_job_name_and_template_selector():
    obj = defaults.defaulted(cron_job())
    obj["metadata"]["name"] = "a" * 53
    obj["spec"]["jobTemplate"]["spec"]["selector"] = {"matchLabels": {"a": "b"}}
    text = [f"{c.field}: {c.message}" for c in validation.validate(obj)]
    assert any("metadata.name" in t and "must be no more than 52 characters" in t for t in text)
    assert any("spec.jobTemplate.spec.selector" in t and "`selector` will be auto-generated" in t
               for t in text)
    good = defaults.defaulted(cron_job("@hourly", timeZone="Europe/Berlin"))
    assert validation.validate(good) == []


# robfig/cron v3 parser_test.go TestRange / TestParseScheduleErrors
@pytest.mark.parametrize("spec, error", [
    ("", "empty spec string"),
    ("* * * *", "expected exactly 5 fields, found 4: [* * * *]"),
    ("@unrecognized", "unrecognized descriptor: @unrecognized"),
    ("65 * * * *", "end of range (65) above maximum (59): 65"),
    ("* 5-3 * * *", "beginning of range (5) beyond end of range (3): 5-3"),
    ("* * 0 * *", "beginning of range (0) below minimum (1): 0"),
    ("*/0 * * * *", "step of range should be a positive number: */0"),
    ("1-2-3 * * * *", "too many hyphens: 1-2-3"),
    ("1/2/3 * * * *", "too many slashes: 1/2/3"),
    ("x * * * *", 'failed to parse int from x: strconv.Atoi: parsing "x": invalid syntax'),
])
def test_cron_parse_errors(spec, error):
    with pytest.raises(cron.CronError) as e:
        cron.parse(spec)
    assert str(e.value) == error


UTC = timezone.utc


# TestNextScheduleTime / mostRecentScheduleTime cases in pkg/controller/cronjob/utils_test.go
# and robfig/cron spec_test.go TestActivation
@pytest.mark.parametrize("spec, after, expected", [
    ("@hourly", datetime(2016, 5, 19, 10, 0, tzinfo=UTC), datetime(2016, 5, 19, 11, 0, tzinfo=UTC)),
    ("30 * * * *", datetime(2016, 5, 19, 10, 0, tzinfo=UTC), datetime(2016, 5, 19, 10, 30, tzinfo=UTC)),
    ("*/15 * * * *", datetime(2016, 5, 19, 10, 1, tzinfo=UTC), datetime(2016, 5, 19, 10, 15, tzinfo=UTC)),
    ("0 0 * * 0", datetime(2012, 7, 9, 0, 0, tzinfo=UTC), datetime(2012, 7, 15, 0, 0, tzinfo=UTC)),
    # both days restricted: either matches (Jul 15 2012 is a Sunday, the 1st is earlier)
    ("0 0 1 * 0", datetime(2012, 7, 2, 0, 0, tzinfo=UTC), datetime(2012, 7, 8, 0, 0, tzinfo=UTC)),
    ("0 0 1 * *", datetime(2012, 7, 2, 0, 0, tzinfo=UTC), datetime(2012, 8, 1, 0, 0, tzinfo=UTC)),
    ("0 0 * * MON", datetime(2012, 7, 9, 0, 0, tzinfo=UTC), datetime(2012, 7, 16, 0, 0, tzinfo=UTC)),
])
def test_cron_next(spec, after, expected):
    assert cron.parse(spec).next_after(after) == expected


@given(st.integers(0, 59), st.integers(0, 23), st.integers(1, 28), st.integers(1, 12))
def test_cron_fixed_time_fires_at_that_time(minute, hour, day, month):
    schedule = cron.parse(f"{minute} {hour} {day} {month} *")
    got = schedule.next_after(datetime(2030, 1, 1, tzinfo=UTC) if (month, day) != (1, 1) or hour or minute
                              else datetime(2029, 12, 31, tzinfo=UTC))
    assert (got.minute, got.hour, got.day, got.month) == (minute, hour, day, month)


def test_cron_job_printer_row():
    # TestPrintCronJob in pkg/printers/internalversion/printers_test.go ("Basic cron job")
    from kvert.apiserver.printers.builtin import cronjob_row
    obj = {"metadata": {"name": "cronjob1", "creationTimestamp": "2026-01-01T00:00:00Z"},
           "spec": {"schedule": "0/5 * * * ?", "suspend": False,
                    "jobTemplate": {"spec": {"template": {"spec": {"containers": [
                        {"name": "fake-job-container1", "image": "fake-job-image1"}]}}}}},
           "status": {"lastScheduleTime": "2026-01-01T00:00:00Z"}}
    now = int(datetime(2026, 1, 1, tzinfo=UTC).timestamp() * 1e9)
    cells, _ = cronjob_row(obj, now)
    assert cells[:7] == ["cronjob1", "0/5 * * * ?", "<none>", "False", 0, "0s", "0s"]
    assert cells[7:9] == ["fake-job-container1", "fake-job-image1"]


@pytest.mark.parametrize("conditions, deleting, expected", [
    # TestPrintJob in pkg/printers/internalversion/printers_test.go: the STATUS column
    ([], False, "Running"),
    ([{"type": "SuccessCriteriaMet", "status": "True"}], False, "SuccessCriteriaMet"),
    ([{"type": "SuccessCriteriaMet", "status": "True"}, {"type": "Complete", "status": "True"}], False,
     "Complete"),
    ([{"type": "FailureTarget", "status": "True"}], False, "FailureTarget"),
    ([{"type": "FailureTarget", "status": "True"}, {"type": "Failed", "status": "True"}], False, "Failed"),
    ([{"type": "Suspended", "status": "True"}], False, "Suspended"),
    ([], True, "Terminating"),
])
def test_job_printer_status(conditions, deleting, expected):
    from kvert.apiserver.printers.builtin import job_row
    obj = {"metadata": {"name": "j", "creationTimestamp": "2026-01-01T00:00:00Z"},
           "spec": {"completions": 1, "parallelism": 1},
           "status": {"conditions": conditions}}
    if deleting:
        obj["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    cells, _ = job_row(obj, int(datetime(2026, 1, 1, tzinfo=UTC).timestamp() * 1e9))
    assert cells[1] == expected and cells[2] == "0/1"
