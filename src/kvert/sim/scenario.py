"""Scenario files: the cluster, the workloads and the policies a simulation compares.

A scenario is a YAML document (see ``examples/scenarios/hamster.yaml``)::

    name: hamster                 # optional, for the report
    duration: 2d                  # virtual time per policy: Go duration, seconds, or "Nd"
    seed: 3                       # same seed -> identical results
    tick: 30s                     # the simulated runtime's tick (coarser = faster)
    sampleInterval: 60s           # how often requests and use are sampled
    nodes:
      count: 3
      capacity: {cpu: "4", memory: 8Gi}            # or "cpu=4,memory=8Gi"
      kubeReserved: {cpu: 100m, memory: 256Mi}     # optional, mapping or flag syntax
      systemReserved: "cpu=100m,memory=256Mi"      # optional
      evictionHard: "memory.available<100Mi"       # optional, and the other kubelet eviction
      evictionSoft: "memory.available<1Gi"         #   settings: evictionSoftGracePeriod,
      evictionSoftGracePeriod: "memory.available=1m"   # evictionMinimumReclaim,
      evictionPressureTransitionPeriod: 5m         #   evictionMaxPodGracePeriod, featureGates
      systemMemory: 512Mi                          # optional: what the node's own daemons use
    workloads:
      - name: hamster             # short form: a Deployment is built from it
        namespace: default        # optional
        replicas: 2
        containers:
          - name: hamster
            requests: {cpu: 100m, memory: 50Mi}
            limits: {memory: 500Mi}                # optional
            usage: {cpu: {profile: diurnal, min: 400m, max: 600m}, memory: 250Mi}
            # or replay a recorded trace (kvert.sim.traces): usage: {trace: traces/hamster.csv}
        sharedUsage: [cpu]        # optional: the containers' cpu profiles are the whole workload's,
                                  #   split evenly among its running pods (kvert.sim.load)
        vpa:                      # optional: this workload's VPA settings, under VPA policies only
          policies: [kvert]       #   optional: only under these policies (default: every VPA policy)
          annotations: {vpa.kvert.io/workload: batch}   # merged over the policy's; the workload's win
          resourcePolicy:         # its containerPolicies replace the template's of the same containerName
            containerPolicies: [{containerName: hamster, maxAllowed: {memory: 1Gi}}]
        hpa:                      # optional: a HorizontalPodAutoscaler (autoscaling/v2 spec) on it
          minReplicas: 2          #   (default 1)
          maxReplicas: 10         #   required
          metrics:                #   default: cpu Utilization 80; Resource / ContainerResource only
            - {type: Resource, resource: {name: cpu, target: {type: Utilization, averageUtilization: 60}}}
          behavior: {scaleDown: {stabilizationWindowSeconds: 300}}   # optional, as upstream's
      - deployment: {apiVersion: apps/v1, kind: Deployment, ...}   # or a full manifest;
                                  # its template may carry the kvert.io/usage annotation
        hpa: {maxReplicas: 4}     # optional here too, and sharedUsage and vpa
    vpa:                          # optional: the VPA spec template applied per workload
      resourcePolicy: {containerPolicies: [{containerName: "*", minAllowed: {cpu: 50m}}]}
    policies:
      - name: no VPA
        vpa: none
      - name: Recreate
        vpa: {updateMode: Recreate, recommender: {interval: 1m}, updater: {interval: 1m}}
      - name: InPlaceOrRecreate
        vpa: {updateMode: InPlaceOrRecreate}
      - name: VPA without the HPAs
        vpa: {updateMode: InPlaceOrRecreate}
        hpa: none                 # the workloads' HPAs are not created under this policy

A policy's ``updateMode`` is one the VPA API accepts: Off, Initial, Recreate,
InPlaceOrRecreate, Auto (deprecated upstream; kvert's updater treats it as
InPlaceOrRecreate) and InPlace (kvert's name for InPlaceOrRecreate that never evicts: an
infeasible resize waits; upstream's API has no such mode yet).

A workload's ``hpa`` is created with its Deployment (same name and namespace,
``scaleTargetRef`` the Deployment) under every policy but those with ``hpa: none``; the HPA
controller reads the pods' cpu and memory straight from the simulated fleet, as
metrics-server would serve them (``kvert.cluster.fleetmetrics.FleetPodMetrics``). Only
``Resource`` and ``ContainerResource`` metrics of cpu and memory have a source, and a
``Utilization`` target needs the request in every container it reads (upstream's HPA
cannot compute a utilization without it). An HPA and a VPA that both control cpu (or
memory) of one workload fight (seed 002); the HPA reports it with the condition
``VerticalPodAutoscalerConflict`` (``resourcePolicy.containerPolicies[].controlledResources:
[memory]`` in the VPA is the combination that works).

A workload's ``vpa`` applies only under policies with a VPA (those its ``policies`` names, if
it names some: a kvert setting for one workload need not change the upstream policies it is
compared with): its ``annotations`` (the
``vpa.kvert.io/*`` settings, checked as a policy's are) are merged over the policy's, the
workload's value winning, and its ``resourcePolicy.containerPolicies`` replace those of the
scenario's ``vpa`` template (and the policy's ``spec``) with the same ``containerName``, the
others kept (the recommender prefers a container's own policy over ``"*"``). Its
containerPolicies name ``"*"`` or the workload's containers.

Every error is a ``ScenarioError`` whose message starts with the path of the offending
field (``workloads[0].containers[1].requests.cpu: ...``).
"""

