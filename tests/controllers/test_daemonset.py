"""The DaemonSet controller against an in-process cluster, in virtual time. Expectations come
from upstream's ``pkg/controller/daemon`` tests (named on each test)."""

from kvert.controllers.daemonset import add_daemon_tolerations, node_affinity_for, should_run, target_node

from .helpers import NS, FakeNodeAgent, eventually, mark_failed, run, template

DS = "apps/daemonsets"


def daemon_set(name: str = "ds", **spec) -> dict:
    labels = {"app": name}
    tpl = template(labels)
    tpl["spec"].update(spec.pop("pod", {}))
    return {"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": name, "namespace": NS},
            "spec": {"selector": {"matchLabels": labels}, "template": tpl, **spec}}


def node(name: str, labels=None, taints=None, unschedulable=False) -> dict:
    spec = {}
    if taints:
        spec["taints"] = taints
    if unschedulable:
        spec["unschedulable"] = True
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels or {}},
            "spec": spec, "status": {"capacity": {"cpu": "4", "memory": "8Gi", "pods": "110"}}}


async def _add_nodes(env, *nodes):
    for n in nodes:
        await env.client.create("nodes", n)


async def _by_node(env, count):
    pods = await env.pods("app=ds")
    nodes = sorted(target_node(p) for p in pods)
    return nodes if len(pods) == count else None


