"""The APIService controller in virtual time, with upstream's cases:
kube-aggregator's pkg/controllers/autoregister/autoregister_controller_test.go (TestSync:
checkAPIService's create / update once / delete table), kube-apiserver's apiVersionPriorities
(cmd/kube-apiserver/app/aggregator.go) and crdregistration_controller.go (1000/100),
pkg/controllers/status/local/local_available_controller.go and
pkg/controllers/status/remote/remote_available_controller_test.go (TestSync: "local",
"no service", "service on bad port", "no endpoints", "missing endpoints", "wrong endpoint port
name", "endpoints not ready"; TestUpdateAPIServiceStatus: no write when nothing changed)."""

from __future__ import annotations

from kvert.api.errors import NotFound
from kvert.controllers.apiservices import AUTOMANAGED_LABEL, available_condition

from .helpers import eventually, run

APISERVICES = "apiregistration.k8s.io/apiservices"
CRDS = "apiextensions.k8s.io/customresourcedefinitions"
SLICES = "discovery.k8s.io/endpointslices"
METRICS = [("metrics.k8s.io", "v1beta1")]


def start(env):
    return env.start_manager(controllers=["apiservices"],
                             settings={"apiservices": {"local_group_versions": METRICS}})


async def get(env, name: str) -> dict | None:
    try:
        return await env.client.get(APISERVICES, name)
    except NotFound:
        return None


async def available(env, name: str) -> dict | None:
    obj = await get(env, name)
    return available_condition(obj) if obj else None


def crd(versions: dict[str, bool]) -> dict:
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": "crontabs.stable.example.com"},
            "spec": {"group": "stable.example.com", "scope": "Namespaced",
                     "names": {"plural": "crontabs", "singular": "crontab", "kind": "CronTab",
                               "listKind": "CronTabList"},
                     "versions": [{"name": name, "served": served, "storage": i == 0,
                                   "schema": {"openAPIV3Schema": {"type": "object"}}}
                                  for i, (name, served) in enumerate(versions.items())]}}


def aggregated(name: str, group: str, version: str, service: dict) -> dict:
    return {"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService",
            "metadata": {"name": name},
            "spec": {"group": group, "version": version, "groupPriorityMinimum": 100,
                     "versionPriority": 100, "insecureSkipTLSVerify": True, "service": service}}


def test_every_served_group_version_is_registered_with_upstreams_priorities():
    async def scenario(env):
        start(env)
        apps = await eventually(env, lambda: get(env, "v1.apps"), what="v1.apps")
        assert apps["spec"] == {"group": "apps", "version": "v1", "groupPriorityMinimum": 17800,
                                "versionPriority": 15}
        assert apps["metadata"]["labels"] == {AUTOMANAGED_LABEL: "onstart"}
        expected = {"v1.": (18000, 1), "v2.autoscaling": (17500, 30), "v1.batch": (17400, 15),
                    "v1.events.k8s.io": (17750, 15), "v1.authorization.k8s.io": (17600, 15),
                    "v1.apiextensions.k8s.io": (16700, 15), "v1.flowcontrol.apiserver.k8s.io": (16100, 21),
                    "v1.coordination.k8s.io": (16500, 15), "v1beta1.metrics.k8s.io": (100, 100),
                    "v1.apiregistration.k8s.io": None,    # the aggregator's own group: no object
                    "v1.autoscaling.k8s.io": None}        # CRD-served upstream, no CRD here
        await eventually(env, lambda: get(env, "v1beta1.metrics.k8s.io"))
        for name, priority in expected.items():
            obj = await get(env, name)
            if priority is None:
                assert obj is None, name
            else:
                spec = obj["spec"]
                assert (spec["groupPriorityMinimum"], spec["versionPriority"]) == priority, name
        core = await get(env, "v1.")
        # Go's omitempty: the empty group is not written
        assert core["spec"] == {"version": "v1", "groupPriorityMinimum": 18000, "versionPriority": 1}
        condition = await eventually(env, lambda: available(env, "v1.apps"))
        assert {k: condition[k] for k in ("type", "status", "reason", "message")} == {
            "type": "Available", "status": "True", "reason": "Local",
            "message": "Local APIServices are always available"}
        assert condition["lastTransitionTime"]
    run(scenario)


