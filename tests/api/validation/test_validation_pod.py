"""Pod validation on create: valid examples from the Kubernetes docs and seed 000, and one
invalid case per rule with the field path and reason Kubernetes reports."""

import pytest

from kvert.api.validation import validate
from .validation_helpers import (DUPLICATE, FORBIDDEN, INVALID, NOT_FOUND, NOT_SUPPORTED, REQUIRED,
                                TYPE_INVALID, assert_cause, assert_valid, container, edit, pod)

C0 = "spec.containers[0]"

VALID = {
    "seed 000 2pod with resizePolicy": pod("2pod"),
    "docs frontend (requests and limits)": {
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "frontend", "namespace": "default"},
        "spec": {"containers": [
            {"name": "app", "image": "images.my-company.example/app:v4",
             "resources": {"requests": {"memory": "64Mi", "cpu": "250m"},
                           "limits": {"memory": "128Mi", "cpu": "500m"}}},
            {"name": "log-aggregator", "image": "images.my-company.example/log-aggregator:v6",
             "resources": {"requests": {"memory": "64Mi", "cpu": "250m"},
                           "limits": {"memory": "128Mi", "cpu": "500m"}}}]}},
    "docs resize-demo (RestartContainer for memory)": pod(
        "resize-demo",
        containers=[{"name": "pause", "image": "registry.k8s.io/pause:3.8",
                     "resizePolicy": [{"resourceName": "cpu", "restartPolicy": "NotRequired"},
                                      {"resourceName": "memory", "restartPolicy": "RestartContainer"}],
                     "resources": {"limits": {"memory": "200Mi", "cpu": "700m"},
                                   "requests": {"memory": "200Mi", "cpu": "700m"}}}]),
    "docs node affinity": pod("with-node-affinity", affinity={"nodeAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
            {"matchExpressions": [{"key": "topology.kubernetes.io/zone", "operator": "In",
                                   "values": ["antarctica-east1", "antarctica-west1"]}]}]},
        "preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": 1, "preference": {"matchExpressions": [
                {"key": "another-node-label-key", "operator": "In",
                 "values": ["another-node-label-value"]}]}}]}}),
    "docs pod anti-affinity": pod("with-pod-affinity", affinity={"podAntiAffinity": {
        "preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 100, "podAffinityTerm": {
            "labelSelector": {"matchExpressions": [{"key": "security", "operator": "In",
                                                    "values": ["S2"]}]},
            "topologyKey": "topology.kubernetes.io/zone"}}]}}),
    "docs tolerations": pod("with-tolerations", tolerations=[
        {"key": "example-key", "operator": "Exists", "effect": "NoSchedule"},
        {"key": "key1", "operator": "Equal", "value": "value1", "effect": "NoExecute",
         "tolerationSeconds": 3600},
        {"operator": "Exists"}]),
    "docs topology spread": pod("mypod", topologySpreadConstraints=[
        {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule", "minDomains": 2,
         "labelSelector": {"matchLabels": {"foo": "bar"}}},
        {"maxSkew": 1, "topologyKey": "node", "whenUnsatisfiable": "ScheduleAnyway",
         "labelSelector": {"matchLabels": {"foo": "bar"}}, "matchLabelKeys": ["pod-template-hash"]}]),
    "docs scheduling gates": pod("test-pod", schedulingGates=[{"name": "example.com/foo"},
                                                              {"name": "example.com/bar"}]),
    "docs sidecar": pod("myapp", initContainers=[
        {"name": "logshipper", "image": "alpine:latest", "restartPolicy": "Always",
         "command": ["sh", "-c", "tail -F /opt/logs.txt"],
         "volumeMounts": [{"name": "data", "mountPath": "/opt"}]}],
        volumes=[{"name": "data", "emptyDir": {}}]),
    "docs pod overhead": pod("test-pod", runtimeClassName="kata-fc",
                             overhead={"cpu": "250m", "memory": "120Mi"}),
    "extended and hugepages resources": pod(containers=[{
        "name": "gpu", "image": "cuda:12",
        "resources": {"limits": {"cpu": "1", "memory": "1Gi", "example.com/gpu": "2",
                                 "hugepages-2Mi": "100Mi"},
                      "requests": {"example.com/gpu": "2", "hugepages-2Mi": "100Mi"}}}]),
    "ports, env and probes": pod(containers=[{
        "name": "web", "image": "nginx:1.27",
        "ports": [{"name": "http", "containerPort": 80}, {"containerPort": 53, "protocol": "UDP"}],
        "env": [{"name": "MODE", "value": "prod"},
                {"name": "POD_NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
                {"name": "CPU", "valueFrom": {"resourceFieldRef": {"resource": "limits.cpu"}}}],
        "livenessProbe": {"httpGet": {"path": "/healthz", "port": "http"}, "periodSeconds": 5},
        "readinessProbe": {"tcpSocket": {"port": 80}}}]),
    "restartPolicy Never with NotRequired": pod(restartPolicy="Never"),
    "numbers as quantities": pod(containers=[{"name": "a", "image": "x",
                                              "resources": {"limits": {"cpu": 1, "memory": 1e9}}}]),
}


