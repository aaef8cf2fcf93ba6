"""CRDs: the types they serve, their status, the VPA's CRDs, and the controller end to end.

The controller runs in virtual time against a registry over a memory store, through the
in-process client, as it runs inside ``kvert up``.
"""

from __future__ import annotations

import asyncio
import copy

import pytest

from kvert.api import kinds
from kvert.api.errors import Invalid, NotFound
from kvert.api.kinds import ResourceType
from kvert.api.meta import format_time
from kvert.apiserver.crds import (CLEANUP_FINALIZER, CRD_RESOURCE, CRDController, accepted_status,
                                  find_condition, resource_types_for, vpa_crds)
from kvert.client import InProcessClient
from kvert.clock import VirtualClock
from kvert.registry import Registry
from kvert.store import open_store

CRON_PATTERN = r"^(\d+|\*)(/\d+)?(\s+(\d+|\*)(/\d+)?){4}$"
CRONTAB_SCHEMA = {"type": "object", "properties": {"spec": {"type": "object", "properties": {
    "cronSpec": {"type": "string", "pattern": CRON_PATTERN},
    "image": {"type": "string"},
    "replicas": {"type": "integer", "minimum": 1, "maximum": 10}}}}}
NAME = "crontabs.stable.example.com"
KEY = "stable.example.com/crontabs"


def crontab_crd(group="stable.example.com", plural="crontabs", kind="CronTab", short=("ct",),
                versions=None):
    versions = versions or [{"name": "v1", "served": True, "storage": True,
                             "schema": {"openAPIV3Schema": copy.deepcopy(CRONTAB_SCHEMA)}}]
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": f"{plural}.{group}"},
            "spec": {"group": group, "scope": "Namespaced", "versions": versions,
                     "names": {"plural": plural, "singular": kind.lower(), "kind": kind,
                               "shortNames": list(short)}}}


def crontab(name="my-new-cron-object", **spec):
    body = {"cronSpec": "* * * * */5", "image": "my-awesome-cron-image", "replicas": 1}
    body.update(spec)
    return {"apiVersion": "stable.example.com/v1", "kind": "CronTab",
            "metadata": {"name": name, "namespace": "default"}, "spec": body}


@pytest.fixture(autouse=True)
def restore_kinds():
    """The kinds table is module-global: whatever a test registers goes away after it."""
    by_key, by_gvk = dict(kinds._BY_KEY), dict(kinds._BY_GVK)
    yield
    kinds._BY_KEY.clear()
    kinds._BY_KEY.update(by_key)
    kinds._BY_GVK.clear()
    kinds._BY_GVK.update(by_gvk)


class Env:
    def __init__(self):
        self.clock = VirtualClock()
        self.store = open_store("memory", clock=self.clock)
        self.registry = Registry(self.store, self.clock, seed=3)
        self.client = InProcessClient(self.registry)
        self.controller = CRDController(self.client, self.clock)

    def run(self, scenario):
        async def main():
            task = asyncio.ensure_future(self.controller.run())
            try:
                return await asyncio.wait_for(scenario(), 600)
            finally:
                task.cancel()
                await asyncio.gather(task, return_exceptions=True)
        return self.clock.run(main())

    async def eventually(self, predicate, timeout=120.0):
        deadline = self.clock.now() + timeout
        while True:
            result = predicate()
            if asyncio.iscoroutine(result):
                result = await result
            if result:
                return result
            if self.clock.now() > deadline:
                raise AssertionError("condition not reached in time")
            await self.clock.sleep(0.5)

    async def crd(self, name=NAME):
        return await self.client.get(CRD_RESOURCE, name)

    async def gone(self, resource, name, namespace=""):
        try:
            await self.client.get(resource, name, namespace)
        except NotFound:
            return True
        return False


@pytest.fixture
def env():
    e = Env()
    yield e
    e.store.close()


# ---- the types a CRD serves -----------------------------------------------------------------

