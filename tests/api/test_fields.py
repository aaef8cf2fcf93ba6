"""Field selectors: the kubernetes.io "Field Selectors" examples, apimachinery's escaping rules,
per-resource field lists, and round-trip properties."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kvert.api.fields import (
    FieldSelector, escape_value, field_value, parse_field_selector, supported_fields,
    unescape_value,
)
from kvert.api.selectors import SelectorError


def pod(name="p", ns="default", node=None, phase="Running", restart="Always", **spec):
    obj = {"apiVersion": "v1", "kind": "Pod",
           "metadata": {"name": name, "namespace": ns},
           "spec": {"restartPolicy": restart, **spec},
           "status": {"phase": phase}}
    if node is not None:
        obj["spec"]["nodeName"] = node
    return obj


# --- documented examples --------------------------------------------------------------------


class TestDocumentedExamples:
    def test_phase_running(self):
        s = FieldSelector.parse("status.phase=Running", "pods")
        assert s.matches(pod(phase="Running"))
        assert not s.matches(pod(phase="Pending"))

    def test_namespace_not_default(self):
        s = FieldSelector.parse("metadata.namespace!=default")
        assert not s.matches(pod(ns="default"))
        assert s.matches(pod(ns="kube-system"))
        assert s.matches({"metadata": {"name": "svc"}, "kind": "Service"} | {
            "metadata": {"name": "s", "namespace": "prod"}})

    def test_metadata_name(self):
        s = parse_field_selector("metadata.name=my-service")
        assert s.matches({"metadata": {"name": "my-service", "namespace": "x"}})
        assert not s.matches({"metadata": {"name": "other"}})

    def test_chained(self):
        s = FieldSelector.parse("status.phase!=Running,spec.restartPolicy=Always", "pods")
        assert s.matches(pod(phase="Pending", restart="Always"))
        assert not s.matches(pod(phase="Running", restart="Always"))
        assert not s.matches(pod(phase="Pending", restart="Never"))
        s2 = FieldSelector.parse("status.phase=Running,spec.restartPolicy=Always", "pods")
        assert s2.matches(pod())
        assert not s2.matches(pod(restart="OnFailure"))

    def test_all_operators(self):
        for op in ("=", "=="):
            assert FieldSelector.parse(f"status.phase{op}Running").matches(pod())
        assert not FieldSelector.parse("status.phase!=Running").matches(pod())

    def test_empty_selects_everything(self):
        for text in ("", ",", ",,"):
            s = FieldSelector.parse(text, "pods")
            assert s.empty and s.matches(pod()) and s.matches({})
        assert str(FieldSelector.parse("")) == ""

    def test_unsupported_field(self):
        with pytest.raises(SelectorError, match="^field label not supported: foo.bar$"):
            FieldSelector.parse("foo.bar=baz", "networking.k8s.io/ingresses")
        with pytest.raises(SelectorError, match="field label not supported: status.hostIP"):
            FieldSelector.parse("status.hostIP=192.168.10.101", "pods")
        # without a resource any field is accepted
        assert FieldSelector.parse("status.hostIP=10.0.0.1").matches(
            {"status": {"hostIP": "10.0.0.1"}})


# --- reading fields -------------------------------------------------------------------------


class TestFieldValues:
    def test_missing_field_is_empty_string(self):
        unscheduled = FieldSelector.parse("spec.nodeName=", "pods")
        scheduled = FieldSelector.parse("spec.nodeName!=", "pods")
        assert unscheduled.matches(pod())
        assert not scheduled.matches(pod())
        assert scheduled.matches(pod(node="n1"))
        assert not unscheduled.matches(pod(node="n1"))
        assert unscheduled.matches({})  # nothing at all
        assert field_value({"spec": None}, "spec.nodeName") == ""
        assert field_value({"spec": "weird"}, "spec.nodeName") == ""

    def test_booleans_render_true_false(self):
        assert FieldSelector.parse("spec.hostNetwork=false", "pods").matches(pod())
        assert FieldSelector.parse("spec.hostNetwork=true", "pods").matches(pod(hostNetwork=True))
        assert not FieldSelector.parse("spec.hostNetwork=true", "pods").matches(pod())
        node = {"kind": "Node", "metadata": {"name": "n"}, "spec": {}}
        assert FieldSelector.parse("spec.unschedulable=false", "nodes").matches(node)
        node["spec"]["unschedulable"] = True
        assert FieldSelector.parse("spec.unschedulable=true", "nodes").matches(node)
        assert field_value({"a": {"b": False}}, "a.b") == "false"

    def test_numbers(self):
        rc = {"status": {"replicas": 3}}
        assert FieldSelector.parse("status.replicas=3", "replicationcontrollers").matches(rc)
        assert FieldSelector.parse("status.successful=0", "batch/jobs").matches(
            {"status": {"successful": 0}})
        assert field_value({"x": 2.0}, "x") == "2"

    def test_pod_ip_is_first_of_pod_ips(self):
        p = pod()
        p["status"]["podIPs"] = [{"ip": "10.0.0.5"}, {"ip": "fd00::5"}]
        p["status"]["podIP"] = "10.0.0.5"
        assert FieldSelector.parse("status.podIP=10.0.0.5", "pods").matches(p)
        p2 = pod()
        p2["status"]["podIP"] = "10.1.1.1"  # only the singular field
        assert field_value(p2, "status.podIP") == "10.1.1.1"
        # status.podIPs is accepted but never populated (Kubernetes quirk)
        assert FieldSelector.parse("status.podIPs=", "pods").matches(p)

    def test_event_fields(self):
        ev = {"kind": "Event", "metadata": {"name": "e", "namespace": "default"},
              "involvedObject": {"kind": "Pod", "name": "web-0", "namespace": "default",
                                 "uid": "u1", "fieldPath": "spec.containers{app}"},
              "reason": "BackOff", "type": "Warning",
              "source": {"component": "kubelet", "host": "n1"},
              "reportingComponent": "kubelet"}
        s = FieldSelector.parse(
            "involvedObject.kind=Pod,involvedObject.name=web-0,type=Warning,source=kubelet,"
            "reportingComponent=kubelet,reason=BackOff", "events")
        assert s.matches(ev)
        assert FieldSelector.parse(r"involvedObject.fieldPath=spec.containers{app}",
                                   "events").matches(ev)
        assert not FieldSelector.parse("type=Normal", "events").matches(ev)

    def test_cluster_scoped_namespace_is_empty(self):
        node = {"kind": "Node", "metadata": {"name": "n1"}}
        assert FieldSelector.parse("metadata.namespace=").matches(node)
        assert FieldSelector.parse("metadata.name=n1", "nodes").matches(node)


# --- supported fields -----------------------------------------------------------------------


class TestSupportedFields:
    def test_pods(self):
        assert supported_fields("pods") >= {
            "metadata.name", "metadata.namespace", "spec.nodeName", "spec.restartPolicy",
            "spec.schedulerName", "spec.serviceAccountName", "spec.hostNetwork", "status.phase",
            "status.podIP", "status.nominatedNodeName"}

    def test_events(self):
        assert supported_fields("events") == {
            "metadata.name", "metadata.namespace", "involvedObject.kind",
            "involvedObject.namespace", "involvedObject.name", "involvedObject.uid",
            "involvedObject.apiVersion", "involvedObject.resourceVersion",
            "involvedObject.fieldPath", "reason", "reportingComponent", "source", "type"}

    def test_cluster_scoped_kinds_follow_the_conversion_functions(self):
        assert supported_fields("nodes") == {"metadata.name", "spec.unschedulable"}
        assert supported_fields("namespaces") == {"metadata.name", "status.phase"}
        with pytest.raises(SelectorError, match="metadata.namespace"):
            FieldSelector.parse("metadata.namespace=x", "nodes")

    def test_defaults(self):
        for res in ("apps/deployments", "apps/replicasets", "configmaps",
                    "autoscaling.k8s.io/verticalpodautoscalers",
                    "scheduling.k8s.io/priorityclasses"):
            assert supported_fields(res) == {"metadata.name", "metadata.namespace"}
        with pytest.raises(SelectorError):
            FieldSelector.parse("status.replicas=0", "apps/replicasets")
        assert supported_fields("secrets") == {"metadata.name", "metadata.namespace", "type"}
        assert "status.phase" in supported_fields("namespaces")
        assert "spec.signerName" in supported_fields(
            "certificates.k8s.io/certificatesigningrequests")

    def test_legacy_spec_host_alias(self):
        s = FieldSelector.parse("spec.host=n1", "pods")
        assert s.requirements[0].field == "spec.nodeName"
        assert s.matches(pod(node="n1"))

    def test_check_after_parse(self):
        s = FieldSelector.parse("spec.nodeName=n1")
        assert s.check("pods") == s
        with pytest.raises(SelectorError):
            s.check("nodes")


# --- parsing & escaping ---------------------------------------------------------------------


class TestParsing:
    def test_requirements_normalised_and_sorted(self):
        s = FieldSelector.parse("status.phase==Running,metadata.name!=x")
        assert s.requirements == (("metadata.name", "!=", "x"), ("status.phase", "=", "Running"))
        assert str(s) == "metadata.name!=x,status.phase=Running"

    def test_first_operator_splits(self):
        # "a=b=c": the value "b=c" has an unescaped "=" -> error
        with pytest.raises(SelectorError, match="unescaped character in value: ="):
            FieldSelector.parse("a=b=c")
        assert FieldSelector.parse("a==b").requirements == (("a", "=", "b"),)
        assert FieldSelector.parse("a=!b").requirements == (("a", "=", "!b"),)
        assert FieldSelector.parse("a!=").requirements == (("a", "!=", ""),)
        with pytest.raises(SelectorError, match="unescaped"):
            FieldSelector.parse("a===b")

    def test_escaping(self):
        s = FieldSelector.parse(r"metadata.name=a\,b\=c\\d")
        assert s.requirements[0].value == r"a,b=c\d"
        assert str(s) == r"metadata.name=a\,b\=c\\d"
        assert s.matches({"metadata": {"name": r"a,b=c\d"}})
        assert escape_value(r"x,y=z\w") == r"x\,y\=z\\w"
        assert unescape_value(escape_value(r"x,y=z\w")) == r"x,y=z\w"

    @pytest.mark.parametrize("text,msg", [
        ("nooperator", "can't understand 'nooperator'"),
        ("a=b,c", "can't understand 'c'"),
        (r"a=b\x", r"invalid escape sequence: \\x"),
        ("a=b\\", "invalid escape sequence"),
        ("=x", "field name is empty"),
    ])
    def test_errors(self, text, msg):
        with pytest.raises(SelectorError, match=msg):
            FieldSelector.parse(text)

    def test_no_whitespace_trimming(self):
        # like Kubernetes, "a = b" names the field "a " -- which a resource check rejects
        with pytest.raises(SelectorError, match="field label not supported: status.phase $"):
            FieldSelector.parse("status.phase = Running", "pods")

    def test_from_set_and_exact_match(self):
        s = FieldSelector.from_set({"spec.nodeName": "n1", "metadata.namespace": "ns"})
        assert s.requires_exact_match("spec.nodeName") == "n1"
        assert FieldSelector.parse("spec.nodeName!=n1").requires_exact_match("spec.nodeName") \
            is None
        assert s.matches(pod(node="n1", ns="ns"))
        assert FieldSelector.from_set({}).empty

    def test_value_semantics(self):
        a = FieldSelector.parse("b=2,a=1")
        b = FieldSelector.parse("a==1,b=2")
        assert a == b and hash(a) == hash(b)
        assert FieldSelector.everything().empty


# --- property tests -------------------------------------------------------------------------

_segment = st.text(alphabet="abzAZ09", min_size=1, max_size=5).filter(lambda s: s[0].isalpha())
_field = st.lists(_segment, min_size=1, max_size=3).map(".".join)
_value = st.text(alphabet=st.sampled_from(list("ab1 ,=\\!-.()")), max_size=8)
_req = st.tuples(_field, st.sampled_from(["=", "==", "!="]), _value)


@settings(max_examples=200, deadline=None)
@given(st.lists(_req, max_size=4))
def test_field_selector_round_trip(reqs):
    s = FieldSelector(reqs)
    again = FieldSelector.parse(str(s))
    assert again == s
    assert str(again) == str(s)


@settings(max_examples=200, deadline=None)
@given(st.lists(_req, max_size=4), st.dictionaries(_field, _value, max_size=4))
def test_field_selector_matches_like_its_definition(reqs, flat):
    obj: dict = {}
    for path, v in flat.items():  # build a nested object from dotted paths
        cur = obj
        parts = path.split(".")
        for p in parts[:-1]:
            nxt = cur.get(p)
            if not isinstance(nxt, dict):
                nxt = cur[p] = {}
            cur = nxt
        cur[parts[-1]] = v
    s = FieldSelector(reqs)
    expected = all((field_value(obj, f) == v) == (op in ("=", "==")) for f, op, v in reqs)
    assert s.matches(obj) == expected
    assert FieldSelector.parse(str(s)).matches(obj) == expected


@settings(max_examples=200, deadline=None)
@given(_value)
def test_escape_unescape_inverse(v):
    assert unescape_value(escape_value(v)) == v
