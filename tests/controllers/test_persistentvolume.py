"""The PersistentVolume binder. Matching: upstream's index_test.go (TestMatchVolume,
TestFindingVolumeWithDifferentAccessModes, TestFindingPreboundVolumes, TestVolumeModeCheck)
with its volumes; binding and reclaiming: binder_test.go / recycle_test.go / delete_test.go
(TestSync "1-1 - successful bind", "1-3 - no matching volume", "1-5 - pre-bound volume",
"2-1 - claim prebound to non-existing volume", "2-5 - claim bound to volume bound to another
claim", "3-1 - bound claim with missing volume", "4-x" volume phases, "8-x" released
volumes; TestDelayBinding / "11-x" WaitForFirstConsumer), in virtual time against the
in-process API server."""

from __future__ import annotations

from typing import Any

import pytest

from kvert.api.errors import NotFound
from kvert.controllers.persistentvolume import (
    ANN_BIND_COMPLETED,
    ANN_BOUND_BY_CONTROLLER,
    FIRST_CONSUMER_MSG,
    NO_CLASS_MSG,
    default_class,
    find_best_match,
    find_matching_volume,
)

from .helpers import NS, eventually, run


def volume(name: str, size: str, *modes: str, phase: str = "Available", cls: str = "",
           claim: str | None = None, uid: str = "", labels: dict | None = None,
           mode: str | None = None, policy: str = "Retain", **spec: Any) -> dict:
    body: dict = {"capacity": {"storage": size}, "accessModes": list(modes or ("ReadWriteOnce",)),
                  "persistentVolumeReclaimPolicy": policy, "hostPath": {"path": f"/data/{name}"},
                  **spec}
    if cls:
        body["storageClassName"] = cls
    if mode:
        body["volumeMode"] = mode
    if claim:
        body["claimRef"] = {"namespace": NS, "name": claim, **({"uid": uid} if uid else {})}
    return {"apiVersion": "v1", "kind": "PersistentVolume",
            "metadata": {"name": name, "labels": labels or {}}, "spec": body,
            "status": {"phase": phase}}


def claim(name: str, size: str, *modes: str, uid: str = "", cls: str | None = None,
          selector: dict | None = None, mode: str | None = None, volume_name: str = "") -> dict:
    spec: dict = {"accessModes": list(modes or ("ReadWriteOnce",)),
                  "resources": {"requests": {"storage": size}}}
    if cls is not None:
        spec["storageClassName"] = cls
    if selector:
        spec["selector"] = selector
    if mode:
        spec["volumeMode"] = mode
    if volume_name:
        spec["volumeName"] = volume_name
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
            "metadata": {"name": name, "namespace": NS, **({"uid": uid} if uid else {})},
            "spec": spec}


# ---- matching (index_test.go) ------------------------------------------------------------

RWO, ROX, RWX, RWOP = "ReadWriteOnce", "ReadOnlyMany", "ReadWriteMany", "ReadWriteOncePod"

# createTestVolumes' volumes that TestMatchVolume's cases reach
VOLUMES = [
    volume("gce-pd-1", "1G", RWO, ROX, phase="Bound", claim="other", uid="u-other"),
    volume("gce-pd-5", "5G", RWO, ROX),
    volume("gce-pd-10", "10G", RWO, ROX),
    volume("gce-pd-20", "20G", RWO, ROX, labels={"should-exist": "true"}),
    volume("gce-pd-silver1", "10G", RWO, ROX, cls="silver"),
    volume("gce-pd-silver2", "20G", RWO, ROX, cls="silver"),
    volume("gce-pd-gold", "30G", RWO, ROX, cls="gold"),
    volume("nfs-1", "1G", RWO, ROX, RWX),
    volume("nfs-5", "5G", RWO, ROX, RWX),
    volume("nfs-10", "10G", RWO, ROX, RWX),
    volume("gce-pd-block", "10G", RWO, ROX, mode="Block"),
]


def _name(found):
    return found["metadata"]["name"] if found else None


