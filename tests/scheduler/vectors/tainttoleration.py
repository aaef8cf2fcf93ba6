"""TaintToleration: ``tainttoleration/taint_toleration_test.go`` TestTaintTolerationScore and
TestTaintTolerationFilter. Since 1.34 the Filter reason no longer names the taint
(``node(s) had untolerated taint(s)``; older releases said ``untolerated taint {key: value}``)."""

from __future__ import annotations

from . import Vector

SCORE = "tainttoleration/taint_toleration_test.go TestTaintTolerationScore/"
FILTER = "tainttoleration/taint_toleration_test.go TestTaintTolerationFilter/"
REASON = "node(s) had untolerated taint(s)"
PREFER = "PreferNoSchedule"


def node(name: str, *taints: tuple) -> dict:
    """``nodeWithTaints``: (key, value, effect) triples."""
    return {"metadata": {"name": name},
            "spec": {"taints": [{"key": k, "value": v, "effect": e} for k, v, e in taints]},
            "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}}


def pod(*tolerations: dict) -> dict:
    """``podWithTolerations``."""
    return {"metadata": {"name": "pod1", "namespace": "default", "uid": "uid-pod1"},
            "spec": {"tolerations": list(tolerations),
                     "containers": [{"name": "c", "image": "pause"}]}}


def tol(key: str, value: str | None = None, effect: str = "", op: str = "Equal") -> dict:
    t: dict = {"key": key, "operator": op}
    if value is not None:
        t["value"] = value
    if effect:
        t["effect"] = effect
    return t


def score(name: str, p: dict, nodes: list, scores: dict) -> Vector:
    return Vector(go_test=SCORE + name, plugin="TaintToleration", mode="score", pod=p,
                  nodes=nodes, scores=scores)


def filt(name: str, p: dict, taints: list, fits: bool) -> Vector:
    return Vector(go_test=FILTER + name, plugin="TaintToleration", pod=p,
                  nodes=[node("nodeA", *taints)],
                  filtered={} if fits else {"nodeA": [REASON]}, node="nodeA" if fits else None)


ARM = ("cpu-type", "arm64", PREFER)
SSD = ("disk-type", "ssd", PREFER)

VECTORS = [
    score("node with taints tolerated by the pod, gets a higher score than those node with "
          "intolerable taints", pod(tol("foo", "bar", PREFER)),
          [node("nodeA", ("foo", "bar", PREFER)), node("nodeB", ("foo", "blah", PREFER))],
          {"nodeA": 100, "nodeB": 0}),
    score("the nodes that all of their taints are tolerated by the pod, get the same score, no "
          "matter how many tolerable taints a node has",
          pod(tol("cpu-type", "arm64", PREFER), tol("disk-type", "ssd", PREFER)),
          [node("nodeA"), node("nodeB", ARM), node("nodeC", ARM, SSD)],
          {"nodeA": 100, "nodeB": 100, "nodeC": 100}),
    score("the more intolerable taints a node has, the lower score it gets.",
          pod(tol("foo", "bar", PREFER)),
          [node("nodeA"), node("nodeB", ARM), node("nodeC", ARM, SSD)],
          {"nodeA": 100, "nodeB": 50, "nodeC": 0}),
    score("only taints and tolerations that have effect PreferNoSchedule are checked by "
          "taints-tolerations priority function",
          pod(tol("cpu-type", "arm64", "NoSchedule"), tol("disk-type", "ssd", "NoSchedule")),
          [node("nodeA"), node("nodeB", ("cpu-type", "arm64", "NoSchedule")),
           node("nodeC", ARM, SSD)],
          {"nodeA": 100, "nodeB": 100, "nodeC": 0}),
    score("Default behaviour No taints and tolerations, lands on node with no taints", pod(),
          [node("nodeA"), node("nodeB", ARM)], {"nodeA": 100, "nodeB": 0}),
    Vector(go_test=FILTER + "A pod having no tolerations can't be scheduled onto a node with "
           "nonempty taints", plugin="TaintToleration", pod=pod(),
           nodes=[node("nodeA", ("dedicated", "user1", "NoSchedule"))],
           filtered={"nodeA": [REASON]}, node=None,
           message=f"0/1 nodes are available: 1 {REASON}."),
    filt("A pod which can be scheduled on a dedicated node assigned to user1 with effect "
         "NoSchedule", pod({"key": "dedicated", "value": "user1", "effect": "NoSchedule"}),
         [("dedicated", "user1", "NoSchedule")], True),
    filt("A pod which can't be scheduled on a dedicated node assigned to user2 with effect "
         "NoSchedule", pod(tol("dedicated", "user2", "NoSchedule")),
         [("dedicated", "user1", "NoSchedule")], False),
    filt("A pod can be scheduled onto the node, with a toleration uses operator Exists that "
         "tolerates the taints on the node", pod(tol("foo", effect="NoSchedule", op="Exists")),
         [("foo", "bar", "NoSchedule")], True),
    filt("A pod has multiple tolerations, node has multiple taints, all the taints are tolerated, "
         "pod can be scheduled onto the node",
         pod(tol("dedicated", "user2", "NoSchedule"), tol("foo", effect="NoSchedule", op="Exists")),
         [("dedicated", "user2", "NoSchedule"), ("foo", "bar", "NoSchedule")], True),
    filt("A pod has a toleration that keys and values match the taint on the node, but (non-empty) "
         "effect doesn't match, can't be scheduled onto the node",
         pod(tol("foo", "bar", PREFER)), [("foo", "bar", "NoSchedule")], False),
    filt("The pod has a toleration that keys and values match the taint on the node, the effect "
         "of toleration is empty, and the effect of taint is NoSchedule. Pod can be scheduled "
         "onto the node", pod(tol("foo", "bar")), [("foo", "bar", "NoSchedule")], True),
    filt("The pod has a toleration that key and value don't match the taint on the node, but the "
         "effect of taint on node is PreferNoSchedule. Pod can be scheduled onto the node",
         pod(tol("dedicated", "user2", "NoSchedule")), [("dedicated", "user1", PREFER)], True),
    filt("The pod has no toleration, but the effect of taint on node is PreferNoSchedule. Pod "
         "can be scheduled onto the node", pod(), [("dedicated", "user1", PREFER)], True),
]
