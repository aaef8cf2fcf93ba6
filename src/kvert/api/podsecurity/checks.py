"""What every Pod Security check shares (``k8s.io/pod-security-admission/policy``: checks.go,
registry.go, helpers.go, visitor.go): results and their aggregation into upstream's
messages, the versioned check table, and the helpers that word the details.

A check takes the pod's (or template's) metadata and spec as the API's JSON and says
whether the pod is allowed and, if not, a short reason (``host namespaces``) and a detail
(``hostNetwork=true``). A check has one or more versions, each applying from a minimum
policy version on; a restricted check may override baseline checks it supersedes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from .levels import BASELINE, PRIVILEGED, RESTRICTED, LevelVersion, Version

Meta = dict[str, Any]
Spec = dict[str, Any]


@dataclass(frozen=True)
class CheckResult:
    allowed: bool = True
    reason: str = ""
    detail: str = ""


ALLOWED = CheckResult()
UNKNOWN_REASON = "unknown forbidden reason"


def forbid(reason: str, detail: str = "") -> CheckResult:
    return CheckResult(False, reason, detail)


@dataclass(frozen=True)
class AggregateResult:
    """The forbidden results of a pod's checks, in check order."""

    reasons: tuple[str, ...] = ()
    details: tuple[str, ...] = ()

    @property
    def allowed(self) -> bool:
        return not self.reasons

    def forbidden_reason(self) -> str:
        """``host ports, privileged``: what a namespace-wide check names per pod."""
        return ", ".join(self.reasons)

    def forbidden_detail(self) -> str:
        """``hostPort (container "a" uses hostPort 80), privileged (...)``: the message for
        one object, each reason followed by its detail in parentheses when it has one."""
        return ", ".join(f"{r} ({d})" if d else r for r, d in zip(self.reasons, self.details))


def aggregate(results: list[CheckResult]) -> AggregateResult:
    bad = [r for r in results if not r.allowed]
    return AggregateResult(tuple(r.reason or UNKNOWN_REASON for r in bad),
                           tuple(r.detail for r in bad))


CheckFn = Callable[[Meta, Spec], CheckResult]


@dataclass(frozen=True)
class VersionedCheck:
    minimum: Version
    check: CheckFn
    overrides: tuple[str, ...] = ()   # baseline check IDs this (restricted) version replaces


@dataclass(frozen=True)
class Check:
    id: str
    level: str                                   # BASELINE or RESTRICTED
    versions: tuple[VersionedCheck, ...] = field(default_factory=tuple)

    def at(self, version: Version) -> VersionedCheck | None:
        """The version of this check that applies at policy ``version`` (None before its
        first)."""
        chosen = None
        for v in self.versions:
            if not version.older(v.minimum):
                chosen = v
        return chosen


class Evaluator:
    """``checkRegistry``: the checks of each level at each policy version. ``latest`` and
    versions newer than the newest check's minimum evaluate as that newest version.
    Baseline checks come first, then restricted ones, each group ordered by check ID, so
    messages list violations in upstream's order."""

    def __init__(self, checks: list[Check]):
        ids = [c.id for c in checks]
        if len(set(ids)) != len(ids):
            raise ValueError("duplicate check IDs")
        baseline = sorted((c for c in checks if c.level == BASELINE), key=lambda c: c.id)
        restricted = sorted((c for c in checks if c.level == RESTRICTED), key=lambda c: c.id)
        self._baseline, self._restricted = baseline, restricted
        self.max_version = Version(max(v.minimum.minor for c in checks for v in c.versions))
        self._cache: dict[tuple[str, Version], list[CheckFn]] = {}

    def checks_for(self, lv: LevelVersion) -> list[CheckFn]:
        if lv.level == PRIVILEGED:
            return []
        version = self.max_version if self.max_version.older(lv.version) else lv.version
        key = (lv.level, version)
        fns = self._cache.get(key)
        if fns is None:
            fns = self._cache[key] = self._build(lv.level, version)
        return fns

    def _build(self, level: str, version: Version) -> list[CheckFn]:
        baseline = [(c.id, c.at(version)) for c in self._baseline]
        if level == BASELINE:
            return [v.check for _, v in baseline if v is not None]
        restricted = [v for v in (c.at(version) for c in self._restricted) if v is not None]
        overridden = {o for v in restricted for o in v.overrides}
        return ([v.check for cid, v in baseline if v is not None and cid not in overridden]
                + [v.check for v in restricted])

    def evaluate(self, lv: LevelVersion, meta: Meta, spec: Spec) -> AggregateResult:
        return aggregate([check(meta, spec) for check in self.checks_for(lv)])


# ---- helpers the checks share --------------------------------------------------------------

def join_quote(items: list[str]) -> str:
    """``"a", "b"``."""
    return '"' + '", "'.join(items) + '"' if items else ""


def pluralize(singular: str, plural: str, count: int) -> str:
    return singular if count == 1 else plural


def containers_phrase(names: list[str]) -> str:
    """``container "a"`` / ``containers "a", "b"``."""
    return f'{pluralize("container", "containers", len(names))} {join_quote(names)}'


def containers(spec: Spec) -> Iterator[Spec]:
    """Init containers, then containers, then ephemeral containers (``visitContainers``)."""
    for key in ("initContainers", "containers", "ephemeralContainers"):
        for c in spec.get(key) or ():
            if isinstance(c, dict):
                yield c


def name_of(container: Spec) -> str:
    return str(container.get("name") or "")


def security_context(obj: Spec) -> Spec:
    sc = obj.get("securityContext")
    return sc if isinstance(sc, dict) else {}


def section(obj: Spec, key: str) -> Spec | None:
    value = obj.get(key)
    return value if isinstance(value, dict) else None


def is_windows(spec: Spec) -> bool:
    """``spec.os.name == windows``: API validation already refuses the Linux-only fields
    there, so the restricted checks for them pass (policy 1.25+)."""
    os_ = section(spec, "os")
    return os_ is not None and os_.get("name") == "windows"


def in_user_namespace(spec: Spec) -> bool:
    """``hostUsers: false``: the pod's root is not the host's (relaxes some checks)."""
    return spec.get("hostUsers") is False


def setter_names(pod_bad: bool, bad_containers: list[str]) -> list[str]:
    """``pod``, ``container "a"``, or both: who set a forbidden value."""
    found = ["pod"] if pod_bad else []
    if bad_containers:
        found.append(containers_phrase(bad_containers))
    return found
