"""NodeAffinity: ``nodeaffinity/node_affinity_test.go`` TestNodeAffinity (Filter, one node) and
TestNodeAffinityPriority (normalized scores)."""

from __future__ import annotations

from . import Vector

FILTER = "nodeaffinity/node_affinity_test.go TestNodeAffinity/"
PRIORITY = "nodeaffinity/node_affinity_test.go TestNodeAffinityPriority/"
ERR_POD = "node(s) didn't match Pod's node affinity/selector"
ERR_ENFORCED = "node(s) didn't match scheduler-enforced node affinity"
NAME = "metadata.name"


def node(name: str, labels: dict | None = None) -> dict:
    return {"metadata": {"name": name, "labels": dict(labels or {})},
            "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}}


def pod(required: list | None = None, preferred: list | None = None,
        node_selector: dict | None = None) -> dict:
    spec: dict = {"containers": [{"name": "c", "image": "pause"}]}
    if node_selector is not None:
        spec["nodeSelector"] = node_selector
    na: dict = {}
    if required is not None:
        na["requiredDuringSchedulingIgnoredDuringExecution"] = {"nodeSelectorTerms": required}
    if preferred is not None:
        na["preferredDuringSchedulingIgnoredDuringExecution"] = preferred
    if na:
        spec["affinity"] = {"nodeAffinity": na}
    return {"metadata": {"name": "p", "namespace": "default", "uid": "uid-p"}, "spec": spec}


def req(key: str, op: str, *values: str) -> dict:
    r: dict = {"key": key, "operator": op}
    if values:
        r["values"] = list(values)
    return r


def expr(*reqs: dict) -> dict:
    return {"matchExpressions": list(reqs)}


def fields(*reqs: dict) -> dict:
    return {"matchFields": list(reqs)}


def filt(name: str, p: dict, labels: dict | None, fits: bool, node_name: str = "node1",
         args: dict | None = None, reason: str = ERR_POD) -> Vector:
    return Vector(go_test=FILTER + name, plugin="NodeAffinity", pod=p, args=args,
                  nodes=[node(node_name, labels)],
                  filtered={} if fits else {node_name: [reason]},
                  node=node_name if fits else None)


def added(required: list | None = None, preferred: list | None = None) -> dict:
    aff: dict = {}
    if required is not None:
        aff["requiredDuringSchedulingIgnoredDuringExecution"] = {"nodeSelectorTerms": required}
    if preferred is not None:
        aff["preferredDuringSchedulingIgnoredDuringExecution"] = preferred
    return {"addedAffinity": aff}


FOO_BAR = {"foo": "bar"}
GPU = {"GPU": "NVIDIA-GRID-K1"}

FILTER_VECTORS = [
    Vector(go_test=FILTER + "missing labels", plugin="NodeAffinity",
           pod=pod(node_selector={"foo": "bar"}), nodes=[node("node1")],
           filtered={"node1": [ERR_POD]}, node=None,
           message=f"0/1 nodes are available: 1 {ERR_POD}."),
    filt("same labels", pod(node_selector={"foo": "bar"}), FOO_BAR, True),
    filt("node labels are subset", pod(node_selector={"foo": "bar", "baz": "blah"}), FOO_BAR,
         False),
    filt("Pod with matchExpressions using In operator that matches the existing node",
         pod([expr(req("foo", "In", "bar", "value2"))]), FOO_BAR, True),
    filt("Pod with matchExpressions using Gt operator that matches the existing node",
         pod([expr(req("kernel-version", "Gt", "0204"))]), {"kernel-version": "0206"}, True),
    filt("Pod with matchExpressions using NotIn operator that matches the existing node",
         pod([expr(req("mem-type", "NotIn", "DDR", "DDR2"))]), {"mem-type": "DDR3"}, True),
    filt("Pod with matchExpressions using Exists operator that matches the existing node",
         pod([expr(req("GPU", "Exists"))]), GPU, True),
    filt("Pod with affinity that don't match node's labels won't schedule onto the node",
         pod([expr(req("foo", "In", "value1", "value2"))]), FOO_BAR, False),
    filt("Pod with empty MatchExpressions is not a valid value will match no objects and won't "
         "schedule onto the node", pod([expr()]), FOO_BAR, False),
    filt("Pod with no Affinity will schedule onto a node", pod(), FOO_BAR, True),
    filt("Pod with multiple matchExpressions ANDed that doesn't match the existing node",
         pod([expr(req("GPU", "Exists"), req("GPU", "In", "AMD", "INTER"))]), GPU, False),
    filt("Pod with multiple NodeSelectorTerms ORed in affinity, matches the node's labels and "
         "will schedule onto the node",
         pod([expr(req("foo", "In", "bar", "value2")), expr(req("diffkey", "In", "wrong", "value2"))]),
         FOO_BAR, True),
    filt("Pod with an Affinity matches node's labels but the PodSpec.NodeSelector(the old thing "
         "that we are deprecating) is not satisfied, won't schedule onto the node",
         pod([expr(req("foo", "Exists"))], node_selector={"foo": "bar"}), {"foo": "barrrrrr"},
         False),
    filt("Pod with an invalid value in Affinity term won't be scheduled onto the node",
         pod([expr(req("foo", "NotIn", "invalid value: ___@#$%^"))]), FOO_BAR, False),
    filt("Pod with matchFields using In operator that matches the existing node",
         pod([fields(req(NAME, "In", "node1"))]), None, True),
    filt("Pod with two terms: matchFields does not match, but matchExpressions matches",
         pod([fields(req(NAME, "In", "node1"), req(NAME, "In", "node2")),
              expr(req("foo", "In", "bar"))]), FOO_BAR, True, node_name="node2"),
    filt("Pod with two terms: both matchFields and matchExpressions do not match",
         pod([fields(req(NAME, "In", "node1")), expr(req("foo", "In", "not-match-to-bar"))]),
         FOO_BAR, False, node_name="node2"),
    filt("Pod with two terms of node.Name affinity",
         pod([fields(req(NAME, "In", "node1")), fields(req(NAME, "In", "node2"))]), None, True,
         node_name="node2"),
    filt("Matches added affinity and Pod's node affinity", pod([expr(req("zone", "In", "foo"))]),
         {"zone": "foo"}, True, node_name="node2",
         args=added(required=[fields(req(NAME, "In", "node2"))])),
    filt("Matches added affinity but not Pod's node affinity", pod([expr(req("zone", "In", "bar"))]),
         {"zone": "foo"}, False, node_name="node2",
         args=added(required=[fields(req(NAME, "In", "node2"))])),
    filt("Doesn't match added affinity", pod(), {"zone": "foo"}, False, node_name="node2",
         args=added(required=[expr(req("zone", "In", "bar"))]), reason=ERR_ENFORCED),
]

AFFINITY1 = [{"weight": 2, "preference": expr(req("foo", "In", "bar"))}]
AFFINITY2 = [{"weight": 2, "preference": expr(req("foo", "In", "bar"))},
             {"weight": 4, "preference": expr(req("key", "In", "value"))},
             {"weight": 5, "preference": expr(req("foo", "In", "bar"), req("key", "In", "value"),
                                              req("az", "In", "az1"))}]
LABEL1, LABEL2, LABEL3 = {"foo": "bar"}, {"key": "value"}, {"az": "az1"}
LABEL4 = {"abc": "az11", "def": "az22"}
LABEL5 = {"foo": "bar", "key": "value", "az": "az1"}


def prio(name: str, p: dict, nodes: list, scores: dict, args: dict | None = None) -> Vector:
    return Vector(go_test=PRIORITY + name, plugin="NodeAffinity", mode="score", pod=p,
                  nodes=nodes, scores=scores, args=args)


PRIORITY_VECTORS = [
    prio("no node matches preferred scheduling requirements in NodeAffinity of pod so all nodes' "
         "priority is zero", pod(preferred=AFFINITY1),
         [node("node1", LABEL4), node("node2", LABEL2), node("node3", LABEL3)],
         {"node1": 0, "node2": 0, "node3": 0}),
    prio("only node1 matches the preferred scheduling requirements of pod", pod(preferred=AFFINITY1),
         [node("node1", LABEL1), node("node2", LABEL2), node("node3", LABEL3)],
         {"node1": 100, "node2": 0, "node3": 0}),
    # raw 2, 11, 4 -> 100 * raw // 11
    prio("all nodes matches the preferred scheduling requirements of pod but with different "
         "priorities ", pod(preferred=AFFINITY2),
         [node("node1", LABEL1), node("node5", LABEL5), node("node2", LABEL2)],
         {"node1": 18, "node5": 100, "node2": 36}),
    prio("added affinity", pod(), [node("node1", LABEL1), node("node2", LABEL2)],
         {"node1": 100, "node2": 0}, args=added(preferred=AFFINITY1)),
    prio("added affinity and pod has default affinity", pod(preferred=AFFINITY1),
         [node("node1", LABEL1), node("node2", LABEL2), node("node3", LABEL5)],
         {"node1": 40, "node2": 60, "node3": 100},
         args=added(preferred=[{"weight": 3, "preference": expr(req("key", "In", "value"))}])),
]

VECTORS = FILTER_VECTORS + PRIORITY_VECTORS
