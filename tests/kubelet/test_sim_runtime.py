import asyncio
import json

import pytest

from kvert.clock import VirtualClock
from kvert.kubelet.runtime.base import (ContainerConfig, ContainerResources, CriError, LinuxContainerResources,
                                        PodSandboxConfig)
from kvert.kubelet.runtime.sim import SimRuntime
from kvert.kubelet.usage import USAGE_ANNOTATION

MI = 2**20
GI = 2**30


def linux(cpu_milli=0, memory=0, shares=2, adj=0, period=100_000):
    quota = cpu_milli * period // 1000 if cpu_milli else 0
    return LinuxContainerResources(cpu_period=period, cpu_quota=quota, cpu_shares=shares,
                                   memory_limit_in_bytes=memory, oom_score_adj=adj)


def config(name, usage, res=None):
    return ContainerConfig(name=name, image="img", resources=ContainerResources(linux=res or linux()),
                           annotations={USAGE_ANNOTATION: json.dumps(usage)})


async def start(rt, sandbox, name, usage, res=None):
    cid = await rt.create_container(sandbox, config(name, usage, res))
    await rt.start_container(cid)
    return cid


async def sandbox(rt, uid="u1", resources=None):
    return await rt.run_pod_sandbox(PodSandboxConfig(uid=uid, namespace="default", name=uid, resources=resources))


def test_oom_kill_above_the_limit():
    clock = VirtualClock()

    async def main():
        rt = SimRuntime(clock, tick=1.0)
        sb = await sandbox(rt)
        leak = {"cpu": "10m", "memory": {"profile": "linear", "start": "100Mi", "rate": "1Mi/s"}}
        cid = await start(rt, sb, "app", leak, linux(memory=150 * MI))
        t0 = clock.now()
        await clock.sleep(50)
        st = await rt.container_status(cid)
        assert st.state == "running" and st.memory_working_set_bytes == 150 * MI   # at the limit is fine
        await clock.sleep(10)
        st = await rt.container_status(cid)
        assert (st.state, st.reason, st.exit_code, st.oom_events) == ("exited", "OOMKilled", 137, 1)
        assert st.finished_at == t0 + 51
        assert st.memory_working_set_bytes == 0
        assert [(k.scope, k.container_id, k.usage, k.limit) for k in rt.oom_kills] == \
            [("container", cid, 151 * MI, 150 * MI)]
        # the listing shows it too, until removed
        assert [s.id for s in await rt.list_containers(sb)] == [cid]
        await rt.remove_container(cid)
        assert await rt.list_containers() == []

    clock.run(main())


def test_cpu_throttling_counts():
    clock = VirtualClock()

    async def main():
        rt = SimRuntime(clock, tick=1.0)
        sb = await sandbox(rt)
        busy = await start(rt, sb, "busy", {"cpu": "1", "memory": "10Mi"}, linux(cpu_milli=500, shares=512))
        idle = await start(rt, sb, "idle", {"cpu": "200m", "memory": "10Mi"}, linux(cpu_milli=500, shares=512))
        free = await start(rt, sb, "free", {"cpu": "2", "memory": "10Mi"}, linux(shares=2048))
        await clock.sleep(10)
        b, i, f = [await rt.container_status(c) for c in (busy, idle, free)]
        assert b.cpu_usage_core_nanoseconds == 5 * 10**9            # capped at 0.5 core for 10s
        assert b.cpu_throttled_nanoseconds == 5 * 10**9             # 0.5 core denied for 10s
        assert b.cpu_throttled_periods == 100 and b.cpu_periods == 100
        assert i.cpu_usage_core_nanoseconds == 2 * 10**9
        assert (i.cpu_throttled_periods, i.cpu_throttled_nanoseconds, i.cpu_periods) == (0, 0, 100)
        assert f.cpu_usage_core_nanoseconds == 20 * 10**9           # no quota: no throttling, no periods
        assert (f.cpu_throttled_periods, f.cpu_periods) == (0, 0)

    clock.run(main())


