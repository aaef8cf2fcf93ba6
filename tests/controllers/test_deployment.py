"""The Deployment controller (with the ReplicaSet controller and the garbage collector)."""

import asyncio

import pytest

from kvert.client import Informer
from kvert.controllers.deployment import (DeploymentController, compute_hash, equal_ignore_hash,
                                         safe_encode)

from .helpers import (DEPLOY, NS, RS, FakeNodeAgent, deployment, eventually, is_active, is_ready,
                      run)


async def _replica_sets(env, owner_uid=None):
    items = (await env.client.list(RS, namespace=NS))["items"]
    if owner_uid is not None:
        items = [rs for rs in items
                 if any(r["uid"] == owner_uid for r in rs["metadata"].get("ownerReferences") or [])]
    return sorted(items, key=lambda rs: rs["metadata"]["creationTimestamp"])


async def _settled(env, name, replicas):
    d = await env.get(DEPLOY, name)
    s = d.get("status") or {}
    progressing = [c for c in s.get("conditions") or [] if c["type"] == "Progressing"]
    if (s.get("observedGeneration") == d["metadata"]["generation"]
            and s.get("replicas", 0) == replicas and s.get("updatedReplicas", 0) == replicas
            and s.get("availableReplicas", 0) == replicas
            and progressing and progressing[0]["reason"] == "NewReplicaSetAvailable"):
        return d
    return None


def test_hash_and_names():
    t = {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "a", "image": "x"}]}}
    h = compute_hash(t)
    assert h == compute_hash({"spec": t["spec"], "metadata": t["metadata"]})
    assert 1 <= len(h) <= 10 and set(h) <= set("bcdfghjklmnpqrstvwxz2456789")
    assert compute_hash(t, 1) != h
    assert safe_encode("0123456789") == "456789bcdf"   # digits map to 4-9, b, c, d, f
    labelled = {"metadata": {"labels": {"app": "web", "pod-template-hash": h}}, "spec": t["spec"]}
    assert equal_ignore_hash(t, labelled)
    assert not equal_ignore_hash(t, {"metadata": t["metadata"], "spec": {"containers": []}})


def _template(labels, image="nginx:1.0"):
    return {"metadata": {"labels": dict(labels)}, "spec": {"containers": [{"name": "c", "image": image}]}}


@pytest.mark.parametrize("a_labels, b_labels, same_spec, equal", [
    # upstream's TestEqualIgnoreHash (pkg/controller/deployment/util/deployment_util_test.go)
    ({"foo": "bar", "pod-template-hash": "value-1"}, {"foo": "bar", "pod-template-hash": "value-1"}, True, True),
    ({"foo": "bar", "pod-template-hash": "value-1"}, {"foo": "bar", "pod-template-hash": "value-2"}, True, True),
    ({"foo": "bar"}, {"foo": "bar", "pod-template-hash": "value-2"}, True, True),
    ({"foo1": "bar", "pod-template-hash": "value-1"}, {"foo2": "bar"}, True, False),
    ({"foo2": "bar"}, {"foo1": "bar", "pod-template-hash": "value-1"}, True, False),
    ({"foo1": "bar", "pod-template-hash": "value-1"}, {"foo2": "bar", "pod-template-hash": "value-1"}, True, False),
    ({"foo": "bar", "pod-template-hash": "value-1"}, {"foo": "bar", "pod-template-hash": "value-1"}, False, False),
    ({"foo": "bar", "pod-template-hash": "value-1"}, {"foo": "bar", "pod-template-hash": "value-2"}, False, False),
    ({"foo": "bar"}, {"foo": "bar", "pod-template-hash": "value-2"}, False, False),
    ({"foo1": "bar", "pod-template-hash": "value-1"}, {"foo2": "bar"}, False, False),
])
def test_equal_ignore_hash_as_upstream(a_labels, b_labels, same_spec, equal):
    a = _template(a_labels)
    b = _template(b_labels, "nginx:1.0" if same_spec else "nginx:1.1")
    before = (repr(a), repr(b))
    assert equal_ignore_hash(a, b) is equal
    assert equal_ignore_hash(b, a) is equal
    assert (repr(a), repr(b)) == before          # neither template is changed


