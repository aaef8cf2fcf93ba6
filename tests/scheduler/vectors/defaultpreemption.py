"""DefaultPreemption vectors from kube-scheduler's
``pkg/scheduler/framework/plugins/defaultpreemption/default_preemption_test.go``, in schedule
mode (the default profile: upstream's tests register NodeResourcesFit, which the default
profile has too).

Upstream hands PostFilter made-up node statuses; here the statuses are what the real filters
say, so cases are kept where they agree: "Too many pods" and "Insufficient cpu" (a request
that fits the node's allocatable) are Unschedulable, a taint is UnschedulableAndUnresolvable.
A request larger than the node's allocatable is UnschedulableAndUnresolvable for
NodeResourcesFit since 1.30, so cases relying on "Insufficient cpu" for such a node are left
out. ``message`` is the whole FailedScheduling text: the first part is FitError's histogram of
those statuses, the ``preemption: ...`` part is upstream's expected PostFilter status.
``node`` is where the pod lands once its victims are gone (the nominated node, tried first).

The builders mirror ``st.MakeNode().Capacity(...)`` (allocatable pods 32 unless given) and
``st.MakePod()``; upstream's start times ``epochTimeN`` are N nanoseconds after the epoch,
which a Pod's ``status.startTime`` (whole seconds) cannot express: they are N seconds here,
in the same order.
"""

from __future__ import annotations

from typing import Any

from . import Vector

PLUGIN = "DefaultPreemption"
T = "defaultpreemption/default_preemption_test.go"
NEG, LOW, MID, HIGH, VERY_HIGH = -100, 0, 100, 1000, 10000
SMALL = {"cpu": "100m", "memory": "100"}
MEDIUM = {"cpu": "200m", "memory": "200"}
LARGE = {"cpu": "300m", "memory": "300"}
VERY_LARGE = {"cpu": "500m", "memory": "500"}
ONE_POD = {"pods": "1"}
TAINT = [{"key": "dedicated", "value": "other", "effect": "NoSchedule"}]


def mk_node(name: str, capacity: dict, taints: list | None = None,
            labels: dict | None = None) -> dict:
    alloc = {"pods": "32", **capacity}
    spec: dict[str, Any] = {"taints": taints} if taints else {}
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": dict(labels or {})},
            "spec": spec, "status": {"allocatable": alloc, "capacity": dict(alloc)}}


def mk_pod(name: str, node: str = "", priority: int | None = None, req: dict | None = None,
           labels: dict | None = None, start: int | None = None, never: bool = False,
           nominated: str = "", terminating: bool = False,
           disruption_target: bool = False, **spec: Any) -> dict:
    meta: dict[str, Any] = {"name": name, "namespace": "default", "uid": name,
                            "labels": dict(labels or {})}
    if terminating:
        meta["deletionTimestamp"] = "2024-01-01T00:00:00Z"
    container: dict[str, Any] = {"name": "c", "image": "registry.k8s.io/pause:3.10"}
    if req:
        container["resources"] = {"requests": dict(req)}
    s: dict[str, Any] = {"containers": [container], **spec}
    if node:
        s["nodeName"] = node
    s["priority"] = LOW if priority is None else priority
    if never:
        s["preemptionPolicy"] = "Never"
    status: dict[str, Any] = {}
    if start is not None:
        status["startTime"] = f"1970-01-01T00:00:{start:02d}Z"
    if nominated:
        status["nominatedNodeName"] = nominated
    if disruption_target:
        status["conditions"] = [{"type": "DisruptionTarget", "status": "True",
                                 "reason": "PreemptionByScheduler"}]
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": s}
    if status:
        pod["status"] = status
    return pod


def on(name: str, priority: int, req: dict, start: int | None = None) -> dict:
    """``p<N>.<i>`` on node<N> (TestSelectBestCandidate's naming)."""
    return mk_pod(name, "node" + name[1:].split(".")[0], priority, req, start=start)


