"""The Pod Security checks against upstream's own vectors (k8s.io/pod-security-admission
release-1.35, policy/check_*_test.go and test/fixtures*.go): each case names the Go test
and case it reproduces; reasons and details are upstream's expected strings."""

from __future__ import annotations

import pytest

from kvert.api.podsecurity import (
    BASELINE, LATEST, PRIVILEGED, RESTRICTED, LevelVersion, default_evaluator, v1,
)
from kvert.api.podsecurity import baseline as b
from kvert.api.podsecurity import restricted as r

EVALUATOR = default_evaluator()


def sc(**fields):
    return {"securityContext": fields}


def ctr(name, **fields):
    return {"name": name, **fields}


# (Go test / case, check function, metadata, spec, reason, detail)
FORBIDDEN = [
    ("TestAllowPrivilegeEscalation_1_25/multiple containers", r.allow_privilege_escalation, {},
     {"containers": [ctr("a"), ctr("b", **sc()), ctr("c", **sc(allowPrivilegeEscalation=True)),
                     ctr("d", **sc(allowPrivilegeEscalation=False))]},
     "allowPrivilegeEscalation != false",
     'containers "a", "b", "c" must set securityContext.allowPrivilegeEscalation=false'),
    ("TestCheckAppArmor_Forbidden/unconfined pod", b.app_armor_profile, {},
     {"securityContext": {"appArmorProfile": {"type": "Unconfined"}}},
     "forbidden AppArmor profile", 'pod must not set AppArmor profile type to "Unconfined"'),
    ("TestCheckAppArmor_Forbidden/unconfined init container", b.app_armor_profile, {},
     {"securityContext": {"appArmorProfile": {"type": "RuntimeDefault"}},
      "containers": [ctr("foo")],
      "initContainers": [ctr("bar", **sc(appArmorProfile={"type": "Unconfined"}))]},
     "forbidden AppArmor profile", 'container "bar" must not set AppArmor profile type to "Unconfined"'),
    ("TestCheckAppArmor_Forbidden/multiple containers", b.app_armor_profile,
     {"annotations": {"container.apparmor.security.beta.kubernetes.io/": "bogus",
                      "container.apparmor.security.beta.kubernetes.io/a": "",
                      "container.apparmor.security.beta.kubernetes.io/b": "runtime/default",
                      "container.apparmor.security.beta.kubernetes.io/c": "localhost/",
                      "container.apparmor.security.beta.kubernetes.io/d": "localhost/foo",
                      "container.apparmor.security.beta.kubernetes.io/e": "unconfined",
                      "container.apparmor.security.beta.kubernetes.io/f": "unknown"}}, {},
     "forbidden AppArmor profiles",
     'annotations must not set AppArmor profile type to '
     '"container.apparmor.security.beta.kubernetes.io/="bogus"", '
     '"container.apparmor.security.beta.kubernetes.io/e="unconfined"", '
     '"container.apparmor.security.beta.kubernetes.io/f="unknown""'),
    ("TestCapabilitiesBaseline/multiple containers", b.capabilities_baseline, {},
     {"containers": [ctr("a", **sc(capabilities={"add": ["FOO", "BAR"]})),
                     ctr("b", **sc(capabilities={"add": ["BAR", "BAZ"]})),
                     ctr("c", **sc(capabilities={"add": ["NET_BIND_SERVICE", "CHOWN"]}))]},
     "non-default capabilities",
     'containers "a", "b" must not include "BAR", "BAZ", "FOO" in securityContext.capabilities.add'),
    ("TestCapabilitiesRestricted_1_25/multiple containers", r.capabilities_restricted, {},
     {"containers": [ctr("a", **sc(capabilities={"add": ["FOO", "BAR"]})),
                     ctr("b", **sc(capabilities={"add": ["BAR", "BAZ"]})),
                     ctr("c", **sc(capabilities={"add": ["NET_BIND_SERVICE", "CHOWN"],
                                                 "drop": ["ALL", "FOO"]}))]},
     "unrestricted capabilities",
     'containers "a", "b" must set securityContext.capabilities.drop=["ALL"]; '
     'containers "a", "b", "c" must not include "BAR", "BAZ", "CHOWN", "FOO" in '
     'securityContext.capabilities.add'),
    ("TestCapabilitiesRestricted_1_25/linux pod, reject if security context is not set",
     r.capabilities_restricted, {}, {"os": {"name": "linux"}, "containers": [ctr("a")]},
     "unrestricted capabilities", 'container "a" must set securityContext.capabilities.drop=["ALL"]'),
    ("TestHostNamespaces/host namespaces", b.host_namespaces, {},
     {"hostNetwork": True, "hostPID": True, "hostIPC": True},
     "host namespaces", "hostNetwork=true, hostPID=true, hostIPC=true"),
    ("TestHostPathVolumes/host path volumes", b.host_path_volumes, {},
     {"volumes": [{"name": "a", "hostPath": {}}, {"name": "b", "hostPath": {}},
                  {"name": "c", "emptyDir": {}}]},
     "hostPath volumes", 'volumes "a", "b"'),
    ("TestHostPort/one container, one host port", b.host_ports, {},
     {"containers": [ctr("a", ports=[{"hostPort": 0}]),
                     ctr("b", ports=[{"hostPort": 0}, {"hostPort": 20}])]},
     "hostPort", 'container "b" uses hostPort 20'),
    ("TestHostPort/multiple containers, multiple host port", b.host_ports, {},
     {"containers": [ctr("a", ports=[{"hostPort": 0}]),
                     ctr("b", ports=[{"hostPort": 0}, {"hostPort": 10}, {"hostPort": 20}]),
                     ctr("c", ports=[{"hostPort": 0}, {"hostPort": 10}, {"hostPort": 30}])]},
     "hostPort", 'containers "b", "c" use hostPorts 10, 20, 30'),
    ("TestHostProbesAndHostLifecycle/invalid pod with local host IP as probe host",
     b.host_probes_and_lifecycle, {},
     {"containers": [ctr("a", livenessProbe={"httpGet": {"host": "127.0.0.1"}},
                         readinessProbe={"tcpSocket": {"host": "::1"}},
                         startupProbe={"httpGet": {"host": "localhost"}})]},
     "probe or lifecycle host",
     'container "a" uses probe or lifecycle hosts "127.0.0.1", "::1", "localhost"'),
    ("TestHostProbesAndHostLifecycle/lifecycle host", b.host_probes_and_lifecycle, {},
     {"containers": [ctr("a"), ctr("b", lifecycle={"preStop": {"httpGet": {"host": "invalid.host"}}})]},
     "probe or lifecycle host", 'container "b" uses probe or lifecycle host "invalid.host"'),
    ("TestPrivileged/multiple containers", b.privileged, {},
     {"containers": [ctr("a"), ctr("b", **sc()), ctr("c", **sc(privileged=False)),
                     ctr("d", **sc(privileged=True)), ctr("e", **sc(privileged=True))]},
     "privileged", 'containers "d", "e" must not set securityContext.privileged=true'),
    ("TestProcMountBaseline/procMount", b.proc_mount_1_35, {},
     {"hostUsers": True,
      "containers": [ctr("a"), ctr("b", **sc()), ctr("c", **sc(procMount="Default")),
                     ctr("d", **sc(procMount="Unmasked")), ctr("e", **sc(procMount="other"))]},
     "procMount", 'containers "d", "e" must not set securityContext.procMount to "Unmasked", "other"'),
    ("TestRestrictedVolumes/host path volumes", r.restricted_volumes, {},
     {"volumes": [{"name": "a1", "emptyDir": {}}, {"name": "a2", "secret": {}},
                  {"name": "a7", "csi": {}}, {"name": "a9", "image": {}},
                  *[{"name": f"b{i}", key: {}} for i, key in enumerate(r.RESTRICTED_VOLUME_SOURCES, 1)],
                  {"name": "c1"}]},
     "restricted volume types",
     'volumes "b1", "b2", "b3", "b4", "b5", "b6", "b7", "b8", "b9", "b10", "b11", "b12", "b13", '
     '"b14", "b15", "b16", "b17", "b18", "b19", "b20", "b21", "c1" use restricted volume types '
     '"awsElasticBlockStore", "azureDisk", "azureFile", "cephfs", "cinder", "fc", "flexVolume", '
     '"flocker", "gcePersistentDisk", "gitRepo", "glusterfs", "hostPath", "iscsi", "nfs", '
     '"photonPersistentDisk", "portworxVolume", "quobyte", "rbd", "scaleIO", "storageos", '
     '"unknown", "vsphereVolume"'),
    ("TestRunAsNonRoot/no explicit runAsNonRoot", r.run_as_non_root, {}, {"containers": [ctr("a")]},
     "runAsNonRoot != true", 'pod or container "a" must set securityContext.runAsNonRoot=true'),
    ("TestRunAsNonRoot/pod runAsNonRoot=false", r.run_as_non_root, {},
     {"securityContext": {"runAsNonRoot": False}, "containers": [ctr("a")]},
     "runAsNonRoot != true", "pod must not set securityContext.runAsNonRoot=false"),
    ("TestRunAsNonRoot/containers runAsNonRoot=false", r.run_as_non_root, {},
     {"securityContext": {"runAsNonRoot": True},
      "containers": [ctr("a"), ctr("b", **sc()), ctr("c", **sc(runAsNonRoot=False)),
                     ctr("d", **sc(runAsNonRoot=False)), ctr("e", **sc(runAsNonRoot=True))]},
     "runAsNonRoot != true", 'containers "c", "d" must not set securityContext.runAsNonRoot=false'),
    ("TestRunAsNonRoot/pod nil, container fallthrough", r.run_as_non_root, {},
     {"containers": [ctr("a"), ctr("b", **sc()), ctr("d", **sc(runAsNonRoot=True))]},
     "runAsNonRoot != true", 'pod or containers "a", "b" must set securityContext.runAsNonRoot=true'),
    ("TestRunAsUser/pod runAsUser=0", r.run_as_user, {},
     {"securityContext": {"runAsUser": 0}, "containers": [ctr("a")]},
     "runAsUser=0", "pod must not set runAsUser=0"),
    ("TestRunAsUser/containers runAsUser=0", r.run_as_user, {},
     {"securityContext": {"runAsUser": 1000},
      "containers": [ctr("a"), ctr("b", **sc()), ctr("c", **sc(runAsUser=0)),
                     ctr("d", **sc(runAsUser=0)), ctr("e", **sc(runAsUser=1))]},
     "runAsUser=0", 'containers "c", "d" must not set runAsUser=0'),
    ("TestSeccompProfileBaseline_1_0/pod seccomp invalid", b.seccomp_baseline_1_0,
     {"annotations": {"seccomp.security.alpha.kubernetes.io/pod": "unconfined"}}, {},
     "seccompProfile", 'forbidden annotation seccomp.security.alpha.kubernetes.io/pod="unconfined"'),
    ("TestSeccompProfileBaseline_1_19/containers seccomp invalid", b.seccomp_baseline_1_19, {},
     {"securityContext": {"seccompProfile": {"type": "RuntimeDefault"}},
      "containers": [ctr("a"), ctr("b", **sc(seccompProfile={"type": "Unconfined"})),
                     ctr("c", **sc(seccompProfile={"type": "Localhost"}))]},
     "seccompProfile", 'container "b" must not set securityContext.seccompProfile.type to "Unconfined"'),
    ("TestSeccompProfileRestricted_1_25/no explicit seccomp, linux pod", r.seccomp_restricted, {},
     {"os": {"name": "linux"}, "containers": [ctr("a")]}, "seccompProfile",
     'pod or container "a" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost"'),
    ("TestSeccompProfileRestricted_1_25/pod seccomp invalid", r.seccomp_restricted, {},
     {"securityContext": {"seccompProfile": {"type": "Unconfined"}}, "containers": [ctr("a")]},
     "seccompProfile", 'pod must not set securityContext.seccompProfile.type to "Unconfined"'),
    ("TestSeccompProfileRestricted_1_25/pod nil, container fallthrough", r.seccomp_restricted, {},
     {"containers": [ctr("a"), ctr("b", **sc()), ctr("d", **sc(seccompProfile={"type": "RuntimeDefault"}))]},
     "seccompProfile",
     'pod or containers "a", "b" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost"'),
    ("TestSELinuxOptions/invalid pod and containers", b._selinux(b.SELINUX_TYPES_1_31), {},
     {"securityContext": {"seLinuxOptions": {"type": "foo", "user": "bar", "role": "baz"}},
      "containers": [ctr("a", **sc(seLinuxOptions={"type": "container_t"})),
                     ctr("d", **sc(seLinuxOptions={"type": "container_engine_t"})),
                     ctr("e", **sc(seLinuxOptions={"type": "bar"})),
                     ctr("f", **sc(seLinuxOptions={"user": "bar"})),
                     ctr("g", **sc(seLinuxOptions={"role": "baz"}))]},
     "seLinuxOptions", 'pod and containers "e", "f", "g" set forbidden securityContext.seLinuxOptions: '
     'types "bar", "foo"; user may not be set; role may not be set'),
    ("TestSELinuxOptions/bad user", b._selinux(b.SELINUX_TYPES_1_31), {},
     {"securityContext": {"seLinuxOptions": {"user": "bad"}}},
     "seLinuxOptions", "pod set forbidden securityContext.seLinuxOptions: user may not be set"),
    ("TestSysctls/forbidden sysctls", b._sysctls(b.SAFE_SYSCTLS_1_0), {},
     {"securityContext": {"sysctls": [{"name": "a"}, {"name": "b"}]}}, "forbidden sysctls", "a, b"),
    ("TestSysctls/new supported sysctls not supported: net.ipv4.tcp_rmem",
     b._sysctls(b.SAFE_SYSCTLS_1_29), {},
     {"securityContext": {"sysctls": [{"name": "net.ipv4.tcp_rmem", "value": "4096 87380 16777216"}]}},
     "forbidden sysctls", "net.ipv4.tcp_rmem"),
    ("TestWindowsHostProcess/host process", b.windows_host_process, {},
     {"securityContext": {"windowsOptions": {"hostProcess": True}},
      "containers": [ctr("a"), ctr("b", **sc()), ctr("c", **sc(windowsOptions={})),
                     ctr("d", **sc(windowsOptions={"hostProcess": False})),
                     ctr("e", **sc(windowsOptions={"hostProcess": True})),
                     ctr("f", **sc(windowsOptions={"hostProcess": True}))]},
     "hostProcess", 'pod and containers "e", "f" must not set securityContext.windowsOptions.hostProcess=true'),
]


