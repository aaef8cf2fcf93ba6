"""Service ClusterIP and NodePort allocation in the registry's write path.

Expectations from pkg/registry/core/service/storage/rest_test.go (TestServiceRegistry*),
pkg/registry/core/service/ipallocator and portallocator, and ValidateService in
pkg/apis/core/validation/validation.go.
"""

import ipaddress

import pytest

from kvert.api.errors import Invalid
from kvert.registry import Registry

from .conftest import Env


def service(name="foo", **spec):
    return {"apiVersion": "v1", "kind": "Service", "metadata": {"name": name},
            "spec": {"selector": {"bar": "baz"}, "ports": [{"port": 6502}], **spec}}


def create(env, obj, namespace="default"):
    return env.run(env.client.create("services", obj, namespace=namespace))


def messages(info):
    return [f"{c.field}: {c.message}" for c in info.value.causes]


def test_create_allocates_a_cluster_ip_and_the_single_stack_fields(env):
    # TestServiceRegistryCreate: a ClusterIP from the range, ipFamilies/ipFamilyPolicy set
    created = create(env, service())
    spec = created["spec"]
    assert ipaddress.ip_address(spec["clusterIP"]) in ipaddress.ip_network("10.96.0.0/12")
    assert spec["clusterIPs"] == [spec["clusterIP"]]
    assert spec["ipFamilies"] == ["IPv4"] and spec["ipFamilyPolicy"] == "SingleStack"
    assert spec["internalTrafficPolicy"] == "Cluster" and spec["sessionAffinity"] == "None"
    assert spec["ports"] == [{"port": 6502, "protocol": "TCP", "targetPort": 6502}]
    assert created["status"] == {"loadBalancer": {}}


def test_requested_ip_is_honoured_when_free(env):
    # TestServiceRegistryIPAllocation: a specific free IP is the one given
    assert create(env, service(clusterIP="10.96.0.93"))["spec"]["clusterIPs"] == ["10.96.0.93"]


def test_requested_ip_outside_the_range_is_refused():
    env = Env()
    with pytest.raises(Invalid) as info:
        create(env, service(clusterIPs=["10.0.0.1"]))
    # the message kubectl users see (e2e's parseServiceCIDRFromError parses it)
    assert messages(info) == ['spec.clusterIPs: Invalid value: ["10.0.0.1"]: failed to allocate '
                              'IP 10.0.0.1: provided IP is not in the valid range. The range of '
                              'valid IPs is 10.96.0.0/12']
    assert env.store.list("services").items == []


def test_requested_ip_in_use_is_refused(env):
    create(env, service("a", clusterIP="10.96.0.10"))
    with pytest.raises(Invalid) as info:
        create(env, service("b", clusterIP="10.96.0.10"), namespace="other")
    assert messages(info) == ['spec.clusterIPs: Invalid value: ["10.96.0.10"]: failed to allocate '
                              'IP 10.96.0.10: provided IP is already allocated']


def test_delete_releases_the_ip(env):
    # TestServiceRegistryIPReallocation: a deleted service's IP can be asked for again
    ip = create(env, service())["spec"]["clusterIP"]
    env.run(env.client.delete("services", "foo", namespace="default"))
    assert create(env, service("bar", clusterIP=ip))["spec"]["clusterIP"] == ip


def test_allocations_survive_a_restart(env):
    # kvert reads what is in use from the stored Services: a new registry on the same store
    ip = create(env, service(clusterIP="10.96.0.20"))["spec"]["clusterIP"]
    again = Registry(env.store, env.clock, env.admission, seed=7)
    with pytest.raises(Invalid):
        env.run(again.create("services", service("x", clusterIP=ip), namespace="default"))


def test_headless_and_external_name_get_no_ip(env):
    # TestServiceRegistryExternalService / headless: no allocation
    headless = create(env, service("h", clusterIP="None"))["spec"]
    assert headless["clusterIP"] == "None" and headless["clusterIPs"] == ["None"]
    assert headless["ipFamilies"] == ["IPv4"]
    external = create(env, {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "e"},
                            "spec": {"type": "ExternalName", "externalName": "example.com"}})
    assert "clusterIP" not in external["spec"] and "ipFamilies" not in external["spec"]


def test_node_ports_are_allocated_or_checked(env):
    created = create(env, service(type="NodePort", ports=[{"port": 80, "name": "a"},
                                                         {"port": 81, "name": "b"}]))
    ports = created["spec"]["ports"]
    assert all(30000 <= p["nodePort"] <= 32767 for p in ports)
    assert ports[0]["nodePort"] != ports[1]["nodePort"]


def test_node_port_requests_are_checked(env):
    # portallocator's ErrNotInRange / ErrAllocated messages
    with pytest.raises(Invalid) as info:
        create(env, service("a", type="NodePort", ports=[{"port": 80, "nodePort": 8888}]))
    assert messages(info) == ["spec.ports[0].nodePort: Invalid value: 8888: provided port is not in "
                              "the valid range. The range of valid ports is 30000-32767"]
    create(env, service("b", type="NodePort", ports=[{"port": 80, "nodePort": 30080}]))
    with pytest.raises(Invalid) as info:
        create(env, service("c", type="NodePort", ports=[{"port": 80, "nodePort": 30080}]))
    assert messages(info) == ["spec.ports[0].nodePort: Invalid value: 30080: provided port is "
                              "already allocated"]