def test_simple_daemon_set_launches_a_pod_on_every_node():
    # TestSimpleDaemonSetLaunchesPods (5 nodes, 5 pods) and the pods' node affinity
    async def scenario(env):
        await _add_nodes(env, *(node(f"node-{i}") for i in range(5)))
        env.start_manager(controllers=["daemonset"])
        ds = await env.client.create(DS, daemon_set())
        placed = await eventually(env, lambda: _by_node(env, 5), what="5 pods")
        assert placed == [f"node-{i}" for i in range(5)]
        pod = (await env.pods("app=ds"))[0]
        assert pod["metadata"]["generateName"] == "ds-"
        assert pod["metadata"]["ownerReferences"][0]["uid"] == ds["metadata"]["uid"]
        assert "nodeName" not in pod["spec"]                 # the scheduler places it
        terms = pod["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
        assert terms["nodeSelectorTerms"][0]["matchFields"][0]["key"] == "metadata.name"
        assert pod["metadata"]["labels"]["controller-revision-hash"]
        status = (await env.get(DS, "ds"))["status"]
        assert status["desiredNumberScheduled"] == 5 and status["currentNumberScheduled"] == 5
        assert status["numberMisscheduled"] == 0 and status["observedGeneration"] == 1

    run(scenario)


def test_node_selector_and_taints_choose_the_nodes():
    # TestNodeSelectorDaemonLaunchesPods, TestTaintedNodeDaemonDoesNotLaunchIntolerantPods,
    # TestTaintedNodeDaemonLaunchesToleratePod
    async def scenario(env):
        taint = [{"key": "dedicated", "value": "db", "effect": "NoSchedule"}]
        await _add_nodes(env, node("a", {"disk": "ssd"}), node("b", {"disk": "ssd"}, taints=taint),
                         node("c", {"disk": "hdd"}))
        env.start_manager(controllers=["daemonset"])
        await env.client.create(DS, daemon_set("ds", pod={"nodeSelector": {"disk": "ssd"}}))
        assert await eventually(env, lambda: _by_node(env, 1), what="one pod") == ["a"]
        await env.client.patch(DS, "ds", {"spec": {"template": {"spec": {"tolerations": [
            {"key": "dedicated", "operator": "Equal", "value": "db", "effect": "NoSchedule"}]}}}},
            namespace=NS)
        assert await eventually(env, lambda: _by_node(env, 2), what="pod on b") == ["a", "b"]

    run(scenario)


def test_nodes_added_relabelled_and_removed():
    # TestAddNode, TestNodeDaemonLaunchesPodsOnLabelChange (updateNode), deleteNode
    async def scenario(env):
        await _add_nodes(env, node("a", {"role": "x"}))
        env.start_manager(controllers=["daemonset"])
        await env.client.create(DS, daemon_set("ds", pod={"nodeSelector": {"role": "x"}}))
        await eventually(env, lambda: _by_node(env, 1), what="pod on a")
        await _add_nodes(env, node("b"))
        await env.clock.sleep(2)
        assert await _by_node(env, 1) == ["a"]
        await env.client.patch("nodes", "b", {"metadata": {"labels": {"role": "x"}}})
        assert await eventually(env, lambda: _by_node(env, 2), what="pod on b") == ["a", "b"]
        await env.client.patch("nodes", "a", {"metadata": {"labels": {"role": "y"}}})
        assert await eventually(env, lambda: _by_node(env, 1), what="a's pod gone") == ["b"]
        status = (await env.get(DS, "ds"))["status"]
        assert status["desiredNumberScheduled"] == 1

    run(scenario)


def test_daemon_pods_tolerate_node_problems():
    # TestNotReadyNodeDaemonDoesLaunchPod, TestUnschedulableNodeDaemonDoesLaunchPod,
    # TestTaintPressureNodeDaemonLaunchesPod; network-unavailable only with hostNetwork
    spec = {}
    add_daemon_tolerations(spec)
    keys = {(t["key"], t["effect"]) for t in spec["tolerations"]}
    assert keys == {("node.kubernetes.io/not-ready", "NoExecute"), ("node.kubernetes.io/unreachable", "NoExecute"),
                    ("node.kubernetes.io/disk-pressure", "NoSchedule"),
                    ("node.kubernetes.io/memory-pressure", "NoSchedule"),
                    ("node.kubernetes.io/pid-pressure", "NoSchedule"),
                    ("node.kubernetes.io/unschedulable", "NoSchedule")}
    assert all(t["operator"] == "Exists" for t in spec["tolerations"])
    host = {"hostNetwork": True}
    add_daemon_tolerations(host)
    assert ("node.kubernetes.io/network-unavailable", "NoSchedule") in {(t["key"], t["effect"])
                                                                       for t in host["tolerations"]}
    ds = daemon_set()
    for taint in ({"key": "node.kubernetes.io/not-ready", "effect": "NoExecute"},
                  {"key": "node.kubernetes.io/memory-pressure", "effect": "NoSchedule"},
                  {"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}):
        assert should_run(ds, node("n", taints=[taint])) == (True, True)
    assert should_run(ds, node("n", taints=[{"key": "node.kubernetes.io/network-unavailable",
                                             "effect": "NoSchedule"}])) == (False, True)
    # a NoExecute taint the pod does not tolerate: neither run nor keep
    assert should_run(ds, node("n", taints=[{"key": "k", "effect": "NoExecute"}])) == (False, False)


def test_node_affinity_is_replaced_by_the_node_name():
    # TestReplaceDaemonSetPodNodeNameNodeAffinity (util/daemonset_util_test.go)
    affinity = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}]},
        "preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 1, "preference": {}}]}}
    out = node_affinity_for(affinity, "node-1")
    assert out["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"] == {"nodeSelectorTerms": [
        {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["node-1"]}]}]}
    assert out["nodeAffinity"]["preferredDuringSchedulingIgnoredDuringExecution"]
    assert node_affinity_for(None, "n")["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]


def test_a_failed_daemon_pod_is_killed_and_replaced():
    # TestDaemonKillFailedPods
    async def scenario(env):
        await _add_nodes(env, node("a"))
        env.start_manager(controllers=["daemonset"])
        await env.client.create(DS, daemon_set())
        pods = await eventually(env, lambda: env.pods("app=ds"), what="a pod")
        await mark_failed(env, pods[0]["metadata"]["name"])
        fresh = await eventually(env, lambda: _other(env, pods[0]["metadata"]["name"]), what="replacement")
        assert target_node(fresh) == "a"
        events = await env.events("FailedDaemonPod")
        assert events[0]["message"] == (f"Found failed daemon pod {NS}/{pods[0]['metadata']['name']} "
                                        "on node a, will try to kill it")

    run(scenario)


async def _other(env, name):
    pods = [p for p in await env.pods("app=ds") if p["metadata"]["name"] != name]
    return pods[0] if pods else None


def test_rolling_update_replaces_one_node_at_a_time():
    # TestDaemonSetUpdatesPods: maxUnavailable 1 keeps at most one node without an available pod
    async def scenario(env):
        agent = await FakeNodeAgent(env, delay=1).start()
        await _add_nodes(env, *(node(f"n{i}") for i in range(3)))
        env.start_manager(controllers=["daemonset"])
        await env.client.create(DS, daemon_set())
        await eventually(env, lambda: _status(env, numberAvailable=3), what="3 available")
        await env.client.patch(DS, "ds", {"spec": {"template": {"spec": {"containers": [
            {"name": "app", "image": "nginx:1.28"}]}}}}, namespace=NS)
        unavailable_seen = []

        async def done():
            status = (await env.get(DS, "ds")).get("status") or {}
            unavailable_seen.append(status.get("numberUnavailable", 0))
            return status.get("updatedNumberScheduled") == 3 and status.get("numberAvailable") == 3 \
                and status.get("observedGeneration") == 2
        await eventually(env, done, step=0.1, what="updated")
        assert max(unavailable_seen) <= 1
        pods = await env.pods("app=ds")
        assert {p["spec"]["containers"][0]["image"] for p in pods} == {"nginx:1.28"}
        revisions = (await env.client.list("apps/controllerrevisions", namespace=NS))["items"]
        assert sorted(r["revision"] for r in revisions) == [1, 2]
        agent.stop()

    run(scenario)


def test_on_delete_does_not_replace_pods():
    # TestDaemonSetOnDeleteStrategy (OnDelete: pods change only when deleted)
    async def scenario(env):
        await _add_nodes(env, node("a"))
        env.start_manager(controllers=["daemonset"])
        await env.client.create(DS, daemon_set(updateStrategy={"type": "OnDelete"}))
        pods = await eventually(env, lambda: env.pods("app=ds"), what="a pod")
        await env.client.patch(DS, "ds", {"spec": {"template": {"spec": {"containers": [
            {"name": "app", "image": "nginx:1.28"}]}}}}, namespace=NS)
        await eventually(env, lambda: _status(env, observedGeneration=2), what="observed")
        await env.clock.sleep(3)
        assert [p["metadata"]["uid"] for p in await env.pods("app=ds")] == [pods[0]["metadata"]["uid"]]
        status = (await env.get(DS, "ds"))["status"]
        assert status.get("updatedNumberScheduled", 0) == 0

    run(scenario)


async def _status(env, **want):
    ds = await env.get(DS, "ds")
    status = ds.get("status") or {}
    return ds if all(status.get(k) == v for k, v in want.items()) else None


def test_max_surge_starts_the_new_pod_before_the_old_one_goes():
    # TestDaemonSetUpdatesPodsWithMaxSurge: with maxSurge the nodes never lack an available pod
    async def scenario(env):
        agent = await FakeNodeAgent(env, delay=1).start()
        await _add_nodes(env, *(node(f"n{i}") for i in range(2)))
        env.start_manager(controllers=["daemonset"])
        await env.client.create(DS, daemon_set(updateStrategy={
            "type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 0, "maxSurge": 1}}))
        await eventually(env, lambda: _status(env, numberAvailable=2), what="2 available")
        await env.client.patch(DS, "ds", {"spec": {"template": {"spec": {"containers": [
            {"name": "app", "image": "nginx:1.28"}]}}}}, namespace=NS)
        most = 0

        async def done():
            nonlocal most
            most = max(most, len(await env.pods("app=ds")))
            status = (await env.get(DS, "ds")).get("status") or {}
            return status.get("updatedNumberScheduled") == 2 and status.get("numberAvailable") == 2 \
                and status.get("observedGeneration") == 2 and len(await env.pods("app=ds")) == 2
        await eventually(env, done, step=0.1, what="updated")
        assert most == 3                          # one surge pod at a time
        assert {p["spec"]["containers"][0]["image"] for p in await env.pods("app=ds")} == {"nginx:1.28"}
        agent.stop()

    run(scenario)
