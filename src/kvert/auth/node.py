"""The Node authorizer (``plugin/pkg/auth/authorizer/node``).

A node is the user ``system:node:NAME`` in the group ``system:nodes``. It may read what
running its pods takes, and only for itself: its own Node object and its Lease in
``kube-node-lease``; the pods bound to it (``spec.nodeName``): get them, list/watch them with
the field selector ``spec.nodeName=NAME``; the secrets, config maps, PVCs, resource claims
and service accounts (and their tokens) its pods use; ResourceSlices of its own; everything
else by the static ``system:node`` rules (``kvert.auth.policy.node_rules``).

As upstream, the writes whose limits need the request body or the object written are
allowed here and held to the node's own objects by the NodeRestriction admission plugin
(``kvert.apiserver.admission.noderestriction``), which every write path runs: creating and
updating Nodes and their status, creating and deleting pods, writing pod status, evicting
pods. kvert's addition (docs/kubernetes-choices.md): a node may patch pods (the node agent
writes its admission explanation as an annotation; NodeRestriction lets that annotation,
and nothing else, change, and only on the pods bound to the node).
"""

from __future__ import annotations

from kvert.api.errors import ApiError, NotFound
from kvert.api.fields import FieldSelector
from kvert.api.selectors import SelectorError
from kvert.api.types import Obj
from kvert.auth.attributes import Attributes, Decision
from kvert.auth.authorizer import Rules
from kvert.auth.policy import NODES_GROUP, node_rules
from kvert.auth.rules import rules_allow
from kvert.auth.user import NODE_PREFIX, User
from kvert.store import Store

NODE_USER_PREFIX = NODE_PREFIX
LEASE_NAMESPACE = "kube-node-lease"

_ALLOW = (Decision.ALLOW, "")


def node_identity(user: User) -> tuple[str, bool]:
    """``nodeidentifier.NodeIdentity``: (node name, is a node). A member of
    ``system:nodes`` without a ``system:node:`` name is a node of unknown name."""
    if NODES_GROUP not in user.groups:
        return "", False
    if not user.name.startswith(NODE_USER_PREFIX):
        return "", True
    return user.name[len(NODE_USER_PREFIX):], True


def _no(reason: str = "") -> tuple[Decision, str]:
    return Decision.NO_OPINION, reason


def _selected_node(attrs: Attributes, field: str) -> str | None:
    try:
        return FieldSelector.parse(attrs.field_selector).requires_exact_match(field)
    except SelectorError:
        return None


