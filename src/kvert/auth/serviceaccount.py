"""Service-account tokens: bound JWTs signed by the API server, and their authenticator.

``ServiceAccountTokens.load_or_create(path)`` keeps an RSA key in a PEM file (mode 0600,
made on first start, the ``sa.key`` of a kubeadm cluster) and signs tokens with it
(RS256, ``kid`` = the base64url SHA-256 of the public key's DER, as kube-apiserver).
Several API servers of one cluster share the keys (:mod:`kvert.auth.sakeys`): one signs,
all verify, so a rotated-out key keeps its tokens valid until they expire; several issuers
may be accepted, the first signs.
:func:`claims` builds what ``pkg/serviceaccount/claims.go`` puts in a bound token::

    {"aud": [...], "exp": ..., "iat": ..., "nbf": ..., "iss": ..., "jti": "<uuid>",
     "sub": "system:serviceaccount:NS:NAME",
     "kubernetes.io": {"namespace": NS, "serviceaccount": {"name", "uid"},
                       "pod": {"name", "uid"} | "secret": {...} | "node": {...},
                       "node": {...} (a pod-bound token: the pod's node), "warnafter": ...}}

:class:`ServiceAccountAuthenticator` accepts such a token while its signature, issuer,
lifetime (60 s leeway, go-jose's) and audiences hold and the objects it names still exist
with the same uids -- the ServiceAccount, and the Pod, Secret or Node it is bound to. The
user it yields is ``system:serviceaccount:NS:NAME`` with the ServiceAccount's uid, the
groups ``system:serviceaccounts`` and ``system:serviceaccounts:NS``, and the pod, node and
credential id (``JTI=<jti>``) as extra values. Legacy tokens (secrets of type
``kubernetes.io/service-account-token``) are not issued, so not accepted either.
"""

from __future__ import annotations

import base64
import json
import os
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import jwt
from cryptography.hazmat.primitives.asymmetric import ec, rsa

from kvert.api.errors import NotFound
from kvert.api.meta import parse_time
from kvert.api.types import Obj
from kvert.auth.sakeys import (
    FileKeySet,
    KeyFileError,
    KeySet,
    KeySource,
    PrivateKey,
    algorithm,
    new_signing_key,
    private_pem,
    public_pem,
)
from kvert.auth.user import SERVICE_ACCOUNT_PREFIX, SERVICE_ACCOUNTS, User, service_account_username
from kvert.clock import Clock
from kvert.store import Store

DEFAULT_ISSUER = "https://kubernetes.default.svc.cluster.local"   # kind's and kubeadm's
LEEWAY = 60                                     # go-jose's jwt.DefaultLeeway
USER_PREFIX = SERVICE_ACCOUNT_PREFIX
ALL_SERVICE_ACCOUNTS = SERVICE_ACCOUNTS
GROUP_PREFIX = SERVICE_ACCOUNTS + ":"                # + NAMESPACE: a namespace's service accounts
POD_NAME_KEY = "authentication.kubernetes.io/pod-name"
POD_UID_KEY = "authentication.kubernetes.io/pod-uid"
NODE_NAME_KEY = "authentication.kubernetes.io/node-name"
NODE_UID_KEY = "authentication.kubernetes.io/node-uid"
CREDENTIAL_ID_KEY = "authentication.kubernetes.io/credential-id"
_PRIVATE = "kubernetes.io"


def username(namespace: str, name: str) -> str:
    return service_account_username(namespace, name)


def _ref(obj: Obj) -> dict[str, str]:
    meta = obj.get("metadata") or {}
    return {"name": meta.get("name", ""), "uid": meta.get("uid", "")}


def claims(service_account: Obj, *, audiences: list[str], now: float, expiration_seconds: int,
           warn_after_seconds: int = 0, pod: Obj | None = None, secret: Obj | None = None,
           node: Obj | None = None) -> dict[str, Any]:
    """The claims of a token of ``service_account``, bound to a pod (and its node), a
    secret or a node (``Claims`` in ``pkg/serviceaccount/claims.go``; ``iss`` is the
    signer's)."""
    if secret is not None and (pod is not None or node is not None):
        raise ValueError("a token is bound to one object")
    meta = service_account.get("metadata") or {}
    namespace = meta.get("namespace", "")
    issued = int(now)
    private: dict[str, Any] = {"namespace": namespace, "serviceaccount": _ref(service_account)}
    if pod is not None:
        private["pod"] = _ref(pod)
    if secret is not None:
        private["secret"] = _ref(secret)
    if node is not None:
        private["node"] = {k: v for k, v in _ref(node).items() if v}
    if warn_after_seconds:
        private["warnafter"] = issued + warn_after_seconds
    found: dict[str, Any] = {"aud": list(audiences)} if audiences else {}   # omitempty
    return {**found, "exp": issued + expiration_seconds, "iat": issued, "jti": str(uuid.uuid4()),
            "nbf": issued, "sub": username(namespace, meta.get("name", "")), _PRIVATE: private}


