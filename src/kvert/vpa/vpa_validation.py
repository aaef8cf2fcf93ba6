"""The VPA admission controller's validation of VerticalPodAutoscaler objects, as upstream VPA
1.8's (``pkg/admission-controller/resource/vpa/validation.go`` and ``handler.go``).

Upstream's admission controller refuses (422 Invalid) a VPA create or update whose spec it
cannot honour, after the API server's schema checks: the ``InPlace`` update mode, a
``startupBoost`` (spec or container policy) and the per-VPA settings (``evictAfterOOMSeconds``,
``oomBumpUpRatio``, ``oomMinBumpUp``, ``memoryAggregationInterval{Seconds,Count}``) need their
feature gate (``InPlace``, ``CPUStartupBoost``, ``PerVPAConfig``) -- unless the object being
updated already used them, so that turning a gate off does not lock existing VPAs. The
deprecated ``Auto`` mode is admitted with a warning. A VPA without ``updatePolicy`` is given
``{updateMode: Recreate}`` (upstream's default since Auto's deprecation).

As upstream's handler reads an old object on UPDATE only and passes an empty one on CREATE,
the gate exceptions come from the old object alone, and a missing ``targetRef`` is left to the
API server's own validation (kvert's refuses it with the same message).

:func:`review_vpa` returns ``(JSONPatch operations, warnings)`` or raises
:class:`~kvert.api.errors.Invalid` with upstream's field errors.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from kvert.api.errors import Cause, Invalid
from kvert.api.quantity import Quantity, QuantityError
from kvert.api.validation.common import forbidden, invalid, not_supported, required
from kvert.vpa.features import CPU_STARTUP_BOOST, IN_PLACE, PER_VPA_CONFIG, VpaGates

GROUP = "autoscaling.k8s.io"
KIND = "VerticalPodAutoscaler"
# GetUpdateModesList: the modes, sorted, without the deprecated Auto
UPDATE_MODES_LIST = ("InPlace", "InPlaceOrRecreate", "Initial", "Off", "Recreate")
UPDATE_MODES = (*UPDATE_MODES_LIST, "Auto")
SCALING_MODES = ("Auto", "Off")
BOOST_TYPES = ("Factor", "Quantity")
PER_VPA_POLICY_FIELDS = ("oomBumpUpRatio", "oomMinBumpUp", "memoryAggregationIntervalCount",
                         "memoryAggregationIntervalSeconds")
DEFAULT_UPDATE_POLICY = {"updateMode": "Recreate"}


def _dict(value: Any) -> Mapping:
    return value if isinstance(value, Mapping) else {}


def _list(value: Any) -> list:
    return value if isinstance(value, list) else []


def _policies(vpa: Mapping | None) -> list[Mapping]:
    spec = _dict((vpa or {}).get("spec"))
    return [p for p in _list(_dict(spec.get("resourcePolicy")).get("containerPolicies")) if isinstance(p, Mapping)]


class Options:
    """``VPAValidationOptions`` from the gates and the old object (None on create)."""

    def __init__(self, gates: VpaGates, old: Mapping | None) -> None:
        spec = _dict((old or {}).get("spec"))
        policies = _policies(old)
        update = _dict(spec.get("updatePolicy"))
        self.allow_cpu_startup_boost = gates.cpu_startup_boost or (
            _dict(spec.get("startupBoost")).get("cpu") is not None
            or any(p.get("startupBoost") is not None for p in policies))
        self.allow_per_vpa_config = gates.per_vpa_config or (
            update.get("evictAfterOOMSeconds") is not None
            or any(p.get(f) is not None for p in policies for f in PER_VPA_POLICY_FIELDS))
        self.allow_in_place = gates.in_place or update.get("updateMode") == "InPlace"
        self.existing_controlled_resources = {
            r for p in policies for r in _list(p.get("controlledResources")) if isinstance(r, str)}


def _quantity(value: Any) -> Quantity | None:
    try:
        return Quantity.parse(value)
    except (QuantityError, TypeError, ValueError):
        return None


def _resolution(path: str, resource: str, q: Quantity) -> list[Cause]:
    if resource == "cpu" and q.nanos % 10**6:
        return [invalid(path, str(q), "must be a whole number of milli CPUs")]
    if resource == "memory" and q.nanos % 10**9:
        return [invalid(path, str(q), "must be a whole number of bytes")]
    return []


def _too_many(path: str, actual: int, limit: int) -> Cause:
    """``field.TooMany`` as apimachinery words it (one item, several items)."""
    items = "item" if limit == 1 else "items"
    return Cause(path, f"Too many: {actual}: must have at most {limit} {items}", "FieldValueTooMany")


def _go_float(value: float) -> float | int:
    """A float64 as Go's %v shows it (a whole value without a fraction)."""
    return int(value) if float(value).is_integer() else value


