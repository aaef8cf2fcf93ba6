"""The RBAC authorizer, rule matching and resolution, and the policy index over a store."""

from __future__ import annotations

import asyncio

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kvert.auth import Attributes, Decision
from kvert.auth.escalation import compact, uncovered
from kvert.auth.rbac import Binding, Policy, RbacAuthorizer, StorePolicy, Subject
from kvert.auth.rules import PolicyRule, rule, rule_allows
from kvert.auth.user import User
from kvert.clock import WallClock
from kvert.store import open_store

G = "rbac.authorization.k8s.io"


# ---- builders mirroring plugin/pkg/auth/authorizer/rbac/rbac_test.go -----------------------

def new_rule(verbs: str, groups: str, resources: str, urls: str) -> dict:
    return {"verbs": verbs.split(","), "apiGroups": groups.split(","),
            "resources": resources.split(","), "nonResourceURLs": urls.split(",")}


def cluster_role(name: str, *rules: dict, labels: dict | None = None) -> dict:
    return {"apiVersion": f"{G}/v1", "kind": "ClusterRole",
            "metadata": {"name": name, **({"labels": labels} if labels else {})}, "rules": list(rules)}


def role(name: str, namespace: str, *rules: dict) -> dict:
    return {"apiVersion": f"{G}/v1", "kind": "Role", "metadata": {"name": name, "namespace": namespace},
            "rules": list(rules)}


def _subjects(subjects: tuple[str, ...]) -> list[dict]:
    out = []
    for s in subjects:
        kind, _, name = s.partition(":")
        subject = {"kind": kind, "name": name}
        if kind == "ServiceAccount":
            namespace, _, name = name.partition(":") if ":" in name else ("", "", name)
            subject = {"kind": kind, "name": name, **({"namespace": namespace} if namespace else {})}
        else:
            subject["apiGroup"] = G
        out.append(subject)
    return out


def cluster_binding(role_name: str, *subjects: str, name: str = "") -> dict:
    return {"apiVersion": f"{G}/v1", "kind": "ClusterRoleBinding",
            "metadata": {"name": name or f"crb-{role_name}"},
            "roleRef": {"apiGroup": G, "kind": "ClusterRole", "name": role_name},
            "subjects": _subjects(subjects)}


def binding(namespace: str, role_name: str, kind: str, *subjects: str, name: str = "") -> dict:
    return {"apiVersion": f"{G}/v1", "kind": "RoleBinding",
            "metadata": {"name": name or f"rb-{role_name}", "namespace": namespace},
            "roleRef": {"apiGroup": G, "kind": kind, "name": role_name},
            "subjects": _subjects(subjects)}


def attrs(user: str, groups: str, verb: str, resource: str, subresource: str, namespace: str,
          group: str = "") -> Attributes:
    """``defaultAttributes`` of rbac_test.go: groups comma separated."""
    return Attributes(User(user, groups=tuple(groups.split(","))), verb, namespace=namespace,
                      api_group=group, resource=resource, subresource=subresource)


def path(verb: str, url: str, name: str = "", groups: tuple[str, ...] = ()) -> Attributes:
    return Attributes(User(name, groups=groups), verb, resource_request=False, path=url)


def allowed(objects: list[dict], a: Attributes) -> bool:
    return RbacAuthorizer(Policy.from_objects(objects)).authorize(a)[0] is Decision.ALLOW


# ---- TestAuthorizer in plugin/pkg/auth/authorizer/rbac/rbac_test.go ------------------------

