"""The VPA updater on an in-process cluster in virtual time (see test_recommender_live's Cluster):
eviction tolerance, in-place resizes and their fallback, PDBs, minReplicas."""

from __future__ import annotations

from typing import Any

from kvert.api.quantity import Quantity
from kvert.vpa.features import VpaGates
from kvert.vpa.recommender import VPAS
from kvert.vpa.updater import Updater

from tests.kubelet.test_agent_support import wait_for
from tests.vpa.test_recommender_live import DEPLOY, NS, Cluster, deployment, run, vpa

PDB = "policy/poddisruptionbudgets"


def rec(target: dict, lower: dict, upper: dict, container: str = "hamster") -> dict:
    return {"containerRecommendations": [{"containerName": container, "target": target, "lowerBound": lower,
                                          "upperBound": upper, "uncappedTarget": target}]}


BIGGER = rec({"cpu": "500m", "memory": "200Mi"}, {"cpu": "400m", "memory": "150Mi"},
             {"cpu": "1", "memory": "400Mi"})
HUGE = rec({"cpu": "8", "memory": "200Mi"}, {"cpu": "6", "memory": "150Mi"}, {"cpu": "10", "memory": "400Mi"})


async def setup(c: Cluster, mode: str, recommendation: dict, replicas: int = 2, **kw: Any) -> list[dict]:
    await c.client.create(DEPLOY, deployment(replicas=replicas, **kw.pop("deploy", {})))
    obj = await c.client.create(VPAS, vpa(mode=mode, **kw))
    obj["status"] = {"recommendation": recommendation}
    await c.client.update_status(VPAS, obj)
    return await settled(c, replicas)


async def settled(c: Cluster, replicas: int = 2) -> list[dict]:
    async def check():
        pods = await c.running_pods()
        all_pods = await c.pods()
        return pods if len(pods) == replicas and len(all_pods) == replicas else None
    return await wait_for(c.clock, check, timeout=300, step=1.0, what=f"{replicas} running pods")


async def reasons(c: Cluster, reason: str) -> list[dict]:
    return [e for e in (await c.client.list("events", namespace=NS))["items"] if e["reason"] == reason]


def uids(pods: list[dict]) -> set[str]:
    return {p["metadata"]["uid"] for p in pods}


def test_recreate_evicts_one_at_a_time():
    async def scenario(c: Cluster):
        before = await setup(c, "Recreate", BIGGER)
        u = Updater(c.client, c.clock)
        first = await u.run_once()
        assert len(first.evicted) == 1 and not first.resized
        # the evicted pod is terminating; the other one may not go before its replacement runs
        again = await u.run_once()
        assert [n for n in again.evicted if n in {p["metadata"]["name"] for p in before}] == []
        after = await settled(c)
        assert len(uids(after) & uids(before)) == 1
        second = await u.run_once()
        assert len(second.evicted) == 1
        evicted = {first.evicted[0], second.evicted[0]}
        # the replacement pods come back with the template's requests (no admission controller here),
        # so they are candidates again; but both original pods went, one per pass
        assert evicted == {p["metadata"]["name"] for p in before} or len(evicted) == 2
        pod_events = await reasons(c, "EvictedByVPA")
        assert {e["involvedObject"]["name"] for e in pod_events} == evicted
        assert pod_events[0]["message"] == "Pod was evicted by VPA Updater to apply resource recommendation."
        vpa_events = await reasons(c, "EvictedPod")
        assert {e["involvedObject"]["kind"] for e in vpa_events} == {"VerticalPodAutoscaler"}
    run(scenario)


def test_off_and_initial_never_touch_running_pods():
    async def scenario(c: Cluster):
        before = await setup(c, "Initial", BIGGER)
        u = Updater(c.client, c.clock)
        result = await u.run_once()
        assert not result.evicted and not result.resized and "updateMode Initial" in result.skipped.values()
        assert uids(await c.pods()) == uids(before)
    run(scenario)


def test_in_place_or_recreate_resizes_without_restart():
    async def scenario(c: Cluster):
        before = await setup(c, "InPlaceOrRecreate", BIGGER,
                             deploy={"limits": {"cpu": "200m", "memory": "400Mi"}})
        u = Updater(c.client, c.clock)
        result = await u.run_once()
        assert len(result.resized) == 1 and not result.evicted
        name = result.resized[0]

        async def resized():
            pod = await c.client.get("pods", name, NS)
            cs = pod["status"]["containerStatuses"][0]
            actual = (cs.get("resources") or {}).get("requests") or {}
            return pod if Quantity.parse(actual.get("cpu", "0")).milli_value() == 500 else None
        pod = await wait_for(c.clock, resized, timeout=60, what="resize applied")
        cs = pod["status"]["containerStatuses"][0]
        assert cs["restartCount"] == 0
        # RequestsAndLimits: the limit keeps its 2x ratio
        limits = pod["spec"]["containers"][0]["resources"]["limits"]
        assert Quantity.parse(limits["cpu"]).milli_value() == 1000
        assert Quantity.parse(limits["memory"]).value() == 1600 * 2**20
        assert uids(await c.pods()) == uids(before)
        # the next pass does the other pod (the first one now matches its recommendation)
        second = await u.run_once()
        assert second.resized and second.resized[0] != name and not second.evicted
        assert {e["involvedObject"]["name"] for e in await reasons(c, "InPlaceResizedByVPA")} == {
            name, second.resized[0]}
    run(scenario)


