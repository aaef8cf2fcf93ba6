"""`kvert up --vpa-feature-gates`: its VPA runs with upstream VPA 1.8's gates and defaults, so
the InPlace mode is refused while its gate is off and served once it is on."""

from __future__ import annotations

import json

import pytest

from .conftest import Kubectl, KvertUp


def vpa(name: str, mode: str) -> str:
    return json.dumps({"apiVersion": "autoscaling.k8s.io/v1", "kind": "VerticalPodAutoscaler",
                       "metadata": {"name": name},
                       "spec": {"targetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": name},
                                "updatePolicy": {"updateMode": mode}}})


@pytest.fixture(scope="module")
def gated(kubectl_binary, tmp_path_factory):
    """Two clusters: upstream's defaults, and the InPlace gate on."""
    off = KvertUp(tmp_path_factory.mktemp("off")).start()
    on = KvertUp(tmp_path_factory.mktemp("on"), args=("--vpa-feature-gates", "InPlace=true")).start()
    yield (Kubectl(kubectl_binary, off.kubeconfig, tmp_path_factory.mktemp("h1")),
           Kubectl(kubectl_binary, on.kubeconfig, tmp_path_factory.mktemp("h2")))
    off.stop()
    on.stop()


def test_in_place_mode_needs_its_gate(gated):
    off, on = gated
    refused = off("create", "-f", "-", input=vpa("a", "InPlace"), check=False)
    # upstream: TestValidateVPA "creating VPA with InPlace update mode not allowed by disabled
    # feature gate" (pkg/admission-controller/resource/vpa/validation_test.go)
    assert refused.returncode != 0
    assert ("spec.updatePolicy.updateMode: Forbidden: in order to use UpdateMode InPlace, you must enable "
            "feature gate InPlace in the admission-controller args") in refused.stderr
    off("create", "-f", "-", input=vpa("b", "InPlaceOrRecreate"))      # GA since VPA 1.6: no gate
    on("create", "-f", "-", input=vpa("a", "InPlace"))
    assert on.json("get", "vpa", "a")["spec"]["updatePolicy"]["updateMode"] == "InPlace"


def test_a_bad_gate_is_refused_at_start(tmp_path):
    up = KvertUp(tmp_path, args=("--vpa-feature-gates", "InPlaceOrRecreate=true"))
    with pytest.raises(Exception):
        up.start(timeout=20)
    assert "--vpa-feature-gates: unrecognized feature gate: InPlaceOrRecreate" in "".join(up.output)
