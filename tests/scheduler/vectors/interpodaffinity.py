"""InterPodAffinity vectors from kube-scheduler's
``pkg/scheduler/framework/plugins/interpodaffinity/{filtering,scoring}_test.go``.

Upstream's pods live in namespace "" (the incoming pod and the existing pods alike); here they
live in ``default``, and a term's namespace "" becomes ``default``. Pods get names (upstream's
are often nameless). The scoring tests' namespaces (``subteam{1,2}.team{1,2}`` labelled
``team: team1|team2``) are objects of the snapshot. A skipped PreScore leaves the plugin out
of a node's scores (``None`` below).
"""

from __future__ import annotations

from typing import Any

from . import Vector

PLUGIN = "InterPodAffinity"
F = "interpodaffinity/filtering_test.go"
S = "interpodaffinity/scoring_test.go"
AFF = "node(s) didn't match pod affinity rules"
ANTI = "node(s) didn't match pod anti-affinity rules"
EXISTING = "node(s) didn't satisfy existing pods anti-affinity rules"
S1, S2 = {"security": "S1"}, {"security": "S2"}
SCAN = {"service": "securityscan"}


def mk_node(name: str, labels: dict) -> dict:
    alloc = {"cpu": "32", "memory": "64Gi", "pods": "110"}
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": dict(labels)},
            "status": {"allocatable": alloc, "capacity": dict(alloc)}}


def mk_pod(name: str, node: str = "", labels: dict | None = None, ns: str = "default",
           affinity: dict | None = None) -> dict:
    spec: dict[str, Any] = {"containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10"}]}
    if node:
        spec["nodeName"] = node
    if affinity:
        spec["affinity"] = affinity
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": ns, "labels": dict(labels or {})}, "spec": spec}


def namespace(name: str, labels: dict) -> dict:
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name, "labels": labels}}


TEAMS = [namespace("subteam1.team1", {"team": "team1"}),
         namespace("subteam2.team1", {"team": "team1"}),
         namespace("subteam1.team2", {"team": "team2"}),
         namespace("subteam2.team2", {"team": "team2"})]


def expr(key: str, op: str, *values: str) -> dict:
    e: dict[str, Any] = {"key": key, "operator": op}
    if values:
        e["values"] = list(values)
    return e


def term(topology: str, *exprs: dict, namespaces: list | None = None,
         ns_selector: dict | None = None) -> dict:
    t: dict[str, Any] = {"labelSelector": {"matchExpressions": list(exprs)}, "topologyKey": topology}
    if namespaces is not None:
        t["namespaces"] = namespaces
    if ns_selector is not None:
        t["namespaceSelector"] = ns_selector
    return t


def affinity(required: list | None = None, anti: list | None = None,
             preferred: list | None = None, anti_preferred: list | None = None) -> dict:
    """Required terms and preferred (weight, term) pairs of podAffinity / podAntiAffinity."""
    out: dict[str, Any] = {}
    for field, req, pref in (("podAffinity", required, preferred),
                             ("podAntiAffinity", anti, anti_preferred)):
        part: dict[str, Any] = {}
        if req:
            part["requiredDuringSchedulingIgnoredDuringExecution"] = req
        if pref:
            part["preferredDuringSchedulingIgnoredDuringExecution"] = [
                {"weight": w, "podAffinityTerm": t} for w, t in pref]
        if part:
            out[field] = part
    return out


def f(case: str, test: str, pod: dict, nodes: list, pods: list = (), filtered: dict | None = None,
      message: str | None = None, objects: list = ()) -> Vector:
    return Vector(go_test=f"{F} {test}/{case}", plugin=PLUGIN, pod=pod, nodes=list(nodes),
                  pods=list(pods), objects=list(objects), filtered=filtered or {}, message=message)


def s(case: str, test: str, pod: dict, nodes: list, pods: list = (), scores: dict | None = None,
      args: dict | None = None) -> Vector:
    return Vector(go_test=f"{S} {test}/{case}", plugin=PLUGIN, pod=pod, nodes=list(nodes),
                  pods=list(pods), objects=list(TEAMS), mode="score", scores=scores, args=args)


# ---- TestRequiredAffinitySingleNode ------------------------------------------------------------

SINGLE = "TestRequiredAffinitySingleNode"
NODE1 = [mk_node("node1", {"region": "r1", "zone": "z11"})]
EXISTING_SCAN = [mk_pod("pod1", "node1", SCAN)]
SCAN_IN_REGION = term("region", expr("service", "In", "securityscan", "value2"))
TEAM1 = {"matchExpressions": [expr("team", "In", "team1")]}

