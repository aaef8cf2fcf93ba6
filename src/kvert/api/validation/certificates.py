"""certificates.k8s.io/v1 CertificateSigningRequest (``pkg/apis/certificates/validation``):
the request must be a signed PEM ``CERTIFICATE REQUEST``, the signer a domain-prefixed name,
usages known and unique, conditions well formed; updates may not remove conditions, and only
the ``approval`` subresource may add or change Approved/Denied. ``status.certificate`` is not
parsed (no signer issues certificates here) beyond being PEM ``CERTIFICATE`` blocks.

The compatibility allowances for objects stored by older releases (legacy signer, duplicate
or empty condition types, unknown usages) are not needed: kvert stores none.
"""

from __future__ import annotations

import base64
import binascii
from typing import Any

from cryptography import x509

from kvert.api import names as name_rules
from kvert.api.conditions import conditions_of
from kvert.api.types import Obj

from .common import (
    Causes,
    child,
    dicts,
    duplicate,
    forbidden,
    get_dict,
    get_int,
    get_list,
    get_str,
    index,
    invalid,
    not_supported,
    required,
)
from .meta import validate_object_meta, validate_object_meta_update

USAGES = sorted((
    "signing", "digital signature", "content commitment", "key encipherment", "key agreement",
    "data encipherment", "cert sign", "crl sign", "encipher only", "decipher only", "any",
    "server auth", "client auth", "code signing", "email protection", "s/mime",
    "ipsec end system", "ipsec tunnel", "ipsec user", "timestamping", "ocsp signing",
    "microsoft sgc", "netscape sgc"))
APPROVAL_TYPES = ("Approved", "Denied")
_TRUE_ONLY = ("Approved", "Denied", "Failed")
_STATUSES = ("False", "True", "Unknown")
_MIN_EXPIRATION_SECONDS = 600
_SIGNER_FORM_MSG = "must be a fully qualified domain and path of the form 'example.com/signer-name'"


def _pem_blocks(data: bytes) -> list[tuple[str, bytes]]:
    """The ``-----BEGIN X-----`` blocks of ``data`` (type, DER bytes); undecodable ones skipped."""
    blocks: list[tuple[str, bytes]] = []
    text = data.decode("ascii", "replace")
    while True:
        start = text.find("-----BEGIN ")
        if start < 0:
            return blocks
        head_end = text.find("-----", start + 11)
        if head_end < 0:
            return blocks
        kind = text[start + 11:head_end]
        end_marker = f"-----END {kind}-----"
        end = text.find(end_marker, head_end)
        if end < 0:
            return blocks
        body = text[head_end + 5:end]
        try:
            blocks.append((kind, base64.b64decode("".join(body.split()), validate=True)))
        except (binascii.Error, ValueError):
            blocks.append((kind, b""))
        text = text[end + len(end_marker):]


def _decoded(value: object) -> bytes | None:
    if not isinstance(value, str):
        return None
    try:
        return base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        return None


def request_problem(pem: bytes) -> str:
    """ParseCSR then CheckSignature: the first PEM block must be a CSR that verifies."""
    blocks = _pem_blocks(pem)
    if not blocks or blocks[0][0] != "CERTIFICATE REQUEST":
        return "PEM block type must be CERTIFICATE REQUEST"
    try:
        csr = x509.load_der_x509_csr(blocks[0][1])
    except ValueError as e:
        return f"x509: malformed certificate request: {e}"
    if not csr.is_signature_valid:
        return "x509: ECDSA verification failure" if "ecdsa" in str(
            csr.signature_algorithm_oid).lower() else "crypto/rsa: verification error"
    return ""


def _certificate_problem(pem: bytes) -> str:
    """validateCertificate: one or more CERTIFICATE blocks, nothing else."""
    if not pem:
        return ""
    blocks = _pem_blocks(pem)
    if not blocks:
        return "must contain at least one CERTIFICATE PEM block"
    for kind, der in blocks:
        if kind != "CERTIFICATE":
            return f'only CERTIFICATE PEM blocks are allowed, found "{kind}"'
        try:
            x509.load_der_x509_certificate(der)
        except ValueError as e:
            return f"x509: malformed certificate: {e}"
    return ""


def validate_signer_name(signer: str, path: str) -> Causes:
    """ValidateSignerName: ``domain/path``, the domain of two or more DNS labels."""
    if not signer:
        return [required(path, "")]
    segments = signer.split("/")
    if len(segments) != 2:
        return [invalid(path, signer, _SIGNER_FORM_MSG)]
    domain, rest = segments
    errs: Causes = []
    labels = domain.split(".")
    for label in labels:
        problems = name_rules.is_dns1123_label(label)
        if problems:
            errs.extend(invalid(path, domain, f'validating label "{label}": {msg}')
                        for msg in problems)
            break
    if len(labels) < 2:
        errs.append(invalid(path, domain,
                            "should be a domain with at least two segments separated by dots"))
    errs.extend(invalid(path, rest, msg) for msg in name_rules.is_dns1123_subdomain(rest))
    return errs


