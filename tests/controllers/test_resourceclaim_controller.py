"""The ResourceClaim controller: claims from templates for pods, reservations released when
their pods are done, deallocation, and claims collected with their pods.

Scenarios follow ``pkg/controller/resourceclaim/controller_test.go`` TestSyncHandler (case
names cited per test); they run against the in-process registry with the controller manager.
"""

from __future__ import annotations

import re

from kvert.api.errors import NotFound
from kvert.controllers.resourceclaim import (FINALIZER, POD_CLAIM_ANNOTATION, generate_name,
                                             is_pod_done)

from .helpers import NS, eventually, mark_failed, run

CLAIMS = "resource.k8s.io/resourceclaims"
TEMPLATES = "resource.k8s.io/resourceclaimtemplates"
DEVICES = {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu"}}]}


def template(name: str = "gpu-template", labels: dict | None = None) -> dict:
    meta: dict = {"annotations": {"team": "ml"}}
    if labels:
        meta["labels"] = labels
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
            "metadata": {"name": name, "namespace": NS},
            "spec": {"metadata": meta, "spec": {"devices": DEVICES}}}


def pod(name: str, *claims: dict, node: str = "") -> dict:
    spec: dict = {"containers": [{"name": "app", "image": "img",
                                  "resources": {"claims": [{"name": c["name"]} for c in claims]}}],
                  "resourceClaims": list(claims)}
    if node:
        spec["nodeName"] = node
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": NS},
            "spec": spec}


def from_template(name: str = "gpu", template_name: str = "gpu-template") -> dict:
    return {"name": name, "resourceClaimTemplateName": template_name}


def claim(name: str, owner: dict | None = None) -> dict:
    meta: dict = {"name": name, "namespace": NS}
    if owner is not None:
        meta["ownerReferences"] = [{"apiVersion": "v1", "kind": "Pod",
                                    "name": owner["metadata"]["name"],
                                    "uid": owner["metadata"]["uid"], "controller": True}]
        meta["annotations"] = {POD_CLAIM_ANNOTATION: "gpu"}
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": meta,
            "spec": {"devices": DEVICES}}


ALLOCATION = {"devices": {"results": [{"request": "gpu", "driver": "gpu.example.com",
                                       "pool": "node-1", "device": "gpu-0"}]}}


async def allocate(env, name: str, reserved_for: list[dict], finalizer: bool = True) -> dict:
    """What the scheduler does: finalizer, then allocation and reservation in the status."""
    obj = await env.client.get(CLAIMS, name, NS)
    if finalizer:
        obj["metadata"]["finalizers"] = [FINALIZER]
        obj = await env.client.update(CLAIMS, obj)
    obj["status"] = {"allocation": ALLOCATION,
                     "reservedFor": [{"resource": "pods", "name": p["metadata"]["name"],
                                      "uid": p["metadata"]["uid"]} for p in reserved_for]}
    return await env.client.update_status(CLAIMS, obj)


async def claims(env) -> list[dict]:
    return (await env.client.list(CLAIMS, namespace=NS))["items"]


async def get_or_none(env, resource: str, name: str) -> dict | None:
    try:
        return await env.client.get(resource, name, NS)
    except NotFound:
        return None


# -- generated names --------------------------------------------------------------------------

def test_generate_name_is_pod_and_claim_name_cut_in_proportion():
    assert generate_name("my-pod", "gpu") == "my-pod-gpu-"
    # 40 + 1 + 20 + 1 = 62 > 57: each part keeps len * 57 // 62 characters, no trailing "-"
    name = generate_name("p" * 40, "c" * 20)
    assert name == "p" * 36 + "-" + "c" * 18
    assert len(name) + 5 <= 63


def test_is_pod_done():
    assert is_pod_done({"status": {"phase": "Succeeded"}})
    assert is_pod_done({"status": {"phase": "Failed"}})
    assert is_pod_done({"metadata": {"deletionTimestamp": "2026-01-01T00:00:00Z"}, "spec": {}})
    assert not is_pod_done({"metadata": {"deletionTimestamp": "2026-01-01T00:00:00Z"},
                            "spec": {"nodeName": "n"}, "status": {"phase": "Running"}})
    assert not is_pod_done({"status": {"phase": "Pending"}})


# -- claims from templates ----------------------------------------------------------------------

