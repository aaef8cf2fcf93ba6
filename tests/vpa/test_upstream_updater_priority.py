"""Which pods the updater acts on, and when it acts at all, as upstream VPA 1.8(.1) decides:
quick OOMs (stale ones included), per-VPA evictAfterOOMSeconds, observed containers,
RequestsOnly capping, the admission controller's status, rate limits and namespaces -- through
``Updater.run_once`` on hand-made pods (see test_upstream_updater_inplace's World)."""

from __future__ import annotations

from kvert.api.meta import format_time
from kvert.vpa.admission_status import AdmissionControllerStatus
from kvert.vpa.features import VpaGates
from kvert.vpa.instruments import UpdaterMetrics
from kvert.vpa.updater import Updater

from tests.vpa.test_upstream_updater_inplace import NS, World, rec, run, sample

HOUR, MINUTE = 3600.0, 60.0


def cpu_rec(target: str, lower: str, upper: str, container: str = "hamster") -> dict:
    return {"containerRecommendations": [{"containerName": container, "target": {"cpu": target},
                                          "lowerBound": {"cpu": lower}, "upperBound": {"cpu": upper},
                                          "uncappedTarget": {"cpu": target}}]}


def oom(w: World, finished_ago: float, started_ago: float) -> dict:
    now = w.clock.now()
    return {"terminated": {"reason": "OOMKilled", "exitCode": 137, "finishedAt": format_time(now - finished_ago),
                           "startedAt": format_time(now - started_ago)}}


def one_pod(cpu: str = "4") -> list[dict]:
    return [{"name": "hamster", "image": "hamster", "resources": {"requests": {"cpu": cpu}}}]


def quick_oom_case(finished_ago: float, started_ago: float, *, recommendation: dict | None = None,
                   containers: list[dict] | None = None, annotations: dict | None = None,
                   policies: list[dict] | None = None, update_policy: dict | None = None,
                   gates: VpaGates | None = None) -> list[str]:
    """upstream's UpdatePriorityCalculator tests: a pod started 11 hours ago (short of the 12h
    lifetime threshold), requests within the recommended range, MinChangePriority 0.5,
    EvictAfterOOMThreshold 10 minutes; what a Recreate pass evicts."""
    async def scenario(w: World):
        spec = {"resourcePolicy": {"containerPolicies": policies}} if policies else {}
        await w.vpa("Recreate", recommendation or cpu_rec("5", "1", "6"), update_policy=update_policy or {}, **spec)
        await w.pod("pod1", containers=containers or one_pod(), age=11 * HOUR, annotations=annotations,
                    last_state=oom(w, finished_ago, started_ago))
        u = Updater(w.client, w.clock, min_replicas=1, min_change_priority=0.5, evict_after_oom_threshold=10 * MINUTE,
                    pod_lifetime_threshold=12 * HOUR, gates=gates)
        return (await u.run_once()).evicted
    return run(scenario, replicas=1)


def test_quick_oom_updates_a_pod_inside_the_range():
    # upstream: TestUpdatePodWithQuickOOM (OOM 5 min after start, finished 3 min ago)
    assert quick_oom_case(3 * MINUTE, 5 * MINUTE) == ["pod1"]


def test_a_stale_quick_oom_is_not_a_fresh_one():
    # upstream 1.8.1: TestDontUpdatePodWithStaleQuickOOM (7af30ea5ec): OOMed 2 minutes after
    # start, but 20 minutes ago -- as an InPlace pod, never re-created, keeps reporting it
    assert quick_oom_case(20 * MINUTE, 22 * MINUTE) == []


def test_an_oom_after_a_long_run_is_not_quick():
    # upstream: TestDontUpdatePodWithOOMAfterLongRun (OOM 57 minutes after start)
    assert quick_oom_case(3 * MINUTE, 60 * MINUTE) == []


