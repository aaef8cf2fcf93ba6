"""Fields Go always serializes: ``Container.Resources`` is a non-pointer struct
(``ResourceRequirements``), so a real API server returns ``resources: {}`` for a container
that sets none -- in a Pod and in a workload's pod template alike (upstream: k8s.io/api/core/v1
types.go, ``Resources ResourceRequirements `json:"resources,omitempty"` ``, where omitempty has
no effect on a struct)."""

from .conftest import pod


def test_a_container_without_resources_returns_an_empty_object(env):
    body = pod()
    del body["spec"]["containers"][0]["resources"]
    body["spec"]["initContainers"] = [{"name": "init", "image": "busybox"}]
    created = env.run(env.client.create("pods", body, namespace="default"))
    assert created["spec"]["containers"][0]["resources"] == {}
    assert created["spec"]["initContainers"][0]["resources"] == {}
    assert env.run(env.client.get("pods", "web", "default"))["spec"]["containers"][0]["resources"] == {}


def test_a_pod_template_container_too(env):
    deployment = {"apiVersion": "apps/v1", "kind": "Deployment",
                  "metadata": {"name": "d", "namespace": "default"},
                  "spec": {"selector": {"matchLabels": {"app": "d"}},
                           "template": {"metadata": {"labels": {"app": "d"}},
                                        "spec": {"containers": [{"name": "app", "image": "nginx"}]}}}}
    created = env.run(env.client.create("apps/deployments", deployment, namespace="default"))
    assert created["spec"]["template"]["spec"]["containers"][0]["resources"] == {}
