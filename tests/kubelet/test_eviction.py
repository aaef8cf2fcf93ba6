"""The eviction manager against the kubelet's own tests (pkg/kubelet/eviction helpers_test.go
and eviction_manager_test.go); each test names the Go test its vectors come from."""

import pytest

from kvert.kubelet.config import ConfigError, NodeConfig, parse_eviction_thresholds
from kvert.kubelet.eviction import (ALLOCATABLE_MEMORY_AVAILABLE, MEMORY_AVAILABLE, NODEFS_AVAILABLE,
                                    PID_AVAILABLE, EvictionManager, Observation, Threshold, admit,
                                    by_eviction_priority, node_conditions, node_conditions_last_observed_at,
                                    node_conditions_observed_since, rank, thresholds_first_observed_at,
                                    thresholds_from_config, thresholds_met, thresholds_met_grace_period,
                                    thresholds_updated_stats)
from kvert.kubelet.runtime.base import ContainerStats, PodStats

Mi, Gi = 2**20, 2**30


def _value(text, signal=MEMORY_AVAILABLE):
    return parse_eviction_thresholds({signal: text})[0]


def threshold(signal, text, grace=0.0, min_reclaim=None):
    reclaim = _value(min_reclaim, signal) if min_reclaim else None
    return Threshold(signal, _value(text, signal), grace, reclaim)


def pod(name, priority=0, requests=None, limits=None, **meta):
    resources = {}
    if requests:
        resources["requests"] = requests
    if limits:
        resources["limits"] = limits
    return {"metadata": {"name": name, "namespace": "default", "uid": name, **meta},
            "spec": {"priority": priority, "containers": [{"name": name, "image": "x", "resources": resources}]}}


def stats_of(table):
    """pod name -> PodStats, as a stats function; names missing have no statistics."""
    def lookup(p):
        return table.get(p["metadata"]["uid"])
    return lookup


def mem(ws, name=None):
    s = PodStats(memory=ws)
    if name:
        s.containers[name] = ContainerStats(memory=ws)
    return s


# ---- parsing and quantities -------------------------------------------------------------------------

def test_parse_threshold_config_all_memory_eviction_values():
    # TestParseThresholdConfig "all memory eviction values": allocatable copy of the hard threshold
    config = NodeConfig.from_flags(eviction_hard="memory.available<150Mi", eviction_soft="memory.available<300Mi",
                                   eviction_soft_grace_period="memory.available=30s",
                                   eviction_minimum_reclaim="memory.available=0", capacity="cpu=4,memory=16Gi")
    got = {(t.signal, t.value.quantity, t.grace_period, t.min_reclaim.quantity) for t in thresholds_from_config(config)}
    assert got == {(ALLOCATABLE_MEMORY_AVAILABLE, 150 * Mi, 0.0, 0), (MEMORY_AVAILABLE, 150 * Mi, 0.0, 0),
                   (MEMORY_AVAILABLE, 300 * Mi, 30.0, 0)}


@pytest.mark.parametrize("hard, soft, grace, reclaim", [
    ({"mem.available": "150Mi"}, "", "", ""),                        # invalid-signal
    ({"memory.available": "-150Mi"}, "", "", ""),                    # hard-signal-negative
    ({"memory.available": "-15%"}, "", "", ""),                      # hard-signal-negative-percentage
    ({"memory.available": "150%"}, "", "", ""),                      # ...-greater-than-100%
    ({}, "memory.available<-150Mi", "memory.available=30s", ""),     # soft-signal-negative
    ({"memory.available": "150Mi", "invalid.foo": "150Mi"}, "", "", ""),
    ({}, "memory.available<150Mi", "", ""),                          # soft-no-grace-period
    ({}, "memory.available<150Mi", "memory.available=-30s", ""),     # soft-negative-grace-period
    ({"memory.available": "150Mi"}, "", "", "memory.available=-300Mi"),   # negative-reclaim
])
def test_parse_threshold_config_errors(hard, soft, grace, reclaim):
    # TestParseThresholdConfig, the error cases
    with pytest.raises(ConfigError):
        NodeConfig.from_kubelet_configuration({"evictionHard": hard, "evictionSoft": soft,
                                               "evictionSoftGracePeriod": grace, "evictionMinimumReclaim": reclaim})