def test_equal_ignore_hash_takes_empty_and_absent_fields_alike():
    # Go's semantic equality: an empty list or map equals an absent one
    a = _template({"app": "web", "pod-template-hash": "h1"})
    b = _template({"app": "web"})
    b["spec"]["volumes"] = []
    b["spec"]["containers"][0]["env"] = []
    assert equal_ignore_hash(a, b)
    b["spec"]["containers"][0]["env"] = [{"name": "X", "value": "1"}]
    assert not equal_ignore_hash(a, b)


def test_deployment_creates_a_hashed_replica_set_and_reports_status():
    async def scenario(env):
        agent = await FakeNodeAgent(env, delay=2.0).start()
        env.start_manager()
        d = await env.client.create(DEPLOY, deployment("web", 3))
        settled = await eventually(env, lambda: _settled(env, "web", 3), what="rollout")
        sets = await _replica_sets(env)
        assert len(sets) == 1
        rs = sets[0]
        h = rs["metadata"]["labels"]["pod-template-hash"]
        assert rs["metadata"]["name"] == f"web-{h}"
        assert h == compute_hash(d["spec"]["template"])
        assert rs["spec"]["selector"]["matchLabels"] == {"app": "web", "pod-template-hash": h}
        assert rs["spec"]["template"]["metadata"]["labels"] == {"app": "web", "pod-template-hash": h}
        assert rs["metadata"]["ownerReferences"] == [
            {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web",
             "uid": d["metadata"]["uid"], "controller": True, "blockOwnerDeletion": True}]
        annotations = rs["metadata"]["annotations"]
        assert annotations["deployment.kubernetes.io/revision"] == "1"
        assert annotations["deployment.kubernetes.io/desired-replicas"] == "3"
        assert annotations["deployment.kubernetes.io/max-replicas"] == "4"   # 25% surge, rounded up
        pods = await env.pods("app=web")
        assert len(pods) == 3
        assert all(p["metadata"]["labels"]["pod-template-hash"] == h for p in pods)
        assert all(p["metadata"]["name"].startswith(f"web-{h}-") for p in pods)

        assert settled["metadata"]["annotations"]["deployment.kubernetes.io/revision"] == "1"
        s = settled["status"]
        counts = (s["replicas"], s["updatedReplicas"], s["readyReplicas"], s["availableReplicas"])
        assert counts == (3, 3, 3, 3)
        assert "unavailableReplicas" not in s
        conditions = {c["type"]: c for c in s["conditions"]}
        assert conditions["Available"]["status"] == "True"
        assert conditions["Available"]["reason"] == "MinimumReplicasAvailable"
        assert conditions["Available"]["message"] == "Deployment has minimum availability."
        assert conditions["Progressing"]["status"] == "True"
        assert conditions["Progressing"]["reason"] == "NewReplicaSetAvailable"
        assert conditions["Progressing"]["message"] == f'ReplicaSet "web-{h}" has successfully progressed.'
        for c in conditions.values():
            assert c["lastUpdateTime"] and c["lastTransitionTime"]
        events = await env.events("ScalingReplicaSet")
        assert [e["message"] for e in events] == [f"Scaled up replica set web-{h} from 0 to 3"]
        assert events[0]["involvedObject"]["kind"] == "Deployment"
        assert events[0]["source"]["component"] == "deployment-controller"
        agent.stop()

    run(scenario)


class Watcher:
    """Checks, at every pod event, how many pods of the app exist and how many are ready."""

    def __init__(self, env, app):
        self.app = app
        self.informer = Informer(env.client, "pods", clock=env.clock, label_selector=f"app={app}")
        self.informer.add_handlers(self._check, lambda old, new: self._check(new), self._check)
        self.armed = False
        self.max_active = 0
        self.min_available = None
        self.mixed = False        # old and new pods active at once
        self.steps = 0

    def _check(self, _pod):
        pods = [p for p in self.informer.list() if is_active(p)]
        if not self.armed:
            return
        self.steps += 1
        self.max_active = max(self.max_active, len(pods))
        available = sum(1 for p in pods if is_ready(p))
        self.min_available = available if self.min_available is None else min(self.min_available, available)
        hashes = {p["metadata"]["labels"].get("pod-template-hash") for p in pods}
        if len(hashes) > 1:
            self.mixed = True

    async def start(self):
        self.task = asyncio.ensure_future(self.informer.run())
        await self.informer.wait_synced()
        return self

    def stop(self):
        self.informer.stop()
        self.task.cancel()