def mk_pdb(name: str, match: dict, allowed: int, disrupted: list[str] = ()) -> dict:
    status: dict[str, Any] = {"disruptionsAllowed": allowed}
    if disrupted:
        status["disruptedPods"] = {p: "2024-01-01T00:00:00Z" for p in disrupted}
    return {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"selector": {"matchLabels": match}}, "status": status}


def vnodes(*names: str) -> list[dict]:
    """TestDryRunPreemption / TestSelectBestCandidate / TestPreempt nodes: veryLargeRes."""
    return [mk_node(n, VERY_LARGE) for n in names]


def tnodes(*names: str) -> list[dict]:
    """``node-a/zone1``: node node-a labelled hostname=node-a, zone=zone1 (TestPreempt)."""
    out = []
    for n in names:
        host, zone = n.split("/")
        out.append(mk_node(host, VERY_LARGE, labels={"hostname": host, "zone": zone}))
    return out


def spread(key: str) -> dict:
    return {"maxSkew": 1, "topologyKey": key, "whenUnsatisfiable": "DoNotSchedule",
            "labelSelector": {"matchExpressions": [{"key": "foo", "operator": "Exists"}]}}


def sched(case: str, pod: dict, nodes: list[dict], pods: list[dict], **expect: Any) -> Vector:
    return Vector(f"{T} {case}", PLUGIN, pod, nodes, pods, mode="schedule", **expect)


VIOLATING = {"test.kubernetes.io/is-violating-pdb": "violating"}
NON_VIOLATING = {"test.kubernetes.io/is-violating-pdb": "non-violating"}

