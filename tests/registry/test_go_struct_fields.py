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


def test_quantities_are_stored_and_returned_canonically(env):
    """kube-apiserver 1.36.2 answers ``0.0005`` cpu as ``1m`` and ``1.5Gi`` memory as ``1536Mi``
    (ParseQuantity + SetDefaults_ResourceList's RoundUp(-3) + String()); ``100M`` and ``500m``
    come back as sent."""
    body = pod(cpu="0.0005", memory="1.5Gi", limits=False)
    body["spec"]["containers"].append({"name": "b", "image": "x",
                                       "resources": {"requests": {"cpu": "500m", "memory": "100M"}}})
    created = env.run(env.client.create("pods", body, namespace="default"))
    assert created["spec"]["containers"][0]["resources"]["requests"] == {"cpu": "1m", "memory": "1536Mi"}
    assert created["spec"]["containers"][1]["resources"]["requests"] == {"cpu": "500m", "memory": "100M"}
    stored = env.run(env.client.get("pods", "web", "default"))
    assert stored["spec"]["containers"][0]["resources"]["requests"] == {"cpu": "1m", "memory": "1536Mi"}
