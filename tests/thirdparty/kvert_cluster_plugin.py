"""A pytest plugin loaded into a third-party suite (``-p kvert_cluster_plugin``): its cluster
fixtures answer with the ``kvert up`` whose kubeconfig is in ``$KUBECONFIG``.

The suites only ever see that kubeconfig and a kubectl; nothing in them is edited.
"""

from __future__ import annotations

import gc
import json
import os
import subprocess
from pathlib import Path

import pytest


class KubeconfigCluster:
    """What kr8s' tests use of pytest-kind's ``KindCluster``: the kubeconfig path, the kubectl
    binary and ``kubectl(*args)`` returning its output (raising on failure)."""

    def __init__(self, kubeconfig_path: Path, kubectl_path: str):
        self.kubeconfig_path = kubeconfig_path
        self.kubectl_path = kubectl_path

    def kubectl(self, *args: str, **kwargs) -> str:
        env = {**os.environ, "KUBECONFIG": str(self.kubeconfig_path)}
        return subprocess.check_output([self.kubectl_path, *args], env=env, text=True,
                                       **kwargs)


@pytest.fixture(scope="session", autouse=True)
def k8s_cluster() -> KubeconfigCluster:
    return KubeconfigCluster(Path(os.environ["KUBECONFIG"]), os.environ["KVERT_KUBECTL"])


@pytest.fixture
def ensure_gc():
    """kr8s' top-level conftest's fixture (that conftest, which makes the kind cluster, is
    not loaded): garbage-collect before and after the test."""
    gc.collect()
    yield
    gc.collect()


_outcomes: dict[str, str] = {}


def pytest_runtest_logreport(report):
    """Each test's outcome (its worst phase: an error in setup or teardown, a failure in the
    call), kept by node id for the runner (``$KVERT_OUTCOMES``)."""
    if report.when == "call":
        outcome = "xfailed" if hasattr(report, "wasxfail") and report.skipped else report.outcome
    elif report.failed:
        outcome = "error"
    elif report.skipped:
        outcome = "skipped"
    else:
        outcome = "passed"
    if _outcomes.get(report.nodeid) in (None, "passed") or outcome == "error":
        _outcomes[report.nodeid] = outcome


def pytest_sessionfinish(session):
    path = os.environ.get("KVERT_OUTCOMES")
    if path:
        Path(path).write_text(json.dumps(_outcomes, indent=1))