SINGLE_NODE = [
    f("satisfies with requiredDuringSchedulingIgnoredDuringExecution in PodAffinity using In "
      "operator that matches the existing pod", SINGLE,
      mk_pod("p", labels=S1, affinity=affinity([SCAN_IN_REGION])), NODE1, EXISTING_SCAN),
    f("Does not satisfy the PodAffinity with labelSelector because of diff Namespace", SINGLE,
      mk_pod("p", labels=S1, affinity=affinity([
          term("", expr("service", "In", "securityscan", "value2"), namespaces=["DiffNameSpace"])])),
      NODE1, [mk_pod("pod1", "node1", SCAN, ns="ns")], {"node1": [AFF]},
      "0/1 nodes are available: 1 node(s) didn't match pod affinity rules."),
    f("The labelSelector requirements(items of matchExpressions) are ANDed, the pod cannot "
      "schedule onto the node because one of the matchExpression item don't match.", SINGLE,
      mk_pod("p", labels=S1, affinity=affinity([
          term("region", expr("service", "Exists"), expr("wrongkey", "DoesNotExist")),
          term("region", expr("service", "In", "securityscan2"),
               expr("service", "NotIn", "WrongValue"))])),
      NODE1, EXISTING_SCAN, {"node1": [AFF]}),
    f("satisfies the PodAffinity with different label Operators in multiple "
      "RequiredDuringSchedulingIgnoredDuringExecution ", SINGLE,
      mk_pod("p", labels=S1, affinity=affinity([
          term("region", expr("service", "Exists"), expr("wrongkey", "DoesNotExist")),
          term("region", expr("service", "In", "securityscan"),
               expr("service", "NotIn", "WrongValue"))])),
      NODE1, EXISTING_SCAN),
    f("satisfies the PodAffinity but doesn't satisfy the PodAntiAffinity with the existing pod",
      SINGLE, mk_pod("p", labels=S1, affinity=affinity(
          [SCAN_IN_REGION], anti=[term("zone", expr("service", "In", "securityscan", "value2"))])),
      NODE1, EXISTING_SCAN, {"node1": [ANTI]}),
    f("satisfies the PodAffinity and PodAntiAffinity but doesn't satisfy PodAntiAffinity symmetry "
      "with the existing pod", SINGLE,
      mk_pod("p", labels=SCAN, affinity=affinity(
          [SCAN_IN_REGION], anti=[term("node", expr("service", "In", "antivirusscan", "value2"))])),
      NODE1, [mk_pod("pod1", "node1", SCAN, affinity=affinity(anti=[
          term("zone", expr("service", "In", "securityscan", "value2"))]))],
      {"node1": [EXISTING]}),
    f("pod matches its own Label in PodAffinity and that matches the existing pod Labels", SINGLE,
      mk_pod("p", labels=SCAN, affinity=affinity([
          term("region", expr("service", "NotIn", "securityscan", "value2"))])),
      NODE1, [mk_pod("pod1", "node2", SCAN)], {"node1": [AFF]}),
    f("verify that PodAntiAffinity from existing pod is respected when pod has no AntiAffinity "
      "constraints. doesn't satisfy PodAntiAffinity symmetry with the existing pod", SINGLE,
      mk_pod("p", labels=SCAN), NODE1, [mk_pod("pod1", "node1", SCAN, affinity=affinity(anti=[
          term("zone", expr("service", "In", "securityscan", "value2"))]))],
      {"node1": [EXISTING]}),
    f("PodAntiAffinity symmetry check b1: incoming pod and existing pod partially match each other "
      "on AffinityTerms", SINGLE,
      mk_pod("p", labels={"abc": "", "xyz": ""}, affinity=affinity(anti=[
          term("zone", expr("abc", "Exists")), term("zone", expr("def", "Exists"))])),
      NODE1, [mk_pod("pod1", "node1", {"def": "", "xyz": ""}, affinity=affinity(anti=[
          term("zone", expr("abc", "Exists")), term("zone", expr("def", "Exists"))]))],
      {"node1": [ANTI]}),
    f("affinity with NamespaceSelector", SINGLE,
      mk_pod("p", labels=S1, affinity=affinity([
          term("region", expr("service", "In", "securityscan", "value2"), ns_selector=TEAM1)])),
      NODE1, [mk_pod("pod1", "node1", SCAN, ns="subteam1.team1")], objects=TEAMS),
    f("affinity with non-matching NamespaceSelector", SINGLE,
      mk_pod("p", labels=S1, affinity=affinity([
          term("region", expr("service", "In", "securityscan", "value2"), ns_selector=TEAM1)])),
      NODE1, [mk_pod("pod1", "node1", SCAN, ns="subteam1.team2")], {"node1": [AFF]},
      objects=TEAMS),
    f("anti-affinity with matching all NamespaceSelector", SINGLE,
      mk_pod("p", labels=S1, ns="subteam1.team1", affinity=affinity(anti=[
          term("zone", expr("service", "In", "securityscan", "value2"), ns_selector={})])),
      NODE1, [mk_pod("pod1", "node1", SCAN, ns="subteam2.team1")], {"node1": [ANTI]},
      objects=TEAMS),
]

