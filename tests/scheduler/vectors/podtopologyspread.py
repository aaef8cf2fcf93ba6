"""PodTopologySpread vectors from kube-scheduler's
``pkg/scheduler/framework/plugins/podtopologyspread/{filtering,scoring}_test.go``.

The builders mirror upstream's ``st.MakePod()`` / ``st.MakeNode()`` wrappers: pods are in
namespace ``default`` (upstream's are in "", which is the same namespace for every pod of a
case), ``fooSelector`` is ``foo Exists``, ``taints`` is upstream's
``node.kubernetes.io/unschedulable:NoSchedule``. Score cases with ``failedNodes`` run in
schedule mode: the failed nodes are cordoned and NodeUnschedulable filters them out before
PodTopologySpread scores the others (cordoning does not change what the plugin counts).
"""

from __future__ import annotations

from typing import Any

from . import Vector

PLUGIN = "PodTopologySpread"
F = "podtopologyspread/filtering_test.go"
S = "podtopologyspread/scoring_test.go"
HOSTNAME = "kubernetes.io/hostname"
NOT_MATCH = "node(s) didn't match pod topology spread constraints"
MISSING_LABEL = NOT_MATCH + " (missing required label)"
FOO = {"matchExpressions": [{"key": "foo", "operator": "Exists"}]}
BAR = {"matchExpressions": [{"key": "bar", "operator": "Exists"}]}
TAINTS = [{"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}]
DNS, SA = "DoNotSchedule", "ScheduleAnyway"


def mk_node(name: str, labels: dict | None = None, taints: list | None = None,
            unschedulable: bool = False) -> dict:
    spec: dict[str, Any] = {}
    if taints:
        spec["taints"] = taints
    if unschedulable:
        spec["unschedulable"] = True
    alloc = {"cpu": "32", "memory": "64Gi", "pods": "110"}
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": dict(labels or {})},
            "spec": spec, "status": {"allocatable": alloc, "capacity": dict(alloc)}}


def zn(name: str, zone: str, **extra: str) -> dict:
    """A node labelled ``zone`` and ``node`` (filtering tests' nodes)."""
    return mk_node(name, {"zone": zone, "node": name, **extra})


def hn(name: str, zone: str | None = None) -> dict:
    """A node labelled with kubernetes.io/hostname (and ``zone``) (scoring tests' nodes)."""
    labels = {HOSTNAME: name}
    if zone is not None:
        labels["zone"] = zone
    return mk_node(name, labels)


def mk_pod(name: str, node: str = "", labels: dict | None = None, ns: str = "default",
           constraints: list | None = None, terminating: bool = False, **spec: Any) -> dict:
    meta: dict[str, Any] = {"name": name, "namespace": ns, "uid": f"uid-{ns}-{name}",
                            "labels": dict(labels or {})}
    if terminating:
        meta["deletionTimestamp"] = "2024-01-01T00:00:00Z"
    s: dict[str, Any] = {"containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10"}],
                         **spec}
    if node:
        s["nodeName"] = node
    if constraints:
        s["topologySpreadConstraints"] = constraints
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": s}


def foo_pods(**per_node: int) -> list[dict]:
    """``p-<n><i>`` pods labelled foo on node-<n>: foo_pods(a=2, b=1)."""
    return [mk_pod(f"p-{n}{i}", f"node-{n}", {"foo": ""})
            for n, count in per_node.items() for i in range(1, count + 1)]


def tsc(skew: int, key: str, when: str, selector: dict | None, min_domains: int | None = None,
        affinity_policy: str | None = None, taints_policy: str | None = None) -> dict:
    c: dict[str, Any] = {"maxSkew": skew, "topologyKey": key, "whenUnsatisfiable": when}
    if selector is not None:
        c["labelSelector"] = selector
    if min_domains is not None:
        c["minDomains"] = min_domains
    if affinity_policy is not None:
        c["nodeAffinityPolicy"] = affinity_policy
    if taints_policy is not None:
        c["nodeTaintsPolicy"] = taints_policy
    return c


def node_affinity(key: str, op: str, values: list[str]) -> dict:
    return {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchExpressions": [
            {"key": key, "operator": op, "values": values}]}]}}}