def validate_vpa(vpa: Mapping, options: Options) -> tuple[list[str], list[Cause]]:
    """``validateVPA``: (warnings, field errors)."""
    spec = _dict(vpa.get("spec"))
    warnings: list[str] = []
    errs: list[Cause] = []
    if spec.get("updatePolicy") is not None:
        w, e = _update_policy(_dict(spec.get("updatePolicy")), "spec.updatePolicy", options)
        warnings += w
        errs += e
    if spec.get("resourcePolicy") is not None:
        w, e = _resource_policy(_dict(spec.get("resourcePolicy")), "spec.resourcePolicy", options)
        warnings += w
        errs += e
    if spec.get("startupBoost") is not None:
        errs += _startup_boost(_dict(spec.get("startupBoost")), "spec.startupBoost", options)
    recommenders = _list(spec.get("recommenders"))
    if len(recommenders) > 1:
        errs.append(_too_many("spec.recommenders", len(recommenders), 1))
    return warnings, errs


def _update_policy(policy: Mapping, path: str, options: Options) -> tuple[list[str], list[Cause]]:
    warnings: list[str] = []
    errs: list[Cause] = []
    mode = policy.get("updateMode")
    if mode is None:
        errs.append(required(f"{path}.updateMode", "updateMode is required if UpdatePolicy is used"))
    else:
        if mode not in UPDATE_MODES:
            errs.append(not_supported(f"{path}.updateMode", mode, UPDATE_MODES_LIST))
        if mode == "Auto":
            warnings.append(
                f'{path}: "Auto" mode is deprecated and will be removed in a future API version. Use explicit '
                f"update modes like: [{' '.join(UPDATE_MODES_LIST)}]. See "
                "https://github.com/kubernetes/autoscaler/issues/8424 for more details.")
        if mode == "InPlace" and not options.allow_in_place:
            errs.append(forbidden(f"{path}.updateMode", f"in order to use UpdateMode InPlace, you must enable "
                                                         f"feature gate {IN_PLACE} in the admission-controller args"))
    min_replicas = policy.get("minReplicas")
    if isinstance(min_replicas, int) and not isinstance(min_replicas, bool) and min_replicas <= 0:
        errs.append(invalid(f"{path}.minReplicas", min_replicas, "minReplicas has to be positive"))
    evict_after = policy.get("evictAfterOOMSeconds")
    if evict_after is not None:
        if not options.allow_per_vpa_config:
            errs.append(_per_vpa_forbidden(f"{path}.evictAfterOOMSeconds"))
        elif isinstance(evict_after, int) and evict_after < 1:
            errs.append(invalid(f"{path}.evictAfterOOMSeconds", evict_after, "must be greater than or equal to 1"))
    return warnings, errs


def _per_vpa_forbidden(path: str) -> Cause:
    return forbidden(path, f"not supported when feature flag {PER_VPA_CONFIG} is disabled")


def _resource_policy(resource_policy: Mapping, path: str, options: Options) -> tuple[list[str], list[Cause]]:
    warnings: list[str] = []
    errs: list[Cause] = []
    for i, policy in enumerate(_list(resource_policy.get("containerPolicies"))):
        p = f"{path}.containerPolicies[{i}]"
        if not isinstance(policy, Mapping):
            continue
        if not policy.get("containerName"):
            errs.append(required(f"{p}.containerName"))
        mode = policy.get("mode")
        if mode is not None and mode not in SCALING_MODES:
            errs.append(not_supported(f"{p}.mode", mode, SCALING_MODES))
        mins = {r: q for r, v in _dict(policy.get("minAllowed")).items() if (q := _quantity(v)) is not None}
        maxs = {r: q for r, v in _dict(policy.get("maxAllowed")).items() if (q := _quantity(v)) is not None}
        for resource, lo in mins.items():
            errs += _resolution(f"{p}.minAllowed[{resource}]", resource, lo)
            hi = maxs.get(resource)
            if hi is not None and hi < lo:
                errs.append(invalid(f"{p}.maxAllowed[{resource}]", str(hi),
                                    f'max resource for {resource} is lower than min of "{lo}"'))
        for resource, hi in maxs.items():
            errs += _resolution(f"{p}.maxAllowed[{resource}]", resource, hi)
        if mode == "Off" and policy.get("controlledValues") == "RequestsAndLimits":
            errs.append(forbidden(f"{p}.controlledValues",
                                  "controlledValues shouldn't be specified if container scaling mode is off"))
        for j, resource in enumerate(_list(policy.get("controlledResources"))):
            if resource in ("cpu", "memory"):
                continue
            rp = f"{p}.controlledResources[{j}]"
            if resource in options.existing_controlled_resources:
                warnings.append(f'{rp}: unsupported value "{resource}" is allowed only because it is present in the '
                                'existing VPA object; supported values: "cpu", "memory"')
            else:
                errs.append(not_supported(rp, resource, ("cpu", "memory")))
        errs += _per_vpa_policy(policy, p, options)
        if policy.get("startupBoost") is not None:
            errs += _startup_boost(_dict(policy.get("startupBoost")), f"{p}.startupBoost", options)
    return warnings, errs


