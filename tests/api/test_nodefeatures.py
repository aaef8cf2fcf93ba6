"""The node declared features registry (k8s.io/component-helpers/nodedeclaredfeatures, 1.36)."""

from __future__ import annotations

import copy

import pytest

from kvert.api import nodefeatures as ndf


def _cfg(gates: dict[str, bool] | None = None, policy: str = "none", version=(1, 36, 0)) -> ndf.NodeConfiguration:
    gates = gates or {}
    return ndf.NodeConfiguration(feature_gates=lambda name: gates.get(name, False), cpu_manager_policy=policy,
                                 version=version)


@pytest.mark.parametrize("policy,gate,expected", [
    ("static", True, True),      # "feature gate enabled, static policy"
    ("static", False, False),    # "feature gate disabled, static policy"
    ("none", True, True),        # "none policy"
])
def test_guaranteed_cpu_resize_discover(policy, gate, expected):
    """upstream: TestGuaranteedQoSPodCPUResizeFeature_Discover"""
    cfg = _cfg({"InPlacePodVerticalScalingExclusiveCPUs": gate}, policy)
    assert ndf.GUARANTEED_QOS_POD_CPU_RESIZE.discover(cfg) is expected


def _guaranteed() -> dict:
    return {"spec": {"containers": [{"name": "c1", "resources": {"requests": {"cpu": "1"}, "limits": {"cpu": "1"}}}]},
            "status": {"qosClass": "Guaranteed"}}


