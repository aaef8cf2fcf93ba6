"""Node IPAM's range allocator (pkg/controller/nodeipam/ipam/range_allocator_test.go:
TestAllocateOrOccupyCIDRSuccess: cluster CIDR 127.123.234.0/24 with mask size 30 gives
the first node 127.123.234.0/30; "Correctly filter out PodCIDR" with 127.123.234.0/30 and
.4/30 taken gives the next node 127.123.234.8/30; TestAllocateOrOccupyCIDRFailure: a full
range gives nothing), run in virtual time."""

import pytest

from kvert.controllers.nodeipam import NodeIpamController, first_free, node_cidrs

from .helpers import eventually, run


def test_the_lowest_free_cidr_of_the_range():
    cidrs = node_cidrs("127.123.234.0/24", 30)
    assert first_free(cidrs, set()) == "127.123.234.0/30"
    assert first_free(cidrs, {"127.123.234.0/30", "127.123.234.4/30"}) == "127.123.234.8/30"
    assert first_free(cidrs, {str(c) for c in cidrs}) is None


def test_a_mask_that_does_not_fit_is_refused():
    with pytest.raises(ValueError):
        node_cidrs("10.244.0.0/16", 16)
    with pytest.raises(ValueError):
        node_cidrs("10.0.0.0/8", 28)      # more node CIDRs than the allocator keeps


def _node(name, cidr=None):
    spec = {"podCIDR": cidr, "podCIDRs": [cidr]} if cidr else {}
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name}, "spec": spec}


def test_nodes_get_cidrs_and_a_deleted_nodes_cidr_is_reused():
    async def scenario(env):
        await env.client.create("nodes", _node("held", "10.244.0.0/24"))
        manager = env.start_manager(controllers=["nodeipam"])
        assert isinstance(manager.controllers["nodeipam"], NodeIpamController)
        for name in ("a", "b"):
            await env.client.create("nodes", _node(name))

        async def cidr(name):
            return ((await env.client.get("nodes", name)).get("spec") or {}).get("podCIDRs")
        assert await eventually(env, lambda: cidr("a"), what="a's CIDR") == ["10.244.1.0/24"]
        assert await eventually(env, lambda: cidr("b"), what="b's CIDR") == ["10.244.2.0/24"]
        assert (await env.client.get("nodes", "b"))["spec"]["podCIDR"] == "10.244.2.0/24"
        await env.client.delete("nodes", "a")
        await env.clock.sleep(1)
        await env.client.create("nodes", _node("c"))
        assert await eventually(env, lambda: cidr("c"), what="c's CIDR") == ["10.244.1.0/24"]
    run(scenario)


def test_cluster_cidr_for_holds_a_node_cidr_per_node():
    """kubeadm's default 10.244.0.0/16 holds 256 /24 node CIDRs; a larger cluster gets the
    smallest aligned supernet of it that holds one per node, clear of 10.96.0.0/12."""
    import ipaddress
    from kvert.controllers.nodeipam import cluster_cidr_for, node_cidrs
    assert cluster_cidr_for(3) == "10.244.0.0/16"
    assert cluster_cidr_for(256) == "10.244.0.0/16"
    assert cluster_cidr_for(257) == "10.244.0.0/15"
    assert cluster_cidr_for(1000) == "10.244.0.0/14"
    services = ipaddress.ip_network("10.96.0.0/12")
    for nodes in (1025, 5000, 32768):
        cidr = cluster_cidr_for(nodes)
        assert len(node_cidrs(cidr, 24)) >= nodes > len(node_cidrs(cidr, 24)) // 2
        assert not ipaddress.ip_network(cidr).overlaps(services)
