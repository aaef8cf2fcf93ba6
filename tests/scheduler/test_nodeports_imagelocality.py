"""NodePorts and ImageLocality at the plugin level: what the upstream vectors
(``vectors/nodeports.py``, ``vectors/imagelocality.py``) cannot show -- the pods' used-ports
rules, the incremental indexes following the cache, CacheViews, queueing hints."""

import numpy as np
import pytest

from kvert.scheduler.cache import host_ports
from kvert.scheduler.framework import NODE, POD, ActionType, Code, CycleState
from kvert.scheduler.plugins.imagelocality import normalized_image_name
from kvert.scheduler.plugins.nodeports import ERR_REASON, conflicts
from kvert.scheduler.snapshot import NodeSet
from kvert.scheduler.view import CacheView

from .helpers import Bench, node, pod

PORTS = {"profiles": [{"plugins": {"multiPoint": {"disabled": [{"name": "*"}], "enabled": [
    {"name": "PrioritySort"}, {"name": "DefaultBinder"}, {"name": "NodePorts"}]}}}]}


def with_ports(name, *ports, node_name="", init=None):
    """``ports``: (hostPort, protocol, hostIP) triples, protocol and IP optional."""
    def port(p):
        host_port, proto, ip = (tuple(p) + (None, None))[:3]
        out = {"containerPort": host_port, "hostPort": host_port}
        if proto:
            out["protocol"] = proto
        if ip:
            out["hostIP"] = ip
        return out
    containers = [{"name": "c", "image": "pause", "ports": [port(p) for p in ports]}]
    extra = {"initContainers": init} if init else {}
    return pod(name, containers=containers, node_name=node_name, **extra)


# ---- which ports a pod holds ------------------------------------------------------------------


def test_host_ports_count_app_containers_and_sidecars_only():
    # schedutil.GetHostPorts: init containers only when restartPolicy is Always (sidecars)
    init = [{"name": "plain", "image": "x", "ports": [{"containerPort": 1, "hostPort": 81}]},
            {"name": "sidecar", "image": "x", "restartPolicy": "Always",
             "ports": [{"containerPort": 2, "hostPort": 82, "protocol": "UDP",
                        "hostIP": "10.0.0.1"}]}]
    p = with_ports("p", (80,), (8080, "TCP", "127.0.0.1"), init=init)
    p["spec"]["containers"][0]["ports"].append({"containerPort": 9090})   # no hostPort
    assert host_ports(p) == (("10.0.0.1", "UDP", 82), ("0.0.0.0", "TCP", 80),
                             ("127.0.0.1", "TCP", 8080))


@pytest.mark.parametrize("wanted,used,expected", [
    ([("0.0.0.0", "TCP", 80)], [("10.0.0.1", "TCP", 80)], True),    # wildcard vs any IP
    ([("10.0.0.1", "TCP", 80)], [("0.0.0.0", "TCP", 80)], True),    # any IP vs wildcard
    ([("10.0.0.1", "TCP", 80)], [("10.0.0.2", "TCP", 80)], False),
    ([("10.0.0.1", "UDP", 80)], [("10.0.0.1", "TCP", 80)], False),
    ([("::", "TCP", 80)], [("10.0.0.1", "TCP", 80)], False),        # only 0.0.0.0 is wildcard
])
def test_conflict_rules(wanted, used, expected):
    assert conflicts(wanted, used) is expected


# ---- the plugin over a cache ---------------------------------------------------------------------


def test_pre_filter_skips_pods_without_host_ports():
    b = Bench([node("a")], config=PORTS)
    pl = b.fw.plugin("NodePorts")
    _, st = pl.pre_filter(CycleState(), pod("p"), b.nodes())
    assert st.code == Code.SKIP
    _, st = pl.pre_filter(CycleState(), with_ports("p", (80,)), b.nodes())
    assert st is None


def test_index_follows_pods_and_nodes():
    b = Bench([node("a"), node("b"), node("c")],
              [with_ports("x", (80,), node_name="a"), with_ports("y", (80, "TCP", "10.0.0.1"),
                                                                 node_name="b")], config=PORTS)
    want = with_ports("p", (80, "TCP", "10.0.0.2"))
    names, diagnosis, _ = b.filter(want)
    assert names == ["b", "c"]
    assert diagnosis.reason_histogram() == {ERR_REASON: 1}
    assert b.filter(with_ports("p", (80,)))[0] == ["c"]
    # the port is given back when its pod goes, counted again when a pod takes it
    b.cache.remove_pod(with_ports("x", (80,), node_name="a") | {"metadata": {
        "uid": b.cache.node_entries("a")[0].uid}})
    assert b.filter(want)[0] == ["a", "b", "c"]
    b.cache.add_pod(with_ports("z", (80, "TCP", "10.0.0.2"), node_name="c"))
    assert b.filter(want)[0] == ["a", "b"]
    # a node deleted and added again starts with its pods' ports
    c = b.cache.node("c")
    b.cache.remove_node(c)
    b.cache.add_node(c)
    assert b.filter(want)[0] == ["a", "b"]


