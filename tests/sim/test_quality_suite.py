"""examples/scenarios/quality.yaml: the six workloads of issue 13 and their policies."""

from pathlib import Path

from kvert.api.quantity import to_int
from kvert.kubelet.usage import USAGE_ANNOTATION, parse_usage_annotation
from kvert.sim.engine import simulate
from kvert.sim.report import report_html, report_json
from kvert.sim.scenario import load_scenario

SUITE = Path(__file__).resolve().parents[2] / "examples" / "scenarios" / "quality.yaml"


def usage(workload):
    template = workload.template
    return parse_usage_annotation(template["metadata"]["annotations"][USAGE_ANNOTATION])


def test_six_workloads_and_the_vpa_modes_as_policies():
    scn = load_scenario(SUITE)
    workloads = {w.name: w for w in scn.workloads}
    assert sorted(workloads) == ["batch", "diurnal", "leak", "oom-prone", "spiky", "steady"]
    # the first policies are the modes a user knows; another is appended after them
    assert [p.name for p in scn.policies][:3] == ["no VPA", "Recreate", "InPlaceOrRecreate"]
    assert [p.update_mode for p in scn.policies][:3] == [None, "Recreate", "InPlaceOrRecreate"]
    leak = usage(workloads["leak"])["app"].memory
    assert leak.kind == "linear" and leak.max is None               # grows until it is killed
    assert usage(workloads["batch"])["worker"].exit_after == 20 * 60
    # kvert's batch model for the batch workload only, under kvert's policy only
    policies = {p.name: p for p in scn.policies}
    batch = {name: (scn.vpa_object(workloads["batch"], p)["metadata"].get("annotations") or {})
             for name, p in policies.items() if p.vpa is not None}
    assert batch["kvert in-place"]["vpa.kvert.io/workload"] == "batch"
    assert batch["kvert in-place"]["vpa.kvert.io/model"] == "in-place"
    for upstream in ("Recreate", "InPlaceOrRecreate"):
        assert "vpa.kvert.io/workload" not in batch[upstream]
    steady = scn.vpa_object(workloads["steady"], policies["kvert in-place"])["metadata"]["annotations"]
    assert "vpa.kvert.io/workload" not in steady
    # a leak that is followed long enough asks for more than a node has
    allocatable = scn.pools[0].capacity["memory"] - 2 * to_int("memory", "256Mi") - to_int("memory", "100Mi")
    hours_to_outgrow = (allocatable - leak.start) / leak.rate / 3600
    assert hours_to_outgrow < scn.duration / 3600


def test_a_short_run_reports_every_policy():
    scn = load_scenario(SUITE)
    scn.duration = 2 * 3600
    runs = simulate(scn, skip_unavailable=False)
    assert [r.policy for r in runs] == [p.name for p in scn.policies]
    none = runs[0].counters
    # by the scenario's arithmetic: the leak reaches its 512Mi limit after (512-200)/8 = 39
    # minutes, oom-prone spikes to 560Mi over its 512Mi limit at 1h, batch exits every 20 minutes
    assert none["leak"]["oom_kills"] >= 2 and none["oom-prone"]["oom_kills"] >= 2
    assert none["batch"]["restarts"] >= 2 and none["batch"]["throttled_seconds"] > 0
    page = report_html(report_json(scn, runs))
    for name in ("steady", "diurnal", "spiky", "leak", "oom-prone", "batch", "InPlaceOrRecreate"):
        assert name in page


def test_a_day_of_the_in_place_policies():
    """Issue 13's acceptance on the suite's full day: upstream's InPlaceOrRecreate against
    kvert's in-place model with capacity-aware caps."""
    scn = load_scenario(SUITE)
    upstream, kvert = simulate(scn, policies=["InPlaceOrRecreate", "kvert in-place"], skip_unavailable=False)
    allocatable = {"cpu": scn.pools[0].capacity["cpu"] - 200,
                   "memory": scn.pools[0].capacity["memory"] - 2 * to_int("memory", "256Mi") - to_int("memory", "100Mi")}
    # the capacity cap: no recommendation ever above what a node can allocate
    for history in kvert.recommendation_history.values():
        for entries in history.values():
            for entry in entries:
                for bound in ("target", "lowerBound", "upperBound"):
                    for r, amount in entry[bound].items():
                        assert amount <= allocatable[r], (bound, r, amount)
    # upstream's model follows the leak until no node has room for it: its eviction waits Pending
    assert upstream.pending_by_reason["leak"].get("Unschedulable", 0) > 0
    # capacity-aware InPlaceOrRecreate never evicts into Pending
    assert all(seconds == 0 for reasons in kvert.pending_by_reason.values()
               for reason, seconds in reasons.items() if reason == "Unschedulable")
    # in-place resizes restart nothing: the workloads that neither exit nor outgrow their
    # memory have resizes and no restarts
    for w in ("steady", "diurnal", "spiky"):
        assert kvert.counters[w]["resizes"] > 0 and kvert.counters[w]["restarts"] == 0, w
    # less slack than upstream's model, and no more OOM kills where upstream's had room to
    # avoid them (the leak grows until something kills it: here its OOM kill restarts it on
    # its node, where upstream's evicted it into hours of Pending)
    assert policy_slack(kvert, "cpu") < policy_slack(upstream, "cpu")
    assert policy_slack(kvert, "memory") < policy_slack(upstream, "memory")
    for w in ("steady", "diurnal", "spiky", "oom-prone", "batch"):
        assert kvert.counters[w]["oom_kills"] <= upstream.counters[w]["oom_kills"], w
    # issue 13's aim: at most 20% of the requests unused over the suite (measured: 14.4% cpu,
    # 19.0% memory; memory is read at the sample instants, and a quarter of the batch samples
    # fall at the instant one run has ended and the next not begun: no working set, the
    # requests still held), without leaving the spikes short of cpu more than upstream's
    # model does
    assert policy_slack(kvert, "cpu") <= 20.0
    assert policy_slack(kvert, "memory") <= 20.0
    short = "cpu_under_percent"
    assert workload_figure(kvert, "spiky", short) <= workload_figure(upstream, "spiky", short)
    # the batch worker (declared batch under this policy: its own vpa annotations) is sized by
    # its mean cpu: its runs use 1.5 cores (5% noise), the mean reads buckets 5% wide, the
    # model adds no cpu margin
    batch = kvert.recommendation_history["batch"]["worker"][-1]["target"]["cpu"]
    assert abs(batch - 1500) <= 0.05 * 1500, batch
    # and its cpu over each interval counts the runs that ended in it: the requests follow
    # what it uses (measured: 0.6% slack, 0.4% short; upstream's p90 with its margin: 18.0%)
    assert workload_figure(kvert, "batch", "cpu_slack_percent") <= 5.0
    assert workload_figure(kvert, "batch", "cpu_slack_percent") < workload_figure(upstream, "batch",
                                                                                 "cpu_slack_percent")


def policy_slack(run, resource):
    from kvert.sim.metrics import policy_metrics
    return policy_metrics(run)["totals"][f"{resource}_slack_percent"]


def workload_figure(run, workload, key):
    from kvert.sim.metrics import policy_metrics
    return policy_metrics(run)["workloads"][workload][key]
