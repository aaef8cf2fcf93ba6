"""Issue 27's attack "token from the other API server": two `kvert apiserver` processes on
one etcd were two clusters to their clients -- each had its own CA and ServiceAccount key,
so a token one issued got 401 from the other and a client could not fail over. Sharing a
PKI directory (--pki-dir) makes them one cluster identity; a third server with its own PKI
on the same etcd shows what "not one cluster" still looks like.

The 401 body is kube-apiserver's (``apierrors.NewUnauthorized("Unauthorized")`` written by
the authentication filter, staging/src/k8s.io/apiserver/pkg/endpoints/filters/authentication.go).
"""

from __future__ import annotations

import base64
import json
import ssl
import subprocess
import sys
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import jwt
import pytest
import yaml

from kvert.auth.sakeys import new_signing_key
from kvert.auth.serviceaccount import DEFAULT_ISSUER
from kvert.store.etcd import LocalEtcd

from .conftest import Kubectl, KvertUp

UNAUTHORIZED = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                "message": "Unauthorized", "reason": "Unauthorized", "code": 401}


@pytest.fixture(scope="module")
def etcd(tmp_path_factory):
    if not LocalEtcd.available():
        pytest.skip("etcd not installed (scripts/setup --test installs it)")
    server = LocalEtcd(str(tmp_path_factory.mktemp("etcd"))).start()
    yield "etcd://" + server.endpoint.split("://", 1)[1]
    server.stop()


class Servers:
    def __init__(self, root: Path, etcd: str):
        self.pki = root / "shared-pki"
        shared = ("--pki-dir", str(self.pki))
        self.a = KvertUp(root / "a", store=etcd, args=shared, command="apiserver")
        self.b = KvertUp(root / "b", store=etcd, args=shared, command="apiserver")
        self.c = KvertUp(root / "c", store=etcd, command="apiserver")     # its own PKI


@pytest.fixture(scope="module")
def servers(tmp_path_factory, etcd):
    found = Servers(tmp_path_factory.mktemp("identity"), etcd)
    # A and B start at once on an empty PKI directory: the race that would make two CAs
    with ThreadPoolExecutor(3) as pool:
        started = [pool.submit(s.start, 60) for s in (found.a, found.b, found.c)]
        errors = [f.exception() for f in started]
    try:
        assert errors == [None, None, None]
        yield found
    finally:
        for s in (found.a, found.b, found.c):
            s.stop()


def call(url: str, path: str, *, ca: Path, token: str | None = None,
         cert: tuple[Path, Path] | None = None, body: dict | None = None) -> tuple[int, dict]:
    context = ssl.create_default_context(cafile=str(ca))
    if cert is not None:
        context.load_cert_chain(str(cert[0]), str(cert[1]))
    headers = {"Content-Type": "application/json", "Accept": "application/json"}
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(url + path, data=data, headers=headers,
                                 method="POST" if data is not None else "GET")
    try:
        with urllib.request.urlopen(req, context=context, timeout=30) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


REVIEW = {"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"}
REVIEWS = "/apis/authentication.k8s.io/v1/selfsubjectreviews"


def whoami(url: str, ca: Path, **credentials) -> tuple[int, object]:
    status, answer = call(url, REVIEWS, ca=ca, body=REVIEW, **credentials)
    return status, (answer["status"]["userInfo"]["username"] if status == 201 else answer)


def admin(servers: Servers) -> tuple[Path, Path]:
    return servers.pki / "admin.crt", servers.pki / "admin.key"


def service_account_token(servers: Servers, url: str, name: str) -> str:
    ca = servers.pki / "ca.crt"
    call(url, "/api/v1/namespaces/default/serviceaccounts", ca=ca, cert=admin(servers),
         body={"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": name}})
    status, answer = call(url, f"/api/v1/namespaces/default/serviceaccounts/{name}/token", ca=ca,
                          cert=admin(servers),
                          body={"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
                                "spec": {"expirationSeconds": 3600}})
    assert status == 201, answer
    return answer["status"]["token"]


