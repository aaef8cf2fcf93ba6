from fractions import Fraction

import pytest

from kvert.kubelet.config import (DEFAULT_EVICTION_HARD, ConfigError, EvictionThreshold, NodeConfig,
                                  format_duration, load_kubelet_configuration, parse_duration,
                                  parse_eviction_thresholds, parse_resource_pairs)

GI = 2**30
MI = 2**20


def test_resource_pairs_flag_and_file_forms():
    assert parse_resource_pairs("cpu=500m,memory=1Gi") == {"cpu": 500, "memory": GI}
    assert parse_resource_pairs(" cpu = 1 , memory=5Mi, ") == {"cpu": 1000, "memory": 5 * MI}
    assert parse_resource_pairs({"cpu": "250m", "ephemeral-storage": "1Gi", "pid": "1000"}) == \
        {"cpu": 250, "ephemeral-storage": GI, "pid": 1000}
    assert parse_resource_pairs({"cpu": 1}) == {"cpu": 1000}
    assert parse_resource_pairs("") == {}
    assert parse_resource_pairs(None) == {}


def test_resource_pairs_errors_name_the_field():
    with pytest.raises(ConfigError) as err:
        parse_resource_pairs("nvidia.com/gpu=1", "kubeReserved")
    assert err.value.field == "kubeReserved (--kube-reserved)"
    assert 'cannot reserve "nvidia.com/gpu" resource' in str(err.value)
    with pytest.raises(ConfigError, match="cannot be negative"):
        parse_resource_pairs("memory=-1Gi", "systemReserved")
    with pytest.raises(ConfigError, match="failed to parse quantity"):
        parse_resource_pairs("memory=lots", "systemReserved")
    with pytest.raises(ConfigError, match="malformed pair"):
        parse_resource_pairs("cpu", "kubeReserved")
    # capacity may name any resource
    assert parse_resource_pairs("pods=20,hugepages-2Mi=1Gi", "capacity", allowed=None) == \
        {"pods": 20, "hugepages-2Mi": GI}


def test_eviction_thresholds():
    got = parse_eviction_thresholds("memory.available<100Mi,nodefs.available<10%")
    assert got == (EvictionThreshold("memory.available", "<", quantity=100 * MI, text="100Mi"),
                   EvictionThreshold("nodefs.available", "<", percentage=Fraction(1, 10), text="10%"))
    assert [str(t) for t in got] == ["memory.available<100Mi", "nodefs.available<10%"]
    assert got[1].amount(100 * GI) == 10 * GI + 160     # float32, as the kubelet
    assert got[0].amount(123) == 100 * MI
    # the file form is a map
    assert parse_eviction_thresholds({"memory.available": "1Gi"})[0].quantity == GI
    # 0% and 100% disable a threshold, as in the kubelet
    assert parse_eviction_thresholds("memory.available<0%,nodefs.available<100%") == ()
    assert parse_eviction_thresholds("nodefs.available<7.5%")[0].percentage == Fraction(3, 40)


@pytest.mark.parametrize("text, message", [
    ("memory.available>100Mi", "invalid eviction threshold syntax"),
    ("memory.available=100Mi", "invalid eviction threshold syntax"),
    ("memory.free<100Mi", "unsupported eviction signal memory.free"),
    ("memory.available<100Mi,memory.available<1Gi", "duplicate eviction threshold"),
    ("memory.available<0", "must be positive"),
    ("memory.available<-1Gi", "must be positive"),
    ("nodefs.available<-5%", "must be >= 0%"),
    ("nodefs.available<150%", "must be <= 100%"),
    ("memory.available<lots", "memory.available"),
])
def test_eviction_threshold_errors(text, message):
    with pytest.raises(ConfigError, match=message) as err:
        parse_eviction_thresholds(text, "evictionHard")
    assert err.value.field == "evictionHard (--eviction-hard)"


def test_durations():
    assert parse_duration("1m30s") == 90
    assert parse_duration("100ms") == pytest.approx(0.1)
    assert parse_duration("5m") == 300
    assert parse_duration("1h2m3s") == 3723
    assert parse_duration(7) == 7
    with pytest.raises(ConfigError):
        parse_duration("5 minutes")
    assert format_duration(90) == "1m30s"
    assert format_duration(0.1) == "100ms"
    assert format_duration(10) == "10s"