class NodeAuthorizer:
    def __init__(self, store: Store) -> None:
        self.store = store
        self.rules = node_rules()

    def rules_for(self, user: User, namespace: str) -> Rules:
        if node_identity(user)[1]:
            # nodes do not have fully enumerated permissions
            return Rules(incomplete=True,
                         errors=["node authorizer does not support user rule resolution"])
        return Rules()

    def authorize(self, attrs: Attributes) -> tuple[Decision, str]:
        node, is_node = node_identity(attrs.user)
        if not is_node:
            return _no()
        if not node:
            return _no(f'unknown node for user "{attrs.user.name}"')
        if attrs.resource_request:
            check = _BY_RESOURCE.get((attrs.api_group, attrs.resource))
            if check is not None:
                return check(self, node, attrs)
        return _ALLOW if rules_allow(attrs, self.rules) else _no()

    # ---- the stored objects a decision depends on ----------------------------------------

    def _get(self, resource: str, namespace: str, name: str) -> Obj | None:
        try:
            return self.store.get(resource, namespace, name)
        except NotFound:
            return None

    def _pods_on(self, node: str, namespace: str) -> list[Obj]:
        try:
            return self.store.list("pods", namespace=namespace,
                                   field_selector=f"spec.nodeName={node}").items
        except ApiError:
            return []

    def _related(self, node: str, kind: str, namespace: str, name: str) -> bool:
        """Whether a pod bound to ``node`` uses the ``kind`` object ``namespace/name``
        (the node authorizer graph's pod edges)."""
        return any(name in pod_references(pod, kind) for pod in self._pods_on(node, namespace))

    def _relationship(self, node: str, kind: str, attrs: Attributes) -> tuple[Decision, str]:
        if not attrs.name:
            return _no("No Object name found")
        if self._related(node, kind, attrs.namespace, attrs.name):
            return _ALLOW
        return _no(f"no relationship found between node '{node}' and this object")

    # ---- per resource ---------------------------------------------------------------------

    def _read_namespaced(self, node: str, attrs: Attributes, kind: str) -> tuple[Decision, str]:
        if attrs.verb not in ("get", "list", "watch"):
            return _no("can only read resources of this type")
        if attrs.subresource:
            return _no("cannot read subresource")
        if not attrs.namespace:
            return _no("can only read namespaced object of this type")
        return self._relationship(node, kind, attrs)

    def _get_only(self, node: str, attrs: Attributes, kind: str) -> tuple[Decision, str]:
        if attrs.verb != "get":
            return _no("can only get individual resources of this type")
        if attrs.subresource:
            return _no("cannot get subresource")
        return self._relationship(node, kind, attrs)

    def _secret(self, node: str, attrs: Attributes) -> tuple[Decision, str]:
        return self._read_namespaced(node, attrs, "secrets")

    def _config_map(self, node: str, attrs: Attributes) -> tuple[Decision, str]:
        return self._read_namespaced(node, attrs, "configmaps")

    def _pvc(self, node: str, attrs: Attributes) -> tuple[Decision, str]:
        if attrs.subresource == "status":
            if attrs.verb not in ("update", "patch"):
                return _no("can only get/update/patch this type")
            return self._relationship(node, "persistentvolumeclaims", attrs)
        return self._get_only(node, attrs, "persistentvolumeclaims")

    def _resource_claim(self, node: str, attrs: Attributes) -> tuple[Decision, str]:
        return self._get_only(node, attrs, "resourceclaims")

    def _service_account(self, node: str, attrs: Attributes) -> tuple[Decision, str]:
        if attrs.verb == "get" and not attrs.subresource:
            return self._read_namespaced(node, attrs, "serviceaccounts")
        if attrs.verb != "create" or not attrs.name:
            return _no("can only create tokens for individual service accounts")
        if attrs.subresource != "token":
            return _no("can only create token subresource of serviceaccount")
        return self._relationship(node, "serviceaccounts", attrs)

    def _lease(self, node: str, attrs: Attributes) -> tuple[Decision, str]:
        if attrs.verb not in ("get", "create", "update", "patch", "delete"):
            return _no("can only get, create, update, patch, or delete a node lease")
        if attrs.namespace != LEASE_NAMESPACE:
            return _no(f'can only access leases in the "{LEASE_NAMESPACE}" system namespace')
        # the name of a lease being created is in the body, which an authorizer does not see
        if attrs.verb != "create" and attrs.name != node:
            return _no("can only access node lease with the same name as the requesting node")
        return _ALLOW

    def _resource_slice(self, node: str, attrs: Attributes) -> tuple[Decision, str]:
        if attrs.subresource:
            return _no("cannot authorize ResourceSlice subresources")
        verb = attrs.verb
        if verb == "create":
            return _ALLOW
        if verb in ("get", "update", "patch", "delete"):
            if not attrs.name:
                return _no("No Object name found")
            found = self._get("resource.k8s.io/resourceslices", "", attrs.name)
            if found is not None and (found.get("spec") or {}).get("nodeName") == node:
                return _ALLOW
            return _no(f"no relationship found between node '{node}' and this object")
        if verb in ("watch", "list", "deletecollection"):
            if _selected_node(attrs, "spec.nodeName") == node:
                return _ALLOW
            return _no("can only list/watch/deletecollection resourceslices with nodeName field "
                       "selector")
        return _no("only the following verbs are allowed for a ResourceSlice: get, watch, list, "
                   "create, update, patch, delete, deletecollection")

    def _node(self, node: str, attrs: Attributes) -> tuple[Decision, str]:
        verb, name = attrs.verb, attrs.name
        if attrs.subresource == "":
            if verb in ("create", "update", "patch"):
                return _ALLOW   # NodeRestriction limits a node to its own Node object
            if verb in ("get", "list", "watch"):
                if name == node:
                    return _ALLOW
                if not name:
                    return _no(f"node '{node}' cannot read all nodes, only its own Node object")
                return _no(f"node '{node}' cannot read '{name}', only its own Node object")
        elif attrs.subresource == "status" and verb in ("update", "patch"):
            return _ALLOW       # NodeRestriction: only its own Node's status
        return _no()

    def _bound(self, node: str, attrs: Attributes) -> tuple[Decision, str]:
        """A read of a pod bound to ``node`` (the graph's pod vertex); a pod that does not
        exist is left to the registry (404)."""
        if not attrs.name:
            return _no("No Object name found")
        pod = self._get("pods", attrs.namespace, attrs.name)
        if pod is None or (pod.get("spec") or {}).get("nodeName") == node:
            return _ALLOW
        return _no(f"no relationship found between node '{node}' and this object")

    def _pod(self, node: str, attrs: Attributes) -> tuple[Decision, str]:
        verb, sub = attrs.verb, attrs.subresource
        if sub == "":
            if verb == "get":
                return self._bound(node, attrs)
            if verb in ("list", "watch"):
                if _selected_node(attrs, "spec.nodeName") == node:
                    return _ALLOW
                if attrs.name:
                    return self._bound(node, attrs)
                return _no("can only list/watch pods with spec.nodeName field selector")
            if verb in ("create", "delete", "patch"):
                # mirror pods, and kvert's explanation annotation: NodeRestriction limits
                # them to the pods bound to the node
                return _ALLOW
        elif sub == "status" and verb in ("update", "patch"):
            return _ALLOW       # NodeRestriction: only pods bound to the node
        elif sub == "eviction" and verb == "create":
            return _ALLOW       # NodeRestriction: only pods bound to the node
        return _no()


