"""The vectorised aggregate against a one-sample-at-a-time transcription of upstream's
``ContainerState`` / ``AggregateContainerState`` logic, plus the seeds' OOM rule."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kvert.vpa.aggregate import AggregateContainerState, AggregateStore
from kvert.vpa.histogram import DecayingHistogram
from kvert.vpa.recommendation import DEFAULT_CONFIG, recommend

DAY = 86400.0
T0 = 1714521600.0
MI = 2**20


class RefPod:
    def __init__(self):
        self.last_cpu = None
        self.last_mem = None
        self.window_end = None
        self.mem_peak = 0
        self.oom_peak = 0


class RefAggregate:
    """Upstream's sequential semantics, written out plainly (times in microseconds)."""

    def __init__(self, cfg=DEFAULT_CONFIG):
        self.cfg = cfg
        self.cpu = DecayingHistogram(cfg.cpu_histogram_options(), cfg.cpu_histogram_decay_half_life)
        self.memory = DecayingHistogram(cfg.memory_histogram_options(), cfg.memory_histogram_decay_half_life)
        self.first = self.last = None
        self.count = 0
        self.pods = {}
        self.interval = int(cfg.memory_aggregation_interval * 1e6)

    def pod(self, name):
        return self.pods.setdefault(name, RefPod())

    def add_cpu(self, name, t, cores):
        c = self.pod(name)
        if cores < 0 or (c.last_cpu is not None and not t > c.last_cpu):
            return
        m = math.floor(cores * 1000)
        self.cpu.add(m / 1000, 0.1, t / 1e6)   # minSampleWeight (upstream 1.4+)
        c.last_cpu = t
        self.last = t if self.last is None or t > self.last else self.last
        self.first = t if self.first is None or t < self.first else self.first
        self.count += 1

    def add_memory(self, name, t, usage, oom=False):
        c = self.pod(name)
        usage = int(usage)
        if usage < 0 or (not oom and c.last_mem is not None and t < c.last_mem):
            return False
        c.last_mem = t
        if c.window_end is None:
            c.window_end = t
        add = False
        if t < c.window_end:
            old = max(c.mem_peak, c.oom_peak)
            if old != 0 and usage > old:
                self.memory.subtract(float(old), 1.0, c.window_end / 1e6)
                add = True
        else:
            c.window_end += ((t - c.window_end) // self.interval) * self.interval + self.interval
            c.mem_peak = c.oom_peak = 0
            add = True
        if add:
            self.memory.add(float(usage), 1.0, c.window_end / 1e6)
            if oom:
                c.oom_peak = usage
            else:
                c.mem_peak = usage
        return True

    def record_oom(self, name, t, request):
        c = self.pod(name)
        # upstream 1.8 (18445abe54, TestRecordOOMFreshOOMNearWindowBoundaryIsNotDiscarded): too old
        # against the last memory sample, no longer against WindowEnd
        if c.last_mem is not None and t < c.last_mem - self.interval:
            return False
        used = max(int(request), c.mem_peak)
        needed = max(used + int(self.cfg.oom_min_bump_up_bytes), int(used * self.cfg.oom_bump_up_ratio))
        return self.add_memory(name, t, needed, oom=True)


def _same(ref: RefAggregate, agg: AggregateContainerState):
    for a, b in ((ref.cpu, agg.cpu), (ref.memory, agg.memory)):
        assert (a.min_bucket, a.max_bucket) == (b.min_bucket, b.max_bucket)
        if a.total_weight or b.total_weight:
            # References may differ by whole half-lives: compare the weights' shape.
            np.testing.assert_allclose(a.weights / a.total_weight, b.weights / b.total_weight, rtol=1e-9, atol=1e-12)
    assert (ref.first, ref.last, ref.count) == (agg.first_sample_start_us, agg.last_sample_start_us,
                                                agg.total_samples_count)
    for name, p in ref.pods.items():
        s = agg.pod_memory(name)
        end = None if p.window_end is None else p.window_end / 1e6
        assert (end, p.mem_peak, p.oom_peak) == (s.window_end, s.memory_peak, s.oom_peak)


events = st.lists(st.tuples(
    st.sampled_from(["a", "b", "c"]),
    st.integers(0, 12 * 24 * 60),                                   # minute of the sample
    st.one_of(st.none(), st.sampled_from([0.0, 0.005, 0.01, 0.25, 0.5, 1.0, 3.7])),
    st.one_of(st.none(), st.sampled_from([0, 1, 10**7, 5 * 10**7, 3 * 10**8, 10**9])),
    st.booleans()), min_size=1, max_size=80)


@settings(max_examples=150, deadline=None)
@given(events, st.integers(1, 5))
def test_batches_match_upstream_one_by_one(rows, chunks):
    ref = RefAggregate()
    for pod, minute, cpu, mem, oom in rows:
        t = int((T0 + minute * 60) * 1e6)
        if oom:
            if mem is not None:
                ref.record_oom(pod, t, mem)
            continue
        if cpu is not None:
            ref.add_cpu(pod, t, cpu)
        if mem is not None:
            ref.add_memory(pod, t, mem)
    agg = AggregateContainerState()
    bounds = np.linspace(0, len(rows), chunks + 1).astype(int)
    for lo, hi in zip(bounds[:-1], bounds[1:]):
        part = rows[lo:hi]
        if not part:
            continue
        agg.add_samples([r[0] for r in part], [T0 + r[1] * 60 for r in part],
                        cpu=[math.nan if r[2] is None or r[4] else r[2] for r in part],
                        memory=[math.nan if r[3] is None else r[3] for r in part],
                        oom=[r[4] for r in part])
    _same(ref, agg)


def test_cpu_samples_weigh_the_min_sample_weight():
    # Upstream 1.4+ (kubernetes/autoscaler#7818): the request weighting was removed, since the
    # request it read was always 0 and every CPU sample weighed minSampleWeight 0.1 anyway.
    agg = AggregateContainerState()
    agg.add_cpu_samples("p", [T0, T0 + 60], [0.5, 1.0])
    o = agg.cpu.options
    assert agg.cpu.weights[o.find_bucket(0.5)] == pytest.approx(0.1)
    assert agg.cpu.weights[o.find_bucket(1.0)] == pytest.approx(0.1 * 2 ** (60 / DAY))


def test_duplicate_and_out_of_order_cpu_samples_are_dropped():
    agg = AggregateContainerState()
    assert agg.add_cpu_samples(["p", "p", "p", "q"], [T0 + 60, T0 + 60, T0, T0], [1, 1, 1, 1]) == 2
    assert agg.total_samples_count == 2
    assert agg.add_cpu_samples("p", T0 + 30, 1.0) == 0
    assert agg.first_sample_start == T0 and agg.last_sample_start == T0 + 60


def test_memory_keeps_one_peak_per_24h_window():
    agg = AggregateContainerState()
    hours = np.arange(0, 3 * 24)   # three days, hourly, peaks 100/200/300 MiB on days 0/1/2
    usage = np.array([(100 * (h // 24 + 1) if h % 24 == 12 else 10) * MI for h in hours])
    agg.add_memory_samples("p", T0 + hours * 3600, usage)
    h = agg.memory
    assert h.total_weight == pytest.approx(1 + 2 + 4)   # three peaks, one per day, decayed
    o = h.options
    for mib in (100, 200, 300):
        assert h.weights[o.find_bucket(mib * MI)] > 0
    state = agg.pod_memory("p")
    assert state.window_end == T0 + 3 * DAY and state.memory_peak == 300 * MI


def test_memory_windows_start_at_the_pods_first_sample():
    agg = AggregateContainerState()
    agg.add_memory_samples(["p", "q"], [T0, T0 + 5 * 3600], [10**8, 10**8])
    assert agg.pod_memory("p").window_end == T0 + DAY
    assert agg.pod_memory("q").window_end == T0 + 5 * 3600 + DAY


@pytest.mark.parametrize("request_bytes, expected", [
    (300 * MI, 400 * MI),                   # +100Mi beats x1.2 (360Mi)
    (1024 * MI, int(1024 * MI * 1.2)),      # x1.2 beats +100Mi
])
def test_oom_bumps_memory_to_max_of_plus_100mi_and_times_1_2(request_bytes, expected):
    agg = AggregateContainerState()
    agg.add_memory_samples("p", T0, 50 * MI)
    assert agg.record_oom("p", T0 + 3600, request_bytes)
    assert agg.pod_memory("p").oom_peak == expected
    h = agg.memory
    assert h.max_bucket == h.options.find_bucket(expected)
    assert h.weights[h.options.find_bucket(50 * MI)] == 0.0     # the old peak was replaced


def test_oom_uses_the_window_peak_when_above_the_request():
    agg = AggregateContainerState()
    agg.add_memory_samples("p", T0, 500 * MI)
    agg.record_oom("p", T0 + 60, 300 * MI)
    assert agg.pod_memory("p").oom_peak == 600 * MI


def test_oom_older_than_the_current_window_is_discarded():
    agg = AggregateContainerState()
    agg.add_memory_samples("p", [T0, T0 + 2 * DAY + 60], [10**8, 10**8])   # window ends T0 + 3d
    assert not agg.record_oom("p", T0 + DAY, 10**8)
    assert agg.record_oom("p", T0 + 2 * DAY + 120, 10**8)


def test_oom_raises_the_memory_recommendation():
    quiet, oom = AggregateContainerState(), AggregateContainerState()
    t = T0 + np.arange(0, 2 * DAY, 60)
    for agg in (quiet, oom):
        agg.add_samples("p", t, cpu=0.2, memory=300 * MI)
    oom.record_oom("p", t[-1], 300 * MI)
    before = recommend({"c": quiet})["containerRecommendations"][0]["target"]["memory"]
    after = recommend({"c": oom})["containerRecommendations"][0]["target"]["memory"]
    assert int(after) > int(before) >= 300 * MI


def test_pods_that_are_gone_keep_their_history():
    store = AggregateStore()
    store.add_samples("ns", "vpa", "app", ["p1", "p2"], [T0, T0], cpu=[1.0, 1.0], memory=[10**8, 10**8])
    store.forget_pod("ns", "p1")
    agg = store.find("ns", "vpa", "app")
    assert agg.pod_names() == ["p2"] and agg.total_samples_count == 2
    assert set(store.for_vpa("ns", "vpa")) == {"app"}
    assert store.garbage_collect(T0 + 7 * DAY) == []
    assert store.garbage_collect(T0 + 8 * DAY) == [("ns", "vpa", "app")]
    assert len(store) == 0


def test_empty_aggregate_expires_after_the_window_from_creation():
    agg = AggregateContainerState(creation_time=T0)
    assert not agg.is_expired(T0 + 8 * DAY - 1) and agg.is_expired(T0 + 8 * DAY)


def test_merge_adds_histories():
    a, b = AggregateContainerState(), AggregateContainerState()
    a.add_cpu_samples("p", [T0, T0 + 60], [1.0, 1.0])
    b.add_cpu_samples("q", [T0 - 60], [2.0])
    a.merge(b)
    assert a.total_samples_count == 3 and a.first_sample_start == T0 - 60 and a.last_sample_start == T0 + 60


def test_integer_pod_codes_are_the_fast_form():
    agg = AggregateContainerState()
    codes = np.array([0, 1, 0, 1])
    agg.add_samples(codes, T0 + np.array([0, 0, 60, 60]), cpu=0.5, pod_names=["x", "y"])
    assert agg.pod_names() == ["x", "y"] and agg.total_samples_count == 4


def test_bad_usage_is_dropped():
    agg = AggregateContainerState()
    assert agg.add_samples("p", [T0, T0 + 60], cpu=[-1.0, math.nan], memory=[-5, math.nan]) == (0, 0)


def test_store_creates_aggregates_with_the_vpas_configuration():
    store = AggregateStore()
    vpa = {"metadata": {"name": "web", "namespace": "prod",
                        "annotations": {"vpa.kvert.io/memory-aggregation-interval": "12h"}},
           "spec": {"resourcePolicy": {"containerPolicies": [{"containerName": "app", "oomBumpUpRatio": "2"}]}}}
    agg = store.get_for_vpa(vpa, "app", now=T0)
    assert store.find("prod", "web", "app") is agg
    assert agg.config.memory_aggregation_interval == DAY / 2 and agg.config.oom_bump_up_ratio == 2.0
    agg.add_memory_samples("p", T0, 10**9)
    assert agg.pod_memory("p").window_end == T0 + DAY / 2
    agg.record_oom("p", T0 + 60, 10**9)
    assert agg.pod_memory("p").oom_peak == 2 * 10**9


@settings(max_examples=100, deadline=None)
@given(st.lists(st.lists(st.tuples(
    st.one_of(st.none(), st.sampled_from([0.0, 0.01, 0.3, 2.0])),
    st.one_of(st.none(), st.sampled_from([0, 10**7, 3 * 10**8, 10**9])),
    st.integers(-2, 30 * 60)), min_size=4, max_size=4), min_size=1, max_size=12))
def test_one_sample_per_pod_batches_file_as_the_general_path(scrapes):
    # A scrape has one row per pod: the bank's shortcut for it must equal the general grouping.
    general, once = AggregateStore(), AggregateStore()
    pods = ["p0", "p1", "p2", "p3"]
    for k, scrape in enumerate(scrapes):
        times = np.array([T0 + 3600.0 * k + 60.0 * s[2] for s in scrape])
        cpu = np.array([math.nan if s[0] is None else s[0] for s in scrape])
        mem = np.array([math.nan if s[1] is None else float(s[1]) for s in scrape])
        for store, unique in ((general, False), (once, True)):
            # two aggregates in one bank: pods 0-1 under one VPA, 2-3 under another
            slots = np.array([store.get("ns", f"v{i // 2}", "c").bank.slot(store.get("ns", f"v{i // 2}", "c").row, p)
                              for i, p in enumerate(pods)])
            bank = store.get("ns", "v0", "c").bank
            bank.add_samples(slots, np.round(times * 1e6).astype(np.int64), cpu, mem, unique=unique)
    for v in ("v0", "v1"):
        a, b = general.find("ns", v, "c"), once.find("ns", v, "c")
        assert a.cpu.equals(b.cpu) and a.memory.equals(b.memory)
        assert (a.first_sample_start_us, a.last_sample_start_us, a.total_samples_count) == \
            (b.first_sample_start_us, b.last_sample_start_us, b.total_samples_count)
        for p in pods:
            assert a.pod_memory(p) == b.pod_memory(p)