def test_zero_and_hundred_percent_disable_a_threshold():
    # TestParseThresholdConfig "disable via 0%" / "disable via 100%": no error, no threshold
    assert parse_eviction_thresholds({"memory.available": "0%"}) == ()
    assert parse_eviction_thresholds({"memory.available": "100%"}) == ()


@pytest.mark.parametrize("text, capacity, expected", [
    # GetThresholdQuantity on parsePercentage's float32 (so 10% of 10Gi is 16 bytes over)
    ("10%", 10 * Gi, 1073741840), ("10%", Gi, 107374184), ("5%", 1000 * Mi, 52428800),
    ("20%", 1000 * Mi, 209715203), ("30%", 1000 * Gi, 322122560000), ("15%", 100 * Gi, 16106128000),
    ("10.5%", 2048, 215), ("100Mi", 10 * Gi, 100 * Mi),
])
def test_threshold_quantity_in_float32(text, capacity, expected):
    assert _value(text).amount(capacity) == expected


def test_add_allocatable_thresholds():
    # TestAddAllocatableThresholds: hard memory thresholds only
    config = NodeConfig.from_flags(eviction_hard="memory.available<150Mi,imagefs.available<15%",
                                   eviction_soft="memory.available<1Gi", eviction_soft_grace_period="memory.available=10s")
    allocatable = [t for t in thresholds_from_config(config) if t.signal == ALLOCATABLE_MEMORY_AVAILABLE]
    assert [(t.value.quantity, t.grace_period) for t in allocatable] == [(150 * Mi, 0.0)]
    none = NodeConfig.from_flags(eviction_hard="memory.available<150Mi", enforce_node_allocatable="none")
    assert all(t.signal != ALLOCATABLE_MEMORY_AVAILABLE for t in thresholds_from_config(none))


# ---- ranking ------------------------------------------------------------------------------------------

def _names(pods):
    return [p["metadata"]["name"] for p in pods]


def test_ordered_by_exceeds_request_memory():
    below = pod("below-requests", -1, {"memory": "200Mi"})
    exceeds = pod("above-requests", 1, {"memory": "100Mi"})
    table = {"below-requests": mem(199 * Mi), "above-requests": mem(101 * Mi)}
    assert _names(rank(MEMORY_AVAILABLE, [below, exceeds], stats_of(table))) == ["above-requests", "below-requests"]


def test_ordered_by_priority_memory():
    # TestOrderedByPriorityMemory: exceeds requests, then priority, then usage over requests
    spec = [("pod1", -1, None, 500), ("pod2", -1, None, 50), ("pod3", 1, "100Mi", 600), ("pod4", 1, "100Mi", 150),
            ("pod5", -1, "1Gi", 800), ("pod6", -1, "1Gi", 200), ("pod7", 1, "1Gi", 800), ("pod8", 1, "1Gi", 200)]
    pods = [pod(n, p, {"memory": r} if r else None) for n, p, r, _ in spec]
    table = {n: mem(ws * Mi) for n, _, _, ws in spec}
    ranked = rank(MEMORY_AVAILABLE, list(reversed(pods)), stats_of(table))
    assert _names(ranked) == [f"pod{i}" for i in range(1, 9)]


def test_ordered_by_memory():
    # TestOrderedByMemory, all of priority 0 (sorted by exceeding, then usage over requests)
    spec = [("pod1", None, 500), ("pod2", None, 300), ("pod3", "100Mi", 800), ("pod4", "100Mi", 300),
            ("pod5", "1Gi", 800), ("pod6", "1Gi", 200)]
    pods = [pod(n, 0, {"memory": r} if r else None) for n, r, _ in spec]
    table = {n: mem(ws * Mi) for n, _, ws in spec}
    assert _names(rank(MEMORY_AVAILABLE, pods, stats_of(table))) == ["pod3", "pod1", "pod2", "pod4", "pod5", "pod6"]


def test_ordered_by_priority_process():
    # TestOrderedByPriorityProcess
    spec = [("pod1", -1, 20), ("pod2", -1, 6), ("pod3", 1, 20), ("pod4", 1, 5)]
    pods = [pod(n, p) for n, p, _ in reversed(spec)]
    table = {n: PodStats(processes=count) for n, _, count in spec}
    assert _names(rank(PID_AVAILABLE, pods, stats_of(table))) == ["pod1", "pod2", "pod3", "pod4"]


