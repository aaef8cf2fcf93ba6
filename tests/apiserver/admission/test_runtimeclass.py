import pytest

from kvert.api import pods
from kvert.api.errors import Forbidden

from .conftest import pod

RCS = "node.k8s.io/runtimeclasses"
KATA_FC = {"apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass", "metadata": {"name": "kata-fc"},
           "handler": "kata-fc", "overhead": {"podFixed": {"memory": "120Mi", "cpu": "250m"}}}


def test_pod(**spec):
    # seed 001 section 3 / "Pod Overhead": test-pod with two containers
    return pod("test-pod", containers=[
        {"name": "busybox-ctr", "image": "busybox:1.28", "stdin": True, "tty": True,
         "resources": {"limits": {"cpu": "500m", "memory": "100Mi"}}},
        {"name": "nginx-ctr", "image": "nginx",
         "resources": {"limits": {"cpu": "1500m", "memory": "100Mi"}}},
    ], runtimeClassName="kata-fc", **spec)


test_pod.__test__ = False


def test_overhead_is_set_from_the_runtime_class(env):
    env.create(RCS, KATA_FC)
    created = env.create("pods", test_pod())
    assert created["spec"]["overhead"] == {"memory": "120Mi", "cpu": "250m"}
    # the scheduler looks for 2.25 CPU and 320MiB
    assert pods.pod_requests(created) == {"cpu": 2250, "memory": 320 * 2**20}


def test_quota_counts_the_overhead(env):
    env.create(RCS, KATA_FC)
    env.create("resourcequotas", {"apiVersion": "v1", "kind": "ResourceQuota",
                                  "metadata": {"name": "compute"},
                                  "spec": {"hard": {"requests.cpu": "3", "requests.memory": "1Gi",
                                                    "limits.cpu": "3"}}})
    env.create("pods", test_pod())
    used = env.get("resourcequotas", "compute", "default")["status"]["used"]
    assert used == {"requests.cpu": "2250m", "requests.memory": "320Mi", "limits.cpu": "2250m"}


def test_different_overhead_is_rejected(env):
    env.create(RCS, KATA_FC)
    with pytest.raises(Forbidden) as e:
        env.create("pods", test_pod(overhead={"cpu": "100m", "memory": "120Mi"}))
    assert str(e.value) == ('pods "test-pod" is forbidden: pod rejected: Pod\'s Overhead doesn\'t '
                            "match RuntimeClass's defined Overhead")
    assert env.store.list("pods").items == []
    # the same overhead, however spelled, is accepted
    created = env.create("pods", test_pod(overhead={"cpu": "0.25", "memory": "120Mi"}))
    assert created["spec"]["overhead"] == {"memory": "120Mi", "cpu": "250m"}


def test_overhead_without_runtime_class_is_rejected(env):
    with pytest.raises(Forbidden) as e:
        env.create("pods", pod(overhead={"cpu": "250m"}))
    assert str(e.value).endswith("pod rejected: Pod Overhead set without corresponding "
                                 "RuntimeClass defined Overhead")


def test_unknown_runtime_class_is_rejected(env):
    with pytest.raises(Forbidden) as e:
        env.create("pods", pod(runtimeClassName="gvisor"))
    assert str(e.value) == 'pods "web" is forbidden: pod rejected: RuntimeClass "gvisor" not found'


def test_scheduling_is_merged_into_the_pod(env):
    env.create(RCS, {"apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass",
                     "metadata": {"name": "sandboxed"}, "handler": "runsc",
                     "scheduling": {"nodeSelector": {"sandbox": "gvisor"},
                                    "tolerations": [{"key": "sandbox", "operator": "Exists",
                                                     "effect": "NoSchedule"}]}})
    created = env.create("pods", pod(runtimeClassName="sandboxed", nodeSelector={"zone": "a"}))
    assert created["spec"]["nodeSelector"] == {"zone": "a", "sandbox": "gvisor"}
    assert {"key": "sandbox", "operator": "Exists", "effect": "NoSchedule"} in \
        created["spec"]["tolerations"]
    with pytest.raises(Forbidden) as e:
        env.create("pods", pod("clash", runtimeClassName="sandboxed",
                               nodeSelector={"sandbox": "kata"}))
    assert str(e.value) == ('pods "clash" is forbidden: conflict: runtimeClass.scheduling.'
                            "nodeSelector[sandbox] = gvisor; pod.spec.nodeSelector[sandbox] = kata")
