"""The ServiceAccount admission plugin (plugin/pkg/admission/serviceaccount/admission_test.go)."""

import pytest

from kvert.api.errors import Forbidden
from kvert.apiserver.admission import bootstrap, default_chain
from kvert.apiserver.admission.serviceaccount import token_volume_source
from kvert.client import InProcessClient
from kvert.clock import VirtualClock
from kvert.registry import Registry
from kvert.store import open_store

from .conftest import pod

MOUNT = "/var/run/secrets/kubernetes.io/serviceaccount"
PROJECTED = {"defaultMode": 420, "sources": [
    {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
    {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
    {"downwardAPI": {"items": [{"path": "namespace",
                                "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"}}]}},
]}


class Env:
    def __init__(self):
        self.clock = VirtualClock()
        self.store = open_store("memory", clock=self.clock)
        chain = default_chain(self.store, self.clock, service_accounts=True)
        self.registry = Registry(self.store, self.clock, chain, seed=7)
        self.client = InProcessClient(self.registry)
        self.run(bootstrap(self.registry))

    def run(self, coro):
        return self.clock.run(coro)

    def create(self, resource, obj, **kw):
        return self.run(self.client.create(resource, obj, **kw))

    def account(self, name="default", **fields):
        return self.create("serviceaccounts", {"apiVersion": "v1", "kind": "ServiceAccount",
                                               "metadata": {"name": name}, **fields},
                           namespace="default")


@pytest.fixture
def env():
    e = Env()
    yield e
    e.store.close()


def test_token_volume_source_is_upstreams():
    # TokenVolumeSource(): defaultMode 0644 explicitly, 3607 s token, CA, namespace
    assert token_volume_source() == PROJECTED


# TestAssignsDefaultServiceAccountAndBoundTokenWithNoSecretTokens / TestAutomountsAPIToken
def test_default_service_account_and_token_volume(env):
    env.account()
    created = env.create("pods", pod(initContainers=[{"name": "init", "image": "busybox"}]))
    spec = created["spec"]
    assert spec["serviceAccountName"] == "default"
    assert spec["serviceAccount"] == "default"            # the deprecated mirror
    (volume,) = spec["volumes"]
    assert volume["projected"] == PROJECTED
    name = volume["name"]
    assert name.startswith("kube-api-access-") and len(name) == len("kube-api-access-") + 5
    assert set(name[-5:]) <= set("bcdfghjklmnpqrstvwxz2456789")
    want = [{"name": name, "readOnly": True, "mountPath": MOUNT}]
    assert spec["containers"][0]["volumeMounts"] == want
    assert spec["initContainers"][0]["volumeMounts"] == want


# TestRespectsExistingMount
def test_existing_mount_at_the_path_is_kept(env):
    env.account()
    mine = {"name": "my-creds", "mountPath": MOUNT}
    created = env.create("pods", pod(
        volumes=[{"name": "my-creds", "secret": {"secretName": "s"}}],
        containers=[{"name": "app", "image": "nginx", "volumeMounts": [mine]}]))
    assert created["spec"]["containers"][0]["volumeMounts"] == [mine]
    assert [v["name"] for v in created["spec"]["volumes"]] == ["my-creds"]   # no token volume


def test_existing_token_volume_is_reused(env):
    env.account()
    created = env.create("pods", pod(volumes=[{"name": "kube-api-access-abcde",
                                               "projected": PROJECTED}]))
    assert [v["name"] for v in created["spec"]["volumes"]] == ["kube-api-access-abcde"]
    assert created["spec"]["containers"][0]["volumeMounts"][0]["name"] == "kube-api-access-abcde"


# TestAutomountsAPIToken / shouldAutomount: the pod's choice, then the ServiceAccount's
@pytest.mark.parametrize("sa_choice, pod_choice, mounted", [
    (None, None, True), (False, None, False), (True, False, False), (False, True, True),
])
def test_automount_choice(env, sa_choice, pod_choice, mounted):
    env.account(**({} if sa_choice is None else {"automountServiceAccountToken": sa_choice}))
    extra = {} if pod_choice is None else {"automountServiceAccountToken": pod_choice}
    created = env.create("pods", pod(**extra))
    assert bool(created["spec"].get("volumes")) is mounted


# TestDeniesInvalidServiceAccount
def test_missing_service_account_is_forbidden(env):
    with pytest.raises(Forbidden) as e:
        env.create("pods", pod("web", serviceAccountName="robot"))
    assert str(e.value) == ('pods "web" is forbidden: error looking up service account default/robot: '
                            'serviceaccount "robot" not found')
    assert env.store.list("pods").items == []


def test_default_service_account_is_waited_for(env):
    # getServiceAccount: the default one is looked up 10 times, 100-200 ms apart
    async def scenario():
        import asyncio
        creating = asyncio.ensure_future(env.client.create("pods", pod("web")))
        await env.clock.sleep(0.5)
        assert not creating.done()
        await env.client.create("serviceaccounts", {"metadata": {"name": "default"}},
                                namespace="default")
        return await creating
    created = env.run(scenario())
    assert created["spec"]["serviceAccountName"] == "default"

    start = env.clock.now()
    with pytest.raises(Forbidden, match='serviceaccount "default" not found'):
        env.create("pods", pod("other", namespace="kube-public"))
    assert 0.9 <= env.clock.now() - start <= 1.8


# TestAddImagePullSecrets / TestDoNotAddImagePullSecrets
def test_image_pull_secrets_from_the_service_account(env):
    env.account(imagePullSecrets=[{"name": "foo"}, {"name": "bar"}])
    assert env.create("pods", pod("a"))["spec"]["imagePullSecrets"] == [{"name": "foo"},
                                                                        {"name": "bar"}]
    own = env.create("pods", pod("b", imagePullSecrets=[{"name": "mine"}]))
    assert own["spec"]["imagePullSecrets"] == [{"name": "mine"}]


# TestRejectsUnreferencedSecretVolumes / TestAllowsReferencedSecret /
# TestRejectsUnreferencedImagePullSecrets (enforce-mountable-secrets)
def test_enforced_mountable_secrets(env):
    env.account(metadata={"name": "default",
                          "annotations": {"kubernetes.io/enforce-mountable-secrets": "true"}},
                secrets=[{"name": "ok"}], imagePullSecrets=[{"name": "pull"}])
    env.create("pods", pod("a", volumes=[{"name": "v", "secret": {"secretName": "ok"}}]))
    with pytest.raises(Forbidden) as e:
        env.create("pods", pod("b", volumes=[{"name": "v", "secret": {"secretName": "no"}}]))
    assert str(e.value).endswith('volume with secret.secretName="no" is not allowed because service '
                                 "account default does not reference that secret")
    env_ref = [{"name": "app", "image": "nginx", "env": [
        {"name": "PW", "valueFrom": {"secretKeyRef": {"name": "no", "key": "k"}}}]}]
    with pytest.raises(Forbidden, match='container app with envVar PW referencing '
                                        'secret.secretName="no" is not allowed'):
        env.create("pods", pod("c", containers=env_ref))
    with pytest.raises(Forbidden, match=r'imagePullSecrets\[0\].name="other" is not allowed'):
        env.create("pods", pod("d", imagePullSecrets=[{"name": "other"}]))


# TestIgnoresMirrorPod / TestRejectsMirrorPodWith*
def test_mirror_pods(env):
    mirror = {"kubernetes.io/config.mirror": "hash"}
    created = env.create("pods", {**pod("m", nodeName="node-1"),
                                  "metadata": {"name": "m", "annotations": mirror}})
    assert "serviceAccountName" not in created["spec"] and "volumes" not in created["spec"]
    for name, extra, message in (
            ("m1", {"serviceAccountName": "default"}, "a mirror pod may not reference service accounts"),
            ("m2", {"volumes": [{"name": "v", "secret": {"secretName": "s"}}]},
             "a mirror pod may not reference secrets"),
            ("m3", {"volumes": [{"name": "v", "projected": {"sources": [
                {"serviceAccountToken": {"path": "token"}}]}}]},
             "a mirror pod may not use ServiceAccountToken volume projections")):
        body = pod(name, nodeName="node-1", **extra)
        body["metadata"]["annotations"] = mirror
        with pytest.raises(Forbidden) as e:
            env.create("pods", body)
        assert str(e.value) == f'pods "{name}" is forbidden: {message}'


# TestIgnoresNonCreate / TestIgnoresNonPodResource
def test_only_pod_creation_is_touched(env):
    env.account()
    created = env.create("pods", pod())
    updated = dict(created, metadata={**created["metadata"], "labels": {"x": "y"}})
    assert env.run(env.client.update("pods", updated))["spec"]["volumes"] == created["spec"]["volumes"]
    template = {"metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "app", "image": "nginx"}]}}
    deploy = env.create("apps/deployments", {
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
        "spec": {"selector": {"matchLabels": {"app": "web"}}, "template": template}})
    assert "serviceAccountName" not in deploy["spec"]["template"]["spec"]


def test_not_in_the_chain_unless_asked():
    clock = VirtualClock()
    store = open_store("memory", clock=clock)
    names = [p.name for p in default_chain(store, clock).plugins]
    assert "ServiceAccount" not in names
    names = [p.name for p in default_chain(store, clock, service_accounts=True).plugins]
    assert names[:3] == ["NamespaceLifecycle", "LimitRanger", "ServiceAccount"]