def _per_vpa_policy(policy: Mapping, p: str, options: Options) -> list[Cause]:
    errs: list[Cause] = []
    for field in PER_VPA_POLICY_FIELDS:
        value = policy.get(field)
        if value is None:
            continue
        if not options.allow_per_vpa_config:
            errs.append(_per_vpa_forbidden(f"{p}.{field}"))
            continue
        if field == "oomBumpUpRatio":
            q = _quantity(value)
            if q is not None and q.milli_value() < 1000:
                errs.append(invalid(f"{p}.{field}", _go_float(q.milli_value() / 1000.0),
                                    "must be greater than or equal to 1.0"))
        elif field == "oomMinBumpUp":
            q = _quantity(value)
            if q is not None and q.value() < 0:
                errs.append(invalid(f"{p}.{field}", q.value(), "must be greater than or equal to 0"))
        elif isinstance(value, int) and value < 1:
            errs.append(invalid(f"{p}.{field}", value, "must be greater than or equal to 1"))
    return errs


def _startup_boost(boost: Mapping, path: str, options: Options) -> list[Cause]:
    if not options.allow_cpu_startup_boost:
        return [forbidden(path, f"in order to use startupBoost, you must enable feature gate {CPU_STARTUP_BOOST} "
                                "in the admission-controller args")]
    cpu = boost.get("cpu")
    if not isinstance(cpu, Mapping):
        return []
    cpu_path = f"{path}.cpu"
    kind = cpu.get("type")
    if not kind:
        return [required(f"{cpu_path}.type", "must be either Factor or Quantity")]
    if kind == "Factor":
        factor = cpu.get("factor")
        if factor is None:
            return [required(f"{cpu_path}.factor", "required when type is Factor")]
        if isinstance(factor, int) and factor < 1:
            return [invalid(f"{cpu_path}.factor", factor, "must be >= 1 for type Factor")]
        return []
    if kind == "Quantity":
        if cpu.get("quantity") is None:
            return [required(f"{cpu_path}.quantity", "required when type is Quantity")]
        q = _quantity(cpu.get("quantity"))
        return _resolution(f"{cpu_path}.quantity", "cpu", q) if q is not None else []
    return [not_supported(f"{cpu_path}.type", kind, BOOST_TYPES)]


def review_vpa(vpa: Mapping, old: Mapping | None, gates: VpaGates) -> tuple[list[dict], list[str]]:
    """A VPA create (``old`` None) or update: (JSONPatch operations, warnings); raises
    :class:`Invalid` (422) with upstream's field errors."""
    warnings, errs = validate_vpa(vpa, Options(gates, old))
    if errs:
        raise Invalid(KIND, str(_dict(vpa.get("metadata")).get("name") or ""), errs, GROUP)
    ops: list[dict] = []
    if _dict(vpa.get("spec")).get("updatePolicy") is None and isinstance(vpa.get("spec"), Mapping):
        ops.append({"op": "add", "path": "/spec/updatePolicy", "value": dict(DEFAULT_UPDATE_POLICY)})
    return ops, warnings


def gates_needed(vpas: Iterable[Mapping]) -> VpaGates:
    """The gates that admit ``vpas`` (what a simulated policy that names these features turns
    on): an object "already using" a feature is what upstream's validation lets through."""
    needed: dict[str, bool] = {}
    for vpa in vpas:
        uses = Options(VpaGates(), vpa)
        for gate, used in ((CPU_STARTUP_BOOST, uses.allow_cpu_startup_boost),
                           (PER_VPA_CONFIG, uses.allow_per_vpa_config), (IN_PLACE, uses.allow_in_place)):
            if used:
                needed[gate] = True
    return VpaGates(needed)


__all__ = ["DEFAULT_UPDATE_POLICY", "Options", "gates_needed", "UPDATE_MODES_LIST", "review_vpa", "validate_vpa"]