VECTORS: list[Vector] = [
    # ---- TestPostFilter ----------------------------------------------------------------------
    sched("TestPostFilter/pod with higher priority can be made schedulable",
          mk_pod("p", priority=HIGH), [mk_node("node1", ONE_POD)], [mk_pod("p1", "node1")],
          nominated="node1", victims=["default/p1"], node="node1"),
    sched("TestPostFilter/pod with tied priority is still unschedulable",
          mk_pod("p"), [mk_node("node1", ONE_POD)], [mk_pod("p1", "node1")],
          nominated=None, victims=[], node=None,
          message="0/1 nodes are available: 1 Too many pods. preemption: 0/1 nodes are "
                  "available: 1 No preemption victims found for incoming pod."),
    # node1's UnschedulableAndUnresolvable status comes from a taint
    sched("TestPostFilter/preemption should respect filteredNodesStatuses",
          mk_pod("p", priority=HIGH), [mk_node("node1", ONE_POD, TAINT)], [mk_pod("p1", "node1")],
          nominated=None, victims=[],
          message="0/1 nodes are available: 1 node(s) had untolerated taint(s). preemption: "
                  "0/1 nodes are available: 1 Preemption is not helpful for scheduling."),
    # node1 is absent from the statuses: NodeAffinity's PreFilter keeps only a node that
    # does not exist
    sched("TestPostFilter/preemption should respect absent NodeToStatusReader entry meaning "
          "UnschedulableAndUnresolvable",
          mk_pod("p", priority=HIGH, affinity={"nodeAffinity": {
              "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [{
                  "matchFields": [{"key": "metadata.name", "operator": "In",
                                   "values": ["node2"]}]}]}}}),
          [mk_node("node1", ONE_POD)], [mk_pod("p1", "node1")],
          nominated=None, victims=[],
          message="0/1 nodes are available: 1 node(s) didn't satisfy plugin(s) [NodeAffinity]. "
                  "preemption: 0/1 nodes are available: 1 Preemption is not helpful for "
                  "scheduling."),
    sched("TestPostFilter/pod can be made schedulable on one node",
          mk_pod("p", priority=MID), [mk_node("node1", ONE_POD), mk_node("node2", ONE_POD)],
          [mk_pod("p1", "node1", HIGH), mk_pod("p2", "node2", LOW)],
          nominated="node2", victims=["default/p2"], node="node2"),
    Vector(f"{T} TestPostFilter/pod can be made schedulable on minHighestPriority node", PLUGIN,
           mk_pod("p", priority=VERY_HIGH),
           [mk_node("node1", ONE_POD), mk_node("node2", ONE_POD)],
           [mk_pod("p1", "node1", HIGH, labels=NON_VIOLATING),
            mk_pod("p2", "node1", LOW, labels=VIOLATING),
            mk_pod("p3", "node2", MID, labels=VIOLATING)],
           objects=[mk_pdb("violating-pdb", VIOLATING, 0),
                    mk_pdb("non-violating-pdb", NON_VIOLATING, 2 ** 31 - 1)],
           mode="schedule", nominated="node2", victims=["default/p3"], node="node2"),
    # ---- TestDryRunPreemption (one candidate, or the candidates' best) ----------------------
    sched("TestDryRunPreemption/a pod that would fit on the nodes, but other pods running are "
          "higher priority, no preemption would happen",
          mk_pod("p", priority=LOW, req=LARGE), vnodes("node1", "node2"),
          [mk_pod("p1", "node1", MID, LARGE), mk_pod("p2", "node2", MID, LARGE)],
          nominated=None, victims=[], node=None,
          message="0/2 nodes are available: 2 Insufficient cpu, 2 Insufficient memory. "
                  "preemption: 0/2 nodes are available: 2 No preemption victims found for "
                  "incoming pod."),
    sched("TestDryRunPreemption/mixed priority pods are preempted",
          mk_pod("p", priority=HIGH, req=LARGE), vnodes("node1", "node2"),
          [on("p1.1", MID, SMALL), on("p1.2", LOW, SMALL),
           on("p1.3", MID, MEDIUM), on("p1.4", HIGH, SMALL),
           mk_pod("p2", "node2", HIGH, LARGE)],
          nominated="node1", victims=["default/p1.2", "default/p1.3"], node="node1"),
    sched("TestDryRunPreemption/mixed priority pods are preempted, pick later StartTime one "
          "when priorities are equal",
          mk_pod("p", priority=HIGH, req=LARGE), vnodes("node1", "node2"),
          [on("p1.1", LOW, SMALL, 5), on("p1.2", LOW, SMALL, 4),
           on("p1.3", MID, MEDIUM, 3), on("p1.4", HIGH, SMALL, 2),
           mk_pod("p2", "node2", HIGH, LARGE, start=1)],
          nominated="node1", victims=["default/p1.1", "default/p1.3"], node="node1"),
    Vector(f"{T} TestDryRunPreemption/preemption with violation of same pdb", PLUGIN,
           mk_pod("p", priority=HIGH, req=VERY_LARGE), vnodes("node1"),
           [mk_pod("p1.1", "node1", MID, MEDIUM, labels={"app": "foo"}),
            mk_pod("p1.2", "node1", MID, MEDIUM, labels={"app": "foo"})],
           objects=[mk_pdb("pdb", {"app": "foo"}, 1)], mode="schedule",
           nominated="node1", victims=["default/p1.1", "default/p1.2"], node="node1"),
    Vector(f"{T} TestDryRunPreemption/preemption with violation of the pdb with pod whose "
           "eviction was processed, the victim which belongs to DisruptedPods is treated as "
           "'nonViolating'", PLUGIN,
           mk_pod("p", priority=HIGH, req=VERY_LARGE), vnodes("node1"),
           [mk_pod(f"p1.{i}", "node1", MID, MEDIUM, labels={"app": "foo"}) for i in (1, 2, 3)],
           objects=[mk_pdb("pdb", {"app": "foo"}, 1, ["p1.3"])], mode="schedule",
           nominated="node1", victims=["default/p1.1", "default/p1.2", "default/p1.3"],
           node="node1"),
    # ---- TestSelectBestCandidate -------------------------------------------------------------
    sched("TestSelectBestCandidate/node with min highest priority pod is picked",
          mk_pod("p", priority=HIGH, req=VERY_LARGE), vnodes("node1", "node2", "node3"),
          [on("p1.1", MID, MEDIUM, 0), on("p1.2", MID, LARGE, 0),
           on("p2.1", MID, MEDIUM, 0), on("p2.2", LOW, MEDIUM, 0),
           on("p3.1", LOW, MEDIUM, 0), on("p3.2", LOW, MEDIUM, 0)],
          nominated="node3", node="node3"),
    sched("TestSelectBestCandidate/when highest priorities are the same, minimum sum of "
          "priorities is picked",
          mk_pod("p", priority=HIGH, req=VERY_LARGE), vnodes("node1", "node2", "node3"),
          [on("p1.1", MID, MEDIUM, 0), on("p1.2", MID, LARGE, 0),
           on("p2.1", MID, LARGE, 0), on("p2.2", LOW, MEDIUM, 0),
           on("p3.1", MID, MEDIUM, 0), on("p3.2", MID, MEDIUM, 0)],
          nominated="node2", node="node2"),
    sched("TestSelectBestCandidate/when highest priority and sum are the same, minimum number "
          "of pods is picked",
          mk_pod("p", priority=HIGH, req=VERY_LARGE), vnodes("node1", "node2", "node3"),
          [on("p1.1", MID, SMALL, 0), on("p1.2", NEG, SMALL, 0),
           on("p1.3", MID, SMALL, 0), on("p1.4", NEG, SMALL, 0),
           on("p2.1", MID, LARGE, 0), on("p2.2", NEG, MEDIUM, 0),
           on("p3.1", MID, MEDIUM, 0), on("p3.2", NEG, SMALL, 0),
           on("p3.3", LOW, SMALL, 0)],
          nominated="node2", node="node2"),
    sched("TestSelectBestCandidate/sum of adjusted priorities is considered",
          mk_pod("p", priority=HIGH, req=VERY_LARGE), vnodes("node1", "node2", "node3"),
          [on("p1.1", MID, SMALL, 0), on("p1.2", NEG, SMALL, 0),
           on("p1.3", NEG, SMALL, 0),
           on("p2.1", MID, LARGE, 0), on("p2.2", NEG, MEDIUM, 0),
           on("p3.1", MID, MEDIUM, 0), on("p3.2", NEG, SMALL, 0),
           on("p3.3", LOW, SMALL, 0)],
          nominated="node2", node="node2"),
    sched("TestSelectBestCandidate/non-overlapping lowest high priority, sum priorities, and "
          "number of pods",
          mk_pod("p", priority=VERY_HIGH, req=VERY_LARGE),
          vnodes("node1", "node2", "node3", "node4"),
          [on("p1.1", MID, SMALL, 0), on("p1.2", LOW, SMALL, 0),
           on("p1.3", LOW, SMALL, 0),
           on("p2.1", HIGH, LARGE, 0),
           on("p3.1", MID, MEDIUM, 0), on("p3.2", LOW, SMALL, 0),
           on("p3.3", LOW, SMALL, 0), on("p3.4", LOW, MEDIUM, 0),
           on("p4.1", MID, MEDIUM, 0), on("p4.2", MID, SMALL, 0),
           on("p4.3", MID, SMALL, 0), on("p4.4", NEG, SMALL, 0)],
          nominated="node1", node="node1"),
    sched("TestSelectBestCandidate/same priority, same number of victims, different start time "
          "for each node's pod",
          mk_pod("p", priority=HIGH, req=VERY_LARGE), vnodes("node1", "node2", "node3"),
          [on("p1.1", MID, MEDIUM, 2), on("p1.2", MID, MEDIUM, 2),
           on("p2.1", MID, MEDIUM, 3), on("p2.2", MID, MEDIUM, 3),
           on("p3.1", MID, MEDIUM, 1), on("p3.2", MID, MEDIUM, 1)],
          nominated="node2", node="node2"),
    sched("TestSelectBestCandidate/same priority, same number of victims, different start time "
          "for all pods",
          mk_pod("p", priority=HIGH, req=VERY_LARGE), vnodes("node1", "node2", "node3"),
          [on("p1.1", MID, MEDIUM, 4), on("p1.2", MID, MEDIUM, 2),
           on("p2.1", MID, MEDIUM, 5), on("p2.2", MID, MEDIUM, 1),
           on("p3.1", MID, MEDIUM, 3), on("p3.2", MID, MEDIUM, 6)],
          nominated="node3", node="node3"),
    sched("TestSelectBestCandidate/different priority, same number of victims, different start "
          "time for all pods",
          mk_pod("p", priority=HIGH, req=VERY_LARGE), vnodes("node1", "node2", "node3"),
          [on("p1.1", LOW, MEDIUM, 4), on("p1.2", MID, MEDIUM, 2),
           on("p2.1", MID, MEDIUM, 6), on("p2.2", LOW, MEDIUM, 1),
           on("p3.1", LOW, MEDIUM, 3), on("p3.2", MID, MEDIUM, 5)],
          nominated="node2", node="node2"),
    # ---- TestPodEligibleToPreemptOthers ------------------------------------------------------
    sched("TestPodEligibleToPreemptOthers/preemption victim pod terminating, as indicated by "
          "the dedicated DisruptionTarget condition",
          mk_pod("p_with_nominated_node", priority=HIGH, nominated="node1"),
          [mk_node("node1", ONE_POD)],
          [mk_pod("p1", "node1", LOW, terminating=True, disruption_target=True)],
          nominated=None, victims=[], node=None,
          message="0/1 nodes are available: 1 Too many pods. preemption: not eligible due to a "
                  "terminating pod on the nominated node."),
    sched("TestPodEligibleToPreemptOthers/non-victim Pods terminating",
          mk_pod("p_with_nominated_node", priority=HIGH, nominated="node1"),
          [mk_node("node1", ONE_POD)], [mk_pod("p1", "node1", LOW, terminating=True)],
          nominated="node1", victims=["default/p1"]),
    sched("TestPodEligibleToPreemptOthers/Pod with 'PreemptNever' preemption policy",
          mk_pod("p_with_preempt_never_policy", priority=HIGH, never=True),
          [mk_node("node1", ONE_POD)], [mk_pod("p1", "node1", LOW)],
          nominated=None, victims=[], node=None,
          message="0/1 nodes are available: 1 Too many pods. preemption: not eligible due to "
                  "preemptionPolicy=Never."),
    # ---- TestPreempt ---------------------------------------------------------------------------
    sched("TestPreempt/basic preemption logic",
          mk_pod("p", priority=HIGH, req=VERY_LARGE, preemptionPolicy="PreemptLowerPriority"),
          vnodes("node1", "node2", "node3"),
          [on("p1.1", LOW, SMALL), on("p1.2", LOW, SMALL),
           on("p2.1", HIGH, LARGE), on("p3.1", MID, MEDIUM)],
          nominated="node1", victims=["default/p1.1", "default/p1.2"], node="node1"),
    sched("TestPreempt/preemption for topology spread constraints",
          mk_pod("p", priority=HIGH, labels={"foo": ""},
                 topologySpreadConstraints=[spread("zone"), spread("hostname")]),
          tnodes("node-a/zone1", "node-b/zone1", "node-x/zone2"),
          [mk_pod("p-a1", "node-a", HIGH, labels={"foo": ""}),
           mk_pod("p-a2", "node-a", HIGH, labels={"foo": ""}),
           mk_pod("p-b1", "node-b", LOW, labels={"foo": ""}),
           mk_pod("p-x1", "node-x", HIGH, labels={"foo": ""}),
           mk_pod("p-x2", "node-x", HIGH, labels={"foo": ""})],
          nominated="node-b", victims=["default/p-b1"], node="node-b"),
    sched("TestPreempt/no preempting in pod",
          mk_pod("p", priority=HIGH, req=VERY_LARGE, never=True),
          vnodes("node1", "node2", "node3"),
          [on("p1.1", LOW, SMALL), on("p1.2", LOW, SMALL),
           on("p2.1", HIGH, LARGE), on("p3.1", MID, MEDIUM)],
          nominated=None, victims=[], node=None),
    sched("TestPreempt/PreemptionPolicy is nil",
          mk_pod("p", priority=HIGH, req=VERY_LARGE), vnodes("node1", "node2", "node3"),
          [on("p1.1", LOW, SMALL), on("p1.2", LOW, SMALL),
           on("p2.1", HIGH, LARGE), on("p3.1", MID, MEDIUM)],
          nominated="node1", victims=["default/p1.1", "default/p1.2"], node="node1"),
]
