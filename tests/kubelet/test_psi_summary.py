"""PSI where the kubelet reports it (KEP-4205): ``/metrics/cadvisor``'s six counters, named,
typed and converted as cAdvisor's metrics/prometheus.go (PressureMetrics: total microseconds
-> seconds, ``some`` = waiting, ``full`` = stalled), and ``/stats/summary``'s ``psi`` in
CPUStats, MemoryStats and IOStats of the node, pods and containers (kubelet stats v1alpha1)."""

import json

import pytest

from kvert.api.prometheus import parse_exposition
from kvert.clock import VirtualClock
from kvert.kubelet.metrics import METRICS, cadvisor_metrics, container_sample
from kvert.kubelet.runtime.base import ContainerConfig, ContainerResources, LinuxContainerResources, PodSandboxConfig
from kvert.kubelet.runtime.sim import SimRuntime
from kvert.kubelet.summary import PodEntry, stats_summary
from kvert.kubelet.usage import USAGE_ANNOTATION

MI = 2**20
POD = {"metadata": {"name": "p", "namespace": "default", "uid": "u1"},
       "spec": {"containers": [{"name": "app", "image": "img"}]}}


def test_cadvisor_pressure_metric_names_and_help():
    assert METRICS["container_pressure_cpu_stalled_seconds_total"] == (
        "counter", "Total time duration no tasks in the container could make progress due to CPU congestion.")
    assert METRICS["container_pressure_memory_waiting_seconds_total"] == (
        "counter", "Total time duration tasks in the container have waited due to memory congestion.")
    assert METRICS["container_pressure_io_stalled_seconds_total"][1].endswith("due to IO congestion.")


def test_psi_in_cadvisor_metrics_and_the_summary():
    clock = VirtualClock()

    async def main():
        rt = SimRuntime(clock, tick=2.0)
        sb = await rt.run_pod_sandbox(PodSandboxConfig(uid="u1", namespace="default", name="p"))
        res = LinuxContainerResources(cpu_quota=50_000, memory_limit_in_bytes=100 * MI)
        cid = await rt.create_container(sb, ContainerConfig(
            name="app", image="img", resources=ContainerResources(linux=res),
            annotations={USAGE_ANNOTATION: json.dumps({"cpu": "1", "memory": "95Mi"})}))
        await rt.start_container(cid)
        await clock.sleep(100)
        st = await rt.container_status(cid)
        text = cadvisor_metrics([container_sample(POD, st)])
        values = {s.name: s for s in parse_exposition(text) if s.name.startswith("container_pressure_")}
        assert set(values) == {f"container_pressure_{r}_{k}_seconds_total" for r in ("cpu", "memory", "io")
                               for k in ("stalled", "waiting")}
        assert values["container_pressure_cpu_waiting_seconds_total"].value == pytest.approx(50.0)
        assert values["container_pressure_cpu_stalled_seconds_total"].value == pytest.approx(50.0)
        assert values["container_pressure_io_waiting_seconds_total"].value == 0
        assert values["container_pressure_cpu_waiting_seconds_total"].labels["pod"] == "p"
        assert "# TYPE container_pressure_memory_waiting_seconds_total counter" in text

        summary = stats_summary("n1", 0.0, clock.now(), [PodEntry(POD, 0.0, sb, [st])], rt)
        container = summary["pods"][0]["containers"][0]
        assert set(container["cpu"]["psi"]) == {"full", "some"}
        assert set(container["cpu"]["psi"]["some"]) == {"total", "avg10", "avg60", "avg300"}
        assert container["cpu"]["psi"]["some"]["total"] == 50 * 10**6        # microseconds
        assert container["memory"]["psi"]["some"]["total"] > 0
        assert container["memory"]["availableBytes"] == 5 * MI
        assert container["io"]["psi"]["some"]["total"] == 0
        pod = summary["pods"][0]
        assert pod["podRef"] == {"name": "p", "namespace": "default", "uid": "u1"}
        assert pod["cpu"]["psi"] == container["cpu"]["psi"]
        node = summary["node"]
        assert node["nodeName"] == "n1"
        assert node["cpu"]["psi"]["full"]["total"] == 0                      # undefined for the system
        assert node["memory"]["psi"]["some"] == container["memory"]["psi"]["some"]
        assert "psi" in node["io"]

    clock.run(main())
