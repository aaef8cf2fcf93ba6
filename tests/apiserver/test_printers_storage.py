"""``kubectl get pv / sc / vac / volumeattachments / csidrivers / csinodes`` columns and rows:
``pkg/printers/internalversion/printers.go`` (the column definitions of AddHandlers and
printPersistentVolume, printStorageClass, printVolumeAttributesClass, printVolumeAttachment,
printCSIDriver, printCSINode; cases after printers_test.go TestPrintPersistentVolume,
TestPrintStorageClass, TestPrintCSIDriver, TestPrintCSINode, TestPrintVolumeAttachment)."""

from __future__ import annotations

import pytest

from kvert.api import kinds
from kvert.apiserver.tables import to_table

CREATED = "2026-01-01T00:00:00Z"
NOW = 1767225600 + 90      # 90 seconds after creation


def names(key: str) -> list[str]:
    return [c["name"] for c in to_table(kinds.by_key(key), [], now=0)["columnDefinitions"]]


def row(key: str, obj: dict) -> list:
    obj.setdefault("metadata", {}).setdefault("creationTimestamp", CREATED)
    return to_table(kinds.by_key(key), [obj], now=NOW)["rows"][0]["cells"]


def test_columns():
    assert names("persistentvolumes") == [
        "Name", "Capacity", "Access Modes", "Reclaim Policy", "Status", "Claim", "StorageClass",
        "VolumeAttributesClass", "Reason", "Age", "VolumeMode"]
    assert names("storage.k8s.io/storageclasses") == [
        "Name", "Provisioner", "ReclaimPolicy", "VolumeBindingMode", "AllowVolumeExpansion", "Age"]
    assert names("storage.k8s.io/volumeattributesclasses") == ["Name", "DriverName", "Age"]
    assert names("storage.k8s.io/volumeattachments") == [
        "Name", "Attacher", "PV", "Node", "Attached", "Age"]
    assert names("storage.k8s.io/csidrivers") == [
        "Name", "AttachRequired", "PodInfoOnMount", "StorageCapacity", "TokenRequests",
        "RequiresRepublish", "Modes", "Age"]
    assert names("storage.k8s.io/csinodes") == ["Name", "Drivers", "Age"]
    assert names("persistentvolumeclaims") == [
        "Name", "Status", "Volume", "Capacity", "Access Modes", "StorageClass",
        "VolumeAttributesClass", "Age", "VolumeMode"]


@pytest.mark.parametrize("pv, cells", [
    # bound, with a class and a mode
    ({"metadata": {"name": "test1"},
      "spec": {"capacity": {"storage": "4Gi"}, "accessModes": ["ReadOnlyMany"],
               "claimRef": {"namespace": "default", "name": "test"},
               "persistentVolumeReclaimPolicy": "Retain", "storageClassName": "fast",
               "volumeMode": "Filesystem"},
      "status": {"phase": "Bound"}},
     ["test1", "4Gi", "ROX", "Retain", "Bound", "default/test", "fast", "<unset>", "", "90s",
      "Filesystem"]),
    # failed, with a reason, no claim, no mode
    ({"metadata": {"name": "test2"},
      "spec": {"capacity": {"storage": "5Gi"}, "accessModes": ["ReadWriteOnce", "ReadWriteMany"],
               "volumeAttributesClassName": "gold"},
      "status": {"phase": "Failed", "reason": "VolumeFailed"}},
     ["test2", "5Gi", "RWO,RWX", "", "Failed", "", "", "gold", "VolumeFailed", "90s", "<unset>"]),
    # deleting: Terminating whatever the phase; the beta class annotation wins
    ({"metadata": {"name": "test3", "deletionTimestamp": CREATED,
                   "annotations": {"volume.beta.kubernetes.io/storage-class": "beta"}},
      "spec": {"accessModes": ["ReadWriteOncePod"], "storageClassName": "ga"},
      "status": {"phase": "Released"}},
     ["test3", "0", "RWOP", "", "Terminating", "", "beta", "<unset>", "", "90s", "<unset>"]),
])
def test_persistent_volume_rows(pv, cells):
    pv.update(apiVersion="v1", kind="PersistentVolume")
    assert row("persistentvolumes", pv) == cells


