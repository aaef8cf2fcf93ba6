"""AEP-9926 memory-pressure upsizing (kvert's opt-in ``vpa.kvert.io/memory-pressure-upsize``):
the detection rule and the pressure peak, with the AEP's defaults and its worked example
("request 256Mi, limit 512Mi, two polls 60s apart: some.total 41.9s -> 55.7s, a stall rate
of 0.23; working set 486Mi is 0.95 of the limit; the candidate peak is
max(486Mi + 64Mi, 486Mi * 1.15) ~ 559Mi")."""

import asyncio

import pytest

from kvert.vpa.aggregate import AggregateStore
from kvert.vpa.pressure import (ANNOTATION, ContainerPressure, PressureConfig, PressureDetector, PressureObserver,
                                pressure_upsize_enabled, summary_pressure)
from kvert.vpa.recommendation import DEFAULT_CONFIG

MI = 2**20
VPA = {"metadata": {"name": "v", "namespace": "default", "annotations": {ANNOTATION: "true"}},
       "spec": {"targetRef": {"kind": "Deployment", "name": "app"}}}


def sample(t, total_s, ws=486 * MI, limit=512 * MI, uid="u1"):
    return ContainerPressure("default", "app-1", uid, "app", t, int(total_s * 1e6), ws, limit, start_time=0.0)


def test_annotation_opts_in():
    assert pressure_upsize_enabled(VPA)
    assert not pressure_upsize_enabled({"metadata": {}})
    assert not pressure_upsize_enabled({"metadata": {"annotations": {ANNOTATION: "false"}}})
    # a known setting of the VPA's kvert annotations
    cfg, problems = DEFAULT_CONFIG.with_annotations({ANNOTATION: "true"})
    assert problems == [] and cfg.memory_pressure_upsize


def test_worked_example_fires_after_two_windows():
    d = PressureDetector()
    assert not d.observe(sample(1000, 28.1))          # baseline
    assert not d.observe(sample(1060, 41.9))          # first window: 13.8/60 = 0.23
    assert d.observe(sample(1120, 55.7))              # second window: both held -> peak
    # then ten minutes of cooldown, and two fresh windows
    t, total = 1120, 55.7
    fired = []
    for _ in range(12):
        t, total = t + 60, total + 13.8
        fired.append(d.observe(sample(t, total)))
    assert fired.index(True) == 10                    # 1120 + 600 s, then the second window


@pytest.mark.parametrize("second", [
    sample(1120, 41.9 + 5.0),                         # stall rate 0.083 <= 0.10
    sample(1120, 55.7, ws=0.85 * 512 * MI),           # working set under 0.90 of the limit
    sample(1120, 55.7, uid="u2"),                     # a new container: new baseline
    sample(1120, 55.7, limit=1024 * MI),              # a changed limit: new baseline
    sample(1120, 30.0),                               # the counter went backwards
    sample(1300, 55.7),                               # a gap over two polls
    sample(1120, 41.9 + 100.0),                       # rate above 1 + 1s/dt: not microseconds
])
def test_what_breaks_the_windows(second):
    d = PressureDetector()
    d.observe(sample(1000, 28.1))
    d.observe(sample(1060, 41.9))
    assert not d.observe(second)


def test_startup_grace():
    d = PressureDetector(PressureConfig(startup_grace=60.0))
    s = [ContainerPressure("default", "p", "u", "app", t, int(v * 1e6), 486 * MI, 512 * MI, start_time=990.0)
         for t, v in ((1000, 0.0), (1020, 4.6), (1040, 9.2))]
    assert [d.observe(x) for x in s] == [False, False, False]     # 50 s old at the second window


def test_pressure_peak_replaces_the_interval_peak():
    store = AggregateStore()
    agg = store.get_for_vpa(VPA, "app", 0.0)
    agg.add_memory_samples(["app-1"], [1000.0], [486 * MI])
    assert agg.record_pressure("app-1", 1100.0, 486 * MI, 1.15, 64 * MI)
    bank, slot = agg.bank, agg.bank.slot(agg.row, "app-1")
    # max(486Mi + 64Mi, 486Mi * 1.15) = 558.9Mi, "~559Mi"
    assert int(bank.oom_peak[slot]) == pytest.approx(486 * MI * 1.15, abs=1)
    assert not agg.record_pressure("app-1", 1e9, 486 * MI, 1.15, 64 * MI)   # outside the interval


def test_summary_samples():
    summary = {"pods": [{"podRef": {"name": "app-1", "namespace": "default", "uid": "u1"}, "containers": [
        {"name": "app", "startTime": "2026-01-01T00:00:00Z",
         "memory": {"time": "2026-01-01T01:00:00Z", "workingSetBytes": 486 * MI, "availableBytes": 26 * MI,
                    "psi": {"some": {"total": 55_700_000, "avg10": 0, "avg60": 0, "avg300": 0},
                            "full": {"total": 0, "avg10": 0, "avg60": 0, "avg300": 0}}}},
        {"name": "nopsi", "memory": {"time": "2026-01-01T01:00:00Z", "workingSetBytes": 1}}]}]}
    [s] = summary_pressure(summary)
    assert (s.pod, s.uid, s.container, s.some_total_us, s.working_set, s.limit) == \
        ("app-1", "u1", "app", 55_700_000, 486 * MI, 512 * MI)


def test_observer_files_only_opted_in_vpas():
    class Source:
        def __init__(self):
            self.t = 1000.0
            self.total = 28.1

        async def container_pressure(self):
            self.t += 60
            self.total += 13.8
            return [sample(self.t, self.total)]

    store = AggregateStore()
    agg = store.get_for_vpa(VPA, "app", 0.0)
    agg.add_memory_samples(["app-1"], [1000.0], [486 * MI])
    obs = PressureObserver(Source())
    plain = {("default", "v"): {**VPA, "metadata": {"name": "v", "namespace": "default"}}}
    filed = {("default", "app-1"): ("default", "v")}
    assert sum(asyncio.run(obs.file(plain, filed, store, 0.0)) for _ in range(3)) == 0
    results = [asyncio.run(obs.file({("default", "v"): VPA}, filed, store, 0.0)) for _ in range(3)]
    assert sum(results) == 1
