"""batch/v1 Job and CronJob (``pkg/apis/batch/validation/validation.go``).

Job: the generated selector (template labels ``controller-uid``/``job-name`` and the
selector's ``batch.kubernetes.io/controller-uid``), counts >= 0, ``completionMode``
(``Indexed`` needs ``completions`` and ``parallelism`` <= 100000), the selector matching
the template, the template's ``restartPolicy`` ``OnFailure`` or ``Never``,
``podReplacementPolicy``, pod failure policy actions; on update ``selector``,
``completionMode`` and (unless the Job is suspended) ``template`` are immutable.
CronJob: name <= 52 characters, ``schedule`` (robfig/cron's parser, no ``TZ=``),
``timeZone``, ``concurrencyPolicy``, deadlines and history limits >= 0, and the job
template (no selector: it is generated for each Job).
"""

from __future__ import annotations

import re
import zoneinfo
from typing import Any

from kvert.api import cron, jobs
from kvert.api.types import Obj

from .common import (
    IS_NEGATIVE_MSG,
    Causes,
    child,
    dict_field,
    get_dict,
    get_int,
    get_str,
    immutable,
    invalid,
    not_supported,
    required,
    type_error,
)
from .diff import normalized
from .meta import selector_from, validate_label_selector, validate_object_meta, validate_object_meta_update
from .pod import validate_pod_template_spec

COMPLETION_MODES = ("NonIndexed", "Indexed")
REPLACEMENT_POLICIES = ("TerminatingOrFailed", "Failed")
RULE_ACTIONS = ("Count", "FailIndex", "FailJob", "Ignore")
CONCURRENCY_POLICIES = ("Allow", "Forbid", "Replace")
MAX_PARALLELISM_FOR_INDEXED = 100000
# DNS1035LabelMaxLength - 11: the Jobs' names carry an 11-character suffix
CRONJOB_NAME_MAX = 52
_TIME_ZONE_PART = re.compile(r"^[A-Za-z\.\-_0-9+]{1,14}$")


def _nonnegative(spec: Obj, field: str, path: str, errs: Causes, bits: int = 32) -> None:
    value = get_int(spec, field, path, errs, bits=bits)
    if value is not None and value < 0:
        errs.append(invalid(child(path, field), value, IS_NEGATIVE_MSG))


def _validate_pod_failure_policy(policy: Any, path: str) -> Causes:
    if policy is None:
        return []
    if not isinstance(policy, dict):
        return [type_error(path, policy, "object")]
    errs: Causes = []
    rules = policy.get("rules") or []
    if not isinstance(rules, list):
        return errs + [type_error(child(path, "rules"), rules, "array")]
    for i, rule in enumerate(rules):
        rule_path = f"{path}.rules[{i}]"
        if not isinstance(rule, dict):
            errs.append(type_error(rule_path, rule, "object"))
            continue
        action = rule.get("action")
        if not action:
            errs.append(required(child(rule_path, "action"), ""))
        elif action not in RULE_ACTIONS:
            errs.append(not_supported(child(rule_path, "action"), action, RULE_ACTIONS))
        has_codes, has_conditions = rule.get("onExitCodes") is not None, bool(rule.get("onPodConditions"))
        if has_codes == has_conditions:
            errs.append(required(rule_path, "specifying one of OnExitCodes and OnPodConditions is required"))
    return errs


