"""``kubectl get apiservices`` columns: kube-aggregator's REST.ConvertToTable
(pkg/registry/apiservice/etcd/etcd.go): Name, Service ("Local" or namespace/name),
Available ("True", "<status> (<reason>)", the status alone without a reason, "Unknown"
without an Available condition), Age."""

from __future__ import annotations

import pytest

from kvert.api import kinds
from kvert.apiserver.tables import to_table

RT = kinds.by_key("apiregistration.k8s.io/apiservices")


def api_service(service=None, conditions=None) -> dict:
    obj = {"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService",
           "metadata": {"name": "v1beta1.metrics.k8s.io", "creationTimestamp": "2026-01-01T00:00:00Z"},
           "spec": {"group": "metrics.k8s.io", "version": "v1beta1"}}
    if service:
        obj["spec"]["service"] = service
    if conditions is not None:
        obj["status"] = {"conditions": conditions}
    return obj


def test_columns():
    table = to_table(RT, [], now=0)
    assert [c["name"] for c in table["columnDefinitions"]] == ["Name", "Service", "Available", "Age"]


@pytest.mark.parametrize("service, conditions, cells", [
    (None, [{"type": "Available", "status": "True", "reason": "Local"}], ["Local", "True"]),
    ({"namespace": "kube-system", "name": "metrics-server"},
     [{"type": "Available", "status": "False", "reason": "ServiceNotFound"}],
     ["kube-system/metrics-server", "False (ServiceNotFound)"]),
    (None, [{"type": "Available", "status": "False"}], ["Local", "False"]),
    (None, None, ["Local", "Unknown"]),
])
def test_rows(service, conditions, cells):
    now = 1767225600 + 90      # 90 seconds after creation
    table = to_table(RT, [api_service(service, conditions)], now=now)
    assert table["rows"][0]["cells"] == ["v1beta1.metrics.k8s.io", *cells, "90s"]