FOUR_ZONED = [zn("node-a", "zone1"), zn("node-b", "zone1"), zn("node-x", "zone2"),
              zn("node-y", "zone2")]
SPREAD_2103 = foo_pods(a=2, b=1, y=3)


def single(case: str, pod: dict, nodes: list[dict], pods: list[dict],
           filtered: dict[str, list[str]]) -> Vector:
    return Vector(f"{F} TestSingleConstraint/{case}", PLUGIN, pod, nodes, pods, filtered=filtered,
                  args={"defaultingType": "List"})


def multiple(case: str, pod: dict, nodes: list[dict], pods: list[dict],
             filtered: dict[str, list[str]]) -> Vector:
    return Vector(f"{F} TestMultipleConstraints/{case}", PLUGIN, pod, nodes, pods,
                  filtered=filtered, args={"defaultingType": "List"})


def score(case: str, pod: dict, nodes: list[dict], pods: list[dict], want: dict[str, int],
          objects: list[dict] | None = None, args: dict | None = None) -> Vector:
    return Vector(f"{S} TestPodTopologySpreadScore/{case}", PLUGIN, pod, nodes, pods,
                  objects=list(objects or []), mode="score",
                  args={"defaultingType": "List"} if args is None else args, scores=want)


# Failed nodes are cordoned; only NodeUnschedulable filters, only PodTopologySpread scores.
FAILED_NODES_CONFIG = {
    "apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
    "profiles": [{"schedulerName": "default-scheduler", "plugins": {"multiPoint": {
        "disabled": [{"name": "*"}],
        "enabled": [{"name": "PrioritySort"}, {"name": "DefaultBinder"},
                    {"name": "NodeUnschedulable"}, {"name": PLUGIN}]}}}]}


def score_with_failed(case: str, pod: dict, nodes: list[dict], failed: list[dict],
                      pods: list[dict], want: dict[str, int]) -> Vector:
    cordoned = [{**n, "spec": {**n["spec"], "unschedulable": True}} for n in failed]
    return Vector(f"{S} TestPodTopologySpreadScore/{case}", PLUGIN, pod, nodes + cordoned, pods,
                  mode="schedule", config=FAILED_NODES_CONFIG,
                  scores={n: {PLUGIN: s} for n, s in want.items()})


P_FOO_ZONE1 = mk_pod("p", labels={"foo": ""}, constraints=[tsc(1, "zone", DNS, FOO)])
P_FOO_NODE1 = mk_pod("p", labels={"foo": ""}, constraints=[tsc(1, "node", DNS, FOO)])
P_FOO_ZONE_NODE = mk_pod("p", labels={"foo": ""}, constraints=[tsc(1, "zone", DNS, FOO),
                                                               tsc(1, "node", DNS, FOO)])
P_FOOBAR_ZONE_NODE = mk_pod("p", labels={"foo": "", "bar": ""},
                            constraints=[tsc(1, "zone", DNS, FOO), tsc(1, "node", DNS, BAR)])

