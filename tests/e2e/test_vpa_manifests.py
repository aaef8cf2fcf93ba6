"""``kvert vpa manifests`` against a live ``kvert up``: every object is accepted by the API
server (``kubectl apply --dry-run=server``), and the VPA CRDs ``kvert up`` serves are the ones
the command prints."""

from __future__ import annotations

import subprocess
import sys

import yaml


def manifests(*argv: str) -> str:
    done = subprocess.run([sys.executable, "-m", "kvert.cli.main", "vpa", "manifests", *argv],
                          capture_output=True, text=True, timeout=60, check=True)
    return done.stdout


def test_the_api_server_accepts_every_object(kubectl):
    for argv in ((), ("--tls-secret", "vpa-tls-certs", "--feature-gates", "InPlace=true")):
        text = manifests(*argv)
        result = kubectl("apply", "--dry-run=server", "-f", "-", input=text)
        applied = [line for line in result.stdout.splitlines() if line.strip()]
        documents = [d for d in yaml.safe_load_all(text) if d]
        assert len(applied) == len(documents), result.stdout
        assert all("(server dry run)" in line for line in applied), result.stdout


def test_kvert_up_serves_the_crds_it_prints(kubectl):
    printed = {d["metadata"]["name"]: d for d in yaml.safe_load_all(manifests()) if d
               and d["kind"] == "CustomResourceDefinition"}
    assert len(printed) == 2
    for name, crd in printed.items():
        served = kubectl.json("get", "crd", name)
        for key in ("group", "names", "scope"):
            assert served["spec"][key] == crd["spec"][key], (name, key)
        assert [v["name"] for v in served["spec"]["versions"]] == [v["name"] for v in crd["spec"]["versions"]]
        for mine, theirs in zip(crd["spec"]["versions"], served["spec"]["versions"]):
            for key in ("served", "storage", "schema", "subresources", "additionalPrinterColumns", "deprecated"):
                assert theirs.get(key) == mine.get(key), (name, mine["name"], key)
