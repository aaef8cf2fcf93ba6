"""Node declared features (KEP-5328, gate NodeDeclaredFeatures, beta and on in 1.36): the
registry of ``k8s.io/component-helpers/nodedeclaredfeatures`` shared by the node agent (which
publishes ``status.declaredFeatures``), the scheduler (its NodeDeclaredFeatures plugin) and the
API server (the NodeDeclaredFeatureValidator admission plugin).

Each :class:`Feature` says

* ``discover(NodeConfiguration)``: does a node with this configuration have it (the kubelet's
  ``DiscoverNodeFeatures``; the names are published sorted);
* ``infer_for_scheduling(pod spec)``: does a pod being scheduled need it;
* ``infer_for_update(old pod, new pod)``: does this update of a bound pod need it;
* ``max_version``: the last version in which nodes may lack it (None: none yet). A node newer
  than that stops declaring it, and a target node newer than that is taken to have it.

The features of Kubernetes 1.36 (``features/registry.go``), each under its gate:

=============================================== ======================================================
``GuaranteedQoSPodCPUResize``                   cpuManagerPolicy ``none``, or ``static`` with
                                                InPlacePodVerticalScalingExclusiveCPUs; needed by an
                                                update changing a container's cpu request of a
                                                Guaranteed pod
``InPlacePodLevelResourcesVerticalScaling``     that gate; needed by an update changing
                                                ``spec.resources``
``InPlacePodVerticalScalingInitContainers``     that gate; needed by an update changing a non-sidecar
                                                init container's resources
``RestartAllContainersOnContainerExits``        that gate (not one of kvert's: never declared); needed
                                                to schedule a pod with a ``RestartAllContainers``
                                                restart rule
=============================================== ======================================================

and 1.37's ``InPlacePodVerticalScalingMemoryBackedVolumes`` (that alpha gate, off by default;
needed by an update changing a memory-backed emptyDir's ``sizeLimit``), which kvert's gates
include. A kvert node never declares ``RestartAllContainersOnContainerExits`` (kvert has no such
gate and its node agent no such restart rule), so the scheduler keeps a pod that asks for it off
every kvert node, as upstream does with nodes that lack the feature.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kvert.api.resources import parse_resource_list

Version = tuple[int, int, int]
Pod = Mapping[str, Any]
PodSpec = Mapping[str, Any]


def parse_version(text: str) -> Version:
    """``1.36.0`` (or ``v1.36.0-extra``) -> (1, 36, 0)."""
    core = text.lstrip("v").split("-")[0].split("+")[0]
    parts = [int(p) for p in core.split(".")]
    if not 1 <= len(parts) <= 3:
        raise ValueError(f"invalid version {text!r}")
    return (parts + [0, 0])[0], (parts + [0, 0])[1], (parts + [0, 0])[2]


@dataclass(frozen=True)
class NodeConfiguration:
    """What discovery looks at (upstream ``types.NodeConfiguration``)."""
    feature_gates: Callable[[str], bool]         # is this gate on for the node (False if unknown)
    cpu_manager_policy: str = "none"
    version: Version | None = None               # the kubelet's


def _never(*_: object) -> bool:
    return False


@dataclass(frozen=True)
class Feature:
    """One declared feature (upstream ``types.Feature``)."""
    name: str
    infer_for_scheduling: Callable[[PodSpec], bool] = _never
    max_version: Version | None = None
    discover: Callable[[NodeConfiguration], bool] = _never
    infer_for_update: Callable[[Pod, Pod], bool] = _never
    gates: tuple[str, ...] = field(default=())     # Requirements().EnabledFeatureGates


# ---- the 1.36 features ---------------------------------------------------------------------------

def _spec(pod: Pod) -> PodSpec:
    return pod.get("spec") or {}


def _requests(container: Mapping[str, Any]) -> Mapping[str, int]:
    try:
        return parse_resource_list((container.get("resources") or {}).get("requests"))
    except ValueError:
        return {}


def _resources(value: Any) -> tuple[Mapping[str, int], Mapping[str, int]] | None:
    """``resources`` compared as quantities (apiequality.Semantic), None when absent."""
    if value is None:
        return None
    try:
        return parse_resource_list(value.get("requests")), parse_resource_list(value.get("limits"))
    except (ValueError, AttributeError):
        return {}, {}


def _is_sidecar(container: Mapping[str, Any]) -> bool:
    return container.get("restartPolicy") == "Always"


def _guaranteed_cpu_discover(cfg: NodeConfiguration) -> bool:
    policy = cfg.cpu_manager_policy
    return (cfg.feature_gates("InPlacePodVerticalScalingExclusiveCPUs") and policy == "static") or policy == "none"


def _guaranteed_cpu_update(old: Pod, new: Pod) -> bool:
    status = old.get("status")
    if status is not None and status.get("qosClass") != "Guaranteed":
        return False
    old_c, new_c = _spec(old).get("containers") or [], _spec(new).get("containers") or []
    return any(_requests(o).get("cpu", 0) != _requests(n).get("cpu", 0) for o, n in zip(old_c, new_c))


def _pod_level_update(old: Pod, new: Pod) -> bool:
    before, after = _spec(old).get("resources"), _spec(new).get("resources")
    if before is None and after is None:
        return False
    return _resources(before) != _resources(after)


def _init_update(old: Pod, new: Pod) -> bool:
    new_init = _spec(new).get("initContainers") or []
    for i, c in enumerate(_spec(old).get("initContainers") or []):
        if _is_sidecar(c) or i >= len(new_init):
            continue
        if _resources(c.get("resources") or {}) != _resources(new_init[i].get("resources") or {}):
            return True
    return False


def _restart_all_scheduling(spec: PodSpec) -> bool:
    for key in ("containers", "initContainers"):
        for c in spec.get(key) or []:
            if any(rule.get("action") == "RestartAllContainers" for rule in c.get("restartPolicyRules") or []):
                return True
    return False


def _memory_volumes_update(old: Pod, new: Pod) -> bool:
    old_v, new_v = _spec(old).get("volumes") or [], _spec(new).get("volumes") or []
    if len(old_v) != len(new_v):
        return False
    for o, n in zip(old_v, new_v):
        if o.get("name") != n.get("name"):
            continue
        o_dir, n_dir = o.get("emptyDir"), n.get("emptyDir")
        if not isinstance(o_dir, dict) or not isinstance(n_dir, dict) or \
                o_dir.get("medium") != "Memory" or n_dir.get("medium") != "Memory":
            continue
        if ("sizeLimit" in o_dir) != ("sizeLimit" in n_dir):
            return True
        if "sizeLimit" in o_dir and _size(o_dir["sizeLimit"]) != _size(n_dir["sizeLimit"]):
            return True
    return False


def _size(value: Any) -> int:
    try:
        return parse_resource_list({"memory": value}).get("memory", 0)
    except ValueError:
        return -1


def _gate(name: str) -> Callable[[NodeConfiguration], bool]:
    return lambda cfg: cfg.feature_gates(name)


GUARANTEED_QOS_POD_CPU_RESIZE = Feature(
    "GuaranteedQoSPodCPUResize", discover=_guaranteed_cpu_discover, infer_for_update=_guaranteed_cpu_update)
POD_LEVEL_RESOURCES_RESIZE = Feature(
    "InPlacePodLevelResourcesVerticalScaling", discover=_gate("InPlacePodLevelResourcesVerticalScaling"),
    infer_for_update=_pod_level_update, gates=("InPlacePodLevelResourcesVerticalScaling",))
NON_SIDECAR_INIT_CONTAINER_RESIZE = Feature(
    "InPlacePodVerticalScalingInitContainers", discover=_gate("InPlacePodVerticalScalingInitContainers"),
    infer_for_update=_init_update, gates=("InPlacePodVerticalScalingInitContainers",))
RESTART_ALL_CONTAINERS = Feature(
    "RestartAllContainersOnContainerExits", infer_for_scheduling=_restart_all_scheduling,
    discover=_gate("RestartAllContainersOnContainerExits"), gates=("RestartAllContainersOnContainerExits",))
MEMORY_BACKED_VOLUMES_RESIZE = Feature(
    "InPlacePodVerticalScalingMemoryBackedVolumes", discover=_gate("InPlacePodVerticalScalingMemoryBackedVolumes"),
    infer_for_update=_memory_volumes_update, gates=("InPlacePodVerticalScalingMemoryBackedVolumes",))

# 1.36's four, and 1.37's memory-backed volume resize (declared only while its alpha gate is on)
FEATURES: tuple[Feature, ...] = (GUARANTEED_QOS_POD_CPU_RESIZE, POD_LEVEL_RESOURCES_RESIZE,
                                 NON_SIDECAR_INIT_CONTAINER_RESIZE, RESTART_ALL_CONTAINERS,
                                 MEMORY_BACKED_VOLUMES_RESIZE)


# ---- the framework -----------------------------------------------------------------------------

class FeatureRegistry:
    """The features in name order, mapping names to bits (upstream ``Framework`` and its
    ``FeatureMapper``): requirements and declarations as bit sets, at most 64 features."""

    def __init__(self, features: Iterable[Feature] = FEATURES):
        self.features = sorted(features, key=lambda f: f.name)
        if len(self.features) > 64:
            raise ValueError("at most 64 declared features fit a node's bit set")
        self.bit = {f.name: 1 << i for i, f in enumerate(self.features)}

    def discover_node_features(self, cfg: NodeConfiguration) -> list[str]:
        """The sorted names a node with ``cfg`` declares (``DiscoverNodeFeatures``)."""
        out = []
        for f in self.features:
            if not f.discover(cfg):
                continue
            if cfg.version is not None and f.max_version is not None and cfg.version > f.max_version:
                continue
            out.append(f.name)
        return sorted(out)

    def _required(self, version: Version | None, test: Callable[[Feature], bool]) -> int:
        if version is None:
            raise ValueError("target version cannot be nil")
        bits = 0
        for i, f in enumerate(self.features):
            if f.max_version is not None and version > f.max_version:
                continue
            if test(f):
                bits |= 1 << i
        return bits

    def infer_for_pod_scheduling(self, pod: Pod, version: Version | None) -> int:
        """The bits of the features ``pod`` needs on nodes of ``version`` (``InferForPodScheduling``)."""
        spec = _spec(pod)
        return self._required(version, lambda f: f.infer_for_scheduling(spec))

    def infer_for_pod_update(self, old: Pod, new: Pod, version: Version | None) -> int:
        """The bits of the features the update ``old`` -> ``new`` needs on a node of
        ``version`` (``InferForPodUpdate``)."""
        return self._required(version, lambda f: f.infer_for_update(old, new))

    def node_bits(self, names: Sequence[str] | None) -> int:
        """A node's declared features as bits (names outside the registry cannot be required)."""
        bits = 0
        for name in names or ():
            bits |= self.bit.get(name, 0)
        return bits

    def names(self, bits: int) -> list[str]:
        return [f.name for i, f in enumerate(self.features) if bits >> i & 1]

    def missing(self, required: int, node: Mapping[str, Any] | None) -> list[str]:
        """The required features ``node`` does not declare, in name order."""
        return self.names(required & ~self.node_bits(declared_features(node)))


def declared_features(node: Mapping[str, Any] | None) -> list[str]:
    """A Node's ``status.declaredFeatures``."""
    return list(((node or {}).get("status") or {}).get("declaredFeatures") or [])


DEFAULT_REGISTRY = FeatureRegistry(FEATURES)


__all__ = ["DEFAULT_REGISTRY", "FEATURES", "Feature", "FeatureRegistry",
           "GUARANTEED_QOS_POD_CPU_RESIZE", "MEMORY_BACKED_VOLUMES_RESIZE", "NON_SIDECAR_INIT_CONTAINER_RESIZE",
           "NodeConfiguration", "POD_LEVEL_RESOURCES_RESIZE", "RESTART_ALL_CONTAINERS", "Version",
           "declared_features", "parse_version"]
