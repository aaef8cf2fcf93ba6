"""What a real cluster recorded over a window: the input of ``kvert scenario import``.

A ``RecordedHistory`` is the usage history of every container instance seen in the window,
on one time grid (``start + k * step`` for ``k`` in ``0 .. steps-1``; the value at a step
stands for the step that begins there), whatever its source: a Prometheus server with
cAdvisor's and kube-state-metrics' series (``kvert.sim.prometheus_history``), or a samples
CSV file (the ``kvert vpa recommend --samples`` format with a namespace column).

A *container instance* is one (namespace, pod, container): pods that came and went in the
window each have their own. Values are floats with NaN where nothing was recorded (the
container did not exist then, or a scrape was missed): CPU in cores (a rate over the step),
memory in bytes (the working set), throttling in throttled seconds per second. OOM kills
and restarts are step indices (an index repeats for several at one step).

``pods`` says who owned each pod, as far as the source knows (kube-state-metrics'
``kube_pod_owner``, with ReplicaSets resolved to their Deployment and Jobs to their
CronJob); ``None`` where it does not know (the importer then goes by the pod's name).
``warnings`` are what the source noticed and assumed (missing series, counter resets,
gaps), each naming the object or series: the importer passes them on to the user.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

PodKey = tuple[str, str]                  # (namespace, pod)
ContainerKey = tuple[str, str, str]       # (namespace, pod, container)


@dataclass
class ContainerSeries:
    namespace: str
    pod: str
    container: str
    cpu: np.ndarray                        # cores, float64, shape (steps,), NaN where unknown
    memory: np.ndarray                     # working-set bytes, float64, shape (steps,), NaN where unknown
    throttled: np.ndarray | None = None    # throttled seconds per second, shape (steps,), or None
    ooms: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))      # step indices
    restarts: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))  # step indices, every cause
    requests: dict[str, int] = field(default_factory=dict)   # last recorded: cpu millicores, memory bytes
    limits: dict[str, int] = field(default_factory=dict)
    # the memory limit at each step (bytes, NaN unknown), when the source records limits over time
    memory_limit: np.ndarray | None = None

    @property
    def key(self) -> ContainerKey:
        return (self.namespace, self.pod, self.container)

    def seen(self) -> np.ndarray:
        """Steps at which the instance has a CPU or memory value."""
        return ~(np.isnan(self.cpu) & np.isnan(self.memory))


@dataclass
class PodRecord:
    namespace: str
    name: str
    owner_kind: str | None = None          # Deployment, StatefulSet, DaemonSet, Job, CronJob, ReplicaSet, ...
    owner_name: str | None = None
    node: str | None = None


@dataclass
class RecordedHistory:
    start: float                           # unix seconds of the first step
    step: float                            # seconds between steps
    steps: int
    containers: list[ContainerSeries] = field(default_factory=list)
    pods: dict[PodKey, PodRecord] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    source: str = ""                       # the URL or file it came from, for messages

    @property
    def end(self) -> float:
        """The end of the window: the end of the last step."""
        return self.start + self.steps * self.step

    def times(self) -> np.ndarray:
        return self.start + self.step * np.arange(self.steps, dtype=np.float64)


__all__ = ["ContainerKey", "ContainerSeries", "PodKey", "PodRecord", "RecordedHistory"]
