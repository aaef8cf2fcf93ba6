"""A cluster snapshot as a scenario's cluster: node pools, objects and workloads.

What ``kvert scenario import`` makes of the objects ``kvert snapshot`` (or ``kubectl get -o
yaml``) captured, every step a rule the user can read back in the scenario it writes:

* **Nodes** become pools of nodes alike: the same capacity, allocatable, labels (but the ones
  every kubelet sets itself: hostname, os, arch), taints (but the ones the node lifecycle
  controller manages, ``node.kubernetes.io/*``) and cordon. Each pool keeps its nodes' names.
* **Workloads**: Deployments, StatefulSets, DaemonSets, CronJobs, and the ReplicaSets, Jobs
  and Pods no controller owns. Their manifests are made runnable where nothing of the
  recorded cluster is there to run them: volumes become ``emptyDir`` (mounts keep working:
  no ConfigMap, Secret or PersistentVolume is simulated), a StatefulSet's
  ``volumeClaimTemplates`` go, pods run as the namespace's default ServiceAccount without
  image pull secrets, a Job's generated selector and labels go (the API server makes new
  ones), a bare Pod is no longer bound to a node (the scheduler places it).
* **HorizontalPodAutoscalers** stay with their workload, with the metrics the simulation can
  serve (Resource and ContainerResource, cpu and memory; a Utilization target needs the
  request in every container it reads); every other metric is left out with a warning, and an
  HPA left with none goes. The workload's CPU is then *shared* among its pods (the HPA's
  load balancer), ``sharedUsage: [cpu]``.
* **VerticalPodAutoscalers** become their workload's ``existingVpa`` (the "as is" policy runs
  them), without ``recommenders`` (the simulation runs the default recommender).
* **Namespaces, PriorityClasses** (but the built-in ``system-*``), **RuntimeClasses,
  LimitRanges, ResourceQuotas and PodDisruptionBudgets** become the scenario's ``objects``.

Each thing left out or changed that could change the answer is a warning naming the object.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kvert.api.meta import deep_copy, key_of
from kvert.api.quantity import to_int
from kvert.sim.scenario import HPA_TARGET_KINDS, VPA_TARGET_KINDS, WORKLOAD_KINDS, pod_template

KUBELET_LABELS = frozenset({"kubernetes.io/hostname", "kubernetes.io/os", "kubernetes.io/arch",
                            "beta.kubernetes.io/os", "beta.kubernetes.io/arch"})
CONTROLLER_TAINT_PREFIXES = ("node.kubernetes.io/", "node.cloudprovider.kubernetes.io/")
NODE_RESOURCES = ("cpu", "memory", "pods", "ephemeral-storage")
OBJECT_KINDS = ("Namespace", "PriorityClass", "RuntimeClass", "LimitRange", "ResourceQuota", "PodDisruptionBudget")
JOB_LABELS = ("controller-uid", "batch.kubernetes.io/controller-uid", "job-name", "batch.kubernetes.io/job-name")
HPA_METRICS = ("Resource", "ContainerResource")


@dataclass
class ImportedWorkload:
    kind: str
    namespace: str
    name: str
    manifest: dict
    hpa: dict | None = None
    existing_vpa: dict | None = None
    shared_cpu: bool = False

    @property
    def containers(self) -> list[str]:
        return [c["name"] for c in pod_template(self.manifest)["spec"].get("containers") or []]

    @property
    def ref(self) -> str:
        return f"{self.kind} {self.namespace}/{self.name}"


@dataclass
class ImportedCluster:
    pools: list[dict] = field(default_factory=list)
    objects: list[dict] = field(default_factory=list)
    workloads: list[ImportedWorkload] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def _meta(obj: dict) -> dict:
    return obj.get("metadata") or {}


def _ref(obj: dict) -> str:
    return f"{obj.get('kind')} {key_of(obj)}"


def controller_of(obj: dict) -> dict | None:
    return next((r for r in _meta(obj).get("ownerReferences") or [] if r.get("controller")), None)


# -- nodes ------------------------------------------------------------------------------------------------

def _resources(values: dict | None) -> dict[str, str]:
    return {r: str(values[r]) for r in NODE_RESOURCES if values and r in values}


def node_pools(nodes: list[dict], warnings: list[str]) -> list[dict]:
    """Pools of the nodes alike (see the module docstring), largest first."""
    groups: dict[str, dict] = {}
    for node in nodes:
        status = node.get("status") or {}
        capacity = _resources(status.get("capacity"))
        if "cpu" not in capacity or "memory" not in capacity:
            warnings.append(f"{_ref(node)}: no cpu or memory capacity in the snapshot; left out")
            continue
        allocatable = _resources(status.get("allocatable"))
        labels = {k: v for k, v in (_meta(node).get("labels") or {}).items() if k not in KUBELET_LABELS}
        spec = node.get("spec") or {}
        taints = [{k: t[k] for k in ("key", "value", "effect") if t.get(k) not in (None, "")}
                  for t in spec.get("taints") or [] if not str(t.get("key", "")).startswith(CONTROLLER_TAINT_PREFIXES)]
        pool = {"capacity": capacity, "allocatable": allocatable, "labels": labels, "taints": taints,
                "unschedulable": bool(spec.get("unschedulable"))}
        signature = repr(sorted((k, repr(v)) for k, v in pool.items()))
        entry = groups.setdefault(signature, {**pool, "names": []})
        entry["names"].append(_meta(node)["name"])
    pools = sorted(groups.values(), key=lambda p: (-len(p["names"]), p["names"][0]))
    out = []
    for i, p in enumerate(pools):
        kind = p["labels"].get("node.kubernetes.io/instance-type", "")
        name = _pool_name(kind, i)
        doc: dict = {"name": name, "count": len(p["names"]), "names": sorted(p["names"]),
                     "capacity": p["capacity"]}
        if p["allocatable"]:
            doc["allocatable"] = p["allocatable"]
        for key in ("labels", "taints"):
            if p[key]:
                doc[key] = p[key]
        if p["unschedulable"]:
            doc["unschedulable"] = True
        out.append(doc)
    return out


def _pool_name(instance_type: str, index: int) -> str:
    clean = "".join(ch if ch.isalnum() else "-" for ch in instance_type.lower()).strip("-")[:40]
    return f"{clean}-{index + 1}" if clean else f"pool-{index + 1}"


# -- manifests ----------------------------------------------------------------------------------------------

def _runnable_pod_spec(spec: dict) -> None:
    """Make a pod spec runnable without the recorded cluster's other objects."""
    for key in ("serviceAccountName", "serviceAccount", "imagePullSecrets", "nodeName"):
        spec.pop(key, None)
    volumes = []
    for v in spec.get("volumes") or []:
        volumes.append({"name": v["name"], "emptyDir": v.get("emptyDir") or {}})
    if volumes:
        spec["volumes"] = volumes