from __future__ import annotations

import copy
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from kvert.api.defaults import default_horizontal_pod_autoscaler
from kvert.api.quantity import QuantityError, to_int
from kvert.api.validation.autoscaling import validate_hpa
from kvert.api.validation.vpa import UPDATE_MODES, validate_vpa
from kvert.kubelet.config import ConfigError, parse_duration_or_days
from kvert.kubelet.usage import USAGE_ANNOTATION, UsageError, parse_container_usage
from kvert.sim.traces import TraceError, trace_usage

WORKLOAD_LABEL = "kvert.io/workload"
_NAME = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")


class ScenarioError(ValueError):
    """A scenario kvert cannot run; the message names the field."""


# scenario key -> NodeConfig.from_flags argument, for the kubelet settings taken as they are
KUBELET_KEYS = {"evictionSoft": "eviction_soft", "evictionSoftGracePeriod": "eviction_soft_grace_period",
                "evictionMinimumReclaim": "eviction_minimum_reclaim",
                "evictionMaxPodGracePeriod": "eviction_max_pod_grace_period",
                "evictionPressureTransitionPeriod": "eviction_pressure_transition_period",
                "featureGates": "feature_gates"}


@dataclass
class NodeSpec:
    count: int
    capacity: dict[str, int]
    kube_reserved: str = ""
    system_reserved: str = ""
    eviction_hard: str | None = None
    kubelet: dict[str, Any] = field(default_factory=dict)     # from_flags arguments (KUBELET_KEYS)
    system_memory: int = 0                                   # bytes the node's daemons use

    def flags(self) -> dict[str, Any]:
        flags: dict[str, Any] = {"capacity": dict(self.capacity), "kube_reserved": self.kube_reserved,
                                 "system_reserved": self.system_reserved, **self.kubelet}
        if self.eviction_hard is not None:
            flags["eviction_hard"] = self.eviction_hard
        return flags


@dataclass
class Workload:
    name: str
    namespace: str
    deployment: dict                  # the Deployment manifest (labels and annotation filled in)
    containers: list[str]
    hpa: dict | None = None           # the HorizontalPodAutoscaler's spec as written (no scaleTargetRef)
    shared: tuple[str, ...] = ()      # resources whose usage is the workload's, split among its pods
    vpa: dict = field(default_factory=dict)   # its own VPA settings: annotations, resourcePolicy, policies

    def vpa_settings(self, policy: Policy) -> dict:
        """Its own VPA settings under ``policy`` (none if they name other policies)."""
        names = self.vpa.get("policies")
        return self.vpa if names is None or policy.name in names else {}

    @property
    def replicas(self) -> int:
        return int(self.deployment["spec"].get("replicas", 1))


@dataclass
class Policy:
    name: str
    vpa: dict | None                  # None: no VPA; else {updateMode, recommender, updater, spec}
    hpa: bool = True                  # whether the workloads' HPAs are created

    @property
    def update_mode(self) -> str | None:
        return None if self.vpa is None else self.vpa["updateMode"]


