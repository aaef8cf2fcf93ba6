"""The baseline Pod Security checks (``policy/check_*.go`` of pod-security-admission 1.35):
no host namespaces, privileged containers, added capabilities beyond the default set,
hostPath volumes, host ports, probe or lifecycle hosts, unsafe AppArmor, SELinux, /proc,
seccomp or Windows host-process settings, and only the safe sysctls.

Each check keeps upstream's ID, minimum versions and wording; the details name the
offending containers, volumes and values in upstream's order (sets sorted as strings).
"""

from __future__ import annotations

from kvert.api.gostrings import quote

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
    join_quote,
    name_of,
    pluralize,
    section,
    security_context,
    setter_names,
)
from .levels import BASELINE, v1

CAPABILITIES_BASELINE = "capabilities_baseline"
HOST_PATH_VOLUMES = "hostPathVolumes"
PROC_MOUNT = "procMount"
SECCOMP_BASELINE = "seccompProfile_baseline"



# ---- hostNamespaces ------------------------------------------------------------------------

def host_namespaces(meta: Meta, spec: Spec) -> CheckResult:
    shared = [f"{key}=true" for key in ("hostNetwork", "hostPID", "hostIPC") if spec.get(key) is True]
    return forbid("host namespaces", ", ".join(shared)) if shared else ALLOWED


# ---- privileged ----------------------------------------------------------------------------

def privileged(meta: Meta, spec: Spec) -> CheckResult:
    bad = [name_of(c) for c in containers(spec) if security_context(c).get("privileged") is True]
    if bad:
        return forbid("privileged", f"{containers_phrase(bad)} must not set securityContext.privileged=true")
    return ALLOWED


# ---- capabilities_baseline -----------------------------------------------------------------

DEFAULT_CAPABILITIES = frozenset({
    "AUDIT_WRITE", "CHOWN", "DAC_OVERRIDE", "FOWNER", "FSETID", "KILL", "MKNOD",
    "NET_BIND_SERVICE", "SETFCAP", "SETGID", "SETPCAP", "SETUID", "SYS_CHROOT"})


def capabilities_baseline(meta: Meta, spec: Spec) -> CheckResult:
    bad: list[str] = []
    extra: set[str] = set()
    for c in containers(spec):
        caps = section(security_context(c), "capabilities")
        if caps is None:
            continue
        added = {str(a) for a in caps.get("add") or () if str(a) not in DEFAULT_CAPABILITIES}
        if added:
            bad.append(name_of(c))
            extra |= added
    if bad:
        return forbid("non-default capabilities", f"{containers_phrase(bad)} must not include "
                      f"{join_quote(sorted(extra))} in securityContext.capabilities.add")
    return ALLOWED


# ---- hostPathVolumes -----------------------------------------------------------------------

def host_path_volumes(meta: Meta, spec: Spec) -> CheckResult:
    bad = [str(v.get("name") or "") for v in spec.get("volumes") or ()
           if isinstance(v, dict) and v.get("hostPath") is not None]
    if bad:
        return forbid("hostPath volumes", f'{pluralize("volume", "volumes", len(bad))} {join_quote(bad)}')
    return ALLOWED


# ---- hostPorts -----------------------------------------------------------------------------

def host_ports(meta: Meta, spec: Spec) -> CheckResult:
    bad: list[str] = []
    ports: set[str] = set()
    for c in containers(spec):
        used = {str(p.get("hostPort")) for p in c.get("ports") or ()
                if isinstance(p, dict) and p.get("hostPort") not in (None, 0)}
        if used:
            bad.append(name_of(c))
            ports |= used
    if bad:
        return forbid("hostPort", f'{containers_phrase(bad)} {pluralize("uses", "use", len(bad))} '
                      f'{pluralize("hostPort", "hostPorts", len(ports))} {", ".join(sorted(ports))}')
    return ALLOWED


# ---- hostProbesAndHostLifecycle (1.34+) ----------------------------------------------------

def _handler_hosts(handler: object) -> list[str]:
    if not isinstance(handler, dict):
        return []
    hosts = []
    for kind in ("httpGet", "tcpSocket"):
        action = section(handler, kind)
        if action is not None and action.get("host"):
            hosts.append(str(action["host"]))
    return hosts


def host_probes_and_lifecycle(meta: Meta, spec: Spec) -> CheckResult:
    bad: set[str] = set()
    hosts: set[str] = set()
    for c in containers(spec):
        lifecycle = section(c, "lifecycle") or {}
        found = [h for probe in ("livenessProbe", "readinessProbe", "startupProbe")
                 for h in _handler_hosts(c.get(probe))]
        found += [h for hook in ("postStart", "preStop") for h in _handler_hosts(lifecycle.get(hook))]
        if found:
            bad.add(name_of(c))
            hosts.update(found)
    if bad:
        return forbid("probe or lifecycle host",
                      f'{containers_phrase(sorted(bad))} {pluralize("uses", "use", len(bad))} '
                      f'{pluralize("probe or lifecycle host", "probe or lifecycle hosts", len(hosts))} '
                      f"{join_quote(sorted(hosts))}")
    return ALLOWED