def test_the_servers_sharing_a_pki_dir_made_one_ca(servers):
    ca = (servers.pki / "ca.crt").read_bytes()
    for s in (servers.a, servers.b):
        config = yaml.safe_load(s.kubeconfig.read_text())
        assert base64.b64decode(config["clusters"][0]["cluster"]["certificate-authority-data"]) == ca
    own = (servers.c.data_dir / "pki" / "ca.crt").read_bytes()
    assert own != ca


def test_a_service_account_token_from_one_server_is_accepted_by_the_other(servers):
    ca = servers.pki / "ca.crt"
    token = service_account_token(servers, servers.a.url, "robot")
    assert whoami(servers.a.url, ca, token=token) == (201, "system:serviceaccount:default:robot")
    # the attack: fail over to B with A's token (was 401)
    assert whoami(servers.b.url, ca, token=token) == (201, "system:serviceaccount:default:robot")
    # a server with its own key, on the same etcd, still refuses it, as a foreign cluster does
    assert whoami(servers.c.url, servers.c.data_dir / "pki" / "ca.crt", token=token) == (401, UNAUTHORIZED)


def test_a_client_certificate_from_the_shared_ca_is_accepted_by_every_server(servers):
    ca = servers.pki / "ca.crt"
    for s in (servers.a, servers.b):
        assert whoami(s.url, ca, cert=admin(servers)) == (201, "kubernetes-admin")
    # C verifies client certificates against its own CA: the certificate is no identity
    # there. (kube-apiserver requests a certificate without verifying it in the handshake and
    # answers 401; kvert's TLS layer verifies the certificate it is given, so the handshake
    # fails instead: either way nothing is served.)
    with pytest.raises((ssl.SSLError, ConnectionError, urllib.error.URLError)):
        whoami(servers.c.url, servers.c.data_dir / "pki" / "ca.crt", cert=admin(servers))


def test_the_kubeconfig_of_one_server_works_against_the_other(servers, kubectl_binary, tmp_path):
    kubectl = Kubectl(kubectl_binary, servers.a.kubeconfig, tmp_path / "home")
    out = kubectl("--server", servers.b.url, "get", "namespace", "default", "-o", "name")
    assert out.stdout.strip() == "namespace/default"
    # C's serving certificate is not signed by the cluster CA the kubeconfig trusts
    refused = kubectl("--server", servers.c.url, "get", "namespace", "default", check=False)
    assert refused.returncode != 0 and "certificate signed by unknown authority" in refused.stderr


def test_after_rotation_old_tokens_still_work_and_foreign_keys_get_401(servers):
    ca = servers.pki / "ca.crt"
    before = service_account_token(servers, servers.b.url, "rotating")
    old_kid = jwt.get_unverified_header(before)["kid"]
    rotated = subprocess.run([sys.executable, "-m", "kvert.cli.main", "pki", "rotate-sa-key",
                              "--pki-dir", str(servers.pki)], capture_output=True, text=True, timeout=60)
    assert rotated.returncode == 0, rotated.stderr
    # no restart: B signs with the new key, A verifies it
    after = service_account_token(servers, servers.b.url, "rotating")
    assert jwt.get_unverified_header(after)["kid"] != old_kid
    assert whoami(servers.a.url, ca, token=after) == (201, "system:serviceaccount:default:rotating")
    # the token the old key signed stays valid (until it expires)
    assert whoami(servers.a.url, ca, token=before) == (201, "system:serviceaccount:default:rotating")
    # the same claims signed by a key that is not the cluster's: 401 on both
    claims = jwt.decode(before, options={"verify_signature": False})
    assert claims["iss"] == DEFAULT_ISSUER
    forged = jwt.encode(claims, new_signing_key(), algorithm="RS256", headers={"kid": old_kid})
    for s in (servers.a, servers.b):
        assert whoami(s.url, ca, token=forged) == (401, UNAUTHORIZED)