@pytest.mark.parametrize("case, pvc, expected", [
    ("successful-match-gce-10", claim("c", "8G", RWO, ROX), "gce-pd-10"),
    ("successful-match-nfs-5", claim("c", "5G", RWO, ROX, RWX), "nfs-5"),
    ("successful-skip-1g-bound-volume", claim("c", "1G", RWO, ROX), "gce-pd-5"),
    ("successful-no-match", claim("c", "999G", RWO), None),
    ("successful-no-match-due-to-label",
     claim("c", "999G", RWO, selector={"matchLabels": {"should-not-exist": "true"}}), None),
    ("successful-match-due-to-label",
     claim("c", "1G", RWO, ROX, selector={"matchLabels": {"should-exist": "true"}}), "gce-pd-20"),
    ("successful-match-with-class", claim("c", "1G", RWO, ROX, cls="silver"), "gce-pd-silver1"),
    ("successful-match-with-class-and-labels", claim("c", "1G", RWO, ROX, cls="gold"), "gce-pd-gold"),
    ("successful-match-with-block-mode", claim("c", "1G", RWO, mode="Block"), "gce-pd-block"),
    ("no-match-rwop", claim("c", "1G", RWOP), None),
])
def test_match_volume(case, pvc, expected):
    assert _name(find_best_match(pvc, VOLUMES)) == expected


@pytest.mark.parametrize("modes, expected", [
    ((RWO,), "ebs"), ((ROX,), "gce"), ((RWX,), "nfs"), ((RWO, ROX), "gce"), ((RWO, RWX), "nfs"),
    ((RWX, ROX), "nfs"), ((RWO, ROX, RWX), "nfs"), ((RWOP,), None)])
def test_finding_volume_with_different_access_modes(modes, expected):
    """TestFindingVolumeWithDifferentAccessModes: the volume with the fewest modes that
    cover the claim's wins."""
    vols = [volume("gce", "10G", RWO, ROX), volume("ebs", "10G", RWO),
            volume("nfs", "10G", RWO, ROX, RWX)]
    assert _name(find_best_match(claim("c", "1G", *modes), vols)) == expected


def test_finding_prebound_volumes():
    """TestFindingPreboundVolumes: a volume pre-bound to the claim wins over a smaller
    free one; one pre-bound elsewhere or too small is skipped."""
    pvc = claim("claim01", "1Gi", RWO, uid="u-claim01")
    pv1, pv5, pv8 = volume("pv1", "1Gi"), volume("pv5", "5Gi"), volume("pv8", "8Gi")
    assert _name(find_best_match(pvc, [pv1, pv5, pv8])) == "pv1"
    prebound = volume("pv8", "8Gi", phase="Available", claim="claim01")
    assert _name(find_best_match(pvc, [pv1, pv5, prebound])) == "pv8"
    too_small = volume("pvBadSize", "500Mi", claim="claim01")
    assert _name(find_best_match(pvc, [too_small, pv5])) == "pv5"
    elsewhere = volume("pvOther", "1Gi", claim="claim02")
    assert _name(find_best_match(pvc, [elsewhere])) is None
    wrong_uid = volume("pvUid", "1Gi", claim="claim01", uid="u-old")
    assert _name(find_best_match(pvc, [wrong_uid])) is None


def test_volume_mode_check():
    """TestVolumeModeCheck: unset means Filesystem on both sides."""
    block, fs = volume("b", "1G", mode="Block"), volume("f", "1G")
    assert _name(find_matching_volume(claim("c", "1G"), [block])) is None
    assert _name(find_matching_volume(claim("c", "1G", mode="Filesystem"), [fs])) == "f"
    assert _name(find_matching_volume(claim("c", "1G", mode="Block"), [block])) == "b"


def test_delayed_binding_matches_only_prebound_without_a_node():
    pvc = claim("c", "1G")
    free = volume("free", "1G")
    assert find_matching_volume(pvc, [free], delay_binding=True) is None
    node = {"metadata": {"name": "n1", "labels": {"zone": "a"}}}
    assert _name(find_matching_volume(pvc, [free], delay_binding=True, node=node)) == "free"
    elsewhere = volume("zoned", "1G", nodeAffinity={"required": {"nodeSelectorTerms": [
        {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["b"]}]}]}})
    assert find_matching_volume(pvc, [elsewhere], delay_binding=True, node=node) is None