# ---- TestRequiredAffinityMultipleNodes ---------------------------------------------------------

MULTI = "TestRequiredAffinityMultipleNodes"
CHINA, CHINA_AZ1, INDIA = {"region": "China"}, {"region": "China", "az": "az1"}, {"region": "India"}


def abc(zone_b: str = "z2", zone_c: str | None = None) -> list[dict]:
    nodes = [mk_node("nodeA", {"region": "r1", "zone": "z1", "hostname": "nodeA"}),
             mk_node("nodeB", {"region": "r1", "zone": zone_b, "hostname": "nodeB"})]
    if zone_c:
        nodes.append(mk_node("nodeC", {"region": "r1", "zone": zone_c, "hostname": "nodeC"}))
    return nodes


MULTIPLE_NODES = [
    f("A pod can be scheduled onto all the nodes that have the same topology key & label value "
      "with one of them has an existing pod that matches the affinity rules", MULTI,
      mk_pod("p", affinity=affinity([term("region", expr("foo", "In", "bar"))])),
      [mk_node("node1", CHINA), mk_node("node2", CHINA_AZ1), mk_node("node3", INDIA)],
      [mk_pod("p1", "node1", {"foo": "bar"})], {"node3": [AFF]}),
    f("The affinity rule is to schedule all of the pods of this collection to the same zone. The "
      "first pod of the collection should not be blocked from being scheduled onto any node, even "
      "there's no existing pod that matches the rule anywhere.", MULTI,
      mk_pod("p", labels={"foo": "bar", "service": "securityscan"}, affinity=affinity([
          term("zone", expr("foo", "In", "bar")),
          term("zone", expr("service", "In", "securityscan"))])),
      [mk_node("nodeA", {"zone": "az1", "hostname": "h1"}),
       mk_node("nodeB", {"zone": "az2", "hostname": "h2"})],
      [mk_pod("p1", "nodeA", {"foo": "bar"})]),
    f("The first pod of the collection can only be scheduled on nodes labelled with the requested "
      "topology keys", MULTI,
      mk_pod("p", labels={"foo": "bar", "service": "securityscan"}, affinity=affinity([
          term("zone", expr("foo", "In", "bar")),
          term("zone", expr("service", "In", "securityscan"))])),
      [mk_node("nodeA", {"zoneLabel": "az1", "hostname": "h1"}),
       mk_node("nodeB", {"zoneLabel": "az2", "hostname": "h2"})],
      [mk_pod("p1", "nodeA", {"foo": "bar"})], {"nodeA": [AFF], "nodeB": [AFF]},
      "0/2 nodes are available: 2 node(s) didn't match pod affinity rules."),
    f("This test ensures that anti-affinity matches a pod when any term of the anti-affinity rule "
      "matches a pod.", MULTI,
      mk_pod("p", affinity=affinity(anti=[term("region", expr("foo", "In", "abc")),
                                          term("zone", expr("service", "In", "securityscan"))])),
      abc(), [mk_pod("p1", "nodeA", {"foo": "abc", "service": "securityscan"})],
      {"nodeA": [ANTI], "nodeB": [ANTI]},
      "0/2 nodes are available: 2 node(s) didn't match pod anti-affinity rules."),
    f("NodeA and nodeB have same topologyKey and label value. NodeA has an existing pod that "
      "matches the inter pod affinity rule. The pod can not be scheduled onto nodeA, nodeB, but can "
      "be scheduled onto nodeC (NodeC has an existing pod that match the inter pod affinity rule "
      "but in different namespace)", MULTI,
      mk_pod("p", labels={"foo": "123"}, ns="NS1", affinity=affinity(anti=[
          term("region", expr("foo", "In", "bar"))])),
      [mk_node("nodeA", CHINA), mk_node("nodeB", CHINA_AZ1), mk_node("nodeC", INDIA)],
      [mk_pod("p1", "nodeA", {"foo": "bar"}, ns="NS1"),
       mk_pod("p2", "nodeC", ns="NS2", affinity=affinity(anti=[
           term("region", expr("foo", "In", "123"))]))],
      {"nodeA": [ANTI], "nodeB": [ANTI]}, objects=[namespace("NS1", {})]),
    f("Test incoming pod's anti-affinity: incoming pod wouldn't considered as a fit as it at least "
      "violates one anti-affinity rule of existingPod", MULTI,
      mk_pod("p", affinity=affinity(anti=[term("zone", expr("foo", "Exists")),
                                          term("region", expr("bar", "Exists"))])),
      abc(), [mk_pod("p1", "nodeA", {"foo": ""}), mk_pod("p2", "nodeB", {"bar": ""})],
      {"nodeA": [ANTI], "nodeB": [ANTI]}),
    f("Test existing pod's anti-affinity: only when labelSelector and topologyKey both match, it's "
      "counted as a single term match - case when one term has invalid topologyKey", MULTI,
      mk_pod("p", labels={"foo": "", "bar": ""}), abc(),
      [mk_pod("p1", "nodeA", affinity=affinity(anti=[
          term("invalid-node-label", expr("foo", "Exists")), term("zone", expr("bar", "Exists"))]))],
      {"nodeA": [EXISTING]}),
    f("Test existing pod's anti-affinity: existingPod on nodeA and nodeB has at least one "
      "anti-affinity term matches incoming pod, so incoming pod can only be scheduled to nodeC",
      MULTI, mk_pod("p", labels={"foo": "", "bar": ""}), abc(zone_c="z3"),
      [mk_pod("p1", "nodeA", affinity=affinity(anti=[term("zone", expr("foo", "Exists")),
                                                     term("zone", expr("labelA", "Exists"))])),
       mk_pod("p2", "nodeB", affinity=affinity(anti=[term("zone", expr("bar", "Exists")),
                                                     term("zone", expr("labelB", "Exists"))]))],
      {"nodeA": [EXISTING], "nodeB": [EXISTING]}),
    f("Test incoming pod's affinity: firstly check if all affinityTerms match, and then check if "
      "all topologyKeys match", MULTI,
      mk_pod("p", affinity=affinity([term("region", expr("foo", "Exists")),
                                     term("zone", expr("bar", "Exists"))])),
      abc(zone_b="z1"), [mk_pod("pod1", "nodeA", {"foo": "", "bar": ""})]),
    f("Test incoming pod's affinity: firstly check if all affinityTerms match, and then check if "
      "all topologyKeys match, and the match logic should be satisfied on the same pod", MULTI,
      mk_pod("p", affinity=affinity([term("region", expr("foo", "Exists")),
                                     term("zone", expr("bar", "Exists"))])),
      abc(), [mk_pod("pod1", "nodeA", {"foo": ""}), mk_pod("pod2", "nodeB", {"bar": ""})],
      {"nodeA": [AFF], "nodeB": [AFF]}),
]

