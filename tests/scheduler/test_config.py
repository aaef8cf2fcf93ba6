"""KubeSchedulerConfiguration v1 acceptance: every default plugin enabled, disabled, re-weighted
and configured, as kube-scheduler 1.35 loads them (v1 defaulting, ``validatePluginConfig``,
``NewFramework``)."""

import pytest

from kvert.scheduler.config import ConfigError, build_framework, load_config
from kvert.scheduler.framework import CycleState
from kvert.scheduler.plugins import DEFAULT_PLUGINS

from .helpers import Bench, node, pod

EVERY_PLUGIN = """\
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
percentageOfNodesToScore: 50
profiles:
- schedulerName: default-scheduler
  plugins:
    multiPoint:
      enabled:
      - name: TaintToleration
        weight: 5
      - name: NodeAffinity
        weight: 4
      - name: NodeResourcesFit
        weight: 3
      - name: PodTopologySpread
        weight: 6
      - name: InterPodAffinity
        weight: 7
      - name: NodeResourcesBalancedAllocation
        weight: 8
      - name: ImageLocality
        weight: 9
      - name: VolumeBinding
        weight: 10
    score:
      enabled:
      - name: ImageLocality
        weight: 200
  pluginConfig:
  - name: NodeResourcesFit
    args:
      apiVersion: kubescheduler.config.k8s.io/v1
      kind: NodeResourcesFitArgs
      ignoredResources: [example.com/foo]
      ignoredResourceGroups: [example.org]
      scoringStrategy:
        type: RequestedToCapacityRatio
        resources:
        - {name: cpu, weight: 2}
        - {name: memory}
        requestedToCapacityRatio:
          shape:
          - {utilization: 0, score: 0}
          - {utilization: 100, score: 10}
  - name: NodeResourcesBalancedAllocation
    args:
      resources:
      - {name: cpu, weight: 1}
      - {name: memory}
      - {name: nvidia.com/gpu, weight: 1}
  - name: NodeAffinity
    args:
      addedAffinity:
        requiredDuringSchedulingIgnoredDuringExecution:
          nodeSelectorTerms:
          - matchExpressions:
            - {key: pool, operator: NotIn, values: [reserved]}
  - name: InterPodAffinity
    args:
      hardPodAffinityWeight: 10
      ignorePreferredTermsOfExistingPods: true
  - name: PodTopologySpread
    args:
      defaultingType: List
      defaultConstraints:
      - maxSkew: 2
        topologyKey: topology.kubernetes.io/zone
        whenUnsatisfiable: ScheduleAnyway
  - name: DefaultPreemption
    args:
      minCandidateNodesPercentage: 20
      minCandidateNodesAbsolute: 50
  - name: VolumeBinding
    args:
      bindTimeoutSeconds: 300
  - name: DynamicResources
    args:
      filterTimeout: 30s
  - name: TaintToleration
  - name: NodePorts
  - name: VolumeRestrictions
  - name: NodeVolumeLimits
  - name: VolumeZone
  - name: ImageLocality
  - name: NodeUnschedulable
  - name: NodeName
  - name: SchedulingGates
  - name: PrioritySort
  - name: DefaultBinder
"""


def test_a_v1_file_configuring_every_default_plugin_loads(tmp_path):
    path = tmp_path / "scheduler.yaml"
    path.write_text(EVERY_PLUGIN)
    cfg = load_config(path)
    b = Bench([node("a"), node("b")], config=cfg)
    fw = b.fw
    assert set(fw.plugins) == {n for n, _ in DEFAULT_PLUGINS}
    # getScoreWeights: score.enabled first, then multiPoint
    assert fw.weights["ImageLocality"] == 200
    assert fw.weights["TaintToleration"] == 5 and fw.weights["VolumeBinding"] == 10
    fit = fw.plugin("NodeResourcesFit")
    assert fit.scorer.strategy == "RequestedToCapacityRatio"
    assert fit.scorer.resources == [("cpu", 2), ("memory", 1)]     # weight 0/absent -> 1
    assert fit.ignored == {"example.com/foo"} and fit.ignored_groups == {"example.org"}
    assert fw.plugin("NodeResourcesBalancedAllocation").scorer.names == \
        ["cpu", "memory", "nvidia.com/gpu"]
    assert fw.plugin("VolumeBinding").bind_timeout_seconds == 300
    assert fw.plugin("DynamicResources").filter_timeout == 30.0
    # the volume plugins and DynamicResources filter and score nothing
    nodes = b.nodes()
    state = CycleState()
    for name in ("VolumeRestrictions", "NodeVolumeLimits", "VolumeBinding", "VolumeZone",
                 "DynamicResources"):
        _, st = fw.plugin(name).pre_filter(state, pod("p"), nodes)
        assert st.is_skip, name
    assert fw.plugin("VolumeBinding").pre_score(state, pod("p"), nodes).is_skip
    assert b.filter(pod("p", cpu="1"))[0] == ["a", "b"]


