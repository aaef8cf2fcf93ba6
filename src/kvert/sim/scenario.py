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
      - manifest: {apiVersion: apps/v1, kind: StatefulSet, ...}   # or a full manifest of any workload
                                  # kind: Deployment, StatefulSet, DaemonSet, ReplicaSet, Job, CronJob,
                                  # Pod (``deployment:`` takes a Deployment's); its pod template may
                                  # carry the kvert.io/usage annotation
        hpa: {maxReplicas: 4}     # optional here too, and sharedUsage and vpa
        existingVpa: {metadata: {name: db-vpa}, spec: {updatePolicy: {updateMode: Auto}}}
                                  # optional: the VPA it has in the recorded cluster (``vpa: existing``)
        history: traces/shop/statefulset-db.parquet   # optional: its recorded usage (kvert.sim.tracefiles)
        recorded: {cpu_cores_mean: 0.4, memory_bytes_mean: 4.2e8, oom_kills: 3, restarts: 3}
                                  # optional: what the recorded cluster measured (replay fidelity)
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
      - name: as is
        vpa: existing             # each workload's existingVpa (none for those without one)
      - name: startup boost
        vpa: {updateMode: InPlaceOrRecreate,
              spec: {startupBoost: {cpu: {type: Factor, factor: 2, durationSeconds: 60}}}}
      - name: shop's Deployments on InPlace
        vpa: {updateMode: InPlace}
        workloads: {namespaces: [shop], kinds: [Deployment]}   # only these get the policy's VPA;
                                  # the others keep their existingVpa (also names, labelSelector)
    start: 2026-11-24T00:00:00Z   # optional: the virtual clock's start (an imported window's)
    objects: [...]                # optional: Namespaces, PriorityClasses, RuntimeClasses, LimitRanges,
                                  #   ResourceQuotas, PodDisruptionBudgets created before the workloads
    prices: {cpuCoreHour: 0.03, memoryGiBHour: 0.004}   # optional: the report's costs
    # nodes may also be a list of pools (kvert.sim.nodepools): names, labels, taints, allocatable

A scenario made by ``kvert scenario import`` (``kvert.sim.importer``) uses all of these.

A policy's ``updateMode`` is one the VPA API accepts: Off, Initial, Recreate,
InPlaceOrRecreate, Auto (deprecated upstream; kvert's updater treats it as
InPlaceOrRecreate) and InPlace (upstream VPA 1.7's alpha mode: resize in place, never evict;
an infeasible resize waits for a lower recommendation). Its ``spec`` may carry upstream 1.7's
CPU startup boost (``startupBoost: {cpu: {type: Factor, factor: 2, durationSeconds: 60}}``,
or per container in ``resourcePolicy.containerPolicies[].startupBoost``) and the per-VPA
settings (``updatePolicy.evictAfterOOMSeconds``, ``oomBumpUpRatio``, ...). The VPA's
components run with the feature gates its objects need (InPlace, CPUStartupBoost,
PerVPAConfig: a policy that names a gated feature means the upstream VPA that runs it), or
with the policy's own ``featureGates`` (``vpa: {featureGates: "InPlace=true"}``, upstream's
``--feature-gates`` form, or a mapping).

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

A workload is known in the report by its *key*: its name, or ``namespace.name`` where two
namespaces have one of that name (``namespace.kind.name`` where one namespace has two). A
policy's VPA for a workload with an ``existingVpa`` starts from that one (its resourcePolicy and
annotations), the policy's update mode and spec over it.

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
import hashlib
import json
import re
from dataclasses import dataclass, field
from dataclasses import fields as dataclass_fields
from pathlib import Path
from typing import Any

import yaml

from kvert.api.defaults import default_horizontal_pod_autoscaler
from kvert.api.kinds import for_object
from kvert.api.meta import parse_time
from kvert.api.quantity import QuantityError, to_int
from kvert.api.selectors import SelectorError, label_selector_from_dict, parse_label_selector
from kvert.api.validation.autoscaling import validate_hpa
from kvert.api.validation.vpa import UPDATE_MODES, validate_vpa
from kvert.kubelet.runtime.tracebank import TraceBank
from kvert.kubelet.usage import USAGE_ANNOTATION, UsageError, parse_container_usage
from kvert.sim.nodepools import NodePool, parse_pools
from kvert.sim.scenario_fields import (
    ScenarioError,
    as_mapping,
    check_keys,
    dns_label,
    duration,
    required,
    resource_list,
)
from kvert.sim.tracefiles import TraceFileError, TraceLayout, load_bank, read_layout
from kvert.sim.traces import TraceError, trace_usage
from kvert.vpa.features import FeatureGateError, VpaGates
from kvert.vpa.recommendation import DEFAULT_CONFIG, RecommenderConfig

# libyaml's loader where PyYAML has it (an imported scenario of 2 000 workloads is megabytes)
SafeLoader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

WORKLOAD_LABEL = "kvert.io/workload"


# the kinds a workload may be, with the API group/version their objects are written in
WORKLOAD_KINDS = {"Deployment": "apps/v1", "StatefulSet": "apps/v1", "DaemonSet": "apps/v1",
                  "ReplicaSet": "apps/v1", "Job": "batch/v1", "CronJob": "batch/v1", "Pod": "v1"}
