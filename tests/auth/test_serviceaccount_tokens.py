"""Bound service-account tokens: claims, signing, the authenticator, the union with the
static token file, and TokenRequest (pkg/serviceaccount, pkg/registry/core/serviceaccount)."""

from __future__ import annotations

import base64
import json
import os
import stat
import uuid

import jwt
import pytest

from kvert.api.errors import BadRequest, Conflict, Invalid, NotFound
from kvert.api.meta import format_time
from kvert.auth.authenticator import Authenticator
from kvert.auth.serviceaccount import (DEFAULT_ISSUER, ServiceAccountAuthenticator,
                                       ServiceAccountTokens, TokenInvalid, claims)
from kvert.auth.tokens import ADMIN, TokenAuthenticator, node_identity
from kvert.clock import VirtualClock
from kvert.registry import Registry
from kvert.registry.tokenrequest import TokenRequests
from kvert.store import open_store

NOW = 1514764800          # the "now" of claims_test.go: 2018-01-01T00:00:00Z


class FixedClock:
    def __init__(self, now: float = NOW):
        self.t = float(now)

    def now(self) -> float:
        return self.t


@pytest.fixture(scope="module")
def signer(tmp_path_factory):
    return ServiceAccountTokens.load_or_create(tmp_path_factory.mktemp("pki") / "sa.key")


def _obj(name, uid, namespace="myns", **meta):
    return {"metadata": {"name": name, "namespace": namespace, "uid": uid, **meta}}


def _payload(token: str) -> dict:
    part = token.split(".")[1]
    return json.loads(base64.urlsafe_b64decode(part + "=" * (-len(part) % 4)))


# ---- claims: TestClaims in pkg/serviceaccount/claims_test.go --------------------------------

SA = _obj("mysvcacct", "mysvcacct-uid")
POD = _obj("mypod", "mypod-uid")
SECRET = _obj("mysecret", "mysecret-uid")


@pytest.mark.parametrize("bound, exp, warn_after, aud, want_std, want_private", [
    # pod, empty audience
    ({"pod": POD}, 100, 0, [],
     {"sub": "system:serviceaccount:myns:mysvcacct", "iat": NOW, "nbf": NOW, "exp": NOW + 100},
     {"namespace": "myns", "serviceaccount": {"name": "mysvcacct", "uid": "mysvcacct-uid"},
      "pod": {"name": "mypod", "uid": "mypod-uid"}}),
    # secret, single member audience
    ({"secret": SECRET}, 100, 0, ["1"],
     {"sub": "system:serviceaccount:myns:mysvcacct", "aud": ["1"], "iat": NOW, "nbf": NOW,
      "exp": NOW + 100},
     {"namespace": "myns", "serviceaccount": {"name": "mysvcacct", "uid": "mysvcacct-uid"},
      "secret": {"name": "mysecret", "uid": "mysecret-uid"}}),
    # no object binding, multimember audience
    ({}, 100, 0, ["1", "2"],
     {"sub": "system:serviceaccount:myns:mysvcacct", "aud": ["1", "2"], "iat": NOW, "nbf": NOW,
      "exp": NOW + 100},
     {"namespace": "myns", "serviceaccount": {"name": "mysvcacct", "uid": "mysvcacct-uid"}}),
    # warn after provided
    ({"pod": POD}, 60 * 60 * 24, 60 * 60, [],
     {"sub": "system:serviceaccount:myns:mysvcacct", "iat": NOW, "nbf": NOW,
      "exp": NOW + 60 * 60 * 24},
     {"namespace": "myns", "serviceaccount": {"name": "mysvcacct", "uid": "mysvcacct-uid"},
      "pod": {"name": "mypod", "uid": "mypod-uid"}, "warnafter": NOW + 60 * 60}),
])
def test_claims(bound, exp, warn_after, aud, want_std, want_private):
    got = claims(SA, audiences=aud, now=NOW, expiration_seconds=exp,
                 warn_after_seconds=warn_after, **bound)
    uuid.UUID(got.pop("jti"))          # ServiceAccountTokenJTI: a fresh UUID per token
    private = got.pop("kubernetes.io")
    assert got == want_std
    assert private == want_private


