"""ImageLocality: ``imagelocality/image_locality_test.go`` TestImageLocalityPriority (1.35:
init containers count, the maximum threshold is 1000 MiB per container)."""

from __future__ import annotations

from . import Vector

GO = "imagelocality/image_locality_test.go TestImageLocalityPriority/"
MB = 1024 * 1024


def node(name: str, images: list[tuple[list[str], int]]) -> dict:
    return {"metadata": {"name": name},
            "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"},
                       "images": [{"names": names, "sizeBytes": mb * MB} for names, mb in images]}}


def pod(*images: str, init: tuple[str, ...] = ()) -> dict:
    spec: dict = {"containers": [{"name": f"c{i}", "image": im} for i, im in enumerate(images)]}
    if init:
        spec["initContainers"] = [{"name": f"i{i}", "image": im} for i, im in enumerate(init)]
    return {"metadata": {"name": "p", "namespace": "default", "uid": "uid-p"}, "spec": spec}


NODE_40_300_2000 = [(["gcr.io/40:latest", "gcr.io/40:v1", "gcr.io/40:v1"], 40),
                    (["gcr.io/300:latest", "gcr.io/300:v1"], 300),
                    (["gcr.io/2000:latest"], 2000)]
NODE_250_10 = [(["gcr.io/250:latest"], 250), (["gcr.io/10:latest", "gcr.io/10:v1"], 10)]
NODE_600_40_900 = [(["gcr.io/600:latest"], 600), (["gcr.io/40:latest"], 40),
                   (["gcr.io/900:latest"], 900)]
NODE_300_600_900 = [(["gcr.io/300:latest"], 300), (["gcr.io/600:latest"], 600),
                    (["gcr.io/900:latest"], 900)]
NODE_4000_30 = [(["gcr.io/4000:latest"], 4000), (["gcr.io/30:latest"], 30)]
NODE_20_30_40 = [(["gcr.io/20:latest"], 20), (["gcr.io/30:latest"], 30), (["gcr.io/40:latest"], 40)]


def case(name: str, p: dict, nodes: list[dict], scores: dict[str, int]) -> Vector:
    return Vector(go_test=GO + name, plugin="ImageLocality", mode="score", pod=p, nodes=nodes,
                  scores=scores)


VECTORS = [
    # 100 * (250M/2 - 23M) / (1000M * 2 - 23M) = 5
    case("two images spread on two nodes, prefer the larger image one",
         pod("gcr.io/40", "gcr.io/250"),
         [node("node1", NODE_40_300_2000), node("node2", NODE_250_10)], {"node1": 0, "node2": 5}),
    # 100 * ((40M + 300M)/2 - 23M) / (1000M * 2 - 23M) = 7
    case("two images on one node, prefer this node", pod("gcr.io/40", "gcr.io/300"),
         [node("node1", NODE_40_300_2000), node("node2", NODE_250_10)], {"node1": 7, "node2": 0}),
    case("if exceed limit, use limit", pod("gcr.io/10", "gcr.io/4000"),
         [node("node1", NODE_4000_30), node("node2", NODE_250_10)], {"node1": 100, "node2": 0}),
    # 100 * (4000M/3 - 23M) / (1000M * 2 - 23M) = 66
    case("if exceed limit, use limit (with node which has no images present)",
         pod("gcr.io/10", "gcr.io/4000"),
         [node("node1", NODE_4000_30), node("node2", NODE_250_10), node("node3", [])],
         {"node1": 66, "node2": 0, "node3": 0}),
    case("pod with multiple large images, node2 is preferred",
         pod("gcr.io/300", "gcr.io/600", "gcr.io/900"),
         [node("node1", NODE_600_40_900), node("node2", NODE_300_600_900), node("node3", [])],
         {"node1": 32, "node2": 36, "node3": 0}),
    case("pod with multiple small images", pod("gcr.io/30", "gcr.io/40"),
         [node("node1", NODE_20_30_40), node("node2", NODE_4000_30)], {"node1": 1, "node2": 0}),
    # 100 * (300M * 1/2 - 23M) / (1000M * 2 - 23M) = 6
    case("include InitContainers: two images spread on two nodes, prefer the larger image one",
         pod("gcr.io/30", init=("gcr.io/300",)),
         [node("node1", NODE_40_300_2000), node("node2", NODE_20_30_40)], {"node1": 6, "node2": 0}),
]