def test_resource_types_one_per_served_version_storage_last():
    crd = crontab_crd(versions=[
        {"name": "v2", "served": True, "storage": True, "schema": {"openAPIV3Schema": CRONTAB_SCHEMA},
         "subresources": {"status": {}, "scale": {"specReplicasPath": ".spec.replicas",
                                                  "statusReplicasPath": ".status.replicas"}},
         "additionalPrinterColumns": [{"name": "Spec", "type": "string",
                                       "jsonPath": ".spec.cronSpec"}]},
        {"name": "v1", "served": True, "storage": False,
         "schema": {"openAPIV3Schema": CRONTAB_SCHEMA}},
        {"name": "v1alpha1", "served": False, "storage": False,
         "schema": {"openAPIV3Schema": CRONTAB_SCHEMA}},
    ])
    crd["spec"]["names"]["categories"] = ["all"]
    types = resource_types_for(crd)
    assert [(t.api_version, t.kind, t.key) for t in types] == [
        ("stable.example.com/v1", "CronTab", KEY), ("stable.example.com/v2", "CronTab", KEY)]
    v1, v2 = types
    assert v1.subresources == frozenset() and v2.subresources == {"status", "scale"}
    assert v2.namespaced and v2.short_names == ("ct",) and v2.categories == ("all",)
    assert v2.schema == CRONTAB_SCHEMA and v2.schema is not CRONTAB_SCHEMA
    assert v2.printer_columns == ({"name": "Spec", "type": "string", "jsonPath": ".spec.cronSpec"},)
    cluster = crontab_crd()
    cluster["spec"]["scope"] = "Cluster"
    assert not resource_types_for(cluster)[0].namespaced


# ---- status: names accepted, established ------------------------------------------------------

def test_accepted_status_without_conflicts():
    t0 = VirtualClock().now()
    status = accepted_status(crontab_crd(), kinds.all_types(), now=t0)
    stamp = format_time(t0)
    assert status == {
        "conditions": [
            {"type": "NamesAccepted", "status": "True", "lastTransitionTime": stamp,
             "reason": "NoConflicts", "message": "no conflicts found"},
            {"type": "Established", "status": "True", "lastTransitionTime": stamp,
             "reason": "InitialNamesAccepted", "message": "the initial names have been accepted"}],
        "acceptedNames": {"plural": "crontabs", "singular": "crontab", "shortNames": ["ct"],
                          "kind": "CronTab", "listKind": "CronTabList"},
        "storedVersions": ["v1"],
    }
    # Nothing changes on a second pass, not even the transition times.
    crd = crontab_crd()
    crd["status"] = status
    assert accepted_status(crd, kinds.all_types(), now=t0 + 3600) == status


def test_names_used_by_another_resource_of_the_group_are_refused():
    other = ResourceType("stable.example.com", "v1", "CronTab", "crontabz", True)
    status = accepted_status(crontab_crd(), [other], now=0)
    names_accepted = find_condition(status, "NamesAccepted")
    # as in Kubernetes, the last conflict found is the one reported
    assert names_accepted["status"] == "False"
    assert (names_accepted["reason"], names_accepted["message"]) == (
        "ListKindConflict", '"CronTabList" is already in use')
    assert status["acceptedNames"] == {"plural": "crontabs", "shortNames": ["ct"]}
    established = find_condition(status, "Established")
    assert (established["status"], established["reason"]) == ("False", "NotAccepted")
    # another group's resources are no conflict, nor is the resource the CRD itself replaces
    elsewhere = ResourceType("other.example.com", "v1", "CronTab", "crontabs", True)
    itself = ResourceType("stable.example.com", "v1", "CronTab", "crontabs", True)
    status = accepted_status(crontab_crd(), [elsewhere, itself], now=0)
    assert find_condition(status, "NamesAccepted")["status"] == "True"


def test_short_names_taken_by_another_crd():
    other = crontab_crd(plural="cronjobz", kind="CronJobZ", short=("ct", "cz"))
    other["status"] = {"acceptedNames": copy.deepcopy(other["spec"]["names"])}
    status = accepted_status(crontab_crd(), [other], now=0)
    cond = find_condition(status, "NamesAccepted")
    assert (cond["reason"], cond["message"]) == ("ShortNamesConflict", '"ct" is already in use')
    assert "shortNames" not in status["acceptedNames"]


