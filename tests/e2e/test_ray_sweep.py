"""A sweep on a real local Ray cluster gives the figures of local worker processes.

The cluster is started by the test (``ray start --head`` from the venv, its own temporary
directory, two CPUs) and ended in teardown by the ids of its own processes: ``ray stop``
would stop every Ray cluster of the machine, not only this one.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path

import pytest
import yaml

from tests.e2e.conftest import VENV_BIN, free_port

ray = pytest.importorskip("ray", reason="Ray is an optional extra (pip install 'kvert[ray]'); not installed")

from kvert.cli.main import main
from kvert.sim import sweep
from kvert.sim.scenario import parse_scenario
from tests.sim.test_sweep import DOC as SWEEP_DOC

DOC = {**SWEEP_DOC, "seed": 21,
       "policies": [{"name": "no VPA", "vpa": "none"},
                    {"name": "Recreate", "vpa": {"updateMode": "Recreate", "recommender": {"interval": "1m"},
                                                 "updater": {"interval": "1m"}}},
                    {"name": "InPlaceOrRecreate", "vpa": {"updateMode": "InPlaceOrRecreate",
                                                          "recommender": {"interval": "1m"},
                                                          "updater": {"interval": "1m"}}}]}


def _cluster_processes(marker: str) -> list[int]:
    """The processes whose command line names ``marker`` (the cluster's temporary directory),
    and their descendants (Ray's workers rename themselves ``ray::...``)."""
    parents: dict[int, int] = {}
    marked = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        parents[int(entry.name)] = int(stat.rsplit(")", 1)[1].split()[1])
        if marker in cmdline:
            marked.add(int(entry.name))
    found = set(marked)
    changed = True
    while changed:
        changed = False
        for pid, ppid in parents.items():
            if ppid in found and pid not in found:
                found.add(pid)
                changed = True
    return sorted(found - {os.getpid()})


def _end(pids: list[int]) -> None:
    for sig in (signal.SIGTERM, signal.SIGKILL):
        for pid in pids:
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                pass
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and any(Path(f"/proc/{pid}").exists() for pid in pids):
            time.sleep(0.2)


@pytest.fixture(scope="module")
def ray_address():
    binary = VENV_BIN / "ray"
    if not binary.exists():
        pytest.skip(f"no ray command next to {VENV_BIN / 'python'}")
    temp = tempfile.mkdtemp(prefix="kvert-ray-", dir="/tmp")     # short: Ray's sockets live in it
    port = free_port()
    started = subprocess.run([str(binary), "start", "--head", "--port", str(port), "--num-cpus", "2",
                              "--include-dashboard=false", "--disable-usage-stats", "--temp-dir", temp,
                              "--node-ip-address", "127.0.0.1"],
                             check=False, capture_output=True, text=True, timeout=180)
    try:
        assert started.returncode == 0, started.stdout + started.stderr
        yield f"127.0.0.1:{port}"
    finally:
        _end(_cluster_processes(temp))
        shutil.rmtree(temp, ignore_errors=True)


def test_ray_gives_the_figures_of_local_processes(ray_address, monkeypatch):
    """Two seeds x three settings (recommender settings of one policy) through the API, the
    scenario put in the object store once."""
    scn = parse_scenario(DOC)
    settings = [{}, {"leak": {"annotations": {"vpa.kvert.io/model": "in-place"}}},
                {"web": {"annotations": {"vpa.kvert.io/target-cpu-percentile": "0.5"}},
                 "leak": {"annotations": {"vpa.kvert.io/oom-bump-up-ratio": "2"}}}]
    jobs = [sweep.Job(scn, "InPlaceOrRecreate", seed, overrides) for seed in (21, 22) for overrides in settings]
    puts = []
    real_put = ray.put
    monkeypatch.setattr(ray, "put", lambda value, **kw: puts.append(value) or real_put(value, **kw))
    on_ray = sweep.run_jobs(jobs, ray_address=ray_address)
    assert len(puts) == 1 and puts[0] is scn
    local = sweep.run_jobs(jobs, parallel=2)
    assert [(r.metrics, r.slack) for r in on_ray] == [(r.metrics, r.slack) for r in local]
    # the seeds and the settings did matter: the in-place model for the leak, another seed
    assert on_ray[0].metrics != on_ray[1].metrics and on_ray[0].metrics != on_ray[3].metrics


def test_simulate_with_ray_gives_the_report_of_two_local_processes(ray_address, tmp_path):
    path = tmp_path / "scenario.yaml"
    path.write_text(yaml.safe_dump(DOC))
    docs = []
    for where in (["--ray", ray_address], ["--parallel", "2"]):
        out = tmp_path / where[0].strip("-")
        argv = ["simulate", str(path), "--seeds", "2", *where, "--json-only", "--no-progress", "-o", str(out)]
        assert main(argv) == 0
        doc = json.loads((out / "report.json").read_text())
        doc.pop("run")                                   # wall time
        docs.append(doc)
    assert docs[0] == docs[1]
    assert docs[0]["policies"] == ["no VPA", "Recreate", "InPlaceOrRecreate"]
    assert all(p["seeds"]["seeds"] == [21, 22] for p in docs[0]["results"])
