"""The schemas of the built-in kinds, written compactly and parsed once at import.

Each block describes one definition::

    @core.v1.Container [flags]
    One-line description of the type.
    name!   str              A field; "!" marks it required.
    ports   [ContainerPort]  A list of another definition of the same package.
    limits  {qty}            A map of quantities.

Types: ``str``, ``int32``, ``int64``, ``bool``, ``double``, ``bytes`` (base64 string),
``qty`` (resource.Quantity), ``ios`` (IntOrString), ``time`` / ``microtime`` (RFC 3339),
``obj`` (an object with any fields), ``any`` (any JSON value), ``str(A|B)`` (string enum), ``[T]`` (list), ``{T}`` (map with
string keys), or a definition: ``pkg.version.Name`` or just ``Name`` in the same package.

Flags: ``kind`` (a top-level kind: apiVersion, kind and metadata are added, and a
``...List`` definition is generated), ``preserve`` (unknown fields are kept and accepted:
used where only the commonly used fields are described).

Descriptions are kvert's own, short paraphrases of the Kubernetes API reference.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .served_schemas import ADMISSION_POLICIES, SERVED
from .storage_schemas import STORAGE

# Short package prefixes -> the definition name prefixes Kubernetes uses.
PACKAGES = {
    "core.v1": "io.k8s.api.core.v1",
    "authentication.v1": "io.k8s.api.authentication.v1",
    "apps.v1": "io.k8s.api.apps.v1",
    "batch.v1": "io.k8s.api.batch.v1",
    "policy.v1": "io.k8s.api.policy.v1",
    "scheduling.v1": "io.k8s.api.scheduling.v1",
    "node.v1": "io.k8s.api.node.v1",
    "coordination.v1": "io.k8s.api.coordination.v1",
    "discovery.v1": "io.k8s.api.discovery.v1",
    "networking.v1": "io.k8s.api.networking.v1",
    "certificates.v1": "io.k8s.api.certificates.v1",
    "storage.v1": "io.k8s.api.storage.v1",
    "rbac.v1": "io.k8s.api.rbac.v1",
    "authorization.v1": "io.k8s.api.authorization.v1",
    "events.v1": "io.k8s.api.events.v1",
    "autoscaling.v1": "io.k8s.api.autoscaling.v1",
    "autoscaling.v2": "io.k8s.api.autoscaling.v2",
    "scheduling.v1alpha1": "io.k8s.api.scheduling.v1alpha1",
    "resource.v1": "io.k8s.api.resource.v1",
    "admissionregistration.v1": "io.k8s.api.admissionregistration.v1",
    "apiextensions.v1": "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1",
    "apiregistration.v1": "io.k8s.kube-aggregator.pkg.apis.apiregistration.v1",
    "flowcontrol.v1": "io.k8s.api.flowcontrol.v1",
    "meta.v1": "io.k8s.apimachinery.pkg.apis.meta.v1",
    "version": "io.k8s.apimachinery.pkg.version",
    # autoscaling.k8s.io is served as a custom resource: its definitions are named the way the
    # CRD OpenAPI builder names them (reversed group).
    "vpa.v1": "io.k8s.autoscaling.v1",
}

QUANTITY = "io.k8s.apimachinery.pkg.api.resource.Quantity"
INT_OR_STRING = "io.k8s.apimachinery.pkg.util.intstr.IntOrString"
TIME = "io.k8s.apimachinery.pkg.apis.meta.v1.Time"
MICRO_TIME = "io.k8s.apimachinery.pkg.apis.meta.v1.MicroTime"
OBJECT_META = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
LIST_META = "io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta"

API_VERSION_DESC = ("APIVersion is the versioned schema of this representation of the object. "
                    "Servers convert recognized schemas to the latest internal value and may "
                    "reject unrecognized values.")
KIND_DESC = ("Kind is the REST resource this object represents, in CamelCase. Servers may infer it "
             "from the endpoint the client submits requests to. Cannot be updated.")
METADATA_DESC = "Standard object's metadata."
LIST_METADATA_DESC = "Standard list metadata."


_META = r"""
@meta.v1.ObjectMeta
ObjectMeta is the metadata every persisted resource has: name, namespace, labels, annotations, ownership and bookkeeping set by the server.
name                        str          Name, unique within a namespace (or the cluster for cluster-scoped kinds). Required on create unless generateName is set. Cannot be updated.
generateName                str          Optional prefix the server uses to generate a unique name when name is empty: a random suffix is appended.
namespace                   str          Namespace of the object. An empty namespace means "default" for namespaced kinds; cluster-scoped kinds have none. Cannot be updated.
selfLink                    str          Deprecated and no longer set by the server.
uid                         str          Unique identifier of this object in time and space, assigned by the server on create. Read-only.
resourceVersion             str          Opaque version of the object's internal state, changed on every write. Used for optimistic concurrency, change detection and watches. Read-only.
generation                  int64        Sequence number of a specific generation of the desired state, bumped by the server when the spec changes. Read-only.
creationTimestamp           time         When the object was created, set by the server. Read-only.
deletionTimestamp           time         When the object will be deleted, set by the server when a graceful deletion is requested. Read-only.
deletionGracePeriodSeconds  int64        Seconds the object is allowed to terminate gracefully before removal. Set only with deletionTimestamp. Read-only.
labels                      {str}        Map of string keys and values used to organize and select objects (by label selectors on controllers and services).
annotations                 {str}        Unstructured key/value map to store arbitrary, non-identifying metadata for tools and libraries.
ownerReferences             [OwnerReference]  Objects this object depends on. When every owner is deleted the garbage collector deletes this object; one owner may be the managing controller.
finalizers                  [str]        Names of hooks that must run and remove themselves before the object is deleted from storage.
managedFields               [ManagedFieldsEntry]  Which field manager owns which fields, maintained by server-side apply. Mostly for internal housekeeping.

@meta.v1.OwnerReference
OwnerReference identifies an owning object, which must be in the same namespace as the dependent or be cluster-scoped.
apiVersion!          str    API version of the owner.
kind!                str    Kind of the owner.
name!                str    Name of the owner.
uid!                 str    UID of the owner.
controller           bool   True if the owner is the managing controller of this object.
blockOwnerDeletion   bool   If true and the owner has the foregroundDeletion finalizer, the owner cannot be removed from storage until this reference is removed.

@meta.v1.ManagedFieldsEntry
ManagedFieldsEntry records the set of fields a field manager owns and the operation that set them.
manager      str    Identifier of the workflow managing these fields.
operation    str    Operation that created this entry: Apply or Update.
apiVersion   str    Version of the resource the field set applies to.
time         time   When the entry was added or last changed.
fieldsType   str    Format of fieldsV1; only "FieldsV1" exists.
fieldsV1     obj    The owned fields, as a trie of field paths.
subresource  str    Subresource used to update the object, empty for the main resource.

@meta.v1.ListMeta
ListMeta is the metadata of list responses.
selfLink            str     Deprecated and no longer set by the server.
resourceVersion     str     Version of the list, usable as the starting point of a watch.
continue            str     Set when more results are available: pass it to the next list call to get the next page.
remainingItemCount  int64   Number of items remaining after this page, when known. It is an estimate if the list used a label or field selector.

@meta.v1.LabelSelector
A label query over a set of objects. The results of matchLabels and matchExpressions are ANDed; an empty selector matches everything and a null one nothing.
matchLabels       {str}                        Map of {key,value} pairs; each pair equals a matchExpressions element with operator In and a single value.
matchExpressions  [LabelSelectorRequirement]   List of label selector requirements, ANDed.

@meta.v1.LabelSelectorRequirement
A selector requirement: a key, an operator and values.
key!       str                               The label key the selector applies to.
operator!  str(In|NotIn|Exists|DoesNotExist) How the key relates to the values.
values     [str]                             Values for In and NotIn (non-empty); must be empty for Exists and DoesNotExist.

@meta.v1.Condition
Condition describes one aspect of the current state of a resource.
type!                str      Type of the condition, in CamelCase (for example Ready or Available).
status!              str(True|False|Unknown)  Status of the condition.
observedGeneration   int64    The metadata.generation the condition was computed from.
lastTransitionTime!  time     Last time the condition changed status.
reason!              str      Programmatic CamelCase identifier of the reason for the last transition.
message!             str      Human readable message about the transition; may be empty.

@meta.v1.Status
Status is returned by calls that do not return another object, and for errors.
apiVersion  str            APIVersion of this representation.
kind        str            Kind of this representation (Status).
metadata    ListMeta       Standard list metadata.
status      str            "Success" or "Failure".
message     str            Human readable description of the status.
reason      str            Machine readable CamelCase reason (for example NotFound, AlreadyExists, Conflict, Invalid).
details     StatusDetails  Extended data associated with the reason.
code        int32          Suggested HTTP return code for this status.

@meta.v1.StatusDetails
StatusDetails carries extra information about a failed request.
name               str            Name of the resource the status is about.
group              str            Group of the resource.
kind               str            Kind of the resource.
uid                str            UID of the resource.
causes             [StatusCause]  More detailed causes, for example one per invalid field.
retryAfterSeconds  int32          Seconds to wait before retrying, if suggested.

@meta.v1.StatusCause
StatusCause is one reason a request failed.
reason   str  Machine readable reason (for example FieldValueInvalid, FieldValueRequired).
message  str  Human readable description of the cause.
field    str  Path of the field that caused the error, for example "spec.containers[0].name".

@meta.v1.DeleteOptions
DeleteOptions may be sent with a delete request.
apiVersion          str            APIVersion of this representation.
kind                str            Kind of this representation.
gracePeriodSeconds  int64          Seconds before the object is deleted; zero deletes immediately, unset uses the kind's default.
preconditions       Preconditions  Conditions that must hold for the deletion to proceed.
orphanDependents    bool           Deprecated: use propagationPolicy.
propagationPolicy   str            How dependents are garbage collected: Orphan, Background or Foreground.
dryRun              [str]          If set to ["All"], every stage runs but nothing is persisted.
ignoreStoreReadErrorWithClusterBreakingPotential  bool  Unsafe deletion of objects that cannot be read from storage.

@meta.v1.Preconditions
Preconditions that must be met before an operation is carried out.
uid              str  The target object's UID.
resourceVersion  str  The target object's resourceVersion.

@meta.v1.WatchEvent
One event of a watch stream.
type!    str  ADDED, MODIFIED, DELETED, BOOKMARK or ERROR.
object!  obj  The object (for ERROR a Status). For DELETED, the last state before deletion; for BOOKMARK, only the resourceVersion is meaningful.

@meta.v1.Patch
The body of a PATCH request; its format depends on the request Content-Type.

@meta.v1.APIResource
APIResource describes one resource served in a group version.
name!                str    Plural name of the resource (or resource/subresource).
singularName!        str    Singular name of the resource.
namespaced!          bool   Whether the resource is namespaced.
group                str    Group of the resource, when it differs from the list's.
version              str    Version of the resource, when it differs from the list's.
kind!                str    Kind of the resource.
verbs!               [str]  Supported verbs: get, list, watch, create, update, patch, delete, deletecollection.
shortNames           [str]  Suggested short names.
categories           [str]  Groups of resources this one belongs to, for example "all".
storageVersionHash   str    Opaque hash of the storage version.

@meta.v1.APIResourceList
The resources served in one group version.
apiVersion     str            APIVersion of this representation.
kind           str            Kind of this representation.
groupVersion!  str            The group and version listed.
resources!     [APIResource]  The resources served.

@meta.v1.GroupVersionForDiscovery
A served version of a group.
groupVersion!  str  "group/version".
version!       str  The version.

@meta.v1.ServerAddressByClientCIDR
The address clients in a network should use to reach the server.
clientCIDR!     str  CIDR the client address must match.
serverAddress!  str  host or host:port of the server for such clients.

@meta.v1.APIGroup
An API group and its versions.
apiVersion                  str                           APIVersion of this representation.
kind                        str                           Kind of this representation.
name!                       str                           Name of the group.
versions!                   [GroupVersionForDiscovery]    Versions served.
preferredVersion            GroupVersionForDiscovery      The version clients should use.
serverAddressByClientCIDRs  [ServerAddressByClientCIDR]   Addresses by client network.

@meta.v1.APIGroupList
The API groups served.
apiVersion  str         APIVersion of this representation.
kind        str         Kind of this representation.
groups!     [APIGroup]  The groups.

@meta.v1.APIVersions
The versions of the legacy core API (at /api).
apiVersion                   str                          APIVersion of this representation.
kind                         str                          Kind of this representation.
versions!                    [str]                        Versions served.
serverAddressByClientCIDRs!  [ServerAddressByClientCIDR]  Addresses by client network.

@version.Info
Version information of the server.
major!         str  Major version.
minor!         str  Minor version.
gitVersion!    str  Full version string.
gitCommit!     str  Source commit.
gitTreeState!  str  State of the source tree.
buildDate!     str  Build date.
goVersion!     str  Toolchain version.
compiler!      str  Compiler.
platform!      str  OS/architecture.
emulationMajor            str  Major version the server emulates.
emulationMinor            str  Minor version the server emulates.
minCompatibilityMajor     str  Oldest major version the server is compatible with.
minCompatibilityMinor     str  Oldest minor version the server is compatible with.

@autoscaling.v1.Scale kind
Scale is the scale subresource of a scalable resource (deployments/scale, replicasets/scale).
spec    ScaleSpec    Desired number of replicas.
status  ScaleStatus  Observed number of replicas; read-only.

@autoscaling.v1.ScaleSpec
Desired scale.
replicas  int32  Desired number of instances of the scaled object.

@autoscaling.v1.ScaleStatus
Observed scale.
replicas!  int32  Actual number of observed instances.
selector   str    Label query (string form) over the pods counted by replicas.

@policy.v1.Eviction
Eviction asks for the graceful, budget-respecting deletion of a pod: POST it to pods/{name}/eviction. A PodDisruptionBudget may refuse it with 429.
apiVersion     str                   APIVersion of this representation.
kind           str                   Kind of this representation.
metadata       meta.v1.ObjectMeta    Name and namespace of the pod to evict.
deleteOptions  meta.v1.DeleteOptions Options for the deletion.

@core.v1.Binding
Binding assigns a pod to a node: POST it to pods/{name}/binding. Used by schedulers.
apiVersion  str                  APIVersion of this representation.
kind        str                  Kind of this representation.
metadata    meta.v1.ObjectMeta   Name and namespace of the pod being bound.
target!     ObjectReference      The node to bind to (kind Node, name).

@core.v1.ObjectReference
A reference to an object, possibly to a field of it.
kind             str  Kind of the referent.
namespace        str  Namespace of the referent.
name             str  Name of the referent.
uid              str  UID of the referent.
apiVersion       str  API version of the referent.
resourceVersion  str  Specific resourceVersion the reference is about, if any.
fieldPath        str  A field within the object, for example "spec.containers{name}".

@core.v1.LocalObjectReference
A reference to an object in the same namespace, by name.
name  str  Name of the referent.
"""


_POD = r"""
@core.v1.Pod kind
A Pod is one or more containers scheduled together onto a node, sharing network and volumes. kvert resizes pod resources in place through the pods/resize subresource.
spec    PodSpec    Desired behavior of the pod.
status  PodStatus  Most recently observed status of the pod, written by the node agent and scheduler. Read-only.

