"""The node agent publishes ``status.declaredFeatures`` (KEP-5328, NodeDeclaredFeatures beta and
on in 1.36): the 1.36 registry's features its gates and CPU manager policy give it, sorted."""

from __future__ import annotations

from kvert.clock import VirtualClock

from tests.kubelet.test_agent_support import cluster, node_config, start_agent, stop


def _declared(**config) -> list[str] | None:
    clock = VirtualClock()
    out: list = []

    async def main():
        client = await cluster(clock)
        agent, task = await start_agent(client, clock, config=node_config(**config))
        node = await client.get("nodes", "node-1")
        out.append(node["status"].get("declaredFeatures"))
        await stop(agent, task)
    clock.run(main())
    return out[0]


def test_a_default_1_36_node_declares_its_resize_features():
    """upstream: Framework.DiscoverNodeFeatures over features.AllFeatures with 1.36's defaults
    (cpuManagerPolicy none; InPlacePodLevelResourcesVerticalScaling and
    InPlacePodVerticalScalingInitContainers on)."""
    assert _declared() == ["GuaranteedQoSPodCPUResize", "InPlacePodLevelResourcesVerticalScaling",
                           "InPlacePodVerticalScalingInitContainers"]


def test_gates_and_cpu_manager_policy_decide_what_is_declared():
    """upstream: TestGuaranteedQoSPodCPUResizeFeature_Discover ('feature gate disabled, static
    policy': not declared); each resize feature follows its gate; the 1.37 alpha gate adds its own."""
    assert _declared(cpu_manager_policy="static", kube_reserved={"cpu": 1000}, feature_gates={
        "InPlacePodLevelResourcesVerticalScaling": False,
        "InPlacePodVerticalScalingMemoryBackedVolumes": True}) == [
        "InPlacePodVerticalScalingInitContainers", "InPlacePodVerticalScalingMemoryBackedVolumes"]


def test_nothing_is_declared_with_node_declared_features_off():
    assert _declared(feature_gates={"NodeDeclaredFeatures": False}) is None


def test_a_pod_needing_an_undeclared_feature_is_rejected():
    """upstream: lifecycle declaredFeaturesAdmitHandler -- reason PodFeatureUnsupported, "Pod
    requires node features that are not available: ..." (kvert's API server refuses restart
    rules, so the rule is checked on the admission function; a kvert node never declares
    RestartAllContainersOnContainerExits)."""
    from kvert.api.nodefeatures import DEFAULT_REGISTRY
    from kvert.kubelet import admission as adm
    body = {"spec": {"containers": [{"name": "main", "restartPolicy": "Never", "restartPolicyRules": [
        {"action": "RestartAllContainers", "exitCodes": {"operator": "In", "values": [42]}}]}]}}
    declared = ["GuaranteedQoSPodCPUResize", "InPlacePodLevelResourcesVerticalScaling"]
    decision = adm.declared_features_refusal(body, declared, DEFAULT_REGISTRY, (1, 36, 0))
    assert decision is not None and decision.reason == "PodFeatureUnsupported"
    assert adm.rejection_message(decision) == ("Pod was rejected: Pod requires node features that are not "
                                               "available: RestartAllContainersOnContainerExits")
    assert adm.declared_features_refusal({"spec": {"containers": [{"name": "c"}]}}, declared,
                                         DEFAULT_REGISTRY, (1, 36, 0)) is None