def test_claims_bind_one_object():
    # "internal error, token can only be bound to one object type"
    with pytest.raises(ValueError):
        claims(SA, audiences=[], now=NOW, expiration_seconds=0, pod=POD, secret=SECRET)


def test_pod_bound_claims_carry_the_node():
    # ServiceAccountTokenPodNodeInfo: the node of the pod, its uid only when known
    got = claims(SA, audiences=[], now=NOW, expiration_seconds=600, pod=POD,
                 node={"metadata": {"name": "node-1"}})
    assert got["kubernetes.io"]["node"] == {"name": "node-1"}


# ---- the signer -------------------------------------------------------------------------------

def test_key_file_is_private_and_reused(tmp_path):
    path = tmp_path / "pki" / "sa.key"
    first = ServiceAccountTokens.load_or_create(path)
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    again = ServiceAccountTokens.load_or_create(path)
    assert first.key_id == again.key_id
    token = first.sign({"sub": "x"})
    assert again.verify(token)["sub"] == "x"


def test_tokens_are_rs256_jwts_with_the_key_id_and_issuer(signer):
    token = signer.sign(claims(SA, audiences=["a"], now=NOW, expiration_seconds=600))
    header = jwt.get_unverified_header(token)
    assert header == {"alg": "RS256", "kid": signer.key_id}
    assert _payload(token)["iss"] == DEFAULT_ISSUER == "https://kubernetes.default.svc.cluster.local"
    public = signer.public_key_pem()
    # anyone with sa.pub can verify it, as with kube-apiserver's keys
    assert jwt.decode(token, public, algorithms=["RS256"], audience="a",
                      options={"verify_exp": False})["sub"] == "system:serviceaccount:myns:mysvcacct"


def test_tampered_or_foreign_tokens_do_not_verify(signer, tmp_path):
    token = signer.sign({"sub": "x"})
    head, body, sig = token.split(".")
    forged = base64.urlsafe_b64encode(json.dumps({"sub": "admin", "iss": DEFAULT_ISSUER}).encode())
    assert signer.verify(f"{head}.{forged.decode().rstrip('=')}.{sig}") is None
    other = ServiceAccountTokens.load_or_create(tmp_path / "other.key")
    assert signer.verify(other.sign({"sub": "x"})) is None
    # the same key under another issuer name is another issuer
    elsewhere = ServiceAccountTokens.load_or_create(tmp_path / "other.key", issuer="https://elsewhere")
    assert other.verify(elsewhere.sign({"sub": "x"})) is None


# ---- the authenticator: TestValidatePrivateClaims in claims_test.go -----------------------------

class FakeStore:
    """Objects by (resource, name), as claims_test.go's fakeGetter."""

    def __init__(self, *objects):
        self.objects = {(r, o["metadata"]["name"]): o for r, o in objects}

    def get(self, resource, namespace, name):
        try:
            return self.objects[(resource, name)]
        except KeyError:
            raise NotFound(resource, name) from None


SA2 = ("serviceaccounts", _obj("saname", "sauid", "ns"))
SECRET2 = ("secrets", _obj("secretname", "secretuid", "ns"))
POD2 = ("pods", _obj("podname", "poduid", "ns"))
PRIVATE_SA = {"namespace": "ns", "serviceaccount": {"name": "saname", "uid": "sauid"}}


def _deleted(entry, at):
    resource, obj = entry
    return resource, {"metadata": {**obj["metadata"], "deletionTimestamp": format_time(at)}}


def _check(signer, store, private, *, exp=NOW, nbf=None):
    authn = ServiceAccountAuthenticator(signer, store, FixedClock(), audiences=("api",))
    body = {"aud": ["api"], "exp": exp, "kubernetes.io": private}
    if nbf is not None:
        body["nbf"] = nbf
    return authn.authenticate_token(signer.sign(body))


