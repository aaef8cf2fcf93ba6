"""NodeResourcesFit scoring strategies and NodeResourcesBalancedAllocation:
``noderesources/least_allocated_test.go`` TestLeastAllocatedScoringStrategy,
``most_allocated_test.go`` TestMostAllocatedScoringStrategy,
``requested_to_capacity_ratio_test.go`` TestRequestedToCapacityRatioScoringStrategy,
TestResourceBinPackingSingleExtended, TestResourceBinPackingMultipleExtended and
``balanced_allocation_test.go`` TestNodeResourcesBalancedAllocation.

Quantities are upstream's strings: ``st.MakeNode().Capacity({"cpu": "4000"})`` is 4000 cores,
``makeNode(name, 4000, 10000)`` is 4000 millicores and 10000 bytes. ``st.MakePod().Obj()`` has
no container at all (no default requests); ``Req(...)`` adds one container per call.
"""

from __future__ import annotations

import itertools

from . import Vector

LEAST = "noderesources/least_allocated_test.go TestLeastAllocatedScoringStrategy/"
MOST = "noderesources/most_allocated_test.go TestMostAllocatedScoringStrategy/"
RTCR = "noderesources/requested_to_capacity_ratio_test.go "
BALANCED = "noderesources/balanced_allocation_test.go TestNodeResourcesBalancedAllocation/"
EXT = "abc.com/xyz"   # least/most_allocated_test.go extendedRes
EXT_SET = [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}, {"name": EXT, "weight": 1}]

_uid = itertools.count()


def node(name: str, cap: dict | None = None) -> dict:
    """``st.MakeNode().Name(name).Capacity(cap)`` (capacity = allocatable)."""
    alloc = {"pods": "110", **(cap or {})}
    return {"metadata": {"name": name}, "status": {"allocatable": alloc, "capacity": alloc}}


def mnode(name: str, milli_cpu: int, memory: int, ext: dict | None = None) -> dict:
    """The tests' ``makeNode(name, milliCPU, memory, extended)``."""
    return node(name, {"cpu": f"{milli_cpu}m", "memory": str(memory),
                       **{k: str(v) for k, v in (ext or {}).items()}})


def pod(*requests: dict, node_name: str = "", containers: list | None = None) -> dict:
    """``st.MakePod().Req(r1).Req(r2)...``: one container per request map."""
    if containers is None:
        containers = [{"name": f"c{i}", "image": "pause", "resources": {"requests": r}}
                      for i, r in enumerate(requests)]
    n = next(_uid)
    spec: dict = {"containers": containers}
    if node_name:
        spec["nodeName"] = node_name
    return {"metadata": {"name": f"p{n}", "namespace": "default", "uid": f"uid-{n}"},
            "spec": spec}


def fit(strategy: str, resources: list | None = None, shape: list | None = None) -> dict:
    st: dict = {"type": strategy}
    if resources is not None:
        st["resources"] = resources
    if shape is not None:
        st["requestedToCapacityRatio"] = {"shape": [{"utilization": u, "score": s}
                                                    for u, s in shape]}
    return {"scoringStrategy": st}


def fit_case(go: str, args: dict, p: dict, nodes: list, scores: dict, pods: list = ()) -> Vector:
    return Vector(go_test=go, plugin="NodeResourcesFit", mode="score", args=args, pod=p,
                  nodes=nodes, pods=list(pods), scores=scores)


TWO_CONTAINERS = ({"cpu": "1000", "memory": "2000"}, {"cpu": "2000", "memory": "3000"})


def n2(c1: str, m1: str, c2: str, m2: str) -> list:
    return [node("node1", {"cpu": c1, "memory": m1}), node("node2", {"cpu": c2, "memory": m2})]


def scheduled(*placements: tuple[str, str, str]) -> list:
    return [pod({"cpu": c, "memory": m}, node_name=n) for n, c, m in placements]


