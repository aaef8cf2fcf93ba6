"""PodSecurity (``plugin/pkg/admission/security/podsecurity`` around
``k8s.io/pod-security-admission/admission``): the Pod Security Standards per namespace.

A namespace's ``pod-security.kubernetes.io/{enforce,audit,warn}`` labels (and their
``-version`` labels, ``latest`` or ``v1.N``) choose a level per mode; unlabelled modes are
privileged, as kube-apiserver's default AdmissionConfiguration has them (no exempt users,
namespaces or runtime classes unless :class:`Exemptions` says so).

- Pods (create and update, and the ``ephemeralcontainers`` and ``resize`` subresources;
  not status, binding, eviction, exec, attach, log, port-forward or proxy): a violation of
  the enforce level is 403 ``pods "x" is forbidden: violates PodSecurity
  "restricted:latest": REASON (DETAIL), ...``; of the warn level (when the pod is
  admitted), the warning ``would violate PodSecurity "baseline:latest": ...``; of the audit
  level, the audit annotation ``pod-security.kubernetes.io/audit-violations``. An update
  that changes no image and adds no container is not evaluated, as upstream's
  ``isSignificantPodUpdate``.
- Pod templates (ReplicationController, PodTemplate, ReplicaSet, Deployment, StatefulSet,
  DaemonSet, Job, CronJob): warn and audit only -- the pods they create are enforced.
- Namespaces: invalid labels are 422 on create, and on update when they changed
  (``metadata.labels[pod-security.kubernetes.io/enforce]: Invalid value: "x": must be one of
  privileged, baseline, restricted``); making the enforce level stricter dry-runs the
  namespace's pods and warns ``existing pods in namespace "x" violate the new PodSecurity
  enforce level "restricted:latest"`` with one ``POD: REASONS`` warning per distinct result.

Audit annotations go to ``attrs.options["auditAnnotations"]`` (kvert keeps no audit log;
they are logged at debug level).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from kvert.api.errors import Cause, InternalError, Invalid, NotFound
from kvert.api.podsecurity import (
    AUDIT_LABEL,
    AUDIT_VERSION_LABEL,
    DEFAULT_POLICY,
    ENFORCE_LABEL,
    ENFORCE_VERSION_LABEL,
    LABEL_PREFIX,
    PRIVILEGED,
    WARN_LABEL,
    WARN_VERSION_LABEL,
    AggregateResult,
    Evaluator,
    LevelVersion,
    Policy,
    compare_levels,
    default_evaluator,
    policy_to_evaluate,
)
from kvert.api.podsecurity.levels import AUDIT_VIOLATIONS, ENFORCE_POLICY, EXEMPT
from kvert.api.types import Obj
from kvert.registry.admission import CREATE, UPDATE, Attributes
from kvert.store.base import Store

from .common import PODS, forbidden

log = logging.getLogger(__name__)

NAMESPACES = "namespaces"
# the resources with a pod template, and where the template is
TEMPLATE_PATHS: dict[str, tuple[str, ...]] = {
    "replicationcontrollers": ("spec", "template"),
    "podtemplates": ("template",),
    "apps/replicasets": ("spec", "template"),
    "apps/deployments": ("spec", "template"),
    "apps/statefulsets": ("spec", "template"),
    "apps/daemonsets": ("spec", "template"),
    "batch/jobs": ("spec", "template"),
    "batch/cronjobs": ("spec", "jobTemplate", "spec", "template"),
}
# pod subresources that cannot change the pod's spec (any other one is evaluated)
IGNORED_POD_SUBRESOURCES = frozenset({"exec", "attach", "binding", "eviction", "log",
                                      "portforward", "proxy", "status"})
# upstream's namespaceMaxPodsToCheck; its 1 s time limit is not kept (kvert answers alike
# whatever the machine's speed)
MAX_PODS_TO_CHECK = 3000
AUDIT_ANNOTATIONS = "auditAnnotations"


@dataclass(frozen=True)
class Exemptions:
    """The AdmissionConfiguration's ``exemptions`` (empty by default, as upstream's)."""

    usernames: frozenset[str] = frozenset()
    namespaces: frozenset[str] = frozenset()
    runtime_classes: frozenset[str] = frozenset()


@runtime_checkable
class _Peeking(Protocol):
    def peek(self, resource: str, namespace: str, name: str) -> Obj: ...


class PodSecurity:
    name = "PodSecurity"
    resources = frozenset({PODS, NAMESPACES, *TEMPLATE_PATHS})

    def __init__(self, store: Store, *, defaults: Policy = DEFAULT_POLICY,
                 exemptions: Exemptions = Exemptions(), evaluator: Evaluator | None = None):
        self.store = store
        self.defaults = defaults
        self.exemptions = exemptions
        self.evaluator = evaluator or default_evaluator()
        # every pod write reads its namespace: without a copy where the store can
        self._read: Callable[[str, str, str], Obj] = (
            store.peek if isinstance(store, _Peeking) else store.get)

    async def validate(self, attrs: Attributes) -> None:
        if attrs.operation not in (CREATE, UPDATE) or not isinstance(attrs.object, dict):
            return
        if attrs.resource == NAMESPACES:
            self._validate_namespace(attrs)
        elif attrs.resource == PODS:
            self._validate_pod(attrs)
        elif attrs.resource in TEMPLATE_PATHS:
            self._validate_template(attrs)

    # ---- pods ------------------------------------------------------------------------------

    def _validate_pod(self, attrs: Attributes) -> None:
        if attrs.subresource in IGNORED_POD_SUBRESOURCES:
            return
        if self._exempt(attrs):
            return
        try:
            labels = _labels(self._read(NAMESPACES, "", attrs.namespace))
        except NotFound:
            raise InternalError(f'Internal error occurred: failed to lookup namespace '
                                f'"{attrs.namespace}"') from None
        policy, errors = policy_to_evaluate(labels, self.defaults)
        if not errors and policy.fully_privileged():
            _annotate(attrs, {ENFORCE_POLICY: str(LevelVersion(PRIVILEGED))})
            return
        pod = attrs.object or {}
        if (attrs.operation == UPDATE and isinstance(attrs.old_object, dict)
                and not significant_pod_update(pod, attrs.old_object)):
            return
        self._evaluate(attrs, policy, errors, _dict(pod.get("metadata")), _dict(pod.get("spec")),
                       enforce=True)

    # ---- pod templates ---------------------------------------------------------------------

    def _validate_template(self, attrs: Attributes) -> None:
        if attrs.subresource or self._exempt(attrs):
            return
        try:
            labels = _labels(self._read(NAMESPACES, "", attrs.namespace))
        except NotFound:
            _annotate(attrs, {"error": f'failed to lookup namespace "{attrs.namespace}"'})
            return
        policy, errors = policy_to_evaluate(labels, self.defaults)
        if not errors and policy.warn.level == PRIVILEGED and policy.audit.level == PRIVILEGED:
            return
        template = pod_template(attrs.resource, attrs.object or {})
        if template is None:
            return
        self._evaluate(attrs, policy, errors, _dict(template.get("metadata")),
                       _dict(template.get("spec")), enforce=False)

    # ---- the evaluation --------------------------------------------------------------------

    def _evaluate(self, attrs: Attributes, policy: Policy, errors: list[Cause], meta: dict, spec: dict,
                  *, enforce: bool) -> None:
        runtime_class = spec.get("runtimeClassName")
        if runtime_class and runtime_class in self.exemptions.runtime_classes:
            _annotate(attrs, {EXEMPT: "runtimeClass"})
            return
        annotations: dict[str, str] = {}
        if errors:
            annotations["error"] = "Failed to parse policy: " + _aggregate_causes(errors)
        results: dict[LevelVersion, AggregateResult] = {}

        def result(lv: LevelVersion) -> AggregateResult:
            found = results.get(lv)
            if found is None:
                found = results[lv] = self.evaluator.evaluate(lv, meta, spec)
            return found

        refusal = None
        if enforce:
            annotations[ENFORCE_POLICY] = str(policy.enforce)
            enforced = result(policy.enforce)
            if not enforced.allowed:
                refusal = forbidden(attrs, f'violates PodSecurity "{policy.enforce}": '
                                           f"{enforced.forbidden_detail()}")
        audited = result(policy.audit)
        if not audited.allowed:
            annotations[AUDIT_VIOLATIONS] = (f'would violate PodSecurity "{policy.audit}": '
                                             f"{audited.forbidden_detail()}")
        _annotate(attrs, annotations)
        if refusal is not None:
            raise refusal   # a refused request carries no warnings
        warned = result(policy.warn)
        if not warned.allowed:
            _warn(attrs, f'would violate PodSecurity "{policy.warn}": {warned.forbidden_detail()}')

    # ---- namespaces ------------------------------------------------------------------------

    def _validate_namespace(self, attrs: Attributes) -> None:
        if attrs.subresource:
            return
        namespace = attrs.object or {}
        name = attrs.name or str(_dict(namespace.get("metadata")).get("name") or "")
        labels = _labels(namespace)
        policy, errors = policy_to_evaluate(labels, self.defaults)
        if attrs.operation == CREATE:
            if errors:
                raise Invalid("Namespace", name, errors)
            if name in self.exemptions.namespaces:
                self._warn_exempt(attrs, name, policy, labels)
            return
        old_policy, old_errors = policy_to_evaluate(_labels(attrs.old_object or {}), self.defaults)
        if errors and (not old_errors or errors != old_errors):
            raise Invalid("Namespace", name, errors)
        new, old = policy.enforce, old_policy.enforce
        if (new == old or new.level == PRIVILEGED
                or (new.version == old.version and compare_levels(new.level, old.level) < 1)):
            return
        if name in self.exemptions.namespaces:
            self._warn_exempt(attrs, name, policy, labels)
            return
        for warning in self.check_existing_pods(name, new):
            _warn(attrs, warning)

    def check_existing_pods(self, namespace: str, enforce: LevelVersion) -> list[str]:
        """``EvaluatePodsInNamespace``: the warnings for the namespace's pods that the new
        enforce level would refuse -- one pod per controller first, at most 3000 pods."""
        pods = self._prioritized(self.store.list(PODS, namespace=namespace).items)
        total = len(pods)
        pods = pods[:MAX_PODS_TO_CHECK]
        first_pod: dict[str, str] = {}
        counts: dict[str, int] = {}
        for pod in pods:
            result = self.evaluator.evaluate(enforce, _dict(pod.get("metadata")), _dict(pod.get("spec")))
            if result.allowed:
                continue
            reason = result.forbidden_reason()
            pod_name = str(_dict(pod.get("metadata")).get("name") or "")
            if reason not in first_pod or pod_name < first_pod[reason]:
                first_pod[reason] = pod_name
            counts[reason] = counts.get(reason, 0) + 1
        warnings = []
        if len(pods) < total:
            warnings.append(f"new PodSecurity enforce level only checked against the first "
                            f"{len(pods)} of {total} existing pods")
        if counts:
            warnings.append(f'existing pods in namespace "{namespace}" violate the new PodSecurity '
                            f'enforce level "{enforce}"')
        per_pod = []
        for reason, count in counts.items():
            others = {1: "", 2: " (and 1 other pod)"}.get(count, f" (and {count - 1} other pods)")
            per_pod.append(f"{first_pod[reason]}{others}: {reason}")
        return warnings + sorted(per_pod)

    def _prioritized(self, pods: list[Obj]) -> list[Obj]:
        """Pods without a controller and the first of each controller, then the rest of each
        controller's pods; pods of exempt runtime classes left out."""
        first, rest = [], []
        seen: set[str] = set()
        for pod in pods:
            if _dict(pod.get("spec")).get("runtimeClassName") in self.exemptions.runtime_classes:
                continue
            owner = _controller_uid(pod)
            if owner is None:
                first.append(pod)
            elif owner in seen:
                rest.append(pod)
            else:
                seen.add(owner)
                first.append(pod)
        return first + rest

    def _warn_exempt(self, attrs: Attributes, name: str, policy: Policy, labels: dict) -> None:
        """An exempt namespace's labels are ignored: say so when they ask for more."""
        if policy.fully_privileged() or _equivalent(policy, self.defaults):
            return
        shown = []
        for mode, lv, keys in (("enforce", policy.enforce, (ENFORCE_LABEL, ENFORCE_VERSION_LABEL)),
                               ("audit", policy.audit, (AUDIT_LABEL, AUDIT_VERSION_LABEL)),
                               ("warn", policy.warn, (WARN_LABEL, WARN_VERSION_LABEL))):
            if lv.level != PRIVILEGED and any(k in labels for k in keys):
                shown.append(f"{mode}={lv}")
        _warn(attrs, f'namespace "{name}" is exempt from Pod Security, and the policy '
                     f'({", ".join(shown)}) will be ignored')

    def _exempt(self, attrs: Attributes) -> bool:
        if attrs.namespace and attrs.namespace in self.exemptions.namespaces:
            _annotate(attrs, {EXEMPT: "namespace"})
            return True
        if attrs.user and attrs.user in self.exemptions.usernames:
            _annotate(attrs, {EXEMPT: "user"})
            return True
        return False


