"""Pod and pod-template validation: a port of the Pod parts of ``pkg/apis/core/validation``.

Entry points: :func:`validate_pod` (create), :func:`validate_pod_update`,
:func:`validate_pod_status_update`, and :func:`validate_pod_template_spec` (the template of a
Deployment/ReplicaSet, with ``is_pod=False``). The resize subresource lives in ``resize.py``.

Callers hand in *defaulted* objects (``validation.validate`` defaults a copy first); the
checks still read an absent defaulted field (``restartPolicy``, ``dnsPolicy``,
``imagePullPolicy``, ``terminationMessagePolicy``, port ``protocol``) as its default.

Where kvert is stricter or looser than Kubernetes (documented in the package docstring):
``Gt``/``Lt`` node-affinity values must be integers; a sidecar (init container with
``restartPolicy: Always``) may use ``RestartContainer`` in its ``resizePolicy`` even when the
pod's ``restartPolicy`` is ``Never``; the seed's resize policy names ``RestartNotRequired`` /
``Restart`` are rejected with a hint to today's ``NotRequired`` / ``RestartContainer``.
"""

from __future__ import annotations

import ipaddress
from functools import lru_cache
from typing import Any

from kvert.api import podlevel
from kvert.api.errors import Cause
from kvert.api.quantity import Quantity, QuantityError, to_int
from kvert.api.selectors import parse_int64
from kvert.api.types import Obj

from . import names
from .common import (
    IS_NEGATIVE_MSG,
    IS_NOT_POSITIVE_MSG,
    MAX_INT32,
    Causes,
    child,
    dict_field,
    dicts,
    duplicate,
    forbidden,
    get_bool,
    get_dict,
    get_int,
    get_list,
    get_str,
    get_str_map,
    immutable,
    index,
    invalid,
    key,
    list_field,
    nonnegative,
    not_found,
    not_supported,
    required,
    show,
    type_error,
)
from .diff import describe_diff, normalized
from .meta import validate_label_selector, validate_object_meta, validate_object_meta_update
from .resourcelist import (
    RESIZABLE_RESOURCES,
    parse_resource_list,
    validate_resource_name,
    validate_resource_requirements,
)
from .workload import validate_workload_reference

RESTART_POLICIES = ("Always", "OnFailure", "Never")
DNS_POLICIES = ("ClusterFirstWithHostNet", "ClusterFirst", "Default", "None")
PULL_POLICIES = ("Always", "IfNotPresent", "Never")
TERMINATION_MESSAGE_POLICIES = ("File", "FallbackToLogsOnError")
PROTOCOLS = ("SCTP", "TCP", "UDP")
TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")
TOLERATION_OPERATORS = ("Equal", "Exists")
PREEMPTION_POLICIES = ("PreemptLowerPriority", "Never")
RESIZE_POLICIES = ("NotRequired", "RestartContainer")
# The seed's (KEP 1287 alpha) spellings, renamed before the feature shipped.
LEGACY_RESIZE_POLICIES = {"RestartNotRequired": "NotRequired", "Restart": "RestartContainer"}
WHEN_UNSATISFIABLE = ("DoNotSchedule", "ScheduleAnyway")
NODE_INCLUSION_POLICIES = ("Honor", "Ignore")
OS_NAMES = ("linux", "windows")
URI_SCHEMES = ("HTTP", "HTTPS")
SYSTEM_POD_CONDITIONS = ("PodScheduled", "Ready", "Initialized")
MIRROR_POD_ANNOTATION = "kubernetes.io/config.mirror"
MAX_DNS_NAMESERVERS = 3
MAX_DNS_SEARCH_PATHS = 32
MAX_DNS_SEARCH_LIST_CHARS = 2048

_ENV_FIELD_PATHS = ("metadata.name", "metadata.namespace", "metadata.uid", "spec.nodeName",
                    "spec.serviceAccountName", "status.hostIP", "status.hostIPs", "status.podIP",
                    "status.podIPs")
_RESOURCE_FIELD_PATHS = ("limits.cpu", "limits.ephemeral-storage", "limits.memory", "requests.cpu",
                         "requests.ephemeral-storage", "requests.memory")


def is_sidecar(container: Any) -> bool:
    """An init container with ``restartPolicy: Always`` (a restartable init container)."""
    return isinstance(container, dict) and container.get("restartPolicy") == "Always"


# -- pods -------------------------------------------------------------------------------------

def validate_pod(pod: Obj) -> Causes:
    """``ValidatePodCreate``."""
    errs = validate_pod_metadata_and_spec(pod)
    spec = dict_field(pod, "spec")
    if spec.get("ephemeralContainers"):
        errs.append(forbidden("spec.ephemeralContainers", "cannot be set on create"))
    if spec.get("nodeName") and spec.get("schedulingGates"):
        errs.append(forbidden("spec.nodeName",
                              "cannot be set until all schedulingGates have been cleared"))
    return errs


def validate_pod_metadata_and_spec(pod: Obj, *, spec_checked: bool = False,
                                   stored_meta: Obj | None = None,
                                   old_spec: Obj | None = None) -> Causes:
    """``spec_checked``: the spec is known valid (an update leaving a stored spec as it was),
    so only the metadata and what ties it to the spec are checked. ``stored_meta``: the
    stored object's metadata, whose labels, annotations, owner references and finalizers
    left as they were are not checked again. ``old_spec``: the stored spec, for ratcheting."""
    errs = validate_object_meta(pod, namespaced=True, old=stored_meta)
    spec = get_dict(pod, "spec", "", errs)
    meta = dict_field(pod, "metadata")
    annotations = dict_field(meta, "annotations")
    if MIRROR_POD_ANNOTATION in annotations and not spec.get("nodeName"):
        errs.append(invalid(key("metadata.annotations", MIRROR_POD_ANNOTATION),
                            annotations[MIRROR_POD_ANNOTATION],
                            "must set spec.nodeName if mirror pod annotation is set"))
    if not spec_checked:
        name = meta.get("name") if isinstance(meta.get("name"), str) else ""
        errs.extend(validate_pod_spec(spec, "spec", is_pod=True, pod_name=name, old_spec=old_spec))
    return errs


def validate_pod_template_spec(template: Any, path: str) -> Causes:
    """``ValidatePodTemplateSpec``: template labels/annotations and the pod spec."""
    errs: Causes = []
    if template is None:
        return [required(path)]
    if not isinstance(template, dict):
        return [type_error(path, template, "object")]
    meta_path = child(path, "metadata")
    meta = get_dict(template, "metadata", path, errs)
    errs.extend(names.validate_labels(get_str_map(meta, "labels", meta_path, errs),
                                      child(meta_path, "labels")))
    errs.extend(names.validate_annotations(get_str_map(meta, "annotations", meta_path, errs),
                                           child(meta_path, "annotations")))
    spec = get_dict(template, "spec", path, errs)
    errs.extend(validate_pod_spec(spec, child(path, "spec"), is_pod=False))
    if spec.get("ephemeralContainers"):
        errs.append(forbidden(child(child(path, "spec"), "ephemeralContainers"),
                              "ephemeral containers not allowed in pod template"))
    return errs


