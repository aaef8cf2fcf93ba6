"""The protobuf schema of the Kubernetes types kvert decodes: data, one line per field.

Facts (field numbers, JSON names, Go field types and ``json`` tag options) are those of
Kubernetes v1.37 (``k8s.io/api``, ``k8s.io/apimachinery`` and
``k8s.io/apiextensions-apiserver``): the ``protobuf:"..."`` and ``json:"..."`` struct tags
and Go field types, as kubectl v1.37 carries them in its reflection metadata, which are the
same facts as the ``generated.proto`` files plus what those don't say (which fields are Go
pointers, ``omitempty``/``omitzero``, inlined embedded structs). The apiextensions types
(not linked into kubectl) were transcribed from apiextensions-apiserver's ``types.go`` and
``types_jsonschema.go``.

Format of ``MESSAGES``: a line ``pkg.Name`` opens a message; each following indented line is
``NUMBER JSON_NAME TYPE [FLAGS]``, in Go struct (= JSON output) order:

* ``TYPE``: ``str bool i32 i64 f64 bytes`` or a message name, prefixed by ``*`` (Go pointer:
  presence is kept even for a zero value), ``[]`` (repeated) or ``map[str]`` (a map field:
  repeated entries ``{key = 1, value = 2}``);
* ``JSON_NAME`` ``~``: an embedded struct whose fields are inlined into the parent's JSON;
* ``FLAGS``: ``o`` = ``omitempty``, ``z`` = ``omitzero``.

Messages with their own encoding (``resource.Quantity``, ``meta.Time``, ``meta.MicroTime``,
``meta.Duration``, ``intstr.IntOrString``, ``runtime.RawExtension``, ``meta.FieldsV1``,
``apiext.JSON``, ``apiext.JSONSchemaPropsOr{Array,Bool,StringArray}`` and the
``authorization``/``authentication`` ``ExtraValue`` list wrappers) are handled in
``codec.py``, not listed here.

``KIND_TYPES``: the message of each top-level type a request body may carry, by
(apiVersion, kind): each served built-in kind's ``protobuf`` message (its KindSpec,
``kvert.api.kindspecs``), and ``OTHER_KINDS`` (``apiVersion kind message`` lines): the
bodies of subresources and options that are not served resources.

``pod.spec.workloadRef`` (42) and ``scheduling.k8s.io/v1alpha1`` Workload are Kubernetes 1.35's
(later releases replaced them with ``schedulingGroup`` and standalone PodGroups).
"""

from __future__ import annotations

from dataclasses import dataclass

from kvert.api.kindspecs import BUILTIN_KINDS

from .served_schema import ADMISSION_POLICY_MESSAGES, SERVED_MESSAGES
from .storage_schema import STORAGE_MESSAGES

OTHER_KINDS = """
authentication.k8s.io/v1 TokenRequest authentication.TokenRequest
v1 Binding core.Binding
policy/v1 Eviction policy.Eviction
autoscaling/v1 Scale autoscaling.Scale
meta.k8s.io/v1 DeleteOptions meta.DeleteOptions
policy/v1beta1 Eviction policy.Eviction
"""