def test_an_established_crd_keeps_its_accepted_names_and_stays_established():
    crd = crontab_crd()
    crd["status"] = accepted_status(crd, [], now=0)
    crd["spec"]["names"]["shortNames"] = ["ct", "cz"]
    taken = ResourceType("stable.example.com", "v1", "Other", "others", True, short_names=("cz",))
    status = accepted_status(crd, [taken], now=60)
    assert find_condition(status, "NamesAccepted")["reason"] == "ShortNamesConflict"
    assert find_condition(status, "Established")["status"] == "True"
    assert status["acceptedNames"]["shortNames"] == ["ct"]
    assert find_condition(status, "NamesAccepted")["lastTransitionTime"] == format_time(60)


def test_stored_versions_accumulate():
    crd = crontab_crd()
    crd["status"] = {"storedVersions": ["v1alpha1"]}
    assert accepted_status(crd, [], now=0)["storedVersions"] == ["v1alpha1", "v1"]


# ---- the VPA's CRDs -------------------------------------------------------------------------

def test_vpa_crds_as_the_vpa_installs_them():
    checkpoint, vpa = vpa_crds()
    assert [c["metadata"]["name"] for c in (checkpoint, vpa)] == [
        "verticalpodautoscalercheckpoints.autoscaling.k8s.io",
        "verticalpodautoscalers.autoscaling.k8s.io"]
    assert vpa["metadata"]["annotations"]["api-approved.kubernetes.io"].startswith("https://")
    assert [(v["name"], v["served"], v["storage"]) for v in vpa["spec"]["versions"]] == [
        ("v1", True, True), ("v1beta2", False, False)]
    v1 = vpa["spec"]["versions"][0]
    assert v1["subresources"] == {"status": {}}
    assert [c["name"] for c in v1["additionalPrinterColumns"] if not c.get("priority")] == [
        "Mode", "CPU", "Mem", "Provided", "Age"]
    spec = v1["schema"]["openAPIV3Schema"]["properties"]["spec"]
    assert spec["required"] == ["targetRef"]
    assert spec["properties"]["updatePolicy"]["properties"]["updateMode"]["enum"] == [
        "Off", "Initial", "Recreate", "InPlaceOrRecreate", "InPlace", "Auto"]
    policy = spec["properties"]["resourcePolicy"]["properties"]["containerPolicies"]["items"]
    assert {"containerName", "mode", "minAllowed", "maxAllowed", "controlledResources",
            "controlledValues"} <= set(policy["properties"])
    rec = v1["schema"]["openAPIV3Schema"]["properties"]["status"]["properties"]["recommendation"]
    item = rec["properties"]["containerRecommendations"]["items"]
    assert set(item["properties"]) == {"containerName", "target", "lowerBound", "upperBound",
                                       "uncappedTarget"}
    assert checkpoint["spec"]["names"]["shortNames"] == ["vpacheckpoint"]
    assert "subresources" not in checkpoint["spec"]["versions"][0]
    # The CRDs serve the very resources kvert has built in, which they replace.
    assert [t.key for c in (checkpoint, vpa) for t in resource_types_for(c)] == [
        "autoscaling.k8s.io/verticalpodautoscalercheckpoints",
        "autoscaling.k8s.io/verticalpodautoscalers"]
    assert vpa_crds() == [checkpoint, vpa] and vpa_crds()[1] is not vpa


# ---- the controller, end to end ---------------------------------------------------------------

def test_a_crd_is_established_and_its_resource_served(env):
    async def scenario():
        assert not env.controller.established(NAME)
        await env.client.create(CRD_RESOURCE, crontab_crd())
        await env.controller.wait_established(NAME)
        assert env.controller.established(NAME)
        crd = await env.eventually(lambda: _with_finalizer(env))
        assert find_condition(crd, "NamesAccepted")["reason"] == "NoConflicts"
        assert find_condition(crd, "Established")["reason"] == "InitialNamesAccepted"
        assert crd["status"]["acceptedNames"]["kind"] == "CronTab"
        assert crd["status"]["storedVersions"] == ["v1"]
        assert kinds.by_key(KEY).schema == CRONTAB_SCHEMA

        created = await env.client.create(KEY, crontab())
        assert created["spec"]["replicas"] == 1
        listed = await env.client.list(KEY, namespace="default")
        assert [o["metadata"]["name"] for o in listed["items"]] == ["my-new-cron-object"]
    env.run(scenario)


