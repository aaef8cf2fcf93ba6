"""Columns and rows of CertificateSigningRequests (``printCertificateSigningRequest``,
``extractCSRStatus``) and CSIStorageCapacities (``printCSIStorageCapacity``).
"""

from __future__ import annotations

from typing import Any

from .builtin import RowFunc, _age, _l, _m, _name, _quantity, _s, age_col, col, name_col
from .duration import SECOND, human_duration

CSR_COLUMNS = [
    name_col(),
    age_col(),
    col("SignerName", "string", "Requested signer for the request. It is a qualified name in the "
        "form: `scope-hostname.io/name`."),
    col("Requestor", "string", "Base64-encoded PKCS#10 CSR data"),
    col("RequestedDuration", "string", "expirationSeconds is the requested duration of validity "
        "of the issued certificate."),
    col("Condition", "string", "Conditions applied to the request, such as approval or denial."),
]

CSI_STORAGE_CAPACITY_COLUMNS = [
    name_col(),
    col("StorageClassName", "string", "storageClassName represents the name of the StorageClass "
        "that the reported capacity applies to."),
    col("Capacity", "string", "capacity is the value reported by the CSI driver in its "
        "GetCapacityResponse for a GetCapacityRequest with topology and parameters that match the "
        "previous fields."),
    age_col(),
]


def csr_condition(status: dict) -> str:
    """extractCSRStatus: Denied over Approved over Pending, then Failed and Issued."""
    types = {_m(c).get("type") for c in _l(status.get("conditions"))}
    text = "Denied" if "Denied" in types else "Approved" if "Approved" in types else "Pending"
    if "Failed" in types:
        text += ",Failed"
    if status.get("certificate"):
        text += ",Issued"
    return text


def csr_row(csr: dict, now: int) -> list[Any]:
    spec = _m(csr.get("spec"))
    seconds = spec.get("expirationSeconds")
    duration = human_duration(seconds * SECOND) if isinstance(seconds, int) else "<none>"
    return [_name(csr), _age(csr, now), _s(spec.get("signerName")) or "<none>",
            _s(spec.get("username")), duration, csr_condition(_m(csr.get("status")))]


def csi_storage_capacity_row(cap: dict, now: int) -> list[Any]:
    capacity = cap.get("capacity")
    return [_name(cap), _s(cap.get("storageClassName")),
            "<unset>" if capacity is None else _quantity(capacity), _age(cap, now)]


def _rows(fn) -> RowFunc:
    return lambda obj, now: (fn(obj, now), None)


PRINTERS = {
    ("certificates.k8s.io", "CertificateSigningRequest"): (CSR_COLUMNS, _rows(csr_row)),
    ("storage.k8s.io", "CSIStorageCapacity"):
        (CSI_STORAGE_CAPACITY_COLUMNS, _rows(csi_storage_capacity_row)),
}