CASES = {
    "good": ((SA2,), PRIVATE_SA, {}, ""),
    "expired": ((SA2,), PRIVATE_SA, {"exp": NOW - 1000 * 3600}, "service account token has expired"),
    "not yet valid": ((SA2,), PRIVATE_SA, {"nbf": NOW + 1000 * 3600},
                      "service account token is not valid yet"),
    "missing serviceaccount": ((), PRIVATE_SA, {}, 'serviceaccounts "saname" not found'),
    "missing secret": ((SA2,), {**PRIVATE_SA, "secret": {"name": "secretname", "uid": "secretuid"}},
                       {}, "service account token has been invalidated"),
    "missing pod": ((SA2,), {**PRIVATE_SA, "pod": {"name": "podname", "uid": "poduid"}}, {},
                    "service account token has been invalidated"),
    "different uid serviceaccount": ((SA2,), {**PRIVATE_SA, "serviceaccount":
                                              {"name": "saname", "uid": "sauidold"}}, {},
                                     "service account UID (sauid) does not match claim (sauidold)"),
    "different uid secret": ((SA2, SECRET2), {**PRIVATE_SA, "secret": {"name": "secretname",
                                                                        "uid": "secretuidold"}}, {},
                             "secret UID (secretuid) does not match service account secret ref "
                             "claim (secretuidold)"),
    "different uid pod": ((SA2, POD2), {**PRIVATE_SA, "pod": {"name": "podname", "uid": "poduidold"}},
                          {}, "pod UID (poduid) does not match service account pod ref claim "
                              "(poduidold)"),
}
# deletionTestCases: deleted more than the 60 s leeway ago is gone
for label, at, gone in (("valid", None, False), ("deleted now", NOW, False),
                        ("deleted near past", NOW - 1, False), ("deleted near future", NOW + 1, False),
                        ("deleted now-leeway", NOW - 60, False), ("deleted now-leeway-1", NOW - 61, True)):
    def _maybe(entry, at=at):
        return entry if at is None else _deleted(entry, at)
    CASES[f"{label} serviceaccount"] = ((_maybe(SA2),), PRIVATE_SA, {},
                                        "service account ns/saname has been deleted" if gone else "")
    CASES[f"{label} secret"] = ((SA2, _maybe(SECRET2)),
                                {**PRIVATE_SA, "secret": {"name": "secretname", "uid": "secretuid"}}, {},
                                "service account token has been invalidated" if gone else "")
    CASES[f"{label} pod"] = ((SA2, _maybe(POD2)),
                             {**PRIVATE_SA, "pod": {"name": "podname", "uid": "poduid"}}, {},
                             "service account token has been invalidated" if gone else "")


@pytest.mark.parametrize("objects, private, times, error", CASES.values(), ids=CASES.keys())
def test_validate_private_claims(signer, objects, private, times, error):
    store = FakeStore(*objects)
    if not error:
        user, _ = _check(signer, store, private, **times)
        assert user.name == "system:serviceaccount:ns:saname"
        return
    with pytest.raises(TokenInvalid) as e:
        _check(signer, store, private, **times)
    assert str(e.value) == error


def test_user_of_a_pod_bound_token(signer):
    # ServiceAccountInfo.UserInfo: name, uid, groups and the pod/node/credential extras
    node = ("nodes", _obj("node-1", "node-uid", ""))
    store = FakeStore(SA2, POD2, node)
    found = claims(SA2[1], audiences=["api"], now=NOW, expiration_seconds=600, pod=POD2[1],
                   node=node[1])
    authn = ServiceAccountAuthenticator(signer, store, FixedClock(), audiences=("api",))
    user, until = authn.authenticate_token(signer.sign(found))
    assert user.name == "system:serviceaccount:ns:saname"
    assert user.uid == "sauid"
    assert user.groups == ("system:serviceaccounts", "system:serviceaccounts:ns")
    assert user.extra_dict() == {
        "authentication.kubernetes.io/credential-id": [f"JTI={found['jti']}"],
        "authentication.kubernetes.io/node-name": ["node-1"],
        "authentication.kubernetes.io/node-uid": ["node-uid"],
        "authentication.kubernetes.io/pod-name": ["podname"],
        "authentication.kubernetes.io/pod-uid": ["poduid"],
    }
    assert until == NOW + 600 + 60


