"""List and map merge semantics per kind and field path: the one table behind strategic
merge patch, server-side apply and the OpenAPI extensions.

Kubernetes declares these on its Go types, and kvert copies them here as they stand in
``k8s.io/api`` (core/v1, apps/v1, batch/v1, policy/v1, resource/v1, scheduling/v1alpha1, ...):

* struct tags ``patchStrategy:"merge"`` / ``"merge,retainKeys"`` / ``"retainKeys"`` /
  ``"replace"`` and ``patchMergeKey:"name"`` drive strategic merge patch
  (``x-kubernetes-patch-strategy``, ``x-kubernetes-patch-merge-key`` in OpenAPI);
* markers ``+listType=map|set|atomic`` with ``+listMapKey=...`` and ``+mapType`` /
  ``+structType=atomic`` drive server-side apply (``x-kubernetes-list-type``,
  ``x-kubernetes-list-map-keys``, ``x-kubernetes-map-type``).

The two do not always agree, and kvert keeps both as Kubernetes has them: ``tolerations``
and ``node.spec.taints`` have no merge key at all (a strategic patch replaces them, apply
treats them as atomic); ``pod.status.hostIPs`` merges by ``ip`` under strategic merge
patch but is atomic for apply; ``pod.status.containerStatuses`` is atomic for both.

A path is the JSON field names from the object root with list indices left out, so
``("spec", "template", "spec", "containers", "env")`` is the env list of every container
of a Deployment's pod template. Paths not in the table, and every path of a custom
resource, get ``PatchMeta()``: lists are replaced whole, maps merge key by key. A custom
resource's own ``x-kubernetes-list-type`` / ``-list-map-keys`` / ``-map-type`` markers in
its CRD schema are honoured (server-side apply uses them); strategic merge patch is not
supported for custom resources at all (``supports_strategic``), exactly as in Kubernetes.
The Vertical Pod Autoscaler kinds are served from a CustomResourceDefinition in
Kubernetes, so they count as custom resources here too.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from kvert.api import kinds
from kvert.api.kindspecs import BUILTIN_KINDS
from kvert.api.types import Obj

__all__ = ["PatchMeta", "patch_meta", "all_patch_meta", "supports_strategic", "is_builtin"]


@dataclass(frozen=True)
class PatchMeta:
    """How one field merges.

    ``strategy`` is the ``patchStrategy`` tag ("merge", "retainKeys", "merge,retainKeys",
    "replace") or None; ``merge_key`` the ``patchMergeKey``; ``list_type`` the
    ``+listType`` marker ("map", "set", "atomic") and ``list_map_keys`` its
    ``+listMapKey`` markers; ``map_type`` is ``+mapType`` / ``+structType`` ("atomic" or
    "granular") for maps and structs.
    """

    strategy: str | None = None
    merge_key: str | None = None
    list_type: str | None = None
    list_map_keys: tuple[str, ...] = ()
    map_type: str | None = None

    @property
    def strategies(self) -> tuple[str, ...]:
        return tuple(s for s in (self.strategy or "").split(",") if s)

    @property
    def merges(self) -> bool:
        """A strategic patch merges this list (by ``merge_key``, or as a set of scalars)."""
        return "merge" in self.strategies

    @property
    def replaces(self) -> bool:
        """A strategic patch replaces this map or list whole."""
        return "replace" in self.strategies

    @property
    def retains_keys(self) -> bool:
        return "retainKeys" in self.strategies

    @property
    def atomic(self) -> bool:
        """Server-side apply treats the value as one leaf (lists by default)."""
        return self.list_type == "atomic" or self.map_type == "atomic"

    def is_empty(self) -> bool:
        return self == _NONE


_NONE = PatchMeta()
ATOMIC = PatchMeta(list_type="atomic")
ATOMIC_MAP = PatchMeta(map_type="atomic")


def _merge_map(*keys: str, merge_key: str | None = None, strategy: str = "merge") -> PatchMeta:
    """``patchStrategy:merge patchMergeKey:<first key>`` with ``+listType=map``."""
    return PatchMeta(strategy, merge_key or keys[0], "map", tuple(keys))


def _map(*keys: str) -> PatchMeta:
    """``+listType=map`` without a patch strategy (strategic merge patch replaces it)."""
    return PatchMeta(None, None, "map", tuple(keys))


MERGE_SET = PatchMeta("merge", None, "set")
_BY_TYPE = _merge_map("type")

# field -> (meta or None, type of the value; for lists the type of each item)
_Fields = dict[str, tuple[PatchMeta | None, str | None]]

_TYPES: dict[str, _Fields] = {
    # ---- meta/v1 --------------------------------------------------------------
    "ObjectMeta": {
        "ownerReferences": (_merge_map("uid"), None),
        "finalizers": (MERGE_SET, None),
        "managedFields": (ATOMIC, None),
    },
    # +structType=atomic
    "LabelSelector": {
        "matchExpressions": (ATOMIC, "LabelSelectorRequirement"),
    },
    "LabelSelectorRequirement": {"values": (ATOMIC, None)},
    # ---- core/v1: pods --------------------------------------------------------
    "PodTemplateSpec": {
        "metadata": (None, "ObjectMeta"),
        "spec": (None, "PodSpec"),
    },
    "PodSpec": {
        "volumes": (_merge_map("name", strategy="merge,retainKeys"), "Volume"),
        "initContainers": (_merge_map("name"), "Container"),
        "containers": (_merge_map("name"), "Container"),
        "ephemeralContainers": (_merge_map("name"), "Container"),
        "nodeSelector": (ATOMIC_MAP, None),
        "securityContext": (None, "PodSecurityContext"),
        "imagePullSecrets": (_merge_map("name"), None),
        "affinity": (None, "Affinity"),
        "tolerations": (ATOMIC, None),
        "hostAliases": (_merge_map("ip"), "HostAlias"),
        "dnsConfig": (None, "PodDNSConfig"),
        "readinessGates": (ATOMIC, None),
        "topologySpreadConstraints": (
            _merge_map("topologyKey", "whenUnsatisfiable"), "TopologySpreadConstraint"),
        "schedulingGates": (_merge_map("name"), None),
        "resourceClaims": (_merge_map("name", strategy="merge,retainKeys"), None),
        "resources": (None, "ResourceRequirements"),
    },
    "Container": {
        "command": (ATOMIC, None),
        "args": (ATOMIC, None),
        "ports": (_merge_map("containerPort", "protocol"), None),
        "envFrom": (ATOMIC, None),
        "env": (_merge_map("name"), "EnvVar"),
        "resources": (None, "ResourceRequirements"),
        "resizePolicy": (ATOMIC, None),
        "restartPolicyRules": (ATOMIC, None),
        "volumeMounts": (_merge_map("mountPath"), None),
        "volumeDevices": (_merge_map("devicePath"), None),
        "livenessProbe": (None, "Probe"),
        "readinessProbe": (None, "Probe"),
        "startupProbe": (None, "Probe"),
        "lifecycle": (None, "Lifecycle"),
        "securityContext": (None, "SecurityContext"),
    },
    "EnvVar": {"valueFrom": (None, "EnvVarSource")},
    "EnvVarSource": {
        "configMapKeyRef": (ATOMIC_MAP, None),
        "secretKeyRef": (ATOMIC_MAP, None),
        "fieldRef": (ATOMIC_MAP, None),
        "resourceFieldRef": (ATOMIC_MAP, None),
    },
    "ResourceRequirements": {
        "claims": (_map("name"), None),
    },
    "Probe": {
        "exec": (None, "ExecAction"),
        "httpGet": (None, "HTTPGetAction"),
    },
    "Lifecycle": {
        "postStart": (None, "LifecycleHandler"),
        "preStop": (None, "LifecycleHandler"),
    },
    "LifecycleHandler": {
        "exec": (None, "ExecAction"),
        "httpGet": (None, "HTTPGetAction"),
    },
    "ExecAction": {"command": (ATOMIC, None)},
    "HTTPGetAction": {"httpHeaders": (ATOMIC, None)},
    "SecurityContext": {"capabilities": (None, "Capabilities")},
    "Capabilities": {"add": (ATOMIC, None), "drop": (ATOMIC, None)},
    "PodSecurityContext": {
        "supplementalGroups": (ATOMIC, None),
        "sysctls": (ATOMIC, None),
    },
    "PodDNSConfig": {
        "nameservers": (ATOMIC, None),
        "searches": (ATOMIC, None),
        "options": (ATOMIC, None),
    },
    "HostAlias": {"hostnames": (ATOMIC, None)},
    "TopologySpreadConstraint": {
        "labelSelector": (ATOMIC_MAP, "LabelSelector"),
        "matchLabelKeys": (ATOMIC, None),
    },
    "Affinity": {
        "nodeAffinity": (None, "NodeAffinity"),
        "podAffinity": (None, "PodAffinity"),
        "podAntiAffinity": (None, "PodAffinity"),
    },
    "NodeAffinity": {
        # NodeSelector is +structType=atomic
        "requiredDuringSchedulingIgnoredDuringExecution": (ATOMIC_MAP, "NodeSelector"),
        "preferredDuringSchedulingIgnoredDuringExecution": (ATOMIC, None),
    },
    "NodeSelector": {"nodeSelectorTerms": (ATOMIC, None)},
    "PodAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": (ATOMIC, None),
        "preferredDuringSchedulingIgnoredDuringExecution": (ATOMIC, None),
    },
    "Volume": {
        "configMap": (None, "ItemsVolumeSource"),
        "secret": (None, "ItemsVolumeSource"),
        "downwardAPI": (None, "ItemsVolumeSource"),
        "projected": (None, "ProjectedVolumeSource"),
    },
    "ItemsVolumeSource": {"items": (ATOMIC, None)},
    "ProjectedVolumeSource": {"sources": (ATOMIC, None)},
    "PodStatus": {
        "conditions": (_BY_TYPE, None),
        "hostIPs": (PatchMeta("merge", "ip", "atomic"), None),
        "podIPs": (_merge_map("ip"), None),
        "initContainerStatuses": (ATOMIC, "ContainerStatus"),
        "containerStatuses": (ATOMIC, "ContainerStatus"),
        "ephemeralContainerStatuses": (ATOMIC, "ContainerStatus"),
        "resourceClaimStatuses": (_merge_map("name", strategy="merge,retainKeys"), None),
    },
    "ContainerStatus": {
        "volumeMounts": (_merge_map("mountPath"), None),
        "allocatedResourcesStatus": (_merge_map("name"), None),
    },
    # ---- core/v1: nodes, services, namespaces, policies ------------------------
    "NodeSpec": {
        "podCIDRs": (MERGE_SET, None),
        "taints": (ATOMIC, None),
    },
    "NodeStatus": {
        "conditions": (_BY_TYPE, None),
        "addresses": (_merge_map("type"), None),
        "images": (ATOMIC, None),
        "volumesInUse": (ATOMIC, None),
        "volumesAttached": (ATOMIC, None),
        "runtimeHandlers": (ATOMIC, None),
        "declaredFeatures": (ATOMIC, None),
    },
    "ServiceSpec": {
        "ports": (_merge_map("port", "protocol"), None),
        "selector": (ATOMIC_MAP, None),
        "clusterIPs": (ATOMIC, None),
        "externalIPs": (ATOMIC, None),
        "loadBalancerSourceRanges": (ATOMIC, None),
        "ipFamilies": (ATOMIC, None),
    },
    "ServiceStatus": {
        "conditions": (_BY_TYPE, None),
        "loadBalancer": (None, "LoadBalancerStatus"),
    },
    "LoadBalancerStatus": {"ingress": (ATOMIC, None)},
    "NamespaceSpec": {"finalizers": (ATOMIC, None)},
    "NamespaceStatus": {"conditions": (_BY_TYPE, None)},
    "LimitRangeSpec": {"limits": (ATOMIC, None)},
    "ResourceQuotaSpec": {"scopes": (ATOMIC, None), "scopeSelector": (None, "ScopeSelector")},
    "ScopeSelector": {"matchExpressions": (ATOMIC, None)},
    "CoreEvent": {
        "involvedObject": (ATOMIC_MAP, None),  # ObjectReference: +structType=atomic
        "related": (ATOMIC_MAP, None),
    },
    "EventsEvent": {
        "regarding": (ATOMIC_MAP, None),
        "related": (ATOMIC_MAP, None),
    },
    # ---- apps/v1 ----------------------------------------------------------------
    "DeploymentSpec": {
        "selector": (ATOMIC_MAP, "LabelSelector"),
        "template": (None, "PodTemplateSpec"),
        "strategy": (PatchMeta("retainKeys"), None),
    },
    "ReplicaSetSpec": {
        "selector": (ATOMIC_MAP, "LabelSelector"),
        "template": (None, "PodTemplateSpec"),
    },
    "ConditionsStatus": {"conditions": (_BY_TYPE, None)},
    "StatefulSetSpec": {
        "selector": (ATOMIC_MAP, "LabelSelector"),
        "template": (None, "PodTemplateSpec"),
        "volumeClaimTemplates": (ATOMIC, None),
    },
    "DaemonSetSpec": {
        "selector": (ATOMIC_MAP, "LabelSelector"),
        "template": (None, "PodTemplateSpec"),
    },
    "ReplicationControllerSpec": {
        "selector": (ATOMIC_MAP, None),
        "template": (None, "PodTemplateSpec"),
    },
    "PersistentVolumeClaimSpec": {"accessModes": (ATOMIC, None),
                                  "selector": (ATOMIC_MAP, "LabelSelector")},
    # ---- autoscaling/v2 -------------------------------------------------------------
    "HorizontalPodAutoscalerSpec": {"metrics": (ATOMIC, None),
                                    "behavior": (None, "HorizontalPodAutoscalerBehavior")},
    "HorizontalPodAutoscalerBehavior": {"scaleUp": (None, "HPAScalingRules"),
                                        "scaleDown": (None, "HPAScalingRules")},
    "HPAScalingRules": {"policies": (ATOMIC, None)},
    "HorizontalPodAutoscalerStatus": {"conditions": (_BY_TYPE, None),
                                      "currentMetrics": (ATOMIC, None)},
    # ---- batch/v1 -----------------------------------------------------------------
    "JobSpec": {
        "selector": (ATOMIC_MAP, "LabelSelector"),
        "template": (None, "PodTemplateSpec"),
        "podFailurePolicy": (None, "PodFailurePolicy"),
        "successPolicy": (None, "SuccessPolicy"),
    },
    "PodFailurePolicy": {"rules": (ATOMIC, "PodFailurePolicyRule")},
    "PodFailurePolicyRule": {"onExitCodes": (None, "PodFailurePolicyOnExitCodes"),
                             "onPodConditions": (ATOMIC, None)},
    "PodFailurePolicyOnExitCodes": {"values": (PatchMeta(list_type="set"), None)},
    "SuccessPolicy": {"rules": (ATOMIC, None)},
    # conditions: patchMergeKey=type, patchStrategy=merge, but +listType=atomic for apply
    "JobStatus": {"conditions": (PatchMeta("merge", "type", "atomic"), None),
                  "uncountedTerminatedPods": (None, "UncountedTerminatedPods")},
    "UncountedTerminatedPods": {"succeeded": (PatchMeta(list_type="set"), None),
                                "failed": (PatchMeta(list_type="set"), None)},
    "CronJobSpec": {"jobTemplate": (None, "JobTemplateSpec")},
    "JobTemplateSpec": {"metadata": (None, "ObjectMeta"), "spec": (None, "JobSpec")},
    "CronJobStatus": {"active": (ATOMIC, None)},
    # ---- policy/v1 ----------------------------------------------------------------
    "PodDisruptionBudgetSpec": {
        "selector": (PatchMeta("replace", map_type="atomic"), "LabelSelector"),
    },
    # ---- node.k8s.io/v1 -------------------------------------------------------
    "RuntimeClassScheduling": {
        "nodeSelector": (ATOMIC_MAP, None),
        "tolerations": (ATOMIC, None),
    },
    # ---- scheduling.k8s.io/v1alpha1 ----------------------------------------------
    "WorkloadSpec": {"podGroups": (_map("name"), None)},
    # ---- resource.k8s.io/v1 -------------------------------------------------------
    "DeviceClassSpec": {
        "selectors": (ATOMIC, None),
        "config": (ATOMIC, None),
    },
    "ResourceClaimSpec": {"devices": (None, "DeviceClaim")},
    "DeviceClaim": {
        "requests": (ATOMIC, None),
        "constraints": (ATOMIC, None),
        "config": (ATOMIC, None),
    },
    "ResourceClaimStatus": {
        "allocation": (None, "AllocationResult"),
        "reservedFor": (_merge_map("uid"), None),
        "devices": (_map("driver", "device", "pool", "shareID"), "AllocatedDeviceStatus"),
    },
    "AllocationResult": {
        "devices": (None, "DeviceAllocationResult"),
        "nodeSelector": (ATOMIC_MAP, "NodeSelector"),
    },
    "DeviceAllocationResult": {"results": (ATOMIC, None), "config": (ATOMIC, None)},
    "AllocatedDeviceStatus": {
        "conditions": (_map("type"), None),
        "networkData": (None, "NetworkDeviceData"),
    },
    "NetworkDeviceData": {"ips": (ATOMIC, None)},
    "ResourceClaimTemplateSpec": {
        "metadata": (None, "ObjectMeta"),
        "spec": (None, "ResourceClaimSpec"),
    },
    "ResourceSliceSpec": {
        "nodeSelector": (ATOMIC_MAP, "NodeSelector"),
        "devices": (ATOMIC, None),
        "sharedCounters": (ATOMIC, None),
        "skipNodeOperations": (PatchMeta(list_type="set"), None),
    },
    # ---- admissionregistration.k8s.io/v1 ---------------------------------------
    "Webhook": {
        "rules": (ATOMIC, None),
        "admissionReviewVersions": (ATOMIC, None),
        "matchConditions": (_merge_map("name"), None),
        "namespaceSelector": (ATOMIC_MAP, "LabelSelector"),
        "objectSelector": (ATOMIC_MAP, "LabelSelector"),
    },
    # ---- apiextensions.k8s.io/v1 -----------------------------------------------
    "CRDSpec": {
        "names": (None, "CRDNames"),
        "versions": (ATOMIC, None),
        "conversion": (None, "CRDConversion"),
    },
    "CRDNames": {"shortNames": (ATOMIC, None), "categories": (ATOMIC, None)},
    "CRDConversion": {"webhook": (None, "CRDWebhookConversion")},
    "CRDWebhookConversion": {"conversionReviewVersions": (ATOMIC, None)},
    "CRDStatus": {
        "conditions": (_map("type"), None),
        "acceptedNames": (None, "CRDNames"),
        "storedVersions": (ATOMIC, None),
    },
}


def _kind(spec: str | None = None, status: str | None = None, **extra: str) -> _Fields:
    fields: _Fields = {"metadata": (None, "ObjectMeta")}
    if spec:
        fields["spec"] = (None, spec)
    if status:
        fields["status"] = (None, status)
    for name, type_name in extra.items():
        fields[name] = (None, type_name)
    return fields


_TYPES.update({
    "Pod": _kind("PodSpec", "PodStatus"),
    "Node": _kind("NodeSpec", "NodeStatus"),
    "Namespace": _kind("NamespaceSpec", "NamespaceStatus"),
    "Service": _kind("ServiceSpec", "ServiceStatus"),
    "LimitRange": _kind("LimitRangeSpec"),
    "ResourceQuota": _kind("ResourceQuotaSpec"),
    "ConfigMap": _kind(),
    "Secret": _kind(),
    "ServiceAccount": {
        "metadata": (None, "ObjectMeta"),
        "secrets": (_merge_map("name"), None),
        "imagePullSecrets": (ATOMIC, None),
    },
    "Deployment": _kind("DeploymentSpec", "ConditionsStatus"),
    "ReplicaSet": _kind("ReplicaSetSpec", "ConditionsStatus"),
    "StatefulSet": _kind("StatefulSetSpec", "ConditionsStatus"),
    "DaemonSet": _kind("DaemonSetSpec", "ConditionsStatus"),
    "ControllerRevision": _kind(),
    "ReplicationController": _kind("ReplicationControllerSpec", "ConditionsStatus"),
    "PersistentVolumeClaim": _kind("PersistentVolumeClaimSpec", "ConditionsStatus"),
    "HorizontalPodAutoscaler": _kind("HorizontalPodAutoscalerSpec", "HorizontalPodAutoscalerStatus"),
    "Job": _kind("JobSpec", "JobStatus"),
    "CronJob": _kind("CronJobSpec", "CronJobStatus"),
    "PodDisruptionBudget": _kind("PodDisruptionBudgetSpec", "ConditionsStatus"),
    "PriorityClass": _kind(),
    "RuntimeClass": _kind(scheduling="RuntimeClassScheduling"),
    "Lease": _kind(),
    # lists without a patch strategy: replaced whole
    "Endpoints": {"metadata": (None, "ObjectMeta"), "subsets": (ATOMIC, None)},
    "EndpointSlice": {"metadata": (None, "ObjectMeta"), "endpoints": (ATOMIC, None),
                      "ports": (ATOMIC, None)},
    # networking.k8s.io/v1, certificates.k8s.io/v1, storage.k8s.io/v1: every list is
    # +listType=atomic (no patch strategy) but a CSR's conditions, a map by type
    "Ingress": _kind("IngressSpec", "IngressStatus"),
    "IngressSpec": {"tls": (ATOMIC, "IngressTLS"), "rules": (ATOMIC, "IngressRule")},
    "IngressTLS": {"hosts": (ATOMIC, None)},
    "IngressRule": {"http": (None, "HTTPIngressRuleValue")},
    "HTTPIngressRuleValue": {"paths": (ATOMIC, None)},
    "IngressStatus": {"loadBalancer": (None, "IngressLoadBalancerStatus")},
    "IngressLoadBalancerStatus": {"ingress": (ATOMIC, None)},
    "IngressClass": _kind(),
    "NetworkPolicy": _kind("NetworkPolicySpec"),
    "NetworkPolicySpec": {"podSelector": (ATOMIC_MAP, "LabelSelector"),
                          "ingress": (ATOMIC, None), "egress": (ATOMIC, None),
                          "policyTypes": (ATOMIC, None)},
    "CertificateSigningRequest": _kind("CertificateSigningRequestSpec",
                                       "CertificateSigningRequestStatus"),
    "CertificateSigningRequestSpec": {"usages": (ATOMIC, None), "groups": (ATOMIC, None)},
    "CertificateSigningRequestStatus": {"conditions": (_map("type"), None)},
    # apiregistration.k8s.io/v1 (kube-aggregator): status.conditions merge by type
    "APIService": _kind("APIServiceSpec", "ConditionsStatus"),
    "CSIStorageCapacity": {"metadata": (None, "ObjectMeta"),
                           "nodeTopology": (ATOMIC_MAP, "LabelSelector")},
    "PersistentVolume": _kind("PersistentVolumeSpec"),
    "PersistentVolumeSpec": {"accessModes": (ATOMIC, None), "mountOptions": (ATOMIC, None),
                             "nodeAffinity": (None, "VolumeNodeAffinity")},
    "VolumeNodeAffinity": {"required": (None, "NodeSelector")},
    "StorageClass": {"metadata": (None, "ObjectMeta"), "mountOptions": (ATOMIC, None),
                     "allowedTopologies": (ATOMIC, None)},
    "VolumeAttributesClass": _kind(),
    "VolumeAttachment": _kind("VolumeAttachmentSpec"),
    "VolumeAttachmentSpec": {"source": (None, "VolumeAttachmentSource")},
    "VolumeAttachmentSource": {"inlineVolumeSpec": (None, "PersistentVolumeSpec")},
    "CSIDriver": _kind("CSIDriverSpec"),
    "CSIDriverSpec": {"volumeLifecycleModes": (PatchMeta(list_type="set"), None),
                      "tokenRequests": (ATOMIC, None)},
    "CSINode": _kind("CSINodeSpec"),
    "CSINodeSpec": {"drivers": (_merge_map("name"), "CSINodeDriver")},
    "CSINodeDriver": {"topologyKeys": (ATOMIC, None)},
    "PodTemplate": _kind(template="PodTemplateSpec"),
    "ComponentStatus": {"metadata": (None, "ObjectMeta"), "conditions": (_merge_map("type"), None)},
    "ServiceCIDR": _kind("ServiceCIDRSpec", "MergedConditionsStatus"),
    "ServiceCIDRSpec": {"cidrs": (ATOMIC, None)},
    "MergedConditionsStatus": {"conditions": (_merge_map("type"), None)},
    "IPAddress": _kind(),
    "FlowSchema": _kind("FlowSchemaSpec", "MergedConditionsStatus"),
    "FlowSchemaSpec": {"rules": (ATOMIC, None)},
    "PriorityLevelConfiguration": _kind(status="MergedConditionsStatus"),
    "ValidatingAdmissionPolicy": _kind("ValidatingAdmissionPolicySpec", "MergedConditionsStatus"),
    "ValidatingAdmissionPolicySpec": {"validations": (ATOMIC, None),
                                      "auditAnnotations": (ATOMIC, None),
                                      "variables": (ATOMIC, None),
                                      "matchConditions": (_merge_map("name"), None),
                                      "matchConstraints": (ATOMIC_MAP, "MatchResources")},
    "MutatingAdmissionPolicy": _kind("MutatingAdmissionPolicySpec"),
    "MutatingAdmissionPolicySpec": {"mutations": (ATOMIC, None), "variables": (ATOMIC, None),
                                    "matchConditions": (_merge_map("name"), None),
                                    "matchConstraints": (ATOMIC_MAP, "MatchResources")},
    # +structType=atomic, its rule lists +listType=atomic
    "MatchResources": {"resourceRules": (ATOMIC, None), "excludeResourceRules": (ATOMIC, None)},
    "ValidatingAdmissionPolicyBinding": _kind("ValidatingAdmissionPolicyBindingSpec"),
    "ValidatingAdmissionPolicyBindingSpec": {"validationActions": (PatchMeta(list_type="set"), None),
                                             "matchResources": (ATOMIC_MAP, "MatchResources")},
    "MutatingAdmissionPolicyBinding": _kind("MutatingAdmissionPolicyBindingSpec"),
    "MutatingAdmissionPolicyBindingSpec": {"matchResources": (ATOMIC_MAP, "MatchResources")},
    "Workload": _kind("WorkloadSpec"),
    "DeviceClass": _kind("DeviceClassSpec"),
    "ResourceClaim": _kind("ResourceClaimSpec", "ResourceClaimStatus"),
    "ResourceClaimTemplate": _kind("ResourceClaimTemplateSpec"),
    "ResourceSlice": _kind("ResourceSliceSpec"),
    "CoreEventObject": {"metadata": (None, "ObjectMeta"), **_TYPES["CoreEvent"]},
    "EventsEventObject": {"metadata": (None, "ObjectMeta"), **_TYPES["EventsEvent"]},
    "CustomResourceDefinition": _kind("CRDSpec", "CRDStatus"),
    "WebhookConfiguration": {
        "metadata": (None, "ObjectMeta"),
        "webhooks": (_merge_map("name"), "Webhook"),
    },
    # RBAC: every list is atomic (+listType=atomic), no merge keys
    "Role": {"metadata": (None, "ObjectMeta"), "rules": (ATOMIC, None)},
    "ClusterRole": {"metadata": (None, "ObjectMeta"), "rules": (ATOMIC, None),
                    "aggregationRule": (None, "AggregationRule")},
    "AggregationRule": {"clusterRoleSelectors": (ATOMIC, None)},
    "RoleBinding": {"metadata": (None, "ObjectMeta"), "subjects": (ATOMIC, None)},
    # The review kinds are only created, never patched: their metadata is all there is to know.
    "Review": {"metadata": (None, "ObjectMeta")},
    # Custom resources: only the standard object metadata is known.
    "CustomResource": {"metadata": (None, "ObjectMeta")},
})

# The built-in kinds (Go types in Kubernetes) and the type each is rooted at: the
# ``patch`` of each KindSpec (kvert.api.kindspecs) that has one. The VPA kinds have none
# (Kubernetes serves them from a CRD: custom-resource semantics).
_ROOTS: dict[tuple[str, str], str] = {
    spec.gvk: spec.patch for spec in BUILTIN_KINDS if spec.patch is not None}


def is_builtin(api_version: str, kind: str) -> bool:
    """Whether kvert knows the kind's Go-type merge semantics (it is not a custom resource)."""
    return (api_version, kind) in _ROOTS


