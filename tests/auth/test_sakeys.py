"""ServiceAccount signing and verification keys: several keys verify, one signs, rotation
keeps old tokens valid for their lifetime, a foreign key's token is refused.

Cases follow kube-apiserver's ``pkg/serviceaccount/jwt_test.go`` (TestReadPrivateKey,
TestReadPublicKeys, TestTokenGenerateAndValidate: "invalid keys", "valid key", "rotated
keys" for RSA and ECDSA), with keys made here."""

from __future__ import annotations

import base64
import json

import pytest
from cryptography.hazmat.primitives.asymmetric import ec

from kvert.auth.authenticator import Authenticator
from kvert.auth.sakeys import (
    FileKeySet,
    KeyFileError,
    KeySet,
    ensure_key_files,
    key_id,
    new_signing_key,
    private_pem,
    public_pem,
    read_public_keys,
    read_signing_key,
    retire,
    rotate,
)
from kvert.auth.serviceaccount import (
    LEEWAY,
    ServiceAccountAuthenticator,
    ServiceAccountTokens,
    TokenInvalid,
    claims,
)
from kvert.auth.tokens import TokenAuthenticator
from kvert.store import open_store

NOW = 1514764800


class FixedClock:
    def __init__(self, now: float = NOW):
        self.t = float(now)

    def now(self) -> float:
        return self.t


def _header(token: str) -> dict:
    part = token.split(".")[0]
    return json.loads(base64.urlsafe_b64decode(part + "=" * (-len(part) % 4)))