def test_default_class_is_the_newest_annotated():
    """GetDefaultClass (TestGetDefaultClass): the newest default class; ties by name."""
    def sc(name, ts, default=True):
        annotations = {"storageclass.kubernetes.io/is-default-class": "true"} if default else {}
        return {"metadata": {"name": name, "creationTimestamp": ts, "annotations": annotations}}
    assert default_class([sc("a", "2026-01-01T00:00:00Z", False)]) is None
    newest = default_class([sc("old", "2026-01-01T00:00:00Z"), sc("new", "2026-01-02T00:00:00Z"),
                            sc("plain", "2026-01-03T00:00:00Z", False)])
    assert newest["metadata"]["name"] == "new"


# ---- the controller (binder_test.go TestSync) ------------------------------------------------

async def _pv(env, name):
    return await env.client.get("persistentvolumes", name)


async def _pvc(env, name):
    return await env.client.get("persistentvolumeclaims", name, NS)


def test_successful_bind_and_release_with_retain():
    """1-1 successful bind (the smallest fit); 8-x: deleting the claim releases a Retain
    volume, which keeps its claimRef."""
    async def scenario(env):
        await env.client.create("persistentvolumes", volume("big", "10Gi"))
        await env.client.create("persistentvolumes", volume("small", "2Gi"))
        await env.client.create("persistentvolumeclaims", claim("data", "1Gi"))
        env.start_manager(controllers=["persistentvolume-binder"])

        async def bound():
            pvc = await _pvc(env, "data")
            return pvc if pvc.get("status", {}).get("phase") == "Bound" else None
        pvc = await eventually(env, bound, what="claim bound")
        assert pvc["spec"]["volumeName"] == "small"
        assert pvc["metadata"]["annotations"] == {ANN_BIND_COMPLETED: "yes",
                                                  ANN_BOUND_BY_CONTROLLER: "yes"}
        assert pvc["status"]["capacity"] == {"storage": "2Gi"}
        assert pvc["status"]["accessModes"] == [RWO]
        pv = await _pv(env, "small")
        assert pv["status"]["phase"] == "Bound"
        assert pv["metadata"]["annotations"] == {ANN_BOUND_BY_CONTROLLER: "yes"}
        ref = pv["spec"]["claimRef"]
        assert (ref["kind"], ref["namespace"], ref["name"], ref["uid"]) == (
            "PersistentVolumeClaim", NS, "data", pvc["metadata"]["uid"])
        assert (await _pv(env, "big"))["status"]["phase"] == "Available"

        await env.client.delete("persistentvolumeclaims", "data", namespace=NS)

        async def released():
            return (await _pv(env, "small"))["status"]["phase"] == "Released"
        await eventually(env, released, what="volume released")
        assert (await _pv(env, "small"))["spec"]["claimRef"]["name"] == "data"
    run(scenario)


def test_delete_policy_deletes_the_volume():
    """8-x (delete_test.go "8-1 - successful delete"): a released Delete volume goes."""
    async def scenario(env):
        await env.client.create("persistentvolumes", volume("v", "1Gi", policy="Delete"))
        await env.client.create("persistentvolumeclaims", claim("data", "1Gi"))
        env.start_manager(controllers=["persistentvolume-binder"])

        async def bound():
            return (await _pv(env, "v"))["status"]["phase"] == "Bound"
        await eventually(env, bound)
        await env.client.delete("persistentvolumeclaims", "data", namespace=NS)

        async def gone():
            try:
                await _pv(env, "v")
            except NotFound:
                return True
            return False
        await eventually(env, gone, what="volume deleted")
    run(scenario)


def test_no_matching_volume_stays_pending_with_failed_binding():
    """1-3 no matching volume: Pending, Normal FailedBinding; a volume created later binds."""
    async def scenario(env):
        await env.client.create("persistentvolumeclaims", claim("data", "5Gi"))
        await env.client.create("persistentvolumes", volume("small", "1Gi"))
        env.start_manager(controllers=["persistentvolume-binder"])

        async def event():
            return await env.events("FailedBinding")
        events = await eventually(env, event, what="FailedBinding")
        assert events[0]["type"] == "Normal" and events[0]["message"] == NO_CLASS_MSG
        assert events[0]["source"]["component"] == "persistentvolume-controller"
        assert (await _pvc(env, "data"))["status"]["phase"] == "Pending"
        await env.client.create("persistentvolumes", volume("large", "5Gi"))

        async def bound():
            return (await _pvc(env, "data")).get("spec", {}).get("volumeName") == "large"
        await eventually(env, bound)
    run(scenario)