def test_node_bound_token_needs_the_same_node(signer):
    node = ("nodes", _obj("node-1", "node-uid", ""))
    found = claims(SA2[1], audiences=["api"], now=NOW, expiration_seconds=600, node=node[1])
    token = signer.sign(found)
    authn = ServiceAccountAuthenticator(signer, FakeStore(SA2, node), FixedClock(), audiences=("api",))
    assert authn.authenticate_token(token)[0].extra_dict()[
        "authentication.kubernetes.io/node-name"] == ["node-1"]
    recreated = ("nodes", _obj("node-1", "new-uid", ""))
    authn = ServiceAccountAuthenticator(signer, FakeStore(SA2, recreated), FixedClock(),
                                        audiences=("api",))
    with pytest.raises(TokenInvalid, match=r"node UID \(new-uid\) does not match"):
        authn.authenticate_token(token)


def test_audience_must_be_the_api_servers(signer):
    authn = ServiceAccountAuthenticator(signer, FakeStore(SA2), FixedClock())
    assert authn.audiences == (DEFAULT_ISSUER,)    # --api-audiences defaults to the issuer
    body = {"aud": ["vault"], "exp": NOW + 600, "kubernetes.io": PRIVATE_SA}
    with pytest.raises(TokenInvalid, match="token audiences"):
        authn.authenticate_token(signer.sign(body))
    body["aud"] = ["vault", DEFAULT_ISSUER]          # audiences intersect: accepted
    assert authn.authenticate_token(signer.sign(body))[0].name == "system:serviceaccount:ns:saname"


def test_tokens_of_other_issuers_are_not_ours(signer):
    authn = ServiceAccountAuthenticator(signer, FakeStore(SA2), FixedClock())
    assert authn.authenticate_token("not-a-jwt") is None
    foreign = jwt.encode({"iss": "https://accounts.example.com"}, "k" * 32, algorithm="HS256")
    assert authn.authenticate_token(foreign) is None


# ---- the union authenticator ----------------------------------------------------------------

def test_union_static_tokens_then_service_accounts(signer, tmp_path):
    static = TokenAuthenticator.load_or_create(tmp_path / "tokens.csv")
    clock = FixedClock()
    union = Authenticator(static, clock, ServiceAccountAuthenticator(signer, FakeStore(SA2), clock))
    admin = union.authenticate(f"Bearer {static.token_for(ADMIN)}")
    # the static file's admin is a cluster admin; every user gets system:authenticated
    assert admin.groups == ("system:masters", "system:authenticated")
    token = signer.sign({"aud": [DEFAULT_ISSUER], "exp": NOW + 600, "kubernetes.io": PRIVATE_SA})
    user = union.authenticate(f"bearer {token}")
    assert user.groups == ("system:serviceaccounts", "system:serviceaccounts:ns",
                           "system:authenticated")
    assert union.authenticate("Bearer nope") is None
    assert union.authenticate(None) is None
    assert union.authenticate("Basic abc") is None


def test_union_caches_successes_for_ten_seconds_only(signer, tmp_path):
    static = TokenAuthenticator.load_or_create(tmp_path / "tokens.csv")
    clock = FixedClock()
    store = FakeStore(SA2, POD2)
    union = Authenticator(static, clock, ServiceAccountAuthenticator(signer, store, clock))
    token = signer.sign(claims(SA2[1], audiences=[DEFAULT_ISSUER], now=NOW, expiration_seconds=3600,
                               pod=POD2[1]))
    assert union.authenticate(f"Bearer {token}") is not None
    del store.objects[("pods", "podname")]            # the pod goes
    clock.t += 5
    assert union.authenticate(f"Bearer {token}") is not None     # still cached
    clock.t += 6
    assert union.authenticate(f"Bearer {token}") is None         # looked at again: invalidated


def test_cache_never_outlives_the_token(signer, tmp_path):
    static = TokenAuthenticator.load_or_create(tmp_path / "tokens.csv")
    clock = FixedClock()
    union = Authenticator(static, clock, ServiceAccountAuthenticator(signer, FakeStore(SA2), clock))
    token = signer.sign({"aud": [DEFAULT_ISSUER], "exp": NOW - 55, "kubernetes.io": PRIVATE_SA})
    assert union.authenticate(f"Bearer {token}") is not None      # within the 60 s leeway
    clock.t += 6
    assert union.authenticate(f"Bearer {token}") is None


# ---- the static token file ------------------------------------------------------------------

