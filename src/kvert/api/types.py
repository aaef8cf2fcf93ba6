"""The shapes of API objects as the rest of kvert reads them.

Objects travel as decoded JSON, so the general type is :data:`Obj`. The pod and its parts
are read far more than anything else (scheduler, kubelet, quota, VPA), so they also get
TypedDicts with the Kubernetes API's camelCase field names. They are all ``total=False``:
a field may be absent from any object, exactly as in JSON, and a reader still has to supply
the Go zero value itself (``pod.get("spec") or {}``).

The TypedDicts describe well-formed objects. Code that must cope with malformed input (the
validators) keeps working on :data:`Obj` and checks each type it reads.

Declaring a local with one of these types is how a plain ``Obj`` is read as a pod without a
cast: ``spec: PodSpec = pod.get("spec") or {}``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypedDict, TypeGuard

Obj = dict[str, Any]
"""An API object (or any JSON object inside one) as decoded JSON."""

QuantityMap = dict[str, str]
"""A ``{resource name: quantity}`` map as the API carries it (``"500m"``, ``"1Gi"``)."""


def is_mapping(value: object) -> TypeGuard[Mapping[str, Any]]:
    """Is ``value`` a JSON object (or another mapping)? The dict test comes first: the ABC
    check is several times slower, and nearly every value read is a plain dict."""
    return type(value) is dict or isinstance(value, Mapping)


class ObjectMeta(TypedDict, total=False):
    name: str
    generateName: str
    namespace: str
    uid: str
    resourceVersion: str
    generation: int
    creationTimestamp: str
    deletionTimestamp: str
    deletionGracePeriodSeconds: int
    labels: dict[str, str]
    annotations: dict[str, str]
    ownerReferences: list[Obj]
    finalizers: list[str]
    managedFields: list[Obj]


class ResourceRequirements(TypedDict, total=False):
    requests: QuantityMap
    limits: QuantityMap
    claims: list[Obj]


class ContainerResizePolicy(TypedDict, total=False):
    resourceName: str
    restartPolicy: str


class Container(TypedDict, total=False):
    name: str
    image: str
    imagePullPolicy: str
    command: list[str]
    args: list[str]
    workingDir: str
    ports: list[Obj]
    env: list[Obj]
    envFrom: list[Obj]
    resources: ResourceRequirements
    resizePolicy: list[ContainerResizePolicy]
    restartPolicy: str
    volumeMounts: list[Obj]
    livenessProbe: Obj
    readinessProbe: Obj
    startupProbe: Obj
    lifecycle: Obj
    securityContext: Obj
    terminationMessagePath: str
    terminationMessagePolicy: str
    stdin: bool
    tty: bool


class PodSpec(TypedDict, total=False):
    containers: list[Container]
    initContainers: list[Container]
    ephemeralContainers: list[Obj]
    resources: ResourceRequirements
    overhead: QuantityMap
    nodeName: str
    nodeSelector: dict[str, str]
    affinity: Obj
    tolerations: list[Obj]
    topologySpreadConstraints: list[Obj]
    schedulerName: str
    schedulingGates: list[Obj]
    priority: int
    priorityClassName: str
    preemptionPolicy: str
    runtimeClassName: str
    restartPolicy: str
    terminationGracePeriodSeconds: int
    activeDeadlineSeconds: int
    serviceAccountName: str
    hostNetwork: bool
    os: Obj
    volumes: list[Obj]
    resourceClaims: list[Obj]
    readinessGates: list[Obj]


class ContainerStatus(TypedDict, total=False):
    name: str
    image: str
    imageID: str
    containerID: str
    ready: bool
    started: bool
    restartCount: int
    state: Obj
    lastState: Obj
    allocatedResources: QuantityMap
    resources: ResourceRequirements


class PodStatus(TypedDict, total=False):
    phase: str
    conditions: list[Obj]
    message: str
    reason: str
    nominatedNodeName: str
    hostIP: str
    podIP: str
    podIPs: list[Obj]
    startTime: str
    qosClass: str
    containerStatuses: list[ContainerStatus]
    initContainerStatuses: list[ContainerStatus]
    ephemeralContainerStatuses: list[ContainerStatus]
    resourceClaimStatuses: list[Obj]
    observedGeneration: int


class Pod(TypedDict, total=False):
    apiVersion: str
    kind: str
    metadata: ObjectMeta
    spec: PodSpec
    status: PodStatus