LEAST_ALLOCATED = [
    fit_case(LEAST + "nothing scheduled, nothing requested", fit("LeastAllocated"),
             pod(containers=[]), n2("4000", "10000", "4000", "10000"), {"node1": 100, "node2": 100}),
    fit_case(LEAST + "nothing scheduled, resources requested, differently sized nodes",
             fit("LeastAllocated"), pod(*TWO_CONTAINERS), n2("4000", "10000", "6000", "10000"),
             {"node1": 37, "node2": 50}),
    fit_case(LEAST + "no resources requested, pods scheduled", fit("LeastAllocated"),
             pod(containers=[]), n2("4000", "10000", "4000", "10000"), {"node1": 100, "node2": 100},
             pods=[pod(containers=[], node_name=n) for n in ("node1", "node1", "node2", "node2")]),
    fit_case(LEAST + "no resources requested, pods scheduled with resources", fit("LeastAllocated"),
             pod(containers=[]), n2("10000", "20000", "10000", "20000"), {"node1": 70, "node2": 57},
             pods=scheduled(("node1", "3000", "0"), ("node1", "3000", "0"),
                            ("node2", "3000", "0"), ("node2", "3000", "5000"))),
    fit_case(LEAST + "resources requested, pods scheduled with resources, differently sized nodes",
             fit("LeastAllocated"), pod(*TWO_CONTAINERS), n2("10000", "20000", "10000", "50000"),
             {"node1": 57, "node2": 60},
             pods=scheduled(("node1", "3000", "0"), ("node2", "3000", "5000"))),
    fit_case(LEAST + "requested resources exceed node capacity", fit("LeastAllocated"),
             pod({"cpu": "3000", "memory": "0"}), n2("4000", "10000", "4000", "10000"),
             {"node1": 50, "node2": 25},
             pods=scheduled(("node1", "3000", "0"), ("node2", "3000", "5000"))),
    fit_case(LEAST + "zero node resources, pods scheduled with resources", fit("LeastAllocated"),
             pod(containers=[]), [node("node1"), node("node2")], {"node1": 0, "node2": 0},
             pods=scheduled(("node1", "3000", "0"), ("node2", "3000", "5000"))),
    fit_case(LEAST + "nothing scheduled, resources requested with different weight on CPU and "
             "memory, differently sized nodes",
             fit("LeastAllocated", [{"name": "memory", "weight": 2}, {"name": "cpu", "weight": 1}]),
             pod(*TWO_CONTAINERS), n2("4000", "10000", "6000", "10000"), {"node1": 41, "node2": 50}),
    fit_case(LEAST + "bypass extended resource if the pod does not request",
             fit("LeastAllocated", EXT_SET), pod(*TWO_CONTAINERS),
             [node("node1", {"cpu": "6000", "memory": "10000"}),
              node("node2", {"cpu": "6000", "memory": "10000", EXT: "4"})],
             {"node1": 50, "node2": 50}),
    fit_case(LEAST + "honor extended resource if the pod requests", fit("LeastAllocated", EXT_SET),
             pod({"cpu": "3000", "memory": "5000", EXT: "2"}),
             [node("node1", {"cpu": "6000", "memory": "10000", EXT: "4"}),
              node("node2", {"cpu": "6000", "memory": "10000", EXT: "10"})],
             {"node1": 50, "node2": 60}),
    fit_case(LEAST + "if the node doesn't have a resource",
             fit("LeastAllocated", [{"name": EXT, "weight": 2}, {"name": "cpu", "weight": 1},
                                    {"name": "memory", "weight": 1}]),
             pod({"cpu": "3000", "memory": "4000"}),
             [node("node1", {"cpu": "6000", "memory": "10000"}),
              node("node2", {"cpu": "6000", "memory": "10000", EXT: "4"})],
             {"node1": 55, "node2": 55}),
]

MOST_ALLOCATED = [
    fit_case(MOST + "nothing scheduled, nothing requested", fit("MostAllocated"),
             pod(containers=[]), n2("4000", "10000", "4000", "10000"), {"node1": 0, "node2": 0}),
    fit_case(MOST + "nothing scheduled, resources requested, differently sized nodes",
             fit("MostAllocated"), pod(*TWO_CONTAINERS), n2("4000", "10000", "6000", "10000"),
             {"node1": 62, "node2": 50}),
    fit_case(MOST + "no resources requested, pods scheduled with resources", fit("MostAllocated"),
             pod(containers=[]), n2("10000", "20000", "10000", "20000"), {"node1": 30, "node2": 42},
             pods=scheduled(("node1", "3000", "0"), ("node1", "3000", "0"),
                            ("node2", "3000", "0"), ("node2", "3000", "5000"))),
    fit_case(MOST + "resources requested, pods scheduled with resources", fit("MostAllocated"),
             pod(*TWO_CONTAINERS), n2("10000", "20000", "10000", "20000"), {"node1": 42, "node2": 55},
             pods=scheduled(("node1", "3000", "0"), ("node2", "3000", "5000"))),
    fit_case(MOST + "resources requested equal node capacity", fit("MostAllocated"),
             pod({"cpu": "2000", "memory": "4000"}, {"cpu": "3000", "memory": "5000"}),
             n2("5000", "10000", "10000", "9000"), {"node1": 95, "node2": 75}),
    # upstream's second case of this name: memory weight 2, cpu weight 1
    fit_case(MOST + "nothing scheduled, resources requested, differently sized nodes",
             fit("MostAllocated", [{"name": "memory", "weight": 2}, {"name": "cpu", "weight": 1}]),
             pod(*TWO_CONTAINERS), n2("4000", "10000", "6000", "10000"), {"node1": 58, "node2": 50}),
    # a container without requests counts 100m cpu and 200Mi memory when scoring
    fit_case(MOST + "no resources requested, pods scheduled, nonzero request for resource",
             fit("MostAllocated"), pod(containers=[{"name": "container", "image": "pause"}]),
             n2("250m", "1000Mi", "250m", "1000Mi"), {"node1": 80, "node2": 30},
             pods=[pod(containers=[{"name": "container", "image": "pause"}], node_name="node1")
                   for _ in range(2)]),
    fit_case(MOST + "honor extended resource if the pod request", fit("MostAllocated", EXT_SET),
             pod({"cpu": "3000", "memory": "5000", EXT: "2"}),
             [node("node1", {"cpu": "6000", "memory": "10000", EXT: "4"}),
              node("node2", {"cpu": "6000", "memory": "10000", EXT: "10"})],
             {"node1": 50, "node2": 40}),
    fit_case(MOST + "if the node doesn't have a resource",
             fit("MostAllocated", [{"name": EXT, "weight": 2}, {"name": "cpu", "weight": 1},
                                   {"name": "memory", "weight": 1}]),
             pod({"cpu": "3000", "memory": "4000"}),
             [node("node1", {"cpu": "6000", "memory": "10000"}),
              node("node2", {"cpu": "6000", "memory": "10000", EXT: "4"})],
             {"node1": 45, "node2": 45}),
]