def test_update_resources_and_status_returns_applied_values():
    clock = VirtualClock()

    async def main():
        rt = SimRuntime(clock, tick=1.0)
        sb = await sandbox(rt)
        cid = await start(rt, sb, "app", {"cpu": "1", "memory": "200Mi"}, linux(cpu_milli=500, memory=300 * MI))
        await clock.sleep(10)
        st = await rt.container_status(cid)
        assert st.resources.linux == linux(cpu_milli=500, memory=300 * MI)
        # raise the cpu limit: no more throttling from now on
        new = linux(cpu_milli=2000, memory=300 * MI, shares=1024)
        await rt.update_container_resources(cid, ContainerResources(linux=new))
        assert (await rt.container_status(cid)).resources.linux == new
        await clock.sleep(10)
        st = await rt.container_status(cid)
        assert st.cpu_usage_core_nanoseconds == 5 * 10**9 + 10 * 10**9
        assert st.cpu_throttled_periods == 100
        # a memory limit below the current usage is refused and nothing changes
        too_small = linux(cpu_milli=2000, memory=100 * MI)
        with pytest.raises(CriError, match="below the current usage"):
            await rt.update_container_resources(cid, ContainerResources(linux=too_small))
        assert (await rt.container_status(cid)).resources.linux == new
        # a decrease that still fits is applied
        fits = linux(cpu_milli=2000, memory=250 * MI)
        await rt.update_container_resources(cid, ContainerResources(linux=fits))
        assert (await rt.container_status(cid)).resources.linux.memory_limit_in_bytes == 250 * MI
        with pytest.raises(CriError):
            await rt.update_container_resources(cid, ContainerResources())
        with pytest.raises(CriError, match="not found"):
            await rt.update_container_resources("nope", ContainerResources(linux=fits))

    clock.run(main())


def test_fail_next_injects_one_failure():
    clock = VirtualClock()

    async def main():
        rt = SimRuntime(clock)
        sb = await sandbox(rt)
        cid = await start(rt, sb, "app", {"cpu": "1m", "memory": "1Mi"})
        rt.fail_next("update_container_resources")
        target = ContainerResources(linux=linux(cpu_milli=100))
        with pytest.raises(CriError, match="injected"):
            await rt.update_container_resources(cid, target)
        assert (await rt.container_status(cid)).resources.linux == linux()   # nothing applied
        await rt.update_container_resources(cid, target)                       # the retry works
        assert (await rt.container_status(cid)).resources.linux == target.linux
        rt.fail_next("start_container", "boom", times=2)
        other = await rt.create_container(sb, config("b", {"cpu": "1m", "memory": "1Mi"}))
        for _ in range(2):
            with pytest.raises(CriError, match="boom"):
                await rt.start_container(other)
        await rt.start_container(other)
        with pytest.raises(ValueError):
            rt.fail_next("no_such_call")

    clock.run(main())


def test_set_usage_pins_usage_and_can_cause_an_oom():
    clock = VirtualClock()

    async def main():
        rt = SimRuntime(clock)
        sb = await sandbox(rt)
        cid = await start(rt, sb, "app", {"cpu": "100m", "memory": "50Mi"}, linux(memory=100 * MI))
        await clock.sleep(5)
        rt.set_usage(cid, cpu=300, memory="80Mi")
        assert (await rt.container_status(cid)).memory_working_set_bytes == 80 * MI
        await clock.sleep(5)
        st = await rt.container_status(cid)
        assert st.cpu_usage_core_nanoseconds == (5 * 100 + 5 * 300) * 10**6
        rt.set_usage(cid, memory=200 * MI)
        await clock.sleep(1)
        assert (await rt.container_status(cid)).reason == "OOMKilled"

    clock.run(main())