def test_quick_oom_without_a_change_does_nothing():
    # upstream: TestDontUpdatePodWithQuickOOMNoResourceChange: target 4 / 8Gi, the pod's own requests
    no_change = {"containerRecommendations": [{"containerName": "hamster", "target": {"cpu": "4", "memory": "8Gi"},
                                               "lowerBound": {"cpu": "2", "memory": "5Gi"},
                                               "upperBound": {"cpu": "5", "memory": "10Gi"},
                                               "uncappedTarget": {"cpu": "4", "memory": "8Gi"}}]}
    containers = [{"name": "hamster", "image": "hamster", "resources": {"requests": {"cpu": "4", "memory": "8Gi"}}}]
    assert quick_oom_case(3 * MINUTE, 5 * MINUTE, recommendation=no_change, containers=containers) == []


def test_quick_oom_only_for_observed_containers():
    # upstream: TestQuickOOM_VpaOvservedContainers: no annotation -> update; the container listed ->
    # update; an empty list -> no update
    assert quick_oom_case(3 * MINUTE, 5 * MINUTE, annotations={}) == ["pod1"]
    assert quick_oom_case(3 * MINUTE, 5 * MINUTE, annotations={"vpaObservedContainers": "hamster"}) == ["pod1"]
    assert quick_oom_case(3 * MINUTE, 5 * MINUTE, annotations={"vpaObservedContainers": ""}) == []


def test_quick_oom_ignores_containers_in_mode_off():
    # upstream: TestQuickOOM_ContainerResourcePolicy: mode Auto (by name or "*") -> update, Off -> none
    for name, mode, evicted in (("hamster", "Auto", ["pod1"]), ("hamster", "Off", []), ("*", "Auto", ["pod1"]),
                                ("*", "Off", [])):
        assert quick_oom_case(3 * MINUTE, 5 * MINUTE, policies=[{"containerName": name, "mode": mode}],
                              annotations={"vpaObservedContainers": "hamster"}) == evicted, (name, mode)


def test_per_vpa_evict_after_oom_seconds_needs_its_gate():
    # upstream: e2e "Updater with PerVPAConfig" (81fe9f76bb): evictAfterOOMSeconds 1 -- an OOM 5 s
    # after start is no quick OOM -- and 600 -- it is; getEvictOOMThreshold falls back to the
    # --evict-after-oom-threshold flag while PerVPAConfig is off
    per_vpa = VpaGates.parse("PerVPAConfig=true")
    assert quick_oom_case(20, 25, update_policy={"evictAfterOOMSeconds": 1}, gates=per_vpa) == []
    assert quick_oom_case(20, 25, update_policy={"evictAfterOOMSeconds": 600}, gates=per_vpa) == ["pod1"]
    assert quick_oom_case(20, 25, update_policy={"evictAfterOOMSeconds": 1}) == ["pod1"]


def test_requests_only_caps_the_target_and_bounds_at_the_limits():
    # upstream: TestRecommendationToLimitCapping "capping for RequestsOnly policy" (limits 30 / 70000,
    # target 20 / 80000 -> 20 / 70000, upperBound 10x10 / 9000x10 -> 30 / 70000) and "... for limits
    # defined in containerStatus" (status limits 2.5 / 60000 -> target 2.5 / 60000)
    recommendation = {"containerRecommendations": [{
        "containerName": "hamster", "target": {"cpu": "20", "memory": "80k"}, "lowerBound": {"cpu": "15", "memory": "60k"},
        "upperBound": {"cpu": "100", "memory": "90k"}, "uncappedTarget": {"cpu": "20", "memory": "80k"}}]}
    policies = [{"containerName": "*", "controlledValues": "RequestsOnly"}]
    for status_limits, expected in ((None, {"cpu": "20", "memory": "70k"}),
                                    ({"cpu": "2500m", "memory": "60k"}, {"cpu": "2500m", "memory": "60k"})):
        async def scenario(w: World, status_limits=status_limits):
            await w.vpa("InPlaceOrRecreate", recommendation, resourcePolicy={"containerPolicies": policies})
            containers = [{"name": "hamster", "image": "hamster",
                           "resources": {"requests": {"cpu": "2", "memory": "50k"},
                                         "limits": {"cpu": "30", "memory": "70k"}}}]
            pod = await w.pod("pod1", containers=containers)
            if status_limits is not None:
                pod["status"]["containerStatuses"][0]["resources"]["limits"] = status_limits
                await w.client.update_status("pods", pod)
            await Updater(w.client, w.clock, min_replicas=1).run_once()
            return (await w.live())["pod1"]["spec"]["containers"][0]["resources"]
        resources = run(scenario, replicas=1)
        assert resources == {"requests": expected, "limits": {"cpu": "30", "memory": "70k"}}, status_limits


