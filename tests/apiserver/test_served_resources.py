"""What kvert serves against what a Kubernetes 1.36 kube-apiserver serves by default, and
that each served resource can be listed and watched as a client-go informer does.

UPSTREAM_1_36: the resources (and subresources) of kube-apiserver 1.36's default discovery:
the groups and versions of ``api/discovery/aggregated_v2.json`` and ``api__v1.json``
(kubernetes/kubernetes; the stored copy is 1.33-era and lists every version, alpha and
beta included) kept to the versions 1.36 enables by default (GA versions; beta APIs are
off by default since 1.24, KEP-3136), with the GA graduations since 1.33 applied:
resource.k8s.io/v1 (1.34), storage.k8s.io/v1 VolumeAttributesClass (1.34),
admissionregistration.k8s.io/v1 MutatingAdmissionPolicy (1.36). storagemigration.k8s.io/v1
is 1.37's (its prerelease-lifecycle says introduced 1.37), so not here.

NOT_SERVED: each upstream resource kvert does not serve, with the reason (the same table is
in the docs); KVERT_ONLY: what kvert serves that a default 1.36 server does not. The test
fails when either table stops being true, so both stay exact.
"""

from __future__ import annotations

import asyncio
import json

from aiohttp import ClientSession, ClientTimeout

from kvert.apiserver.admission import default_chain
from kvert.apiserver.server import ApiServer
from kvert.auth.tokens import ADMIN, TokenAuthenticator
from kvert.clock import WallClock
from kvert.store import open_store

UPSTREAM_1_36 = {
    "v1": {
        "bindings", "componentstatuses", "configmaps", "endpoints", "events", "limitranges",
        "namespaces", "namespaces/finalize", "namespaces/status", "nodes", "nodes/proxy",
        "nodes/status", "persistentvolumeclaims", "persistentvolumeclaims/status",
        "persistentvolumes", "persistentvolumes/status", "pods", "pods/attach", "pods/binding",
        "pods/ephemeralcontainers", "pods/eviction", "pods/exec", "pods/log", "pods/portforward",
        "pods/proxy", "pods/resize", "pods/status", "podtemplates", "replicationcontrollers",
        "replicationcontrollers/scale", "replicationcontrollers/status", "resourcequotas",
        "resourcequotas/status", "secrets", "serviceaccounts", "serviceaccounts/token",
        "services", "services/proxy", "services/status"},
    "apiregistration.k8s.io/v1": {"apiservices", "apiservices/status"},
    "apps/v1": {"controllerrevisions", "daemonsets", "daemonsets/status", "deployments",
                "deployments/scale", "deployments/status", "replicasets", "replicasets/scale",
                "replicasets/status", "statefulsets", "statefulsets/scale", "statefulsets/status"},
    "events.k8s.io/v1": {"events"},
    "authentication.k8s.io/v1": {"selfsubjectreviews", "tokenreviews"},
    "authorization.k8s.io/v1": {"localsubjectaccessreviews", "selfsubjectaccessreviews",
                                "selfsubjectrulesreviews", "subjectaccessreviews"},
    "autoscaling/v2": {"horizontalpodautoscalers", "horizontalpodautoscalers/status"},
    "autoscaling/v1": {"horizontalpodautoscalers", "horizontalpodautoscalers/status"},
    "batch/v1": {"cronjobs", "cronjobs/status", "jobs", "jobs/status"},
    "certificates.k8s.io/v1": {"certificatesigningrequests", "certificatesigningrequests/approval",
                               "certificatesigningrequests/status"},
    "networking.k8s.io/v1": {"ingressclasses", "ingresses", "ingresses/status", "ipaddresses",
                             "networkpolicies", "servicecidrs", "servicecidrs/status"},
    "policy/v1": {"poddisruptionbudgets", "poddisruptionbudgets/status"},
    "rbac.authorization.k8s.io/v1": {"clusterrolebindings", "clusterroles", "rolebindings", "roles"},
    "storage.k8s.io/v1": {"csidrivers", "csinodes", "csistoragecapacities", "storageclasses",
                          "volumeattachments", "volumeattachments/status", "volumeattributesclasses"},
    "admissionregistration.k8s.io/v1": {
        "mutatingwebhookconfigurations", "validatingwebhookconfigurations",
        "validatingadmissionpolicies", "validatingadmissionpolicies/status",
        "validatingadmissionpolicybindings", "mutatingadmissionpolicies",
        "mutatingadmissionpolicybindings"},
    "apiextensions.k8s.io/v1": {"customresourcedefinitions", "customresourcedefinitions/status"},
    "scheduling.k8s.io/v1": {"priorityclasses"},
    "coordination.k8s.io/v1": {"leases"},
    "node.k8s.io/v1": {"runtimeclasses"},
    "discovery.k8s.io/v1": {"endpointslices"},
    "resource.k8s.io/v1": {"deviceclasses", "resourceclaims", "resourceclaims/status",
                           "resourceclaimtemplates", "resourceslices"},
    "flowcontrol.apiserver.k8s.io/v1": {"flowschemas", "flowschemas/status",
                                        "prioritylevelconfigurations",
                                        "prioritylevelconfigurations/status"},
}