# ---- TestPreferredAffinity ---------------------------------------------------------------------

PREF = "TestPreferredAffinity"
AZ1, AZ2 = {"az": "az1"}, {"az": "az2"}
STAY_S1_REGION = affinity(preferred=[(5, term("region", expr("security", "In", "S1")))])
STAY_S2_REGION = affinity(preferred=[(6, term("region", expr("security", "In", "S2")))])
AWAY_S1_AZ = affinity(anti_preferred=[(5, term("az", expr("security", "In", "S1")))])
AWAY_S2_AZ = affinity(anti_preferred=[(5, term("az", expr("security", "In", "S2")))])
STAY_S1_AWAY_S2 = affinity(preferred=[(8, term("region", expr("security", "In", "S1")))],
                           anti_preferred=[(5, term("az", expr("security", "In", "S2")))])
AFFINITY3 = affinity(preferred=[
    (8, term("region", expr("security", "NotIn", "S1"), expr("security", "In", "S2"))),
    (2, term("region", expr("security", "Exists"), expr("wrongkey", "DoesNotExist")))])
HARD_AFFINITY = affinity([term("region", expr("security", "In", "S1", "value2")),
                          term("region", expr("security", "Exists"), expr("wrongkey", "DoesNotExist"))])
NS_SELECTOR_TERM = term("region", expr("security", "In", "S1"), namespaces=["subteam2.team2"],
                        ns_selector=TEAM1)