@dataclass
class Scenario:
    name: str
    duration: float
    seed: int
    tick: float
    sample_interval: float
    nodes: NodeSpec
    workloads: list[Workload]
    policies: list[Policy]
    vpa_template: dict = field(default_factory=dict)
    source: dict = field(default_factory=dict)
    # how often a simulated node renews its lease and reports its status: about 24 times a
    # run (fixed when the scenario is read, so a run cut short keeps the full run's pace)
    heartbeat: float = 0.0

    def __post_init__(self) -> None:
        if not self.heartbeat:
            self.heartbeat = max(10.0, min(6 * 3600.0, self.duration / 24))

    def vpa_object(self, workload: Workload, policy: Policy) -> dict:
        """The VerticalPodAutoscaler of ``workload`` under ``policy`` (which has a VPA)."""
        assert policy.vpa is not None
        spec = copy.deepcopy(self.vpa_template)
        spec.update(copy.deepcopy(policy.vpa.get("spec") or {}))
        spec["targetRef"] = {"apiVersion": "apps/v1", "kind": "Deployment", "name": workload.name}
        update = dict(spec.get("updatePolicy") or {})
        update["updateMode"] = policy.vpa["updateMode"]
        spec["updatePolicy"] = update
        settings = workload.vpa_settings(policy)
        own = (settings.get("resourcePolicy") or {}).get("containerPolicies")
        if own:                 # the workload's container policies replace those of the same container
            resource_policy = dict(spec.get("resourcePolicy") or {})
            names = {p.get("containerName") for p in own}
            kept = [p for p in resource_policy.get("containerPolicies") or [] if p.get("containerName") not in names]
            resource_policy["containerPolicies"] = copy.deepcopy(own) + kept
            spec["resourcePolicy"] = resource_policy
        meta: dict[str, Any] = {"name": workload.name, "namespace": workload.namespace}
        annotations = {**(policy.vpa.get("annotations") or {}), **(settings.get("annotations") or {})}
        if annotations:
            meta["annotations"] = annotations
        return {"apiVersion": "autoscaling.k8s.io/v1", "kind": "VerticalPodAutoscaler", "metadata": meta,
                "spec": spec}

    def hpa_object(self, workload: Workload) -> dict:
        """The HorizontalPodAutoscaler of ``workload`` (which declares one)."""
        assert workload.hpa is not None
        return _hpa_object(workload.name, workload.namespace, workload.hpa)


# -- helpers -----------------------------------------------------------------------------------------

def duration(value: object, path: str) -> float:
    try:
        seconds = parse_duration_or_days(value, path)
    except ConfigError:
        raise ScenarioError(f"{path}: invalid duration {value!r} (e.g. \"90s\", \"1h30m\", \"2d\")") from None
    if seconds <= 0:
        raise ScenarioError(f"{path}: must be positive")
    return seconds


def _mapping(value: object, path: str) -> dict:
    if not isinstance(value, dict):
        raise ScenarioError(f"{path}: expected a mapping, got {type(value).__name__}")
    return value


def _keys(doc: dict, allowed: set[str], path: str) -> None:
    unknown = sorted(set(doc) - allowed)
    if unknown:
        where = f"{path}: " if path else ""
        raise ScenarioError(f"{where}unknown field {unknown[0]!r} (expected one of {', '.join(sorted(allowed))})")


def _require(doc: dict, key: str, path: str) -> Any:
    if key not in doc or doc[key] is None:
        raise ScenarioError(f"{path + '.' if path else ''}{key}: required")
    return doc[key]


def _resources(value: object, path: str) -> dict[str, str]:
    """A ResourceList, as a mapping or ``"cpu=4,memory=8Gi"``; validated, returned as strings."""
    if isinstance(value, str):
        items: dict[str, Any] = {}
        for part in filter(None, (p.strip() for p in value.split(","))):
            if "=" not in part:
                raise ScenarioError(f"{path}: expected name=quantity pairs, got {part!r}")
            k, v = part.split("=", 1)
            items[k.strip()] = v.strip()
        value = items
    doc = _mapping(value, path)
    out = {}
    for k, v in doc.items():
        if isinstance(v, bool) or not isinstance(v, (str, int, float)):
            raise ScenarioError(f"{path}.{k}: expected a quantity, got {v!r}")
        try:
            amount = to_int(str(k), str(v))
        except (QuantityError, ValueError) as e:
            raise ScenarioError(f"{path}.{k}: invalid quantity {v!r} ({e})") from None
        if amount < 0:
            raise ScenarioError(f"{path}.{k}: must not be negative")
        out[str(k)] = str(v)
    return out


def _flag(value: object, path: str) -> str:
    if value is None or value == "":
        return ""
    return ",".join(f"{k}={v}" for k, v in _resources(value, path).items())


def _name(value: object, path: str) -> str:
    if not isinstance(value, str) or not _NAME.match(value) or len(value) > 63:
        raise ScenarioError(f"{path}: invalid name {value!r} (lowercase letters, digits and '-')")
    return value


# -- sections --------------------------------------------------------------------------------------

