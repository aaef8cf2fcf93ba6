"""Endpoints (``ValidateEndpoints``) and discovery.k8s.io EndpointSlice
(``pkg/apis/discovery/validation``): addresses, ports, address type; the common checks,
not the restricted-address ones (loopback, link-local) or topology.
"""

from __future__ import annotations

import ipaddress

from kvert.api.types import Obj

from . import names
from .common import (
    Causes,
    child,
    dicts,
    duplicate,
    get_dict,
    get_list,
    get_str,
    immutable,
    index,
    invalid,
    not_supported,
    required,
    too_many,
    type_error,
)
from .meta import validate_object_meta, validate_object_meta_update

PROTOCOLS = ("SCTP", "TCP", "UDP")
ADDRESS_TYPES = ("FQDN", "IPv4", "IPv6")
_INVALID_IP = "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)"
MAX_ENDPOINTS = 1000
MAX_PORTS = 100


def _ip_problem(value: str, family: str = "") -> str:
    try:
        address = ipaddress.ip_address(value)
    except ValueError:
        return _INVALID_IP
    if family == "IPv4" and address.version != 4:
        return "must be a valid IPv4 address"
    if family == "IPv6" and address.version != 6:
        return "must be a valid IPv6 address"
    return ""


def _protocol(port: Obj, path: str) -> Causes:
    protocol = port.get("protocol")
    if protocol in (None, ""):
        return [required(child(path, "protocol"))]
    if protocol not in PROTOCOLS:
        return [not_supported(child(path, "protocol"), protocol, PROTOCOLS)]
    return []


def _port_number(port: Obj, path: str, *, optional: bool = False) -> Causes:
    number = port.get("port")
    if number is None and optional:
        return []
    if not isinstance(number, int) or isinstance(number, bool):
        return [type_error(child(path, "port"), number, "integer")]
    return [invalid(child(path, "port"), number, m) for m in names.is_valid_port_num(number)]


def validate_endpoints(ep: Obj) -> Causes:
    errs = validate_object_meta(ep, namespaced=True)
    for _, path, subset in dicts(get_list(ep, "subsets", "", errs), "subsets", errs):
        for field in ("addresses", "notReadyAddresses"):
            for _, apath, address in dicts(get_list(subset, field, path, errs),
                                           child(path, field), errs):
                ip = get_str(address, "ip", apath, errs)
                problem = _ip_problem(ip)
                if problem:
                    errs.append(invalid(child(apath, "ip"), ip, problem))
        ports = get_list(subset, "ports", path, errs)
        for _, ppath, port in dicts(ports, child(path, "ports"), errs):
            name = get_str(port, "name", ppath, errs)
            if len(ports) > 1 and not name:
                errs.append(required(child(ppath, "name")))
            elif name:
                errs.extend(names.validate_with(names.is_dns1123_label, name, child(ppath, "name")))
            errs.extend(_port_number(port, ppath))
            errs.extend(_protocol(port, ppath))
    return errs


def validate_endpoints_update(new: Obj, old: Obj) -> Causes:
    errs = validate_object_meta_update(new, old)
    errs.extend(c for c in validate_endpoints(new) if not c.field.startswith("metadata"))
    return errs


def validate_endpoint_slice(es: Obj) -> Causes:
    errs = validate_object_meta(es, namespaced=True)
    address_type = es.get("addressType")
    if address_type in (None, ""):
        errs.append(required("addressType"))
    elif address_type not in ADDRESS_TYPES:
        errs.append(not_supported("addressType", address_type, ADDRESS_TYPES))
    endpoints = get_list(es, "endpoints", "", errs)
    if len(endpoints) > MAX_ENDPOINTS:
        errs.append(too_many("endpoints", len(endpoints), MAX_ENDPOINTS))
    for _, path, endpoint in dicts(endpoints, "endpoints", errs):
        addresses = get_list(endpoint, "addresses", path, errs)
        if not addresses:
            errs.append(required(child(path, "addresses"), "must contain at least 1 address"))
        for j, address in enumerate(addresses):
            apath = index(child(path, "addresses"), j)
            if not isinstance(address, str):
                errs.append(type_error(apath, address, "string"))
            elif address_type == "FQDN":
                errs.extend(names.validate_with(names.is_dns1123_subdomain, address, apath))
            elif address_type in ("IPv4", "IPv6"):
                problem = _ip_problem(address, address_type)
                if problem:
                    errs.append(invalid(apath, address, problem))
        node = endpoint.get("nodeName")
        if node:
            errs.extend(names.validate_with(names.name_is_dns_subdomain, node,
                                            child(path, "nodeName")))
        get_dict(endpoint, "conditions", path, errs)
    ports = get_list(es, "ports", "", errs)
    if len(ports) > MAX_PORTS:
        errs.append(too_many("ports", len(ports), MAX_PORTS))
    seen: set[str] = set()
    for _, path, port in dicts(ports, "ports", errs):
        name = port.get("name") or ""
        if name:
            errs.extend(names.validate_with(names.is_dns1123_label, name, child(path, "name")))
        if name in seen:
            errs.append(duplicate(child(path, "name"), name))
        seen.add(name)
        errs.extend(_port_number(port, path, optional=True))
        if port.get("protocol") is not None:
            errs.extend(_protocol(port, path))
    return errs


def validate_endpoint_slice_update(new: Obj, old: Obj) -> Causes:
    errs = validate_object_meta_update(new, old)
    errs.extend(c for c in validate_endpoint_slice(new) if not c.field.startswith("metadata"))
    if new.get("addressType") != old.get("addressType"):
        errs.append(immutable("addressType", new.get("addressType")))
    return errs
