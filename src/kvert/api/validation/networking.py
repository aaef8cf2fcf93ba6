"""networking.k8s.io/v1 Ingress, IngressClass and NetworkPolicy (``pkg/apis/networking/
validation``): rules, hosts, paths and backends of an ingress, the controller of a class, the
selectors, ports and IP blocks of a policy. Not checked: the ``kubernetes.io/ingress.class``
annotation next to ``ingressClassName``, an ingress' status addresses.
"""

from __future__ import annotations

import ipaddress

from kvert.api import names as name_rules
from kvert.api.types import Obj

from . import names
from .common import (
    Causes,
    child,
    dicts,
    forbidden,
    get_dict,
    get_int,
    get_list,
    get_str,
    immutable,
    index,
    invalid,
    not_supported,
    required,
    too_long,
    type_error,
)
from .meta import validate_label_selector, validate_object_meta, validate_object_meta_update
from .node import parse_cidr

PATH_TYPES = ("Exact", "ImplementationSpecific", "Prefix")
PROTOCOLS = ("SCTP", "TCP", "UDP")
POLICY_TYPES = ("Ingress", "Egress")
_INVALID_PATH_SEQUENCES = ("//", "/./", "/../", "%2f", "%2F")
_INVALID_PATH_SUFFIXES = ("/..", "/.")
_CIDR_MSG = "must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)"
_MAX_CONTROLLER_LENGTH = 250
_WILDCARD_MSG = ("a wildcard DNS-1123 subdomain must start with '*.', followed by a valid "
                 "DNS subdomain, which must consist of lower case alphanumeric characters, '-' "
                 "or '.' and end with an alphanumeric character (e.g. '*.example.com', regex "
                 "used for validation is '\\*\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]"
                 "([-a-z0-9]*[a-z0-9])?)*')")


# -- Ingress ----------------------------------------------------------------------------------

def _host_problems(host: str) -> list[str]:
    """A rule's or TLS entry's host: a DNS subdomain, or ``*.`` and one (IsWildcardDNS1123Subdomain)."""
    if "*" not in host:
        return name_rules.is_dns1123_subdomain(host)
    if not host.startswith("*.") or "*" in host[2:] or name_rules.is_dns1123_subdomain(host[2:]):
        return [_WILDCARD_MSG]
    return []


def _validate_host(host: str, path: str) -> Causes:
    errs: Causes = []
    try:
        ipaddress.ip_address(host)
        errs.append(invalid(path, host, "must be a DNS name, not an IP address"))
    except ValueError:
        pass
    errs.extend(invalid(path, host, msg) for msg in _host_problems(host))
    return errs


def _validate_backend(backend: Obj, path: str) -> Causes:
    errs: Causes = []
    service = backend.get("service")
    resource = backend.get("resource")
    if service is not None and resource is not None:
        return [invalid(path, "", "cannot set both resource and service backends")]
    if resource is not None:
        resource = get_dict(backend, "resource", path, errs)
        rpath = child(path, "resource")
        for field in ("kind", "name"):
            if not get_str(resource, field, rpath, errs):
                errs.append(required(child(rpath, field), ""))
        return errs
    if service is None:
        return [invalid(path, "", "resource or service backend is required")]
    service = get_dict(backend, "service", path, errs)
    spath = child(path, "service")
    name = get_str(service, "name", spath, errs)
    if not name:
        errs.append(required(child(spath, "name"), ""))
    else:
        errs.extend(invalid(child(spath, "name"), name, msg)
                    for msg in name_rules.name_is_dns1035_label(name))
    port = get_dict(service, "port", spath, errs)
    ppath = child(spath, "port")
    port_name = get_str(port, "name", ppath, errs)
    number = get_int(port, "number", ppath, errs, bits=32) or 0
    if port_name and number:
        errs.append(invalid(path, "", "cannot set both port name & port number"))
    elif port_name:
        errs.extend(invalid(child(ppath, "name"), port_name, msg)
                    for msg in name_rules.is_valid_port_name(port_name))
    elif number:
        errs.extend(invalid(child(ppath, "number"), number, msg)
                    for msg in name_rules.is_valid_port_num(number))
    else:
        errs.append(required(path, "port name or number is required"))
    return errs


