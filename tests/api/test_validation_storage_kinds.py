"""Validation and defaults of the storage kinds served for issue 28: StorageClass,
VolumeAttributesClass, VolumeAttachment, CSIDriver, CSINode (upstream
``pkg/apis/storage/validation/validation_test.go``) and PersistentVolume
(``pkg/apis/core/validation/validation_test.go`` TestValidatePersistentVolumes and
TestValidatePersistentVolumeSourceUpdate). The cases are upstream's; the field paths and
messages those of ``validation.go``, which the Go tests only count."""

from __future__ import annotations

import pytest

from kvert.api import validation
from kvert.api.defaults import defaulted


def causes(obj: dict) -> list[tuple[str, str]]:
    return [(c.field, c.message) for c in validation.validate(obj)]


def update_causes(new: dict, old: dict) -> list[tuple[str, str]]:
    return [(c.field, c.message) for c in validation.validate_update(new, old)]


def storage_class(name: str = "foo", **fields) -> dict:
    return {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": name},
            "provisioner": "kubernetes.io/foo-provisioner", **fields}


# ---- StorageClass (TestValidateStorageClass, TestValidateStorageClassUpdate) ---------------

def test_storage_class_defaults():
    """SetDefaults_StorageClass: reclaimPolicy Delete, volumeBindingMode Immediate."""
    sc = defaulted(storage_class())
    assert sc["reclaimPolicy"] == "Delete" and sc["volumeBindingMode"] == "Immediate"


@pytest.mark.parametrize("fields", [
    {"parameters": {"kubernetes.io/foo-parameter": "free/form/string", "foo-parameter": "free-form-string",
                    "foo-parameter2": "{\"embedded\": \"json\", \"with\": {\"structures\":\"inside\"}}"},
     "reclaimPolicy": "Delete"},
    {"reclaimPolicy": "Retain"},
    {"volumeBindingMode": "WaitForFirstConsumer"},
])
def test_storage_class_success_cases(fields):
    assert causes(storage_class(**fields)) == []


def test_storage_class_error_cases():
    namespaced = storage_class()
    namespaced["metadata"]["namespace"] = "bar"
    assert causes(namespaced) == [("metadata.namespace", "Forbidden: not allowed on this type")]
    assert causes(storage_class(provisioner="kubernetes.io/invalid/provisioner")) == [
        ("provisioner", 'Invalid value: "kubernetes.io/invalid/provisioner": a qualified name must '
         "consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
         "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for "
         "validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain "
         "prefix and '/' (e.g. 'example.com/MyName')")]
    assert causes(storage_class(parameters={"": "value"})) == [
        ("parameters", 'Invalid value: "": field can not be empty.')]
    assert causes(storage_class(provisioner="")) == [("provisioner", "Required value")]
    too_many = {f"key{i}": "value" for i in range(513)}
    assert causes(storage_class(parameters=too_many)) == [
        # field.TooLong with the value "" (a string): "bytes", as upstream prints it
        ("parameters", "Too long: may not be more than 512 bytes")]
    assert causes(storage_class(reclaimPolicy="invalid")) == [
        ("reclaimPolicy", 'Unsupported value: "invalid": supported values: "Delete", "Retain"')]


def test_storage_class_binding_mode_and_topologies():
    """TestValidateVolumeBindingMode and TestValidateAllowedTopologies."""
    assert causes(storage_class(volumeBindingMode="invalid")) == [
        ("volumeBindingMode",
         'Unsupported value: "invalid": supported values: "Immediate", "WaitForFirstConsumer"')]
    term = {"matchLabelExpressions": [{"key": "failure-domain.beta.kubernetes.io/zone",
                                       "values": ["zone1"]}]}
    assert causes(storage_class(allowedTopologies=[term])) == []
    assert causes(storage_class(allowedTopologies=[term, term])) == [
        ("allowedTopologies[1].matchLabelExpressions", 'Duplicate value: ""')]
    empty_values = {"matchLabelExpressions": [{"key": "zone", "values": []}]}
    assert causes(storage_class(allowedTopologies=[empty_values])) == [
        ("allowedTopologies[0].matchLabelExpressions[0].values", "Required value")]
    dup_key = {"matchLabelExpressions": [{"key": "zone", "values": ["a"]},
                                         {"key": "zone", "values": ["b"]}]}
    assert causes(storage_class(allowedTopologies=[dup_key])) == [
        ("allowedTopologies[0].matchLabelExpressions[1].key", 'Duplicate value: "zone"')]


