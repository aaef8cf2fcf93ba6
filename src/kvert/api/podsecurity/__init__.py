"""The Pod Security Standards as pod-security-admission 1.35 evaluates them: levels and the
namespace labels that choose them (:mod:`.levels`), the versioned check table and its
messages (:mod:`.checks`), and the baseline and restricted checks (:mod:`.baseline`,
:mod:`.restricted`). The admission plugin is ``kvert.apiserver.admission.podsecurity``."""

from __future__ import annotations

from .baseline import BASELINE_CHECKS
from .checks import AggregateResult, Check, CheckResult, Evaluator
from .levels import (
    AUDIT_LABEL,
    AUDIT_VERSION_LABEL,
    BASELINE,
    DEFAULT_POLICY,
    ENFORCE_LABEL,
    ENFORCE_VERSION_LABEL,
    LABEL_PREFIX,
    LATEST,
    LEVELS,
    PRIVILEGED,
    RESTRICTED,
    WARN_LABEL,
    WARN_VERSION_LABEL,
    LevelVersion,
    Policy,
    Version,
    compare_levels,
    policy_to_evaluate,
    v1,
)
from .restricted import RESTRICTED_CHECKS

DEFAULT_CHECKS = [*BASELINE_CHECKS, *RESTRICTED_CHECKS]


def default_evaluator() -> Evaluator:
    """Every check of 1.35 (``latest`` is v1.35: the newest check's minimum version)."""
    return Evaluator(DEFAULT_CHECKS)


__all__ = [
    "AUDIT_LABEL", "AUDIT_VERSION_LABEL", "AggregateResult", "BASELINE", "BASELINE_CHECKS", "Check",
    "CheckResult", "DEFAULT_CHECKS", "DEFAULT_POLICY", "ENFORCE_LABEL", "ENFORCE_VERSION_LABEL",
    "Evaluator", "LABEL_PREFIX", "LATEST", "LEVELS", "LevelVersion", "PRIVILEGED", "Policy",
    "RESTRICTED", "RESTRICTED_CHECKS", "Version", "WARN_LABEL", "WARN_VERSION_LABEL",
    "compare_levels", "default_evaluator", "policy_to_evaluate", "v1",
]