@pytest.mark.parametrize("case,check,meta,spec,reason,detail", FORBIDDEN, ids=[c[0] for c in FORBIDDEN])
def test_a_forbidden_pod_is_named_as_upstream_names_it(case, check, meta, spec, reason, detail):
    result = check(meta, spec)
    assert not result.allowed
    assert (result.reason, result.detail) == (reason, detail)


ALLOWED = [
    # TestCheckAppArmor_Allowed
    ("TestCheckAppArmor_Allowed/container with local AppArmor + extra annotations", b.app_armor_profile,
     {"annotations": {"container.apparmor.security.beta.kubernetes.io/test": "localhost/sec-profile01",
                      "env": "dev"}}, {}),
    ("TestCheckAppArmor_Allowed/pod with runtime default", b.app_armor_profile, {},
     {"securityContext": {"appArmorProfile": {"type": "RuntimeDefault"}}}),
    ("TestCapabilitiesRestricted_1_25/windows pod, admit without checking capabilities",
     r._windows_exempt(r.capabilities_restricted), {}, {"os": {"name": "windows"}, "containers": [ctr("a")]}),
    ("TestSeccompProfileRestricted_1_25/no explicit seccomp, windows Pod",
     r._windows_exempt(r.seccomp_restricted), {}, {"os": {"name": "windows"}, "containers": [ctr("a")]}),
    ("TestProcMountBaseline/procMount with userns", b.proc_mount_1_35, {},
     {"hostUsers": False, "containers": [ctr("d", **sc(procMount="Unmasked"))]}),
    ("TestRunAsNonRoot/host users false allowed", r._user_namespace_relaxed(r.run_as_non_root), {},
     {"hostUsers": False}),
    ("TestRunAsUser/host users false allowed", r._user_namespace_relaxed(r.run_as_user), {},
     {"hostUsers": False, "securityContext": {"runAsUser": 0}}),
    ("TestHostProbesAndHostLifecycle/valid pod with unset hosts", b.host_probes_and_lifecycle, {},
     {"containers": [ctr("a", livenessProbe={"httpGet": {}}, readinessProbe={"tcpSocket": {}},
                         lifecycle={"postStart": {"httpGet": {}}})]}),
    ("TestSysctls/new supported sysctls: net.ipv4.tcp_wmem", b._sysctls(b.SAFE_SYSCTLS_1_32), {},
     {"securityContext": {"sysctls": [{"name": "net.ipv4.tcp_wmem", "value": "4096 87380 16777216"}]}}),
]