def test_pod_memory_limit_kills_the_biggest_container():
    clock = VirtualClock()

    async def main():
        rt = SimRuntime(clock)
        sb = await sandbox(rt, resources=linux(memory=300 * MI))
        small = await start(rt, sb, "small", {"cpu": "1m", "memory": "100Mi"}, linux(adj=500))
        big = await start(rt, sb, "big", {"cpu": "1m", "memory": {"profile": "linear", "start": "100Mi",
                                                                   "rate": "10Mi/s"}}, linux(adj=500))
        await clock.sleep(30)
        assert (await rt.container_status(big)).reason == "OOMKilled"
        assert (await rt.container_status(small)).state == "running"
        assert rt.oom_kills[0].scope == "pod" and rt.oom_kills[0].container_id == big
        assert rt.oom_kills[0].time == rt.origin + 11             # 100 + 110 > 300 at t = 11
        # the pod limit can be lowered only above what the pod uses
        with pytest.raises(CriError, match="below the pod's current usage"):
            await rt.update_pod_sandbox_resources(sb, linux(memory=50 * MI))
        await rt.update_pod_sandbox_resources(sb, linux(memory=200 * MI))
        assert rt.sandbox_resources(sb).memory_limit_in_bytes == 200 * MI

    clock.run(main())


def test_node_memory_pressure_kills_by_oom_score():
    clock = VirtualClock()

    async def main():
        rt = SimRuntime(clock, memory_capacity=GI)
        guaranteed = await start(rt, await sandbox(rt, "g"), "g", {"cpu": "1m", "memory": "600Mi"},
                                 linux(memory=GI, adj=-997))
        besteffort = await start(rt, await sandbox(rt, "b"), "b", {"cpu": "1m", "memory": {
            "profile": "linear", "start": "100Mi", "rate": "100Mi/s"}}, linux(adj=1000))
        await clock.sleep(10)
        assert (await rt.container_status(besteffort)).reason == "OOMKilled"
        assert (await rt.container_status(guaranteed)).state == "running"
        assert [k.scope for k in rt.oom_kills] == ["node"]
        assert rt.memory_working_set() == 600 * MI

    clock.run(main())


def test_node_cpu_is_shared_by_shares():
    clock = VirtualClock()

    async def main():
        rt = SimRuntime(clock, cpu_capacity=1000)
        sb = await sandbox(rt)
        a = await start(rt, sb, "a", {"cpu": "1", "memory": "1Mi"}, linux(shares=1024))
        b = await start(rt, sb, "b", {"cpu": "1", "memory": "1Mi"}, linux(shares=3072))
        c = await start(rt, sb, "c", {"cpu": "0", "memory": "1Mi"}, linux(shares=4096))
        await clock.sleep(4)
        usage = [(await rt.container_status(x)).cpu_usage_core_nanoseconds for x in (a, b, c)]
        assert usage == [10**9, 3 * 10**9, 0]          # 250m and 750m for 4s; c wants nothing
        assert (await rt.container_status(a)).cpu_throttled_periods == 0   # contention is not throttling

    clock.run(main())


def test_exit_after_and_lifecycle_rules():
    clock = VirtualClock()

    async def main():
        rt = SimRuntime(clock, tick=1.0)
        sb = await sandbox(rt)
        job = await start(rt, sb, "job", {"cpu": "1m", "memory": "1Mi", "exitAfter": "5s"})
        failing = await start(rt, sb, "bad", {"cpu": "1m", "memory": "1Mi", "exitAfter": 3, "exitCode": 2})
        await clock.sleep(10)
        st = await rt.container_status(job)
        assert (st.state, st.reason, st.exit_code, st.finished_at) == ("exited", "Completed", 0, st.started_at + 5)
        st = await rt.container_status(failing)
        assert (st.reason, st.exit_code) == ("Error", 2)
        with pytest.raises(CriError):
            await rt.start_container(job)                                 # exited containers do not restart
        app = await start(rt, sb, "app", {"cpu": "1m", "memory": "1Mi"})
        await rt.stop_container(app)
        await rt.stop_container(app)                                      # idempotent
        assert (await rt.container_status(app)).exit_code == 143
        await rt.stop_pod_sandbox(sb)
        assert rt.sandbox_state(sb) == "notready"
        with pytest.raises(CriError, match="not ready"):
            await rt.create_container(sb, config("late", {"cpu": "1m", "memory": "1Mi"}))
        await rt.remove_pod_sandbox(sb)
        await rt.remove_pod_sandbox(sb)                                   # idempotent
        assert await rt.list_containers() == []
        with pytest.raises(CriError, match="not found"):
            await rt.container_status(app)
        with pytest.raises(CriError, match="not found"):
            await rt.create_container(sb, config("x", {"cpu": "1m", "memory": "1Mi"}))
        sb2 = await sandbox(rt, "u2")
        with pytest.raises(CriError, match="invalid"):
            await rt.create_container(sb2, config("x", {"cpu": "lots"}))

    clock.run(main())