def test_sync_on_start_objects_are_reconciled_once_per_start():
    async def scenario(env):
        manager = start(env)
        await eventually(env, lambda: available(env, "v1.apps"))
        # after the first sync an administrator's changes stand (checkAPIService 5B/6B: "once")
        apps = await get(env, "v1.apps")
        apps["spec"]["groupPriorityMinimum"] = 5
        await env.client.update(APISERVICES, apps)
        await env.client.delete(APISERVICES, "v1.batch")
        await env.clock.sleep(10)
        assert (await get(env, "v1.apps"))["spec"]["groupPriorityMinimum"] == 5
        assert await get(env, "v1.batch") is None
        # a new server (a restart) creates what is missing and updates what was there at start
        await env.stop_manager(manager)
        start(env)
        await eventually(env, lambda: get(env, "v1.batch"), what="v1.batch again")
        await eventually(env, lambda: _priority_is(env, "v1.apps", 17800), what="v1.apps reset")
    run(scenario)


async def _priority_is(env, name: str, value: int) -> bool:
    obj = await get(env, name)
    return obj is not None and obj["spec"]["groupPriorityMinimum"] == value


def test_crd_versions_come_and_go_with_their_crd():
    async def scenario(env):
        start(env)
        await env.client.create(CRDS, crd({"v1": True, "v2": False}))
        v1 = await eventually(env, lambda: get(env, "v1.stable.example.com"))
        assert v1["spec"] == {"group": "stable.example.com", "version": "v1",
                              "groupPriorityMinimum": 1000, "versionPriority": 100}
        assert v1["metadata"]["labels"] == {AUTOMANAGED_LABEL: "true"}
        await eventually(env, lambda: available(env, "v1.stable.example.com"))
        assert await get(env, "v2.stable.example.com") is None       # not served
        # serving v2 and no longer v1
        current = await env.client.get(CRDS, "crontabs.stable.example.com")
        current["spec"]["versions"][0]["served"] = False
        current["spec"]["versions"][1]["served"] = True
        await env.client.update(CRDS, current)
        await eventually(env, lambda: get(env, "v2.stable.example.com"))
        await eventually(env, lambda: _gone(env, "v1.stable.example.com"), what="v1 removed")
        # the CRD deleted: its APIServices too
        await env.client.delete(CRDS, "crontabs.stable.example.com")
        await eventually(env, lambda: _gone(env, "v2.stable.example.com"), what="v2 removed")
    run(scenario)


async def _gone(env, name: str) -> bool:
    return await get(env, name) is None


def test_api_services_not_auto_managed_are_left_alone():
    async def scenario(env):
        start(env)
        await env.client.create(APISERVICES, aggregated(
            "v1.stable.example.com", "stable.example.com", "v1", {"namespace": "ns", "name": "api"}))
        await eventually(env, lambda: available(env, "v1.stable.example.com"))
        obj = await get(env, "v1.stable.example.com")
        assert "labels" not in obj["metadata"] and obj["spec"]["groupPriorityMinimum"] == 100
    run(scenario)


async def _condition_reason(env, name: str, reason: str) -> dict | None:
    condition = await available(env, name)
    return condition if condition is not None and condition.get("reason") == reason else None