def test_storage_class_update_immutability():
    """ValidateStorageClassUpdate: parameters, provisioner, reclaimPolicy and
    volumeBindingMode cannot change; allowVolumeExpansion and mountOptions can."""
    old = storage_class(parameters={"a": "b"}, metadata={"name": "foo", "resourceVersion": "1"})
    old["metadata"] = {"name": "foo", "resourceVersion": "1"}
    changed = storage_class(parameters={"a": "c"}, provisioner="other.example.com/p",
                            reclaimPolicy="Retain", volumeBindingMode="WaitForFirstConsumer")
    changed["metadata"] = {"name": "foo", "resourceVersion": "1"}
    assert update_causes(changed, old) == [
        ("parameters", "Forbidden: updates to parameters are forbidden."),
        ("provisioner", "Forbidden: updates to provisioner are forbidden."),
        ("reclaimPolicy", "Forbidden: updates to reclaimPolicy are forbidden."),
        ("volumeBindingMode", 'Invalid value: "WaitForFirstConsumer": field is immutable')]
    grown = storage_class(parameters={"a": "b"}, allowVolumeExpansion=True, mountOptions=["x"])
    grown["metadata"] = {"name": "foo", "resourceVersion": "1"}
    assert update_causes(grown, old) == []


# ---- VolumeAttributesClass (TestValidateVolumeAttributesClass) ------------------------------

def vac(**fields) -> dict:
    return {"apiVersion": "storage.k8s.io/v1", "kind": "VolumeAttributesClass",
            "metadata": {"name": "foo"}, **fields}


def test_volume_attributes_class():
    assert causes(vac(driverName="foo", parameters={"foo-parameter": "free-form-string"})) == []
    assert causes(vac(driverName="", parameters={"a": "b"})) == [("driverName", "Required value")]
    assert causes(vac(driverName="foo")) == [
        ("parameters", "Required value: must contain at least one key/value pair")]
    assert causes(vac(driverName="foo", parameters={"": "value"})) == [
        ("parameters", 'Invalid value: "": field can not be empty.')]


def test_volume_attributes_class_update():
    old = vac(driverName="foo", parameters={"a": "b"})
    old["metadata"]["resourceVersion"] = "1"
    new = vac(driverName="bar", parameters={"a": "c"})
    new["metadata"]["resourceVersion"] = "1"
    assert update_causes(new, old) == [
        ("driverName", "Forbidden: updates to driverName are forbidden."),
        ("parameters", "Forbidden: updates to parameters are forbidden.")]


# ---- VolumeAttachment (TestVolumeAttachmentValidation, ..V1, ..Update) ----------------------

def attachment(source: dict | None = None, *, attacher: str = "myattacher",
               node: str = "mynode", status: dict | None = None) -> dict:
    body: dict = {"apiVersion": "storage.k8s.io/v1", "kind": "VolumeAttachment",
                  "metadata": {"name": "foo"},
                  "spec": {"attacher": attacher, "nodeName": node,
                           "source": {"persistentVolumeName": "foo"} if source is None else source}}
    if status is not None:
        body["status"] = status
    return body


INLINE = {"accessModes": ["ReadWriteOnce"], "csi": {"driver": "com.test.foo", "volumeHandle": "foobar"}}


def test_volume_attachment_success_cases():
    assert causes(attachment()) == []
    assert causes(attachment({"inlineVolumeSpec": INLINE})) == []