@pytest.mark.parametrize("case,check,meta,spec", ALLOWED, ids=[c[0] for c in ALLOWED])
def test_an_allowed_pod_passes(case, check, meta, spec):
    assert check(meta, spec).allowed


# ---- the versioned table (test/fixtures.go minimal pods; testdata/<level>/<version>) ------

BASELINE_POD = {"initContainers": [ctr("initcontainer1", image="registry.k8s.io/pause")],
                "containers": [ctr("container1", image="registry.k8s.io/pause")]}
RESTRICTED_SC = {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}}
RESTRICTED_POD = {
    "securityContext": {"runAsNonRoot": True, "seccompProfile": {"type": "RuntimeDefault"}},
    "initContainers": [ctr("initcontainer1", image="registry.k8s.io/pause", securityContext=RESTRICTED_SC)],
    "containers": [ctr("container1", image="registry.k8s.io/pause", securityContext=RESTRICTED_SC)],
}


@pytest.mark.parametrize("minor", [0, 8, 19, 22, 25, 34, 35])
def test_the_minimal_valid_pods_pass_at_every_version(minor):
    # fixtures.go: baseline_1_0 is valid for all versions; restricted_1_22 from 1.22 on
    assert EVALUATOR.evaluate(LevelVersion(BASELINE, v1(minor)), {}, BASELINE_POD).allowed
    assert EVALUATOR.evaluate(LevelVersion(RESTRICTED, v1(minor)), {}, RESTRICTED_POD).allowed