def test_prebound_volume_and_prebound_claim():
    """1-5 pre-bound volume (claimRef without uid: no bound-by-controller on the volume);
    2-x a claim naming its volume (no bound-by-controller on the claim); 2-5 a claim naming
    a volume bound elsewhere stays Pending with FailedBinding."""
    async def scenario(env):
        await env.client.create("persistentvolumes", volume("reserved", "1Gi", claim="a"))
        await env.client.create("persistentvolumes", volume("named", "1Gi"))
        await env.client.create("persistentvolumes",
                                volume("taken", "1Gi", claim="someone", uid="u-x", phase="Bound"))
        await env.client.create("persistentvolumeclaims", claim("a", "1Gi"))
        await env.client.create("persistentvolumeclaims", claim("b", "1Gi", volume_name="named"))
        await env.client.create("persistentvolumeclaims", claim("c", "1Gi", volume_name="taken"))
        env.start_manager(controllers=["persistentvolume-binder"])

        async def both():
            a, b = await _pvc(env, "a"), await _pvc(env, "b")
            return all(x.get("status", {}).get("phase") == "Bound" for x in (a, b)) and (a, b)
        a, b = await eventually(env, both, what="claims bound")
        assert a["spec"]["volumeName"] == "reserved"
        assert ANN_BOUND_BY_CONTROLLER not in (await _pv(env, "reserved"))["metadata"].get("annotations", {})
        assert b["metadata"]["annotations"] == {ANN_BIND_COMPLETED: "yes"}
        assert (await _pv(env, "named"))["metadata"]["annotations"] == {ANN_BOUND_BY_CONTROLLER: "yes"}

        async def refused():
            return [e for e in await env.events("FailedBinding")
                    if e["involvedObject"]["name"] == "c"]
        events = await eventually(env, refused)
        assert events[0]["type"] == "Warning"
        assert events[0]["message"] == 'volume "taken" already bound to a different claim.'
        assert (await _pvc(env, "c"))["status"]["phase"] == "Pending"
    run(scenario)


def test_bound_claim_loses_its_volume():
    """3-1 bound claim with a missing volume: Lost, Warning ClaimLost."""
    async def scenario(env):
        await env.client.create("persistentvolumes", volume("v", "1Gi"))
        await env.client.create("persistentvolumeclaims", claim("data", "1Gi"))
        env.start_manager(controllers=["persistentvolume-binder"])

        async def bound():
            return (await _pvc(env, "data")).get("status", {}).get("phase") == "Bound"
        await eventually(env, bound)
        await env.client.delete("persistentvolumes", "v")

        async def lost():
            return (await _pvc(env, "data")).get("status", {}).get("phase") == "Lost"
        await eventually(env, lost)
        events = await env.events("ClaimLost")
        assert events[0]["type"] == "Warning"
        assert events[0]["message"] == ("Bound claim has lost its PersistentVolume. Data on the "
                                        "volume is lost!")
    run(scenario)


def _class(name: str, mode: str = "Immediate", provisioner: str = "kubernetes.io/no-provisioner",
           default: bool = False) -> dict:
    meta: dict = {"name": name}
    if default:
        meta["annotations"] = {"storageclass.kubernetes.io/is-default-class": "true"}
    return {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": meta,
            "provisioner": provisioner, "volumeBindingMode": mode}


def _pod(name: str, claim_name: str, node: str = "") -> dict:
    spec: dict = {"containers": [{"name": "c", "image": "x"}],
                  "volumes": [{"name": "v", "persistentVolumeClaim": {"claimName": claim_name}}]}
    if node:
        spec["nodeName"] = node
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": NS},
            "spec": spec}