def test_same_port_twice_on_a_node_is_freed_only_when_both_pods_go():
    b = Bench([node("a")], [with_ports("x", (80,), node_name="a"),
                            with_ports("y", (80,), node_name="a")], config=PORTS)
    want = with_ports("p", (80,))
    b.cache.remove_pod(b.cache.node_entries("a")[0].pod)
    assert b.filter(want)[0] == []
    b.cache.remove_pod(b.cache.node_entries("a")[0].pod)
    assert b.filter(want)[0] == ["a"]


def test_filter_over_a_cache_view_sees_added_and_removed_pods():
    holder = with_ports("x", (80,), node_name="a")
    b = Bench([node("a"), node("b")], [holder], config=PORTS)
    pl = b.fw.plugin("NodePorts")
    want = with_ports("p", (80,))
    state = CycleState()
    pl.pre_filter(state, want, b.nodes())
    rows = np.array([b.cache.row_of["a"], b.cache.row_of["b"]])
    view = CacheView(b.cache)
    view.remove_pod(holder)                              # a preemption victim
    view.add_pod(with_ports("n", (80,)), "b")            # a nominated pod
    res = pl.filter(state, want, NodeSet(view, rows))
    assert res.passed.tolist() == [True, False]
    # the cache itself is untouched
    assert pl.filter(state, want, NodeSet(b.cache, rows)).passed.tolist() == [False, True]


def test_queueing_hints():
    # node_ports_test.go Test_isSchedulableAfterPodDeleted
    b = Bench([node("a")], config=PORTS)
    regs = b.fw.plugin("NodePorts").events_to_register()
    assert [(r.event.resource, r.event.action) for r in regs] == [
        (POD, ActionType.DELETE), (NODE, ActionType.ADD)]
    hint = regs[0].hint
    target = with_ports("p", (8080,))
    assert hint(target, pod("x"), None) is False                                  # skip-queue-on-unscheduled
    assert hint(target, pod("x", node_name="fake-node"), None) is False           # skip-queue-on-non-hostport
    assert hint(target, with_ports("x", (8081,), node_name="fake-node"), None) is False  # unrelated
    assert hint(target, with_ports("x", (8080,), node_name="fake-node"), None) is True   # released
    nominated = with_ports("x", (8080,)) | {"status": {"nominatedNodeName": "a"}}
    assert hint(target, nominated, None) is True
    assert regs[1].hint is None   # a new node: always retried


# ---- ImageLocality ---------------------------------------------------------------------------------

IMAGES = {"profiles": [{"plugins": {"multiPoint": {"disabled": [{"name": "*"}], "enabled": [
    {"name": "PrioritySort"}, {"name": "DefaultBinder"}, {"name": "ImageLocality"}]}}}]}
MB = 1024 * 1024


def image_node(name, *images):
    n = node(name)
    n["status"]["images"] = [{"names": names, "sizeBytes": mb * MB} for names, mb in images]
    return n


@pytest.mark.parametrize("image,expected", [
    # image_locality_test.go TestNormalizedImageName
    ("root", "root:latest"), ("gcr.io:5000/root", "gcr.io:5000/root:latest"),
    ("root:tag", "root:tag"), ("root@sha256:abc", "root@sha256:abc"),
])
def test_normalized_image_name(image, expected):
    assert normalized_image_name(image) == expected


def image_pod(*images):
    return pod("p", containers=[{"name": f"c{i}", "image": im} for i, im in enumerate(images)])


def test_image_scores_follow_node_image_changes():
    b = Bench([image_node("a", (["img:latest"], 600)), image_node("b")], config=IMAGES)
    p = image_pod("img")
    # 600M on 1 of 2 nodes: 100 * (300M - 23M) // (1000M - 23M) = 28
    assert b.score(p, "ImageLocality") == {"a": 28, "b": 0}
    # node b pulls it: spread 2/2
    b.cache.update_node(b.cache.node("b"), image_node("b", (["img:latest"], 600)))
    assert b.score(p, "ImageLocality") == {"a": 59, "b": 59}
    # node a loses it, a third node joins without it
    b.cache.update_node(b.cache.node("a"), image_node("a"))
    b.cache.add_node(image_node("c"))
    assert b.score(p, "ImageLocality") == {"a": 0, "b": 18, "c": 0}
    b.cache.remove_node(b.cache.node("b"))
    assert b.score(p, "ImageLocality") == {"a": 0, "c": 0}


def test_image_scores_count_every_container_and_all_nodes():
    # two containers of the same image count twice (750M each, 1500M in all; counted once it
    # would be 100 * (750M - 23M) // (2000M - 23M) = 36); the max threshold is 2 x 1000M:
    # 100 * (1500M - 23M) // (2000M - 23M) = 74
    b = Bench([image_node("a", (["img:v1"], 1500)), image_node("b")], config=IMAGES)
    assert b.score(image_pod("img:v1", "img:v1"), "ImageLocality") == {"a": 74, "b": 0}
    # the feasible nodes do not matter: the spread is over every node of the cluster
    pl = b.fw.plugin("ImageLocality")
    # (1500M * 1/2 = 750M of 1000M: 100 * (750M - 23M) // (1000M - 23M) = 74)
    one = NodeSet(b.cache, np.array([b.cache.row_of["a"]]))
    assert pl.score(CycleState(), image_pod("img:v1"), one).tolist() == [74]