def pod_references(pod: Obj, kind: str) -> set[str]:
    """Names of the ``kind`` objects (secrets, configmaps, persistentvolumeclaims,
    resourceclaims, serviceaccounts) a pod uses, as the node authorizer graph links them."""
    spec = pod.get("spec") or {}
    if kind == "serviceaccounts":
        return {spec.get("serviceAccountName") or "default"}
    if kind == "resourceclaims":
        claims = {c.get("resourceClaimName") for c in spec.get("resourceClaims") or ()
                  if isinstance(c, dict)}
        status = pod.get("status") or {}
        claims |= {c.get("resourceClaimName") for c in status.get("resourceClaimStatuses") or ()
                   if isinstance(c, dict)}
        return {n for n in claims if n}
    # values read from the pod: None where a reference leaves the name out
    names: set[str | None] = set()
    containers = [c for key in ("initContainers", "containers", "ephemeralContainers")
                  for c in spec.get(key) or () if isinstance(c, dict)]
    if kind == "secrets":
        names |= {s.get("name") for s in spec.get("imagePullSecrets") or () if isinstance(s, dict)}
    for volume in spec.get("volumes") or ():
        if not isinstance(volume, dict):
            continue
        if kind == "secrets":
            names.add((volume.get("secret") or {}).get("secretName"))
        elif kind == "configmaps":
            names.add((volume.get("configMap") or {}).get("name"))
        elif kind == "persistentvolumeclaims":
            names.add((volume.get("persistentVolumeClaim") or {}).get("claimName"))
        for source in (volume.get("projected") or {}).get("sources") or ():
            if isinstance(source, dict):
                ref = source.get("secret" if kind == "secrets" else "configMap") or {}
                if kind in ("secrets", "configmaps"):
                    names.add(ref.get("name"))
    if kind in ("secrets", "configmaps"):
        ref_key = "secretRef" if kind == "secrets" else "configMapRef"
        key_ref = "secretKeyRef" if kind == "secrets" else "configMapKeyRef"
        for c in containers:
            for source in c.get("envFrom") or ():
                if isinstance(source, dict):
                    names.add((source.get(ref_key) or {}).get("name"))
            for env in c.get("env") or ():
                if isinstance(env, dict):
                    names.add(((env.get("valueFrom") or {}).get(key_ref) or {}).get("name"))
    return {n for n in names if n}


_BY_RESOURCE = {
    ("", "secrets"): NodeAuthorizer._secret,
    ("", "configmaps"): NodeAuthorizer._config_map,
    ("", "persistentvolumeclaims"): NodeAuthorizer._pvc,
    ("resource.k8s.io", "resourceclaims"): NodeAuthorizer._resource_claim,
    ("", "serviceaccounts"): NodeAuthorizer._service_account,
    ("coordination.k8s.io", "leases"): NodeAuthorizer._lease,
    ("resource.k8s.io", "resourceslices"): NodeAuthorizer._resource_slice,
    ("", "nodes"): NodeAuthorizer._node,
    ("", "pods"): NodeAuthorizer._pod,
}