def validate_pod_spec(spec: Obj, path: str, *, is_pod: bool, pod_name: str | None = None,
                      old_spec: Obj | None = None) -> Causes:
    """``ValidatePodSpec``; ``pod_name`` (pods, not templates) also checks the names of the
    ResourceClaims that templates will produce. ``old_spec``: the stored spec on an update,
    for the rules upstream ratchets (what the stored object already has stays allowed)."""
    errs: Causes = []
    restart_policy = get_str(spec, "restartPolicy", path, errs) or "Always"
    grace = get_int(spec, "terminationGracePeriodSeconds", path, errs)
    if grace is not None and grace < 0:
        errs.append(invalid(child(path, "terminationGracePeriodSeconds"), grace, IS_NEGATIVE_MSG))

    volumes = _validate_volumes(get_list(spec, "volumes", path, errs), child(path, "volumes"), errs)
    containers = get_list(spec, "containers", path, errs)
    init_containers = get_list(spec, "initContainers", path, errs)
    errs.extend(_validate_containers(containers, volumes, child(path, "containers"), restart_policy,
                                     is_pod))
    errs.extend(_validate_init_containers(
        init_containers, containers, volumes, child(path, "initContainers"), restart_policy, is_pod,
        allow_init_restart_container=init_restart_container_in_use(old_spec)))
    pod_claims = get_list(spec, "resourceClaims", path, errs)
    errs.extend(_validate_pod_resource_claims(pod_claims, child(path, "resourceClaims"), pod_name))
    claim_names = {name for c in pod_claims if isinstance(c, dict)
                   for name in (c.get("name"),) if isinstance(name, str) and name}
    for field, items in (("containers", containers), ("initContainers", init_containers)):
        for i, c in enumerate(items):
            resources = c.get("resources") if isinstance(c, dict) else None
            if isinstance(resources, dict) and isinstance(resources.get("claims"), list):
                errs.extend(_validate_container_claims(
                    resources["claims"], claim_names,
                    child(child(index(child(path, field), i), "resources"), "claims")))
    if spec.get("workloadRef") is not None:
        errs.extend(validate_workload_reference(spec["workloadRef"], child(path, "workloadRef")))
    ephemeral = get_list(spec, "ephemeralContainers", path, errs)
    if ephemeral:
        errs.extend(_validate_ephemeral_containers(ephemeral, containers + init_containers, volumes,
                                                   child(path, "ephemeralContainers"),
                                                   restart_policy, is_pod))
    if spec.get("resources") is not None:
        errs.extend(_validate_pod_level_resources(spec, child(path, "resources")))

    if restart_policy not in RESTART_POLICIES:
        errs.append(not_supported(child(path, "restartPolicy"), restart_policy, RESTART_POLICIES))
    dns_policy = get_str(spec, "dnsPolicy", path, errs) or "ClusterFirst"
    if dns_policy not in DNS_POLICIES:
        errs.append(not_supported(child(path, "dnsPolicy"), dns_policy, DNS_POLICIES))
    errs.extend(_validate_dns_config(spec, dns_policy, path))
    errs.extend(names.validate_labels(get_str_map(spec, "nodeSelector", path, errs),
                                      child(path, "nodeSelector")))
    errs.extend(_validate_security_context(get_dict(spec, "securityContext", path, errs),
                                           child(path, "securityContext")))
    for _, p, secret in dicts(get_list(spec, "imagePullSecrets", path, errs),
                              child(path, "imagePullSecrets"), errs):
        if set(secret) - {"name"}:
            errs.append(invalid(p, secret, "only name may be set"))
    if "affinity" in spec:
        errs.extend(validate_affinity(get_dict(spec, "affinity", path, errs), child(path, "affinity")))
    for i, gate in enumerate(get_list(spec, "readinessGates", path, errs)):
        p = child(index(child(path, "readinessGates"), i), "conditionType")
        ctype = gate.get("conditionType", "") if isinstance(gate, dict) else gate
        errs.extend(names.validate_qualified_name(ctype if isinstance(ctype, str) else "", p))
    errs.extend(_validate_scheduling_gates(get_list(spec, "schedulingGates", path, errs),
                                           child(path, "schedulingGates")))
    errs.extend(validate_topology_spread_constraints(
        get_list(spec, "topologySpreadConstraints", path, errs),
        child(path, "topologySpreadConstraints")))

    for field, check in (("serviceAccountName", names.name_is_dns_subdomain),
                         ("nodeName", names.name_is_dns_subdomain),
                         ("priorityClassName", names.name_is_dns_subdomain),
                         ("runtimeClassName", names.name_is_dns_subdomain),
                         ("hostname", names.name_is_dns_label),
                         ("subdomain", names.name_is_dns_label)):
        value = get_str(spec, field, path, errs)
        if value:
            errs.extend(names.validate_with(check, value, child(path, field)))

    deadline = get_int(spec, "activeDeadlineSeconds", path, errs)
    if deadline is not None and not 1 <= deadline <= MAX_INT32:
        errs.append(invalid(child(path, "activeDeadlineSeconds"), deadline,
                            names.inclusive_range_error(1, MAX_INT32)))
    get_int(spec, "priority", path, errs, bits=32)
    for field in ("hostNetwork", "hostPID", "hostIPC", "shareProcessNamespace",
                  "automountServiceAccountToken", "enableServiceLinks", "hostUsers",
                  "setHostnameAsFQDN"):
        get_bool(spec, field, path, errs)
    errs.extend(validate_tolerations(get_list(spec, "tolerations", path, errs),
                                     child(path, "tolerations")))
    for i, alias in enumerate(get_list(spec, "hostAliases", path, errs)):
        p = index(child(path, "hostAliases"), i)
        if not isinstance(alias, dict):
            errs.append(type_error(p, alias, "object"))
            continue
        errs.extend(_validate_ip(alias.get("ip"), child(p, "ip")))
        for j, hostname in enumerate(get_list(alias, "hostnames", p, errs)):
            errs.extend(names.validate_dns1123_subdomain(str(hostname),
                                                         index(child(p, "hostnames"), j)))

    preemption = spec.get("preemptionPolicy")
    if preemption is not None and preemption not in PREEMPTION_POLICIES:
        errs.append(not_supported(child(path, "preemptionPolicy"), preemption, PREEMPTION_POLICIES))
    if "overhead" in spec:
        parse_resource_list(spec.get("overhead"), child(path, "overhead"), errs)
    os_spec = get_dict(spec, "os", path, errs)
    if "os" in spec and spec.get("os") is not None:
        os_name = get_str(os_spec, "name", child(path, "os"), errs)
        if not os_name:
            errs.append(required(child(child(path, "os"), "name"), "cannot be empty"))
        elif os_name not in OS_NAMES:
            errs.append(not_supported(child(path, "os"), os_name, OS_NAMES))
    errs.extend(_check_host_port_conflicts(containers, child(path, "containers")))
    return errs


# -- dynamic resource claims --------------------------------------------------------------------

def _validate_pod_resource_claims(claims: list[Any], path: str, pod_name: str | None) -> Causes:
    """``validatePodResourceClaims``: unique DNS-label names, exactly one claim source."""
    errs: Causes = []
    seen: set[str] = set()
    for _, p, claim in dicts(claims, path, errs):
        name = get_str(claim, "name", p, errs)
        name_path = child(p, "name")
        if not name:
            errs.append(required(name_path))
        elif name in seen:
            errs.append(duplicate(name_path, name))
        else:
            name_errs = names.validate_dns1123_label(name, name_path)
            errs.extend(name_errs)
            if not name_errs and pod_name is not None and \
                    claim.get("resourceClaimTemplateName") is not None:
                final = f"{pod_name}-{name}"
                errs.extend(invalid(name_path, final, "final ResourceClaim name: " + m)
                            for m in names.name_is_dns_subdomain(final))
            seen.add(name)
        claim_name = claim.get("resourceClaimName")
        template_name = claim.get("resourceClaimTemplateName")
        if claim_name is not None and template_name is not None:
            errs.append(invalid(p, claim, "at most one of `resourceClaimName` or "
                                          "`resourceClaimTemplateName` may be specified"))
        if claim_name is None and template_name is None:
            errs.append(invalid(p, claim, "must specify one of: `resourceClaimName`, "
                                          "`resourceClaimTemplateName`"))
        for field in ("resourceClaimName", "resourceClaimTemplateName"):
            if claim.get(field) is not None:
                value = get_str(claim, field, p, errs)
                errs.extend(names.validate_with(names.name_is_dns_subdomain, value,
                                                child(p, field)))
    return errs


def _validate_container_claims(claims: list[Any], pod_claims: set[str], path: str) -> Causes:
    """``validateResourceClaimNames``: a container's ``resources.claims`` name entries of
    ``spec.resourceClaims``, each claim (or claim/request) once."""
    errs: Causes = []
    seen: set[str] = set()
    for _, p, claim in dicts(claims, path, errs):
        name = get_str(claim, "name", p, errs)
        if not name:
            errs.append(required(p))
            continue
        ref = name
        request = get_str(claim, "request", p, errs)
        if request:
            errs.extend(names.validate_dns1123_label(request, child(p, "request")))
            ref += "/" + request
        if ref in seen:
            errs.append(duplicate(p, ref))
        seen.add(ref)
        if name not in pod_claims:
            detail = "must be one of the names in pod.spec.resourceClaims"
            detail += ": " + ", ".join(sorted(pod_claims)) if pod_claims else " which is empty"
            errs.append(not_found(p, name, detail))
    return errs


def _validate_resource_claim_statuses(statuses: list[Any], pod_claims: list[Any], path: str) -> Causes:
    """``validatePodResourceClaimStatuses``: one entry per pod claim, naming a valid claim."""
    errs: Causes = []
    claim_names = {c.get("name") for c in pod_claims if isinstance(c, dict)}
    seen: set[str] = set()
    for _, p, status in dicts(statuses, path, errs):
        name = get_str(status, "name", p, errs)
        if name not in claim_names:
            errs.append(invalid(child(p, "name"), name,
                                "must match the name of an entry in `spec.resourceClaims`"))
        if name in seen:
            errs.append(duplicate(child(p, "name"), name))
        seen.add(name)
        if status.get("resourceClaimName") is not None:
            value = get_str(status, "resourceClaimName", p, errs)
            errs.extend(names.validate_with(names.name_is_dns_subdomain, value, child(p, "name")))
    return errs


# -- containers -------------------------------------------------------------------------------

def _container_names(containers: list[Any]) -> list[str]:
    return [name for c in containers if isinstance(c, dict)
            for name in (c.get("name"),) if isinstance(name, str)]