def test_every_default_plugin_can_be_disabled_one_by_one():
    for name, _ in DEFAULT_PLUGINS:
        if name in ("PrioritySort", "DefaultBinder"):
            continue   # a profile needs a queueSort and a bind plugin
        cfg = load_config({"profiles": [{"plugins": {"multiPoint": {"disabled": [{"name": name}]}}}]})
        fw = build_framework(cfg.profiles[0], Bench([node("a")]).fw.handle)
        assert name not in fw.plugins, name


def test_every_default_plugin_can_be_re_enabled_at_its_own_points_after_disabling_all():
    # the extension points each default plugin implements upstream
    points = {
        "SchedulingGates": ["preEnqueue"], "PrioritySort": ["queueSort"],
        "NodeUnschedulable": ["filter"], "NodeName": ["filter"],
        "TaintToleration": ["filter", "score"], "NodeAffinity": ["preFilter", "filter", "score"],
        "NodePorts": ["preFilter", "filter"], "NodeResourcesFit": ["preFilter", "filter", "score"],
        "VolumeRestrictions": ["preFilter", "filter"], "NodeVolumeLimits": ["preFilter", "filter"],
        "VolumeBinding": ["preFilter", "filter", "reserve", "preBind", "preScore", "score"],
        "VolumeZone": ["preFilter", "filter"],
        "PodTopologySpread": ["preFilter", "filter", "preScore", "score"],
        "InterPodAffinity": ["preFilter", "filter", "preScore", "score"],
        "DynamicResources": ["preEnqueue", "preFilter", "filter", "postFilter", "reserve",
                             "preBind"],
        "DefaultPreemption": ["postFilter"],
        "NodeResourcesBalancedAllocation": ["preScore", "score"],
        "ImageLocality": ["score"], "DefaultBinder": ["bind"],
        "NodeDeclaredFeatures": ["preFilter", "filter"],   # 1.36: beta, on, appended
    }
    assert set(points) == {n for n, _ in DEFAULT_PLUGINS}
    plugins: dict = {"multiPoint": {"disabled": [{"name": "*"}]}}
    for name, pts in points.items():
        for p in pts:
            plugins.setdefault(p, {"enabled": []})["enabled"].append(
                {"name": name, "weight": 2} if p == "score" else {"name": name})
    cfg = load_config({"profiles": [{"plugins": plugins}]})
    fw = build_framework(cfg.profiles[0], Bench([node("a")]).fw.handle)
    for name, pts in points.items():
        for p in pts:
            assert name in [x.name for x in fw.points[p]], (name, p)
    assert fw.weights["ImageLocality"] == 2


def test_legacy_volume_limit_plugins_are_accepted_as_no_ops():
    cfg = load_config({"profiles": [{"plugins": {"filter": {"enabled": [
        {"name": n} for n in ("EBSLimits", "GCEPDLimits", "AzureDiskLimits", "CinderLimits")]}}}]})
    b = Bench([node("a")], config=cfg)
    assert b.filter(pod("p"))[0] == ["a"]


def test_weights_zero_means_one_and_any_int32_is_accepted():
    cfg = {"profiles": [{"plugins": {
        "multiPoint": {"enabled": [{"name": "TaintToleration"}, {"name": "NodeAffinity", "weight": 0}]},
        "score": {"enabled": [{"name": "NodeResourcesFit", "weight": 500}]}}}]}
    fw = Bench([node("a")], config=cfg).fw
    # a re-configured default loses its default weight (3, 2): mergePluginSet replaces the entry
    assert fw.weights["TaintToleration"] == 1 and fw.weights["NodeAffinity"] == 1
    assert fw.weights["NodeResourcesFit"] == 500
    with pytest.raises(ConfigError, match="weight"):
        load_config({"profiles": [{"plugins": {"score": {"enabled": [
            {"name": "NodeResourcesFit", "weight": 2**31}]}}}]})


def test_plugin_config_of_a_plugin_that_is_not_enabled_is_ignored():
    # v1 defaulting adds args for every default plugin; NewFramework initializes only the
    # plugins a profile needs, so args of the others (even kvert-unknown names) are ignored
    cfg = load_config({"profiles": [{
        "plugins": {"multiPoint": {"disabled": [{"name": "NodeResourcesFit"}]}},
        "pluginConfig": [
            {"name": "NodeResourcesFit", "args": {"scoringStrategy": {"type": "MostAllocated"}}},
            {"name": "SomeOutOfTreePlugin", "args": {"anything": 1}}]}]})
    fw = Bench([node("a")], config=cfg).fw
    assert "NodeResourcesFit" not in fw.plugins


@pytest.mark.parametrize("name,args,message", [
    # validatePluginConfig validates these even when the plugin is disabled
    ("VolumeBinding", {"bindTimeoutSeconds": -1},
     r"^profiles\[0\]\.pluginConfig\[0\]\.args\.bindTimeoutSeconds: Invalid value: -1: invalid "
     r"BindTimeoutSeconds, should not be a negative value$"),
    ("NodeResourcesBalancedAllocation", {"resources": [{"name": "cpu", "weight": 2}]},
     r"^profiles\[0\]\.pluginConfig\[0\]\.args\.resources\[0\]\.weight: Invalid value: 2: "
     r"must be 1$"),
])
def test_validated_args_of_disabled_plugins_are_still_checked(name, args, message):
    with pytest.raises(ConfigError, match=message):
        load_config({"profiles": [{
            "plugins": {"multiPoint": {"disabled": [{"name": name}]}},
            "pluginConfig": [{"name": name, "args": args}]}]})


