"""``kubectl get`` rows of ReplicationControllers, ControllerRevisions, PersistentVolumeClaims and
HorizontalPodAutoscalers, as upstream's printers_test.go expects them."""

from kvert.apiserver.printers.workloads import (PRINTERS, controller_revision_row, hpa_row,
                                                persistent_volume_claim_row, replication_controller_row)
from kvert.apiserver.tables import PRINTERS as ALL_PRINTERS

NOW = 0


def _hpa(metrics=None, current=None, min_replicas=None):
    spec = {"scaleTargetRef": {"kind": "ReplicationController", "name": "some-rc"}, "maxReplicas": 10}
    if metrics is not None:
        spec["metrics"] = metrics
    if min_replicas is not None:
        spec["minReplicas"] = min_replicas
    status = {"currentReplicas": 4, "desiredReplicas": 5}
    if current is not None:
        status["currentMetrics"] = current
    return {"metadata": {"name": "some-hpa"}, "spec": spec, "status": status}


def test_print_hpa():
    # TestPrintHPA: Name, Reference, Targets, MinPods, MaxPods, Replicas, Age
    assert hpa_row(_hpa(), NOW)[:6] == ["some-hpa", "ReplicationController/some-rc", "<none>", "<unset>", 10, 4]
    value = [{"type": "Resource", "resource": {"name": "cpu", "target": {"type": "AverageValue",
                                                                        "averageValue": "100m"}}}]
    assert hpa_row(_hpa(value, min_replicas=2), NOW)[2:4] == ["cpu: <unknown>/100m", "2"]
    util = [{"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization",
                                                                       "averageUtilization": 80}}}]
    assert hpa_row(_hpa(util), NOW)[2] == "cpu: <unknown>/80%"
    seen = [{"type": "Resource", "resource": {"name": "cpu", "current": {"averageUtilization": 50,
                                                                        "averageValue": "10"}}}]
    assert hpa_row(_hpa(util, seen), NOW)[2] == "cpu: 50%/80%"
    pods = {"type": "Pods", "pods": {"metric": {"name": "qps"},
                                     "target": {"type": "AverageValue", "averageValue": "100m"}}}
    external = {"type": "External", "external": {"metric": {"name": "queue"},
                                                 "target": {"type": "AverageValue", "averageValue": "4"}}}
    assert hpa_row(_hpa([pods, external, util[0]]), NOW)[2] == \
        "<unknown>/100m, <unknown>/4 (avg) + 1 more..."
    container = [{"type": "ContainerResource", "containerResource": {
        "name": "memory", "container": "app", "target": {"type": "Utilization", "averageUtilization": 70}}}]
    assert hpa_row(_hpa(container), NOW)[2] == "memory: <unknown>/70%"


def test_print_replication_controller():
    # TestPrintReplicationController: Name, Desired, Current, Ready, Age, Containers, Images, Selector
    rc = {"metadata": {"name": "rc1", "namespace": "test"},
          "spec": {"replicas": 5, "selector": {"a": "b"}, "template": {"spec": {"containers": [
              {"name": "test", "image": "test_image"}]}}},
          "status": {"replicas": 5, "readyReplicas": 2}}
    assert replication_controller_row(rc, NOW)[:4] == ["rc1", 5, 5, 2]
    assert replication_controller_row(rc, NOW)[5:] == ["test", "test_image", "a=b"]


def test_print_controller_revision():
    # TestPrintControllerRevision
    owned = {"metadata": {"name": "test1", "ownerReferences": [
        {"controller": True, "apiVersion": "apps/v1", "kind": "DaemonSet", "name": "foo"}]}, "revision": 1}
    assert controller_revision_row(owned, NOW)[:3] == ["test1", "daemonset.apps/foo", 1]
    loose = {"metadata": {"name": "test2", "ownerReferences": [
        {"controller": False, "apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "bar"}]}, "revision": 2}
    assert controller_revision_row(loose, NOW)[:3] == ["test2", "<none>", 2]


def test_print_persistent_volume_claim():
    # TestPrintPersistentVolumeClaim
    bound = {"metadata": {"name": "test1"},
             "spec": {"volumeName": "my-volume", "volumeMode": "Filesystem"},
             "status": {"phase": "Bound", "accessModes": ["ReadOnlyMany"], "capacity": {"storage": "4Gi"}}}
    assert persistent_volume_claim_row(bound, NOW)[:7] == ["test1", "Bound", "my-volume", "4Gi", "ROX", "",
                                                           "<unset>"]
    assert persistent_volume_claim_row(bound, NOW)[8] == "Filesystem"
    pending = {"metadata": {"name": "test2", "deletionTimestamp": "2026-01-01T00:00:00Z"},
               "spec": {"storageClassName": "fast"}, "status": {"phase": "Pending"}}
    assert persistent_volume_claim_row(pending, NOW)[:6] == ["test2", "Terminating", "", "", "", "fast"]
    assert persistent_volume_claim_row(pending, NOW)[8] == "<unset>"


def test_the_tables_serve_them():
    assert set(PRINTERS) <= set(ALL_PRINTERS)
    for columns, row in PRINTERS.values():
        assert columns[0]["name"] == "Name"