# the kinds a VerticalPodAutoscaler or a HorizontalPodAutoscaler may target
VPA_TARGET_KINDS = frozenset(WORKLOAD_KINDS) - {"Pod"}
HPA_TARGET_KINDS = frozenset({"Deployment", "StatefulSet", "ReplicaSet"})


@dataclass
class Workload:
    name: str
    namespace: str
    manifest: dict                    # the workload's object (labels and usage annotation filled in)
    containers: list[str]
    hpa: dict | None = None           # the HorizontalPodAutoscaler's spec as written (no scaleTargetRef)
    shared: tuple[str, ...] = ()      # resources whose usage is the workload's, split among its pods
    vpa: dict = field(default_factory=dict)   # its own VPA settings: annotations, resourcePolicy, policies
    key: str = ""                     # unique in the scenario, a valid label value (the report's name)
    existing_vpa: dict | None = None  # the VPA it has in the recorded cluster (the "existing" policies')
    history: Path | None = None       # its recorded usage (kvert.sim.tracefiles), when imported
    recorded: dict = field(default_factory=dict)   # what the recorded cluster measured (replay fidelity)

    def __post_init__(self) -> None:
        self.key = self.key or self.name

    def vpa_settings(self, policy: Policy) -> dict:
        """Its own VPA settings under ``policy`` (none if they name other policies)."""
        names = self.vpa.get("policies")
        return self.vpa if names is None or policy.name in names else {}

    @property
    def kind(self) -> str:
        return self.manifest.get("kind", "Deployment")

    @property
    def resource(self) -> str:
        return for_object(self.manifest).key

    @property
    def target_ref(self) -> dict:
        return {"apiVersion": WORKLOAD_KINDS[self.kind], "kind": self.kind, "name": self.name}

    @property
    def template(self) -> dict:
        """The pod template (a bare Pod: the pod itself)."""
        return pod_template(self.manifest)

    @property
    def replicas(self) -> int:
        """Pods it asks for (a DaemonSet: 0, one per node it runs on; a CronJob: 0, one Job
        per run)."""
        spec = self.manifest.get("spec") or {}
        if self.kind in ("Deployment", "StatefulSet", "ReplicaSet"):
            return int(spec.get("replicas", 1))
        if self.kind == "Job":
            return int(spec.get("parallelism", 1))
        return 1 if self.kind == "Pod" else 0


def pod_template(manifest: dict) -> dict:
    kind = manifest.get("kind", "Deployment")
    if kind == "Pod":
        return manifest
    spec = manifest.get("spec") or {}
    if kind == "CronJob":
        return ((spec.get("jobTemplate") or {}).get("spec") or {}).get("template") or {}
    return spec.get("template") or {}


@dataclass
class Policy:
    name: str
    vpa: dict | None                  # None: no VPA; else {updateMode, recommender, updater, spec}
    hpa: bool = True                  # whether the workloads' HPAs are created
    # "existing": workloads keep the VPAs they had in the recorded cluster; with ``select``, the
    # workloads it does not select do
    existing: bool = False
    select: dict | None = None        # which workloads the policy's VPA (or its none) applies to

    @property
    def update_mode(self) -> str | None:
        if self.vpa is not None:
            return self.vpa["updateMode"]
        return "existing" if self.existing and self.select is None else None

    def selects(self, workload: Workload) -> bool:
        return self.select is None or workload_selected(self.select, workload)

    def vpa_source(self, workload: Workload) -> str | None:
        """Where ``workload``'s VPA comes from under this policy: ``"policy"``, ``"existing"``
        (the recorded cluster's) or None (no VPA)."""
        keeps_existing = (self.existing and self.select is None) or not self.selects(workload)
        if keeps_existing:
            return "existing" if workload.existing_vpa is not None else None
        if self.vpa is None or workload.kind not in VPA_TARGET_KINDS:
            return None
        return "policy"


def workload_selected(select: dict, workload: Workload) -> bool:
    """Whether a policy's ``workloads`` selector (namespaces, kinds, names, labelSelector) names
    ``workload``: every part it has must match."""
    if select.get("namespaces") and workload.namespace not in select["namespaces"]:
        return False
    if select.get("kinds") and workload.kind not in select["kinds"]:
        return False
    if select.get("names") and workload.name not in select["names"]:
        return False
    sel = select.get("labelSelector")
    if sel is not None:
        selector = parse_label_selector(sel) if isinstance(sel, str) else label_selector_from_dict(sel)
        return selector.matches((workload.manifest.get("metadata") or {}).get("labels") or {})
    return True


