"""Columns (descriptions: the fields' API docs, as upstream's column definitions take them)
and rows of networking.k8s.io Ingresses, IngressClasses and NetworkPolicies, after
``printIngress`` (``formatHosts``, ``ingressLoadBalancerStatusStringer``), ``printIngressClass``
and ``printNetworkPolicy``.
"""

from __future__ import annotations

from typing import Any

from .builtin import RowFunc, _age, _l, _m, _name, _s, age_col, col, format_label_selector, name_col

# the ADDRESS column of a narrow listing clips longer load balancer lists
_LOAD_BALANCER_WIDTH = 16

INGRESS_COLUMNS = [
    name_col(),
    col("Class", "string", "The name of the IngressClass resource this ingress uses."),
    col("Hosts", "string", "Hosts that incoming requests are mapped to."),
    col("Address", "string", "Address is a list containing ingress points for the load-balancer"),
    col("Ports", "string", "Ports of TLS configurations that open"),
    age_col(),
]

INGRESS_CLASS_COLUMNS = [
    name_col(),
    col("Controller", "string", "Controller that is responsible for handling this class"),
    col("Parameters", "string", "A reference to a resource with additional parameters"),
    age_col(),
]

NETWORK_POLICY_COLUMNS = [
    name_col(),
    col("Pod-Selector", "string", "podSelector selects the pods to which this NetworkPolicy object "
        "applies. The array of rules is applied to any pods selected by this field. An empty "
        "selector matches all pods in the policy's namespace. Multiple network policies can select "
        "the same set of pods. In this case, the ingress rules for each are combined additively. "
        "This field is optional. If it is not specified, it defaults to an empty selector."),
    age_col(),
]


def _hosts(rules: list) -> str:
    """formatHosts: at most three hosts, ``*`` when no rule names one."""
    hosts = [_s(_m(r).get("host")) for r in rules if _m(r).get("host")]
    if not hosts:
        return "*"
    text = ",".join(hosts[:3])
    return f"{text} + {len(hosts) - 3} more..." if len(hosts) > 3 else text


def _load_balancer(status: dict, wide: bool) -> str:
    """ingressLoadBalancerStatusStringer: IPs or hostnames in order, clipped unless wide."""
    found = []
    for point in _l(_m(status.get("loadBalancer")).get("ingress")):
        point = _m(point)
        if point.get("ip"):
            found.append(_s(point["ip"]))
        elif point.get("hostname"):
            found.append(_s(point["hostname"]))
    text = ",".join(found)
    if not wide and len(text) > _LOAD_BALANCER_WIDTH:
        return text[:_LOAD_BALANCER_WIDTH - 3] + "..."
    return text


def ingress_row(ing: dict, now: int) -> list[Any]:
    spec = _m(ing.get("spec"))
    return [_name(ing), _s(spec.get("ingressClassName")) or "<none>", _hosts(_l(spec.get("rules"))),
            _load_balancer(_m(ing.get("status")), False),
            "80, 443" if _l(spec.get("tls")) else "80", _age(ing, now)]


def ingress_class_row(ic: dict, now: int) -> list[Any]:
    spec = _m(ic.get("spec"))
    parameters = "<none>"
    ref = spec.get("parameters")
    if isinstance(ref, dict):
        kind = _s(ref.get("kind"))
        if ref.get("apiGroup") is not None:
            kind = f"{kind}.{_s(ref['apiGroup'])}"
        parameters = f"{kind}/{_s(ref.get('name'))}"
    return [_name(ic), _s(spec.get("controller")), parameters, _age(ic, now)]


def network_policy_row(np: dict, now: int) -> list[Any]:
    return [_name(np), format_label_selector(_m(np.get("spec")).get("podSelector")),
            _age(np, now)]


def _rows(fn) -> RowFunc:
    return lambda obj, now: (fn(obj, now), None)


PRINTERS = {
    ("networking.k8s.io", "Ingress"): (INGRESS_COLUMNS, _rows(ingress_row)),
    ("networking.k8s.io", "IngressClass"): (INGRESS_CLASS_COLUMNS, _rows(ingress_class_row)),
    ("networking.k8s.io", "NetworkPolicy"): (NETWORK_POLICY_COLUMNS, _rows(network_policy_row)),
}
