"""Real kubectl against an API server wired as a cluster with service accounts is: the union
authenticator, TokenRequest, the ServiceAccount admission plugin and the serviceaccount and
root CA controllers (the wiring ``kvert.cluster`` is to do, assembled here by hand)."""

from __future__ import annotations

import asyncio
import base64
import datetime
import json
import ssl
import threading
import urllib.error
import urllib.request

import pytest
import yaml

from kvert.apiserver.admission import default_chain
from kvert.apiserver.certs import ensure_pki
from kvert.apiserver.kubeconfig import write_kubeconfig
from kvert.apiserver.server import ApiServer
from kvert.auth.authenticator import Authenticator
from kvert.auth.serviceaccount import DEFAULT_ISSUER, ServiceAccountAuthenticator, ServiceAccountTokens
from kvert.auth.tokens import ADMIN, TokenAuthenticator
from kvert.client import InProcessClient
from kvert.clock import WallClock
from kvert.controllers import ControllerManager
from kvert.controllers.manager import ALL_CONTROLLERS
from kvert.registry.tokenrequest import TokenRequests
from kvert.store import open_store

from .conftest import Kubectl, wait_for

PUBLISHER = "root-ca-cert-publisher"


class Cluster:
    """The API server and controller manager in a thread of their own (kubectl blocks)."""

    def __init__(self, data_dir):
        self.data_dir = data_dir
        self.loop = asyncio.new_event_loop()
        self.ready = threading.Event()
        self.url = ""
        self.kubeconfig = data_dir / "kubeconfig"
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self):
        self.loop.run_until_complete(self._main())

    async def _main(self):
        clock = WallClock()
        now = datetime.datetime.now(datetime.timezone.utc)
        self.pki = ensure_pki(self.data_dir / "pki", now)
        store = open_store("memory", clock=clock)
        signer = ServiceAccountTokens.load_or_create(self.data_dir / "pki" / "sa.key")
        static = TokenAuthenticator.load_or_create(self.data_dir / "tokens.csv", clock)
        authenticator = Authenticator(static, clock,
                                      ServiceAccountAuthenticator(signer, store, clock))
        server = ApiServer(store, clock, authenticator=authenticator,
                           admission=default_chain(store, clock, service_accounts=True),
                           token_requests=TokenRequests(signer))
        await server.bootstrap()
        manager = ControllerManager(
            InProcessClient(server.registry, user="system:kube-controller-manager"), clock,
            controllers=ALL_CONTROLLERS + (PUBLISHER,),
            settings={PUBLISHER: {"ca_pem": self.pki.ca_pem()}})
        server.run_background(manager.run())
        self.url = await server.start("127.0.0.1", 0, self.pki.server_context())
        write_kubeconfig(self.kubeconfig, self.url, self.pki.ca_pem(), static.token_for(ADMIN))
        self.stopping = asyncio.Event()
        self.ready.set()
        await self.stopping.wait()
        manager.stop()
        await server.stop()
        store.close()

    def start(self):
        self.thread.start()
        assert self.ready.wait(30)
        return self

    def stop(self):
        self.loop.call_soon_threadsafe(self.stopping.set)
        self.thread.join(15)

    def get(self, path: str, token: str) -> int:
        """The HTTP status of a GET with a bearer token."""
        context = ssl.create_default_context(cadata=self.pki.ca_pem().decode())
        request = urllib.request.Request(self.url + path,
                                         headers={"Authorization": f"Bearer {token}"})
        try:
            with urllib.request.urlopen(request, context=context, timeout=10) as response:
                return response.status
        except urllib.error.HTTPError as e:
            return e.code


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    c = Cluster(tmp_path_factory.mktemp("kvert-sa")).start()
    yield c
    c.stop()


@pytest.fixture(scope="module")
def kubectl(cluster, kubectl_binary, tmp_path_factory) -> Kubectl:
    return Kubectl(kubectl_binary, cluster.kubeconfig, tmp_path_factory.mktemp("home"))


def _claims(token: str) -> dict:
    part = token.split(".")[1]
    return json.loads(base64.urlsafe_b64decode(part + "=" * (-len(part) % 4)))


def test_default_service_account_and_root_ca_in_new_namespaces(kubectl):
    assert kubectl("create", "namespace", "team-a").stdout == "namespace/team-a created\n"
    wait_for(lambda: kubectl("get", "serviceaccount", "default", "-n", "team-a", check=False)
             .returncode == 0)
    wait_for(lambda: kubectl("get", "configmap", "kube-root-ca.crt", "-n", "team-a",
                             check=False).returncode == 0)
    cm = kubectl.json("get", "configmap", "kube-root-ca.crt", "-n", "team-a")
    assert cm["data"]["ca.crt"].startswith("-----BEGIN CERTIFICATE-----")


