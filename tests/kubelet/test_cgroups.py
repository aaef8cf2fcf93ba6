import json

import pytest

from kvert.kubelet import cgroups
from kvert.kubelet.cgroups import (cgroup_files, cgroup_v2_weight, container_cgroup_path, container_resources,
                                   cpu_max, explain_pod, milli_cpu_to_quota, milli_cpu_to_shares, oom_score_adj,
                                   pod_cgroup, pod_cgroup_path, qos_cgroup_path, qos_cgroups)
from kvert.kubelet.config import NodeConfig
from kvert.kubelet.runtime.base import ContainerResources, LinuxContainerResources

GI = 2**30
MI = 2**20


def container(name, requests=None, limits=None, **extra):
    res = {}
    if requests:
        res["requests"] = requests
    if limits:
        res["limits"] = limits
    return {"name": name, "image": "img", "resources": res, **extra}


def pod(*containers, init=(), uid="1234-abcd", overhead=None, **spec):
    s = {"containers": list(containers), **spec}
    if init:
        s["initContainers"] = list(init)
    if overhead:
        s["overhead"] = overhead
    return {"metadata": {"name": "p", "namespace": "default", "uid": uid}, "spec": s}


@pytest.mark.parametrize("milli, shares", [
    # TestMilliCPUToShares (pkg/kubelet/cm)
    (0, 2), (1, 2), (2, 2), (3, 3), (5, 5), (10, 10), (100, 102), (200, 204), (250, 256), (500, 512),
    (1000, 1024), (2000, 2048), (4000, 4096), (255_999, 262142), (256_000, 262144), (256_001, 262144),
    (1_000_000, 262144), (-1, 2), (-1_000_000, 2),
])
def test_shares(milli, shares):
    assert milli_cpu_to_shares(milli) == shares


@pytest.mark.parametrize("shares, milli", [
    # TestSharesToMilliCPU: 2 shares read back as 2m, not 0
    (0, 0), (1, 0), (2, 2), (3, 3), (102, 100), (512, 500), (1024, 1000), (262144, 256000), (-1, 0),
])
def test_shares_to_milli_cpu(shares, milli):
    assert cgroups.shares_to_milli_cpu(shares) == milli


def test_shares_round_trip():
    # TestSharesToMilliCPU (kuberuntime): every milli-CPU in 0..2000 comes back as max(m, 2)
    assert all(cgroups.shares_to_milli_cpu(milli_cpu_to_shares(m)) == max(m, 2) for m in range(2001))


@pytest.mark.parametrize("quota, period, milli", [
    # TestQuotaToMilliCPU
    (5000, 100_000, 50), (75_000, 100_000, 750), (100_000, 100_000, 1000), (150_000, 100_000, 1500),
    (-1, 100_000, 0), (0, 100_000, 0), (1000, 100_000, 10), (200_000, 100_000, 2000), (5000, 5000, 1000),
    (1, 100_000, 0), (100, 100_000, 1),
])
def test_quota_to_milli_cpu(quota, period, milli):
    assert cgroups.quota_to_milli_cpu(quota, period) == milli


@pytest.mark.parametrize("milli, period, quota", [
    # TestMilliCPUToQuota (with the period passed through, as CPUCFSQuotaPeriod)
    (0, 100_000, 0), (5, 100_000, 1000), (9, 100_000, 1000), (200, 100_000, 20_000), (1500, 100_000, 150_000),
    (10, 200_000, 2000), (200, 200_000, 40_000), (500, 20_000, 10_000), (1000, 10_000, 10_000), (1500, 5000, 7500),
    (1, 100_000, 1000), (10, 100_000, 1000), (11, 100_000, 1100), (250, 100_000, 25_000),
    (500, 100_000, 50_000), (1000, 100_000, 100_000), (4000, 100_000, 400_000), (500, 50_000, 25_000),
])
def test_quota(milli, period, quota):
    assert milli_cpu_to_quota(milli, period) == quota