# fmt: off
MESSAGES = """
core.Namespace
 1 metadata meta.ObjectMeta o
 2 spec core.NamespaceSpec o
 3 status core.NamespaceStatus o
core.Node
 1 metadata meta.ObjectMeta o
 2 spec core.NodeSpec o
 3 status core.NodeStatus o
core.Pod
 1 metadata meta.ObjectMeta o
 2 spec core.PodSpec o
 3 status core.PodStatus o
core.Event
 1 metadata meta.ObjectMeta
 2 involvedObject core.ObjectReference
 3 reason str o
 4 message str o
 5 source core.EventSource o
 6 firstTimestamp meta.Time o
 7 lastTimestamp meta.Time o
 8 count i32 o
 9 type str o
 10 eventTime meta.MicroTime o
 11 series *core.EventSeries o
 12 action str o
 13 related *core.ObjectReference o
 14 reportingComponent str
 15 reportingInstance str
core.ConfigMap
 1 metadata meta.ObjectMeta o
 4 immutable *bool o
 2 data map[str]str o
 3 binaryData map[str]bytes o
core.Secret
 1 metadata meta.ObjectMeta o
 5 immutable *bool o
 2 data map[str]bytes o
 4 stringData map[str]str o
 3 type str o
core.ServiceAccount
 1 metadata meta.ObjectMeta o
 2 secrets []core.ObjectReference o
 3 imagePullSecrets []core.LocalObjectReference o
 4 automountServiceAccountToken *bool o
authentication.TokenRequest
 1 metadata meta.ObjectMeta o
 2 spec authentication.TokenRequestSpec
 3 status authentication.TokenRequestStatus o
authentication.TokenRequestSpec
 1 audiences []str
 4 expirationSeconds *i64
 3 boundObjectRef *authentication.BoundObjectReference
authentication.BoundObjectReference
 1 kind str o
 2 apiVersion str o
 3 name str o
 4 uid str o
authentication.TokenRequestStatus
 1 token str
 2 expirationTimestamp meta.Time
core.Service
 1 metadata meta.ObjectMeta o
 2 spec core.ServiceSpec o
 3 status core.ServiceStatus o
core.LimitRange
 1 metadata meta.ObjectMeta o
 2 spec core.LimitRangeSpec o
core.ResourceQuota
 1 metadata meta.ObjectMeta o
 2 spec core.ResourceQuotaSpec o
 3 status core.ResourceQuotaStatus o
core.Binding
 1 metadata meta.ObjectMeta o
 2 target core.ObjectReference
batch.Job
 1 metadata meta.ObjectMeta o
 2 spec batch.JobSpec o
 3 status batch.JobStatus o
batch.JobSpec
 1 parallelism *i32 o
 2 completions *i32 o
 3 activeDeadlineSeconds *i64 o
 11 podFailurePolicy *batch.PodFailurePolicy o
 16 successPolicy *batch.SuccessPolicy o
 7 backoffLimit *i32 o
 12 backoffLimitPerIndex *i32 o
 13 maxFailedIndexes *i32 o
 4 selector *meta.LabelSelector o
 5 manualSelector *bool o
 6 template core.PodTemplateSpec
 8 ttlSecondsAfterFinished *i32 o
 9 completionMode *str o
 10 suspend *bool o
 14 podReplacementPolicy *str o
 15 managedBy *str o
batch.PodFailurePolicy
 1 rules []batch.PodFailurePolicyRule
batch.PodFailurePolicyRule
 1 action str
 2 onExitCodes *batch.PodFailurePolicyOnExitCodesRequirement
 3 onPodConditions []batch.PodFailurePolicyOnPodConditionsPattern
batch.PodFailurePolicyOnExitCodesRequirement
 1 containerName *str
 2 operator str
 3 values []i32
batch.PodFailurePolicyOnPodConditionsPattern
 1 type str
 2 status str
batch.SuccessPolicy
 1 rules []batch.SuccessPolicyRule
batch.SuccessPolicyRule
 1 succeededIndexes *str o
 2 succeededCount *i32 o
batch.JobStatus
 1 conditions []batch.JobCondition o
 2 startTime *meta.Time o
 3 completionTime *meta.Time o
 4 active i32 o
 5 succeeded i32 o
 6 failed i32 o
 11 terminating *i32 o
 7 completedIndexes str o
 10 failedIndexes *str o
 8 uncountedTerminatedPods *batch.UncountedTerminatedPods o
 9 ready *i32 o
batch.UncountedTerminatedPods
 1 succeeded []str o
 2 failed []str o
batch.JobCondition
 1 type str
 2 status str
 3 lastProbeTime meta.Time o
 4 lastTransitionTime meta.Time o
 5 reason str o
 6 message str o
batch.CronJob
 1 metadata meta.ObjectMeta o
 2 spec batch.CronJobSpec o
 3 status batch.CronJobStatus o
batch.CronJobSpec
 1 schedule str
 8 timeZone *str o
 2 startingDeadlineSeconds *i64 o
 3 concurrencyPolicy str o
 4 suspend *bool o
 5 jobTemplate batch.JobTemplateSpec
 6 successfulJobsHistoryLimit *i32 o
 7 failedJobsHistoryLimit *i32 o
batch.JobTemplateSpec
 1 metadata meta.ObjectMeta o
 2 spec batch.JobSpec o
batch.CronJobStatus
 1 active []core.ObjectReference o
 4 lastScheduleTime *meta.Time o
 5 lastSuccessfulTime *meta.Time o
apps.StatefulSet
 1 metadata meta.ObjectMeta o
 2 spec apps.StatefulSetSpec o
 3 status apps.StatefulSetStatus o
apps.StatefulSetSpec
 1 replicas *i32 o
 2 selector *meta.LabelSelector
 3 template core.PodTemplateSpec
 4 volumeClaimTemplates []core.PersistentVolumeClaim o
 5 serviceName str o
 6 podManagementPolicy str o
 7 updateStrategy apps.StatefulSetUpdateStrategy o
 8 revisionHistoryLimit *i32 o
 9 minReadySeconds i32 o
 10 persistentVolumeClaimRetentionPolicy *apps.StatefulSetPersistentVolumeClaimRetentionPolicy o
 11 ordinals *apps.StatefulSetOrdinals o
apps.StatefulSetUpdateStrategy
 1 type str o
 2 rollingUpdate *apps.RollingUpdateStatefulSetStrategy o
apps.RollingUpdateStatefulSetStrategy
 1 partition *i32 o
 2 maxUnavailable *intstr.IntOrString o
apps.StatefulSetPersistentVolumeClaimRetentionPolicy
 1 whenDeleted str o
 2 whenScaled str o
apps.StatefulSetOrdinals
 1 start i32
apps.StatefulSetStatus
 1 observedGeneration i64 o
 2 replicas i32
 3 readyReplicas i32 o
 4 currentReplicas i32 o
 5 updatedReplicas i32 o
 6 currentRevision str o
 7 updateRevision str o
 9 collisionCount *i32 o
 10 conditions []apps.StatefulSetCondition o
 11 availableReplicas i32
apps.StatefulSetCondition
 1 type str
 2 status str
 3 lastTransitionTime meta.Time o
 4 reason str o
 5 message str o
apps.DaemonSet
 1 metadata meta.ObjectMeta o
 2 spec apps.DaemonSetSpec o
 3 status apps.DaemonSetStatus o
apps.DaemonSetSpec
 1 selector *meta.LabelSelector
 2 template core.PodTemplateSpec
 3 updateStrategy apps.DaemonSetUpdateStrategy o
 4 minReadySeconds i32 o
 6 revisionHistoryLimit *i32 o
apps.DaemonSetUpdateStrategy
 1 type str o
 2 rollingUpdate *apps.RollingUpdateDaemonSet o
apps.RollingUpdateDaemonSet
 1 maxUnavailable *intstr.IntOrString o
 2 maxSurge *intstr.IntOrString o
apps.DaemonSetStatus
 1 currentNumberScheduled i32
 2 numberMisscheduled i32
 3 desiredNumberScheduled i32
 4 numberReady i32
 5 observedGeneration i64 o
 6 updatedNumberScheduled i32 o
 7 numberAvailable i32 o
 8 numberUnavailable i32 o
 9 collisionCount *i32 o
 10 conditions []apps.DaemonSetCondition o
apps.DaemonSetCondition
 1 type str
 2 status str
 3 lastTransitionTime meta.Time o
 4 reason str o
 5 message str o
apps.ControllerRevision
 1 metadata meta.ObjectMeta o
 2 data runtime.RawExtension o
 3 revision i64
core.ReplicationController
 1 metadata meta.ObjectMeta o
 2 spec core.ReplicationControllerSpec o
 3 status core.ReplicationControllerStatus o
core.ReplicationControllerSpec
 1 replicas *i32 o
 4 minReadySeconds i32 o
 2 selector map[str]str o
 3 template *core.PodTemplateSpec o
core.ReplicationControllerStatus
 1 replicas i32
 2 fullyLabeledReplicas i32 o
 4 readyReplicas i32 o
 5 availableReplicas i32 o
 3 observedGeneration i64 o
 6 conditions []core.ReplicationControllerCondition o
core.ReplicationControllerCondition
 1 type str
 2 status str
 3 lastTransitionTime meta.Time o
 4 reason str o
 5 message str o
core.PersistentVolumeClaim
 1 metadata meta.ObjectMeta o
 2 spec core.PersistentVolumeClaimSpec o
 3 status core.PersistentVolumeClaimStatus o
core.PersistentVolumeClaimStatus
 1 phase str o
 2 accessModes []str o
 3 capacity map[str]resource.Quantity o
 4 conditions []core.PersistentVolumeClaimCondition o
 5 allocatedResources map[str]resource.Quantity o
 7 allocatedResourceStatuses map[str]str o
 8 currentVolumeAttributesClassName *str o
 9 modifyVolumeStatus *core.ModifyVolumeStatus o
core.PersistentVolumeClaimCondition
 1 type str
 2 status str
 3 lastProbeTime meta.Time o
 4 lastTransitionTime meta.Time o
 5 reason str o
 6 message str o
core.ModifyVolumeStatus
 1 targetVolumeAttributesClassName str o
 2 status str
autoscalingv2.HorizontalPodAutoscaler
 1 metadata meta.ObjectMeta o
 2 spec autoscalingv2.HorizontalPodAutoscalerSpec o
 3 status autoscalingv2.HorizontalPodAutoscalerStatus o
autoscalingv2.HorizontalPodAutoscalerSpec
 1 scaleTargetRef autoscalingv2.CrossVersionObjectReference
 2 minReplicas *i32 o
 3 maxReplicas i32
 4 metrics []autoscalingv2.MetricSpec o
 5 behavior *autoscalingv2.HorizontalPodAutoscalerBehavior o
autoscalingv2.CrossVersionObjectReference
 1 kind str
 2 name str
 3 apiVersion str o
autoscalingv2.MetricSpec
 1 type str
 2 object *autoscalingv2.ObjectMetricSource o
 3 pods *autoscalingv2.PodsMetricSource o
 4 resource *autoscalingv2.ResourceMetricSource o
 7 containerResource *autoscalingv2.ContainerResourceMetricSource o
 5 external *autoscalingv2.ExternalMetricSource o
autoscalingv2.ObjectMetricSource
 1 describedObject autoscalingv2.CrossVersionObjectReference
 2 target autoscalingv2.MetricTarget
 3 metric autoscalingv2.MetricIdentifier
autoscalingv2.PodsMetricSource
 1 metric autoscalingv2.MetricIdentifier
 2 target autoscalingv2.MetricTarget
autoscalingv2.ResourceMetricSource
 1 name str
 2 target autoscalingv2.MetricTarget
autoscalingv2.ContainerResourceMetricSource
 1 name str
 2 target autoscalingv2.MetricTarget
 3 container str
autoscalingv2.ExternalMetricSource
 1 metric autoscalingv2.MetricIdentifier
 2 target autoscalingv2.MetricTarget
autoscalingv2.MetricIdentifier
 1 name str
 2 selector *meta.LabelSelector o
autoscalingv2.MetricTarget
 1 type str
 2 value *resource.Quantity o
 3 averageValue *resource.Quantity o
 4 averageUtilization *i32 o
autoscalingv2.HorizontalPodAutoscalerBehavior
 1 scaleUp *autoscalingv2.HPAScalingRules o
 2 scaleDown *autoscalingv2.HPAScalingRules o
autoscalingv2.HPAScalingRules
 3 stabilizationWindowSeconds *i32 o
 1 selectPolicy *str o
 2 policies []autoscalingv2.HPAScalingPolicy o
 4 tolerance *resource.Quantity o
autoscalingv2.HPAScalingPolicy
 1 type str
 2 value i32
 3 periodSeconds i32
autoscalingv2.HorizontalPodAutoscalerStatus
 1 observedGeneration *i64 o
 2 lastScaleTime *meta.Time o
 3 currentReplicas i32 o
 4 desiredReplicas i32
 5 currentMetrics []autoscalingv2.MetricStatus
 6 conditions []autoscalingv2.HorizontalPodAutoscalerCondition o
autoscalingv2.MetricStatus
 1 type str
 2 object *autoscalingv2.ObjectMetricStatus o
 3 pods *autoscalingv2.PodsMetricStatus o
 4 resource *autoscalingv2.ResourceMetricStatus o
 7 containerResource *autoscalingv2.ContainerResourceMetricStatus o
 5 external *autoscalingv2.ExternalMetricStatus o
autoscalingv2.ObjectMetricStatus
 1 metric autoscalingv2.MetricIdentifier
 2 current autoscalingv2.MetricValueStatus
 3 describedObject autoscalingv2.CrossVersionObjectReference
autoscalingv2.PodsMetricStatus
 1 metric autoscalingv2.MetricIdentifier
 2 current autoscalingv2.MetricValueStatus
autoscalingv2.ResourceMetricStatus
 1 name str
 2 current autoscalingv2.MetricValueStatus
autoscalingv2.ContainerResourceMetricStatus
 1 name str
 2 current autoscalingv2.MetricValueStatus
 3 container str
autoscalingv2.ExternalMetricStatus
 1 metric autoscalingv2.MetricIdentifier
 2 current autoscalingv2.MetricValueStatus
autoscalingv2.MetricValueStatus
 1 value *resource.Quantity o
 2 averageValue *resource.Quantity o
 3 averageUtilization *i32 o
autoscalingv2.HorizontalPodAutoscalerCondition
 1 type str
 2 status str
 3 lastTransitionTime meta.Time o
 4 reason str o
 5 message str o
apps.Deployment
 1 metadata meta.ObjectMeta o
 2 spec apps.DeploymentSpec o
 3 status apps.DeploymentStatus o
apps.ReplicaSet
 1 metadata meta.ObjectMeta o
 2 spec apps.ReplicaSetSpec o
 3 status apps.ReplicaSetStatus o
policy.PodDisruptionBudget
 1 metadata meta.ObjectMeta o
 2 spec policy.PodDisruptionBudgetSpec o
 3 status policy.PodDisruptionBudgetStatus o
policy.Eviction
 1 metadata meta.ObjectMeta o
 2 deleteOptions *meta.DeleteOptions o
scheduling.PriorityClass
 1 metadata meta.ObjectMeta o
 2 value i32
 3 globalDefault bool o
 4 description str o
 5 preemptionPolicy *str o
scheduling.Workload
 1 metadata meta.ObjectMeta o
 2 spec scheduling.WorkloadSpec
scheduling.WorkloadSpec
 1 controllerRef *scheduling.TypedLocalObjectReference o
 2 podGroups []scheduling.PodGroup
scheduling.TypedLocalObjectReference
 1 apiGroup str o
 2 kind str
 3 name str
scheduling.PodGroup
 1 name str
 3 policy scheduling.PodGroupPolicy
scheduling.PodGroupPolicy
 2 basic *scheduling.BasicSchedulingPolicy o
 3 gang *scheduling.GangSchedulingPolicy o
scheduling.BasicSchedulingPolicy
scheduling.GangSchedulingPolicy
 1 minCount i32
resource.DeviceClass
 1 metadata meta.ObjectMeta o
 2 spec resource.DeviceClassSpec
resource.DeviceClassSpec
 1 selectors []resource.DeviceSelector o
 2 config []resource.DeviceClassConfiguration o
 4 extendedResourceName *str o
resource.DeviceClassConfiguration
 1 ~ resource.DeviceConfiguration
resource.DeviceConfiguration
 1 opaque *resource.OpaqueDeviceConfiguration o
resource.OpaqueDeviceConfiguration
 1 driver str
 2 parameters runtime.RawExtension
resource.DeviceSelector
 1 cel *resource.CELDeviceSelector o
resource.CELDeviceSelector
 1 expression str
resource.ResourceClaim
 1 metadata meta.ObjectMeta o
 2 spec resource.ResourceClaimSpec
 3 status resource.ResourceClaimStatus o
resource.ResourceClaimSpec
 1 devices resource.DeviceClaim
resource.DeviceClaim
 1 requests []resource.DeviceRequest
 2 constraints []resource.DeviceConstraint o
 3 config []resource.DeviceClaimConfiguration o
resource.DeviceRequest
 1 name str
 2 exactly *resource.ExactDeviceRequest o
 3 firstAvailable []resource.DeviceSubRequest o
resource.ExactDeviceRequest
 1 deviceClassName str
 2 selectors []resource.DeviceSelector o
 3 allocationMode str o
 4 count i64 o
 5 adminAccess *bool o
 6 tolerations []resource.DeviceToleration o
 7 capacity *resource.CapacityRequirements o
 8 derivedAttributes []resource.DeviceDerivedAttribute o
resource.DeviceSubRequest
 1 name str
 2 deviceClassName str
 3 selectors []resource.DeviceSelector o
 4 allocationMode str o
 5 count i64 o
 6 tolerations []resource.DeviceToleration o
 7 capacity *resource.CapacityRequirements o
 8 derivedAttributes []resource.DeviceDerivedAttribute o
resource.CapacityRequirements
 1 requests map[str]resource.Quantity o
resource.DeviceDerivedAttribute
 1 name str
 2 expression str
resource.DeviceToleration
 1 key str o
 2 operator str o
 3 value str o
 4 effect str o
 5 tolerationSeconds *i64 o
resource.DeviceConstraint
 1 requests []str o
 2 matchAttribute *str o
 3 distinctAttribute *str o
resource.DeviceClaimConfiguration
 1 requests []str o
 2 ~ resource.DeviceConfiguration
resource.ResourceClaimStatus
 1 allocation *resource.AllocationResult o
 2 reservedFor []resource.ResourceClaimConsumerReference o
 4 devices []resource.AllocatedDeviceStatus o
resource.ResourceClaimConsumerReference
 1 apiGroup str o
 3 resource str
 4 name str
 5 uid str
resource.AllocationResult
 1 devices resource.DeviceAllocationResult o
 3 nodeSelector *core.NodeSelector o
 5 allocationTimestamp *meta.Time o
resource.DeviceAllocationResult
 1 results []resource.DeviceRequestAllocationResult o
 2 config []resource.DeviceAllocationConfiguration o
resource.DeviceRequestAllocationResult
 1 request str
 2 driver str
 3 pool str
 4 device str
 5 adminAccess *bool o
 6 tolerations []resource.DeviceToleration o
 7 bindingConditions []str o
 8 bindingFailureConditions []str o
 9 shareID *str o
 10 consumedCapacity map[str]resource.Quantity o
 11 skipNodeOperations []str o
resource.DeviceAllocationConfiguration
 1 source str
 2 requests []str o
 3 ~ resource.DeviceConfiguration
resource.AllocatedDeviceStatus
 1 driver str
 2 pool str
 3 device str
 7 shareID *str o
 4 conditions []meta.Condition
 5 data *runtime.RawExtension o
 6 networkData *resource.NetworkDeviceData o
resource.NetworkDeviceData
 1 interfaceName str o
 2 ips []str o
 3 hardwareAddress str o
resource.ResourceClaimTemplate
 1 metadata meta.ObjectMeta o
 2 spec resource.ResourceClaimTemplateSpec
resource.ResourceClaimTemplateSpec
 1 metadata meta.ObjectMeta o
 2 spec resource.ResourceClaimSpec
resource.ResourceSlice
 1 metadata meta.ObjectMeta o
 2 spec resource.ResourceSliceSpec
resource.ResourceSliceSpec
 1 driver str
 2 pool resource.ResourcePool
 3 nodeName *str o
 4 nodeSelector *core.NodeSelector o
 5 allNodes *bool o
 6 devices []resource.Device o
 7 perDeviceNodeSelection *bool o
 8 sharedCounters []resource.CounterSet o
 9 partitionTypeAttribute *str o
 10 skipNodeOperations []str o
resource.ResourcePool
 1 name str
 2 generation i64
 3 resourceSliceCount i64
resource.CounterSet
 1 name str
 2 counters map[str]resource.Counter o
resource.Counter
 1 value resource.Quantity
resource.Device
 1 name str
 2 attributes map[str]resource.DeviceAttribute o
 3 capacity map[str]resource.DeviceCapacity o
 4 consumesCounters []resource.DeviceCounterConsumption o
 5 nodeName *str o
 6 nodeSelector *core.NodeSelector o
 7 allNodes *bool o
 8 taints []resource.DeviceTaint o
 9 bindsToNode *bool o
 10 bindingConditions []str o
 11 bindingFailureConditions []str o
 12 allowMultipleAllocations *bool o
 14 nodeAllocatableResources map[str]resource.NodeAllocatableResource o
resource.NodeAllocatableResource
 3 mapping *resource.NodeAllocatableMapping o
 4 overhead *resource.NodeAllocatableOverhead o
resource.NodeAllocatableMapping
 1 capacityKey *str o
 2 capacityMultiplier *resource.Quantity o
 3 deviceMultiplier *resource.Quantity o
resource.NodeAllocatableOverhead
 1 perPod *resource.Quantity o
 2 perContainer *resource.Quantity o
resource.DeviceAttribute
 2 int *i64 o
 3 bool *bool o
 4 string *str o
 5 version *str o
 6 ints []i64 o
 7 bools []bool o
 8 strings []str o
 9 versions []str o
resource.DeviceCapacity
 1 value resource.Quantity
 2 requestPolicy *resource.CapacityRequestPolicy o
resource.CapacityRequestPolicy
 1 default *resource.Quantity
 3 validValues []resource.Quantity o
 4 validRange *resource.CapacityRequestPolicyRange o
resource.CapacityRequestPolicyRange
 1 min *resource.Quantity o
 2 max *resource.Quantity o
 3 step *resource.Quantity o
resource.DeviceCounterConsumption
 1 counterSet str
 2 counters map[str]resource.Counter o
 3 compatibilityGroups []str o
resource.DeviceTaint
 1 key str
 2 value str o
 3 effect str
 4 timeAdded *meta.Time o
node.RuntimeClass
 1 metadata meta.ObjectMeta o
 2 handler str
 3 overhead *node.Overhead o
 4 scheduling *node.Scheduling o
coordination.Lease
 1 metadata meta.ObjectMeta o
 2 spec coordination.LeaseSpec o
core.Endpoints
 1 metadata meta.ObjectMeta o
 2 subsets []core.EndpointSubset o
core.EndpointSubset
 1 addresses []core.EndpointAddress o
 2 notReadyAddresses []core.EndpointAddress o
 3 ports []core.EndpointPort o
core.EndpointAddress
 1 ip str
 3 hostname str o
 4 nodeName *str o
 2 targetRef *core.ObjectReference o
core.EndpointPort
 1 name str o
 2 port i32
 3 protocol str o
 4 appProtocol *str o
discovery.EndpointSlice
 1 metadata meta.ObjectMeta o
 4 addressType str
 2 endpoints []discovery.Endpoint
 3 ports []discovery.EndpointPort
discovery.Endpoint
 1 addresses []str
 2 conditions discovery.EndpointConditions o
 3 hostname *str o
 4 targetRef *core.ObjectReference o
 5 deprecatedTopology map[str]str o
 6 nodeName *str o
 7 zone *str o
 8 hints *discovery.EndpointHints o
discovery.EndpointConditions
 1 ready *bool o
 2 serving *bool o
 3 terminating *bool o
discovery.EndpointHints
 1 forZones []discovery.ForZone o
 2 forNodes []discovery.ForNode o
discovery.ForZone
 1 name str
discovery.ForNode
 1 name str
discovery.EndpointPort
 1 name *str o
 2 protocol *str o
 3 port *i32 o
 4 appProtocol *str o
networking.Ingress
 1 metadata meta.ObjectMeta o
 2 spec networking.IngressSpec o
 3 status networking.IngressStatus o
networking.IngressSpec
 4 ingressClassName *str o
 1 defaultBackend *networking.IngressBackend o
 2 tls []networking.IngressTLS o
 3 rules []networking.IngressRule o
networking.IngressBackend
 4 service *networking.IngressServiceBackend o
 3 resource *core.TypedLocalObjectReference o
networking.IngressServiceBackend
 1 name str
 2 port networking.ServiceBackendPort o
networking.ServiceBackendPort
 1 name str o
 2 number i32 o
networking.IngressTLS
 1 hosts []str o
 2 secretName str o
networking.IngressRule
 1 host str o
 2 ~ networking.IngressRuleValue o
networking.IngressRuleValue
 1 http *networking.HTTPIngressRuleValue o
networking.HTTPIngressRuleValue
 1 paths []networking.HTTPIngressPath
networking.HTTPIngressPath
 1 path str o
 3 pathType *str
 2 backend networking.IngressBackend
networking.IngressStatus
 1 loadBalancer networking.IngressLoadBalancerStatus o
networking.IngressLoadBalancerStatus
 1 ingress []networking.IngressLoadBalancerIngress o
networking.IngressLoadBalancerIngress
 1 ip str o
 2 hostname str o
 4 ports []networking.IngressPortStatus o
networking.IngressPortStatus
 1 port i32
 2 protocol str
 3 error *str o
networking.IngressClass
 1 metadata meta.ObjectMeta o
 2 spec networking.IngressClassSpec o
networking.IngressClassSpec
 1 controller str o
 2 parameters *networking.IngressClassParametersReference o
networking.IngressClassParametersReference
 1 apiGroup *str o
 2 kind str
 3 name str
 4 scope *str o
 5 namespace *str o
networking.NetworkPolicy
 1 metadata meta.ObjectMeta o
 2 spec networking.NetworkPolicySpec o
networking.NetworkPolicySpec
 1 podSelector meta.LabelSelector o
 2 ingress []networking.NetworkPolicyIngressRule o
 3 egress []networking.NetworkPolicyEgressRule o
 4 policyTypes []str o
networking.NetworkPolicyIngressRule
 1 ports []networking.NetworkPolicyPort o
 2 from []networking.NetworkPolicyPeer o
networking.NetworkPolicyEgressRule
 1 ports []networking.NetworkPolicyPort o
 2 to []networking.NetworkPolicyPeer o
networking.NetworkPolicyPort
 1 protocol *str o
 2 port *intstr.IntOrString o
 3 endPort *i32 o
networking.NetworkPolicyPeer
 1 podSelector *meta.LabelSelector o
 2 namespaceSelector *meta.LabelSelector o
 3 ipBlock *networking.IPBlock o
networking.IPBlock
 1 cidr str
 2 except []str o
certificates.CertificateSigningRequest
 1 metadata meta.ObjectMeta o
 2 spec certificates.CertificateSigningRequestSpec
 3 status certificates.CertificateSigningRequestStatus o
certificates.CertificateSigningRequestSpec
 1 request bytes
 7 signerName str
 8 expirationSeconds *i32 o
 5 usages []str o
 2 username str o
 3 uid str o
 4 groups []str o
 6 extra map[str]certificates.ExtraValue o
certificates.CertificateSigningRequestStatus
 1 conditions []certificates.CertificateSigningRequestCondition o
 2 certificate bytes o
certificates.CertificateSigningRequestCondition
 1 type str
 6 status str
 2 reason str o
 3 message str o
 4 lastUpdateTime meta.Time o
 5 lastTransitionTime meta.Time o
apireg.APIService
 1 metadata meta.ObjectMeta o
 2 spec apireg.APIServiceSpec o
 3 status apireg.APIServiceStatus o
apireg.APIServiceSpec
 1 service *apireg.ServiceReference o
 2 group str o
 3 version str o
 4 insecureSkipTLSVerify bool o
 5 caBundle bytes o
 7 groupPriorityMinimum i32
 8 versionPriority i32
apireg.ServiceReference
 1 namespace str o
 2 name str o
 3 port *i32 o
apireg.APIServiceStatus
 1 conditions []apireg.APIServiceCondition o
apireg.APIServiceCondition
 1 type str
 2 status str
 3 lastTransitionTime meta.Time o
 4 reason str o
 5 message str o
storage.CSIStorageCapacity
 1 metadata meta.ObjectMeta o
 2 nodeTopology *meta.LabelSelector o
 3 storageClassName str
 4 capacity *resource.Quantity o
 5 maximumVolumeSize *resource.Quantity o
rbac.Role
 1 metadata meta.ObjectMeta o
 2 rules []rbac.PolicyRule
rbac.ClusterRole
 1 metadata meta.ObjectMeta o
 2 rules []rbac.PolicyRule
 3 aggregationRule *rbac.AggregationRule o
rbac.RoleBinding
 1 metadata meta.ObjectMeta o
 2 subjects []rbac.Subject o
 3 roleRef rbac.RoleRef
rbac.ClusterRoleBinding
 1 metadata meta.ObjectMeta o
 2 subjects []rbac.Subject o
 3 roleRef rbac.RoleRef
rbac.PolicyRule
 1 verbs []str
 2 apiGroups []str o
 3 resources []str o
 4 resourceNames []str o
 5 nonResourceURLs []str o
rbac.AggregationRule
 1 clusterRoleSelectors []meta.LabelSelector o
rbac.Subject
 1 kind str
 2 apiGroup str o
 3 name str
 4 namespace str o
rbac.RoleRef
 1 apiGroup str
 2 kind str
 3 name str
authorization.SelfSubjectAccessReview
 1 metadata meta.ObjectMeta o
 2 spec authorization.SelfSubjectAccessReviewSpec
 3 status authorization.SubjectAccessReviewStatus o
authorization.SubjectAccessReview
 1 metadata meta.ObjectMeta o
 2 spec authorization.SubjectAccessReviewSpec
 3 status authorization.SubjectAccessReviewStatus o
authorization.LocalSubjectAccessReview
 1 metadata meta.ObjectMeta o
 2 spec authorization.SubjectAccessReviewSpec
 3 status authorization.SubjectAccessReviewStatus o
authorization.SelfSubjectRulesReview
 1 metadata meta.ObjectMeta o
 2 spec authorization.SelfSubjectRulesReviewSpec
 3 status authorization.SubjectRulesReviewStatus o
authorization.SelfSubjectAccessReviewSpec
 1 resourceAttributes *authorization.ResourceAttributes o
 2 nonResourceAttributes *authorization.NonResourceAttributes o
authorization.SubjectAccessReviewSpec
 1 resourceAttributes *authorization.ResourceAttributes o
 2 nonResourceAttributes *authorization.NonResourceAttributes o
 3 user str o
 4 groups []str o
 5 extra map[str]authorization.ExtraValue o
 6 uid str o
authorization.ResourceAttributes
 1 namespace str o
 2 verb str o
 3 group str o
 4 version str o
 5 resource str o
 6 subresource str o
 7 name str o
 8 fieldSelector *authorization.FieldSelectorAttributes o
 9 labelSelector *authorization.LabelSelectorAttributes o
authorization.FieldSelectorAttributes
 1 rawSelector str o
 2 requirements []authorization.FieldSelectorRequirement o
authorization.FieldSelectorRequirement
 1 key str
 2 operator str
 3 values []str o
authorization.LabelSelectorAttributes
 1 rawSelector str o
 2 requirements []meta.LabelSelectorRequirement o
authorization.NonResourceAttributes
 1 path str o
 2 verb str o
authorization.SubjectAccessReviewStatus
 1 allowed bool
 4 denied bool o
 2 reason str o
 3 evaluationError str o
authorization.SelfSubjectRulesReviewSpec
 1 namespace str o
authorization.SubjectRulesReviewStatus
 1 resourceRules []authorization.ResourceRule
 2 nonResourceRules []authorization.NonResourceRule
 3 incomplete bool
 4 evaluationError str o
authorization.ResourceRule
 1 verbs []str
 2 apiGroups []str o
 3 resources []str o
 4 resourceNames []str o
authorization.NonResourceRule
 1 verbs []str
 2 nonResourceURLs []str o
authentication.TokenReview
 1 metadata meta.ObjectMeta o
 2 spec authentication.TokenReviewSpec
 3 status authentication.TokenReviewStatus o
authentication.TokenReviewSpec
 1 token str o
 2 audiences []str o
authentication.TokenReviewStatus
 1 authenticated bool o
 2 user authentication.UserInfo o
 4 audiences []str o
 3 error str o
authentication.UserInfo
 1 username str o
 2 uid str o
 3 groups []str o
 4 extra map[str]authentication.ExtraValue o
authentication.SelfSubjectReview
 1 metadata meta.ObjectMeta o
 2 status authentication.SelfSubjectReviewStatus o
authentication.SelfSubjectReviewStatus
 1 userInfo authentication.UserInfo o
events.Event
 1 metadata meta.ObjectMeta
 2 eventTime meta.MicroTime
 3 series *events.EventSeries o
 4 reportingController str o
 5 reportingInstance str o
 6 action str o
 7 reason str o
 8 regarding core.ObjectReference o
 9 related *core.ObjectReference o
 10 note str o
 11 type str o
 12 deprecatedSource core.EventSource o
 13 deprecatedFirstTimestamp meta.Time o
 14 deprecatedLastTimestamp meta.Time o
 15 deprecatedCount i32 o
admreg.MutatingWebhookConfiguration
 1 metadata meta.ObjectMeta o
 2 webhooks []admreg.MutatingWebhook o
admreg.ValidatingWebhookConfiguration
 1 metadata meta.ObjectMeta o
 2 webhooks []admreg.ValidatingWebhook o
autoscaling.Scale
 1 metadata meta.ObjectMeta o
 2 spec autoscaling.ScaleSpec o
 3 status autoscaling.ScaleStatus o
meta.DeleteOptions
 1 gracePeriodSeconds *i64 o
 2 preconditions *meta.Preconditions o
 3 orphanDependents *bool o
 4 propagationPolicy *str o
 5 dryRun []str o
 6 ignoreStoreReadErrorWithClusterBreakingPotential *bool o
apiext.CustomResourceDefinition
 1 metadata meta.ObjectMeta o
 2 spec apiext.CustomResourceDefinitionSpec
 3 status apiext.CustomResourceDefinitionStatus o
meta.ObjectMeta
 1 name str o
 2 generateName str o
 3 namespace str o
 4 selfLink str o
 5 uid str o
 6 resourceVersion str o
 7 generation i64 o
 8 creationTimestamp meta.Time oz
 9 deletionTimestamp *meta.Time o
 10 deletionGracePeriodSeconds *i64 o
 11 labels map[str]str o
 12 annotations map[str]str o
 13 ownerReferences []meta.OwnerReference o
 14 finalizers []str o
 17 managedFields []meta.ManagedFieldsEntry o
core.NamespaceSpec
 1 finalizers []str o
core.NamespaceStatus
 1 phase str o
 2 conditions []core.NamespaceCondition o
core.NodeSpec
 1 podCIDR str o
 7 podCIDRs []str o
 3 providerID str o
 4 unschedulable bool o
 5 taints []core.Taint o
 6 configSource *core.NodeConfigSource o
 2 externalID str o
 8 podPreemptionPolicy *core.NodePodPreemptionPolicy o
core.NodeStatus
 1 capacity map[str]resource.Quantity o
 2 allocatable map[str]resource.Quantity o
 3 phase str o
 4 conditions []core.NodeCondition o
 5 addresses []core.NodeAddress o
 6 daemonEndpoints core.NodeDaemonEndpoints o
 7 nodeInfo core.NodeSystemInfo o
 8 images []core.ContainerImage o
 9 volumesInUse []str o
 10 volumesAttached []core.AttachedVolume o
 11 config *core.NodeConfigStatus o
 12 runtimeHandlers []core.NodeRuntimeHandler o
 13 features *core.NodeFeatures o
 14 declaredFeatures []str o
core.PodSpec
 1 volumes []core.Volume o
 20 initContainers []core.Container o
 2 containers []core.Container
 34 ephemeralContainers []core.EphemeralContainer o
 3 restartPolicy str o
 4 terminationGracePeriodSeconds *i64 o
 5 activeDeadlineSeconds *i64 o
 6 dnsPolicy str o
 7 nodeSelector map[str]str o
 8 serviceAccountName str o
 9 serviceAccount str o
 21 automountServiceAccountToken *bool o
 10 nodeName str o
 11 hostNetwork bool o
 12 hostPID bool o
 13 hostIPC bool o
 27 shareProcessNamespace *bool o
 14 securityContext *core.PodSecurityContext o
 15 imagePullSecrets []core.LocalObjectReference o
 16 hostname str o
 17 subdomain str o
 18 affinity *core.Affinity o
 19 schedulerName str o
 22 tolerations []core.Toleration o
 23 hostAliases []core.HostAlias o
 24 priorityClassName str o
 25 priority *i32 o
 26 dnsConfig *core.PodDNSConfig o
 28 readinessGates []core.PodReadinessGate o
 29 runtimeClassName *str o
 30 enableServiceLinks *bool o
 31 preemptionPolicy *str o
 32 overhead map[str]resource.Quantity o
 33 topologySpreadConstraints []core.TopologySpreadConstraint o
 35 setHostnameAsFQDN *bool o
 36 os *core.PodOS o
 37 hostUsers *bool o
 38 schedulingGates []core.PodSchedulingGate o
 39 resourceClaims []core.PodResourceClaim o
 40 resources *core.ResourceRequirements o
 41 hostnameOverride *str o
 42 workloadRef *core.WorkloadReference o
 43 schedulingGroup *core.PodSchedulingGroup o
 44 evictionResponders []core.EvictionResponder o
core.PodStatus
 17 observedGeneration i64 o
 1 phase str o
 2 conditions []core.PodCondition o
 3 message str o
 4 reason str o
 11 nominatedNodeName str o
 5 hostIP str o
 16 hostIPs []core.HostIP o
 6 podIP str o
 12 podIPs []core.PodIP o
 7 startTime *meta.Time o
 10 initContainerStatuses []core.ContainerStatus o
 8 containerStatuses []core.ContainerStatus o
 9 qosClass str o
 13 ephemeralContainerStatuses []core.ContainerStatus o
 14 resize str o
 15 resourceClaimStatuses []core.PodResourceClaimStatus o
 18 extendedResourceClaimStatus *core.PodExtendedResourceClaimStatus o
 19 allocatedResources map[str]resource.Quantity o
 20 resources *core.ResourceRequirements o
 21 nodeAllocatableResourceClaimStatuses []core.NodeAllocatableResourceClaimStatus o
 22 volumeHealth []core.PodVolumeHealth o
core.ObjectReference
 1 kind str o
 2 namespace str o
 3 name str o
 4 uid str o
 5 apiVersion str o
 6 resourceVersion str o
 7 fieldPath str o
core.EventSource
 1 component str o
 2 host str o
core.EventSeries
 1 count i32 o
 2 lastObservedTime meta.MicroTime o
core.ServiceSpec
 1 ports []core.ServicePort o
 2 selector map[str]str o
 3 clusterIP str o
 18 clusterIPs []str o
 4 type str o
 5 externalIPs []str o
 7 sessionAffinity str o
 8 loadBalancerIP str o
 9 loadBalancerSourceRanges []str o
 10 externalName str o
 11 externalTrafficPolicy str o
 12 healthCheckNodePort i32 o
 13 publishNotReadyAddresses bool o
 14 sessionAffinityConfig *core.SessionAffinityConfig o
 19 ipFamilies []str o
 17 ipFamilyPolicy *str o
 20 allocateLoadBalancerNodePorts *bool o
 21 loadBalancerClass *str o
 22 internalTrafficPolicy *str o
 23 trafficDistribution *str o
core.ServiceStatus
 1 loadBalancer core.LoadBalancerStatus o
 2 conditions []meta.Condition o
core.LimitRangeSpec
 1 limits []core.LimitRangeItem
core.ResourceQuotaSpec
 1 hard map[str]resource.Quantity o
 2 scopes []str o
 3 scopeSelector *core.ScopeSelector o
core.ResourceQuotaStatus
 1 hard map[str]resource.Quantity o
 2 used map[str]resource.Quantity o
apps.DeploymentSpec
 1 replicas *i32 o
 2 selector *meta.LabelSelector
 3 template core.PodTemplateSpec
 4 strategy apps.DeploymentStrategy o
 5 minReadySeconds i32 o
 6 revisionHistoryLimit *i32 o
 7 paused bool o
 9 progressDeadlineSeconds *i32 o
apps.DeploymentStatus
 1 observedGeneration i64 o
 2 replicas i32 o
 3 updatedReplicas i32 o
 7 readyReplicas i32 o
 4 availableReplicas i32 o
 5 unavailableReplicas i32 o
 9 terminatingReplicas *i32 o
 6 conditions []apps.DeploymentCondition o
 8 collisionCount *i32 o
apps.ReplicaSetSpec
 1 replicas *i32 o
 4 minReadySeconds i32 o
 2 selector *meta.LabelSelector
 3 template core.PodTemplateSpec o
apps.ReplicaSetStatus
 1 replicas i32
 2 fullyLabeledReplicas i32 o
 4 readyReplicas i32 o
 5 availableReplicas i32 o
 7 terminatingReplicas *i32 o
 3 observedGeneration i64 o
 6 conditions []apps.ReplicaSetCondition o
policy.PodDisruptionBudgetSpec
 1 minAvailable *intstr.IntOrString o
 2 selector *meta.LabelSelector o
 3 maxUnavailable *intstr.IntOrString o
 4 unhealthyPodEvictionPolicy *str o
policy.PodDisruptionBudgetStatus
 1 observedGeneration i64 o
 2 disruptedPods map[str]meta.Time o
 3 disruptionsAllowed i32
 4 currentHealthy i32
 5 desiredHealthy i32
 6 expectedPods i32
 7 conditions []meta.Condition o
node.Overhead
 1 podFixed map[str]resource.Quantity o
node.Scheduling
 1 nodeSelector map[str]str o
 2 tolerations []core.Toleration o
coordination.LeaseSpec
 1 holderIdentity *str o
 2 leaseDurationSeconds *i32 o
 3 acquireTime *meta.MicroTime o
 4 renewTime *meta.MicroTime o
 5 leaseTransitions *i32 o
 6 strategy *str o
 7 preferredHolder *str o
events.EventSeries
 1 count i32
 2 lastObservedTime meta.MicroTime
admreg.MutatingWebhook
 1 name str
 2 clientConfig admreg.WebhookClientConfig
 3 rules []admreg.RuleWithOperations o
 4 failurePolicy *str o
 9 matchPolicy *str o
 5 namespaceSelector *meta.LabelSelector o
 11 objectSelector *meta.LabelSelector o
 6 sideEffects *str
 7 timeoutSeconds *i32 o
 8 admissionReviewVersions []str
 10 reinvocationPolicy *str o
 12 matchConditions []admreg.MatchCondition o
admreg.ValidatingWebhook
 1 name str
 2 clientConfig admreg.WebhookClientConfig
 3 rules []admreg.RuleWithOperations o
 4 failurePolicy *str o
 9 matchPolicy *str o
 5 namespaceSelector *meta.LabelSelector o
 10 objectSelector *meta.LabelSelector o
 6 sideEffects *str
 7 timeoutSeconds *i32 o
 8 admissionReviewVersions []str
 11 matchConditions []admreg.MatchCondition o
autoscaling.ScaleSpec
 1 replicas i32 o
autoscaling.ScaleStatus
 1 replicas i32
 2 selector str o
meta.Preconditions
 1 uid *str o
 2 resourceVersion *str o
apiext.CustomResourceDefinitionSpec
 1 group str
 3 names apiext.CustomResourceDefinitionNames
 4 scope str
 7 versions []apiext.CustomResourceDefinitionVersion
 9 conversion *apiext.CustomResourceConversion o
 10 preserveUnknownFields bool o
apiext.CustomResourceDefinitionStatus
 1 conditions []apiext.CustomResourceDefinitionCondition
 2 acceptedNames apiext.CustomResourceDefinitionNames
 3 storedVersions []str
 4 observedGeneration i64 o
meta.OwnerReference
 5 apiVersion str
 1 kind str
 3 name str
 4 uid str
 6 controller *bool o
 7 blockOwnerDeletion *bool o
meta.ManagedFieldsEntry
 1 manager str o
 2 operation str o
 3 apiVersion str o
 4 time *meta.Time o
 6 fieldsType str o
 7 fieldsV1 *meta.FieldsV1 o
 8 subresource str o
core.NamespaceCondition
 1 type str
 2 status str
 4 lastTransitionTime meta.Time o
 5 reason str o
 6 message str o
core.Taint
 1 key str
 2 value str o
 3 effect str
 4 timeAdded *meta.Time o
core.NodeConfigSource
 2 configMap *core.ConfigMapNodeConfigSource o
core.NodePodPreemptionPolicy
 1 disableResizePreemption []str o
core.NodeCondition
 1 type str
 2 status str
 3 lastHeartbeatTime meta.Time o
 4 lastTransitionTime meta.Time o
 5 reason str o
 6 message str o
core.NodeAddress
 1 type str
 2 address str
core.NodeDaemonEndpoints
 1 kubeletEndpoint core.DaemonEndpoint o
core.NodeSystemInfo
 1 machineID str
 2 systemUUID str
 3 bootID str
 4 kernelVersion str
 5 osImage str
 6 containerRuntimeVersion str
 7 kubeletVersion str
 8 kubeProxyVersion str
 9 operatingSystem str
 10 architecture str
 11 swap *core.NodeSwapStatus o
 12 runningInUserNamespace *bool o
core.ContainerImage
 1 names []str
 2 sizeBytes i64 o
core.AttachedVolume
 1 name str
 2 devicePath str
core.NodeConfigStatus
 1 assigned *core.NodeConfigSource o
 2 active *core.NodeConfigSource o
 3 lastKnownGood *core.NodeConfigSource o
 4 error str o
core.NodeRuntimeHandler
 1 name str
 2 features *core.NodeRuntimeHandlerFeatures o
core.NodeFeatures
 1 supplementalGroupsPolicy *bool o
core.Volume
 1 name str
 2 ~ core.VolumeSource
core.Container
 1 name str
 2 image str o
 3 command []str o
 4 args []str o
 5 workingDir str o
 6 ports []core.ContainerPort o
 19 envFrom []core.EnvFromSource o
 7 env []core.EnvVar o
 8 resources core.ResourceRequirements o
 23 resizePolicy []core.ContainerResizePolicy o
 24 restartPolicy *str o
 25 restartPolicyRules []core.ContainerRestartRule o
 9 volumeMounts []core.VolumeMount o
 21 volumeDevices []core.VolumeDevice o
 10 livenessProbe *core.Probe o
 11 readinessProbe *core.Probe o
 22 startupProbe *core.Probe o
 12 lifecycle *core.Lifecycle o
 13 terminationMessagePath str o
 20 terminationMessagePolicy str o
 14 imagePullPolicy str o
 15 securityContext *core.SecurityContext o
 16 stdin bool o
 17 stdinOnce bool o
 18 tty bool o
core.EphemeralContainer
 1 ~ core.EphemeralContainerCommon
 2 targetContainerName str o
core.PodSecurityContext
 1 seLinuxOptions *core.SELinuxOptions o
 8 windowsOptions *core.WindowsSecurityContextOptions o
 2 runAsUser *i64 o
 6 runAsGroup *i64 o
 3 runAsNonRoot *bool o
 4 supplementalGroups []i64 o
 12 supplementalGroupsPolicy *str o
 5 fsGroup *i64 o
 7 sysctls []core.Sysctl o
 9 fsGroupChangePolicy *str o
 10 seccompProfile *core.SeccompProfile o
 11 appArmorProfile *core.AppArmorProfile o
 13 seLinuxChangePolicy *str o
core.LocalObjectReference
 1 name str o
core.Affinity
 1 nodeAffinity *core.NodeAffinity o
 2 podAffinity *core.PodAffinity o
 3 podAntiAffinity *core.PodAntiAffinity o
core.Toleration
 1 key str o
 2 operator str o
 3 value str o
 4 effect str o
 5 tolerationSeconds *i64 o
core.HostAlias
 1 ip str
 2 hostnames []str o
core.PodDNSConfig
 1 nameservers []str o
 2 searches []str o
 3 options []core.PodDNSConfigOption o
core.PodReadinessGate
 1 conditionType str
core.TopologySpreadConstraint
 1 maxSkew i32
 2 topologyKey str
 3 whenUnsatisfiable str
 4 labelSelector *meta.LabelSelector o
 5 minDomains *i32 o
 6 nodeAffinityPolicy *str o
 7 nodeTaintsPolicy *str o
 8 matchLabelKeys []str o
core.PodOS
 1 name str
core.PodSchedulingGate
 1 name str
core.PodResourceClaim
 1 name str
 3 resourceClaimName *str o
 4 resourceClaimTemplateName *str o
core.ResourceRequirements
 1 limits map[str]resource.Quantity o
 2 requests map[str]resource.Quantity o
 3 claims []core.ResourceClaim o
core.WorkloadReference
 1 name str
 2 podGroup str
 3 podGroupReplicaKey str o
core.PodSchedulingGroup
 1 podGroupName *str o
core.EvictionResponder
 1 name str
 2 priority *i32
core.PodCondition
 1 type str
 7 observedGeneration i64 o
 2 status str
 3 lastProbeTime meta.Time o
 4 lastTransitionTime meta.Time o
 5 reason str o
 6 message str o
core.HostIP
 1 ip str
core.PodIP
 1 ip str
core.ContainerStatus
 1 name str
 2 state core.ContainerState o
 3 lastState core.ContainerState o
 4 ready bool
 5 restartCount i32
 6 image str
 7 imageID str
 8 containerID str o
 9 started *bool o
 10 allocatedResources map[str]resource.Quantity o
 11 resources *core.ResourceRequirements o
 12 volumeMounts []core.VolumeMountStatus o
 13 user *core.ContainerUser o
 14 allocatedResourcesStatus []core.ResourceStatus o
 15 stopSignal *str o
core.PodResourceClaimStatus
 1 name str
 2 resourceClaimName *str o
core.PodExtendedResourceClaimStatus
 1 requestMappings []core.ContainerExtendedResourceRequest
 2 resourceClaimName str
core.NodeAllocatableResourceClaimStatus
 1 resourceClaimName str
 2 containers []str o
 4 mapping []core.NodeAllocatableMappedResources o
 5 overhead []core.NodeAllocatableOverheadResources o
core.PodVolumeHealth
 1 name str
 2 healthConditions []core.VolumeHealthCondition o
 3 lastTransitionTime meta.Time o
core.ServicePort
 1 name str o
 2 protocol str o
 6 appProtocol *str o
 3 port i32
 4 targetPort intstr.IntOrString o
 5 nodePort i32 o
core.SessionAffinityConfig
 1 clientIP *core.ClientIPConfig o
core.LoadBalancerStatus
 1 ingress []core.LoadBalancerIngress o
meta.Condition
 1 type str
 2 status str
 3 observedGeneration i64 o
 4 lastTransitionTime meta.Time
 5 reason str
 6 message str
core.LimitRangeItem
 1 type str
 2 max map[str]resource.Quantity o
 3 min map[str]resource.Quantity o
 4 default map[str]resource.Quantity o
 5 defaultRequest map[str]resource.Quantity o
 6 maxLimitRequestRatio map[str]resource.Quantity o
core.ScopeSelector
 1 matchExpressions []core.ScopedResourceSelectorRequirement o
meta.LabelSelector
 1 matchLabels map[str]str o
 2 matchExpressions []meta.LabelSelectorRequirement o
core.PodTemplateSpec
 1 metadata meta.ObjectMeta o
 2 spec core.PodSpec o
apps.DeploymentStrategy
 1 type str o
 2 rollingUpdate *apps.RollingUpdateDeployment o
apps.DeploymentCondition
 1 type str
 2 status str
 6 lastUpdateTime meta.Time o
 7 lastTransitionTime meta.Time o
 4 reason str o
 5 message str o
apps.ReplicaSetCondition
 1 type str
 2 status str
 3 lastTransitionTime meta.Time o
 4 reason str o
 5 message str o
admreg.WebhookClientConfig
 3 url *str o
 1 service *admreg.ServiceReference o
 2 caBundle bytes o
admreg.RuleWithOperations
 1 operations []str o
 2 ~ admreg.Rule
admreg.MatchCondition
 1 name str
 2 expression str
apiext.CustomResourceDefinitionNames
 1 plural str
 2 singular str o
 3 shortNames []str o
 4 kind str
 5 listKind str o
 6 categories []str o
apiext.CustomResourceDefinitionVersion
 1 name str
 2 served bool
 3 storage bool
 7 deprecated bool o
 8 deprecationWarning *str o
 4 schema *apiext.CustomResourceValidation o
 5 subresources *apiext.CustomResourceSubresources o
 6 additionalPrinterColumns []apiext.CustomResourceColumnDefinition o
 9 selectableFields []apiext.SelectableField o
apiext.CustomResourceConversion
 1 strategy str
 2 webhook *apiext.WebhookConversion o
apiext.CustomResourceDefinitionCondition
 1 type str
 2 status str
 3 lastTransitionTime meta.Time o
 4 reason str o
 5 message str o
 6 observedGeneration i64 o
core.ConfigMapNodeConfigSource
 1 namespace str
 2 name str
 3 uid str o
 4 resourceVersion str o
 5 kubeletConfigKey str
core.DaemonEndpoint
 1 Port i32
core.NodeSwapStatus
 1 capacity *i64 o
core.NodeRuntimeHandlerFeatures
 1 recursiveReadOnlyMounts *bool o
 2 userNamespaces *bool o
core.VolumeSource
 1 hostPath *core.HostPathVolumeSource o
 2 emptyDir *core.EmptyDirVolumeSource o
 3 gcePersistentDisk *core.GCEPersistentDiskVolumeSource o
 4 awsElasticBlockStore *core.AWSElasticBlockStoreVolumeSource o
 5 gitRepo *core.GitRepoVolumeSource o
 6 secret *core.SecretVolumeSource o
 7 nfs *core.NFSVolumeSource o
 8 iscsi *core.ISCSIVolumeSource o
 9 glusterfs *core.GlusterfsVolumeSource o
 10 persistentVolumeClaim *core.PersistentVolumeClaimVolumeSource o
 11 rbd *core.RBDVolumeSource o
 12 flexVolume *core.FlexVolumeSource o
 13 cinder *core.CinderVolumeSource o
 14 cephfs *core.CephFSVolumeSource o
 15 flocker *core.FlockerVolumeSource o
 16 downwardAPI *core.DownwardAPIVolumeSource o
 17 fc *core.FCVolumeSource o
 18 azureFile *core.AzureFileVolumeSource o
 19 configMap *core.ConfigMapVolumeSource o
 20 vsphereVolume *core.VsphereVirtualDiskVolumeSource o
 21 quobyte *core.QuobyteVolumeSource o
 22 azureDisk *core.AzureDiskVolumeSource o
 23 photonPersistentDisk *core.PhotonPersistentDiskVolumeSource o
 26 projected *core.ProjectedVolumeSource o
 24 portworxVolume *core.PortworxVolumeSource o
 25 scaleIO *core.ScaleIOVolumeSource o
 27 storageos *core.StorageOSVolumeSource o
 28 csi *core.CSIVolumeSource o
 29 ephemeral *core.EphemeralVolumeSource o
 30 image *core.ImageVolumeSource o
core.ContainerPort
 1 name str o
 2 hostPort i32 o
 3 containerPort i32
 4 protocol str o
 5 hostIP str o
core.EnvFromSource
 1 prefix str o
 2 configMapRef *core.ConfigMapEnvSource o
 3 secretRef *core.SecretEnvSource o
core.EnvVar
 1 name str
 2 value str o
 3 valueFrom *core.EnvVarSource o
core.ContainerResizePolicy
 1 resourceName str
 2 restartPolicy str
core.ContainerRestartRule
 1 action str o
 2 exitCodes *core.ContainerRestartRuleOnExitCodes o
core.VolumeMount
 1 name str
 2 readOnly bool o
 7 recursiveReadOnly *str o
 3 mountPath str
 4 subPath str o
 5 mountPropagation *str o
 6 subPathExpr str o
 8 bindMountOptions []str o
core.VolumeDevice
 1 name str
 2 devicePath str
core.Probe
 1 ~ core.ProbeHandler
 2 initialDelaySeconds i32 o
 3 timeoutSeconds i32 o
 4 periodSeconds i32 o
 5 successThreshold i32 o
 6 failureThreshold i32 o
 7 terminationGracePeriodSeconds *i64 o
core.Lifecycle
 1 postStart *core.LifecycleHandler o
 2 preStop *core.LifecycleHandler o
 3 stopSignal *str o
core.SecurityContext
 1 capabilities *core.Capabilities o
 2 privileged *bool o
 3 seLinuxOptions *core.SELinuxOptions o
 10 windowsOptions *core.WindowsSecurityContextOptions o
 4 runAsUser *i64 o
 8 runAsGroup *i64 o
 5 runAsNonRoot *bool o
 6 readOnlyRootFilesystem *bool o
 7 allowPrivilegeEscalation *bool o
 9 procMount *str o
 11 seccompProfile *core.SeccompProfile o
 12 appArmorProfile *core.AppArmorProfile o
core.EphemeralContainerCommon = core.Container
core.SELinuxOptions
 1 user str o
 2 role str o
 3 type str o
 4 level str o
core.WindowsSecurityContextOptions
 1 gmsaCredentialSpecName *str o
 2 gmsaCredentialSpec *str o
 3 runAsUserName *str o
 4 hostProcess *bool o
core.Sysctl
 1 name str
 2 value str
core.SeccompProfile
 1 type str
 2 localhostProfile *str o
core.AppArmorProfile
 1 type str
 2 localhostProfile *str o
core.NodeAffinity
 1 requiredDuringSchedulingIgnoredDuringExecution *core.NodeSelector o
 2 preferredDuringSchedulingIgnoredDuringExecution []core.PreferredSchedulingTerm o
core.PodAffinity
 1 requiredDuringSchedulingIgnoredDuringExecution []core.PodAffinityTerm o
 2 preferredDuringSchedulingIgnoredDuringExecution []core.WeightedPodAffinityTerm o
core.PodAntiAffinity
 1 requiredDuringSchedulingIgnoredDuringExecution []core.PodAffinityTerm o
 2 preferredDuringSchedulingIgnoredDuringExecution []core.WeightedPodAffinityTerm o
core.PodDNSConfigOption
 1 name str o
 2 value *str o
core.ResourceClaim
 1 name str
 2 request str o
core.ContainerState
 1 waiting *core.ContainerStateWaiting o
 2 running *core.ContainerStateRunning o
 3 terminated *core.ContainerStateTerminated o
core.VolumeMountStatus
 1 name str
 2 mountPath str
 3 readOnly bool o
 4 recursiveReadOnly *str o
 5 volumeStatus *core.VolumeStatus o
core.ContainerUser
 1 linux *core.LinuxContainerUser o
core.ResourceStatus
 1 name str
 2 resources []core.ResourceHealth o
core.ContainerExtendedResourceRequest
 1 containerName str
 2 resourceName str
 3 requestName str
core.NodeAllocatableMappedResources
 1 name str
 2 quantity *resource.Quantity
core.NodeAllocatableOverheadResources
 1 name str
 2 perPod *resource.Quantity o
 3 perContainer *resource.Quantity o
core.VolumeHealthCondition
 1 status str
 2 reason str
 3 message str o
core.ClientIPConfig
 1 timeoutSeconds *i32 o
core.LoadBalancerIngress
 1 ip str o
 2 hostname str o
 3 ipMode *str o
 4 ports []core.PortStatus o
core.ScopedResourceSelectorRequirement
 1 scopeName str
 2 operator str
 3 values []str o
meta.LabelSelectorRequirement
 1 key str
 2 operator str
 3 values []str o
apps.RollingUpdateDeployment
 1 maxUnavailable *intstr.IntOrString o
 2 maxSurge *intstr.IntOrString o
admreg.ServiceReference
 1 namespace str
 2 name str
 3 path *str o
 4 port *i32 o
admreg.Rule
 1 apiGroups []str o
 2 apiVersions []str o
 3 resources []str o
 4 scope *str o
apiext.CustomResourceValidation
 1 openAPIV3Schema *apiext.JSONSchemaProps o
apiext.CustomResourceSubresources
 1 status *apiext.CustomResourceSubresourceStatus o
 2 scale *apiext.CustomResourceSubresourceScale o
apiext.CustomResourceColumnDefinition
 1 name str
 2 type str
 3 format str o
 4 description str o
 5 priority i32 o
 6 jsonPath str
apiext.SelectableField
 1 jsonPath str
apiext.WebhookConversion
 2 clientConfig *apiext.WebhookClientConfig o
 3 conversionReviewVersions []str
core.HostPathVolumeSource
 1 path str
 2 type *str o
core.EmptyDirVolumeSource
 1 medium str o
 2 sizeLimit *resource.Quantity o
 3 mode *i32 o
core.GCEPersistentDiskVolumeSource
 1 pdName str
 2 fsType str o
 3 partition i32 o
 4 readOnly bool o
core.AWSElasticBlockStoreVolumeSource
 1 volumeID str
 2 fsType str o
 3 partition i32 o
 4 readOnly bool o
core.GitRepoVolumeSource
 1 repository str
 2 revision str o
 3 directory str o
core.SecretVolumeSource
 1 secretName str o
 2 items []core.KeyToPath o
 3 defaultMode *i32 o
 4 optional *bool o
 5 defaultUser *i64 o
core.NFSVolumeSource
 1 server str
 2 path str
 3 readOnly bool o
core.ISCSIVolumeSource
 1 targetPortal str
 2 iqn str
 3 lun i32
 4 iscsiInterface str o
 5 fsType str o
 6 readOnly bool o
 7 portals []str o
 8 chapAuthDiscovery bool o
 11 chapAuthSession bool o
 10 secretRef *core.LocalObjectReference o
 12 initiatorName *str o
core.GlusterfsVolumeSource
 1 endpoints str
 2 path str
 3 readOnly bool o
core.PersistentVolumeClaimVolumeSource
 1 claimName str
 2 readOnly bool o
core.RBDVolumeSource
 1 monitors []str
 2 image str
 3 fsType str o
 4 pool str o
 5 user str o
 6 keyring str o
 7 secretRef *core.LocalObjectReference o
 8 readOnly bool o
core.FlexVolumeSource
 1 driver str
 2 fsType str o
 3 secretRef *core.LocalObjectReference o
 4 readOnly bool o
 5 options map[str]str o
core.CinderVolumeSource
 1 volumeID str
 2 fsType str o
 3 readOnly bool o
 4 secretRef *core.LocalObjectReference o
core.CephFSVolumeSource
 1 monitors []str
 2 path str o
 3 user str o
 4 secretFile str o
 5 secretRef *core.LocalObjectReference o
 6 readOnly bool o
core.FlockerVolumeSource
 1 datasetName str o
 2 datasetUUID str o
core.DownwardAPIVolumeSource
 1 items []core.DownwardAPIVolumeFile o
 2 defaultMode *i32 o
 3 defaultUser *i64 o
core.FCVolumeSource
 1 targetWWNs []str o
 2 lun *i32 o
 3 fsType str o
 4 readOnly bool o
 5 wwids []str o
core.AzureFileVolumeSource
 1 secretName str
 2 shareName str
 3 readOnly bool o
core.ConfigMapVolumeSource
 1 ~ core.LocalObjectReference
 2 items []core.KeyToPath o
 3 defaultMode *i32 o
 4 optional *bool o
 5 defaultUser *i64 o
core.VsphereVirtualDiskVolumeSource
 1 volumePath str
 2 fsType str o
 3 storagePolicyName str o
 4 storagePolicyID str o
core.QuobyteVolumeSource
 1 registry str
 2 volume str
 3 readOnly bool o
 4 user str o
 5 group str o
 6 tenant str o
core.AzureDiskVolumeSource
 1 diskName str
 2 diskURI str
 3 cachingMode *str o
 4 fsType *str o
 5 readOnly *bool o
 6 kind *str o
core.PhotonPersistentDiskVolumeSource
 1 pdID str
 2 fsType str o
core.ProjectedVolumeSource
 1 sources []core.VolumeProjection
 2 defaultMode *i32 o
 3 defaultUser *i64 o
core.PortworxVolumeSource
 1 volumeID str
 2 fsType str o
 3 readOnly bool o
core.ScaleIOVolumeSource
 1 gateway str
 2 system str
 3 secretRef *core.LocalObjectReference
 4 sslEnabled bool o
 5 protectionDomain str o
 6 storagePool str o
 7 storageMode str o
 8 volumeName str o
 9 fsType str o
 10 readOnly bool o
core.StorageOSVolumeSource
 1 volumeName str o
 2 volumeNamespace str o
 3 fsType str o
 4 readOnly bool o
 5 secretRef *core.LocalObjectReference o
core.CSIVolumeSource
 1 driver str
 2 readOnly *bool o
 3 fsType *str o
 4 volumeAttributes map[str]str o
 5 nodePublishSecretRef *core.LocalObjectReference o
core.EphemeralVolumeSource
 1 volumeClaimTemplate *core.PersistentVolumeClaimTemplate o
core.ImageVolumeSource
 1 reference str o
 2 pullPolicy str o
core.ConfigMapEnvSource
 1 ~ core.LocalObjectReference
 2 optional *bool o
core.SecretEnvSource
 1 ~ core.LocalObjectReference
 2 optional *bool o
core.EnvVarSource
 1 fieldRef *core.ObjectFieldSelector o
 2 resourceFieldRef *core.ResourceFieldSelector o
 3 configMapKeyRef *core.ConfigMapKeySelector o
 4 secretKeyRef *core.SecretKeySelector o
 5 fileKeyRef *core.FileKeySelector o
core.ContainerRestartRuleOnExitCodes
 1 operator str o
 2 values []i32 o
core.ProbeHandler
 1 exec *core.ExecAction o
 2 httpGet *core.HTTPGetAction o
 3 tcpSocket *core.TCPSocketAction o
 4 grpc *core.GRPCAction o
core.LifecycleHandler
 1 exec *core.ExecAction o
 2 httpGet *core.HTTPGetAction o
 3 tcpSocket *core.TCPSocketAction o
 4 sleep *core.SleepAction o
core.Capabilities
 1 add []str o
 2 drop []str o
core.NodeSelector
 1 nodeSelectorTerms []core.NodeSelectorTerm
core.PreferredSchedulingTerm
 1 weight i32
 2 preference core.NodeSelectorTerm
core.PodAffinityTerm
 1 labelSelector *meta.LabelSelector o
 2 namespaces []str o
 3 topologyKey str
 4 namespaceSelector *meta.LabelSelector o
 5 matchLabelKeys []str o
 6 mismatchLabelKeys []str o
core.WeightedPodAffinityTerm
 1 weight i32
 2 podAffinityTerm core.PodAffinityTerm
core.ContainerStateWaiting
 1 reason str o
 2 message str o
core.ContainerStateRunning
 1 startedAt meta.Time o
core.ContainerStateTerminated
 1 exitCode i32
 2 signal i32 o
 3 reason str o
 4 message str o
 5 startedAt meta.Time o
 6 finishedAt meta.Time o
 7 containerID str o
core.VolumeStatus
 1 image *core.ImageVolumeStatus o
core.LinuxContainerUser
 1 uid i64
 2 gid i64
 3 supplementalGroups []i64 o
core.ResourceHealth
 1 resourceID str
 2 health str o
 6 message *str o
core.PortStatus
 1 port i32
 2 protocol str
 3 error *str o
apiext.JSONSchemaProps
 1 id str o
 2 $schema str o
 3 $ref *str o
 4 description str o
 5 type str o
 6 format str o
 7 title str o
 8 default *apiext.JSON o
 9 maximum *f64 o
 10 exclusiveMaximum bool o
 11 minimum *f64 o
 12 exclusiveMinimum bool o
 13 maxLength *i64 o
 14 minLength *i64 o
 15 pattern str o
 16 maxItems *i64 o
 17 minItems *i64 o
 18 uniqueItems bool o
 19 multipleOf *f64 o
 20 enum []apiext.JSON o
 21 maxProperties *i64 o
 22 minProperties *i64 o
 23 required []str o
 24 items *apiext.JSONSchemaPropsOrArray o
 25 allOf []apiext.JSONSchemaProps o
 26 oneOf []apiext.JSONSchemaProps o
 27 anyOf []apiext.JSONSchemaProps o
 28 not *apiext.JSONSchemaProps o
 29 properties map[str]apiext.JSONSchemaProps o
 30 additionalProperties *apiext.JSONSchemaPropsOrBool o
 31 patternProperties map[str]apiext.JSONSchemaProps o
 32 dependencies map[str]apiext.JSONSchemaPropsOrStringArray o
 33 additionalItems *apiext.JSONSchemaPropsOrBool o
 34 definitions map[str]apiext.JSONSchemaProps o
 35 externalDocs *apiext.ExternalDocumentation o
 36 example *apiext.JSON o
 37 nullable bool o
 38 x-kubernetes-preserve-unknown-fields *bool o
 39 x-kubernetes-embedded-resource bool o
 40 x-kubernetes-int-or-string bool o
 41 x-kubernetes-list-map-keys []str o
 42 x-kubernetes-list-type *str o
 43 x-kubernetes-map-type *str o
 44 x-kubernetes-validations []apiext.ValidationRule o
apiext.CustomResourceSubresourceStatus
apiext.CustomResourceSubresourceScale
 1 specReplicasPath str
 2 statusReplicasPath str
 3 labelSelectorPath *str o
apiext.WebhookClientConfig
 3 url *str o
 1 service *apiext.ServiceReference o
 2 caBundle bytes o
core.KeyToPath
 1 key str
 2 path str
 3 mode *i32 o
 4 user *i64 o
core.DownwardAPIVolumeFile
 1 path str
 2 fieldRef *core.ObjectFieldSelector o
 3 resourceFieldRef *core.ResourceFieldSelector o
 4 mode *i32 o
 5 user *i64 o
core.VolumeProjection
 1 secret *core.SecretProjection o
 2 downwardAPI *core.DownwardAPIProjection o
 3 configMap *core.ConfigMapProjection o
 4 serviceAccountToken *core.ServiceAccountTokenProjection o
 5 clusterTrustBundle *core.ClusterTrustBundleProjection o
 6 podCertificate *core.PodCertificateProjection o
core.PersistentVolumeClaimTemplate
 1 metadata meta.ObjectMeta o
 2 spec core.PersistentVolumeClaimSpec
core.ObjectFieldSelector
 1 apiVersion str o
 2 fieldPath str
core.ResourceFieldSelector
 1 containerName str o
 2 resource str
 3 divisor resource.Quantity o
core.ConfigMapKeySelector
 1 ~ core.LocalObjectReference
 2 key str
 3 optional *bool o
core.SecretKeySelector
 1 ~ core.LocalObjectReference
 2 key str
 3 optional *bool o
core.FileKeySelector
 1 volumeName str
 2 path str
 3 key str
 4 optional *bool o
core.ExecAction
 1 command []str o
core.HTTPGetAction
 1 path str o
 2 port intstr.IntOrString
 3 host str o
 4 scheme str o
 5 httpHeaders []core.HTTPHeader o
 6 protocol *str o
core.TCPSocketAction
 1 port intstr.IntOrString
 2 host str o
core.GRPCAction
 1 port i32
 2 service *str
 3 mode *str o
core.SleepAction
 1 seconds i64
core.NodeSelectorTerm
 1 matchExpressions []core.NodeSelectorRequirement o
 2 matchFields []core.NodeSelectorRequirement o
core.ImageVolumeStatus
 1 imageRef str o
apiext.ExternalDocumentation
 1 description str o
 2 url str o
apiext.ValidationRule
 1 rule str
 2 message str o
 3 messageExpression str o
 4 reason *str o
 5 fieldPath str o
 6 optionalOldSelf *bool o
apiext.ServiceReference
 1 namespace str
 2 name str
 3 path *str o
 4 port *i32 o
core.SecretProjection
 1 ~ core.LocalObjectReference
 2 items []core.KeyToPath o
 4 optional *bool o
core.DownwardAPIProjection
 1 items []core.DownwardAPIVolumeFile o
core.ConfigMapProjection
 1 ~ core.LocalObjectReference
 2 items []core.KeyToPath o
 4 optional *bool o
core.ServiceAccountTokenProjection
 1 audience str o
 2 expirationSeconds *i64 o
 3 path str
 4 user *i64 o
core.ClusterTrustBundleProjection
 1 name *str o
 2 signerName *str o
 3 labelSelector *meta.LabelSelector o
 5 optional *bool o
 4 path str
 6 user *i64 o
core.PodCertificateProjection
 1 signerName str o
 2 keyType str o
 3 maxExpirationSeconds *i32 o
 4 credentialBundlePath str o
 5 keyPath str o
 6 certificateChainPath str o
 7 userAnnotations map[str]str o
 8 user *i64 o
core.PersistentVolumeClaimSpec
 1 accessModes []str o
 4 selector *meta.LabelSelector o
 2 resources core.VolumeResourceRequirements o
 3 volumeName str o
 5 storageClassName *str o
 6 volumeMode *str o
 7 dataSource *core.TypedLocalObjectReference o
 8 dataSourceRef *core.TypedObjectReference o
 9 volumeAttributesClassName *str o
core.HTTPHeader
 1 name str
 2 value str
core.NodeSelectorRequirement
 1 key str
 2 operator str
 3 values []str o
core.VolumeResourceRequirements
 1 limits map[str]resource.Quantity o
 2 requests map[str]resource.Quantity o
core.TypedLocalObjectReference
 1 apiGroup *str
 2 kind str
 3 name str
core.TypedObjectReference
 1 apiGroup *str
 2 kind str
 3 name str
 4 namespace *str o
"""
# fmt: on


