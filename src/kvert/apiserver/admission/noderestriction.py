"""NodeRestriction (``plugin/pkg/admission/noderestriction``, Kubernetes 1.35).

The Node authorizer (:mod:`kvert.auth.node`) lets a node write Nodes, Leases, pods and
their status, evictions, tokens, ResourceSlices and CSRs without seeing the request body;
this plugin, which does see it, holds every such write to the node's own objects. Its
refusals are 403 ``admission.NewForbidden`` errors with upstream's messages:

- Nodes (any subresource): only its own (``node "a" is not allowed to modify node "b"``);
  on create no ``spec.configSource`` and no restricted label; on update no new
  ``configSource``, the same taints, the same ``ownerReferences`` and no restricted label
  added, changed or removed. Restricted: ``node-restriction.kubernetes.io/`` labels and
  every ``kubernetes.io``/``k8s.io`` label outside the kubelet's own set
  (``kubelet.kubernetes.io/``, ``node.kubernetes.io/``, hostname, os, arch, zone, region,
  instance type and their beta names).
- Pods: create only mirror pods bound to itself, owned by its Node and referencing no
  service account, secret, config map, cluster trust bundle or claim; delete only pods bound
  to it; status only of pods bound to it, without changing their labels or resource claim
  statuses; evict only pods bound to it; no other subresource.
- kvert's addition: the node agent writes its explanation annotation
  (``explain.kvert.io/node``) on the pods bound to it; an update of a pod by a node may
  change that annotation and nothing else (upstream refuses every pod update by a node).
- PersistentVolumeClaims: status only, and only capacity, conditions and the allocated
  resources (and their statuses) may change.
- ServiceAccount tokens: bound to a pod (``boundObjectRef`` ``v1`` ``Pod`` with a name
  and uid) that exists with that uid and is bound to the node, for at most one audience,
  one a projected token volume of that pod asks for (ServiceAccountNodeAudienceRestriction;
  kvert has no CSIDrivers, and does not ask the authorizer for the
  ``request-serviceaccounts-token-audience`` verb upstream also accepts).
- Leases: in ``kube-node-lease`` and named as the node. ResourceSlices: created or deleted
  only with ``spec.nodeName`` the node. CSRs for the kubelet-serving and kubelet client
  signers: only with ``CN=system:node:NAME``.

A node is the user ``system:node:NAME``. Upstream's node identifier also requires the
group ``system:nodes``; the registry's admission attributes carry only the user's name,
so here the name alone makes a node (stricter: such a user outside the group is held to
a node's limits too).
"""

from __future__ import annotations

from typing import Any

from kvert.api.certificates import parse_request, request_pem
from kvert.api.meta import deep_copy
from kvert.api.types import Obj
from kvert.auth.node import LEASE_NAMESPACE, pod_references
from kvert.auth.user import NODE_PREFIX
from kvert.registry.admission import CREATE, DELETE, UPDATE, Attributes
from kvert.store.base import Store

from .common import PODS, forbidden

NODES = "nodes"
PVCS = "persistentvolumeclaims"
SERVICE_ACCOUNTS = "serviceaccounts"
LEASES = "coordination.k8s.io/leases"
RESOURCE_SLICES = "resource.k8s.io/resourceslices"
CSRS = "certificates.k8s.io/certificatesigningrequests"
KUBELET_SERVING = "kubernetes.io/kubelet-serving"
KUBE_APISERVER_CLIENT_KUBELET = "kubernetes.io/kube-apiserver-client-kubelet"

MIRROR_POD_ANNOTATION = "kubernetes.io/config.mirror"
# the node agent's explanation of its admission decision (kvert.kubelet.lifecycle), the only
# part of a pod a node may change outside its status
EXPLAIN_ANNOTATION = "explain.kvert.io/node"
LABEL_NAMESPACE_NODE_RESTRICTION = "node-restriction.kubernetes.io"

