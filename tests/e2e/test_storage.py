"""Storage through real kubectl against ``kvert up``: a default StorageClass printed with
"(default)", a PersistentVolume and a claim the persistentvolume-binder binds (kubectl get
pv / pvc columns as kubectl 1.36 prints them), a claim nothing matches left Pending with
upstream's event, and every storage resource kube-scheduler's informers list."""

from __future__ import annotations

import json

from .conftest import wait_for

CLASS = {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
         "metadata": {"name": "manual",
                      "annotations": {"storageclass.kubernetes.io/is-default-class": "true"}},
         "provisioner": "kubernetes.io/no-provisioner"}
VOLUME = {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": "pv-e2e"},
          "spec": {"capacity": {"storage": "2Gi"}, "accessModes": ["ReadWriteOnce"],
                   "storageClassName": "manual", "hostPath": {"path": "/tmp/pv-e2e"}}}
CLAIM = {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
         "metadata": {"name": "data", "namespace": "default"},
         "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": "manual",
                  "resources": {"requests": {"storage": "1Gi"}}}}


def test_claims_bind_to_volumes_and_print_as_upstream(kubectl):
    for obj in (CLASS, VOLUME, CLAIM):
        kubectl("apply", "-f", "-", input=json.dumps(obj))
    sc = kubectl("get", "sc").stdout.splitlines()
    assert sc[0].split() == ["NAME", "PROVISIONER", "RECLAIMPOLICY", "VOLUMEBINDINGMODE",
                             "ALLOWVOLUMEEXPANSION", "AGE"]
    assert sc[1].split()[:6] == ["manual", "(default)", "kubernetes.io/no-provisioner", "Delete",
                                 "Immediate", "false"]

    def bound():
        pvc = kubectl.json("get", "pvc", "data")
        return pvc if pvc.get("status", {}).get("phase") == "Bound" else None
    pvc = wait_for(bound, timeout=30)
    assert pvc["spec"]["volumeName"] == "pv-e2e"
    assert pvc["metadata"]["annotations"]["pv.kubernetes.io/bind-completed"] == "yes"
    pv = kubectl("get", "pv").stdout.splitlines()
    assert pv[0].split() == ["NAME", "CAPACITY", "ACCESS", "MODES", "RECLAIM", "POLICY", "STATUS",
                             "CLAIM", "STORAGECLASS", "VOLUMEATTRIBUTESCLASS", "REASON", "AGE"]
    assert pv[1].split()[:7] == ["pv-e2e", "2Gi", "RWO", "Retain", "Bound", "default/data",
                                 "manual"]
    claims = kubectl("get", "pvc").stdout.splitlines()
    assert claims[1].split()[:6] == ["data", "Bound", "pv-e2e", "2Gi", "RWO", "manual"]

    big = dict(CLAIM, metadata={"name": "big", "namespace": "default"},
               spec=dict(CLAIM["spec"], resources={"requests": {"storage": "5Gi"}}))
    kubectl("apply", "-f", "-", input=json.dumps(big))

    def event():
        out = kubectl("get", "events", "--field-selector", "involvedObject.name=big",
                      "-o", "json").stdout
        return [e for e in json.loads(out)["items"] if e["reason"] == "ProvisioningFailed"]
    events = wait_for(event, timeout=30)
    assert events[0]["message"] == "no volume plugin matched name: kubernetes.io/no-provisioner"
    assert kubectl.json("get", "pvc", "big")["status"]["phase"] == "Pending"

    kubectl("delete", "pvc", "data")
    wait_for(lambda: kubectl.json("get", "pv", "pv-e2e")["status"]["phase"] == "Released",
             timeout=30)


def test_kube_scheduler_storage_informers_list(kubectl):
    for resource in ("storageclasses", "persistentvolumes", "csidrivers", "csinodes",
                     "volumeattachments", "csistoragecapacities", "volumeattributesclasses"):
        out = kubectl("get", resource, "-A", "-o", "json").stdout
        assert json.loads(out)["kind"] == "List"
