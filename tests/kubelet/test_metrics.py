import json
import math

import pytest

from kvert.clock import VirtualClock
from kvert.api.prometheus import format_value, parse_exposition
from kvert.kubelet.metrics import (METRICS, ContainerSample, UsageTracker, cadvisor_metrics, container_sample, cpu_quantity, memory_quantity, node_metrics, node_summary, pod_metrics)
from kvert.kubelet.runtime.base import (ContainerConfig, ContainerResources, ContainerStatus, LinuxContainerResources,
                                        PodSandboxConfig)
from kvert.kubelet.runtime.sim import SimRuntime
from kvert.kubelet.usage import USAGE_ANNOTATION

MI = 2**20
POD = {"metadata": {"name": "web-1", "namespace": "shop", "uid": "u-1", "labels": {"app": "web"}},
       "spec": {"containers": [{"name": "app", "image": "nginx:1.27"}, {"name": "log", "image": "fluentbit"}]}}


def status(cid="c1", name="app", **kw):
    res = ContainerResources(linux=LinuxContainerResources(cpu_quota=50_000, cpu_shares=256,
                                                           memory_limit_in_bytes=256 * MI))
    defaults = dict(id=cid, name=name, state="running", resources=res, started_at=1000.0,
                    cpu_usage_core_nanoseconds=1_500_000_000, memory_working_set_bytes=100 * MI,
                    cpu_throttled_periods=7, cpu_throttled_nanoseconds=250_000_000, oom_events=0, cpu_periods=40)
    defaults.update(kw)
    return ContainerStatus(**defaults)


def by_name(samples):
    out = {}
    for s in samples:
        out.setdefault(s.name, []).append(s)
    return out


def test_exposition_parses_and_carries_the_values():
    text = cadvisor_metrics([container_sample(POD, status())], timestamp=2000.5,
                            machine_cpu_cores=4, machine_memory_bytes=16 * 2**30)
    samples = by_name(parse_exposition(text))
    cpu = samples["container_cpu_usage_seconds_total"][0]
    assert cpu.value == 1.5 and cpu.timestamp_ms == 2_000_500
    assert cpu.labels == {"container": "app", "cpu": "total", "id": "/kubepods/besteffort/podu-1/c1",
                          "image": "nginx:1.27", "name": "c1", "namespace": "shop", "pod": "web-1"}
    assert samples["container_memory_working_set_bytes"][0].value == 100 * MI
    assert samples["container_oom_events_total"][0].value == 0
    assert samples["container_cpu_cfs_periods_total"][0].value == 40
    assert samples["container_cpu_cfs_throttled_periods_total"][0].value == 7
    assert samples["container_cpu_cfs_throttled_seconds_total"][0].value == 0.25
    assert samples["container_spec_cpu_quota"][0].value == 50_000
    assert samples["container_spec_cpu_shares"][0].value == 256
    assert samples["container_spec_memory_limit_bytes"][0].value == 256 * MI
    assert samples["container_start_time_seconds"][0].value == 1000
    assert samples["machine_cpu_cores"][0].value == 4
    # every metric has HELP and TYPE lines before its samples
    for name in samples:
        assert f"# TYPE {name} {METRICS[name][0]}" in text
        assert text.index(f"# HELP {name} ") < text.index(f"\n{name}{{" if name.startswith("container") else
                                                           f"\n{name} ")
    assert text.endswith("\n")


def test_exited_containers_and_label_escaping():
    weird = ContainerSample(namespace="ns", pod='a"b\\c', container="x\ny", image="i", status=status(
        "c2", state="exited", oom_events=1), cgroup="/k/c2")
    text = cadvisor_metrics([weird])
    samples = by_name(parse_exposition(text))
    oom = samples["container_oom_events_total"][0]
    assert oom.value == 1 and oom.labels["pod"] == 'a"b\\c' and oom.labels["container"] == "x\ny"
    assert oom.timestamp_ms is None
    assert "container_oom_events_total" not in by_name(parse_exposition(
        cadvisor_metrics([weird], include_exited=False)))
    assert cadvisor_metrics([]) == ""


def test_parse_exposition_rejects_garbage():
    for bad in ['x{a="1" 1', 'x{a=1} 1', "x 1 2 3", "x abc", '{a="b"} 1', 'x{a="1",a="2"} 1',
                "# TYPE x wrong\nx 1"]:
        with pytest.raises(ValueError):
            parse_exposition(bad)
    assert parse_exposition("x +Inf\ny NaN\n")[0].value == math.inf
    assert format_value(3.0) == "3" and format_value(0.25) == "0.25" and format_value(math.inf) == "+Inf"