# k8s.io/kubelet/pkg/apis: the labels a kubelet may set on its own Node
KUBELET_LABELS = frozenset({
    "kubernetes.io/hostname",
    "topology.kubernetes.io/zone", "topology.kubernetes.io/region",
    "failure-domain.beta.kubernetes.io/zone", "failure-domain.beta.kubernetes.io/region",
    "beta.kubernetes.io/instance-type", "node.kubernetes.io/instance-type",
    "kubernetes.io/os", "kubernetes.io/arch",
    "beta.kubernetes.io/os", "beta.kubernetes.io/arch",
})
KUBELET_LABEL_NAMESPACES = ("kubelet.kubernetes.io", "node.kubernetes.io")


def node_name_of(user: str) -> str | None:
    """The node a user is (``""``: a node of unknown name), None for any other user."""
    if not user.startswith(NODE_PREFIX):
        return None
    return user[len(NODE_PREFIX):]


def _label_namespace(key: str) -> str:
    prefix, slash, _ = key.partition("/")
    return prefix if slash else ""


def _in_namespace(namespace: str, domain: str) -> bool:
    return namespace == domain or namespace.endswith("." + domain)


def is_kubelet_label(key: str) -> bool:
    """``kubeletapis.IsKubeletLabel``."""
    namespace = _label_namespace(key)
    return key in KUBELET_LABELS or any(_in_namespace(namespace, allowed)
                                        for allowed in KUBELET_LABEL_NAMESPACES)


def forbidden_labels(modified: set[str]) -> list[str]:
    """``getForbiddenLabels``, sorted: the changed keys a node may not touch."""
    out = set()
    for key in modified:
        namespace = _label_namespace(key)
        if _in_namespace(namespace, LABEL_NAMESPACE_NODE_RESTRICTION):
            out.add(key)
        kubernetes = _in_namespace(namespace, "kubernetes.io") or _in_namespace(namespace, "k8s.io")
        if kubernetes and not is_kubelet_label(key):
            out.add(key)
    return sorted(out)


def modified_labels(new: dict[str, str], old: dict[str, str]) -> set[str]:
    """``getModifiedLabels``: keys added, removed or changed."""
    return {k for k in new.keys() | old.keys() if new.get(k) != old.get(k)}


def _meta(obj: Obj | None) -> dict[str, Any]:
    meta = (obj or {}).get("metadata")
    return meta if isinstance(meta, dict) else {}


def _spec(obj: Obj | None) -> dict[str, Any]:
    spec = (obj or {}).get("spec")
    return spec if isinstance(spec, dict) else {}


def _labels(obj: Obj | None) -> dict[str, str]:
    return _meta(obj).get("labels") or {}


def _node_of(pod: Obj | None) -> str:
    return _spec(pod).get("nodeName") or ""


def _same(a: Any, b: Any) -> bool:
    """``apiequality.Semantic.DeepEqual`` on decoded JSON: an absent list or map equals an
    empty one."""
    return (a or None) == (b or None)