def supports_strategic(api_version: str, kind: str) -> bool:
    """Strategic merge patch needs Go struct tags: built-in kinds only.

    Kubernetes refuses it for custom resources with 415 UnsupportedMediaType (the VPA kinds
    included, which Kubernetes serves from a CustomResourceDefinition).
    """
    return is_builtin(api_version, kind)


_CACHE: dict[tuple[str, str, tuple[str, ...]], PatchMeta] = {}


def patch_meta(api_version: str, kind: str, path: tuple[str, ...]) -> PatchMeta:
    """The merge semantics of the field at ``path`` (JSON names, list indices omitted)."""
    path = tuple(path)
    root = _ROOTS.get((api_version, kind))
    if root is None:
        return _custom_meta(api_version, kind, path)
    key = (api_version, kind, path)
    found = _CACHE.get(key)
    if found is None:
        found = _CACHE[key] = _lookup(root, path)
    return found


def _lookup(type_name: str | None, path: tuple[str, ...]) -> PatchMeta:
    if not path:
        return _NONE
    for i, name in enumerate(path):
        fields = _TYPES.get(type_name or "", {})
        entry = fields.get(name)
        if entry is None:
            return _NONE
        meta, type_name = entry
        if i == len(path) - 1:
            return meta or _NONE
        if type_name is None:
            return _NONE
    return _NONE