def test_a_check_applies_from_its_minimum_version_on():
    # testdata/restricted/v1.7 has no allowprivilegeescalation fail fixtures, v1.8 has them
    # (MinimumVersion 1.8); runAsUser=0 is refused from 1.23 (fixtures_runAsUser.go)
    pod = {**RESTRICTED_POD, "containers": [ctr("container1")]}
    at = lambda minor: EVALUATOR.evaluate(LevelVersion(RESTRICTED, v1(minor)), {}, pod).reasons  # noqa: E731
    assert "allowPrivilegeEscalation != false" not in at(7)
    assert "allowPrivilegeEscalation != false" in at(8)
    root = {**RESTRICTED_POD, "securityContext": {**RESTRICTED_POD["securityContext"], "runAsUser": 0}}
    assert EVALUATOR.evaluate(LevelVersion(RESTRICTED, v1(22)), {}, root).allowed
    assert EVALUATOR.evaluate(LevelVersion(RESTRICTED, v1(23)), {}, root).reasons == ("runAsUser=0",)


def test_newer_safe_sysctls_only_from_their_version():
    # fixtures_sysctls.go: net.ipv4.ip_local_reserved_ports fails before 1.27, passes from it
    pod = {**BASELINE_POD, "securityContext": {"sysctls": [{"name": "net.ipv4.ip_local_reserved_ports"}]}}
    assert not EVALUATOR.evaluate(LevelVersion(BASELINE, v1(26)), {}, pod).allowed
    assert EVALUATOR.evaluate(LevelVersion(BASELINE, v1(27)), {}, pod).allowed