class NodeRestriction:
    name = "NodeRestriction"
    resources = frozenset({PODS, NODES, PVCS, SERVICE_ACCOUNTS, LEASES, RESOURCE_SLICES, CSRS})

    def __init__(self, store: Store) -> None:
        self.store = store

    async def admit(self, attrs: Attributes) -> None:
        if attrs.operation not in (CREATE, UPDATE, DELETE):
            return
        node = node_name_of(attrs.user)
        if node is None:
            return      # our job is just to restrict nodes
        if not node:
            raise forbidden(attrs, f'could not determine node from user "{attrs.user}"')
        check = _CHECKS.get(attrs.resource)
        if check is not None:
            check(self, node, attrs)

    # ---- pods -----------------------------------------------------------------------------

    def _pod(self, node: str, attrs: Attributes) -> None:
        sub = attrs.subresource
        if sub == "":
            self._pod_itself(node, attrs)
        elif sub == "status":
            self._pod_status(node, attrs)
        elif sub == "eviction":
            self._pod_eviction(node, attrs)
        else:
            raise forbidden(attrs, f'unexpected pod subresource "{sub}", only \'status\' and '
                                   "'eviction' are allowed")

    def _pod_itself(self, node: str, attrs: Attributes) -> None:
        if attrs.operation == CREATE:
            self._mirror_pod(node, attrs)
        elif attrs.operation == DELETE:
            if _node_of(attrs.old_object) != node:
                raise forbidden(attrs, f'node "{node}" can only delete pods with spec.nodeName '
                                       "set to itself")
        elif not (_node_of(attrs.old_object) == node
                  and _only_explanation_changed(attrs.old_object, attrs.object)):
            raise forbidden(attrs, f'unexpected operation "{attrs.operation}", node "{node}" can '
                                   "only create and delete mirror pods")

    def _mirror_pod(self, node: str, attrs: Attributes) -> None:
        pod = attrs.object or {}
        if MIRROR_POD_ANNOTATION not in (_meta(pod).get("annotations") or {}):
            raise forbidden(attrs, f'pod does not have "{MIRROR_POD_ANNOTATION}" annotation, '
                                   f'node "{node}" can only create mirror pods')
        if _node_of(pod) != node:
            raise forbidden(attrs, f'node "{node}" can only create pods with spec.nodeName set '
                                   "to itself")
        owners = [o for o in _meta(pod).get("ownerReferences") or () if isinstance(o, dict)]
        if len(owners) > 1:
            raise forbidden(attrs, f'node "{node}" can only create pods with a single owner '
                                   "reference set to itself")
        owner = owners[0] if owners else {}
        if (owner.get("apiVersion"), owner.get("kind"), owner.get("name")) != ("v1", "Node", node):
            raise forbidden(attrs, f'node "{node}" can only create pods with an owner reference '
                                   "set to itself")
        if owner.get("controller") is not True:
            raise forbidden(attrs, f'node "{node}" can only create pods with a controller owner '
                                   "reference set to itself")
        if owner.get("blockOwnerDeletion") is True:
            raise forbidden(attrs, f'node "{node}" must not set blockOwnerDeletion on an owner '
                                   "reference")
        uid = _meta(self.store.get(NODES, "", node)).get("uid", "")   # NotFound: 404, as upstream
        if owner.get("uid", "") != uid:
            raise forbidden(attrs, f"node {node} UID mismatch: expected {owner.get('uid', '')} "
                                   f"got {uid}")
        spec = _spec(pod)
        if spec.get("serviceAccountName"):
            raise forbidden(attrs, f'node "{node}" can not create pods that reference a service '
                                   "account")
        for kind, what in (("secrets", "secrets"), ("configmaps", "configmaps")):
            if pod_references(pod, kind):
                raise forbidden(attrs, f'node "{node}" can not create pods that reference {what}')
        volumes = [v for v in spec.get("volumes") or () if isinstance(v, dict)]
        for volume in volumes:
            for source in (volume.get("projected") or {}).get("sources") or ():
                if isinstance(source, dict) and source.get("clusterTrustBundle") is not None:
                    raise forbidden(attrs, f'node "{node}" can not create pods that reference '
                                           "clustertrustbundles")
        if any(v.get("persistentVolumeClaim") is not None for v in volumes):
            raise forbidden(attrs, f'node "{node}" can not create pods that reference '
                                   "persistentvolumeclaims")

    def _pod_status(self, node: str, attrs: Attributes) -> None:
        if attrs.operation != UPDATE:
            raise forbidden(attrs, f'unexpected operation "{attrs.operation}"')
        if _node_of(attrs.old_object) != node:
            raise forbidden(attrs, f'node "{node}" can only update pod status for pods with '
                                   "spec.nodeName set to itself")
        if not _same(_labels(attrs.old_object), _labels(attrs.object)):
            raise forbidden(attrs, f'node "{node}" cannot update labels through pod status')
        if not _same(_claim_statuses(attrs.old_object), _claim_statuses(attrs.object)):
            # upstream's spelling
            raise forbidden(attrs, f'node "{node}" cannot update resource claim statues')

    def _pod_eviction(self, node: str, attrs: Attributes) -> None:
        if attrs.operation != CREATE:
            raise forbidden(attrs, f"unexpected operation {attrs.operation}")
        # the name from the request, not the one the Eviction body gives
        name = attrs.name or _meta(attrs.object).get("name") or ""
        if not name:
            raise forbidden(attrs, "could not determine pod from request data")
        pod = self.store.get(PODS, attrs.namespace, name)     # NotFound: 404
        if _node_of(pod) != node:
            raise forbidden(attrs, f"node {node} can only evict pods with spec.nodeName set to "
                                   "itself")

    # ---- nodes ----------------------------------------------------------------------------

    def _node(self, node: str, attrs: Attributes) -> None:
        if attrs.name != node:
            raise forbidden(attrs, f'node "{node}" is not allowed to modify node "{attrs.name}"')
        new = attrs.object
        if attrs.operation == CREATE:
            if _spec(new).get("configSource") is not None:
                # upstream's wording
                raise forbidden(attrs, f'node "{node}" is not allowed to create pods with a '
                                       "non-nil configSource")
            bad = forbidden_labels(modified_labels(_labels(new), {}))
            if bad:
                raise forbidden(attrs, f'node "{node}" is not allowed to set the following '
                                       f"labels: {', '.join(bad)}")
        elif attrs.operation == UPDATE:
            old = attrs.old_object
            source = _spec(new).get("configSource")
            if source is not None and not _same(source, _spec(old).get("configSource")):
                raise forbidden(attrs, f'node "{node}" is not allowed to update configSource to '
                                       "a new non-nil configSource")
            if not _same(_spec(new).get("taints"), _spec(old).get("taints")):
                raise forbidden(attrs, f'node "{node}" is not allowed to modify taints')
            if not _same(_meta(new).get("ownerReferences"), _meta(old).get("ownerReferences")):
                raise forbidden(attrs, f'node "{node}" is not allowed to modify ownerReferences')
            bad = forbidden_labels(modified_labels(_labels(new), _labels(old)))
            if bad:
                raise forbidden(attrs, f"is not allowed to modify labels: {', '.join(bad)}")

    # ---- what a node's pods use -----------------------------------------------------------

    def _pvc(self, node: str, attrs: Attributes) -> None:
        if attrs.subresource != "status":
            raise forbidden(attrs, "may only update PVC status")
        if attrs.operation != UPDATE:
            raise forbidden(attrs, f'unexpected operation "{attrs.operation}"')
        old, new = _pvc_comparable(attrs.old_object), _pvc_comparable(attrs.object)
        if old != new:
            changed = sorted(_differences(old, new))
            raise forbidden(attrs, f'node "{node}" is not allowed to update fields other than '
                                   f"status.quantity and status.conditions: {', '.join(changed)}")

    def _service_account(self, node: str, attrs: Attributes) -> None:
        if attrs.operation != CREATE or attrs.subresource != "token":
            return
        # TokenRequests from a node must be bound to a pod scheduled on that node
        ref = _spec(attrs.object).get("boundObjectRef")
        if (not isinstance(ref, dict) or ref.get("apiVersion") != "v1" or ref.get("kind") != "Pod"
                or not ref.get("name")):
            raise forbidden(attrs, "node requested token not bound to a pod")
        if not ref.get("uid"):
            raise forbidden(attrs, "node requested token with a pod binding without a uid")
        pod = self.store.get(PODS, attrs.namespace, ref["name"])     # NotFound: 404
        if ref["uid"] != _meta(pod).get("uid"):
            raise forbidden(attrs, f"the UID in the bound object reference ({ref['uid']}) does "
                                   "not match the UID in record. The object might have been "
                                   "deleted and then recreated")
        if _node_of(pod) != node:
            raise forbidden(attrs, "node requested token bound to a pod scheduled on a different "
                                   "node")
        # ServiceAccountNodeAudienceRestriction (on by default): only an audience the pod's
        # own token volumes ask for
        audiences = _spec(attrs.object).get("audiences") or []
        if len(audiences) > 1:
            raise forbidden(attrs, "node may only request 0 or 1 audiences")
        audience = audiences[0] if audiences else ""
        if audience not in _token_audiences(pod):
            raise forbidden(attrs, f'audience "{audience}" not found in pod spec volume, '
                                   f"{attrs.user} is not authorized to request tokens for this "
                                   "audience")

    def _lease(self, node: str, attrs: Attributes) -> None:
        if attrs.namespace != LEASE_NAMESPACE:
            raise forbidden(attrs, f'can only access leases in the "{LEASE_NAMESPACE}" system '
                                   "namespace")
        name = _meta(attrs.object).get("name") if attrs.operation == CREATE else attrs.name
        if name != node:
            raise forbidden(attrs, "can only access node lease with the same name as the "
                                   "requesting node")

    def _resource_slice(self, node: str, attrs: Attributes) -> None:
        # the authorizer checks the stored slice of other writes
        if attrs.operation == CREATE and _spec(attrs.object).get("nodeName") != node:
            raise forbidden(attrs, "can only create ResourceSlice with the same NodeName as the "
                                   "requesting node")
        if attrs.operation == DELETE and _spec(attrs.old_object).get("nodeName") != node:
            raise forbidden(attrs, "can only delete ResourceSlice with the same NodeName as the "
                                   "requesting node")

    def _csr(self, node: str, attrs: Attributes) -> None:
        if attrs.operation != CREATE or attrs.subresource:
            return
        csr = attrs.object or {}
        if _spec(csr).get("signerName") not in (KUBELET_SERVING, KUBE_APISERVER_CLIENT_KUBELET):
            return
        try:
            common_name = parse_request(request_pem(csr)).common_name
        except (ValueError, TypeError) as e:
            raise forbidden(attrs, f"unable to parse csr: {e}") from None
        if common_name != f"{NODE_PREFIX}{node}":
            raise forbidden(attrs, f"can only create a node CSR with CN={NODE_PREFIX}{node}")


