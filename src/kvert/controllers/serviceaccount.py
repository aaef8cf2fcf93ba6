"""The ServiceAccount controller (kube-controller-manager's ``serviceaccount``): a
ServiceAccount named ``default`` in every active namespace, made again when deleted.

Namespaces are synced when they appear or change and when a ServiceAccount is deleted
from them; a namespace that is not Active gets nothing (creating in a terminating one
would be refused anyway, and that refusal is not an error).
"""

from __future__ import annotations

from kvert.api.errors import AlreadyExists, ApiError
from kvert.client.base import Client
from kvert.clock import Clock
from kvert.controllers.base import Controller, InformerFactory, safe_handler

NAMESPACES = "namespaces"
SERVICE_ACCOUNTS = "serviceaccounts"
DEFAULT_SERVICE_ACCOUNTS = ("default",)
NAMESPACE_TERMINATING_CAUSE = "NamespaceTerminating"     # v1.NamespaceTerminatingCause


def namespace_active(namespace: dict) -> bool:
    return (namespace.get("status") or {}).get("phase", "Active") == "Active" and \
        not (namespace.get("metadata") or {}).get("deletionTimestamp")


def terminating_refusal(error: ApiError) -> bool:
    """``HasStatusCause(err, NamespaceTerminatingCause)``."""
    return any(c.reason == NAMESPACE_TERMINATING_CAUSE for c in error.causes)


class ServiceAccountsController(Controller):
    name = "serviceaccount"

    def __init__(self, client: Client, clock: Clock, *, informers: InformerFactory | None = None,
                 workers: int = 1, service_accounts: tuple[str, ...] = DEFAULT_SERVICE_ACCOUNTS):
        super().__init__(client, clock, informers=informers, workers=workers)
        self.ensure = tuple(service_accounts)
        self.namespaces = self.use(NAMESPACES)
        self.service_accounts = self.use(SERVICE_ACCOUNTS)
        self.namespaces.add_handlers(safe_handler(self._namespace),
                                     safe_handler(lambda old, new: self._namespace(new)), None)
        self.service_accounts.add_handlers(None, None, safe_handler(self._deleted))

    def _namespace(self, namespace: dict) -> None:
        self.enqueue((namespace.get("metadata") or {}).get("name", ""))

    def _deleted(self, service_account: dict) -> None:
        self.enqueue((service_account.get("metadata") or {}).get("namespace", ""))

    async def sync(self, namespace_name: str) -> None:
        namespace = self.namespaces.get(namespace_name)
        if namespace is None or not namespace_active(namespace):
            return
        failures: list[ApiError] = []
        for name in self.ensure:
            if self.service_accounts.get(name, namespace_name) is not None:
                continue
            body = {"apiVersion": "v1", "kind": "ServiceAccount",
                    "metadata": {"name": name, "namespace": namespace_name}}
            try:
                await self.client.create(SERVICE_ACCOUNTS, body, namespace=namespace_name)
            except AlreadyExists:
                continue
            except ApiError as e:
                if not terminating_refusal(e):
                    failures.append(e)
        if failures:
            raise failures[0]
