"""The scheduler end to end on the in-process cluster, in virtual time."""

import asyncio
import json

from kvert.scheduler import Scheduler
from kvert.scheduler.explain import ANNOTATION

from .helpers import Cluster, condition, node, pod

CP_TAINT = {"key": "node-role.kubernetes.io/control-plane", "effect": "NoSchedule"}


async def start(c: Cluster, config=None, **kw) -> tuple[Scheduler, asyncio.Task]:
    s = Scheduler(c.client, c.clock, config, seed=11, **kw)
    task = asyncio.ensure_future(s.run())
    await s.synced.wait()
    return s, task


async def stop(s: Scheduler, task: asyncio.Task) -> None:
    await s.wait_idle()
    s.stop()
    await task


def explanation(p: dict) -> dict:
    return json.loads(p["metadata"]["annotations"][ANNOTATION])


def test_pods_are_bound_with_events_conditions_and_explanations():
    c = Cluster()

    async def main():
        for n in (node("n1", cpu="4"), node("n2", cpu="2"), node("cp", taints=[CP_TAINT])):
            await c.create_node(n)
        s, task = await start(c)
        for i in range(4):
            await c.create_pod(pod(f"web-{i}", cpu="500m", memory="256Mi"))
        await c.settle()
        pods = [await c.get_pod(f"web-{i}") for i in range(4)]
        events = {p["metadata"]["name"]: await c.events(p["metadata"]["name"]) for p in pods}
        await stop(s, task)
        return pods, events, s

    pods, events, s = c.run(main)
    assert all(p["spec"]["nodeName"] in ("n1", "n2") for p in pods)
    assert s.stats.scheduled == 4 and s.stats.unschedulable == 0
    for p in pods:
        name, target = p["metadata"]["name"], p["spec"]["nodeName"]
        assert condition(p)["status"] == "True"
        [ev] = events[name]
        assert (ev["type"], ev["reason"], ev["message"]) == (
            "Normal", "Scheduled", f"Successfully assigned default/{name} to {target}")
        assert ev["source"]["component"] == "default-scheduler"
        ex = explanation(p)
        assert ex["result"] == "Scheduled" and ex["node"] == target
        assert ex["nodes"] == {"total": 3, "evaluated": 3, "feasible": 2}
        assert ex["filtered"] == {"cp": ["node(s) had untolerated taint(s)"]}
        assert ex["details"]["cp"] == \
            "untolerated taint node-role.kubernetes.io/control-plane:NoSchedule"
        assert {"TaintToleration": 3, "NodeResourcesFit": 1,
                "NodeResourcesBalancedAllocation": 1}.items() <= ex["weights"].items()
        best = next(iter(ex["scores"]))
        assert best == target
        assert ex["totals"][best] == sum(ex["scores"][best][k] * w for k, w in ex["weights"].items())


def test_unschedulable_pod_reports_failed_scheduling_then_fits_a_new_node():
    c = Cluster()
    # the worker's 2 cpus could never hold 3: preemption is not tried anywhere
    message = ("0/3 nodes are available: 1 Insufficient cpu, 2 node(s) had untolerated taint(s). "
               "preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling.")

    async def main():
        for n in (node("cp-1", taints=[CP_TAINT]), node("cp-2", taints=[CP_TAINT]),
                  node("worker", cpu="2")):
            await c.create_node(n)
        s, task = await start(c)
        await c.create_pod(pod("big", cpu="3"))
        await c.settle(60)
        pending = await c.get_pod("big")
        events = await c.events("big")
        attempts = s.stats.attempts
        await c.create_node(node("large", cpu="8"))
        await c.settle(2)
        placed = await c.get_pod("big")
        later = await c.events("big")
        await stop(s, task)
        return pending, events, attempts, placed, later

    pending, events, attempts, placed, later = c.run(main)
    assert "nodeName" not in pending["spec"]
    cond = condition(pending)
    assert (cond["status"], cond["reason"], cond["message"]) == ("False", "Unschedulable", message)
    [ev] = events
    assert (ev["type"], ev["reason"], ev["message"]) == ("Warning", "FailedScheduling", message)
    # nothing the pod's own status or explanation writes changes makes it retry in a loop
    assert attempts == 1
    ex = explanation(pending)
    assert ex["result"] == "Unschedulable" and ex["message"] == message
    assert ex["filtered"] == {"cp-1": ["node(s) had untolerated taint(s)"],
                              "cp-2": ["node(s) had untolerated taint(s)"],
                              "worker": ["Insufficient cpu"]}
    assert ex["details"]["worker"] == "cpu: requested 3000, used 0, allocatable 2000"
    # the new node is a cluster event the Fit plugin registered: the pod is retried and bound
    assert placed["spec"]["nodeName"] == "large"
    assert condition(placed)["status"] == "True"
    assert [e["reason"] for e in sorted(later, key=lambda e: e["firstTimestamp"])] == \
        ["FailedScheduling", "Scheduled"]
    assert explanation(placed)["result"] == "Scheduled"