def runnable_manifest(obj: dict) -> dict:
    """The workload's manifest as the simulation creates it (the module docstring's rules)."""
    out = {"apiVersion": obj["apiVersion"], "kind": obj["kind"]}
    meta = _meta(obj)
    out["metadata"] = {k: deep_copy(meta[k]) for k in ("name", "namespace", "labels", "annotations") if meta.get(k)}
    out["spec"] = deep_copy(obj.get("spec") or {})
    kind = obj["kind"]
    if kind == "StatefulSet":
        out["spec"].pop("volumeClaimTemplates", None)
    if kind in ("Job", "CronJob"):
        job_spec = out["spec"] if kind == "Job" else (out["spec"].get("jobTemplate") or {}).get("spec") or {}
        if not job_spec.get("manualSelector"):
            job_spec.pop("selector", None)
    if kind == "Pod":
        _runnable_pod_spec(out["spec"])
        return out
    template = pod_template(out)
    tmeta = template.get("metadata") or {}
    labels = {k: v for k, v in (tmeta.get("labels") or {}).items()
              if k != "pod-template-hash" and not (kind in ("Job", "CronJob") and k in JOB_LABELS)}
    template["metadata"] = {**{k: v for k, v in tmeta.items() if k in ("labels", "annotations")}, "labels": labels}
    _runnable_pod_spec(template.setdefault("spec", {}))
    return out


