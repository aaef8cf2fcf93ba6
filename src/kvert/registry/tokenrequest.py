"""The TokenRequest API: ``POST serviceaccounts/NAME/token`` with an
``authentication.k8s.io/v1`` TokenRequest answers a signed token of that ServiceAccount
(``pkg/registry/core/serviceaccount/storage/token.go``).

* ``spec.expirationSeconds`` defaults to 3600 and must be from 600 to 2^32; above
  ``max_expiration_seconds`` (``--service-account-max-token-expiration``, unset by
  default) it is shortened, with a warning;
* empty ``spec.audiences`` means the API server's own audiences;
* ``spec.boundObjectRef`` binds the token to a Pod (which must run as this
  ServiceAccount; its node is recorded too), a Secret or a Node, checked by uid when the
  reference has one: the token is valid only while that object exists;
* a pod-bound token asking for exactly 3607 s for the API server's audiences (what the
  ServiceAccount admission plugin puts in pods) is issued valid for a year, warning after
  3607 s (``--service-account-extend-token-expiration``, on by default), while the answer
  still says 3607 s: clients refresh as if it expired then;
* ``status.expirationTimestamp`` is the creation time plus the (possibly shortened)
  expiration.

Admission runs as for any create of a subresource (mutating plugins on the decoded
request, validating ones after the static validation).
"""

from __future__ import annotations

from typing import Any

from kvert.api.errors import BadRequest, Conflict, Invalid, NotFound
from kvert.api.meta import deep_copy, format_time
from kvert.api.types import Obj
from kvert.api.validation.common import invalid
from kvert.api.validation.secrets import validate_token_request
from kvert.auth.serviceaccount import ServiceAccountTokens, claims
from kvert.registry.admission import CREATE, Attributes
from kvert.registry.base import WritePath
from kvert.store.base import Store

API_VERSION = "authentication.k8s.io/v1"
KIND = "TokenRequest"
GROUP = "authentication.k8s.io"
DEFAULT_EXPIRATION_SECONDS = 3600
WARN_ONLY_BOUND_TOKEN_EXPIRATION_SECONDS = 60 * 60 + 7
EXPIRATION_EXTENSION_SECONDS = 24 * 365 * 60 * 60


def _cannot_decode(detail: str) -> BadRequest:
    return BadRequest(f'TokenRequest in version "v1" cannot be handled as a TokenRequest: {detail}')


def decode_request(body: Any) -> Obj:
    """The request as the API decodes it: shape checked, ``expirationSeconds`` defaulted."""
    if not isinstance(body, dict):
        raise BadRequest("the request body must be a TokenRequest object")
    request: Obj = deep_copy(body)
    api_version, kind = request.get("apiVersion"), request.get("kind")
    if (api_version or kind) and (api_version, kind) != (API_VERSION, KIND):
        raise BadRequest(f"the API version in the data ({api_version}) does not match the expected "
                         f"API version ({API_VERSION}) and kind ({KIND}) of serviceaccounts/token")
    request["apiVersion"], request["kind"] = API_VERSION, KIND
    for field in ("metadata", "spec"):
        if request.get(field) is None:
            request[field] = {}
        if not isinstance(request[field], dict):
            raise _cannot_decode(f"json: cannot unmarshal into Go struct field TokenRequest.{field}")
    spec = request["spec"]
    audiences = spec.get("audiences")
    if audiences is not None and (not isinstance(audiences, list)
                                  or not all(isinstance(a, str) for a in audiences)):
        raise _cannot_decode("json: cannot unmarshal into Go struct field "
                             "TokenRequestSpec.spec.audiences of type []string")
    seconds = spec.get("expirationSeconds")
    if seconds is None:
        spec["expirationSeconds"] = DEFAULT_EXPIRATION_SECONDS
    elif isinstance(seconds, bool) or not isinstance(seconds, int):
        raise _cannot_decode("json: cannot unmarshal into Go struct field "
                             "TokenRequestSpec.spec.expirationSeconds of type int64")
    ref = spec.get("boundObjectRef")
    if ref is not None and (not isinstance(ref, dict)
                            or not all(isinstance(v, str) for v in ref.values())):
        raise _cannot_decode("json: cannot unmarshal into Go struct field "
                             "TokenRequestSpec.spec.boundObjectRef of type BoundObjectReference")
    return request


def _group_of(api_version: str) -> str:
    return api_version.rpartition("/")[0] if "/" in api_version else ""


def _gvk_string(api_version: str, kind: str) -> str:
    """``schema.GroupVersionKind.String()``: ``apps/v1, Kind=Deployment``, ``/v1, Kind=Pod``."""
    group, _, version = api_version.rpartition("/") if "/" in api_version else ("", "", api_version)
    return f"{group}/{version}, Kind={kind}"


