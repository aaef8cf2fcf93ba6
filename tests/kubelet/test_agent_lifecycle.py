"""Container lifecycle: OOM kills and Kubernetes' restart back-off, restart policies, init
containers and sidecars, metrics."""

from __future__ import annotations

from kvert.clock import VirtualClock
from kvert.api.meta import parse_time
from kvert.kubelet.runtime.sim import SimRuntime

from tests.kubelet.test_agent_support import (cluster, container, cstatus, events, in_phase, kill, node_config,
                                              pod, run_pod, running, start_agent, stop, wait_for)


class Recording(SimRuntime):
    """Remembers when each container started."""

    def __init__(self, clock):
        super().__init__(clock)
        self.starts: list[tuple[str, float]] = []

    async def start_container(self, container_id):
        await super().start_container(container_id)
        self.starts.append((self._containers[container_id].config.name, self.clock.now()))


def test_oom_killed_container_restarts_with_back_off_10_20_40():
    clock = VirtualClock()

    async def main():
        client = await cluster(clock)
        runtime = Recording(clock)
        agent, task = await start_agent(client, clock, runtime)
        # uses 100Mi with a 64Mi limit: OOM-killed at the first tick after every start
        await run_pod(client, pod("leaky", container("c", "100m", "64Mi"),
                                  usage={"c": {"cpu": "10m", "memory": "100Mi"}}))

        async def crashlooping():
            p = await client.get("pods", "leaky", "default")
            cs = cstatus(p)
            return p if cs.get("restartCount", 0) >= 2 and "waiting" in cs.get("state", {}) else None
        p = await wait_for(clock, crashlooping)
        cs = cstatus(p)
        assert cs["state"]["waiting"]["reason"] == "CrashLoopBackOff"
        assert cs["state"]["waiting"]["message"].startswith("back-off 20s restarting failed container=c pod=leaky_default(")
        assert cs["lastState"]["terminated"]["reason"] == "OOMKilled"
        assert cs["lastState"]["terminated"]["exitCode"] == 137
        assert p["status"]["phase"] == "Running"
        await wait_for(clock, lambda: len(runtime.starts) >= 5, timeout=300)
        kills = [k.time for k in runtime.oom_kills]
        starts = [t for _, t in runtime.starts]
        gaps = [starts[i + 1] - kills[i] for i in range(4)]
        assert gaps[0] <= 1.0                                    # the first restart is immediate
        assert [round(g, 3) for g in gaps[1:]] == [10.0, 20.0, 40.0]
        assert await events(client, "leaky", "BackOff")
        p = await client.get("pods", "leaky", "default")
        assert cstatus(p)["restartCount"] >= 4
        await stop(agent, task)

    clock.run(main())


def test_restart_policy_never_and_on_failure_finish_the_pod():
    clock = VirtualClock()

    async def main():
        client = await cluster(clock)
        agent, task = await start_agent(client, clock, config=node_config(cpu=2000))
        await run_pod(client, pod("job", container("c", "1", "64Mi"), restart_policy="Never",
                                  usage={"c": {"cpu": "100m", "memory": "16Mi", "exitAfter": "30s"}}))
        await run_pod(client, pod("bad", container("c", "500m", "64Mi"), restart_policy="Never",
                                  usage={"c": {"cpu": "100m", "memory": "16Mi", "exitAfter": "5s",
                                               "exitCode": 3}}))
        await run_pod(client, pod("retry", container("c", "100m", "64Mi"), restart_policy="OnFailure",
                                  usage={"c": {"cpu": "10m", "memory": "16Mi", "exitAfter": "5s",
                                               "exitCode": 1}}))
        job = await in_phase(client, clock, "job", "Succeeded")
        assert cstatus(job)["state"]["terminated"]["reason"] == "Completed"
        assert {c["type"]: c.get("reason") for c in job["status"]["conditions"]}["Ready"] == "PodCompleted"
        bad = await in_phase(client, clock, "bad", "Failed")
        assert cstatus(bad)["state"]["terminated"]["exitCode"] == 3
        assert cstatus(bad)["restartCount"] == 0

        async def retried():
            p = await client.get("pods", "retry", "default")
            return p if cstatus(p).get("restartCount", 0) >= 2 else None
        retry = await wait_for(clock, retried)
        assert retry["status"]["phase"] == "Running"
        # the finished pods no longer hold the node: a 1.5-cpu pod now fits
        await run_pod(client, pod("after", container("c", "1500m", "64Mi")))
        await running(client, clock, "after")
        await stop(agent, task)

    clock.run(main())


def test_init_containers_then_sidecar_then_app():
    clock = VirtualClock()

    async def main():
        client = await cluster(clock)
        runtime = Recording(clock)
        agent, task = await start_agent(client, clock, runtime)
        sidecar = container("log", "50m", "32Mi")
        sidecar["restartPolicy"] = "Always"
        body = pod("web", container("app", "200m", "64Mi"),
                   init=[container("migrate", "100m", "32Mi"), sidecar],
                   usage={"migrate": {"cpu": "10m", "memory": "8Mi", "exitAfter": "3s"}})
        await run_pod(client, body)
        p = await running(client, clock, "web")
        names = [n for n, _ in runtime.starts]
        assert names[:3] == ["migrate", "log", "app"]
        init = {cs["name"]: cs for cs in p["status"]["initContainerStatuses"]}
        assert init["migrate"]["state"]["terminated"]["reason"] == "Completed"
        assert init["migrate"]["ready"] is True
        assert "running" in init["log"]["state"] and init["log"]["started"]
        assert cstatus(p, "app")["ready"]
        await stop(agent, task)

    clock.run(main())


def test_metrics_for_the_node_containers():
    clock = VirtualClock()

    async def main():
        client = await cluster(clock)
        agent, task = await start_agent(client, clock)
        await run_pod(client, pod("web", container("c", "500m", "128Mi"),
                                  usage={"c": {"cpu": "200m", "memory": "50Mi"}}))
        await running(client, clock, "web")
        assert await agent.pod_metrics() == []        # first scrape: no rate yet
        await clock.sleep(15)
        pods = await agent.pod_metrics()
        assert pods and pods[0]["metadata"]["name"] == "web"
        usage = pods[0]["containers"][0]["usage"]
        assert usage["cpu"] == "200m" and usage["memory"] == "50Mi"
        assert agent.node_metrics()["kind"] == "NodeMetrics"
        text = await agent.metrics_text()
        assert 'container_memory_working_set_bytes{container="c"' in text
        assert 'pod="web"' in text
        await stop(agent, task)

    clock.run(main())


def test_stop_and_cancel_are_clean():
    clock = VirtualClock()

    async def main():
        client = await cluster(clock)
        agent, task = await start_agent(client, clock)
        await run_pod(client, pod("web"))
        await running(client, clock, "web")
        await kill(task)
        assert all(t.done() for t in agent._tasks) or agent._tasks == []
        node = await client.get("nodes", "node-1")
        assert parse_time(node["status"]["conditions"][0]["lastHeartbeatTime"]) <= clock.now()

    clock.run(main())