def validate_job_spec(spec: Obj, path: str, *, template_only: bool = False) -> Causes:
    """``validateJobSpec`` (+ the selector checks of ``ValidateJobSpec`` for a Job)."""
    errs: Causes = []
    for field in ("parallelism", "completions", "backoffLimit", "ttlSecondsAfterFinished",
                  "backoffLimitPerIndex", "maxFailedIndexes"):
        _nonnegative(spec, field, path, errs)
    _nonnegative(spec, "activeDeadlineSeconds", path, errs, bits=64)
    mode = get_str(spec, "completionMode", path, errs)
    if mode == "Indexed":
        if spec.get("completions") is None:
            errs.append(required(child(path, "completions"), "when completion mode is Indexed"))
        parallelism = spec.get("parallelism")
        if isinstance(parallelism, int) and parallelism > MAX_PARALLELISM_FOR_INDEXED:
            errs.append(invalid(child(path, "parallelism"), parallelism,
                                f"must be less than or equal to {MAX_PARALLELISM_FOR_INDEXED} "
                                "when completion mode is Indexed"))
    elif mode and mode not in COMPLETION_MODES:
        errs.append(not_supported(child(path, "completionMode"), mode, COMPLETION_MODES))
    template = spec.get("template")
    tpl_path = child(path, "template")
    if not template_only:
        errs.extend(_validate_selector(spec, path, template))
    errs.extend(validate_pod_template_spec(template, tpl_path))
    tpl_spec = (template or {}).get("spec") if isinstance(template, dict) else None
    restart = (tpl_spec or {}).get("restartPolicy") if isinstance(tpl_spec, dict) else None
    restart_path = child(tpl_path, "spec.restartPolicy")
    if restart in (None, "", "Always"):
        errs.append(required(restart_path, 'valid values: "OnFailure", "Never"'))
    elif restart not in ("OnFailure", "Never"):
        errs.append(not_supported(restart_path, restart, ("OnFailure", "Never")))
    policy = spec.get("podFailurePolicy")
    if policy is not None and restart not in (None, "", "Always", "Never"):
        errs.append(invalid(restart_path, restart,
                            'only "Never" is supported when podFailurePolicy is specified'))
    errs.extend(_validate_pod_failure_policy(policy, child(path, "podFailurePolicy")))
    replacement = get_str(spec, "podReplacementPolicy", path, errs)
    if replacement:
        if replacement not in REPLACEMENT_POLICIES:
            errs.append(not_supported(child(path, "podReplacementPolicy"), replacement, REPLACEMENT_POLICIES))
        elif policy is not None and replacement != "Failed":
            errs.append(not_supported(child(path, "podReplacementPolicy"), replacement, ("Failed",)))
    return errs


def _validate_selector(spec: Obj, path: str, template: Any) -> Causes:
    selector = spec.get("selector")
    sel_path = child(path, "selector")
    if selector is None:
        return [required(sel_path, "")]
    errs = validate_label_selector(selector, sel_path)
    if errs or not isinstance(template, dict):
        return errs
    matcher = selector_from(selector)
    meta = dict_field(template, "metadata")
    labels = dict_field(meta, "labels")
    if matcher is not None and not matcher.matches(labels):
        errs.append(invalid(child(path, "template.metadata.labels"), labels,
                            "`selector` does not match template `labels`"))
    return errs


def _validate_generated_selector(job: Obj, spec: Obj) -> Causes:
    """``validateGeneratedSelector``: what ``generateSelector`` wrote is still there."""
    if spec.get("manualSelector") is True:
        return []
    meta = dict_field(job, "metadata")
    template = dict_field(spec, "template")
    tmeta = dict_field(template, "metadata")
    labels = tmeta.get("labels")
    if labels is None or not isinstance(labels, dict):
        return []
    errs: Causes = []
    uid, name = meta.get("uid") or "", meta.get("name") or ""
    for key, expected in ((jobs.LEGACY_CONTROLLER_UID_LABEL, uid), (jobs.LEGACY_JOB_NAME_LABEL, name),
                          (jobs.CONTROLLER_UID_LABEL, uid), (jobs.JOB_NAME_LABEL, name)):
        label_path = f"spec.template.metadata.labels[{key}]"
        if key not in labels:
            errs.append(required(label_path, expected))
        elif labels[key] != expected:
            errs.append(invalid(label_path, labels, f"must be '{expected}'"))
    selector = spec.get("selector")
    if selector is None:
        return errs + [required("spec.selector", "")]
    matcher = selector_from(selector)
    if matcher is not None and not matcher.matches({jobs.CONTROLLER_UID_LABEL: uid}):
        errs.append(invalid("spec.selector", selector, "`selector` not auto-generated"))
    return errs


def validate_job(job: Obj) -> Causes:
    errs = validate_object_meta(job, namespaced=True)
    spec = get_dict(job, "spec", "", errs)
    errs.extend(_validate_generated_selector(job, spec))
    errs.extend(validate_job_spec(spec, "spec"))
    return errs


def validate_job_update(new: Obj, old: Obj) -> Causes:
    errs = validate_object_meta_update(new, old)
    spec = get_dict(new, "spec", "", errs)
    old_spec = dict_field(old, "spec")
    errs.extend(validate_job_spec(spec, "spec"))
    fields = ["selector", "completionMode", "podFailurePolicy", "backoffLimitPerIndex"]
    # the template may change while the Job is suspended (mutable scheduling directives)
    if not old_spec.get("suspend"):
        fields.append("template")
    for field in fields:
        if normalized(spec.get(field)) != normalized(old_spec.get(field)):
            errs.append(immutable(child("spec", field), spec.get(field)))
    return errs