class ServiceAccountTokens:
    """The token signer and verifier: its keys (one signs, every one verifies: kube-apiserver's
    ``--service-account-signing-key-file`` and ``--service-account-key-file``) and its issuers
    (the first signs, every one is accepted: ``--service-account-issuer`` repeated)."""

    def __init__(self, private_key: PrivateKey | KeySource, issuer: str = DEFAULT_ISSUER, *,
                 issuers: Sequence[str] = ()) -> None:
        self.keys: KeySource = (KeySet(private_key) if isinstance(private_key, (rsa.RSAPrivateKey,
                                                                                 ec.EllipticCurvePrivateKey))
                                else private_key)
        self.issuer = issuer
        self.issuers = (issuer, *(i for i in issuers if i != issuer))

    @property
    def key_id(self) -> str:
        """The ``kid`` of the key that signs new tokens."""
        return self.keys.keys().signing_kid

    @classmethod
    def load_or_create(cls, path: Path | str, issuer: str = DEFAULT_ISSUER) -> ServiceAccountTokens:
        """The key in ``path`` (PEM), made there (mode 0600) when the file does not exist;
        read again when the file is replaced (a rotation)."""
        path = Path(path)
        if not path.exists():
            pem = private_pem(new_signing_key())
            path.parent.mkdir(parents=True, exist_ok=True)
            try:
                fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            except FileExistsError:
                pass   # another process made it first: use theirs
            else:
                with os.fdopen(fd, "wb") as f:
                    f.write(pem)
        try:
            return cls(FileKeySet(path), issuer)
        except KeyFileError as e:
            raise ValueError(f"{path}: not an RSA private key ({e})") from None

    def public_key_pem(self) -> bytes:
        """The verification key of new tokens (``sa.pub``), for other verifiers of them."""
        return public_pem(self.keys.keys().signing.public_key())

    def sign(self, token_claims: dict[str, Any]) -> str:
        """A compact JWS of ``token_claims`` with this issuer's ``iss``, signed by the
        current signing key."""
        self.keys.reload()
        keys = self.keys.keys()
        return jwt.encode({**token_claims, "iss": self.issuer}, keys.signing,
                          algorithm=algorithm(keys.signing), headers={"kid": keys.signing_kid, "typ": None})

    def verify(self, token: str) -> dict[str, Any] | None:
        """The claims of a token signed by one of the verification keys as one of the
        issuers (signature and issuer checked, nothing about time or audience), or None.
        The key files are looked at first (a stat each): a peer may have rotated, or an old
        key been retired."""
        try:
            kid = jwt.get_unverified_header(token).get("kid")
        except jwt.PyJWTError:
            return None
        self.keys.reload()
        found = self._verify(token, kid)
        return found if found is not None and found.get("iss") in self.issuers else None

    def _verify(self, token: str, kid: object) -> dict[str, Any] | None:
        verifying = self.keys.keys().verifying
        # the key the token names first; upstream tries every key, so do the others too
        ordered = sorted(verifying.items(), key=lambda item: item[0] != kid)
        for _, public in ordered:
            try:
                found: dict[str, Any] = jwt.decode(
                    token, public, algorithms=[algorithm(public)],
                    options={"verify_signature": True, "verify_exp": False, "verify_nbf": False,
                             "verify_iat": False, "verify_aud": False, "verify_iss": False})
            except jwt.PyJWTError:
                continue
            return found
        return None


def unverified_issuer(token: str) -> str | None:
    """The ``iss`` a JWT claims, read without verifying it (to tell whose token it is)."""
    parts = token.split(".")
    if len(parts) != 3:
        return None
    try:
        payload = json.loads(base64.urlsafe_b64decode(parts[1] + "=" * (-len(parts[1]) % 4)))
    except (ValueError, UnicodeDecodeError):
        return None
    issuer = payload.get("iss") if isinstance(payload, dict) else None
    return issuer if isinstance(issuer, str) else None


class TokenInvalid(Exception):
    """Why a token of ours is refused (kube-apiserver logs this; the client sees 401)."""