# (apiVersion, resource) -> why kvert does not serve it. Mirrored in the docs' table.
NOT_SERVED: dict[tuple[str, str], str] = {
    ("v1", "nodes/proxy"): "kvert's node agents are reached through their own endpoints; the "
                           "API server does not proxy to them",
    ("v1", "pods/proxy"): "the API server does not proxy to pods",
    ("v1", "services/proxy"): "the API server does not proxy to services",
    ("autoscaling/v1", "horizontalpodautoscalers"): "kvert serves one version of a built-in "
                                                    "kind; HPAs are served as autoscaling/v2",
    ("autoscaling/v1", "horizontalpodautoscalers/status"): "as autoscaling/v1 HPAs",
    ("v1", "bindings"): "deprecated upstream in favour of pods/binding, which kvert serves",
}

# (apiVersion, resource) kvert serves beyond a default 1.36 kube-apiserver
KVERT_ONLY = {
    ("scheduling.k8s.io/v1alpha1", "workloads"),            # alpha upstream (GenericWorkload)
    ("autoscaling.k8s.io/v1", "verticalpodautoscalers"),     # a CRD upstream (the VPA's)
    ("autoscaling.k8s.io/v1", "verticalpodautoscalers/status"),
    ("autoscaling.k8s.io/v1", "verticalpodautoscalercheckpoints"),
    # (kvert up also serves metrics.k8s.io/v1beta1 nodes and pods, metrics-server's
    # aggregated API upstream; this server has no metrics provider)
}

AGGREGATED = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"


def _upstream() -> set[tuple[str, str]]:
    return {(gv, r) for gv, resources in UPSTREAM_1_36.items() for r in resources}


async def _discovery(session: ClientSession, base: str, headers: dict) -> list[tuple[str, dict]]:
    """(apiVersion, resource entry) of every resource aggregated discovery lists."""
    out = []
    for path in ("/api", "/apis"):
        async with session.get(base + path, headers={**headers, "Accept": AGGREGATED}) as r:
            doc = await r.json(content_type=None)
        for group in doc["items"]:
            name = group["metadata"].get("name", "")
            for version in group["versions"]:
                gv = f"{name}/{version['version']}" if name else version["version"]
                out.extend((gv, resource) for resource in version["resources"])
    return out


def _served(entries: list[tuple[str, dict]]) -> set[tuple[str, str]]:
    served = set()
    for gv, resource in entries:
        served.add((gv, resource["resource"]))
        for sub in resource.get("subresources") or []:
            served.add((gv, f"{resource['resource']}/{sub['subresource']}"))
    return served


def run(tmp_path, scenario):
    async def main():
        store = open_store("memory", clock=WallClock())
        tokens = TokenAuthenticator.load_or_create(tmp_path / "tokens.csv")
        server = ApiServer(store, WallClock(), authenticator=tokens, seed=1,
                           admission=default_chain(store, WallClock()))
        await server.bootstrap()
        base = await server.start("127.0.0.1", 0)
        headers = {"Authorization": f"Bearer {tokens.token_for(ADMIN)}"}
        session = ClientSession(timeout=ClientTimeout(total=60))
        try:
            return await scenario(session, base, headers)
        finally:
            await session.close()
            await server.stop()
            store.close()

    return asyncio.run(main())


def test_served_resources_are_upstreams_but_the_documented_ones(tmp_path):
    async def scenario(session, base, headers):
        return _served(await _discovery(session, base, headers))

    served = run(tmp_path, scenario)
    upstream = _upstream()
    assert set(NOT_SERVED) <= upstream, "NOT_SERVED names a resource upstream does not serve"
    assert sorted(upstream - served) == sorted(NOT_SERVED), "upstream resources missing"
    assert sorted(served - upstream) == sorted(KVERT_ONLY), "kvert-only resources"


def test_every_listable_resource_lists_then_watches_from_the_list(tmp_path):
    """What a client-go informer does for each resource: LIST (cluster-wide), then WATCH
    from the list's resourceVersion with allowWatchBookmarks. Every watch must be
    accepted (200, a JSON event stream of known types), none may fail to sync."""
    async def informer(session, base, headers, gv, resource) -> tuple[str, str] | None:
        prefix = "/api/" if "/" not in gv else "/apis/"
        url = f"{base}{prefix}{gv}/{resource['resource']}"
        async with session.get(url, headers={**headers, "Accept": "application/json"}) as r:
            if r.status != 200:
                return (url, f"list: {r.status} {await r.text()}")
            listed = await r.json()
        rv = listed["metadata"].get("resourceVersion")
        if not rv or not isinstance(listed.get("items"), list):
            return (url, f"list without resourceVersion or items: {listed!r}")
        params = {"watch": "1", "resourceVersion": rv, "allowWatchBookmarks": "true",
                  "timeoutSeconds": "1"}
        async with session.get(url, params=params, headers=headers) as r:
            if r.status != 200:
                return (url, f"watch: {r.status} {await r.text()}")
            body = await r.text()
        for line in filter(None, body.splitlines()):
            event = json.loads(line)
            if event.get("type") not in ("ADDED", "MODIFIED", "DELETED", "BOOKMARK"):
                return (url, f"watch event {event!r}")
        return None

    async def scenario(session, base, headers):
        entries = [(gv, r) for gv, r in await _discovery(session, base, headers)
                   if {"list", "watch"} <= set(r.get("verbs") or [])]
        results = await asyncio.gather(*(informer(session, base, headers, gv, r)
                                         for gv, r in entries))
        return len(entries), [failure for failure in results if failure]

    count, failures = run(tmp_path, scenario)
    assert count > 50
    assert failures == []