@pytest.mark.parametrize("replicas,surge,unavailable,expect_surge,expect_unavailable", [
    (4, 1, 1, 1, 1),
    (4, 1, 0, 1, 0),
    (5, 0, 2, 0, 2),
    (10, "25%", "25%", 3, 2),
    (3, "30%", "30%", 1, 0),
])
def test_rolling_update_respects_max_surge_and_max_unavailable(replicas, surge, unavailable,
                                                               expect_surge, expect_unavailable):
    async def scenario(env):
        agent = await FakeNodeAgent(env, delay=3.0).start()
        env.start_manager()
        strategy = {"type": "RollingUpdate",
                    "rollingUpdate": {"maxSurge": surge, "maxUnavailable": unavailable}}
        await env.client.create(DEPLOY, deployment("web", replicas, strategy=strategy))
        await eventually(env, lambda: _settled(env, "web", replicas), what="first rollout")
        first = await _replica_sets(env)
        watcher = await Watcher(env, "web").start()
        watcher.armed = True
        await env.client.patch(DEPLOY, "web", {"spec": {"template": {"spec": {"containers": [
            {"name": "app", "image": "nginx:1.28"}]}}}}, namespace=NS)
        d = await eventually(env, lambda: _settled(env, "web", replicas), timeout=600,
                             what="second rollout")
        await env.clock.sleep(10)
        watcher.stop()
        agent.stop()
        assert watcher.steps > replicas
        assert watcher.max_active <= replicas + expect_surge
        assert watcher.min_available >= replicas - expect_unavailable
        assert watcher.max_active == replicas + expect_surge or expect_surge == 0
        assert watcher.mixed                      # it rolled: old and new pods side by side

        sets = await _replica_sets(env)
        assert len(sets) == 2
        old, new = sets
        assert old["metadata"]["name"] == first[0]["metadata"]["name"]
        assert old["spec"]["replicas"] == 0 and new["spec"]["replicas"] == replicas
        assert new["metadata"]["annotations"]["deployment.kubernetes.io/revision"] == "2"
        assert d["metadata"]["annotations"]["deployment.kubernetes.io/revision"] == "2"
        pods = await env.pods("app=web")
        assert len(pods) == replicas
        assert {p["metadata"]["labels"]["pod-template-hash"] for p in pods} == \
            {new["metadata"]["labels"]["pod-template-hash"]}
        assert all(p["spec"]["containers"][0]["image"] == "nginx:1.28" for p in pods)
        messages = [e["message"] for e in await env.events("ScalingReplicaSet")]
        assert any(m.startswith(f"Scaled up replica set {new['metadata']['name']} from ") for m in messages)
        old_name = old["metadata"]["name"]
        downs = [m for m in messages if m.startswith(f"Scaled down replica set {old_name} from ")]
        assert downs and downs[-1].endswith(" to 0")

    run(scenario)


def test_recreate_stops_every_old_pod_before_starting_new_ones():
    async def scenario(env):
        agent = await FakeNodeAgent(env, delay=2.0).start()
        env.start_manager()
        await env.client.create(DEPLOY, deployment("web", 3, strategy={"type": "Recreate"}))
        await eventually(env, lambda: _settled(env, "web", 3), what="first rollout")
        watcher = await Watcher(env, "web").start()
        watcher.armed = True
        await env.client.patch(DEPLOY, "web", {"spec": {"template": {"metadata": {
            "annotations": {"restartedAt": "now"}}}}}, namespace=NS)
        await eventually(env, lambda: _settled(env, "web", 3), timeout=300, what="recreate")
        watcher.stop()
        agent.stop()
        assert not watcher.mixed
        assert watcher.min_available == 0
        assert watcher.max_active == 3
        old, new = await _replica_sets(env)
        messages = [e["message"] for e in await env.events("ScalingReplicaSet")]
        assert f"Scaled down replica set {old['metadata']['name']} from 3 to 0" in messages
        assert f"Scaled up replica set {new['metadata']['name']} from 0 to 3" in messages
        assert messages.index(f"Scaled down replica set {old['metadata']['name']} from 3 to 0") < \
            messages.index(f"Scaled up replica set {new['metadata']['name']} from 0 to 3")

    run(scenario)