def validate_job_status_update(new: Obj, old: Obj) -> Causes:
    """``ValidateJobStatusUpdate``: the counters are never negative."""
    errs = validate_object_meta_update(new, old)
    status = get_dict(new, "status", "", errs)
    for field in ("active", "succeeded", "failed", "ready", "terminating"):
        _nonnegative(status, field, "status", errs)
    return errs


# -- CronJob -----------------------------------------------------------------------------------

def _validate_time_zone(zone: Any, path: str) -> Causes:
    if zone is None:
        return []
    if not isinstance(zone, str):
        return [type_error(path, zone, "string")]
    if zone == "":
        return [invalid(path, zone, "timeZone must be nil or non-empty string")]
    for part in zone.split("/"):
        if part in (".", "..") or part.startswith("-") or not _TIME_ZONE_PART.match(part):
            return [invalid(path, zone, f"unknown time zone {zone}")]
    if zone.lower() == "local":
        return [invalid(path, zone, "timeZone must be an explicit time zone as defined in "
                                    "https://www.iana.org/time-zones")]
    try:
        zoneinfo.ZoneInfo(zone)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        return [invalid(path, zone, f"unknown time zone {zone}")]
    return []


def _validate_schedule(spec: Obj, path: str, errs: Causes) -> None:
    schedule = get_str(spec, "schedule", path, errs)
    sched_path = child(path, "schedule")
    if not schedule:
        errs.append(required(sched_path, ""))
        return
    if "TZ" in schedule:
        detail = ("cannot use both timeZone field and TZ or CRON_TZ in schedule"
                  if spec.get("timeZone") is not None
                  else "cannot use TZ or CRON_TZ in schedule, use timeZone field instead")
        errs.append(invalid(sched_path, schedule, detail))
        return
    try:
        cron.parse(schedule)
    except cron.CronError as e:
        errs.append(invalid(sched_path, schedule, str(e)))


def _validate_cron_job_spec(spec: Obj, path: str) -> Causes:
    errs: Causes = []
    _validate_schedule(spec, path, errs)
    errs.extend(_validate_time_zone(spec.get("timeZone"), child(path, "timeZone")))
    _nonnegative(spec, "startingDeadlineSeconds", path, errs, bits=64)
    for field in ("successfulJobsHistoryLimit", "failedJobsHistoryLimit"):
        _nonnegative(spec, field, path, errs)
    policy = get_str(spec, "concurrencyPolicy", path, errs)
    if not policy:
        errs.append(required(child(path, "concurrencyPolicy"), ""))
    elif policy not in CONCURRENCY_POLICIES:
        errs.append(not_supported(child(path, "concurrencyPolicy"), policy, CONCURRENCY_POLICIES))
    tpl_path = child(path, "jobTemplate")
    template = get_dict(spec, "jobTemplate", path, errs)
    job_spec = get_dict(template, "spec", tpl_path, errs)
    if job_spec.get("selector") is not None:
        errs.append(invalid(child(tpl_path, "spec.selector"), job_spec["selector"],
                            "`selector` will be auto-generated"))
    if job_spec.get("manualSelector") is True:
        errs.append(not_supported(child(tpl_path, "spec.manualSelector"), "true", ("nil", "false")))
    errs.extend(validate_job_spec(job_spec, child(tpl_path, "spec"), template_only=True))
    return errs


def validate_cron_job(cj: Obj) -> Causes:
    errs = validate_object_meta(cj, namespaced=True)
    name = (cj.get("metadata") or {}).get("name") if isinstance(cj.get("metadata"), dict) else None
    if isinstance(name, str) and len(name) > CRONJOB_NAME_MAX:
        errs.append(invalid("metadata.name", name, f"must be no more than {CRONJOB_NAME_MAX} characters"))
    errs.extend(_validate_cron_job_spec(get_dict(cj, "spec", "", errs), "spec"))
    return errs


def validate_cron_job_update(new: Obj, old: Obj) -> Causes:
    errs = validate_object_meta_update(new, old)
    errs.extend(_validate_cron_job_spec(get_dict(new, "spec", "", errs), "spec"))
    return errs


def validate_cron_job_status_update(new: Obj, old: Obj) -> Causes:
    return validate_object_meta_update(new, old)