def test_ensure_adds_an_identity_once(tmp_path):
    path = tmp_path / "tokens.csv"
    tokens = TokenAuthenticator.load_or_create(path)
    user, groups = node_identity("node-4")
    assert (user, groups) == ("system:node:node-4", ("system:nodes",))
    token = tokens.ensure(user, groups)
    assert tokens.ensure(user, groups) == token
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    found = tokens.authenticate(f"Bearer {token}")
    assert (found.name, found.groups) == ("system:node:node-4", ("system:nodes",))
    assert path.read_text().splitlines()[-1] == f'{token},system:node:node-4,system:node:node-4,system:nodes'


def test_a_running_server_sees_tokens_added_by_another_process(tmp_path):
    path = tmp_path / "tokens.csv"
    clock = FixedClock()
    server = TokenAuthenticator.load_or_create(path, clock)
    other = TokenAuthenticator.load_or_create(path)           # e.g. `kvert node` started later
    token = other.ensure(*node_identity("node-9"))
    # an unknown token makes the server look at the file at once (the agent's first request)
    assert server.authenticate(f"Bearer {token}").name == "system:node:node-9"
    assert server.authenticate("Bearer not-a-token") is None


# ---- TokenRequest: pkg/registry/core/serviceaccount/storage/token.go ---------------------------

class Env:
    def __init__(self, signer, **settings):
        self.clock = VirtualClock(NOW)
        self.store = open_store("memory", clock=self.clock)
        self.registry = Registry(self.store, self.clock,
                                 token_requests=TokenRequests(signer, **settings))
        for ns in ("default",):
            self.run(self.registry.create("namespaces", {"metadata": {"name": ns}}))
        self.sa = self.create("serviceaccounts", {"metadata": {"name": "foo"}})

    def run(self, coro):
        return self.clock.run(coro)

    def create(self, resource, obj):
        return self.run(self.registry.create(resource, obj, namespace="default"))

    def token(self, body, name="foo", warnings=None):
        return self.run(self.registry.create_token("default", name, body, warnings=warnings))


def _pod(name="test", account="foo", node=""):
    spec = {"serviceAccountName": account, "containers": [{"name": "c", "image": "busybox"}]}
    if node:
        spec["nodeName"] = node
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": spec}


def test_token_request_defaults(signer):
    env = Env(signer)
    out = env.token({"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": {}})
    assert out["metadata"] == {"name": "foo", "namespace": "default",
                               "creationTimestamp": "2018-01-01T00:00:00Z"}
    # SetDefaults_TokenRequestSpec: an hour; the API server's audiences
    assert out["spec"] == {"audiences": [DEFAULT_ISSUER], "expirationSeconds": 3600,
                           "boundObjectRef": None}
    assert out["status"]["expirationTimestamp"] == "2018-01-01T01:00:00Z"
    found = _payload(out["status"]["token"])
    assert found["sub"] == "system:serviceaccount:default:foo"
    assert found["exp"] - found["iat"] == 3600
    assert found["kubernetes.io"] == {"namespace": "default", "serviceaccount": {
        "name": "foo", "uid": env.sa["metadata"]["uid"]}}


@pytest.mark.parametrize("seconds", [599, 60, 0, -1, (1 << 32) + 1])
def test_token_request_lifetime_limits(signer, seconds):
    # ValidateTokenRequest
    env = Env(signer)
    with pytest.raises(Invalid) as e:
        env.token({"spec": {"expirationSeconds": seconds}})
    detail = ("may not specify a duration less than 10 minutes" if seconds < 600 else
              "may not specify a duration larger than 2^32 seconds")
    assert str(e.value) == (f'TokenRequest.authentication.k8s.io "" is invalid: '
                            f"spec.expirationSeconds: Invalid value: {seconds}: {detail}")
    assert e.value.code == 422


def test_token_request_for_a_missing_service_account(signer):
    env = Env(signer)
    with pytest.raises(NotFound) as e:
        env.token({"spec": {}}, name="nope")
    assert str(e.value) == 'serviceaccounts "nope" not found'


def test_token_request_name_must_match(signer):
    env = Env(signer)
    with pytest.raises(Invalid) as e:
        env.token({"metadata": {"name": "bar"}, "spec": {}})
    assert str(e.value) == ('TokenRequest.authentication.k8s.io "foo" is invalid: metadata.name: '
                            'Invalid value: "bar": must match the service account name if specified')


