"""CPU startup boost end to end on simulated nodes in virtual time: the admission plugin in the
API server's chain boosts new pods' CPU, the node runs them boosted, and the updater resizes them
in place back to the recommendation once the boost expires -- ``durationSeconds`` after the pod
became Ready, or as soon as it is Ready without one (upstream 1.8)."""

from __future__ import annotations

from kvert.api.meta import parse_time
from kvert.api.quantity import Quantity
from kvert.vpa.admission import VpaAdmissionPlugin, VpaMatcher
from kvert.vpa.features import VpaGates
from kvert.vpa.recommender import VPAS
from kvert.vpa.updater import Updater

from tests.kubelet.test_agent_support import wait_for
from tests.vpa.test_recommender_live import DEPLOY, NS, Cluster, deployment, run, vpa

BOOST_ON = VpaGates.parse("CPUStartupBoost=true")
TARGET = {"cpu": "200m", "memory": "100Mi"}


def milli(text: str) -> int:
    return Quantity.parse(text).milli_value()


async def boosted_cluster(c: Cluster, duration: int | None) -> list[dict]:
    c.client.registry.admission.plugins.append(
        VpaAdmissionPlugin(VpaMatcher(c.client, c.clock), c.clock, gates=BOOST_ON))
    cpu: dict = {"type": "Factor", "factor": 3}
    if duration is not None:
        cpu["durationSeconds"] = duration
    obj = vpa(mode="InPlaceOrRecreate")
    obj["spec"]["startupBoost"] = {"cpu": cpu}
    obj = await c.client.create(VPAS, obj)
    obj["status"] = {"recommendation": {"containerRecommendations": [
        {"containerName": "hamster", "target": TARGET, "lowerBound": TARGET, "upperBound": TARGET,
         "uncappedTarget": TARGET}]}}
    await c.client.update_status(VPAS, obj)
    await c.client.create(DEPLOY, deployment(replicas=2))

    async def ready():
        pods = await c.running_pods()
        ok = [p for p in pods if any(x["type"] == "Ready" and x["status"] == "True"
                                     for x in p["status"].get("conditions") or [])]
        return ok if len(ok) == 2 else None
    return await wait_for(c.clock, ready, timeout=300, step=1.0, what="2 ready pods")


def ready_at(pod: dict) -> float:
    return parse_time(next(x for x in pod["status"]["conditions"] if x["type"] == "Ready")["lastTransitionTime"])


def running_cpu(pod: dict) -> int:
    return milli(pod["status"]["containerStatuses"][0]["resources"]["requests"]["cpu"])


def test_boost_at_creation_then_back_after_the_duration():
    async def scenario(c: Cluster):
        pods = await boosted_cluster(c, 120)
        for p in pods:
            # the target (200m) x 3 at creation, run as such, and marked with the original resources
            assert p["spec"]["containers"][0]["resources"]["requests"] == {"cpu": "600m", "memory": "100Mi"}
            assert running_cpu(p) == 600
            assert p["metadata"]["annotations"]["vpaCpuStartupBoost/hamster"] == \
                '{"requests":{"cpu":"100m","memory":"50Mi"},"limits":{}}'
        became_ready = max(ready_at(p) for p in pods)
        u = Updater(c.client, c.clock, gates=BOOST_ON, interval=30, eviction_tolerance=1.0)
        unboosted_at: dict[str, float] = {}
        while len(unboosted_at) < 2 and c.clock.now() < became_ready + 600:
            for name in (await u.run_once()).unboosted:
                unboosted_at[name] = c.clock.now()
            await c.clock.sleep(30)
        assert set(unboosted_at) == {p["metadata"]["name"] for p in pods}
        for p in pods:
            assert unboosted_at[p["metadata"]["name"]] - ready_at(p) > 120

        async def back():
            now = await c.running_pods()
            return now if all(running_cpu(p) == 200 for p in now) else None
        after = await wait_for(c.clock, back, timeout=120, step=1.0, what="pods resized back")
        assert {p["metadata"]["uid"] for p in after} == {p["metadata"]["uid"] for p in pods}   # in place
        for p in after:
            assert p["status"]["containerStatuses"][0]["restartCount"] == 0
            assert p["spec"]["containers"][0]["resources"]["requests"] == TARGET
            assert "vpaCpuStartupBoost/hamster" not in p["metadata"]["annotations"]
            assert p["metadata"]["annotations"]["vpaInPlaceUpdated"] == "true"
        assert not [e for e in (await c.client.list("events", namespace=NS))["items"] if e["reason"] == "EvictedByVPA"]
    run(scenario)


def test_without_a_duration_the_boost_goes_once_the_pod_is_ready():
    async def scenario(c: Cluster):
        pods = await boosted_cluster(c, None)
        assert all(running_cpu(p) == 600 for p in pods)
        result = await Updater(c.client, c.clock, gates=BOOST_ON, eviction_tolerance=1.0).run_once()
        assert sorted(result.unboosted) == sorted(p["metadata"]["name"] for p in pods)

        async def back():
            now = await c.running_pods()
            return now if all(running_cpu(p) == 200 for p in now) else None
        await wait_for(c.clock, back, timeout=120, step=1.0, what="pods resized back")
    run(scenario)