def test_volume_attachment_error_cases():
    assert causes(attachment(attacher="")) == [("spec.attacher", "Required value")]
    assert causes(attachment(node="")) == [
        ("spec.nodeName", 'Invalid value: "": a lowercase RFC 1123 subdomain must consist of lower '
         "case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric "
         "character (e.g. 'example.com', regex used for validation is "
         "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')")]
    assert causes(attachment({})) == [
        ("spec.source",
         "Required value: must specify exactly one of inlineVolumeSpec and persistentVolumeName")]
    assert causes(attachment({"persistentVolumeName": "foo", "inlineVolumeSpec": INLINE})) == [
        ("spec.source",
         "Forbidden: must specify exactly one of inlineVolumeSpec and persistentVolumeName")]
    assert causes(attachment({"persistentVolumeName": ""})) == [
        ("spec.source.persistentVolumeName",
         "Required value: must specify non empty persistentVolumeName")]
    # "invalid attacher name" of TestVolumeAttachmentValidationV1
    bad = causes(attachment(attacher="invalid!@#$%^&*()"))
    assert [f for f, _ in bad] == ["spec.attacher"]
    long_message = {"attached": False, "attachError": {"message": "x" * 1025}}
    assert causes(attachment(status=long_message)) == [
        ("status.attachError.message", "Too long: may not be more than 262144 bytes")]
    negative = {"attached": False, "detachError": {"message": "m", "errorCode": -1}}
    assert causes(attachment(status=negative)) == [
        ("status.detachError.errorCode", "Invalid value: -1: must be between 0 and 2147483647, inclusive")]
    inline_claim = dict(INLINE, claimRef={"name": "c"}, capacity={"storage": "1Gi"})
    assert causes(attachment({"inlineVolumeSpec": inline_claim})) == [
        ("spec.source.inlineVolumeSpec.claimRef",
         "Forbidden: may not be specified in the context of inline volumes"),
        ("spec.source.inlineVolumeSpec.capacity",
         "Forbidden: may not be specified in the context of inline volumes")]


def test_volume_attachment_spec_is_immutable():
    old = attachment()
    old["metadata"]["resourceVersion"] = "1"
    new = attachment(node="othernode")
    new["metadata"]["resourceVersion"] = "1"
    found = update_causes(new, old)
    assert [f for f, _ in found] == ["spec"] and found[0][1].endswith("field is immutable")
    attached = attachment(status={"attached": True})
    attached["metadata"]["resourceVersion"] = "1"
    assert [(c.field, c.message) for c in validation.validate_status_update(attached, old)] == []


# ---- CSIDriver (TestCSIDriverValidation, TestCSIDriverValidationUpdate) ---------------------

def csi_driver(name: str = "com.test.foo", **spec) -> dict:
    return {"apiVersion": "storage.k8s.io/v1", "kind": "CSIDriver", "metadata": {"name": name},
            "spec": spec}


def test_csi_driver_defaults():
    """SetDefaults_CSIDriver (pkg/apis/storage/v1/defaults_test.go TestSetDefaultAttachRequired,
    TestSetDefaultVolumeLifecycleModesEmpty, TestSetDefaultCSIDriver)."""
    spec = defaulted(csi_driver())["spec"]
    assert spec == {"attachRequired": True, "podInfoOnMount": False, "storageCapacity": False,
                    "fsGroupPolicy": "ReadWriteOnceWithFSType", "requiresRepublish": False,
                    "seLinuxMount": False, "volumeLifecycleModes": ["Persistent"]}


