"""``kvert scenario import`` on bad input: each a clear message naming the object or series and
what kvert did, and nothing (half-)written. And the samples-file path end to end."""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path

import yaml

from tests.sim.test_import import snapshot_text

SAMPLES = """timestamp,namespace,pod,container,cpu,memory,event
{rows}"""


def kvert(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "kvert.cli.main", *args], capture_output=True, text=True,
                          timeout=300)


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def samples(path: Path, *, gap: bool = False) -> Path:
    """Two hours of web's two pods and db-0 every minute (db-0 misses 20 minutes with ``gap``)."""
    rows = []
    t0 = 1_790_000_000
    for k in range(120):
        t = t0 + 60 * k
        for pod, container, cpu, mem in (("web-7f9c8d-x2b9q", "app", 0.2, 300), ("web-7f9c8d-k4m7p", "app", 0.3, 320),
                                         ("db-0", "postgres", 0.1, 150)):
            if gap and pod == "db-0" and 40 <= k < 60:
                continue
            rows.append(f"{t},shop,{pod},{container},{cpu},{mem * 2**20},")
    path.write_text(SAMPLES.format(rows="\n".join(rows)) + "\n")
    return path


def test_a_samples_file_imports_and_simulates(tmp_path):
    (tmp_path / "cluster.yaml").write_text(snapshot_text())
    result = kvert("scenario", "import", str(tmp_path / "cluster.yaml"), "--samples",
                   str(samples(tmp_path / "usage.csv", gap=True)), "--step", "1m", "-o", str(tmp_path / "replay"))
    assert result.returncode == 0, result.stderr
    assert "imported 2 workloads on 2 nodes (2 with recorded usage)" in result.stdout
    # the gap is named with the series and what was assumed
    assert any("db-0" in line and "held" in line for line in result.stderr.splitlines()), result.stderr
    # the StatefulSet runs 2 replicas, the history had one pod: said, with what is replayed
    assert "StatefulSet shop/db: the snapshot asks for 2 replicas, the history had at most 1" in result.stderr
    doc = yaml.safe_load((tmp_path / "replay" / "scenario.yaml").read_text())
    assert doc["duration"] == "7200s" and doc["sampleInterval"] == "60s"
    report = tmp_path / "report"
    sim = kvert("simulate", str(tmp_path / "replay"), "--policy", "as is", "--json-only", "--no-progress",
                "-o", str(report))
    assert sim.returncode == 0, sim.stderr
    import json
    fidelity = {e["workload"]: e for e in json.loads((report / "report.json").read_text())["replay_fidelity"]}
    assert fidelity["web"]["recorded"]["cpu_cores_mean"] == 0.5
    assert abs(fidelity["web"]["replayed"]["cpu_cores_mean"] - 0.5) <= 0.025


def test_a_prometheus_that_refuses_writes_nothing(tmp_path):
    (tmp_path / "cluster.yaml").write_text(snapshot_text())
    url = f"http://127.0.0.1:{closed_port()}"
    result = kvert("scenario", "import", str(tmp_path / "cluster.yaml"), "--prometheus", url, "--last", "1h",
                   "--no-progress", "-o", str(tmp_path / "replay"))
    assert result.returncode == 1
    assert url in result.stderr and "cannot reach" in result.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cluster.yaml"]


def test_a_truncated_snapshot_names_the_file_and_line(tmp_path):
    text = snapshot_text()
    (tmp_path / "cluster.yaml").write_text(text[: len(text) // 2] + "\n  - {broken: [\n")
    result = kvert("scenario", "import", str(tmp_path / "cluster.yaml"), "--samples",
                   str(samples(tmp_path / "usage.csv")), "-o", str(tmp_path / "replay"))
    assert result.returncode == 2
    assert "cluster.yaml" in result.stderr and "line" in result.stderr
    assert not (tmp_path / "replay").exists()


def test_unknown_kinds_are_warnings_naming_the_object(tmp_path):
    doc = yaml.safe_load(snapshot_text())
    doc["items"].append({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w1",
                                                                                        "namespace": "shop"}})
    (tmp_path / "cluster.yaml").write_text(yaml.safe_dump(doc))
    result = kvert("scenario", "import", str(tmp_path / "cluster.yaml"), "--samples",
                   str(samples(tmp_path / "usage.csv")), "-o", str(tmp_path / "replay"))
    assert result.returncode == 0, result.stderr
    assert "Widget shop/w1" in result.stderr
    assert "Widget shop/w1" in (tmp_path / "replay" / "import-warnings.txt").read_text()


def test_bad_flags_name_the_flag(tmp_path):
    (tmp_path / "cluster.yaml").write_text(snapshot_text())
    result = kvert("scenario", "import", str(tmp_path / "cluster.yaml"), "--prometheus", "http://x", "--from",
                   "yesterday", "-o", str(tmp_path / "replay"))
    assert result.returncode == 2 and "--from" in result.stderr
    result = kvert("scenario", "import", str(tmp_path / "cluster.yaml"), "--prometheus", "http://x", "--step",
                   "often", "-o", str(tmp_path / "replay"))
    assert result.returncode == 2 and "--step" in result.stderr
    assert not (tmp_path / "replay").exists()