@core.v1.PodTemplateSpec
A template that workload controllers create pods from.
metadata  meta.v1.ObjectMeta  Metadata of the pods created from this template (labels must match the controller's selector).
spec      PodSpec             Desired behavior of the pods.

@core.v1.PodSpec
PodSpec is the description of a pod: its containers, scheduling constraints and runtime settings.
containers!                     [Container]              Application containers of the pod. At least one; cannot be added or removed after creation.
initContainers                  [Container]              Containers run in order before the app containers start. An init container with restartPolicy Always is a sidecar that keeps running. Their resources count toward the pod's effective requests.
ephemeralContainers             [EphemeralContainer]     Debugging containers added to a running pod through the ephemeralcontainers subresource.
restartPolicy                   str(Always|OnFailure|Never)  Restart policy of the pod's containers. Default Always.
terminationGracePeriodSeconds   int64                    Seconds the pod has to stop gracefully after deletion starts, before its processes are killed. Default 30.
activeDeadlineSeconds           int64                    Seconds the pod may be active on a node, counted from its start, before it is failed.
dnsPolicy                       str(ClusterFirst|ClusterFirstWithHostNet|Default|None)  DNS policy of the pod. Default ClusterFirst.
nodeSelector                    {str}                    Labels a node must have for the pod to be scheduled there.
serviceAccountName              str                      Service account the pod runs as.
serviceAccount                  str                      Deprecated alias of serviceAccountName.
automountServiceAccountToken    bool                     Whether a service account token is mounted automatically.
nodeName                        str                      Node the pod runs on. Set by the scheduler through the binding subresource; setting it on create bypasses the scheduler.
hostNetwork                     bool                     Use the node's network namespace.
hostPID                         bool                     Use the node's PID namespace.
hostIPC                         bool                     Use the node's IPC namespace.
shareProcessNamespace           bool                     Share one PID namespace among the pod's containers.
securityContext                 PodSecurityContext       Pod-level security attributes and common container settings.
volumes                         [Volume]                 Volumes the pod's containers can mount.
imagePullSecrets                [LocalObjectReference]   Secrets in the pod's namespace used to pull images.
hostname                        str                      Hostname of the pod; defaults to the pod name.
subdomain                       str                      If set, the pod's FQDN is "<hostname>.<subdomain>.<namespace>.svc.<cluster domain>".
affinity                        Affinity                 Node affinity, pod affinity and pod anti-affinity scheduling constraints.
schedulerName                   str                      Scheduler that places the pod. Default "default-scheduler".
tolerations                     [Toleration]             Taints the pod tolerates.
hostAliases                     [HostAlias]              Extra entries for the pod's /etc/hosts.
priorityClassName               str                      Name of the PriorityClass giving the pod its priority. Pods with a higher priority are scheduled first and may preempt lower ones.
priority                        int32                    Priority value, filled in from priorityClassName by admission. Higher is more important.
dnsConfig                       PodDNSConfig             DNS parameters merged into those generated from dnsPolicy.
readinessGates                  [PodReadinessGate]       Extra conditions that must be True for the pod to be ready.
runtimeClassName                str                      RuntimeClass used to run the pod; its overhead is added to the pod's resource accounting.
enableServiceLinks              bool                     Whether information about services is injected as environment variables. Default true.
preemptionPolicy                str(Never|PreemptLowerPriority)  Whether the pod may preempt lower-priority pods. Filled in from the priority class.
overhead                        {qty}                    Resources consumed by the pod's sandbox on top of its containers, set by admission from the RuntimeClass. Counted by the scheduler and quota.
topologySpreadConstraints       [TopologySpreadConstraint]  How the pods of a group spread across topology domains (zones, nodes).
setHostnameAsFQDN               bool                     Use the fully qualified domain name as the pod's hostname.
os                              PodOS                    Operating system of the pod's containers.
hostUsers                       bool                     Use the host's user namespace (default true); false gives the pod its own.
schedulingGates                 [PodSchedulingGate]      While non-empty, the pod stays unschedulable (SchedulingGated).
resourceClaims                  [PodResourceClaim]       Dynamic resource claims the pod uses.
resources                       ResourceRequirements     Pod-level resource requests and limits, shared by all containers. Only cpu, memory and hugepages.
hostnameOverride                str                      Explicit hostname for the pod, overriding the generated one.
workloadRef                     WorkloadReference        The Workload and pod group this pod belongs to, for workload-aware (gang) scheduling. Immutable.

@core.v1.WorkloadReference
Identifies the Workload object and the pod group of it that a pod belongs to.
name!               str  Name of the Workload, in the pod's namespace; a DNS subdomain. The pod stays unschedulable until the Workload exists.
podGroup!           str  Name of the pod group within the Workload; a DNS label.
podGroupReplicaKey  str  Distinguishes replicas of the same pod group: the group's policy applies to each replica separately. A DNS label when set.

@core.v1.Container
A single application container of a pod.
name!                      str                     Name of the container, a DNS label unique within the pod. Cannot be updated.
image                      str                     Container image name.
command                    [str]                   Entrypoint array, replacing the image's ENTRYPOINT. $(VAR) references are expanded from the container's environment.
args                       [str]                   Arguments to the entrypoint, replacing the image's CMD. $(VAR) references are expanded.
workingDir                 str                     Working directory; defaults to the image's.
ports                      [ContainerPort]         Ports exposed by the container (informational: any port the process listens on is reachable).
envFrom                    [EnvFromSource]         Sources (ConfigMaps, Secrets) to populate environment variables from. Keys of env take precedence.
env                        [EnvVar]                Environment variables to set in the container.
resources                  ResourceRequirements    Compute resources (cpu, memory, ...) the container requests and is limited to. Requests drive scheduling; limits are enforced by the node. Can be changed in place through the pods/resize subresource.
resizePolicy               [ContainerResizePolicy] Per resource, whether an in-place resize restarts the container. Default NotRequired for every resource.
restartPolicy              str                     Only for init containers: Always makes the init container a sidecar that runs for the pod's lifetime.
restartPolicyRules         [ContainerRestartRule]  Rules deciding, from a container's exit code, whether it is restarted. Requires restartPolicy.
volumeMounts               [VolumeMount]           Pod volumes to mount into the container's filesystem.
volumeDevices              [VolumeDevice]          Block devices the container uses.
livenessProbe              Probe                   Periodic probe of container liveness; the container is restarted if it fails.
readinessProbe             Probe                   Periodic probe of service readiness; the container is removed from service endpoints if it fails.
startupProbe               Probe                   Probe that must succeed before the other probes start.
lifecycle                  Lifecycle               Actions run on container start and before it stops.
terminationMessagePath     str                     File whose contents are written to the container status message on termination. Default /dev/termination-log.
terminationMessagePolicy   str(File|FallbackToLogsOnError)  How the termination message is populated. Default File.
imagePullPolicy            str(Always|IfNotPresent|Never)  When to pull the image. Defaults to Always for the :latest tag, IfNotPresent otherwise.
securityContext            SecurityContext         Security options the container runs with.
stdin                      bool                    Allocate a buffer for stdin.
stdinOnce                  bool                    Close stdin after the first attach session.
tty                        bool                    Allocate a TTY (requires stdin).

@core.v1.EphemeralContainer
A temporary container added to a running pod for debugging. Ephemeral containers have no resources, ports or probes and are never restarted.
name!                      str                     Name of the ephemeral container, unique within the pod.
targetContainerName        str                     Container whose namespaces (PID, IPC) this one joins.
image                      str                     Container image name.
command                    [str]                   Entrypoint array.
args                       [str]                   Arguments to the entrypoint.
workingDir                 str                     Working directory.
ports                      [ContainerPort]         Not allowed for ephemeral containers.
envFrom                    [EnvFromSource]         Sources to populate environment variables from.
env                        [EnvVar]                Environment variables.
resources                  ResourceRequirements    Not allowed: ephemeral containers use the pod's resources.
resizePolicy               [ContainerResizePolicy] Not allowed for ephemeral containers.
restartPolicy              str                     Not allowed for ephemeral containers.
restartPolicyRules         [ContainerRestartRule]  Not allowed for ephemeral containers.
volumeMounts               [VolumeMount]           Pod volumes to mount.
volumeDevices              [VolumeDevice]          Block devices to use.
livenessProbe              Probe                   Not allowed for ephemeral containers.
readinessProbe             Probe                   Not allowed for ephemeral containers.
startupProbe               Probe                   Not allowed for ephemeral containers.
lifecycle                  Lifecycle               Not allowed for ephemeral containers.
terminationMessagePath     str                     File whose contents become the termination message.
terminationMessagePolicy   str(File|FallbackToLogsOnError)  How the termination message is populated.
imagePullPolicy            str(Always|IfNotPresent|Never)  When to pull the image.
securityContext            SecurityContext         Security options.
stdin                      bool                    Allocate a buffer for stdin.
stdinOnce                  bool                    Close stdin after the first attach session.
tty                        bool                    Allocate a TTY.

@core.v1.ResourceRequirements
Compute resource requirements: requests (what the scheduler reserves) and limits (what the node enforces). Keys are resource names (cpu, memory, ephemeral-storage, hugepages-<size>, extended resources); values are quantities such as 500m, 1.5 or 128Mi.
limits    {qty}            Maximum amount of each resource the container may use. Exceeding the memory limit gets the container OOM-killed; cpu is throttled.
requests  {qty}            Minimum amount of each resource the container needs, used for scheduling. Defaults to limits when only limits are set.
claims    [ResourceClaim]  Names of the pod's resource claims this container uses (dynamic resource allocation).

@core.v1.ResourceClaim
A reference to one entry of the pod's spec.resourceClaims.
name!    str  Name of the pod resource claim.
request  str  Name of a request within the claim; empty uses the whole claim.

@core.v1.ContainerResizePolicy
How a container reacts to an in-place resize of one resource.
resourceName!   str                               The resource the policy applies to: cpu or memory.
restartPolicy!  str(NotRequired|RestartContainer) NotRequired resizes the running container; RestartContainer restarts it to apply the new value.

@core.v1.ContainerRestartRule
A rule deciding whether a container is restarted when it exits.
action!    str(Restart)                  Action taken when the rule matches.
exitCodes  ContainerRestartRuleOnExitCodes  Exit codes the rule matches.

@core.v1.ContainerRestartRuleOnExitCodes
A set of exit codes.
operator!  str(In|NotIn)  How the exit code relates to values.
values     [int32]        Exit codes.

@core.v1.ContainerPort
A network port of a container.
name           str               IANA_SVC_NAME, unique within the pod; services can refer to the port by it.
containerPort! int32             Port number on the pod's IP address.
protocol       str(SCTP|TCP|UDP) Protocol. Default TCP.
hostPort       int32             Port number to expose on the node.
hostIP         str               Node IP to bind the host port to.

@core.v1.EnvVar
An environment variable of a container.
name!      str           Name of the variable.
value      str           Value; $(VAR) references to earlier variables are expanded.
valueFrom  EnvVarSource  Source of the value; cannot be combined with value.

@core.v1.EnvVarSource
Where an environment variable's value comes from.
fieldRef          ObjectFieldSelector    A field of the pod: metadata.name, metadata.namespace, metadata.labels['<key>'], spec.nodeName, status.podIP, ...
resourceFieldRef  ResourceFieldSelector  A resource limit or request of a container: limits.cpu, requests.memory, ...
configMapKeyRef   ConfigMapKeySelector   A key of a ConfigMap.
secretKeyRef      SecretKeySelector      A key of a Secret.
fileKeyRef        FileKeySelector        A key of an env file in a volume.

@core.v1.ObjectFieldSelector
Selects a field of the pod.
apiVersion  str  Version of the schema fieldPath is written in. Default "v1".
fieldPath!  str  Path of the field.

@core.v1.ResourceFieldSelector
Selects a resource of a container (limits.cpu, limits.memory, requests.cpu, requests.memory, ...).
containerName  str  Container name; required for volumes, optional for environment variables.
resource!      str  Resource to select.
divisor        qty  Output format of the exposed value. Default "1".

@core.v1.ConfigMapKeySelector
Selects a key of a ConfigMap.
name      str   Name of the ConfigMap.
key!      str   The key.
optional  bool  Whether the ConfigMap or key may be missing.

@core.v1.SecretKeySelector
Selects a key of a Secret.
name      str   Name of the Secret.
key!      str   The key.
optional  bool  Whether the Secret or key may be missing.

@core.v1.FileKeySelector
Selects a key of an env file.
volumeName!  str   Name of the volume holding the file.
path!        str   Path of the file in the volume.
key!         str   The key.
optional     bool  Whether the file or key may be missing.

@core.v1.EnvFromSource
A source of a set of environment variables.
prefix        str                 Prefix added to every key.
configMapRef  ConfigMapEnvSource  The ConfigMap to read.
secretRef     SecretEnvSource     The Secret to read.

@core.v1.ConfigMapEnvSource
A ConfigMap whose keys become environment variables.
name      str   Name of the ConfigMap.
optional  bool  Whether the ConfigMap may be missing.

@core.v1.SecretEnvSource
A Secret whose keys become environment variables.
name      str   Name of the Secret.
optional  bool  Whether the Secret may be missing.

@core.v1.VolumeMount
Mounts a pod volume into a container.
name!              str   Name of the volume (a spec.volumes entry).
mountPath!         str   Path in the container where the volume is mounted; must not contain ':'.
readOnly           bool  Mount read-only. Default false.
recursiveReadOnly  str   Whether read-only mounts are recursively read-only: Disabled, IfPossible or Enabled.
subPath            str   Path within the volume to mount instead of its root.
subPathExpr        str   Like subPath, with $(VAR) expansion from the container environment.
mountPropagation   str(Bidirectional|HostToContainer|None)  How mounts propagate between host and container.

@core.v1.VolumeDevice
A raw block volume exposed to a container.
name!        str  Name of a persistentVolumeClaim volume of the pod.
devicePath!  str  Path of the device in the container.

@core.v1.Probe
A health check run by the node agent against a container. Exactly one handler (exec, httpGet, tcpSocket, grpc) is set.
exec                           ExecAction       Run a command in the container; exit status 0 is success.
httpGet                        HTTPGetAction    HTTP GET request; a 2xx or 3xx status is success.
tcpSocket                      TCPSocketAction  Open a TCP connection; success if it connects.
grpc                           GRPCAction       gRPC health check.
initialDelaySeconds            int32            Seconds after the container starts before the first probe.
timeoutSeconds                 int32            Seconds after which a probe times out. Default 1.
periodSeconds                  int32            Seconds between probes. Default 10.
successThreshold               int32            Consecutive successes after a failure for the probe to count as successful. Default 1.
failureThreshold               int32            Consecutive failures for the probe to count as failed. Default 3.
terminationGracePeriodSeconds  int64            Grace period for the container's termination after a liveness or startup probe failure, overriding the pod's.

@core.v1.Lifecycle
Actions the node agent runs at container lifecycle events.
postStart   LifecycleHandler  Run right after the container is created; the container is restarted if it fails.
preStop     LifecycleHandler  Run before the container is terminated; counts against the termination grace period.
stopSignal  str               Signal used to stop the container.

@core.v1.LifecycleHandler
One lifecycle action; exactly one handler is set.
exec       ExecAction       Run a command.
httpGet    HTTPGetAction    HTTP GET request.
tcpSocket  TCPSocketAction  Deprecated TCP check.
sleep      SleepAction      Sleep for a while.

@core.v1.ExecAction
Run a command in the container.
command  [str]  Command line, run without a shell; exit status 0 is success.

@core.v1.HTTPGetAction
An HTTP GET request.
path         str               Path to request.
port!        ios               Number or name of the container port.
host         str               Host name; defaults to the pod IP.
scheme       str(HTTP|HTTPS)   Scheme. Default HTTP.
httpHeaders  [HTTPHeader]      Custom request headers.

@core.v1.HTTPHeader
An HTTP header.
name!   str  Header field name.
value!  str  Header field value.

@core.v1.TCPSocketAction
A TCP connection check.
port!  ios  Number or name of the port.
host   str  Host name; defaults to the pod IP.

@core.v1.GRPCAction
A gRPC health check.
port!    int32  Port number of the gRPC service.
service  str    Service name placed in the health check request.

@core.v1.SleepAction
Sleep for a duration.
seconds!  int64  Seconds to sleep.

@core.v1.SecurityContext
Security options of a container; fields set here override the pod's securityContext.
privileged                bool                          Run as privileged: processes are equivalent to root on the host. Default false.
runAsUser                 int64                         UID of the container process.
runAsGroup                int64                         GID of the container process.
runAsNonRoot              bool                          Refuse to start the container if it would run as UID 0.
readOnlyRootFilesystem    bool                          Mount the root filesystem read-only. Default false.
allowPrivilegeEscalation  bool                          Whether a process can gain more privileges than its parent (no_new_privs).
capabilities              Capabilities                  POSIX capabilities to add and drop.
seccompProfile            SeccompProfile                Seccomp profile of the container.
seLinuxOptions            SELinuxOptions                SELinux context of the container.
appArmorProfile           AppArmorProfile               AppArmor profile of the container.
windowsOptions            WindowsSecurityContextOptions Windows-specific options.
procMount                 str(Default|Unmasked)         Type of /proc mount. Default Default.

@core.v1.PodSecurityContext
Pod-level security attributes; container settings take precedence.
runAsUser                 int64                          UID of the containers' processes.
runAsGroup                int64                          GID of the containers' processes.
runAsNonRoot              bool                           Refuse to start containers that would run as UID 0.
fsGroup                   int64                          Supplemental group owning the pod's volumes.
fsGroupChangePolicy       str(Always|OnRootMismatch)     When volume ownership and permissions are changed.
supplementalGroups        [int64]                        Extra groups of the first process of every container.
supplementalGroupsPolicy  str(Merge|Strict)              How supplemental groups of the first process are computed.
sysctls                   [Sysctl]                       Namespaced sysctls set for the pod.
seccompProfile            SeccompProfile                 Seccomp profile of the containers.
seLinuxOptions            SELinuxOptions                 SELinux context of the containers.
seLinuxChangePolicy       str                            How the SELinux label is applied to volumes: Recursive or MountOption.
appArmorProfile           AppArmorProfile                AppArmor profile of the containers.
windowsOptions            WindowsSecurityContextOptions  Windows-specific options.

@core.v1.Capabilities
POSIX capabilities to add to and drop from a container.
add   [str]  Capabilities to add.
drop  [str]  Capabilities to drop.

@core.v1.SeccompProfile
A seccomp profile.
type!             str(Localhost|RuntimeDefault|Unconfined)  Kind of profile.
localhostProfile  str                                       Profile file on the node, for type Localhost.

@core.v1.AppArmorProfile
An AppArmor profile.
type!             str(Localhost|RuntimeDefault|Unconfined)  Kind of profile.
localhostProfile  str                                       Profile loaded on the node, for type Localhost.

@core.v1.SELinuxOptions
An SELinux context.
user   str  SELinux user label.
role   str  SELinux role label.
type   str  SELinux type label.
level  str  SELinux level label.

@core.v1.WindowsSecurityContextOptions
Windows-specific security options.
gmsaCredentialSpecName  str   Name of the GMSA credential spec.
gmsaCredentialSpec      str   Contents of the GMSA credential spec.
runAsUserName           str   User name to run the entrypoint as.
hostProcess             bool  Run as a host process container.

@core.v1.Sysctl
A kernel parameter.
name!   str  Name of the sysctl.
value!  str  Value of the sysctl.

@core.v1.Volume
A named volume the pod's containers can mount. Exactly one source is set.
name!                  str                                Name of the volume, a DNS label unique within the pod.
emptyDir               EmptyDirVolumeSource               A temporary directory sharing the pod's lifetime.
configMap              ConfigMapVolumeSource              A ConfigMap's keys as files.
secret                 SecretVolumeSource                 A Secret's keys as files.
persistentVolumeClaim  PersistentVolumeClaimVolumeSource  A PersistentVolumeClaim in the pod's namespace.
hostPath               HostPathVolumeSource               A file or directory of the node.
projected              ProjectedVolumeSource              Several sources projected into one directory.
downwardAPI            DownwardAPIVolumeSource            Pod information as files.
ephemeral              EphemeralVolumeSource              A volume provisioned for the pod by a storage driver, deleted with the pod.
csi                    CSIVolumeSource                    A volume provided by a CSI driver.
image                  ImageVolumeSource                  An OCI image or artifact mounted read-only.
nfs                    NFSVolumeSource                    An NFS mount.
awsElasticBlockStore   obj                                Deprecated in-tree AWS EBS volume.
azureDisk              obj                                Deprecated in-tree Azure disk.
azureFile              obj                                Deprecated in-tree Azure file share.
cephfs                 obj                                Deprecated CephFS mount.
cinder                 obj                                Deprecated in-tree Cinder volume.
fc                     obj                                Fibre Channel volume.
flexVolume             obj                                Deprecated FlexVolume plugin volume.
flocker                obj                                Deprecated Flocker volume.
gcePersistentDisk      obj                                Deprecated in-tree GCE persistent disk.
gitRepo                obj                                Deprecated git repository checkout.
glusterfs              obj                                Deprecated GlusterFS mount.
iscsi                  obj                                iSCSI disk.
photonPersistentDisk   obj                                Deprecated Photon persistent disk.
portworxVolume         obj                                Deprecated Portworx volume.
quobyte                obj                                Deprecated Quobyte mount.
rbd                    obj                                Deprecated Rados block device.
scaleIO                obj                                Deprecated ScaleIO volume.
storageos              obj                                Deprecated StorageOS volume.
vsphereVolume          obj                                Deprecated vSphere volume.

@core.v1.EmptyDirVolumeSource
An empty directory for the pod.
medium     str  Storage medium: "" (the node's default) or Memory (tmpfs).
sizeLimit  qty  Maximum size of the directory; memory-backed directories count toward the container's memory.

@core.v1.ConfigMapVolumeSource
Projects the keys of a ConfigMap as files.
name         str          Name of the ConfigMap.
items        [KeyToPath]  Keys to project and their paths; all keys if unset.
defaultMode  int32        Mode bits of the files. Default 0644.
optional     bool         Whether the ConfigMap or its keys may be missing.

@core.v1.SecretVolumeSource
Projects the keys of a Secret as files.
secretName   str          Name of the Secret.
items        [KeyToPath]  Keys to project and their paths; all keys if unset.
defaultMode  int32        Mode bits of the files. Default 0644.
optional     bool         Whether the Secret or its keys may be missing.

@core.v1.KeyToPath
Maps a key to a file path.
key!  str    The key.
path! str    Relative path of the file.
mode  int32  Mode bits of the file.

@core.v1.PersistentVolumeClaimVolumeSource
A reference to a PersistentVolumeClaim.
claimName!  str   Name of the claim in the pod's namespace.
readOnly    bool  Mount read-only.

@core.v1.HostPathVolumeSource
A path on the node.
path!  str  Path on the node.
type   str  Expected type: "", DirectoryOrCreate, Directory, FileOrCreate, File, Socket, CharDevice, BlockDevice.

@core.v1.ProjectedVolumeSource
Several sources projected into one directory.
sources      [VolumeProjection]  The sources.
defaultMode  int32               Mode bits of the files.

@core.v1.VolumeProjection
One projected source; exactly one field is set.
configMap            ConfigMapProjection            Keys of a ConfigMap.
secret               SecretProjection               Keys of a Secret.
downwardAPI          DownwardAPIProjection          Pod information.
serviceAccountToken  ServiceAccountTokenProjection  A service account token.
clusterTrustBundle   obj                            Certificates of ClusterTrustBundles.
podCertificate       obj                            A pod certificate and key.

@core.v1.ConfigMapProjection
A ConfigMap projected into a volume.
name      str          Name of the ConfigMap.
items     [KeyToPath]  Keys to project.
optional  bool         Whether the ConfigMap may be missing.

@core.v1.SecretProjection
A Secret projected into a volume.
name      str          Name of the Secret.
items     [KeyToPath]  Keys to project.
optional  bool         Whether the Secret may be missing.

@core.v1.DownwardAPIProjection
Pod information projected into a volume.
items  [DownwardAPIVolumeFile]  The files.

@core.v1.ServiceAccountTokenProjection
A service account token projected into a volume.
path!              str    Path of the token file.
audience           str    Intended audience of the token.
expirationSeconds  int64  Requested lifetime of the token. Default 1 hour.

@core.v1.DownwardAPIVolumeSource
Pod information as files.
items        [DownwardAPIVolumeFile]  The files.
defaultMode  int32                    Mode bits of the files.

@core.v1.DownwardAPIVolumeFile
A file holding a pod field or container resource.
path!             str                    Relative path of the file.
fieldRef          ObjectFieldSelector    A pod field: metadata.name, metadata.namespace, metadata.labels, metadata.annotations.
resourceFieldRef  ResourceFieldSelector  A container resource limit or request.
mode              int32                  Mode bits of the file.

@core.v1.CSIVolumeSource
A volume provided by a CSI driver.
driver!               str                   Name of the CSI driver.
readOnly              bool                  Mount read-only.
fsType                str                   Filesystem type.
volumeAttributes      {str}                 Driver-specific properties.
nodePublishSecretRef  LocalObjectReference  Secret passed to the driver.

@core.v1.EphemeralVolumeSource
A volume provisioned for the pod from a claim template.
volumeClaimTemplate  obj  Template of the PersistentVolumeClaim ({metadata, spec}).

@core.v1.ImageVolumeSource
An OCI image or artifact as a volume.
reference   str                          Image reference.
pullPolicy  str(Always|IfNotPresent|Never)  When to pull the image.

@core.v1.NFSVolumeSource
An NFS export.
server!   str   Host name or IP of the NFS server.
path!     str   Exported path.
readOnly  bool  Mount read-only.

@core.v1.Affinity
Scheduling constraints of the pod.
nodeAffinity     NodeAffinity     Constraints on the nodes the pod can run on.
podAffinity      PodAffinity      Co-locate the pod with other pods (same node, zone, ...).
podAntiAffinity  PodAntiAffinity  Keep the pod away from other pods.

@core.v1.NodeAffinity
Node affinity: hard and soft rules on node labels and fields.
requiredDuringSchedulingIgnoredDuringExecution   NodeSelector                 Rules a node must satisfy for the pod to be scheduled there (terms are ORed). Not re-checked once the pod runs.
preferredDuringSchedulingIgnoredDuringExecution  [PreferredSchedulingTerm]    Preferences: nodes matching a term get its weight added to their score.

@core.v1.NodeSelector
A set of node selector terms, ORed. An empty list matches nothing.
nodeSelectorTerms!  [NodeSelectorTerm]  The terms.

@core.v1.NodeSelectorTerm
A node selector term: its requirements are ANDed. An empty term matches nothing.
matchExpressions  [NodeSelectorRequirement]  Requirements on node labels.
matchFields       [NodeSelectorRequirement]  Requirements on node fields (only metadata.name).

@core.v1.NodeSelectorRequirement
A requirement on a node label or field.
key!       str                                     Label key or field name.
operator!  str(DoesNotExist|Exists|Gt|In|Lt|NotIn) How the key relates to the values.
values     [str]                                   Values: non-empty for In/NotIn, one integer for Gt/Lt, empty for Exists/DoesNotExist.

@core.v1.PreferredSchedulingTerm
A weighted node preference.
weight!      int32             Weight in the range 1-100 added to a matching node's score.
preference!  NodeSelectorTerm  The node selector term.

@core.v1.PodAffinity
Pod affinity rules.
requiredDuringSchedulingIgnoredDuringExecution   [PodAffinityTerm]          Terms that must all be satisfied on the candidate node.
preferredDuringSchedulingIgnoredDuringExecution  [WeightedPodAffinityTerm]  Soft terms; their weights add to a node's score.

@core.v1.PodAntiAffinity
Pod anti-affinity rules.
requiredDuringSchedulingIgnoredDuringExecution   [PodAffinityTerm]          Terms no node running matching pods may violate.
preferredDuringSchedulingIgnoredDuringExecution  [WeightedPodAffinityTerm]  Soft terms.

@core.v1.WeightedPodAffinityTerm
A weighted pod affinity term.
weight!           int32            Weight in the range 1-100.
podAffinityTerm!  PodAffinityTerm  The term.

@core.v1.PodAffinityTerm
Pods matching labelSelector in the given namespaces, on nodes sharing the topologyKey value.
labelSelector      meta.v1.LabelSelector  Label query over pods.
namespaceSelector  meta.v1.LabelSelector  Label query over namespaces; combined with namespaces. Null and empty namespaces mean the pod's own namespace.
namespaces         [str]                  Namespaces the term applies to.
topologyKey!       str                    Node label whose value defines a topology domain (for example kubernetes.io/hostname or topology.kubernetes.io/zone).
matchLabelKeys     [str]                  Pod label keys whose values from the incoming pod are ANDed into labelSelector.
mismatchLabelKeys  [str]                  Pod label keys whose values from the incoming pod must not match.

@core.v1.Toleration
A toleration lets a pod be scheduled onto (or keep running on) a node with a matching taint.
key                str                                  Taint key; empty with operator Exists matches every taint.
operator           str(Equal|Exists)                    Relation to the value. Default Equal.
value              str                                  Taint value to match (empty for Exists).
effect             str(NoExecute|NoSchedule|PreferNoSchedule)  Taint effect to match; empty matches all.
tolerationSeconds  int64                                For NoExecute: how long the pod stays bound after the taint appears. Unset means forever.

@core.v1.TopologySpreadConstraint
How matching pods spread across the domains of a topology key.
maxSkew!            int32                          Maximum allowed difference in matching pods between domains.
topologyKey!        str                            Node label defining the domains.
whenUnsatisfiable!  str(DoNotSchedule|ScheduleAnyway)  What to do with a pod that would violate the constraint.
labelSelector       meta.v1.LabelSelector          The pods counted.
minDomains          int32                          Minimum number of eligible domains.
nodeAffinityPolicy  str(Honor|Ignore)              Whether node affinity and nodeSelector limit the domains. Default Honor.
nodeTaintsPolicy    str(Honor|Ignore)              Whether node taints limit the domains. Default Ignore.
matchLabelKeys      [str]                          Pod label keys whose values from the incoming pod are ANDed into labelSelector.

@core.v1.HostAlias
An /etc/hosts entry.
ip!        str    IP address.
hostnames  [str]  Host names for the address.

@core.v1.PodDNSConfig
DNS settings of a pod.
nameservers  [str]                 DNS name server addresses.
searches     [str]                 DNS search domains.
options      [PodDNSConfigOption]  Resolver options.

@core.v1.PodDNSConfigOption
A resolver option.
name   str  Option name.
value  str  Option value.

@core.v1.PodReadinessGate
A pod condition that must be True for the pod to be ready.
conditionType!  str  Type of the condition in the pod's status.conditions.

@core.v1.PodSchedulingGate
A gate that keeps the pod from being scheduled while present.
name!  str  Name of the gate.

@core.v1.PodOS
The operating system of a pod.
name!  str(linux|windows)  Name of the operating system.

@core.v1.PodResourceClaim
A named reference to a ResourceClaim used by the pod.
name!                      str  Name of the claim within the pod.
resourceClaimName          str  Name of an existing ResourceClaim.
resourceClaimTemplateName  str  Name of a ResourceClaimTemplate to create a claim from.

@core.v1.PodStatus
The observed state of a pod. Written by the scheduler (PodScheduled) and the node agent.
phase                       str(Pending|Running|Succeeded|Failed|Unknown)  Lifecycle summary of the pod.
conditions                  [PodCondition]        Current service state: PodScheduled, Initialized, ContainersReady, Ready, PodResizePending, PodResizeInProgress, DisruptionTarget, ...
message                     str                   Human readable message about the pod's state.
reason                      str                   Brief CamelCase reason for the pod's state, for example Evicted.
nominatedNodeName           str                   Node the pod is expected to run on once preemption of lower-priority pods there completes.
hostIP                      str                   Primary IP address of the node the pod runs on.
hostIPs                     [HostIP]              IP addresses of the node.
podIP                       str                   Primary IP address of the pod.
podIPs                      [PodIP]               IP addresses of the pod.
startTime                   time                  When the node agent accepted the pod, before pulling images.
initContainerStatuses       [ContainerStatus]     Status of each init container.
containerStatuses           [ContainerStatus]     Status of each app container, including the resources allocated to and applied to it.
ephemeralContainerStatuses  [ContainerStatus]     Status of each ephemeral container.
qosClass                    str(BestEffort|Burstable|Guaranteed)  Quality of service class computed from the containers' requests and limits. Fixed at creation: resizes must keep it.
resize                      str(Deferred|InProgress|Infeasible|Proposed)  Deprecated: the state of an in-place resize, replaced by the PodResizePending and PodResizeInProgress conditions.
resourceClaimStatuses       [PodResourceClaimStatus]  Names of the ResourceClaims generated for the pod.
observedGeneration          int64                 The pod metadata.generation this status was computed from.
allocatedResources          {qty}                 Pod-level resources allocated by the node (with pod-level resources).
resources                   ResourceRequirements  Pod-level resources actually applied.
extendedResourceClaimStatus obj                   The ResourceClaim created for the pod's extended resource requests, when those are satisfied by dynamic resource allocation.

@core.v1.PodCondition
One aspect of a pod's state.
type!               str    Type: PodScheduled, Initialized, ContainersReady, Ready, PodResizePending, PodResizeInProgress, DisruptionTarget, ...
status!             str(True|False|Unknown)  Status of the condition.
observedGeneration  int64  Pod generation the condition was computed from.
lastProbeTime       time   Last time the condition was probed.
lastTransitionTime  time   Last time the condition changed status.
reason              str    CamelCase reason for the last transition (for PodResizePending: Deferred or Infeasible).
message             str    Human readable details.

@core.v1.PodIP
An IP address of the pod.
ip!  str  The address.

@core.v1.HostIP
An IP address of the pod's node.
ip!  str  The address.

@core.v1.PodResourceClaimStatus
The ResourceClaim generated for a pod resource claim.
name!              str  Name of the pod resource claim.
resourceClaimName  str  Name of the generated ResourceClaim.

@core.v1.ContainerStatus
The observed state of one container.
name!                     str                   Name of the container.
state                     ContainerState        Current state.
lastState                 ContainerState        State of the previous run, when the container restarted.
ready!                    bool                  Whether the container passes its readiness probe.
restartCount!             int32                 Number of times the container restarted.
image!                    str                   Image the container runs.
imageID!                  str                   Resolved image ID.
containerID               str                   Runtime ID of the container ("<type>://<id>").
started                   bool                  Whether the container has started and passed its startup probe.
allocatedResources        {qty}                 Resources the node has allocated to the container: the admitted requests, which follow spec resources once a resize is accepted.
resources                 ResourceRequirements  Requests and limits actually applied to the running container, as reported by the runtime. They reach the desired values when an in-place resize completes.
volumeMounts              [VolumeMountStatus]   Status of the container's volume mounts.
user                      obj                   Identities of the container's first process.
allocatedResourcesStatus  [ResourceStatus]      Health of the resources allocated to the container.
stopSignal                str                   Signal that stops the container.

@core.v1.ContainerState
The state of a container: exactly one member is set. Default waiting.
waiting     ContainerStateWaiting     Not running yet.
running     ContainerStateRunning     Running.
terminated  ContainerStateTerminated  Ran and exited.

@core.v1.ContainerStateWaiting
A waiting container.
reason   str  Why it is waiting, for example ContainerCreating or CrashLoopBackOff.
message  str  Details.

@core.v1.ContainerStateRunning
A running container.
startedAt  time  When the container last (re)started.

@core.v1.ContainerStateTerminated
A terminated container.
exitCode!    int32  Exit status of the last termination.
signal       int32  Signal of the last termination.
reason       str    Brief reason, for example OOMKilled, Completed, Error.
message      str    Details.
startedAt    time   When the run started.
finishedAt   time   When the run ended.
containerID  str    Runtime ID of the container.

@core.v1.VolumeMountStatus
The status of a volume mount.
name!              str   Name of the volume.
mountPath!         str   Mount path.
readOnly           bool  Mounted read-only.
recursiveReadOnly  str   Recursive read-only state.
volumeStatus       obj   Volume-specific status.

@core.v1.ResourceStatus preserve
The health of an allocated resource.
name!      str    Name of the resource.
resources  [obj]  Health of each resource instance.
"""


_NODE = r"""
@core.v1.Node kind
A Node is a worker machine. kvert's nodes are simulated or backed by Linux cgroups; their capacity and allocatable resources drive scheduling and in-place resizes.
spec    NodeSpec    Configuration of the node.
status  NodeStatus  Most recently observed status of the node, written by the node agent. Read-only.

@core.v1.NodeSpec
The configuration of a node.
podCIDR        str       IP range assigned to the node.
podCIDRs       [str]     IP ranges assigned to the node (one per IP family).
providerID     str       Node ID given by the cloud provider.
unschedulable  bool      If true, no new pods are scheduled onto the node (cordon).
taints         [Taint]   Taints repelling pods that do not tolerate them.
configSource   obj       Deprecated and ignored.
externalID     str       Deprecated and ignored.

@core.v1.Taint
A taint: a node property repelling pods without a matching toleration.
key!       str                                         Taint key.
value      str                                         Taint value.
effect!    str(NoExecute|NoSchedule|PreferNoSchedule)  NoSchedule keeps new pods off, PreferNoSchedule avoids the node, NoExecute also evicts running pods that do not tolerate it.
timeAdded  time                                        When a NoExecute taint was added.

@core.v1.NodeStatus
The observed state of a node.
capacity         {qty}              Total resources of the node (cpu, memory, pods, ephemeral-storage, hugepages, ...).
allocatable      {qty}              Resources available to pods: capacity minus what is reserved for the system and the node agent. The scheduler fits pod requests into it. Defaults to capacity.
phase            str(Pending|Running|Terminated)  Deprecated lifecycle phase.
conditions       [NodeCondition]    Current conditions: Ready, MemoryPressure, DiskPressure, PIDPressure, NetworkUnavailable.
addresses        [NodeAddress]      Addresses reachable to the node.
daemonEndpoints  NodeDaemonEndpoints  Endpoints of the daemons on the node.
nodeInfo         NodeSystemInfo     Identifying information about the node.
images           [ContainerImage]   Images on the node.
volumesInUse     [str]              Volumes in use by the node.
volumesAttached  [AttachedVolume]   Volumes attached to the node.
config           obj                Status of dynamically assigned config (deprecated).
runtimeHandlers  [NodeRuntimeHandler]  Available runtime handlers.
features         NodeFeatures       Features implemented by the node agent.
declaredFeatures [str]              Features the node declares.

@core.v1.NodeCondition
A condition of a node.
type!               str                      Ready, MemoryPressure, DiskPressure, PIDPressure or NetworkUnavailable.
status!             str(True|False|Unknown)  Status of the condition.
lastHeartbeatTime   time                     Last time the condition was reported.
lastTransitionTime  time                     Last time the status changed.
reason              str                      CamelCase reason for the last transition.
message             str                      Human readable details.

@core.v1.NodeAddress
An address of a node.
type!     str  Hostname, InternalIP, ExternalIP, InternalDNS or ExternalDNS.
address!  str  The address.

@core.v1.NodeDaemonEndpoints
Ports of the daemons on a node.
kubeletEndpoint  DaemonEndpoint  Endpoint of the node agent.

@core.v1.DaemonEndpoint
A daemon's port.
Port!  int32  Port number.

@core.v1.NodeSystemInfo
Identifying information about a node.
machineID!                str             Machine ID.
systemUUID!               str             System UUID.
bootID!                   str             Boot ID.
kernelVersion!            str             Kernel version.
osImage!                  str             Operating system image.
containerRuntimeVersion!  str             Container runtime "<name>://<version>".
kubeletVersion!           str             Node agent version.
kubeProxyVersion!         str             Deprecated.
operatingSystem!          str             Operating system (linux).
architecture!             str             Architecture (amd64, arm64, ...).
swap                      NodeSwapStatus  Swap information.

@core.v1.NodeSwapStatus
Swap memory of a node.
capacity  int64  Swap capacity in bytes.

@core.v1.ContainerImage
An image on a node.
names      [str]  Names (tags and digests) of the image.
sizeBytes  int64  Size of the image in bytes.

@core.v1.AttachedVolume
A volume attached to a node.
name!        str  Name of the volume.
devicePath!  str  Device path.

@core.v1.NodeRuntimeHandler
A runtime handler of a node.
name      str  Handler name; empty for the default.
features  obj  Supported features.

@core.v1.NodeFeatures
Features implemented by the node agent.
supplementalGroupsPolicy  bool  Supports the supplementalGroupsPolicy pod field.
"""


_CORE = r"""
@core.v1.Namespace kind
A Namespace scopes names and policies of namespaced objects.
spec    NamespaceSpec    Behavior of the namespace.
status  NamespaceStatus  Observed status of the namespace. Read-only.

@core.v1.NamespaceSpec
The spec of a namespace.
finalizers  [str]  Hooks that must empty before the namespace is removed.

@core.v1.NamespaceStatus
The status of a namespace.
phase       str(Active|Terminating)  Active, or Terminating while its contents are deleted.
conditions  [NamespaceCondition]     Latest observations of the namespace's state.

@core.v1.NamespaceCondition
A condition of a namespace.
type!               str   Type of the condition.
status!             str   True, False or Unknown.
lastTransitionTime  time  Last time the status changed.
reason              str   CamelCase reason.
message             str   Human readable details.

@core.v1.Event kind
An Event reports something that happened to an object: a scheduling decision, a resize, an eviction, an OOM kill. Events are informational and expire.
involvedObject!      ObjectReference  The object the event is about.
reason               str              Short CamelCase reason, for example Scheduled, FailedScheduling, Evicted, Preempted.
message              str              Human readable description.
source               EventSource      Component reporting the event (deprecated in favor of reportingComponent).
firstTimestamp       time             When the event was first recorded.
lastTimestamp        time             When the event last occurred.
count                int32            Number of occurrences.
type                 str              Normal or Warning.
eventTime            microtime        When the event was first observed.
series               EventSeries      Data about a series of repeated events.
action               str              What action was taken or failed.
related              ObjectReference  A secondary object involved.
reportingComponent   str              Name of the controller that emitted the event.
reportingInstance    str              ID of the controller instance.

@core.v1.EventSeries
A series of repeated events.
count             int32      Number of occurrences in the series so far.
lastObservedTime  microtime  Time of the last occurrence.

@core.v1.EventSource
The component reporting an event.
component  str  Component name.
host       str  Node name.

@core.v1.ConfigMap kind
A ConfigMap holds configuration data (non-secret key/value pairs) for pods to consume.
data        {str}    UTF-8 values by key; keys consist of alphanumerics, '-', '_' and '.'.
binaryData  {bytes}  Binary values (base64) by key; keys must not overlap with data.
immutable   bool     If true, data cannot be changed, only the object deleted.

@core.v1.Secret kind
A Secret holds a small amount of sensitive data (passwords, tokens, keys) for pods to consume; at most 1 MiB in total.
immutable   bool     If true, data cannot be changed, only the object deleted.
data        {bytes}  Secret values (base64) by key; keys consist of alphanumerics, '-', '_' and '.'.
stringData  {str}    Write-only plain-text values, merged into data on write (a key in both takes this value); never read back.
type        str      How the data is to be used: Opaque (the default), kubernetes.io/service-account-token, kubernetes.io/dockercfg, kubernetes.io/dockerconfigjson, kubernetes.io/basic-auth, kubernetes.io/ssh-auth, kubernetes.io/tls, bootstrap.kubernetes.io/token. Cannot be changed.

@core.v1.ServiceAccount kind
A ServiceAccount is an identity for processes running in pods; pods get short-lived tokens of it through the TokenRequest API (serviceaccounts/token).
secrets                       [ObjectReference]       Deprecated: legacy token secrets of this service account; not used to give pods credentials.
imagePullSecrets              [LocalObjectReference]  Secrets in the same namespace that pods running as this service account use to pull images.
automountServiceAccountToken  bool                    Whether pods running as this service account get an API token mounted; a pod's own setting wins.

@authentication.v1.TokenRequest
TokenRequest asks for a token of a service account: POST it to serviceaccounts/{name}/token.
apiVersion  str                 APIVersion of this representation.
kind        str                 Kind of this representation.
metadata    meta.v1.ObjectMeta  Name and namespace of the service account (filled in by the server).
spec!       TokenRequestSpec    What the token is for.
status      TokenRequestStatus  The token, filled in by the server.

@authentication.v1.TokenRequestSpec
The parameters of a token request.
audiences!         [str]                 Intended audiences of the token; empty means the API server's own.
expirationSeconds  int64                 Requested lifetime in seconds (default 3600, at least 600); the server may shorten it.
boundObjectRef     BoundObjectReference  An object (Pod, Secret or Node) the token is bound to: the token is valid only while it exists.

@authentication.v1.BoundObjectReference
A reference to the object a token is bound to.
kind        str  Kind of the referent: Pod, Secret or Node.
apiVersion  str  API version of the referent.
name        str  Name of the referent.
uid         str  UID of the referent; when set it must match.

@authentication.v1.TokenRequestStatus
The issued token.
token!                str   The token (a signed JWT).
expirationTimestamp!  time  When the token expires.

@core.v1.Service kind
A Service gives a set of pods, selected by labels, a stable virtual address and DNS name.
spec    ServiceSpec    Desired behavior of the service.
status  ServiceStatus  Observed status. Read-only.

@core.v1.ServiceSpec
The spec of a service.
ports                          [ServicePort]       Ports exposed by the service.
selector                       {str}               Labels of the pods traffic is routed to. Empty or unset means the endpoints are managed externally.
clusterIP                      str                 Virtual IP of the service; "None" makes a headless service. Assigned when unset; cannot be changed.
clusterIPs                     [str]               Virtual IPs, one per IP family.
type                           str(ClusterIP|ExternalName|LoadBalancer|NodePort)  How the service is exposed. Default ClusterIP.
externalIPs                    [str]               Extra IPs the service accepts traffic on.
sessionAffinity                str(ClientIP|None)  Session affinity. Default None.
loadBalancerIP                 str                 Deprecated requested load balancer IP.
loadBalancerSourceRanges       [str]               Client CIDRs allowed through the load balancer.
externalName                   str                 DNS name returned as a CNAME for type ExternalName.
externalTrafficPolicy          str(Cluster|Local)  How external traffic is routed to endpoints.
healthCheckNodePort            int32               Health check node port for LoadBalancer services with Local traffic policy.
publishNotReadyAddresses       bool                Publish addresses of pods that are not ready.
sessionAffinityConfig          SessionAffinityConfig  Session affinity configuration.
ipFamilies                     [str]               IP families (IPv4, IPv6) of the service.
ipFamilyPolicy                 str(PreferDualStack|RequireDualStack|SingleStack)  Dual-stack policy.
allocateLoadBalancerNodePorts  bool                Whether node ports are allocated for LoadBalancer services. Default true.
loadBalancerClass              str                 Load balancer implementation class.
internalTrafficPolicy          str(Cluster|Local)  How cluster-internal traffic is routed.
trafficDistribution            str                 Preference for how traffic is distributed to endpoints.

@core.v1.ServicePort
A port of a service.
name         str               Name of the port, required when there are several; a DNS label.
protocol     str(SCTP|TCP|UDP) Protocol. Default TCP.
appProtocol  str               Application protocol.
port!        int32             Port exposed by the service.
targetPort   ios               Number or name of the port on the pods. Defaults to port.
nodePort     int32             Port on every node for NodePort and LoadBalancer services.

@core.v1.SessionAffinityConfig
Session affinity settings.
clientIP  ClientIPConfig  ClientIP affinity settings.

@core.v1.ClientIPConfig
ClientIP session affinity settings.
timeoutSeconds  int32  Sticky session time. Default 10800.

@core.v1.ServiceStatus
The status of a service.
loadBalancer  LoadBalancerStatus  Status of the load balancer, if any.
conditions    [meta.v1.Condition] Current conditions of the service.

@core.v1.LoadBalancerStatus
The status of a load balancer.
ingress  [LoadBalancerIngress]  Ingress points of the load balancer.

@core.v1.LoadBalancerIngress
An ingress point of a load balancer.
ip        str           IP address.
hostname  str           Host name.
ipMode    str(VIP|Proxy)  How traffic to the IP reaches the service.
ports     [PortStatus]  Status of the service ports.

@core.v1.PortStatus
The status of a service port.
port!      int32  Port number.
protocol!  str    Protocol.
error      str    Problem with the port, if any.

@core.v1.LimitRange kind
A LimitRange sets per-namespace defaults and bounds on the resources of containers, pods and claims. Admission applies defaults to new pods and rejects out-of-range ones.
spec  LimitRangeSpec  The limits enforced.

@core.v1.LimitRangeSpec
The limits of a LimitRange.
limits!  [LimitRangeItem]  Limits, one per object type.

@core.v1.LimitRangeItem
Resource bounds for one type of object.
type!                 str    Container, Pod or PersistentVolumeClaim.
max                   {qty}  Maximum usage of each resource.
min                   {qty}  Minimum usage of each resource.
default               {qty}  Default limits applied to containers that set none.
defaultRequest        {qty}  Default requests applied to containers that set none.
maxLimitRequestRatio  {qty}  Maximum ratio of limit to request for each resource.

@core.v1.ResourceQuota kind
A ResourceQuota caps the total resources and object counts a namespace may use.
spec    ResourceQuotaSpec    The enforced hard limits.
status  ResourceQuotaStatus  Enforced limits and current usage. Read-only.

@core.v1.ResourceQuotaSpec
The spec of a resource quota.
hard           {qty}          Hard limit for each resource (requests.cpu, limits.memory, pods, count/..., ...).
scopes         [str(BestEffort|CrossNamespacePodAffinity|NotBestEffort|NotTerminating|PriorityClass|Terminating|VolumeAttributesClass)]  Scopes every tracked object must match.
scopeSelector  ScopeSelector  Scope filter expressions, ANDed with scopes.

@core.v1.ScopeSelector
Scope selector requirements, ANDed.
matchExpressions  [ScopedResourceSelectorRequirement]  Requirements by scope.

@core.v1.ScopedResourceSelectorRequirement
A requirement on a quota scope.
scopeName!  str(BestEffort|CrossNamespacePodAffinity|NotBestEffort|NotTerminating|PriorityClass|Terminating|VolumeAttributesClass)  Scope name.
operator!   str(DoesNotExist|Exists|In|NotIn)  Relation to the values.
values      [str]  Values for In and NotIn.

@core.v1.ResourceQuotaStatus
The status of a resource quota.
hard  {qty}  Enforced hard limits.
used  {qty}  Current total usage in the namespace.
"""


_APPS = r"""
@apps.v1.Deployment kind
A Deployment declares a replicated, stateless application: it manages ReplicaSets, rolling pods from one template version to the next.
spec    DeploymentSpec    Desired behavior of the deployment.
status  DeploymentStatus  Most recently observed status. Read-only.

@apps.v1.DeploymentSpec
The desired state of a deployment.
replicas                 int32                  Number of desired pods. Default 1.
selector!                meta.v1.LabelSelector  Label selector of the pods the deployment manages; must match the template's labels. Immutable.
template!                core.v1.PodTemplateSpec  Template of the pods to create. Changing it starts a rollout; its restartPolicy must be Always.
strategy                 DeploymentStrategy     How existing pods are replaced by new ones.
minReadySeconds          int32                  Seconds a new pod must be ready, without crashing, to count as available. Default 0.
revisionHistoryLimit     int32                  Number of old ReplicaSets kept for rollback. Default 10.
paused                   bool                   Pauses the deployment: template changes do not roll out.
progressDeadlineSeconds  int32                  Seconds before a stalled rollout is reported as failed (condition Progressing with reason ProgressDeadlineExceeded). Default 600.

@apps.v1.DeploymentStrategy
How a deployment replaces its pods.
type           str(Recreate|RollingUpdate)  Recreate kills all existing pods before creating new ones; RollingUpdate replaces them gradually. Default RollingUpdate.
rollingUpdate  RollingUpdateDeployment      Parameters of a rolling update; only with type RollingUpdate.

@apps.v1.RollingUpdateDeployment
How fast a rolling update proceeds.
maxUnavailable  ios  Maximum number (or percentage of desired pods, rounded down) of pods that can be unavailable during the update. Default 25%.
maxSurge        ios  Maximum number (or percentage, rounded up) of pods that can be created above the desired count. Default 25%.

@apps.v1.DeploymentStatus
The observed state of a deployment.
observedGeneration   int64                  Generation observed by the deployment controller.
replicas             int32                  Total non-terminated pods targeted by the deployment (their labels match the selector).
updatedReplicas      int32                  Non-terminated pods with the current template.
readyReplicas        int32                  Pods with a Ready condition.
availableReplicas    int32                  Pods ready for at least minReadySeconds.
unavailableReplicas  int32                  Pods still needed for 100% availability.
terminatingReplicas  int32                  Pods being terminated.
conditions           [DeploymentCondition]  Latest observations: Available, Progressing, ReplicaFailure.
collisionCount       int32                  Count of hash collisions of ReplicaSet names.

@apps.v1.DeploymentCondition
A condition of a deployment.
type!               str                      Available, Progressing or ReplicaFailure.
status!             str(True|False|Unknown)  Status of the condition.
lastUpdateTime      time                     Last time the condition was updated.
lastTransitionTime  time                     Last time the status changed.
reason              str                      CamelCase reason.
message             str                      Human readable details.

@apps.v1.ReplicaSet kind
A ReplicaSet keeps a number of identical pods running. Usually owned and managed by a Deployment.
spec    ReplicaSetSpec    Desired behavior of the replica set.
status  ReplicaSetStatus  Most recently observed status. Read-only.

@apps.v1.ReplicaSetSpec
The desired state of a replica set.
replicas         int32                    Number of desired pods. Default 1.
minReadySeconds  int32                    Seconds a new pod must be ready to count as available. Default 0.
selector!        meta.v1.LabelSelector    Label selector of the pods; must match the template's labels.
template         core.v1.PodTemplateSpec  Template of the pods created when there are too few.

@apps.v1.ReplicaSetStatus
The observed state of a replica set.
replicas!             int32                  Number of pods (matching the selector, not terminating).
fullyLabeledReplicas  int32                  Pods whose labels match the template's labels.
readyReplicas         int32                  Pods with a Ready condition.
availableReplicas     int32                  Pods ready for at least minReadySeconds.
terminatingReplicas   int32                  Pods being terminated.
observedGeneration    int64                  Generation observed by the controller.
conditions            [ReplicaSetCondition]  Latest observations.

@apps.v1.ReplicaSetCondition
A condition of a replica set.
type!               str                      Type of the condition, for example ReplicaFailure.
status!             str(True|False|Unknown)  Status of the condition.
lastTransitionTime  time                     Last time the status changed.
reason              str                      CamelCase reason.
message             str                      Human readable details.

@apps.v1.StatefulSet kind
A StatefulSet runs pods with stable identities: ordinal names <set>-0..N-1, stable hostnames under its governing service and one set of PersistentVolumeClaims per ordinal.
spec    StatefulSetSpec    Desired identities of the pods.
status  StatefulSetStatus  Most recently observed status. Read-only.

@apps.v1.StatefulSetSpec
The desired state of a stateful set.
replicas                              int32                                           Number of desired pods. Default 1.
selector!                             meta.v1.LabelSelector                           Label selector of the pods; must match the template's labels.
template!                             core.v1.PodTemplateSpec                         Template of the pods; each pod gets the set's name and its ordinal as hostname.
volumeClaimTemplates                  [core.v1.PersistentVolumeClaim]                 Claims each pod gets, named <template>-<set>-<ordinal>.
serviceName                           str                                             The governing service: pods get <pod>.<service>.<namespace> DNS names.
podManagementPolicy                   str(OrderedReady|Parallel)                      OrderedReady creates pods in order, each after the previous is Running and Ready, and removes them in reverse; Parallel does not wait. Default OrderedReady.
updateStrategy                        StatefulSetUpdateStrategy                       How pods are updated when the template changes.
revisionHistoryLimit                  int32                                           Number of ControllerRevisions kept. Default 10.
minReadySeconds                       int32                                           Seconds a new pod must be ready to count as available. Default 0.
persistentVolumeClaimRetentionPolicy  StatefulSetPersistentVolumeClaimRetentionPolicy  Whether claims are kept or deleted when the set is deleted or scaled down.
ordinals                              StatefulSetOrdinals                             The first ordinal of the pods.

@apps.v1.StatefulSetUpdateStrategy
How a stateful set updates its pods.
type           str(OnDelete|RollingUpdate)        RollingUpdate replaces pods from the highest ordinal down; OnDelete only when they are deleted. Default RollingUpdate.
rollingUpdate  RollingUpdateStatefulSetStrategy  Parameters of a rolling update.

@apps.v1.RollingUpdateStatefulSetStrategy
Parameters of a stateful set's rolling update.
partition       int32  Pods with an ordinal below the partition keep the current revision. Default 0.
maxUnavailable  ios    Maximum number (or percentage) of pods unavailable during the update. Default 1.

@apps.v1.StatefulSetPersistentVolumeClaimRetentionPolicy
What happens to a stateful set's claims.
whenDeleted  str(Delete|Retain)  On deletion of the set. Default Retain.
whenScaled   str(Delete|Retain)  On scale down, for the removed ordinals. Default Retain.

@apps.v1.StatefulSetOrdinals
The ordinal numbering of a stateful set.
start  int32  The first ordinal. Default 0.

@apps.v1.StatefulSetStatus
The observed state of a stateful set.
observedGeneration  int64                   Generation observed by the controller.
replicas!           int32                   Number of pods created by the controller.
readyReplicas       int32                   Pods with a Ready condition.
currentReplicas     int32                   Pods at the currentRevision.
updatedReplicas     int32                   Pods at the updateRevision.
currentRevision     str                     Revision of the pods below the partition.
updateRevision      str                     Revision of the template.
collisionCount      int32                   Count of hash collisions of ControllerRevision names.
conditions          [StatefulSetCondition]  Latest observations.
availableReplicas   int32                   Pods ready for at least minReadySeconds.

@apps.v1.StatefulSetCondition
A condition of a stateful set.
type!               str                      Type of the condition.
status!             str(True|False|Unknown)  Status of the condition.
lastTransitionTime  time                     Last time the status changed.
reason              str                      CamelCase reason.
message             str                      Human readable details.

@apps.v1.DaemonSet kind
A DaemonSet runs one pod on every node that its template's node selector, required node affinity and tolerations admit.
spec    DaemonSetSpec    Desired behavior of the daemon set.
status  DaemonSetStatus  Most recently observed status. Read-only.

@apps.v1.DaemonSetSpec
The desired state of a daemon set.
selector!             meta.v1.LabelSelector    Label selector of the pods; must match the template's labels.
template!             core.v1.PodTemplateSpec  Template of the pod run on each eligible node.
updateStrategy        DaemonSetUpdateStrategy  How pods are replaced when the template changes.
minReadySeconds       int32                    Seconds a new pod must be ready to count as available. Default 0.
revisionHistoryLimit  int32                    Number of ControllerRevisions kept. Default 10.

@apps.v1.DaemonSetUpdateStrategy
How a daemon set updates its pods.
type           str(OnDelete|RollingUpdate)  Default RollingUpdate.
rollingUpdate  RollingUpdateDaemonSet       Parameters of a rolling update.

@apps.v1.RollingUpdateDaemonSet
Parameters of a daemon set's rolling update.
maxUnavailable  ios  Maximum number (or percentage) of nodes whose pod may be unavailable during the update. Default 1.
maxSurge        ios  Maximum number (or percentage) of nodes that may run an old and a new pod at once. Default 0.

@apps.v1.DaemonSetStatus
The observed state of a daemon set.
currentNumberScheduled!  int32                 Nodes running at least one daemon pod that should.
numberMisscheduled!      int32                 Nodes running a daemon pod that should not.
desiredNumberScheduled!  int32                 Nodes that should run the daemon pod.
numberReady!             int32                 Nodes whose daemon pod is ready.
observedGeneration       int64                 Generation observed by the controller.
updatedNumberScheduled   int32                 Nodes running the updated daemon pod.
numberAvailable          int32                 Nodes whose daemon pod is available.
numberUnavailable        int32                 Nodes that should run the pod and have none available.
collisionCount           int32                 Count of hash collisions of ControllerRevision names.
conditions               [DaemonSetCondition]  Latest observations.

@apps.v1.DaemonSetCondition
A condition of a daemon set.
type!               str                      Type of the condition.
status!             str(True|False|Unknown)  Status of the condition.
lastTransitionTime  time                     Last time the status changed.
reason              str                      CamelCase reason.
message             str                      Human readable details.

@apps.v1.ControllerRevision kind
An immutable snapshot of a StatefulSet's or DaemonSet's template, kept for rollbacks and to tell current pods from updated ones.
data       obj    The serialized state (the template patch).
revision!  int64  The revision number.
"""


_BATCH = r"""
@batch.v1.Job kind
A Job runs pods until a number of them succeed (or it fails), tracking each pod's outcome.
spec    JobSpec    Desired behavior of the job.
status  JobStatus  Most recently observed status. Read-only.

@batch.v1.JobSpec
The desired state of a job.
parallelism              int32                    Maximum number of pods running at any time. Default 1.
completions              int32                    Number of pods that must succeed. Null: the success of any pod is the job's.
activeDeadlineSeconds    int64                    Seconds after startTime the job may stay active before it fails with reason DeadlineExceeded.
podFailurePolicy         PodFailurePolicy         How pod failures count towards the backoffLimit. Requires restartPolicy Never.
successPolicy            SuccessPolicy            When an Indexed job is declared succeeded before all indexes succeed.
backoffLimit             int32                    Number of retries before the job fails. Default 6.
backoffLimitPerIndex     int32                    Retries within one index of an Indexed job.
maxFailedIndexes         int32                    Failed indexes tolerated with backoffLimitPerIndex.
selector                 meta.v1.LabelSelector    Label query over the job's pods. Normally generated.
manualSelector           bool                     True when the user picks the selector; false (default) generates it from the job's uid.
template!                core.v1.PodTemplateSpec  Template of the pods; restartPolicy must be OnFailure or Never.
ttlSecondsAfterFinished  int32                    Seconds after the job finishes before it is deleted.
completionMode           str(NonIndexed|Indexed)  How completions are tracked; Indexed gives each pod an index. Default NonIndexed.
suspend                  bool                     True: no pods are created and active ones are deleted. Default false.
podReplacementPolicy     str(TerminatingOrFailed|Failed)  When replacement pods are created.
managedBy                str                      The controller that manages the job; kubernetes.io/job-controller or empty for the built-in one.

@batch.v1.PodFailurePolicy
Rules mapping pod failures to actions.
rules!  [PodFailurePolicyRule]  Rules evaluated in order; the first match decides.

@batch.v1.PodFailurePolicyRule
One rule of a pod failure policy.
action!          str(FailJob|FailIndex|Ignore|Count)        What a matching failure does.
onExitCodes      PodFailurePolicyOnExitCodesRequirement     Requirement on container exit codes.
onPodConditions  [PodFailurePolicyOnPodConditionsPattern]  Requirement on pod conditions.

@batch.v1.PodFailurePolicyOnExitCodesRequirement
Exit codes a rule matches.
containerName  str            Only this container's exit code.
operator!      str(In|NotIn)  How the exit codes relate to the values.
values!        [int32]        The exit codes.

@batch.v1.PodFailurePolicyOnPodConditionsPattern
A pod condition a rule matches.
type!   str  The pod condition type.
status  str  The condition's status. Default True.

@batch.v1.SuccessPolicy
When an Indexed job succeeds early.
rules!  [SuccessPolicyRule]  Alternative rules; the first met declares success.

@batch.v1.SuccessPolicyRule
One success rule.
succeededIndexes  str    Indexes that must succeed, as "1,3-5".
succeededCount    int32  Number of succeeded indexes required.

@batch.v1.JobStatus
The observed state of a job.
conditions               [JobCondition]           Latest observations: Suspended, FailureTarget, SuccessCriteriaMet, Complete, Failed.
startTime                time                     When the job controller started the job.
completionTime           time                     When the job completed.
active                   int32                    Pending and running pods that are not terminating.
succeeded                int32                    Pods that reached phase Succeeded.
failed                   int32                    Pods that reached phase Failed.
terminating              int32                    Pods that are terminating.
completedIndexes         str                      Completed indexes of an Indexed job, as "1,3-5,7".
failedIndexes            str                      Failed indexes with backoffLimitPerIndex.
uncountedTerminatedPods  UncountedTerminatedPods  Terminated pods not yet counted in the status.
ready                    int32                    Active pods with a Ready condition.

@batch.v1.UncountedTerminatedPods
UIDs of terminated pods not yet counted.
succeeded  [str]  UIDs of succeeded pods.
failed     [str]  UIDs of failed pods.

@batch.v1.JobCondition
A condition of a job.
type!               str                      Complete, Failed, Suspended, FailureTarget or SuccessCriteriaMet.
status!             str(True|False|Unknown)  Status of the condition.
lastProbeTime       time                     Last time the condition was checked.
lastTransitionTime  time                     Last time the status changed.
reason              str                      CamelCase reason.
message             str                      Human readable details.

@batch.v1.JobTemplateSpec
The template of the jobs a cron job creates.
metadata  meta.v1.ObjectMeta  Metadata of the jobs.
spec      JobSpec             Specification of the jobs.

@batch.v1.CronJob kind
A CronJob creates Jobs on a repeating schedule.
spec    CronJobSpec    Desired behavior of the cron job, including the schedule.
status  CronJobStatus  Most recently observed status. Read-only.

@batch.v1.CronJobSpec
The desired state of a cron job.
schedule!                   str                         The schedule in cron format.
timeZone                    str                         The IANA time zone of the schedule.
startingDeadlineSeconds     int64                       Seconds after a missed scheduled time during which the job may still start.
concurrencyPolicy           str(Allow|Forbid|Replace)   How concurrent runs are treated. Default Allow.
suspend                     bool                        True: later runs are not started. Default false.
jobTemplate!                JobTemplateSpec             The job created at each scheduled time.
successfulJobsHistoryLimit  int32                       Successful jobs kept. Default 3.
failedJobsHistoryLimit      int32                       Failed jobs kept. Default 1.

@batch.v1.CronJobStatus
The observed state of a cron job.
active              [core.v1.ObjectReference]  The running jobs.
lastScheduleTime    time                       Last time a job was scheduled.
lastSuccessfulTime  time                       Last time a job completed successfully.
"""

_CORE_WORKLOADS = r"""
@core.v1.ReplicationController kind
A ReplicationController keeps a number of pods matching a label map running; the older form of a ReplicaSet.
spec    ReplicationControllerSpec    Desired behavior of the controller.
status  ReplicationControllerStatus  Most recently observed status. Read-only.

@core.v1.ReplicationControllerSpec
The desired state of a replication controller.
replicas         int32                    Number of desired pods. Default 1.
minReadySeconds  int32                    Seconds a new pod must be ready to count as available. Default 0.
selector         {str}                    Labels the pods must have; defaults to the template's labels.
template         PodTemplateSpec          Template of the pods created when there are too few.

@core.v1.ReplicationControllerStatus
The observed state of a replication controller.
replicas!             int32                             Number of pods.
fullyLabeledReplicas  int32                             Pods whose labels match the template's labels.
readyReplicas         int32                             Pods with a Ready condition.
availableReplicas     int32                             Pods ready for at least minReadySeconds.
observedGeneration    int64                             Generation observed by the controller.
conditions            [ReplicationControllerCondition]  Latest observations.

@core.v1.ReplicationControllerCondition
A condition of a replication controller.
type!               str                      Type of the condition, for example ReplicaFailure.
status!             str(True|False|Unknown)  Status of the condition.
lastTransitionTime  time                     Last time the status changed.
reason              str                      CamelCase reason.
message             str                      Human readable details.

@core.v1.PersistentVolumeClaim kind
A user's request for storage, bound by the persistentvolume-binder controller to a matching PersistentVolume (kvert provisions none: without a match the claim stays Pending).
spec    PersistentVolumeClaimSpec    The storage asked for.
status  PersistentVolumeClaimStatus  The current state of the claim. Read-only.

@core.v1.PersistentVolumeClaimSpec
The storage a claim asks for.
accessModes                [str]                       ReadWriteOnce, ReadOnlyMany, ReadWriteMany or ReadWriteOncePod.
selector                   meta.v1.LabelSelector       Label query over the volumes to bind to.
resources                  VolumeResourceRequirements  The minimum storage (requests.storage) and its limit.
volumeName                 str                         The volume bound to the claim.
storageClassName           str                         Name of the StorageClass.
volumeMode                 str(Block|Filesystem)       Default Filesystem.
dataSource                 TypedLocalObjectReference   A snapshot or claim to fill the volume from.
dataSourceRef              obj                         An object to fill the volume from.
volumeAttributesClassName  str                         Name of the VolumeAttributesClass.

@core.v1.VolumeResourceRequirements
Storage requests and limits of a claim.
limits    {qty}  Maximum amount of storage.
requests  {qty}  Minimum amount of storage.

@core.v1.TypedLocalObjectReference
A reference to an object in the same namespace.
apiGroup  str   API group of the object.
kind!     str   Kind of the object.
name!     str   Name of the object.

@core.v1.PersistentVolumeClaimStatus
The observed state of a claim.
phase        str(Pending|Bound|Lost)  The claim's phase.
accessModes  [str]                    Access modes of the bound volume.
capacity     {qty}                    Capacity of the bound volume.
conditions   [obj]                    Latest observations.
"""


_AUTOSCALING = r"""
@autoscaling.v2.HorizontalPodAutoscaler kind
A HorizontalPodAutoscaler sets the replicas of a scalable resource from observed metrics.
spec    HorizontalPodAutoscalerSpec    The target, bounds, metrics and behavior.
status  HorizontalPodAutoscalerStatus  Most recently observed status. Read-only.

@autoscaling.v2.HorizontalPodAutoscalerSpec
What to scale and how.
scaleTargetRef!  CrossVersionObjectReference       The scalable resource (with a scale subresource).
minReplicas      int32                             Lower bound of the replicas. Default 1.
maxReplicas!     int32                             Upper bound of the replicas.
metrics          [MetricSpec]                      Metrics the desired replicas are computed from; the highest wins. Default 80 % CPU utilization.
behavior         HorizontalPodAutoscalerBehavior   Scaling speed limits up and down.

@autoscaling.v2.CrossVersionObjectReference
A reference to an object.
kind!       str  Kind of the referent.
name!       str  Name of the referent.
apiVersion  str  API version of the referent.

@autoscaling.v2.MetricSpec
One metric to scale on.
type!              str(ContainerResource|External|Object|Pods|Resource)  Which source below is set.
object             ObjectMetricSource             A metric of another object.
pods               PodsMetricSource               A metric of each pod, averaged.
resource           ResourceMetricSource           A resource (cpu, memory) of the pods.
containerResource  ContainerResourceMetricSource  A resource of one container of the pods.
external           ExternalMetricSource           A metric from outside the cluster.

@autoscaling.v2.ObjectMetricSource
A metric of a Kubernetes object.
describedObject!  CrossVersionObjectReference  The object.
target!           MetricTarget                 The target value.
metric!           MetricIdentifier             The metric.

@autoscaling.v2.PodsMetricSource
A metric of each pod.
metric!  MetricIdentifier  The metric.
target!  MetricTarget      The target value.

@autoscaling.v2.ResourceMetricSource
A resource of the pods, as their requests define it.
name!    str           Name of the resource.
target!  MetricTarget  The target value.

@autoscaling.v2.ContainerResourceMetricSource
A resource of one container.
name!       str           Name of the resource.
target!     MetricTarget  The target value.
container!  str           Name of the container.

@autoscaling.v2.ExternalMetricSource
A metric from outside the cluster.
metric!  MetricIdentifier  The metric.
target!  MetricTarget      The target value.

@autoscaling.v2.MetricIdentifier
A metric's name and selector.
name!     str                    Name of the metric.
selector  meta.v1.LabelSelector  Selector of the metric's series.

@autoscaling.v2.MetricTarget
The target of a metric.
type!               str(AverageValue|Utilization|Value)  Which of the values below is used.
value               qty                                  Target value of the metric.
averageValue        qty                                  Target value averaged over the pods.
averageUtilization  int32                                Target percentage of the requests, averaged over the pods.

@autoscaling.v2.HorizontalPodAutoscalerBehavior
Scaling rules up and down.
scaleUp    HPAScalingRules  Rules for scaling up. Default: no stabilization, max of 4 pods or 100 % per 15 s.
scaleDown  HPAScalingRules  Rules for scaling down. Default: 300 s stabilization, 100 % per 15 s.

@autoscaling.v2.HPAScalingRules
How fast the replicas may change in one direction.
stabilizationWindowSeconds  int32                    Seconds of past recommendations considered.
selectPolicy                str(Disabled|Max|Min)    Which policy applies. Default Max.
policies                    [HPAScalingPolicy]       The allowed changes.
tolerance                   qty                      Tolerance of the metric ratio.

@autoscaling.v2.HPAScalingPolicy
One allowed change.
type!           str(Percent|Pods)  Unit of the value.
value!          int32              The allowed change.
periodSeconds!  int32              The window it applies to.

@autoscaling.v2.HorizontalPodAutoscalerStatus
The observed state of an autoscaler.
observedGeneration  int64                                   Generation observed by the autoscaler.
lastScaleTime       time                                    Last time the replicas were changed.
currentReplicas     int32                                   Current number of replicas.
desiredReplicas!    int32                                   Replicas last computed.
currentMetrics      [obj]                                   Last observed metrics.
conditions          [HorizontalPodAutoscalerCondition]      Latest observations.

@autoscaling.v2.HorizontalPodAutoscalerCondition
A condition of an autoscaler.
type!               str                      AbleToScale, ScalingActive or ScalingLimited.
status!             str(True|False|Unknown)  Status of the condition.
lastTransitionTime  time                     Last time the status changed.
reason              str                      CamelCase reason.
message             str                      Human readable details.
"""


_MISC = r"""
@policy.v1.PodDisruptionBudget kind
A PodDisruptionBudget limits how many pods of a set may be down at once because of voluntary disruptions: evictions through the eviction API (node drains, VPA updates) are refused while they would break the budget.
spec    PodDisruptionBudgetSpec    Desired behavior of the budget.
status  PodDisruptionBudgetStatus  Observed status. Read-only.

@policy.v1.PodDisruptionBudgetSpec
The spec of a disruption budget. At most one of minAvailable and maxUnavailable is set.
minAvailable                ios                    An eviction is allowed if at least this many (or this percentage) of the selected pods stay available afterwards.
maxUnavailable              ios                    An eviction is allowed if at most this many (or this percentage) of the selected pods are unavailable afterwards.
selector                    meta.v1.LabelSelector  Pods covered by the budget. Null selects none; empty selects every pod of the namespace.
unhealthyPodEvictionPolicy  str(AlwaysAllow|IfHealthyBudget)  When running but not ready pods may be evicted. IfHealthyBudget (default) allows it only while the budget is met; AlwaysAllow always.

@policy.v1.PodDisruptionBudgetStatus
The observed state of a disruption budget.
observedGeneration   int64                Generation observed when this status was written.
disruptedPods        {time}               Pods whose eviction was accepted but not yet observed as deleted, with the time of acceptance.
disruptionsAllowed!  int32                Number of evictions currently allowed.
currentHealthy!      int32                Current number of healthy pods.
desiredHealthy!      int32                Minimum desired number of healthy pods.
expectedPods!        int32                Total number of pods counted by the budget.
conditions           [meta.v1.Condition]  Conditions, for example DisruptionAllowed.

@scheduling.v1.PriorityClass kind
A PriorityClass maps a name to a pod priority. The scheduler places higher-priority pods first and may preempt lower-priority ones to make room.
value!            int32                            Priority given to pods of this class; higher is more important.
globalDefault     bool                             Whether this class is the default for pods without a priorityClassName. At most one class may be.
description       str                              When to use this class.
preemptionPolicy  str(Never|PreemptLowerPriority)  Whether pods of this class may preempt. Default PreemptLowerPriority.

@node.v1.RuntimeClass kind
A RuntimeClass names a container runtime configuration, with the pod overhead and scheduling constraints it implies.
handler!    str         Runtime handler the node uses to run pods of this class; a DNS label. Immutable.
overhead    Overhead    Resources the runtime itself uses per pod.
scheduling  Scheduling  Nodes that support this class.

@node.v1.Overhead
The per-pod overhead of a runtime.
podFixed  {qty}  Fixed overhead added to every pod's resource accounting.

@node.v1.Scheduling
Where pods of a runtime class can run.
nodeSelector  {str}                 Labels the node must have.
tolerations   [core.v1.Toleration]  Tolerations added to the pods.

@core.v1.Endpoints kind
Endpoints lists the addresses and ports behind a service (deprecated in favour of EndpointSlice).
subsets  [EndpointSubset]  Sets of addresses sharing the same ports.

@core.v1.EndpointSubset
Addresses that share a set of ports.
addresses          [EndpointAddress]  Ready addresses.
notReadyAddresses  [EndpointAddress]  Addresses not ready (yet) to serve.
ports              [EndpointPort]     Ports available on every address.

@core.v1.EndpointAddress
One endpoint address.
ip!        str              The IP of the endpoint.
hostname   str              Hostname of the endpoint.
nodeName   str              Node hosting the endpoint.
targetRef  ObjectReference  The object (usually a pod) providing the endpoint.

@core.v1.EndpointPort
A port of an endpoint.
name         str                Name of the port, matching the service port's name.
port!        int32              Port number.
protocol     str(SCTP|TCP|UDP)  Protocol. Default TCP.
appProtocol  str                Application protocol.

@discovery.v1.EndpointSlice kind
An EndpointSlice holds a subset of the endpoints of a service.
addressType!  str(FQDN|IPv4|IPv6)  Type of the addresses in this slice. Immutable.
endpoints!    [Endpoint]           The endpoints (at most 1000).
ports         [EndpointPort]       Ports every endpoint of the slice exposes (at most 100).

@discovery.v1.Endpoint
One endpoint of a slice.
addresses!          [str]                Addresses of the endpoint (one is used).
conditions          EndpointConditions   Current state of the endpoint.
hostname            str                  Hostname of the endpoint.
targetRef           core.v1.ObjectReference  The object providing the endpoint.
deprecatedTopology  {str}                Deprecated topology labels.
nodeName            str                  Node hosting the endpoint.
zone                str                  Zone the endpoint is in.
hints               EndpointHints        How consumers should route to the endpoint.

@discovery.v1.EndpointConditions
The state of an endpoint.
ready        bool  The endpoint is ready to receive traffic (serving and not terminating).
serving      bool  The endpoint is ready to serve, whether terminating or not.
terminating  bool  The endpoint is terminating.

@discovery.v1.EndpointHints
Routing hints of an endpoint.
forZones  [ForZone]  Zones that should consume this endpoint.
forNodes  [ForNode]  Nodes that should consume this endpoint.

@discovery.v1.ForZone
A zone a hint names.
name!  str  Name of the zone.

@discovery.v1.ForNode
A node a hint names.
name!  str  Name of the node.

@discovery.v1.EndpointPort
A port of the endpoints of a slice.
name         str    Name of the port, matching the service port's name.
protocol     str    Protocol. Default TCP.
port         int32  Port number; unset means all ports.
appProtocol  str    Application protocol.

@networking.v1.Ingress kind
An Ingress routes external HTTP traffic to services by host and path.
spec    IngressSpec    The desired routing.
status  IngressStatus  The current state (load balancer addresses).

@networking.v1.IngressSpec
How an ingress routes.
ingressClassName  str                  Name of the IngressClass that implements this ingress.
defaultBackend    IngressBackend       Backend for requests no rule matches.
tls               [IngressTLS]         TLS configuration.
rules             [IngressRule]        Host and path rules.

@networking.v1.IngressBackend
Where matching traffic goes: a service or a resource.
service   IngressServiceBackend               A service backend.
resource  core.v1.TypedLocalObjectReference   A resource in the ingress' namespace.

@networking.v1.IngressServiceBackend
A service and port.
name!  str                 Name of the service.
port   ServiceBackendPort  Port of the service.

@networking.v1.ServiceBackendPort
A service port, by name or number.
name    str    Name of the port.
number  int32  Number of the port.

@networking.v1.IngressTLS
TLS for a set of hosts.
hosts       [str]  Hosts in the certificate.
secretName  str    Secret holding the certificate and key.

@networking.v1.IngressRule
Rules for one host.
host  str                   Fully qualified domain name (may start with a wildcard label).
http  HTTPIngressRuleValue  HTTP paths.

@networking.v1.HTTPIngressRuleValue
Paths of an HTTP rule.
paths!  [HTTPIngressPath]  Paths mapped to backends.

@networking.v1.HTTPIngressPath
A path mapped to a backend.
path       str             Path to match.
pathType!  str(Exact|ImplementationSpecific|Prefix)  How the path matches.
backend!   IngressBackend  Where matching traffic goes.

@networking.v1.IngressStatus
Observed state of an ingress.
loadBalancer  IngressLoadBalancerStatus  Load balancer addresses.

@networking.v1.IngressLoadBalancerStatus
Load balancer of an ingress.
ingress  [IngressLoadBalancerIngress]  Ingress points.

@networking.v1.IngressLoadBalancerIngress
One ingress point.
ip        str                 IP address.
hostname  str                 DNS name.
ports     [IngressPortStatus]  Ports.

@networking.v1.IngressPortStatus
Status of one port.
port!      int32  Port number.
protocol!  str(SCTP|TCP|UDP)  Protocol.
error      str    Problem with the port.

@networking.v1.IngressClass kind
An IngressClass names the controller that implements a class of ingresses.
spec  IngressClassSpec  The class.

@networking.v1.IngressClassSpec
The controller of a class.
controller  str                               Name of the controller (a domain-prefixed path).
parameters  IngressClassParametersReference   Configuration for the controller.

@networking.v1.IngressClassParametersReference
A resource holding controller configuration.
apiGroup   str  Group of the resource.
kind!      str  Kind of the resource.
name!      str  Name of the resource.
scope      str  Cluster or Namespace.
namespace  str  Namespace of the resource when scope is Namespace.

@networking.v1.NetworkPolicy kind
A NetworkPolicy says which traffic pods may send and receive.
spec  NetworkPolicySpec  The policy.

@networking.v1.NetworkPolicySpec
What a network policy allows.
podSelector  meta.v1.LabelSelector       Pods the policy applies to; empty selects every pod of the namespace.
ingress      [NetworkPolicyIngressRule]  Allowed incoming traffic.
egress       [NetworkPolicyEgressRule]   Allowed outgoing traffic.
policyTypes  [str(Egress|Ingress)]       Directions the policy covers.

@networking.v1.NetworkPolicyIngressRule
Traffic allowed in.
ports  [NetworkPolicyPort]  Ports allowed.
from   [NetworkPolicyPeer]  Sources allowed.

@networking.v1.NetworkPolicyEgressRule
Traffic allowed out.
ports  [NetworkPolicyPort]  Ports allowed.
to     [NetworkPolicyPeer]  Destinations allowed.

@networking.v1.NetworkPolicyPort
A port (range).
protocol  str(SCTP|TCP|UDP)  Protocol. Default TCP.
port      ios    Port number or name.
endPort   int32  End of a port range.

@networking.v1.NetworkPolicyPeer
A peer: pods, namespaces or an IP block.
podSelector        meta.v1.LabelSelector  Pods.
namespaceSelector  meta.v1.LabelSelector  Namespaces.
ipBlock            IPBlock                An IP range.

@networking.v1.IPBlock
An IP range with exceptions.
cidr!   str    The range.
except  [str]  Ranges excluded.

@certificates.v1.CertificateSigningRequest kind
A CertificateSigningRequest asks a signer for an X.509 certificate.
spec!   CertificateSigningRequestSpec    The request.
status  CertificateSigningRequestStatus  Approval and the issued certificate.

@certificates.v1.CertificateSigningRequestSpec
The request for a certificate.
request!           bytes    PEM-encoded PKCS#10 certificate request.
signerName!        str      The signer asked to issue the certificate.
expirationSeconds  int32    Requested validity.
usages             [str]    Key usages requested.
username           str      User who created the request (set by the server).
uid                str      UID of that user (set by the server).
groups             [str]    Groups of that user (set by the server).
extra              {[str]}  Extra attributes of that user (set by the server).

@certificates.v1.CertificateSigningRequestStatus
Approval state and certificate.
conditions   [CertificateSigningRequestCondition]  Approved, Denied, Failed.
certificate  bytes  The issued certificate (PEM).

@certificates.v1.CertificateSigningRequestCondition
One condition of a request.
type!               str   Approved, Denied, Failed or another type.
status!             str   True, False or Unknown.
reason              str   Brief reason.
message             str   Details.
lastUpdateTime      time  Last update.
lastTransitionTime  time  Last change of status.

@storage.v1.CSIStorageCapacity kind
Capacity a CSI driver reports for a topology segment and storage class.
nodeTopology       meta.v1.LabelSelector  Nodes the capacity is available from.
storageClassName!  str                    Storage class the capacity is for.
capacity           qty                    Available capacity.
maximumVolumeSize  qty                    Largest volume that can be created.

@coordination.v1.Lease kind
A Lease is a lock held by one holder for a time, used for leader election and node heartbeats.
spec  LeaseSpec  The lease.

@coordination.v1.LeaseSpec
The holder and timing of a lease.
holderIdentity        str        Identity of the current holder.
leaseDurationSeconds  int32      Seconds candidates wait after the last renewal before they may take the lease.
acquireTime           microtime  When the current holder acquired the lease.
renewTime             microtime  When the holder last renewed the lease.
leaseTransitions      int32      Number of times the holder changed.
strategy              str        Strategy for picking leaders in coordinated leader election.
preferredHolder       str        Holder the strategy prefers.

@rbac.v1.Role kind
A Role is a namespaced set of policy rules, granted by a RoleBinding.
rules  [PolicyRule]  The rules of this role.

@rbac.v1.ClusterRole kind
A ClusterRole is a cluster-wide set of policy rules, granted by a RoleBinding (in its namespace) or a ClusterRoleBinding (everywhere).
rules            [PolicyRule]     The rules of this role.
aggregationRule  AggregationRule  When set, the rules are computed by the controller manager from the ClusterRoles its selectors match, and direct changes to rules are overwritten.

@rbac.v1.AggregationRule
How an aggregated ClusterRole finds the ClusterRoles whose rules it unites.
clusterRoleSelectors  [meta.v1.LabelSelector]  ClusterRoles matching any of these selectors are aggregated.

@rbac.v1.PolicyRule
Actions on resources or non-resource URLs a rule allows.
verbs!           [str]  Verbs the rule allows; "*" is every verb.
apiGroups        [str]  API groups of the resources; "" is the core group, "*" every group.
resources        [str]  Resources the rule applies to; "*" is every resource, "res/sub" a subresource, "*/sub" that subresource of every resource.
resourceNames    [str]  Names the rule is limited to; empty means every object.
nonResourceURLs  [str]  Partial URLs a user may access, a final "*" matching every suffix; only in ClusterRoles, and not with resources.

@rbac.v1.RoleBinding kind
A RoleBinding grants the rules of a Role or ClusterRole to subjects, in the binding's namespace.
subjects  [Subject]  The users, groups and service accounts granted the role.
roleRef!  RoleRef    The Role (of this namespace) or ClusterRole granted. Cannot be updated.

@rbac.v1.ClusterRoleBinding kind
A ClusterRoleBinding grants the rules of a ClusterRole to subjects in every namespace.
subjects  [Subject]  The users, groups and service accounts granted the role.
roleRef!  RoleRef    The ClusterRole granted. Cannot be updated.

@rbac.v1.Subject
A user, group or service account a binding names.
kind!      str  User, Group or ServiceAccount.
apiGroup   str  "" for ServiceAccount, "rbac.authorization.k8s.io" for User and Group.
name!      str  Name of the subject.
namespace  str  Namespace of a ServiceAccount subject; must be empty for users and groups.

@rbac.v1.RoleRef
The role a binding grants.
apiGroup!  str  Group of the role: rbac.authorization.k8s.io.
kind!      str  Role or ClusterRole.
name!      str  Name of the role.

@authorization.v1.SelfSubjectAccessReview kind
Asks whether the current user may perform an action; answered by the server, never stored.
spec!   SelfSubjectAccessReviewSpec  The action to check.
status  SubjectAccessReviewStatus    The answer, set by the server.

@authorization.v1.SelfSubjectAccessReviewSpec
The action to check: exactly one of resourceAttributes and nonResourceAttributes.
resourceAttributes     ResourceAttributes     A request on a resource.
nonResourceAttributes  NonResourceAttributes  A request on a non-resource path.

@authorization.v1.SubjectAccessReview kind
Asks whether a user or group may perform an action; answered by the server, never stored.
spec!   SubjectAccessReviewSpec    The subject and the action to check.
status  SubjectAccessReviewStatus  The answer, set by the server.

@authorization.v1.LocalSubjectAccessReview kind
A SubjectAccessReview limited to one namespace, so it can be granted per namespace.
spec!   SubjectAccessReviewSpec    The subject and the action to check; the namespace must be the review's.
status  SubjectAccessReviewStatus  The answer, set by the server.

@authorization.v1.SubjectAccessReviewSpec
The subject and the action to check: exactly one of resourceAttributes and nonResourceAttributes, and a user or groups.
resourceAttributes     ResourceAttributes     A request on a resource.
nonResourceAttributes  NonResourceAttributes  A request on a non-resource path.
user                   str                    The user to check.
groups                 [str]                  The groups to check.
extra                  {[str]}                Extra information about the user, as an authenticator gives it.
uid                    str                    The UID of the user.

@authorization.v1.ResourceAttributes
A request on a resource, as the authorizer sees it.
namespace      str                      Namespace of the request; empty means every namespace (or a cluster-scoped resource).
verb           str                      Verb: get, list, watch, create, update, patch, delete, deletecollection, ...; "*" means all.
group          str                      API group of the resource; "*" means all.
version        str                      API version of the resource; "*" means all.
resource       str                      The resource; "*" means all.
subresource    str                      The subresource; empty means none.
name           str                      Name of the object; empty means all.
fieldSelector  FieldSelectorAttributes  A field selector the request is limited by.
labelSelector  LabelSelectorAttributes  A label selector the request is limited by.

@authorization.v1.FieldSelectorAttributes
A field selector limiting a request.
rawSelector   str                         The selector as a query parameter would carry it.
requirements  [FieldSelectorRequirement]  The parsed selector.

@authorization.v1.FieldSelectorRequirement
One requirement of a field selector.
key!       str    Field the requirement applies to.
operator!  str    In, NotIn, Exists or DoesNotExist.
values     [str]  Values for In and NotIn.

@authorization.v1.LabelSelectorAttributes
A label selector limiting a request.
rawSelector   str                                 The selector as a query parameter would carry it.
requirements  [meta.v1.LabelSelectorRequirement]  The parsed selector.

@authorization.v1.NonResourceAttributes
A request on a non-resource path.
path  str  URL path of the request.
verb  str  Lower-cased HTTP method.

@authorization.v1.SubjectAccessReviewStatus
The answer to an access review.
allowed!         bool  Whether the action would be allowed.
denied           bool  Whether the action would be denied; allowed and denied both false means no authorizer had an opinion.
reason           str   Why the action would be allowed or denied.
evaluationError  str   An error met while checking; the answer may still be right.

@authorization.v1.SelfSubjectRulesReview kind
Lists what the current user may do in a namespace; answered by the server, never stored.
spec!   SelfSubjectRulesReviewSpec  The namespace to list.
status  SubjectRulesReviewStatus    The rules, set by the server.

@authorization.v1.SelfSubjectRulesReviewSpec
The namespace whose rules to list.
namespace  str  Namespace to list the rules of.

@authorization.v1.SubjectRulesReviewStatus
The rules of a user in a namespace; possibly incomplete when an authorizer cannot list its rules.
resourceRules!     [ResourceRule]     Actions allowed on resources.
nonResourceRules!  [NonResourceRule]  Actions allowed on non-resource URLs.
incomplete!        bool               True when the list may be missing rules.
evaluationError    str                An error met while listing.

@authorization.v1.ResourceRule
Actions allowed on resources.
verbs!         [str]  Allowed verbs; "*" means all.
apiGroups      [str]  API groups; "*" means all.
resources      [str]  Resources; "*" means all, "*/sub" that subresource of every resource.
resourceNames  [str]  Names the rule is limited to; empty means all.

@authorization.v1.NonResourceRule
Actions allowed on non-resource URLs.
verbs!           [str]  Allowed verbs; "*" means all.
nonResourceURLs  [str]  Partial URLs; a final "*" matches every suffix.

@authentication.v1.TokenReview kind
Asks the server who a bearer token authenticates; answered by the server, never stored.
spec!   TokenReviewSpec    The token.
status  TokenReviewStatus  The answer, set by the server.

@authentication.v1.TokenReviewSpec
The token to review.
token      str    The opaque bearer token.
audiences  [str]  Audiences the token must be valid for; empty means the API server's.

@authentication.v1.TokenReviewStatus
Who a token authenticates.
authenticated  bool      Whether the token is valid.
user           UserInfo  The user the token authenticates.
audiences      [str]     Audiences the token is valid for, of those asked.
error          str       Why the token could not be checked.

@authentication.v1.UserInfo
An authenticated user.
username  str      The user's name.
uid       str      A unique value identifying the user over time.
groups    [str]    Groups the user belongs to.
extra     {[str]}  Extra information the authenticator gives.

@authentication.v1.SelfSubjectReview kind
Asks the server who the current user is; answered by the server, never stored.
status  SelfSubjectReviewStatus  The user, set by the server.

@authentication.v1.SelfSubjectReviewStatus
Who the current user is.
userInfo  UserInfo  The user as the server authenticated it.

@events.v1.Event kind
An Event reports something that happened in the cluster (events.k8s.io form).
eventTime!                 microtime                When the event was first observed.
series                     EventSeries              Data about a series of repeated events.
reportingController        str                      Controller that emitted the event.
reportingInstance          str                      ID of the controller instance.
action                     str                      What action was taken or failed.
reason                     str                      Why the action was taken.
regarding                  core.v1.ObjectReference  The object the event is about.
related                    core.v1.ObjectReference  A secondary object.
note                       str                      Human readable description.
type                       str                      Normal or Warning.
deprecatedSource           core.v1.EventSource      Deprecated core/v1 source.
deprecatedFirstTimestamp   time                     Deprecated core/v1 firstTimestamp.
deprecatedLastTimestamp    time                     Deprecated core/v1 lastTimestamp.
deprecatedCount            int32                    Deprecated core/v1 count.

@events.v1.EventSeries
A series of repeated events.
count!             int32      Number of occurrences.
lastObservedTime!  microtime  Time of the last occurrence.
"""


_APIEXT = r"""
@apiextensions.v1.CustomResourceDefinition kind
A CustomResourceDefinition adds a resource type to the API server. kvert serves the VerticalPodAutoscaler kinds this way.
spec!   CustomResourceDefinitionSpec    The resource type to serve.
status  CustomResourceDefinitionStatus  Observed status. Read-only.

@apiextensions.v1.CustomResourceDefinitionSpec
The resource type a CRD defines.
group!                 str                                  API group of the resource (/apis/<group>/...). Must match the CRD name <plural>.<group>.
names!                 CustomResourceDefinitionNames        Names of the resource.
scope!                 str(Cluster|Namespaced)              Whether objects are cluster-scoped or namespaced.
versions!              [CustomResourceDefinitionVersion]    Served versions; exactly one is the storage version.
conversion             CustomResourceConversion             How objects convert between versions.
preserveUnknownFields  bool                                 Legacy: keep fields not in the schema. Must be false.

@apiextensions.v1.CustomResourceDefinitionNames
The names of a custom resource.
plural!     str    Plural name, used in URLs; lowercase.
singular    str    Singular name; defaults to the lowercased kind.
shortNames  [str]  Short names usable with kubectl.
kind!       str    Kind of the objects, CamelCase.
listKind    str    Kind of lists; defaults to "<kind>List".
categories  [str]  Groups the resource belongs to, for example "all".

@apiextensions.v1.CustomResourceDefinitionVersion
One served version of a custom resource.
name!                      str                           Version name, for example v1.
served!                    bool                          Whether the version is served.
storage!                   bool                          Whether objects are stored in this version.
deprecated                 bool                          Whether the version is deprecated.
deprecationWarning         str                           Warning returned to clients using a deprecated version.
schema                     CustomResourceValidation      Schema used for validation, pruning and defaulting.
subresources               CustomResourceSubresources    Subresources (status, scale).
additionalPrinterColumns   [CustomResourceColumnDefinition]  Extra columns shown by kubectl get.
selectableFields           [SelectableField]             Fields usable in field selectors.

@apiextensions.v1.CustomResourceValidation
The schema of a version.
openAPIV3Schema  JSONSchemaProps  OpenAPI v3 schema of the objects.

@apiextensions.v1.JSONSchemaProps
A JSON schema (the OpenAPI v3 subset Kubernetes accepts) with the Kubernetes extensions.
id                                    str                      Schema identifier.
$schema                               str                      Meta-schema URI.
$ref                                  str                      Reference to another schema (not allowed in CRDs).
description                           str                      Description of the value.
type                                  str                      Type: object, array, string, integer, number or boolean.
format                                str                      Format of the value, for example int32, date-time, byte.
title                                 str                      Title of the schema.
default                               any                      Default value applied when the field is missing.
maximum                               double                   Largest allowed number.
exclusiveMaximum                      bool                     Whether maximum itself is excluded.
minimum                               double                   Smallest allowed number.
exclusiveMinimum                      bool                     Whether minimum itself is excluded.
maxLength                             int64                    Maximum string length.
minLength                             int64                    Minimum string length.
pattern                               str                      Regular expression strings must match.
maxItems                              int64                    Maximum array length.
minItems                              int64                    Minimum array length.
uniqueItems                           bool                     Array items must be unique (not allowed in CRDs).
multipleOf                            double                   Numbers must be multiples of this.
enum                                  [any]                    Allowed values.
maxProperties                         int64                    Maximum number of object properties.
minProperties                         int64                    Minimum number of object properties.
required                              [str]                    Required properties.
items                                 any                      Schema of array items (a schema or a list of schemas).
allOf                                 [JSONSchemaProps]        Schemas that must all match.
oneOf                                 [JSONSchemaProps]        Schemas exactly one of which must match.
anyOf                                 [JSONSchemaProps]        Schemas at least one of which must match.
not                                   JSONSchemaProps          Schema that must not match.
properties                            {JSONSchemaProps}        Schemas of the properties of an object.
additionalProperties                  any                      Schema of the values of other properties, or a boolean.
patternProperties                     {JSONSchemaProps}        Schemas of properties by name pattern.
dependencies                          {any}                    Property dependencies.
additionalItems                       any                      Schema of extra array items, or a boolean.
definitions                           {JSONSchemaProps}        Named schemas.
externalDocs                          ExternalDocumentation    External documentation.
example                               any                      Example value.
nullable                              bool                     Whether null is allowed.
x-kubernetes-preserve-unknown-fields  bool                     Keep fields not described by the schema instead of pruning them.
x-kubernetes-embedded-resource        bool                     The value is a Kubernetes object with apiVersion, kind and metadata.
x-kubernetes-int-or-string            bool                     The value may be an integer or a string.
x-kubernetes-list-map-keys            [str]                    Keys identifying the items of a list of type map.
x-kubernetes-list-type                str(atomic|set|map)      How server-side apply merges the list.
x-kubernetes-map-type                 str(atomic|granular)     How server-side apply merges the object.
x-kubernetes-validations              [ValidationRule]         CEL validation rules.

@apiextensions.v1.ExternalDocumentation
A link to external documentation.
description  str  Description of the documentation.
url          str  URL of the documentation.

@apiextensions.v1.ValidationRule
A CEL validation rule.
rule!              str   CEL expression; self is the value being validated.
message            str   Message shown when the rule fails.
messageExpression  str   CEL expression producing the message.
reason             str   Machine readable reason: FieldValueInvalid, FieldValueForbidden, FieldValueRequired or FieldValueDuplicate.
fieldPath          str   Path of the field reported on failure.
optionalOldSelf    bool  Evaluate transition rules on create too, with oldSelf unset.

@apiextensions.v1.CustomResourceSubresources
The subresources of a custom resource version.
status  obj                               If set (to {}), the status subresource is served and the main resource ignores status changes.
scale   CustomResourceSubresourceScale    If set, the scale subresource is served.

@apiextensions.v1.CustomResourceSubresourceScale
Where the scale subresource reads and writes replicas.
specReplicasPath!    str  JSON path of the desired replicas (under .spec).
statusReplicasPath!  str  JSON path of the observed replicas (under .status).
labelSelectorPath    str  JSON path of the label selector string (under .status or .spec).

@apiextensions.v1.CustomResourceColumnDefinition
A printer column.
name!         str    Column header.
type!         str    OpenAPI type of the column: integer, number, string, boolean or date.
format        str    OpenAPI format of the column.
description   str    Human readable description.
priority      int32  Importance; columns above 0 show only in wide output.
jsonPath!     str    Simple JSON path evaluated against each object for the value.

@apiextensions.v1.SelectableField
A field usable in field selectors.
jsonPath!  str  JSON path of the field.

@apiextensions.v1.CustomResourceConversion
How a custom resource converts between versions.
strategy!  str(None|Webhook)  None only changes apiVersion; Webhook calls a conversion webhook.
webhook    WebhookConversion  Webhook configuration for strategy Webhook.

@apiextensions.v1.WebhookConversion
A conversion webhook.
clientConfig              WebhookClientConfig  How to reach the webhook.
conversionReviewVersions! [str]                ConversionReview versions the webhook accepts, in order of preference.

@apiextensions.v1.WebhookClientConfig
How the API server reaches a conversion webhook: url or service.
url       str               URL of the webhook.
service   ServiceReference  In-cluster service of the webhook.
caBundle  bytes             PEM CA bundle to verify the webhook's serving certificate.

@apiextensions.v1.ServiceReference
A reference to a service.
namespace!  str    Namespace of the service.
name!       str    Name of the service.
path        str    URL path requests are sent to.
port        int32  Port of the service. Default 443.

@apiextensions.v1.CustomResourceDefinitionStatus
The observed state of a CRD.
conditions      [CustomResourceDefinitionCondition]  Conditions: NamesAccepted, Established, ...
acceptedNames   CustomResourceDefinitionNames        Names actually being served.
storedVersions  [str]                                Versions objects have ever been stored in.
observedGeneration  int64                            Generation this status was computed from.

@apiextensions.v1.CustomResourceDefinitionCondition
A condition of a CRD.
type!               str   Established, NamesAccepted, NonStructuralSchema, Terminating or KubernetesAPIApprovalPolicyConformant.
status!             str   True, False or Unknown.
lastTransitionTime  time  Last time the status changed.
reason              str   CamelCase reason.
message             str   Human readable details.
observedGeneration  int64 Generation the condition was computed from.
"""


_ADMREG = r"""
@admissionregistration.v1.MutatingWebhookConfiguration kind
Webhooks called, in order, to mutate objects before they are stored. kvert's VPA admission webhook sets pod resources this way.
webhooks  [MutatingWebhook]  The webhooks and the requests they apply to.

@admissionregistration.v1.ValidatingWebhookConfiguration kind
Webhooks called to accept or reject objects before they are stored.
webhooks  [ValidatingWebhook]  The webhooks and the requests they apply to.

@admissionregistration.v1.MutatingWebhook
A mutating admission webhook.
name!                     str                  Qualified name of the webhook, for example vpa.k8s.io.
clientConfig!             WebhookClientConfig  How to reach the webhook.
rules                     [RuleWithOperations] Operations and resources the webhook cares about.
failurePolicy             str(Fail|Ignore)     What to do when the call fails. Default Fail.
matchPolicy               str(Equivalent|Exact)  Whether requests to equivalent resources in other versions match. Default Equivalent.
namespaceSelector         meta.v1.LabelSelector  Namespaces whose objects are sent to the webhook.
objectSelector            meta.v1.LabelSelector  Objects (by labels) sent to the webhook.
sideEffects!              str(None|NoneOnDryRun|Some|Unknown)  Whether the webhook has side effects; None or NoneOnDryRun for v1.
timeoutSeconds            int32                Seconds to wait for the webhook, 1-30. Default 10.
admissionReviewVersions!  [str]                AdmissionReview versions the webhook accepts, in order of preference.
reinvocationPolicy        str(IfNeeded|Never)  Whether the webhook is called again when later mutations change the object. Default Never.
matchConditions           [MatchCondition]     CEL conditions that must all hold for the webhook to be called.

@admissionregistration.v1.ValidatingWebhook
A validating admission webhook.
name!                     str                  Qualified name of the webhook.
clientConfig!             WebhookClientConfig  How to reach the webhook.
rules                     [RuleWithOperations] Operations and resources the webhook cares about.
failurePolicy             str(Fail|Ignore)     What to do when the call fails. Default Fail.
matchPolicy               str(Equivalent|Exact)  Whether requests to equivalent resources match. Default Equivalent.
namespaceSelector         meta.v1.LabelSelector  Namespaces whose objects are sent to the webhook.
objectSelector            meta.v1.LabelSelector  Objects (by labels) sent to the webhook.
sideEffects!              str(None|NoneOnDryRun|Some|Unknown)  Whether the webhook has side effects.
timeoutSeconds            int32                Seconds to wait for the webhook, 1-30. Default 10.
admissionReviewVersions!  [str]                AdmissionReview versions accepted.
matchConditions           [MatchCondition]     CEL conditions that must all hold.

@admissionregistration.v1.WebhookClientConfig
How the API server reaches a webhook: url or service.
url       str               URL of the webhook (https://host:port/path).
service   ServiceReference  In-cluster service of the webhook.
caBundle  bytes             PEM CA bundle to verify the webhook's serving certificate.

@admissionregistration.v1.ServiceReference
A reference to a service.
namespace!  str    Namespace of the service.
name!       str    Name of the service.
path        str    URL path requests are sent to.
port        int32  Port of the service. Default 443.

@admissionregistration.v1.RuleWithOperations
Operations and resources a webhook applies to.
operations   [str(*|CONNECT|CREATE|DELETE|UPDATE)]  Operations; * means all.
apiGroups    [str]                  API groups; * means all.
apiVersions  [str]                  API versions; * means all.
resources    [str]                  Resources ("pods", "pods/status", "*", "*/*").
scope        str(*|Cluster|Namespaced)  Scope of the resources. Default *.

@admissionregistration.v1.MatchCondition
A CEL condition for calling a webhook.
name!        str  Identifier of the condition.
expression!  str  CEL expression evaluated to a boolean.
"""


_APIREG = r"""
@apiregistration.v1.APIService kind
APIService represents a server for one API group version: served locally, or by the in-cluster service it names (an aggregated API).
spec    APIServiceSpec    The group version and how to reach its server.
status  APIServiceStatus  Whether the server is available.

@apiregistration.v1.APIServiceSpec
The group version an APIService registers and where its server is. The name of the APIService must be "version.group".
service                ServiceReference  The service of the API server, reached on its port (443 by default). Absent: the group version is served locally by this server.
group                  str    API group this server hosts.
version                str    API version this server hosts, for example "v1".
insecureSkipTLSVerify  bool   Skip TLS verification of the server's certificate. Strongly discouraged: use caBundle.
caBundle               bytes  PEM CA bundle that verifies the serving certificate of the API server. If unspecified, the system trust roots are used.
groupPriorityMinimum!  int32  The least priority of this group: the group with the highest value is preferred by clients (20 before 10). Equal values are ordered by name. *.k8s.io groups are around 18000, others are recommended in the 2000s.
versionPriority!       int32  Order of this version within its group, highest first; equal priorities are ordered by Kubernetes version rules (GA before beta before alpha, then by number).

@apiregistration.v1.ServiceReference
A reference to a service.
namespace  str    Namespace of the service.
name       str    Name of the service.
port       int32  Port of the service that hosts the API server (1-65535). Default 443.

@apiregistration.v1.APIServiceStatus
The state of an APIService.
conditions  [APIServiceCondition]  Current service state of the APIService.

@apiregistration.v1.APIServiceCondition
One aspect of an APIService's state.
type!               str    Type of the condition: Available.
status!             str(False|True|Unknown)  Status of the condition: True, False or Unknown.
lastTransitionTime  time   Last time the condition changed status.
reason              str    One-word CamelCase reason for the last transition.
message             str    Human readable details of the last transition.
"""


_VPA = r"""
@vpa.v1.VerticalPodAutoscaler kind
A VerticalPodAutoscaler recommends and applies container resource requests for the pods of a workload, in place when possible.
spec!   VerticalPodAutoscalerSpec    What to autoscale and how.
status  VerticalPodAutoscalerStatus  The latest recommendation and conditions. Read-only.

@vpa.v1.VerticalPodAutoscalerSpec preserve
The desired behavior of a VPA.
targetRef!      CrossVersionObjectReference  The workload (Deployment, ReplicaSet, ...) whose pods are autoscaled.
updatePolicy    PodUpdatePolicy              Whether and how recommendations are applied to pods.
resourcePolicy  PodResourcePolicy            Per-container constraints on the recommendations.
recommenders    [VerticalPodAutoscalerRecommenderSelector]  Recommender responsible for this VPA; at most one. Default the default recommender.

@vpa.v1.CrossVersionObjectReference
A reference to the scaled workload.
apiVersion  str  API version of the referent.
kind!       str  Kind of the referent.
name!       str  Name of the referent.

@vpa.v1.PodUpdatePolicy preserve
How recommendations are applied.
updateMode            str(Off|Initial|Recreate|InPlaceOrRecreate|InPlace|Auto)  Off only recommends; Initial sets resources at pod creation; Recreate evicts pods to apply changes; InPlaceOrRecreate resizes in place and evicts when that fails; Auto is deprecated (Recreate). Default Recreate.
minReplicas           int32                      Minimum number of live replicas required before the updater evicts.
evictionRequirements  [EvictionRequirement]      Conditions on the recommendation for a pod to be evicted.

@vpa.v1.EvictionRequirement
A condition on recommendations for eviction.
resources!          [str]                                              Resources the condition is about (cpu, memory).
changeRequirement!  str(TargetHigherThanRequests|TargetLowerThanRequests)  Required relation between the target and the current requests.

@vpa.v1.PodResourcePolicy
Per-container constraints.
containerPolicies  [ContainerResourcePolicy]  Policies by container name; "*" applies to containers without their own.

@vpa.v1.ContainerResourcePolicy preserve
Constraints on the recommendation of one container.
containerName        str                                   Name of the container, or "*".
mode                 str(Auto|Off)                         Whether the container is autoscaled. Default Auto.
minAllowed           {qty}                                 Lower bound of the recommendation.
maxAllowed           {qty}                                 Upper bound of the recommendation.
controlledResources  [str]                                 Resources recommended for. Default [cpu, memory].
controlledValues     str(RequestsAndLimits|RequestsOnly)   Whether limits are scaled proportionally with requests. Default RequestsAndLimits.

@vpa.v1.VerticalPodAutoscalerRecommenderSelector
The recommender of a VPA.
name!  str  Name of the recommender.

@vpa.v1.VerticalPodAutoscalerStatus preserve
The observed state of a VPA.
recommendation  RecommendedPodResources             The most recent recommendation.
conditions      [VerticalPodAutoscalerCondition]    Conditions: RecommendationProvided, LowConfidence, NoPodsMatched, FetchingHistory, ConfigDeprecated, ConfigUnsupported.

@vpa.v1.RecommendedPodResources
A recommendation for a pod.
containerRecommendations  [RecommendedContainerResources]  One recommendation per container.

@vpa.v1.RecommendedContainerResources
The recommendation for one container.
containerName    str    Name of the container.
target!          {qty}  Recommended requests.
lowerBound       {qty}  Minimum recommended requests.
upperBound       {qty}  Maximum recommended requests.
uncappedTarget   {qty}  Recommendation before the container policy's bounds were applied.

@vpa.v1.VerticalPodAutoscalerCondition
A condition of a VPA.
type!               str   Type of the condition.
status!             str   True, False or Unknown.
lastTransitionTime  time  Last time the status changed.
reason              str   CamelCase reason.
message             str   Human readable details.

@vpa.v1.VerticalPodAutoscalerCheckpoint kind
The recommender's saved state (usage histograms) for one container of one VPA, so recommendations survive restarts.
spec    VerticalPodAutoscalerCheckpointSpec    Which VPA and container.
status  VerticalPodAutoscalerCheckpointStatus  The saved state.

@vpa.v1.VerticalPodAutoscalerCheckpointSpec
What a checkpoint belongs to.
vpaObjectName  str  Name of the VPA.
containerName  str  Name of the container.

@vpa.v1.VerticalPodAutoscalerCheckpointStatus preserve
The saved recommender state.
lastUpdateTime     time               When the checkpoint was last written.
version            str                Version of the checkpoint format.
cpuHistogram       HistogramCheckpoint  CPU usage histogram.
memoryHistogram    HistogramCheckpoint  Memory peak histogram.
firstSampleStart   time               Start of the first sample.
lastSampleStart    time               Start of the last sample.
totalSamplesCount  int32              Number of samples in the histograms.

@vpa.v1.HistogramCheckpoint
A decaying histogram.
referenceTimestamp  time     Reference time of the decay.
bucketWeights       {int32}  Weight of each non-empty bucket, scaled to integers, by bucket index.
totalWeight         double   Sum of the bucket weights.
"""

_WORKLOAD = r"""
@scheduling.v1alpha1.Workload kind
A Workload groups the pods of a workload for workload-aware scheduling: each of its pod groups is scheduled with a common policy, for example all-or-nothing (gang) scheduling. Pods join through spec.workloadRef.
spec!  WorkloadSpec  Desired behavior of the Workload.

@scheduling.v1alpha1.WorkloadSpec
The desired state of a Workload.
controllerRef  TypedLocalObjectReference  Optional reference to the object controlling the pods, such as a Job, for tools. Immutable once set.
podGroups!     [PodGroup]                 The pod groups of the Workload, at most 8, unique by name. Immutable.

@scheduling.v1alpha1.TypedLocalObjectReference
A typed reference to an object in the same namespace.
apiGroup  str  API group of the referenced resource; empty for the core group. A DNS subdomain.
kind!     str  Kind of the referenced resource; a path segment name.
name!     str  Name of the referenced resource; a path segment name.

@scheduling.v1alpha1.PodGroup
A set of pods scheduled with one policy.
name!    str             Name of the group, unique within the Workload; a DNS label. Immutable.
policy!  PodGroupPolicy  How the pods of the group are scheduled.

@scheduling.v1alpha1.PodGroupPolicy
The scheduling policy of a pod group: exactly one of basic and gang.
basic  BasicSchedulingPolicy  Standard Kubernetes scheduling, pod by pod.
gang   GangSchedulingPolicy   All-or-nothing scheduling of at least minCount pods.

@scheduling.v1alpha1.BasicSchedulingPolicy
Standard Kubernetes scheduling behavior; intentionally empty.

@scheduling.v1alpha1.GangSchedulingPolicy
The parameters of gang scheduling.
minCount!  int32  Minimum number of pods that must be schedulable or scheduled together before the group is admitted. Positive.
"""


_DRA = r"""
@resource.v1.DeviceClass kind
A DeviceClass holds the selectors and configuration, set by an administrator or vendor, that device requests of claims refer to by name. Cluster-scoped.
spec!  DeviceClassSpec  What devices of the class are and how to configure them. Mutable: allocations use the class as it was when they were made.

@resource.v1.DeviceClassSpec
What a DeviceClass selects and configures.
selectors             [DeviceSelector]            Every selector must match a device allocated through this class.
config                [DeviceClassConfiguration]  Configuration passed to the driver of each device allocated through this class; not used for allocation.
extendedResourceName  str                         Extended resource name that pods can request to get a device of this class (DRAExtendedResource).

@resource.v1.DeviceClassConfiguration
Configuration of a DeviceClass.
opaque  OpaqueDeviceConfiguration  Driver-specific configuration parameters.

@resource.v1.DeviceSelector
A criterion a device must satisfy: exactly one field is set.
cel  CELDeviceSelector  A CEL expression.

@resource.v1.CELDeviceSelector
A CEL expression selecting devices.
expression!  str  A CEL expression over the object "device" (driver, attributes and capacity grouped by domain, allowMultipleAllocations) that must evaluate to true for a matching device. At most 10 Ki long.

@resource.v1.OpaqueDeviceConfiguration
Configuration parameters for one driver, in the driver's own format.
driver!      str  The driver the parameters are for: a DNS subdomain, usually ending in a domain of the driver's vendor.
parameters!  obj  Arbitrary JSON object, at most 10 Ki, validated and versioned by the driver.

@resource.v1.ResourceClaim kind
A ResourceClaim requests access to devices for workloads. Its status tracks the allocation and which consumers (pods) may use it.
spec!   ResourceClaimSpec    What is requested and how to configure it. Immutable.
status  ResourceClaimStatus  Whether the claim is allocated, what was allocated and who reserved it. Written through the status subresource.

@resource.v1.ResourceClaimSpec
What a ResourceClaim requests.
devices  DeviceClaim  How to request devices.

@resource.v1.DeviceClaim
The device requests of a claim, with constraints across them and configuration for them.
requests     [DeviceRequest]             Requests for distinct devices, all of which must be satisfied. At most 32, unique by name.
constraints  [DeviceConstraint]          Constraints the allocated devices must satisfy together.
config       [DeviceClaimConfiguration]  Configuration for the drivers of the allocated devices; ignored by allocation.

@resource.v1.DeviceRequest
A request for devices of a claim: exactly one of exactly and firstAvailable.
name!           str                 Name of the request, referenced by containers (resources.claims[].request) and constraints; a DNS label.
exactly         ExactDeviceRequest  One request that must be met exactly.
firstAvailable  [DeviceSubRequest]  Alternatives tried in order; the scheduler picks the first it can satisfy. At most 8.

@resource.v1.ExactDeviceRequest
A request for one or more identical devices.
deviceClassName!   str                     The DeviceClass whose selectors and configuration the request inherits.
selectors          [DeviceSelector]        Criteria every allocated device must also satisfy.
allocationMode     str(ExactCount|All)     ExactCount (default) asks for count devices; All for all matching devices of a pool.
count              int64                   Number of devices in ExactCount mode; default 1.
adminAccess        bool                    Administrative access to the devices, ignoring other allocations (needs the resource.kubernetes.io/admin-access namespace label).
tolerations        [DeviceToleration]      Device taints this request tolerates.
capacity           CapacityRequirements    Capacity each allocated device must provide (consumable capacity).
derivedAttributes  [DeviceDerivedAttribute]  Virtual attributes computed per device for constraints (DRADerivedAttributes).

@resource.v1.DeviceSubRequest
One alternative of a firstAvailable request.
name!             str                   Name of the subrequest, referenced as <request>/<subrequest>; a DNS label.
deviceClassName!  str                   The DeviceClass the subrequest inherits from.
selectors         [DeviceSelector]      Criteria every allocated device must also satisfy.
allocationMode    str(ExactCount|All)   ExactCount (default) or All.
count             int64                 Number of devices in ExactCount mode; default 1.
tolerations       [DeviceToleration]    Device taints this subrequest tolerates.
capacity          CapacityRequirements  Capacity each allocated device must provide.
derivedAttributes  [DeviceDerivedAttribute]  Virtual attributes computed per device for constraints.

@resource.v1.DeviceDerivedAttribute
A virtual device attribute computed with CEL.
name!        str  Fully qualified attribute name used in constraints.
expression!  str  CEL expression computing the value for each candidate device.

@resource.v1.CapacityRequirements
Capacity a request needs from each device.
requests  {qty}  Amount of each named capacity.

@resource.v1.DeviceToleration
A device taint the claim tolerates.
key                str                                 Taint key to tolerate; empty with operator Exists tolerates every taint.
operator           str(Equal|Exists)                   How the key relates to the value. Default Equal.
value              str                                 Taint value to match; empty for Exists.
effect             str(None|NoSchedule|NoExecute)      Taint effect to match; empty matches all.
tolerationSeconds  int64                               How long a NoExecute taint is tolerated before eviction; unset tolerates it forever.

@resource.v1.DeviceConstraint
A constraint on the devices allocated for some or all requests.
requests           [str]  Requests (or request/subrequest) the constraint applies to; all when empty.
matchAttribute     str    Fully qualified attribute every device must have with the same value.
distinctAttribute  str    Fully qualified attribute every device must have with a different value.

@resource.v1.DeviceClaimConfiguration
Configuration for some or all requests of a claim.
requests  [str]                      Requests (or request/subrequest) the configuration applies to; all when empty.
opaque    OpaqueDeviceConfiguration  Driver-specific configuration parameters.

@resource.v1.ResourceClaimStatus
The observed state of a claim.
allocation   AllocationResult                  Set once the claim is allocated; cannot change afterwards except by being cleared (deallocation).
reservedFor  [ResourceClaimConsumerReference]  Consumers allowed to use the claim; at most 256. A reserved claim is not deallocated.
devices      [AllocatedDeviceStatus]           Status of each allocated device, as reported by its driver.

@resource.v1.ResourceClaimConsumerReference
A consumer of a claim, in the claim's namespace.
apiGroup   str  API group of the consumer; empty for the core group.
resource!  str  Resource type of the consumer, for example "pods".
name!      str  Name of the consumer.
uid!       str  UID of the consumer instance.

@resource.v1.AllocationResult
The result of allocating a claim.
devices              DeviceAllocationResult  The allocated devices.
nodeSelector         core.v1.NodeSelector    Nodes where the allocated devices are available; everywhere when unset.
allocationTimestamp  time                    When the allocation was made, if known.

@resource.v1.DeviceAllocationResult
The devices allocated for a claim and their configuration.
results  [DeviceRequestAllocationResult]  One entry per allocated device.
config   [DeviceAllocationConfiguration]  Claim and class configuration for the drivers.

@resource.v1.DeviceRequestAllocationResult
One device allocated for a request.
request!                  str                 The request (or request/subrequest) the device was allocated for.
driver!                   str                 Driver of the device.
pool!                     str                 Pool of the device.
device!                   str                 Name of the device in its pool.
adminAccess               bool                Whether the device was allocated for administrative access.
tolerations               [DeviceToleration]  The request's tolerations at allocation time.
bindingConditions         [str]               Conditions that must become True before the pod is bound.
bindingFailureConditions  [str]               Conditions signalling that binding failed.
shareID                   str                 Identifies one share of a device allocated several times.
consumedCapacity          {qty}               Capacity of the device consumed by this allocation.
skipNodeOperations        [str]               Node-local operations the kubelet skips for this device.

@resource.v1.DeviceAllocationConfiguration
Configuration in an allocation result.
source!   str(FromClass|FromClaim)   Whether the configuration comes from the class or the claim.
requests  [str]                      Requests the configuration applies to; all when empty.
opaque    OpaqueDeviceConfiguration  Driver-specific configuration parameters.

@resource.v1.AllocatedDeviceStatus
The status of an allocated device, reported by its driver.
driver!      str                  Driver of the device.
pool!        str                  Pool of the device.
device!      str                  Name of the device.
shareID      str                  The allocation share, for devices allocated several times.
conditions   [meta.v1.Condition]  Latest observations of the device's state, for example Ready. At most 8.
data         obj                  Driver-specific data, at most 10 Ki.
networkData  NetworkDeviceData    Network details of the device.

@resource.v1.NetworkDeviceData
Network details of an allocated device.
interfaceName    str    Name of the network interface in the pod.
ips              [str]  Addresses of the interface in CIDR notation.
hardwareAddress  str    Hardware (MAC) address of the interface.

@resource.v1.ResourceClaimTemplate kind
A ResourceClaimTemplate describes the ResourceClaim created for each pod that references it.
spec!  ResourceClaimTemplateSpec  The claim to create. Immutable.

@resource.v1.ResourceClaimTemplateSpec
The metadata and spec of the claims created from a template.
metadata  meta.v1.ObjectMeta  Labels and annotations copied into each claim; no other field may be set.
spec!     ResourceClaimSpec   The spec of each claim, copied unchanged.

@resource.v1.ResourceSlice kind
A ResourceSlice publishes some or all devices of a pool managed by a DRA driver, with their attributes and capacities. Cluster-scoped.
spec!  ResourceSliceSpec  What the driver publishes.

@resource.v1.ResourceSliceSpec
The devices of a slice and where they are available.
driver!                 str                          The DRA driver providing the devices; a DNS subdomain. Immutable.
pool!                   ResourcePool                 The pool the slice belongs to.
nodeName                str                          Node providing the devices, for node-local pools. Immutable. Exactly one of nodeName, nodeSelector, allNodes and perDeviceNodeSelection is set.
nodeSelector            core.v1.NodeSelector         Nodes with access to the devices; exactly one term.
allNodes                bool                         Every node has access to the devices.
devices                 [Device]                     Devices of the pool; at most 128 (64 with taints, counters or list attributes).
perDeviceNodeSelection  bool                         Each device names the nodes with access to it.
sharedCounters          [CounterSet]                 Counter sets devices of the pool consume from; not together with devices.
partitionTypeAttribute  str                          Attribute naming each partitionable device's partition type.
skipNodeOperations      [str]                        Node-local operations the kubelet skips for these devices.

@resource.v1.ResourcePool
The pool a slice belongs to.
name!                str    Name of the pool, unique per driver; one or more DNS subdomains separated by '/'. Immutable.
generation!          int64  Changed by the driver whenever the pool changes; consumers only use the slices of the highest generation.
resourceSliceCount!  int64  Number of slices of the pool at this generation. Positive.

@resource.v1.Device
One device of a pool.
name!                     str                                   Name of the device, unique in the pool; a DNS label.
attributes                {DeviceAttribute}                     Attributes of the device by qualified name. At most 32 attributes and capacities together.
capacity                  {DeviceCapacity}                      Capacities of the device by qualified name.
consumesCounters          [DeviceCounterConsumption]            Counters the device consumes from shared counter sets.
nodeName                  str                                   Node with access to the device (perDeviceNodeSelection).
nodeSelector              core.v1.NodeSelector                  Nodes with access to the device (perDeviceNodeSelection).
allNodes                  bool                                  Every node has access to the device (perDeviceNodeSelection).
taints                    [DeviceTaint]                         Driver-defined taints of the device. At most 16.
bindsToNode               bool                                  An allocation of the device is limited to the node chosen at allocation.
bindingConditions         [str]                                 Conditions that must become True before pods using the device are bound.
bindingFailureConditions  [str]                                 Conditions signalling that binding failed.
allowMultipleAllocations  bool                                  The device may be allocated to several requests, sharing its capacity.
nodeAllocatableResources  {obj}                                 Node resources (cpu, memory, ...) managed through this device.

@resource.v1.DeviceAttribute
The value of a device attribute: exactly one field is set.
int       int64   A number.
bool      bool    A boolean.
string    str     A string of at most 64 bytes.
version   str     A semantic version (semver.org 2.0.0).
ints      [int64]  A non-empty list of numbers.
bools     [bool]   A non-empty list of booleans.
strings   [str]    A non-empty list of strings.
versions  [str]    A non-empty list of semantic versions.

@resource.v1.DeviceCapacity
A capacity of a device.
value!         qty                    Total amount of the capacity.
requestPolicy  CapacityRequestPolicy  How requests consume the capacity of a multi-allocatable device.

@resource.v1.CapacityRequestPolicy
How requests consume a device capacity.
default      qty                         Amount consumed by a request that does not ask for this capacity.
validValues  [qty]                       Allowed amounts, ascending.
validRange   CapacityRequestPolicyRange  Allowed range of amounts.

@resource.v1.CapacityRequestPolicyRange
A range of allowed capacity amounts.
min!  qty  Smallest amount.
max   qty  Largest amount.
step  qty  Step between allowed amounts, from min.

@resource.v1.CounterSet
A named set of counters devices of the pool consume from.
name!      str        Name of the set; a DNS label.
counters!  {Counter}  The counters of the set, at most 32.

@resource.v1.Counter
A counter value.
value!  qty  Amount available or consumed.

@resource.v1.DeviceCounterConsumption
The counters a device consumes from one counter set.
counterSet!          str        Name of the counter set.
counters!            {Counter}  Amounts consumed.
compatibilityGroups  [str]      Groups of devices that may be allocated together from the same counter set.

@resource.v1.DeviceTaint
A taint of a device, affecting claims that do not tolerate it.
key!       str                             Taint key; a label name.
value      str                             Taint value; a label value.
effect!    str(None|NoSchedule|NoExecute)  Effect on claims that do not tolerate the taint.
timeAdded  time                            When the taint was added.
"""


ALL_TEXT = (_META, _POD, _NODE, _CORE, _CORE_WORKLOADS, _APPS, _AUTOSCALING, _BATCH, _MISC, _APIEXT, _ADMREG,
            _APIREG, _VPA, _WORKLOAD, _DRA, STORAGE, SERVED, ADMISSION_POLICIES)


# -- parsing ----------------------------------------------------------------------------------

@dataclass(frozen=True)
class Field:
    name: str
    type: str          # a parsed type expression, see parse_type
    description: str
    required: bool


@dataclass
class Definition:
    name: str          # full definition name, e.g. io.k8s.api.core.v1.Pod
    description: str
    fields: list[Field] = field(default_factory=list)
    kind: bool = False           # a top-level kind (has apiVersion/kind/metadata and a list)
    preserve: bool = False       # x-kubernetes-preserve-unknown-fields

    @property
    def required(self) -> list[str]:
        return [f.name for f in self.fields if f.required]


def full_name(short: str, package: str) -> str:
    """``core.v1.Pod`` or ``Pod`` (in ``package``) -> ``io.k8s.api.core.v1.Pod``."""
    if "." not in short:
        return f"{PACKAGES[package]}.{short}"
    pkg, _, name = short.rpartition(".")
    if pkg not in PACKAGES:
        raise ValueError(f"unknown package {pkg!r} in {short!r}")
    return f"{PACKAGES[pkg]}.{name}"


_SCALARS = {"str", "int32", "int64", "bool", "double", "bytes", "qty", "ios", "time", "microtime",
            "any", "obj"}
_ENUM = re.compile(r"^str\(([^()]*)\)$")


def parse_type(text: str, package: str):
    """A type expression -> a nested tuple: ("scalar", name) | ("enum", values) |
    ("ref", full name) | ("list", t) | ("map", t)."""
    if text.startswith("[") and text.endswith("]"):
        return ("list", parse_type(text[1:-1], package))
    if text.startswith("{") and text.endswith("}"):
        return ("map", parse_type(text[1:-1], package))
    m = _ENUM.match(text)
    if m:
        return ("enum", tuple(m.group(1).split("|")))
    if text in _SCALARS:
        return ("scalar", text)
    return ("ref", full_name(text, package))


def _parse(texts) -> dict[str, Definition]:
    defs: dict[str, Definition] = {}
    for text in texts:
        for block in re.split(r"\n\s*\n", text.strip()):
            lines = [ln for ln in block.strip().splitlines() if ln.strip()]
            header = lines[0].split()
            if not header[0].startswith("@"):
                raise ValueError(f"block without header: {lines[0]!r}")
            short = header[0][1:]
            package = short.rpartition(".")[0]
            flags = set(header[1:])
            name = full_name(short, package)
            d = Definition(name, lines[1].strip(), kind="kind" in flags,
                           preserve="preserve" in flags)
            for line in lines[2:]:
                fname, ftype, *desc = line.split(None, 2)
                req = fname.endswith("!")
                fname = fname.rstrip("!")
                d.fields.append(Field(fname, parse_type(ftype, package),
                                      desc[0].strip() if desc else "", req))
            if name in defs:
                raise ValueError(f"duplicate definition {name}")
            defs[name] = d
    return defs


DEFINITIONS: dict[str, Definition] = _parse(ALL_TEXT)


def refs_of(t) -> list[str]:
    """The definitions a parsed type refers to."""
    tag = t[0]
    if tag == "ref":
        return [t[1]]
    if tag in ("list", "map"):
        return refs_of(t[1])
    if tag == "scalar":
        return {"qty": [QUANTITY], "ios": [INT_OR_STRING], "time": [TIME],
                "microtime": [MICRO_TIME]}.get(t[1], [])
    return []


def kind_definition(group: str, version: str, kind: str) -> str:
    """The definition name Kubernetes uses for a kind, built-in or custom."""
    if group == "":
        return f"io.k8s.api.core.{version}.{kind}"
    if group == "apiextensions.k8s.io":
        return f"io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.{version}.{kind}"
    if group == "apiregistration.k8s.io":
        return f"io.k8s.kube-aggregator.pkg.apis.apiregistration.{version}.{kind}"
    if group in BUILTIN_GROUPS:
        return f"io.k8s.api.{group.split('.')[0]}.{version}.{kind}"
    # custom resources: the reversed group, as the CRD OpenAPI builder names them
    return ".".join(reversed(group.split("."))) + f".{version}.{kind}"


BUILTIN_GROUPS = frozenset({
    "apps", "policy", "autoscaling", "batch", "scheduling.k8s.io", "node.k8s.io",
    "coordination.k8s.io", "events.k8s.io", "admissionregistration.k8s.io", "networking.k8s.io",
    "storage.k8s.io", "rbac.authorization.k8s.io", "authorization.k8s.io", "authentication.k8s.io",
    "discovery.k8s.io", "certificates.k8s.io",
    "flowcontrol.apiserver.k8s.io", "resource.k8s.io", "apiregistration.k8s.io"})


def check() -> list[str]:
    """Dangling references (a self-test for the tables above)."""
    known = set(DEFINITIONS) | {QUANTITY, INT_OR_STRING, TIME, MICRO_TIME}
    problems = []
    for d in DEFINITIONS.values():
        for f in d.fields:
            for r in refs_of(f.type):
                if r not in known:
                    problems.append(f"{d.name}.{f.name} -> {r}")
    return problems
