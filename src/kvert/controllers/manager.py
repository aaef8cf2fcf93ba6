"""The controller manager: every controller of ``kvert up`` on shared informers.

``ControllerManager(client, clock)`` builds the ReplicaSet, ReplicationController, Deployment,
StatefulSet, DaemonSet, Job, CronJob,
TTL-after-finished, disruption, ResourceClaim, namespace, pod GC, node lifecycle, taint
eviction, ServiceAccount, ClusterRole aggregation, Endpoints, EndpointSlice and
HorizontalPodAutoscaler and PersistentVolume binder controllers and the garbage collector (which also collects
ResourceClaims owned by deleted pods) over one
``InformerFactory`` (one list+watch per resource, as kube-controller-manager's shared
informers). ``await manager.run()`` starts
the informers, waits until they have listed the store, and runs the controllers until
``manager.stop()``. Stopping (or killing the task) loses nothing: a new manager rebuilds
everything from the store.

The root CA publisher (``root-ca-cert-publisher``) needs the cluster's CA, so it runs
only when named, with it: ``controllers=ALL_CONTROLLERS + ("root-ca-cert-publisher",),
settings={"root-ca-cert-publisher": {"ca_pem": pem}}``. The HPA controller reads pod
metrics from ``settings={"horizontalpodautoscaling": {"metrics": provider}}`` (anything with
``pod_metrics(namespace)``), else through the client's ``get_path`` (metrics.k8s.io).

The CSR signer (``csrsigning``) needs the cluster CA's certificate and key, so it too runs only
when named, with ``settings={"csrsigning": {"ca_cert": pem, "ca_key": pem}}``; so does kvert's
approver of kubelet serving certificates (``kubelet-serving-approver``), which upstream's
controller manager does not have. ``apiservices`` (APIService autoregistration and
availability) is kube-apiserver's aggregator upstream: the API server runs it, when named.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any

from kvert.client.base import Client
from kvert.clock import Clock
from kvert.controllers.apiservices import APIServiceController
from kvert.controllers.base import Controller, InformerFactory
from kvert.controllers.certificates_approving import CSRApprovingController, KubeletServingApprover
from kvert.controllers.certificates_signing import CSRSigningController
from kvert.controllers.clusterroleaggregation import ClusterRoleAggregationController
from kvert.controllers.cronjob import CronJobController
from kvert.controllers.daemonset import DaemonSetController
from kvert.controllers.deployment import DeploymentController
from kvert.controllers.disruption import DisruptionController
from kvert.controllers.endpoints import EndpointsController
from kvert.controllers.endpointslice import EndpointSliceController
from kvert.controllers.gc import DEFAULT_RESOURCES, GarbageCollector
from kvert.controllers.horizontal import HorizontalController
from kvert.controllers.job import JobController
from kvert.controllers.namespace import NamespaceController
from kvert.controllers.nodeipam import NodeIpamController
from kvert.controllers.nodelifecycle import NodeLifecycleController
from kvert.controllers.persistentvolume import PersistentVolumeController
from kvert.controllers.podgc import PodGC
from kvert.controllers.replicaset import ReplicaSetController, ReplicationControllerController
from kvert.controllers.resourceclaim import CLAIMS, ResourceClaimController
from kvert.controllers.rootcapublisher import RootCACertPublisher
from kvert.controllers.serviceaccount import ServiceAccountsController
from kvert.controllers.statefulset import StatefulSetController
from kvert.controllers.tainteviction import TaintEvictionController
from kvert.controllers.ttlafterfinished import TTLAfterFinishedController

log = logging.getLogger(__name__)

ALL_CONTROLLERS = ("replicaset", "deployment", "disruption", "garbagecollector", "resourceclaim",
                   "namespace", "podgc", "nodelifecycle", "tainteviction", "serviceaccount",
                   "clusterrole-aggregation", "job", "cronjob", "ttl-after-finished", "endpoints",
                   "endpointslice", "nodeipam", "statefulset", "replicationcontroller", "daemonset",
                   "horizontalpodautoscaling", "csrapproving", "persistentvolume-binder")


def _garbage_collector(client: Client, clock: Clock, **kwargs: Any) -> GarbageCollector:
    # ResourceClaims generated for pods are owned by them: collect them with their pods.
    return GarbageCollector(client, clock, resources=DEFAULT_RESOURCES + (CLAIMS,), **kwargs)


_FACTORIES: dict[str, Callable[..., Controller]] = {
    "replicaset": ReplicaSetController,
    "deployment": DeploymentController,
    "disruption": DisruptionController,
    "garbagecollector": _garbage_collector,
    "resourceclaim": ResourceClaimController,
    "namespace": NamespaceController,
    "podgc": PodGC,
    "nodelifecycle": NodeLifecycleController,
    "tainteviction": TaintEvictionController,
    "serviceaccount": ServiceAccountsController,
    "root-ca-cert-publisher": RootCACertPublisher,
    "clusterrole-aggregation": ClusterRoleAggregationController,
    "job": JobController,
    "cronjob": CronJobController,
    "ttl-after-finished": TTLAfterFinishedController,
    "endpoints": EndpointsController,
    "endpointslice": EndpointSliceController,
    "nodeipam": NodeIpamController,
    "statefulset": StatefulSetController,
    "replicationcontroller": ReplicationControllerController,
    "daemonset": DaemonSetController,
    "horizontalpodautoscaling": HorizontalController,
    "csrapproving": CSRApprovingController,
    "csrsigning": CSRSigningController,
    "kubelet-serving-approver": KubeletServingApprover,
    "apiservices": APIServiceController,
    "persistentvolume-binder": PersistentVolumeController,
}


class ControllerManager:
    def __init__(self, client: Client, clock: Clock, *,
                 controllers: tuple[str, ...] | list[str] = ALL_CONTROLLERS, workers: int = 1,
                 settings: dict[str, dict[str, Any]] | None = None):
        """``settings``: per-controller keyword arguments, e.g.
        ``{"podgc": {"terminated_pod_gc_threshold": 100}}``."""
        unknown = [name for name in controllers if name not in _FACTORIES]
        if unknown:
            raise ValueError(f"unknown controllers {unknown}; known: {list(_FACTORIES)}")
        self.client = client
        self.clock = clock
        self.informers = InformerFactory(client, clock)
        self.controllers: dict[str, Controller] = {
            name: _FACTORIES[name](client, clock, informers=self.informers, workers=workers,
                                   **(settings or {}).get(name, {}))
            for name in controllers}
        self._tasks: list[asyncio.Task] = []
        self._stopped = False

    def __getitem__(self, name: str) -> Controller:
        return self.controllers[name]

    @property
    def synced(self) -> bool:
        return all(c.synced for c in self.controllers.values())

    async def run(self) -> None:
        if self._stopped:
            return
        self.informers.start()
        self._tasks = [asyncio.ensure_future(c.run()) for c in self.controllers.values()]
        log.info("controller manager: running %s", ", ".join(self.controllers))
        try:
            await asyncio.gather(*self._tasks)
        finally:
            self.stop()

    def stop(self) -> None:
        self._stopped = True
        for controller in self.controllers.values():
            controller.stop()
        self.informers.stop()
        for task in self._tasks:
            task.cancel()