@pytest.mark.parametrize("obj", VALID.values(), ids=VALID.keys())
def test_valid_pods(obj):
    assert_valid(validate(obj))


def _c(change):
    """A change applied to the first container."""
    return lambda p: change(container(p))


INVALID_CASES = [
    # containers
    ("no containers", lambda p: p["spec"].update(containers=[]), "spec.containers", REQUIRED, None),
    ("container name missing", _c(lambda c: c.pop("name")), f"{C0}.name", REQUIRED, None),
    ("container name not a label", _c(lambda c: c.update(name="Stress_1")), f"{C0}.name", INVALID,
     "RFC 1123 label"),
    ("image missing", _c(lambda c: c.pop("image")), f"{C0}.image", REQUIRED, None),
    ("image with whitespace", _c(lambda c: c.update(image=" nginx")), f"{C0}.image", INVALID,
     "leading or trailing whitespace"),
    ("duplicate container names", lambda p: p["spec"]["containers"].append(dict(container(p))),
     "spec.containers[1].name", DUPLICATE, None),
    ("init container name clashes", lambda p: p["spec"].update(initContainers=[
        {"name": "stress", "image": "busybox"}]), "spec.initContainers[0].name", DUPLICATE, None),
    ("bad imagePullPolicy", _c(lambda c: c.update(imagePullPolicy="Sometimes")),
     f"{C0}.imagePullPolicy", NOT_SUPPORTED, '"Always", "IfNotPresent", "Never"'),
    ("bad terminationMessagePolicy", _c(lambda c: c.update(terminationMessagePolicy="Log")),
     f"{C0}.terminationMessagePolicy", NOT_SUPPORTED, None),
    ("restartPolicy on an app container", _c(lambda c: c.update(restartPolicy="Always")),
     f"{C0}.restartPolicy", FORBIDDEN, "may not be set for non-init containers"),
    ("init container restartPolicy Never", lambda p: p["spec"].update(initContainers=[
        {"name": "init", "image": "busybox", "restartPolicy": "Never"}]),
     "spec.initContainers[0].restartPolicy", NOT_SUPPORTED, '"Always"'),
    ("probe on a plain init container", lambda p: p["spec"].update(initContainers=[
        {"name": "init", "image": "busybox", "livenessProbe": {"exec": {"command": ["true"]}}}]),
     "spec.initContainers[0].livenessProbe", FORBIDDEN, "without restartPolicy=Always"),
    # resources
    ("unparsable quantity", _c(lambda c: c["resources"]["requests"].update(cpu="lots")),
     f"{C0}.resources.requests[cpu]", INVALID, "quantities must match the regular expression"),
    ("negative quantity", _c(lambda c: c["resources"]["limits"].update(memory="-1Mi")),
     f"{C0}.resources.limits[memory]", INVALID, "must be greater than or equal to 0"),
    ("cpu request above limit", _c(lambda c: c["resources"]["requests"].update(cpu="600m")),
     f"{C0}.resources.requests", INVALID, "must be less than or equal to cpu limit of 500m"),
    ("memory request above limit", _c(lambda c: c["resources"]["requests"].update(memory="1Gi")),
     f"{C0}.resources.requests", INVALID, "must be less than or equal to memory limit of 500Mi"),
    ("unknown unprefixed resource", _c(lambda c: c["resources"]["limits"].update(gpu="1")),
     f"{C0}.resources.limits[gpu]", INVALID, "must be a standard resource for containers"),
    ("non-container standard resource", _c(lambda c: c["resources"]["limits"].update(pods="1")),
     f"{C0}.resources.limits[pods]", INVALID, "must be a standard resource for containers"),
    ("fractional extended resource", _c(lambda c: c["resources"].update(
        limits={"example.com/gpu": "500m"}, requests={"example.com/gpu": "500m"})),
     f"{C0}.resources.limits[example.com/gpu]", INVALID, "must be an integer"),
    ("extended resource request without limit", _c(lambda c: c["resources"].update(
        requests={"example.com/gpu": "1"}, limits={})),
     f"{C0}.resources.limits", REQUIRED, "Limit must be set for non overcommitable resources"),
    ("extended resource request != limit", _c(lambda c: c["resources"].update(
        requests={"example.com/gpu": "1"}, limits={"example.com/gpu": "2"})),
     f"{C0}.resources.requests", INVALID, "must be equal to example.com/gpu limit of 2"),
    ("hugepages not a page multiple", _c(lambda c: c["resources"]["limits"].update(
        {"hugepages-2Mi": "3Mi"})), f"{C0}.resources.limits[hugepages-2Mi]", INVALID,
     "is not positive integer multiple of hugepages-2Mi"),
    ("resources of the wrong type", _c(lambda c: c.update(resources=[])), f"{C0}.resources",
     TYPE_INVALID, None),
    # resizePolicy
    ("resizePolicy for storage", _c(lambda c: c["resizePolicy"].append(
        {"resourceName": "ephemeral-storage", "restartPolicy": "NotRequired"})),
     f"{C0}.resizePolicy", NOT_SUPPORTED, '"cpu", "memory"'),
    ("duplicate resizePolicy", _c(lambda c: c["resizePolicy"].append(
        {"resourceName": "cpu", "restartPolicy": "RestartContainer"})),
     f"{C0}.resizePolicy[2]", DUPLICATE, None),
    ("unknown resize restart policy", _c(lambda c: c["resizePolicy"][0].update(restartPolicy="Maybe")),
     f"{C0}.resizePolicy", NOT_SUPPORTED, '"NotRequired", "RestartContainer"'),
    ("seed name RestartNotRequired", _c(lambda c: c["resizePolicy"][0].update(
        restartPolicy="RestartNotRequired")), f"{C0}.resizePolicy", NOT_SUPPORTED,
     'pre-release name of "NotRequired"'),
    ("seed name Restart", _c(lambda c: c["resizePolicy"][1].update(restartPolicy="Restart")),
     f"{C0}.resizePolicy", NOT_SUPPORTED, 'pre-release name of "RestartContainer"'),
    ("restartPolicy Never needs NotRequired (seed 000)", lambda p: (
        p["spec"].update(restartPolicy="Never"),
        container(p)["resizePolicy"][1].update(restartPolicy="RestartContainer")),
     f"{C0}.resizePolicy", INVALID, "must be 'NotRequired' when `restartPolicy` is 'Never'"),
    # pod-level fields
    ("bad restartPolicy", lambda p: p["spec"].update(restartPolicy="Sometimes"),
     "spec.restartPolicy", NOT_SUPPORTED, '"Always", "OnFailure", "Never"'),
    ("bad dnsPolicy", lambda p: p["spec"].update(dnsPolicy="Google"), "spec.dnsPolicy",
     NOT_SUPPORTED, None),
    ("dnsPolicy None without config", lambda p: p["spec"].update(dnsPolicy="None"),
     "spec.dnsConfig", REQUIRED, "must provide `dnsConfig` when `dnsPolicy` is None"),
    ("negative grace period", lambda p: p["spec"].update(terminationGracePeriodSeconds=-1),
     "spec.terminationGracePeriodSeconds", INVALID, "must be greater than or equal to 0"),
    ("activeDeadlineSeconds zero", lambda p: p["spec"].update(activeDeadlineSeconds=0),
     "spec.activeDeadlineSeconds", INVALID, "must be between 1 and 2147483647, inclusive"),
    ("bad nodeSelector", lambda p: p["spec"].update(nodeSelector={"disk": "ssd ok"}),
     "spec.nodeSelector", INVALID, None),
    ("bad nodeName", lambda p: p["spec"].update(nodeName="Node_1"), "spec.nodeName", INVALID, None),
    ("bad priorityClassName", lambda p: p["spec"].update(priorityClassName="High!"),
     "spec.priorityClassName", INVALID, None),
    ("bad preemptionPolicy", lambda p: p["spec"].update(preemptionPolicy="Sometimes"),
     "spec.preemptionPolicy", NOT_SUPPORTED, '"PreemptLowerPriority", "Never"'),
    ("bad overhead", lambda p: p["spec"].update(overhead={"cpu": "-1"}), "spec.overhead[cpu]",
     INVALID, "must be greater than or equal to 0"),
    ("bad os", lambda p: p["spec"].update(os={"name": "plan9"}), "spec.os", NOT_SUPPORTED, None),
    ("ephemeral containers on create", lambda p: p["spec"].update(ephemeralContainers=[
        {"name": "debug", "image": "busybox"}]), "spec.ephemeralContainers", FORBIDDEN,
     "cannot be set on create"),
    ("nodeName with scheduling gates", lambda p: p["spec"].update(
        nodeName="n1", schedulingGates=[{"name": "example.com/foo"}]), "spec.nodeName", FORBIDDEN,
     "cannot be set until all schedulingGates have been cleared"),
    ("duplicate scheduling gate", lambda p: p["spec"].update(schedulingGates=[
        {"name": "example.com/foo"}, {"name": "example.com/foo"}]), "spec.schedulingGates[1]",
     DUPLICATE, None),
    ("bad scheduling gate name", lambda p: p["spec"].update(schedulingGates=[{"name": "a/b/c"}]),
     "spec.schedulingGates[0]", INVALID, None),
    # ports and env
    ("containerPort missing", _c(lambda c: c.update(ports=[{"name": "http"}])),
     f"{C0}.ports[0].containerPort", REQUIRED, None),
    ("containerPort out of range", _c(lambda c: c.update(ports=[{"containerPort": 70000}])),
     f"{C0}.ports[0].containerPort", INVALID, "must be between 1 and 65535, inclusive"),
    ("bad protocol", _c(lambda c: c.update(ports=[{"containerPort": 80, "protocol": "ICMP"}])),
     f"{C0}.ports[0].protocol", NOT_SUPPORTED, '"SCTP", "TCP", "UDP"'),
    ("duplicate port names", _c(lambda c: c.update(ports=[{"name": "http", "containerPort": 80},
                                                          {"name": "http", "containerPort": 81}])),
     f"{C0}.ports[1].name", DUPLICATE, None),
    ("host port conflict", lambda p: p["spec"]["containers"].extend([
        {"name": "a", "image": "x", "ports": [{"containerPort": 80, "hostPort": 8080}]},
        {"name": "b", "image": "x", "ports": [{"containerPort": 81, "hostPort": 8080}]}]),
     "spec.containers[2].ports[0].hostPort", DUPLICATE, None),
    ("env name missing", _c(lambda c: c.update(env=[{"value": "x"}])), f"{C0}.env[0].name",
     REQUIRED, None),
    ("env name with =", _c(lambda c: c.update(env=[{"name": "A=B"}])), f"{C0}.env[0].name",
     INVALID, None),
    ("env value and valueFrom", _c(lambda c: c.update(env=[{"name": "A", "value": "x", "valueFrom": {
        "fieldRef": {"fieldPath": "metadata.name"}}}])), f"{C0}.env[0].valueFrom", INVALID,
     "may not be specified when `value` is not empty"),
    ("volume mount of unknown volume", _c(lambda c: c.update(volumeMounts=[
        {"name": "data", "mountPath": "/data"}])), f"{C0}.volumeMounts[0].name", NOT_FOUND, None),
    ("probe without handler", _c(lambda c: c.update(livenessProbe={"periodSeconds": 5})),
     f"{C0}.livenessProbe", REQUIRED, "must specify a handler type"),
    ("liveness successThreshold", _c(lambda c: c.update(livenessProbe={
        "exec": {"command": ["true"]}, "successThreshold": 2})),
     f"{C0}.livenessProbe.successThreshold", INVALID, "must be 1"),
    # tolerations
    ("Exists with a value", lambda p: p["spec"].update(tolerations=[
        {"key": "k", "operator": "Exists", "value": "v"}]), "spec.tolerations[0].operator", INVALID,
     "value must be empty when `operator` is 'Exists'"),
    ("unknown toleration effect", lambda p: p["spec"].update(tolerations=[
        {"key": "k", "operator": "Exists", "effect": "NoRun"}]), "spec.tolerations[0].effect",
     NOT_SUPPORTED, '"NoSchedule", "PreferNoSchedule", "NoExecute"'),
    ("tolerationSeconds without NoExecute", lambda p: p["spec"].update(tolerations=[
        {"key": "k", "operator": "Exists", "effect": "NoSchedule", "tolerationSeconds": 5}]),
     "spec.tolerations[0].effect", INVALID, "effect must be 'NoExecute' when `tolerationSeconds`"),
    ("empty key needs Exists", lambda p: p["spec"].update(tolerations=[{"operator": "Equal"}]),
     "spec.tolerations[0].operator", INVALID, "operator must be Exists when `key` is empty"),
    ("unknown toleration operator", lambda p: p["spec"].update(tolerations=[
        {"key": "k", "operator": "Like"}]), "spec.tolerations[0].operator", NOT_SUPPORTED, None),
    # affinity
    ("no node selector terms", lambda p: p["spec"].update(affinity={"nodeAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": []}}}),
     "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms",
     REQUIRED, "must have at least one node selector term"),
    ("unknown node selector operator", lambda p: p["spec"].update(affinity={"nodeAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
            {"matchExpressions": [{"key": "a", "operator": "Like", "values": ["x"]}]}]}}}),
     "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution."
     "nodeSelectorTerms[0].matchExpressions[0].operator", INVALID, "not a valid selector operator"),
    ("Gt with two values", lambda p: p["spec"].update(affinity={"nodeAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
            {"matchExpressions": [{"key": "cores", "operator": "Gt", "values": ["1", "2"]}]}]}}}),
     "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution."
     "nodeSelectorTerms[0].matchExpressions[0].values", REQUIRED, "must be specified single value"),
    ("Lt with a non-integer", lambda p: p["spec"].update(affinity={"nodeAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
            {"matchExpressions": [{"key": "cores", "operator": "Lt", "values": ["many"]}]}]}}}),
     "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution."
     "nodeSelectorTerms[0].matchExpressions[0].values[0]", INVALID, "must be an integer"),
    ("Exists with values", lambda p: p["spec"].update(affinity={"nodeAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
            {"matchExpressions": [{"key": "a", "operator": "Exists", "values": ["x"]}]}]}}}),
     "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution."
     "nodeSelectorTerms[0].matchExpressions[0].values", FORBIDDEN, None),
    ("preferred weight out of range", lambda p: p["spec"].update(affinity={"nodeAffinity": {
        "preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 101, "preference": {}}]}}),
     "spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].weight",
     INVALID, "must be in the range 1-100"),
    ("pod affinity without topologyKey", lambda p: p["spec"].update(affinity={"podAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": [{"labelSelector": {}}]}}),
     "spec.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].topologyKey",
     REQUIRED, "can not be empty"),
    # topology spread
    ("maxSkew zero", lambda p: p["spec"].update(topologySpreadConstraints=[
        {"maxSkew": 0, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"}]),
     "spec.topologySpreadConstraints[0].maxSkew", INVALID, "must be greater than zero"),
    ("topologyKey missing", lambda p: p["spec"].update(topologySpreadConstraints=[
        {"maxSkew": 1, "whenUnsatisfiable": "DoNotSchedule"}]),
     "spec.topologySpreadConstraints[0].topologyKey", REQUIRED, "can not be empty"),
    ("bad whenUnsatisfiable", lambda p: p["spec"].update(topologySpreadConstraints=[
        {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "Whatever"}]),
     "spec.topologySpreadConstraints[0].whenUnsatisfiable", NOT_SUPPORTED,
     '"DoNotSchedule", "ScheduleAnyway"'),
    ("minDomains with ScheduleAnyway", lambda p: p["spec"].update(topologySpreadConstraints=[
        {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "ScheduleAnyway",
         "minDomains": 2}]), "spec.topologySpreadConstraints[0].minDomains", INVALID,
     "can only use minDomains if whenUnsatisfiable=DoNotSchedule, not ScheduleAnyway"),
    ("repeated constraint", lambda p: p["spec"].update(topologySpreadConstraints=[
        {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"},
        {"maxSkew": 2, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"}]),
     "spec.topologySpreadConstraints[0].{topologyKey, whenUnsatisfiable}", DUPLICATE,
     "{zone, DoNotSchedule}"),
]


@pytest.mark.parametrize("name, change, field, reason, contains", INVALID_CASES,
                         ids=[c[0] for c in INVALID_CASES])
def test_invalid_pods(name, change, field, reason, contains):
    assert_cause(validate(edit(pod(), change)), field, reason, contains)


def test_validation_does_not_modify_its_input():
    p = pod()
    before = repr(p)
    validate(p)
    assert repr(p) == before


def test_absent_defaulted_fields_read_as_defaults():
    p = pod(containers=[{"name": "a", "image": "nginx"}])
    assert "restartPolicy" not in p["spec"]
    assert_valid(validate(p))


def test_messages_read_like_kubectl():
    causes = validate(edit(pod(), _c(lambda c: c["resources"]["requests"].update(cpu="2"))))
    assert [f"{c.field}: {c.message}" for c in causes] == [
        'spec.containers[0].resources.requests: Invalid value: "2": must be less than or equal '
        "to cpu limit of 500m"]


def test_garbage_shapes_do_not_raise():
    for spec in ({"containers": "x"}, {"containers": [7]}, {"containers": [{"resources": 5}]},
                 {"containers": [{"name": "a", "image": "b", "ports": [None]}]},
                 {"tolerations": {}, "containers": [{"name": "a", "image": "b"}]},
                 {"affinity": [], "containers": [{"name": "a", "image": "b"}]}):
        obj = {"apiVersion": "v1", "kind": "Pod",
               "metadata": {"name": "p", "namespace": "d"}, "spec": spec}
        assert validate(obj)