def test_no_update_while_the_admission_controller_status_is_stale():
    # upstream: TestRunOnce_Status: "with valid status" 5 evictions, "with invalid status" none;
    # isStatusValid: created or renewed within the lease timeout (1 minute)
    async def scenario(w: World):
        await w.vpa("Recreate", rec("1", "1Gi"))
        for i in range(5):
            await w.pod(f"p{i}")
        u = Updater(w.client, w.clock, use_admission_controller_status=True, eviction_tolerance=1.0)
        missing = await u.run_once()
        assert not missing.evicted and missing.blocked.startswith("Error getting Admission Controller status")
        status = AdmissionControllerStatus(w.client, w.clock, holder="test")
        await status.update()
        await w.clock.sleep(61)                     # created more than the timeout ago
        stale = await u.run_once()
        assert not stale.evicted and stale.blocked == "Admission Controller status is not valid"
        await status.update()                       # renewed
        lease = await w.client.get("coordination.k8s.io/leases", "vpa-admission-controller", "kube-system")
        assert lease["spec"]["holderIdentity"] == "test" and lease["spec"]["leaseDurationSeconds"] == 10
        return (await u.run_once()).evicted
    assert len(run(scenario, replicas=5)) == 5


def test_eviction_rate_limit_paces_evictions_within_the_pass():
    # upstream: getRateLimiter (TestGetRateLimiter): a positive --eviction-rate-limit is a token bucket
    # of --eviction-rate-burst; a wait beyond the pass (its interval) ends it with
    # EvictionRateLimiterWaitFailed
    async def scenario(w: World, rate: float):
        await w.vpa("Recreate", rec("1", "1Gi"))
        for i in range(4):
            await w.pod(f"p{i}")
        metrics = UpdaterMetrics()
        u = Updater(w.client, w.clock, eviction_tolerance=1.0, eviction_rate_limit=rate, eviction_rate_burst=1,
                    metrics=metrics, interval=60)
        start = w.clock.now()
        result = await u.run_once()
        failed = sample(metrics, "vpa_updater_failed_eviction_attempts_total", vpa_size_log2="2",
                        update_mode="Recreate", reason="EvictionRateLimiterWaitFailed", vpa_name="hamster-vpa",
                        vpa_namespace=NS)
        return len(result.evicted), w.clock.now() - start, failed
    evicted, took, failed = run(lambda w: scenario(w, 0.5), replicas=4)
    assert evicted == 4 and 6 <= took < 7 and failed is None     # one now, then one every 2 s
    evicted, took, failed = run(lambda w: scenario(w, 0.01), replicas=4)
    assert evicted == 1 and took < 1 and failed == 1.0            # the next token is 100 s away
    evicted, _, _ = run(lambda w: scenario(w, -1), replicas=4)
    assert evicted == 4


def test_ignored_and_selected_namespaces():
    # upstream: TestRunOnceIgnoreNamespaceMatchingPods (another namespace ignored: 5 evictions) and
    # TestRunOnceIgnoreNamespaceMatching (its own namespace ignored: none); --vpa-object-namespace
    async def scenario(w: World, **options):
        await w.vpa("Recreate", rec("1", "1Gi"))
        for i in range(5):
            await w.pod(f"p{i}")
        return len((await Updater(w.client, w.clock, eviction_tolerance=1.0, **options).run_once()).evicted)
    assert run(lambda w: scenario(w, ignored_vpa_object_namespaces=("not-default",)), replicas=5) == 5
    assert run(lambda w: scenario(w, ignored_vpa_object_namespaces=("default",)), replicas=5) == 0
    assert run(lambda w: scenario(w, vpa_object_namespace="other"), replicas=5) == 0
    assert run(lambda w: scenario(w, vpa_object_namespace="default"), replicas=5) == 5