def test_deleting_a_bound_pod_lets_a_pending_pod_in():
    c = Cluster()

    async def main():
        await c.create_node(node("only", cpu="1"))
        s, task = await start(c)
        await c.create_pod(pod("first", cpu="800m"))
        await c.settle()
        await c.create_pod(pod("second", cpu="800m"))
        await c.settle(5)
        waiting = await c.get_pod("second")
        await c.client.delete("pods", "first", namespace="default", grace_period_seconds=0)
        await c.settle(2)
        second = await c.get_pod("second")
        await stop(s, task)
        return waiting, second

    waiting, second = c.run(main)
    assert "nodeName" not in waiting["spec"]
    assert condition(waiting)["message"] == (
        "0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are available: "
        "1 No preemption victims found for incoming pod.")
    assert second["spec"]["nodeName"] == "only"


def test_pending_resize_counts_at_max_of_spec_and_allocated():
    c = Cluster()

    async def main():
        await c.create_node(node("n", cpu="4"))
        running = pod("running", cpu="1", node_name="n")
        created = await c.create_pod(running)
        created["status"] = {**created["status"], "phase": "Running", "containerStatuses": [{
            "name": "app", "ready": True, "restartCount": 0, "image": "x", "imageID": "",
            "state": {"running": {"startedAt": "2026-01-01T00:00:00Z"}},
            "allocatedResources": {"cpu": "1"}, "resources": {"requests": {"cpu": "1"}}}]}
        await c.client.update_status("pods", created)
        s, task = await start(c)
        # resize up to 3 cpu: pending until the node agent decides, so 3 cpu count
        await c.client.resize("default", "running", {"spec": {"containers": [
            {"name": "app", "resources": {"requests": {"cpu": "3"}}}]}})
        await c.settle()
        row = s.cache.row_of["n"]
        counted = int(s.cache.req[row, s.cache.col("cpu")])
        await c.create_pod(pod("newcomer", cpu="1500m"))
        await c.settle(5)
        blocked = await c.get_pod("newcomer")
        # the node agent finds the resize infeasible: only the allocated 1 cpu counts now,
        # a scale-down the Fit plugin registered -> the newcomer is retried and fits
        cur = await c.get_pod("running")
        cur["status"]["conditions"] = cur["status"].get("conditions", []) + [{
            "type": "PodResizePending", "status": "True", "reason": "Infeasible",
            "message": "Node didn't have enough capacity"}]
        await c.client.update_status("pods", cur)
        await c.settle(2)
        after = int(s.cache.req[row, s.cache.col("cpu")])
        placed = await c.get_pod("newcomer")
        await stop(s, task)
        return counted, blocked, after, placed

    counted, blocked, after, placed = c.run(main)
    assert counted == 3000
    assert "nodeName" not in blocked["spec"]
    assert condition(blocked)["message"] == (
        "0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are available: "
        "1 No preemption victims found for incoming pod.")
    assert placed["spec"]["nodeName"] == "n"
    assert after == 1000 + 1500


