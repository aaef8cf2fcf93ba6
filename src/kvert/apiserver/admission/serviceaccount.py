"""The ServiceAccount admission plugin (``plugin/pkg/admission/serviceaccount``).

On pod creation:

* an empty ``spec.serviceAccountName`` becomes ``default`` (the deprecated
  ``serviceAccount`` follows it, as the v1 conversion writes it);
* the ServiceAccount must exist: ``error looking up service account NS/NAME:
  serviceaccount "NAME" not found`` (403). The ``default`` one is looked up 10 times,
  100-200 ms apart, since the ServiceAccount controller may not have made it yet;
* unless ``automountServiceAccountToken`` is false (the pod's setting, else the
  ServiceAccount's), a projected volume ``kube-api-access-XXXXX`` (a ``serviceAccountToken``
  of 3607 s, the ``kube-root-ca.crt`` ConfigMap's ``ca.crt`` and the namespace) is added and
  mounted read-only at ``/var/run/secrets/kubernetes.io/serviceaccount`` in every container
  and init container that has nothing mounted there; an existing ``kube-api-access-``
  volume is reused;
* a pod without ``imagePullSecrets`` gets the ServiceAccount's;
* with the ServiceAccount annotation ``kubernetes.io/enforce-mountable-secrets: "true"``,
  secret volumes, secret env references and image pull secrets must be among the
  ServiceAccount's;
* mirror pods may not name a ServiceAccount, reference secrets or project tokens.

Not implemented: the check of secrets referenced by ephemeral containers added later.
"""

from __future__ import annotations

import random
from typing import Any

from kvert.api.errors import NotFound
from kvert.clock import Clock
from kvert.registry.admission import CREATE, Attributes
from kvert.store.base import Store

from .common import PODS, forbidden, is_pod, pod_spec

DEFAULT_SERVICE_ACCOUNT = "default"
ENFORCE_MOUNTABLE_SECRETS = "kubernetes.io/enforce-mountable-secrets"
VOLUME_PREFIX = "kube-api-access-"
TOKEN_MOUNT_PATH = "/var/run/secrets/kubernetes.io/serviceaccount"
TOKEN_EXPIRATION_SECONDS = 60 * 60 + 7     # serviceaccount.WarnOnlyBoundTokenExpirationSeconds
PROJECTED_DEFAULT_MODE = 0o644
MIRROR_POD_ANNOTATION = "kubernetes.io/config.mirror"
ROOT_CA_CONFIG_MAP = "kube-root-ca.crt"
DEFAULT_ATTEMPTS = 10
# names.SimpleNameGenerator: no vowels, no look-alike characters
_SUFFIX_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"
_TRUE = ("1", "t", "T", "TRUE", "true", "True")     # strconv.ParseBool