def test_kubelet_configuration_defaults():
    config = load_kubelet_configuration({"apiVersion": "kubelet.config.k8s.io/v1beta1",
                                         "kind": "KubeletConfiguration"})
    assert config.eviction_hard == DEFAULT_EVICTION_HARD
    assert {str(t) for t in config.eviction_hard} == {
        "memory.available<100Mi", "nodefs.available<10%", "nodefs.inodesFree<5%",
        "imagefs.available<15%", "imagefs.inodesFree<5%"}
    assert config.enforce_node_allocatable == {"pods"}
    assert config.max_pods == 110 and config.capacity["pods"] == 110
    assert config.cpu_manager_policy == "none"
    assert config.cgroup_driver == "cgroupfs"
    assert config.cpu_cfs_quota and config.cpu_cfs_quota_period_us == 100_000
    assert config.kube_reserved == {} and config.system_reserved == {}
    assert config.eviction_pressure_transition_period == 300


def test_kubelet_configuration_file(tmp_path):
    path = tmp_path / "kubelet.yaml"
    path.write_text("""
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
kubeReserved:
  cpu: 500m
  memory: 2Gi
systemReserved:
  memory: 1Gi
evictionHard:
  memory.available: 100Mi
evictionSoft:
  memory.available: 1.5Gi
evictionSoftGracePeriod:
  memory.available: 1m30s
evictionMinimumReclaim:
  memory.available: 0Mi
  nodefs.available: 500Mi
enforceNodeAllocatable: [pods, kube-reserved]
kubeReservedCgroup: /kube.slice
cpuManagerPolicy: static
maxPods: 50
cgroupDriver: systemd
cpuCFSQuotaPeriod: 50ms
someFieldKvertIgnores: true
""")
    config = load_kubelet_configuration(path, capacity="cpu=8,memory=32Gi", node_name="worker-1",
                                        labels="zone=a,tier=web")
    assert config.node_name == "worker-1"
    assert config.labels == {"zone": "a", "tier": "web"}
    assert config.capacity == {"cpu": 8000, "memory": 32 * GI, "pods": 50}
    assert config.kube_reserved == {"cpu": 500, "memory": 2 * GI}
    assert [str(t) for t in config.eviction_hard] == ["memory.available<100Mi"]  # nothing inherited
    assert config.eviction_soft[0].grace_period == 90
    assert [str(t) for t in config.eviction_minimum_reclaim] == ["memory.available<0Mi", "nodefs.available<500Mi"]
    assert config.enforce_node_allocatable == {"pods", "kube-reserved"}
    assert config.cpu_manager_policy == "static"
    assert config.cgroup_driver == "systemd"
    assert config.cpu_cfs_quota_period_us == 50_000


def test_empty_eviction_hard_means_none():
    config = load_kubelet_configuration({"evictionHard": {}})
    assert config.eviction_hard == ()


@pytest.mark.parametrize("doc, field, message", [
    ({"apiVersion": "kubelet.config.k8s.io/v1"}, "apiVersion", "expected"),
    ({"kind": "Pod"}, "kind", "expected"),
    ({"kubeReserved": {"gpu": "1"}}, "kubeReserved (--kube-reserved)", "cannot reserve"),
    ({"enforceNodeAllocatable": ["pods", "everything"]}, "enforceNodeAllocatable (--enforce-node-allocatable)",
     "everything"),
    ({"enforceNodeAllocatable": ["none", "pods"]}, "enforceNodeAllocatable (--enforce-node-allocatable)",
     "additional enforcements"),
    ({"enforceNodeAllocatable": ["pods", "kube-reserved"]}, "kubeReservedCgroup (--kube-reserved-cgroup)",
     "must be specified"),
    ({"enforceNodeAllocatable": ["system-reserved"]}, "systemReservedCgroup (--system-reserved-cgroup)",
     "must be specified"),
    ({"cgroupsPerQOS": False}, "enforceNodeAllocatable (--enforce-node-allocatable)", "cgroupsPerQOS"),
    ({"cpuManagerPolicy": "static"}, "cpuManagerPolicy (--cpu-manager-policy)", "greater than zero"),
    ({"cpuManagerPolicy": "dynamic"}, "cpuManagerPolicy (--cpu-manager-policy)", "unknown policy"),
    ({"maxPods": -1}, "maxPods (--max-pods)", "negative"),
    ({"evictionSoft": {"memory.available": "1Gi"}}, "evictionSoftGracePeriod (--eviction-soft-grace-period)",
     "grace period must be specified"),
    ({"cpuCFSQuotaPeriod": "2s"}, "cpuCFSQuotaPeriod (--cpu-cfs-quota-period)", "between 1ms and 1sec"),
    ({"kubeReserved": {"memory": "20Gi"}}, "", "Resource 'memory' has a reservation"),
])
def test_configuration_errors(doc, field, message):
    with pytest.raises(ConfigError, match=message) as err:
        load_kubelet_configuration(doc, capacity="cpu=4,memory=16Gi")
    assert err.value.field == field
    assert isinstance(err.value, ValueError)