def _owned(obj: dict, kinds: tuple[str, ...]) -> bool:
    ref = controller_of(obj)
    return ref is not None and ref.get("kind") in kinds


def _hpa(hpa: dict, workload: ImportedWorkload, warnings: list[str]) -> dict | None:
    """The workload's HPA spec with the metrics the simulation serves (see the module docstring)."""
    spec = hpa.get("spec") or {}
    containers = pod_template(workload.manifest)["spec"].get("containers") or []
    metrics = []
    for m in spec.get("metrics") or [{"type": "Resource", "resource": {"name": "cpu", "target": {
            "type": "Utilization", "averageUtilization": 80}}}]:
        mtype = m.get("type")
        source = m.get("resource" if mtype == "Resource" else "containerResource") or {}
        why = ""
        if mtype not in HPA_METRICS:
            why = f"a {mtype} metric has no source in the simulation"
        elif source.get("name") not in ("cpu", "memory"):
            why = f"metric {source.get('name')!r}: the simulation serves cpu and memory"
        elif (source.get("target") or {}).get("type") == "Utilization":
            read = (containers if mtype == "Resource"
                    else [c for c in containers if c.get("name") == source.get("container")])
            if not read or any(source["name"] not in ((c.get("resources") or {}).get("requests") or {}) for c in read):
                why = (f"a {source['name']} Utilization target needs a {source['name']} request in every container "
                       "it reads")
        if why:
            warnings.append(f"{_ref(hpa)}: {why}; that metric is left out")
        else:
            metrics.append(deep_copy(m))
    if not metrics:
        warnings.append(f"{_ref(hpa)}: no metric left that the simulation can serve; the HPA is left out "
                        f"(its {workload.ref} keeps {workload.manifest['spec'].get('replicas', 1)} replicas)")
        return None
    out = {"name": _meta(hpa)["name"], "maxReplicas": spec.get("maxReplicas", 1), "metrics": metrics}
    for key in ("minReplicas", "behavior"):
        if spec.get(key) is not None:
            out[key] = deep_copy(spec[key])
    return out


def _vpa(vpa: dict, warnings: list[str]) -> dict:
    out = {"metadata": {"name": _meta(vpa)["name"]}, "spec": deep_copy(vpa.get("spec") or {})}
    annotations = _meta(vpa).get("annotations")
    if annotations:
        out["metadata"]["annotations"] = dict(annotations)
    recommenders = out["spec"].pop("recommenders", None)
    if recommenders and any(r.get("name") not in (None, "default") for r in recommenders):
        warnings.append(f"{_ref(vpa)}: names recommender {recommenders}; the simulation runs the default one "
                        "for it")
    out["spec"].pop("targetRef", None)
    return out