def test_probe_hosts_are_checked_from_1_34():
    # TestHostProbesAndHostLifecycleEmulation: active at 1.34, not at 1.33
    pod = {"containers": [ctr("a", livenessProbe={"httpGet": {"host": "10.0.0.1"}})]}
    assert EVALUATOR.evaluate(LevelVersion(BASELINE, v1(33)), {}, pod).allowed
    assert EVALUATOR.evaluate(LevelVersion(BASELINE, v1(34)), {}, pod).reasons == ("probe or lifecycle host",)


def test_restricted_keeps_the_proc_mask_in_a_user_namespace_from_1_35():
    # TestProcMountRestricted / fixtures_procMount.go: baseline relaxes with hostUsers=false
    # at 1.35, restricted (procMount_restricted overriding procMount) does not
    pod = {**RESTRICTED_POD, "hostUsers": False,
           "containers": [ctr("container1", securityContext={**RESTRICTED_SC, "procMount": "Unmasked"})]}
    assert EVALUATOR.evaluate(LevelVersion(BASELINE, v1(35)), {}, pod).allowed
    assert not EVALUATOR.evaluate(LevelVersion(BASELINE, v1(34)), {}, pod).allowed
    assert EVALUATOR.evaluate(LevelVersion(RESTRICTED, v1(35)), {}, pod).reasons == ("procMount",)


