"""The keys that sign and verify service-account tokens, read from PEM files.

kube-apiserver signs with one private key (``--service-account-signing-key-file``) and
accepts tokens signed by any of the keys in ``--service-account-key-file`` (repeatable;
each file may hold several PEM blocks: RSA or ECDSA, public or private). :class:`KeySet`
reads such files; :class:`FileKeySet` reads them again whenever one of them changes on
disk, so a key rotation (:func:`rotate`) reaches a running server without a restart.

A key is known by its ``kid``: the unpadded base64url SHA-256 of its public key's DER
(``keyIDFromPublicKey`` in kube-apiserver's ``pkg/serviceaccount/jwt.go``). RSA keys sign
RS256; ECDSA keys ES256, ES384 or ES512 by curve, as upstream's token generator picks.
"""

from __future__ import annotations

import base64
import hashlib
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa

from kvert.auth.tokens import file_stamp

PrivateKey = rsa.RSAPrivateKey | ec.EllipticCurvePrivateKey
PublicKey = rsa.RSAPublicKey | ec.EllipticCurvePublicKey

# the PEM files of a kvert PKI directory (kubeadm's names)
SIGNING_KEY_FILE = "sa.key"
VERIFICATION_KEYS_FILE = "sa.pub"

_PEM_BLOCK = re.compile(rb"-----BEGIN ([A-Z ]+)-----.+?-----END \1-----\r?\n?", re.DOTALL)
_CURVE_ALGORITHMS = {"secp256r1": "ES256", "secp384r1": "ES384", "secp521r1": "ES512"}


class KeyFileError(ValueError):
    """A key file that holds no usable key (the API server refuses to start)."""


def key_id(public: PublicKey) -> str:
    der = public.public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
    return base64.urlsafe_b64encode(hashlib.sha256(der).digest()).rstrip(b"=").decode()


def algorithm(key: PrivateKey | PublicKey) -> str:
    if isinstance(key, (rsa.RSAPrivateKey, rsa.RSAPublicKey)):
        return "RS256"
    found = _CURVE_ALGORITHMS.get(key.curve.name)
    if found is None:
        raise KeyFileError(f"unsupported elliptic curve {key.curve.name}")
    return found


def public_pem(public: PublicKey) -> bytes:
    return public.public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)


def private_pem(key: PrivateKey) -> bytes:
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.TraditionalOpenSSL,
                             serialization.NoEncryption())


def new_signing_key() -> rsa.RSAPrivateKey:
    """A 2048-bit RSA key, as kubeadm makes ``sa.key``."""
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


def _public_of_block(block: bytes) -> PublicKey | None:
    kind = block.split(b"-----")[1].removeprefix(b"BEGIN ")
    loaded: object
    try:
        if kind.endswith(b"PRIVATE KEY"):
            loaded = serialization.load_pem_private_key(block, password=None).public_key()
        elif kind.endswith(b"PUBLIC KEY"):
            loaded = serialization.load_pem_public_key(block)
        else:
            return None                   # a certificate or parameters: not a key
    except (ValueError, TypeError):
        return None
    return loaded if isinstance(loaded, (rsa.RSAPublicKey, ec.EllipticCurvePublicKey)) else None


def read_public_keys(path: Path) -> list[PublicKey]:
    """Every RSA or ECDSA key in a PEM file, public or private (as its public key)."""
    try:
        data = path.read_bytes()
    except OSError as e:
        raise KeyFileError(f"error reading public key file {path}: {e.strerror}") from None
    keys = [key for match in _PEM_BLOCK.finditer(data)
            if (key := _public_of_block(match.group(0))) is not None]
    if not keys:
        raise KeyFileError(f"error reading public key file {path}: data does not contain any valid "
                           "RSA or ECDSA public keys")
    return keys


def read_signing_key(path: Path) -> PrivateKey:
    try:
        key = serialization.load_pem_private_key(path.read_bytes(), password=None)
    except OSError as e:
        raise KeyFileError(f"failed to parse service-account-issuer-key-file {path}: {e.strerror}") from None
    except (ValueError, TypeError) as e:
        raise KeyFileError(f"failed to parse service-account-issuer-key-file {path}: {e}") from None
    if not isinstance(key, (rsa.RSAPrivateKey, ec.EllipticCurvePrivateKey)):
        raise KeyFileError(f"{path}: a {type(key).__name__} cannot sign service account tokens")
    algorithm(key)
    return key


@dataclass(frozen=True)
class Keys:
    """One reading of the keys: the signing key and every verification key by kid."""

    signing: PrivateKey
    verifying: dict[str, PublicKey]

    @property
    def signing_kid(self) -> str:
        return key_id(self.signing.public_key())


