"""Upstream kube-scheduler unit-test vectors, run through ``kvert schedule -o json``.

Each module here (one per plugin: ``interpodaffinity.py``, ``podtopologyspread.py``, ...)
defines ``VECTORS: list[Vector]``; ``tests/scheduler/test_upstream_vectors.py`` runs every one
of them through the ``kvert schedule`` command on a cluster snapshot made of the vector's
nodes, existing pods, other objects and the pod to schedule, and compares what the command
prints for that pod with the vector's expectations. Expected values are upstream's (the Go
test named in ``go_test``), never kvert's output.

Modes:

* ``"filter"``: the profile has only the plugin under test (plus PrioritySort and
  DefaultBinder) at every extension point it implements. ``filtered`` must equal the
  command's ``filtered`` map exactly (node -> the rejecting plugin's reasons; a node not
  listed passed). ``message`` (when given) must equal the command's message (the
  FailedScheduling text when no node fits).
* ``"score"``: the plugin under test only at PreScore and Score (so no node is filtered);
  ``scores`` must equal the plugin's normalized score per node (before the weight). A
  vector with a single node cannot be scored (kube-scheduler skips scoring then): give at
  least two nodes.
* ``"schedule"``: the default profile of kube-scheduler 1.35, or ``config`` (a full
  KubeSchedulerConfiguration); check any of ``node``, ``nominated``, ``victims``
  (["ns/name", ...] in any order), ``filtered``, ``scores`` (node -> {plugin: score}),
  ``message``.

``args`` are the plugin's pluginConfig args in the filter and score modes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class Vector:
    go_test: str                 # e.g. "interpodaffinity/filtering_test.go TestRequiredAffinitySingleNode/<case>"
    plugin: str                  # the plugin under test (upstream name)
    pod: dict                    # the pod to schedule (no spec.nodeName)
    nodes: list[dict]
    pods: list[dict] = field(default_factory=list)      # existing pods, spec.nodeName set
    objects: list[dict] = field(default_factory=list)   # Namespaces, Services, PDBs, ...
    mode: str = "filter"         # "filter" | "score" | "schedule"
    args: dict | None = None     # the plugin's args (filter and score modes)
    config: dict | None = None   # a whole KubeSchedulerConfiguration (schedule mode)
    filtered: dict[str, list[str]] | None = None
    scores: dict[str, Any] | None = None
    message: str | None = None
    node: Any = ...              # expected node (None: unschedulable); ... = not checked
    nominated: Any = ...         # expected nominatedNode; ... = not checked
    victims: list[str] | None = None

    @property
    def id(self) -> str:
        return self.go_test


__all__ = ["Vector"]