def _unique_container_name(c: Obj, path: str, seen: set[str]) -> Causes:
    """Records ``c``'s name in ``seen``; a duplicate if it was there already.

    One namespace for all containers of a pod: regular, init and ephemeral names may not clash.
    """
    name = c.get("name")
    if not isinstance(name, str) or not name:
        return []
    errs = [duplicate(child(path, "name"), name)] if name in seen else []
    seen.add(name)
    return errs


def _validate_containers(containers: list[Any], volumes: set[str], path: str, restart_policy: str,
                         is_pod: bool) -> Causes:
    errs: Causes = []
    if not containers:
        return [required(path)]
    seen: set[str] = set()
    for _, p, c in dicts(containers, path, errs):
        errs.extend(_validate_container_common(c, volumes, p, restart_policy, is_pod))
        errs.extend(_unique_container_name(c, p, seen))
        errs.extend(_validate_lifecycle_and_probes(c, p))
        if "restartPolicy" in c and c.get("restartPolicy") is not None:
            errs.append(forbidden(child(p, "restartPolicy"), "may not be set for non-init containers"))
    return errs


_INIT_RESTART_CONTAINER_MSG = "must not be set to 'RestartContainer' for non-sidecar initContainers"


def _no_restart_container_resize(c: Obj, path: str) -> Causes:
    """1.36 (kubernetes#137458): a non-sidecar init container is never resized, so a
    ``RestartContainer`` resize policy on it means nothing and is refused."""
    errs: Causes = []
    policies = c.get("resizePolicy")
    for i, rp in enumerate(policies if isinstance(policies, list) else []):
        if isinstance(rp, dict) and rp.get("restartPolicy") == "RestartContainer":
            errs.append(invalid(child(index(child(path, "resizePolicy"), i), "restartPolicy"),
                                "RestartContainer", _INIT_RESTART_CONTAINER_MSG))
    return errs


def init_restart_container_in_use(spec: Any) -> bool:
    """Whether a (stored) pod spec has a non-sidecar init container with a ``RestartContainer``
    resize policy: upstream ratchets the 1.36 rule, so an update of such a pod may keep it.
    (Also for pods/resize, whose validation must pass it as ``old_spec``.)"""
    if not isinstance(spec, dict):
        return False
    for c in spec.get("initContainers") or []:
        if isinstance(c, dict) and not is_sidecar(c) and _no_restart_container_resize(c, ""):
            return True
    return False


def _validate_init_containers(init_containers: list[Any], containers: list[Any], volumes: set[str],
                              path: str, restart_policy: str, is_pod: bool, *,
                              allow_init_restart_container: bool = False) -> Causes:
    errs: Causes = []
    seen = set(_container_names(containers))
    for _, p, c in dicts(init_containers, path, errs):
        effective = restart_policy
        ctr_policy = c.get("restartPolicy")
        if ctr_policy is not None:
            if ctr_policy != "Always":
                errs.append(not_supported(child(p, "restartPolicy"), ctr_policy, ["Always"]))
            else:
                effective = "Always"
        errs.extend(_validate_container_common(c, volumes, p, effective, is_pod))
        if ctr_policy != "Always" and not allow_init_restart_container:
            errs.extend(_no_restart_container_resize(c, p))
        errs.extend(_unique_container_name(c, p, seen))
        errs.extend(_check_host_port_conflicts([c], path))
        if ctr_policy == "Always":
            errs.extend(_validate_lifecycle_and_probes(c, p))
        else:
            for field in ("lifecycle", "livenessProbe", "readinessProbe", "startupProbe"):
                if c.get(field) is not None:
                    errs.append(forbidden(child(p, field), "may not be set for init containers "
                                                           "without restartPolicy=Always"))
    return errs


_EPHEMERAL_FORBIDDEN = ("ports", "resources", "resizePolicy", "livenessProbe", "readinessProbe",
                        "startupProbe", "lifecycle", "restartPolicy")


def _validate_ephemeral_containers(ephemeral: list[Any], others: list[Any], volumes: set[str], path: str,
                                   restart_policy: str, is_pod: bool) -> Causes:
    errs: Causes = []
    other_names = set(_container_names(others))
    seen = set(other_names)
    for _, p, c in dicts(ephemeral, path, errs):
        errs.extend(_validate_container_common(c, volumes, p, restart_policy, is_pod))
        errs.extend(_unique_container_name(c, p, seen))
        target = c.get("targetContainerName")
        if target and target not in other_names:
            errs.append(not_found(child(p, "targetContainerName"), target))
        for field in _EPHEMERAL_FORBIDDEN:
            if c.get(field):
                errs.append(forbidden(child(p, field), "cannot be set for an Ephemeral Container"))
    return errs


def _validate_container_common(c: Obj, volumes: set[str], path: str, restart_policy: str,
                               is_pod: bool) -> Causes:
    """``validateContainerCommon`` (plus ``validateContainerOnlyForPod`` when ``is_pod``)."""
    errs: Causes = []
    name = get_str(c, "name", path, errs)
    if not name:
        errs.append(required(child(path, "name")))
    else:
        errs.extend(names.validate_dns1123_label(name, child(path, "name")))
    image = get_str(c, "image", path, errs)
    if not image:
        errs.append(required(child(path, "image")))
    elif is_pod and image != image.strip():
        errs.append(invalid(child(path, "image"), image,
                            "must not have leading or trailing whitespace"))
    policy = get_str(c, "terminationMessagePolicy", path, errs)
    if policy and policy not in TERMINATION_MESSAGE_POLICIES:
        errs.append(not_supported(child(path, "terminationMessagePolicy"), policy,
                                  TERMINATION_MESSAGE_POLICIES))
    pull = get_str(c, "imagePullPolicy", path, errs)
    if pull and pull not in PULL_POLICIES:
        errs.append(not_supported(child(path, "imagePullPolicy"), pull, PULL_POLICIES))
    get_list(c, "command", path, errs)
    get_list(c, "args", path, errs)
    errs.extend(_validate_ports(get_list(c, "ports", path, errs), child(path, "ports")))
    errs.extend(_validate_env(get_list(c, "env", path, errs), child(path, "env")))
    errs.extend(_validate_env_from(get_list(c, "envFrom", path, errs), child(path, "envFrom")))
    errs.extend(_validate_volume_mounts(get_list(c, "volumeMounts", path, errs), volumes,
                                        child(path, "volumeMounts")))
    res_errs, _, _ = validate_resource_requirements(c.get("resources"), child(path, "resources"))
    errs.extend(res_errs)
    errs.extend(validate_resize_policy(get_list(c, "resizePolicy", path, errs),
                                       child(path, "resizePolicy"), restart_policy))
    sc = get_dict(c, "securityContext", path, errs)
    for field in ("runAsUser", "runAsGroup"):
        value = get_int(sc, field, child(path, "securityContext"), errs)
        if value is not None and not 0 <= value <= 0xFFFFFFFF:
            errs.append(invalid(child(child(path, "securityContext"), field), value,
                                names.inclusive_range_error(0, 0xFFFFFFFF)))
    return errs


def validate_resize_policy(policies: list[Any], path: str, restart_policy: str) -> Causes:
    """``validateResizePolicy``: cpu/memory once each, NotRequired/RestartContainer, and
    NotRequired only when the (effective) restart policy is Never."""
    errs: Causes = []
    seen: set[str] = set()
    for i, p in enumerate(policies):
        if not isinstance(p, dict):
            errs.append(type_error(index(path, i), p, "object"))
            continue
        name = p.get("resourceName", "")
        if name in seen:
            errs.append(duplicate(index(path, i), name))
        seen.add(name)
        if name in RESIZABLE_RESOURCES:
            pass
        elif name == "" or name is None:
            errs.append(required(path))
        else:
            errs.append(not_supported(path, name, RESIZABLE_RESOURCES))
        policy = p.get("restartPolicy", "")
        if policy in RESIZE_POLICIES:
            pass
        elif policy == "" or policy is None:
            errs.append(required(path))
        elif policy in LEGACY_RESIZE_POLICIES:
            cause = not_supported(path, policy, RESIZE_POLICIES)
            errs.append(Cause(path, f"{cause.message} (\"{policy}\" is the pre-release name of "
                                    f"\"{LEGACY_RESIZE_POLICIES[policy]}\")", cause.reason))
        else:
            errs.append(not_supported(path, policy, RESIZE_POLICIES))
        if restart_policy == "Never" and policy != "NotRequired":
            errs.append(invalid(path, policy, "must be 'NotRequired' when `restartPolicy` is 'Never'"))
    return errs