def _nodes(doc: object, path: str = "nodes") -> NodeSpec:
    doc = _mapping(doc, path)
    _keys(doc, {"count", "capacity", "kubeReserved", "systemReserved", "evictionHard", "systemMemory",
                *KUBELET_KEYS}, path)
    count = doc.get("count", 1)
    if isinstance(count, bool) or not isinstance(count, int) or count < 1:
        raise ScenarioError(f"{path}.count: expected a positive integer, got {count!r}")
    capacity = _resources(_require(doc, "capacity", path), f"{path}.capacity")
    for r in ("cpu", "memory"):
        if r not in capacity:
            raise ScenarioError(f"{path}.capacity.{r}: required")
    cap = {k: to_int(k, v) for k, v in capacity.items()}
    cap.setdefault("pods", 110)
    cap.setdefault("ephemeral-storage", 100 * 2**30)
    eviction = doc.get("evictionHard")
    if eviction is not None and not isinstance(eviction, str):
        raise ScenarioError(f"{path}.evictionHard: expected a string like \"memory.available<100Mi\"")
    # checked below, with the rest, as the kubelet would check them
    kubelet = {arg: doc[key] for key, arg in KUBELET_KEYS.items() if key in doc}
    system_memory = 0
    if "systemMemory" in doc:
        try:
            system_memory = to_int("memory", doc["systemMemory"])
        except QuantityError as e:
            raise ScenarioError(f"{path}.systemMemory: {e}") from None
    spec = NodeSpec(count=count, capacity=cap, kube_reserved=_flag(doc.get("kubeReserved"), f"{path}.kubeReserved"),
                    system_reserved=_flag(doc.get("systemReserved"), f"{path}.systemReserved"),
                    eviction_hard=eviction, kubelet=kubelet, system_memory=system_memory)
    try:
        from kvert.kubelet.config import NodeConfig
        NodeConfig.from_flags(node_name="check", **spec.flags())
    except (ConfigError, ValueError) as e:
        raise ScenarioError(f"{path}: {e}") from None
    return spec


def _container(doc: object, path: str) -> tuple[dict, Any]:
    doc = _mapping(doc, path)
    _keys(doc, {"name", "image", "requests", "limits", "usage", "resizePolicy"}, path)
    name = _name(_require(doc, "name", path), f"{path}.name")
    c: dict[str, Any] = {"name": name, "image": doc.get("image", "registry.k8s.io/pause"), "resources": {}}
    for part in ("requests", "limits"):
        if doc.get(part) is not None:
            c["resources"][part] = _resources(doc[part], f"{path}.{part}")
    if "resizePolicy" in doc:
        c["resizePolicy"] = doc["resizePolicy"]
    return c, doc.get("usage")


def _usage_check(usage: object, name: str, path: str) -> None:
    try:
        parse_container_usage(usage, name, path)
    except UsageError as e:
        raise ScenarioError(str(e)) from None


HPA_KEYS = {"minReplicas", "maxReplicas", "metrics", "behavior"}
HPA_METRIC_TYPES = ("Resource", "ContainerResource")


def _hpa_object(name: str, namespace: str, spec: dict) -> dict:
    spec = copy.deepcopy(spec)
    spec["scaleTargetRef"] = {"apiVersion": "apps/v1", "kind": "Deployment", "name": name}
    return {"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
            "metadata": {"name": name, "namespace": namespace}, "spec": spec}


