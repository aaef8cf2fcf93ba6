"""The EndpointSlice and Endpoints controllers, in virtual time
(pkg/controller/endpointslice/endpointslice_controller_test.go TestSyncService*,
staging/src/k8s.io/endpointslice/reconciler_test.go, pkg/controller/endpoint/
endpoints_controller_test.go TestSyncEndpoints*)."""

from kvert.controllers.endpointslice import find_port
from kvert.controllers.manager import ALL_CONTROLLERS

from .helpers import NS, eventually, run

SLICES = "discovery.k8s.io/endpointslices"


def _service(name="foobar", selector=None, ports=None, **spec):
    return {"apiVersion": "v1", "kind": "Service", "metadata": {"name": name, "labels": {"foo": "bar"}},
            "spec": {"selector": {"foo": "bar"} if selector is None else selector,
                     "ports": ports or [{"name": "tcp-example", "port": 80,
                                         "targetPort": "http-port"}], **spec}}


def _pod(name, ip, ready=True, node="node-1", labels=None, container_ports=None):
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "labels": labels or {"foo": "bar"}},
            "spec": {"nodeName": node, "containers": [{
                "name": "c", "image": "nginx",
                "ports": container_ports or [{"name": "http-port", "containerPort": 8080}]}]},
            "_status": {"podIP": ip, "podIPs": [{"ip": ip}], "phase": "Running",
                        "conditions": [{"type": "Ready", "status": "True" if ready else "False"}]}}


async def _add_pod(env, pod):
    status = pod.pop("_status")
    created = await env.client.create("pods", pod, namespace=NS)
    created["status"] = {**created["status"], **status}
    return await env.client.update_status("pods", created)


async def _slices(env, service="foobar"):
    return (await env.client.list(SLICES, namespace=NS,
                                  label_selector=f"kubernetes.io/service-name={service}"))["items"]


def test_both_are_default_controllers():
    assert "endpoints" in ALL_CONTROLLERS and "endpointslice" in ALL_CONTROLLERS


def test_find_port_resolves_named_ports():
    # TestFindPort (pkg/api/v1/pod/util_test.go)
    pod = {"spec": {"containers": [{"ports": [{"name": "p", "containerPort": 93,
                                                "protocol": "TCP"}]}]}}
    assert find_port(pod, {"targetPort": "p", "protocol": "TCP"}) == 93
    assert find_port(pod, {"targetPort": "p", "protocol": "UDP"}) is None
    assert find_port(pod, {"targetPort": 8080}) == 8080


# TestSyncServicePodSelection / TestSyncServiceFull: one slice with the selected pods,
# their conditions, targetRef, nodeName, and the port resolved from the named targetPort
def test_slice_lists_selected_pods_with_conditions_and_resolved_ports():
    async def scenario(env):
        env.start_manager(controllers=["endpointslice"])
        svc = await env.client.create("services", _service(), namespace=NS)
        await _add_pod(env, _pod("pod0", "1.2.3.4"))
        await _add_pod(env, _pod("pod1", "1.2.3.5", ready=False))
        await _add_pod(env, _pod("other", "1.2.3.6", labels={"foo": "baz"}))

        async def two():
            slices = await _slices(env)
            return slices if slices and len(slices[0].get("endpoints") or []) == 2 else None
        slices = await eventually(env, two, what="a slice with two endpoints")
        assert len(slices) == 1
        es = slices[0]
        assert es["metadata"]["name"].startswith("foobar-")
        assert es["metadata"]["labels"] == {
            "foo": "bar", "kubernetes.io/service-name": "foobar",
            "endpointslice.kubernetes.io/managed-by": "endpointslice-controller.k8s.io"}
        assert es["metadata"]["ownerReferences"] == [{
            "apiVersion": "v1", "kind": "Service", "name": "foobar",
            "uid": svc["metadata"]["uid"], "controller": True, "blockOwnerDeletion": True}]
        assert es["addressType"] == "IPv4"
        assert es["ports"] == [{"name": "tcp-example", "protocol": "TCP", "port": 8080}]
        by_ip = {e["addresses"][0]: e for e in es["endpoints"]}
        assert by_ip["1.2.3.4"]["conditions"] == {"ready": True, "serving": True,
                                                  "terminating": False}
        assert by_ip["1.2.3.5"]["conditions"] == {"ready": False, "serving": False,
                                                  "terminating": False}
        assert by_ip["1.2.3.4"]["nodeName"] == "node-1"
        assert by_ip["1.2.3.4"]["targetRef"]["kind"] == "Pod"
        assert by_ip["1.2.3.4"]["targetRef"]["name"] == "pod0"
    run(scenario)