def test_wait_for_first_consumer():
    """11-x / TestDelayBinding: a WaitForFirstConsumer claim stays Pending (Normal
    WaitForFirstConsumer, then WaitForPodScheduled while its pod is unscheduled) until a
    pod that uses it is on a node; then it binds to a volume the node can reach."""
    async def scenario(env):
        await env.client.create("storage.k8s.io/storageclasses", _class("local", "WaitForFirstConsumer"))
        zone_b = {"required": {"nodeSelectorTerms": [{"matchExpressions": [
            {"key": "kubernetes.io/hostname", "operator": "In", "values": ["node-b"]}]}]}}
        zone_a = {"required": {"nodeSelectorTerms": [{"matchExpressions": [
            {"key": "kubernetes.io/hostname", "operator": "In", "values": ["node-a"]}]}]}}
        await env.client.create("persistentvolumes", volume("on-b", "1Gi", cls="local", nodeAffinity=zone_b))
        await env.client.create("persistentvolumes", volume("on-a", "5Gi", cls="local", nodeAffinity=zone_a))
        for node in ("node-a", "node-b"):
            await env.client.create("nodes", {"apiVersion": "v1", "kind": "Node", "metadata": {
                "name": node, "labels": {"kubernetes.io/hostname": node}}})
        await env.client.create("persistentvolumeclaims", claim("data", "1Gi", cls="local"))
        env.start_manager(controllers=["persistentvolume-binder"])

        async def waiting():
            return await env.events("WaitForFirstConsumer")
        events = await eventually(env, waiting)
        assert events[0]["type"] == "Normal" and events[0]["message"] == FIRST_CONSUMER_MSG
        await env.client.create("pods", _pod("user", "data"))

        async def scheduled_wait():
            return await env.events("WaitForPodScheduled")
        events = await eventually(env, scheduled_wait)
        assert events[0]["message"] == "waiting for pod user to be scheduled"
        assert (await _pvc(env, "data"))["status"]["phase"] == "Pending"
        # the scheduler puts the pod on node-a: the (bigger) volume there is the one it can reach
        await env.client.bind(NS, "user", "node-a")

        async def bound():
            return (await _pvc(env, "data")).get("spec", {}).get("volumeName")
        assert await eventually(env, bound, what="delayed claim bound") == "on-a"
        pv = await _pv(env, "on-a")
        assert pv["spec"]["claimRef"]["name"] == "data" and pv["status"]["phase"] == "Bound"
        assert (await _pv(env, "on-b"))["status"]["phase"] == "Available"
    run(scenario)



def test_class_events_and_retroactive_default_class():
    """A claim of a missing class: Warning ProvisioningFailed; of a no-provisioner class:
    ProvisioningFailed "no volume plugin matched"; of an external provisioner's class:
    ExternalProvisioning and the storage-provisioner annotations; a claim without a class
    gets the default class (RetroactiveDefaultStorageClass)."""
    async def scenario(env):
        await env.client.create("storage.k8s.io/storageclasses", _class("manual"))
        await env.client.create("storage.k8s.io/storageclasses",
                                _class("fast", provisioner="ebs.csi.aws.com", default=True))
        await env.client.create("persistentvolumeclaims", claim("missing", "1Gi", cls="nope"))
        await env.client.create("persistentvolumeclaims", claim("manual", "1Gi", cls="manual"))
        await env.client.create("persistentvolumeclaims", claim("classless", "1Gi"))
        env.start_manager(controllers=["persistentvolume-binder"])

        async def provisioning():
            return len(await env.events("ExternalProvisioning")) and await env.events("ProvisioningFailed")
        await eventually(env, provisioning)
        failed = {e["involvedObject"]["name"]: e["message"] for e in await env.events("ProvisioningFailed")}
        assert failed == {"missing": 'storageclass.storage.k8s.io "nope" not found',
                          "manual": "no volume plugin matched name: kubernetes.io/no-provisioner"}
        external = await env.events("ExternalProvisioning")
        assert external[0]["involvedObject"]["name"] == "classless"
        assert external[0]["message"] == (
            "Waiting for a volume to be created either by the external provisioner "
            "'ebs.csi.aws.com' or manually by the system administrator. If volume creation is "
            "delayed, please verify that the provisioner is running and correctly registered.")
        classless = await _pvc(env, "classless")
        assert classless["spec"]["storageClassName"] == "fast"
        assert classless["metadata"]["annotations"]["volume.kubernetes.io/storage-provisioner"] == \
            "ebs.csi.aws.com"
    run(scenario)
