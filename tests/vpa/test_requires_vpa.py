"""The "requires VPA" admission hold (seed 002, open questions: a pod annotated to require
a VPA is not admitted while its VPA is unavailable, so that submitting a VPA and its
workload together is not a race); kvert's ``"recommendation"`` value also waits for the
VPA's first recommendation."""

from __future__ import annotations

import asyncio
import base64
import json

import pytest

from kvert.api.errors import Forbidden
from kvert.registry.admission import CREATE, Attributes
from kvert.vpa.admission import (REQUIRES_VPA_ANNOTATION, VpaAdmissionPlugin, VpaRequired,
                                 missing_vpa_message, required_vpa)
from kvert.vpa.webhook import review_response
from tests.controllers.helpers import DEPLOY, NS, eventually, run

VPAS = "autoscaling.k8s.io/verticalpodautoscalers"
REQUIRED = {REQUIRES_VPA_ANNOTATION: "true"}
RECOMMENDED = {REQUIRES_VPA_ANNOTATION: "recommendation"}


def pod(annotations=None, name="hamster-1") -> dict:
    return {"metadata": {"name": name, "namespace": NS, "labels": {"app": "hamster"},
                         "annotations": dict(annotations or {})},
            "spec": {"containers": [{"name": "hamster", "image": "busybox",
                                     "resources": {"requests": {"cpu": "100m", "memory": "50Mi"}}}]}}


def vpa(name="hamster-vpa", mode="Auto", recommendation=True) -> dict:
    obj = {"apiVersion": "autoscaling.k8s.io/v1", "kind": "VerticalPodAutoscaler",
           "metadata": {"name": name, "namespace": NS, "creationTimestamp": "2024-01-01T00:00:00Z"},
           "spec": {"targetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "hamster"},
                    "updatePolicy": {"updateMode": mode}}}
    if recommendation:
        obj["status"] = {"recommendation": {"containerRecommendations": [
            {"containerName": "hamster", "target": {"cpu": "587m", "memory": "262144k"},
             "lowerBound": {"cpu": "500m", "memory": "200Mi"},
             "upperBound": {"cpu": "1", "memory": "500Mi"}}]}}
    return obj


def test_opt_in_by_pod_or_namespace_annotation():
    assert required_vpa(pod(REQUIRED), None) == "true"
    assert required_vpa(pod(RECOMMENDED), None) == "recommendation"
    assert required_vpa(pod(), {"metadata": {"annotations": REQUIRED}}) == "true"
    assert required_vpa(pod(), {"metadata": {"name": NS}}) is None
    # the pod's own value wins over its namespace's
    assert required_vpa(pod({REQUIRES_VPA_ANNOTATION: "false"}), {"metadata": {"annotations": REQUIRED}}) is None
    assert required_vpa(pod(RECOMMENDED), {"metadata": {"annotations": REQUIRED}}) == "recommendation"


NONE_MATCHES = "requires a VerticalPodAutoscaler (vpa.kvert.io/requires-vpa) and none in a mode other than Off matches it"
NO_RECOMMENDATION = ("requires a VerticalPodAutoscaler recommendation (vpa.kvert.io/requires-vpa) and "
                     "hamster-vpa has none yet")


@pytest.mark.parametrize("required, vpas, reason", [
    ("true", [], NONE_MATCHES),
    ("true", [vpa(mode="Off")], NONE_MATCHES),
    ("true", [vpa(recommendation=False)], None),     # the VPA exists: the seed's condition
    ("recommendation", [vpa(recommendation=False)], NO_RECOMMENDATION),
    ("recommendation", [vpa()], None),
])
def test_what_holds_a_pod(required, vpas, reason):
    message = missing_vpa_message(pod(), vpas, required)
    assert message == (None if reason is None else f"pod hamster-1 {reason}")


def test_webhook_denies_with_a_forbidden_status():
    review = review_response("uid-1", denied=VpaRequired("pod p requires a VerticalPodAutoscaler"))
    response = review["response"]
    assert response["allowed"] is False and "patch" not in response
    assert response["status"] == {"status": "Failure", "reason": "Forbidden", "code": 403,
                                  "message": "pod p requires a VerticalPodAutoscaler"}


class FakeClient:
    def __init__(self, objects):
        self.objects = objects

    async def list(self, resource, *, namespace=None, **kw):
        return {"items": [o for o in self.objects.get(resource, [])
                          if namespace is None or o["metadata"].get("namespace") == namespace]}

    async def get(self, resource, name, namespace=""):
        from kvert.api.errors import NotFound
        for o in self.objects.get(resource, []):
            if o["metadata"]["name"] == name and o["metadata"].get("namespace", "") == namespace:
                return o
        raise NotFound(resource, name)