def _validate_ports(ports: list[Any], path: str) -> Causes:
    errs: Causes = []
    seen: set[str] = set()
    for _, p, port in dicts(ports, path, errs):
        name = get_str(port, "name", p, errs)
        if name:
            msgs = names.is_valid_port_name(name)
            if msgs:
                errs.extend(invalid(child(p, "name"), name, m) for m in msgs)
            elif name in seen:
                errs.append(duplicate(child(p, "name"), name))
            else:
                seen.add(name)
        container_port = get_int(port, "containerPort", p, errs, bits=32)
        if not container_port:
            if "containerPort" not in port or container_port == 0:
                errs.append(required(child(p, "containerPort")))
        else:
            errs.extend(invalid(child(p, "containerPort"), container_port, m)
                        for m in names.is_valid_port_num(container_port))
        host_port = get_int(port, "hostPort", p, errs, bits=32)
        if host_port:
            errs.extend(invalid(child(p, "hostPort"), host_port, m)
                        for m in names.is_valid_port_num(host_port))
        protocol = get_str(port, "protocol", p, errs) or "TCP"
        if protocol not in PROTOCOLS:
            errs.append(not_supported(child(p, "protocol"), protocol, PROTOCOLS))
        host_ip = get_str(port, "hostIP", p, errs)
        if host_ip:
            errs.extend(_validate_ip(host_ip, child(p, "hostIP")))
    return errs


def _check_host_port_conflicts(containers: list[Any], path: str) -> Causes:
    errs: Causes = []
    seen: set[str] = set()
    for ci, c in enumerate(containers):
        if not isinstance(c, dict) or not isinstance(c.get("ports"), list):
            continue
        for pi, port in enumerate(c["ports"]):
            if not isinstance(port, dict) or not port.get("hostPort"):
                continue
            text = f"{port.get('protocol') or 'TCP'}/{port.get('hostIP') or ''}/{port['hostPort']}"
            if text in seen:
                errs.append(duplicate(child(index(child(index(path, ci), "ports"), pi), "hostPort"),
                                      text))
            seen.add(text)
    return errs


def _validate_env(env: list[Any], path: str) -> Causes:
    errs: Causes = []
    for _, p, var in dicts(env, path, errs):
        name = get_str(var, "name", p, errs)
        if not name:
            errs.append(required(child(p, "name")))
        else:
            errs.extend(invalid(child(p, "name"), name, m) for m in names.is_env_var_name(name))
        get_str(var, "value", p, errs)
        if var.get("valueFrom") is not None:
            errs.extend(_validate_env_value_from(var, child(p, "valueFrom")))
    return errs


def _validate_env_value_from(var: Obj, path: str) -> Causes:
    errs: Causes = []
    source = var.get("valueFrom")
    if not isinstance(source, dict):
        return [type_error(path, source, "object")]
    count = 0
    if isinstance(source.get("fieldRef"), dict):
        count += 1
        ref = source["fieldRef"]
        fp = ref.get("fieldPath") or ""
        if not fp:
            errs.append(required(child(child(path, "fieldRef"), "fieldPath")))
        elif not (fp in _ENV_FIELD_PATHS or fp.startswith(("metadata.labels[", "metadata.annotations["))):
            errs.append(not_supported(child(child(path, "fieldRef"), "fieldPath"), fp,
                                      sorted(_ENV_FIELD_PATHS)))
    if isinstance(source.get("resourceFieldRef"), dict):
        count += 1
        resource = source["resourceFieldRef"].get("resource") or ""
        rp = child(child(path, "resourceFieldRef"), "resource")
        if not resource:
            errs.append(required(rp))
        elif resource not in _RESOURCE_FIELD_PATHS and not resource.startswith(
                ("requests.hugepages-", "limits.hugepages-")):
            errs.append(not_supported(rp, resource, _RESOURCE_FIELD_PATHS))
    for ref_name in ("configMapKeyRef", "secretKeyRef"):
        ref = source.get(ref_name)
        if not isinstance(ref, dict):
            continue
        count += 1
        rp = child(path, ref_name)
        ref_key = ref.get("key") or ""
        if ref.get("name"):
            errs.extend(names.validate_with(names.name_is_dns_subdomain, str(ref["name"]),
                                            child(rp, "name")))
        if not ref_key:
            errs.append(required(child(rp, "key")))
        else:
            errs.extend(invalid(child(rp, "key"), ref_key, m) for m in names.is_config_map_key(ref_key))
    if count == 0:
        errs.append(invalid(path, "", "must specify one of: `fieldRef`, `resourceFieldRef`, "
                                      "`configMapKeyRef` or `secretKeyRef`"))
    elif var.get("value"):
        errs.append(invalid(path, "", "may not be specified when `value` is not empty"))
    elif count > 1:
        errs.append(invalid(path, "", "may not have more than one field specified at a time"))
    return errs


def _validate_env_from(sources: list[Any], path: str) -> Causes:
    errs: Causes = []
    for _, p, src in dicts(sources, path, errs):
        prefix = get_str(src, "prefix", p, errs)
        if prefix:
            errs.extend(invalid(child(p, "prefix"), prefix, m) for m in names.is_env_var_name(prefix))
        count = 0
        for ref_name in ("configMapRef", "secretRef"):
            ref = src.get(ref_name)
            if isinstance(ref, dict):
                count += 1
                if not ref.get("name"):
                    errs.append(required(child(child(p, ref_name), "name")))
                else:
                    errs.extend(names.validate_with(names.name_is_dns_subdomain, str(ref["name"]),
                                                    child(child(p, ref_name), "name")))
        if count == 0:
            errs.append(invalid(path, "", "must specify one of: `configMapRef` or `secretRef`"))
        elif count > 1:
            errs.append(invalid(path, "", "may not have more than one field specified at a time"))
    return errs


def _validate_volumes(volumes: list[Any], path: str, errs: Causes) -> set[str]:
    seen: set[str] = set()
    for _, p, vol in dicts(volumes, path, errs):
        name = get_str(vol, "name", p, errs)
        name_path = child(p, "name")
        problems: Causes = []
        if not name:
            problems.append(required(name_path))
        else:
            problems.extend(names.validate_dns1123_label(name, name_path))
        if name and name in seen:
            problems.append(duplicate(name_path, name))
        if not problems:
            seen.add(name)
        errs.extend(problems)
        empty_dir = vol.get("emptyDir")
        if isinstance(empty_dir, dict) and "sizeLimit" in empty_dir:
            limit = parse_resource_list({"sizeLimit": empty_dir["sizeLimit"]}, child(p, "emptyDir"),
                                        errs, name_check=None)
            if limit.get("sizeLimit") is not None and limit["sizeLimit"].sign() < 0:
                errs.append(forbidden(child(child(p, "emptyDir"), "sizeLimit"),
                                      "SizeLimit field must be a valid resource quantity"))
    return seen


def _validate_volume_mounts(mounts: list[Any], volumes: set[str], path: str) -> Causes:
    errs: Causes = []
    mount_points: set[str] = set()
    for _, p, m in dicts(mounts, path, errs):
        name = get_str(m, "name", p, errs)
        if not name:
            errs.append(required(child(p, "name")))
        if name not in volumes:
            errs.append(not_found(child(p, "name"), name))
        mount_path = get_str(m, "mountPath", p, errs)
        if not mount_path:
            errs.append(required(child(p, "mountPath")))
        elif mount_path in mount_points:
            errs.append(invalid(child(p, "mountPath"), mount_path, "must be unique"))
        mount_points.add(mount_path)
        get_bool(m, "readOnly", p, errs)
    return errs


def _validate_lifecycle_and_probes(c: Obj, path: str) -> Causes:
    errs: Causes = []
    lifecycle = c.get("lifecycle")
    if isinstance(lifecycle, dict):
        for hook in ("postStart", "preStop"):
            if lifecycle.get(hook) is not None:
                errs.extend(_validate_handler(lifecycle[hook], child(child(path, "lifecycle"), hook),
                                              ("exec", "httpGet", "tcpSocket", "sleep")))
    elif lifecycle is not None:
        errs.append(type_error(child(path, "lifecycle"), lifecycle, "object"))
    for probe_name in ("livenessProbe", "readinessProbe", "startupProbe"):
        probe = c.get(probe_name)
        if probe is None:
            continue
        p = child(path, probe_name)
        if not isinstance(probe, dict):
            errs.append(type_error(p, probe, "object"))
            continue
        errs.extend(_validate_handler(probe, p, ("exec", "httpGet", "tcpSocket", "grpc")))
        for field in ("initialDelaySeconds", "timeoutSeconds", "periodSeconds", "successThreshold",
                      "failureThreshold"):
            errs.extend(nonnegative(get_int(probe, field, p, errs, bits=32), child(p, field)))
        tgps = get_int(probe, "terminationGracePeriodSeconds", p, errs)
        if tgps is not None:
            if probe_name == "readinessProbe":
                errs.append(invalid(child(p, "terminationGracePeriodSeconds"), tgps,
                                    "must not be set for readinessProbes"))
            elif tgps <= 0:
                errs.append(invalid(child(p, "terminationGracePeriodSeconds"), tgps,
                                    "must be greater than 0"))
        success = probe.get("successThreshold")
        if probe_name != "readinessProbe" and isinstance(success, int) and success not in (0, 1):
            errs.append(invalid(child(p, "successThreshold"), success, "must be 1"))
    return errs


