"""kube-apiserver's admission plugins, in Kubernetes' order.

:func:`default_chain` builds the chain the API server runs (the registry calls every
plugin's ``admit`` in order, then validation, then every ``validate``), following
kube-apiserver's ``AllOrderedPlugins`` restricted to what kvert implements::

    NamespaceLifecycle, LimitRanger, ServiceAccount, NodeRestriction, PodSecurity,
    Priority, DefaultTolerationSeconds, RuntimeClass, PodResizeValidator,
    MutatingAdmissionWebhook, ValidatingAdmissionWebhook, ResourceQuota

ServiceAccount only with ``service_accounts=True``: it refuses pods until their
ServiceAccount exists and gives them token volumes, which needs the ServiceAccount and
root CA publisher controllers and a token signer (``kvert up`` has them; a simulation does
not). NodeRestriction is always on (kube-apiserver leaves it off by default; kubeadm,
whose clusters ``kvert up`` follows, turns it on). PodSecurity (``podsecurity``) enforces
the ``pod-security.kubernetes.io/*`` namespace labels; unlabelled namespaces are privileged.
(TaintNodesByCondition,
storage and certificate plugins, and the CEL admission policies are not implemented.)

What the API server must do besides running the chain (:func:`bootstrap` does the first
two, idempotently):

- create the namespaces ``default``, ``kube-system``, ``kube-public`` and
  ``kube-node-lease`` at start (NamespaceLifecycle refuses objects in a missing
  namespace; the first three may never be deleted);
- create the built-in PriorityClasses ``system-node-critical`` (2000001000) and
  ``system-cluster-critical`` (2000000000) at start;
- call :func:`recalculate_quota_usage` periodically (the ResourceQuota controller's
  resync) -- the plugin already recalculates right after deletes and when a pod turns
  terminal, and whenever a quota's status is missing or stale.
"""

from __future__ import annotations

from kvert.api.errors import AlreadyExists
from kvert.clock import Clock
from kvert.registry import Registry
from kvert.registry.admission import AdmissionChain
from kvert.store.base import Store

from .lifecycle import IMMORTAL_NAMESPACES, NamespaceLifecycle
from .limitranger import LimitRanger
from .noderestriction import NodeRestriction
from .podresize import PodResizeValidator
from .podsecurity import PodSecurity
from .priority import Priority, builtin_priority_classes
from .quota import ResourceQuota, recalculate_quota_usage
from .runtimeclass import RuntimeClass
from .serviceaccount import ServiceAccount
from .tolerations import DefaultTolerationSeconds
from .webhook import MutatingAdmissionWebhook, ValidatingAdmissionWebhook, WebhookClient

SYSTEM_NAMESPACES = (*IMMORTAL_NAMESPACES, "kube-node-lease")


def default_plugins(store: Store, clock: Clock, *, webhook_client: WebhookClient | None = None,
                    service_accounts: bool = False) -> list:
    client = webhook_client or WebhookClient()
    return [
        NamespaceLifecycle(store),
        LimitRanger(store),
        *([ServiceAccount(store, clock)] if service_accounts else []),
        NodeRestriction(store),
        PodSecurity(store),
        Priority(store),
        DefaultTolerationSeconds(),
        RuntimeClass(store),
        PodResizeValidator(store),
        MutatingAdmissionWebhook(store, client),
        ValidatingAdmissionWebhook(store, client),
        ResourceQuota(store, clock),
    ]


def default_chain(store: Store, clock: Clock, *, webhook_client: WebhookClient | None = None,
                  service_accounts: bool = False) -> AdmissionChain:
    """The admission chain kube-apiserver enables by default, in its order."""
    return AdmissionChain(default_plugins(store, clock, webhook_client=webhook_client,
                                          service_accounts=service_accounts))


def default_namespaces() -> list[dict]:
    return [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}
            for name in SYSTEM_NAMESPACES]


async def bootstrap(registry: Registry) -> None:
    """Create the system namespaces and built-in PriorityClasses (skipping existing ones)."""
    for ns in default_namespaces():
        try:
            await registry.create("namespaces", ns)
        except AlreadyExists:
            pass
    for pc in builtin_priority_classes():
        try:
            await registry.create("scheduling.k8s.io/priorityclasses", pc)
        except AlreadyExists:
            pass


__all__ = [
    "DefaultTolerationSeconds", "LimitRanger", "MutatingAdmissionWebhook", "NamespaceLifecycle",
    "NodeRestriction", "PodSecurity",
    "Priority", "ResourceQuota", "RuntimeClass", "SYSTEM_NAMESPACES", "ServiceAccount",
    "ValidatingAdmissionWebhook",
    "WebhookClient", "bootstrap", "builtin_priority_classes", "default_chain", "default_namespaces",
    "default_plugins", "recalculate_quota_usage",
]