AFFINITY_NS_SELECTOR = affinity(preferred=[(5, NS_SELECTOR_TERM)])
ANTI_AFFINITY_NS_SELECTOR = affinity(anti_preferred=[(5, NS_SELECTOR_TERM)])
CHINA_INDIA_AZ1 = [mk_node("node1", CHINA), mk_node("node2", INDIA), mk_node("node3", AZ1)]

PREFERRED = [
    s("all nodes are same priority as Affinity is nil", PREF, mk_pod("p", labels=S1),
      CHINA_INDIA_AZ1, scores={"node1": None, "node2": None, "node3": None}),
    s("Affinity: pod that matches topology key & pods in nodes will get high score comparing to "
      "otherswhich doesn't match either pods in nodes or in topology key", PREF,
      mk_pod("p", labels=S1, affinity=STAY_S1_REGION), CHINA_INDIA_AZ1,
      [mk_pod("e1", "node1", S1), mk_pod("e2", "node2", S2), mk_pod("e3", "node3", S1)],
      {"node1": 100, "node2": 0, "node3": 0}),
    s("Affinity: nodes in one region has more matching pods comparing to other region, so the "
      "region which has more matches will get high score", PREF,
      mk_pod("p", labels=S1, affinity=STAY_S2_REGION),
      [mk_node("node1", CHINA), mk_node("node2", INDIA), mk_node("node3", CHINA),
       mk_node("node4", CHINA), mk_node("node5", INDIA)],
      [mk_pod("e1", "node1", S2), mk_pod("e2", "node1", S2), mk_pod("e3", "node2", S2),
       mk_pod("e4", "node3", S2), mk_pod("e5", "node4", S2), mk_pod("e6", "node5", S2)],
      {"node1": 100, "node2": 0, "node3": 100, "node4": 100, "node5": 0}),
    s("Affinity: different Label operators and values for pod affinity scheduling preference, "
      "including some match failures ", PREF, mk_pod("p", labels=S1, affinity=AFFINITY3),
      CHINA_INDIA_AZ1,
      [mk_pod("e1", "node1", S1), mk_pod("e2", "node2", S2), mk_pod("e3", "node3", S1)],
      {"node1": 20, "node2": 100, "node3": 0}),
    s("Affinity symmetry: considered only the preferredDuringSchedulingIgnoredDuringExecution in "
      "pod affinity symmetry", PREF, mk_pod("p", labels=S2), CHINA_INDIA_AZ1,
      [mk_pod("e1", "node1", S1, affinity=STAY_S1_REGION),
       mk_pod("e2", "node2", S2, affinity=STAY_S2_REGION)],
      {"node1": 0, "node2": 100, "node3": 0}),
    s("Affinity symmetry with namespace selector", PREF,
      mk_pod("p", labels=S1, ns="subteam1.team1"), CHINA_INDIA_AZ1,
      [mk_pod("e1", "node1", S1, affinity=AFFINITY_NS_SELECTOR),
       mk_pod("e2", "node2", S2, affinity=STAY_S2_REGION)],
      {"node1": 100, "node2": 0, "node3": 0}),
    s("AntiAffinity symmetry with namespace selector", PREF,
      mk_pod("p", labels=S1, ns="subteam1.team1"), CHINA_INDIA_AZ1,
      [mk_pod("e1", "node1", S1, affinity=ANTI_AFFINITY_NS_SELECTOR),
       mk_pod("e2", "node2", S2, affinity=STAY_S2_REGION)],
      {"node1": 0, "node2": 100, "node3": 100}),
    s("Affinity symmetry: considered RequiredDuringSchedulingIgnoredDuringExecution in pod "
      "affinity symmetry", PREF, mk_pod("p", labels=S1), CHINA_INDIA_AZ1,
      [mk_pod("e1", "node1", S1, affinity=HARD_AFFINITY),
       mk_pod("e2", "node2", S2, affinity=HARD_AFFINITY)],
      {"node1": 100, "node2": 100, "node3": 0}),
    s("Anti Affinity symmetry: the existing pods in node which has anti affinity match will get "
      "high score", PREF, mk_pod("p", labels=S2), [mk_node("node1", AZ1), mk_node("node2", AZ2)],
      [mk_pod("e1", "node1", S1, affinity=AWAY_S2_AZ), mk_pod("e2", "node2", S2, affinity=AWAY_S1_AZ)],
      {"node1": 0, "node2": 100}),
    s("Affinity and Anti Affinity and symmetry: considered only preferredDuringSchedulingIgnored"
      "DuringExecution in both pod affinity & anti affinity & symmetry", PREF,
      mk_pod("p", labels=S1, affinity=STAY_S1_AWAY_S2),
      [mk_node("node1", CHINA), mk_node("node2", AZ1), mk_node("node3", INDIA),
       mk_node("node4", AZ2)],
      [mk_pod("e1", "node1", S1), mk_pod("e2", "node2", S2),
       mk_pod("e3", "node3", affinity=STAY_S1_AWAY_S2), mk_pod("e4", "node4", affinity=AWAY_S1_AZ)],
      {"node1": 100, "node2": 0, "node3": 100, "node4": 0}),
    s("Avoid panic when partial nodes in a topology don't have pods with affinity", PREF,
      mk_pod("p", labels=S1), [mk_node("node1", CHINA), mk_node("node2", CHINA)],
      [mk_pod("e1", "node1", S1), mk_pod("e2", "node2", affinity=STAY_S1_AWAY_S2)],
      {"node1": 0, "node2": 0}),
    s("Affinity with pods matching both NamespaceSelector and Namespaces fields", PREF,
      mk_pod("p", labels=S1, ns="subteam1.team1", affinity=AFFINITY_NS_SELECTOR),
      [mk_node("node1", CHINA), mk_node("node2", INDIA)],
      [mk_pod("e1", "node1", S1, ns="subteam1.team1"), mk_pod("e2", "node1", S1, ns="subteam1.team1"),
       mk_pod("e3", "node1", S1, ns="subteam2.team2"), mk_pod("e4", "node2", S1, ns="subteam2.team1")],
      {"node1": 100, "node2": 0}),
    s("Ignore preferred terms of existing pods", PREF, mk_pod("p", labels=S2),
      [mk_node("node1", CHINA), mk_node("node2", INDIA)],
      [mk_pod("e1", "node1", S1, affinity=STAY_S1_AWAY_S2),
       mk_pod("e2", "node2", S2, affinity=STAY_S2_REGION)],
      {"node1": None, "node2": None}, args={"ignorePreferredTermsOfExistingPods": True}),
    s("Do not ignore preferred terms of existing pods", PREF, mk_pod("p", labels=S2),
      [mk_node("node1", CHINA), mk_node("node2", INDIA)],
      [mk_pod("e1", "node1", S1, affinity=STAY_S1_AWAY_S2),
       mk_pod("e2", "node2", S2, affinity=STAY_S2_REGION)],
      {"node1": 0, "node2": 100}, args={"ignorePreferredTermsOfExistingPods": False}),
]

