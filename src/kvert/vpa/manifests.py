"""Everything a cluster needs to run kvert's VPA, as upstream VPA 1.8's ``deploy/`` directory
gives it (``kvert vpa manifests``): the VerticalPodAutoscaler and VerticalPodAutoscalerCheckpoint
CRDs, RBAC (:mod:`kvert.vpa.rbac`), the ServiceAccounts, the Deployments ``vpa-recommender``,
``vpa-updater`` and ``vpa-admission-controller`` running the kvert image (entrypoint ``kvert``,
``args: [vpa, recommender, ...]``) with upstream's labels, resources, ports, probes and
security context, and the webhook Service ``vpa-webhook`` (443 -> 8000).

The admission controller's certificates: by default none are mounted, so the controller makes
a self-signed CA and a serving certificate for ``vpa-webhook.NAMESPACE.svc`` when it starts
and registers the webhook with that CA. With ``tls_secret`` the Deployment mounts that Secret
(upstream's ``gencerts.sh`` keys ``caCert.pem``, ``serverCert.pem``, ``serverKey.pem``) at
``/etc/tls-certs`` and runs with upstream's ``--client-ca-file``, ``--tls-cert-file``,
``--tls-private-key`` and ``--reload-cert``.

The CRDs are given by the caller (kvert's own definitions, ``kvert.apiserver.crds.vpa_crds``:
a component does not import another).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import yaml

import kvert
from kvert.api.meta import deep_copy
from kvert.vpa.features import VpaGates
from kvert.vpa.rbac import ACCOUNTS, ADMISSION_CONTROLLER, COMPONENTS, RECOMMENDER, UPDATER, rbac_objects

DEFAULT_NAMESPACE = "kube-system"
TLS_MOUNT = "/etc/tls-certs"
WEBHOOK_SERVICE = "vpa-webhook"
WEBHOOK_PORT = 8000
NOBODY = 65534


def default_image() -> str:
    """``IMAGE_REPOSITORY:VERSION``; a local version's ``+`` is no tag character."""
    return f"{kvert.IMAGE_REPOSITORY}:{kvert.__version__.replace('+', '-')}"


@dataclass(frozen=True)
class ManifestOptions:
    namespace: str = DEFAULT_NAMESPACE
    image: str = field(default_factory=default_image)
    components: tuple[str, ...] = COMPONENTS
    tls_secret: str | None = None
    feature_gates: str = ""

    def __post_init__(self) -> None:
        unknown = [c for c in self.components if c not in COMPONENTS]
        if unknown or not self.components:
            raise ValueError(f"unknown component {', '.join(unknown) or '(none)'}: want some of "
                             f"{', '.join(COMPONENTS)}")
        VpaGates.parse(self.feature_gates)       # FeatureGateError (a ValueError) names a bad one


# upstream's deploy/*-deployment.yaml, per component
_CONTAINER = {RECOMMENDER: "recommender", UPDATER: "updater", ADMISSION_CONTROLLER: "admission-controller"}
_PROMETHEUS_PORT = {RECOMMENDER: 8942, UPDATER: 8943, ADMISSION_CONTROLLER: 8944}
_RESOURCES = {
    RECOMMENDER: {"limits": {"cpu": "200m", "memory": "1000Mi"}, "requests": {"cpu": "50m", "memory": "500Mi"}},
    UPDATER: {"limits": {"cpu": "200m", "memory": "1000Mi"}, "requests": {"cpu": "50m", "memory": "500Mi"}},
    ADMISSION_CONTROLLER: {"limits": {"cpu": "200m", "memory": "500Mi"}, "requests": {"cpu": "50m", "memory": "200Mi"}},
}
# only the recommender's pods carry the app.kubernetes.io labels upstream
_EXTRA_LABELS = {RECOMMENDER: {"app.kubernetes.io/component": "recommender",
                               "app.kubernetes.io/name": "vertical-pod-autoscaler"}}
_NAMESPACE_ENV = (UPDATER, ADMISSION_CONTROLLER)


def _probe(liveness: bool) -> dict[str, Any]:
    probe: dict[str, Any] = {"httpGet": {"path": "/health-check", "port": "prometheus", "scheme": "HTTP"}}
    if liveness:
        probe["initialDelaySeconds"] = 5
    probe.update({"periodSeconds": 10, "failureThreshold": 3})
    return probe