def test_a_resize_no_node_could_hold_falls_back_to_eviction_at_once():
    """Kubernetes 1.36: the API server refuses a resize above the node's allocatable (403,
    PodResizeValidator) instead of the node reporting it Infeasible later, so
    InPlaceOrRecreate falls back to eviction in the same pass (VPA 1.8.1's updater evicts a
    pod whose in-place update failed)."""
    async def scenario(c: Cluster):
        before = await setup(c, "InPlaceOrRecreate", HUGE)
        u = Updater(c.client, c.clock)
        first = await u.run_once()
        assert first.resized == [] and len(first.evicted) == 1
        assert await reasons(c, "EvictedByVPA")
        assert first.evicted[0] not in {p["metadata"]["name"] for p in await c.pods()}
        assert len(uids(await settled(c)) & uids(before)) == 1
    run(scenario)


def test_in_place_mode_never_evicts():
    async def scenario(c: Cluster):
        before = await setup(c, "InPlace", HUGE)
        # updateMode InPlace is behind upstream's InPlace gate (alpha, off by default)
        u = Updater(c.client, c.clock, deferred_timeout=10, in_place_timeout=10, gates=VpaGates.parse("InPlace=true"))
        resized = []
        for _ in range(5):
            result = await u.run_once()
            assert not result.evicted
            resized += result.resized
            await c.clock.sleep(60)
        # 1.36: every attempt is refused at admission (above the node's allocatable)
        assert resized == []
        assert uids(await c.pods()) == uids(before)
        assert not await reasons(c, "EvictedByVPA")
    run(scenario)


def pdb(min_available: int) -> dict:
    return {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
            "metadata": {"name": "hamster-pdb", "namespace": NS},
            "spec": {"minAvailable": min_available, "selector": {"matchLabels": {"app": "hamster"}}}}


async def pdb_ready(c: Cluster) -> None:
    async def check():
        status = (await c.client.get(PDB, "hamster-pdb", NS)).get("status") or {}
        return status.get("currentHealthy") == 2 and "disruptionsAllowed" in status
    await wait_for(c.clock, check, timeout=60, what="PDB status")


def test_pdb_without_disruptions_stops_evictions_not_resizes():
    async def scenario(c: Cluster):
        await c.client.create(PDB, pdb(2))
        before = await setup(c, "Recreate", BIGGER)
        await pdb_ready(c)
        u = Updater(c.client, c.clock)
        result = await u.run_once()
        assert not result.evicted
        assert uids(await c.pods()) == uids(before)
        # the same workload under InPlaceOrRecreate: resized in place, the PDB does not apply
        obj = await c.client.get(VPAS, "hamster-vpa", NS)
        obj["spec"]["updatePolicy"]["updateMode"] = "InPlaceOrRecreate"
        await c.client.update(VPAS, obj)
        result = await u.run_once()
        assert len(result.resized) == 1 and not result.evicted
    run(scenario)


def test_single_replica_left_alone_unless_min_replicas_is_one():
    async def scenario(c: Cluster):
        before = await setup(c, "Recreate", BIGGER, replicas=1)
        u = Updater(c.client, c.clock)
        result = await u.run_once()
        assert not result.evicted and "too few replicas" in result.skipped["default/hamster-vpa"]
        obj = await c.client.get(VPAS, "hamster-vpa", NS)
        obj["spec"]["updatePolicy"]["minReplicas"] = 1
        await c.client.update(VPAS, obj)
        result = await u.run_once()
        assert result.evicted == [before[0]["metadata"]["name"]]
    run(scenario)


async def capacity_aware(c: Cluster) -> None:
    obj = await c.client.get(VPAS, "hamster-vpa", NS)
    obj["metadata"].setdefault("annotations", {})["vpa.kvert.io/capacity-aware"] = "true"
    await c.client.update(VPAS, obj)


def test_capacity_aware_holds_pods_whose_replacement_would_stay_pending():
    # the one node has 4 CPUs: a pod re-created at the 8-CPU target could only wait Pending
    async def scenario(c: Cluster):
        before = await setup(c, "Recreate", HUGE)
        await capacity_aware(c)
        u = Updater(c.client, c.clock)
        result = await u.run_once()
        assert not result.evicted
        assert sorted(result.held) == sorted(p["metadata"]["name"] for p in before)
        assert uids(await c.pods()) == uids(before)
    run(scenario)


def test_capacity_aware_in_place_falls_back_only_when_the_replacement_fits():
    async def scenario(c: Cluster):
        before = await setup(c, "InPlaceOrRecreate", HUGE)
        await capacity_aware(c)
        u = Updater(c.client, c.clock)
        # 1.36 refuses the resize at admission; the fallback eviction is held because no node
        # could take the replacement (upstream would evict it, see above)
        first = await u.run_once()
        assert first.resized == [] and not first.evicted and first.held
        assert uids(await c.pods()) == uids(before)
    run(scenario)


def test_capacity_aware_still_evicts_when_a_node_has_room():
    async def scenario(c: Cluster):
        before = await setup(c, "Recreate", BIGGER)
        await capacity_aware(c)
        result = await Updater(c.client, c.clock).run_once()
        assert len(result.evicted) == 1 and not result.held
        assert result.evicted[0] in {p["metadata"]["name"] for p in before}
    run(scenario)