def _validate_handler(handler: Any, path: str, kinds: tuple[str, ...]) -> Causes:
    if not isinstance(handler, dict):
        return [type_error(path, handler, "object")]
    errs: Causes = []
    count = 0
    for kind in kinds:
        action = handler.get(kind)
        if action is None:
            continue
        if count > 0:
            errs.append(forbidden(child(path, kind), "may not specify more than 1 handler type"))
            continue
        count += 1
        p = child(path, kind)
        if not isinstance(action, dict):
            errs.append(type_error(p, action, "object"))
            continue
        if kind == "exec" and not action.get("command"):
            errs.append(required(child(p, "command")))
        elif kind in ("httpGet", "tcpSocket"):
            errs.extend(_validate_port_num_or_name(action.get("port"), child(p, "port")))
            if kind == "httpGet":
                scheme = action.get("scheme") or "HTTP"
                if scheme not in URI_SCHEMES:
                    errs.append(not_supported(child(p, "scheme"), scheme, URI_SCHEMES))
        elif kind == "grpc":
            errs.extend(_validate_port_num_or_name(action.get("port"), child(p, "port")))
        elif kind == "sleep":
            seconds = get_int(action, "seconds", p, errs)
            if seconds is not None and seconds < 0:
                errs.append(invalid(child(p, "seconds"), seconds, IS_NEGATIVE_MSG))
    if count == 0:
        errs.append(required(path, "must specify a handler type"))
    return errs


def _validate_port_num_or_name(port: Any, path: str) -> Causes:
    if isinstance(port, bool) or port is None:
        return [invalid(path, show(port), "must be a port number or name")]
    if isinstance(port, int):
        return [invalid(path, port, m) for m in names.is_valid_port_num(port)]
    if isinstance(port, str):
        if port.isdigit():
            return [invalid(path, port, m) for m in names.is_valid_port_num(int(port))]
        return [invalid(path, port, m) for m in names.is_valid_port_name(port)]
    return [type_error(path, port, "integer or string")]


_POD_LEVEL_SUPPORTED = ["cpu", "hugepages-", "memory"]   # sets.List(SupportedPodLevelResources())


def _pod_level_resource_name(name: str, path: str) -> Causes:
    """``validatePodResourceName``: a valid resource name, then one pod-level resources support."""
    errs = validate_resource_name(name, path)
    if errs:
        return errs
    if name in ("cpu", "memory") or name.startswith("hugepages-"):
        return []
    return [not_supported(path, name, _POD_LEVEL_SUPPORTED)]


def _validate_pod_level_resources(spec: Obj, path: str) -> Causes:
    """``validatePodResources`` on ``spec.resources``: not on Windows, supported names, the
    container rules (requests <= limits, ...), no claims, then ``validatePodResourceConsistency``."""
    resources = spec.get("resources")
    os_name = (spec.get("os") or {}).get("name") if isinstance(spec.get("os"), dict) else None
    if os_name == "windows":
        return [forbidden(path, "may not be set for a windows pod")]
    errs, requests, limits = validate_resource_requirements(resources, path,
                                                            name_check=_pod_level_resource_name)
    if isinstance(resources, dict) and resources.get("claims"):
        errs.append(forbidden(child(path, "claims"), "claims cannot be set for Resources at pod-level"))
    errs.extend(validate_pod_resource_consistency(spec, requests, limits, path))
    return errs


def validate_pod_resource_consistency(spec: Obj, requests: dict[str, Quantity],
                                      limits: dict[str, Quantity], path: str = "spec.resources",
                                      ) -> Causes:
    """``validatePodResourceConsistency``: pod-level requests cover the containers' aggregate
    requests, a pod-level hugepages limit their aggregate hugepages limit, and no app
    container's limit exceeds the pod-level limit (upstream roots that path at
    ``spec.resources``: ``spec.resources.containers[0][cpu].limits``). Exposed for the
    pods/resize validation, which must run it on the resized pod too."""
    errs: Causes = []
    try:
        aggregate_requests = podlevel.aggregate_container_requests(spec)
        aggregate_limits = podlevel.aggregate_container_limits(spec)
    except (QuantityError, ValueError):
        return errs   # the containers' own validation reports it
    for name in sorted(aggregate_requests):
        pod_request = requests.get(name)
        amount = aggregate_requests[name]
        if pod_request is not None and amount > to_int(name, pod_request):
            text = podlevel.aggregate_text(spec, "requests", name, amount)
            errs.append(invalid(key(child(path, "requests"), name), str(pod_request),
                                f"must be greater than or equal to aggregate container requests of {text}"))
    for name in sorted(aggregate_limits):
        pod_limit = limits.get(name)
        amount = aggregate_limits[name]
        if name.startswith("hugepages-") and pod_limit is not None and amount > to_int(name, pod_limit):
            text = podlevel.aggregate_text(spec, "limits", name, amount)
            errs.append(invalid(key(child(path, "limits"), name), str(pod_limit),
                                f"must be greater than or equal to aggregate container limits of {text}"))
    for i, c in enumerate(list_field(spec, "containers")):
        res = c.get("resources") if isinstance(c, dict) else None
        container_limits = res.get("limits") if isinstance(res, dict) else None
        if not isinstance(container_limits, dict):
            continue
        for name in sorted(container_limits):
            pod_limit = limits.get(name)
            if pod_limit is None:
                continue
            try:
                limit = Quantity.parse(container_limits[name])
            except QuantityError:
                continue
            if limit > pod_limit:
                errs.append(invalid(child(key(index(child(path, "containers"), i), name), "limits"),
                                    str(limit), f"must be less than or equal to pod limits of {pod_limit}"))
    return errs


def _validate_dns_config(spec: Obj, dns_policy: str, path: str) -> Causes:
    errs: Causes = []
    config = spec.get("dnsConfig")
    cfg_path = child(path, "dnsConfig")
    if dns_policy == "None":
        if not isinstance(config, dict):
            return [required(cfg_path, "must provide `dnsConfig` when `dnsPolicy` is None")]
        if not config.get("nameservers"):
            return [required(child(cfg_path, "nameservers"),
                             "must provide at least one DNS nameserver when `dnsPolicy` is None")]
    if config is None:
        return errs
    if not isinstance(config, dict):
        return [type_error(cfg_path, config, "object")]
    nameservers = get_list(config, "nameservers", cfg_path, errs)
    if len(nameservers) > MAX_DNS_NAMESERVERS:
        errs.append(invalid(child(cfg_path, "nameservers"), nameservers,
                            f"must not have more than {MAX_DNS_NAMESERVERS} nameservers"))
    for i, ns in enumerate(nameservers):
        errs.extend(_validate_ip(ns, index(child(cfg_path, "nameservers"), i)))
    searches = get_list(config, "searches", cfg_path, errs)
    if len(searches) > MAX_DNS_SEARCH_PATHS:
        errs.append(invalid(child(cfg_path, "searches"), searches,
                            f"must not have more than {MAX_DNS_SEARCH_PATHS} search paths"))
    if len(" ".join(str(s) for s in searches)) > MAX_DNS_SEARCH_LIST_CHARS:
        errs.append(invalid(child(cfg_path, "searches"), searches,
                            f"must not have more than {MAX_DNS_SEARCH_LIST_CHARS} characters "
                            "(including spaces) in the search list"))
    for i, option in enumerate(get_list(config, "options", cfg_path, errs)):
        if not isinstance(option, dict) or not option.get("name"):
            errs.append(required(index(child(cfg_path, "options"), i), "must not be empty"))
    return errs


@lru_cache(maxsize=4096)
def _ip_version(value: str) -> int | None:
    """4 or 6, or None for what is no IP address (every pod status write checks its IPs)."""
    try:
        return ipaddress.ip_address(value).version
    except ValueError:
        return None


def _validate_ip(value: Any, path: str) -> Causes:
    if isinstance(value, str) and _ip_version(value) is not None:
        return []
    return [invalid(path, value if isinstance(value, str) else show(value),
                    "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)")]


def _validate_security_context(sc: Obj, path: str) -> Causes:
    errs: Causes = []
    for field in ("runAsUser", "runAsGroup", "fsGroup"):
        value = get_int(sc, field, path, errs)
        if value is not None and not 0 <= value <= 0xFFFFFFFF:
            errs.append(invalid(child(path, field), value, names.inclusive_range_error(0, 0xFFFFFFFF)))
    seen: set[Any] = set()  # what the names are, valid or not: each is reported once
    for i, sysctl in enumerate(get_list(sc, "sysctls", path, errs)):
        p = child(index(child(path, "sysctls"), i), "name")
        name = sysctl.get("name") if isinstance(sysctl, dict) else None
        if not name:
            errs.append(required(p))
        elif name in seen:
            errs.append(duplicate(p, name))
        seen.add(name)
    return errs