def token_volume_source() -> dict:
    """``TokenVolumeSource()``: the token, the cluster's CA and the namespace."""
    return {"defaultMode": PROJECTED_DEFAULT_MODE, "sources": [
        {"serviceAccountToken": {"expirationSeconds": TOKEN_EXPIRATION_SECONDS, "path": "token"}},
        {"configMap": {"name": ROOT_CA_CONFIG_MAP, "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
        {"downwardAPI": {"items": [{"path": "namespace",
                                    "fieldRef": {"apiVersion": "v1",
                                                 "fieldPath": "metadata.namespace"}}]}},
    ]}


def should_automount(service_account: dict, spec: dict) -> bool:
    """The pod's preference wins, then the ServiceAccount's; true by default."""
    for choice in (spec.get("automountServiceAccountToken"),
                   service_account.get("automountServiceAccountToken")):
        if isinstance(choice, bool):
            return choice
    return True


def _dicts(items: Any) -> list[dict]:
    return [i for i in items if isinstance(i, dict)] if isinstance(items, list) else []


def _env_secret_refs(container: dict) -> list[tuple[str, str]]:
    """(env var name, secret name) of each env var read from a secret."""
    return [(env.get("name", ""), ((env.get("valueFrom") or {}).get("secretKeyRef") or {})["name"])
            for env in _dicts(container.get("env"))
            if ((env.get("valueFrom") or {}).get("secretKeyRef") or {}).get("name")]


def _references_secrets(spec: dict) -> bool:
    """``podutil.VisitPodSecretNames`` finds anything."""
    if _dicts(spec.get("imagePullSecrets")):
        return True
    for volume in _dicts(spec.get("volumes")):
        if isinstance(volume.get("secret"), dict):
            return True
        if any(isinstance(s.get("secret"), dict)
               for s in _dicts((volume.get("projected") or {}).get("sources"))):
            return True
    for key in ("initContainers", "containers", "ephemeralContainers"):
        for container in _dicts(spec.get(key)):
            if _env_secret_refs(container) or any(
                    isinstance(e.get("secretRef"), dict) for e in _dicts(container.get("envFrom"))):
                return True
    return False


class ServiceAccount:
    name = "ServiceAccount"
    resources = frozenset({PODS})

    def __init__(self, store: Store, clock: Clock, *, seed: int | None = None):
        self.store = store
        self.clock = clock
        self._random = random.Random(seed)

    @staticmethod
    def _handles(attrs: Attributes) -> bool:
        return (attrs.operation == CREATE and is_pod(attrs) and not attrs.subresource
                and isinstance(attrs.object, dict))

    async def admit(self, attrs: Attributes) -> None:
        pod = attrs.object
        if pod is None or not self._handles(attrs):
            return
        if MIRROR_POD_ANNOTATION in ((pod.get("metadata") or {}).get("annotations") or {}):
            return   # never changed: the kubelet would not recognise it (validate checks it)
        spec = pod_spec(pod)
        if not spec.get("serviceAccountName"):
            spec["serviceAccountName"] = DEFAULT_SERVICE_ACCOUNT
        spec["serviceAccount"] = spec["serviceAccountName"]
        service_account = await self._service_account(attrs, spec["serviceAccountName"])
        if should_automount(service_account, spec):
            self._mount_token(spec)
        if not spec.get("imagePullSecrets") and service_account.get("imagePullSecrets"):
            spec["imagePullSecrets"] = [{"name": ref.get("name", "")}
                                        for ref in _dicts(service_account["imagePullSecrets"])]

    async def validate(self, attrs: Attributes) -> None:
        pod = attrs.object
        if pod is None or not self._handles(attrs):
            return
        spec: dict[str, Any] = pod["spec"] if isinstance(pod.get("spec"), dict) else {}
        if MIRROR_POD_ANNOTATION in ((pod.get("metadata") or {}).get("annotations") or {}):
            self._validate_mirror_pod(attrs, spec)
            return
        name = spec.get("serviceAccountName")
        if not name:
            pod_name = (pod.get("metadata") or {}).get("name", "")
            raise forbidden(attrs, f"no service account specified for pod "
                                   f"{attrs.namespace}/{pod_name}")
        service_account = await self._service_account(attrs, name)
        annotations = (service_account.get("metadata") or {}).get("annotations") or {}
        if annotations.get(ENFORCE_MOUNTABLE_SECRETS) in _TRUE:
            problem = _secret_reference_problem(service_account, spec)
            if problem:
                raise forbidden(attrs, problem)

    @staticmethod
    def _validate_mirror_pod(attrs: Attributes, spec: dict) -> None:
        if spec.get("serviceAccountName"):
            raise forbidden(attrs, "a mirror pod may not reference service accounts")
        if _references_secrets(spec):
            raise forbidden(attrs, "a mirror pod may not reference secrets")
        for volume in _dicts(spec.get("volumes")):
            if any(isinstance(s.get("serviceAccountToken"), dict)
                   for s in _dicts((volume.get("projected") or {}).get("sources"))):
                raise forbidden(attrs, "a mirror pod may not use ServiceAccountToken volume "
                                       "projections")

    async def _service_account(self, attrs: Attributes, name: str) -> dict:
        attempts = DEFAULT_ATTEMPTS if name == DEFAULT_SERVICE_ACCOUNT else 1
        pause = self._random.uniform(0.1, 0.2)
        for attempt in range(attempts):
            if attempt:
                await self.clock.sleep(pause)
            try:
                return self.store.get("serviceaccounts", attrs.namespace, name)
            except NotFound:
                continue
        raise forbidden(attrs, f"error looking up service account {attrs.namespace}/{name}: "
                               f'serviceaccount "{name}" not found')

    def _mount_token(self, spec: dict) -> None:
        volumes: list[Any] = spec["volumes"] if isinstance(spec.get("volumes"), list) else []
        existing = next((v.get("name") for v in _dicts(volumes)
                         if str(v.get("name", "")).startswith(VOLUME_PREFIX)), None)
        volume_name = existing or VOLUME_PREFIX + "".join(
            self._random.choice(_SUFFIX_ALPHABET) for _ in range(5))
        mount = {"name": volume_name, "readOnly": True, "mountPath": TOKEN_MOUNT_PATH}
        needed = False
        for key in ("initContainers", "containers"):
            for container in _dicts(spec.get(key)):
                mounts = container.get("volumeMounts")
                if not isinstance(mounts, list):
                    mounts = container["volumeMounts"] = []
                # something already mounted at the path keeps the token out of this container
                if any(isinstance(m, dict) and m.get("mountPath") == TOKEN_MOUNT_PATH
                       for m in mounts):
                    continue
                mounts.append(dict(mount))
                needed = True
        if needed and existing is None:
            spec["volumes"] = [*volumes, {"name": volume_name, "projected": token_volume_source()}]


def _secret_reference_problem(service_account: dict, spec: dict) -> str:
    """``limitSecretReferences``: the first reference the ServiceAccount does not allow."""
    name = (service_account.get("metadata") or {}).get("name", "")
    mountable = {ref.get("name") for ref in _dicts(service_account.get("secrets"))}
    for volume in _dicts(spec.get("volumes")):
        secret = volume.get("secret")
        if isinstance(secret, dict) and secret.get("secretName") not in mountable:
            return (f'volume with secret.secretName="{secret.get("secretName", "")}" is not allowed '
                    f"because service account {name} does not reference that secret")
    for key, what in (("initContainers", "init container"), ("containers", "container")):
        for container in _dicts(spec.get(key)):
            for env_name, secret_name in _env_secret_refs(container):
                if secret_name not in mountable:
                    return (f'{what} {container.get("name", "")} with envVar {env_name} referencing '
                            f'secret.secretName="{secret_name}" is not allowed because service '
                            f"account {name} does not reference that secret")
    pull = {ref.get("name") for ref in _dicts(service_account.get("imagePullSecrets"))}
    for i, ref in enumerate(_dicts(spec.get("imagePullSecrets"))):
        if ref.get("name") not in pull:
            return (f'imagePullSecrets[{i}].name="{ref.get("name", "")}" is not allowed because '
                    f"service account {name} does not reference that imagePullSecret")
    return ""