LEAST_SHAPE = [(0, 10), (100, 0)]
BIN_PACKING = [(0, 0), (100, 1)]
FOO = "intel.com/foo"
BAR = "intel.com/bar"


def bp_nodes(ext1: dict, ext2: dict) -> list:
    return [mnode("node1", 4000, 10000 * 1024 * 1024, ext1),
            mnode("node2", 4000, 10000 * 1024 * 1024, ext2)]


SINGLE = RTCR + "TestResourceBinPackingSingleExtended/"
MULTI = RTCR + "TestResourceBinPackingMultipleExtended/"
SINGLE_ARGS = fit("RequestedToCapacityRatio", [{"name": FOO, "weight": 1}], BIN_PACKING)
MULTI_ARGS = fit("RequestedToCapacityRatio", [{"name": FOO, "weight": 3}, {"name": BAR, "weight": 5}],
                 BIN_PACKING)

REQUESTED_TO_CAPACITY_RATIO = [
    fit_case(RTCR + "TestRequestedToCapacityRatioScoringStrategy/nothing scheduled, nothing "
             "requested (default - least requested nodes have priority)",
             fit("RequestedToCapacityRatio", shape=LEAST_SHAPE), pod(containers=[]),
             n2("4000", "10000", "4000", "10000"), {"node1": 100, "node2": 100},
             pods=[pod(containers=[], node_name="node1") for _ in range(2)]),
    # round((25 + 50) / 2) = round(37.5) = 38: math.Round, not truncation
    fit_case(RTCR + "TestRequestedToCapacityRatioScoringStrategy/nothing scheduled, resources "
             "requested, differently sized nodes (default - least requested nodes have priority)",
             fit("RequestedToCapacityRatio", shape=LEAST_SHAPE), pod(*TWO_CONTAINERS),
             n2("4000", "10000", "6000", "10000"), {"node1": 38, "node2": 50},
             pods=[pod(containers=[], node_name="node1") for _ in range(2)]),
    fit_case(RTCR + "TestRequestedToCapacityRatioScoringStrategy/no resources requested, pods "
             "scheduled with resources (default - least requested nodes have priority)",
             fit("RequestedToCapacityRatio", shape=LEAST_SHAPE), pod(containers=[]),
             n2("4000", "10000", "6000", "10000"), {"node1": 38, "node2": 50},
             pods=scheduled(("node1", "3000", "5000"), ("node2", "3000", "5000"))),
    fit_case(SINGLE + "nothing scheduled, nothing requested", SINGLE_ARGS, pod(containers=[]),
             bp_nodes({FOO: 8}, {FOO: 4}), {"node1": 0, "node2": 0}),
    # the shape 0->0, 100->1 is scaled to 0->0, 100->10 first: 25% -> 2, 50% -> 5
    fit_case(SINGLE + "resources requested, pods scheduled with less resources", SINGLE_ARGS,
             pod({FOO: "2"}), bp_nodes({FOO: 8}, {FOO: 4}), {"node1": 2, "node2": 5},
             pods=[pod(containers=[])]),
    fit_case(SINGLE + "resources requested, pods scheduled with resources, on node with existing "
             "pod running ", SINGLE_ARGS, pod({FOO: "2"}), bp_nodes({FOO: 8}, {FOO: 4}),
             {"node1": 2, "node2": 10}, pods=[pod({FOO: "2"}, node_name="node2")]),
    fit_case(SINGLE + "resources requested, pods scheduled with more resources", SINGLE_ARGS,
             pod({FOO: "4"}), bp_nodes({FOO: 8}, {FOO: 4}), {"node1": 5, "node2": 10}),
    fit_case(MULTI + "resources requested, pods scheduled with less resources", MULTI_ARGS,
             pod({FOO: "2", BAR: "2"}), bp_nodes({FOO: 8, BAR: 4}, {FOO: 4, BAR: 8}),
             {"node1": 4, "node2": 3}),
    fit_case(MULTI + "resources requested, pods scheduled with resources, on node with existing "
             "pod running ", MULTI_ARGS, pod({FOO: "2", BAR: "2"}),
             bp_nodes({FOO: 8, BAR: 4}, {FOO: 4, BAR: 8}), {"node1": 4, "node2": 7},
             pods=[pod({FOO: "4", BAR: "2"}, node_name="node2")]),
    fit_case(MULTI + "resources requested, pods scheduled with more resources", MULTI_ARGS,
             pod({FOO: "4", BAR: "2"}), bp_nodes({FOO: 8, BAR: 4}, {FOO: 4, BAR: 8}),
             {"node1": 5, "node2": 5}),
]

