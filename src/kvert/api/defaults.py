"""Defaulting: what Kubernetes' ``SetDefaults_*`` functions (``pkg/apis/core/v1/defaults.go``,
``pkg/apis/apps/v1/defaults.go``, ``pkg/apis/scheduling/v1/defaults.go``) and the VPA
admission controller write into an object, for the kinds kvert serves.

:func:`apply_defaults` works in place and is idempotent: every rule only fills a field
that is absent (or ``null``/``""``, which decode to the same Go zero value). It never raises
on malformed input; validation reports that.

Pod (``SetDefaults_PodSpec`` and ``SetDefaults_Pod``):
  ``restartPolicy: Always``, ``dnsPolicy: ClusterFirst``, ``schedulerName: default-scheduler``,
  ``terminationGracePeriodSeconds: 30``, ``securityContext: {}``, ``enableServiceLinks: true``;
  per container ``terminationMessagePath: /dev/termination-log``,
  ``terminationMessagePolicy: File``, ``resources: {}`` (a non-pointer struct Go always
  serializes), ``imagePullPolicy`` (``Always`` for a ``:latest`` or
  untagged image, else ``IfNotPresent``), port ``protocol: TCP`` (and ``hostPort`` =
  ``containerPort`` under ``hostNetwork``), probe timeouts/thresholds and ``httpGet``
  path/scheme, volumes with no source become ``emptyDir: {}``, the deprecated
  ``serviceAccount`` mirrors ``serviceAccountName`` (the v1 conversion); and, for Pods only
  (not pod templates), each container's requests default to its limits, resource by resource,
  and then pod-level ``spec.resources`` (see :func:`_default_pod_level_resources`).

Deliberately not defaulted, as in Kubernetes:
  * ``resizePolicy``: today's API leaves it unset (the 1.27 alpha wrote ``NotRequired`` for cpu
    and memory, which is what seed 000's ``kubectl get -o yaml`` shows). An absent policy
    means ``NotRequired``; :func:`effective_resize_policy` reads it that way.
  * ``priority`` and ``preemptionPolicy`` of a Pod: the Priority admission plugin sets them from
    the PriorityClass (defaulting ``preemptionPolicy`` here would make that plugin reject pods
    of a ``Never`` class).
  * toleration ``operator``: an empty operator means ``Equal`` when matching.
  * ``status.phase: Pending`` on creation: the pod registry's job.
  * (not a default, but done here for every built-in kind) quantities are rewritten as the
    API server stores them: ``ParseQuantity`` then ``String()``, ResourceList values rounded
    up to milli first (kvert.api.quantityfields).

Deployment: ``replicas: 1``, strategy ``RollingUpdate`` with ``maxUnavailable``/``maxSurge``
``25%``, ``revisionHistoryLimit: 10``, ``progressDeadlineSeconds: 600``, template pod spec.
ReplicaSet: ``replicas: 1``, template pod spec. StatefulSet: ``podManagementPolicy:
OrderedReady``, update strategy ``RollingUpdate`` with ``partition: 0`` and ``maxUnavailable: 1``
(1.35's MaxUnavailableStatefulSet), claim retention ``Retain``/``Retain``,
``revisionHistoryLimit: 10``, claim templates as PersistentVolumeClaims (``volumeMode:
Filesystem``, ``status.phase: Pending``). DaemonSet: ``RollingUpdate`` with ``maxUnavailable:
1``, ``maxSurge: 0``, ``revisionHistoryLimit: 10``. ReplicationController: selector and labels
from the template's labels, ``replicas: 1``. HorizontalPodAutoscaler (autoscaling/v2):
``minReplicas: 1``, CPU utilization 80 % when no metrics, behavior rules. Job (``pkg/apis/batch/v1/defaults.go``):
``completions`` and ``parallelism`` 1 when both are unset (else ``parallelism: 1``),
``backoffLimit: 6`` (2147483647 with ``backoffLimitPerIndex``), labels from the template's
when the Job has none, ``completionMode: NonIndexed``, ``suspend: false``, a pod failure
policy's ``onPodConditions`` ``status: "True"``, ``podReplacementPolicy:
TerminatingOrFailed`` (``Failed`` with a pod failure policy), ``manualSelector: false``,
template pod spec. CronJob: ``concurrencyPolicy: Allow``, ``suspend: false``,
``successfulJobsHistoryLimit: 3``, ``failedJobsHistoryLimit: 1``, the job template's pod
spec. PriorityClass: ``preemptionPolicy:
PreemptLowerPriority``. Namespace: label ``kubernetes.io/metadata.name`` and ``status.phase:
Active``. Node: ``status.allocatable`` copied from ``capacity`` when absent. Service:
``type: ClusterIP``, ``sessionAffinity: None``, port ``protocol: TCP`` and ``targetPort`` =
``port``. Secret: ``type: Opaque``. LimitRange (Container items): ``default`` from ``max``,
``defaultRequest`` from ``default`` then ``min``. PodDisruptionBudget, RuntimeClass, Lease,
ConfigMap, ServiceAccount, Event: nothing.

ResourceClaim and ResourceClaimTemplate (``pkg/apis/resource/v1/defaults.go``): each
``exactly`` request and ``firstAvailable`` subrequest gets ``allocationMode: ExactCount`` and,
in that mode, ``count: 1``; a device toleration's ``operator`` defaults to ``Equal``. Not
defaulted: a device taint's ``timeAdded`` (upstream stamps the current time; defaulting here
has no clock). DeviceClass, ResourceSlice, Workload: nothing.

VerticalPodAutoscaler: like the VPA admission controller, an absent ``spec.updatePolicy``
becomes ``{updateMode: Recreate}`` (the VPA's default; the seeds' default ``Auto`` is a
deprecated alias with the same behaviour). ``controlledValues`` and ``controlledResources``
are *not* written (the CRD has no defaults); :func:`effective_controlled_values` and
:func:`effective_controlled_resources` interpret them (RequestsAndLimits, [cpu, memory]).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kvert.api import podlevel
from kvert.api.flowcontroldefaults import (
    default_admission_policy,
    default_admission_policy_binding,
    default_flow_schema,
    default_priority_level_configuration,
)
from kvert.api.kindspecs import BUILTIN_KINDS
from kvert.api.meta import deep_copy
from kvert.api.quantity import QuantityError
from kvert.api.quantityfields import canonicalize_quantities
from kvert.api.storagedefaults import (
    default_csi_driver,
    default_persistent_volume,
    default_storage_class,
)
from kvert.api.types import Obj

DEFAULT_TERMINATION_GRACE_PERIOD_SECONDS = 30
DEFAULT_SCHEDULER_NAME = "default-scheduler"
TERMINATION_MESSAGE_PATH = "/dev/termination-log"
DEFAULT_VPA_UPDATE_MODE = "Recreate"
DEFAULT_CONTROLLED_VALUES = "RequestsAndLimits"
DEFAULT_CONTROLLED_RESOURCES = ("cpu", "memory")
DEFAULT_RESIZE_RESTART_POLICY = "NotRequired"
_HUGEPAGES = "hugepages-"
METADATA_NAME_LABEL = "kubernetes.io/metadata.name"
MAX_INT32 = 2**31 - 1


def _unset(d: Obj, field: str) -> bool:
    return d.get(field) is None or d.get(field) == ""


def _set(d: Obj, field: str, value: Any) -> None:
    if _unset(d, field):
        d[field] = value


def _dict(d: Any, field: str, create: bool = False) -> Obj | None:
    """``d[field]`` if it is a dict; created empty when ``create`` and absent."""
    if not isinstance(d, dict):
        return None
    value = d.get(field)
    if value is None and create:
        value = d[field] = {}
    return value if isinstance(value, dict) else None


def _list(d: Any, field: str) -> list[Any]:
    value = d.get(field) if isinstance(d, dict) else None
    return value if isinstance(value, list) else []


# -- images -----------------------------------------------------------------------------------

def image_tag(image: str) -> str:
    """The tag of an image reference ("" when it has a digest and no tag, "latest" when neither),
    as ``parsers.ParseImageName`` reports it."""
    name, _, digest = image.partition("@")
    last = name.rsplit("/", 1)[-1]
    tag = last.partition(":")[2] if ":" in last else ""
    if not tag and not digest:
        return "latest"
    return tag


def default_pull_policy(image: Any) -> str:
    if isinstance(image, str) and image_tag(image) == "latest":
        return "Always"
    return "IfNotPresent"


# -- pods -------------------------------------------------------------------------------------

def _default_probe(probe: Any) -> None:
    if not isinstance(probe, dict):
        return
    for field, value in (("timeoutSeconds", 1), ("periodSeconds", 10), ("successThreshold", 1),
                         ("failureThreshold", 3)):
        if probe.get(field) in (None, 0):
            probe[field] = value
    _default_http_get(probe.get("httpGet"))


def _default_http_get(action: Any) -> None:
    if isinstance(action, dict):
        _set(action, "path", "/")
        _set(action, "scheme", "HTTP")


def default_container(c: Any, *, host_network: bool = False) -> None:
    """``SetDefaults_Container`` plus ports, probes and lifecycle handlers."""
    if not isinstance(c, dict):
        return
    # ResourceRequirements is a non-pointer struct in Go: every container serializes it,
    # as ``resources: {}`` when empty (ephemeral containers too).
    if c.get("resources") is None:
        c["resources"] = {}
    if _unset(c, "imagePullPolicy"):
        c["imagePullPolicy"] = default_pull_policy(c.get("image"))
    _set(c, "terminationMessagePath", TERMINATION_MESSAGE_PATH)
    _set(c, "terminationMessagePolicy", "File")
    for port in _list(c, "ports"):
        if isinstance(port, dict):
            _set(port, "protocol", "TCP")
            if host_network and not port.get("hostPort") and port.get("containerPort"):
                port["hostPort"] = port["containerPort"]
    for probe in ("livenessProbe", "readinessProbe", "startupProbe"):
        _default_probe(c.get(probe))
    lifecycle = _dict(c, "lifecycle")
    if lifecycle:
        for hook in ("postStart", "preStop"):
            handler = _dict(lifecycle, hook)
            if handler:
                _default_http_get(handler.get("httpGet"))
    env = _list(c, "env")
    for var in env:
        ref = _dict(_dict(var, "valueFrom"), "fieldRef")
        if ref is not None:
            _set(ref, "apiVersion", "v1")


def default_pod_spec(spec: Any, *, host_ports: bool = False) -> None:
    """``SetDefaults_PodSpec`` and the container defaults (pods and pod templates alike);
    ``host_ports`` (Pods only) copies containerPort to hostPort under ``hostNetwork``."""
    if not isinstance(spec, dict):
        return
    _set(spec, "dnsPolicy", "ClusterFirst")
    _set(spec, "restartPolicy", "Always")
    if spec.get("securityContext") is None:
        spec["securityContext"] = {}
    if spec.get("terminationGracePeriodSeconds") is None:
        spec["terminationGracePeriodSeconds"] = DEFAULT_TERMINATION_GRACE_PERIOD_SECONDS
    _set(spec, "schedulerName", DEFAULT_SCHEDULER_NAME)
    host_network = host_ports and spec.get("hostNetwork") is True
    for field in ("containers", "initContainers", "ephemeralContainers"):
        for c in _list(spec, field):
            default_container(c, host_network=host_network and field != "ephemeralContainers")
    for vol in _list(spec, "volumes"):
        if isinstance(vol, dict) and not any(k != "name" and v is not None for k, v in vol.items()):
            vol["emptyDir"] = {}
    mirror_service_account(spec)


def mirror_service_account(spec: Obj) -> None:
    """The v1 conversion of a pod spec's service account: the deprecated ``serviceAccount``
    fills an empty ``serviceAccountName`` and always reads back as ``serviceAccountName``."""
    if _unset(spec, "serviceAccountName") and isinstance(spec.get("serviceAccount"), str) \
            and spec["serviceAccount"]:
        spec["serviceAccountName"] = spec["serviceAccount"]
    if isinstance(spec.get("serviceAccountName"), str) and spec["serviceAccountName"]:
        spec["serviceAccount"] = spec["serviceAccountName"]


def _requests_from_limits(c: Any) -> None:
    resources = _dict(c, "resources")
    if resources is None:
        return
    limits = resources.get("limits")
    if not isinstance(limits, dict) or not limits:
        return
    requests = resources.get("requests")
    if requests is None:
        requests = resources["requests"] = {}
    if not isinstance(requests, dict):
        return
    for name, value in limits.items():
        if name not in requests:
            requests[name] = deep_copy(value)


def _supported_pod_level(name: str) -> bool:
    # resourcehelper.IsSupportedPodLevelResource
    return name in ("cpu", "memory") or name.startswith(_HUGEPAGES)


def _default_pod_level_resources(spec: Obj) -> None:
    """``defaultHugePagePodLimits`` then ``defaultPodRequests`` (PodLevelResources, on in 1.36),
    run after the containers' requests are defaulted from their limits:

    * a hugepages limit the containers set, with no pod-level limit or request for it, makes
      the pod-level limit their aggregate;
    * with pod-level limits, a missing pod-level cpu/memory request becomes the containers'
      aggregate request when any container requests it, else the pod-level limit (hugepages:
      the limit).

    1.37's defaulting of pod-level limits from the containers' (kubernetes#137616) is not done.
    """
    res = _dict(spec, "resources")
    if res is None:
        return
    limits, requests = res.get("limits"), res.get("requests")
    if (limits is not None and not isinstance(limits, dict)) or \
            (requests is not None and not isinstance(requests, dict)):
        return
    limits, requests = dict(limits or {}), dict(requests or {})
    if not limits and not requests:
        return
    try:
        container_limits = podlevel.aggregate_container_limits(spec)
        container_requests = podlevel.aggregate_container_requests(spec)
    except (QuantityError, ValueError, TypeError):
        return   # validation reports the bad quantity
    for name, amount in container_limits.items():
        if name.startswith(_HUGEPAGES) and name not in requests and name not in limits:
            limits[name] = podlevel.aggregate_text(spec, "limits", name, amount)
    if limits:
        res["limits"] = limits
    else:
        return
    for name, amount in container_requests.items():
        if name not in requests and name in ("cpu", "memory"):   # IsOvercommitAllowed
            requests[name] = podlevel.aggregate_text(spec, "requests", name, amount)
    for name, value in limits.items():
        if name not in requests and _supported_pod_level(name):
            requests[name] = deep_copy(value)
    if requests:
        res["requests"] = requests


def default_pod(pod: Obj) -> None:
    """``SetDefaults_Pod`` (requests from limits, pod-level requests, ``enableServiceLinks``)
    + the pod spec."""
    spec = _dict(pod, "spec", create=True)
    if spec is None:
        return
    for field in ("containers", "initContainers"):
        for c in _list(spec, field):
            _requests_from_limits(c)
    _default_pod_level_resources(spec)
    if spec.get("enableServiceLinks") is None:
        spec["enableServiceLinks"] = True
    default_pod_spec(spec, host_ports=True)


# -- workloads and others ------------------------------------------------------------------------

def _default_replicated(obj: Obj) -> Obj | None:
    """What Deployment and ReplicaSet share: ``replicas: 1`` and the template's pod spec.

    Returns the (possibly created) ``spec``, or None when it is not an object.
    """
    spec = _dict(obj, "spec", create=True)
    if spec is None:
        return None
    if spec.get("replicas") is None:
        spec["replicas"] = 1
    template = _dict(spec, "template")
    if template is not None:
        default_pod_spec(_dict(template, "spec", create=True))
    return spec


def default_deployment(obj: Obj) -> None:
    spec = _default_replicated(obj)
    if spec is None:
        return
    strategy = _dict(spec, "strategy", create=True)
    if strategy is not None:
        _set(strategy, "type", "RollingUpdate")
        if strategy["type"] == "RollingUpdate":
            rolling = _dict(strategy, "rollingUpdate", create=True)
            if rolling is not None:
                for field in ("maxUnavailable", "maxSurge"):
                    if rolling.get(field) is None:
                        rolling[field] = "25%"
    if spec.get("revisionHistoryLimit") is None:
        spec["revisionHistoryLimit"] = 10
    if spec.get("progressDeadlineSeconds") is None:
        spec["progressDeadlineSeconds"] = 600


def default_replica_set(obj: Obj) -> None:
    _default_replicated(obj)


def default_persistent_volume_claim(obj: Obj) -> None:
    """``SetDefaults_PersistentVolumeClaim`` and ``..Spec``: ``volumeMode: Filesystem`` and
    ``status.phase: Pending`` (a StatefulSet's claim templates carry both)."""
    spec = _dict(obj, "spec", create=True)
    if spec is not None:
        _set(spec, "volumeMode", "Filesystem")
    status = _dict(obj, "status", create=True)
    if status is not None:
        _set(status, "phase", "Pending")


def default_stateful_set(obj: Obj) -> None:
    """``SetDefaults_StatefulSet`` with 1.35's MaxUnavailableStatefulSet (beta, on):
    ``rollingUpdate.maxUnavailable: 1``."""
    spec = _default_replicated(obj)
    if spec is None:
        return
    _set(spec, "podManagementPolicy", "OrderedReady")
    strategy = _dict(spec, "updateStrategy", create=True)
    if strategy is not None:
        if _unset(strategy, "type"):
            strategy["type"] = "RollingUpdate"
            _dict(strategy, "rollingUpdate", create=True)
        rolling = _dict(strategy, "rollingUpdate")
        if strategy["type"] == "RollingUpdate" and rolling is not None:
            for field in ("partition", "maxUnavailable"):
                if rolling.get(field) is None:
                    rolling[field] = 0 if field == "partition" else 1
    policy = _dict(spec, "persistentVolumeClaimRetentionPolicy", create=True)
    if policy is not None:
        _set(policy, "whenDeleted", "Retain")
        _set(policy, "whenScaled", "Retain")
    if spec.get("revisionHistoryLimit") is None:
        spec["revisionHistoryLimit"] = 10
    for claim in _list(spec, "volumeClaimTemplates"):
        if isinstance(claim, dict):
            default_persistent_volume_claim(claim)


def default_daemon_set(obj: Obj) -> None:
    """``SetDefaults_DaemonSet``: RollingUpdate with ``maxUnavailable: 1``, ``maxSurge: 0``."""
    spec = _dict(obj, "spec", create=True)
    if spec is None:
        return
    template = _dict(spec, "template")
    if template is not None:
        default_pod_spec(_dict(template, "spec", create=True))
    strategy = _dict(spec, "updateStrategy", create=True)
    if strategy is not None:
        _set(strategy, "type", "RollingUpdate")
        if strategy["type"] == "RollingUpdate":
            rolling = _dict(strategy, "rollingUpdate", create=True)
            if rolling is not None:
                for field, value in (("maxUnavailable", 1), ("maxSurge", 0)):
                    if rolling.get(field) is None:
                        rolling[field] = value
    if spec.get("revisionHistoryLimit") is None:
        spec["revisionHistoryLimit"] = 10


def default_replication_controller(obj: Obj) -> None:
    """``SetDefaults_ReplicationController``: selector and labels from the template's labels
    when empty, ``replicas: 1``."""
    spec = _default_replicated(obj)
    if spec is None:
        return
    labels = (_dict(_dict(spec, "template"), "metadata") or {}).get("labels")
    if isinstance(labels, dict):
        if not spec.get("selector"):
            spec["selector"] = deep_copy(labels)
        meta = _dict(obj, "metadata", create=True)
        if meta is not None and not meta.get("labels"):
            meta["labels"] = deep_copy(labels)


def _default_hpa_rules(rules: Obj, stabilization: int, policies: list[Obj]) -> None:
    if rules.get("stabilizationWindowSeconds") is None:
        rules["stabilizationWindowSeconds"] = stabilization
    _set(rules, "selectPolicy", "Max")
    if not rules.get("policies"):
        rules["policies"] = policies


def default_horizontal_pod_autoscaler(obj: Obj) -> None:
    """autoscaling/v2 ``SetDefaults_HorizontalPodAutoscaler``: ``minReplicas: 1``, a CPU
    utilization target of 80 % when no metric is given, and the missing parts of a given
    ``behavior`` (scale up: no stabilization, max of 4 pods or 100 % per 15 s; scale down:
    300 s stabilization, 100 % per 15 s)."""
    spec = _dict(obj, "spec", create=True)
    if spec is None:
        return
    if spec.get("minReplicas") is None:
        spec["minReplicas"] = 1
    if not spec.get("metrics"):
        spec["metrics"] = [{"type": "Resource", "resource": {
            "name": "cpu", "target": {"type": "Utilization", "averageUtilization": 80}}}]
    behavior = _dict(spec, "behavior")
    if behavior is None:
        return
    up = _dict(behavior, "scaleUp", create=True)
    if up is not None:
        _default_hpa_rules(up, 0, [{"type": "Pods", "value": 4, "periodSeconds": 15},
                                   {"type": "Percent", "value": 100, "periodSeconds": 15}])
    down = _dict(behavior, "scaleDown", create=True)
    if down is not None:
        _default_hpa_rules(down, 300, [{"type": "Percent", "value": 100, "periodSeconds": 15}])


def _default_job_spec(spec: Obj) -> None:
    """What defaulting writes into a JobSpec, a Job's and a CronJob's job template's alike
    (the generated defaulter reaches the template's pod spec through both)."""
    template = _dict(spec, "template")
    if template is not None:
        default_pod_spec(_dict(template, "spec", create=True))


def default_job(obj: Obj) -> None:
    """``SetDefaults_Job``."""
    spec = _dict(obj, "spec", create=True)
    if spec is None:
        return
    if spec.get("completions") is None and spec.get("parallelism") is None:
        spec["completions"] = 1
        spec["parallelism"] = 1
    if spec.get("parallelism") is None:
        spec["parallelism"] = 1
    if spec.get("backoffLimit") is None:
        spec["backoffLimit"] = MAX_INT32 if spec.get("backoffLimitPerIndex") is not None else 6
    template = _dict(spec, "template")
    labels = (_dict(template, "metadata") or {}).get("labels") if template else None
    meta = _dict(obj, "metadata", create=True)
    if isinstance(labels, dict) and meta is not None and not meta.get("labels"):
        meta["labels"] = deep_copy(labels)
    _set(spec, "completionMode", "NonIndexed")
    if spec.get("suspend") is None:
        spec["suspend"] = False
    policy = _dict(spec, "podFailurePolicy")
    if policy is not None:
        for rule in _list(policy, "rules"):
            for pattern in _list(rule, "onPodConditions"):
                if isinstance(pattern, dict):
                    _set(pattern, "status", "True")
    _set(spec, "podReplacementPolicy", "Failed" if policy is not None else "TerminatingOrFailed")
    if spec.get("manualSelector") is None:
        spec["manualSelector"] = False
    _default_job_spec(spec)


def default_cron_job(obj: Obj) -> None:
    """``SetDefaults_CronJob``."""
    spec = _dict(obj, "spec", create=True)
    if spec is None:
        return
    _set(spec, "concurrencyPolicy", "Allow")
    if spec.get("suspend") is None:
        spec["suspend"] = False
    for field, value in (("successfulJobsHistoryLimit", 3), ("failedJobsHistoryLimit", 1)):
        if spec.get(field) is None:
            spec[field] = value
    job_spec = _dict(_dict(spec, "jobTemplate") or {}, "spec")
    if job_spec is not None:
        _default_job_spec(job_spec)


def default_secret(obj: Obj) -> None:
    _set(obj, "type", "Opaque")


def default_priority_class(obj: Obj) -> None:
    _set(obj, "preemptionPolicy", "PreemptLowerPriority")


def default_namespace(obj: Obj) -> None:
    meta = _dict(obj, "metadata")
    name = meta.get("name") if meta else None
    if isinstance(name, str) and name:
        labels = _dict(meta, "labels", create=True)
        if labels is not None:
            labels[METADATA_NAME_LABEL] = name
    status = _dict(obj, "status", create=True)
    if status is not None:
        _set(status, "phase", "Active")


def default_node(obj: Obj) -> None:
    status = _dict(obj, "status")
    if status is None:
        return
    capacity = status.get("capacity")
    if status.get("allocatable") is None and isinstance(capacity, dict):
        status["allocatable"] = deep_copy(capacity)


def default_service(obj: Obj) -> None:
    spec = _dict(obj, "spec", create=True)
    if spec is None:
        return
    _set(spec, "sessionAffinity", "None")
    _set(spec, "type", "ClusterIP")
    for port in _list(spec, "ports"):
        if isinstance(port, dict):
            _set(port, "protocol", "TCP")
            if port.get("targetPort") in (None, 0, "") and port.get("port") is not None:
                port["targetPort"] = port["port"]
    if spec.get("internalTrafficPolicy") is None and spec["type"] in ("ClusterIP", "NodePort",
                                                                        "LoadBalancer"):
        spec["internalTrafficPolicy"] = "Cluster"
    if is_externally_accessible(spec) and not spec.get("externalTrafficPolicy"):
        spec["externalTrafficPolicy"] = "Cluster"
    if spec["type"] == "LoadBalancer":
        _set(spec, "allocateLoadBalancerNodePorts", True)


def is_externally_accessible(spec: Obj) -> bool:
    """``ExternallyAccessible``: reachable from outside the cluster network."""
    return spec.get("type") in ("LoadBalancer", "NodePort") or (
        spec.get("type") == "ClusterIP" and bool(spec.get("externalIPs")))


def default_limit_range(obj: Obj) -> None:
    for item in _list(_dict(obj, "spec"), "limits"):
        if not isinstance(item, dict) or item.get("type") != "Container":
            continue
        default = _dict(item, "default", create=True)
        default_request = _dict(item, "defaultRequest", create=True)
        if default is None or default_request is None:
            continue
        for source, target in ((item.get("max"), default), (default, default_request),
                               (item.get("min"), default_request)):
            if isinstance(source, dict):
                for name, value in source.items():
                    if name not in target:
                        target[name] = deep_copy(value)


def default_vpa(obj: Obj) -> None:
    spec = _dict(obj, "spec")
    if spec is not None and spec.get("updatePolicy") is None:
        spec["updatePolicy"] = {"updateMode": DEFAULT_VPA_UPDATE_MODE}


def _default_device_request(request: Any) -> None:
    """``SetDefaults_ExactDeviceRequest`` / ``SetDefaults_DeviceSubRequest``, and the
    ``Equal`` default of a toleration's operator."""
    if not isinstance(request, dict):
        return
    if not request.get("allocationMode"):
        request["allocationMode"] = "ExactCount"
    if request["allocationMode"] == "ExactCount" and not request.get("count"):
        request["count"] = 1
    for toleration in _list(request, "tolerations"):
        if isinstance(toleration, dict) and not toleration.get("operator"):
            toleration["operator"] = "Equal"


def _default_device_claim(claim_spec: Any) -> None:
    for request in _list(_dict(claim_spec, "devices"), "requests"):
        if not isinstance(request, dict):
            continue
        _default_device_request(_dict(request, "exactly"))
        for sub in _list(request, "firstAvailable"):
            _default_device_request(sub)


def default_resource_claim(obj: Obj) -> None:
    _default_device_claim(_dict(obj, "spec"))


def default_resource_claim_template(obj: Obj) -> None:
    _default_device_claim(_dict(_dict(obj, "spec"), "spec"))


def default_rbac_binding(obj: Obj) -> None:
    """``SetDefaults_RoleBinding``/``ClusterRoleBinding`` and ``SetDefaults_Subject``:
    the role and User/Group subjects belong to rbac.authorization.k8s.io."""
    ref = _dict(obj, "roleRef")
    if ref is not None and not ref.get("apiGroup"):
        ref["apiGroup"] = "rbac.authorization.k8s.io"
    for subject in _list(obj, "subjects"):
        if isinstance(subject, dict) and not subject.get("apiGroup") \
                and subject.get("kind") in ("User", "Group"):
            subject["apiGroup"] = "rbac.authorization.k8s.io"


def default_certificate_signing_request(obj: Obj) -> None:
    """SetDefaults_CertificateSigningRequestSpec and ..._Condition (certificates/v1)."""
    spec = _dict(obj, "spec", create=True)
    if spec is not None and spec.get("usages") is None:
        spec["usages"] = ["digital signature", "key encipherment"]
    for condition in _list(_dict(obj, "status"), "conditions"):
        if isinstance(condition, dict) and not condition.get("status"):
            condition["status"] = "True"


def default_network_policy(obj: Obj) -> None:
    """SetDefaults_NetworkPolicySpec and _NetworkPolicyPort (networking/v1): the policy types
    follow the rules given, each port's protocol is TCP. The pod selector, a struct in Go,
    is always encoded."""
    spec = _dict(obj, "spec", create=True)
    if spec is None:
        return
    if spec.get("podSelector") is None:
        spec["podSelector"] = {}
    for direction in ("ingress", "egress"):
        for rule in _list(spec, direction):
            for port in _list(rule, "ports"):
                if isinstance(port, dict) and port.get("protocol") is None:
                    port["protocol"] = "TCP"
    if not spec.get("policyTypes"):
        spec["policyTypes"] = ["Ingress", "Egress"] if _list(spec, "egress") else ["Ingress"]


def default_pod_template(obj: Obj) -> None:
    """A PodTemplate's pod spec, defaulted as a workload's template."""
    template = _dict(obj, "template")
    if template is not None:
        default_pod_spec(_dict(template, "spec", create=True))


def default_api_service(obj: Obj) -> None:
    """SetDefaults_ServiceReference (apiregistration/v1): a service's port is 443."""
    service = _dict(_dict(obj, "spec"), "service")
    if service is not None and service.get("port") is None:
        service["port"] = 443


# The defaulting function of each kind, by the ``defaults`` name its KindSpec gives
# (kvert.api.kindspecs); RoleBinding's serves ClusterRoleBinding too.
DEFAULTERS: dict[str, Callable[[Obj], None]] = {
    "Pod": default_pod,
    "Namespace": default_namespace,
    "Node": default_node,
    "Service": default_service,
    "LimitRange": default_limit_range,
    "Secret": default_secret,
    "Deployment": default_deployment,
    "ReplicaSet": default_replica_set,
    "StatefulSet": default_stateful_set,
    "DaemonSet": default_daemon_set,
    "ReplicationController": default_replication_controller,
    "PersistentVolumeClaim": default_persistent_volume_claim,
    "HorizontalPodAutoscaler": default_horizontal_pod_autoscaler,
    "Job": default_job,
    "CertificateSigningRequest": default_certificate_signing_request,
    "NetworkPolicy": default_network_policy,
    "CronJob": default_cron_job,
    "PriorityClass": default_priority_class,
    "VerticalPodAutoscaler": default_vpa,
    "ResourceClaim": default_resource_claim,
    "ResourceClaimTemplate": default_resource_claim_template,
    "RoleBinding": default_rbac_binding,
    "APIService": default_api_service,
    "PersistentVolume": default_persistent_volume,
    "StorageClass": default_storage_class,
    "CSIDriver": default_csi_driver,
    "PodTemplate": default_pod_template,
    "FlowSchema": default_flow_schema,
    "PriorityLevelConfiguration": default_priority_level_configuration,
    "AdmissionPolicy": default_admission_policy,
    "AdmissionPolicyBinding": default_admission_policy_binding,
}

# A name missing from DEFAULTERS fails tests/api/test_kind_completeness.py.
_BY_KIND: dict[tuple[str, str], Callable[[Obj], None]] = {
    spec.gvk: fn for spec in BUILTIN_KINDS
    if (fn := DEFAULTERS.get(spec.defaults or "")) is not None}


def apply_defaults(obj: Obj) -> None:
    """Fill in Kubernetes' defaults for ``obj`` (dispatching on apiVersion and kind), in place."""
    if not isinstance(obj, dict):
        return
    api_version, kind = obj.get("apiVersion"), obj.get("kind")
    if not isinstance(api_version, str) or not isinstance(kind, str):
        return
    fn = _BY_KIND.get((api_version, kind))
    if fn is not None:
        fn(obj)
    # Decoding a Quantity and SetDefaults_ResourceList: what the API server stores and returns.
    canonicalize_quantities(obj)


def defaulted(obj: Obj) -> Obj:
    """A defaulted deep copy of ``obj``."""
    out: Obj = deep_copy(obj)
    apply_defaults(out)
    return out


# -- interpretation of fields left unset on purpose ------------------------------------------------

def effective_resize_policy(container: Any, resource: str) -> str:
    """The container's restart policy for resizing ``resource`` (``NotRequired`` when unset)."""
    for p in _list(container, "resizePolicy"):
        if isinstance(p, dict) and p.get("resourceName") == resource and p.get("restartPolicy"):
            policy: str = p["restartPolicy"]
            return policy
    return DEFAULT_RESIZE_RESTART_POLICY


def effective_update_mode(vpa: Any) -> str:
    policy = _dict(_dict(vpa, "spec"), "updatePolicy")
    mode = policy.get("updateMode") if policy else None
    return mode if isinstance(mode, str) and mode else DEFAULT_VPA_UPDATE_MODE


def effective_controlled_values(container_policy: Any) -> str:
    value = container_policy.get("controlledValues") if isinstance(container_policy, dict) else None
    return value if isinstance(value, str) and value else DEFAULT_CONTROLLED_VALUES


def effective_controlled_resources(container_policy: Any) -> list[str]:
    value = container_policy.get("controlledResources") if isinstance(container_policy, dict) else None
    if isinstance(value, list):
        return [r for r in value if isinstance(r, str)]
    return list(DEFAULT_CONTROLLED_RESOURCES)
