"""In-place pod resize on the node (seed 000, KEP 1287), under today's names.

The package: ``allocation`` (the requirements math), ``view`` (one call's view of a pod at
an allocation), ``decide`` (feasibility and the pending / in-progress decision), ``actuate``
(applying it to the runtime in order) and ``state`` (the resize state and the one place a
resize changes, and checkpoints, a pod's record).

Four sets of resources per container, changed only in this order::

    desired (spec) --> allocated (admitted; checkpointed; status.allocatedResources)
                   --> actuated (last passed to the runtime successfully; checkpointed)
                   --> actual (what ContainerStatus reports; status.containerStatuses[].resources)

The state machine, per pod (seed term -> what the API shows):

* no resize: spec == allocated == actuated; no resize condition.
* ``Proposed``: spec != allocated and the node agent has not decided yet (no condition;
  it decides on the next pass of its reconcile loop, at once in practice).
* ``Deferred``: the resize fits the node's allocatable but not next to the other pods now
  -> condition ``PodResizePending`` reason ``Deferred``, message ``Node didn't have enough
  resource: cpu, requested: 3950, used: 350, capacity: 4000``. Re-evaluated whenever
  something may have freed room (a pod deleted, finished or shrunk, any pod event) and
  every ``retry`` period, in Kubernetes' order (:func:`pending_order`).
* ``Infeasible``: the resize can never fit this node (or breaks the static CPU manager
  rule) -> ``PodResizePending`` reason ``Infeasible``, message ``Node didn't have enough
  capacity: cpu, requested: 4650, capacity: 4000``. Not re-evaluated until the spec changes
  again (a new generation).
* ``InProgress``: accepted: allocated := spec (checkpointed first, then written to the
  status together with the condition ``PodResizeInProgress``), then actuated through
  UpdateContainerResources in the seed's order (:func:`actuate`), then ContainerStatus is
  read back into ``status.containerStatuses[].resources`` and the condition is removed.
  A resize arriving meanwhile is decided after the one being applied, against the latest
  spec (seed: "processed after the in-progress resize completes").
* ``InProgress`` with reason ``Error``: a CRI call failed (rolled back, retried later) or a
  memory limit cannot be lowered yet because the container uses more (the seed's control
  loop, below); the message says which. A new resize is still decided meanwhile (an error
  must not pin a pod to a size the user wants to leave).

An event goes with each decision: ``ResizeStarted`` (Normal), ``ResizeDeferred`` /
``ResizeInfeasible`` (Warning, when the pending condition changes), ``ResizeCompleted``
(Normal), ``ResizeError`` (Warning).

Applying (seed "container resource limit update ordering", Kubernetes
``doPodResizeAction``): one pass per resource, memory then cpu. In a pass, a net increase
of the pod's value updates the pod cgroup first (UpdatePodSandboxResources), then the
containers, decreases before increases; a net decrease updates the containers first and
the pod cgroup last; no net change touches only the containers. If a container update
fails, the containers already updated in that pass are rolled back (in reverse order),
later ones are not touched, and the whole resize is retried later; so the containers'
limits never add up to more than the pod's. Containers whose ``resizePolicy`` for a
changed resource is ``RestartContainer`` are stopped and recreated with the new values
(restartCount + 1, no back-off); ``NotRequired`` containers are never restarted by a resize.

Memory limit decreases (seed "control loop"): before lowering a container's memory limit
the node agent reads its working set. If it is above the new limit, the limit is lowered
only to just above the usage (usage + 10%, never below the target), which makes the kernel
reclaim; the target is set once the usage fits. Until then ``PodResizeInProgress`` stays,
with reason ``Error`` and a message naming the usage and the target, and
``status...resources.limits.memory`` keeps showing the last limit that was fully reached
(the seed updates status resources only when the limit reaches the desired value). The
pod cgroup's memory limit is lowered only after every container reached its target.

Static CPU manager (for docs/kubernetes-choices.md): seed 000 says that on a node with
``cpuManagerPolicy: static`` only whole-CPU values may be resized to, and that a
non-integer CPU resize is refused with an event. Kubernetes 1.35 is stricter by default:
it refuses *every* resize of a Guaranteed pod on such a node (``PodResizePending`` /
``Infeasible``, "Resize is infeasible for Guaranteed Pods alongside CPU Manager static
policy"), unless the alpha gate ``InPlacePodVerticalScalingExclusiveCPUs`` is on, which
allows resizes that keep whole exclusive CPUs. kvert implements the seed's rule, which is
what that gate permits: only Guaranteed pods get exclusive CPUs, so the rule applies to
them, to the containers whose cpu request changes; a new cpu request that is not a whole
number of CPUs makes the resize ``Infeasible`` (message "Resize is infeasible for
Guaranteed Pods alongside CPU Manager static policy: container 'c' asks for 1500m cpu,
only whole CPUs can be resized to") with a ``ResizeInfeasible`` Warning event; a resize
to whole CPUs, and any memory-only resize, proceeds. Burstable pods are not affected
(they never hold exclusive CPUs). See :func:`kvert.kubelet.admission.static_cpu_refusal`.

Other choices (seed vs today):

* Seed T=1 has the API server set ``resourcesAllocated`` at creation; today the node
  agent writes ``allocatedResources`` when it admits the pod, which kvert does.
* ``Proposed`` has no condition today; a resize is "proposed" while the spec differs from
  the allocation and the agent has not decided (usually within one reconcile pass).
* ``resizePolicy`` is not defaulted (absent means ``NotRequired``), as in Kubernetes 1.33+.
* The other pods are counted at max(allocated, actuated) (see ``admission``).
* The seed's T=6 "conflict" happens naturally: status writes carry the resourceVersion
  they were computed from; on 409 the agent re-reads the pod and writes again.
"""