def test_update_keeps_allocated_values_and_refuses_a_new_cluster_ip(env):
    # patchAllocatedValues: a PUT without clusterIP/nodePort keeps the stored ones
    created = create(env, service(type="NodePort"))
    put = service(type="NodePort")
    put["metadata"] = dict(created["metadata"])
    updated = env.run(env.client.update("services", put))
    assert updated["spec"]["clusterIPs"] == created["spec"]["clusterIPs"]
    assert updated["spec"]["ports"][0]["nodePort"] == created["spec"]["ports"][0]["nodePort"]
    put = dict(updated, spec=dict(updated["spec"], clusterIP="10.96.0.99",
                                  clusterIPs=["10.96.0.99"]))
    with pytest.raises(Invalid) as info:
        env.run(env.client.update("services", put))
    # TestValidateServiceUpdate "change ClusterIP"
    assert messages(info) == ['spec.clusterIPs[0]: Invalid value: ["10.96.0.99"]: may not change '
                              'once set']


def test_type_change_to_node_port_allocates(env):
    created = create(env, service())
    changed = dict(created, spec=dict(created["spec"], type="NodePort"))
    updated = env.run(env.client.update("services", changed))
    assert 30000 <= updated["spec"]["ports"][0]["nodePort"] <= 32767
    assert updated["spec"]["clusterIP"] == created["spec"]["clusterIP"]


@pytest.mark.parametrize("spec, expected", [
    # TestValidateServiceCreate cases (pkg/apis/core/validation/validation_test.go)
    ({"ports": []}, ["spec.ports: Required value"]),
    ({"type": "Foo"}, ['spec.type: Unsupported value: "Foo": supported values: "ClusterIP", '
                       '"ExternalName", "LoadBalancer", "NodePort"']),
    ({"ports": [{"port": 80}, {"port": 81}]}, ["spec.ports[1].name: Required value",
                                               "spec.ports[0].name: Required value"]),
    # targetPort defaults to the port (SetDefaults_Service), so both are reported
    ({"ports": [{"port": 0}]}, ["spec.ports[0].port: Invalid value: 0: must be between 1 and "
                                "65535, inclusive",
                                "spec.ports[0].targetPort: Invalid value: 0: must be between 1 and "
                                "65535, inclusive"]),
    ({"ports": [{"port": 80, "protocol": "HTTP"}]},
     ['spec.ports[0].protocol: Unsupported value: "HTTP": supported values: "SCTP", "TCP", "UDP"']),
    ({"ports": [{"port": 80, "targetPort": "-http"}]},
     ['spec.ports[0].targetPort: Invalid value: "-http": must not begin or end with a hyphen']),
    ({"ports": [{"port": 80, "nodePort": 30001}]},
     ["spec.ports[0].nodePort: Forbidden: may not be used when `type` is 'ClusterIP'"]),
    ({"clusterIP": "invalid"},
     ['spec.clusterIPs[0]: Invalid value: "invalid": must be a valid IP address, (e.g. 10.9.8.7 '
      'or 2001:db8::ffff)']),
    ({"sessionAffinity": "Sticky"},
     ['spec.sessionAffinity: Unsupported value: "Sticky": supported values: "ClientIP", "None"']),
])
def test_validation(env, spec, expected):
    with pytest.raises(Invalid) as info:
        create(env, service(**spec))
    assert sorted(messages(info)) == sorted(expected)


def test_type_change_drops_what_is_no_longer_needed(env):
    # dropTypeDependentFields (TestDropTypeDependentFields in pkg/registry/core/service/
    # strategy_test.go): NodePort -> ClusterIP drops the nodePorts the client left as they were
    created = create(env, service(type="NodePort"))
    assert created["spec"]["externalTrafficPolicy"] == "Cluster"    # SetDefaults_Service
    changed = dict(created, spec=dict(created["spec"], type="ClusterIP"))
    updated = env.run(env.client.update("services", changed))
    assert "nodePort" not in updated["spec"]["ports"][0]
    assert "externalTrafficPolicy" not in updated["spec"]
    # ClusterIP -> ExternalName drops the ClusterIPs and IP families
    changed = dict(updated, spec=dict(updated["spec"], type="ExternalName",
                                      externalName="example.com"))
    external = env.run(env.client.update("services", changed))
    assert not {"clusterIP", "clusterIPs", "ipFamilies", "ipFamilyPolicy",
                "internalTrafficPolicy"} & set(external["spec"])


@pytest.mark.parametrize("spec", [
    "x", {"clusterIP": 5}, {"clusterIPs": "10.96.0.1"}, {"clusterIPs": [1]}, {"ports": 3},
    {"type": ["NodePort"]}, {"ports": [{"port": 80, "nodePort": "x"}], "type": "NodePort"},
])
def test_malformed_specs_are_invalid_not_errors(env, spec):
    obj = service()
    obj["spec"] = spec if not isinstance(spec, dict) else {**obj["spec"], **spec}
    with pytest.raises(Invalid):
        create(env, obj)


def test_load_balancer_without_node_ports(env):
    # TestCreateInitNodePorts "LB, allocateLoadBalancerNodePorts false": none allocated
    lb = create(env, service("lb", type="LoadBalancer"))["spec"]
    assert lb["allocateLoadBalancerNodePorts"] is True and lb["ports"][0]["nodePort"]
    bare = create(env, service("bare", type="LoadBalancer", allocateLoadBalancerNodePorts=False))
    assert "nodePort" not in bare["spec"]["ports"][0]
    assert bare["status"] == {"loadBalancer": {}}