def test_quantities_like_metrics_server():
    assert cpu_quantity(250_000_000) == "250m"
    assert cpu_quantity(1_234_567) == "1234567n"
    assert cpu_quantity(2_000_000_000) == "2"
    assert memory_quantity(1536 * 1024) == "1536Ki"
    assert memory_quantity(100 * MI) == "100Mi"


def test_pod_and_node_metrics_objects():
    pm = pod_metrics(POD, {"log": (5_000_000, 10 * MI), "app": (250_000_000, 100 * MI)},
                     timestamp=1767225600.0, window=10.0)
    json.dumps(pm)
    assert pm["kind"] == "PodMetrics" and pm["apiVersion"] == "metrics.k8s.io/v1beta1"
    assert pm["metadata"] == {"name": "web-1", "namespace": "shop", "creationTimestamp": "2026-01-01T00:00:00Z",
                              "labels": {"app": "web"}}
    assert pm["timestamp"] == "2026-01-01T00:00:00Z" and pm["window"] == "10s"
    assert pm["containers"] == [{"name": "app", "usage": {"cpu": "250m", "memory": "100Mi"}},
                                {"name": "log", "usage": {"cpu": "5m", "memory": "10Mi"}}]
    nm = node_metrics("node-1", 1_500_000_000, 3 * 2**30, timestamp=1767225600.0, window=20.5)
    assert nm["usage"] == {"cpu": "1500m", "memory": "3Gi"} and nm["window"] == "20.5s"
    assert nm["metadata"]["name"] == "node-1"


def test_tracker_and_node_summary_from_the_sim_runtime():
    clock = VirtualClock()

    async def main():
        rt = SimRuntime(clock, tick=1.0)
        sb = await rt.run_pod_sandbox(PodSandboxConfig(uid="u-1", namespace="shop", name="web-1"))
        ids = []
        for name, usage in (("app", {"cpu": "300m", "memory": "100Mi"}), ("log", {"cpu": "20m", "memory": "8Mi"})):
            cid = await rt.create_container(sb, ContainerConfig(
                name=name, image="img", resources=ContainerResources(linux=LinuxContainerResources()),
                annotations={USAGE_ANNOTATION: json.dumps(usage)}))
            await rt.start_container(cid)
            ids.append(cid)
        tracker = UsageTracker()
        node, pods = node_summary("node-1", [(POD, await rt.list_containers(sb))], tracker, clock.now())
        assert node is None and pods == []                   # one sample is not a rate yet
        await clock.sleep(15)
        node, pods = node_summary("node-1", [(POD, await rt.list_containers(sb))], tracker, clock.now(),
                                  system_memory_bytes=500 * MI)
        assert node["usage"] == {"cpu": "320m", "memory": "608Mi"} and node["window"] == "15s"
        assert pods[0]["containers"] == [{"name": "app", "usage": {"cpu": "300m", "memory": "100Mi"}},
                                         {"name": "log", "usage": {"cpu": "20m", "memory": "8Mi"}}]
        text = cadvisor_metrics([container_sample(POD, s) for s in await rt.list_containers()],
                                timestamp=clock.now())
        cpu = {s.labels["container"]: s.value for s in parse_exposition(text)
               if s.name == "container_cpu_usage_seconds_total"}
        assert cpu == {"app": pytest.approx(4.5), "log": pytest.approx(0.3)}

    clock.run(main())


def test_resource_metrics_round_trip_as_metrics_server_reads_them():
    # the kubelet's /metrics/resource families (pkg/kubelet/metrics/collectors/resource_metrics.go)
    from kvert.kubelet.metrics import parse_resource_metrics, resource_metrics
    from kvert.kubelet.runtime.base import ContainerResources, ContainerStatus
    app = ContainerStatus(id="c1", name="app", state="running", resources=ContainerResources(),
                          cpu_usage_core_nanoseconds=2_500_000_000, memory_working_set_bytes=64 << 20)
    gone = ContainerStatus(id="c2", name="old", state="exited", resources=ContainerResources())
    text = resource_metrics([({"metadata": {"name": "web", "namespace": "shop"}}, [app, gone])])
    assert 'container_cpu_usage_seconds_total{container="app",namespace="shop",pod="web"} 2.5' in text
    assert "node_memory_working_set_bytes 67108864" in text and "resource_scrape_error 0" in text
    [back] = parse_resource_metrics(text)[("shop", "web")]
    assert (back.name, back.cpu_usage_core_nanoseconds, back.memory_working_set_bytes) == ("app", 2_500_000_000, 64 << 20)