class ServiceAccountAuthenticator:
    """Bound service-account tokens as kube-apiserver's service-account authenticator checks
    them; the objects a token names are read from ``store``."""

    def __init__(self, tokens: ServiceAccountTokens, store: Store, clock: Clock,
                 audiences: tuple[str, ...] | None = None) -> None:
        self.tokens = tokens
        self.store = store
        self.clock = clock
        # --api-audiences defaults to the issuers
        self.audiences = tuple(audiences) if audiences else tokens.issuers

    def authenticate_token(self, token: str) -> tuple[User, float] | None:
        """The user of a valid token and until when the token is accepted; None for a token
        that is not ours. Raises :class:`TokenInvalid` for one of ours that does not hold."""
        if unverified_issuer(token) not in self.tokens.issuers:
            return None
        found = self.tokens.verify(token)
        if found is None:
            raise TokenInvalid("invalid signature")
        self._check_time(found)
        audiences = found.get("aud")
        audiences = [audiences] if isinstance(audiences, str) else list(audiences or [])
        if not set(audiences) & set(self.audiences):
            raise TokenInvalid(f"token audiences {audiences} is invalid for the target audiences "
                               f"{list(self.audiences)}")
        private = found.get(_PRIVATE)
        if not isinstance(private, dict):
            raise TokenInvalid("not a bound service account token")
        expires = found["exp"] + LEEWAY if "exp" in found else float("inf")
        return self._user(found, private), expires

    def _check_time(self, found: dict[str, Any]) -> None:
        now = self.clock.now()
        for claim in ("exp", "nbf", "iat"):
            if claim in found and not isinstance(found[claim], (int, float)):
                raise TokenInvalid(f"malformed {claim}")
        if "exp" in found and now - LEEWAY > found["exp"]:
            raise TokenInvalid("service account token has expired")
        if "nbf" in found and now + LEEWAY < found["nbf"]:
            raise TokenInvalid("service account token is not valid yet")
        if "iat" in found and now + LEEWAY < found["iat"]:
            raise TokenInvalid("service account token issued in the future")

    def _deleted(self, obj: Obj) -> bool:
        """Deleted more than the leeway ago (claims.go's validator): gone for tokens."""
        deleted = (obj.get("metadata") or {}).get("deletionTimestamp")
        return bool(deleted) and parse_time(deleted) < self.clock.now() - LEEWAY

    @staticmethod
    def _uid(obj: Obj) -> str:
        uid: str = (obj.get("metadata") or {}).get("uid", "")
        return uid

    def _bound(self, resource: str, namespace: str, ref: dict[str, Any], what: str) -> None:
        """The object a token is bound to must still be there, with the uid it had."""
        try:
            obj = self.store.get(resource, namespace, ref.get("name", ""))
        except NotFound:
            raise TokenInvalid("service account token has been invalidated") from None
        if self._deleted(obj):
            raise TokenInvalid("service account token has been invalidated")
        if self._uid(obj) != ref.get("uid"):
            raise TokenInvalid(f"{what} UID ({self._uid(obj)}) does not match service account "
                               f"{what} ref claim ({ref.get('uid')})")

    def _user(self, found: dict[str, Any], private: dict[str, Any]) -> User:
        namespace = private.get("namespace") or ""
        sa_ref = private.get("serviceaccount") or {}
        name = sa_ref.get("name", "")
        try:
            sa = self.store.get("serviceaccounts", namespace, name)
        except NotFound as e:
            raise TokenInvalid(str(e)) from None
        if self._deleted(sa):
            raise TokenInvalid(f"service account {namespace}/{name} has been deleted")
        if self._uid(sa) != sa_ref.get("uid"):
            raise TokenInvalid(f"service account UID ({self._uid(sa)}) does not match claim "
                               f"({sa_ref.get('uid')})")
        extra: dict[str, tuple[str, ...]] = {}
        secret_ref, pod_ref, node_ref = (private.get(k) for k in ("secret", "pod", "node"))
        if isinstance(secret_ref, dict):
            self._bound("secrets", namespace, secret_ref, "secret")
        if isinstance(pod_ref, dict):
            self._bound("pods", namespace, pod_ref, "pod")
            extra[POD_NAME_KEY] = (pod_ref.get("name", ""),)
            extra[POD_UID_KEY] = (pod_ref.get("uid", ""),)
        if isinstance(node_ref, dict) and node_ref.get("name"):
            if not isinstance(pod_ref, dict):
                # a node-bound token; a pod-bound one only tells which node the pod was on
                self._bound("nodes", "", node_ref, "node")
            extra[NODE_NAME_KEY] = (node_ref["name"],)
            if node_ref.get("uid"):
                extra[NODE_UID_KEY] = (node_ref["uid"],)
        if found.get("jti"):
            extra[CREDENTIAL_ID_KEY] = (f"JTI={found['jti']}",)
        return User(username(namespace, name), sa_ref.get("uid", ""),
                    (ALL_SERVICE_ACCOUNTS, GROUP_PREFIX + namespace), tuple(sorted(extra.items())))