def test_duplicate_plugin_config_is_refused():
    with pytest.raises(ConfigError, match=r"profiles\[0\]\.pluginConfig\[1\]: Duplicate value: "
                                          r"'NodeResourcesFit'"):
        load_config({"profiles": [{"pluginConfig": [
            {"name": "NodeResourcesFit", "args": {}}, {"name": "NodeResourcesFit", "args": {}}]}]})


def test_unknown_enabled_plugin_is_refused():
    with pytest.raises(ConfigError, match="'NoSuchPlugin' does not exist"):
        load_config({"profiles": [{"plugins": {"multiPoint": {"enabled": [{"name": "NoSuchPlugin"}]}}}]})


@pytest.mark.parametrize("name,args,message", [
    # ValidateNodeResourcesFitArgs (validation_pluginargs.go), relative to the args
    ("NodeResourcesFit", {"scoringStrategy": {"resources": [{"name": "cpu"}]}},
     r"args\.scoringStrategy\.type: Unsupported value: '': supported values: \"LeastAllocated\", "
     r"\"MostAllocated\", \"RequestedToCapacityRatio\""),
    ("NodeResourcesFit", {"scoringStrategy": {"type": "RequestedToCapacityRatio"}},
     r"args\.scoringStrategy\.requestedToCapacityRatio: Required value: must be specified when "
     r"type is RequestedToCapacityRatio"),
    ("NodeResourcesFit", {"scoringStrategy": {"type": "LeastAllocated", "requestedToCapacityRatio": {
        "shape": [{"utilization": 0, "score": 0}]}}},
     r"args\.scoringStrategy\.requestedToCapacityRatio: Forbidden: must be nil when type is not "
     r"RequestedToCapacityRatio"),
    ("NodeResourcesFit", {"scoringStrategy": {"type": "MostAllocated", "resources": [
        {"name": "memory", "weight": 1}, {"name": "cpu", "weight": -1}]}},
     r"args\.scoringStrategy\.resources\[1\]\.weight: Invalid value: -1: resource weight of cpu "
     r"not in valid range \(0, 100\]"),
    ("NodeResourcesFit", {"ignoredResourceGroups": ["example.com/aaa"]},
     r"args\.ignoredResourceGroups\[0\]: Invalid value: 'example.com/aaa': resource group name "
     r"can't contain '/'"),
    ("NodeResourcesFit", {"ignoredResources": ["-bad-"]}, r"args\.ignoredResources\[0\]: Invalid value"),
    ("NodeResourcesFit", {"scoringStrategy": {"typ": "MostAllocated"}},
     r"args: strict decoding error: unknown field \"scoringStrategy\.typ\""),
    ("NodeResourcesBalancedAllocation", {"resources": [{"name": "cpu"}, {"name": "cpu"}]},
     r"args\.resources\[1\]\.name: Duplicate value: 'cpu'"),
    ("VolumeBinding", {"shape": [{"utilization": 0, "score": 10}]},
     r"args\.shape: Invalid value: .*unexpected field `shape`, remove it or turn on the feature "
     r"gate StorageCapacityScoring"),
    ("DynamicResources", {"filterTimeout": "-1s"},
     r"args\.filterTimeout: Invalid value: '-1s': must be zero or positive"),
    ("DynamicResources", {"bindingTimeout": "10m"},
     r"args\.bindingTimeout: Forbidden: DRADeviceBindingConditions or DRAResourceClaimDeviceStatus "
     r"feature gate is disabled"),
    ("VolumeZone", {"anything": True}, r"args: strict decoding error: unknown field \"anything\""),
])
def test_invalid_args_name_the_field(name, args, message):
    with pytest.raises(ConfigError, match=r"profiles\[0\]\.pluginConfig\[0\]\." + message):
        load_config({"profiles": [{"pluginConfig": [{"name": name, "args": args}]}]})


def test_profiles_get_their_own_plugins_and_args():
    cfg = load_config({"profiles": [
        {"schedulerName": "default-scheduler"},
        {"schedulerName": "packer",
         "plugins": {"multiPoint": {"disabled": [{"name": "ImageLocality"}]}},
         "pluginConfig": [{"name": "NodeResourcesFit", "args": {"scoringStrategy": {
             "type": "MostAllocated"}}}]}]})
    handle = Bench([node("a")]).fw.handle
    default, packer = (build_framework(p, handle) for p in cfg.profiles)
    assert default.plugin("NodeResourcesFit").scorer.strategy == "LeastAllocated"
    assert packer.plugin("NodeResourcesFit").scorer.strategy == "MostAllocated"
    assert "ImageLocality" in default.plugins and "ImageLocality" not in packer.plugins