def significant_pod_update(pod: dict, old: dict) -> bool:
    """``isSignificantPodUpdate``: only images (and added containers) can change what the
    policy sees on an existing pod -- the rest of its spec is immutable or irrelevant."""
    spec, old_spec = _dict(pod.get("spec")), _dict(old.get("spec"))
    for key in ("containers", "initContainers"):
        new_list, old_list = _containers(spec, key), _containers(old_spec, key)
        if len(new_list) != len(old_list):
            return True
        if any(a.get("image") != b.get("image") for a, b in zip(new_list, old_list)):
            return True
    old_ephemeral = {c.get("name"): c for c in _containers(old_spec, "ephemeralContainers")}
    for c in _containers(spec, "ephemeralContainers"):
        before = old_ephemeral.get(c.get("name"))
        if before is None or before.get("image") != c.get("image"):
            return True
    return False


def pod_template(resource: str, obj: dict) -> dict | None:
    """The pod template of a workload, None when it has none."""
    node: object = obj
    for key in TEMPLATE_PATHS[resource]:
        if not isinstance(node, dict):
            return None
        node = node.get(key)
    return node if isinstance(node, dict) else None


def _equivalent(a: Policy, b: Policy) -> bool:
    return (a.enforce.equivalent(b.enforce) and a.audit.equivalent(b.audit)
            and a.warn.equivalent(b.warn))