def _validate_scheduling_gates(gates: list[Any], path: str) -> Causes:
    errs: Causes = []
    seen: set[str] = set()
    for i, gate in enumerate(gates):
        name = gate.get("name", "") if isinstance(gate, dict) else ""
        name = name if isinstance(name, str) else ""
        errs.extend(names.validate_qualified_name(name, index(path, i)))
        if name in seen:
            errs.append(duplicate(index(path, i), name))
        seen.add(name)
    return errs


# -- tolerations, affinity, topology spread -------------------------------------------------------

def validate_tolerations(tolerations: list[Any], path: str) -> Causes:
    """``ValidateTolerations``."""
    errs: Causes = []
    for _, p, t in dicts(tolerations, path, errs):
        tkey = get_str(t, "key", p, errs)
        operator = get_str(t, "operator", p, errs)
        value = get_str(t, "value", p, errs)
        effect = get_str(t, "effect", p, errs)
        seconds = get_int(t, "tolerationSeconds", p, errs)
        if tkey:
            errs.extend(names.validate_label_name(tkey, child(p, "key")))
        if not tkey and operator != "Exists":
            errs.append(invalid(child(p, "operator"), operator,
                                "operator must be Exists when `key` is empty, which means \"match "
                                "all values and all keys\""))
        if seconds is not None and effect != "NoExecute":
            errs.append(invalid(child(p, "effect"), effect,
                                "effect must be 'NoExecute' when `tolerationSeconds` is set"))
        if operator in ("Equal", ""):
            msgs = names.is_label_value(value)
            if msgs:
                errs.append(invalid(child(p, "operator"), value, ";".join(msgs)))
        elif operator == "Exists":
            if value:
                errs.append(invalid(child(p, "operator"), value,
                                    "value must be empty when `operator` is 'Exists'"))
        else:
            errs.append(not_supported(child(p, "operator"), operator, TOLERATION_OPERATORS))
        if effect and effect not in TAINT_EFFECTS:
            errs.append(not_supported(child(p, "effect"), effect, TAINT_EFFECTS))
    return errs


def validate_taint_effect(effect: str, path: str, *, allow_empty: bool) -> Causes:
    if not effect:
        return [] if allow_empty else [required(path)]
    if effect not in TAINT_EFFECTS:
        return [not_supported(path, effect, TAINT_EFFECTS)]
    return []


def validate_affinity(affinity: Obj, path: str) -> Causes:
    errs: Causes = []
    node = affinity.get("nodeAffinity")
    if node is not None:
        errs.extend(_validate_node_affinity(node, child(path, "nodeAffinity")))
    for kind in ("podAffinity", "podAntiAffinity"):
        pa = affinity.get(kind)
        if pa is None:
            continue
        p = child(path, kind)
        if not isinstance(pa, dict):
            errs.append(type_error(p, pa, "object"))
            continue
        rp = child(p, "requiredDuringSchedulingIgnoredDuringExecution")
        for _, tp, term in dicts(get_list(pa, "requiredDuringSchedulingIgnoredDuringExecution", p,
                                          errs), rp, errs):
            errs.extend(_validate_pod_affinity_term(term, tp))
        wp = child(p, "preferredDuringSchedulingIgnoredDuringExecution")
        for _, tp, weighted in dicts(get_list(pa, "preferredDuringSchedulingIgnoredDuringExecution",
                                              p, errs), wp, errs):
            errs.extend(_validate_weight(weighted, tp, errs))
            weighted_term = weighted.get("podAffinityTerm")
            if not isinstance(weighted_term, dict):
                errs.append(required(child(tp, "podAffinityTerm")))
            else:
                errs.extend(_validate_pod_affinity_term(weighted_term, child(tp, "podAffinityTerm")))
    return errs


def _validate_weight(item: Obj, path: str, errs: Causes) -> Causes:
    weight = get_int(item, "weight", path, errs, bits=32)
    if weight is None or not 1 <= weight <= 100:
        return [invalid(child(path, "weight"), weight if weight is not None else 0,
                        "must be in the range 1-100")]
    return []


def _validate_pod_affinity_term(term: Obj, path: str) -> Causes:
    errs: Causes = []
    selector = term.get("labelSelector")
    errs.extend(validate_label_selector(selector, child(path, "labelSelector")))
    errs.extend(validate_label_selector(term.get("namespaceSelector"),
                                        child(path, "namespaceSelector")))
    for ns in get_list(term, "namespaces", path, errs):
        errs.extend(invalid(child(path, "namespace"), ns, m)
                    for m in names.name_is_dns_label(str(ns)))
    match_keys = get_list(term, "matchLabelKeys", path, errs)
    mismatch_keys = get_list(term, "mismatchLabelKeys", path, errs)
    for field, keys in (("matchLabelKeys", match_keys), ("mismatchLabelKeys", mismatch_keys)):
        if not keys:
            continue
        if selector is None:
            errs.append(forbidden(child(path, field), "must not be specified when labelSelector is "
                                                      "not set"))
            continue
        for i, k in enumerate(keys):
            errs.extend(names.validate_label_name(str(k), index(child(path, field), i)))
    for i, k in enumerate(match_keys):
        if k in mismatch_keys:
            errs.append(invalid(index(child(path, "matchLabelKeys"), i), k,
                                "exists in both matchLabelKeys and mismatchLabelKeys"))
    topology_key = get_str(term, "topologyKey", path, errs)
    if not topology_key:
        errs.append(required(child(path, "topologyKey"), "can not be empty"))
    errs.extend(names.validate_label_name(topology_key, child(path, "topologyKey")))
    return errs


def _validate_node_affinity(na: Any, path: str) -> Causes:
    if not isinstance(na, dict):
        return [type_error(path, na, "object")]
    errs: Causes = []
    required_sel = na.get("requiredDuringSchedulingIgnoredDuringExecution")
    if required_sel is not None:
        errs.extend(validate_node_selector(required_sel,
                                           child(path, "requiredDuringSchedulingIgnoredDuringExecution")))
    pp = child(path, "preferredDuringSchedulingIgnoredDuringExecution")
    for _, tp, term in dicts(get_list(na, "preferredDuringSchedulingIgnoredDuringExecution", path,
                                      errs), pp, errs):
        errs.extend(_validate_weight(term, tp, errs))
        pref = term.get("preference")
        if isinstance(pref, dict):
            errs.extend(validate_node_selector_term(pref, child(tp, "preference"),
                                                    allow_invalid_values=True))
        elif pref is not None:
            errs.append(type_error(child(tp, "preference"), pref, "object"))
    return errs


def validate_node_selector(sel: Any, path: str) -> Causes:
    """``ValidateNodeSelector``: at least one term, each term's requirements valid."""
    if not isinstance(sel, dict):
        return [type_error(path, sel, "object")]
    errs: Causes = []
    terms_path = child(path, "nodeSelectorTerms")
    terms = get_list(sel, "nodeSelectorTerms", path, errs)
    if not terms:
        return errs + [required(terms_path, "must have at least one node selector term")]
    for _, tp, term in dicts(terms, terms_path, errs):
        errs.extend(validate_node_selector_term(term, tp))
    return errs


def validate_node_selector_term(term: Obj, path: str, *, allow_invalid_values: bool = False) -> Causes:
    errs: Causes = []
    ep = child(path, "matchExpressions")
    for _, rp, req in dicts(get_list(term, "matchExpressions", path, errs), ep, errs):
        errs.extend(validate_node_selector_requirement(req, rp, allow_invalid_values))
    fp = child(path, "matchFields")
    for _, rp, req in dicts(get_list(term, "matchFields", path, errs), fp, errs):
        operator = req.get("operator")
        values = list_field(req, "values")
        if operator in ("In", "NotIn"):
            if len(values) != 1:
                errs.append(required(child(rp, "values"), "must be only one value when `operator` "
                                                          "is 'In' or 'NotIn' for node field selector"))
        else:
            errs.append(invalid(child(rp, "operator"), operator, "not a valid selector operator"))
        if req.get("key") != "metadata.name":
            errs.append(invalid(child(rp, "key"), req.get("key"), "not a valid field selector key"))
        else:
            for i, v in enumerate(values):
                errs.extend(invalid(index(child(rp, "values"), i), v, m)
                            for m in names.name_is_dns_subdomain(str(v)))
    return errs


def validate_node_selector_requirement(req: Obj, path: str, allow_invalid_values: bool = False) -> Causes:
    errs: Causes = []
    operator = req.get("operator")
    values = get_list(req, "values", path, errs)
    vp = child(path, "values")
    if operator in ("In", "NotIn"):
        if not values:
            errs.append(required(vp, "must be specified when `operator` is 'In' or 'NotIn'"))
    elif operator in ("Exists", "DoesNotExist"):
        if values:
            errs.append(forbidden(vp, "may not be specified when `operator` is 'Exists' or "
                                      "'DoesNotExist'"))
    elif operator in ("Gt", "Lt"):
        if len(values) != 1:
            errs.append(required(vp, "must be specified single value when `operator` is 'Lt' or 'Gt'"))
        for i, v in enumerate(values):
            if parse_int64(v) is None:
                errs.append(invalid(index(vp, i), v if isinstance(v, str) else show(v),
                                    "for 'Gt', 'Lt' operators, the value must be an integer"))
    else:
        errs.append(invalid(child(path, "operator"), operator, "not a valid selector operator"))
    errs.extend(names.validate_label_name(get_str(req, "key", path, errs), child(path, "key")))
    if not allow_invalid_values:
        for i, v in enumerate(values):
            if isinstance(v, str):
                errs.extend(invalid(index(vp, i), v, m) for m in names.is_label_value(v))
            else:
                errs.append(type_error(index(vp, i), v, "string"))
    return errs