# ---- appArmorProfile -----------------------------------------------------------------------

APPARMOR_ANNOTATION_PREFIX = "container.apparmor.security.beta.kubernetes.io/"


def _apparmor_type_allowed(profile: Spec) -> bool:
    return profile.get("type") in ("RuntimeDefault", "Localhost")


def _apparmor_annotation_allowed(value: str) -> bool:
    return value in ("", "runtime/default") or value.startswith("localhost/")


def app_armor_profile(meta: Meta, spec: Spec) -> CheckResult:
    values: set[str] = set()
    pod_profile = section(security_context(spec), "appArmorProfile")
    pod_bad = pod_profile is not None and not _apparmor_type_allowed(pod_profile)
    if pod_bad and pod_profile is not None:
        values.add(str(pod_profile.get("type") or ""))
    bad: list[str] = []
    for c in containers(spec):
        profile = section(security_context(c), "appArmorProfile")
        if profile is not None and not _apparmor_type_allowed(profile):
            bad.append(name_of(c))
            values.add(str(profile.get("type") or ""))
    setters = setter_names(pod_bad, bad)
    annotations = sorted(f"{k}={quote(str(v))}" for k, v in (meta.get("annotations") or {}).items()
                         if k.startswith(APPARMOR_ANNOTATION_PREFIX)
                         and not _apparmor_annotation_allowed(str(v)))
    shown = sorted(values) + annotations
    if annotations:
        setters.append(pluralize("annotation", "annotations", len(annotations)))
    if setters:
        return forbid(pluralize("forbidden AppArmor profile", "forbidden AppArmor profiles", len(shown)),
                      f"{' and '.join(setters)} must not set AppArmor profile type to {join_quote(shown)}")
    return ALLOWED


# ---- seLinuxOptions ------------------------------------------------------------------------

SELINUX_TYPES_1_0 = frozenset({"", "container_t", "container_init_t", "container_kvm_t"})
SELINUX_TYPES_1_31 = SELINUX_TYPES_1_0 | {"container_engine_t"}


def _selinux(allowed: frozenset[str]) -> CheckFn:
    def check(meta: Meta, spec: Spec) -> CheckResult:
        bad_types: set[str] = set()
        flags = {"user": False, "role": False}

        def valid(opts: Spec | None) -> bool:
            if opts is None:
                return True
            ok = True
            kind = str(opts.get("type") or "")
            if kind not in allowed:
                ok = False
                bad_types.add(kind)
            for key in ("user", "role"):
                if opts.get(key):
                    ok, flags[key] = False, True
            return ok

        pod_bad = not valid(section(security_context(spec), "seLinuxOptions"))
        bad = [name_of(c) for c in containers(spec)
               if not valid(section(security_context(c), "seLinuxOptions"))]
        setters = setter_names(pod_bad, bad)
        if not setters:
            return ALLOWED
        data = []
        if bad_types:
            data.append(f'{pluralize("type", "types", len(bad_types))} {join_quote(sorted(bad_types))}')
        data += [f"{key} may not be set" for key in ("user", "role") if flags[key]]
        return forbid("seLinuxOptions", f"{' and '.join(setters)} set forbidden "
                      f"securityContext.seLinuxOptions: {'; '.join(data)}")
    return check


# ---- procMount -----------------------------------------------------------------------------

def proc_mount_default_only(meta: Meta, spec: Spec) -> CheckResult:
    """Any procMount but ``Default`` is forbidden (baseline before 1.35; restricted 1.35+)."""
    bad: list[str] = []
    kinds: set[str] = set()
    for c in containers(spec):
        mount = security_context(c).get("procMount")
        if mount is not None and mount != "Default":
            bad.append(name_of(c))
            kinds.add(str(mount))
    if bad:
        return forbid("procMount", f"{containers_phrase(bad)} must not set securityContext.procMount to "
                      f"{join_quote(sorted(kinds))}")
    return ALLOWED


def proc_mount_1_35(meta: Meta, spec: Spec) -> CheckResult:
    """1.35+: a pod in its own user namespace may unmask /proc."""
    return ALLOWED if in_user_namespace(spec) else proc_mount_default_only(meta, spec)


# ---- seccompProfile_baseline ---------------------------------------------------------------

SECCOMP_POD_ANNOTATION = "seccomp.security.alpha.kubernetes.io/pod"
SECCOMP_CONTAINER_ANNOTATION_PREFIX = "container.seccomp.security.alpha.kubernetes.io/"


def seccomp_type_allowed(profile: Spec) -> bool:
    return profile.get("type") in ("RuntimeDefault", "Localhost")


def _seccomp_annotation_allowed(value: str) -> bool:
    return value in ("runtime/default", "docker/default") or value.startswith("localhost/")