def test_latest_and_future_versions_evaluate_as_1_35():
    # registry.go: versions newer than the newest check's minimum use that version's checks
    assert EVALUATOR.max_version == v1(35)
    pod = {**RESTRICTED_POD, "hostUsers": False,
           "securityContext": {**RESTRICTED_POD["securityContext"], "runAsUser": 0}}
    for version in (LATEST, v1(35), v1(99)):
        assert EVALUATOR.evaluate(LevelVersion(RESTRICTED, version), {}, pod).allowed
    assert not EVALUATOR.evaluate(LevelVersion(RESTRICTED, v1(34)), {}, pod).allowed


def test_privileged_checks_nothing():
    pod = {"hostNetwork": True, "containers": [ctr("a", **sc(privileged=True))]}
    assert EVALUATOR.checks_for(LevelVersion(PRIVILEGED)) == []
    assert EVALUATOR.evaluate(LevelVersion(PRIVILEGED, v1(3)), {}, pod).allowed


def test_restricted_lists_baseline_violations_first_and_drops_overridden_checks():
    # registry.go populate: baseline IDs sorted, then restricted IDs sorted; restricted
    # volumes replace hostPathVolumes (the hostPath volume is named once)
    pod = {"hostPID": True, "volumes": [{"name": "host", "hostPath": {"path": "/"}}],
           "containers": [ctr("c", **sc(privileged=True, capabilities={"add": ["SYS_ADMIN"]}))]}
    result = EVALUATOR.evaluate(LevelVersion(RESTRICTED), {}, pod)
    assert result.reasons == (
        "host namespaces", "privileged", "allowPrivilegeEscalation != false",
        "unrestricted capabilities", "restricted volume types", "runAsNonRoot != true",
        "seccompProfile")
    assert result.forbidden_reason().startswith("host namespaces, privileged, allowPrivilegeEscalation")
