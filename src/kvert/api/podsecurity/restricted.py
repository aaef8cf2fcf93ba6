"""The restricted Pod Security checks (``policy/check_*.go`` of pod-security-admission 1.35),
evaluated with the baseline ones they do not override: only the volume types a pod's own
objects provide, ``allowPrivilegeEscalation: false``, ``runAsNonRoot: true`` and no
``runAsUser: 0`` (both relaxed for ``hostUsers: false`` from 1.35), a RuntimeDefault or
Localhost seccomp profile, ``drop: [ALL]`` with at most NET_BIND_SERVICE added, and the
default /proc mask whatever the user namespace. Windows pods (``spec.os.name``) pass the
Linux-only checks from 1.25.
"""

from __future__ import annotations

from .baseline import (
    CAPABILITIES_BASELINE,
    HOST_PATH_VOLUMES,
    PROC_MOUNT,
    SECCOMP_BASELINE,
    explicit_seccomp,
    proc_mount_default_only,
    seccomp_forbidden,
)
from .checks import (
    ALLOWED,
    Check,
    CheckFn,
    CheckResult,
    Meta,
    Spec,
    VersionedCheck,
    containers,
    containers_phrase,
    forbid,
    in_user_namespace,
    is_windows,
    join_quote,
    name_of,
    pluralize,
    section,
    security_context,
    setter_names,
)
from .levels import RESTRICTED, v1


def _windows_exempt(check: CheckFn) -> CheckFn:
    """1.25+: API validation refuses these Linux fields on Windows pods, so they may be unset."""
    def windows_aware(meta: Meta, spec: Spec) -> CheckResult:
        return ALLOWED if is_windows(spec) else check(meta, spec)
    return windows_aware


def _user_namespace_relaxed(check: CheckFn) -> CheckFn:
    """1.35+: in a user namespace (``hostUsers: false``) uid 0 is not the host's root."""
    def relaxed(meta: Meta, spec: Spec) -> CheckResult:
        return ALLOWED if in_user_namespace(spec) else check(meta, spec)
    return relaxed



# ---- restrictedVolumes ---------------------------------------------------------------------

ALLOWED_VOLUME_SOURCES = ("configMap", "csi", "downwardAPI", "emptyDir", "ephemeral", "image",
                          "persistentVolumeClaim", "projected", "secret")
# the restricted sources in the order upstream looks for them
RESTRICTED_VOLUME_SOURCES = (
    "hostPath", "gcePersistentDisk", "awsElasticBlockStore", "gitRepo", "nfs", "iscsi",
    "glusterfs", "rbd", "flexVolume", "cinder", "cephfs", "flocker", "fc", "azureFile",
    "vsphereVolume", "quobyte", "azureDisk", "photonPersistentDisk", "portworxVolume", "scaleIO",
    "storageos")


def _present(volume: Spec, key: str) -> bool:
    return volume.get(key) is not None


def restricted_volumes(meta: Meta, spec: Spec) -> CheckResult:
    bad: list[str] = []
    kinds: set[str] = set()
    for volume in spec.get("volumes") or ():
        if not isinstance(volume, dict) or any(_present(volume, k) for k in ALLOWED_VOLUME_SOURCES):
            continue
        bad.append(str(volume.get("name") or ""))
        kinds.add(next((k for k in RESTRICTED_VOLUME_SOURCES if _present(volume, k)), "unknown"))
    if bad:
        return forbid("restricted volume types",
                      f'{pluralize("volume", "volumes", len(bad))} {join_quote(bad)} '
                      f'{pluralize("uses", "use", len(bad))} '
                      f'{pluralize("restricted volume type", "restricted volume types", len(kinds))} '
                      f"{join_quote(sorted(kinds))}")
    return ALLOWED


# ---- allowPrivilegeEscalation --------------------------------------------------------------

def allow_privilege_escalation(meta: Meta, spec: Spec) -> CheckResult:
    bad = [name_of(c) for c in containers(spec)
           if security_context(c).get("allowPrivilegeEscalation") is not False]
    if bad:
        return forbid("allowPrivilegeEscalation != false",
                      f"{containers_phrase(bad)} must set securityContext.allowPrivilegeEscalation=false")
    return ALLOWED


# ---- runAsNonRoot --------------------------------------------------------------------------