def test_progress_and_availability_conditions_during_a_rollout():
    async def scenario(env):
        agent = await FakeNodeAgent(env, delay=2.0).start()
        env.start_manager()
        await env.client.create(DEPLOY, deployment("web", 2, progressDeadlineSeconds=60))
        await eventually(env, lambda: _settled(env, "web", 2), what="rollout")
        agent.enabled = False          # the new pods never become ready
        await env.client.patch(DEPLOY, "web", {"spec": {"template": {"spec": {"containers": [
            {"name": "app", "image": "broken:1"}]}}}}, namespace=NS)

        async def condition(reason):
            d = await env.get(DEPLOY, "web")
            found = [c for c in d["status"].get("conditions") or []
                     if c["type"] == "Progressing" and c["reason"] == reason]
            return found and (d, found[0])
        d, c = await eventually(env, lambda: condition("ReplicaSetUpdated"), what="progressing")
        assert c["status"] == "True" and c["message"].endswith("is progressing.")
        d, c = await eventually(env, lambda: condition("ProgressDeadlineExceeded"), timeout=300,
                                what="timed out")
        assert c["status"] == "False" and c["message"].endswith("has timed out progressing.")
        available = [x for x in d["status"]["conditions"] if x["type"] == "Available"][0]
        assert available["status"] == "True"      # 2 old pods, maxUnavailable 0 -> still available
        assert d["status"]["unavailableReplicas"] == 1
        agent.enabled = True
        await eventually(env, lambda: _settled(env, "web", 2), timeout=120, what="recovered")
        agent.stop()

    run(scenario)


def test_scaling_a_deployment_through_its_scale_subresource():
    async def scenario(env):
        agent = await FakeNodeAgent(env, delay=1.0).start()
        env.start_manager()
        await env.client.create(DEPLOY, deployment("web", 2))
        await eventually(env, lambda: _settled(env, "web", 2), what="rollout")
        scale = env.registry.get_scale(DEPLOY, "web", NS)
        scale["spec"]["replicas"] = 5
        await env.registry.update_scale(DEPLOY, "web", scale, namespace=NS)
        await eventually(env, lambda: _settled(env, "web", 5), what="scaled up")
        (rs,) = await _replica_sets(env)
        assert rs["spec"]["replicas"] == 5
        assert rs["metadata"]["annotations"]["deployment.kubernetes.io/desired-replicas"] == "5"
        scale = env.registry.get_scale(DEPLOY, "web", NS)
        assert scale["status"]["replicas"] == 5
        scale["spec"]["replicas"] = 1
        await env.registry.update_scale(DEPLOY, "web", scale, namespace=NS)
        await eventually(env, lambda: _settled(env, "web", 1), what="scaled down")
        assert len(await env.pods("app=web")) == 1
        messages = [e["message"] for e in await env.events("ScalingReplicaSet")]
        name = rs["metadata"]["name"]
        assert messages == [f"Scaled up replica set {name} from 0 to 2",
                            f"Scaled up replica set {name} from 2 to 5",
                            f"Scaled down replica set {name} from 5 to 1"]
        agent.stop()

    run(scenario)


def test_deleting_a_deployment_deletes_its_replica_sets_and_pods():
    async def scenario(env):
        env.start_manager()
        await env.client.create(DEPLOY, deployment("web", 3))
        await env.client.create(DEPLOY, deployment("other", 1))
        await eventually(env, lambda: _count_pods(env, "app=web", 3), what="pods")
        await env.client.delete(DEPLOY, "web", namespace=NS)

        async def gone():
            sets = [rs for rs in await _replica_sets(env) if rs["metadata"]["name"].startswith("web-")]
            pods = await env.pods("app=web", active_only=False)
            return not sets and not pods
        await eventually(env, gone, what="garbage collection")
        assert len(await env.pods("app=other")) == 1
        assert len(await _replica_sets(env)) == 1

    run(scenario)


