"""The in-cluster configuration (client-go's ``rest.InClusterConfig``): the API server from the
kubelet's service variables, the service account's CA and token (read again when the kubelet
rotates it), and the component commands falling back to it when no kubeconfig is named."""

from __future__ import annotations

import argparse
import asyncio
import datetime
import os
from pathlib import Path

import pytest

from kvert.api.errors import Unauthorized
from kvert.apiserver.admission import default_chain
from kvert.apiserver.certs import ensure_pki
from kvert.apiserver.kubeconfig import write_kubeconfig
from kvert.apiserver.server import ApiServer
from kvert.auth.tokens import ADMIN, TokenAuthenticator
from kvert.cli.component import client_from_args
from kvert.client.http import SERVICE_ACCOUNT_DIR, HttpClient, InClusterError
from kvert.clock import WallClock
from kvert.store import open_store

# client-go rest/config.go: ErrNotInCluster
NOT_IN_CLUSTER = ("unable to load in-cluster configuration, KUBERNETES_SERVICE_HOST and "
                  "KUBERNETES_SERVICE_PORT must be defined")


def service_account(directory: Path, token: str, ca: bytes | None = None, namespace: str = "kube-system") -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "token").write_text(token)
    if ca is not None:
        (directory / "ca.crt").write_bytes(ca)
    (directory / "namespace").write_text(namespace)
    return directory


def rotate(path: Path, text: str) -> None:
    """As the kubelet's atomic writer: a new file renamed over the old one."""
    fresh = path.with_name(path.name + ".new")
    fresh.write_text(text)
    os.replace(fresh, path)


def test_server_token_and_namespace_from_the_pod(tmp_path):
    sa = service_account(tmp_path / "sa", "tok-1\n", namespace="vpa")
    env = {"KUBERNETES_SERVICE_HOST": "10.96.0.1", "KUBERNETES_SERVICE_PORT": "443"}
    client = HttpClient.in_cluster(directory=sa, environ=env, field_manager="vpa-updater")
    assert client.server == "https://10.96.0.1:443"
    assert client.namespace == "vpa"
    assert client.field_manager == "vpa-updater"
    assert client.token_file is not None and client.token_file.header() == {"Authorization": "Bearer tok-1"}
    # net.JoinHostPort brackets an IPv6 host
    v6 = HttpClient.in_cluster(directory=sa, environ={**env, "KUBERNETES_SERVICE_HOST": "fd00::1"})
    assert v6.server == "https://[fd00::1]:443"


@pytest.mark.parametrize("env", [{}, {"KUBERNETES_SERVICE_HOST": "10.96.0.1"}, {"KUBERNETES_SERVICE_PORT": "443"}])
def test_outside_a_pod_the_error_is_client_gos(tmp_path, env):
    sa = service_account(tmp_path / "sa", "tok")
    with pytest.raises(InClusterError) as info:
        HttpClient.in_cluster(directory=sa, environ=env)
    assert str(info.value) == NOT_IN_CLUSTER


def test_a_missing_token_is_named(tmp_path):
    env = {"KUBERNETES_SERVICE_HOST": "10.96.0.1", "KUBERNETES_SERVICE_PORT": "443"}
    with pytest.raises(InClusterError) as info:
        HttpClient.in_cluster(directory=tmp_path / "nothing", environ=env)
    assert str(tmp_path / "nothing" / "token") in str(info.value)


def test_against_an_api_server_with_a_rotating_token(tmp_path):
    """The CA verifies the server; the first token is refused, the rotated one accepted
    without a new client."""
    async def go():
        clock = WallClock()
        store = open_store("memory", clock=clock)
        tokens = TokenAuthenticator.load_or_create(tmp_path / "tokens.csv")
        api = ApiServer(store, clock, authenticator=tokens, admission=default_chain(store, clock))
        await api.bootstrap()
        pki = ensure_pki(tmp_path / "pki", datetime.datetime.now(datetime.UTC))
        url = await api.start("127.0.0.1", 0, ssl_context=pki.server_context())
        port = url.rsplit(":", 1)[1]
        sa = service_account(tmp_path / "sa", "not-a-token", pki.ca_pem())
        client = HttpClient.in_cluster(directory=sa, environ={"KUBERNETES_SERVICE_HOST": "127.0.0.1",
                                                              "KUBERNETES_SERVICE_PORT": port})
        try:
            with pytest.raises(Unauthorized):
                await client.get("namespaces", "default")
            rotate(sa / "token", tokens.token_for(ADMIN))
            assert (await client.get("namespaces", "default"))["metadata"]["name"] == "default"
            watch = await client.watch("namespaces")     # a watch carries the token too
            event = await watch.next(timeout=5)
            assert event is not None and event.type == "ADDED"
            watch.stop()
        finally:
            await client.close()
            await api.stop()
            store.close()

    asyncio.run(asyncio.wait_for(go(), 30))


def _args(kubeconfig: Path | None = None) -> argparse.Namespace:
    return argparse.Namespace(kubeconfig=kubeconfig, context=None)


def test_commands_use_the_pod_only_without_a_kubeconfig(tmp_path, monkeypatch):
    """upstream common/flags.go: --kubeconfig "Only required if out-of-cluster"."""
    if (SERVICE_ACCOUNT_DIR / "token").exists():
        pytest.skip("this machine has a service account mounted")
    monkeypatch.delenv("KUBECONFIG", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("KUBERNETES_SERVICE_HOST", "10.96.0.1")
    monkeypatch.setenv("KUBERNETES_SERVICE_PORT", "443")
    with pytest.raises(ValueError) as info:
        client_from_args(_args(), "vpa-recommender")
    assert str(SERVICE_ACCOUNT_DIR / "token") in str(info.value)

    # a named kubeconfig wins over the pod's environment
    pki = ensure_pki(tmp_path / "pki", datetime.datetime.now(datetime.UTC))
    write_kubeconfig(tmp_path / "kubeconfig", "https://127.0.0.1:6443", pki.ca_pem(), "tok")
    assert client_from_args(_args(tmp_path / "kubeconfig"), "x").server == "https://127.0.0.1:6443"
    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "kubeconfig"))
    assert client_from_args(_args(), "x").server == "https://127.0.0.1:6443"


def test_no_kubeconfig_and_no_pod_names_both(tmp_path, monkeypatch):
    monkeypatch.delenv("KUBECONFIG", raising=False)
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    monkeypatch.delenv("KUBERNETES_SERVICE_PORT", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    with pytest.raises(ValueError) as info:
        client_from_args(_args(), "vpa-recommender")
    message = str(info.value)
    assert str(tmp_path / ".kube" / "config") in message and NOT_IN_CLUSTER in message