VECTORS: list[Vector] = [
    # ---- filtering_test.go TestSingleConstraint ------------------------------------------
    single("no existing pods", P_FOO_ZONE1, FOUR_ZONED, [], {}),
    single("existing pods in a different namespace do not count", P_FOO_ZONE1, FOUR_ZONED,
           [mk_pod("p-a1", "node-a", {"foo": ""}, ns="ns1"),
            mk_pod("p-b1", "node-a", {"foo": ""}, ns="ns2"),
            mk_pod("p-x1", "node-x", {"foo": ""}), mk_pod("p-y1", "node-y", {"foo": ""})],
           {"node-x": [NOT_MATCH], "node-y": [NOT_MATCH]}),
    single("existing pods do not match null selector",
           mk_pod("p", labels={"foo": ""}, constraints=[tsc(1, "zone", DNS, None)]), FOUR_ZONED,
           foo_pods(x=1, y=1), {}),
    single("pods spread across zones as 1/2 due to absence of label 'zone' on node-b",
           P_FOO_ZONE1,
           [zn("node-a", "zone1"), mk_node("node-b", {"zon": "zone1", "node": "node-b"}),
            zn("node-x", "zone2"), zn("node-y", "zone2")],
           foo_pods(a=1, b=1, x=1, y=1),
           {"node-b": [MISSING_LABEL], "node-x": [NOT_MATCH], "node-y": [NOT_MATCH]}),
    single("pod cannot be scheduled as all nodes don't have label 'rack'",
           mk_pod("p", labels={"foo": ""}, constraints=[tsc(1, "rack", DNS, FOO)]),
           [zn("node-a", "zone1"), zn("node-x", "zone2")], [],
           {"node-a": [MISSING_LABEL], "node-x": [MISSING_LABEL]}),
    single("pods spread across nodes as 2/1/0/3, only node-x fits", P_FOO_NODE1, FOUR_ZONED,
           SPREAD_2103, {"node-a": [NOT_MATCH], "node-b": [NOT_MATCH], "node-y": [NOT_MATCH]}),
    single("pods spread across nodes as 2/1/0/3, maxSkew is 2, node-b and node-x fit",
           mk_pod("p", labels={"foo": ""}, constraints=[tsc(2, "node", DNS, FOO)]), FOUR_ZONED,
           SPREAD_2103, {"node-a": [NOT_MATCH], "node-y": [NOT_MATCH]}),
    single("pods spread across nodes as 2/1/0/3, but pod doesn't match itself",
           mk_pod("p", labels={"bar": ""}, constraints=[tsc(1, "node", DNS, FOO)]), FOUR_ZONED,
           SPREAD_2103, {"node-a": [NOT_MATCH], "node-y": [NOT_MATCH]}),
    single("incoming pod has nodeAffinity, pods spread as 2/~1~/~0~/3, hence node-a fits",
           mk_pod("p", labels={"foo": ""}, constraints=[tsc(1, "node", DNS, FOO)],
                  affinity=node_affinity("node", "In", ["node-a", "node-y"])),
           FOUR_ZONED, SPREAD_2103, {"node-y": [NOT_MATCH]}),
    single("terminating Pods should be excluded", P_FOO_NODE1,
           [mk_node("node-a", {"node": "node-a"}), mk_node("node-b", {"node": "node-b"})],
           [mk_pod("p-a", "node-a", {"foo": ""}, terminating=True),
            mk_pod("p-b", "node-b", {"foo": ""})],
           {"node-b": [NOT_MATCH]}),
    single("incoming pod has nodeAffinity, pods spread as 0/~2~/0/1, hence node-a fits",
           mk_pod("p", labels={"foo": ""}, constraints=[tsc(1, "zone", DNS, FOO)],
                  affinity=node_affinity("node", "NotIn", ["node-b"])),
           FOUR_ZONED, foo_pods(b=2, y=1), {"node-x": [NOT_MATCH], "node-y": [NOT_MATCH]}),
    single("pods spread across nodes as 2/2/1, maxSkew is 2, and the number of domains < "
           "minDomains, then the third node fits",
           mk_pod("p", labels={"foo": ""}, constraints=[tsc(2, "node", DNS, FOO, min_domains=4)]),
           [mk_node(f"node-{x}", {"node": f"node-{x}"}) for x in "abc"],
           foo_pods(a=2, b=2, c=1), {"node-a": [NOT_MATCH], "node-b": [NOT_MATCH]}),
    single("pods spread across nodes as 2/2/1, maxSkew is 2, and the number of domains > "
           "minDomains, then the all nodes fit",
           mk_pod("p", labels={"foo": ""}, constraints=[tsc(2, "node", DNS, FOO, min_domains=2)]),
           [mk_node(f"node-{x}", {"node": f"node-{x}"}) for x in "abc"],
           foo_pods(a=2, b=2, c=1), {}),
    single("pods spread across zone as 2/1, maxSkew is 2 and the number of domains < "
           "minDomains, then the third and fourth nodes fit",
           mk_pod("p", labels={"foo": ""}, constraints=[tsc(2, "zone", DNS, FOO, min_domains=3)]),
           FOUR_ZONED,
           [mk_pod("p-b1", "node-a", {"foo": ""}), mk_pod("p-b2", "node-b", {"foo": ""}),
            mk_pod("p-y1", "node-y", {"foo": ""})],
           {"node-a": [NOT_MATCH], "node-b": [NOT_MATCH]}),
    single("NodeAffinityPolicy honored with labelSelectors",
           mk_pod("p", labels={"foo": ""}, constraints=[tsc(1, "node", DNS, FOO)],
                  nodeSelector={"foo": ""}),
           [mk_node("node-a", {"node": "node-a", "foo": ""}),
            mk_node("node-b", {"node": "node-b", "foo": ""}),
            mk_node("node-x", {"node": "node-x", "foo": ""}), mk_node("node-y", {"node": "node-y"})],
           [mk_pod("p-b1", "node-a", {"foo": ""}), mk_pod("p-b2", "node-b", {"foo": ""}),
            mk_pod("p-y1", "node-y", {"foo": ""})],
           {"node-a": [NOT_MATCH], "node-b": [NOT_MATCH]}),
    single("NodeAffinityPolicy ignored with labelSelectors",
           mk_pod("p", labels={"foo": ""}, nodeSelector={"foo": ""},
                  constraints=[tsc(1, "node", DNS, FOO, affinity_policy="Ignore")]),
           [mk_node("node-a", {"node": "node-a", "foo": ""}),
            mk_node("node-b", {"node": "node-b", "foo": ""}),
            mk_node("node-x", {"node": "node-x", "foo": ""}), mk_node("node-y", {"node": "node-y"})],
           [mk_pod("p-b1", "node-a", {"foo": ""}), mk_pod("p-b2", "node-b", {"foo": ""}),
            mk_pod("p-y1", "node-y", {"foo": ""})],
           {"node-a": [NOT_MATCH], "node-b": [NOT_MATCH], "node-y": [NOT_MATCH]}),
    single("NodeTaintsPolicy honored",
           mk_pod("p", labels={"foo": ""},
                  constraints=[tsc(1, "node", DNS, FOO, taints_policy="Honor")]),
           [mk_node("node-a", {"node": "node-a", "foo": ""}),
            mk_node("node-b", {"node": "node-b", "foo": ""}),
            mk_node("node-x", {"node": "node-x", "foo": ""}),
            mk_node("node-y", {"node": "node-y"}, taints=TAINTS)],
           [mk_pod("p-b1", "node-a", {"foo": ""}), mk_pod("p-b2", "node-b", {"foo": ""}),
            mk_pod("p-y1", "node-y", {"foo": ""})],
           {"node-a": [NOT_MATCH], "node-b": [NOT_MATCH]}),
    single("NodeTaintsPolicy ignored", P_FOO_NODE1,
           [mk_node("node-a", {"node": "node-a", "foo": ""}),
            mk_node("node-b", {"node": "node-b", "foo": ""}),
            mk_node("node-x", {"node": "node-x", "foo": ""}),
            mk_node("node-y", {"node": "node-y"}, taints=TAINTS)],
           [mk_pod("p-b1", "node-a", {"foo": ""}), mk_pod("p-b2", "node-b", {"foo": ""}),
            mk_pod("p-y1", "node-y", {"foo": ""})],
           {"node-a": [NOT_MATCH], "node-b": [NOT_MATCH], "node-y": [NOT_MATCH]}),

    # ---- filtering_test.go TestMultipleConstraints ----------------------------------------
    multiple("two Constraints on zone and node, spreads = [3/3, 2/1/0/3]", P_FOO_ZONE_NODE,
             FOUR_ZONED, SPREAD_2103,
             {"node-a": [NOT_MATCH], "node-b": [NOT_MATCH], "node-y": [NOT_MATCH]}),
    multiple("two Constraints on zone and node, spreads = [3/4, 2/1/0/4]", P_FOO_ZONE_NODE,
             FOUR_ZONED, foo_pods(a=2, b=1, y=4),
             {n: [NOT_MATCH] for n in ("node-a", "node-b", "node-x", "node-y")}),
    multiple("Constraints hold different labelSelectors, spreads = [2/3, 1/0/0/1]",
             P_FOOBAR_ZONE_NODE, FOUR_ZONED,
             [mk_pod("p-a1", "node-a", {"foo": ""}), mk_pod("p-a2", "node-a", {"foo": "", "bar": ""}),
              mk_pod("p-y1", "node-y", {"foo": ""}), mk_pod("p-y2", "node-y", {"foo": "", "bar": ""}),
              mk_pod("p-y3", "node-y", {"foo": ""})],
             {"node-a": [NOT_MATCH], "node-x": [NOT_MATCH], "node-y": [NOT_MATCH]}),
    multiple("Constraints hold different labelSelectors but pod doesn't match itself on 'zone' "
             "constraint",
             mk_pod("p", labels={"bar": ""},
                    constraints=[tsc(1, "zone", DNS, FOO), tsc(1, "node", DNS, BAR)]),
             FOUR_ZONED,
             [mk_pod("p-a1", "node-a", {"foo": ""}), mk_pod("p-x1", "node-x", {"bar": ""}),
              mk_pod("p-y1", "node-y", {"bar": ""})],
             {"node-x": [NOT_MATCH], "node-y": [NOT_MATCH]}),
    multiple("two Constraints on zone and node, absence of label 'node' on node-x, spreads = "
             "[1/1, 1/0/0/1]", P_FOO_ZONE_NODE,
             [zn("node-a", "zone1"), zn("node-b", "zone1"), mk_node("node-x", {"zone": "zone2"}),
              zn("node-y", "zone2")],
             [mk_pod("p-a1", "node-a", {"foo": ""}), mk_pod("p-y3", "node-y", {"foo": ""})],
             {"node-a": [NOT_MATCH], "node-x": [MISSING_LABEL], "node-y": [NOT_MATCH]}),
    multiple("two node inclusion Constraints, zone: honor/honor, node: honor/ignore",
             mk_pod("p", labels={"foo": ""},
                    constraints=[tsc(1, "zone", DNS, FOO, taints_policy="Honor"),
                                 tsc(1, "node", DNS, FOO)]),
             [zn("node-a", "zone1", foo=""), zn("node-b", "zone1", foo=""),
              zn("node-x", "zone2", foo=""),
              mk_node("node-y", {"zone": "zone2", "node": "node-y"}, taints=TAINTS)],
             foo_pods(a=1, b=1, y=1),
             {"node-a": [NOT_MATCH], "node-b": [NOT_MATCH], "node-y": [NOT_MATCH]}),
    multiple("two node inclusion Constraints, zone: honor/ignore, node: honor/ignore",
             mk_pod("p", labels={"foo": ""}, nodeSelector={"foo": ""},
                    constraints=[tsc(1, "zone", DNS, FOO), tsc(1, "node", DNS, FOO)]),
             [zn("node-a", "zone1", foo=""), zn("node-b", "zone1"), zn("node-x", "zone2", foo=""),
              mk_node("node-y", {"zone": "zone2", "node": "node-y", "foo": ""}, taints=TAINTS)],
             foo_pods(a=1, b=1, y=1),
             {"node-a": [NOT_MATCH], "node-y": [NOT_MATCH]}),

    # ---- scoring_test.go TestPodTopologySpreadScore ---------------------------------------
    score("one constraint on node, no existing pods",
          mk_pod("p", labels={"foo": ""}, constraints=[tsc(1, HOSTNAME, SA, FOO)]),
          [hn("node-a"), hn("node-b")], [], {"node-a": 100, "node-b": 100}),
    score("one constraint on node, all 4 nodes are candidates",
          mk_pod("p", labels={"foo": ""}, constraints=[tsc(1, HOSTNAME, SA, FOO)]),
          [hn(f"node-{x}") for x in "abcd"], foo_pods(a=2, b=1, d=3),
          {"node-a": 20, "node-b": 60, "node-c": 100, "node-d": 0}),
    score("one constraint on node, null selector",
          mk_pod("p", labels={"foo": ""}, constraints=[tsc(1, HOSTNAME, SA, None)]),
          [hn(f"node-{x}") for x in "abcd"], foo_pods(a=2, b=1, d=3),
          {"node-a": 100, "node-b": 100, "node-c": 100, "node-d": 100}),
    score("one constraint on node, all 4 nodes are candidates, maxSkew=2",
          mk_pod("p", labels={"foo": ""}, constraints=[tsc(2, HOSTNAME, SA, FOO)]),
          [hn(f"node-{x}") for x in "abcd"], foo_pods(a=2, b=1, d=3),
          {"node-a": 33, "node-b": 66, "node-c": 100, "node-d": 16}),
    score("one constraint on node, all 4 nodes are candidates, maxSkew=3",
          mk_pod("p", labels={"foo": ""}, constraints=[tsc(3, HOSTNAME, SA, FOO)]),
          [hn(f"node-{x}") for x in "abcd"], foo_pods(a=4, b=3, c=2, d=1),
          {"node-a": 44, "node-b": 66, "node-c": 77, "node-d": 100}),
    score("system defaulting, nodes don't have zone, pods match service",
          mk_pod("p", labels={"foo": ""}),
          [hn(f"node-{x}") for x in "abcd"], foo_pods(a=4, b=3, c=2, d=1),
          {"node-a": 44, "node-b": 66, "node-c": 77, "node-d": 100},
          objects=[{"apiVersion": "v1", "kind": "Service",
                    "metadata": {"name": "svc", "namespace": "default"},
                    "spec": {"selector": {"foo": ""}}}],
          args={}),
    score("two Constraints on zone and node, with different labelSelectors",
          mk_pod("p", labels={"foo": "", "bar": ""},
                 constraints=[tsc(1, "zone", SA, FOO), tsc(1, HOSTNAME, SA, BAR)]),
          [hn("node-a", "zone1"), hn("node-b", "zone1"), hn("node-x", "zone2"),
           hn("node-y", "zone2")],
          [mk_pod("p-a1", "node-a", {"foo": ""}), mk_pod("p-b1", "node-b", {"foo": "", "bar": ""}),
           mk_pod("p-y1", "node-y", {"foo": ""}), mk_pod("p-y2", "node-y", {"bar": ""})],
          {"node-a": 60, "node-b": 20, "node-x": 100, "node-y": 60}),
    score("two Constraints on zone and node, with different labelSelectors, some nodes have 0 pods",
          mk_pod("p", labels={"foo": "", "bar": ""},
                 constraints=[tsc(1, "zone", SA, FOO), tsc(1, HOSTNAME, SA, BAR)]),
          [hn("node-a", "zone1"), hn("node-b", "zone1"), hn("node-x", "zone2"),
           hn("node-y", "zone2")],
          [mk_pod("p-b1", "node-b", {"bar": ""}), mk_pod("p-x1", "node-x", {"foo": ""}),
           mk_pod("p-y1", "node-y", {"foo": "", "bar": ""})],
          {"node-a": 100, "node-b": 60, "node-x": 40, "node-y": 0}),
    score("existing pods in a different namespace do not count",
          mk_pod("p", labels={"foo": ""}, constraints=[tsc(1, HOSTNAME, SA, FOO)]),
          [hn("node-a"), hn("node-b")],
          [mk_pod("p-a1", "node-a", {"foo": ""}, ns="ns1"), mk_pod("p-a2", "node-a", {"foo": ""}),
           mk_pod("p-b1", "node-b", {"foo": ""}), mk_pod("p-b2", "node-b", {"foo": ""})],
          {"node-a": 100, "node-b": 33}),
    score("terminating Pods should be excluded",
          mk_pod("p", labels={"foo": ""}, constraints=[tsc(1, HOSTNAME, SA, FOO)]),
          [hn("node-a"), hn("node-b")],
          [mk_pod("p-a", "node-a", {"foo": ""}, terminating=True),
           mk_pod("p-b", "node-b", {"foo": ""})],
          {"node-a": 100, "node-b": 0}),
    score("minDomains has no effect when ScheduleAnyway",
          mk_pod("p", labels={"foo": ""}, constraints=[tsc(2, "node", SA, FOO, min_domains=10)]),
          [mk_node(f"node-{x}", {"node": f"node-{x}"}) for x in "abc"], foo_pods(a=2, b=2, c=1),
          {"node-a": 75, "node-b": 75, "node-c": 100}),
    score("NodeAffinityPolicy honoed with labelSelectors",
          mk_pod("p", labels={"foo": ""}, nodeSelector={"foo": ""},
                 constraints=[tsc(1, "node", SA, FOO)]),
          [mk_node("node-a", {"node": "node-a", "foo": ""}),
           mk_node("node-b", {"node": "node-b", "foo": ""}), mk_node("node-c", {"node": "node-c"})],
          foo_pods(a=2, b=1, c=1), {"node-a": 0, "node-b": 33, "node-c": 100}),
    score("NodeAffinityPolicy ignored with nodeAffinity",
          mk_pod("p", labels={"foo": ""}, affinity=node_affinity("foo", "In", [""]),
                 constraints=[tsc(1, "node", SA, FOO, affinity_policy="Ignore")]),
          [mk_node("node-a", {"node": "node-a", "foo": ""}),
           mk_node("node-b", {"node": "node-b", "foo": ""}), mk_node("node-c", {"node": "node-c"})],
          foo_pods(a=2, b=1, c=1), {"node-a": 66, "node-b": 100, "node-c": 100}),
    score("NodeTaintsPolicy honored",
          mk_pod("p", labels={"foo": ""}, constraints=[tsc(1, "node", SA, FOO, taints_policy="Honor")]),
          [mk_node("node-a", {"node": "node-a"}), mk_node("node-b", {"node": "node-b"}),
           mk_node("node-c", {"node": "node-c"}, taints=TAINTS)],
          foo_pods(a=2, b=1, c=1), {"node-a": 0, "node-b": 33, "node-c": 100}),
    score_with_failed(
        "one constraint on node, 3 out of 4 nodes are candidates",
        mk_pod("p", labels={"foo": ""}, constraints=[tsc(1, HOSTNAME, SA, FOO)]),
        [hn("node-a"), hn("node-b"), hn("node-x")], [hn("node-y")],
        foo_pods(a=4, b=2, x=1, y=3), {"node-a": 33, "node-b": 83, "node-x": 100}),
    score_with_failed(
        "one constraint on node, 3 out of 4 nodes are candidates, one node doesn't match "
        "topology key",
        mk_pod("p", labels={"foo": ""}, constraints=[tsc(1, HOSTNAME, SA, FOO)]),
        [hn("node-a"), mk_node("node-b", {"n": "node-b"}), hn("node-x")], [hn("node-y")],
        foo_pods(a=4, b=2, x=1, y=3), {"node-a": 16, "node-b": 0, "node-x": 100}),
    score_with_failed(
        "one constraint on zone, 3 out of 4 nodes are candidates",
        mk_pod("p", labels={"foo": ""}, constraints=[tsc(1, "zone", SA, FOO)]),
        [hn("node-a", "zone1"), hn("node-b", "zone1"), hn("node-x", "zone2")],
        [hn("node-y", "zone2")],
        foo_pods(a=4, b=2, x=1, y=3), {"node-a": 75, "node-b": 75, "node-x": 100}),
    score_with_failed(
        "two Constraints on zone and node, 2 out of 4 nodes are candidates",
        mk_pod("p", labels={"foo": ""},
               constraints=[tsc(1, "zone", SA, FOO), tsc(1, HOSTNAME, SA, FOO)]),
        [hn("node-a", "zone1"), hn("node-x", "zone2")],
        [hn("node-b", "zone1"), hn("node-y", "zone2")],
        foo_pods(a=2, b=1, x=2, y=4), {"node-a": 100, "node-x": 63}),
    score_with_failed(
        "two Constraints on zone and node, with different labelSelectors, 3 out of 4 nodes are "
        "candidates",
        mk_pod("p", labels={"foo": "", "bar": ""},
               constraints=[tsc(1, "zone", SA, FOO), tsc(1, HOSTNAME, SA, BAR)]),
        [hn("node-a", "zone1"), hn("node-b", "zone1"), hn("node-x", "zone2")],
        [hn("node-y", "zone2")],
        [mk_pod("p-a1", "node-a", {"foo": ""}), mk_pod("p-b1", "node-b", {"foo": "", "bar": ""}),
         mk_pod("p-y1", "node-y", {"foo": ""}), mk_pod("p-y2", "node-y", {"bar": ""})],
        {"node-a": 50, "node-b": 25, "node-x": 100}),
]