@dataclass
class Scenario:
    name: str
    duration: float
    seed: int
    tick: float
    sample_interval: float
    pools: list[NodePool]
    workloads: list[Workload]
    policies: list[Policy]
    vpa_template: dict = field(default_factory=dict)
    source: dict = field(default_factory=dict)
    # how often a simulated node renews its lease and reports its status: about 24 times a
    # run (fixed when the scenario is read, so a run cut short keeps the full run's pace)
    heartbeat: float = 0.0
    start: float | None = None        # the virtual clock's start (unix seconds; None: the clock's own)
    objects: list[dict] = field(default_factory=list)   # created before the workloads, in order
    bank: TraceBank | None = None     # the workloads' recorded usage (imported scenarios)
    # what an imported scenario's cluster costs: {"cpu_core_hour": ..., "memory_gib_hour": ...}
    prices: dict[str, float] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.heartbeat:
            self.heartbeat = max(10.0, min(6 * 3600.0, self.duration / 24))

    @property
    def node_count(self) -> int:
        return sum(p.count for p in self.pools)

    def needs_vpa(self, policy: Policy) -> bool:
        """Whether any workload has a VPA under ``policy`` (its components then run)."""
        return any(policy.vpa_source(w) is not None for w in self.workloads)

    def vpa_object(self, workload: Workload, policy: Policy) -> dict | None:
        """The VerticalPodAutoscaler of ``workload`` under ``policy`` (None: it has none). A
        policy's VPA starts from the workload's existing one (its resourcePolicy and
        annotations), if it has one, then the scenario's template, the policy's spec and update
        mode, and the workload's own settings."""
        source = policy.vpa_source(workload)
        if source is None:
            return None
        existing = copy.deepcopy(workload.existing_vpa) if workload.existing_vpa is not None else None
        if source == "existing":
            assert existing is not None
            existing["spec"]["targetRef"] = workload.target_ref
            return existing
        assert policy.vpa is not None
        spec = copy.deepcopy(existing["spec"]) if existing is not None else {}
        spec.pop("recommenders", None)            # the simulation runs one recommender, the default
        spec.update(copy.deepcopy(self.vpa_template))
        spec.update(copy.deepcopy(policy.vpa.get("spec") or {}))
        spec["targetRef"] = workload.target_ref
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
        name = existing["metadata"]["name"] if existing is not None else workload.name
        meta: dict[str, Any] = {"name": name, "namespace": workload.namespace}
        annotations = {**((existing or {}).get("metadata", {}).get("annotations") or {}),
                       **(policy.vpa.get("annotations") or {}), **(settings.get("annotations") or {})}
        if annotations:
            meta["annotations"] = annotations
        return {"apiVersion": "autoscaling.k8s.io/v1", "kind": "VerticalPodAutoscaler", "metadata": meta,
                "spec": spec}

    def hpa_object(self, workload: Workload) -> dict:
        """The HorizontalPodAutoscaler of ``workload`` (which declares one)."""
        assert workload.hpa is not None
        return _hpa_object(workload.target_ref, workload.namespace, workload.hpa)


# -- sections --------------------------------------------------------------------------------------

def _container(doc: object, path: str) -> tuple[dict, Any]:
    doc = as_mapping(doc, path)
    check_keys(doc, {"name", "image", "requests", "limits", "usage", "resizePolicy"}, path)
    name = dns_label(required(doc, "name", path), f"{path}.name")
    c: dict[str, Any] = {"name": name, "image": doc.get("image", "registry.k8s.io/pause"), "resources": {}}
    for part in ("requests", "limits"):
        if doc.get(part) is not None:
            c["resources"][part] = resource_list(doc[part], f"{path}.{part}")
    if "resizePolicy" in doc:
        c["resizePolicy"] = doc["resizePolicy"]
    return c, doc.get("usage")


def _usage_check(usage: object, name: str, path: str) -> None:
    try:
        parse_container_usage(usage, name, path)
    except UsageError as e:
        raise ScenarioError(str(e)) from None


HPA_KEYS = {"name", "minReplicas", "maxReplicas", "metrics", "behavior"}
HPA_METRIC_TYPES = ("Resource", "ContainerResource")


def _hpa_object(target_ref: dict, namespace: str, spec: dict) -> dict:
    spec = copy.deepcopy(spec)
    name = spec.pop("name", None) or target_ref["name"]
    spec["scaleTargetRef"] = dict(target_ref)
    return {"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
            "metadata": {"name": name, "namespace": namespace}, "spec": spec}