def _validate_path(http_path: Obj, path: str) -> Causes:
    errs: Causes = []
    path_type = get_str(http_path, "pathType", path, errs)
    value = get_str(http_path, "path", path, errs)
    vpath = child(path, "path")
    if not path_type:
        return errs + [required(child(path, "pathType"), "pathType must be specified")]
    if path_type in ("Exact", "Prefix"):
        if not value.startswith("/"):
            errs.append(invalid(vpath, value, "must be an absolute path"))
        errs.extend(invalid(vpath, value, f"must not contain '{seq}'")
                    for seq in _INVALID_PATH_SEQUENCES if seq in value)
        errs.extend(invalid(vpath, value, f"cannot end with '{suffix}'")
                    for suffix in _INVALID_PATH_SUFFIXES if value.endswith(suffix))
    elif path_type == "ImplementationSpecific":
        if value and not value.startswith("/"):
            errs.append(invalid(vpath, value, "must be an absolute path"))
    else:
        errs.append(not_supported(child(path, "pathType"), path_type, PATH_TYPES))
    backend = get_dict(http_path, "backend", path, errs)
    return errs + _validate_backend(backend, child(path, "backend"))


def _validate_rules(spec: Obj, errs: Causes) -> None:
    for _, rpath, rule in dicts(get_list(spec, "rules", "spec", errs), "spec.rules", errs):
        host = get_str(rule, "host", rpath, errs)
        if host:
            errs.extend(_validate_host(host, child(rpath, "host")))
        if rule.get("http") is None:
            continue
        http = get_dict(rule, "http", rpath, errs)
        hpath = child(rpath, "http")
        paths = get_list(http, "paths", hpath, errs)
        if not paths:
            errs.append(required(child(hpath, "paths"), ""))
        for _, ppath, http_path in dicts(paths, child(hpath, "paths"), errs):
            errs.extend(_validate_path(http_path, ppath))


def validate_ingress(ing: Obj) -> Causes:
    errs = validate_object_meta(ing, namespaced=True)
    spec = get_dict(ing, "spec", "", errs)
    if not get_list(spec, "rules", "spec", []) and spec.get("defaultBackend") is None:
        errs.append(invalid("spec", spec.get("rules"),
                            "either `defaultBackend` or `rules` must be specified"))
    if spec.get("defaultBackend") is not None:
        errs.extend(_validate_backend(get_dict(spec, "defaultBackend", "spec", errs),
                                      "spec.defaultBackend"))
    _validate_rules(spec, errs)
    for _, tpath, tls in dicts(get_list(spec, "tls", "spec", errs), "spec.tls", errs):
        hosts = get_list(tls, "hosts", tpath, errs)
        for j, host in enumerate(hosts):
            hpath = index(child(tpath, "hosts"), j)
            if not isinstance(host, str):
                errs.append(type_error(hpath, host, "string"))
            else:
                errs.extend(invalid(hpath, host, msg) for msg in _host_problems(host))
    class_name = spec.get("ingressClassName")
    if class_name is not None:
        class_name = get_str(spec, "ingressClassName", "spec", errs)
        errs.extend(names.validate_with(name_rules.name_is_dns_subdomain, class_name,
                                        "spec.ingressClassName"))
    return errs


def validate_ingress_update(new: Obj, old: Obj) -> Causes:
    return validate_object_meta_update(new, old) + [
        c for c in validate_ingress(new) if not c.field.startswith("metadata")]


# -- IngressClass -----------------------------------------------------------------------------

def _domain_prefixed_path(value: str, path: str) -> Causes:
    """IsDomainPrefixedPath: ``host/path`` with a DNS subdomain host."""
    if not value:
        return [required(path, "")]
    host, slash, _ = value.partition("/")
    if not slash:
        return [invalid(path, value, 'must be a domain-prefixed path (such as "acme.io/foo")')]
    return [invalid(path, host, msg) for msg in name_rules.is_dns1123_subdomain(host)]


def validate_ingress_class(ic: Obj) -> Causes:
    errs = validate_object_meta(ic, namespaced=False)
    spec = get_dict(ic, "spec", "", errs)
    controller = get_str(spec, "controller", "spec", errs)
    if len(controller) > _MAX_CONTROLLER_LENGTH:
        errs.append(too_long("spec.controller", _MAX_CONTROLLER_LENGTH))
    errs.extend(_domain_prefixed_path(controller, "spec.controller"))
    if spec.get("parameters") is not None:
        params = get_dict(spec, "parameters", "spec", errs)
        ppath = "spec.parameters"
        for field in ("kind", "name"):
            if not get_str(params, field, ppath, errs):
                errs.append(required(child(ppath, field), ""))
        scope = params.get("scope")
        if scope is not None and scope not in ("Cluster", "Namespace"):
            errs.append(not_supported(child(ppath, "scope"), scope, ("Cluster", "Namespace")))
        elif scope == "Namespace" and not params.get("namespace"):
            errs.append(required(child(ppath, "namespace"),
                                 "`parameters.scope` is set to 'Namespace'"))
        elif scope != "Namespace" and params.get("namespace"):
            errs.append(forbidden(child(ppath, "namespace"),
                                  "`parameters.scope` is set to 'Cluster'"))
    return errs