def test_csi_driver_cases():
    assert causes(csi_driver()) == []
    assert causes(csi_driver(volumeLifecycleModes=["Persistent", "Ephemeral"], fsGroupPolicy="File",
                             tokenRequests=[{"audience": "gcp"}, {"audience": ""}])) == []
    assert causes(csi_driver(volumeLifecycleModes=["no-such-mode"])) == [
        ("spec.volumeLifecycleModes",
         'Unsupported value: "no-such-mode": supported values: "Persistent", "Ephemeral"')]
    assert causes(csi_driver(fsGroupPolicy="invalid-mode")) == [
        ("spec.fsGroupPolicy", 'Unsupported value: "invalid-mode": supported values: "File", '
         '"None", "ReadWriteOnceWithFSType"')]
    assert causes(csi_driver(tokenRequests=[{"audience": "gcp"}, {"audience": "gcp"}])) == [
        ("spec.tokenRequests[1].audience", 'Duplicate value: "gcp"')]
    assert causes(csi_driver(tokenRequests=[{"audience": "gcp", "expirationSeconds": 599}])) == [
        ("spec.tokenRequests[0].expirationSeconds",
         "Invalid value: 599: may not specify a duration less than 10 minutes")]
    assert causes(csi_driver(tokenRequests=[{"audience": "gcp", "expirationSeconds": (1 << 32) + 1}])) == [
        ("spec.tokenRequests[0].expirationSeconds",
         "Invalid value: 4294967297: may not specify a duration larger than 2^32 seconds")]
    assert causes(csi_driver(nodeAllocatableUpdatePeriodSeconds=9)) == [
        ("spec.nodeAllocatableUpdatePeriodSeconds",
         "Invalid value: 9: must be greater than or equal to 10 seconds")]


def test_csi_driver_update_keeps_attach_required_and_modes():
    old = csi_driver()
    old["metadata"]["resourceVersion"] = "1"
    new = csi_driver(attachRequired=False, volumeLifecycleModes=["Ephemeral"], podInfoOnMount=True)
    new["metadata"]["resourceVersion"] = "1"
    assert update_causes(new, old) == [
        ("spec.attachedRequired", "Invalid value: false: field is immutable"),
        ("spec.volumeLifecycleModes", 'Invalid value: ["Ephemeral"]: field is immutable')]
    mutable = csi_driver(podInfoOnMount=True, storageCapacity=True, requiresRepublish=True)
    mutable["metadata"]["resourceVersion"] = "1"
    assert update_causes(mutable, old) == []


# ---- CSINode (TestCSINodeValidation, TestCSINodeUpdateValidation) ---------------------------

def csi_node(*drivers: dict) -> dict:
    return {"apiVersion": "storage.k8s.io/v1", "kind": "CSINode", "metadata": {"name": "foo"},
            "spec": {"drivers": list(drivers)}}


def driver(name: str = "io.kubernetes.storage.csi.driver", node_id: str = "nodeA",
           keys: tuple[str, ...] = ("company.com/zone1", "company.com/zone2"), **extra) -> dict:
    return {"name": name, "nodeID": node_id, "topologyKeys": list(keys), **extra}


def test_csi_node_cases():
    assert causes(csi_node(driver(), driver("io.kubernetes.storage.csi.driver-2"))) == []
    assert causes(csi_node(driver(allocatable={"count": 0}))) == []
    assert causes(csi_node(driver(), driver())) == [
        ("spec.drivers[1].name", 'Duplicate value: "io.kubernetes.storage.csi.driver"')]
    assert causes(csi_node(driver(node_id=""))) == [("spec.drivers[0].nodeID", "Required value")]
    long_id = "N" * 193
    assert causes(csi_node(driver(node_id=long_id))) == [
        ("spec.drivers[0].nodeID", f'Invalid value: "{long_id}": must be 192 characters or less')]
    assert causes(csi_node(driver(keys=("company.com/zone1", "company.com/zone1")))) == [
        ("spec.drivers[0]", 'Duplicate value: "company.com/zone1"')]
    assert causes(csi_node(driver(allocatable={"count": -1}))) == [
        ("spec.drivers[0].allocatable.count", "Invalid value: -1: must be greater than or equal to 0")]