# ---- TestPreferredAffinityWithHardPodAffinitySymmetricWeight -----------------------------------

HARD = "TestPreferredAffinityWithHardPodAffinitySymmetricWeight"
HARD_POD_AFFINITY = affinity([term("region", expr("service", "In", "S1"),
                                   namespaces=["default", "subteam2.team2"], ns_selector=TEAM1)])
HARD_PODS = [mk_pod("e1", "node1", affinity=HARD_POD_AFFINITY),
             mk_pod("e2", "node2", affinity=HARD_POD_AFFINITY)]


def hard(case: str, ns: str, weight: int, scores: dict) -> Vector:
    return s(case, HARD, mk_pod("p", labels={"service": "S1"}, ns=ns), CHINA_INDIA_AZ1, HARD_PODS,
             scores, args={"hardPodAffinityWeight": weight})


SKIPPED = {"node1": None, "node2": None, "node3": None}
HARD_WEIGHT = [
    hard("with default weight", "default", 1, {"node1": 100, "node2": 100, "node3": 0}),
    hard("with zero weight", "default", 0, SKIPPED),
    hard("with no matching namespace", "subteam1.team2", 1, SKIPPED),
    hard("with matching NamespaceSelector", "subteam1.team1", 1,
         {"node1": 100, "node2": 100, "node3": 0}),
]

VECTORS: list[Vector] = SINGLE_NODE + MULTIPLE_NODES + PREFERRED + HARD_WEIGHT
