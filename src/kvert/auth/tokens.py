"""Bearer-token authentication: an admin token and one token per kvert component.

Tokens live in ``tokens.csv`` in the data directory, in the kube-apiserver static token
file format (``token,user,uid,"group1,group2"``), made on first start and kept, so a
restarted server accepts the kubeconfigs it wrote before.
"""

from __future__ import annotations

import csv
import hmac
import io
import os
import secrets
from pathlib import Path

from kvert.auth.user import User

ADMIN = "kvert-admin"
# The identities of kvert's own components, as Kubernetes names its system users.
COMPONENTS = ("system:kube-scheduler", "system:kube-controller-manager", "system:node-agent",
              "system:vpa-recommender", "system:vpa-updater", "system:vpa-admission-controller")


class TokenAuthenticator:
    def __init__(self, users: dict[str, User]):
        self._users = users

    @classmethod
    def load_or_create(cls, path: Path) -> "TokenAuthenticator":
        if not path.exists():
            rows = [(secrets.token_urlsafe(32), ADMIN, ADMIN, "system:masters")]
            rows += [(secrets.token_urlsafe(32), name, name, "system:authenticated")
                     for name in COMPONENTS]
            buf = io.StringIO()
            csv.writer(buf).writerows(rows)
            path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "w") as f:
                f.write(buf.getvalue())
        users: dict[str, User] = {}
        with path.open() as f:
            for row in csv.reader(f):
                if len(row) >= 3:
                    groups = tuple(g for g in (row[3] if len(row) > 3 else "").split(",") if g)
                    users[row[0]] = User(row[1], row[2], groups)
        return cls(users)

    def token_for(self, user: str) -> str:
        for token, u in self._users.items():
            if u.name == user:
                return token
        raise KeyError(user)

    def authenticate(self, authorization: str | None) -> User | None:
        if not authorization or not authorization.startswith("Bearer "):
            return None
        presented = authorization[len("Bearer "):].strip()
        for token, user in self._users.items():
            # Compare in constant time so response timing does not leak a token's prefix.
            if hmac.compare_digest(token, presented):
                return user
        return None