def test_availability_of_an_api_service_behind_a_service():
    async def scenario(env):
        start(env)
        name = "v1beta1.custom.metrics.k8s.io"
        await env.client.create(APISERVICES, aggregated(
            name, "custom.metrics.k8s.io", "v1beta1", {"namespace": "default", "name": "bar"}))
        first = await eventually(env, lambda: _condition_reason(env, name, "ServiceNotFound"))
        assert first["status"] == "False"
        assert first["message"] == 'service/bar in "default" is not present'
        obj = await get(env, name)
        assert obj["spec"]["service"]["port"] == 443            # defaulted
        await env.clock.sleep(10)

        service = {"apiVersion": "v1", "kind": "Service",
                   "metadata": {"name": "bar", "namespace": "default"},
                   "spec": {"ports": [{"name": "https", "port": 1234, "targetPort": 6443}]}}
        await env.client.create("services", service, namespace="default")
        bad_port = await eventually(env, lambda: _condition_reason(env, name, "ServicePortError"))
        assert bad_port["message"] == 'service/bar in "default" is not listening on port 443'
        # the status stayed False: the transition time too
        assert bad_port["lastTransitionTime"] == first["lastTransitionTime"]

        service = await env.client.get("services", "bar", "default")
        service["spec"]["ports"][0]["port"] = 443
        await env.client.update("services", service)
        none = await eventually(env, lambda: _condition_reason(env, name, "EndpointsNotFound"))
        assert none["message"] == 'cannot find endpointslices for service/bar in "default"'

        endpoints = {"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
                     "metadata": {"name": "bar-1", "namespace": "default",
                                  "labels": {"kubernetes.io/service-name": "bar"}},
                     "addressType": "IPv4",
                     "endpoints": [{"addresses": ["10.0.0.1"], "conditions": {"ready": False}}],
                     "ports": [{"name": "https", "port": 6443, "protocol": "TCP"}]}
        await env.client.create(SLICES, endpoints, namespace="default")
        missing = await eventually(env, lambda: _condition_reason(env, name, "MissingEndpoints"))
        assert missing["message"] == ('endpointslices for service/bar in "default" have no '
                                      'addresses with port name "https"')

        ready = await env.client.get(SLICES, "bar-1", "default")
        ready["endpoints"][0]["conditions"]["ready"] = True
        await env.client.update(SLICES, ready)
        failed = await eventually(env, lambda: _condition_reason(env, name, "FailedDiscoveryCheck"))
        assert failed["status"] == "False"
        assert "kvert does not proxy aggregated APIs" in failed["message"]
        assert "/apis/custom.metrics.k8s.io/v1beta1" in failed["message"]
        assert failed["lastTransitionTime"] == first["lastTransitionTime"]
    run(scenario)


def test_wrong_endpoint_port_name_is_missing_endpoints():
    async def scenario(env):
        start(env)
        name = "v1beta1.custom.metrics.k8s.io"
        await env.client.create("services", {
            "apiVersion": "v1", "kind": "Service", "metadata": {"name": "bar", "namespace": "default"},
            "spec": {"ports": [{"name": "https", "port": 443, "targetPort": 6443}]}},
            namespace="default")
        await env.client.create(SLICES, {
            "apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
            "metadata": {"name": "bar-1", "namespace": "default",
                         "labels": {"kubernetes.io/service-name": "bar"}},
            "addressType": "IPv4", "endpoints": [{"addresses": ["10.0.0.1"]}],
            "ports": [{"name": "other", "port": 6443, "protocol": "TCP"}]}, namespace="default")
        await env.client.create(APISERVICES, aggregated(
            name, "custom.metrics.k8s.io", "v1beta1", {"namespace": "default", "name": "bar"}))
        missing = await eventually(env, lambda: _condition_reason(env, name, "MissingEndpoints"))
        assert missing["message"].endswith('have no addresses with port name "https"')
    run(scenario)


def test_an_unchanged_status_is_not_written_again():
    async def scenario(env):
        start(env)
        await eventually(env, lambda: available(env, "v1.apps"))
        apps = await get(env, "v1.apps")
        apps["metadata"]["labels"]["touched"] = "yes"       # an event, nothing to change
        touched = await env.client.update(APISERVICES, apps)
        await env.clock.sleep(10)
        after = await get(env, "v1.apps")
        assert after["metadata"]["resourceVersion"] == touched["metadata"]["resourceVersion"]
        assert after["status"] == apps["status"]
    run(scenario)
