"""Who is asking and what they may do: authentication (static tokens, service-account
tokens) and authorization (RBAC, the Node authorizer), shared by the API server and the
in-process client.

This layer sits above the store and below the registry: it reads RBAC objects and pods
from the store, and nothing below it knows it exists.

``default_authorizer(store)`` is kube-apiserver's ``--authorization-mode=Node,RBAC``:
members of ``system:masters`` may do anything, then the Node authorizer, then RBAC, the
first to allow (or deny) deciding.
"""

from kvert.auth.attributes import Attributes, Decision
from kvert.auth.authorizer import Authorizer, PrivilegedGroups, Rules, Union, forbidden, request_check
from kvert.auth.node import NodeAuthorizer
from kvert.auth.rbac import RbacAuthorizer
from kvert.auth.user import MASTERS, User
from kvert.store import Store


def default_authorizer(store: Store) -> Union:
    return Union(PrivilegedGroups(MASTERS), NodeAuthorizer(store), RbacAuthorizer.for_store(store))


__all__ = ["Attributes", "Authorizer", "Decision", "PrivilegedGroups", "Rules", "Union", "User",
           "default_authorizer", "forbidden", "request_check"]