def _hpa(doc: object, path: str, dep: dict) -> dict:
    """A workload's HPA spec, checked as the API server would check it (after defaulting)
    and for what the simulator can serve; errors name the scenario's field."""
    doc = _mapping(doc, path)
    _keys(doc, HPA_KEYS, path)
    _require(doc, "maxReplicas", path)
    meta = dep["metadata"]
    obj = _hpa_object(meta["name"], meta["namespace"], doc)
    default_horizontal_pod_autoscaler(obj)
    for cause in validate_hpa(obj):
        where = cause.field[len("spec."):] if cause.field.startswith("spec.") else cause.field
        raise ScenarioError(f"{path}.{where}: {cause.message}")
    spec = obj["spec"]
    if int(dep["spec"].get("replicas", 1)) == 0:
        raise ScenarioError(f"{path}: the Deployment has replicas: 0, at which an HPA does not scale "
                            f"(ScalingDisabled); give it at least 1")
    containers = dep["spec"]["template"]["spec"]["containers"]
    for i, metric in enumerate(spec["metrics"]):
        mpath = f"{path}.metrics[{i}]" if doc.get("metrics") else f"{path} (the default metric, cpu Utilization 80)"
        kind = metric.get("type")
        if kind not in HPA_METRIC_TYPES:
            raise ScenarioError(f"{mpath}.type: the simulator serves only Resource and ContainerResource metrics "
                                f"(metrics.k8s.io), got {kind!r}")
        source = metric["resource" if kind == "Resource" else "containerResource"]
        resource = source.get("name")
        if resource not in ("cpu", "memory"):
            raise ScenarioError(f"{mpath}.{'resource' if kind == 'Resource' else 'containerResource'}.name: "
                                f"metrics.k8s.io serves cpu and memory, got {resource!r}")
        read = containers
        if kind == "ContainerResource":
            read = [c for c in containers if c.get("name") == source.get("container")]
            if not read:
                raise ScenarioError(f"{mpath}.containerResource.container: no container "
                                    f"{source.get('container')!r} in the workload (it has "
                                    f"{', '.join(str(c.get('name')) for c in containers)})")
        if (source.get("target") or {}).get("type") == "Utilization":
            for c in read:
                if resource not in ((c.get("resources") or {}).get("requests") or {}):
                    raise ScenarioError(f"{mpath}: a {resource} Utilization target needs a {resource} request in "
                                        f"every container it reads; container {c.get('name')!r} has none")
    return copy.deepcopy(doc)


def _annotation_problem(problem: str, annotations: dict, path: str) -> str:
    """A problem ``RecommenderConfig.with_annotations`` found, under the field of its annotation."""
    for key in annotations:
        if problem.startswith(f"{key}: "):
            return f'{path}["{key}"]: {problem[len(key) + 2:]}'
    return f"{path}: {problem}"


def _vpa_annotations(value: object, path: str) -> dict[str, str]:
    """VPA annotations (a policy's or a workload's), the ``vpa.kvert.io/*`` ones checked as the
    recommender reads them."""
    from kvert.vpa.recommendation import DEFAULT_CONFIG
    annotations = _mapping(value if value is not None else {}, path)
    for key, item in annotations.items():
        if not isinstance(item, str):
            raise ScenarioError(f'{path}["{key}"]: expected a string, got {item!r}')
    _, problems = DEFAULT_CONFIG.with_annotations(annotations)
    if problems:
        raise ScenarioError(_annotation_problem(problems[0], annotations, path))
    return {str(k): v for k, v in annotations.items()}


def _workload_vpa(value: object, path: str, containers: list[str]) -> dict:
    """A workload's own VPA settings: ``annotations``, ``resourcePolicy`` and the ``policies``
    they apply under (their names are checked once the policies are read)."""
    if value is None:
        return {}
    doc = _mapping(value, path)
    _keys(doc, {"annotations", "resourcePolicy", "policies"}, path)
    out: dict[str, Any] = {}
    if doc.get("policies") is not None:
        names = doc["policies"]
        if not isinstance(names, list) or not names or not all(isinstance(n, str) for n in names):
            raise ScenarioError(f"{path}.policies: expected a non-empty list of policy names, got {names!r}")
        out["policies"] = tuple(names)
    if doc.get("annotations"):
        out["annotations"] = _vpa_annotations(doc["annotations"], f"{path}.annotations")
    if doc.get("resourcePolicy") is not None:
        policy = _mapping(doc["resourcePolicy"], f"{path}.resourcePolicy")
        _keys(policy, {"containerPolicies"}, f"{path}.resourcePolicy")
        stub = {"apiVersion": "autoscaling.k8s.io/v1", "kind": "VerticalPodAutoscaler",
                "metadata": {"name": "check", "namespace": "default"},
                "spec": {"targetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "check"},
                         "resourcePolicy": policy}}
        for cause in validate_vpa(stub):           # as the API server will check the VPA
            where = cause.field[len("spec."):] if cause.field.startswith("spec.") else cause.field
            raise ScenarioError(f"{path}.{where}: {cause.message}")
        for i, entry in enumerate(policy.get("containerPolicies") or []):
            name = entry.get("containerName")
            if name != "*" and name not in containers:
                raise ScenarioError(f"{path}.resourcePolicy.containerPolicies[{i}].containerName: no container "
                                    f"{name!r} in the workload (it has {', '.join(containers)}; or \"*\")")
        out["resourcePolicy"] = copy.deepcopy(policy)
    return out


def _shared(value: object, path: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list) or any(r not in ("cpu", "memory") for r in value):
        raise ScenarioError(f"{path}: expected a list of cpu and memory, got {value!r}")
    return tuple(r for r in ("cpu", "memory") if r in value)