def _token_audiences(pod: Obj) -> set[str]:
    """The audiences of a pod's projected service account token volumes (``""``: the API
    server's own)."""
    out = set()
    for volume in _spec(pod).get("volumes") or ():
        for source in ((volume or {}).get("projected") or {}).get("sources") or ():
            token = (source or {}).get("serviceAccountToken")
            if isinstance(token, dict):
                out.add(token.get("audience") or "")
    return out


def _claim_statuses(pod: Obj | None) -> list[tuple[Any, Any]]:
    status = (pod or {}).get("status") or {}
    return [(s.get("name"), s.get("resourceClaimName"))
            for s in status.get("resourceClaimStatuses") or () if isinstance(s, dict)]


# what the node agent's own writes to a pod may change besides the explanation
_BOOKKEEPING = ("resourceVersion", "managedFields", "generation")


def _only_explanation_changed(old: Obj | None, new: Obj | None) -> bool:
    def comparable(pod: Obj | None) -> Obj:
        pod = deep_copy(pod or {})
        meta = pod.setdefault("metadata", {})
        for key in _BOOKKEEPING:
            meta.pop(key, None)
        annotations = dict(meta.get("annotations") or {})
        annotations.pop(EXPLAIN_ANNOTATION, None)
        meta["annotations"] = annotations or None
        return pod
    return comparable(old) == comparable(new)