def test_scheduling_gates_and_other_schedulers():
    c = Cluster()
    config = {"profiles": [{"schedulerName": "default-scheduler"},
                           {"schedulerName": "bin-packer", "pluginConfig": [{
                               "name": "NodeResourcesFit", "args": {"scoringStrategy": {
                                   "type": "MostAllocated"}}}]}]}

    async def main():
        await c.create_node(node("a", cpu="8"))
        await c.create_node(node("b", cpu="8"))
        s, task = await start(c, config)
        await c.create_pod(pod("gated", schedulingGates=[{"name": "example.com/foo"}]))
        await c.create_pod(pod("other", schedulerName="someone-else"))
        await c.create_pod(pod("packed-1", cpu="1", schedulerName="bin-packer"))
        await c.settle()
        packed_first = (await c.get_pod("packed-1"))["spec"]["nodeName"]
        await c.create_pod(pod("packed-2", cpu="1", schedulerName="bin-packer"))
        await c.settle()
        gated = await c.get_pod("gated")
        gated_events = await c.events("gated")
        ungated = dict(gated)
        ungated["spec"] = {k: v for k, v in gated["spec"].items() if k != "schedulingGates"}
        await c.client.update("pods", ungated)
        await c.settle()
        result = {n: (await c.get_pod(n))["spec"].get("nodeName")
                  for n in ("gated", "other", "packed-2")}
        packed_events = await c.events("packed-1")
        await stop(s, task)
        return packed_first, gated, gated_events, result, packed_events

    packed_first, gated, gated_events, result, packed_events = c.run(main)
    assert "nodeName" not in gated["spec"] and gated_events == []
    assert result["gated"] in ("a", "b")
    assert result["other"] is None
    # MostAllocated packs the second pod next to the first
    assert result["packed-2"] == packed_first
    assert packed_events[0]["source"]["component"] == "bin-packer"


def test_a_restarted_scheduler_counts_bound_pods():
    c = Cluster()

    async def main():
        await c.create_node(node("n", cpu="2"))
        s, task = await start(c)
        await c.create_pod(pod("one", cpu="1500m"))
        await c.settle()
        await stop(s, task)
        s2, task2 = await start(c)
        await c.create_pod(pod("two", cpu="1"))
        await c.settle(2)
        two = await c.get_pod("two")
        await stop(s2, task2)
        return two

    two = c.run(main)
    assert "nodeName" not in two["spec"]
    assert condition(two)["reason"] == "Unschedulable"


def test_no_nodes_then_a_node_arrives():
    c = Cluster()

    async def main():
        s, task = await start(c)
        await c.create_pod(pod("early", cpu="100m"))
        await c.settle(3)
        waiting = await c.get_pod("early")
        await c.create_node(node("first"))
        await c.settle(2)
        placed = await c.get_pod("early")
        await stop(s, task)
        return waiting, placed

    waiting, placed = c.run(main)
    assert condition(waiting)["message"] == "no nodes available to schedule pods"
    assert condition(waiting)["reason"] == "Unschedulable"
    assert placed["spec"]["nodeName"] == "first"