def _validate_conditions(conditions: list[Any], path: str, errs: Causes) -> None:
    seen: set[str] = set()
    approval_seen: set[str] = set()
    for _, cpath, condition in dicts(conditions, path, errs):
        type_ = get_str(condition, "type", cpath, errs)
        status = get_str(condition, "status", cpath, errs)
        if not type_:
            errs.append(required(child(cpath, "type"), ""))
        allowed = ("True",) if type_ in _TRUE_ONLY else _STATUSES
        if not status:
            errs.append(required(child(cpath, "status"), ""))
        elif status not in allowed:
            errs.append(not_supported(child(cpath, "status"), status, allowed))
        if type_ in APPROVAL_TYPES:
            if approval_seen - {type_}:
                errs.append(invalid(child(cpath, "type"), type_,
                                    "Approved and Denied conditions are mutually exclusive"))
            approval_seen.add(type_)
        if type_ in seen:
            errs.append(duplicate(child(cpath, "type"), type_))
        seen.add(type_)


def _any_name(name: str, prefix: bool = False) -> list[str]:
    """CSR names are not checked beyond being present: anything goes."""
    return []


def validate_certificate_signing_request(csr: Obj) -> Causes:
    errs = validate_object_meta(csr, namespaced=False, name_fn=_any_name)
    spec = get_dict(csr, "spec", "", errs)
    request = spec.get("request")
    pem = _decoded(request)
    problem = "illegal base64 data" if pem is None else request_problem(pem)
    if problem:
        errs.append(invalid("spec.request", request if isinstance(request, str) else "", problem))
    usages = get_list(spec, "usages", "spec", errs)
    if not usages:
        errs.append(required("spec.usages", ""))
    seen: set[Any] = set()
    for i, usage in enumerate(usages):
        upath = index("spec.usages", i)
        if usage not in USAGES:
            errs.append(not_supported(upath, usage, USAGES))
        if usage in seen:
            errs.append(duplicate(upath, usage))
        seen.add(usage if isinstance(usage, str) else repr(usage))
    errs.extend(validate_signer_name(get_str(spec, "signerName", "spec", errs), "spec.signerName"))
    expiration = get_int(spec, "expirationSeconds", "spec", errs, bits=32)
    if expiration is not None and expiration < _MIN_EXPIRATION_SECONDS:
        errs.append(invalid("spec.expirationSeconds", expiration,
                            "may not specify a duration less than 600 seconds (10 minutes)"))
    status = get_dict(csr, "status", "", errs)
    _validate_conditions(get_list(status, "conditions", "status", errs), "status.conditions", errs)
    certificate = status.get("certificate")
    if certificate:
        pem = _decoded(certificate)
        problem = "illegal base64 data" if pem is None else _certificate_problem(pem)
        if problem:
            errs.append(invalid("status.certificate", "<certificate data>", problem))
    return errs


def _conditions_of(csr: Obj, type_: str) -> list[Any]:
    return [c for c in conditions_of(csr.get("status")) if c.get("type") == type_]


def _validate_update(new: Obj, old: Obj, *, approval: bool, certificate: bool) -> Causes:
    errs = validate_certificate_signing_request(new)
    for type_ in ("Approved", "Denied", "Failed"):
        if len(_conditions_of(new, type_)) < len(_conditions_of(old, type_)):
            errs.append(forbidden("status.conditions",
                                  f'updates may not remove a condition of type "{type_}"'))
    if not approval:
        for type_ in APPROVAL_TYPES:
            before, after = _conditions_of(old, type_), _conditions_of(new, type_)
            if len(after) > len(before):
                errs.append(forbidden("status.conditions",
                                      f'updates may not add a condition of type "{type_}"'))
            elif len(after) == len(before) and after != before:
                errs.append(forbidden("status.conditions",
                                      f'updates may not modify a condition of type "{type_}"'))
    new_cert = (new.get("status") or {}).get("certificate") or ""
    old_cert = (old.get("status") or {}).get("certificate") or ""
    if new_cert != old_cert:
        if not certificate:
            errs.append(forbidden("status.certificate", "updates may not set certificate content"))
        elif old_cert:
            errs.append(forbidden("status.certificate",
                                  "updates may not modify existing certificate content"))
    return errs + validate_object_meta_update(new, old)


def validate_certificate_signing_request_update(new: Obj, old: Obj) -> Causes:
    return _validate_update(new, old, approval=False, certificate=False)


def validate_certificate_signing_request_status_update(new: Obj, old: Obj) -> Causes:
    return _validate_update(new, old, approval=False, certificate=True)


def validate_certificate_signing_request_approval_update(new: Obj, old: Obj) -> Causes:
    return _validate_update(new, old, approval=True, certificate=False)