def test_create_claim_from_template_and_record_it_in_the_pod_status():
    """TestSyncHandler/create (and create-with-other-claim: other claims are left alone)."""
    async def scenario(env):
        env.start_manager(controllers=["resourceclaim"])
        await env.client.create(TEMPLATES, template(labels={"app": "train"}))
        await env.client.create(CLAIMS, {**claim("unrelated"),
                                         "metadata": {"name": "unrelated", "namespace": NS}})
        p = await env.client.create("pods", pod("trainer", from_template()))

        async def recorded():
            cur = await env.client.get("pods", "trainer", NS)
            return (cur.get("status") or {}).get("resourceClaimStatuses")
        statuses = await eventually(env, recorded, what="resourceClaimStatuses")
        assert len(statuses) == 1 and statuses[0]["name"] == "gpu"
        generated = statuses[0]["resourceClaimName"]
        assert re.fullmatch(r"trainer-gpu-[a-z0-9]{5}", generated)
        c = await env.client.get(CLAIMS, generated, NS)
        meta = c["metadata"]
        assert meta["generateName"] == "trainer-gpu-"
        assert meta["annotations"] == {"team": "ml", POD_CLAIM_ANNOTATION: "gpu"}
        assert meta["labels"] == {"app": "train"}
        assert meta["ownerReferences"] == [{"apiVersion": "v1", "kind": "Pod", "name": "trainer",
                                            "uid": p["metadata"]["uid"], "controller": True,
                                            "blockOwnerDeletion": True}]
        assert c["spec"]["devices"]["requests"][0]["exactly"]["deviceClassName"] == "gpu"
        await env.clock.sleep(30)   # no second claim, however often the pod is synced
        assert sorted(x["metadata"]["name"] for x in await claims(env)) == \
            sorted([generated, "unrelated"])

    run(scenario)


def test_existing_generated_claim_is_found_instead_of_creating_another():
    """TestSyncHandler/find-existing-claim-by-label: a claim owned by the pod with the
    pod-claim-name annotation is recorded, not duplicated."""
    async def scenario(env):
        await env.client.create(TEMPLATES, template())
        p = await env.client.create("pods", pod("trainer", from_template()))
        await env.client.create(CLAIMS, claim("trainer-gpu-abcde", owner=p))
        env.start_manager(controllers=["resourceclaim"])

        async def recorded():
            cur = await env.client.get("pods", "trainer", NS)
            return (cur.get("status") or {}).get("resourceClaimStatuses")
        assert await eventually(env, recorded) == [{"name": "gpu",
                                                     "resourceClaimName": "trainer-gpu-abcde"}]
        await env.clock.sleep(10)
        assert [c["metadata"]["name"] for c in await claims(env)] == ["trainer-gpu-abcde"]

    run(scenario)


def test_missing_template_is_reported_and_retried_until_it_exists():
    async def scenario(env):
        env.start_manager(controllers=["resourceclaim"])
        await env.client.create("pods", pod("trainer", from_template()))
        events = await eventually(env, lambda: env.events("FailedResourceClaimCreation"),
                                  what="event")
        assert events[0]["type"] == "Warning"
        assert events[0]["involvedObject"]["name"] == "trainer"
        assert events[0]["message"] == (
            'PodResourceClaim gpu: resource claim template "gpu-template": '
            'resourceclaimtemplates.resource.k8s.io "gpu-template" not found')
        assert await claims(env) == []
        await env.client.create(TEMPLATES, template())
        await eventually(env, lambda: _n_claims(env, 1), timeout=30, what="claim created")

    run(scenario)


async def _n_claims(env, n: int) -> bool:
    return len(await claims(env)) == n


def test_pod_without_template_claims_needs_nothing():
    """TestSyncHandler/no-volumes, and a user-named claim is the user's to create."""
    async def scenario(env):
        env.start_manager(controllers=["resourceclaim"])
        await env.client.create(TEMPLATES, template())
        await env.client.create("pods", pod("plain"))
        await env.client.create("pods", pod("named", {"name": "gpu",
                                                      "resourceClaimName": "shared"}))
        await env.clock.sleep(20)
        assert await claims(env) == []
        assert not (await env.client.get("pods", "named", NS)).get("status", {}).get(
            "resourceClaimStatuses")

    run(scenario)


def test_claims_are_collected_with_their_pod():
    async def scenario(env):
        env.start_manager(controllers=["resourceclaim", "garbagecollector"])
        await env.client.create(TEMPLATES, template())
        await env.client.create("pods", pod("trainer", from_template()))
        await eventually(env, lambda: _n_claims(env, 1), what="claim created")
        await env.client.delete("pods", "trainer", namespace=NS)
        await eventually(env, lambda: _n_claims(env, 0), what="claim collected")

    run(scenario)


# -- reservations -----------------------------------------------------------------------------

def test_reservation_for_a_gone_pod_is_removed_and_the_claim_deallocated():
    """TestSyncHandler/clear-reserved-structured: the pod is gone, the claim (allocated by the
    scheduler: finalizer) loses its reservation, its allocation and the finalizer."""
    async def scenario(env):
        p = await env.client.create("pods", pod("user", {"name": "gpu",
                                                         "resourceClaimName": "shared"}))
        await env.client.create(CLAIMS, claim("shared"))
        await allocate(env, "shared", [p])
        await env.client.delete("pods", "user", namespace=NS)
        env.start_manager(controllers=["resourceclaim"])

        async def released():
            c = await env.client.get(CLAIMS, "shared", NS)
            return not (c.get("status") or {}) and not c["metadata"].get("finalizers")
        await eventually(env, released, what="claim released")

    run(scenario)