def _pvc_comparable(pvc: Obj | None) -> Obj:
    """A PVC without what a node may change in its status (``admitPVCStatus``; expansion
    recovery is on, as by default since 1.32)."""
    pvc = deep_copy(pvc or {})
    meta = pvc.setdefault("metadata", {})
    meta.pop("resourceVersion", None)
    meta.pop("managedFields", None)
    status = pvc.get("status")
    if isinstance(status, dict):
        for key in ("capacity", "conditions", "allocatedResourceStatuses", "allocatedResources"):
            status.pop(key, None)
    return pvc


def _differences(old: Any, new: Any, path: str = "") -> set[str]:
    """The paths where two decoded objects differ (upstream prints a ``cmp.Diff``)."""
    if isinstance(old, dict) and isinstance(new, dict):
        out: set[str] = set()
        for key in old.keys() | new.keys():
            out |= _differences(old.get(key), new.get(key), f"{path}.{key}" if path else key)
        return out
    return set() if old == new else {path}


_CHECKS = {
    PODS: NodeRestriction._pod,
    NODES: NodeRestriction._node,
    PVCS: NodeRestriction._pvc,
    SERVICE_ACCOUNTS: NodeRestriction._service_account,
    LEASES: NodeRestriction._lease,
    RESOURCE_SLICES: NodeRestriction._resource_slice,
    CSRS: NodeRestriction._csr,
}