def test_storage_class_rows():
    """printStorageClass: "(default)" after the name of a class annotated is-default-class
    "true" (GA or beta key); unset policy, mode and expansion print their defaults."""
    default = {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
               "metadata": {"name": "standard",
                            "annotations": {"storageclass.kubernetes.io/is-default-class": "true"}},
               "provisioner": "rancher.io/local-path", "reclaimPolicy": "Delete",
               "volumeBindingMode": "WaitForFirstConsumer", "allowVolumeExpansion": True}
    assert row("storage.k8s.io/storageclasses", default) == [
        "standard (default)", "rancher.io/local-path", "Delete", "WaitForFirstConsumer", True, "90s"]
    beta = {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
            "metadata": {"name": "old", "annotations": {
                "storageclass.beta.kubernetes.io/is-default-class": "true"}},
            "provisioner": "kubernetes.io/aws-ebs"}
    assert row("storage.k8s.io/storageclasses", beta) == [
        "old (default)", "kubernetes.io/aws-ebs", "Delete", "Immediate", False, "90s"]
    plain = {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
             "metadata": {"name": "slow", "annotations": {
                 "storageclass.kubernetes.io/is-default-class": "false"}},
             "provisioner": "p", "reclaimPolicy": "Retain"}
    assert row("storage.k8s.io/storageclasses", plain)[:3] == ["slow", "p", "Retain"]


def test_csi_driver_rows():
    driver = {"apiVersion": "storage.k8s.io/v1", "kind": "CSIDriver",
              "metadata": {"name": "csi.example.com"},
              "spec": {"attachRequired": True, "podInfoOnMount": False, "storageCapacity": True,
                       "tokenRequests": [{"audience": "a"}, {"audience": "b"}],
                       "requiresRepublish": False,
                       "volumeLifecycleModes": ["Persistent", "Ephemeral"]}}
    assert row("storage.k8s.io/csidrivers", driver) == [
        "csi.example.com", True, False, True, "a,b", False, "Persistent,Ephemeral", "90s"]
    bare = {"apiVersion": "storage.k8s.io/v1", "kind": "CSIDriver", "metadata": {"name": "d"},
            "spec": {}}
    assert row("storage.k8s.io/csidrivers", bare) == [
        "d", True, False, False, "<unset>", False, "<none>", "90s"]


def test_csi_node_volume_attachment_and_vac_rows():
    node = {"apiVersion": "storage.k8s.io/v1", "kind": "CSINode", "metadata": {"name": "node-1"},
            "spec": {"drivers": [{"name": "a", "nodeID": "1", "topologyKeys": []},
                                 {"name": "b", "nodeID": "1", "topologyKeys": []}]}}
    assert row("storage.k8s.io/csinodes", node) == ["node-1", 2, "90s"]
    va = {"apiVersion": "storage.k8s.io/v1", "kind": "VolumeAttachment", "metadata": {"name": "va"},
          "spec": {"attacher": "csi.example.com", "nodeName": "node-1",
                   "source": {"persistentVolumeName": "pv-1"}},
          "status": {"attached": True}}
    assert row("storage.k8s.io/volumeattachments", va) == [
        "va", "csi.example.com", "pv-1", "node-1", True, "90s"]
    inline = dict(va, spec={"attacher": "a", "nodeName": "n", "source": {"inlineVolumeSpec": {}}},
                  status={})
    assert row("storage.k8s.io/volumeattachments", inline)[2:5] == ["", "n", False]
    vac = {"apiVersion": "storage.k8s.io/v1", "kind": "VolumeAttributesClass",
           "metadata": {"name": "gold"}, "driverName": "csi.example.com", "parameters": {"a": "b"}}
    assert row("storage.k8s.io/volumeattributesclasses", vac) == ["gold", "csi.example.com", "90s"]


def test_bound_claim_row():
    """printPersistentVolumeClaim: capacity and access modes from the status once bound."""
    pvc = {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
           "metadata": {"name": "data", "namespace": "default"},
           "spec": {"volumeName": "pv-1", "storageClassName": "fast", "volumeMode": "Filesystem",
                    "accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}},
           "status": {"phase": "Bound", "capacity": {"storage": "10Gi"},
                      "accessModes": ["ReadWriteOnce"]}}
    assert row("persistentvolumeclaims", pvc) == [
        "data", "Bound", "pv-1", "10Gi", "RWO", "fast", "<unset>", "90s", "Filesystem"]