def test_guaranteed_cpu_resize_infer_for_update():
    """upstream: TestGuaranteedQoSPodCPUResizeFeature_InferFromUpdate"""
    infer = ndf.GUARANTEED_QOS_POD_CPU_RESIZE.infer_for_update
    burstable = _guaranteed()
    burstable["status"]["qosClass"] = "Burstable"
    assert not infer(burstable, copy.deepcopy(burstable))                       # not guaranteed QOS
    assert not infer(_guaranteed(), _guaranteed())                              # no CPU request change
    changed = _guaranteed()
    changed["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "2"
    assert infer(_guaranteed(), changed)                                        # CPU request changed
    limit_only = _guaranteed()
    limit_only["spec"]["containers"][0]["resources"]["limits"]["cpu"] = "2"
    assert not infer(_guaranteed(), limit_only)                                 # limit changed, not request
    assert not ndf.GUARANTEED_QOS_POD_CPU_RESIZE.infer_for_scheduling({})


def test_pod_level_resize_feature():
    """upstream: pod_level_resource_resize.go -- discovered from its gate; an update needs it when
    spec.resources changed (both absent: no)."""
    feature = ndf.POD_LEVEL_RESOURCES_RESIZE
    assert feature.name == "InPlacePodLevelResourcesVerticalScaling"
    assert feature.discover(_cfg({"InPlacePodLevelResourcesVerticalScaling": True}))
    assert not feature.discover(_cfg())
    plain = {"spec": {"containers": [{"name": "c"}]}}
    with_level = {"spec": {"resources": {"limits": {"cpu": "1"}}, "containers": [{"name": "c"}]}}
    same_level = {"spec": {"resources": {"limits": {"cpu": "1000m"}}, "containers": [{"name": "c"}]}}
    bigger = {"spec": {"resources": {"limits": {"cpu": "2"}}, "containers": [{"name": "c"}]}}
    assert not feature.infer_for_update(plain, plain)
    assert not feature.infer_for_update(with_level, same_level)     # semantically equal
    assert feature.infer_for_update(with_level, bigger)
    assert not feature.infer_for_scheduling(with_level["spec"])


def test_non_sidecar_init_container_resize_feature():
    """upstream: nonsidecar_initcontainers_resize.go -- an update changing a non-sidecar init
    container's resources needs it; a sidecar's does not."""
    feature = ndf.NON_SIDECAR_INIT_CONTAINER_RESIZE
    assert feature.name == "InPlacePodVerticalScalingInitContainers"

    def pod(init_cpu: str, side_cpu: str) -> dict:
        return {"spec": {"initContainers": [
            {"name": "i", "resources": {"requests": {"cpu": init_cpu}}},
            {"name": "s", "restartPolicy": "Always", "resources": {"requests": {"cpu": side_cpu}}}],
            "containers": [{"name": "c"}]}}
    assert feature.infer_for_update(pod("1", "1"), pod("2", "1"))
    assert not feature.infer_for_update(pod("1", "1"), pod("1", "2"))


def test_restart_all_containers_needed_for_scheduling():
    """upstream: restart_all_containers.go InferForScheduling"""
    spec = {"containers": [{"name": "main", "restartPolicy": "Never",
                            "restartPolicyRules": [{"action": "RestartAllContainers",
                                                    "exitCodes": {"operator": "In", "values": [42]}}]}]}
    assert ndf.RESTART_ALL_CONTAINERS.infer_for_scheduling(spec)
    assert not ndf.RESTART_ALL_CONTAINERS.infer_for_scheduling({"containers": [{"name": "main"}]})


def test_memory_backed_volume_resize_feature():
    """upstream: memory_backed_volumes_resize.go InferForUpdate"""
    feature = ndf.MEMORY_BACKED_VOLUMES_RESIZE

    def pod(limit: str | None, medium: str = "Memory") -> dict:
        empty: dict = {"medium": medium}
        if limit is not None:
            empty["sizeLimit"] = limit
        return {"spec": {"volumes": [{"name": "scratch", "emptyDir": empty}], "containers": [{"name": "c"}]}}
    assert feature.infer_for_update(pod("64Mi"), pod("128Mi"))
    assert feature.infer_for_update(pod(None), pod("128Mi"))
    assert not feature.infer_for_update(pod("64Mi"), pod("64Mi"))
    assert not feature.infer_for_update(pod("64Mi", ""), pod("128Mi", ""))   # not memory-backed


def test_discover_node_features_sorted_and_gated():
    """upstream: Framework.DiscoverNodeFeatures -- sorted names of the features discovered; a
    feature past its MaxVersion is no longer declared."""
    registry = ndf.FeatureRegistry()
    gates = {"InPlacePodLevelResourcesVerticalScaling": True, "InPlacePodVerticalScalingInitContainers": True}
    assert registry.discover_node_features(_cfg(gates)) == [
        "GuaranteedQoSPodCPUResize", "InPlacePodLevelResourcesVerticalScaling",
        "InPlacePodVerticalScalingInitContainers"]
    assert registry.discover_node_features(_cfg(gates, policy="static")) == [
        "InPlacePodLevelResourcesVerticalScaling", "InPlacePodVerticalScalingInitContainers"]
    old = ndf.Feature("Old", max_version=(1, 35, 0), discover=lambda cfg: True)
    assert ndf.FeatureRegistry([old]).discover_node_features(_cfg(version=(1, 36, 0))) == []
    assert ndf.FeatureRegistry([old]).discover_node_features(_cfg(version=(1, 35, 0))) == ["Old"]


def test_infer_for_pod_update_and_missing_features():
    """upstream: Framework.InferForPodUpdate; a target version is required."""
    registry = ndf.FeatureRegistry()
    old = {"spec": {"resources": {"limits": {"cpu": "1"}}, "containers": [{"name": "c"}]},
           "status": {"qosClass": "Burstable"}}
    new = copy.deepcopy(old)
    new["spec"]["resources"]["limits"]["cpu"] = "2"
    bits = registry.infer_for_pod_update(old, new, (1, 36, 0))
    assert registry.names(bits) == ["InPlacePodLevelResourcesVerticalScaling"]
    node = {"status": {"declaredFeatures": ["GuaranteedQoSPodCPUResize"]}}
    assert registry.missing(bits, node) == ["InPlacePodLevelResourcesVerticalScaling"]
    assert registry.missing(bits, {"status": {"declaredFeatures": ["InPlacePodLevelResourcesVerticalScaling"]}}) == []
    with pytest.raises(ValueError, match="target version cannot be nil"):
        registry.infer_for_pod_update(old, new, None)
    assert ndf.parse_version("v1.36.0-kvert") == (1, 36, 0)
