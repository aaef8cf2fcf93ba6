"""APIServices through real kubectl against ``kvert up``: the local ones kube-apiserver
registers (Local, True), and an aggregated one whose service is missing (kube-aggregator's
ServiceNotFound; its table convertor prints ``False (ServiceNotFound)``)."""

from __future__ import annotations

import json

from .conftest import wait_for

MISSING = {
    "apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService",
    "metadata": {"name": "v1beta1.wardle.example.com"},
    "spec": {"group": "wardle.example.com", "version": "v1beta1", "groupPriorityMinimum": 1000,
             "versionPriority": 15, "insecureSkipTLSVerify": True,
             "service": {"namespace": "default", "name": "wardle-server"}},
}


def _row(kubectl, name: str) -> list[str] | None:
    out = kubectl("get", "apiservices", "--no-headers", check=False).stdout
    for line in out.splitlines():
        cells = line.split()
        if cells and cells[0] == name:
            return cells
    return None


def test_local_api_services_are_listed_available(kubectl):
    header = kubectl("get", "apiservices").stdout.splitlines()[0].split()
    assert header == ["NAME", "SERVICE", "AVAILABLE", "AGE"]
    row = wait_for(lambda: _row(kubectl, "v1.apps"), timeout=20)
    assert row[1:3] == ["Local", "True"]
    obj = kubectl.json("get", "apiservice", "v1.apps")
    assert obj["spec"] == {"group": "apps", "version": "v1", "groupPriorityMinimum": 17800,
                           "versionPriority": 15}
    condition = next(c for c in obj["status"]["conditions"] if c["type"] == "Available")
    assert condition["status"] == "True" and condition["reason"] == "Local"
    assert condition["message"] == "Local APIServices are always available"


def test_an_api_service_whose_service_is_missing_is_unavailable(kubectl):
    kubectl("apply", "-f", "-", input=json.dumps(MISSING))
    try:
        row = wait_for(lambda: (r := _row(kubectl, "v1beta1.wardle.example.com")) and len(r) > 3
                       and r[2] == "False" and r, timeout=20)
        assert row[1] == "default/wardle-server"
        assert row[2:4] == ["False", "(ServiceNotFound)"]
        obj = kubectl.json("get", "apiservice", "v1beta1.wardle.example.com")
        condition = next(c for c in obj["status"]["conditions"] if c["type"] == "Available")
        assert condition["message"] == 'service/wardle-server in "default" is not present'
        assert obj["spec"]["service"]["port"] == 443
    finally:
        kubectl("delete", "apiservice", "v1beta1.wardle.example.com", "--ignore-not-found")