def import_cluster(objects: dict[str, list[dict]]) -> ImportedCluster:
    """A snapshot's objects (kind -> objects) as the scenario's cluster parts."""
    cluster = ImportedCluster()
    warnings = cluster.warnings
    cluster.pools = node_pools(objects.get("Node") or [], warnings)
    for kind in OBJECT_KINDS:
        for obj in objects.get(kind) or []:
            name = _meta(obj).get("name", "")
            if kind == "PriorityClass" and name.startswith("system-"):
                continue                     # built in: every cluster has them
            if kind == "Namespace" and name in ("default", "kube-system", "kube-public", "kube-node-lease"):
                continue
            out = {"apiVersion": obj["apiVersion"], "kind": kind,
                   "metadata": {k: deep_copy(v) for k, v in _meta(obj).items()
                                if k in ("name", "namespace", "labels", "annotations")}}
            for key in ("spec", "value", "globalDefault", "preemptionPolicy", "description", "handler", "overhead",
                        "scheduling"):
                if key in obj:
                    out[key] = deep_copy(obj[key])
            if kind == "Namespace":
                out.pop("spec", None)
            cluster.objects.append(out)
    owned = {"ReplicaSet": ("Deployment",), "Job": ("CronJob",), "Pod": tuple(WORKLOAD_KINDS)}
    for kind in WORKLOAD_KINDS:
        for obj in objects.get(kind) or []:
            if kind in owned and _owned(obj, owned[kind] + (("ReplicaSet", "Job", "StatefulSet", "DaemonSet", "Node")
                                                            if kind == "Pod" else ())):
                continue
            if kind == "Pod" and (obj.get("status") or {}).get("phase") in ("Succeeded", "Failed"):
                continue
            controller = controller_of(obj)
            if controller is not None and kind != "Pod" and kind not in owned:
                warnings.append(f"{_ref(obj)}: owned by {controller.get('kind')} "
                                f"{controller.get('name')}, which kvert does not simulate; simulated as is")
            meta = _meta(obj)
            cluster.workloads.append(ImportedWorkload(kind, meta.get("namespace") or "default", meta["name"],
                                                      runnable_manifest(obj)))
    # looked up by (namespace, kind, name) of a reference, whose kind or name may be missing
    by_ref: dict[tuple[str, str | None, str | None], ImportedWorkload] = {
        (w.namespace, w.kind, w.name): w for w in cluster.workloads}
    for hpa in objects.get("HorizontalPodAutoscaler") or []:
        ref = (hpa.get("spec") or {}).get("scaleTargetRef") or {}
        w = by_ref.get((_meta(hpa).get("namespace") or "default", ref.get("kind"), ref.get("name")))
        if w is None or w.kind not in HPA_TARGET_KINDS:
            warnings.append(f"{_ref(hpa)}: its target {ref.get('kind')} {ref.get('name')} is not in the snapshot; "
                            "left out")
            continue
        if w.hpa is not None:
            warnings.append(f"{_ref(hpa)}: {w.ref} has another HPA ({w.hpa['name']}); left out")
            continue
        w.hpa = _hpa(hpa, w, warnings)
        w.shared_cpu = True
    for vpa in objects.get("VerticalPodAutoscaler") or []:
        ref = (vpa.get("spec") or {}).get("targetRef") or {}
        w = by_ref.get((_meta(vpa).get("namespace") or "default", ref.get("kind"), ref.get("name")))
        if w is None or w.kind not in VPA_TARGET_KINDS:
            warnings.append(f"{_ref(vpa)}: its target {ref.get('kind')} {ref.get('name')} is not in the snapshot; "
                            "left out")
            continue
        if w.existing_vpa is not None:
            warnings.append(f"{_ref(vpa)}: {w.ref} has another VPA ({w.existing_vpa['metadata']['name']}); "
                            "left out (upstream's recommender would take the oldest)")
            continue
        w.existing_vpa = _vpa(vpa, warnings)
    if not cluster.pools:
        warnings.append("the snapshot has no Nodes")
    return cluster


def container_limit(workload: ImportedWorkload, container: str, resource: str) -> int | None:
    """The template's limit of ``resource`` for ``container`` (cpu millicores, memory bytes)."""
    for c in pod_template(workload.manifest)["spec"].get("containers") or []:
        if c.get("name") == container:
            value = ((c.get("resources") or {}).get("limits") or {}).get(resource)
            return None if value is None else to_int(resource, str(value))
    return None


__all__ = ["ImportedCluster", "ImportedWorkload", "container_limit", "controller_of", "import_cluster", "node_pools",
           "runnable_manifest"]
