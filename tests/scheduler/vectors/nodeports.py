"""NodePorts: ``nodeports/node_ports_test.go`` TestNodePorts (one node, ``m1``, holding the
existing pod's ports; the pod under test asks for its own). Ports are written as upstream's
``newPod`` helper writes them: ``PROTOCOL/hostIP/hostPort``."""

from __future__ import annotations

from . import Vector

GO = "nodeports/node_ports_test.go TestNodePorts/"
REASON = "node(s) didn't have free ports for the requested pod ports"
NODE = {"metadata": {"name": "m1"},
        "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}}


def _ports(specs: tuple[str, ...]) -> list[dict]:
    out = []
    for spec in specs:
        proto, ip, port = spec.split("/")
        out.append({"containerPort": int(port), "hostPort": int(port), "hostIP": ip,
                    "protocol": proto})
    return out


def pod(name: str, *ports: str, node: str = "", init: list | None = None) -> dict:
    spec: dict = {"containers": [{"name": "c", "image": "pause", "ports": _ports(ports)}]}
    if init is not None:
        spec["initContainers"] = init
    if node:
        spec["nodeName"] = node
    return {"metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}"}, "spec": spec}


def case(name: str, wanted: tuple[str, ...], used: tuple[str, ...], fits: bool,
         init: list | None = None) -> Vector:
    return Vector(
        go_test=GO + name, plugin="NodePorts", nodes=[NODE],
        pod=pod("p", *wanted, init=init),
        pods=[pod("existing", *used, node="m1")] if used else [],
        filtered={} if fits else {"m1": [REASON]},
        node="m1" if fits else None)


def _init(sidecar: bool) -> list:
    c = {"name": "init", "image": "pause",
         "ports": [{"containerPort": 8001, "hostPort": 8001, "protocol": "TCP"}]}
    if sidecar:
        c["restartPolicy"] = "Always"
    return [c]


VECTORS = [
    case("skip filter", (), (), True),
    case("other port", ("UDP/127.0.0.1/8080",), ("UDP/127.0.0.1/9090",), True),
    Vector(go_test=GO + "same udp port", plugin="NodePorts", nodes=[NODE],
           pod=pod("p", "UDP/127.0.0.1/8080"),
           pods=[pod("existing", "UDP/127.0.0.1/8080", node="m1")],
           filtered={"m1": [REASON]}, node=None,
           message=f"0/1 nodes are available: 1 {REASON}."),
    case("same tcp port", ("TCP/127.0.0.1/8080",), ("TCP/127.0.0.1/8080",), False),
    case("different host ip", ("TCP/127.0.0.1/8080",), ("TCP/127.0.0.2/8080",), True),
    case("different protocol", ("UDP/127.0.0.1/8080",), ("TCP/127.0.0.1/8080",), True),
    case("second udp port conflict", ("UDP/127.0.0.1/8000", "UDP/127.0.0.1/8080"),
         ("UDP/127.0.0.1/8080",), False),
    case("first tcp port conflict", ("TCP/127.0.0.1/8001", "UDP/127.0.0.1/8080"),
         ("TCP/127.0.0.1/8001", "UDP/127.0.0.1/8081"), False),
    case("first tcp port conflict due to 0.0.0.0 hostIP", ("TCP/0.0.0.0/8001",),
         ("TCP/127.0.0.1/8001",), False),
    case("TCP hostPort conflict due to 0.0.0.0 hostIP", ("TCP/10.0.10.10/8001", "TCP/0.0.0.0/8001"),
         ("TCP/127.0.0.1/8001",), False),
    case("second tcp port conflict to 0.0.0.0 hostIP", ("TCP/127.0.0.1/8001",),
         ("TCP/0.0.0.0/8001",), False),
    case("second different protocol", ("UDP/127.0.0.1/8001",), ("TCP/0.0.0.0/8001",), True),
    case("UDP hostPort conflict due to 0.0.0.0 hostIP", ("UDP/127.0.0.1/8001",),
         ("TCP/0.0.0.0/8001", "UDP/0.0.0.0/8001"), False),
    case("non-sidecar initContainer using hostPort", (), ("TCP/0.0.0.0/8001",), True,
         init=_init(False)),
    case("TCP hostPort conflict from sidecar initContainer", (), ("TCP/0.0.0.0/8001",), False,
         init=_init(True)),
]