def test_pods_without_statistics_go_first():
    pods = [pod("known", 0, {"memory": "1Gi"}), pod("unknown", 5)]
    assert _names(rank(MEMORY_AVAILABLE, pods, stats_of({"known": mem(2 * Gi)}))) == ["unknown", "known"]


def test_sort_by_eviction_priority():
    # TestSortByEvictionPriority
    nodefs, pid = threshold(NODEFS_AVAILABLE, "1Gi"), threshold(PID_AVAILABLE, "100")
    memory, allocatable = threshold(MEMORY_AVAILABLE, "1Gi"), threshold(ALLOCATABLE_MEMORY_AVAILABLE, "1Gi")
    assert by_eviction_priority([nodefs, pid, memory]) == [memory, nodefs, pid]
    assert by_eviction_priority([nodefs, pid, allocatable]) == [allocatable, nodefs, pid]
    assert by_eviction_priority([]) == []


# ---- thresholds and conditions over time -----------------------------------------------------------------

@pytest.mark.parametrize("enforce, available, met", [
    # TestThresholdsMet: memory.available<1Gi with minimum reclaim 500Mi
    (False, 500 * Mi, True), (False, 2 * Gi, False), (True, int(1.05 * Gi), True), (True, 2 * Gi, False),
])
def test_thresholds_met(enforce, available, met):
    t = threshold(MEMORY_AVAILABLE, "1Gi", min_reclaim="500Mi")
    result = thresholds_met([t], {MEMORY_AVAILABLE: Observation(available, 0)}, enforce)
    assert result == ([t] if met else [])


@pytest.mark.parametrize("enforce, memory, nodefs, expected", [
    # TestPercentageThresholdsMet: memory<20% (reclaim 5%) of 1000Mi, nodefs<30% of 1000Gi
    (False, 100 * Mi, 100 * Gi, [0, 1]), (False, 300 * Mi, 400 * Gi, []), (False, 300 * Mi, 100 * Gi, [1]),
    (False, 100 * Mi, 400 * Gi, [0]), (True, 225 * Mi, None, [0]), (True, 300 * Mi, None, []),
])
def test_percentage_thresholds_met(enforce, memory, nodefs, expected):
    ts = [threshold(MEMORY_AVAILABLE, "20%", min_reclaim="5%"), threshold(NODEFS_AVAILABLE, "30%")]
    observations = {MEMORY_AVAILABLE: Observation(memory, 1000 * Mi)}
    if nodefs is not None:
        observations[NODEFS_AVAILABLE] = Observation(nodefs, 1000 * Gi)
    assert thresholds_met(ts, observations, enforce) == [ts[i] for i in expected]


@pytest.mark.parametrize("time, last, kept", [
    # TestThresholdsUpdatedStats
    (0.0, None, True), (100.0, None, True), (100.0, 160.0, False), (100.0, 100.0, False), (160.0, 100.0, True),
])
def test_thresholds_updated_stats(time, last, kept):
    t = threshold(MEMORY_AVAILABLE, "1Gi")
    observations = {MEMORY_AVAILABLE: Observation(0, 0, time)}
    previous = {} if last is None else {MEMORY_AVAILABLE: Observation(0, 0, last)}
    assert thresholds_updated_stats([t], observations, previous) == ([t] if kept else [])


def test_thresholds_first_observed_at_and_grace_periods():
    # TestThresholdsFirstObservedAt, TestThresholdsMetGracePeriod
    hard = threshold(MEMORY_AVAILABLE, "1Gi")
    soft = threshold(MEMORY_AVAILABLE, "2Gi", grace=60.0)
    now, old = 1000.0, 880.0
    assert thresholds_first_observed_at([hard], {}, now) == {hard: now}
    assert thresholds_first_observed_at([hard], {hard: old}, now) == {hard: old}
    assert thresholds_met_grace_period({hard: now}, now) == [hard]
    assert thresholds_met_grace_period({soft: now}, now) == []
    assert thresholds_met_grace_period({soft: old}, now) == [soft]


