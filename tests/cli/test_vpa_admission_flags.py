"""``kvert vpa admission-controller`` with upstream VPA 1.8's flags, run against kvert's API
server: registered by URL or by Service, mutating a pod, serving its metrics, and removing its
registration when it stops unless another controller's replaced it."""

from __future__ import annotations

import argparse
import asyncio
import base64
import datetime
import shutil
import ssl
from pathlib import Path

import aiohttp
import pytest

from kvert.apiserver.admission import default_chain
from kvert.apiserver.certs import ensure_pki
from kvert.apiserver.kubeconfig import write_kubeconfig
from kvert.apiserver.server import ApiServer
from kvert.auth.tokens import ADMIN, TokenAuthenticator
from kvert.cli.vpa_admission import _serve, go_bool, register_subcommand
from kvert.client.http import HttpClient
from kvert.clock import WallClock
from kvert.store import open_store
from kvert.vpa.webhook import register_webhook, webhook_configuration

MWC = "admissionregistration.k8s.io/mutatingwebhookconfigurations"
VPAS = "autoscaling.k8s.io/verticalpodautoscalers"
LABELS = {"app": "hamster"}
RECOMMENDATION = {"containerRecommendations": [
    {"containerName": "hamster", "target": {"cpu": "587m", "memory": "262144k"},
     "lowerBound": {"cpu": "100m", "memory": "100Mi"}, "upperBound": {"cpu": "1", "memory": "500Mi"},
     "uncappedTarget": {"cpu": "587m", "memory": "262144k"}}]}


def parse(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="kvert vpa")
    register_subcommand(parser.add_subparsers())
    return parser.parse_args(["admission-controller", *argv])


# upstream docs/flags.md, "What are the parameters to VPA admission-controller?"
def test_flags_and_defaults_are_upstreams():
    args = parse()
    assert args.port == 8000
    assert args.address == ":8944"
    assert args.client_ca_file == Path("/etc/tls-certs/caCert.pem")
    assert args.tls_cert_file == Path("/etc/tls-certs/serverCert.pem")
    assert args.tls_private_key == Path("/etc/tls-certs/serverKey.pem")
    assert args.reload_cert is False
    assert args.min_tls_version == "tls1_2"
    assert args.register_webhook is True
    assert args.register_by_url is False
    assert args.webhook_service == "vpa-webhook"
    assert args.webhook_address == "" and args.webhook_port == ""
    assert args.webhook_timeout_seconds == 30
    assert args.webhook_failure_policy_fail is False
    assert args.webhook_labels == ""
    assert args.vpa_object_namespace == "" and args.ignored_vpa_object_namespaces == ""
    assert args.feature_gates == "" and args.max_allowed_cpu_boost is None
    assert args.status_lease_name == "vpa-admission-controller"
    assert args.status_lease_namespace == "" and args.status_lease_update_interval == 10.0
    assert args.kubeconfig is None       # "Only required if out-of-cluster."
    assert args.kube_api_qps == 50 and args.kube_api_burst == 100


def test_booleans_take_gos_forms_and_kverts_old_names_still_work():
    args = parse("--reload-cert", "--register-webhook=false", "--register-by-url=true", "--unregister-on-exit=0",
                 "--webhook-failure-policy-fail=T", "--webhook-timeout", "12", "--ignored-namespaces", "a,b",
                 "--max-allowed-cpu-boost", "2")
    assert args.reload_cert is True and args.register_webhook is False and args.register_by_url is True
    assert args.unregister_on_exit is False and args.webhook_failure_policy_fail is True
    assert args.webhook_timeout_seconds == 12 and args.ignored_vpa_object_namespaces == "a,b"
    assert str(args.max_allowed_cpu_boost) == "2"
    assert parse().unregister_on_exit is True
    with pytest.raises(argparse.ArgumentTypeError):
        go_bool("yes")
    with pytest.raises(SystemExit):
        parse("--max-allowed-cpu-boost", "lots")


def test_namespace_flags_are_mutually_exclusive():
    # upstream common/flags.go ValidateCommonConfig
    args = parse("--vpa-object-namespace", "a", "--ignored-vpa-object-namespaces", "b")
    with pytest.raises(ValueError) as info:
        asyncio.run(_serve(args))
    assert str(info.value) == ("--vpa-object-namespace and --ignored-vpa-object-namespaces are mutually "
                               "exclusive and can't be set together.")


def test_feature_gates_are_checked():
    from kvert.vpa.features import FeatureGateError
    with pytest.raises(FeatureGateError):
        asyncio.run(_serve(parse("--feature-gates", "NoSuchGate=true")))


# ---- against an API server --------------------------------------------------------------------


def deployment():
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "hamster", "namespace": "default"},
            "spec": {"replicas": 1, "selector": {"matchLabels": LABELS},
                     "template": {"metadata": {"labels": LABELS},
                                  "spec": {"containers": [{"name": "hamster", "image": "hamster"}]}}}}


