"""Request authentication as kube-apiserver assembles it for client certificates and bearer
tokens.

A client certificate the cluster CA signed first (x509); then the static token file, then
service-account tokens (the first authenticator that
recognises a token decides); successful answers are cached for 10 s (kube-apiserver's
token success cache TTL; failures are not cached), never past the token's own expiry;
and every authenticated user is in ``system:authenticated`` (the authenticated-group
adder). A token is never logged.
"""

from __future__ import annotations

import hashlib
import logging
from dataclasses import replace
from typing import Any

from kvert.auth.serviceaccount import ServiceAccountAuthenticator, TokenInvalid
from kvert.auth.tokens import TokenAuthenticator, bearer_token
from kvert.auth.user import AUTHENTICATED, User
from kvert.auth.user import UNAUTHENTICATED as UNAUTHENTICATED
from kvert.clock import Clock

log = logging.getLogger(__name__)

SUCCESS_CACHE_TTL = 10.0
_CACHE_LIMIT = 4096


def with_authenticated_group(user: User) -> User:
    if AUTHENTICATED in user.groups or UNAUTHENTICATED in user.groups:
        return user
    return replace(user, groups=(*user.groups, AUTHENTICATED))


def certificate_user(peercert: dict[str, Any] | None) -> User | None:
    """The user of a verified client certificate (``ssl.SSLSocket.getpeercert()``), as
    kube-apiserver's x509 authenticator reads one: the common name is the user, the
    organizations are its groups; no common name, no user."""
    if not peercert:
        return None
    attributes = [attr for rdn in peercert.get("subject", ()) for attr in rdn]
    names = [value for key, value in attributes if key == "commonName"]
    if not names or not names[0]:
        return None
    groups = tuple(value for key, value in attributes if key == "organizationName")
    return with_authenticated_group(User(names[0], groups=groups))


class Authenticator:
    def __init__(self, static: TokenAuthenticator, clock: Clock,
                 service_accounts: ServiceAccountAuthenticator | None = None,
                 success_ttl: float = SUCCESS_CACHE_TTL):
        self.static = static
        self.service_accounts = service_accounts
        self.clock = clock
        self.success_ttl = success_ttl
        self._cache: dict[bytes, tuple[User, float]] = {}   # sha256(token) -> (user, until)

    def authenticate(self, authorization_header: str | None) -> User | None:
        token = bearer_token(authorization_header)
        if token is None:
            return None
        key = hashlib.sha256(token.encode("utf-8", "surrogatepass")).digest()
        now = self.clock.now()
        cached = self._cache.get(key)
        if cached is not None:
            if now < cached[1]:
                return cached[0]
            del self._cache[key]
        user, until = self._authenticate(token, now)
        if user is None:
            return None
        user = with_authenticated_group(user)
        self._remember(key, user, min(until, now + self.success_ttl), now)
        return user

    def _authenticate(self, token: str, now: float) -> tuple[User | None, float]:
        user = self.static.authenticate_token(token)
        if user is not None or self.service_accounts is None:
            return user, now + self.success_ttl
        try:
            found = self.service_accounts.authenticate_token(token)
        except TokenInvalid as e:
            log.debug("service account token refused: %s", e)
            return None, now
        return found if found is not None else (None, now)

    def _remember(self, key: bytes, user: User, until: float, now: float) -> None:
        if len(self._cache) >= _CACHE_LIMIT:
            self._cache = {k: v for k, v in self._cache.items() if v[1] > now}
            while len(self._cache) >= _CACHE_LIMIT:
                del self._cache[next(iter(self._cache))]
        self._cache[key] = (user, until)