def _hpa(doc: object, path: str, dep: dict) -> dict:
    """A workload's HPA spec, checked as the API server would check it (after defaulting)
    and for what the simulator can serve; errors name the scenario's field."""
    doc = as_mapping(doc, path)
    check_keys(doc, HPA_KEYS, path)
    required(doc, "maxReplicas", path)
    meta = dep["metadata"]
    kind = dep.get("kind", "Deployment")
    if kind not in HPA_TARGET_KINDS:
        raise ScenarioError(f"{path}: an HPA scales a {', '.join(sorted(HPA_TARGET_KINDS))}, not a {kind}")
    obj = _hpa_object({"apiVersion": WORKLOAD_KINDS[kind], "kind": kind, "name": meta["name"]},
                      meta["namespace"], doc)
    default_horizontal_pod_autoscaler(obj)
    for cause in validate_hpa(obj):
        where = cause.field[len("spec."):] if cause.field.startswith("spec.") else cause.field
        raise ScenarioError(f"{path}.{where}: {cause.message}")
    spec = obj["spec"]
    if int(dep["spec"].get("replicas", 1)) == 0:
        raise ScenarioError(f"{path}: the {kind} has replicas: 0, at which an HPA does not scale "
                            f"(ScalingDisabled); give it at least 1")
    containers = pod_template(dep)["spec"]["containers"]
    for i, metric in enumerate(spec["metrics"]):
        mpath = f"{path}.metrics[{i}]" if doc.get("metrics") else f"{path} (the default metric, cpu Utilization 80)"
        mtype = metric.get("type")
        if mtype not in HPA_METRIC_TYPES:
            raise ScenarioError(f"{mpath}.type: the simulator serves only Resource and ContainerResource metrics "
                                f"(metrics.k8s.io), got {mtype!r}")
        source = metric["resource" if mtype == "Resource" else "containerResource"]
        resource = source.get("name")
        if resource not in ("cpu", "memory"):
            raise ScenarioError(f"{mpath}.{'resource' if mtype == 'Resource' else 'containerResource'}.name: "
                                f"metrics.k8s.io serves cpu and memory, got {resource!r}")
        read = containers
        if mtype == "ContainerResource":
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
    annotations = as_mapping(value if value is not None else {}, path)
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
    doc = as_mapping(value, path)
    check_keys(doc, {"annotations", "resourcePolicy", "policies"}, path)
    out: dict[str, Any] = {}
    if doc.get("policies") is not None:
        names = doc["policies"]
        if not isinstance(names, list) or not names or not all(isinstance(n, str) for n in names):
            raise ScenarioError(f"{path}.policies: expected a non-empty list of policy names, got {names!r}")
        out["policies"] = tuple(names)
    if doc.get("annotations"):
        out["annotations"] = _vpa_annotations(doc["annotations"], f"{path}.annotations")
    if doc.get("resourcePolicy") is not None:
        policy = as_mapping(doc["resourcePolicy"], f"{path}.resourcePolicy")
        check_keys(policy, {"containerPolicies"}, f"{path}.resourcePolicy")
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


_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
MANIFEST_KEYS = {"manifest", "deployment", "hpa", "sharedUsage", "vpa", "existingVpa", "history", "recorded"}
RECORDED_KEYS = {"cpu_cores_mean", "memory_bytes_mean", "oom_kills", "restarts", "throttled_seconds", "pods"}


def _usage_annotation(template: dict, apath: str) -> None:
    """Check a template's usage annotation (written as JSON text or as a mapping; kept as text)."""
    annotations = (template.get("metadata") or {}).get("annotations") or {}
    if USAGE_ANNOTATION not in annotations:
        return
    raw = annotations[USAGE_ANNOTATION]
    try:
        value = json.loads(raw) if isinstance(raw, str) else raw
    except json.JSONDecodeError as e:
        raise ScenarioError(f"{apath}: invalid JSON ({e})") from None
    for cname, entry in as_mapping(value, apath).items():
        _usage_check(entry, cname, f"{apath}.{cname}")
    if not isinstance(raw, str):
        annotations[USAGE_ANNOTATION] = json.dumps(raw, sort_keys=True)


def _existing_vpa(value: object, path: str, workload: Workload) -> dict:
    """The VPA a workload had in the recorded cluster, checked as the API server checks one."""
    vpa = copy.deepcopy(as_mapping(value, path))
    meta = as_mapping(vpa.setdefault("metadata", {}), f"{path}.metadata")
    meta.setdefault("name", workload.name)
    meta["namespace"] = workload.namespace
    vpa.setdefault("apiVersion", "autoscaling.k8s.io/v1")
    vpa.setdefault("kind", "VerticalPodAutoscaler")
    spec = as_mapping(vpa.setdefault("spec", {}), f"{path}.spec")
    spec["targetRef"] = workload.target_ref
    for cause in validate_vpa(vpa):
        raise ScenarioError(f"{path}.{cause.field}: {cause.message}")
    return vpa


def _recorded(value: object, path: str) -> dict:
    doc = as_mapping(value or {}, path)
    check_keys(doc, RECORDED_KEYS, path)
    for k, v in doc.items():
        if isinstance(v, bool) or not isinstance(v, (int, float)) or v < 0:
            raise ScenarioError(f"{path}.{k}: expected a non-negative number, got {v!r}")
    return dict(doc)