async def _count_pods(env, selector, n):
    return len(await env.pods(selector)) == n


def test_restarting_the_controllers_changes_nothing():
    async def scenario(env):
        agent = await FakeNodeAgent(env, delay=1.0).start()
        manager = env.start_manager()
        await env.client.create(DEPLOY, deployment("web", 3))
        await eventually(env, lambda: _settled(env, "web", 3), what="rollout")
        pods = {p["metadata"]["uid"] for p in await env.pods("app=web")}
        sets = await _replica_sets(env)
        # a rollout in flight when the manager dies
        await env.client.patch(DEPLOY, "web", {"spec": {"template": {"spec": {"containers": [
            {"name": "app", "image": "nginx:2"}]}}}}, namespace=NS)
        await env.clock.sleep(0.01)
        await env.stop_manager(manager)
        await env.clock.sleep(5)
        env.start_manager()
        await eventually(env, lambda: _settled(env, "web", 3), timeout=300, what="resumed rollout")
        after = await _replica_sets(env)
        assert len(after) == 2 and after[0]["metadata"]["uid"] == sets[0]["metadata"]["uid"]
        revision_two = {p["metadata"]["uid"] for p in await env.pods("app=web")}
        assert not (revision_two & pods)
        # and a restart of a settled deployment changes nothing at all
        rv = (await env.get(DEPLOY, "web"))["metadata"]["resourceVersion"]
        created = len(await env.events("SuccessfulCreate"))
        for m, _ in list(env._managers):
            await env.stop_manager(m)
        env.start_manager()
        await env.clock.sleep(60)
        assert {p["metadata"]["uid"] for p in await env.pods("app=web")} == revision_two
        assert (await env.get(DEPLOY, "web"))["metadata"]["resourceVersion"] == rv
        assert len(await env.events("SuccessfulCreate")) == created
        agent.stop()

    run(scenario)


def _image(image):
    return {"spec": {"template": {"spec": {"containers": [{"name": "app", "image": image}]}}}}


def test_pause_resume_rollback_and_revision_history_limit():
    async def scenario(env):
        agent = await FakeNodeAgent(env, delay=1.0).start()
        env.start_manager()
        await env.client.create(DEPLOY, deployment("web", 2, revisionHistoryLimit=1))
        await eventually(env, lambda: _settled(env, "web", 2), what="v1")
        (v1,) = await _replica_sets(env)

        await env.client.patch(DEPLOY, "web", {"spec": {"paused": True}}, namespace=NS)
        await env.client.patch(DEPLOY, "web", _image("nginx:2"), namespace=NS)

        async def paused():
            d = await env.get(DEPLOY, "web")
            c = [c for c in d["status"].get("conditions") or [] if c["type"] == "Progressing"]
            return c and c[0]["reason"] == "DeploymentPaused" and c[0]["status"] == "Unknown"
        await eventually(env, paused, what="paused condition")
        await env.clock.sleep(30)
        assert len(await _replica_sets(env)) == 1           # paused: no rollout

        await env.client.patch(DEPLOY, "web", {"spec": {"paused": False}}, namespace=NS)
        d = await eventually(env, lambda: _settled(env, "web", 2), what="v2")
        assert d["metadata"]["annotations"]["deployment.kubernetes.io/revision"] == "2"

        # roll back to v1's template: v1's ReplicaSet is reused as revision 3
        await env.client.patch(DEPLOY, "web", _image("nginx:1.27"), namespace=NS)

        async def back():
            d = await _settled(env, "web", 2)
            return d and d["metadata"]["annotations"]["deployment.kubernetes.io/revision"] == "3" and d
        await eventually(env, back, what="rollback")
        sets = await _replica_sets(env)
        reused = [rs for rs in sets if rs["metadata"]["uid"] == v1["metadata"]["uid"]][0]
        annotations = reused["metadata"]["annotations"]
        assert annotations["deployment.kubernetes.io/revision"] == "3"
        assert annotations["deployment.kubernetes.io/revision-history"] == "1"
        assert reused["spec"]["replicas"] == 2

        # a third template: revisionHistoryLimit 1 keeps only one old ReplicaSet
        await env.client.patch(DEPLOY, "web", _image("nginx:3"), namespace=NS)

        async def trimmed():
            d = await _settled(env, "web", 2)
            return d and len(await _replica_sets(env)) == 2 and d
        await eventually(env, trimmed, what="history limit")
        names = {rs["metadata"]["name"] for rs in await _replica_sets(env)}
        assert reused["metadata"]["name"] in names       # the newest old one stays
        agent.stop()

    run(scenario)


