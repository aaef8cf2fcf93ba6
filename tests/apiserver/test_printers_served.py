"""``kubectl get`` columns and rows of podtemplates, componentstatuses, servicecidrs,
ipaddresses, flowschemas and prioritylevelconfigurations: printers.go's column definitions
and printPodTemplate, printComponentStatus, printServiceCIDR, printIPAddress,
printFlowSchema, printPriorityLevelConfiguration (printers_test.go TestPrintPodTemplate,
TestPrintComponentStatus, TestPrintServiceCIDR, TestPrintIPAddress, TestPrintFlowSchema,
TestPrintPriorityLevelConfiguration)."""

from __future__ import annotations

from kvert.api import kinds
from kvert.apiserver.tables import to_table

CREATED = "2026-01-01T00:00:00Z"
NOW = 1767225600 + 90


def table(key: str, obj: dict) -> tuple[list[str], list]:
    obj.setdefault("metadata", {}).setdefault("creationTimestamp", CREATED)
    t = to_table(kinds.by_key(key), [obj], now=NOW)
    return [c["name"] for c in t["columnDefinitions"]], t["rows"][0]["cells"]


def test_pod_template():
    columns, cells = table("podtemplates", {
        "metadata": {"name": "pod-template-1"},
        "template": {"metadata": {"labels": {"a": "b"}},
                     "spec": {"containers": [{"name": "fake-container1", "image": "fake-image1"},
                                             {"name": "fake-container2", "image": "fake-image2"}]}}})
    assert columns == ["Name", "Containers", "Images", "Pod Labels"]
    assert cells == ["pod-template-1", "fake-container1,fake-container2", "fake-image1,fake-image2",
                     "a=b"]


def test_component_status():
    columns, cells = table("componentstatuses", {"metadata": {"name": "cs1"}, "conditions": [
        {"type": "Healthy", "status": "True", "message": "test message", "error": "test error"}]})
    assert columns == ["Name", "Status", "Message", "Error"]
    assert cells == ["cs1", "Healthy", "test message", "test error"]
    _, cells = table("componentstatuses", {"metadata": {"name": "cs2"}, "conditions": [
        {"type": "Healthy", "status": "False", "message": "m", "error": "e"}]})
    assert cells == ["cs2", "Unhealthy", "m", "e"]
    _, cells = table("componentstatuses", {"metadata": {"name": "cs3"}})
    assert cells == ["cs3", "Unknown", "", ""]


def test_service_cidr_and_ip_address():
    columns, cells = table("networking.k8s.io/servicecidrs", {
        "metadata": {"name": "test1"}, "spec": {"cidrs": ["10.1.0.0/16", "fd00:1:1::/64"]}})
    assert columns == ["Name", "CIDRs", "Age"]
    assert cells == ["test1", "10.1.0.0/16,fd00:1:1::/64", "90s"]
    columns, cells = table("networking.k8s.io/ipaddresses", {
        "metadata": {"name": "192.168.2.2"},
        "spec": {"parentRef": {"group": "mygroup", "resource": "myresource", "namespace": "mynamespace",
                               "name": "myname"}}})
    assert columns == ["Name", "ParentRef"]
    assert cells == ["192.168.2.2", "myresource.mygroup/mynamespace/myname"]
    _, cells = table("networking.k8s.io/ipaddresses", {
        "metadata": {"name": "10.0.0.1"},
        "spec": {"parentRef": {"resource": "services", "name": "kubernetes", "namespace": "default"}}})
    assert cells == ["10.0.0.1", "services/default/kubernetes"]


def test_flow_schema_and_priority_level():
    columns, cells = table("flowcontrol.apiserver.k8s.io/flowschemas", {
        "metadata": {"name": "all-matcher"},
        "spec": {"priorityLevelConfiguration": {"name": "allee"}, "matchingPrecedence": 1,
                 "distinguisherMethod": {"type": "ByUser"}},
        "status": {"conditions": [{"type": "Dangling", "status": "True"}]}})
    assert columns == ["Name", "PriorityLevel", "MatchingPrecedence", "DistinguisherMethod", "Age",
                       "MissingPL"]
    assert cells == ["all-matcher", "allee", 1, "ByUser", "90s", "True"]
    _, cells = table("flowcontrol.apiserver.k8s.io/flowschemas", {
        "metadata": {"name": "some-matcher"},
        "spec": {"priorityLevelConfiguration": {"name": "allee"}, "matchingPrecedence": 1}})
    assert cells == ["some-matcher", "allee", 1, "<none>", "90s", "?"]
    columns, cells = table("flowcontrol.apiserver.k8s.io/prioritylevelconfigurations", {
        "metadata": {"name": "unlimited"}, "spec": {"type": "Exempt"}})
    assert columns == ["Name", "Type", "NominalConcurrencyShares", "Queues", "HandSize",
                       "QueueLengthLimit", "Age"]
    assert cells == ["unlimited", "Exempt", "<none>", "<none>", "<none>", "<none>", "90s"]
    _, cells = table("flowcontrol.apiserver.k8s.io/prioritylevelconfigurations", {
        "metadata": {"name": "unqueued"},
        "spec": {"type": "Limited", "limited": {"nominalConcurrencyShares": 47,
                                                "limitResponse": {"type": "Reject"}}}})
    assert cells == ["unqueued", "Limited", 47, "<none>", "<none>", "<none>", "90s"]
    _, cells = table("flowcontrol.apiserver.k8s.io/prioritylevelconfigurations", {
        "metadata": {"name": "queued"},
        "spec": {"type": "Limited", "limited": {"nominalConcurrencyShares": 42, "limitResponse": {
            "type": "Queue", "queuing": {"queues": 8, "handSize": 3, "queueLengthLimit": 4}}}}})
    assert cells == ["queued", "Limited", 42, 8, 3, 4, "90s"]


def test_admission_policies():
    """printValidatingAdmissionPolicy / ..Binding, printMutatingAdmissionPolicy / ..Binding."""
    columns, cells = table("admissionregistration.k8s.io/validatingadmissionpolicies", {
        "metadata": {"name": "policy"},
        "spec": {"paramKind": {"apiVersion": "v1", "kind": "ConfigMap"},
                 "validations": [{"expression": "true"}, {"expression": "false"}]}})
    assert columns == ["Name", "Validations", "ParamKind", "Age"]
    assert cells == ["policy", 2, "v1/ConfigMap", "90s"]
    columns, cells = table("admissionregistration.k8s.io/mutatingadmissionpolicies", {
        "metadata": {"name": "m"}, "spec": {"mutations": [{"patchType": "JSONPatch"}]}})
    assert columns == ["Name", "Mutations", "ParamKind", "Age"]
    assert cells == ["m", 1, "<unset>", "90s"]
    columns, cells = table("admissionregistration.k8s.io/validatingadmissionpolicybindings", {
        "metadata": {"name": "b"},
        "spec": {"policyName": "policy", "paramRef": {"name": "limits", "namespace": "ns"}}})
    assert columns == ["Name", "PolicyName", "ParamRef", "Age"]
    assert cells == ["b", "policy", "ns/limits", "90s"]
    _, cells = table("admissionregistration.k8s.io/mutatingadmissionpolicybindings", {
        "metadata": {"name": "b2"}, "spec": {"policyName": "p", "paramRef": {"name": "limits"}}})
    assert cells == ["b2", "p", "*/limits", "90s"]
    _, cells = table("admissionregistration.k8s.io/mutatingadmissionpolicybindings", {
        "metadata": {"name": "b3"}, "spec": {"policyName": "p"}})
    assert cells == ["b3", "p", "<unset>", "90s"]
