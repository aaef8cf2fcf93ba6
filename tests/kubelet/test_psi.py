"""PSI: the kernel's pressure-file format, its fixed-point averages, and the simulated stall.

Facts from kernel/sched/psi.c (psi_show's format and units, calc_avgs, EXP_10s/60s/300s,
"CPU FULL is undefined at the system level") and include/linux/sched/loadavg.h (calc_load,
FIXED_1, LOAD_INT/LOAD_FRAC); the Summary API shape from kubelet stats v1alpha1 PSIStats.
"""

import json
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from kvert.clock import VirtualClock
from kvert.kubelet import psi
from kvert.kubelet.runtime.base import ContainerConfig, ContainerResources, LinuxContainerResources, PodSandboxConfig
from kvert.kubelet.runtime.sim import SimRuntime
from kvert.kubelet.usage import USAGE_ANNOTATION

MI = 2**20

# the kernel's own example (Documentation/accounting/psi.rst) and an idle file
DOC_EXAMPLE = ("some avg10=0.00 avg60=0.00 avg300=0.00 total=0\n"
               "full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n")


def test_parse_the_documented_format():
    stats = psi.parse_pressure(DOC_EXAMPLE)
    assert stats == psi.PSIStats()
    busy = psi.parse_pressure("some avg10=18.87 avg60=12.06 avg300=12.52 total=223819158\n"
                              "full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n")
    assert busy.some == psi.PSIData(total=223819158, avg10=18.87, avg60=12.06, avg300=12.52)
    # a kernel before 5.13 has no full line in cpu.pressure: zeros, as runc reads it
    assert psi.parse_pressure("some avg10=1.00 avg60=2.00 avg300=3.00 total=4\n").full == psi.PSIData()


@pytest.mark.parametrize("text", ["", "full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n",
                                  "some avg10=x avg60=0.00 avg300=0.00 total=0\n",
                                  "some avg10=0.00 avg60=0.00 avg300=0.00 total=-1\n",
                                  DOC_EXAMPLE + DOC_EXAMPLE])
def test_parse_refuses_what_the_kernel_never_writes(text):
    with pytest.raises(psi.PressureParseError):
        psi.parse_pressure(text)


_avg = st.integers(min_value=0, max_value=10000).map(lambda c: c / 100)
_data = st.builds(psi.PSIData, total=st.integers(min_value=0, max_value=2**63), avg10=_avg, avg60=_avg, avg300=_avg)


@given(st.builds(psi.PSIStats, some=_data, full=_data))
def test_format_then_parse_is_identity(stats):
    assert psi.parse_pressure(psi.format_pressure(stats)) == stats


def test_summary_shape():
    """kubelet stats v1alpha1: PSIStats{Full, Some PSIData{Total, Avg10, Avg60, Avg300}} as JSON."""
    stats = psi.PSIStats(some=psi.PSIData(1, 2.5, 3.0, 4.0))
    assert stats.as_dict() == {"full": {"total": 0, "avg10": 0.0, "avg60": 0.0, "avg300": 0.0},
                               "some": {"total": 1, "avg10": 2.5, "avg60": 3.0, "avg300": 4.0}}


def test_kernel_fixed_point_averages():
    """calc_load with EXP_10s = 1677: a fully stalled 2 s period moves avg10 from 0 to
    100 * (1 - 1677/2048) = 18.11 %, as LOAD_INT.LOAD_FRAC prints it (rounded up while rising)."""
    assert psi.FIXED_1 == 2048
    avg = psi.KernelAverages()
    avg.update(2 * 10**9, 2 * 10**9)
    a10, a60, a300 = avg.percents()
    assert a10 == 18.11                     # (100*2048*(2048-1677) + 2047) // 2048 = 37100 -> 18.11
    assert a60 == 3.27                      # 100*(1 - 1981/2048) = 3.27
    assert a300 == 0.68                     # 100*(1 - 2034/2048) = 0.68
    # overage is punted: a sample above the period counts as the period
    over = psi.KernelAverages()
    over.update(3 * 10**9, 2 * 10**9)
    assert over.avg == avg.avg
    # idle periods decay by calc_load_n: EXP_10s**5 over 10 s, about 1/e
    avg.update(0, 2 * 10**9, missed_periods=4)
    assert avg.percents()[0] == pytest.approx(18.11 * (1677 / 2048) ** 5, abs=0.05)