AUTHORIZER_CASES = [
    (  # a ClusterRole bound in one namespace
        [cluster_role("admin", new_rule("*", "*", "*", "*")),
         binding("ns1", "admin", "ClusterRole", "User:admin", "Group:admins")],
        [attrs("admin", "", "get", "Pods", "", "ns1"), attrs("admin", "", "watch", "Pods", "", "ns1"),
         attrs("admin", "group1", "watch", "Foobar", "", "ns1"),
         attrs("joe", "admins", "watch", "Foobar", "", "ns1"),
         attrs("joe", "group1,admins", "watch", "Foobar", "", "ns1")],
        [attrs("admin", "", "GET", "Pods", "", "ns2"), attrs("admin", "", "GET", "Nodes", "", ""),
         attrs("admin", "admins", "GET", "Pods", "", "ns2"),
         attrs("admin", "admins", "GET", "Nodes", "", "")],
    ),
    (  # non-resource URLs
        [cluster_role("non-resource-url-getter", {"verbs": ["get"], "nonResourceURLs": ["/apis"]}),
         cluster_role("non-resource-url", {"verbs": ["*"], "nonResourceURLs": ["/apis"]}),
         cluster_role("non-resource-url-prefix", {"verbs": ["get"], "nonResourceURLs": ["/apis/*"]}),
         cluster_binding("non-resource-url-getter", "User:foo", "Group:bar"),
         cluster_binding("non-resource-url", "User:admin", "Group:admin"),
         cluster_binding("non-resource-url-prefix", "User:prefixed", "Group:prefixed")],
        [path("get", "/apis", "foo"), path("get", "/apis", groups=("bar",)),
         path("get", "/apis", "admin"), path("get", "/apis", groups=("admin",)),
         path("watch", "/apis", "admin"), path("watch", "/apis", groups=("admin",)),
         path("get", "/apis/v1", "prefixed"), path("get", "/apis/v1", groups=("prefixed",)),
         path("get", "/apis/v1/foobar", "prefixed"), path("get", "/apis/v1/foorbar", groups=("prefixed",))],
        [path("watch", "/apis", "foo"), path("watch", "/apis", groups=("bar",)),
         path("get", "/api/v1", "foo"), path("get", "/api/v1", groups=("bar",)),
         path("get", "/api/v1", "admin"), path("get", "/api/v1", groups=("admin",)),
         path("get", "/api/v1", "prefixed"), path("get", "/api/v1", groups=("prefixed",))],
    ),
    (  # subresource resolution: "pods" does not cover pods/status
        [cluster_role("admin", new_rule("*", "*", "pods", "*")),
         binding("ns1", "admin", "ClusterRole", "User:admin", "Group:admins")],
        [attrs("admin", "", "get", "pods", "", "ns1")],
        [attrs("admin", "", "get", "pods", "status", "ns1")],
    ),
    (  # ... and "pods/status" does not cover pods
        [cluster_role("admin", new_rule("*", "*", "pods/status", "*")),
         binding("ns1", "admin", "ClusterRole", "User:admin", "Group:admins")],
        [attrs("admin", "", "get", "pods", "status", "ns1")],
        [attrs("admin", "", "get", "pods", "", "ns1")],
    ),
]


@pytest.mark.parametrize("objects,should_pass,should_fail", AUTHORIZER_CASES)
def test_authorizer(objects, should_pass, should_fail):
    for a in should_pass:
        assert allowed(objects, a), a
    for a in should_fail:
        assert not allowed(objects, a), a


# ---- TestRuleMatches in rbac_test.go -------------------------------------------------------

def res(verb: str, group: str, resource: str, subresource: str = "") -> Attributes:
    return Attributes(User("u"), verb, api_group=group, resource=resource, subresource=subresource)


