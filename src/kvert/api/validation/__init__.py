"""API validation: the checks ``kube-apiserver`` runs before it stores an object.

Entry points (each returns a list of :class:`kvert.api.errors.Cause`; empty means valid):

* :func:`validate` - create. Dispatches on (apiVersion, kind); a kind kvert has no rules for
  gets the metadata checks only (namespace required/forbidden as the kinds table says).
* :func:`validate_update` - update (PUT/PATCH of the main resource): the new object's rules
  plus the immutability rules (``metadata.name``/``namespace``/``uid``; Pod spec except the
  fields Kubernetes lets change; Deployment/ReplicaSet ``spec.selector``; PriorityClass
  ``value`` and ``preemptionPolicy``; RuntimeClass ``handler``; immutable ConfigMaps and
  Secrets; a Secret's ``type``; ...).
* :func:`validate_status_update` - the ``status`` subresource.
* :func:`validate_pod_resize` - the ``pods/resize`` subresource (see ``resize.py``).
* :func:`validate_csr_approval` - the ``certificatesigningrequests/approval`` subresource.

Each function validates a *defaulted copy* (:func:`kvert.api.defaults.apply_defaults`) of its
arguments, as kube-apiserver decodes-with-defaults before validating; the inputs are never
modified, and undefaulted objects validate the same as defaulted ones. Each also has
``.of_defaulted``: the same checks without the copies, for a caller whose objects are already
defaulted (the registry, which defaults what it stores; two deep copies per write saved).
The checks only read their arguments.

Messages, reasons and field paths follow Kubernetes (``pkg/apis/core/validation``,
``apimachinery/pkg/api/validation``, ``pkg/apis/{apps,policy,scheduling,node,coordination,resource}``,
``pkg/apis/rbac``, the VPA CRD and the VPA admission controller), e.g. ``spec.containers[0].resources.requests:
Invalid value: "2": must be less than or equal to cpu limit of 1`` or ``spec: Forbidden: pod
updates may not change fields other than `spec.containers[*].image`,...``.

Where kvert deliberately differs from Kubernetes (the per-area modules explain more):

* absent defaulted fields are read as their defaults instead of "Required value";
* ``terminationGracePeriodSeconds`` must be >= 0; ``Gt``/``Lt`` node-affinity values must be
  integers; core/v1 Events must name their ``involvedObject`` (kind or name);
* a PodDisruptionBudget may set neither ``minAvailable`` nor ``maxUnavailable`` (as in
  Kubernetes), but not both;
* VerticalPodAutoscaler: ``targetRef`` is required (the seeds' ``selector`` shape is the
  pre-v1 API), duplicate ``containerName`` policies and ``controlledResources`` other than
  cpu/memory are rejected, recommendation bounds are not ordered (``vpa.py``);
* resize (``resize.py``): memory limit decreases and ``resizePolicy`` changes are allowed;
  non-resize changes are reported, not silently dropped;
* the seed's resize policy names ``RestartNotRequired``/``Restart`` are rejected with a hint
  to ``NotRequired``/``RestartContainer``; a sidecar's own ``restartPolicy: Always`` counts
  when checking "must be 'NotRequired' when `restartPolicy` is 'Never'";
* metadata updates: a missing ``uid`` keeps the stored one, ``creationTimestamp`` and
  ``resourceVersion`` are the registry's business, an existing ``deletionTimestamp`` cannot
  change; ``status.qosClass`` is only immutable once set;
* Node taints are reported under ``spec.taints`` (Kubernetes says ``metadata.taints``);
  pod conditions under ``status.conditions[i].type``;
* not implemented: volume sources beyond names/mounts, security-context details beyond id
  ranges, pod-level resource aggregation checks; Service rules beyond the common fields
  (``service.py``);
* dynamic resource allocation (``dra.py``): CEL selector costs are not estimated.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, NamedTuple

from kvert.api import kinds
from kvert.api.defaults import defaulted
from kvert.api.errors import Cause
from kvert.api.kindspecs import BUILTIN_KINDS
from kvert.api.types import Obj

from . import (
    admissionpolicy,
    admissionregistration,
    apiregistration,
    apps,
    autoscaling,
    batch,
    certificates,
    crd,
    dra,
    endpoints,
    ephemeral,
    misc,
    networking,
    node,
    persistentvolume,
    pod,
    policy,
    rbac,
    resize,
    secrets,
    servedkinds,
    service,
    storage,
    vpa,
    workload,
    workloads,
)
from .common import Causes, immutable, type_error
from .meta import validate_object_meta, validate_object_meta_update
from .resize import drop_non_resize_updates

__all__ = ["validate", "validate_update", "validate_status_update", "validate_pod_resize",
           "validate_csr_approval",
           "validate_vpa", "drop_non_resize_updates", "Cause"]

Create = Callable[[Obj], Causes]
Update = Callable[[Obj, Obj], Causes]


class Rules(NamedTuple):
    """A kind's checks: on create, on update of the main resource (None: the metadata update
    rules plus the create rules), on a ``status`` write (None: the metadata update rules)."""

    create: Create
    update: Update | None = None
    status: Update | None = None


# Each kind's rules, by the ``rules`` name its KindSpec gives (kvert.api.kindspecs).
_RULES: dict[str, Rules] = {
    "Pod": Rules(pod.validate_pod, pod.validate_pod_update, pod.validate_pod_status_update),
    "Node": Rules(node.validate_node, node.validate_node_update, node.validate_node_status_update),
    "Namespace": Rules(misc.validate_namespace, None, misc.validate_namespace_status_update),
    "CoreEvent": Rules(misc.validate_core_event),
    "ConfigMap": Rules(misc.validate_config_map, misc.validate_config_map_update),
    "Secret": Rules(secrets.validate_secret, secrets.validate_secret_update),
    "Service": Rules(service.validate_service, service.validate_service_update),
    "Endpoints": Rules(endpoints.validate_endpoints, endpoints.validate_endpoints_update),
    "EndpointSlice": Rules(
        endpoints.validate_endpoint_slice,
        endpoints.validate_endpoint_slice_update),
    "Ingress": Rules(networking.validate_ingress, networking.validate_ingress_update),
    "IngressClass": Rules(
        networking.validate_ingress_class,
        networking.validate_ingress_class_update),
    "NetworkPolicy": Rules(
        networking.validate_network_policy,
        networking.validate_network_policy_update),
    "CertificateSigningRequest": Rules(
        certificates.validate_certificate_signing_request,
        certificates.validate_certificate_signing_request_update,
        certificates.validate_certificate_signing_request_status_update),
    "CSIStorageCapacity": Rules(
        storage.validate_csi_storage_capacity,
        storage.validate_csi_storage_capacity_update),
    "ServiceAccount": Rules(
        secrets.validate_service_account,
        secrets.validate_service_account_update),
    "LimitRange": Rules(misc.validate_limit_range),
    "ResourceQuota": Rules(misc.validate_resource_quota),
    "Deployment": Rules(
        workloads.validate_deployment,
        workloads.validate_deployment_update,
        lambda n, o: workloads.validate_workload_status_update(n, o, "Deployment")),
    "ReplicaSet": Rules(
        workloads.validate_replica_set,
        workloads.validate_replica_set_update,
        lambda n, o: workloads.validate_workload_status_update(n, o, "ReplicaSet")),
    "StatefulSet": Rules(
        apps.validate_stateful_set,
        apps.validate_stateful_set_update,
        apps.validate_stateful_set_status_update),
    "DaemonSet": Rules(
        apps.validate_daemon_set,
        apps.validate_daemon_set_update,
        apps.validate_daemon_set_status_update),
    "ControllerRevision": Rules(
        apps.validate_controller_revision,
        apps.validate_controller_revision_update),
    "ReplicationController": Rules(
        workloads.validate_replication_controller,
        workloads.validate_replication_controller_update,
        lambda n, o: workloads.validate_workload_status_update(n, o, "ReplicaSet")),
    "PersistentVolumeClaim": Rules(
        storage.validate_persistent_volume_claim,
        storage.validate_persistent_volume_claim_update),
    "PersistentVolume": Rules(
        persistentvolume.validate_persistent_volume,
        persistentvolume.validate_persistent_volume_update,
        persistentvolume.validate_persistent_volume_status_update),
    "StorageClass": Rules(storage.validate_storage_class, storage.validate_storage_class_update),
    "VolumeAttributesClass": Rules(
        storage.validate_volume_attributes_class,
        storage.validate_volume_attributes_class_update),
    "VolumeAttachment": Rules(
        storage.validate_volume_attachment,
        storage.validate_volume_attachment_update,
        storage.validate_volume_attachment_update),
    "CSIDriver": Rules(storage.validate_csi_driver, storage.validate_csi_driver_update),
    "CSINode": Rules(storage.validate_csi_node, storage.validate_csi_node_update),
    "PodTemplate": Rules(servedkinds.validate_pod_template, servedkinds.validate_pod_template_update),
    "ComponentStatus": Rules(servedkinds.validate_component_status),
    "ServiceCIDR": Rules(
        servedkinds.validate_service_cidr,
        servedkinds.validate_service_cidr_update,
        servedkinds.validate_service_cidr_status_update),
    "IPAddress": Rules(servedkinds.validate_ip_address, servedkinds.validate_ip_address_update),
    "FlowSchema": Rules(
        servedkinds.validate_flow_schema,
        servedkinds.validate_flow_schema_update,
        servedkinds.validate_flowcontrol_status_update),
    "PriorityLevelConfiguration": Rules(
        servedkinds.validate_priority_level_configuration,
        servedkinds.validate_priority_level_configuration_update,
        servedkinds.validate_flowcontrol_status_update),
    "ValidatingAdmissionPolicy": Rules(
        admissionpolicy.validate_validating_admission_policy,
        admissionpolicy.validate_validating_admission_policy_update,
        admissionpolicy.validate_validating_admission_policy_status_update),
    "ValidatingAdmissionPolicyBinding": Rules(
        admissionpolicy.validate_validating_admission_policy_binding,
        admissionpolicy.validate_validating_admission_policy_binding_update),
    "MutatingAdmissionPolicy": Rules(
        admissionpolicy.validate_mutating_admission_policy,
        admissionpolicy.validate_mutating_admission_policy_update),
    "MutatingAdmissionPolicyBinding": Rules(
        admissionpolicy.validate_mutating_admission_policy_binding,
        admissionpolicy.validate_mutating_admission_policy_binding_update),
    "HorizontalPodAutoscaler": Rules(
        autoscaling.validate_hpa,
        autoscaling.validate_hpa_update,
        autoscaling.validate_hpa_status_update),
    "Job": Rules(batch.validate_job, batch.validate_job_update, batch.validate_job_status_update),
    "CronJob": Rules(
        batch.validate_cron_job,
        batch.validate_cron_job_update,
        batch.validate_cron_job_status_update),
    "PodDisruptionBudget": Rules(
        policy.validate_pdb,
        policy.validate_pdb_update,
        policy.validate_pdb_status_update),
    "PriorityClass": Rules(policy.validate_priority_class, policy.validate_priority_class_update),
    "Workload": Rules(workload.validate_workload, workload.validate_workload_update),
    "DeviceClass": Rules(dra.validate_device_class, dra.validate_device_class_update),
    "ResourceClaim": Rules(
        dra.validate_resource_claim,
        dra.validate_resource_claim_update,
        dra.validate_resource_claim_status_update),
    "ResourceClaimTemplate": Rules(
        dra.validate_resource_claim_template,
        dra.validate_resource_claim_template_update),
    "ResourceSlice": Rules(dra.validate_resource_slice, dra.validate_resource_slice_update),
    "RuntimeClass": Rules(policy.validate_runtime_class, policy.validate_runtime_class_update),
    "Lease": Rules(misc.validate_lease, misc.validate_lease_update),
    "EventsEvent": Rules(misc.validate_events_event, misc.validate_events_event_update),
    "VerticalPodAutoscaler": Rules(
        vpa.validate_vpa,
        vpa.validate_vpa_update,
        vpa.validate_vpa_status_update),
    "VerticalPodAutoscalerCheckpoint": Rules(
        vpa.validate_vpa_checkpoint,
        vpa.validate_vpa_checkpoint_update),
    "CustomResourceDefinition": Rules(
        crd.validate_crd,
        crd.validate_crd_update,
        crd.validate_crd_status_update),
    "Role": Rules(rbac.validate_role, rbac.validate_role_update),
    "ClusterRole": Rules(rbac.validate_cluster_role, rbac.validate_cluster_role_update),
    "RoleBinding": Rules(rbac.validate_role_binding, rbac.validate_role_binding_update),
    "ClusterRoleBinding": Rules(
        rbac.validate_cluster_role_binding,
        rbac.validate_cluster_role_binding_update),
    "MutatingWebhookConfiguration": Rules(
        admissionregistration.validate_mutating_configuration,
        admissionregistration.validate_mutating_configuration_update),
    "ValidatingWebhookConfiguration": Rules(
        admissionregistration.validate_validating_configuration,
        admissionregistration.validate_validating_configuration_update),
    "APIService": Rules(
        apiregistration.validate_api_service,
        apiregistration.validate_api_service_update,
        apiregistration.validate_api_service_status_update),
}

# A name missing from _RULES leaves its kind with the metadata checks only, and fails
# tests/api/test_kind_completeness.py (which lists every missing entry at once).
_BY_GVK: dict[tuple[str, str], Rules] = {
    spec.gvk: rules for spec in BUILTIN_KINDS
    if (rules := _RULES.get(spec.rules or "")) is not None}
_CREATE: dict[tuple[str, str], Create] = {gvk: rules.create for gvk, rules in _BY_GVK.items()}
_UPDATE: dict[tuple[str, str], Update] = {
    gvk: rules.update for gvk, rules in _BY_GVK.items() if rules.update is not None}
_STATUS: dict[tuple[str, str], Update] = {
    gvk: rules.status for gvk, rules in _BY_GVK.items() if rules.status is not None}


def _gvk(obj: Obj) -> tuple[str, str]:
    api_version, kind = obj.get("apiVersion"), obj.get("kind")
    return (api_version if isinstance(api_version, str) else "",
            kind if isinstance(kind, str) else "")


def _namespaced(obj: Obj) -> bool | None:
    try:
        return kinds.for_object(obj).namespaced
    except KeyError:
        return None


def _metadata_only(obj: Obj) -> Causes:
    # Kinds without their own rules are custom resources: apimachinery's generic rules.
    return validate_object_meta(obj, namespaced=_namespaced(obj), builtin=False)


def _kind_unchanged(new: Obj, old: Obj) -> Causes:
    errs: Causes = []
    for field in ("apiVersion", "kind"):
        if old.get(field) and new.get(field) and new.get(field) != old.get(field):
            errs.append(immutable(field, new.get(field)))
    return errs


def _generic_update(new: Obj, old: Obj) -> Causes:
    """Metadata update rules plus the create rules for the body."""
    create = _CREATE.get(_gvk(new))
    errs = validate_object_meta_update(new, old, builtin=create is not None)
    if create is not None:
        errs.extend(c for c in create(new) if not c.field.startswith("metadata"))
    return errs


# The public entry points all take what a client sent: anything. They share one preamble: a
# non-object body is a type error, a missing/non-object old object reads as {}, and the checks
# see defaulted copies (kube-apiserver decodes with defaults before validating).

def _create_entry(check: Create) -> Callable[[Any], list[Cause]]:
    """``check`` (on a defaulted dict) as a public create entry point."""
    @functools.wraps(check)
    def entry(obj: Any) -> list[Cause]:
        if not isinstance(obj, dict):
            return [type_error("", obj, "object")]
        return check(defaulted(obj))
    entry.of_defaulted = check   # type: ignore[attr-defined]
    return entry


def _update_entry(check: Update) -> Callable[[Any, Any], list[Cause]]:
    """``check`` (on defaulted new and old dicts) as a public update entry point."""
    @functools.wraps(check)
    def entry(new: Any, old: Any) -> list[Cause]:
        if not isinstance(new, dict):
            return [type_error("", new, "object")]
        return check(defaulted(new), defaulted(old if isinstance(old, dict) else {}))
    entry.of_defaulted = check   # type: ignore[attr-defined]
    return entry


@_create_entry
def validate(obj: Obj) -> list[Cause]:
    """Causes that make ``obj`` invalid on create."""
    return _CREATE.get(_gvk(obj), _metadata_only)(obj)


@_update_entry
def validate_update(new: Obj, old: Obj) -> list[Cause]:
    """Causes that make replacing ``old`` by ``new`` invalid (main resource)."""
    return _kind_unchanged(new, old) + _UPDATE.get(_gvk(new), _generic_update)(new, old)


@_update_entry
def validate_status_update(new: Obj, old: Obj) -> list[Cause]:
    """Causes that make a ``status`` subresource write invalid."""
    status = _STATUS.get(_gvk(new))
    if status is None:
        return _kind_unchanged(new, old) + validate_object_meta_update(
            new, old, builtin=_gvk(new) in _CREATE)
    return _kind_unchanged(new, old) + status(new, old)


@_update_entry
def validate_csr_approval(new: Obj, old: Obj) -> list[Cause]:
    """Causes that make a ``certificatesigningrequests/approval`` write invalid."""
    return _kind_unchanged(new, old) + certificates.validate_certificate_signing_request_approval_update(
        new, old)


@_update_entry
def validate_pod_resize(new: Obj, old: Obj) -> list[Cause]:
    """Causes that make a ``pods/resize`` write invalid (see :mod:`.resize`)."""
    return resize.validate_pod_resize(new, old)


@_update_entry
def validate_pod_ephemeral_containers(new: Obj, old: Obj) -> list[Cause]:
    """Causes that make a ``pods/ephemeralcontainers`` write invalid (see :mod:`.ephemeral`)."""
    return _kind_unchanged(new, old) + ephemeral.validate_pod_ephemeral_containers_update(new, old)


@_create_entry
def validate_vpa(obj: Obj) -> list[Cause]:
    """VerticalPodAutoscaler create validation (also reached through :func:`validate`)."""
    return vpa.validate_vpa(obj)