def _manifest_workload(doc: dict, path: str, base_dir: Path, shared: tuple[str, ...]) -> Workload:
    key = "manifest" if "manifest" in doc else "deployment"
    if "manifest" in doc and "deployment" in doc:
        raise ScenarioError(f"{path}: manifest or deployment, not both")
    mpath = f"{path}.{key}"
    obj = copy.deepcopy(as_mapping(doc[key], mpath))
    kind = obj.get("kind", "Deployment")
    if key == "deployment" and kind != "Deployment":
        raise ScenarioError(f"{mpath}.kind: a deployment is a Deployment (any workload kind goes under manifest), "
                            f"got {kind!r}")
    if kind not in WORKLOAD_KINDS:
        raise ScenarioError(f"{mpath}.kind: expected one of {', '.join(WORKLOAD_KINDS)}, got {kind!r}")
    obj["kind"] = kind
    obj.setdefault("apiVersion", WORKLOAD_KINDS[kind])
    meta = as_mapping(required(obj, "metadata", mpath), f"{mpath}.metadata")
    name = required(meta, "name", f"{mpath}.metadata")
    if not isinstance(name, str) or not _SUBDOMAIN.match(name) or len(name) > 253:
        raise ScenarioError(f"{mpath}.metadata.name: invalid name {name!r} (lowercase letters, digits, '-' and '.')")
    namespace = dns_label(meta.get("namespace") or "default", f"{mpath}.metadata.namespace")
    meta["namespace"] = namespace
    tpath = {"Pod": mpath, "CronJob": f"{mpath}.spec.jobTemplate.spec.template"}.get(kind, f"{mpath}.spec.template")
    if kind != "Pod":
        spec = as_mapping(required(obj, "spec", mpath), f"{mpath}.spec")
        if kind == "CronJob":
            job = as_mapping(required(spec, "jobTemplate", f"{mpath}.spec"), f"{mpath}.spec.jobTemplate")
            job_spec = as_mapping(required(job, "spec", f"{mpath}.spec.jobTemplate"), f"{mpath}.spec.jobTemplate.spec")
            as_mapping(required(job_spec, "template", f"{mpath}.spec.jobTemplate.spec"), tpath)
        else:
            as_mapping(required(spec, "template", f"{mpath}.spec"), tpath)
    template = pod_template(obj)
    pod_spec = as_mapping(required(template, "spec", tpath), f"{tpath}.spec")
    containers = required(pod_spec, "containers", f"{tpath}.spec")
    if not isinstance(containers, list) or not containers:
        raise ScenarioError(f"{tpath}.spec.containers: expected a non-empty list")
    names = [str(as_mapping(c, f"{tpath}.spec.containers[{i}]").get("name")) for i, c in enumerate(containers)]
    _usage_annotation(template, f"{tpath}.metadata.annotations[{USAGE_ANNOTATION}]")
    hpa = _hpa(doc["hpa"], f"{path}.hpa", obj) if doc.get("hpa") is not None else None
    w = Workload(name, namespace, obj, names, hpa, shared, _workload_vpa(doc.get("vpa"), f"{path}.vpa", names))
    if doc.get("existingVpa") is not None:
        if kind not in VPA_TARGET_KINDS:
            raise ScenarioError(f"{path}.existingVpa: a VerticalPodAutoscaler cannot target a {kind}")
        w.existing_vpa = _existing_vpa(doc["existingVpa"], f"{path}.existingVpa", w)
    if doc.get("history") is not None:
        if not isinstance(doc["history"], str) or not doc["history"]:
            raise ScenarioError(f"{path}.history: expected the path of a trace file (traces/....parquet)")
        file = Path(doc["history"])
        w.history = file if file.is_absolute() else base_dir / file
    w.recorded = _recorded(doc.get("recorded"), f"{path}.recorded")
    return w


def _workload(doc: object, path: str, base_dir: Path) -> Workload:
    doc = as_mapping(doc, path)
    shared = _shared(doc.get("sharedUsage"), f"{path}.sharedUsage")
    if "manifest" in doc or "deployment" in doc:
        check_keys(doc, MANIFEST_KEYS, path)
        return _manifest_workload(doc, path, base_dir, shared)

    check_keys(doc, {"name", "namespace", "replicas", "containers", "hpa", "sharedUsage", "vpa"}, path)
    name = dns_label(required(doc, "name", path), f"{path}.name")
    namespace = dns_label(doc.get("namespace", "default"), f"{path}.namespace")
    replicas = doc.get("replicas", 1)
    if isinstance(replicas, bool) or not isinstance(replicas, int) or replicas < 0:
        raise ScenarioError(f"{path}.replicas: expected a non-negative integer, got {replicas!r}")
    containers = required(doc, "containers", path)
    if not isinstance(containers, list) or not containers:
        raise ScenarioError(f"{path}.containers: expected a non-empty list")
    built: list[dict] = []
    usage: dict[str, Any] = {}
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
    labels = {"app": name}
    tmeta: dict[str, Any] = {"labels": labels}
    if usage:
        tmeta["annotations"] = {USAGE_ANNOTATION: json.dumps(usage, sort_keys=True)}
    dep = {"apiVersion": "apps/v1", "kind": "Deployment",
           "metadata": {"name": name, "namespace": namespace, "labels": {"app": name}},
           "spec": {"replicas": replicas, "selector": {"matchLabels": dict(labels)},
                    "template": {"metadata": tmeta, "spec": {"containers": built}}}}
    hpa = _hpa(doc["hpa"], f"{path}.hpa", dep) if doc.get("hpa") is not None else None
    names = [c["name"] for c in built]
    return Workload(name, namespace, dep, names, hpa, shared, _workload_vpa(doc.get("vpa"), f"{path}.vpa", names),
                    key=name)


SELECT_KEYS = {"namespaces", "kinds", "names", "labelSelector"}


