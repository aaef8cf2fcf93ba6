"""Example objects of the kinds added for issue 28 (storage, and the other resources a 1.36
kube-apiserver serves), round-tripped through protobuf by tests/apiserver/test_protobuf.py
(which wants one per protobuf kind). Each sets every field its message has, so a wrong
field number or shape breaks the round trip."""

from __future__ import annotations

CLUSTER_META = {"name": "n", "labels": {"a": "b"}, "uid": "u-1", "resourceVersion": "7",
                "creationTimestamp": "2026-01-02T03:04:05Z"}
SECRET = {"name": "s", "namespace": "ns"}

PV_SPEC = {
    "capacity": {"storage": "10Gi"}, "accessModes": ["ReadWriteOnce"],
    "claimRef": {"kind": "PersistentVolumeClaim", "namespace": "ns", "name": "c", "uid": "u"},
    "persistentVolumeReclaimPolicy": "Retain", "storageClassName": "fast",
    "mountOptions": ["hard"], "volumeMode": "Filesystem",
    "nodeAffinity": {"required": {"nodeSelectorTerms": [{"matchExpressions": [
        {"key": "zone", "operator": "In", "values": ["a"]}]}]}},
    "volumeAttributesClassName": "gold",
    "csi": {"driver": "csi.example.com", "volumeHandle": "h", "readOnly": True, "fsType": "ext4",
            "volumeAttributes": {"k": "v"}, "controllerPublishSecretRef": SECRET,
            "nodeStageSecretRef": SECRET, "nodePublishSecretRef": SECRET,
            "controllerExpandSecretRef": SECRET, "nodeExpandSecretRef": SECRET},
}

OBJECTS = [
    {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": CLUSTER_META, "spec": PV_SPEC,
     "status": {"phase": "Bound", "message": "m", "reason": "r",
                "lastPhaseTransitionTime": "2026-01-02T03:04:05Z"}},
    # the PersistentVolumeSource variants with namespaced secret references
    {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": CLUSTER_META,
     "spec": {"capacity": {"storage": "1Gi"},
              "iscsi": {"targetPortal": "10.0.0.1:3260", "iqn": "iqn.x", "lun": 1,
                        "iscsiInterface": "default", "fsType": "ext4", "readOnly": True,
                        "portals": ["10.0.0.2"], "chapAuthDiscovery": True,
                        "chapAuthSession": True, "secretRef": SECRET, "initiatorName": "i"}}},
    {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": CLUSTER_META,
     "spec": {"local": {"path": "/mnt/disk", "fsType": "xfs"},
              "azureFile": {"secretName": "s", "shareName": "x", "readOnly": True,
                            "secretNamespace": "ns"}}},
    {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": CLUSTER_META,
     "provisioner": "csi.example.com", "parameters": {"type": "ssd"}, "reclaimPolicy": "Retain",
     "mountOptions": ["debug"], "allowVolumeExpansion": True,
     "volumeBindingMode": "WaitForFirstConsumer",
     "allowedTopologies": [{"matchLabelExpressions": [{"key": "zone", "values": ["a", "b"]}]}]},
    {"apiVersion": "storage.k8s.io/v1", "kind": "VolumeAttributesClass", "metadata": CLUSTER_META,
     "driverName": "csi.example.com", "parameters": {"iops": "3000"}},
    {"apiVersion": "storage.k8s.io/v1", "kind": "VolumeAttachment", "metadata": CLUSTER_META,
     "spec": {"attacher": "csi.example.com", "nodeName": "node-1",
              "source": {"persistentVolumeName": "pv-1"}},
     "status": {"attached": True, "attachmentMetadata": {"dev": "/dev/sdb"},
                "attachError": {"time": "2026-01-02T03:04:05Z", "message": "m", "errorCode": 5},
                "detachError": {"message": "d"}}},
    {"apiVersion": "storage.k8s.io/v1", "kind": "VolumeAttachment", "metadata": CLUSTER_META,
     "spec": {"attacher": "csi.example.com", "nodeName": "node-1",
              "source": {"inlineVolumeSpec": {"accessModes": ["ReadWriteOnce"],
                                              "csi": {"driver": "d", "volumeHandle": "h"}}}},
     "status": {"attached": False}},
    {"apiVersion": "storage.k8s.io/v1", "kind": "CSIDriver", "metadata": CLUSTER_META,
     "spec": {"attachRequired": False, "podInfoOnMount": True,
              "volumeLifecycleModes": ["Persistent", "Ephemeral"], "storageCapacity": True,
              "fsGroupPolicy": "File",
              "tokenRequests": [{"audience": "vault", "expirationSeconds": 3600}],
              "requiresRepublish": True, "seLinuxMount": True,
              "nodeAllocatableUpdatePeriodSeconds": 60}},
    {"apiVersion": "storage.k8s.io/v1", "kind": "CSINode", "metadata": CLUSTER_META,
     "spec": {"drivers": [{"name": "csi.example.com", "nodeID": "node-1",
                           "topologyKeys": ["zone"], "allocatable": {"count": 16}}]}},
]