CPU_ONLY = ({"cpu": "1000m", "memory": "0"}, {"cpu": "2000m", "memory": "0"})
CPU_AND_MEMORY = ({"cpu": "1000m", "memory": "2000"}, {"cpu": "2000m", "memory": "3000"})
CPU_MEMORY_GPU = ({"cpu": "1000m", "memory": "2000"},
                  {"cpu": "2000m", "memory": "3000", "nvidia.com/gpu": "3"})
WITH_GPU = {"resources": [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1},
                          {"name": "nvidia.com/gpu", "weight": 1}]}


def balanced(name: str, p: dict, nodes: list, scores: dict | None, pods: list = (),
             args: dict | None = None) -> Vector:
    return Vector(go_test=BALANCED + name, plugin="NodeResourcesBalancedAllocation", mode="score",
                  args=args, pod=p, nodes=nodes, pods=list(pods), scores=scores)


BALANCED_ALLOCATION = [
    # a BestEffort pod: PreScore answers Skip, so the plugin gives no score at all
    balanced("nothing scheduled, nothing requested, skip in PreScore", pod(containers=[]),
             [mnode("node1", 4000, 10000), mnode("node2", 4000, 10000)],
             {"node1": None, "node2": None}),
    balanced("nothing scheduled, resources requested, differently sized nodes",
             pod(*CPU_AND_MEMORY), [mnode("node1", 4000, 10000), mnode("node2", 6000, 10000)],
             {"node1": 87, "node2": 100}),
    balanced("resources requested, pods scheduled with resources", pod(*CPU_AND_MEMORY),
             [mnode("node1", 10000, 20000), mnode("node2", 10000, 20000)],
             {"node1": 82, "node2": 95},
             pods=[pod(*CPU_ONLY, node_name="node1"), pod(*CPU_AND_MEMORY, node_name="node2")]),
    balanced("resources requested, pods scheduled with resources, differently sized nodes",
             pod(*CPU_AND_MEMORY), [mnode("node1", 10000, 20000), mnode("node2", 10000, 50000)],
             {"node1": 82, "node2": 80},
             pods=[pod(*CPU_ONLY, node_name="node1"), pod(*CPU_AND_MEMORY, node_name="node2")]),
    balanced("requested resources at node capacity", pod(*CPU_ONLY),
             [mnode("node1", 6000, 10000), mnode("node2", 6000, 10000)],
             {"node1": 50, "node2": 75},
             pods=[pod(*CPU_ONLY, node_name="node1"), pod(*CPU_AND_MEMORY, node_name="node2")]),
    # three fractions: the population standard deviation
    balanced("include scalar resource on a node for balanced resource allocation",
             pod({"memory": "0", "nvidia.com/gpu": "1"}),
             [mnode("node1", 3500, 40000, {"nvidia.com/gpu": 8}),
              mnode("node2", 3500, 40000, {"nvidia.com/gpu": 8})],
             {"node1": 70, "node2": 65},
             pods=[pod(*CPU_AND_MEMORY, node_name="node2"), pod(*CPU_MEMORY_GPU, node_name="node1")],
             args=WITH_GPU),
    balanced("node without the scalar resource should skip the scalar resource",
             pod(*CPU_AND_MEMORY),
             [mnode("node1", 3500, 40000, {"nvidia.com/gpu": 8}), mnode("node2", 3500, 40000)],
             {"node1": 63, "node2": 63}, args=WITH_GPU),
]

VECTORS = LEAST_ALLOCATED + MOST_ALLOCATED + REQUESTED_TO_CAPACITY_RATIO + BALANCED_ALLOCATION
