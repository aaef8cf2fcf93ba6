"""batch/v1 Job facts shared by the registry, the Job and CronJob controllers and printers:
the well-known labels and annotations (``k8s.io/api/batch/v1/types.go``) and the selector
the job strategy generates (``pkg/registry/batch/job/strategy.go`` ``generateSelector``).
"""

from __future__ import annotations

from typing import Any

from kvert.api.conditions import find_condition, is_true
from kvert.api.types import Obj

LABEL_PREFIX = "batch.kubernetes.io/"
CONTROLLER_UID_LABEL = LABEL_PREFIX + "controller-uid"
JOB_NAME_LABEL = LABEL_PREFIX + "job-name"
LEGACY_CONTROLLER_UID_LABEL = "controller-uid"
LEGACY_JOB_NAME_LABEL = "job-name"
COMPLETION_INDEX = LABEL_PREFIX + "job-completion-index"   # annotation and label
TRACKING_FINALIZER = LABEL_PREFIX + "job-tracking"
CRONJOB_SCHEDULED_TIMESTAMP = LABEL_PREFIX + "cronjob-scheduled-timestamp"
JOB_CONTROLLER_NAME = "kubernetes.io/job-controller"

# JobConditionType values
COMPLETE, FAILED, SUSPENDED = "Complete", "Failed", "Suspended"
FAILURE_TARGET, SUCCESS_CRITERIA_MET = "FailureTarget", "SuccessCriteriaMet"


def generate_selector(job: Obj) -> None:
    """Template labels naming the Job (kept where the user set them: validation then refuses
    a mismatch) and ``spec.selector.matchLabels[controller-uid]``, unless ``manualSelector``."""
    spec = job.get("spec")
    meta = job.get("metadata")
    if not isinstance(spec, dict) or not isinstance(meta, dict) or spec.get("manualSelector") is True:
        return
    template = spec.get("template")
    if not isinstance(template, dict):
        return
    tmeta = template.get("metadata")
    if tmeta is None:
        tmeta = template["metadata"] = {}
    if not isinstance(tmeta, dict):
        return
    labels = tmeta.get("labels")
    if labels is None:
        labels = tmeta["labels"] = {}
    if not isinstance(labels, dict):
        return
    name, uid = meta.get("name") or "", meta.get("uid") or ""
    for key in (LEGACY_JOB_NAME_LABEL, JOB_NAME_LABEL):
        labels.setdefault(key, name)
    for key in (LEGACY_CONTROLLER_UID_LABEL, CONTROLLER_UID_LABEL):
        labels.setdefault(key, uid)
    selector = spec.get("selector")
    if selector is None:
        selector = spec["selector"] = {}
    if not isinstance(selector, dict):
        return
    match = selector.get("matchLabels")
    if match is None:
        match = selector["matchLabels"] = {}
    if isinstance(match, dict):
        match.setdefault(CONTROLLER_UID_LABEL, uid)


def condition(job: Obj, type_: str) -> Obj | None:
    return find_condition(job.get("status"), type_)


def has_condition(job: Obj, type_: str) -> bool:
    return is_true(job.get("status"), type_)


def is_finished(job: Obj) -> bool:
    """``IsJobFinished``: a Complete or Failed condition with status True."""
    return has_condition(job, COMPLETE) or has_condition(job, FAILED)


def finished_condition(job: Obj) -> str:
    """The type of the finishing condition ("" while the Job runs)."""
    for type_ in (COMPLETE, FAILED):
        if has_condition(job, type_):
            return type_
    return ""


def format_indexes(indexes: Any) -> str:
    """The ``completedIndexes`` text: sorted, runs of three or more as ``first-last``."""
    values = sorted(set(indexes))
    parts: list[str] = []
    i = 0
    while i < len(values):
        j = i
        while j + 1 < len(values) and values[j + 1] == values[j] + 1:
            j += 1
        if j - i >= 2:
            parts.append(f"{values[i]}-{values[j]}")
        else:
            parts.extend(str(v) for v in values[i:j + 1])
        i = j + 1
    return ",".join(parts)


def parse_indexes(text: Any, completions: int) -> set[int]:
    """The indexes of a ``completedIndexes`` text (those below ``completions``)."""
    out: set[int] = set()
    if not isinstance(text, str) or not text:
        return out
    for part in text.split(","):
        first, _, last = part.partition("-")
        try:
            lo, hi = int(first), int(last or first)
        except ValueError:
            continue
        out.update(v for v in range(lo, hi + 1) if v < completions)
    return out