@pytest.fixture
def store():
    s = open_store("memory")
    s.create("namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "test"}})
    s.create("serviceaccounts", {"apiVersion": "v1", "kind": "ServiceAccount",
                                "metadata": {"name": "my-service-account", "namespace": "test"}})
    yield s
    s.close()


def _token(tokens: ServiceAccountTokens, store, *, now: float = NOW, seconds: int = 3600) -> str:
    sa = store.get("serviceaccounts", "test", "my-service-account")
    return tokens.sign(claims(sa, audiences=[tokens.issuer], now=now, expiration_seconds=seconds))


def _user(authenticator: ServiceAccountAuthenticator, token: str) -> str:
    found = authenticator.authenticate_token(token)
    assert found is not None
    return found[0].name


# ---- reading key files: TestReadPrivateKey, TestReadPublicKeys ------------------------------

def test_an_empty_file_holds_no_key(tmp_path):
    empty = tmp_path / "empty.pem"
    empty.write_bytes(b"")
    with pytest.raises(KeyFileError, match="data does not contain any valid RSA or ECDSA public keys"):
        read_public_keys(empty)
    with pytest.raises(KeyFileError):
        read_signing_key(empty)


def test_rsa_and_ecdsa_keys_public_or_private_several_per_file(tmp_path):
    rsa_key, ec_key = new_signing_key(), ec.generate_private_key(ec.SECP256R1())
    path = tmp_path / "keys.pem"
    path.write_bytes(public_pem(rsa_key.public_key()))
    assert [key_id(k) for k in read_public_keys(path)] == [key_id(rsa_key.public_key())]
    path.write_bytes(public_pem(rsa_key.public_key()) + b"\n" + public_pem(ec_key.public_key()))
    assert len(read_public_keys(path)) == 2
    # a private key in a verification file stands for its public key (keyutil.PublicKeysFromFile)
    path.write_bytes(private_pem(ec_key))
    assert [key_id(k) for k in read_public_keys(path)] == [key_id(ec_key.public_key())]
    assert isinstance(read_signing_key(path), ec.EllipticCurvePrivateKey)


# ---- TestTokenGenerateAndValidate -----------------------------------------------------------

@pytest.mark.parametrize("kind", ["rsa", "ecdsa"])
def test_only_the_verification_keys_accept_a_token(store, kind):
    signing = new_signing_key() if kind == "rsa" else ec.generate_private_key(ec.SECP256R1())
    other, third = new_signing_key(), ec.generate_private_key(ec.SECP256R1())
    token = _token(ServiceAccountTokens(signing), store)
    assert _header(token)["alg"] == ("RS256" if kind == "rsa" else "ES256")
    clock = FixedClock()
    # "invalid keys": a server whose keys did not sign it refuses it (401 to the client)
    stranger = ServiceAccountAuthenticator(ServiceAccountTokens(KeySet(other, [third.public_key()])),
                                           store, clock)
    with pytest.raises(TokenInvalid, match="invalid signature"):
        stranger.authenticate_token(token)
    # "rotated keys": the signing key among several verification keys, not first
    rotated = ServiceAccountTokens(KeySet(other, [third.public_key(), signing.public_key()]))
    assert _user(ServiceAccountAuthenticator(rotated, store, clock), token) == \
        "system:serviceaccount:test:my-service-account"


def test_a_non_jwt_token_is_no_service_account_token(store):
    authenticator = ServiceAccountAuthenticator(ServiceAccountTokens(new_signing_key()), store, FixedClock())
    assert authenticator.authenticate_token("invalid token") is None


# ---- issuers: --service-account-issuer repeated: the first signs, all are accepted ----------

def test_the_first_issuer_signs_and_every_issuer_is_accepted(store):
    key = new_signing_key()
    old = ServiceAccountTokens(key, "https://old.example")
    new = ServiceAccountTokens(key, "https://new.example", issuers=["https://old.example"])
    assert new.issuers == ("https://new.example", "https://old.example")
    authenticator = ServiceAccountAuthenticator(new, store, FixedClock())
    # --api-audiences defaults to the issuers, so a token the old issuer gave still fits
    assert _user(authenticator, _token(old, store)) == "system:serviceaccount:test:my-service-account"
    assert new.verify(_token(new, store))["iss"] == "https://new.example"
    # an issuer not configured is someone else's token: not ours to judge
    stranger = ServiceAccountTokens(key, "https://elsewhere.example")
    assert authenticator.authenticate_token(_token(stranger, store)) is None


# ---- rotation over a PKI directory ----------------------------------------------------------

def test_rotation_keeps_old_tokens_until_they_expire_and_refuses_foreign_keys(tmp_path, store):
    pki = tmp_path / "pki"
    pki.mkdir()
    ensure_key_files(pki)
    clock = FixedClock()
    # two API servers reading one PKI directory
    server_a = ServiceAccountTokens.load_or_create(pki / "sa.key")
    server_b = ServiceAccountTokens(FileKeySet(pki / "sa.key", [pki / "sa.pub"]))
    auth_b = Authenticator(TokenAuthenticator({}), clock, ServiceAccountAuthenticator(server_b, store, clock))
    before = _token(server_a, store, seconds=600)
    old_kid = server_a.key_id
    assert auth_b.authenticate(f"Bearer {before}") is not None

    assert rotate(pki)[0] == old_kid
    after = _token(server_a, store)               # A signs with the new key at once
    assert _header(after)["kid"] == server_a.key_id != old_kid
    # B has not read the new files yet; a token no key of B verifies makes it look again
    assert auth_b.authenticate(f"Bearer {after}").name == "system:serviceaccount:test:my-service-account"
    assert auth_b.authenticate(f"Bearer {before}") is not None      # the old key still verifies

    # a key that is not the cluster's, signing our issuer's claims: refused (401)
    forged = _token(ServiceAccountTokens(new_signing_key()), store)
    assert auth_b.authenticate(f"Bearer {forged}") is None

    # the old token lives as long as it was given, no longer (go-jose's leeway past exp)
    clock.t = NOW + 600 + LEEWAY + 1
    fresh = Authenticator(TokenAuthenticator({}), clock, ServiceAccountAuthenticator(server_b, store, clock))
    assert fresh.authenticate(f"Bearer {before}") is None
    with pytest.raises(TokenInvalid, match="service account token has expired"):
        ServiceAccountAuthenticator(server_b, store, clock).authenticate_token(before)

    # once retired, the old key verifies nothing
    clock.t = NOW
    retire(pki, old_kid)
    with pytest.raises(TokenInvalid, match="invalid signature"):
        ServiceAccountAuthenticator(server_b, store, clock).authenticate_token(before)
    with pytest.raises(KeyFileError, match="rotate first"):
        retire(pki, server_a.key_id)


def test_an_existing_key_is_kept_and_published(tmp_path):
    pki = tmp_path / "pki"
    pki.mkdir()
    key = new_signing_key()
    (pki / "sa.key").write_bytes(private_pem(key))    # a data directory from before sa.pub
    ensure_key_files(pki)
    ensure_key_files(pki)
    assert [key_id(k) for k in read_public_keys(pki / "sa.pub")] == [key_id(key.public_key())]
    assert (pki / "sa.key").read_bytes() == private_pem(key)