def _select(value: object, path: str) -> dict:
    doc = as_mapping(value, path)
    check_keys(doc, SELECT_KEYS, path)
    for key in ("namespaces", "kinds", "names"):
        items = doc.get(key)
        if items is not None and (not isinstance(items, list) or not all(isinstance(i, str) for i in items)):
            raise ScenarioError(f"{path}.{key}: expected a list of strings")
    for i, kind in enumerate(doc.get("kinds") or []):
        if kind not in WORKLOAD_KINDS:
            raise ScenarioError(f"{path}.kinds[{i}]: expected one of {', '.join(WORKLOAD_KINDS)}, got {kind!r}")
    sel = doc.get("labelSelector")
    if sel is not None:
        try:
            parse_label_selector(sel) if isinstance(sel, str) else label_selector_from_dict(
                as_mapping(sel, f"{path}.labelSelector"))
        except (SelectorError, ValueError) as e:
            raise ScenarioError(f"{path}.labelSelector: {e}") from None
    return dict(doc)


def _policy(doc: object, path: str) -> Policy:
    doc = as_mapping(doc, path)
    check_keys(doc, {"name", "vpa", "hpa", "workloads"}, path)
    name = required(doc, "name", path)
    if not isinstance(name, str) or not name:
        raise ScenarioError(f"{path}.name: expected a non-empty string")
    hpa = doc.get("hpa", True)
    if hpa not in (True, False, "none"):
        raise ScenarioError(f"{path}.hpa: expected none (the workloads' HPAs left out) or true, got {hpa!r}")
    hpa = hpa is True
    select = _select(doc["workloads"], f"{path}.workloads") if doc.get("workloads") is not None else None
    vpa = doc.get("vpa", "none")
    if vpa == "existing":
        if select is not None:
            raise ScenarioError(f"{path}.workloads: a policy of the existing VPAs applies to every workload")
        return Policy(name, None, hpa, existing=True)
    if vpa is None or vpa == "none" or vpa is False:
        return Policy(name, None, hpa, existing=select is not None, select=select)
    vpa = as_mapping(vpa, f"{path}.vpa")
    check_keys(vpa, {"updateMode", "recommender", "updater", "spec", "annotations", "featureGates"}, f"{path}.vpa")
    mode = vpa.get("updateMode", "InPlaceOrRecreate")
    if mode not in UPDATE_MODES:
        raise ScenarioError(f"{path}.vpa.updateMode: expected one of {', '.join(UPDATE_MODES)}, got {mode!r}")
    out: dict[str, Any] = {"updateMode": mode, "spec": dict(vpa.get("spec") or {})}
    out["annotations"] = _vpa_annotations(vpa.get("annotations"), f"{path}.vpa.annotations")
    if vpa.get("featureGates") is not None:
        try:
            out["featureGates"] = dict(VpaGates.parse(vpa["featureGates"]).set)
        except FeatureGateError as e:
            raise ScenarioError(f"{path}.vpa.featureGates: {e}") from None
    for part in ("recommender", "updater"):
        sub = {_snake(k): v for k, v in as_mapping(vpa.get(part) or {}, f"{path}.vpa.{part}").items()}
        for key, camel in (("interval", "interval"), ("checkpoint_interval", "checkpointInterval")):
            if key in sub:
                sub[key] = duration(sub[key], f"{path}.vpa.{part}.{camel}")
        out[part] = sub
    recommender_config(out["recommender"], f"{path}.vpa.recommender")       # validate now
    _updater_options(out["updater"], f"{path}.vpa.updater")
    return Policy(name, out, hpa, existing=select is not None, select=select)


def _snake(key: str) -> str:
    """``targetCpuPercentile`` / ``target-cpu-percentile`` -> ``target_cpu_percentile``."""
    key = re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", str(key)).replace("-", "_")
    return key.lower()


def recommender_config(options: dict[str, Any], path: str) -> RecommenderConfig:
    """The RecommenderConfig for a policy's ``recommender`` options (besides ``interval``):
    any RecommenderConfig field, in snake_case, camelCase or as the upstream flag name;
    durations may be written as durations."""
    fields = {f.name: f for f in dataclass_fields(RecommenderConfig)}
    values: dict[str, Any] = {}
    for key, value in options.items():
        if key in ("interval", "checkpoint_interval"):
            continue
        if key not in fields:
            raise ScenarioError(f"{path}.{key}: unknown recommender setting (expected interval or one of "
                                f"{', '.join(sorted(fields))})")
        kind = fields[key].metadata.get("kind")      # a mapping, empty by default
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


SCENARIO_KEYS = {"name", "description", "start", "duration", "seed", "tick", "sampleInterval", "nodes", "objects",
                 "workloads", "vpa", "policies", "prices"}
# the kinds ``objects`` may hold, created in this order before the workloads
OBJECT_KINDS = ("Namespace", "PriorityClass", "RuntimeClass", "LimitRange", "ResourceQuota", "PodDisruptionBudget")
PRICE_KEYS = {"cpuCoreHour": "cpu_core_hour", "memoryGiBHour": "memory_gib_hour"}