def test_create_serviceaccount_and_token_that_authenticates(kubectl, cluster):
    assert kubectl("create", "serviceaccount", "robot").stdout == "serviceaccount/robot created\n"
    listing = kubectl("get", "serviceaccounts").stdout.splitlines()
    assert listing[0].split() == ["NAME", "SECRETS", "AGE"]
    assert any(line.split()[:2] == ["robot", "0"] for line in listing[1:])

    token = kubectl("create", "token", "robot").stdout.strip()
    header, payload, _ = token.split(".")
    assert json.loads(base64.urlsafe_b64decode(header + "=" * (-len(header) % 4)))["alg"] == "RS256"
    found = _claims(token)
    assert found["sub"] == "system:serviceaccount:default:robot"
    assert found["aud"] == [DEFAULT_ISSUER] and found["iss"] == DEFAULT_ISSUER
    assert found["exp"] - found["iat"] == 3600
    # the token is a credential of the API server now; a made-up one is not
    assert cluster.get("/api/v1/namespaces/default/pods", token) == 200
    assert cluster.get("/api/v1/namespaces/default/pods", token + "x") == 401
    assert cluster.get("/api/v1/namespaces/default/pods", "nope") == 401
    # a token for another audience is not for the API server
    vault = kubectl("create", "token", "robot", "--audience", "vault", "--duration", "20m").stdout
    assert _claims(vault.strip())["aud"] == ["vault"]
    assert cluster.get("/api/v1/namespaces/default/pods", vault.strip()) == 401


def test_token_errors(kubectl):
    short = kubectl("create", "token", "robot", "--duration", "5m", check=False)
    assert short.returncode != 0
    assert ('TokenRequest.authentication.k8s.io "" is invalid: spec.expirationSeconds: Invalid '
            'value: 300: may not specify a duration less than 10 minutes') in short.stderr
    missing = kubectl("create", "token", "nobody", check=False)
    assert 'serviceaccounts "nobody" not found' in missing.stderr


def test_token_bound_to_a_secret(kubectl, cluster):
    kubectl("create", "secret", "generic", "anchor", "--from-literal=k=v")
    uid = kubectl.json("get", "secret", "anchor")["metadata"]["uid"]
    token = kubectl("create", "token", "robot", "--bound-object-kind", "Secret",
                    "--bound-object-name", "anchor").stdout.strip()
    assert _claims(token)["kubernetes.io"]["secret"] == {"name": "anchor", "uid": uid}
    assert cluster.get("/api/v1/namespaces/default/secrets", token) == 200


def test_secrets(kubectl):
    out = kubectl("create", "secret", "generic", "creds", "--from-literal=username=admin",
                  "--from-literal=password=s3cr3t")
    assert out.stdout == "secret/creds created\n"
    secret = yaml.safe_load(kubectl("get", "secret", "creds", "-o", "yaml").stdout)
    assert secret["type"] == "Opaque"
    assert secret["data"] == {"password": "czNjcjN0", "username": "YWRtaW4="}
    rows = kubectl("get", "secrets").stdout.splitlines()
    assert rows[0].split() == ["NAME", "TYPE", "DATA", "AGE"]
    assert any(r.split()[:3] == ["creds", "Opaque", "2"] for r in rows[1:])

    manifest = ("apiVersion: v1\nkind: Secret\nmetadata: {name: app}\n"
                "stringData: {token: plain-text}\n")
    kubectl("apply", "-f", "-", input=manifest)
    applied = kubectl.json("get", "secret", "app")
    assert applied["data"] == {"token": base64.b64encode(b"plain-text").decode()}
    assert "stringData" not in applied

    bad = kubectl("create", "secret", "docker-registry", "reg", "--from-file=.dockerconfigjson=/dev/null",
                  check=False)
    assert bad.returncode != 0 and "unexpected end of JSON input" in bad.stderr


def test_pods_get_the_api_access_volume(kubectl):
    kubectl("run", "web", "--image=nginx:1.27", "--restart=Never")
    spec = kubectl.json("get", "pod", "web")["spec"]
    assert spec["serviceAccountName"] == "default" and spec["serviceAccount"] == "default"
    (volume,) = [v for v in spec["volumes"] if v["name"].startswith("kube-api-access-")]
    sources = volume["projected"]["sources"]
    assert sources[0] == {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}}
    assert {"name": volume["name"], "readOnly": True,
            "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount"} in \
        spec["containers"][0]["volumeMounts"]
    refused = kubectl("run", "lost", "--image=nginx:1.27", "--overrides",
                      '{"spec": {"serviceAccountName": "ghost"}}', check=False)
    assert ('pods "lost" is forbidden: error looking up service account default/ghost: '
            'serviceaccount "ghost" not found') in refused.stderr
