"""The ServiceAccount controller and the root CA publisher, in virtual time
(pkg/controller/serviceaccount/serviceaccounts_controller_test.go,
pkg/controller/certificates/rootcacertpublisher/publisher_test.go)."""

from kvert.api.errors import NotFound
from kvert.controllers.manager import ALL_CONTROLLERS
from kvert.controllers.rootcapublisher import DESCRIPTION, DESCRIPTION_ANNOTATION

from .helpers import eventually, run

CA = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"
PUBLISHER = "root-ca-cert-publisher"


async def _get(env, resource, name, namespace):
    try:
        return await env.client.get(resource, name, namespace)
    except NotFound:
        return None


async def _namespace(env, name):
    await env.client.create("namespaces", {"apiVersion": "v1", "kind": "Namespace",
                                           "metadata": {"name": name}})


def test_serviceaccount_is_a_default_controller():
    assert "serviceaccount" in ALL_CONTROLLERS and PUBLISHER not in ALL_CONTROLLERS


# TestServiceAccountCreation: "new active namespace missing serviceaccounts", "active namespace
# missing serviceaccounts" (the system namespaces that exist before the controller starts),
# "deleted serviceaccount without serviceaccount"
def test_default_service_account_in_every_namespace_and_made_again():
    async def scenario(env):
        env.start_manager(controllers=["serviceaccount"])
        await _namespace(env, "team-a")
        for ns in ("default", "kube-system", "kube-public", "kube-node-lease", "team-a"):
            await eventually(env, lambda ns=ns: _get(env, "serviceaccounts", "default", ns),
                             what=f"default in {ns}")
        first = await env.client.get("serviceaccounts", "default", "team-a")
        await env.client.delete("serviceaccounts", "default", namespace="team-a")
        again = await eventually(env, lambda: _get(env, "serviceaccounts", "default", "team-a"),
                                 what="the default ServiceAccount again")
        assert again["metadata"]["uid"] != first["metadata"]["uid"]
        # "deleted serviceaccount with other serviceaccount": only default is ensured
        await env.client.create("serviceaccounts", {"metadata": {"name": "robot"}}, namespace="team-a")
        await env.client.delete("serviceaccounts", "robot", namespace="team-a")
        await env.clock.sleep(5)
        assert await _get(env, "serviceaccounts", "robot", "team-a") is None
    run(scenario)


# TestServiceAccountCreation: "new terminating namespace": nothing is made
def test_terminating_namespace_gets_nothing():
    async def scenario(env):
        await _namespace(env, "going")
        # no namespace controller runs: the namespace stays Terminating
        await env.client.delete("namespaces", "going")
        assert (await env.client.get("namespaces", "going"))["status"]["phase"] == "Terminating"
        manager = env.start_manager(controllers=["serviceaccount"])
        await eventually(env, lambda: manager.synced, what="synced")
        await env.clock.sleep(5)
        assert await _get(env, "serviceaccounts", "default", "going") is None
        assert manager["serviceaccount"].errors == 0
    run(scenario)


# TestConfigMapCreation: new namespace, deleted ConfigMap, changed data, missing annotation
def test_root_ca_published_in_every_namespace():
    async def scenario(env):
        env.start_manager(controllers=[PUBLISHER], settings={PUBLISHER: {"ca_pem": CA.encode()}})
        await _namespace(env, "team-a")
        for ns in ("default", "team-a"):
            cm = await eventually(env, lambda ns=ns: _get(env, "configmaps", "kube-root-ca.crt", ns),
                                  what=f"kube-root-ca.crt in {ns}")
            assert cm["data"] == {"ca.crt": CA}
            assert cm["metadata"]["annotations"] == {DESCRIPTION_ANNOTATION: DESCRIPTION}

        await env.client.delete("configmaps", "kube-root-ca.crt", namespace="team-a")
        await eventually(env, lambda: _get(env, "configmaps", "kube-root-ca.crt", "team-a"),
                         what="the ConfigMap again")

        await env.client.patch("configmaps", "kube-root-ca.crt",
                               {"data": {"ca.crt": "tampered", "extra": "x"},
                                "metadata": {"annotations": {DESCRIPTION_ANNOTATION: None}}},
                               namespace="team-a")

        async def restored():
            cm = await _get(env, "configmaps", "kube-root-ca.crt", "team-a")
            return cm if cm["data"] == {"ca.crt": CA} and \
                (cm["metadata"].get("annotations") or {}).get(DESCRIPTION_ANNOTATION) else None
        await eventually(env, restored, what="data and annotation put back")
    run(scenario)