def _start(value: object) -> float | None:
    if value is None:
        return None
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    text = value.isoformat() if hasattr(value, "isoformat") else value      # YAML reads timestamps as datetimes
    if isinstance(text, str):
        try:
            return parse_time(text.replace("+00:00", "Z"))
        except ValueError:
            pass
    raise ScenarioError(f"start: expected an RFC 3339 time (2026-11-24T00:00:00Z) or unix seconds, got {value!r}")


def _objects(value: object) -> list[dict]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise ScenarioError("objects: expected a list of Kubernetes objects")
    out = []
    for i, obj in enumerate(value):
        obj = as_mapping(obj, f"objects[{i}]")
        kind = obj.get("kind")
        if kind not in OBJECT_KINDS:
            raise ScenarioError(f"objects[{i}].kind: expected one of {', '.join(OBJECT_KINDS)} (workloads go under "
                                f"workloads), got {kind!r}")
        meta = as_mapping(required(obj, "metadata", f"objects[{i}]"), f"objects[{i}].metadata")
        required(meta, "name", f"objects[{i}].metadata")
        out.append(copy.deepcopy(obj))
    return sorted(out, key=lambda o: OBJECT_KINDS.index(o["kind"]))


def _prices(value: object) -> dict[str, float]:
    doc = as_mapping(value or {}, "prices")
    check_keys(doc, set(PRICE_KEYS), "prices")
    out = {}
    for key, field_name in PRICE_KEYS.items():
        if key in doc:
            v = doc[key]
            if isinstance(v, bool) or not isinstance(v, (int, float)) or v < 0:
                raise ScenarioError(f"prices.{key}: expected a non-negative number, got {v!r}")
            out[field_name] = float(v)
    return out


_LABEL_VALUE = re.compile(r"[^A-Za-z0-9_.-]")


def _label_value(text: str) -> str:
    """``text`` as a valid label value: other characters as '_', at most 63, alphanumeric ends."""
    value = _LABEL_VALUE.sub("_", text)
    if len(value) > 63:
        value = value[:54] + "-" + hashlib.sha256(text.encode()).hexdigest()[:8]
    return value.strip("-_.") or "w"


def assign_keys(workloads: list[Workload]) -> None:
    """Unique keys (the report's names and the workload label's values): the name where it is
    unique, else ``namespace.name``, else ``namespace.kind.name`` (lower case)."""
    by_name: dict[str, int] = {}
    by_ns_name: dict[tuple[str, str], int] = {}
    for w in workloads:
        by_name[w.name] = by_name.get(w.name, 0) + 1
        by_ns_name[(w.namespace, w.name)] = by_ns_name.get((w.namespace, w.name), 0) + 1
    for w in workloads:
        if by_name[w.name] == 1:
            text = w.name
        elif by_ns_name[(w.namespace, w.name)] == 1:
            text = f"{w.namespace}.{w.name}"
        else:
            text = f"{w.namespace}.{w.kind.lower()}.{w.name}"
        w.key = _label_value(text)


def _label(w: Workload) -> None:
    """Label the workload's pods with its key (the simulation's informers follow them by it)."""
    template = w.template
    tmeta = template.setdefault("metadata", {})
    tmeta.setdefault("labels", {})[WORKLOAD_LABEL] = w.key
    spec = w.manifest.get("spec") or {}
    if w.kind in ("Deployment", "StatefulSet", "DaemonSet", "ReplicaSet"):
        selector = spec.setdefault("selector", {"matchLabels": {}})
        if not selector.get("matchLabels") and not selector.get("matchExpressions"):
            selector["matchLabels"] = dict(tmeta["labels"])
        elif (selector.get("matchLabels") or {}).get(WORKLOAD_LABEL) is not None:
            selector["matchLabels"][WORKLOAD_LABEL] = w.key


def _bank(workloads: list[Workload], start: float | None, read_traces: bool) -> tuple[TraceBank | None, float | None]:
    """The recorded usage of the workloads with a history; their containers' usage entries
    name it (``series``) unless they give their own cpu, memory or replay. Without
    ``read_traces`` only the files' footers are checked (no bank)."""
    recorded = [(i, w, w.history) for i, w in enumerate(workloads) if w.history is not None]
    if not recorded:
        return None, start
    entries: list[tuple[str, TraceLayout, bool, bool]] = []
    for i, w, history in recorded:
        try:
            layout = read_layout(history)
        except TraceFileError as e:
            raise ScenarioError(f"workloads[{i}].history: {e}") from None
        first = entries[0][1] if entries else None
        if first is not None and (layout.step != first.step or abs(layout.start - first.start) > 1e-6):
            raise ScenarioError(f"workloads[{i}].history: {w.history} is on another time grid (start "
                                f"{layout.start:.0f}, step {layout.step:g}s) than the first history's (start "
                                f"{first.start:.0f}, step {first.step:g}s)")
        missing = [c for c in layout.containers if c not in w.containers and c not in _init_names(w)]
        if missing:
            raise ScenarioError(f"workloads[{i}].history: {w.history} records container {missing[0]!r}, which the "
                                f"workload does not have (it has {', '.join(w.containers)})")
        entries.append((w.key, layout, "cpu" in w.shared, w.kind == "StatefulSet"))
        _series_usage(w, layout.containers)
    start = start if start is not None else entries[0][1].start
    if not read_traces:
        return None, start
    try:
        return load_bank(entries), start
    except TraceFileError as e:
        raise ScenarioError(f"workloads history: {e}") from None