def test_csi_node_update():
    """A registered driver may change only its allocatable count
    (MutableCSINodeAllocatableCount); drivers may be added and removed."""
    old = csi_node(driver(allocatable={"count": 10}))
    old["metadata"]["resourceVersion"] = "1"
    recount = csi_node(driver(allocatable={"count": 20}), driver("io.kubernetes.storage.csi.new"))
    recount["metadata"]["resourceVersion"] = "1"
    assert update_causes(recount, old) == []
    moved = csi_node(driver(node_id="nodeB", allocatable={"count": 10}))
    moved["metadata"]["resourceVersion"] = "1"
    assert [f for f, _ in update_causes(moved, old)] == ["spec.drivers"]


# ---- PersistentVolume (TestValidatePersistentVolumes and friends) ---------------------------

def pv(name: str = "foo", **spec) -> dict:
    base = {"capacity": {"storage": "10G"}, "accessModes": ["ReadWriteOnce"],
            "hostPath": {"path": "/foo", "type": ""}}
    base.update(spec)
    return {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": name},
            "spec": {k: v for k, v in base.items() if v is not None}}


def test_persistent_volume_defaults():
    """SetDefaults_PersistentVolume (pkg/apis/core/v1/defaults_test.go
    TestSetDefaultPersistentVolume): Retain, Filesystem, phase Pending."""
    out = defaulted(pv())
    assert out["spec"]["persistentVolumeReclaimPolicy"] == "Retain"
    assert out["spec"]["volumeMode"] == "Filesystem"
    assert out["status"] == {"phase": "Pending"}


@pytest.mark.parametrize("spec", [
    {},                                                   # "good-volume"
    {"persistentVolumeReclaimPolicy": "Retain"},          # "good-volume-with-retain-policy"
    {"storageClassName": "valid", "hostPath": None,       # "good-volume-with-storage-class" (local)
     "local": {"path": "/foo"},
     "nodeAffinity": {"required": {"nodeSelectorTerms": [{"matchExpressions": [
         {"key": "test-label-key", "operator": "In", "values": ["test-label-value"]}]}]}}},
    {"accessModes": ["ReadWriteOncePod"]},                # "good-volume-with-read-write-once-pod"
    {"volumeMode": "Block"},
    {"hostPath": None, "csi": {"driver": "test-driver", "volumeHandle": "test-123"},
     "volumeAttributesClassName": "foo"},                 # "valid-volume-attributes-class-name"
])
def test_persistent_volume_success_cases(spec):
    assert causes(pv(**spec)) == []


def test_persistent_volume_error_cases():
    assert causes(pv(persistentVolumeReclaimPolicy="fakeReclaimPolicy")) == [
        ("spec.persistentVolumeReclaimPolicy", 'Unsupported value: "fakeReclaimPolicy": supported '
         'values: "Delete", "Recycle", "Retain"')]
    assert causes(pv(accessModes=["fakemode"])) == [
        ("spec.accessModes", 'Unsupported value: "fakemode": supported values: "ReadOnlyMany", '
         '"ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod"')]
    assert causes(pv(accessModes=["ReadWriteOncePod", "ReadWriteMany"])) == [
        ("spec.accessModes", "Forbidden: may not use ReadWriteOncePod with other access modes")]
    assert causes(pv(accessModes=[])) == [("spec.accessModes", "Required value")]
    assert causes(pv(capacity={})) == [
        ("spec.capacity", "Required value"),
        ("spec.capacity", 'Unsupported value: "{}": supported values: "storage"')]
    assert causes(pv(hostPath=None)) == [("spec", "Required value: must specify a volume type")]
    assert causes(pv(gcePersistentDisk={"pdName": "foo", "fsType": "ext4"})) == [
        ("spec.gcePersistentDisk", "Forbidden: may not specify more than 1 volume type")]
    assert causes(pv(hostPath={"path": "/", "type": ""}, persistentVolumeReclaimPolicy="Recycle")) == [
        ("spec.persistentVolumeReclaimPolicy",
         "Forbidden: may not be 'recycle' for a hostPath mount of '/'")]
    assert causes(pv(hostPath={"path": "/foo/..", "type": ""})) == [
        ("spec.hostPath.path", "Invalid value: \"/foo/..\": must not contain '..'")]
    assert causes(pv(hostPath=None, local={"path": "/foo"})) == [
        ("spec.nodeAffinity", "Required value: Local volume requires node affinity")]
    assert causes(pv(storageClassName="-invalid-")) == [
        ("spec.storageClassName", 'Invalid value: "-invalid-": a lowercase RFC 1123 subdomain must '
         "consist of lower case alphanumeric characters, '-' or '.', and must start and end with "
         "an alphanumeric character (e.g. 'example.com', regex used for validation is "
         "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')")]
    assert causes(pv(volumeAttributesClassName="")) == [
        ("spec.volumeAttributesClassName", "Required value: an empty string is disallowed"),
        ("spec.csi", "Required value: has to be specified when using volumeAttributesClassName")]
    assert causes(pv(hostPath=None, nfs={"server": "", "path": "relative"})) == [
        ("spec.nfs.server", "Required value"),
        ("spec.nfs.path", 'Invalid value: "relative": must be an absolute path')]
    assert causes(pv(hostPath=None, csi={"driver": "", "volumeHandle": ""})) == [
        ("spec.csi.driver", "Required value"), ("spec.csi.volumeHandle", "Required value")]