def validate_topology_spread_constraints(constraints: list[Any], path: str) -> Causes:
    errs: Causes = []
    items = dicts(constraints, path, errs)
    for i, p, c in items:
        max_skew = get_int(c, "maxSkew", p, errs, bits=32)
        if max_skew is None or max_skew <= 0:
            errs.append(invalid(child(p, "maxSkew"), max_skew if max_skew is not None else 0,
                                IS_NOT_POSITIVE_MSG))
        topology_key = get_str(c, "topologyKey", p, errs)
        if not topology_key:
            errs.append(required(child(p, "topologyKey"), "can not be empty"))
        action = get_str(c, "whenUnsatisfiable", p, errs)
        if action not in WHEN_UNSATISFIABLE:
            errs.append(not_supported(child(p, "whenUnsatisfiable"), action, WHEN_UNSATISFIABLE))
        for j, _, other in items:
            if j > i and other.get("topologyKey") == topology_key and \
                    other.get("whenUnsatisfiable") == action:
                errs.append(duplicate(child(p, "{topologyKey, whenUnsatisfiable}"),
                                      f"{{{topology_key}, {action}}}"))
                break
        min_domains = get_int(c, "minDomains", p, errs, bits=32)
        if min_domains is not None:
            if min_domains <= 0:
                errs.append(invalid(child(p, "minDomains"), min_domains, IS_NOT_POSITIVE_MSG))
            if action != "DoNotSchedule":
                errs.append(invalid(child(p, "minDomains"), min_domains,
                                    f"can only use minDomains if whenUnsatisfiable=DoNotSchedule, "
                                    f"not {action}"))
        for field in ("nodeAffinityPolicy", "nodeTaintsPolicy"):
            policy = c.get(field)
            if policy is not None and policy not in NODE_INCLUSION_POLICIES:
                errs.append(not_supported(child(p, field), policy, NODE_INCLUSION_POLICIES))
        selector = c.get("labelSelector")
        match_keys = get_list(c, "matchLabelKeys", p, errs)
        if match_keys:
            mp = child(p, "matchLabelKeys")
            if selector is None:
                errs.append(forbidden(mp, "must not be specified when labelSelector is not set"))
            sel_keys: set[str] = set()
            if isinstance(selector, dict):
                sel_keys.update((selector.get("matchLabels") or {}) if isinstance(
                    selector.get("matchLabels"), dict) else {})
                for expr in selector.get("matchExpressions") or []:
                    if isinstance(expr, dict) and isinstance(expr.get("key"), str):
                        sel_keys.add(expr["key"])
            for k, mk in enumerate(match_keys):
                errs.extend(names.validate_label_name(str(mk), index(mp, k)))
                if mk in sel_keys:
                    errs.append(invalid(index(mp, k), mk, "exists in both matchLabelKeys and "
                                                          "labelSelector"))
        errs.extend(validate_label_selector(selector, child(p, "labelSelector")))
    return errs


# -- updates ---------------------------------------------------------------------------------------

UPDATABLE_POD_SPEC_FIELDS = (
    "`spec.containers[*].image`",
    "`spec.initContainers[*].image`",
    "`spec.activeDeadlineSeconds`",
    "`spec.tolerations` (only additions to existing tolerations)",
    "`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)",
)
POD_UPDATE_FORBIDDEN_MSG = ("pod updates may not change fields other than "
                            + ",".join(UPDATABLE_POD_SPEC_FIELDS))


def validate_pod_update(new: Obj, old: Obj) -> Causes:
    """``ValidatePodUpdate``: only images, activeDeadlineSeconds, tolerations (additions),
    schedulingGates (removals) and, for gated pods, nodeSelector/nodeAffinity additions."""
    errs = validate_object_meta_update(new, old)
    spec = dict_field(new, "spec")
    old_spec = dict_field(old, "spec")
    # The stored spec passed these rules when it was written: an update that leaves it as it
    # was (a label or annotation change) is judged by its metadata alone.
    unchanged = "spec" in new and new.get("spec") == old.get("spec")
    errs.extend(validate_pod_metadata_and_spec(new, spec_checked=unchanged, old_spec=old_spec))
    errs.extend(_mirror_annotation_updates(new, old))
    if unchanged:
        return errs

    for field in ("containers", "initContainers"):
        new_list = list_field(spec, field)
        old_list = list_field(old_spec, field)
        if len(new_list) != len(old_list):
            errs.append(forbidden(f"spec.{field}", "pod updates may not add or remove containers"))
            return errs

    new_deadline, old_deadline = spec.get("activeDeadlineSeconds"), old_spec.get("activeDeadlineSeconds")
    if isinstance(new_deadline, int) and not isinstance(new_deadline, bool):
        if not 0 <= new_deadline <= MAX_INT32:
            errs.append(invalid("spec.activeDeadlineSeconds", new_deadline,
                                names.inclusive_range_error(0, MAX_INT32)))
            return errs
        if isinstance(old_deadline, int) and old_deadline < new_deadline:
            errs.append(invalid("spec.activeDeadlineSeconds", new_deadline,
                                "must be less than or equal to previous value"))
            return errs
    elif new_deadline is None and old_deadline is not None:
        errs.append(invalid("spec.activeDeadlineSeconds", None,
                            "must not update from a positive integer to nil value"))

    errs.extend(_validate_only_added_tolerations(spec.get("tolerations") or [],
                                                 old_spec.get("tolerations") or []))
    errs.extend(_validate_only_deleted_scheduling_gates(spec.get("schedulingGates") or [],
                                                        old_spec.get("schedulingGates") or []))

    new_n, old_n = normalized(spec), normalized(old_spec)
    if new_n == old_n:
        return errs
    munged = dict(new_n)
    for field in ("containers", "initContainers"):
        if field in munged:
            munged[field] = [
                _with(c, "image", (old_n.get(field) or [])[i].get("image")
                      if i < len(old_n.get(field) or []) and isinstance(old_n[field][i], dict) else None)
                for i, c in enumerate(munged[field])
            ]
    for field in ("activeDeadlineSeconds", "schedulingGates", "tolerations"):
        _copy_field(munged, old_n, field)
    old_grace, new_grace = old_n.get("terminationGracePeriodSeconds"), munged.get(
        "terminationGracePeriodSeconds")
    if isinstance(old_grace, int) and old_grace < 0 and new_grace == 1:
        munged["terminationGracePeriodSeconds"] = old_grace
    if old_spec.get("schedulingGates"):
        errs.extend(_gated_pod_mutations(munged, old_n))
    if munged != old_n:
        errs.append(forbidden("spec", POD_UPDATE_FORBIDDEN_MSG + "\n" + describe_diff(old_n, munged,
                                                                                        "spec")))
    return errs


def _with(container: Any, field: str, value: Any) -> Any:
    if not isinstance(container, dict):
        return container
    out = dict(container)
    if value is None:
        out.pop(field, None)
    else:
        out[field] = value
    return out


def _copy_field(target: Obj, source: Obj, field: str) -> None:
    if field in source:
        target[field] = source[field]
    else:
        target.pop(field, None)


def _mirror_annotation_updates(new: Obj, old: Obj) -> Causes:
    def annotations(obj: Obj) -> Obj:
        meta = dict_field(obj, "metadata")
        return dict_field(meta, "annotations")

    new_a, old_a = annotations(new), annotations(old)
    p = key("metadata.annotations", MIRROR_POD_ANNOTATION)
    if MIRROR_POD_ANNOTATION in old_a and new_a.get(MIRROR_POD_ANNOTATION) != old_a[MIRROR_POD_ANNOTATION]:
        return [forbidden(p, "may not remove or update mirror pod annotation")]
    if MIRROR_POD_ANNOTATION in new_a and MIRROR_POD_ANNOTATION not in old_a:
        return [forbidden(p, "may not add mirror pod annotation")]
    return []


def _validate_only_added_tolerations(new: Any, old: Any) -> Causes:
    if not isinstance(new, list) or not isinstance(old, list):
        return []

    def strip(t: Any) -> Any:
        if not isinstance(t, dict):
            return t
        return normalized({k: v for k, v in t.items() if k != "tolerationSeconds"})

    new_stripped = [strip(t) for t in new]
    for t in old:
        if strip(t) not in new_stripped:
            return [forbidden("spec.tolerations",
                              "existing toleration can not be modified except its tolerationSeconds")]
    return []


