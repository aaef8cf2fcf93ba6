"""Secret and ServiceAccount validation (pkg/apis/core/validation/validation_test.go)."""

import base64

import pytest

from kvert.api.validation import validate, validate_update

from .validation_helpers import (FORBIDDEN, INVALID, REQUIRED, TOO_LONG, assert_cause, assert_valid,
                                 edit)


def b64(text: str | bytes) -> str:
    return base64.b64encode(text.encode() if isinstance(text, str) else text).decode()


def secret(type_=None, data=None, **meta) -> dict:
    obj = {"apiVersion": "v1", "kind": "Secret",
           "metadata": {"name": "foo", "namespace": "bar", **meta},
           "data": {k: b64(v) for k, v in (data if data is not None else {"data-1": "bar"}).items()}}
    if type_:
        obj["type"] = type_
    return obj


SA_TOKEN = "kubernetes.io/service-account-token"


def valid_sa_token_secret() -> dict:
    return secret(SA_TOKEN, annotations={"kubernetes.io/service-account.name": "foo"})


# TestValidateSecret
def test_valid_secrets():
    assert_valid(validate(secret()))
    assert_valid(validate(valid_sa_token_secret()))
    assert_valid(validate(secret(data={"data-1": "bar", ".key": "bar"})))     # leading dot key


@pytest.mark.parametrize("change, field, reason", [
    (lambda s: s["metadata"].update(name=""), "metadata.name", REQUIRED),
    (lambda s: s["metadata"].update(name="NoUppercaseOrSpecialCharsLike=Equals"), "metadata.name",
     INVALID),
    (lambda s: s["metadata"].update(namespace=""), "metadata.namespace", REQUIRED),
    (lambda s: s["metadata"].update(namespace="NoUppercaseOrSpecialCharsLike=Equals"),
     "metadata.namespace", INVALID),
    (lambda s: s.update(data={"over": b64(bytes(1024 * 1024 + 1))}), "data", TOO_LONG),
    (lambda s: s["data"].update({"a*b": b64("whoops")}), "data[a*b]", INVALID),
    (lambda s: s["data"].update({".": b64("bar")}), "data[.]", INVALID),
    (lambda s: s["data"].update({"..": b64("bar")}), "data[..]", INVALID),
])
def test_invalid_secrets(change, field, reason):
    assert_cause(validate(edit(secret(), change)), field, reason)


@pytest.mark.parametrize("change", [
    lambda s: s["metadata"]["annotations"].update({"kubernetes.io/service-account.name": ""}),
    lambda s: s["metadata"]["annotations"].pop("kubernetes.io/service-account.name"),
    lambda s: s["metadata"].pop("annotations"),
])
def test_service_account_token_secret_needs_the_account_name(change):
    assert_cause(validate(edit(valid_sa_token_secret(), change)),
                 "metadata.annotations[kubernetes.io/service-account.name]", REQUIRED)


def test_size_counts_decoded_bytes():
    # 1 MiB exactly is allowed; its base64 form is larger and does not count
    assert_valid(validate(secret(data={"exact": bytes(1024 * 1024)})))


DOCKERCFG = '{"https://index.docker.io/v1/": {"auth": "Y2x1ZWRyb29sZXIwMDAxOnBhc3N3b3Jk","email": "fake@example.com"}}'
DOCKER_CONFIG_JSON = '{"auths":{"https://index.docker.io/v1/": {"auth": "Y2x1ZWRyb29sZXIwMDAxOnBhc3N3b3Jk","email": "fake@example.com"}}}'


# TestValidateDockerConfigSecret
@pytest.mark.parametrize("type_, key, content", [
    ("kubernetes.io/dockercfg", ".dockercfg", DOCKERCFG),
    ("kubernetes.io/dockerconfigjson", ".dockerconfigjson", DOCKER_CONFIG_JSON),
])
def test_docker_config_secrets(type_, key, content):
    assert_valid(validate(secret(type_, {key: content})))
    assert_cause(validate(secret(type_, {"other": "x"})), f"data[{key}]", REQUIRED)
    empty = validate(secret(type_, {key: ""}))
    assert_cause(empty, f"data[{key}]", INVALID, "unexpected end of JSON input")
    bad = validate(secret(type_, {key: "bad"}))
    assert_cause(bad, f"data[{key}]", INVALID, "invalid character 'b' looking for beginning of value")
    # the content is never shown, only Kubernetes' placeholder
    assert all("<secret contents redacted>" in c.message for c in empty + bad)


