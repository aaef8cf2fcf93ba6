"""An authenticated user, as Kubernetes' ``user.Info``."""

from __future__ import annotations

from dataclasses import dataclass, field

# Groups Kubernetes gives every authenticated user, and the group that bypasses authorization.
AUTHENTICATED = "system:authenticated"
MASTERS = "system:masters"
# The identities of kvert's components, as Kubernetes names its system users; a node agent
# is ``system:node:NAME`` in ``NODES`` (the Node authorizer's subjects).
KUBE_SCHEDULER = "system:kube-scheduler"
KUBE_CONTROLLER_MANAGER = "system:kube-controller-manager"
VPA_RECOMMENDER = "system:vpa-recommender"
VPA_UPDATER = "system:vpa-updater"
VPA_ADMISSION = "system:vpa-admission-controller"
APISERVER = "system:apiserver"
KUBELET_CLIENT = "kube-apiserver-kubelet-client"   # the API server calling a node agent (kubeadm's name)
NODES = "system:nodes"
NODE_PREFIX = "system:node:"                       # + NAME: a node agent's user
ANONYMOUS = "system:anonymous"                     # the user of a request without credentials
UNAUTHENTICATED = "system:unauthenticated"         # the group of anonymous requests
SERVICE_ACCOUNTS = "system:serviceaccounts"        # every service account's group
SERVICE_ACCOUNT_PREFIX = "system:serviceaccount:"  # + NAMESPACE:NAME: a service account's user


def service_account_username(namespace: str, name: str) -> str:
    return f"{SERVICE_ACCOUNT_PREFIX}{namespace}:{name}"


@dataclass(frozen=True)
class User:
    name: str
    uid: str = ""
    groups: tuple[str, ...] = ()
    extra: tuple[tuple[str, tuple[str, ...]], ...] = field(default=())   # sorted (key, values)

    def extra_dict(self) -> dict[str, list[str]]:
        return {k: list(v) for k, v in self.extra}
