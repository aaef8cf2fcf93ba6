"""apiregistration.k8s.io/v1 APIService (kube-aggregator's
``pkg/apis/apiregistration/validation``: ``ValidateAPIService``, ``ValidateAPIServiceUpdate``,
``ValidateAPIServiceStatusUpdate``).

* the name must be a valid path segment and exactly ``spec.version + "." + spec.group``
  (``v1.`` for the legacy core group, the only group that may be empty, and only for ``v1``);
* ``spec.group`` a DNS subdomain, ``spec.version`` a DNS-1035 label;
* ``spec.groupPriorityMinimum`` in 1..20000, ``spec.versionPriority`` in 1..1000;
* a local APIService (no ``spec.service``) may set neither ``caBundle`` nor
  ``insecureSkipTLSVerify``; one with a service needs its namespace and name, and may not set
  ``insecureSkipTLSVerify`` together with a ``caBundle``;
* status: every condition's status is True, False or Unknown.

An update checks the metadata update rules and then the whole object again, as upstream.
"""

from __future__ import annotations

import base64
import binascii

from kvert.api import names as name_rules
from kvert.api.gostrings import quote
from kvert.api.types import Obj

from .common import (
    Causes,
    child,
    dicts,
    get_bool,
    get_dict,
    get_int,
    get_list,
    get_str,
    invalid,
    not_supported,
    required,
)
from .meta import NameFn, validate_object_meta, validate_object_meta_update

MAX_GROUP_PRIORITY = 20000
MAX_VERSION_PRIORITY = 1000
CONDITION_STATUSES = ("True", "False", "Unknown")


def _required_name(spec: Obj) -> str:
    version, group = spec.get("version"), spec.get("group")
    return f"{version if isinstance(version, str) else ''}.{group if isinstance(group, str) else ''}"


def _name_rule(required_name: str) -> NameFn:
    """The name function ``ValidateAPIService`` gives ``ValidateObjectMeta``."""
    def check(name: str, prefix: bool = False) -> list[str]:
        problems = name_rules.path_segment_problems(name)
        if problems:
            return problems
        if name != required_name:
            return [f'must be `spec.version+"."+spec.group`: {quote(required_name)}']
        return []
    return check


def _bundle_size(value: object) -> int:
    """The length in bytes of ``caBundle`` (base64 in JSON)."""
    if not isinstance(value, str):
        return 0
    try:
        return len(base64.b64decode(value, validate=True))
    except (binascii.Error, ValueError):
        return len(value)


def validate_api_service(obj: Obj) -> Causes:
    errs: Causes = []
    spec = get_dict(obj, "spec", "", errs)
    errs = validate_object_meta(obj, namespaced=False, name_fn=_name_rule(_required_name(spec))) + errs
    group = get_str(spec, "group", "spec", errs)
    version = get_str(spec, "version", "spec", errs)
    if not group and version != "v1":
        errs.append(required("spec.group", "only v1 may have an empty group and it better be legacy kube"))
    if group:
        errs.extend(invalid("spec.group", group, m) for m in name_rules.is_dns1123_subdomain(group))
    errs.extend(invalid("spec.version", version, m) for m in name_rules.is_dns1035_label(version))

    for field, most in (("groupPriorityMinimum", MAX_GROUP_PRIORITY),
                        ("versionPriority", MAX_VERSION_PRIORITY)):
        before = len(errs)
        priority = get_int(spec, field, "spec", errs, bits=32)
        if len(errs) == before and not 0 < (priority or 0) <= most:
            errs.append(invalid(child("spec", field), priority or 0,
                                f"must be positive and less than {most}"))

    bundle = _bundle_size(spec.get("caBundle"))
    skip_verify = get_bool(spec, "insecureSkipTLSVerify", "spec", errs) or False
    if spec.get("service") is None:
        if bundle:
            errs.append(invalid("spec.caBundle", f"{bundle} bytes",
                                "local APIServices may not have a caBundle"))
        if skip_verify:
            errs.append(invalid("spec.insecureSkipTLSVerify", True,
                                "local APIServices may not have insecureSkipTLSVerify"))
        return errs

    service = get_dict(spec, "service", "spec", errs)
    if not get_str(service, "namespace", "spec.service", errs):
        errs.append(required("spec.service.namespace"))
    if not get_str(service, "name", "spec.service", errs):
        errs.append(required("spec.service.name"))
    if skip_verify and bundle:
        errs.append(invalid("spec.insecureSkipTLSVerify", True, "may not be true if caBundle is present"))
    return errs


def validate_api_service_update(new: Obj, old: Obj) -> Causes:
    return validate_object_meta_update(new, old) + validate_api_service(new)


def validate_api_service_status(obj: Obj) -> Causes:
    errs: Causes = []
    status = get_dict(obj, "status", "", errs)
    path = child("status", "conditions")
    for _, cpath, condition in dicts(get_list(status, "conditions", "status", errs), path, errs):
        value = condition.get("status")
        if value not in CONDITION_STATUSES:
            errs.append(not_supported(child(cpath, "status"), value, CONDITION_STATUSES))
    return errs


def validate_api_service_status_update(new: Obj, old: Obj) -> Causes:
    return validate_object_meta_update(new, old) + validate_api_service_status(new)