SCALARS = frozenset({"str", "bool", "i32", "i64", "f64", "bytes"})


@dataclass(frozen=True, slots=True)
class Field:
    num: int
    name: str            # JSON name; "~" for an inlined embedded struct
    type: str            # a scalar or a message name, without the *, [] or map[str] prefix
    pointer: bool = False
    repeated: bool = False
    map: bool = False
    omitempty: bool = False
    omitzero: bool = False

    @property
    def inline(self) -> bool:
        return self.name == "~"

    @property
    def scalar(self) -> bool:
        return self.type in SCALARS


@dataclass(frozen=True, slots=True)
class Message:
    name: str
    fields: tuple[Field, ...]             # Go struct order (the JSON order)
    by_number: dict                       # number -> Field
    ordered: tuple[Field, ...]            # by number (the wire order Go writes)


def _parse_field(line: str) -> Field:
    num, name, typ, *rest = line.split()
    flags = rest[0] if rest else ""
    pointer = repeated = is_map = False
    if typ.startswith("*"):
        pointer, typ = True, typ[1:]
    elif typ.startswith("[]"):
        repeated, typ = True, typ[2:]
    elif typ.startswith("map[str]"):
        is_map, typ = True, typ[len("map[str]"):]
    return Field(int(num), name, typ, pointer, repeated, is_map, "o" in flags, "z" in flags)


