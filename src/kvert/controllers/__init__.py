"""Workload controllers: ReplicaSets, Deployments, PodDisruptionBudgets, ResourceClaims,
garbage collection.

``ControllerManager(client, clock)`` runs them all (what ``kvert up`` starts); each can
also run alone (``ReplicaSetController(client, clock).run()``).
"""

from kvert.controllers.base import Controller, Expectations, InformerFactory, WorkQueue
from kvert.controllers.deployment import DeploymentController
from kvert.controllers.disruption import DisruptionController
from kvert.controllers.gc import GarbageCollector
from kvert.controllers.manager import ControllerManager
from kvert.controllers.replicaset import ReplicaSetController
from kvert.controllers.resourceclaim import ResourceClaimController

__all__ = ["Controller", "ControllerManager", "DeploymentController", "DisruptionController",
           "Expectations", "GarbageCollector", "InformerFactory", "ReplicaSetController",
           "ResourceClaimController", "WorkQueue"]