def replica_set(owner):
    return {"apiVersion": "apps/v1", "kind": "ReplicaSet",
            "metadata": {"name": "hamster-6db596f5b4", "namespace": "default",
                         "ownerReferences": [{"apiVersion": "apps/v1", "kind": "Deployment", "name": "hamster",
                                              "uid": owner["metadata"]["uid"], "controller": True}]},
            "spec": {"replicas": 1, "selector": {"matchLabels": LABELS},
                     "template": {"metadata": {"labels": LABELS},
                                  "spec": {"containers": [{"name": "hamster", "image": "hamster"}]}}}}


def pod(name, rs):
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "default", "labels": dict(LABELS),
                         "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet",
                                              "name": rs["metadata"]["name"], "uid": rs["metadata"]["uid"],
                                              "controller": True}]},
            "spec": {"containers": [{"name": "hamster", "image": "hamster"}]}}


class Api:
    """kvert's API server over HTTPS in this process, and an admin client of it."""

    def __init__(self, tmp_path: Path):
        self.tmp = tmp_path
        self.kubeconfig = tmp_path / "kubeconfig"

    async def __aenter__(self):
        clock = WallClock()
        self.store = open_store("memory", clock=clock)
        tokens = TokenAuthenticator.load_or_create(self.tmp / "tokens.csv")
        self.api = ApiServer(self.store, clock, authenticator=tokens, admission=default_chain(self.store, clock))
        await self.api.bootstrap()
        pki = ensure_pki(self.tmp / "api-pki", datetime.datetime.now(datetime.UTC))
        url = await self.api.start("127.0.0.1", 0, ssl_context=pki.server_context())
        write_kubeconfig(self.kubeconfig, url, pki.ca_pem(), tokens.token_for(ADMIN))
        self.client = HttpClient.from_kubeconfig(self.kubeconfig)
        return self

    async def __aexit__(self, *exc):
        await self.client.close()
        await self.api.stop()
        self.store.close()


class Controller:
    """``_serve`` as a task: ``async with Controller(args) as c``; leaving stops it."""

    def __init__(self, args: argparse.Namespace):
        self.args = args

    async def __aenter__(self):
        self.ready, self.stop = asyncio.Event(), asyncio.Event()
        self.task = asyncio.ensure_future(_serve(self.args, self.ready, self.stop))
        done, _ = await asyncio.wait({self.task, asyncio.ensure_future(self.ready.wait())}, timeout=15,
                                     return_when=asyncio.FIRST_COMPLETED)
        if self.task in done:
            self.task.result()
        assert self.ready.is_set()
        return self

    async def __aexit__(self, *exc):
        self.stop.set()
        assert await asyncio.wait_for(self.task, 15) == 0


def run(coro):
    return asyncio.run(asyncio.wait_for(coro, 60))


def by_url(api: Api, tmp_path: Path, *extra: str) -> argparse.Namespace:
    return parse("--kubeconfig", str(api.kubeconfig), "--port", "0", "--host", "127.0.0.1",
                 "--address", "127.0.0.1:0", "--register-by-url", "--webhook-address", "https://127.0.0.1",
                 "--cert-dir", str(tmp_path / "vpa-certs"), *extra)


def test_registers_by_url_mutates_a_pod_and_unregisters_on_stop(tmp_path, capsys):
    async def go():
        async with Api(tmp_path) as api:
            c = api.client
            dep = await c.create("apps/deployments", deployment(), namespace="default")
            rs = await c.create("apps/replicasets", replica_set(dep), namespace="default")
            async with Controller(by_url(api, tmp_path, "--webhook-labels", "team:vpa",
                                         "--webhook-timeout-seconds", "7")):
                config = await c.get(MWC, "vpa-webhook-config")
                hook = config["webhooks"][0]
                port = int(hook["clientConfig"]["url"].rsplit(":", 1)[1])
                # upstream's URL is webhookAddress:webhookPort, no path: served at "/"
                assert hook["clientConfig"]["url"] == f"https://127.0.0.1:{port}"
                assert config["metadata"]["labels"] == {"team": "vpa"} and hook["timeoutSeconds"] == 7
                assert base64.b64decode(hook["clientConfig"]["caBundle"]) == \
                    (tmp_path / "vpa-certs" / "ca.crt").read_bytes()
                created = await c.create(VPAS, {
                    "apiVersion": "autoscaling.k8s.io/v1", "kind": "VerticalPodAutoscaler",
                    "metadata": {"name": "hamster-vpa", "namespace": "default"},
                    "spec": {"targetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "hamster"},
                             "updatePolicy": {"updateMode": "Auto"}}}, namespace="default")
                created["status"] = {"recommendation": RECOMMENDATION}
                await c.update_status(VPAS, created)
                for _ in range(100):   # the controller's informers catch up with the status
                    p = await c.create("pods", pod("probe", rs), namespace="default", dry_run=True)
                    if (p["metadata"].get("annotations") or {}).get("vpaUpdates"):
                        break
                    await asyncio.sleep(0.05)
                p = await c.create("pods", pod("hamster-1", rs), namespace="default")
                assert p["spec"]["containers"][0]["resources"]["requests"] == {"cpu": "587m", "memory": "262144k"}
                # the status Lease the updater reads (upstream 1.8 pkg/utils/status)
                lease = await c.get("coordination.k8s.io/leases", "vpa-admission-controller", "kube-system")
                assert lease["spec"]["leaseDurationSeconds"] == 10
            assert (await c.list(MWC))["items"] == []
    run(go())
    out = capsys.readouterr().out
    assert "deleted vpa-webhook-config" in out


