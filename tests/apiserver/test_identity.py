"""The cluster identity several API servers share (kvert.apiserver.identity): one CA and one
set of ServiceAccount keys, made once even when servers start together."""

from __future__ import annotations

import datetime
import threading

import pytest
from cryptography import x509

from kvert.apiserver.identity import IdentityError, IdentityOptions, load_identity
from kvert.auth.sakeys import new_signing_key, private_pem, public_pem
from kvert.auth.serviceaccount import ServiceAccountTokens

NOW = datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC)


def _issuer_verifies(ca_pem: bytes, cert_pem: bytes) -> None:
    ca = x509.load_pem_x509_certificate(ca_pem)
    x509.load_pem_x509_certificate(cert_pem).verify_directly_issued_by(ca)


def test_servers_starting_together_on_an_empty_pki_dir_make_one_ca(tmp_path):
    # the race: each server finds no CA and makes its own; the lock lets one make it
    shared = tmp_path / "pki"
    found: list = []
    barrier = threading.Barrier(4)

    def start(n: int) -> None:
        barrier.wait()
        found.append(load_identity(IdentityOptions(pki_dir=shared), tmp_path / f"data{n}", NOW))

    threads = [threading.Thread(target=start, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len({identity.pki.ca_pem() for identity in found}) == 1
    assert len({identity.service_account_tokens.key_id for identity in found}) == 1
    ca = found[0].pki.ca_pem()
    for identity in found:
        _issuer_verifies(ca, identity.pki.cert.read_bytes())
        _issuer_verifies(ca, (shared / "admin.crt").read_bytes())
    assert not (tmp_path / "data0" / "pki").exists()


def test_a_token_of_one_server_verifies_on_another_of_the_same_pki_dir(tmp_path):
    a = load_identity(IdentityOptions(pki_dir=tmp_path / "pki"), tmp_path / "a", NOW).service_account_tokens
    b = load_identity(IdentityOptions(pki_dir=tmp_path / "pki"), tmp_path / "b", NOW).service_account_tokens
    own = load_identity(IdentityOptions(), tmp_path / "c", NOW).service_account_tokens
    token = a.sign({"sub": "system:serviceaccount:default:x"})
    assert b.verify(token)["sub"] == "system:serviceaccount:default:x"
    assert own.verify(token) is None          # a server with its own keys: not one cluster


def test_kube_apiserver_key_flags(tmp_path):
    signing, old = new_signing_key(), new_signing_key()
    (tmp_path / "signing.key").write_bytes(private_pem(signing))
    (tmp_path / "old.pub").write_bytes(public_pem(old.public_key()))
    options = IdentityOptions(service_account_signing_key_file=tmp_path / "signing.key",
                              service_account_key_files=(tmp_path / "old.pub",),
                              service_account_issuers=("https://a.example", "https://b.example"))
    tokens = load_identity(options, tmp_path / "data", NOW).service_account_tokens
    assert (tokens.issuer, tokens.issuers) == ("https://a.example", ("https://a.example", "https://b.example"))

    by_old = ServiceAccountTokens(old, "https://b.example").sign({"sub": "x"})
    assert tokens.verify(by_old)["iss"] == "https://b.example"
    assert tokens.verify(tokens.sign({"sub": "y"}))["iss"] == "https://a.example"
    # the PKI directory's own sa.key is not made when a signing key is given
    assert not (tmp_path / "data" / "pki" / "sa.key").exists()


def test_bad_identity_flags_are_refused(tmp_path):
    with pytest.raises(IdentityError, match="must be given together"):
        load_identity(IdentityOptions(tls_cert_file=tmp_path / "x.crt"), tmp_path, NOW)
    with pytest.raises(IdentityError, match="no such file"):
        load_identity(IdentityOptions(service_account_key_files=(tmp_path / "missing.pub",)), tmp_path, NOW)
    (tmp_path / "empty.pub").write_bytes(b"")
    with pytest.raises(IdentityError, match="does not contain any valid RSA or ECDSA public keys"):
        load_identity(IdentityOptions(service_account_key_files=(tmp_path / "empty.pub",)), tmp_path, NOW)
