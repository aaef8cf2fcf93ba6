"""``kvert vpa admission-controller`` as its own process against ``kvert up --no-vpa``: it
registers by URL, a Deployment's pod is created with its VPA's recommendation, SIGTERM removes
the registration, and a registration another controller made in the meantime is left alone."""

from __future__ import annotations

import json
import signal
import subprocess
import sys

import pytest

from .conftest import KvertUp, Kubectl, free_port, wait_for

LABELS = {"app": "ac"}
DEPLOYMENT = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "ac", "namespace": "default"},
              "spec": {"replicas": 1, "selector": {"matchLabels": LABELS},
                       "template": {"metadata": {"labels": LABELS},
                                    "spec": {"containers": [{"name": "c", "image": "busybox",
                                                             "resources": {"requests": {"cpu": "100m"}}}]}}}}
VPA = {"apiVersion": "autoscaling.k8s.io/v1", "kind": "VerticalPodAutoscaler",
       "metadata": {"name": "ac", "namespace": "default"},
       "spec": {"targetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "ac"},
                "updatePolicy": {"updateMode": "Initial"}}}
RECOMMENDATION = {"status": {"recommendation": {"containerRecommendations": [{
    "containerName": "c", "target": {"cpu": "300m", "memory": "200Mi"},
    "lowerBound": {"cpu": "250m", "memory": "150Mi"}, "upperBound": {"cpu": "400m", "memory": "300Mi"},
    "uncappedTarget": {"cpu": "300m", "memory": "200Mi"}}]}}}


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    up = KvertUp(tmp_path_factory.mktemp("kvert"), args=("--no-vpa",)).start()
    yield up
    up.stop()


@pytest.fixture(scope="module")
def kubectl(cluster, kubectl_binary, tmp_path_factory) -> Kubectl:
    return Kubectl(kubectl_binary, cluster.kubeconfig, tmp_path_factory.mktemp("home"))


class Controller:
    def __init__(self, cluster: KvertUp, cert_dir, *extra: str):
        self.port = free_port()
        self.cmd = [sys.executable, "-m", "kvert.cli.main", "vpa", "admission-controller",
                    "--kubeconfig", str(cluster.kubeconfig), "--host", "127.0.0.1", "--port", str(self.port),
                    "--address", f"127.0.0.1:{free_port()}", "--register-by-url",
                    "--webhook-address", "https://127.0.0.1", "--cert-dir", str(cert_dir),
                    "--log-level", "warning", *extra]
        self.output = ""

    def __enter__(self):
        self.proc = subprocess.Popen(self.cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        lines = []
        for line in self.proc.stdout:
            lines.append(line)
            if "registered as MutatingWebhookConfiguration" in line:
                return self
        raise AssertionError("the admission controller did not start:\n" + "".join(lines))

    def __exit__(self, *exc):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        out, _ = self.proc.communicate(timeout=30)
        self.output = out
        assert self.proc.returncode == 0, out


def test_registers_mutates_and_unregisters_on_sigterm(cluster, kubectl, tmp_path):
    with Controller(cluster, tmp_path / "certs") as c:
        config = kubectl.json("get", "mutatingwebhookconfiguration", "vpa-webhook-config")
        assert config["webhooks"][0]["clientConfig"]["url"] == f"https://127.0.0.1:{c.port}"
        kubectl("create", "-f", "-", input=json.dumps(VPA))
        kubectl("patch", "vpa", "ac", "--subresource", "status", "--type=merge", "-p", json.dumps(RECOMMENDATION))

        kubectl("create", "-f", "-", input=json.dumps(DEPLOYMENT))

        def recommended_pod():
            """A pod created with the recommendation; one created before the controller's
            informers saw it is deleted, and the ReplicaSet makes another."""
            for pod in kubectl.json("get", "pods", "-l", "app=ac")["items"]:
                if pod["spec"]["containers"][0]["resources"]["requests"].get("memory") == "200Mi":
                    return pod
                kubectl("delete", "pod", pod["metadata"]["name"], "--wait=false", check=False)
            return None
        pod = wait_for(recommended_pod, timeout=60, every=1.0)
        assert pod["spec"]["containers"][0]["resources"]["requests"] == {"cpu": "300m", "memory": "200Mi"}
    assert "deleted vpa-webhook-config" in c.output
    assert kubectl("get", "mutatingwebhookconfiguration", "vpa-webhook-config", check=False).returncode != 0


def test_a_newer_registration_outlives_the_old_controller(cluster, kubectl, tmp_path):
    with Controller(cluster, tmp_path / "certs"):
        kubectl("delete", "mutatingwebhookconfiguration", "vpa-webhook-config")
        # another controller's registration, as a rolling update's new pod makes it
        newer = {"apiVersion": "admissionregistration.k8s.io/v1", "kind": "MutatingWebhookConfiguration",
                 "metadata": {"name": "vpa-webhook-config"},
                 "webhooks": [{"name": "vpa.k8s.io", "admissionReviewVersions": ["v1"], "sideEffects": "None",
                               "failurePolicy": "Ignore",
                               "clientConfig": {"service": {"namespace": "kube-system", "name": "vpa-webhook"}},
                               "rules": [{"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"],
                                          "resources": ["pods"]}]}]}
        kubectl("create", "-f", "-", input=json.dumps(newer))
    kept = kubectl.json("get", "mutatingwebhookconfiguration", "vpa-webhook-config")
    assert kept["webhooks"][0]["clientConfig"]["service"]["name"] == "vpa-webhook"
    kubectl("delete", "mutatingwebhookconfiguration", "vpa-webhook-config")