from kvert.kubelet.resize.actuate import (
                                          MEMORY_HEADROOM,
                                          PAGE,
                                          Actuation,
                                          RunningContainer,
                                          actuate,
                                          memory_decrease_refusals,
)
from kvert.kubelet.resize.allocation import (
                                          DEFAULT_SCOPE,
                                          NOT_REQUIRED,
                                          POD_LEVEL,
                                          RESIZABLE,
                                          RESTART_CONTAINER,
                                          Allocation,
                                          ResizeScope,
                                          actual_requirements,
                                          allocatable_containers,
                                          format_list,
                                          format_requirements,
                                          holding,
                                          is_increasing,
                                          merged_allocation,
                                          needs_restart,
                                          pod_level_requirements,
                                          requests_of,
                                          resizable_keys,
                                          resizable_names,
                                          resize_message,
                                          resize_policy,
                                          resize_requested,
                                          same_requirements,
                                          spec_allocation,
                                          with_allocation,
)
from kvert.kubelet.resize.decide import NodeLimits, ResizeDecision, decide, pending_order
from kvert.kubelet.resize.state import (
                                          DEFERRED,
                                          ERROR,
                                          IN_PROGRESS,
                                          INFEASIBLE,
                                          PENDING,
                                          ResizeRecord,
                                          ResizeState,
                                          ResizeWriter,
)
from kvert.kubelet.resize.view import AllocatedPod, CgroupOptions

__all__ = ["Actuation", "AllocatedPod", "Allocation", "CgroupOptions", "DEFAULT_SCOPE", "DEFERRED", "ERROR",
           "IN_PROGRESS", "POD_LEVEL", "ResizeScope", "pod_level_requirements", "resizable_keys",
           "INFEASIBLE", "MEMORY_HEADROOM", "NOT_REQUIRED", "NodeLimits", "PAGE", "PENDING", "RESIZABLE",
           "RESTART_CONTAINER", "ResizeDecision", "ResizeRecord", "ResizeState", "ResizeWriter",
           "RunningContainer", "actual_requirements", "actuate", "allocatable_containers", "decide",
           "format_list", "format_requirements", "holding", "is_increasing", "memory_decrease_refusals",
           "merged_allocation", "needs_restart", "pending_order", "requests_of", "resizable_names",
           "resize_message", "resize_policy", "resize_requested", "same_requirements", "spec_allocation",
           "with_allocation"]
