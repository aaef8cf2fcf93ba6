"""kvert's capacity-aware VPA (``vpa.kvert.io/capacity-aware``): the recommender never
recommends more than the largest node that could host the pod can allocate."""

from __future__ import annotations

from kvert.api.quantity import Quantity, to_int
from kvert.vpa.capacity import NodeRoom, cap_to_room
from kvert.vpa.metrics_source import NodeAgentsMetricsSource
from kvert.vpa.recommendation import ContainerRecommendation
from kvert.vpa.recommender import VPAS, Recommender

from tests.kubelet.test_agent_support import wait_for
from tests.vpa.test_recommender_live import DEPLOY, NS, Cluster, deployment, recommendation, run, target_of, vpa


def node(name: str, cpu: str, memory: str, ready: bool = True, **spec) -> dict:
    return {"metadata": {"name": name, "labels": {"pool": name}}, "spec": spec,
            "status": {"allocatable": {"cpu": cpu, "memory": memory},
                       "conditions": [{"type": "Ready", "status": "True" if ready else "False"}]}}


def q(text: str) -> Quantity:
    return Quantity.parse(text)


def test_largest_counts_only_nodes_that_could_host_the_pod():
    nodes = [node("small", "2", "4Gi"), node("big", "16", "64Gi"), node("down", "64", "256Gi", ready=False),
             node("tainted", "32", "128Gi", taints=[{"key": "gpu", "effect": "NoSchedule"}])]
    room = NodeRoom(nodes, ())
    assert room.largest({"spec": {}}) == {"cpu": 16000, "memory": 64 * 2**30}
    assert room.largest({"spec": {"nodeSelector": {"pool": "small"}}}) == {"cpu": 2000, "memory": 4 * 2**30}
    tolerated = {"spec": {"tolerations": [{"key": "gpu", "operator": "Exists"}]}}
    assert room.largest(tolerated)["cpu"] == 32000


def test_fits_counts_what_the_nodes_run_and_frees_the_pod_itself():
    running = {"metadata": {"name": "a"}, "spec": {"nodeName": "n1", "containers": [
        {"name": "c", "resources": {"requests": {"cpu": "3", "memory": "1Gi"}}}]}, "status": {"phase": "Running"}}
    room = NodeRoom([node("n1", "4", "8Gi")], [running])
    other = {"spec": {"containers": []}}
    assert not room.fits(other, {"cpu": 2000, "memory": 2**30})     # 1 CPU left on n1
    assert room.fits(running, {"cpu": 4000, "memory": 2**30})       # its own 3 CPUs come back


def test_cap_shares_the_room_among_containers_and_keeps_the_uncapped_target():
    a = ContainerRecommendation("a", {"cpu": q("3"), "memory": q("1Gi")}, {"cpu": q("2")}, {"cpu": q("6")},
                                {"cpu": q("3"), "memory": q("1Gi")})
    b = ContainerRecommendation("b", {"cpu": q("1")}, {"cpu": q("500m")}, {"cpu": q("2")}, {"cpu": q("1")})
    cap_to_room([a, b], {"cpu": 3000, "memory": 8 * 2**30}, {"cpu": 1000})   # 2 CPUs left for a and b
    assert (a.target["cpu"].milli_value(), b.target["cpu"].milli_value()) == (1500, 500)
    assert a.upper_bound["cpu"].milli_value() == 1500 and a.lower_bound["cpu"].milli_value() == 1500
    assert b.lower_bound["cpu"].milli_value() == 500
    assert a.uncapped_target["cpu"].milli_value() == 3000
    assert a.target["memory"].value() == 2**30                     # memory fits: untouched


def test_recommender_caps_the_target_to_the_node_only_when_asked():
    # one 4-CPU node; the pod wants 3.9 cores: upstream's target (p90 + 15%) is above the node
    async def scenario(c: Cluster):
        await c.client.create(DEPLOY, deployment(replicas=1, usage={"hamster": {"cpu": "3900m", "memory": "200Mi"}}))
        aware = vpa(name="aware")
        aware["metadata"]["annotations"] = {"vpa.kvert.io/capacity-aware": "true"}
        await c.client.create(VPAS, aware)
        await wait_for(c.clock, lambda: c.running_pods(), timeout=120, what="pods running")
        r = Recommender(c.client, c.clock, NodeAgentsMetricsSource(c.agents), interval=60.0)
        c.spawn(r, r.run())
        obj = await recommendation(c, "aware")
        allocatable = (await c.client.get("nodes", "node-1"))["status"]["allocatable"]
        item = target_of(obj)
        for bound in ("target", "upperBound"):
            assert to_int("cpu", item[bound]["cpu"]) <= to_int("cpu", allocatable["cpu"])
        assert to_int("cpu", item["uncappedTarget"]["cpu"]) > to_int("cpu", allocatable["cpu"])
        # the same workload without the annotation: upstream's uncapped target
        await c.client.delete(VPAS, "aware", namespace=NS)
        await c.client.create(VPAS, vpa(name="upstream"))
        plain = target_of(await recommendation(c, "upstream"))
        assert to_int("cpu", plain["target"]["cpu"]) > to_int("cpu", allocatable["cpu"])
    run(scenario)