def admit(plugin, obj):
    attrs = Attributes(operation=CREATE, resource="pods", namespace=NS, name=obj["metadata"]["name"],
                       object=obj, old_object=None, subresource="", options={})
    asyncio.run(plugin.admit(attrs))
    return attrs.object


def bare_pod_world(*vpas, namespace_annotations=None):
    deployment = {"apiVersion": "apps/v1", "kind": "Deployment",
                  "metadata": {"name": "hamster", "namespace": NS},
                  "spec": {"selector": {"matchLabels": {"app": "hamster"}}}}
    namespace = {"metadata": {"name": NS, "annotations": dict(namespace_annotations or {})}}
    return FakeClient({VPAS: list(vpas), "apps/deployments": [deployment], "namespaces": [namespace]})


def test_plugin_holds_then_admits_with_the_recommendation():
    with pytest.raises(Forbidden, match="hamster-vpa has none yet"):
        admit(VpaAdmissionPlugin(bare_pod_world(vpa(recommendation=False))), pod(RECOMMENDED))
    # "true": an existing VPA without a recommendation admits the pod unchanged
    assert admit(VpaAdmissionPlugin(bare_pod_world(vpa(recommendation=False))), pod(REQUIRED))[
        "spec"]["containers"][0]["resources"]["requests"] == {"cpu": "100m", "memory": "50Mi"}
    with pytest.raises(Forbidden, match="none in a mode other than Off"):
        admit(VpaAdmissionPlugin(bare_pod_world(namespace_annotations=REQUIRED)), pod())
    admitted = admit(VpaAdmissionPlugin(bare_pod_world(vpa())), pod(RECOMMENDED))
    assert admitted["spec"]["containers"][0]["resources"]["requests"] == {"cpu": "587m", "memory": "262144k"}
    # without the annotation nothing is held
    assert admit(VpaAdmissionPlugin(bare_pod_world()), pod())["spec"]["containers"][0]["resources"][
        "requests"] == {"cpu": "100m", "memory": "50Mi"}


def test_deployment_pods_are_held_until_the_vpa_recommends():
    """In a cluster, with ``"recommendation"``: the Deployment's ReplicaSet cannot create pods
    (FailedCreate) until the VPA exists and has a recommendation (as a VPA with history has at
    once); then its pods start with the recommended requests."""
    async def main(env):
        from kvert.apiserver.crds import CRDController, vpa_crds
        crds = CRDController(env.client, env.clock)
        crd_task = asyncio.ensure_future(crds.run())
        await crds.install(vpa_crds())
        for crd in vpa_crds():
            await crds.wait_established(crd["metadata"]["name"])
        env.registry.admission.plugins.append(VpaAdmissionPlugin(env.client))
        env.start_manager(controllers=("replicaset", "deployment"))
        labels = {"app": "hamster"}
        await env.client.create(DEPLOY, {
            "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "hamster", "namespace": NS},
            "spec": {"replicas": 2, "selector": {"matchLabels": labels},
                     "template": {"metadata": {"labels": labels, "annotations": RECOMMENDED},
                                  "spec": pod()["spec"]}}})
        await eventually(env, lambda: failed_creates(env), timeout=30, what="FailedCreate")
        assert await env.pods() == []
        created = await env.client.create(VPAS, vpa(recommendation=False))
        await env.clock.sleep(10)
        assert await env.pods() == []
        created["status"] = vpa()["status"]
        await env.client.update_status(VPAS, created)
        pods = await eventually(env, lambda: two_pods(env), timeout=120, what="pods after the recommendation")
        for p in pods:
            assert p["spec"]["containers"][0]["resources"]["requests"] == {"cpu": "587m", "memory": "262144k"}
        crds.stop()
        crd_task.cancel()
    run(main)


async def failed_creates(env):
    return [e for e in await env.events("FailedCreate") if "requires a VerticalPodAutoscaler" in e["message"]]


async def two_pods(env):
    pods = await env.pods()
    return pods if len(pods) == 2 else None


def test_review_response_unchanged_when_allowed():
    ops = [{"op": "add", "path": "/metadata/annotations", "value": {}}]
    response = review_response("u", ops)["response"]
    assert response["allowed"] is True
    assert json.loads(base64.b64decode(response["patch"])) == ops