def all_patch_meta(api_version: str, kind: str) -> dict[tuple[str, ...], PatchMeta]:
    """Every path of the kind with non-default semantics (for the OpenAPI generator)."""
    root = _ROOTS.get((api_version, kind))
    if root is None:
        out = dict(_walk_types("CustomResource", ()))
        schema = _crd_schema(api_version, kind)
        if schema is not None:
            for path, meta in _walk_schema(schema, ()):
                out.setdefault(path, meta)
        return out
    return dict(_walk_types(root, ()))


def _walk_types(type_name: str, prefix: tuple[str, ...],
                seen: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], PatchMeta]]:
    if type_name in seen:  # no recursive types today; guard anyway
        return
    for name, (meta, child) in _TYPES.get(type_name, {}).items():
        path = prefix + (name,)
        if meta is not None and not meta.is_empty():
            yield path, meta
        if child is not None:
            yield from _walk_types(child, path, seen + (type_name,))


# ---- custom resources -----------------------------------------------------------


def _crd_schema(api_version: str, kind: str) -> Obj | None:
    try:
        rt = kinds.by_gvk(api_version, kind)
    except KeyError:
        return None
    return rt.schema if isinstance(rt.schema, dict) else None


def _custom_meta(api_version: str, kind: str, path: tuple[str, ...]) -> PatchMeta:
    if path and path[0] == "metadata":
        return _lookup("CustomResource", path)
    schema = _crd_schema(api_version, kind)
    if schema is None:
        return _NONE
    node: Obj = schema
    for name in path:
        child = _schema_child(node, name)
        if child is None:
            return _NONE
        node = child
    return _schema_node_meta(node)