def test_bound_to_a_pod_of_the_service_account(signer):
    env = Env(signer)
    env.create("nodes", {"metadata": {"name": "node-1"}})
    pod = env.create("pods", _pod(node="node-1"))
    node_uid = env.store.get("nodes", "", "node-1")["metadata"]["uid"]
    ref = {"apiVersion": "v1", "kind": "Pod", "name": "test", "uid": pod["metadata"]["uid"]}
    out = env.token({"spec": {"boundObjectRef": ref}})
    assert out["spec"]["boundObjectRef"] == ref
    private = _payload(out["status"]["token"])["kubernetes.io"]
    assert private["pod"] == {"name": "test", "uid": pod["metadata"]["uid"]}
    assert private["node"] == {"name": "node-1", "uid": node_uid}


def test_bound_object_errors(signer):
    env = Env(signer)
    env.create("serviceaccounts", {"metadata": {"name": "other"}})
    env.create("pods", _pod(account="other"))
    with pytest.raises(BadRequest) as e:
        env.token({"spec": {"boundObjectRef": {"apiVersion": "v1", "kind": "Pod", "name": "test"}}})
    assert str(e.value) == ('cannot bind token for serviceaccount "foo" to pod running with '
                            "different serviceaccount name.")
    with pytest.raises(BadRequest) as e:
        env.token({"spec": {"boundObjectRef": {"apiVersion": "apps/v1", "kind": "Deployment",
                                               "name": "x"}}})
    assert str(e.value) == "cannot bind token to object of type apps/v1, Kind=Deployment"
    with pytest.raises(NotFound):
        env.token({"spec": {"boundObjectRef": {"apiVersion": "v1", "kind": "Secret", "name": "x"}}})
    env.create("secrets", {"metadata": {"name": "s"}})
    with pytest.raises(Conflict) as e:
        env.token({"spec": {"boundObjectRef": {"apiVersion": "v1", "kind": "Secret", "name": "s",
                                               "uid": "old"}}})
    assert str(e.value) == ('Operation cannot be fulfilled on Secret "s": the UID in the bound object '
                            "reference (old) does not match the UID in record. The object might have "
                            "been deleted and then recreated")


# TestCreate_Token_WithExpiryCap (the token's exp, for a pod-bound 3607 s request for the API
# server's audiences)
@pytest.mark.parametrize("extend, max_seconds, age", [
    (False, 5 * 60 * 60, 3607),                          # passed expiration respected if less than max
    (True, 2 * 365 * 24 * 60 * 60, 365 * 24 * 60 * 60),  # ExpirationExtensionSeconds used for exp
    (True, 5 * 60 * 60, 365 * 24 * 60 * 60),             # ExpirationSeconds used for exp
    (False, 30 * 60, 30 * 60),                           # maxExpirationSeconds honoured, no extension
])
def test_expiry_cap_and_extension(signer, extend, max_seconds, age):
    env = Env(signer, audiences=("aud-1", "aud-2"), max_expiration_seconds=max_seconds,
              extend_expiration=extend)
    env.create("pods", _pod())
    warnings = []
    out = env.token({"spec": {"expirationSeconds": 3607, "audiences": ["aud-1", "aud-2"],
                              "boundObjectRef": {"apiVersion": "v1", "kind": "Pod", "name": "test"}}},
                    warnings=warnings)
    found = _payload(out["status"]["token"])
    assert found["exp"] - found["iat"] == age
    answered = min(3607, max_seconds)
    assert out["spec"]["expirationSeconds"] == answered
    assert out["status"]["expirationTimestamp"] == format_time(NOW + answered)
    if age == 365 * 24 * 60 * 60:
        assert found["kubernetes.io"]["warnafter"] == NOW + 3607
    if max_seconds < 3607:
        assert warnings == ["requested expiration of 3607 seconds shortened to 1800 seconds"]


def test_not_served_without_a_signer():
    clock = VirtualClock(NOW)
    registry = Registry(open_store("memory", clock=clock), clock)
    with pytest.raises(NotFound):
        clock.run(registry.create_token("default", "foo", {"spec": {}}))