def test_fixed_power_int_matches_the_float_power():
    for exp in psi.EXPS:
        for n in (0, 1, 2, 5, 30, 150):
            assert psi.fixed_power_int(exp, psi.FSHIFT, n) / 2048 == pytest.approx((exp / 2048) ** n, abs=5e-3)


def test_vectorized_averages_follow_the_kernel():
    """decay_average over 2 s ticks is calc_avgs' recurrence in float: within the fixed point's
    rounding of the kernel's own integers over a minute of varying stall."""
    rng = np.random.default_rng(1)
    fractions = rng.random((1, 150))
    kernel = psi.KernelAverages()
    for f in fractions[0]:
        kernel.update(int(f * 2e9), 2 * 10**9)
    vector = psi.decay_average(np.zeros((1, 3)), fractions, 2.0)[0]
    assert vector == pytest.approx([a / 2048 for a in kernel.avg], abs=0.05)
    # split steps give the same as one step
    half = psi.decay_average(psi.decay_average(np.zeros((1, 3)), fractions[:, :70], 2.0), fractions[:, 70:], 2.0)
    assert half[0] == pytest.approx(vector)
    # a 30 s tick is fifteen 2 s periods of one fraction
    assert psi.decay_average(np.zeros((1, 3)), np.full((1, 1), 0.5), 30.0)[0] == \
        pytest.approx(psi.decay_average(np.zeros((1, 3)), np.full((1, 15), 0.5), 2.0)[0])


def test_cpu_stall_model():
    want = np.array([1000.0, 4000.0, 500.0, 0.0])
    allowed = np.array([500.0, 2000.0, 500.0, 0.0])      # quotas: 0.5 core, 2 cores, none hit
    used = np.array([500.0, 1000.0, 250.0, 0.0])         # the node gave half of the second's and third's
    some, full = psi.cpu_stall(want, allowed, used)
    assert some.tolist() == [0.5, 0.75, 0.5, 0.0]
    # single-threaded: every stall is full; multi-threaded: only the throttled time
    assert full.tolist() == [0.5, 0.5, 0.5, 0.0]


def test_memory_stall_curve():
    limit = np.full(5, 100.0)
    some, full = psi.memory_stall(np.array([50.0, 85.0, 92.5, 100.0, 120.0]), limit)
    assert some.tolist() == pytest.approx([0.0, 0.0, 0.15, 0.6, 0.6])
    assert full.tolist() == pytest.approx((some * 0.25).tolist())
    assert psi.memory_stall(np.array([10.0]), np.array([math.inf]))[0].tolist() == [0.0]


def _config(name, usage, cpu_milli=0, memory=0):
    res = LinuxContainerResources(cpu_quota=cpu_milli * 100, memory_limit_in_bytes=memory)
    return ContainerConfig(name=name, image="img", resources=ContainerResources(linux=res),
                           annotations={USAGE_ANNOTATION: json.dumps(usage)})


def test_simulated_container_pod_and_node_pressure():
    clock = VirtualClock()

    async def main():
        rt = SimRuntime(clock, tick=2.0)
        sb = await rt.run_pod_sandbox(PodSandboxConfig(uid="u1", namespace="default", name="p"))
        # demand 1 core under a 0.5-core quota; memory at 95% of its limit
        cid = await rt.create_container(sb, _config("app", {"cpu": "1", "memory": "95Mi"}, 500, 100 * MI))
        await rt.start_container(cid)
        await clock.sleep(600)
        st = await rt.container_status(cid)
        p = st.pressure
        assert p.cpu.some.total == 300 * 10**6          # half of 600 s, in microseconds
        assert p.cpu.full.total == 300 * 10**6          # one thread: full too
        assert p.cpu.some.avg10 == pytest.approx(50.0, abs=0.01)
        assert p.cpu.some.avg300 == pytest.approx(50.0 * (1 - (2034 / 2048) ** 300), abs=0.05)
        # (0.95 - 0.85) / 0.15 squared times 0.6
        expect = 0.6 * ((0.95 - 0.85) / 0.15) ** 2
        assert p.memory.some.total == pytest.approx(expect * 600e6, rel=1e-6)
        # the kernel samples whole percentages: 26.67 % is 26
        assert p.memory.some.avg60 == pytest.approx(math.floor(100 * expect), abs=0.05)
        assert p.io == psi.PSIStats()
        pod = rt.pod_pressure(sb)
        assert pod.cpu == p.cpu and pod.memory == p.memory
        node = rt.node_pressure()
        assert node.cpu.some == p.cpu.some
        assert node.cpu.full == psi.PSIData()           # undefined at the system level: zeros

    clock.run(main())