def test_reservation_of_a_running_pod_stays():
    """TestSyncHandler/stay-reserved-seen and dont-clear-reserved-structured."""
    async def scenario(env):
        env.start_manager(controllers=["resourceclaim"])
        a = await env.client.create("pods", pod("a", {"name": "gpu",
                                                      "resourceClaimName": "shared"}, node="n1"))
        b = await env.client.create("pods", pod("b", {"name": "gpu",
                                                      "resourceClaimName": "shared"}, node="n1"))
        await env.client.create(CLAIMS, claim("shared"))
        await allocate(env, "shared", [a, b])
        await env.clock.sleep(5)
        await env.client.delete("pods", "b", namespace=NS, grace_period_seconds=0)

        async def only_a():
            c = await env.client.get(CLAIMS, "shared", NS)
            return [r["name"] for r in c["status"].get("reservedFor", [])] == ["a"]
        await eventually(env, only_a, what="b's reservation removed")   # remove-reserved
        c = await env.client.get(CLAIMS, "shared", NS)
        assert c["status"]["allocation"] == ALLOCATION
        assert c["metadata"]["finalizers"] == [FINALIZER]
        assert a["metadata"]["uid"] == c["status"]["reservedFor"][0]["uid"]

    run(scenario)


def test_done_pod_releases_a_claim_allocated_elsewhere_without_deallocating_it():
    """TestSyncHandler/clear-reserved-when-done: no finalizer, so the allocation stays."""
    async def scenario(env):
        env.start_manager(controllers=["resourceclaim"])
        p = await env.client.create("pods", pod("job", {"name": "gpu",
                                                        "resourceClaimName": "shared"}, node="n1"))
        await env.client.create(CLAIMS, claim("shared"))
        await allocate(env, "shared", [p], finalizer=False)
        await mark_failed(env, "job")

        async def released():
            c = await env.client.get(CLAIMS, "shared", NS)
            return "reservedFor" not in c["status"] and c["status"].get("allocation") == ALLOCATION
        await eventually(env, released, what="reservation removed, allocation kept")

    run(scenario)


def test_generated_claim_of_a_done_pod_is_deleted():
    """TestSyncHandler/delete-claim-when-done."""
    async def scenario(env):
        env.start_manager(controllers=["resourceclaim"])
        await env.client.create(TEMPLATES, template())
        p = await env.client.create("pods", pod("job", from_template(), node="n1"))
        created = await eventually(env, lambda: claims(env), what="claim created")
        name = created[0]["metadata"]["name"]
        await allocate(env, name, [p])
        await mark_failed(env, "job")
        await eventually(env, lambda: _n_claims(env, 0), what="claim deleted")
        assert await get_or_none(env, "pods", "job") is not None   # the pod itself stays

    run(scenario)


def test_claim_being_deleted_loses_allocation_and_finalizer():
    """TestSyncHandler/structured-deleted: an unreserved allocated claim being deleted."""
    async def scenario(env):
        env.start_manager(controllers=["resourceclaim"])
        await env.client.create(CLAIMS, claim("old"))
        await allocate(env, "old", [])
        await env.client.delete(CLAIMS, "old", namespace=NS)
        await eventually(env, lambda: _gone(env, "old"), what="claim removed from storage")

    run(scenario)


async def _gone(env, name: str) -> bool:
    return await get_or_none(env, CLAIMS, name) is None


def test_allocated_claim_of_a_bound_pod_is_reserved_for_it():
    """TestSyncHandler/add-reserved: a pod with a node (not placed by the scheduler) gets
    its allocated generated claim reserved."""
    async def scenario(env):
        await env.client.create(TEMPLATES, template())
        p = await env.client.create("pods", pod("bound", from_template(), node="n1"))
        await env.client.create(CLAIMS, claim("bound-gpu-abcde", owner=p))
        await allocate(env, "bound-gpu-abcde", [])
        env.start_manager(controllers=["resourceclaim"])

        async def reserved():
            c = await env.client.get(CLAIMS, "bound-gpu-abcde", NS)
            return c["status"].get("reservedFor")
        assert await eventually(env, reserved, what="reserved") == [
            {"resource": "pods", "name": "bound", "uid": p["metadata"]["uid"]}]

    run(scenario)


def test_claim_not_owned_by_the_pod_is_not_used():
    """TestSyncHandler/wrong-claim-owner: the recorded claim belongs to another pod, so a new
    one is made from the template (upstream logs the conflict and creates a new claim)."""
    async def scenario(env):
        await env.client.create(TEMPLATES, template())
        other = await env.client.create("pods", pod("other"))
        await env.client.create(CLAIMS, claim("taken", owner=other))
        p = await env.client.create("pods", pod("trainer", from_template()))
        p["status"]["resourceClaimStatuses"] = [{"name": "gpu", "resourceClaimName": "taken"}]
        await env.client.update_status("pods", p)
        env.start_manager(controllers=["resourceclaim"])

        async def replaced():
            cur = await env.client.get("pods", "trainer", NS)
            name = cur["status"]["resourceClaimStatuses"][0]["resourceClaimName"]
            return name if name != "taken" else None
        name = await eventually(env, replaced, what="new claim recorded")
        assert name.startswith("trainer-gpu-")

    run(scenario)
