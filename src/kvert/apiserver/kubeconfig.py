"""Kubeconfig files for kubectl and client libraries."""

from __future__ import annotations

import base64
import os
from pathlib import Path

import yaml

from kvert.auth.tokens import ADMIN


def write_kubeconfig(path: Path, server: str, ca_pem: bytes, token: str, user: str = ADMIN,
                     cluster: str = "kvert", client_certificate: tuple[bytes, bytes] | None = None) -> None:
    """A kubeconfig for ``user``: its token and, when given, its client certificate and key
    (PEM), as kubeadm's admin.conf carries them."""
    credentials = {"token": token}
    if client_certificate is not None:
        credentials["client-certificate-data"] = base64.b64encode(client_certificate[0]).decode()
        credentials["client-key-data"] = base64.b64encode(client_certificate[1]).decode()
    config = {
        "apiVersion": "v1", "kind": "Config", "preferences": {},
        "clusters": [{"name": cluster, "cluster": {
            "server": server, "certificate-authority-data": base64.b64encode(ca_pem).decode()}}],
        "users": [{"name": user, "user": credentials}],
        "contexts": [{"name": cluster, "context": {"cluster": cluster, "user": user,
                                                    "namespace": "default"}}],
        "current-context": cluster,
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        yaml.safe_dump(config, f, sort_keys=False)