def test_enforcement_none_and_cgroups_per_qos_off():
    config = load_kubelet_configuration({"cgroupsPerQOS": False, "enforceNodeAllocatable": ["none"]})
    assert config.enforce_node_allocatable == frozenset()
    assert load_kubelet_configuration({"enforceNodeAllocatable": []}).enforce_node_allocatable == frozenset()


def test_from_flags():
    config = NodeConfig.from_flags(capacity="cpu=4,memory=16Gi", kube_reserved="cpu=500m,memory=5Mi",
                                   system_reserved="memory=1Gi", eviction_hard="memory.available<100Mi",
                                   enforce_node_allocatable="pods,system-reserved",
                                   system_reserved_cgroup="/system.slice", cpu_manager_policy="static",
                                   max_pods="30", node_name="n1", node_labels="a=b")
    assert config.kube_reserved == {"cpu": 500, "memory": 5 * MI}
    assert config.enforce_node_allocatable == {"pods", "system-reserved"}
    assert config.max_pods == 30 and config.capacity["pods"] == 30
    assert config.labels == {"a": "b"}
    # unset --eviction-hard means the defaults; "" means none
    assert NodeConfig.from_flags(capacity="cpu=1,memory=1Gi").eviction_hard == DEFAULT_EVICTION_HARD
    assert NodeConfig.from_flags(capacity="cpu=1,memory=1Gi", eviction_hard="").eviction_hard == ()
    assert NodeConfig.from_flags(capacity="cpu=1,memory=1Gi", enforce_node_allocatable="").enforce_node_allocatable \
        == frozenset()
    with pytest.raises(ConfigError) as err:
        NodeConfig.from_flags(capacity="cpu=1,memory=1Gi", kube_reserved="disk=1")
    assert "--kube-reserved" in str(err.value)


def test_from_argv_flags_override_the_file(tmp_path):
    path = tmp_path / "k.yaml"
    path.write_text("kind: KubeletConfiguration\napiVersion: kubelet.config.k8s.io/v1beta1\nmaxPods: 40\n"
                    "kubeReserved: {cpu: 100m}\n")
    config = NodeConfig.from_argv([f"--config={path}", "--max-pods", "20", "--capacity=cpu=2,memory=4Gi",
                                   "--eviction-hard=memory.available<200Mi", "--hostname-override", "x",
                                   "--experimental-node-allocatable-ignore-eviction-threshold"])
    assert config.max_pods == 20
    assert config.kube_reserved == {"cpu": 100}
    assert config.node_name == "x"
    assert config.ignore_eviction_threshold
    assert [str(t) for t in config.eviction_hard] == ["memory.available<200Mi"]
    with pytest.raises(ConfigError, match="unknown flag"):
        NodeConfig.from_argv(["--no-such-flag=1"])


def test_pods_per_core():
    config = NodeConfig(capacity={"cpu": 4000, "memory": GI}, pods_per_core=10)
    assert config.capacity["pods"] == 40
    config = NodeConfig(capacity={"cpu": 64000, "memory": GI}, pods_per_core=10)
    assert config.capacity["pods"] == 110
    assert NodeConfig(capacity={"cpu": 1000, "memory": GI, "pods": 7}).max_pods == 7


def test_to_json():
    config = NodeConfig.from_flags(capacity="cpu=4,memory=16Gi", kube_reserved="memory=1Gi")
    j = config.to_json()
    assert j["capacity"]["memory"] == "16Gi" and j["kubeReserved"] == {"memory": "1Gi"}
    assert j["evictionHard"]["memory.available"] == "100Mi"


def test_container_log_rotation_and_local_storage_isolation_fields():
    # KubeletConfiguration defaults (kubelet-config.v1beta1): containerLogMaxSize 10Mi,
    # containerLogMaxFiles 5, containerLogMaxWorkers 1, containerLogMonitorInterval 10s,
    # localStorageCapacityIsolation true
    config = NodeConfig.from_flags()
    assert (config.container_log_max_size, config.container_log_max_files, config.container_log_max_workers,
            config.container_log_monitor_interval, config.local_storage_capacity_isolation) == \
        (10 * 2**20, 5, 1, 10.0, True)
    config = NodeConfig.from_argv(["--container-log-max-size=1Mi", "--container-log-max-files", "2",
                                   "--container-log-monitor-interval=3s", "--local-storage-capacity-isolation=false"])
    assert (config.container_log_max_size, config.container_log_max_files, config.container_log_monitor_interval,
            config.local_storage_capacity_isolation) == (2**20, 2, 3.0, False)
    with pytest.raises(ConfigError, match=r"containerLogMaxFiles \(--container-log-max-files\): 1 must be greater"):
        NodeConfig.from_argv(["--container-log-max-files=1"])
    with pytest.raises(ConfigError, match="containerLogMaxWorkers"):
        NodeConfig.from_argv(["--container-log-max-workers=0"])
