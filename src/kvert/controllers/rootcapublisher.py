"""The root CA publisher (kube-controller-manager's ``root-ca-cert-publisher``): a ConfigMap
``kube-root-ca.crt`` with the cluster CA's PEM under ``ca.crt`` in every namespace, so pods
(their ``kube-api-access-*`` volumes) can verify the API server.

A namespace is synced when it appears or changes (while Active) and when its ConfigMap
is changed or deleted: a missing ConfigMap is made, one whose data or description
annotation differs is put back. The CA is a setting (upstream reads ``--root-ca-file`` or
its own kubeconfig's CA).
"""

from __future__ import annotations

from kvert.api.errors import ApiError, NotFound
from kvert.api.meta import deep_copy
from kvert.client.base import Client
from kvert.clock import Clock
from kvert.controllers.base import Controller, InformerFactory, safe_handler
from kvert.controllers.serviceaccount import terminating_refusal

CONFIG_MAP_NAME = "kube-root-ca.crt"
DESCRIPTION_ANNOTATION = "kubernetes.io/description"
DESCRIPTION = ("Contains a CA bundle that can be used to verify the kube-apiserver when using "
               "internal endpoints such as the internal service IP or kubernetes.default.svc. "
               "No other usage is guaranteed across distributions of Kubernetes clusters.")
CONFIG_MAPS = "configmaps"
NAMESPACES = "namespaces"


class RootCACertPublisher(Controller):
    name = "root-ca-cert-publisher"

    def __init__(self, client: Client, clock: Clock, *, ca_pem: str | bytes,
                 informers: InformerFactory | None = None, workers: int = 1):
        super().__init__(client, clock, informers=informers, workers=workers)
        self.ca = ca_pem.decode() if isinstance(ca_pem, bytes) else ca_pem
        self.config_maps = self.use(CONFIG_MAPS)
        self.namespaces = self.use(NAMESPACES)
        self.config_maps.add_handlers(None, safe_handler(lambda old, new: self._config_map(new)),
                                      safe_handler(self._config_map))
        self.namespaces.add_handlers(safe_handler(self._namespace_added),
                                     safe_handler(self._namespace_updated), None)

    def _config_map(self, cm: dict) -> None:
        meta = cm.get("metadata") or {}
        if meta.get("name") == CONFIG_MAP_NAME:
            self.enqueue(meta.get("namespace", ""))

    def _namespace_added(self, namespace: dict) -> None:
        self.enqueue((namespace.get("metadata") or {}).get("name", ""))

    def _namespace_updated(self, old: dict, new: dict) -> None:
        if (new.get("status") or {}).get("phase", "Active") == "Active":
            self.enqueue((new.get("metadata") or {}).get("name", ""))

    async def sync(self, namespace: str) -> None:
        data = {"ca.crt": self.ca}
        cm = self.config_maps.get(CONFIG_MAP_NAME, namespace)
        if cm is None:
            body = {"apiVersion": "v1", "kind": "ConfigMap",
                    "metadata": {"name": CONFIG_MAP_NAME, "namespace": namespace,
                                 "annotations": {DESCRIPTION_ANNOTATION: DESCRIPTION}},
                    "data": data}
            try:
                await self.client.create(CONFIG_MAPS, body, namespace=namespace)
            except NotFound:
                return      # the namespace is gone
            except ApiError as e:
                if not terminating_refusal(e):
                    raise
            return
        annotations = (cm.get("metadata") or {}).get("annotations") or {}
        if cm.get("data") == data and annotations.get(DESCRIPTION_ANNOTATION):
            return
        cm = deep_copy(cm)
        cm["data"] = data
        cm["metadata"].setdefault("annotations", {})[DESCRIPTION_ANNOTATION] = DESCRIPTION
        await self.client.update(CONFIG_MAPS, cm)