def _aggregate_causes(errors: list[Cause]) -> str:
    texts = [f"{c.field}: {c.message}" for c in errors]
    return texts[0] if len(texts) == 1 else "[" + ", ".join(texts) + "]"


def _controller_uid(pod: Obj) -> str | None:
    for ref in _dict(pod.get("metadata")).get("ownerReferences") or ():
        if isinstance(ref, dict) and ref.get("controller") is True:
            return str(ref.get("uid") or "")
    return None


def _containers(spec: dict, key: str) -> list[dict]:
    return [c for c in spec.get(key) or () if isinstance(c, dict)]


def _dict(value: object) -> dict:
    return value if isinstance(value, dict) else {}


def _labels(obj: Obj) -> dict:
    labels = _dict(obj.get("metadata")).get("labels")
    return labels if isinstance(labels, dict) else {}


def _warn(attrs: Attributes, message: str) -> None:
    attrs.options.setdefault("warnings", []).append(message)


def _annotate(attrs: Attributes, annotations: dict[str, str]) -> None:
    """``audit.AddAuditAnnotations`` with the ``pod-security.kubernetes.io/`` prefix."""
    if not annotations:
        return
    recorded = attrs.options.setdefault(AUDIT_ANNOTATIONS, {})
    for key, value in annotations.items():
        recorded[LABEL_PREFIX + key] = value
    log.debug("PodSecurity %s %s %s/%s: %s", attrs.operation, attrs.resource, attrs.namespace,
              attrs.name, annotations)


__all__ = ["Exemptions", "IGNORED_POD_SUBRESOURCES", "MAX_PODS_TO_CHECK", "PodSecurity",
           "TEMPLATE_PATHS", "pod_template", "significant_pod_update"]