def test_a_replaced_registration_survives_the_old_controllers_exit(tmp_path):
    async def go():
        async with Api(tmp_path) as api:
            async with Controller(by_url(api, tmp_path)):
                newer = await register_webhook(api.client, webhook_configuration("https://10.0.0.9:8000", b"CA"))
            kept = await api.client.get(MWC, "vpa-webhook-config")
            assert kept["metadata"]["uid"] == newer["metadata"]["uid"]
            # --unregister-on-exit=false leaves even its own, as upstream does
            await api.client.delete(MWC, "vpa-webhook-config")
            async with Controller(by_url(api, tmp_path, "--unregister-on-exit=false")):
                pass
            assert len((await api.client.list(MWC))["items"]) == 1
    run(go())


def test_self_signed_by_default_registered_by_service_with_metrics(tmp_path, monkeypatch):
    """No certificate files: a CA and a serving certificate for vpa-webhook.NAMESPACE.svc are
    made at start and the Service registration trusts that CA; /metrics and /health-check
    answer on --address."""
    if Path("/etc/tls-certs").exists():
        pytest.skip("this machine has /etc/tls-certs")
    monkeypatch.setenv("NAMESPACE", "vpa-system")

    async def go():
        async with Api(tmp_path) as api:
            metrics_port, server_port = _free_ports(2)
            args = parse("--kubeconfig", str(api.kubeconfig), "--port", str(server_port), "--host", "127.0.0.1",
                         "--address", f"127.0.0.1:{metrics_port}")
            async with Controller(args):
                hook = (await api.client.get(MWC, "vpa-webhook-config"))["webhooks"][0]
                assert hook["clientConfig"]["service"] == {"namespace": "vpa-system", "name": "vpa-webhook",
                                                           "port": 443}
                assert hook["failurePolicy"] == "Ignore" and hook["timeoutSeconds"] == 30
                ca = base64.b64decode(hook["clientConfig"]["caBundle"]).decode()
                ctx = ssl.create_default_context(cadata=ca)
                _, writer = await asyncio.open_connection("127.0.0.1", server_port, ssl=ctx,
                                                          server_hostname="vpa-webhook.vpa-system.svc")
                writer.close()
                async with aiohttp.ClientSession() as s:
                    async with s.get(f"http://127.0.0.1:{metrics_port}/health-check") as r:
                        assert r.status == 200
                    async with s.get(f"http://127.0.0.1:{metrics_port}/metrics") as r:
                        assert "vpa_admission_controller_admission_latency_seconds" in await r.text()
    run(go())


def test_certificate_files_as_gencerts_names_them(tmp_path):
    """--client-ca-file/--tls-cert-file/--tls-private-key (a Secret mounted at /etc/tls-certs
    in the Deployment): served, and the CA registered; a missing one is named."""
    pki = ensure_pki(tmp_path / "secret-src", datetime.datetime.now(datetime.UTC), ("127.0.0.1",))
    secret = tmp_path / "tls-certs"
    secret.mkdir()
    shutil.copy(pki.ca_cert, secret / "caCert.pem")
    shutil.copy(pki.cert, secret / "serverCert.pem")
    shutil.copy(pki.key, secret / "serverKey.pem")

    async def go():
        async with Api(tmp_path) as api:
            files = ("--client-ca-file", str(secret / "caCert.pem"), "--tls-cert-file", str(secret / "serverCert.pem"),
                     "--tls-private-key", str(secret / "serverKey.pem"))
            base = ("--kubeconfig", str(api.kubeconfig), "--port", "0", "--host", "127.0.0.1",
                    "--address", "127.0.0.1:0", "--register-by-url", "--webhook-address", "https://127.0.0.1")
            async with Controller(parse(*base, *files, "--reload-cert")):
                hook = (await api.client.get(MWC, "vpa-webhook-config"))["webhooks"][0]
                assert base64.b64decode(hook["clientConfig"]["caBundle"]) == pki.ca_pem()
            with pytest.raises(ValueError, match="--tls-private-key .*nothing.pem: no such file"):
                await _serve(parse(*base, *files[:4], "--tls-private-key", str(tmp_path / "nothing.pem")))
    run(go())


def _free_ports(n: int) -> list[int]:
    """``n`` distinct free ports: the sockets stay bound until all are picked (one closed
    before the next is picked may be handed out again)."""
    import socket
    sockets = [socket.socket() for _ in range(n)]
    try:
        for s in sockets:
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in sockets]
    finally:
        for s in sockets:
            s.close()