def test_persistent_volume_source_is_immutable():
    """TestValidatePersistentVolumeSourceUpdate: the source cannot change; a CSI source may
    gain a controllerExpandSecretRef; the claimRef and reclaim policy can change."""
    old = pv(hostPath=None, csi={"driver": "d", "volumeHandle": "h"})
    old["metadata"]["resourceVersion"] = "1"
    moved = pv(hostPath=None, csi={"driver": "d", "volumeHandle": "other"})
    moved["metadata"]["resourceVersion"] = "1"
    assert update_causes(moved, old) == [
        ("spec.persistentvolumesource",
         "Forbidden: spec.persistentvolumesource is immutable after creation")]
    secret = pv(hostPath=None, csi={"driver": "d", "volumeHandle": "h",
                                    "controllerExpandSecretRef": {"name": "s", "namespace": "n"}})
    secret["metadata"]["resourceVersion"] = "1"
    assert update_causes(secret, old) == []
    bound = pv(hostPath=None, csi={"driver": "d", "volumeHandle": "h"},
               claimRef={"namespace": "ns", "name": "c"}, persistentVolumeReclaimPolicy="Delete")
    bound["metadata"]["resourceVersion"] = "1"
    assert update_causes(bound, old) == []
    block = pv(hostPath=None, csi={"driver": "d", "volumeHandle": "h"}, volumeMode="Block")
    block["metadata"]["resourceVersion"] = "1"
    assert update_causes(block, old) == [("volumeMode", 'Invalid value: "Block": field is immutable')]


def test_claim_update_lets_the_binder_set_volume_name_and_a_default_class():
    """ValidatePersistentVolumeClaimUpdate (TestValidatePersistentVolumeClaimUpdate
    "valid-update-volume-name-on-unbound-claim", "invalid-update-change-volume-name-on-bound-claim",
    "valid-upgrade-storage-class-from-nil", "invalid-upgrade-storage-class-from-value")."""
    def pvc(**spec):
        body = {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}, **spec}
        return {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                "metadata": {"name": "c", "namespace": "ns", "resourceVersion": "1"}, "spec": body}
    assert update_causes(pvc(volumeName="pv"), pvc()) == []
    assert [f for f, _ in update_causes(pvc(volumeName="other"), pvc(volumeName="pv"))] == ["spec"]
    assert update_causes(pvc(storageClassName="fast"), pvc()) == []
    assert [f for f, _ in update_causes(pvc(storageClassName="slow"),
                                        pvc(storageClassName="fast"))] == ["spec"]