def component_args(component: str, options: ManifestOptions) -> list[str]:
    """The container's arguments to ``kvert``."""
    args = ["vpa", component]
    if component == ADMISSION_CONTROLLER and options.tls_secret:
        args += [f"--client-ca-file={TLS_MOUNT}/caCert.pem", f"--tls-cert-file={TLS_MOUNT}/serverCert.pem",
                 f"--tls-private-key={TLS_MOUNT}/serverKey.pem", "--reload-cert"]
    if component == UPDATER and ADMISSION_CONTROLLER not in options.components:
        # no admission controller renews the status Lease the updater waits for by default
        args.append("--use-admission-controller-status=false")
    if options.feature_gates:
        args.append(f"--feature-gates={options.feature_gates}")
    return args


def deployment(component: str, options: ManifestOptions) -> dict[str, Any]:
    name = ACCOUNTS[component]
    container: dict[str, Any] = {"name": _CONTAINER[component], "image": options.image,
                                 "imagePullPolicy": "IfNotPresent"}
    if component in _NAMESPACE_ENV:
        container["env"] = [{"name": "NAMESPACE", "valueFrom": {"fieldRef": {"fieldPath": "metadata.namespace"}}}]
    container["args"] = component_args(component, options)
    if component == ADMISSION_CONTROLLER and options.tls_secret:
        container["volumeMounts"] = [{"name": "tls-certs", "mountPath": TLS_MOUNT, "readOnly": True}]
    container["resources"] = deep_copy(_RESOURCES[component])
    ports: list[dict[str, Any]] = []
    if component == ADMISSION_CONTROLLER:
        ports.append({"containerPort": WEBHOOK_PORT})
    ports.append({"name": "prometheus", "containerPort": _PROMETHEUS_PORT[component]})
    container["ports"] = ports
    container["livenessProbe"] = _probe(True)
    container["readinessProbe"] = _probe(False)
    pod_spec: dict[str, Any] = {"serviceAccountName": name,
                                "securityContext": {"runAsNonRoot": True, "runAsUser": NOBODY},
                                "containers": [container]}
    if component == ADMISSION_CONTROLLER and options.tls_secret:
        pod_spec["volumes"] = [{"name": "tls-certs", "secret": {"secretName": options.tls_secret}}]
    return {
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": name, "namespace": options.namespace},
        "spec": {"replicas": 1, "selector": {"matchLabels": {"app": name}},
                 "template": {"metadata": {"labels": {"app": name, **_EXTRA_LABELS.get(component, {})}},
                              "spec": pod_spec}},
    }


def webhook_service(namespace: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Service", "metadata": {"name": WEBHOOK_SERVICE, "namespace": namespace},
            "spec": {"ports": [{"port": 443, "targetPort": WEBHOOK_PORT}],
                     "selector": {"app": ACCOUNTS[ADMISSION_CONTROLLER]}}}


def service_accounts(namespace: str, components: Iterable[str]) -> list[dict[str, Any]]:
    return [{"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": ACCOUNTS[c], "namespace": namespace}}
            for c in COMPONENTS if c in set(components)]


def manifests(options: ManifestOptions, crds: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every object, in an order ``kubectl apply`` can create them in: the namespace (unless
    kube-system), the CRDs, accounts and RBAC, the webhook Service, the Deployments."""
    out: list[dict[str, Any]] = []
    if options.namespace != DEFAULT_NAMESPACE:
        out.append({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": options.namespace}})
    out += [_applicable_crd(c) for c in crds]
    out += service_accounts(options.namespace, options.components)
    out += rbac_objects(options.namespace, options.components)
    if ADMISSION_CONTROLLER in options.components:
        out.append(webhook_service(options.namespace))
    out += [deployment(c, options) for c in COMPONENTS if c in options.components]
    return out


def _applicable_crd(crd: dict[str, Any]) -> dict[str, Any]:
    """A CRD as a manifest holds it: no status or server-set metadata."""
    out = deep_copy(crd)
    out.pop("status", None)
    meta = out.get("metadata") or {}
    out["metadata"] = {k: v for k, v in meta.items() if k in ("name", "labels", "annotations")}
    return out


class _Dumper(yaml.SafeDumper):
    """Block style throughout; list items indented under their key, as kubectl writes them."""

    def increase_indent(self, flow: bool = False, indentless: bool = False) -> None:
        super().increase_indent(flow, False)


def to_yaml(objects: Iterable[dict[str, Any]], header: str = "") -> str:
    """A multi-document YAML stream (``kubectl apply -f -``)."""
    body = yaml.dump_all(list(objects), Dumper=_Dumper, sort_keys=False, default_flow_style=False,
                         explicit_start=True, width=100)
    return (f"# {header}\n" if header else "") + body


__all__ = ["DEFAULT_NAMESPACE", "ManifestOptions", "TLS_MOUNT", "WEBHOOK_SERVICE", "component_args",
           "default_image", "deployment", "manifests", "service_accounts", "to_yaml", "webhook_service"]
