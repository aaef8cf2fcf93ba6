"""Local storage limits (the eviction manager's localStorageEviction, LocalStorageCapacity
Isolation on by default): a pod past its containers' ``limits.ephemeral-storage`` or an
emptyDir ``sizeLimit`` is evicted with upstream's messages (pkg/kubelet/eviction/helpers.go:
containerEphemeralStorageMessageFmt, podEphemeralStorageMessageFmt, emptyDirMessageFmt),
grace period 1 s, an Evicted event and no DisruptionTarget condition (eviction_manager.go
passes none for these). The attack of issue 27 -- a container flooding its log with an
ephemeral-storage limit of 10Mi -- now ends in an eviction, on the simulated runtime here
(the cgroupfs one: test_cgroupfs_log_flood.py)."""

from __future__ import annotations

from kvert.clock import VirtualClock
from kvert.kubelet.config import parse_eviction_thresholds
from kvert.kubelet.eviction import (
    SIGNAL_EMPTY_DIR_FS_LIMIT,
    SIGNAL_EPHEMERAL_CONTAINER_FS_LIMIT,
    SIGNAL_EPHEMERAL_POD_FS_LIMIT,
    local_storage_eviction,
    pod_ephemeral_limit,
)
from kvert.kubelet.localstorage import directory_usage
from kvert.kubelet.runtime.base import ContainerStats, PodStats
from kvert.kubelet.runtime.sim import SimRuntime

from .test_agent_support import GI, cluster, condition, container, events, get_pod, node_config, pod, run_pod, \
    running, start_agent, stop, wait_for

MI = 2**20


def _pod(*containers: dict, volumes: list[dict] | None = None, **meta) -> dict:
    return {"metadata": {"name": "p", "namespace": "default", "uid": "u1", **meta},
            "spec": {"containers": list(containers), "volumes": volumes or []}}


def _c(name: str, limit: str | None = None) -> dict:
    resources = {"limits": {"ephemeral-storage": limit}, "requests": {"ephemeral-storage": limit}} if limit else {}
    return {"name": name, "image": "busybox", "resources": resources}


def _stats(**disk: int) -> PodStats:
    return PodStats(containers={name: ContainerStats(disk=used) for name, used in disk.items()})


# -- the decisions (TestStorageLimitEvictions' cases: rootfs, logs, local volume, emptyDir) -----------

def test_a_container_above_its_limit_is_evicted_with_the_pods_message_when_it_is_alone():
    # "eviction due to rootfs above limit" / "logsfs above limit": 1Gi limit, 2Gi used. With
    # one container the pod's total (checked first) is past the same limit.
    eviction = local_storage_eviction(_pod(_c("c", "1Gi")), _stats(c=2 * GI), {})
    assert eviction is not None
    assert eviction.message == "Pod ephemeral local storage usage exceeds the total limit of containers 1Gi. "
    assert (eviction.grace_period, eviction.signal, eviction.condition()) == (1, SIGNAL_EPHEMERAL_POD_FS_LIMIT, None)


def test_a_container_above_its_own_limit_within_the_pods_total():
    eviction = local_storage_eviction(_pod(_c("a", "10Mi"), _c("b", "10Mi")), _stats(a=11 * MI, b=0), {})
    assert eviction is not None
    assert eviction.message == 'Container a exceeded its local ephemeral storage limit "10Mi". '
    assert eviction.signal == SIGNAL_EPHEMERAL_CONTAINER_FS_LIMIT


def test_local_volumes_count_in_the_pods_total():
    # "eviction due to local volume above limit": an emptyDir without sizeLimit, 2Gi in it
    volumes = [{"name": "scratch", "emptyDir": {}}]
    eviction = local_storage_eviction(_pod(_c("c", "1Gi"), volumes=volumes), _stats(c=0), {"scratch": 2 * GI})
    assert eviction is not None
    assert eviction.message == "Pod ephemeral local storage usage exceeds the total limit of containers 1Gi. "


def test_an_empty_dir_above_its_size_limit():
    # "eviction due to emptydir volume above limit": sizeLimit 1Gi, 2Gi in it, no container limit
    volumes = [{"name": "emptyDirVolume", "emptyDir": {"sizeLimit": "1Gi"}}]
    eviction = local_storage_eviction(_pod(_c("c"), volumes=volumes), _stats(c=0), {"emptyDirVolume": 2 * GI})
    assert eviction is not None
    assert eviction.message == 'Usage of EmptyDir volume "emptyDirVolume" exceeds the limit "1Gi". '
    assert eviction.signal == SIGNAL_EMPTY_DIR_FS_LIMIT


def test_usage_at_the_limit_a_memory_empty_dir_and_a_pod_without_limits_are_not_evicted():
    assert local_storage_eviction(_pod(_c("c", "10Mi")), _stats(c=10 * MI), {}) is None      # Cmp(...) > 0 only
    memory = [{"name": "m", "emptyDir": {"medium": "Memory", "sizeLimit": "1Mi"}}]
    assert local_storage_eviction(_pod(_c("c", "10Mi"), volumes=memory), _stats(c=0), {"m": 5 * MI}) is None
    assert local_storage_eviction(_pod(_c("c")), _stats(c=100 * GI), {}) is None
    assert local_storage_eviction(_pod(_c("c", "10Mi")), None, {}) is None                   # no statistics


def test_a_critical_pod_is_never_evicted_for_local_storage():
    critical = _pod(_c("c", "10Mi"), annotations={"kubernetes.io/config.source": "file"})
    assert local_storage_eviction(critical, _stats(c=11 * MI), {}) is None