def _workload(doc: object, path: str, base_dir: Path) -> Workload:
    doc = _mapping(doc, path)
    shared = _shared(doc.get("sharedUsage"), f"{path}.sharedUsage")
    if "deployment" in doc:
        _keys(doc, {"deployment", "hpa", "sharedUsage", "vpa"}, path)
        dep = copy.deepcopy(_mapping(doc["deployment"], f"{path}.deployment"))
        if dep.get("kind", "Deployment") != "Deployment":
            raise ScenarioError(f"{path}.deployment.kind: only Deployment is supported, got {dep.get('kind')!r}")
        meta = _mapping(_require(dep, "metadata", f"{path}.deployment"), f"{path}.deployment.metadata")
        name = _name(_require(meta, "name", f"{path}.deployment.metadata"), f"{path}.deployment.metadata.name")
        spec = _mapping(_require(dep, "spec", f"{path}.deployment"), f"{path}.deployment.spec")
        template = _mapping(_require(spec, "template", f"{path}.deployment.spec"), f"{path}.deployment.spec.template")
        pod_spec = _mapping(_require(template, "spec", f"{path}.deployment.spec.template"),
                            f"{path}.deployment.spec.template.spec")
        containers = _require(pod_spec, "containers", f"{path}.deployment.spec.template.spec")
        if not isinstance(containers, list) or not containers:
            raise ScenarioError(f"{path}.deployment.spec.template.spec.containers: expected a non-empty list")
        names = [str(_mapping(c, f"{path}.deployment.spec.template.spec.containers[{i}]").get("name"))
                 for i, c in enumerate(containers)]
        annotations = (template.get("metadata") or {}).get("annotations") or {}
        if USAGE_ANNOTATION in annotations:
            raw = annotations[USAGE_ANNOTATION]
            apath = f"{path}.deployment.spec.template.metadata.annotations[{USAGE_ANNOTATION}]"
            try:
                value = json.loads(raw) if isinstance(raw, str) else raw
            except json.JSONDecodeError as e:
                raise ScenarioError(f"{apath}: invalid JSON ({e})") from None
            for cname, entry in _mapping(value, apath).items():
                _usage_check(entry, cname, f"{apath}.{cname}")
            if not isinstance(raw, str):
                annotations[USAGE_ANNOTATION] = json.dumps(raw, sort_keys=True)
        namespace = meta.get("namespace") or "default"
        meta["namespace"] = namespace
        dep.setdefault("apiVersion", "apps/v1")
        dep.setdefault("kind", "Deployment")
        tmeta = template.setdefault("metadata", {})
        tmeta.setdefault("labels", {})[WORKLOAD_LABEL] = name
        if annotations:
            tmeta["annotations"] = annotations
        spec.setdefault("selector", {"matchLabels": dict(tmeta["labels"])})
        hpa = _hpa(doc["hpa"], f"{path}.hpa", dep) if doc.get("hpa") is not None else None
        return Workload(name, namespace, dep, names, hpa, shared, _workload_vpa(doc.get("vpa"), f"{path}.vpa", names))

    _keys(doc, {"name", "namespace", "replicas", "containers", "hpa", "sharedUsage", "vpa"}, path)
    name = _name(_require(doc, "name", path), f"{path}.name")
    namespace = _name(doc.get("namespace", "default"), f"{path}.namespace")
    replicas = doc.get("replicas", 1)
    if isinstance(replicas, bool) or not isinstance(replicas, int) or replicas < 0:
        raise ScenarioError(f"{path}.replicas: expected a non-negative integer, got {replicas!r}")
    containers = _require(doc, "containers", path)
    if not isinstance(containers, list) or not containers:
        raise ScenarioError(f"{path}.containers: expected a non-empty list")
    built, usage = [], {}
    for i, cdoc in enumerate(containers):
        c, u = _container(cdoc, f"{path}.containers[{i}]")
        if c["name"] in usage or any(b["name"] == c["name"] for b in built):
            raise ScenarioError(f"{path}.containers[{i}].name: duplicate container name {c['name']!r}")
        if isinstance(u, dict) and "trace" in u:
            upath = f"{path}.containers[{i}].usage"
            if set(u) != {"trace"}:
                raise ScenarioError(f"{upath}: a trace gives both cpu and memory; nothing else may be set")
            try:
                u = trace_usage(u["trace"], c["name"], base_dir, f"{upath}.trace")
            except TraceError as e:
                raise ScenarioError(str(e)) from None
        if u is not None:
            _usage_check(u, c["name"], f"{path}.containers[{i}].usage")
            usage[c["name"]] = u
        built.append(c)
    labels = {"app": name, WORKLOAD_LABEL: name}
    tmeta: dict[str, Any] = {"labels": labels}
    if usage:
        tmeta["annotations"] = {USAGE_ANNOTATION: json.dumps(usage, sort_keys=True)}
    dep = {"apiVersion": "apps/v1", "kind": "Deployment",
           "metadata": {"name": name, "namespace": namespace, "labels": {"app": name}},
           "spec": {"replicas": replicas, "selector": {"matchLabels": dict(labels)},
                    "template": {"metadata": tmeta, "spec": {"containers": built}}}}
    hpa = _hpa(doc["hpa"], f"{path}.hpa", dep) if doc.get("hpa") is not None else None
    names = [c["name"] for c in built]
    return Workload(name, namespace, dep, names, hpa, shared, _workload_vpa(doc.get("vpa"), f"{path}.vpa", names))