def _validate_only_deleted_scheduling_gates(new: Any, old: Any) -> Causes:
    if not isinstance(new, list) or not new:
        return []
    old_names = {g.get("name") for g in old if isinstance(g, dict)} if isinstance(old, list) else set()
    errs: Causes = []
    for i, gate in enumerate(new):
        name = gate.get("name") if isinstance(gate, dict) else None
        if name not in old_names:
            errs.append(forbidden(child(index("spec.schedulingGates", i), "name"),
                                  f"only deletion is allowed, but found new scheduling gate '{name}'"))
    return errs


def _gated_pod_mutations(munged: Obj, old: Obj) -> Causes:
    """Gated pods may gain nodeSelector entries and node-affinity requirements (no removals)."""
    errs: Causes = []
    new_sel = munged.get("nodeSelector") or {}
    old_sel = old.get("nodeSelector") or {}
    if new_sel != old_sel:
        if any(k not in new_sel or new_sel[k] != v for k, v in old_sel.items()):
            errs.append(invalid("spec.nodeSelector", new_sel, "only additions to spec.nodeSelector "
                                                              "are allowed (no mutations or deletions)"))
        _copy_field(munged, old, "nodeSelector")

    def node_affinity(spec: Obj) -> Any:
        aff = spec.get("affinity")
        return aff.get("nodeAffinity") if isinstance(aff, dict) else None

    new_na, old_na = node_affinity(munged), node_affinity(old)
    if new_na != old_na:
        errs.extend(_node_affinity_mutation(new_na, old_na))
        affinity = dict(munged.get("affinity") or {})
        if old_na is None:
            affinity.pop("nodeAffinity", None)
        else:
            affinity["nodeAffinity"] = old_na
        if affinity or "affinity" in old:
            munged["affinity"] = affinity
        else:
            munged.pop("affinity", None)
        if munged.get("affinity") == {} and "affinity" not in old:
            munged.pop("affinity", None)
    return errs


def _node_affinity_mutation(new: Any, old: Any) -> Causes:
    path = "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms"
    old_req = old.get("requiredDuringSchedulingIgnoredDuringExecution") if isinstance(old, dict) else None
    if not isinstance(old_req, dict):
        return []
    old_terms = old_req.get("nodeSelectorTerms") or []
    new_req = new.get("requiredDuringSchedulingIgnoredDuringExecution") if isinstance(new, dict) else None
    new_terms = (new_req.get("nodeSelectorTerms") or []) if isinstance(new_req, dict) else []
    if old_terms and len(old_terms) != len(new_terms):
        return [invalid(path, new_terms, "no additions/deletions to non-empty NodeSelectorTerms list "
                                         "are allowed")]
    errs: Causes = []
    for i, (nt, ot) in enumerate(zip(new_terms, old_terms)):
        if not _only_additions(nt, ot):
            errs.append(invalid(index(path, i), nt, "only additions are allowed (no mutations or "
                                                    "deletions)"))
    return errs


def _only_additions(new: Any, old: Any) -> bool:
    new = new if isinstance(new, dict) else {}
    old = old if isinstance(old, dict) else {}
    old_exprs, old_fields = old.get("matchExpressions") or [], old.get("matchFields") or []
    new_exprs, new_fields = new.get("matchExpressions") or [], new.get("matchFields") or []
    if not old_exprs and not old_fields and (new_exprs or new_fields):
        return False
    return new_exprs[:len(old_exprs)] == old_exprs and new_fields[:len(old_fields)] == old_fields


# -- status ----------------------------------------------------------------------------------------

def validate_pod_status_update(new: Obj, old: Obj) -> Causes:
    """``ValidatePodStatusUpdate`` plus quantity checks on the resources the node reports."""
    errs = validate_object_meta_update(new, old)
    errs.extend(_mirror_annotation_updates(new, old))
    status = get_dict(new, "status", "", errs)
    old_status = dict_field(old, "status")
    spec = dict_field(new, "spec")
    old_spec = dict_field(old, "spec")

    for _, p, cond in dicts(get_list(status, "conditions", "status", errs), "status.conditions", errs):
        ctype = get_str(cond, "type", p, errs)
        if ctype not in SYSTEM_POD_CONDITIONS:
            errs.extend(names.validate_qualified_name(ctype, child(p, "type")))
        # per-condition observedGeneration (PodObservedGenerationTracking, GA in 1.35)
        errs.extend(nonnegative(get_int(cond, "observedGeneration", p, errs),
                                child(p, "observedGeneration")))
    errs.extend(nonnegative(get_int(status, "observedGeneration", "status", errs),
                            "status.observedGeneration"))
    if (spec.get("nodeName") or "") != (old_spec.get("nodeName") or ""):
        errs.append(forbidden("status.nodeName", "may not be changed directly"))
    nominated = get_str(status, "nominatedNodeName", "status", errs)
    if nominated and nominated != old_status.get("nominatedNodeName"):
        errs.extend(names.validate_with(names.name_is_dns_subdomain, nominated,
                                        "status.nominatedNodeName"))
    old_qos = old_status.get("qosClass")
    if old_qos and status.get("qosClass") != old_qos:
        errs.append(immutable("status.qosClass", status.get("qosClass")))

    restart_policy = old_spec.get("restartPolicy") or "Always"
    init_sidecars = {c.get("name") for c in old_spec.get("initContainers") or []
                     if is_sidecar(c)}
    for field, policy in (("containerStatuses", restart_policy),
                          ("initContainerStatuses", restart_policy),
                          ("ephemeralContainerStatuses", "Never")):
        statuses = get_list(status, field, "status", errs)
        errs.extend(_state_transitions(statuses, old_status.get(field) or [], f"status.{field}",
                                       policy, init_sidecars if field == "initContainerStatuses"
                                       else set()))
        for _, p, cs in dicts(statuses, f"status.{field}", errs):
            if "allocatedResources" in cs:
                parse_resource_list(cs.get("allocatedResources"), child(p, "allocatedResources"),
                                    errs, name_check=None)
            resources = cs.get("resources")
            if resources is not None:
                if not isinstance(resources, dict):
                    errs.append(type_error(child(p, "resources"), resources, "object"))
                else:
                    for part in ("requests", "limits"):
                        if part in resources:
                            parse_resource_list(resources[part], child(child(p, "resources"), part),
                                                errs, name_check=None)
            if field == "ephemeralContainerStatuses" and cs.get("allocatedResourcesStatus"):
                errs.append(forbidden(child(p, "allocatedResourcesStatus"),
                                      "must not be specified in container status"))
    errs.extend(_validate_resource_claim_statuses(
        get_list(status, "resourceClaimStatuses", "status", errs),
        list_field(spec, "resourceClaims"),
        "status.resourceClaimStatuses"))
    errs.extend(_validate_ips(get_list(status, "podIPs", "status", errs), "status.podIPs"))
    host_ips = get_list(status, "hostIPs", "status", errs)
    if host_ips:
        first = host_ips[0].get("ip") if isinstance(host_ips[0], dict) else None
        if status.get("hostIP") != first:
            errs.append(invalid("status.hostIPs[0].ip", first, "must be equal to `hostIP`"))
        errs.extend(_validate_ips(host_ips, "status.hostIPs"))
    return errs


def _state_transitions(new: list[Any], old: Any, path: str, restart_policy: str,
                       restartable: set[Any]) -> Causes:
    """Containers that may not restart may not leave the terminated state."""
    if restart_policy == "Always" or not isinstance(old, list):
        return []
    errs: Causes = []
    for i, old_cs in enumerate(old):
        if not isinstance(old_cs, dict):
            continue
        terminated = (old_cs.get("state") or {}).get("terminated") if isinstance(
            old_cs.get("state"), dict) else None
        if not terminated:
            continue
        exit_code = terminated.get("exitCode", 0) if isinstance(terminated, dict) else 0
        if exit_code != 0 and restart_policy == "OnFailure":
            continue
        if old_cs.get("name") in restartable:
            continue
        for cs in new:
            if not isinstance(cs, dict) or cs.get("name") != old_cs.get("name"):
                continue
            state = dict_field(cs, "state")
            if not state.get("terminated"):
                errs.append(forbidden(child(index(path, i), "state"),
                                      "may not be transitioned to non-terminated state"))
    return errs


def _validate_ips(items: list[Any], path: str) -> Causes:
    errs: Causes = []
    seen: set[str] = set()
    families: list[int | None] = []
    for i, item in enumerate(items):
        ip = item.get("ip") if isinstance(item, dict) else None
        problems = _validate_ip(ip, index(path, i))
        errs.extend(problems)
        if not problems and isinstance(ip, str):  # no problems: ip is an address
            if ip in seen:
                errs.append(duplicate(index(path, i), item))
            seen.add(ip)
            families.append(_ip_version(ip))
    if len(items) > 1 and not errs and (len(items) > 2 or len(set(families)) != 2):
        errs.append(invalid(path, items, "may specify no more than one IP for each IP family"))
    return errs