def run_as_non_root(meta: Meta, spec: Spec) -> CheckResult:
    pod_value = security_context(spec).get("runAsNonRoot")
    pod_bad, pod_ok = pod_value is False, pod_value is True
    explicit: list[str] = []
    implicit: list[str] = []
    for c in containers(spec):
        value = security_context(c).get("runAsNonRoot")
        if value is not None:
            if value is False:
                explicit.append(name_of(c))
        elif not pod_ok:
            implicit.append(name_of(c))
    setters = setter_names(pod_bad, explicit)
    if setters:
        return forbid("runAsNonRoot != true",
                      f"{' and '.join(setters)} must not set securityContext.runAsNonRoot=false")
    if implicit:
        return forbid("runAsNonRoot != true",
                      f"pod or {containers_phrase(implicit)} must set securityContext.runAsNonRoot=true")
    return ALLOWED


# ---- runAsUser (1.23+) ---------------------------------------------------------------------

def _root_uid(obj: Spec) -> bool:
    uid = security_context(obj).get("runAsUser")
    return isinstance(uid, int) and not isinstance(uid, bool) and uid == 0


def run_as_user(meta: Meta, spec: Spec) -> CheckResult:
    setters = setter_names(_root_uid(spec), [name_of(c) for c in containers(spec) if _root_uid(c)])
    if setters:
        return forbid("runAsUser=0", f"{' and '.join(setters)} must not set runAsUser=0")
    return ALLOWED


# ---- seccompProfile_restricted (1.19+) -----------------------------------------------------

def seccomp_restricted(meta: Meta, spec: Spec) -> CheckResult:
    setters, values, pod_set = explicit_seccomp(spec)
    if setters:
        return seccomp_forbidden(setters, values)
    implicit = [name_of(c) for c in containers(spec)
                if section(security_context(c), "seccompProfile") is None and not pod_set]
    if implicit:
        return forbid("seccompProfile", f"pod or {containers_phrase(implicit)} must set "
                      'securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost"')
    return ALLOWED


# ---- capabilities_restricted (1.22+) -------------------------------------------------------

def capabilities_restricted(meta: Meta, spec: Spec) -> CheckResult:
    missing_drop: list[str] = []
    adding: list[str] = []
    added: set[str] = set()
    for c in containers(spec):
        caps = section(security_context(c), "capabilities")
        if caps is None:
            missing_drop.append(name_of(c))
            continue
        if "ALL" not in (caps.get("drop") or ()):
            missing_drop.append(name_of(c))
        extra = {str(a) for a in caps.get("add") or () if a != "NET_BIND_SERVICE"}
        if extra:
            adding.append(name_of(c))
            added |= extra
    details = []
    if missing_drop:
        details.append(f'{containers_phrase(missing_drop)} must set securityContext.capabilities.drop=["ALL"]')
    if adding:
        details.append(f"{containers_phrase(adding)} must not include {join_quote(sorted(added))} "
                       "in securityContext.capabilities.add")
    return forbid("unrestricted capabilities", "; ".join(details)) if details else ALLOWED


# ---- the table -----------------------------------------------------------------------------

def _check(check_id: str, *versions: tuple[int, CheckFn, tuple[str, ...]]) -> Check:
    return Check(check_id, RESTRICTED,
                 tuple(VersionedCheck(v1(m), fn, overrides) for m, fn, overrides in versions))


RESTRICTED_CHECKS = [
    _check("allowPrivilegeEscalation", (8, allow_privilege_escalation, ()),
           (25, _windows_exempt(allow_privilege_escalation), ())),
    _check("capabilities_restricted", (22, capabilities_restricted, (CAPABILITIES_BASELINE,)),
           (25, _windows_exempt(capabilities_restricted), (CAPABILITIES_BASELINE,))),
    _check("procMount_restricted", (35, proc_mount_default_only, (PROC_MOUNT,))),
    _check("restrictedVolumes", (0, restricted_volumes, (HOST_PATH_VOLUMES,))),
    _check("runAsNonRoot", (0, run_as_non_root, ()),
           (35, _user_namespace_relaxed(run_as_non_root), ())),
    _check("runAsUser", (23, run_as_user, ()), (35, _user_namespace_relaxed(run_as_user), ())),
    _check("seccompProfile_restricted", (19, seccomp_restricted, (SECCOMP_BASELINE,)),
           (25, _windows_exempt(seccomp_restricted), (SECCOMP_BASELINE,))),
]