def _policy(doc: object, path: str) -> Policy:
    doc = _mapping(doc, path)
    _keys(doc, {"name", "vpa", "hpa"}, path)
    name = _require(doc, "name", path)
    if not isinstance(name, str) or not name:
        raise ScenarioError(f"{path}.name: expected a non-empty string")
    hpa = doc.get("hpa", True)
    if hpa not in (True, False, "none"):
        raise ScenarioError(f"{path}.hpa: expected none (the workloads' HPAs left out) or true, got {hpa!r}")
    hpa = hpa is True
    vpa = doc.get("vpa", "none")
    if vpa is None or vpa == "none" or vpa is False:
        return Policy(name, None, hpa)
    vpa = _mapping(vpa, f"{path}.vpa")
    _keys(vpa, {"updateMode", "recommender", "updater", "spec", "annotations"}, f"{path}.vpa")
    mode = vpa.get("updateMode", "InPlaceOrRecreate")
    if mode not in UPDATE_MODES:
        raise ScenarioError(f"{path}.vpa.updateMode: expected one of {', '.join(UPDATE_MODES)}, got {mode!r}")
    out: dict[str, Any] = {"updateMode": mode, "spec": dict(vpa.get("spec") or {})}
    out["annotations"] = _vpa_annotations(vpa.get("annotations"), f"{path}.vpa.annotations")
    for part in ("recommender", "updater"):
        sub = {_snake(k): v for k, v in _mapping(vpa.get(part) or {}, f"{path}.vpa.{part}").items()}
        for key, camel in (("interval", "interval"), ("checkpoint_interval", "checkpointInterval")):
            if key in sub:
                sub[key] = duration(sub[key], f"{path}.vpa.{part}.{camel}")
        out[part] = sub
    _recommender_config(out["recommender"], f"{path}.vpa.recommender")       # validate now
    _updater_options(out["updater"], f"{path}.vpa.updater")
    return Policy(name, out, hpa)


def _snake(key: str) -> str:
    """``targetCpuPercentile`` / ``target-cpu-percentile`` -> ``target_cpu_percentile``."""
    key = re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", str(key)).replace("-", "_")
    return key.lower()


def _recommender_config(options: dict, path: str) -> Any:
    """The RecommenderConfig for a policy's ``recommender`` options (besides ``interval``):
    any RecommenderConfig field, in snake_case, camelCase or as the upstream flag name;
    durations may be written as durations."""
    import dataclasses
    from kvert.vpa.recommendation import RecommenderConfig
    fields = {f.name: f for f in dataclasses.fields(RecommenderConfig)}
    values: dict[str, Any] = {}
    for key, value in options.items():
        if key in ("interval", "checkpoint_interval"):
            continue
        if key not in fields:
            raise ScenarioError(f"{path}.{key}: unknown recommender setting (expected interval or one of "
                                f"{', '.join(sorted(fields))})")
        kind = (fields[key].metadata or {}).get("kind")
        if isinstance(value, str) and (kind == "duration" or "interval" in key or "half_life" in key):
            value = duration(value, f"{path}.{key}")
        elif kind in ("cpu", "memory") and isinstance(value, str):
            try:
                value = to_int(kind, value)
            except (QuantityError, ValueError) as e:
                raise ScenarioError(f"{path}.{key}: invalid quantity {value!r} ({e})") from None
        values[key] = options[key] = value
    try:
        config = RecommenderConfig(**values)
        validate = getattr(config, "validate", None)
        if callable(validate):
            validate()
    except (TypeError, ValueError) as e:
        raise ScenarioError(f"{path}: {e}") from None
    return config