async def _with_finalizer(env):
    crd = await env.crd()
    return crd if CLEANUP_FINALIZER in (crd["metadata"].get("finalizers") or []) else None


def test_custom_objects_are_pruned_and_validated_against_the_schema(env):
    # Needs the registry to call kvert.api.schema.prepare_custom_object for types with a schema.
    async def scenario():
        await env.client.create(CRD_RESOURCE, crontab_crd())
        await env.controller.wait_established(NAME)
        with pytest.raises(Invalid) as err:
            await env.client.create(KEY, crontab("bad", cronSpec="every minute", replicas=0))
        assert err.value.code == 422
        assert [c.field for c in err.value.causes] == ["spec.cronSpec", "spec.replicas"]
        assert "spec.replicas in body should be greater than or equal to 1" in str(err.value)
        with pytest.raises(Invalid) as err:
            await env.client.create(KEY, crontab("typed", replicas="3"))
        assert err.value.causes[0].message == ('Invalid value: "string": spec.replicas in body '
                                               'must be of type integer: "string"')
        created = await env.client.create(KEY, crontab("extra", color="red"))
        assert "color" not in created["spec"]
        created["spec"]["replicas"] = 11
        with pytest.raises(Invalid):
            await env.client.update(KEY, created)
    env.run(scenario)


def test_deleting_a_crd_deletes_its_objects_and_stops_serving(env):
    async def scenario():
        await env.client.create(CRD_RESOURCE, crontab_crd())
        await env.controller.wait_established(NAME)
        for name in ("a", "b"):
            await env.client.create(KEY, crontab(name))
        await env.client.delete(CRD_RESOURCE, NAME)
        await env.eventually(lambda: env.gone(CRD_RESOURCE, NAME))
        await env.eventually(lambda: KEY not in {t.key for t in kinds.all_types()})
        assert env.store.list(KEY).items == []
        assert not env.controller.established(NAME)
    env.run(scenario)


def test_a_crd_stays_terminating_until_its_objects_are_gone(env):
    async def scenario():
        await env.client.create(CRD_RESOURCE, crontab_crd())
        await env.eventually(lambda: _with_finalizer(env))
        held = crontab("held")
        held["metadata"]["finalizers"] = ["example.com/hold"]
        await env.client.create(KEY, held)
        await env.client.delete(CRD_RESOURCE, NAME)

        async def terminating(reason):
            crd = await env.crd()
            cond = find_condition(crd, "Terminating") or {}
            return crd if cond.get("reason") == reason else None
        crd = await env.eventually(lambda: terminating("InstanceDeletionCheck"))
        assert crd["metadata"].get("deletionTimestamp")
        assert find_condition(crd, "Terminating")["status"] == "True"
        assert kinds.by_key(KEY)  # still served while terminating

        obj = await env.client.get(KEY, "held", "default")
        assert obj["metadata"].get("deletionTimestamp")
        obj["metadata"]["finalizers"] = []
        await env.client.update(KEY, obj)
        await env.eventually(lambda: env.gone(CRD_RESOURCE, NAME))
        await env.eventually(lambda: KEY not in {t.key for t in kinds.all_types()})
    env.run(scenario)


def test_conflicting_names_wait_until_they_are_free(env):
    first = crontab_crd()
    second = crontab_crd(plural="crontabs2", kind="CronTab", short=())
    second_name = "crontabs2.stable.example.com"

    async def scenario():
        await env.client.create(CRD_RESOURCE, first)
        await env.controller.wait_established(NAME)
        await env.client.create(CRD_RESOURCE, second)

        async def refused():
            crd = await env.crd(second_name)
            cond = find_condition(crd, "NamesAccepted") or {}
            return crd if cond.get("status") == "False" else None
        crd = await env.eventually(refused)
        assert find_condition(crd, "NamesAccepted")["reason"] in ("KindConflict", "ListKindConflict")
        assert find_condition(crd, "Established")["status"] == "False"
        assert not env.controller.established(second_name)
        assert "stable.example.com/crontabs2" not in {t.key for t in kinds.all_types()}

        await env.client.delete(CRD_RESOURCE, NAME)
        await asyncio.wait_for(env.controller.wait_established(second_name), 120)
        assert kinds.by_key("stable.example.com/crontabs2").kind == "CronTab"
    env.run(scenario)