def test_node_conditions_and_their_transition_period():
    # TestNodeConditions, TestNodeConditionsLastObservedAt, TestNodeConditionsObservedSince
    assert node_conditions([]) == []
    assert node_conditions([threshold(MEMORY_AVAILABLE, "1Gi")]) == ["MemoryPressure"]
    now, old = 1000.0, 940.0
    assert node_conditions_last_observed_at(["MemoryPressure"], {}, now) == {"MemoryPressure": now}
    assert node_conditions_last_observed_at(["MemoryPressure"], {"MemoryPressure": old}, now) == {"MemoryPressure": now}
    assert node_conditions_last_observed_at([], {"MemoryPressure": old}, now) == {"MemoryPressure": old}
    assert node_conditions_observed_since({"MemoryPressure": old}, 120.0, now) == ["MemoryPressure"]
    assert node_conditions_observed_since({"MemoryPressure": old}, 30.0, now) == []


def test_admit_under_node_conditions():
    # TestAdmitUnderNodeConditions
    guaranteed = pod("guaranteed", 0, {"cpu": "100m", "memory": "1Gi"}, {"cpu": "100m", "memory": "1Gi"})
    burstable = pod("burstable", 0, {"cpu": "100m", "memory": "100Mi"})
    best_effort = pod("best-effort")
    for conditions, expected in (([], [True, True, True]), (["MemoryPressure"], [True, True, False]),
                                 (["MemoryPressure", "DiskPressure"], [False, False, False])):
        assert [admit(p, conditions).admit for p in (guaranteed, burstable, best_effort)] == expected
    refused = admit(best_effort, ["MemoryPressure"])
    assert (refused.reason, refused.message) == ("Evicted", "The node had condition: [MemoryPressure]. ")
    tolerant = pod("tolerant")
    tolerant["spec"]["tolerations"] = [{"key": "node.kubernetes.io/memory-pressure", "operator": "Exists",
                                        "effect": "NoSchedule"}]
    assert admit(tolerant, ["MemoryPressure"]).admit
    critical = pod("critical", 2_000_000_000)
    assert admit(critical, ["MemoryPressure", "DiskPressure"]).admit


# ---- the manager over time: TestMemoryPressure and friends ---------------------------------------------

def _memory_pods():
    """eviction_manager_test.go's five pods for the memory tests."""
    spec = [("guaranteed-low-priority-high-usage", -1, {"cpu": "100m", "memory": "1Gi"},
             {"cpu": "100m", "memory": "1Gi"}, 900),
            ("burstable-below-requests", 0, {"memory": "100Mi"}, {"memory": "1Gi"}, 50),
            ("burstable-above-requests", 0, {"memory": "100Mi"}, {"memory": "1Gi"}, 400),
            ("best-effort-high-priority-high-usage", 1, None, None, 400),
            ("best-effort-low-priority-low-usage", -1, None, None, 100)]
    pods = [pod(n, p, r, lim) for n, p, r, lim, _ in spec]
    table = {n: mem(ws * Mi) for n, _, _, _, ws in spec}
    return pods, table


class Clock:
    def __init__(self):
        self.now = 1_000_000.0

    def step(self, seconds):
        self.now += seconds
        return self.now


def _memory(available, now):
    # makeMemoryStats: available = working set, so capacity is twice the available amount
    return {MEMORY_AVAILABLE: Observation(available, 2 * available, now),
            ALLOCATABLE_MEMORY_AVAILABLE: Observation(available, 2 * available, now)}