def _schema_child(node: Obj | None, name: str) -> Obj | None:
    """The schema of field ``name`` of ``node``, looking through list items."""
    while isinstance(node, dict) and node.get("type") == "array":
        node = node.get("items")
    if not isinstance(node, dict):
        return None
    props = node.get("properties")
    field = props.get(name) if isinstance(props, dict) else None
    if isinstance(field, dict):
        return field
    extra = node.get("additionalProperties")
    if isinstance(extra, dict):
        return extra
    return None


def _schema_node_meta(node: Obj) -> PatchMeta:
    list_type = node.get("x-kubernetes-list-type")
    keys = node.get("x-kubernetes-list-map-keys") or ()
    map_type = node.get("x-kubernetes-map-type")
    if list_type is None and map_type is None:
        return _NONE
    return PatchMeta(None, None, list_type, tuple(keys), map_type)


def _walk_schema(node: Obj,
                 prefix: tuple[str, ...]) -> Iterator[tuple[tuple[str, ...], PatchMeta]]:
    if prefix:
        meta = _schema_node_meta(node)
        if not meta.is_empty():
            yield prefix, meta
    inner: Any = node  # the items of arrays of arrays, down to an object (or not)
    while isinstance(inner, dict) and inner.get("type") == "array":
        inner = inner.get("items")
    if not isinstance(inner, dict):
        return
    for name, child in (inner.get("properties") or {}).items():
        if isinstance(child, dict) and not (not prefix and name == "metadata"):
            yield from _walk_schema(child, prefix + (name,))
