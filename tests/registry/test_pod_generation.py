"""Pod ``metadata.generation`` and ``status.observedGeneration`` (KEP-5067, GA in 1.35).

upstream: pkg/registry/core/pod/strategy.go — PrepareForCreate sets generation 1
(TestPodGenerationPrepareForCreate); updatePodGeneration bumps it when the spec changes, from
the pod, pods/resize and pods/ephemeralcontainers strategies; pods/status never does;
preserveOldObservedGeneration keeps the stored observedGeneration (status and per condition)
when a status write leaves it 0.
"""

import pytest

from kvert.api.errors import Invalid

from .conftest import pod


def _gen(env, name="web"):
    return env.run(env.client.get("pods", name, "default"))["metadata"]["generation"]


def test_generation_starts_at_one_whatever_the_client_sends(env):
    body = pod()
    body["metadata"]["generation"] = 7
    env.run(env.client.create("pods", body, namespace="default"))
    assert _gen(env) == 1


def test_spec_changes_bump_generation_metadata_and_status_do_not(env):
    env.run(env.client.create("pods", pod(), namespace="default"))
    p = env.run(env.client.get("pods", "web", "default"))
    p["metadata"]["labels"]["tier"] = "front"
    env.run(env.client.update("pods", p))
    assert _gen(env) == 1
    p = env.run(env.client.get("pods", "web", "default"))
    p["spec"]["activeDeadlineSeconds"] = 600
    env.run(env.client.update("pods", p))
    assert _gen(env) == 2
    p = env.run(env.client.get("pods", "web", "default"))
    p["status"]["observedGeneration"] = 2
    env.run(env.client.update_status("pods", p))
    assert _gen(env) == 2


def test_a_resize_bumps_generation(env):
    env.run(env.client.create("pods", pod(), namespace="default"))
    env.run(env.client.bind("default", "web", "node-1"))
    before = _gen(env)
    p = env.run(env.client.get("pods", "web", "default"))
    p["spec"]["containers"][0]["resources"] = {"requests": {"cpu": "600m", "memory": "128Mi"},
                                               "limits": {"cpu": "600m", "memory": "128Mi"}}
    env.run(env.client.update("pods", p, subresource="resize"))
    assert _gen(env) == before + 1


def _status_write(env, **status):
    p = env.run(env.client.get("pods", "web", "default"))
    p["status"].update(status)
    return env.run(env.client.update_status("pods", p))


def test_a_status_write_without_observed_generation_keeps_the_stored_one(env):
    env.run(env.client.create("pods", pod(), namespace="default"))
    _status_write(env, observedGeneration=1,
                  conditions=[{"type": "Ready", "status": "False", "observedGeneration": 1}])
    p = env.run(env.client.get("pods", "web", "default"))
    p["status"].pop("observedGeneration")
    p["status"]["conditions"] = [{"type": "Ready", "status": "True"}]
    after = env.run(env.client.update_status("pods", p))
    assert after["status"]["observedGeneration"] == 1
    assert after["status"]["conditions"][0]["observedGeneration"] == 1


@pytest.mark.parametrize("status, field", [
    ({"observedGeneration": -1}, "status.observedGeneration"),
    ({"conditions": [{"type": "Ready", "status": "True", "observedGeneration": -1}]},
     "status.conditions[0].observedGeneration"),
])
def test_a_negative_observed_generation_is_refused(env, status, field):
    """Measured against kube-apiserver 1.36.2 (422); the message is ValidateNonnegativeField's."""
    env.run(env.client.create("pods", pod(), namespace="default"))
    with pytest.raises(Invalid) as info:
        _status_write(env, **status)
    assert [(c.field, c.message) for c in info.value.causes] == [
        (field, "Invalid value: -1: must be greater than or equal to 0")]
