"""Recorded usage replayed by simulated containers (``series`` usage and the fleet's trace bank)."""

import numpy as np
import pytest

from kvert.clock import VirtualClock
from kvert.kubelet.runtime.base import CriError, PodSandboxConfig
from kvert.kubelet.runtime.sim import SimRuntime
from kvert.kubelet.runtime.tracebank import TraceBank, TraceGroup
from kvert.kubelet.usage import UsageError, parse_container_usage

from .test_sim_runtime import linux, start

MI = 2**20


def bank(origin: float, shared: bool = False, ordinal: bool = False) -> TraceBank:
    """Group ``web``: container ``app`` with 2 slots over 4 steps of 60 s; the cpu rows are the
    total when shared (one row), else one per slot."""
    memory = np.array([[100, 110, 120, 130], [200, 210, 220, 230]], dtype=float) * MI
    if shared:
        cpu = np.array([[400, 800, 1200, 1600]], dtype=float)
    else:
        cpu = np.array([[100, 200, 300, 400], [500, 600, 700, 800]], dtype=float)
    group = TraceGroup("shop/web", slots=2, cpu_rows={"app": 0}, memory_rows={"app": 0}, shared_cpu=shared,
                       ordinal=ordinal)
    return TraceBank(60.0, cpu, memory, [group], origin=origin)


async def pod(rt, name):
    return await rt.run_pod_sandbox(PodSandboxConfig(uid=f"uid-{name}", namespace="shop", name=name))


def test_usage_entry_parses_and_is_exclusive():
    assert parse_container_usage({"series": "shop/web", "exitAfter": "10m"}, "app").series == "shop/web"
    with pytest.raises(UsageError, match="series gives both"):
        parse_container_usage({"series": "shop/web", "cpu": "1"}, "app")
    with pytest.raises(UsageError, match=r"app\.series: expected"):
        parse_container_usage({"series": 3}, "app")


def test_pods_take_the_lowest_free_slot_and_keep_it_over_restarts():
    clock = VirtualClock()

    async def main():
        rt = SimRuntime(clock, tick=30.0)
        rt.fleet.bank = bank(clock.now())
        a, b = await pod(rt, "web-a"), await pod(rt, "web-b")
        ca = await start(rt, a, "app", {"series": "shop/web"})
        cb = await start(rt, b, "app", {"series": "shop/web"})
        await clock.sleep(60)                  # ticks at 30 and 60 s: both within step 0
        sa, sb = await rt.container_status(ca), await rt.container_status(cb)
        # slot 0 for the first pod, slot 1 for the second
        assert sa.cpu_usage_core_nanoseconds == 100 * 60 * 10**6
        assert sb.cpu_usage_core_nanoseconds == 500 * 60 * 10**6
        assert (sa.memory_working_set_bytes, sb.memory_working_set_bytes) == (100 * MI, 200 * MI)
        # the first pod goes; a new one takes the slot it freed
        await rt.stop_pod_sandbox(a)
        await rt.remove_pod_sandbox(a)
        c = await pod(rt, "web-c")
        cc = await start(rt, c, "app", {"series": "shop/web"})
        await clock.sleep(60)
        assert (await rt.container_status(cc)).memory_working_set_bytes == 110 * MI   # slot 0, step 1
        # a third concurrent pod replays slot 0 again (2 slots recorded)
        d = await pod(rt, "web-d")
        cd = await start(rt, d, "app", {"series": "shop/web"})
        await clock.sleep(180)                 # past the last step (3): its value holds
        assert (await rt.container_status(cd)).memory_working_set_bytes == 130 * MI

    clock.run(main())


def test_shared_cpu_is_divided_among_running_pods():
    clock = VirtualClock()

    async def main():
        rt = SimRuntime(clock, tick=60.0)
        rt.fleet.bank = bank(clock.now(), shared=True)
        a = await pod(rt, "web-a")
        ca = await start(rt, a, "app", {"series": "shop/web"})
        await clock.sleep(60)                  # one pod: the whole 400m of step 0
        assert (await rt.container_status(ca)).cpu_usage_core_nanoseconds == 400 * 60 * 10**6
        b = await pod(rt, "web-b")
        cb = await start(rt, b, "app", {"series": "shop/web"})
        await clock.sleep(60)                  # two pods: 800m of step 1 split evenly
        sa, sb = await rt.container_status(ca), await rt.container_status(cb)
        assert sa.cpu_usage_core_nanoseconds == (400 + 400) * 60 * 10**6
        assert sb.cpu_usage_core_nanoseconds == 400 * 60 * 10**6

    clock.run(main())


def test_ordinal_slots_follow_the_pod_name():
    clock = VirtualClock()

    async def main():
        rt = SimRuntime(clock, tick=60.0)
        rt.fleet.bank = bank(clock.now(), ordinal=True)
        one = await pod(rt, "db-1")
        c1 = await start(rt, one, "app", {"series": "shop/web"})
        await clock.sleep(60)
        assert (await rt.container_status(c1)).memory_working_set_bytes == 200 * MI     # slot 1

    clock.run(main())


def test_a_recorded_peak_above_the_limit_is_an_oom_kill():
    clock = VirtualClock()

    async def main():
        rt = SimRuntime(clock, tick=60.0)
        rt.fleet.bank = bank(clock.now())
        a = await pod(rt, "web-a")
        ca = await start(rt, a, "app", {"series": "shop/web"}, linux(memory=115 * MI))
        await clock.sleep(180)                 # steps 0 and 1 (100Mi, 110Mi) fit, step 2 (120Mi) does not
        st = await rt.container_status(ca)
        assert (st.state, st.reason) == ("exited", "OOMKilled")

    clock.run(main())


def test_unknown_series_or_container_is_a_create_error():
    clock = VirtualClock()

    async def main():
        rt = SimRuntime(clock, tick=60.0)
        a = await pod(rt, "web-a")
        with pytest.raises(CriError, match="no recorded usage"):
            await start(rt, a, "app", {"series": "shop/web"})      # no bank at all
        rt.fleet.bank = bank(clock.now())
        with pytest.raises(CriError, match="no recorded usage for 'shop/api'"):
            await start(rt, a, "app", {"series": "shop/api"})
        with pytest.raises(CriError, match="container 'sidecar'"):
            await start(rt, a, "sidecar", {"series": "shop/web"})

    clock.run(main())