def validate_ingress_class_update(new: Obj, old: Obj) -> Causes:
    errs = validate_object_meta_update(new, old) + [
        c for c in validate_ingress_class(new) if not c.field.startswith("metadata")]
    controller = (new.get("spec") or {}).get("controller")
    if controller != (old.get("spec") or {}).get("controller"):
        errs.append(immutable("spec.controller", controller))
    return errs


# -- NetworkPolicy ----------------------------------------------------------------------------

def _validate_port(port: Obj, path: str) -> Causes:
    errs: Causes = []
    protocol = port.get("protocol")
    if protocol is not None and protocol not in PROTOCOLS:
        errs.append(not_supported(child(path, "protocol"), protocol, PROTOCOLS))
    number = port.get("port")
    end = get_int(port, "endPort", path, errs, bits=32)
    end_path = child(path, "endPort")
    if number is None:
        if end is not None:
            errs.append(invalid(end_path, end, "may not be specified when `port` is not specified"))
    elif isinstance(number, int) and not isinstance(number, bool):
        errs.extend(invalid(child(path, "port"), number, msg)
                    for msg in name_rules.is_valid_port_num(number))
        if end is not None:
            if end < number:
                errs.append(invalid(end_path, number, "must be greater than or equal to `port`"))
            errs.extend(invalid(end_path, end, msg) for msg in name_rules.is_valid_port_num(end))
    elif isinstance(number, str):
        if end is not None:
            errs.append(invalid(end_path, end, "may not be specified when `port` is non-numeric"))
        errs.extend(invalid(child(path, "port"), number, msg)
                    for msg in name_rules.is_valid_port_name(number))
    else:
        errs.append(type_error(child(path, "port"), number, "integer or string"))
    return errs


def _validate_ip_block(block: Obj, path: str) -> Causes:
    cidr = block.get("cidr")
    if not cidr:
        return [required(child(path, "cidr"), "")]
    network = parse_cidr(cidr)
    if network is None:
        return [invalid(child(path, "cidr"), cidr, _CIDR_MSG)]
    errs: Causes = []
    for j, text in enumerate(get_list(block, "except", path, errs)):
        epath = index(child(path, "except"), j)
        excepted = parse_cidr(text)
        if excepted is None:
            errs.append(invalid(epath, text, _CIDR_MSG))
        elif (excepted.version != network.version or excepted.network_address not in network
              or network.prefixlen >= excepted.prefixlen):
            errs.append(invalid(epath, text, "must be a strict subset of `cidr`"))
    return errs


def _validate_peer(peer: Obj, path: str) -> Causes:
    errs: Causes = []
    given = [f for f in ("podSelector", "namespaceSelector", "ipBlock") if peer.get(f) is not None]
    for field in ("podSelector", "namespaceSelector"):
        if field in given:
            errs.extend(validate_label_selector(peer[field], child(path, field)))
    if "ipBlock" in given:
        errs.extend(_validate_ip_block(get_dict(peer, "ipBlock", path, errs), child(path, "ipBlock")))
    if not given:
        errs.append(required(path, "must specify a peer"))
    elif len(given) > 1 and "ipBlock" in given:
        errs.append(forbidden(path, "may not specify both ipBlock and another peer"))
    return errs


def validate_network_policy(np: Obj) -> Causes:
    errs = validate_object_meta(np, namespaced=True)
    spec = get_dict(np, "spec", "", errs)
    errs.extend(validate_label_selector(spec.get("podSelector"), "spec.podSelector"))
    for direction, peers in (("ingress", "from"), ("egress", "to")):
        for _, rpath, rule in dicts(get_list(spec, direction, "spec", errs), f"spec.{direction}",
                                    errs):
            for _, ppath, port in dicts(get_list(rule, "ports", rpath, errs),
                                        child(rpath, "ports"), errs):
                errs.extend(_validate_port(port, ppath))
            for _, ppath, peer in dicts(get_list(rule, peers, rpath, errs),
                                        child(rpath, peers), errs):
                errs.extend(_validate_peer(peer, ppath))
    types = get_list(spec, "policyTypes", "spec", errs)
    if len(types) > len(POLICY_TYPES):
        errs.append(invalid("spec.policyTypes", types, "may not specify more than two policyTypes"))
        return errs
    for i, policy_type in enumerate(types):
        if policy_type not in POLICY_TYPES:
            errs.append(not_supported(index("spec.policyTypes", i), policy_type, POLICY_TYPES))
    return errs


def validate_network_policy_update(new: Obj, old: Obj) -> Causes:
    return validate_object_meta_update(new, old) + [
        c for c in validate_network_policy(new) if not c.field.startswith("metadata")]
