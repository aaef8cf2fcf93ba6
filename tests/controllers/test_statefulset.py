"""The StatefulSet controller against an in-process cluster, in virtual time. Expectations come
from upstream's ``pkg/controller/statefulset`` tests (named on each test)."""

from hypothesis import given, strategies as st

from kvert.controllers.statefulset import (identity_matches, new_claims, new_pod, parent_and_ordinal,
                                           retention_owner_refs, storage_matches)

from .helpers import NS, FakeNodeAgent, eventually, mark_failed, run, template

STS = "apps/statefulsets"
PVCS = "persistentvolumeclaims"
REVISIONS = "apps/controllerrevisions"


def stateful_set(name: str, replicas: int, **spec) -> dict:
    labels = {"app": name}
    return {"apiVersion": "apps/v1", "kind": "StatefulSet",
            "metadata": {"name": name, "namespace": NS},
            "spec": {"replicas": replicas, "serviceName": name, "selector": {"matchLabels": labels},
                     "template": template(labels), **spec}}


def claim_template(name: str = "www") -> dict:
    return {"metadata": {"name": name},
            "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}


def _names(pods):
    return [p["metadata"]["name"] for p in pods]


async def _pods(env, count=None):
    pods = await env.pods("app=web")
    return pods if count is None or len(pods) == count else None


async def _ready(env, count):
    pods = await env.pods("app=web")
    ready = [p for p in pods if (p.get("status") or {}).get("phase") == "Running"]
    return pods if len(pods) == count and len(ready) == count else None


def test_ordered_ready_creates_pods_in_order_each_after_the_last_is_ready():
    # TestStatefulSetControl/CreatesPods and TestStatefulSetControlScaleUp (OrderedReady)
    async def scenario(env):
        agent = await FakeNodeAgent(env, delay=5).start()
        env.start_manager(controllers=["statefulset"])
        sts = await env.client.create(STS, stateful_set("web", 3))
        first = await eventually(env, lambda: _pods(env, 1), what="web-0")
        assert _names(first) == ["web-0"]
        await env.clock.sleep(2)                 # web-0 not ready yet: nothing else is made
        assert _names(await env.pods("app=web")) == ["web-0"]
        pods = await eventually(env, lambda: _ready(env, 3), what="3 ready pods")
        assert _names(pods) == ["web-0", "web-1", "web-2"]
        created = sorted(await env.events("SuccessfulCreate"), key=lambda e: e["firstTimestamp"])
        assert [e["message"] for e in created] == [
            f"create Pod web-{i} in StatefulSet web successful" for i in range(3)]
        pod = pods[1]
        assert pod["spec"]["hostname"] == "web-1" and pod["spec"]["subdomain"] == "web"
        labels = pod["metadata"]["labels"]
        assert labels["statefulset.kubernetes.io/pod-name"] == "web-1"
        assert labels["apps.kubernetes.io/pod-index"] == "1"
        assert pod["metadata"]["ownerReferences"][0]["uid"] == sts["metadata"]["uid"]
        assert pod["metadata"]["generateName"] == "web-"
        status = (await eventually(env, lambda: _status(env, readyReplicas=3), what="status"))["status"]
        revision = labels["controller-revision-hash"]
        assert status["replicas"] == 3 and status["currentReplicas"] == 3 and status["updatedReplicas"] == 3
        assert status["currentRevision"] == status["updateRevision"] == revision
        assert status["collisionCount"] == 0 and status["observedGeneration"] == 1
        revisions = (await env.client.list(REVISIONS, namespace=NS))["items"]
        assert [r["metadata"]["name"] for r in revisions] == [revision]
        assert revisions[0]["revision"] == 1
        assert revisions[0]["data"]["spec"]["template"]["$patch"] == "replace"
        agent.stop()

    run(scenario)


async def _status(env, **want):
    sts = await env.get(STS, "web")
    status = sts.get("status") or {}
    return sts if all(status.get(k) == v for k, v in want.items()) else None


def test_scale_down_removes_the_highest_ordinal_first_and_scale_up_reuses_names():
    # TestStatefulSetControl/ScalesDown: pods are terminated in decreasing ordinal order
    async def scenario(env):
        agent = await FakeNodeAgent(env, delay=1).start()
        env.start_manager(controllers=["statefulset"])
        await env.client.create(STS, stateful_set("web", 3))
        await eventually(env, lambda: _ready(env, 3), what="3 ready pods")
        await env.client.patch(STS, "web", {"spec": {"replicas": 1}}, namespace=NS)
        await eventually(env, lambda: _pods(env, 1), what="one pod left")
        deleted = sorted(await env.events("SuccessfulDelete"), key=lambda e: e["firstTimestamp"])
        assert [e["message"] for e in deleted] == [
            "delete Pod web-2 in StatefulSet web successful", "delete Pod web-1 in StatefulSet web successful"]
        assert _names(await env.pods("app=web")) == ["web-0"]
        await env.client.patch(STS, "web", {"spec": {"replicas": 3}}, namespace=NS)
        pods = await eventually(env, lambda: _ready(env, 3), what="back to 3")
        assert _names(pods) == ["web-0", "web-1", "web-2"]
        agent.stop()

    run(scenario)


def test_parallel_creates_every_pod_at_once():
    # TestStatefulSetControl with ParallelPodManagement: no waiting for readiness
    async def scenario(env):
        env.start_manager(controllers=["statefulset"])
        await env.client.create(STS, stateful_set("web", 3, podManagementPolicy="Parallel"))
        pods = await eventually(env, lambda: _pods(env, 3), timeout=5, what="3 pods, none ready")
        assert _names(pods) == ["web-0", "web-1", "web-2"]

    run(scenario)


def test_a_failed_pod_is_deleted_and_recreated_with_its_name():
    # TestStatefulSetControl/RecreatesFailedPod
    async def scenario(env):
        agent = await FakeNodeAgent(env, delay=1).start()
        env.start_manager(controllers=["statefulset"])
        await env.client.create(STS, stateful_set("web", 2))
        before = await eventually(env, lambda: _ready(env, 2), what="2 ready pods")
        await mark_failed(env, "web-1")
        after = await eventually(env, lambda: _fresh(env, "web-1", before[1]["metadata"]["uid"]),
                                 what="web-1 recreated")
        assert after["metadata"]["name"] == "web-1"
        recreating = await env.events("RecreatingFailedPod")
        assert recreating[0]["message"] == f"StatefulSet {NS}/web is recreating failed Pod web-1"
        assert recreating[0]["type"] == "Warning"
        agent.stop()

    run(scenario)


async def _fresh(env, name, old_uid):
    for pod in await env.pods("app=web"):
        if pod["metadata"]["name"] == name and pod["metadata"]["uid"] != old_uid:
            return pod
    return None


def test_claims_are_made_per_ordinal_and_mounted():
    # TestStatefulPodControlCreatesPodsAndClaims / getPersistentVolumeClaims
    async def scenario(env):
        env.start_manager(controllers=["statefulset"])
        spec = {"volumeClaimTemplates": [claim_template()], "podManagementPolicy": "Parallel",
                "persistentVolumeClaimRetentionPolicy": {"whenDeleted": "Delete", "whenScaled": "Retain"}}
        sts = await env.client.create(STS, stateful_set("web", 2, **spec))
        pods = await eventually(env, lambda: _pods(env, 2), what="2 pods")
        claims = (await env.client.list(PVCS, namespace=NS))["items"]
        assert sorted(c["metadata"]["name"] for c in claims) == ["www-web-0", "www-web-1"]
        for c in claims:
            assert c["metadata"]["labels"] == {"app": "web"}
            assert c["status"]["phase"] == "Pending"
            assert c["spec"]["volumeMode"] == "Filesystem"
            assert c["metadata"]["ownerReferences"] == [
                {"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "web", "uid": sts["metadata"]["uid"]}]
        volume = next(v for v in pods[0]["spec"]["volumes"] if v["name"] == "www")
        assert volume["persistentVolumeClaim"] == {"claimName": "www-web-0"}
        messages = {e["message"] for e in await env.events("SuccessfulCreate")}
        assert "create Claim www-web-0 Pod web-0 in StatefulSet web success" in messages

    run(scenario)


def test_retention_policy_owner_references():
    # TestUpdateClaimOwnerRefForSetAndPod: Retain/Retain none; whenScaled Delete: the pod,
    # once its ordinal is out of range; whenDeleted Delete: the set
    sts = stateful_set("web", 1)
    sts["metadata"]["uid"] = "set-uid"
    pod = {"metadata": {"name": "web-3", "namespace": NS, "uid": "pod-uid"}}
    claim = new_claims({**sts, "spec": {**sts["spec"], "volumeClaimTemplates": [claim_template()]}}, 3)[0]

    def refs(when_deleted, when_scaled, replicas):
        s = {**sts, "spec": {**sts["spec"], "replicas": replicas,
                             "persistentVolumeClaimRetentionPolicy": {"whenDeleted": when_deleted,
                                                                      "whenScaled": when_scaled}}}
        return [r["kind"] for r in retention_owner_refs(claim, s, pod)]

    assert refs("Retain", "Retain", 1) == []
    assert refs("Delete", "Retain", 1) == ["StatefulSet"]
    assert refs("Retain", "Delete", 1) == ["Pod"]
    assert refs("Retain", "Delete", 5) == []
    assert refs("Delete", "Delete", 1) == ["Pod"]
    assert refs("Delete", "Delete", 5) == ["StatefulSet"]


def test_identity_and_ordinals():
    # TestIdentityMatches, TestGetParentNameAndOrdinal (stateful_set_utils_test.go)
    assert parent_and_ordinal({"metadata": {"name": "web-12"}}) == ("web", 12)
    assert parent_and_ordinal({"metadata": {"name": "web"}}) == ("", -1)
    sts = stateful_set("web", 3)
    pod = {"metadata": {"name": "web-1", "namespace": NS, "labels": {
        "statefulset.kubernetes.io/pod-name": "web-1", "apps.kubernetes.io/pod-index": "1"}}}
    assert identity_matches(sts, pod)
    pod["metadata"]["namespace"] = "other"
    assert not identity_matches(sts, pod)


def test_rolling_update_replaces_pods_from_the_highest_ordinal_down_to_the_partition():
    # TestStatefulSetControlRollingUpdateWithPartition
    async def scenario(env):
        agent = await FakeNodeAgent(env, delay=1).start()
        env.start_manager(controllers=["statefulset"])
        await env.client.create(STS, stateful_set("web", 3, updateStrategy={
            "type": "RollingUpdate", "rollingUpdate": {"partition": 1}}))
        before = await eventually(env, lambda: _ready(env, 3), what="3 ready pods")
        old_revision = before[0]["metadata"]["labels"]["controller-revision-hash"]
        await env.client.patch(STS, "web", {"spec": {"template": {"spec": {"containers": [
            {"name": "app", "image": "nginx:1.28"}]}}}}, namespace=NS)
        sts = await eventually(env, lambda: _status(env, updatedReplicas=2, readyReplicas=3),
                               what="2 updated")
        pods = await env.pods("app=web")
        images = [p["spec"]["containers"][0]["image"] for p in pods]
        assert images == ["nginx:1.27", "nginx:1.28", "nginx:1.28"]
        status = sts["status"]
        assert status["currentRevision"] == old_revision != status["updateRevision"]
        assert status["currentReplicas"] == 1
        deleted = sorted(await env.events("SuccessfulDelete"), key=lambda e: e["firstTimestamp"])
        assert [e["message"].split()[2] for e in deleted] == ["web-2", "web-1"]
        # partition 0 finishes the rollout: the update revision becomes current
        await env.client.patch(STS, "web", {"spec": {"updateStrategy": {"rollingUpdate": {"partition": 0}}}},
                               namespace=NS)
        done = await eventually(env, lambda: _status(env, updatedReplicas=3, readyReplicas=3,
                                                     currentReplicas=3), what="rollout done")
        assert done["status"]["currentRevision"] == done["status"]["updateRevision"]
        agent.stop()

    run(scenario)


def test_on_delete_keeps_pods_until_they_are_deleted():
    # TestStatefulSetControlOnDeleteUpdate
    async def scenario(env):
        agent = await FakeNodeAgent(env, delay=1).start()
        env.start_manager(controllers=["statefulset"])
        await env.client.create(STS, stateful_set("web", 2, updateStrategy={"type": "OnDelete"}))
        before = await eventually(env, lambda: _ready(env, 2), what="2 ready pods")
        await env.client.patch(STS, "web", {"spec": {"template": {"spec": {"containers": [
            {"name": "app", "image": "nginx:1.28"}]}}}}, namespace=NS)
        await eventually(env, lambda: _status(env, observedGeneration=2), what="observed")
        await env.clock.sleep(5)
        assert [p["metadata"]["uid"] for p in await env.pods("app=web")] == \
            [p["metadata"]["uid"] for p in before]
        await env.client.delete("pods", "web-0", namespace=NS)
        new = await eventually(env, lambda: _fresh(env, "web-0", before[0]["metadata"]["uid"]),
                               what="web-0 again")
        assert new["spec"]["containers"][0]["image"] == "nginx:1.28"
        agent.stop()

    run(scenario)


def test_history_is_limited_to_revision_history_limit():
    # TestStatefulSetControlLimitsHistory
    async def scenario(env):
        env.start_manager(controllers=["statefulset"])
        await env.client.create(STS, stateful_set("web", 0, revisionHistoryLimit=2))
        for i in range(5):
            await env.client.patch(STS, "web", {"spec": {"template": {"spec": {"containers": [
                {"name": "app", "image": f"nginx:1.{i}"}]}}}}, namespace=NS)
            await eventually(env, lambda i=i: _status(env, observedGeneration=i + 2), what="observed")
        revisions = await eventually(env, lambda: _revision_count(env, 4), what="history limited")
        # two old revisions plus the current and update revisions (the same one here)
        assert len(revisions) <= 4

    run(scenario)


async def _revision_count(env, at_most):
    items = (await env.client.list(REVISIONS, namespace=NS))["items"]
    return items if len(items) <= at_most else None


def test_max_unavailable_replaces_that_many_pods_at_once():
    # TestStatefulSetControlRollingUpdateWithMaxUnavailable: maxUnavailable 2 deletes the two
    # highest ordinals together, then the next two once they are back
    async def scenario(env):
        agent = await FakeNodeAgent(env, delay=3).start()
        env.start_manager(controllers=["statefulset"])
        await env.client.create(STS, stateful_set("web", 4, podManagementPolicy="Parallel", updateStrategy={
            "type": "RollingUpdate", "rollingUpdate": {"partition": 0, "maxUnavailable": 2}}))
        await eventually(env, lambda: _ready(env, 4), what="4 ready pods")
        await env.client.patch(STS, "web", {"spec": {"template": {"spec": {"containers": [
            {"name": "app", "image": "nginx:1.28"}]}}}}, namespace=NS)
        await eventually(env, lambda: _status(env, updatedReplicas=4, readyReplicas=4, observedGeneration=2),
                         what="updated")
        deleted = sorted(await env.events("SuccessfulDelete"), key=lambda e: e["firstTimestamp"])
        stamps = {e["message"].split()[2]: e["firstTimestamp"] for e in deleted}
        assert stamps["web-3"] == stamps["web-2"] < stamps["web-1"] == stamps["web-0"]
        agent.stop()

    run(scenario)


def test_parallel_scale_down_deletes_every_condemned_pod_at_once():
    # TestStatefulSetControl/ScalesDown with ParallelPodManagement
    async def scenario(env):
        agent = await FakeNodeAgent(env, delay=1).start()
        env.start_manager(controllers=["statefulset"])
        await env.client.create(STS, stateful_set("web", 4, podManagementPolicy="Parallel"))
        await eventually(env, lambda: _ready(env, 4), what="4 ready pods")
        await env.client.patch(STS, "web", {"spec": {"replicas": 1}}, namespace=NS)
        await eventually(env, lambda: _pods(env, 1), what="one left")
        deleted = await env.events("SuccessfulDelete")
        assert len({e["firstTimestamp"] for e in deleted}) == 1 and len(deleted) == 3
        agent.stop()

    run(scenario)


@given(name=st.from_regex(r"[a-z]([a-z0-9-]{0,20}[a-z0-9])?", fullmatch=True),
       ordinal=st.integers(min_value=0, max_value=10_000),
       claims=st.lists(st.from_regex(r"[a-z]{1,8}", fullmatch=True), unique=True, max_size=3))
def test_a_new_pod_has_the_identity_and_storage_of_its_ordinal(name, ordinal, claims):
    # newStatefulSetPod then identityMatches / storageMatches (TestStatefulPodControl... and
    # TestStorageMatches in stateful_set_utils_test.go)
    sts = stateful_set(name, 1, volumeClaimTemplates=[claim_template(c) for c in claims])
    sts["metadata"]["uid"] = "uid"
    pod = new_pod(sts, sts, f"{name}-rev", ordinal)
    assert pod["metadata"]["name"] == f"{name}-{ordinal}" == pod["spec"]["hostname"]
    assert parent_and_ordinal(pod) == (name, ordinal)
    assert identity_matches(sts, pod) and storage_matches(sts, pod)
    assert sorted(v["persistentVolumeClaim"]["claimName"] for v in pod["spec"].get("volumes", [])) == \
        sorted(f"{c}-{name}-{ordinal}" for c in claims)