RULE_CASES = [
    ("star verb, exact match other", rule("*", groups=["group1"], resources=["resource1"]),
     {res("verb1", "group1", "resource1"): True, res("verb1", "group2", "resource1"): False,
      res("verb1", "group1", "resource2"): False, res("verb1", "group2", "resource2"): False,
      res("verb2", "group1", "resource1"): True, res("verb2", "group2", "resource1"): False,
      res("verb2", "group1", "resource2"): False, res("verb2", "group2", "resource2"): False}),
    ("star group, exact match other", rule("verb1", groups=["*"], resources=["resource1"]),
     {res("verb1", "group1", "resource1"): True, res("verb1", "group2", "resource1"): True,
      res("verb1", "group1", "resource2"): False, res("verb1", "group2", "resource2"): False,
      res("verb2", "group1", "resource1"): False, res("verb2", "group2", "resource1"): False,
      res("verb2", "group1", "resource2"): False, res("verb2", "group2", "resource2"): False}),
    ("star resource, exact match other", rule("verb1", groups=["group1"], resources=["*"]),
     {res("verb1", "group1", "resource1"): True, res("verb1", "group2", "resource1"): False,
      res("verb1", "group1", "resource2"): True, res("verb1", "group2", "resource2"): False,
      res("verb2", "group1", "resource1"): False, res("verb2", "group2", "resource1"): False,
      res("verb2", "group1", "resource2"): False, res("verb2", "group2", "resource2"): False}),
    ("tuple expansion", rule("verb1", "verb2", groups=["group1", "group2"],
                             resources=["resource1", "resource2"]),
     {res(v, g, r): True for v in ("verb1", "verb2") for g in ("group1", "group2")
      for r in ("resource1", "resource2")}),
    ("subresource expansion", rule("*", groups=["*"], resources=["resource1/subresource1"]),
     {res("verb1", "group1", "resource1", "subresource1"): True,
      res("verb1", "group2", "resource1", "subresource2"): False,
      res("verb1", "group1", "resource2", "subresource1"): False,
      res("verb1", "group2", "resource2", "subresource1"): False,
      res("verb2", "group1", "resource1", "subresource1"): True,
      res("verb2", "group2", "resource1", "subresource2"): False,
      res("verb2", "group1", "resource2", "subresource1"): False,
      res("verb2", "group2", "resource2", "subresource1"): False}),
    ("star nonresource, exact match other", rule("verb1", urls=["*"]),
     {path("verb1", u): True for u in ("/foo", "/foo/bar", "/foo/baz", "/foo/bar/one", "/foo/baz/one")}
     | {path("verb2", u): False for u in ("/foo", "/foo/bar", "/foo/baz", "/foo/bar/one", "/foo/baz/one")}),
    ("star nonresource subpath", rule("verb1", urls=["/foo/*"]),
     {path("verb1", "/foo"): False, path("verb1", "/foo/bar"): True, path("verb1", "/foo/baz"): True,
      path("verb1", "/foo/bar/one"): True, path("verb1", "/foo/baz/one"): True,
      path("verb1", "/notfoo"): False, path("verb1", "/notfoo/bar"): False,
      path("verb1", "/notfoo/baz"): False, path("verb1", "/notfoo/bar/one"): False,
      path("verb1", "/notfoo/baz/one"): False}),
    ("star verb, exact nonresource", rule("*", urls=["/foo", "/foo/bar/one"]),
     {path(v, "/foo"): True for v in ("verb1", "verb2")}
     | {path(v, "/foo/bar/one"): True for v in ("verb1", "verb2")}
     | {path(v, u): False for v in ("verb1", "verb2") for u in ("/foo/bar", "/foo/baz", "/foo/baz/one")}),
]


@pytest.mark.parametrize("name,r,expected", RULE_CASES, ids=[c[0] for c in RULE_CASES])
def test_rule_matches(name, r, expected):
    for request, want in expected.items():
        assert rule_allows(request, r) is want, request


def test_a_star_subresource_matches_that_subresource_of_every_resource():
    # ResourceMatches in pkg/apis/rbac/v1/evaluation_helpers.go: "*/scale"
    r = rule("get", "update", groups=["*"], resources=["*/scale"])
    assert rule_allows(res("get", "apps", "deployments", "scale"), r)
    assert rule_allows(res("update", "", "replicationcontrollers", "scale"), r)
    assert not rule_allows(res("get", "apps", "deployments"), r)
    assert not rule_allows(res("get", "apps", "deployments", "status"), r)


def test_resource_names_limit_a_rule():
    # ResourceNameMatches: an empty list is every name
    r = rule("get", groups=[""], resources=["configmaps"], names=["a"])
    assert rule_allows(Attributes(User("u"), "get", resource="configmaps", name="a"), r)
    assert not rule_allows(Attributes(User("u"), "get", resource="configmaps", name="b"), r)
    assert not rule_allows(Attributes(User("u"), "list", resource="configmaps"), rule("list", groups=[""],
                                                                                          resources=["configmaps"],
                                                                                          names=["a"]))


_names = st.text(alphabet="abc/", min_size=0, max_size=6)


@given(_names, _names)
def test_a_url_prefix_rule_matches_exactly_the_paths_it_prefixes(prefix, path_):
    # NonResourceURLMatches: "PREFIX*" is a prefix match, anything else exact (or "*")
    r = rule("get", urls=[prefix + "*"])
    assert rule_allows(Attributes(User("u"), "get", resource_request=False, path=path_), r) == \
        path_.startswith(prefix)


@given(st.sampled_from(["get", "list", "create", "escalate"]), st.text(max_size=5),
       st.text(max_size=5), st.text(max_size=5))
def test_star_rules_allow_every_resource_request(verb, group, resource, subresource):
    r = rule("*", groups=["*"], resources=["*"])
    assert rule_allows(res(verb, group, resource, subresource), r)


def test_compact_string_reads_as_upstreams():
    # CompactString: Go's %q of each list
    r = PolicyRule.from_dict({"verbs": ["get", "list"], "apiGroups": [""], "resources": ["pods"]})
    assert r.compact_string() == '{APIGroups:[""], Resources:["pods"], Verbs:["get" "list"]}'


