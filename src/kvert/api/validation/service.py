"""Service (``ValidateService``, ``ValidateServiceUpdate`` in pkg/apis/core/validation).

The common fields: name (a DNS-1035 label), ports (names, numbers, protocols, target ports,
duplicates), selector labels, type, session affinity, ExternalName, ``clusterIP``/
``clusterIPs`` syntax, and on update the ClusterIPs' immutability. Not checked:
load-balancer source ranges, external IPs, traffic policies, topology annotations, dual stack.
"""

from __future__ import annotations

import ipaddress
from typing import Any

from kvert.api.types import Obj

from . import names
from .common import (
    Causes,
    child,
    dicts,
    duplicate,
    forbidden,
    get_dict,
    get_list,
    get_str,
    index,
    invalid,
    not_supported,
    required,
    type_error,
)
from .meta import validate_object_meta, validate_object_meta_update

SERVICE_TYPES = ("ClusterIP", "ExternalName", "LoadBalancer", "NodePort")
PROTOCOLS = ("SCTP", "TCP", "UDP")
SESSION_AFFINITIES = ("ClientIP", "None")
_INVALID_IP = "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)"


def _headless(spec: Obj) -> bool:
    return spec.get("clusterIP") == "None"


def validate_service(svc: Obj) -> Causes:
    errs = validate_object_meta(svc, namespaced=True, name_fn=names.name_is_dns1035_label)
    spec = get_dict(svc, "spec", "", errs)
    svc_type = get_str(spec, "type", "spec", errs)
    ports = get_list(spec, "ports", "spec", errs)
    if not ports and not _headless(spec) and svc_type != "ExternalName":
        errs.append(required("spec.ports"))
    if svc_type == "ExternalName":
        if spec.get("clusterIPs"):
            errs.append(forbidden("spec.clusterIPs", "may not be set for ExternalName services"))
        cname = get_str(spec, "externalName", "spec", errs).removesuffix(".")
        if cname:
            errs.extend(names.validate_with(names.is_dns1123_subdomain, cname,
                                            "spec.externalName"))
        else:
            errs.append(required("spec.externalName"))
    seen_names: set[str] = set()
    for _, p, port in dicts(ports, "spec.ports", errs):
        errs.extend(_port(port, p, len(ports) > 1, seen_names))
    if "selector" in spec and spec["selector"] is not None:
        selector = get_dict(spec, "selector", "spec", errs)
        if all(isinstance(v, str) for v in selector.values()):
            errs.extend(names.validate_labels(selector, "spec.selector"))
        else:
            errs.append(type_error("spec.selector", selector, "map of strings"))
    affinity = get_str(spec, "sessionAffinity", "spec", errs)
    if not affinity:
        errs.append(required("spec.sessionAffinity"))
    elif affinity not in SESSION_AFFINITIES:
        errs.append(not_supported("spec.sessionAffinity", affinity, SESSION_AFFINITIES))
    errs.extend(_cluster_ips(spec))
    if not svc_type:
        errs.append(required("spec.type"))
    elif svc_type not in SERVICE_TYPES:
        errs.append(not_supported("spec.type", svc_type, SERVICE_TYPES))
    if svc_type == "ClusterIP":
        for _, p, port in dicts(ports, "spec.ports", []):
            if port.get("nodePort"):
                errs.append(forbidden(child(p, "nodePort"),
                                      "may not be used when `type` is 'ClusterIP'"))
    errs.extend(_duplicate_node_ports(ports))
    return errs