class TokenRequests:
    def __init__(self, tokens: ServiceAccountTokens, *, audiences: tuple[str, ...] | None = None,
                 max_expiration_seconds: int = 0, extend_expiration: bool = True):
        self.tokens = tokens
        self.audiences = tuple(audiences) if audiences else (tokens.issuer,)
        self.max_expiration_seconds = max_expiration_seconds
        self.extend_expiration = extend_expiration

    async def create(self, registry: WritePath, namespace: str, name: str, body: Any, *,
                     user: str = "", warnings: list[str] | None = None) -> Obj:
        request = decode_request(body)
        attrs = Attributes(CREATE, "serviceaccounts", namespace, name, request,
                           subresource="token", user=user)
        await registry.admission.admit(attrs)
        # mutating plugins may replace the request but never drop it
        assert attrs.object is not None
        request = attrs.object
        meta, spec = request["metadata"], request["spec"]
        for field, want, what in (("name", name, "name"), ("namespace", namespace, "namespace")):
            given = meta.get(field)
            if given and given != want:
                raise Invalid(KIND, name, [invalid(f"metadata.{field}", given,
                                                   f"must match the service account {what} if "
                                                   "specified")], GROUP)
        service_account = registry.store.get("serviceaccounts", namespace, name)
        if not spec.get("audiences"):
            spec["audiences"] = list(self.audiences)
        meta["name"], meta["namespace"] = name, namespace
        now = registry.clock.now()
        meta["creationTimestamp"] = format_time(now)
        request.pop("status", None)
        causes = validate_token_request(request)
        if causes:
            raise Invalid(KIND, "", causes, GROUP)
        await registry.admission.validate(attrs)

        bound = self._bound_objects(registry.store, namespace, name, spec.get("boundObjectRef"))
        seconds = spec["expirationSeconds"]
        if self.max_expiration_seconds > 0 and seconds > self.max_expiration_seconds:
            if warnings is not None:
                warnings.append(f"requested expiration of {seconds} seconds shortened to "
                                f"{self.max_expiration_seconds} seconds")
            seconds = spec["expirationSeconds"] = self.max_expiration_seconds
        lifetime, warn_after = seconds, 0
        if (self.extend_expiration and "pod" in bound
                and seconds == WARN_ONLY_BOUND_TOKEN_EXPIRATION_SECONDS
                and set(spec["audiences"]) <= set(self.audiences)):
            lifetime, warn_after = EXPIRATION_EXTENSION_SECONDS, seconds
        token = self.tokens.sign(claims(service_account, audiences=spec["audiences"], now=now,
                                        expiration_seconds=lifetime,
                                        warn_after_seconds=warn_after, **bound))
        spec.setdefault("boundObjectRef", None)
        request["status"] = {"token": token,
                             "expirationTimestamp": format_time(int(now) + seconds)}
        return request

    @staticmethod
    def _bound_objects(store: Store, namespace: str, name: str,
                       ref: dict[str, str] | None) -> dict[str, Obj]:
        """The objects a token is bound to: ``pod`` (and its ``node``), ``secret`` or ``node``."""
        if not ref:
            return {}
        api_version, kind, ref_name = ref.get("apiVersion", ""), ref.get("kind", ""), ref.get("name", "")
        group = _group_of(api_version)
        bound: dict[str, Obj] = {}
        if group == "" and kind == "Pod":
            pod = store.get("pods", namespace, ref_name)
            if (pod.get("spec") or {}).get("serviceAccountName") != name:
                raise BadRequest(f'cannot bind token for serviceaccount "{name}" to pod running with '
                                 "different serviceaccount name.")
            bound["pod"] = target = pod
            node_name = (pod.get("spec") or {}).get("nodeName")
            if node_name:
                try:
                    bound["node"] = store.get("nodes", "", node_name)
                except NotFound:
                    # the node's name still tells a reader of the token where the pod runs
                    bound["node"] = {"metadata": {"name": node_name}}
        elif group == "" and kind == "Node":
            bound["node"] = target = store.get("nodes", "", ref_name)
        elif group == "" and kind == "Secret":
            bound["secret"] = target = store.get("secrets", namespace, ref_name)
        else:
            raise BadRequest(f"cannot bind token to object of type {_gvk_string(api_version, kind)}")
        uid = (target.get("metadata") or {}).get("uid", "")
        if ref.get("uid") and ref["uid"] != uid:
            raise Conflict(kind, ref_name, f"the UID in the bound object reference ({ref['uid']}) "
                           "does not match the UID in record. The object might have been deleted "
                           "and then recreated")
        return bound
