"""The security context a container runs with, as the kubelet derives it from the pod.

* The *effective* context (upstream's ``securitycontext.DetermineEffectiveSecurityContext``):
  the container's ``securityContext``, with ``runAsUser``, ``runAsGroup``, ``runAsNonRoot``
  (and the SELinux, Windows, seccomp and AppArmor options) taken from the pod's where the
  container leaves them unset.
* ``runAsNonRoot`` is checked before the container is created (``verifyRunAsNonRoot`` in
  pkg/kubelet/kuberuntime/security_context_others.go): an explicit ``runAsUser: 0`` breaks
  the policy, and so does an image that runs as root. There are no images here, so every
  image runs as its runtime's user, root (upstream's ``getImageUser`` also treats an image
  without a user as root). The container then waits with ``CreateContainerConfigError``.
* What the runtime is given (:class:`LinuxContainerSecurity`): the user and group, the
  supplemental groups (``fsGroup`` first, then ``supplementalGroups``, the order of
  ``determineEffectiveSecurityContext``), ``privileged`` and ``no_new_privs``. Upstream
  sets no_new_privs only for ``allowPrivilegeEscalation: false``; here it is set unless
  the container is privileged or allows escalation explicitly, because a container here
  runs the host's own binaries, setuid ``su`` and ``sudo`` among them (see
  docs/kubernetes-choices.md).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kvert.kubelet.runtime.base import LinuxContainerSecurity

# the pod-level fields a container inherits where its own are unset
_INHERITED = ("seLinuxOptions", "windowsOptions", "runAsUser", "runAsGroup", "runAsNonRoot",
              "seccompProfile", "appArmorProfile")
IMAGE_USER = 0          # the user every image runs as without runAsUser: no image names another


class SecurityContextError(ValueError):
    """The container cannot be created with this security context (CreateContainerConfigError)."""


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def effective(pod: Mapping[str, Any], container: Mapping[str, Any]) -> dict[str, Any]:
    """The container's securityContext with the pod's fields it inherits filled in."""
    pod_sc = ((pod.get("spec") or {}).get("securityContext")) or {}
    out = dict(container.get("securityContext") or {})
    for key in _INHERITED:
        if out.get(key) is None and pod_sc.get(key) is not None:
            out[key] = pod_sc[key]
    return out


def _pod_name(pod: Mapping[str, Any]) -> str:
    """Upstream's ``format.Pod``: ``name_namespace(uid)``."""
    meta = pod.get("metadata") or {}
    return f"{meta.get('name', '')}_{meta.get('namespace', '')}({meta.get('uid', '')})"


def verify_run_as_non_root(pod: Mapping[str, Any], container: Mapping[str, Any],
                           image_uid: int | None = IMAGE_USER, image_user: str = "") -> None:
    """Raise SecurityContextError where ``runAsNonRoot`` forbids what the container would run
    as; the messages are upstream's."""
    sc = effective(pod, container)
    if sc.get("runAsNonRoot") is not True:
        return
    where = f'(pod: "{_pod_name(pod)}", container: {container.get("name", "")})'
    user = _int(sc.get("runAsUser"))
    if user is not None:
        if user == 0:
            raise SecurityContextError(f"container's runAsUser breaks non-root policy {where}")
        return
    if image_uid is None and image_user:
        raise SecurityContextError(f"container has runAsNonRoot and image has non-numeric user ({image_user}), "
                                   f"cannot verify user is non-root {where}")
    if image_uid == 0:
        raise SecurityContextError(f"container has runAsNonRoot and image will run as root {where}")


def linux_security(pod: Mapping[str, Any], container: Mapping[str, Any]) -> LinuxContainerSecurity:
    """What the runtime applies to the container's processes (after ``verify_run_as_non_root``)."""
    sc = effective(pod, container)
    pod_sc = ((pod.get("spec") or {}).get("securityContext")) or {}
    groups: list[int] = []
    fs_group = _int(pod_sc.get("fsGroup"))
    if fs_group is not None:
        groups.append(fs_group)
    groups.extend(g for g in (_int(v) for v in pod_sc.get("supplementalGroups") or []) if g is not None)
    privileged = sc.get("privileged") is True
    escalation = sc.get("allowPrivilegeEscalation")
    return LinuxContainerSecurity(run_as_user=_int(sc.get("runAsUser")), run_as_group=_int(sc.get("runAsGroup")),
                                  supplemental_groups=tuple(groups), privileged=privileged,
                                  no_new_privs=not privileged and escalation is not True)


__all__ = ["IMAGE_USER", "SecurityContextError", "effective", "linux_security", "verify_run_as_non_root"]
