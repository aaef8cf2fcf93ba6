"""Bearer-token authentication: an admin token and one token per kvert component.

Tokens live in ``tokens.csv`` in the data directory, in the kube-apiserver static token
file format (``token,user,uid,"group1,group2"``), made on first start and kept, so a
restarted server accepts the kubeconfigs it wrote before. The admin is in
``system:masters``.

:meth:`TokenAuthenticator.ensure` gives an identity its token, adding a row when the
identity has none, so a component started separately (a new node agent,
``system:node:node-4`` in ``system:nodes``) can take its token from the data directory
while the server runs: the server looks at the file again when it changed on disk (at
most once a second), which kube-apiserver's static token file never does.
"""

from __future__ import annotations

import csv
import fcntl
import hmac
import io
import os
import secrets
from pathlib import Path

from kvert.auth.user import (
    KUBE_CONTROLLER_MANAGER,
    KUBE_SCHEDULER,
    MASTERS,
    NODES,
    VPA_ADMISSION,
    VPA_RECOMMENDER,
    VPA_UPDATER,
    User,
)
from kvert.clock import Clock, WallClock

# The admin's name in kubeadm's admin.conf (kind, kubeadm clusters), which clients and
# their test suites expect of a local cluster.
ADMIN = "kubernetes-admin"
# The identities of kvert's own components, as Kubernetes names its system users.
# A node agent is ``system:node:NAME`` in ``system:nodes`` (``node_identity``), made on demand.
COMPONENTS = (KUBE_SCHEDULER, KUBE_CONTROLLER_MANAGER, VPA_RECOMMENDER, VPA_UPDATER, VPA_ADMISSION)
RELOAD_INTERVAL = 1.0


def node_identity(node_name: str) -> tuple[str, tuple[str, ...]]:
    """The user and groups of a node's agent, as the Node authorizer expects them."""
    return f"system:node:{node_name}", (NODES,)


def _row(token: str, user: str, groups: tuple[str, ...]) -> str:
    buf = io.StringIO()
    csv.writer(buf).writerow((token, user, user, ",".join(groups)))
    return buf.getvalue()


def _read(path: Path) -> dict[str, User]:
    users: dict[str, User] = {}
    with path.open() as f:
        for row in csv.reader(f):
            if len(row) >= 3:
                groups = tuple(g for g in (row[3] if len(row) > 3 else "").split(",") if g)
                users[row[0]] = User(row[1], row[2], groups)
    return users


def file_stamp(path: Path) -> tuple[int, int, int] | None:
    """(inode, size, mtime) of ``path``, None when absent: what tells a replaced file."""
    try:
        st = path.stat()
    except FileNotFoundError:
        return None
    return (st.st_ino, st.st_size, st.st_mtime_ns)


class TokenAuthenticator:
    def __init__(self, users: dict[str, User], path: Path | None = None,
                 clock: Clock | None = None):
        self._users = users
        self._path = path
        self._clock = clock or WallClock()
        self._stamp = file_stamp(path) if path is not None else None
        self._checked = self._clock.now()

    @classmethod
    def load_or_create(cls, path: Path, clock: Clock | None = None) -> TokenAuthenticator:
        if not path.exists():
            text = _row(secrets.token_urlsafe(32), ADMIN, (MASTERS,))
            text += "".join(_row(secrets.token_urlsafe(32), name, ("system:authenticated",))
                            for name in COMPONENTS)
            path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "w") as f:
                f.write(text)
        return cls(_read(path), path, clock)

    def token_for(self, user: str) -> str:
        for token, u in self._users.items():
            if u.name == user:
                return token
        raise KeyError(user)

    def ensure(self, user: str, groups: tuple[str, ...] = ()) -> str:
        """``user``'s token, appended to the token file (with ``groups``) when it has none."""
        if self._path is None:
            raise ValueError("tokens not kept in a file: cannot add one")
        fd = os.open(self._path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o600)
        with os.fdopen(fd, "r+") as f:
            # Another process may be adding its own identity: one writer at a time.
            fcntl.flock(f, fcntl.LOCK_EX)
            self._users = _read(self._path)
            try:
                return self.token_for(user)
            except KeyError:
                pass
            token = secrets.token_urlsafe(32)
            f.write(_row(token, user, tuple(groups)))
            f.flush()
            self._users[token] = User(user, user, tuple(groups))
        self._stamp = file_stamp(self._path)
        return token

    def _reload_if_changed(self, *, now_or_never: bool = False) -> None:
        if self._path is None:
            return
        now = self._clock.now()
        if now - self._checked < RELOAD_INTERVAL and not now_or_never:
            return
        self._checked = now
        stamp = file_stamp(self._path)
        if stamp is not None and stamp != self._stamp:
            self._stamp = stamp
            self._users = _read(self._path)

    def authenticate_token(self, presented: str) -> User | None:
        self._reload_if_changed()
        user = self._find(presented)
        if user is None:
            # a component may have just added its identity (``ensure``): look at once
            self._reload_if_changed(now_or_never=True)
            user = self._find(presented)
        return user

    def _find(self, presented: str) -> User | None:
        # as bytes: compare_digest takes str only when it is ASCII, and a header may carry any
        # character (a non-ASCII token is simply no match, 401, as kube-apiserver answers)
        given = presented.encode("utf-8", "surrogateescape")
        for token, user in self._users.items():
            # Compare in constant time so response timing does not leak a token's prefix.
            if hmac.compare_digest(token.encode("utf-8", "surrogateescape"), given):
                return user
        return None

    def authenticate(self, authorization: str | None) -> User | None:
        token = bearer_token(authorization)
        return self.authenticate_token(token) if token else None


def bearer_token(authorization: object) -> str | None:
    """The token of an ``Authorization: Bearer <token>`` header (scheme case-insensitive, as
    kube-apiserver's bearertoken authenticator reads it)."""
    if not isinstance(authorization, str):
        return None
    parts = authorization.strip().split(" ", 2)
    if len(parts) < 2 or parts[0].lower() != "bearer":
        return None
    return parts[1] or None