@pytest.mark.parametrize("shares, weight", [
    # opencontainers/cgroups TestConvertCPUSharesToCgroupV2Value (the runtime's, for containers),
    # and runc issue 4896's 2000 -> 170
    (0, 0), (1, 1), (2, 1), (3, 2), (1024, 100), (2000, 170), (262143, 10000), (262144, 10000), (262145, 10000),
])
def test_cgroup_v2_weight(shares, weight):
    assert cgroup_v2_weight(shares) == weight


@pytest.mark.parametrize("shares, weight", [
    # TestCpuSharesToCPUWeight (pkg/kubelet/cm, getCPUWeight: the kubelet's own cgroups)
    (2, 1), (3, 1), (4, 1), (28, 1), (29, 2), (245, 10), (1024, 39), (262144, 10000),
])
def test_kubelet_cpu_weight(shares, weight):
    assert cgroups.kubelet_cpu_weight(shares) == weight


def test_cpu_max():
    assert cpu_max(50_000, 100_000) == "50000 100000"
    assert cpu_max(0) == "max 100000"
    assert cpu_max(-1, 50_000) == "max 50000"


CAP = 10**10  # bytes; decimal so that the fractions below are exact


@pytest.mark.parametrize("request_bytes, expected", [
    (None, 999),                 # no memory request: 1000 would tie BestEffort
    (CAP // 10, 900),            # the policy's own example: 10% of memory -> 900
    (CAP // 2, 500),
    (CAP // 4, 750),
    (CAP * 997 // 1000, 3),
    (CAP * 998 // 1000, 3),      # raw 2: policy.go's floor is 3 (seed 001's table says 2)
    (CAP * 999 // 1000, 3),
    (CAP, 3),                    # raw 0
    (2 * CAP, 3),                # requests more than the machine
    (1, 999),                    # tiny request: raw 999
])
def test_oom_score_adj_burstable(request_bytes, expected):
    requests = {"cpu": "100m"}
    if request_bytes is not None:
        requests["memory"] = str(request_bytes)
    p = pod(container("app", requests=requests))
    assert oom_score_adj(p, "app", CAP) == expected


STANDARD = 8_000_000_000


@pytest.mark.parametrize("containers, init, capacity, expected", [
    # TestGetContainerOOMScoreAdjust (pkg/kubelet/qos): (requests, limits) per container
    ([({}, {"cpu": "10"})], [], 4_000_000_000, [999]),                                 # cpu-limit
    # memory-limit-cpu-request: upstream's pod is not defaulted (no memory request); kvert's
    # pods always are (the request would default to the limit), so it says 0 explicitly
    ([({"cpu": "0", "memory": "0"}, {"memory": "10G"})], [], STANDARD, [999]),
    ([({}, {"memory": "0"})], [], 7_230_457_451, [1000]),                              # zero-memory-limit
    ([({}, {})], [], 4_000_000_000, [1000]),                                           # no-request-limit
    ([({"memory": "10G", "cpu": "5m"}, {"memory": "10G", "cpu": "5m"})], [], 123_456_789, [-997]),
    ([({"memory": "4000000000"}, {"memory": "10G"})], [], STANDARD, [500]),
    ([({"memory": str(STANDARD - 1)}, {})], [], STANDARD, [3]),                        # request-no-limit
    ([({"memory": "1000000000"}, {"memory": "1000001000"})], [], STANDARD, [875]),     # burstable-unique-container
    ([({"memory": "1000000000"}, {})], [({"memory": "1000000000"}, None)], STANDARD, [875, 875]),
    ([({"memory": "1000000000"}, {})], [({"memory": "1000000000"}, None), ({"memory": "400000000"}, "Always")],
     STANDARD, [875, 875, 875]),                                                       # small sidecar
    ([({"memory": "1000000000"}, {})], [({"memory": "1000000000"}, None), ({"memory": "4000000000"}, "Always")],
     STANDARD, [875, 875, 500]),                                                       # big sidecar
])
def test_get_container_oom_score_adjust(containers, init, capacity, expected):
    app = [container(f"c{i}", requests=r or None, limits=lim or None) for i, (r, lim) in enumerate(containers)]
    inits = [container(f"i{i}", requests=r, **({"restartPolicy": policy} if policy else {}))
             for i, (r, policy) in enumerate(init)]
    p = pod(*app, init=inits)
    names = [c["name"] for c in app] + [c["name"] for c in inits]
    assert [oom_score_adj(p, n, capacity) for n in names] == expected


def test_get_container_oom_score_adjust_critical_pods():
    # TestGetContainerOOMScoreAdjust "cluster-critical" / "node-critical"
    cluster = pod(container("c"), priorityClassName="system-cluster-critical", priority=2_000_000_000)
    node = pod(container("c"), priorityClassName="system-node-critical", priority=2_000_001_000)
    assert oom_score_adj(cluster, "c", 4_000_000_000) == 1000
    assert oom_score_adj(node, "c", 4_000_000_000) == -997


def test_get_container_oom_score_adjust_pod_level_resources():
    # TestGetContainerOOMScoreAdjust, burstable-pod-resources-unequal-container-requests(-with-sidecar)
    p = pod(container("a", requests={"memory": "1000000000"}), container("b"),
            resources={"requests": {"memory": "2000000000"}})
    assert [oom_score_adj(p, n, 4_000_000_000) for n in ("a", "b")] == [625, 875]
    p = pod(container("a", requests={"memory": "1000000000"}), container("b", requests={"memory": "500000000"}),
            init=[container("s", requests={"memory": "200000000"}, restartPolicy="Always")],
            resources={"requests": {"memory": "2000000000"}})
    assert [oom_score_adj(p, n, 4_000_000_000) for n in ("a", "b", "s")] == [725, 850, 850]


@pytest.mark.parametrize("requests, expected", [
    # TestHugePageLimits
    ({"2Mi": "128"}, {}),
    ({"hugepages-2Mi": "128"}, {"2MB": 128}),
    ({"hugepages-2Mi": "128", "hugepages-2097152": "256", "hugepages-4Mi": "512", "4Mi": "1024"},
     {"2MB": 384, "4MB": 512}),
])
def test_huge_page_limits(requests, expected):
    from kvert.api.resources import parse_resource_list
    amounts = parse_resource_list({k: v for k, v in requests.items() if k.startswith("hugepages-")})
    assert cgroups.hugepage_limits(amounts) == expected


@pytest.mark.parametrize("containers, expected", [
    # TestResourceConfigForPod (period 100000, cpu limits enforced): (shares, quota, memory)
    ([], (2, 0, 0)),                                                                           # besteffort
    ([({"cpu": "100m", "memory": "100Mi"}, {})], (102, 0, 0)),                                # burstable-no-limits
    ([({"cpu": "100m", "memory": "100Mi"}, {"cpu": "200m", "memory": "200Mi"})], (102, 20000, 200 * MI)),
    ([({"cpu": "100m", "memory": "100Mi"}, {"cpu": "200m", "memory": "200Mi"}),
      ({"cpu": "100m", "memory": "100Mi"}, {})], (204, 0, 0)),                                # partial limits
    ([({"cpu": "100m", "memory": "100Mi"}, {"cpu": "100m", "memory": "100Mi"})], (102, 10000, 100 * MI)),
])
def test_resource_config_for_pod(containers, expected):
    app = [container(f"c{i}", requests=r, limits=lim or None) for i, (r, lim) in enumerate(containers)] or \
        [container("c")]
    res = pod_cgroup(pod(*app))
    assert (res.cpu_shares, res.cpu_quota, res.memory_limit_in_bytes) == expected


def test_oom_score_adj_guaranteed_besteffort_and_critical():
    guaranteed = pod(container("app", limits={"cpu": "1", "memory": "1Gi"}))
    assert oom_score_adj(guaranteed, "app", CAP) == -997
    besteffort = pod(container("app"))
    assert oom_score_adj(besteffort, "app", CAP) == 1000
    critical = pod(container("app", requests={"memory": "1Gi"}), priorityClassName="system-node-critical")
    assert oom_score_adj(critical, "app", CAP) == -997
    critical_be = pod(container("app"), priorityClassName="system-node-critical")
    assert oom_score_adj(critical_be, "app", CAP) == -997
    # status.qosClass wins over the spec (it is fixed at creation)
    resized = pod(container("app", requests={"memory": "1Gi"}))
    resized["status"] = {"qosClass": "Guaranteed"}
    assert oom_score_adj(resized, "app", CAP) == -997


def test_oom_score_adj_sidecar_not_above_smallest_regular_container():
    sidecar = container("proxy", requests={"memory": "10Mi"}, restartPolicy="Always")
    p = pod(container("a", requests={"memory": str(CAP // 10)}), container("b", requests={"memory": str(CAP // 5)}),
            init=[sidecar])
    assert oom_score_adj(p, "a", CAP) == 900
    assert oom_score_adj(p, "b", CAP) == 800
    assert oom_score_adj(p, "proxy", CAP) == 900   # min(own 999, smallest regular's 900)


def test_oom_score_adj_pod_level_requests_shared_among_containers():
    p = pod(container("a", requests={"memory": str(CAP // 10)}), container("b"),
            resources={"requests": {"memory": str(CAP // 2)}})
    # (50% - 10%) / 2 containers = 20% each
    assert oom_score_adj(p, "a", CAP) == 700
    assert oom_score_adj(p, "b", CAP) == 800


def test_container_resources_burstable():
    p = pod(container("app", requests={"cpu": "250m", "memory": "128Mi"}, limits={"cpu": "500m", "memory": "256Mi"}))
    res = container_resources(p, "app", 4 * GI)
    assert res == LinuxContainerResources(cpu_period=100_000, cpu_quota=50_000, cpu_shares=256,
                                          memory_limit_in_bytes=256 * MI, oom_score_adj=1000 - 1000 * 128 // 4096)
    assert cgroups.cri_container_resources(p, "app", 4 * GI) == ContainerResources(linux=res)


def test_container_resources_defaults_and_flags():
    # a limit without a request: the request defaults to the limit (Guaranteed)
    p = pod(container("app", limits={"cpu": "2", "memory": "1Gi"}))
    res = container_resources(p, "app", 8 * GI)
    assert (res.cpu_shares, res.cpu_quota, res.memory_limit_in_bytes, res.oom_score_adj) == (2048, 200_000, GI, -997)
    # no resources at all: 2 shares, no quota, no memory limit
    res = container_resources(pod(container("app")), "app", 8 * GI)
    assert (res.cpu_shares, res.cpu_quota, res.memory_limit_in_bytes, res.oom_score_adj) == (2, 0, 0, 1000)
    # --cpu-cfs-quota=false and another period
    p = pod(container("app", requests={"cpu": "100m"}, limits={"cpu": "1"}))
    assert container_resources(p, "app", GI, cpu_cfs_quota=False).cpu_quota == 0
    assert container_resources(p, "app", GI, cpu_period=50_000).cpu_quota == 50_000


def test_pod_cgroup_guaranteed_with_overhead():
    p = pod(container("a", limits={"cpu": "500m", "memory": "256Mi"}),
            container("b", limits={"cpu": "1", "memory": "512Mi"}),
            overhead={"cpu": "250m", "memory": "120Mi"})
    res = pod_cgroup(p)
    assert res.cpu_shares == milli_cpu_to_shares(1750) == 1792
    assert res.cpu_quota == 175_000
    assert res.memory_limit_in_bytes == (256 + 512 + 120) * MI


def test_pod_cgroup_burstable_limits_only_when_every_container_declares_them():
    both = pod(container("a", requests={"cpu": "100m"}, limits={"cpu": "200m", "memory": "100Mi"}),
               container("b", requests={"cpu": "100m"}, limits={"cpu": "300m", "memory": "50Mi"}))
    res = pod_cgroup(both)
    assert (res.cpu_shares, res.cpu_quota, res.memory_limit_in_bytes) == (204, 50_000, 150 * MI)
    no_memory_limit = pod(container("a", requests={"cpu": "100m"}, limits={"cpu": "200m", "memory": "100Mi"}),
                          container("b", requests={"cpu": "100m"}, limits={"cpu": "300m"}))
    res = pod_cgroup(no_memory_limit)
    assert (res.cpu_quota, res.memory_limit_in_bytes) == (50_000, 0)
    # an init container without a cpu limit means no pod cpu quota
    init_unlimited = pod(container("a", requests={"cpu": "100m"}, limits={"cpu": "200m", "memory": "100Mi"}),
                         init=[container("init", requests={"cpu": "50m"})])
    res = pod_cgroup(init_unlimited)
    assert (res.cpu_quota, res.memory_limit_in_bytes) == (0, 0)
    # overhead adds to limits only where they exist
    overhead = pod(container("a", requests={"cpu": "100m"}, limits={"cpu": "200m"}),
                   overhead={"cpu": "100m", "memory": "64Mi"})
    res = pod_cgroup(overhead)
    assert (res.cpu_shares, res.cpu_quota, res.memory_limit_in_bytes) == (204, 30_000, 0)


def test_pod_cgroup_besteffort():
    res = pod_cgroup(pod(container("a"), container("b")))
    assert (res.cpu_shares, res.cpu_quota, res.memory_limit_in_bytes) == (2, 0, 0)


def test_pod_hugepages():
    p = pod(container("a", requests={"hugepages-2Mi": "100Mi", "memory": "1Gi", "cpu": "1"},
                      limits={"hugepages-2Mi": "100Mi", "memory": "1Gi", "cpu": "1"}))
    assert cgroups.pod_hugepages(p) == {"2MB": 100 * MI}
    files = cgroup_files(pod_cgroup(p), 2, cgroups.pod_hugepages(p))
    assert files["hugetlb.2MB.max"] == str(100 * MI)


def test_qos_cgroups():
    guaranteed = pod(container("a", limits={"cpu": "1", "memory": "1Gi"}), uid="g")
    burstable1 = pod(container("a", requests={"cpu": "250m", "memory": "100Mi"}), uid="b1")
    burstable2 = pod(container("a", requests={"cpu": "500m"}, limits={"cpu": "1"}), uid="b2")
    besteffort = pod(container("a"), uid="e")
    pods = [guaranteed, burstable1, burstable2, besteffort]
    got = qos_cgroups(pods, {"cpu": 3500, "memory": 12 * GI})
    assert got["kubepods"].cpu_shares == 3584 and got["kubepods"].memory_limit_in_bytes == 12 * GI
    assert got["burstable"].cpu_shares == milli_cpu_to_shares(750) == 768
    assert got["burstable"].memory_limit_in_bytes == 0   # QoS memory limits only with qosReserved
    assert got["besteffort"].cpu_shares == 2
    reserved = qos_cgroups(pods, {"cpu": 3500, "memory": 12 * GI}, qos_reserved={"memory": 50})
    assert reserved["burstable"].memory_limit_in_bytes == 12 * GI - GI // 2
    assert reserved["besteffort"].memory_limit_in_bytes == 12 * GI - GI // 2 - 50 * MI
    # from a NodeConfig: the kubepods values are capacity - reserved (no eviction threshold)
    config = NodeConfig(capacity={"cpu": 4000, "memory": 16 * GI}, kube_reserved={"cpu": 500, "memory": GI})
    got = qos_cgroups([], config)
    assert got["kubepods"].cpu_shares == 3584 and got["kubepods"].memory_limit_in_bytes == 15 * GI
    assert got["burstable"].cpu_shares == 2


def test_cgroup_files():
    res = LinuxContainerResources(cpu_period=100_000, cpu_quota=50_000, cpu_shares=256, memory_limit_in_bytes=GI)
    assert cgroup_files(res, 1) == {"cpu.shares": "256", "cpu.cfs_period_us": "100000",
                                    "cpu.cfs_quota_us": "50000", "memory.limit_in_bytes": str(GI)}
    assert cgroup_files(res, 2) == {"cpu.weight": "35", "cpu.max": "50000 100000", "memory.max": str(GI)}
    assert cgroup_files(res, 2, kubelet=True)["cpu.weight"] == "10"
    unlimited = LinuxContainerResources(cpu_shares=2)
    assert cgroup_files(unlimited, 1)["cpu.cfs_quota_us"] == "-1"
    assert cgroup_files(unlimited, 1)["memory.limit_in_bytes"] == "-1"
    assert cgroup_files(unlimited, 2) == {"cpu.weight": "1", "cpu.max": "max 100000", "memory.max": "max"}
    with pytest.raises(ValueError):
        cgroup_files(res, 3)


def test_paths():
    g = pod(container("a", limits={"cpu": "1", "memory": "1Gi"}), uid="aa-bb")
    b = pod(container("a", requests={"cpu": "1"}), uid="aa-bb")
    e = pod(container("a"), uid="aa-bb")
    assert pod_cgroup_path(g) == "/kubepods/podaa-bb"
    assert pod_cgroup_path(b) == "/kubepods/burstable/podaa-bb"
    assert pod_cgroup_path(e) == "/kubepods/besteffort/podaa-bb"
    assert pod_cgroup_path(g, "systemd") == "/kubepods.slice/kubepods-podaa_bb.slice"
    assert pod_cgroup_path(b, "systemd") == \
        "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-podaa_bb.slice"
    assert container_cgroup_path(b, "c1") == "/kubepods/burstable/podaa-bb/c1"
    assert container_cgroup_path(b, "c1", "systemd").endswith("/cri-containerd-c1.scope")
    assert qos_cgroup_path("besteffort", "systemd") == "/kubepods.slice/kubepods-besteffort.slice"
    assert qos_cgroup_path("") == "/kubepods"


def test_explain_pod():
    config = NodeConfig.from_flags(capacity="cpu=4,memory=16Gi", kube_reserved="cpu=500m,memory=1Gi")
    p = pod(container("app", requests={"cpu": "250m", "memory": "1Gi"}, limits={"cpu": "500m", "memory": "2Gi"}),
            init=[container("setup", requests={"cpu": "100m"})], overhead={"cpu": "100m", "memory": "50Mi"})
    other = pod(container("x", requests={"cpu": "1"}), uid="other")
    out = explain_pod(p, config, pods_on_node=[other, p])
    json.dumps(out)  # JSON-friendly
    assert out["qosClass"] == "Burstable"
    assert out["kubepods"]["path"] == "/kubepods"
    assert out["kubepods"]["v1"]["memory.limit_in_bytes"] == str(15 * GI)
    assert out["qos"]["path"] == "/kubepods/burstable"
    assert out["qos"]["v1"]["cpu.shares"] == str(milli_cpu_to_shares(1000 + 350))
    assert out["pod"]["path"] == "/kubepods/burstable/pod1234-abcd"
    assert out["pod"]["overhead"] == {"cpu": "100m", "memory": "50Mi"}
    assert out["pod"]["requests"]["cpu"] == "350m"
    assert out["pod"]["v1"]["cpu.shares"] == "358"
    assert out["pod"]["v2"]["cpu.max"] == "max 100000"     # the init container has no cpu limit
    names = [c["name"] for c in out["containers"]]
    assert names == ["setup", "app"]
    app = out["containers"][1]
    assert app["oomScoreAdj"] == 1000 - 1000 * GI // (16 * GI) == 938
    assert app["v2"] == {"cpu.weight": str(cgroup_v2_weight(256)), "cpu.max": "50000 100000",
                         "memory.max": str(2 * GI)}
    assert out["containers"][0]["init"] is True
    guaranteed = explain_pod(pod(container("a", limits={"cpu": "1", "memory": "1Gi"})), config)
    assert guaranteed["qos"]["path"] == "/kubepods" and "note" in guaranteed["qos"]
