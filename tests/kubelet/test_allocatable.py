import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from kvert.kubelet.allocatable import (allocatable, eviction_reservation, kubepods_resources,
                                       node_status_resources, reservation, reservation_errors)
from kvert.kubelet.config import NodeConfig, parse_eviction_thresholds

GI = 2**30
MI = 2**20


def test_seed_004_example_32gi_to_28_9gi():
    # 32Gi capacity, kube-reserved 2Gi, system-reserved 1Gi, eviction-hard <100Mi -> "28.9Gi"
    config = NodeConfig.from_flags(capacity="cpu=8,memory=32Gi", kube_reserved="memory=2Gi",
                                   system_reserved="memory=1Gi", eviction_hard="memory.available<100Mi")
    result = allocatable(config)
    assert result["memory"] == 32 * GI - 3 * GI - 100 * MI == 31_033_655_296
    assert round(result["memory"] / GI, 1) == 28.9
    assert node_status_resources(config)["allocatable"]["memory"] == "29596Mi"
    assert node_status_resources(config)["capacity"]["memory"] == "32Gi"
    assert result["cpu"] == 8000
    assert result["pods"] == 110


def test_seed_004_kube_reserved_flag_example():
    # seed 004: --kube-reserved=cpu=500m,memory=5Mi
    config = NodeConfig.from_flags(capacity="cpu=4,memory=16Gi", kube_reserved="cpu=500m,memory=5Mi",
                                   eviction_hard="")
    assert allocatable(config) == {"cpu": 3500, "memory": 16 * GI - 5 * MI, "pods": 110}
    assert node_status_resources(config)["allocatable"]["cpu"] == "3500m"


def test_kubernetes_docs_example():
    # "Reserve Compute Resources for System Daemons": 16 CPUs, 32Gi, 100Gi storage;
    # kube-reserved cpu=1,memory=2Gi,ephemeral-storage=1Gi; system-reserved
    # cpu=500m,memory=1Gi,ephemeral-storage=1Gi; eviction-hard memory.available<500Mi,nodefs.available<10%
    # -> 14.5 CPUs, 28.5Gi of memory (29196Mi exactly), 88Gi of local storage as the page
    # rounds it; the kubelet holds 10% as a float32, so it is 160 bytes less (88Gi - 160).
    config = NodeConfig.from_flags(
        capacity="cpu=16,memory=32Gi,ephemeral-storage=100Gi",
        kube_reserved="cpu=1,memory=2Gi,ephemeral-storage=1Gi",
        system_reserved="cpu=500m,memory=1Gi,ephemeral-storage=1Gi",
        eviction_hard="memory.available<500Mi,nodefs.available<10%")
    result = allocatable(config)
    assert result["cpu"] == 14_500
    assert result["memory"] == 32 * GI - 3 * GI - 500 * MI
    assert round(result["memory"] / GI, 1) == 28.5
    assert result["ephemeral-storage"] == 88 * GI - 160
    assert node_status_resources(config)["allocatable"] == {
        "cpu": "14500m", "memory": "29196Mi", "ephemeral-storage": "94489280352", "pods": "110"}
    assert eviction_reservation(config) == {"memory": 500 * MI, "ephemeral-storage": 10 * GI + 160}
    assert reservation(config) == {"cpu": 1500, "memory": 3 * GI + 500 * MI, "ephemeral-storage": 12 * GI + 160}
    # the kubepods cgroup: capacity minus the reservations, without the eviction threshold
    assert kubepods_resources(config) == {"cpu": 14_500, "memory": 29 * GI, "ephemeral-storage": 98 * GI}


def test_default_eviction_thresholds_reserve_memory_and_storage():
    config = NodeConfig(capacity={"cpu": 2000, "memory": 8 * GI, "ephemeral-storage": 50 * GI})
    result = allocatable(config)
    assert result["memory"] == 8 * GI - 100 * MI
    assert result["ephemeral-storage"] == 45 * GI - 80  # 10% of nodefs, in float32 as the kubelet


def test_node_allocatable_reservation_for_scheduling():
    # pkg/kubelet/cm TestNodeAllocatableReservationForScheduling: kube-reserved 100m/100Mi,
    # system-reserved 50m/50Mi, capacity 10 CPUs / 10Gi, hard threshold 5% -> 150m, 694157320
    config = NodeConfig.from_flags(capacity="cpu=10,memory=10Gi", kube_reserved="cpu=100m,memory=100Mi",
                                   system_reserved="cpu=50m,memory=50Mi", eviction_hard="memory.available<5%")
    assert reservation(config) == {"cpu": 150, "memory": 694157320}


def test_ignore_eviction_threshold_flag():
    config = NodeConfig(capacity={"cpu": 2000, "memory": 8 * GI}, kube_reserved={"memory": GI},
                        ignore_eviction_threshold=True)
    assert allocatable(config)["memory"] == 7 * GI


def test_kubepods_without_pods_enforcement_is_capacity():
    config = NodeConfig(capacity={"cpu": 2000, "memory": 8 * GI}, kube_reserved={"memory": GI},
                        enforce_node_allocatable=frozenset())
    assert kubepods_resources(config) == {"cpu": 2000, "memory": 8 * GI}


def test_never_negative_and_errors_reported():
    config = NodeConfig(capacity={"cpu": 1000, "memory": GI}, kube_reserved={"cpu": 2000, "memory": 2 * GI})
    assert allocatable(config)["cpu"] == 0 and allocatable(config)["memory"] == 0
    assert len(reservation_errors(config)) == 2


@given(cap=st.integers(0, 2**40), kube=st.integers(0, 2**40), system=st.integers(0, 2**40),
       pct=st.integers(1, 99))
def test_allocatable_is_capacity_minus_reservations_clamped(cap, kube, system, pct):
    config = NodeConfig(capacity={"memory": cap, "ephemeral-storage": cap, "cpu": 1000},
                        kube_reserved={"memory": kube}, system_reserved={"ephemeral-storage": system},
                        eviction_hard=parse_eviction_thresholds(f"memory.available<1Mi,nodefs.available<{pct}%"))
    result = allocatable(config)
    assert result["memory"] == max(0, cap - kube - MI)
    threshold = int(cap * float(np.float32(np.float32(pct) / np.float32(100))))
    assert result["ephemeral-storage"] == max(0, cap - system - threshold)
    assert all(v >= 0 for v in result.values())
