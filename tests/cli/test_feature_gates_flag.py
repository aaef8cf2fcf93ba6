"""``--feature-gates`` on kvert apiserver and kvert up: Kubernetes 1.36's gates, with
component-base's messages for a bad entry (exit 2, nothing started)."""

import subprocess
import sys

import pytest

from kvert.api import features
from kvert.cli.up import apply_server_gates


@pytest.mark.parametrize("command", ["apiserver", "up"])
@pytest.mark.parametrize("value, message", [
    ("Bogus=true", "unrecognized feature gate: Bogus"),
    ("NodeDeclaredFeatures=maybe", "invalid value of NodeDeclaredFeatures=maybe"),
    ("NodeDeclaredFeatures", "missing bool value for NodeDeclaredFeatures"),
])
def test_a_bad_gate_is_refused_before_anything_starts(tmp_path, command, value, message):
    result = subprocess.run([sys.executable, "-m", "kvert.cli.main", command, "--feature-gates", value,
                             "--data-dir", str(tmp_path)], capture_output=True, text=True, timeout=60)
    assert result.returncode == 2
    assert f"kvert {command}: --feature-gates: {message}" in result.stderr
    assert not any(tmp_path.iterdir())


def test_1_36_defaults_and_a_gate_turned_back_to_1_35():
    saved = dict(features._server_gates)
    try:
        apply_server_gates("", "kvert apiserver")
        assert features.server_enabled("InPlacePodLevelResourcesVerticalScaling")
        assert features.server_enabled("NodeDeclaredFeatures")
        assert not features.server_enabled("InPlacePodVerticalScalingSchedulerPreemption")
        apply_server_gates("InPlacePodLevelResourcesVerticalScaling=false", "kvert apiserver")
        assert not features.server_enabled("InPlacePodLevelResourcesVerticalScaling")
    finally:
        features.set_server_gates(saved)