def seccomp_baseline_1_0(meta: Meta, spec: Spec) -> CheckResult:
    """Before 1.19 seccomp was set by the alpha annotations."""
    annotations = meta.get("annotations") or {}
    keys = [SECCOMP_POD_ANNOTATION] + [SECCOMP_CONTAINER_ANNOTATION_PREFIX + name_of(c)
                                       for c in containers(spec)]
    bad = sorted({f"{k}={quote(str(annotations[k]))}" for k in keys
                  if k in annotations and not _seccomp_annotation_allowed(str(annotations[k]))})
    if bad:
        return forbid("seccompProfile", f'forbidden {pluralize("annotation", "annotations", len(bad))} '
                      f'{", ".join(bad)}')
    return ALLOWED


def explicit_seccomp(spec: Spec) -> tuple[list[str], set[str], bool]:
    """Who explicitly set a forbidden seccomp type, the types, and whether the pod set an
    allowed one."""
    values: set[str] = set()
    pod_profile = section(security_context(spec), "seccompProfile")
    pod_bad = pod_profile is not None and not seccomp_type_allowed(pod_profile)
    if pod_profile is not None and pod_bad:
        values.add(str(pod_profile.get("type") or ""))
    bad: list[str] = []
    for c in containers(spec):
        profile = section(security_context(c), "seccompProfile")
        if profile is not None and not seccomp_type_allowed(profile):
            bad.append(name_of(c))
            values.add(str(profile.get("type") or ""))
    return setter_names(pod_bad, bad), values, pod_profile is not None and not pod_bad


def seccomp_forbidden(setters: list[str], values: set[str]) -> CheckResult:
    return forbid("seccompProfile", f"{' and '.join(setters)} must not set "
                  f"securityContext.seccompProfile.type to {join_quote(sorted(values))}")


def seccomp_baseline_1_19(meta: Meta, spec: Spec) -> CheckResult:
    setters, values, _ = explicit_seccomp(spec)
    return seccomp_forbidden(setters, values) if setters else ALLOWED


# ---- sysctls -------------------------------------------------------------------------------

SAFE_SYSCTLS_1_0 = frozenset({"kernel.shm_rmid_forced", "net.ipv4.ip_local_port_range",
                              "net.ipv4.tcp_syncookies", "net.ipv4.ping_group_range",
                              "net.ipv4.ip_unprivileged_port_start"})
SAFE_SYSCTLS_1_27 = SAFE_SYSCTLS_1_0 | {"net.ipv4.ip_local_reserved_ports"}
SAFE_SYSCTLS_1_29 = SAFE_SYSCTLS_1_27 | {"net.ipv4.tcp_keepalive_time", "net.ipv4.tcp_fin_timeout",
                                         "net.ipv4.tcp_keepalive_intvl", "net.ipv4.tcp_keepalive_probes"}
SAFE_SYSCTLS_1_32 = SAFE_SYSCTLS_1_29 | {"net.ipv4.tcp_rmem", "net.ipv4.tcp_wmem"}


def _sysctls(safe: frozenset[str]) -> CheckFn:
    def check(meta: Meta, spec: Spec) -> CheckResult:
        bad = [str(s.get("name")) for s in security_context(spec).get("sysctls") or ()
               if isinstance(s, dict) and s.get("name") not in safe]
        return forbid("forbidden sysctls", ", ".join(bad)) if bad else ALLOWED
    return check


# ---- windowsHostProcess --------------------------------------------------------------------

def _host_process(obj: Spec) -> bool:
    opts = section(security_context(obj), "windowsOptions")
    return opts is not None and opts.get("hostProcess") is True


def windows_host_process(meta: Meta, spec: Spec) -> CheckResult:
    setters = setter_names(_host_process(spec), [name_of(c) for c in containers(spec) if _host_process(c)])
    if setters:
        return forbid("hostProcess", f"{' and '.join(setters)} must not set "
                      "securityContext.windowsOptions.hostProcess=true")
    return ALLOWED


# ---- the table -----------------------------------------------------------------------------

def _check(check_id: str, *versions: tuple[int, CheckFn]) -> Check:
    return Check(check_id, BASELINE, tuple(VersionedCheck(v1(m), fn) for m, fn in versions))


BASELINE_CHECKS = [
    _check("appArmorProfile", (0, app_armor_profile)),
    _check(CAPABILITIES_BASELINE, (0, capabilities_baseline)),
    _check("hostNamespaces", (0, host_namespaces)),
    _check(HOST_PATH_VOLUMES, (0, host_path_volumes)),
    _check("hostPorts", (0, host_ports)),
    _check("hostProbesAndHostLifecycle", (34, host_probes_and_lifecycle)),
    _check("privileged", (0, privileged)),
    _check(PROC_MOUNT, (0, proc_mount_default_only), (35, proc_mount_1_35)),
    _check("seLinuxOptions", (0, _selinux(SELINUX_TYPES_1_0)), (31, _selinux(SELINUX_TYPES_1_31))),
    _check(SECCOMP_BASELINE, (0, seccomp_baseline_1_0), (19, seccomp_baseline_1_19)),
    _check("sysctls", (0, _sysctls(SAFE_SYSCTLS_1_0)), (27, _sysctls(SAFE_SYSCTLS_1_27)),
           (29, _sysctls(SAFE_SYSCTLS_1_29)), (32, _sysctls(SAFE_SYSCTLS_1_32))),
    _check("windowsHostProcess", (0, windows_host_process)),
]