def test_a_deployment_adopts_a_matching_orphan_replica_set():
    async def scenario(env):
        env.start_manager()
        d = deployment("web", 2)
        h = compute_hash(d["spec"]["template"])
        labels = {"app": "web", "pod-template-hash": h}
        orphan = {"apiVersion": "apps/v1", "kind": "ReplicaSet",
                  "metadata": {"name": f"web-{h}", "namespace": NS, "labels": labels},
                  "spec": {"replicas": 2, "selector": {"matchLabels": labels},
                           "template": {"metadata": {"labels": labels},
                                        "spec": d["spec"]["template"]["spec"]}}}
        await env.client.create(RS, orphan)
        await eventually(env, lambda: _count_pods(env, "app=web", 2), what="orphan's pods")
        created = await env.client.create(DEPLOY, d)

        async def adopted():
            rs = await env.get(RS, f"web-{h}")
            refs = rs["metadata"].get("ownerReferences") or []
            return refs and refs[0]["uid"] == created["metadata"]["uid"]
        await eventually(env, adopted, what="adoption")
        await env.clock.sleep(10)
        assert len(await _replica_sets(env)) == 1
        assert len(await env.pods("app=web")) == 2

    run(scenario)


def _count_syncs(monkeypatch):
    counts: dict[str, int] = {}
    original = DeploymentController.sync

    async def counting(self, key):
        counts[key] = counts.get(key, 0) + 1
        return await original(self, key)
    monkeypatch.setattr(DeploymentController, "sync", counting)
    return counts


def test_a_stuck_deployment_is_synced_a_bounded_number_of_times(monkeypatch):
    # requeueStuckDeployment (TestRequeueStuckDeployment in pkg/controller/deployment/
    # progress_test.go): a rollout whose pods never become ready is checked again once its
    # progress deadline passes, then reports ProgressDeadlineExceeded and is left alone.
    counts = _count_syncs(monkeypatch)

    async def scenario(env):
        env.start_manager()
        d = deployment("web", 3)
        d["spec"]["progressDeadlineSeconds"] = 60
        await env.client.create(DEPLOY, d)
        await env.clock.sleep(3600)
        status = (await env.get(DEPLOY, "web"))["status"]
        progressing = [c for c in status["conditions"] if c["type"] == "Progressing"]
        assert progressing[0]["reason"] == "ProgressDeadlineExceeded"
        assert counts[f"{NS}/web"] <= 20

    run(scenario)


def test_a_completed_deployment_that_loses_a_ready_pod_is_not_resynced_in_a_loop(monkeypatch):
    # The rollout completed (Progressing: NewReplicaSetAvailable), then a pod turned unready:
    # no deadline runs, so nothing but events syncs the Deployment again (upstream requeues it
    # rate-limited at once, to no effect: see docs/kubernetes-choices.md).
    counts = _count_syncs(monkeypatch)

    async def scenario(env):
        agent = await FakeNodeAgent(env, delay=2.0).start()
        env.start_manager()
        await env.client.create(DEPLOY, deployment("web", 3))
        await eventually(env, lambda: _settled(env, "web", 3), what="rollout")
        pod = (await env.pods("app=web"))[0]
        pod["status"]["conditions"] = [dict(c, status="False") if c["type"] == "Ready" else c
                                       for c in pod["status"]["conditions"]]
        await env.client.update_status("pods", pod)
        before = counts[f"{NS}/web"]
        await env.clock.sleep(3600)
        status = (await env.get(DEPLOY, "web"))["status"]
        assert status["availableReplicas"] == 2
        assert counts[f"{NS}/web"] - before <= 10
        agent.stop()

    run(scenario)