# TestValidateBasicAuthSecret
def test_basic_auth_secret():
    t = "kubernetes.io/basic-auth"
    assert_valid(validate(secret(t, {"username": "u", "password": "p"})))
    assert_valid(validate(secret(t, {"username": ""})))       # present, even empty, is enough
    causes = validate(secret(t, {"other": "x"}))
    assert_cause(causes, "data[username]", REQUIRED)
    assert_cause(causes, "data[password]", REQUIRED)


# TestValidateSSHAuth
def test_ssh_auth_secret():
    t = "kubernetes.io/ssh-auth"
    assert_valid(validate(secret(t, {"ssh-privatekey": "fake-ssh-private-key"})))
    assert_cause(validate(secret(t, {"other": "x"})), "data[ssh-privatekey]", REQUIRED)
    assert_cause(validate(secret(t, {"ssh-privatekey": ""})), "data[ssh-privatekey]", REQUIRED)


def test_tls_secret():
    t = "kubernetes.io/tls"
    assert_valid(validate(secret(t, {"tls.crt": "c", "tls.key": "k"})))
    causes = validate(secret(t, {}))
    assert_cause(causes, "data[tls.crt]", REQUIRED)
    assert_cause(causes, "data[tls.key]", REQUIRED)


def test_values_never_appear_in_causes():
    causes = validate(secret("kubernetes.io/dockerconfigjson", {".dockerconfigjson": "[hunter2]"}))
    causes += validate(edit(secret(), lambda s: s["data"].update({"k": "hunter2!"})))
    assert causes and not any("hunter2" in c.message for c in causes)


def _stored(obj: dict) -> dict:
    out = edit(obj, lambda s: s["metadata"].update(uid="u1", resourceVersion="1"))
    out.setdefault("type", "Opaque")
    return out


# TestValidateSecretUpdate
def test_secret_update_rules():
    old = _stored(secret())
    assert_valid(validate_update(edit(old, lambda s: s["data"].update({"k2": b64("v")})), old))
    assert_valid(validate_update(edit(old, lambda s: s.update(immutable=True)), old))
    assert_cause(validate_update(edit(old, lambda s: s.update(type="kubernetes.io/tls",
                                                              data={"tls.crt": "", "tls.key": ""})),
                                 old), "type", INVALID, "field is immutable")
    frozen = edit(old, lambda s: s.update(immutable=True))
    assert_valid(validate_update(edit(frozen, lambda s: s["metadata"].update(labels={"a": "b"})),
                                 frozen))
    assert_cause(validate_update(edit(frozen, lambda s: s.update(immutable=False)), frozen),
                 "immutable", FORBIDDEN, "field is immutable when `immutable` is set")
    assert_cause(validate_update(edit(frozen, lambda s: s["data"].update({"k2": b64("v")})), frozen),
                 "data", FORBIDDEN, "field is immutable when `immutable` is set")


# TestValidateServiceAccount / TestValidateServiceAccountUpdate: the metadata rules
def test_service_account():
    sa = {"apiVersion": "v1", "kind": "ServiceAccount",
          "metadata": {"name": "build-robot", "namespace": "default"},
          "secrets": [{"name": "legacy"}], "imagePullSecrets": [{"name": "registry"}],
          "automountServiceAccountToken": False}
    assert_valid(validate(sa))
    assert_cause(validate(edit(sa, lambda s: s["metadata"].update(name="Build_Robot"))),
                 "metadata.name", INVALID)
    assert_cause(validate(edit(sa, lambda s: s["metadata"].pop("namespace"))), "metadata.namespace",
                 REQUIRED)
    old = edit(sa, lambda s: s["metadata"].update(uid="u1", resourceVersion="1"))
    assert_valid(validate_update(edit(old, lambda s: s.update(automountServiceAccountToken=True)), old))
    assert_cause(validate_update(edit(old, lambda s: s["metadata"].update(uid="u2")), old),
                 "metadata.uid", INVALID)