# TestSyncServiceNoSelector: a Service without a selector gets nothing;
# TestSyncServiceMissing / "placeholder": a selector matching nothing gets an empty slice
def test_no_selector_gets_nothing_and_no_pods_gets_a_placeholder():
    async def scenario(env):
        env.start_manager(controllers=["endpointslice"])
        none = _service("manual")
        del none["spec"]["selector"]
        await env.client.create("services", none, namespace=NS)
        await env.client.create("services", _service("empty", selector={"app": "x"}), namespace=NS)
        slices = await eventually(env, lambda: _slices(env, "empty"), what="a placeholder")
        assert slices[0].get("endpoints") is None and slices[0]["ports"] == []
        await env.clock.sleep(2)
        assert await _slices(env, "manual") == []
    run(scenario)


# TestSyncEndpointsItemsPreserveNoSelector / TestSyncEndpointsProtocolTCP: ready and not-ready
# addresses, the port resolved, the Service's labels plus skip-mirror; deleted with the Service
def test_endpoints_subsets_and_deletion():
    async def scenario(env):
        env.start_manager(controllers=["endpoints"])
        await env.client.create("services", _service(), namespace=NS)
        await _add_pod(env, _pod("pod0", "1.2.3.4"))
        await _add_pod(env, _pod("pod1", "1.2.3.5", ready=False))

        async def filled():
            try:
                ep = await env.client.get("endpoints", "foobar", NS)
            except Exception:
                return None
            subsets = ep.get("subsets") or []
            return ep if subsets and subsets[0].get("notReadyAddresses") else None
        ep = await eventually(env, filled, what="endpoints with both pods")
        assert ep["metadata"]["labels"] == {"foo": "bar",
                                            "endpointslice.kubernetes.io/skip-mirror": "true"}
        [subset] = ep["subsets"]
        assert [a["ip"] for a in subset["addresses"]] == ["1.2.3.4"]
        assert [a["ip"] for a in subset["notReadyAddresses"]] == ["1.2.3.5"]
        assert subset["addresses"][0]["nodeName"] == "node-1"
        assert subset["ports"] == [{"name": "tcp-example", "port": 8080, "protocol": "TCP"}]
        await env.client.delete("services", "foobar", namespace=NS)

        async def gone():
            return not (await env.client.list("endpoints", namespace=NS))["items"]
        await eventually(env, gone, what="the endpoints deleted")
    run(scenario)


# TestPodToEndpoint "Ready terminating pod": serving, terminating, not ready; the Endpoints
# controller drops it (ShouldPodBeInEndpoints without terminating pods)
def test_terminating_pod_is_serving_but_not_ready():
    async def scenario(env):
        env.start_manager(controllers=["endpointslice", "endpoints"])
        await env.client.create("services", _service(), namespace=NS)
        pod = await _add_pod(env, _pod("pod0", "1.2.3.4"))
        await eventually(env, lambda: _ready_count(env, 1), what="one ready endpoint")
        # a pod on a node is deleted gracefully: it stays, marked, until its node agent is done
        await env.client.delete("pods", pod["metadata"]["name"], namespace=NS,
                                grace_period_seconds=30)

        async def terminating():
            slices = await _slices(env)
            endpoints = [e for s in slices for e in s.get("endpoints") or []]
            return endpoints if endpoints and endpoints[0]["conditions"]["terminating"] else None
        [endpoint] = await eventually(env, terminating, what="a terminating endpoint")
        assert endpoint["conditions"] == {"ready": False, "serving": True, "terminating": True}

        async def dropped():
            ep = await env.client.get("endpoints", "foobar", NS)
            return ep if not ep.get("subsets") else None
        await eventually(env, dropped, what="the endpoints without the terminating pod")
    run(scenario)


async def _ready_count(env, count):
    slices = await _slices(env)
    return sum(1 for s in slices for e in s.get("endpoints") or []
               if e["conditions"]["ready"]) == count