UPDATER_OPTIONS = {"interval", "eviction_tolerance", "min_replicas", "in_place_timeout", "deferred_timeout",
                   "pod_lifetime_threshold", "evict_after_oom_threshold", "min_change_priority"}


def _updater_options(options: dict, path: str) -> dict:
    for key, value in list(options.items()):
        if key not in UPDATER_OPTIONS:
            raise ScenarioError(f"{path}.{key}: unknown updater setting (expected one of "
                                f"{', '.join(sorted(UPDATER_OPTIONS))})")
        if isinstance(value, str) and key.endswith(("timeout", "threshold")) and key != "evict_after_oom_threshold":
            options[key] = duration(value, f"{path}.{key}")
    return options


def parse_scenario(doc: object, *, name: str = "", base_dir: str | Path = ".") -> Scenario:
    """``base_dir``: where relative trace file names are looked up (the scenario file's
    directory when loaded with ``load_scenario``)."""
    doc = _mapping(doc, "scenario")
    _keys(doc, {"name", "description", "duration", "seed", "tick", "sampleInterval", "nodes", "workloads",
                "vpa", "policies"}, "")
    dur = duration(_require(doc, "duration", ""), "duration")
    seed = doc.get("seed", 0)
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise ScenarioError(f"seed: expected an integer, got {seed!r}")
    tick = duration(doc.get("tick", "30s"), "tick")
    sample = duration(doc.get("sampleInterval", "60s"), "sampleInterval")
    if sample < tick:
        raise ScenarioError(f"sampleInterval: must be at least the tick ({tick:g}s)")
    if dur < sample:
        raise ScenarioError(f"duration: must be at least the sampleInterval ({sample:g}s)")
    nodes = _nodes(_require(doc, "nodes", ""))
    workloads_doc = _require(doc, "workloads", "")
    if not isinstance(workloads_doc, list) or not workloads_doc:
        raise ScenarioError("workloads: expected a non-empty list")
    workloads = [_workload(w, f"workloads[{i}]", Path(base_dir)) for i, w in enumerate(workloads_doc)]
    seen: set[tuple[str, str]] = set()
    for i, w in enumerate(workloads):
        if (w.namespace, w.name) in seen:
            raise ScenarioError(f"workloads[{i}].name: duplicate workload {w.name!r}")
        seen.add((w.namespace, w.name))
    template = _mapping(doc.get("vpa") or {}, "vpa")
    policies_doc = doc.get("policies") or [{"name": "none", "vpa": "none"}]
    if not isinstance(policies_doc, list):
        raise ScenarioError("policies: expected a list")
    policies = [_policy(p, f"policies[{i}]") for i, p in enumerate(policies_doc)]
    names = [p.name for p in policies]
    for i, n in enumerate(names):
        if names.index(n) != i:
            raise ScenarioError(f"policies[{i}].name: duplicate policy name {n!r}")
    from kvert.vpa.recommendation import DEFAULT_CONFIG
    by_name = {p.name: p for p in policies}
    for i, w in enumerate(workloads):
        for k, n in enumerate(w.vpa.get("policies") or ()):
            if n not in by_name:
                raise ScenarioError(f"workloads[{i}].vpa.policies[{k}]: no policy {n!r} (the policies: "
                                    f"{', '.join(repr(p.name) for p in policies)})")
            if by_name[n].vpa is None:
                raise ScenarioError(f"workloads[{i}].vpa.policies[{k}]: policy {n!r} has no VPA")
        for j, p in enumerate(policies):     # each alone was checked; together with each policy's too
            own = w.vpa_settings(p).get("annotations") if p.vpa is not None else None
            if not own:
                continue
            _, problems = DEFAULT_CONFIG.with_annotations({**p.vpa["annotations"], **own})
            if problems:
                raise ScenarioError(f"workloads[{i}].vpa.annotations: with policies[{j}] ({p.name!r}): "
                                    f"{problems[0]}")
    return Scenario(name=str(doc.get("name") or name or "scenario"), duration=dur, seed=seed, tick=tick,
                    sample_interval=sample, nodes=nodes, workloads=workloads, policies=policies,
                    vpa_template=dict(template), source=doc)


def load_scenario(path: str | Path) -> Scenario:
    path = Path(path)
    try:
        text = path.read_text()
    except OSError as e:
        raise ScenarioError(f"{path}: {e.strerror or e}") from None
    try:
        doc = yaml.safe_load(text)
    except yaml.YAMLError as e:
        raise ScenarioError(f"{path}: invalid YAML: {e}") from None
    return parse_scenario(doc, name=path.stem, base_dir=path.parent)