# ---- TestAppliesTo in pkg/registry/rbac/validation/rule_test.go -------------------------------

@pytest.mark.parametrize("subjects,user,namespace,applies", [
    ([Subject("User", "foobar")], User("foobar"), "", True),
    ([Subject("User", "barfoo"), Subject("User", "foobar")], User("foobar"), "", True),
    ([Subject("User", "barfoo"), Subject("User", "foobar")], User("zimzam"), "", False),
    ([Subject("User", "barfoo"), Subject("Group", "foobar")], User("zimzam", groups=("foobar",)), "", True),
    ([Subject("User", "barfoo"), Subject("Group", "foobar")], User("zimzam", groups=("foobar",)),
     "namespace1", True),
    ([Subject("User", "barfoo"), Subject("Group", "foobar"),
      Subject("ServiceAccount", "default", "kube-system")],
     User("system:serviceaccount:kube-system:default"), "default", True),
    ([Subject("User", "*")], User("foobar"), "default", False),
    ([Subject("Group", "system:authenticated"), Subject("Group", "system:unauthenticated")],
     User("foobar", groups=("system:authenticated",)), "default", True),
    ([Subject("Group", "system:authenticated"), Subject("Group", "system:unauthenticated")],
     User("system:anonymous", groups=("system:unauthenticated",)), "default", True),
], ids=["username", "one of many", "none", "group", "group ignores namespace", "service account",
        "star is no wildcard", "all authenticated", "anonymous"])
def test_applies_to(subjects, user, namespace, applies):
    b = Binding("b", namespace, "ClusterRole", "r", tuple(subjects))
    assert (b.first_subject_for(user) is not None) is applies


def test_a_role_binding_service_account_defaults_to_the_binding_namespace():
    # appliesToUser: a ServiceAccount subject without namespace is in the binding's namespace
    objects = [cluster_role("reader", new_rule("get", "", "pods", "")),
               binding("team", "reader", "ClusterRole", "ServiceAccount:builder")]
    sa = User("system:serviceaccount:team:builder")
    assert allowed(objects, Attributes(sa, "get", namespace="team", resource="pods"))
    other = User("system:serviceaccount:other:builder")
    assert not allowed(objects, Attributes(other, "get", namespace="team", resource="pods"))


# ---- reasons -----------------------------------------------------------------------------------

def test_allowed_reason_names_the_binding_role_and_subject():
    # authorizingVisitor and the binding describers of pkg/registry/rbac/validation/rule.go
    objects = [cluster_role("view", new_rule("get", "", "pods", "")),
               binding("ns1", "view", "ClusterRole", "Group:devs", name="devs-view"),
               binding("ns1", "view", "ClusterRole", "ServiceAccount:ci", name="ci-view")]
    a = RbacAuthorizer(Policy.from_objects(objects))
    decision, reason = a.authorize(attrs("joe", "devs", "get", "pods", "", "ns1"))
    assert (decision, reason) == (Decision.ALLOW, 'RBAC: allowed by RoleBinding "devs-view/ns1" of '
                                                  'ClusterRole "view" to Group "devs"')
    _, reason = a.authorize(Attributes(User("system:serviceaccount:ns1:ci"), "get", namespace="ns1",
                                       resource="pods"))
    assert reason == ('RBAC: allowed by RoleBinding "ci-view/ns1" of ClusterRole "view" to '
                      'ServiceAccount "ci/ns1"')


def test_missing_roles_are_the_reason_when_nothing_allows():
    # GetRoleReferenceRules' lister errors, aggregated (utilerrors.NewAggregate)
    objects = [cluster_binding("gone", "User:u", name="a"),
               binding("ns", "missing", "Role", "User:u", name="b")]
    a = RbacAuthorizer(Policy.from_objects(objects))
    assert a.authorize(Attributes(User("u"), "get", namespace="ns", resource="pods")) == (
        Decision.NO_OPINION, f'RBAC: [clusterrole.{G} "gone" not found, role.{G} "missing" not found]')
    assert a.authorize(Attributes(User("u"), "get", resource="nodes")) == (
        Decision.NO_OPINION, f'RBAC: clusterrole.{G} "gone" not found')
    assert a.authorize(Attributes(User("v"), "get", resource="nodes")) == (Decision.NO_OPINION, "")