def _parse(text: str) -> dict[str, Message]:
    raw: dict[str, list[Field]] = {}
    aliases: dict[str, str] = {}
    current: list[Field] | None = None
    for line in text.splitlines():
        if not line.strip():
            continue
        if line.startswith(" "):
            if current is None:
                raise ValueError(f"a field before any message in the schema table: {line!r}")
            current.append(_parse_field(line))
        elif "=" in line:
            # "A = B": Go declares A as a field-for-field copy of B (EphemeralContainerCommon).
            alias, original = (part.strip() for part in line.split("="))
            aliases[alias] = original
            current = None
        else:
            current = raw.setdefault(line.strip(), [])
    for alias, original in aliases.items():
        raw[alias] = list(raw[original])
    return {name: Message(name, tuple(fields), {f.num: f for f in fields},
                          tuple(sorted(fields, key=lambda f: f.num)))
            for name, fields in raw.items()}


MESSAGE_TYPES: dict[str, Message] = _parse(MESSAGES + STORAGE_MESSAGES + SERVED_MESSAGES
                                           + ADMISSION_POLICY_MESSAGES)
KIND_TYPES: dict[tuple[str, str], str] = {
    **{spec.gvk: spec.protobuf for spec in BUILTIN_KINDS if spec.protobuf is not None},
    **{(api_version, kind): message for api_version, kind, message
       in (line.split() for line in OTHER_KINDS.splitlines() if line.strip())}}