def test_memory_pressure():
    # TestMemoryPressure: hard <1Gi, soft <2Gi for 2m, max pod grace 5, transition 5m
    pods, table = _memory_pods()
    manager = EvictionManager([threshold(MEMORY_AVAILABLE, "1Gi"), threshold(MEMORY_AVAILABLE, "2Gi", grace=120)],
                              pressure_transition_period=300, max_pod_grace_period=5)
    clock, stats = Clock(), stats_of(table)
    best, burst = pod("best-admit"), pod("burst-admit", 0, {"memory": "100Mi"}, {"memory": "200Mi"})
    victim = "best-effort-low-priority-low-usage"

    def step(seconds, available):
        return manager.decide(clock.step(seconds), _memory(available, clock.now), pods, stats)

    result, eviction = step(0, 2 * Gi)
    assert result.conditions == [] and eviction is None
    assert [manager.admit(p).admit for p in (best, burst)] == [True, True]
    result, eviction = step(60, 1500 * Mi)               # soft met, grace not over
    assert result.conditions == ["MemoryPressure"] and eviction is None
    result, eviction = step(180, 1500 * Mi)
    assert eviction.pod["metadata"]["name"] == victim and eviction.grace_period == 5
    result, eviction = step(1200, 3 * Gi)
    assert result.conditions == [] and eviction is None
    result, eviction = step(60, 500 * Mi)                # hard: grace 1
    assert eviction.pod["metadata"]["name"] == victim and eviction.grace_period == 1
    assert [manager.admit(p).admit for p in (best, burst)] == [False, True]
    result, eviction = step(60, 2 * Gi)                  # the transition period keeps the condition
    assert result.conditions == ["MemoryPressure"] and eviction is None
    assert [manager.admit(p).admit for p in (best, burst)] == [False, True]
    result, eviction = step(300, 2 * Gi)
    assert result.conditions == [] and eviction is None
    assert [manager.admit(p).admit for p in (best, burst)] == [True, True]


def test_min_reclaim():
    # TestMinReclaim: hard <1Gi with minimum reclaim 500Mi
    pods, table = _memory_pods()
    manager = EvictionManager([threshold(MEMORY_AVAILABLE, "1Gi", min_reclaim="500Mi")],
                              pressure_transition_period=300, max_pod_grace_period=5)
    clock, stats = Clock(), stats_of(table)
    steps = [(0, 2 * Gi, False, True), (60, 500 * Mi, True, True), (60, int(1.2 * Gi), True, True),
             (60, 2 * Gi, True, False), (300, 2 * Gi, False, False)]
    for seconds, available, pressure, evicts in steps:
        result, eviction = manager.decide(clock.step(seconds), _memory(available, clock.now), pods, stats)
        assert (result.conditions == ["MemoryPressure"]) == pressure
        if evicts and seconds:
            assert eviction.pod["metadata"]["name"] == "best-effort-low-priority-low-usage"
            assert eviction.grace_period == 1
        else:
            assert eviction is None


def test_pid_pressure():
    # TestPIDPressure: hard <1200, soft <1500 for 2m, max pid 2000
    spec = [("high-priority-high-usage", 1, 900), ("default-priority-low-usage", 0, 100),
            ("default-priority-medium-usage", 0, 400), ("low-priority-high-usage", -1, 600),
            ("low-priority-low-usage", -1, 50)]
    pods = [pod(n, p) for n, p, _ in spec]
    stats = stats_of({n: PodStats(processes=count) for n, _, count in spec})
    manager = EvictionManager([threshold(PID_AVAILABLE, "1200"), threshold(PID_AVAILABLE, "1500", grace=120)],
                              pressure_transition_period=300, max_pod_grace_period=5)
    clock = Clock()
    steps = [(0, 300, False, None, True), (60, 700, True, None, False), (180, 700, True, 5, False),
             (1200, 300, False, None, True), (60, 1200, True, 1, False), (60, 300, True, None, False),
             (300, 300, False, None, True)]
    for seconds, running, pressure, grace, admitted in steps:
        observations = {PID_AVAILABLE: Observation(2000 - running, 2000, clock.step(seconds))}
        result, eviction = manager.decide(clock.now, observations, pods, stats)
        assert (result.conditions == ["PIDPressure"]) == pressure
        if grace is None:
            assert eviction is None
        else:
            assert (eviction.pod["metadata"]["name"], eviction.grace_period) == ("low-priority-high-usage", grace)
        assert manager.admit(pod("probe")).admit == admitted


def test_static_critical_pods_are_not_evicted():
    # TestStaticCriticalPodsAreNotEvicted
    critical = pod("critical", 2_000_000_000, {"cpu": "100m", "memory": "1Gi"}, {"cpu": "100m", "memory": "1Gi"},
                   annotations={"kubernetes.io/config.source": "file"})
    stats = stats_of({"critical": mem(800 * Mi)})
    manager = EvictionManager([threshold(MEMORY_AVAILABLE, "1Gi"), threshold(MEMORY_AVAILABLE, "2Gi", grace=120)])
    clock = Clock()
    for seconds, available in ((60, 1500 * Mi), (180, 1500 * Mi), (1200, 3 * Gi), (60, 500 * Mi)):
        _, eviction = manager.decide(clock.step(seconds), _memory(available, clock.now), [critical], stats)
        assert eviction is None
    critical["spec"]["priority"] = None             # still static: still critical
    _, eviction = manager.decide(clock.step(60), _memory(500 * Mi, clock.now), [critical], stats)
    assert eviction is None