def test_rules_for_lists_resource_and_non_resource_rules():
    # RBACAuthorizer.RulesFor: a rule with resources is a resource rule, with URLs a non-resource one
    objects = [cluster_role("r", {"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]},
                            {"verbs": ["get"], "nonResourceURLs": ["/x"]}),
               cluster_binding("r", "User:u"), binding("ns", "missing", "Role", "User:u")]
    rules = RbacAuthorizer(Policy.from_objects(objects)).rules_for(User("u"), "ns")
    assert [r.resources for r in rules.resource_rules] == [("pods",)]
    assert [r.non_resource_urls for r in rules.non_resource_rules] == [("/x",)]
    assert not rules.incomplete and rules.evaluation_error == f'role.{G} "missing" not found'


# ---- the index follows the store ----------------------------------------------------------------

def test_store_policy_follows_writes_without_relisting():
    store = open_store("memory", clock=WallClock())

    async def main():
        policy = StorePolicy(store)
        a = RbacAuthorizer(policy)
        get = Attributes(User("alice"), "get", namespace="ns", resource="pods")
        assert a.authorize(get)[0] is Decision.NO_OPINION
        store.create("rbac.authorization.k8s.io/roles", role("reader", "ns", new_rule("get", "", "pods", "")))
        store.create("rbac.authorization.k8s.io/rolebindings", binding("ns", "reader", "Role", "User:alice"))
        assert a.authorize(get)[0] is Decision.ALLOW
        bound = store.get("rbac.authorization.k8s.io/rolebindings", "ns", "rb-reader")
        bound["subjects"] = _subjects(("User:bob",))
        store.update("rbac.authorization.k8s.io/rolebindings", bound)
        assert a.authorize(get)[0] is Decision.NO_OPINION
        assert a.authorize(Attributes(User("bob"), "get", namespace="ns", resource="pods"))[0] is Decision.ALLOW
        store.delete("rbac.authorization.k8s.io/roles", "ns", "reader")
        assert a.authorize(Attributes(User("bob"), "get", namespace="ns", resource="pods")) == (
            Decision.NO_OPINION, f'RBAC: role.{G} "reader" not found')
        a.stop()

    asyncio.run(main())
    store.close()


# ---- Covers (component-helpers/auth/rbac/validation/policy_comparator_test.go) ---------------

def r(verbs, groups=(), resources=(), names=(), urls=()):
    return PolicyRule(tuple(verbs), tuple(groups), tuple(resources), tuple(names), tuple(urls))


@pytest.mark.parametrize("owner,servant,covered", [
    ([r(["get"], [""], ["builds"])], [r(["get"], [""], ["builds"])], True),                 # exact match
    ([r(["get"], [""], ["builds"])], [r(["get", "delete"], [""], ["builds"])], False),
    ([r(["*"], [""], ["*/scale"])], [r(["get"], [""], ["deployments/scale"])], True),       # subresource wildcard
    ([r(["*"], [""], ["*/scale"])], [r(["get"], [""], ["deployments"])], False),
    ([r(["*"], ["*"], ["*"])], [r(["delete"], ["apps"], ["deployments"], ["web"])], True),
    ([r(["get"], [""], ["builds"], ["foo"])], [r(["get"], [""], ["builds"], ["foo"])], True),  # names
    ([r(["get"], [""], ["builds"], ["foo"])], [r(["get"], [""], ["builds"])], False),
    ([r(["get"], [""], ["builds"]), r(["delete"], [""], ["builds"])],
     [r(["get", "delete"], [""], ["builds"])], True),                                        # several owners
    ([r(["get"], urls=["/apis/*"])], [r(["get"], urls=["/apis/v1", "/apis"])], False),     # URL prefix
    ([r(["get"], urls=["/apis*"])], [r(["get"], urls=["/apis/v1", "/apis"])], True),
    ([r(["*"], urls=["*"])], [r(["get"], urls=["/healthz"])], True),
])
def test_covers(owner, servant, covered):
    assert (not uncovered(owner, servant)) is covered


def test_missing_rules_are_compacted_per_resource():
    # CompactRules in pkg/registry/rbac/validation/policy_compact.go
    missing = uncovered([], [r(["get", "list"], [""], ["pods", "nodes"])])
    assert sorted(x.compact_string() for x in compact(missing)) == [
        '{APIGroups:[""], Resources:["nodes"], Verbs:["get" "list"]}',
        '{APIGroups:[""], Resources:["pods"], Verbs:["get" "list"]}']