def test_the_pods_limit_is_the_sum_of_its_containers_printed_as_written():
    assert str(pod_ephemeral_limit(_pod(_c("a", "10Mi"), _c("b", "6Mi")))) == "16Mi"
    assert str(pod_ephemeral_limit(_pod(_c("a", "10M"), _c("b")))) == "10M"
    assert pod_ephemeral_limit(_pod(_c("a"))) is None


def test_directory_usage_counts_the_blocks_files_take(tmp_path):
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "f").write_bytes(b"x" * (2 * MI))
    (tmp_path / "link").symlink_to("/usr")          # not followed
    assert 2 * MI <= directory_usage(tmp_path) < 3 * MI
    assert directory_usage(tmp_path / "missing") == 0


# -- the node agent, simulated runtime --------------------------------------------------------------------

def _config(**kw):
    kw.setdefault("eviction_hard", parse_eviction_thresholds("memory.available<100Mi"))
    return node_config(**kw)


def _limited(name: str, limit: str) -> dict:
    c = container(name, "100m", "64Mi")
    c["resources"]["limits"]["ephemeral-storage"] = limit
    c["resources"]["requests"]["ephemeral-storage"] = limit
    return c


async def _failed(client, name):
    p = await get_pod(client, name)
    return p if p["status"].get("phase") == "Failed" else None


def test_a_log_flood_with_a_10Mi_limit_is_evicted_and_its_logs_stay_bounded():
    clock = VirtualClock()

    async def main():
        client = await cluster(clock)
        runtime = SimRuntime(clock, memory_capacity=16 * GI, cpu_capacity=4000, disk_capacity=100 * GI)
        agent, task = await start_agent(client, clock, runtime, config=_config())
        # 706 MB in 12 s, as in the issue: ~59 MB/s into the container's log
        flood = {"c": {"logs": {"profile": "linear", "start": 0, "rate": "59M/s"}}}
        await run_pod(client, pod("flood", _limited("c", "10Mi"), usage=flood))
        await run_pod(client, pod("quiet", _limited("c", "10Mi")))
        await running(client, clock, "flood")
        evicted = await wait_for(clock, lambda: _failed(client, "flood"), timeout=60, what="flood evicted")
        message = "Pod ephemeral local storage usage exceeds the total limit of containers 10Mi. "
        assert (evicted["status"]["reason"], evicted["status"]["message"]) == ("Evicted", message)
        assert condition(evicted, "DisruptionTarget") is None
        assert [e["message"] for e in await events(client, "flood", "Evicted")] == [message]
        assert [(e["pod"], e["gracePeriod"]) for e in agent.evictions] == [("flood", 1)]
        assert (await get_pod(client, "quiet"))["status"]["phase"] == "Running"
        await stop(agent, task)

    clock.run(main())


def test_one_container_past_its_own_limit_while_the_pod_is_within_its_total():
    clock = VirtualClock()

    async def main():
        client = await cluster(clock)
        runtime = SimRuntime(clock, memory_capacity=16 * GI, cpu_capacity=4000, disk_capacity=100 * GI)
        agent, task = await start_agent(client, clock, runtime, config=_config())
        usage = {"writer": {"disk": {"profile": "linear", "start": 0, "rate": "1Mi/s"}}}
        await run_pod(client, pod("two", _limited("writer", "10Mi"), _limited("idle", "100Mi"), usage=usage))
        evicted = await wait_for(clock, lambda: _failed(client, "two"), timeout=120, what="evicted")
        assert evicted["status"]["message"] == 'Container writer exceeded its local ephemeral storage limit "10Mi". '
        await stop(agent, task)

    clock.run(main())


def test_an_empty_dir_past_its_size_limit_on_a_node_with_volume_directories(tmp_path):
    clock = VirtualClock()

    async def main():
        client = await cluster(clock)
        runtime = SimRuntime(clock, memory_capacity=16 * GI, cpu_capacity=4000, disk_capacity=100 * GI)
        agent, task = await start_agent(client, clock, runtime, config=_config(), checkpoint_dir=tmp_path)
        body = pod("cache", container("c", "100m", "64Mi"), volumes=[{"name": "x", "emptyDir": {"sizeLimit": "1Mi"}}])
        await run_pod(client, body)
        created = await running(client, clock, "cache")
        directory = agent.volumes.volume_dir(created["metadata"]["uid"], "x", "emptyDir")
        assert directory is not None and directory.is_dir()
        (directory / "fill").write_bytes(b"x" * (2 * MI))
        evicted = await wait_for(clock, lambda: _failed(client, "cache"), timeout=60, what="evicted")
        assert evicted["status"]["message"] == 'Usage of EmptyDir volume "x" exceeds the limit "1Mi". '
        await stop(agent, task)

    clock.run(main())


def test_local_storage_isolation_off_leaves_the_flood_running_its_logs_bounded_by_rotation():
    clock = VirtualClock()

    async def main():
        client = await cluster(clock)
        runtime = SimRuntime(clock, memory_capacity=16 * GI, cpu_capacity=4000, disk_capacity=100 * GI)
        agent, task = await start_agent(client, clock, runtime,
                                        config=_config(local_storage_capacity_isolation=False))
        flood = {"c": {"logs": {"profile": "linear", "start": 0, "rate": "59M/s"}}}
        await run_pod(client, pod("flood", _limited("c", "10Mi"), usage=flood))
        uid = (await running(client, clock, "flood"))["metadata"]["uid"]
        await clock.sleep(60)
        assert (await get_pod(client, "flood"))["status"]["phase"] == "Running"
        assert agent.evictions == []
        # 60 s x 59 MB/s written; the node keeps containerLogMaxFiles (5) x containerLogMaxSize (10Mi)
        disk = (await runtime.node_stats()).pods[uid].containers["c"].disk
        assert 40 * MI < disk <= 50 * MI
        await stop(agent, task)

    clock.run(main())