# ---- messages -------------------------------------------------------------------------------------------

def test_memory_pressure_verify_pod_status():
    # TestMemoryPressure_VerifyPodStatus: the message and the DisruptionTarget condition
    below, above = pod("below-requests", 0, {"memory": "1Gi"}), pod("above-requests", 0, {"memory": "100Mi"})
    stats = stats_of({"below-requests": mem(900 * Mi), "above-requests": mem(700 * Mi)})
    manager = EvictionManager([threshold(MEMORY_AVAILABLE, "2Gi")])
    observations = {MEMORY_AVAILABLE: Observation(1500 * Mi, 3000 * Mi, 1.0)}
    _, eviction = manager.decide(1.0, observations, [below, above], stats)
    assert eviction.pod is above
    assert eviction.message == "The node was low on resource: memory. Threshold quantity: 2Gi, available: 1500Mi. "
    assert eviction.condition() == {"type": "DisruptionTarget", "status": "True", "reason": "TerminationByKubelet",
                                    "message": eviction.message}


def test_message_names_the_containers_above_their_requests():
    above = pod("above-requests", 0, {"memory": "100Mi"})
    stats = stats_of({"above-requests": mem(700 * Mi, "above-requests")})
    manager = EvictionManager([threshold(MEMORY_AVAILABLE, "2Gi")])
    _, eviction = manager.decide(1.0, {MEMORY_AVAILABLE: Observation(1500 * Mi, 3000 * Mi, 1.0)}, [above], stats)
    assert eviction.message == ("The node was low on resource: memory. Threshold quantity: 2Gi, available: 1500Mi. "
                                "Container above-requests was using 700Mi, request is 100Mi, has larger "
                                "consumption of memory. ")
    assert eviction.annotations == {"offending_containers": "above-requests",
                                    "offending_containers_usage": "700Mi", "starved_resource": "memory"}


def test_pid_pressure_verify_pod_status():
    # TestPIDPressure_VerifyPodStatus
    manager = EvictionManager([threshold(PID_AVAILABLE, "1200")])
    p = pod("p")
    _, eviction = manager.decide(1.0, {PID_AVAILABLE: Observation(500, 1500, 1.0)}, [p],
                                 stats_of({"p": PodStats(processes=10)}))
    assert eviction.message == "The node was low on resource: pids. Threshold quantity: 1200, available: 500. "


# ---- the manager as a state machine (property test) ----------------------------------------------

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.sampled_from([1, 5, 10, 30, 60, 200]), st.integers(0, 4 * Gi)), min_size=1, max_size=40))
def test_conditions_follow_the_thresholds_and_the_transition_period(steps):
    """MemoryPressure is reported exactly while some threshold was met within the transition
    period; an eviction happens only while a threshold holds past its grace period, hard ones
    with 1 s and soft ones with the maximum pod grace period."""
    hard, soft = threshold(MEMORY_AVAILABLE, "1Gi"), threshold(MEMORY_AVAILABLE, "2Gi", grace=90)
    manager = EvictionManager([hard, soft], pressure_transition_period=120, max_pod_grace_period=7)
    pods = [pod("p", 0, {"memory": "100Mi"})]
    stats = stats_of({"p": mem(3 * Gi)})
    now, met_at, soft_since = 0.0, [], None
    for dt, available in steps:
        now += dt
        result, eviction = manager.decide(now, {MEMORY_AVAILABLE: Observation(available, 8 * Gi, now)}, pods, stats)
        if available < 2 * Gi:
            met_at.append(now)
            soft_since = soft_since if soft_since is not None else now
        else:
            soft_since = None
        recent = any(now - t < 120 for t in met_at)
        assert (result.conditions == ["MemoryPressure"]) == recent
        if eviction is not None:
            assert available < 2 * Gi
            if available < Gi:
                assert eviction.grace_period == 1
            else:
                assert now - soft_since >= 90 and eviction.grace_period == 7
        elif available < Gi:
            raise AssertionError("a hard threshold met with a fresh observation must evict")