def test_default_usage_without_annotation():
    clock = VirtualClock()

    async def main():
        rt = SimRuntime(clock)
        sb = await sandbox(rt)
        cid = await rt.create_container(sb, ContainerConfig(
            name="x", image="img", resources=ContainerResources(linux=linux(shares=512))))
        await rt.start_container(cid)
        await clock.sleep(10)
        st = await rt.container_status(cid)
        assert st.cpu_usage_core_nanoseconds == 250 * 10 * 10**6      # half of 500m for 10s
        assert st.memory_working_set_bytes == 16 * MI

    clock.run(main())


def scenario(poll_every):
    """The same workload, observed at different frequencies."""
    clock = VirtualClock()

    async def main():
        rt = SimRuntime(clock, tick=1.0, cpu_capacity=1500, memory_capacity=2 * GI)
        sb = await sandbox(rt)
        usage = {"cpu": {"profile": "diurnal", "min": "100m", "max": "1200m", "period": "10m", "noise": 0.1},
                 "memory": {"profile": "spikes", "base": "100Mi", "peak": "900Mi", "every": "2m",
                            "duration": "20s"}}
        ids = [await start(rt, sb, f"c{i}", usage, linux(cpu_milli=800, memory=800 * MI + i * 100 * MI,
                                                         shares=512 + i))
               for i in range(3)]
        elapsed = 0.0
        while elapsed < 600:
            step = min(poll_every, 600 - elapsed)
            await clock.sleep(step)
            elapsed += step
            if poll_every < 100:
                await rt.list_containers()
        return [await rt.container_status(c) for c in ids], [(k.time, k.container_id) for k in rt.oom_kills]

    return clock.run(main())


def test_deterministic_whatever_the_polling():
    first = scenario(0.5)
    assert first == scenario(0.5)
    assert first == scenario(7.0)
    assert first == scenario(600.0)
    statuses, kills = first
    assert kills and statuses[0].reason == "OOMKilled"               # 900Mi spike > 800Mi limit
    assert statuses[2].state == "running"                            # its limit is 1000Mi


def test_run_advances_and_notifies_oom_listeners():
    clock = VirtualClock()
    seen = []

    async def main():
        rt = SimRuntime(clock, tick=1.0)
        rt.on_oom.append(seen.append)
        sb = await sandbox(rt)
        await start(rt, sb, "app", {"cpu": "1m", "memory": {"profile": "linear", "start": "1Mi", "rate": "1Mi/s"}},
                    linux(memory=10 * MI))
        task = asyncio.ensure_future(rt.run())
        await clock.sleep(20)
        assert len(seen) == 1 and seen[0].time == rt.origin + 10
        task.cancel()

    clock.run(main())


def test_long_skip_is_fast():
    clock = VirtualClock()

    async def main():
        rt = SimRuntime(clock, tick=1.0)
        sb = await sandbox(rt)
        ids = [await start(rt, sb, f"c{i}", {"cpu": {"profile": "diurnal", "min": "10m", "max": "500m"},
                                             "memory": "10Mi"}, linux(cpu_milli=300)) for i in range(20)]
        await clock.sleep(2 * 86400)
        st = await rt.container_status(ids[0])
        assert st.cpu_periods == 2 * 86400 * 10
        assert 0 < st.cpu_throttled_periods < st.cpu_periods

    clock.run(main())