def _init_names(w: Workload) -> list[str]:
    return [str(c.get("name")) for c in (w.template.get("spec") or {}).get("initContainers") or []]


def _series_usage(w: Workload, containers: list[str]) -> None:
    template = w.template
    annotations = template.setdefault("metadata", {}).setdefault("annotations", {})
    usage = json.loads(annotations.get(USAGE_ANNOTATION) or "{}")
    for c in containers:
        entry = dict(usage.get(c) or {})
        if not ({"cpu", "memory", "replay", "series"} & set(entry)):
            entry["series"] = w.key
        usage[c] = entry
    annotations[USAGE_ANNOTATION] = json.dumps(usage, sort_keys=True)


def parse_scenario(doc: object, *, name: str = "", base_dir: str | Path = ".", read_traces: bool = True) -> Scenario:
    """``base_dir``: where relative trace file names are looked up (the scenario file's
    directory when loaded with ``load_scenario``). ``read_traces=False`` checks the workloads'
    trace files by their footers only and leaves the scenario without its recorded usage (what
    the importer's check of its own output needs)."""
    doc = as_mapping(doc, "scenario")
    check_keys(doc, SCENARIO_KEYS, "")
    dur = duration(required(doc, "duration", ""), "duration")
    seed = doc.get("seed", 0)
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise ScenarioError(f"seed: expected an integer, got {seed!r}")
    tick = duration(doc.get("tick", "30s"), "tick")
    sample = duration(doc.get("sampleInterval", "60s"), "sampleInterval")
    if sample < tick:
        raise ScenarioError(f"sampleInterval: must be at least the tick ({tick:g}s)")
    if dur < sample:
        raise ScenarioError(f"duration: must be at least the sampleInterval ({sample:g}s)")
    pools = parse_pools(required(doc, "nodes", ""))
    objects = _objects(doc.get("objects"))
    workloads_doc = required(doc, "workloads", "")
    if not isinstance(workloads_doc, list) or not workloads_doc:
        raise ScenarioError("workloads: expected a non-empty list")
    workloads = [_workload(w, f"workloads[{i}]", Path(base_dir)) for i, w in enumerate(workloads_doc)]
    seen: set[tuple[str, str, str]] = set()
    for i, w in enumerate(workloads):
        if (w.namespace, w.kind, w.name) in seen:
            raise ScenarioError(f"workloads[{i}].name: duplicate workload {w.name!r}")
        seen.add((w.namespace, w.kind, w.name))
    assign_keys(workloads)
    for w in workloads:
        _label(w)
    template = as_mapping(doc.get("vpa") or {}, "vpa")
    policies_doc = doc.get("policies") or [{"name": "none", "vpa": "none"}]
    if not isinstance(policies_doc, list):
        raise ScenarioError("policies: expected a list")
    policies = [_policy(p, f"policies[{i}]") for i, p in enumerate(policies_doc)]
    names = [p.name for p in policies]
    for i, n in enumerate(names):
        if names.index(n) != i:
            raise ScenarioError(f"policies[{i}].name: duplicate policy name {n!r}")
    by_name = {p.name: p for p in policies}
    for i, w in enumerate(workloads):
        for k, n in enumerate(w.vpa.get("policies") or ()):
            if n not in by_name:
                raise ScenarioError(f"workloads[{i}].vpa.policies[{k}]: no policy {n!r} (the policies: "
                                    f"{', '.join(repr(p.name) for p in policies)})")
            if by_name[n].vpa is None:
                raise ScenarioError(f"workloads[{i}].vpa.policies[{k}]: policy {n!r} has no VPA")
        for j, p in enumerate(policies):     # each alone was checked; together with each policy's too
            if p.vpa is None:
                continue
            own = w.vpa_settings(p).get("annotations")
            if not own:
                continue
            _, problems = DEFAULT_CONFIG.with_annotations({**p.vpa["annotations"], **own})
            if problems:
                raise ScenarioError(f"workloads[{i}].vpa.annotations: with policies[{j}] ({p.name!r}): "
                                    f"{problems[0]}")
    bank, start = _bank(workloads, _start(doc.get("start")), read_traces)
    return Scenario(name=str(doc.get("name") or name or "scenario"), duration=dur, seed=seed, tick=tick,
                    sample_interval=sample, pools=pools, workloads=workloads, policies=policies,
                    vpa_template=dict(template), source=doc, start=start, objects=objects, bank=bank,
                    prices=_prices(doc.get("prices")))


def load_scenario(path: str | Path, *, read_traces: bool = True) -> Scenario:
    path = Path(path)
    try:
        text = path.read_text()
    except OSError as e:
        raise ScenarioError(f"{path}: {e.strerror or e}") from None
    try:
        doc = yaml.load(text, Loader=SafeLoader)
    except yaml.YAMLError as e:
        raise ScenarioError(f"{path}: invalid YAML: {e}") from None
    return parse_scenario(doc, name=path.stem, base_dir=path.parent, read_traces=read_traces)