def test_a_restarted_api_server_serves_the_stored_crds_again(env, restore_kinds):
    async def scenario():
        await env.client.create(CRD_RESOURCE, crontab_crd())
        await env.controller.wait_established(NAME)
        await env.client.create(KEY, crontab())
        before = await env.crd()
        # a new process: the kinds table has only the built-in types again
        kinds.unregister(KEY)
        second = CRDController(env.client, env.clock)
        task = asyncio.ensure_future(second.run())
        try:
            await asyncio.wait_for(second.wait_established(NAME), 60)
            assert kinds.by_key(KEY).schema == CRONTAB_SCHEMA
            assert (await env.client.get(KEY, "my-new-cron-object", "default"))["spec"]["replicas"] == 1
            await env.clock.sleep(5)
            after = await env.crd()
            assert after["status"] == before["status"]  # nothing to rewrite
        finally:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
    env.run(scenario)


def test_a_new_version_is_served_after_an_update(env):
    async def scenario():
        await env.client.create(CRD_RESOURCE, crontab_crd())
        await env.controller.wait_established(NAME)
        crd = await env.crd()
        v2 = copy.deepcopy(crd["spec"]["versions"][0])
        v2["name"] = "v2"
        crd["spec"]["versions"][0]["storage"] = False
        crd["spec"]["versions"].append(v2)
        await env.client.update(CRD_RESOURCE, crd)
        await env.eventually(lambda: kinds.by_key(KEY).version == "v2")
        assert sorted(t.version for t in kinds.versions_of(KEY)) == ["v1", "v2"]
        crd = await env.eventually(lambda: _stored_versions(env, ["v1", "v2"]))
        assert crd
    env.run(scenario)


async def _stored_versions(env, expected):
    crd = await env.crd()
    return crd if crd["status"].get("storedVersions") == expected else None


def test_install_the_vpa_crds(env):
    names = [c["metadata"]["name"] for c in vpa_crds()]

    async def scenario():
        await env.controller.install(vpa_crds())
        for name in names:
            await env.controller.wait_established(name)
        vpa_type = kinds.by_key("autoscaling.k8s.io/verticalpodautoscalers")
        assert vpa_type.schema is not None and vpa_type.has_status
        assert [c["name"] for c in vpa_type.printer_columns][:5] == [
            "Mode", "CPU", "Mem", "Provided", "Age"]
        vpa = {"apiVersion": "autoscaling.k8s.io/v1", "kind": "VerticalPodAutoscaler",
               "metadata": {"name": "hamster-vpa", "namespace": "default"},
               "spec": {"targetRef": {"apiVersion": "apps/v1", "kind": "Deployment",
                                      "name": "hamster"},
                        "updatePolicy": {"updateMode": "InPlace"}}}
        created = await env.client.create("autoscaling.k8s.io/verticalpodautoscalers", vpa)
        assert created["spec"]["updatePolicy"]["updateMode"] == "InPlace"
        bad = copy.deepcopy(vpa)
        bad["metadata"]["name"] = "bad"
        bad["spec"]["updatePolicy"]["updateMode"] = "Sometimes"
        with pytest.raises(Invalid) as err:
            await env.client.create("autoscaling.k8s.io/verticalpodautoscalers", bad)
        assert err.value.causes[0].field == "spec.updatePolicy.updateMode"

        # Installing again changes nothing.
        before = [(await env.crd(n))["metadata"]["resourceVersion"] for n in names]
        await env.controller.install(vpa_crds())
        after = [(await env.crd(n))["metadata"]["resourceVersion"] for n in names]
        assert before == after
        # A changed CRD is updated in place.
        changed = vpa_crds()
        changed[1]["spec"]["names"]["categories"] = ["all"]
        await env.controller.install(changed)
        crd = await env.crd(names[1])
        assert crd["spec"]["names"]["categories"] == ["all"]
        await env.eventually(lambda: kinds.by_key(
            "autoscaling.k8s.io/verticalpodautoscalers").categories == ("all",))
    env.run(scenario)