class KeySource(Protocol):
    def keys(self) -> Keys: ...

    def reload(self) -> bool:
        """Read the keys again if they may have changed; whether they did."""
        ...


def build_keys(signing: PrivateKey, verifying: Sequence[PublicKey] = ()) -> Keys:
    """The signing key's own public key always verifies (kvert's choice: a server never
    refuses the tokens it signs), then the verification keys."""
    found: dict[str, PublicKey] = {key_id(signing.public_key()): signing.public_key()}
    for public in verifying:
        found.setdefault(key_id(public), public)
    return Keys(signing, found)


class KeySet:
    """Keys fixed at construction."""

    def __init__(self, signing: PrivateKey, verifying: Sequence[PublicKey] = ()) -> None:
        self._keys = build_keys(signing, verifying)

    def keys(self) -> Keys:
        return self._keys

    def reload(self) -> bool:
        return False


class FileKeySet:
    """The signing key file and the verification key files, read again when any of them
    changed (inode, size or mtime): files are replaced by rename, so a reader sees the old
    file or the new one whole."""

    def __init__(self, signing_file: Path, key_files: Sequence[Path] = ()) -> None:
        self.signing_file = signing_file
        self.key_files = tuple(key_files)
        self._stamps: tuple[tuple[int, int, int] | None, ...] = ()
        self._keys = self._read()

    def _paths(self) -> tuple[Path, ...]:
        return (self.signing_file, *self.key_files)

    def _read(self) -> Keys:
        self._stamps = tuple(file_stamp(p) for p in self._paths())
        verifying = [key for path in self.key_files for key in read_public_keys(path)]
        return build_keys(read_signing_key(self.signing_file), verifying)

    def keys(self) -> Keys:
        return self._keys

    def reload(self) -> bool:
        if tuple(file_stamp(p) for p in self._paths()) == self._stamps:
            return False
        try:
            self._keys = self._read()
        except KeyFileError:
            return False                      # half-edited by hand: keep the keys we have
        return True


def _write_atomically(path: Path, data: bytes, mode: int) -> None:
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
    with os.fdopen(fd, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    os.replace(temporary, path)


def ensure_key_files(directory: Path) -> None:
    """``sa.key`` (made if missing) and ``sa.pub`` holding at least its public key. The
    caller holds the directory's lock (kvert.apiserver.identity)."""
    signing_file, verification_file = directory / SIGNING_KEY_FILE, directory / VERIFICATION_KEYS_FILE
    if not signing_file.exists():
        _write_atomically(signing_file, private_pem(new_signing_key()), 0o600)
    public = read_signing_key(signing_file).public_key()
    known = read_public_keys(verification_file) if verification_file.exists() else []
    if key_id(public) not in {key_id(k) for k in known}:
        _write_atomically(verification_file, b"".join(public_pem(k) for k in [*known, public]), 0o644)


def rotate(directory: Path, new_key: PrivateKey | None = None) -> tuple[str, str]:
    """Make a new signing key in ``directory``; the old one's public key stays in ``sa.pub``
    so the tokens it signed stay valid until they expire. The new public key is written to
    ``sa.pub`` before the new ``sa.key`` replaces the old, so a server that signs with the
    new key never meets a peer that cannot verify it. Returns (old kid, new kid). The caller
    holds the directory's lock."""
    ensure_key_files(directory)
    signing_file, verification_file = directory / SIGNING_KEY_FILE, directory / VERIFICATION_KEYS_FILE
    old = read_signing_key(signing_file)
    new = new_key or new_signing_key()
    algorithm(new)
    known = read_public_keys(verification_file)
    _write_atomically(verification_file,
                      b"".join(public_pem(k) for k in [*known, new.public_key()]), 0o644)
    _write_atomically(signing_file, private_pem(new), 0o600)
    return key_id(old.public_key()), key_id(new.public_key())


def retire(directory: Path, kid: str) -> None:
    """Drop a verification key from ``sa.pub`` (once the tokens it signed have expired);
    the current signing key cannot be retired."""
    signing = read_signing_key(directory / SIGNING_KEY_FILE)
    if key_id(signing.public_key()) == kid:
        raise KeyFileError(f"key {kid} signs new tokens: rotate first")
    verification_file = directory / VERIFICATION_KEYS_FILE
    known = read_public_keys(verification_file)
    kept = [k for k in known if key_id(k) != kid]
    if len(kept) == len(known):
        raise KeyFileError(f"no key {kid} in {verification_file}")
    _write_atomically(verification_file, b"".join(public_pem(k) for k in kept), 0o644)
