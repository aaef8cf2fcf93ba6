"""AEP-9926 memory-pressure upsizing in the simulator (examples/scenarios/psi-upsize.yaml):
the policy with ``vpa.kvert.io/memory-pressure-upsize: "true"`` files pressure peaks for a
leaking container from its memory PSI before the kernel OOM-kills it (the AEP's detection:
stall rate > 0.10 with the working set >= 0.90 of the limit over two windows), the plain VPA
none; kvert's updater has no quick-pressure path (the AEP's actuation), so the OOM kills are
not fewer: the test asserts they are not more."""

import copy
from pathlib import Path

import yaml

from kvert.clock.virtual import DEFAULT_START
from kvert.sim import engine
from kvert.sim.engine import run_policy
from kvert.sim.scenario import parse_scenario
from kvert.vpa.pressure import PressureObserver

SCENARIO = Path(__file__).parents[2] / "examples" / "scenarios" / "psi-upsize.yaml"


class RecordingObserver(PressureObserver):
    peaks: list[tuple[float, float]] = []

    async def file(self, vpas, filed_under, store, now):
        before = self.accepted
        filed = await super().file(vpas, filed_under, store, now)
        if self.accepted > before:
            RecordingObserver.peaks.append((now, filed))
        return filed


def _leak_scenario():
    doc = yaml.safe_load(SCENARIO.read_text())
    doc = copy.deepcopy(doc)
    doc["duration"] = "2h10m"
    doc["workloads"] = [w for w in doc["workloads"] if w["name"] == "leak"]
    doc["workloads"][0]["replicas"] = 1           # below the updater's --min-replicas: nothing resizes it
    return parse_scenario(doc)


def test_pressure_peaks_come_before_the_oom_kill(monkeypatch):
    monkeypatch.setattr(engine, "PressureObserver", RecordingObserver)
    scn = _leak_scenario()
    runs = {}
    for policy in scn.policies:
        RecordingObserver.peaks = []
        run = run_policy(scn, policy)
        runs[policy.name] = (run, list(RecordingObserver.peaks))
    plain, plain_peaks = runs["VPA"]
    psi, psi_peaks = runs["VPA + PSI upsize"]
    assert plain_peaks == []                       # not opted in
    # the leak (256Mi + 384Mi/h in a 1Gi limit) is OOM-killed at 2 h under both
    kill = [e["time"] for e in psi.events if e["kind"] == "oom-kill"]
    assert kill and 7200 <= kill[0] <= 7300
    # 0.92 of the limit (stall > 10%) is reached at 256Mi + 384Mi/h * t = 942Mi: t = 1.79 h;
    # two 60 s windows (and a recommender loop) later the first peak is filed, before the kill
    first = psi_peaks[0][0] - DEFAULT_START
    assert 1.79 * 3600 <= first <= 1.79 * 3600 + 300
    assert first < kill[0]
    assert psi.counters["leak"]["oom_kills"] <= plain.counters["leak"]["oom_kills"]