def _port(port: Obj, path: str, require_name: bool, seen: set[str]) -> Causes:
    """``validateServicePort``."""
    errs: Causes = []
    name = get_str(port, "name", path, errs)
    if require_name and not name:
        errs.append(required(child(path, "name")))
    elif name:
        errs.extend(names.validate_with(names.is_dns1123_label, name, child(path, "name")))
        if name in seen:
            errs.append(duplicate(child(path, "name"), name))
        seen.add(name)
    number = port.get("port")
    if not isinstance(number, int) or isinstance(number, bool):
        errs.append(type_error(child(path, "port"), number, "integer"))
    else:
        errs.extend(invalid(child(path, "port"), number, m) for m in names.is_valid_port_num(number))
    node_port = port.get("nodePort")
    if node_port is not None and (not isinstance(node_port, int) or isinstance(node_port, bool)):
        errs.append(type_error(child(path, "nodePort"), node_port, "integer"))
    protocol = get_str(port, "protocol", path, errs)
    if not protocol:
        errs.append(required(child(path, "protocol")))
    elif protocol not in PROTOCOLS:
        errs.append(not_supported(child(path, "protocol"), protocol, PROTOCOLS))
    errs.extend(validate_port_num_or_name(port.get("targetPort"), child(path, "targetPort")))
    return errs


def validate_port_num_or_name(value: object, path: str) -> Causes:
    """``ValidatePortNumOrName``."""
    if isinstance(value, bool):
        return [type_error(path, value, "integer or string")]
    if isinstance(value, int):
        return [invalid(path, value, m) for m in names.is_valid_port_num(value)]
    if isinstance(value, str):
        return [invalid(path, value, m) for m in names.is_valid_port_name(value)]
    return [type_error(path, value, "integer or string")]


def _cluster_ips(spec: Obj) -> Causes:
    """The syntax part of ``validateServiceClusterIPsRelatedFields``."""
    errs: Causes = []
    ips = spec.get("clusterIPs") or []
    if not isinstance(ips, list):
        return [type_error("spec.clusterIPs", ips, "array")]
    cluster_ip = spec.get("clusterIP") or ""
    if ips and cluster_ip and ips[0] != cluster_ip:
        errs.append(invalid("spec.clusterIPs", ips, "first value must match `clusterIP`"))
    for i, ip in enumerate(ips):
        path = index("spec.clusterIPs", i)
        if ip == "None":
            if i != 0 or len(ips) > 1:
                errs.append(invalid(path, ips, "'None' must be the first and only value"))
            continue
        if not isinstance(ip, str):
            errs.append(type_error(path, ip, "string"))
            continue
        try:
            ipaddress.ip_address(ip)
        except ValueError:
            errs.append(invalid(path, ip, _INVALID_IP))
    return errs


def _duplicate_node_ports(ports: list[Any]) -> Causes:
    errs: Causes = []
    seen: set[tuple[Any, ...]] = set()
    for _, p, port in dicts(ports, "spec.ports", []):
        node_port = port.get("nodePort")
        if not node_port:
            continue
        key = (port.get("protocol"), node_port)
        if key in seen:
            errs.append(duplicate(child(p, "nodePort"), node_port))
        seen.add(key)
    return errs


def validate_service_update(new: Obj, old: Obj) -> Causes:
    """``ValidateServiceUpdate``: the create rules plus the ClusterIPs' immutability
    (``validateServiceClusterIPsRelatedFields`` for an update)."""
    errs = validate_object_meta_update(new, old)
    errs.extend(c for c in validate_service(new) if not c.field.startswith("metadata"))
    spec, old_spec = new.get("spec"), old.get("spec")
    if not isinstance(spec, dict) or not isinstance(old_spec, dict):
        return errs
    if "ExternalName" in (spec.get("type"), old_spec.get("type")):
        return errs
    if _headless(spec) and _headless(old_spec):
        return errs
    ips, old_ips = spec.get("clusterIPs") or [], old_spec.get("clusterIPs") or []
    if not isinstance(ips, list) or not isinstance(old_ips, list):
        return errs
    if len(ips) == len(old_ips):
        errs.extend(invalid(index("spec.clusterIPs", i), ips, "may not change once set")
                    for i, ip in enumerate(old_ips) if ip != ips[i])
    elif len(ips) < len(old_ips):
        if not ips:
            errs.append(invalid(index("spec.clusterIPs", 0), ips,
                                "primary clusterIP can not be unset"))
        elif ips[0] != old_ips[0]:
            errs.append(invalid(index("spec.clusterIPs", 0), ips, "may not change once set"))
    elif old_ips and ips[0] != old_ips[0]:
        errs.append(invalid(index("spec.clusterIPs", 0), ips, "may not change once set"))
    return errs
