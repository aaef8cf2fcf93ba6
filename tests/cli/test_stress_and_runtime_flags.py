"""``kvert stress`` and the ``--runtime`` flag of ``kvert up`` / ``kvert node-agent``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import kvert
from kvert.cli.main import main

SRC = str(Path(kvert.__file__).resolve().parents[1])


# as `kvert stress`, and as the cgroupfs runtime runs the kvert/stress image: the module alone
ENTRYPOINTS = [("kvert.cli.main", "stress"), ("kvert.cli.stress",)]


def stress(*args: str, env: dict | None = None, timeout: float = 30,
           entrypoint: tuple[str, ...] = ENTRYPOINTS[0]) -> subprocess.CompletedProcess:
    module, *command = entrypoint
    return subprocess.run([sys.executable, "-m", module, *command, *args], capture_output=True,
                          text=True, timeout=timeout, env={**os.environ, "PYTHONPATH": SRC, **(env or {})})


@pytest.mark.parametrize("entrypoint", ENTRYPOINTS)
def test_stress_follows_the_profile_and_exits_as_it_says(entrypoint):
    result = stress("--usage", json.dumps({"cpu": "100m", "memory": "8Mi", "exitAfter": "1s", "exitCode": 3}),
                    entrypoint=entrypoint)
    assert result.returncode == 3, result.stderr
    assert result.stdout.splitlines() == ["usage: cpu=100m memory=8Mi", "exiting with code 3"]


def test_stress_reads_the_profile_from_the_environment():
    result = stress(env={"KVERT_USAGE": json.dumps({"cpu": "10m", "memory": "1Mi", "exitAfter": 0})})
    assert result.returncode == 0 and result.stdout.startswith("usage: cpu=10m memory=1Mi")


@pytest.mark.parametrize("args, env, message", [
    ((), {"KVERT_USAGE": ""}, "no usage profile"),
    (("--usage", '{"cpu": "lots"}'), {}, "--usage.cpu"),
])
@pytest.mark.parametrize("entrypoint", ENTRYPOINTS)
def test_stress_refuses_a_missing_or_bad_profile(args, env, message, entrypoint):
    result = stress(*args, env=env, entrypoint=entrypoint)
    assert result.returncode == 2 and message in result.stderr


def test_cgroupfs_runtime_is_refused_without_root(monkeypatch, capsys):
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    with pytest.raises(SystemExit) as info:
        main(["node-agent", "--runtime", "cgroupfs", "--name", "n1", "--kubeconfig", "/nonexistent"])
    assert info.value.code == 2
    assert "--runtime cgroupfs: the cgroupfs runtime needs root" in capsys.readouterr().err


def test_cgroupfs_runtime_is_refused_without_cgroups(monkeypatch, capsys):
    from kvert.kubelet.runtime import cgroupfs
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    monkeypatch.setattr(cgroupfs, "detect", lambda: None)
    with pytest.raises(SystemExit) as info:
        main(["up", "--runtime", "cgroupfs", "--data-dir", "/nonexistent"])
    assert info.value.code == 2
    assert "no cgroup filesystem" in capsys.readouterr().err
