"""Pod Security levels, policy versions and the namespace labels that choose them
(``k8s.io/pod-security-admission/api``: constants.go, helpers.go).

A namespace labelled ``pod-security.kubernetes.io/enforce=restricted`` (optionally with
``...-version=v1.30``) enforces that level; ``audit`` and ``warn`` label the levels that
are only recorded or reported. Unlabelled modes fall back to the defaults of the
AdmissionConfiguration kube-apiserver runs without one: ``privileged:latest`` for all three.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from kvert.api.errors import Cause, invalid

PRIVILEGED, BASELINE, RESTRICTED = "privileged", "baseline", "restricted"
LEVELS = (PRIVILEGED, BASELINE, RESTRICTED)

LABEL_PREFIX = "pod-security.kubernetes.io/"
ENFORCE_LABEL = LABEL_PREFIX + "enforce"
ENFORCE_VERSION_LABEL = LABEL_PREFIX + "enforce-version"
AUDIT_LABEL = LABEL_PREFIX + "audit"
AUDIT_VERSION_LABEL = LABEL_PREFIX + "audit-version"
WARN_LABEL = LABEL_PREFIX + "warn"
WARN_VERSION_LABEL = LABEL_PREFIX + "warn-version"

# audit annotation keys, prefixed with LABEL_PREFIX when recorded
AUDIT_VIOLATIONS = "audit-violations"
ENFORCE_POLICY = "enforce-policy"
EXEMPT = "exempt"

_VERSION = re.compile(r"^v1\.([0-9]|[1-9][0-9]*)$")
_LEVEL_ERROR = "must be one of " + ", ".join(LEVELS)
_VERSION_ERROR = 'must be "latest" or "v1.x"'


@dataclass(frozen=True, order=False)
class Version:
    """A policy version: ``v1.N``, or ``latest`` (newer than every numbered one)."""

    minor: int = 0
    latest: bool = False

    def __str__(self) -> str:
        return "latest" if self.latest else f"v1.{self.minor}"

    def older(self, other: Version) -> bool:
        if self.latest:
            return False
        return other.latest or self.minor < other.minor


LATEST = Version(latest=True)


def v1(minor: int) -> Version:
    return Version(minor)


@dataclass(frozen=True)
class LevelVersion:
    level: str
    version: Version = LATEST

    def __str__(self) -> str:
        return f"{self.level}:{self.version}"

    def equivalent(self, other: LevelVersion) -> bool:
        """Both privileged (whatever their versions), or the same level and version."""
        return (self.level == PRIVILEGED and other.level == PRIVILEGED) or self == other


@dataclass(frozen=True)
class Policy:
    enforce: LevelVersion = LevelVersion(PRIVILEGED)
    audit: LevelVersion = LevelVersion(PRIVILEGED)
    warn: LevelVersion = LevelVersion(PRIVILEGED)

    def fully_privileged(self) -> bool:
        return PRIVILEGED == self.enforce.level == self.audit.level == self.warn.level


DEFAULT_POLICY = Policy()


def compare_levels(a: str, b: str) -> int:
    """-1, 0 or 1 as ``a`` is less, as or more strict than ``b``."""
    if a == b:
        return 0
    if a == PRIVILEGED:
        return -1
    if a == RESTRICTED:
        return 1
    if b == PRIVILEGED:
        return 1
    if b == RESTRICTED:
        return -1
    return 0


def parse_level(text: str) -> tuple[str, str]:
    """The level and an error; an unknown level reads as restricted (fail closed)."""
    if text in LEVELS:
        return text, ""
    return RESTRICTED, _LEVEL_ERROR


def parse_version(text: str) -> tuple[Version, str]:
    """The version and an error; an unparsable version reads as latest."""
    if text == "latest":
        return LATEST, ""
    match = _VERSION.match(text)
    if not match:
        return LATEST, _VERSION_ERROR
    return Version(int(match.group(1))), ""


@dataclass
class _Mode:
    level: str
    version: Version
    errors: list[Cause] = field(default_factory=list)


def policy_to_evaluate(labels: Mapping[str, str] | None,
                       defaults: Policy = DEFAULT_POLICY) -> tuple[Policy, list[Cause]]:
    """``PolicyToEvaluate``: the namespace's policy from its labels, and one cause per
    invalid label (``metadata.labels[KEY]``). An invalid enforce level enforces
    restricted; an invalid audit or warn level is privileged (fail open). A namespace that
    sets only a stricter enforce level warns at that level too."""
    if not labels:
        return defaults, []
    errors: list[Cause] = []

    def mode(level_label: str, version_label: str, default: LevelVersion,
             fail_open: bool) -> tuple[LevelVersion, bool]:
        level, version, valid_level = default.level, default.version, False
        if level_label in labels:
            text = str(labels[level_label])
            level, error = parse_level(text)
            valid_level = not error
            if error:
                errors.append(invalid(f"metadata.labels[{level_label}]", text, error))
                if fail_open:
                    level = PRIVILEGED
        if version_label in labels:
            text = str(labels[version_label])
            version, error = parse_version(text)
            if error:
                errors.append(invalid(f"metadata.labels[{version_label}]", text, error))
        return LevelVersion(level, version), valid_level

    enforce, has_enforce = mode(ENFORCE_LABEL, ENFORCE_VERSION_LABEL, defaults.enforce, False)
    audit, _ = mode(AUDIT_LABEL, AUDIT_VERSION_LABEL, defaults.audit, True)
    warn, _ = mode(WARN_LABEL, WARN_VERSION_LABEL, defaults.warn, True)
    if (WARN_LABEL not in labels and has_enforce
            and compare_levels(enforce.level, warn.level) > 0):
        version = warn.version if WARN_VERSION_LABEL in labels else enforce.version
        warn = LevelVersion(enforce.level, version)
    return Policy(enforce, audit, warn), errors
