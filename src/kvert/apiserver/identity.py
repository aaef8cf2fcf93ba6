"""One cluster identity for every API server of a cluster: the CA, the serving certificate,
the ServiceAccount keys and issuers.

By default an API server keeps them in ``DATA_DIR/pki``; several API servers (``kvert up``
or ``kvert apiserver`` on one etcd, each with its own data directory) are one cluster when
they share a PKI directory (``--pki-dir``): the first to start makes what is missing,
under an exclusive lock on ``PKI_DIR/.lock``, and every other loads the same files. Then a
ServiceAccount token one of them signed is accepted by all, a client certificate from the
shared CA authenticates everywhere, and a kubeconfig written by one trusts the serving
certificate of every other.

kube-apiserver's own flags point a server at files made elsewhere (kubeadm's
``/etc/kubernetes/pki`` layout is the same): ``--service-account-signing-key-file``,
``--service-account-key-file`` (repeatable; public or private keys, several per file),
``--service-account-issuer`` (repeatable: the first signs, all are accepted),
``--client-ca-file`` and ``--tls-cert-file``/``--tls-private-key-file``. A flag given
replaces that part of the PKI directory; the rest still comes from it.
"""

from __future__ import annotations

import datetime
import fcntl
import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path

from kvert.apiserver.certs import Pki, ensure_client_cert, ensure_pki
from kvert.auth.sakeys import SIGNING_KEY_FILE, VERIFICATION_KEYS_FILE, FileKeySet, KeyFileError, ensure_key_files
from kvert.auth.serviceaccount import DEFAULT_ISSUER, ServiceAccountTokens
from kvert.auth.tokens import ADMIN
from kvert.auth.user import MASTERS

LOCK_FILE = ".lock"
ADMIN_CERT = "admin"          # pki/admin.crt + admin.key: the admin kubeconfig's client certificate


class IdentityError(ValueError):
    """Flags or files that make no identity (the server does not start)."""


@dataclass(frozen=True)
class IdentityOptions:
    """Where the identity comes from; empty fields: the PKI directory's files."""

    pki_dir: Path | None = None                 # None: DATA_DIR/pki
    service_account_signing_key_file: Path | None = None
    service_account_key_files: tuple[Path, ...] = ()
    service_account_issuers: tuple[str, ...] = ()
    service_account_max_token_expiration: float = 0.0   # seconds; 0: TokenRequest has no limit
    client_ca_file: Path | None = None
    tls_cert_file: Path | None = None
    tls_private_key_file: Path | None = None

    def directory(self, data_dir: Path) -> Path:
        return (self.pki_dir or data_dir / "pki").expanduser()


@dataclass(frozen=True)
class ClusterIdentity:
    pki: Pki
    service_account_tokens: ServiceAccountTokens


@contextmanager
def locked(directory: Path) -> Iterator[None]:
    """An exclusive lock on the PKI directory, held while its files are made or rotated, so
    two servers starting at once do not make two CAs."""
    directory.mkdir(mode=0o700, parents=True, exist_ok=True)
    fd = os.open(directory / LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)                 # closing releases the lock


def _check(options: IdentityOptions) -> None:
    if (options.tls_cert_file is None) != (options.tls_private_key_file is None):
        raise IdentityError("--tls-cert-file and --tls-private-key-file must be given together")
    for path in (options.service_account_signing_key_file, *options.service_account_key_files,
                 options.client_ca_file, options.tls_cert_file, options.tls_private_key_file):
        if path is not None and not path.expanduser().is_file():
            raise IdentityError(f"{path}: no such file")


def load_identity(options: IdentityOptions, data_dir: Path, now: datetime.datetime) -> ClusterIdentity:
    """The identity the options name, making the PKI directory's missing files first."""
    _check(options)
    directory = options.directory(data_dir)
    with locked(directory):
        pki = ensure_pki(directory, now)
        # made here, under the lock, so that two servers never write half a pair each
        ensure_client_cert(pki, ADMIN_CERT, ADMIN, (MASTERS,), now)
        if options.service_account_signing_key_file is None:
            ensure_key_files(directory)
    if options.tls_cert_file is not None and options.tls_private_key_file is not None:
        pki = replace(pki, cert=options.tls_cert_file.expanduser(), key=options.tls_private_key_file.expanduser())
    if options.client_ca_file is not None:
        pki = replace(pki, client_ca=options.client_ca_file.expanduser())
    signing = (options.service_account_signing_key_file or directory / SIGNING_KEY_FILE).expanduser()
    key_files = tuple(p.expanduser() for p in options.service_account_key_files)
    if not key_files and options.service_account_signing_key_file is None:
        key_files = (directory / VERIFICATION_KEYS_FILE,)
    issuers = options.service_account_issuers or (DEFAULT_ISSUER,)
    try:
        keys = FileKeySet(signing, key_files)
    except KeyFileError as e:
        raise IdentityError(str(e)) from None
    return ClusterIdentity(pki, ServiceAccountTokens(keys, issuers[0], issuers=issuers[1:]))
