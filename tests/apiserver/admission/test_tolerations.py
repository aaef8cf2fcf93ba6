from kvert.apiserver.admission.tolerations import merge_tolerations

from .conftest import pod

NOT_READY = {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute",
             "tolerationSeconds": 300}
UNREACHABLE = {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute",
               "tolerationSeconds": 300}


def test_default_tolerations_are_added(env):
    created = env.create("pods", pod())
    assert created["spec"]["tolerations"] == [NOT_READY, UNREACHABLE]


def test_existing_toleration_is_kept(env):
    own = {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute",
           "tolerationSeconds": 60}
    created = env.create("pods", pod(tolerations=[own]))
    assert created["spec"]["tolerations"] == [own, UNREACHABLE]


def test_tolerate_everything_needs_no_defaults(env):
    everything = {"operator": "Exists"}
    created = env.create("pods", pod(tolerations=[everything]))
    assert created["spec"]["tolerations"] == [everything]


def test_update_keeps_defaults_without_duplicates(env):
    created = env.create("pods", pod())
    created["metadata"]["labels"]["v"] = "2"
    updated = env.run(env.client.update("pods", created))
    assert updated["spec"]["tolerations"] == [NOT_READY, UNREACHABLE]


def test_merge_tolerations_drops_covered_ones():
    a = {"key": "gpu", "operator": "Equal", "value": "true", "effect": "NoSchedule"}
    any_gpu = {"key": "gpu", "operator": "Exists"}
    assert merge_tolerations([a], [any_gpu]) == [any_gpu]
    assert merge_tolerations([any_gpu], [a]) == [any_gpu]
    assert merge_tolerations([a], [dict(a)]) == [a]
    short = {"key": "k", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 10}
    long = {"key": "k", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 100}
    assert merge_tolerations([short], [long]) == [long]
    other = {"key": "other", "operator": "Exists"}
    assert merge_tolerations([a], [other]) == [a, other]