def test_no_node_is_overcommitted_under_churn():
    import random
    from kvert.api.pods import pod_requests
    rng = random.Random(5)
    c = Cluster()

    async def main():
        for i in range(6):
            await c.create_node(node(f"n{i}", cpu=str(rng.choice([2, 4, 8])), memory="8Gi",
                                     pods="12"))
        s, task = await start(c)
        names = []
        for i in range(120):
            cpu = rng.choice(["100m", "250m", "500m", "1", "1500m"])
            await c.create_pod(pod(f"p{i}", cpu=cpu, memory=rng.choice(["64Mi", "512Mi", "1Gi"])))
            names.append(f"p{i}")
            if i % 7 == 3:
                victim = names.pop(rng.randrange(len(names)))
                await c.client.delete("pods", victim, namespace="default", grace_period_seconds=0)
            if i % 10 == 0:
                await c.settle(0.2)
        await c.settle(30)
        pods = (await c.client.list("pods", namespace="default"))["items"]
        nodes = (await c.client.list("nodes"))["items"]
        cached = {n: int(s.cache.req[r, s.cache.col("cpu")]) for n, r in s.cache.row_of.items()}
        await stop(s, task)
        return pods, nodes, cached

    pods, nodes, cached = c.run(main)
    alloc = {n["metadata"]["name"]: n for n in nodes}
    used: dict[str, list] = {name: [0, 0, 0] for name in alloc}
    for p in pods:
        target = p["spec"].get("nodeName")
        if target:
            r = pod_requests(p, use_status_resources=True)
            used[target][0] += r.get("cpu", 0)
            used[target][1] += r.get("memory", 0)
            used[target][2] += 1
    from kvert.api.resources import parse_resource_list
    for name, (cpu, mem, count) in used.items():
        a = parse_resource_list(alloc[name]["status"]["allocatable"])
        assert cpu <= a["cpu"] and mem <= a["memory"] and count <= a["pods"], name
        assert cached[name] == cpu       # the cache agrees with the API server
    bound = sum(1 for p in pods if p["spec"].get("nodeName"))
    pending = [p for p in pods if not p["spec"].get("nodeName")]
    assert bound > 40
    assert all(condition(p)["reason"] == "Unschedulable" for p in pending)
    # and every pending pod really fits nowhere
    for p in pending:
        r = pod_requests(p)
        for name, (cpu, mem, count) in used.items():
            a = parse_resource_list(alloc[name]["status"]["allocatable"])
            assert (cpu + r.get("cpu", 0) > a["cpu"] or mem + r.get("memory", 0) > a["memory"]
                    or count + 1 > a["pods"]), (p["metadata"]["name"], name)


def test_out_of_tree_permit_and_reserve_plugins_slot_in():
    from kvert.scheduler.framework import Code, Plugin, Status
    from kvert.scheduler.plugins import REGISTRY, register_plugin

    class HoldAtPermit(Plugin):
        name = "HoldAtPermit"
        reserved: list = []

        def reserve(self, state, pod, node):
            if pod["metadata"]["name"] == "refused":
                return Status(Code.UNSCHEDULABLE, "reserve refused")
            HoldAtPermit.reserved.append(pod["metadata"]["name"])
            return None

        def unreserve(self, state, pod, node):
            HoldAtPermit.reserved.remove(pod["metadata"]["name"])

        def permit(self, state, pod, node):
            return Status(Code.WAIT), 30.0

    register_plugin("HoldAtPermit", HoldAtPermit)
    config = {"profiles": [{"plugins": {"multiPoint": {"enabled": [{"name": "HoldAtPermit"}]}}}]}
    c = Cluster()

    async def main():
        await c.create_node(node("n"))
        s, task = await start(c, config)
        await c.create_pod(pod("waits"))
        await c.create_pod(pod("times-out"))
        await c.create_pod(pod("refused"))
        await c.settle(1)
        fw = s.frameworks["default-scheduler"]
        held = sorted(w.pod["metadata"]["name"] for w in fw.iterate_over_waiting_pods())
        before = (await c.get_pod("waits"))["spec"].get("nodeName")
        waiting = next(w for w in fw.iterate_over_waiting_pods()
                       if w.pod["metadata"]["name"] == "waits")
        waiting.allow("HoldAtPermit")
        await c.settle(40)
        result = {n: await c.get_pod(n) for n in ("waits", "times-out", "refused")}
        await stop(s, task)
        return held, before, result

    try:
        held, before, result = c.run(main)
    finally:
        REGISTRY.pop("HoldAtPermit")
    assert held == ["times-out", "waits"] and before is None
    assert result["waits"]["spec"]["nodeName"] == "n"
    assert "nodeName" not in result["times-out"]["spec"]
    assert condition(result["times-out"])["message"] == \
        "rejected due to timeout after waiting 30s at plugin HoldAtPermit"
    assert condition(result["refused"])["message"] == "reserve refused"
    assert HoldAtPermit.reserved.count("waits") == 1
