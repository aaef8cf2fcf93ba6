"""GangScheduling: ``gangscheduling/gangscheduling_test.go`` TestGangSchedulingFlow (1.35,
Workload API v1alpha1) as cluster snapshots, in schedule mode with GangScheduling enabled.

The Go test's objects: Workload ``ns1/gang-wl`` with gang pod groups ``pg1`` (minCount 3)
and ``pg2`` (minCount 4), Workload ``ns1/basic-wl`` whose ``pg1`` has the basic policy;
pods p1, p2, p3 of gang-wl/pg1, p4 of pg2, p5 of pg1 with replica key "2" (a gang of its
own), ``basic-pod`` of basic-wl and ``non-gang`` without a workloadRef. The Go test's
"initial pods" are pending pods of the snapshot.

``kvert schedule`` does not honour Permit yet: it runs PreEnqueue on each pending pod only
when that pod's turn comes, so a gang's last pod passes it alone and is bound without its
mates. The pod each vector checks gets the same answer that way as with Permit honoured, but
the gang mates do not; ``tests/scheduler/test_gangscheduling.py`` runs these vectors through
a Permit-aware offline scheduler too (:data:`PERMIT_VECTORS` are those about Permit) and
checks the whole gang there.
"""

from __future__ import annotations

from . import Vector

GO = "gangscheduling/gangscheduling_test.go TestGangSchedulingFlow/"
PLUGIN = "GangScheduling"
CONFIG = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
          "profiles": [{"schedulerName": "default-scheduler",
                        "plugins": {"multiPoint": {"enabled": [{"name": PLUGIN}]}}}]}


def workload(name: str, **groups: dict) -> dict:
    return {"apiVersion": "scheduling.k8s.io/v1alpha1", "kind": "Workload",
            "metadata": {"name": name, "namespace": "ns1"},
            "spec": {"podGroups": [{"name": g, "policy": policy} for g, policy in groups.items()]}}


GANG_WL = workload("gang-wl", pg1={"gang": {"minCount": 3}}, pg2={"gang": {"minCount": 4}})
BASIC_WL = workload("basic-wl", pg1={"basic": {}})


def node(name: str, pods: str = "110") -> dict:
    return {"metadata": {"name": name},
            "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": pods}}}


def pod(name: str, wl: str | None = "gang-wl", group: str = "pg1", replica: str = "",
        node_name: str = "") -> dict:
    spec: dict = {"containers": [{"name": "c", "image": "pause"}]}
    if wl is not None:
        ref = {"name": wl, "podGroup": group}
        if replica:
            ref["podGroupReplicaKey"] = replica
        spec["workloadRef"] = ref
    if node_name:
        spec["nodeName"] = node_name
    return {"metadata": {"name": name, "namespace": "ns1", "uid": name}, "spec": spec}


P1, P2, P3 = pod("p1"), pod("p2"), pod("p3")
P4 = pod("p4", group="pg2")
P5 = pod("p5", replica="2")
# queued after p1 (pods without a creationTimestamp come first)
P3_LATER = {**P3, "metadata": {**P3["metadata"], "creationTimestamp": "2025-01-01T00:00:00Z"}}


def case(name: str, the_pod: dict, others: list[dict], objects: list[dict], expect_node,
         nodes: list[dict] | None = None, go: str = GO) -> Vector:
    return Vector(go_test=go + name, plugin=PLUGIN, mode="schedule", config=CONFIG,
                  pod=the_pod, pods=others, objects=objects, nodes=nodes or [node("n1")],
                  node=expect_node)


VECTORS = [
    case("non-gang pod succeeds immediately", pod("non-gang", wl=None), [],
         [GANG_WL, BASIC_WL], "n1"),
    case("basic policy pod succeeds immediately", pod("basic-pod", wl="basic-wl"), [],
         [GANG_WL, BASIC_WL], "n1"),
    # PreEnqueue: the pods wait outside the queue, unattempted
    case("gang pod fails PreEnqueue when workload is not yet created", P1, [P2, P3, P4, P5],
         [], None),
    case("gang pod fails PreEnqueue when quorum is not met", P1, [P2, P4, P5], [GANG_WL], None),
    # p5's replica key makes it a gang of one pod with minCount 3
    case("gang pod fails PreEnqueue when quorum is not met (p5, replica key 2)", P5,
         [P1, P2, P3], [GANG_WL], None),
    case("final gang pod arrives at Permit and allows all waiting pods from a gang", P1,
         [P2, P3, P4, P5], [GANG_WL], "n1"),
]

# Permit decides: all of a gang's pods bind, or none does.
PERMIT_VECTORS: list[Vector] = [
    # p2 and p1 fit (the node takes two pods), p3 (created later) does not: the quorum (3) is
    # never waiting on permit, p1 waits at Permit until the gang times out and binds nowhere
    case("gang pod passes PreEnqueue, but waits at Permit", P1, [P2, P3_LATER], [GANG_WL], None,
         nodes=[node("n1", pods="2")]),
    # pg2 needs four pods: p4 completes the gang of p6, p7, p8, which waited on permit
    case("final gang pod arrives at Permit and allows all waiting pods from a gang (pg2)",
         P4, [pod("p6", group="pg2"), pod("p7", group="pg2"), pod("p8", group="pg2")],
         [GANG_WL], "n1"),
]
VECTORS += PERMIT_VECTORS
