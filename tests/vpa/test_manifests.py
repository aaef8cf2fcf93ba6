"""``kvert vpa manifests``: what it prints against upstream VPA 1.8's ``deploy/`` directory (the
CRDs' schema, RBAC, the Deployments, the webhook Service), and the Containerfile that builds
the image the Deployments run."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

import kvert
from kvert.cli.main import build_parser, main
from kvert.vpa.manifests import default_image

ROOT = Path(__file__).resolve().parents[2]


def printed(capsys, *argv: str) -> list[dict]:
    assert main(["vpa", "manifests", *argv]) == 0
    return [d for d in yaml.safe_load_all(capsys.readouterr().out) if d]


def by_kind(objects: list[dict], kind: str) -> dict[str, dict]:
    return {o["metadata"]["name"]: o for o in objects if o["kind"] == kind}


# ---- what is printed --------------------------------------------------------------------------

# upstream deploy/kustomization.yaml's files: vpa-v1-crd-gen.yaml, vpa-rbac.yaml,
# {recommender,updater,admission-controller}-deployment.yaml, admission-controller-service.yaml
UPSTREAM_OBJECTS = {
    ("CustomResourceDefinition", "verticalpodautoscalercheckpoints.autoscaling.k8s.io"),
    ("CustomResourceDefinition", "verticalpodautoscalers.autoscaling.k8s.io"),
    ("ClusterRole", "system:metrics-reader"), ("ClusterRole", "system:vpa-actor"),
    ("ClusterRole", "system:vpa-status-actor"), ("ClusterRole", "system:vpa-checkpoint-actor"),
    ("ClusterRole", "system:evictioner"), ("ClusterRole", "system:vpa-updater-in-place"),
    ("ClusterRole", "system:vpa-target-reader"), ("ClusterRole", "system:vpa-admission-controller"),
    ("ClusterRole", "system:vpa-status-reader"),
    ("ClusterRoleBinding", "system:vpa-updater-in-place-binding"), ("ClusterRoleBinding", "system:metrics-reader"),
    ("ClusterRoleBinding", "system:vpa-actor"), ("ClusterRoleBinding", "system:vpa-status-actor"),
    ("ClusterRoleBinding", "system:vpa-checkpoint-actor"), ("ClusterRoleBinding", "system:vpa-target-reader-binding"),
    ("ClusterRoleBinding", "system:vpa-evictioner-binding"), ("ClusterRoleBinding", "system:vpa-admission-controller"),
    ("ClusterRoleBinding", "system:vpa-status-reader-binding"),
    ("Role", "system:leader-locking-vpa-updater"), ("RoleBinding", "system:leader-locking-vpa-updater"),
    ("Role", "system:leader-locking-vpa-recommender"), ("RoleBinding", "system:leader-locking-vpa-recommender"),
    ("ServiceAccount", "vpa-admission-controller"), ("ServiceAccount", "vpa-recommender"),
    ("ServiceAccount", "vpa-updater"),
    ("Deployment", "vpa-recommender"), ("Deployment", "vpa-updater"), ("Deployment", "vpa-admission-controller"),
    ("Service", "vpa-webhook"),
}
# what kvert's components call beyond upstream's roles (kvert.vpa.rbac.kvert_cluster_roles)
KVERT_OBJECTS = {
    ("ClusterRole", "system:kvert:vpa-recommender"), ("ClusterRoleBinding", "system:kvert:vpa-recommender"),
    ("ClusterRole", "system:kvert:vpa-admission-controller"),
    ("ClusterRoleBinding", "system:kvert:vpa-admission-controller"),
}


def test_everything_upstreams_deploy_directory_has(capsys):
    objects = printed(capsys)
    kinds = [(o["kind"], o["metadata"]["name"]) for o in objects]
    assert len(kinds) == len(set(kinds))
    assert set(kinds) == UPSTREAM_OBJECTS | KVERT_OBJECTS
    # the CRDs come first, so that a single apply can create what needs them
    assert [k for k, _ in kinds[:2]] == ["CustomResourceDefinition"] * 2
    for o in objects:
        if o["kind"] in ("ServiceAccount", "Deployment", "Service", "Role", "RoleBinding"):
            assert o["metadata"]["namespace"] == "kube-system"


def test_another_namespace_is_created_and_used(capsys):
    objects = printed(capsys, "--namespace", "vpa")
    assert objects[0] == {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "vpa"}}
    for o in objects[1:]:
        if o["kind"] in ("ServiceAccount", "Deployment", "Service", "Role", "RoleBinding"):
            assert o["metadata"]["namespace"] == "vpa"
        for subject in o.get("subjects") or []:
            assert subject["namespace"] == "vpa"


def test_some_components(capsys):
    objects = printed(capsys, "--components", "recommender")
    assert set(by_kind(objects, "Deployment")) == {"vpa-recommender"}
    assert set(by_kind(objects, "ServiceAccount")) == {"vpa-recommender"}
    assert by_kind(objects, "Service") == {}
    assert len(by_kind(objects, "CustomResourceDefinition")) == 2
    target_reader = by_kind(objects, "ClusterRoleBinding")["system:vpa-target-reader-binding"]
    assert [s["name"] for s in target_reader["subjects"]] == ["vpa-recommender"]
    assert "system:evictioner" not in by_kind(objects, "ClusterRole")
    # an updater without the admission controller does not wait for its status Lease
    updater = by_kind(printed(capsys, "--components", "recommender,updater"), "Deployment")["vpa-updater"]
    args = updater["spec"]["template"]["spec"]["containers"][0]["args"]
    assert args == ["vpa", "updater", "--use-admission-controller-status=false"]
    assert build_parser().parse_args(args).use_admission_controller_status is False
    assert main(["vpa", "manifests", "--components", "recommender,scheduler"]) == 2
    assert "unknown component scheduler" in capsys.readouterr().err


# ---- RBAC ---------------------------------------------------------------------------------------

def _rule(groups, resources, verbs, names=None):
    out = {"verbs": verbs, "apiGroups": groups, "resources": resources}
    if names:
        out["resourceNames"] = names
    return out


# upstream: deploy/vpa-rbac.yaml (VPA 1.8), role by role, rules in its order
UPSTREAM_RULES = {
    "system:metrics-reader": [_rule(["metrics.k8s.io"], ["pods"], ["get", "list"])],
    "system:vpa-actor": [
        _rule([""], ["pods", "nodes", "limitranges"], ["get", "list", "watch"]),
        _rule(["", "events.k8s.io"], ["events"], ["create", "get", "list", "watch", "patch", "update"]),
        _rule(["poc.autoscaling.k8s.io"], ["verticalpodautoscalers"], ["get", "list", "watch"]),
        _rule(["autoscaling.k8s.io"], ["verticalpodautoscalers"], ["get", "list", "watch"])],
    "system:vpa-status-actor": [_rule(["autoscaling.k8s.io"], ["verticalpodautoscalers/status"], ["get", "patch"])],
    "system:vpa-checkpoint-actor": [
        _rule(["poc.autoscaling.k8s.io"], ["verticalpodautoscalercheckpoints"],
              ["get", "list", "watch", "create", "patch", "delete"]),
        _rule(["autoscaling.k8s.io"], ["verticalpodautoscalercheckpoints"],
              ["get", "list", "watch", "create", "patch", "delete"]),
        _rule([""], ["namespaces"], ["get", "list"])],
    "system:evictioner": [_rule(["apps", "extensions"], ["replicasets"], ["get"]),
                          _rule([""], ["pods/eviction"], ["create"])],
    "system:vpa-updater-in-place": [_rule([""], ["pods/resize", "pods"], ["patch"])],
    "system:vpa-target-reader": [
        _rule(["*"], ["*/scale"], ["get", "watch"]),
        _rule([""], ["replicationcontrollers"], ["get", "list", "watch"]),
        _rule(["apps"], ["daemonsets", "deployments", "replicasets", "statefulsets"], ["get", "list", "watch"]),
        _rule(["batch"], ["jobs", "cronjobs"], ["get", "list", "watch"])],
    "system:vpa-admission-controller": [
        _rule([""], ["pods", "configmaps", "nodes", "limitranges"], ["get", "list", "watch"]),
        _rule(["admissionregistration.k8s.io"], ["mutatingwebhookconfigurations"],
              ["create", "delete", "get", "list", "patch"]),
        _rule(["poc.autoscaling.k8s.io"], ["verticalpodautoscalers"], ["get", "list", "watch"]),
        _rule(["autoscaling.k8s.io"], ["verticalpodautoscalers"], ["get", "list", "watch"]),
        _rule(["coordination.k8s.io"], ["leases"], ["create", "update", "get", "list", "watch"])],
    "system:vpa-status-reader": [_rule(["coordination.k8s.io"], ["leases"], ["get", "list", "watch"])],
    "system:leader-locking-vpa-updater": [
        _rule(["coordination.k8s.io"], ["leases"], ["create"]),
        _rule(["coordination.k8s.io"], ["leases"], ["get", "watch", "update"], ["vpa-updater"])],
    "system:leader-locking-vpa-recommender": [
        _rule(["coordination.k8s.io"], ["leases"], ["create"]),
        _rule(["coordination.k8s.io"], ["leases"], ["get", "watch", "update"],
              ["vpa-recommender", "vpa-recommender-lease"])],
}
# upstream: deploy/vpa-rbac.yaml, binding -> (role kind, role, service accounts)
UPSTREAM_BINDINGS = {
    "system:vpa-updater-in-place-binding": ("ClusterRole", "system:vpa-updater-in-place", ["vpa-updater"]),
    "system:metrics-reader": ("ClusterRole", "system:metrics-reader", ["vpa-recommender"]),
    "system:vpa-actor": ("ClusterRole", "system:vpa-actor", ["vpa-recommender", "vpa-updater"]),
    "system:vpa-status-actor": ("ClusterRole", "system:vpa-status-actor", ["vpa-recommender"]),
    "system:vpa-checkpoint-actor": ("ClusterRole", "system:vpa-checkpoint-actor", ["vpa-recommender"]),
    "system:vpa-target-reader-binding": ("ClusterRole", "system:vpa-target-reader",
                                         ["vpa-recommender", "vpa-admission-controller", "vpa-updater"]),
    "system:vpa-evictioner-binding": ("ClusterRole", "system:evictioner", ["vpa-updater"]),
    "system:vpa-admission-controller": ("ClusterRole", "system:vpa-admission-controller",
                                        ["vpa-admission-controller"]),
    "system:vpa-status-reader-binding": ("ClusterRole", "system:vpa-status-reader", ["vpa-updater"]),
    "system:leader-locking-vpa-updater": ("Role", "system:leader-locking-vpa-updater", ["vpa-updater"]),
    "system:leader-locking-vpa-recommender": ("Role", "system:leader-locking-vpa-recommender", ["vpa-recommender"]),
}


def test_rbac_is_upstreams(capsys):
    objects = printed(capsys, "--namespace", "autoscaling")
    roles = {**by_kind(objects, "ClusterRole"), **by_kind(objects, "Role")}
    for name, rules in UPSTREAM_RULES.items():
        assert roles[name]["rules"] == rules, name
    bindings = {**by_kind(objects, "ClusterRoleBinding"), **by_kind(objects, "RoleBinding")}
    for name, (kind, role, accounts) in UPSTREAM_BINDINGS.items():
        b = bindings[name]
        assert b["roleRef"] == {"apiGroup": "rbac.authorization.k8s.io", "kind": kind, "name": role}, name
        assert b["subjects"] == [{"kind": "ServiceAccount", "name": a, "namespace": "autoscaling"}
                                 for a in accounts], name
    assert by_kind(objects, "Role")["system:leader-locking-vpa-updater"]["metadata"]["namespace"] == "autoscaling"


def test_kverts_additions_are_bound_to_one_component_each(capsys):
    objects = printed(capsys)
    extra = {n: r for n, r in by_kind(objects, "ClusterRole").items() if n.startswith("system:kvert:")}
    assert set(extra) == {"system:kvert:vpa-recommender", "system:kvert:vpa-admission-controller"}
    # nothing in them writes beyond the VPA's own objects, namespaces are only read
    for role in extra.values():
        for r in role["rules"]:
            assert set(r["apiGroups"]) <= {"", "autoscaling.k8s.io"}
            assert set(r["resources"]) <= {"verticalpodautoscalercheckpoints", "verticalpodautoscalers/status",
                                           "namespaces", "events"}
            if r["resources"] == ["namespaces"]:
                assert r["verbs"] == ["get", "list", "watch"]
    bindings = by_kind(objects, "ClusterRoleBinding")
    assert [s["name"] for s in bindings["system:kvert:vpa-recommender"]["subjects"]] == ["vpa-recommender"]
    assert [s["name"] for s in bindings["system:kvert:vpa-admission-controller"]["subjects"]] == \
        ["vpa-admission-controller"]


# ---- Deployments and the Service -------------------------------------------------------------

# upstream: deploy/{recommender,updater,admission-controller}-deployment.yaml
UPSTREAM_DEPLOYMENTS = {
    "vpa-recommender": {
        "labels": {"app": "vpa-recommender", "app.kubernetes.io/component": "recommender",
                   "app.kubernetes.io/name": "vertical-pod-autoscaler"},
        "container": "recommender", "ports": [{"name": "prometheus", "containerPort": 8942}],
        "resources": {"limits": {"cpu": "200m", "memory": "1000Mi"}, "requests": {"cpu": "50m", "memory": "500Mi"}},
        "namespace_env": False},
    "vpa-updater": {
        "labels": {"app": "vpa-updater"}, "container": "updater",
        "ports": [{"name": "prometheus", "containerPort": 8943}],
        "resources": {"limits": {"cpu": "200m", "memory": "1000Mi"}, "requests": {"cpu": "50m", "memory": "500Mi"}},
        "namespace_env": True},
    "vpa-admission-controller": {
        "labels": {"app": "vpa-admission-controller"}, "container": "admission-controller",
        "ports": [{"containerPort": 8000}, {"name": "prometheus", "containerPort": 8944}],
        "resources": {"limits": {"cpu": "200m", "memory": "500Mi"}, "requests": {"cpu": "50m", "memory": "200Mi"}},
        "namespace_env": True},
}
PROBE = {"httpGet": {"path": "/health-check", "port": "prometheus", "scheme": "HTTP"},
         "periodSeconds": 10, "failureThreshold": 3}


def test_deployments_as_upstreams(capsys):
    deployments = by_kind(printed(capsys), "Deployment")
    for name, want in UPSTREAM_DEPLOYMENTS.items():
        d = deployments[name]
        assert d["spec"]["replicas"] == 1
        assert d["spec"]["selector"] == {"matchLabels": {"app": name}}
        assert d["spec"]["template"]["metadata"]["labels"] == want["labels"]
        pod = d["spec"]["template"]["spec"]
        assert pod["serviceAccountName"] == name
        assert pod["securityContext"] == {"runAsNonRoot": True, "runAsUser": 65534}
        [c] = pod["containers"]
        assert c["name"] == want["container"] and c["imagePullPolicy"] == "IfNotPresent"
        assert c["resources"] == want["resources"]
        assert c["ports"] == want["ports"]
        assert c["livenessProbe"] == {**PROBE, "initialDelaySeconds": 5}
        assert c["readinessProbe"] == PROBE
        namespace_env = [{"name": "NAMESPACE", "valueFrom": {"fieldRef": {"fieldPath": "metadata.namespace"}}}]
        assert c.get("env") == (namespace_env if want["namespace_env"] else None)


def test_containers_run_kverts_own_commands(capsys):
    """The image's entrypoint is kvert: every container's args are a kvert command line the
    command parser takes, for the component the Deployment is named after."""
    deployments = by_kind(printed(capsys), "Deployment")
    parser = build_parser()
    for name, d in deployments.items():
        [c] = d["spec"]["template"]["spec"]["containers"]
        assert c["image"] == f"{kvert.IMAGE_REPOSITORY}:{kvert.__version__}"
        assert c["args"] == ["vpa", name.removeprefix("vpa-")]
        assert parser.parse_args(c["args"]).vpa_command == name.removeprefix("vpa-")


def test_feature_gates_go_to_every_component(capsys):
    deployments = by_kind(printed(capsys, "--feature-gates", "InPlace=true"), "Deployment")
    parser = build_parser()
    for name, d in deployments.items():
        [c] = d["spec"]["template"]["spec"]["containers"]
        assert c["args"] == ["vpa", name.removeprefix("vpa-"), "--feature-gates=InPlace=true"]
        assert parser.parse_args(c["args"]).feature_gates == "InPlace=true", name


def test_the_admission_controller_makes_its_certificates_unless_given_a_secret(capsys):
    default = by_kind(printed(capsys), "Deployment")["vpa-admission-controller"]["spec"]["template"]["spec"]
    [c] = default["containers"]
    assert c["args"] == ["vpa", "admission-controller"]
    assert "volumes" not in default and "volumeMounts" not in c

    given = by_kind(printed(capsys, "--tls-secret", "vpa-tls-certs"), "Deployment")["vpa-admission-controller"]
    pod = given["spec"]["template"]["spec"]
    [c] = pod["containers"]
    # upstream admission-controller-deployment.yaml's volume, and gencerts.sh's key names
    assert pod["volumes"] == [{"name": "tls-certs", "secret": {"secretName": "vpa-tls-certs"}}]
    assert c["volumeMounts"] == [{"name": "tls-certs", "mountPath": "/etc/tls-certs", "readOnly": True}]
    assert c["args"] == ["vpa", "admission-controller", "--client-ca-file=/etc/tls-certs/caCert.pem",
                         "--tls-cert-file=/etc/tls-certs/serverCert.pem",
                         "--tls-private-key=/etc/tls-certs/serverKey.pem", "--reload-cert"]
    args = build_parser().parse_args(c["args"])
    assert args.reload_cert is True and str(args.tls_private_key) == "/etc/tls-certs/serverKey.pem"


def test_webhook_service_as_upstreams(capsys):
    # upstream: deploy/admission-controller-service.yaml
    service = by_kind(printed(capsys), "Service")["vpa-webhook"]
    assert service["spec"] == {"ports": [{"port": 443, "targetPort": 8000}],
                               "selector": {"app": "vpa-admission-controller"}}


def test_bad_feature_gates_are_refused(capsys):
    assert main(["vpa", "manifests", "--feature-gates", "NoSuchGate=true"]) == 2
    assert "NoSuchGate" in capsys.readouterr().err


# ---- the CRDs' schema against upstream 1.8's ---------------------------------------------------

# upstream: deploy/vpa-v1-crd-gen.yaml (VPA 1.8): every field of each version's
# openAPIV3Schema, "path type [format] [enum a|b]" ("[]" an array's items, "{}" a map's values;
# int-or-string: the quantities' anyOf integer/string with x-kubernetes-int-or-string)
CHECKPOINT_FIELDS = """
apiVersion string
kind string
metadata object
spec object
spec.containerName string
spec.vpaObjectName string
status object
status.cpuHistogram object
status.cpuHistogram.bucketWeights object
status.cpuHistogram.referenceTimestamp string date-time
status.cpuHistogram.totalWeight number
status.firstSampleStart string date-time
status.lastSampleStart string date-time
status.lastUpdateTime string date-time
status.memoryHistogram object
status.memoryHistogram.bucketWeights object
status.memoryHistogram.referenceTimestamp string date-time
status.memoryHistogram.totalWeight number
status.totalSamplesCount integer
status.version string
"""
_RECOMMENDATION_FIELDS = """
status.recommendation object
status.recommendation.containerRecommendations array
status.recommendation.containerRecommendations[] object
status.recommendation.containerRecommendations[].containerName string
status.recommendation.containerRecommendations[].lowerBound object
status.recommendation.containerRecommendations[].lowerBound{} int-or-string
status.recommendation.containerRecommendations[].target object
status.recommendation.containerRecommendations[].target{} int-or-string
status.recommendation.containerRecommendations[].uncappedTarget object
status.recommendation.containerRecommendations[].uncappedTarget{} int-or-string
status.recommendation.containerRecommendations[].upperBound object
status.recommendation.containerRecommendations[].upperBound{} int-or-string
"""
_BOOST = """
{p} object
{p}.cpu object
{p}.cpu.durationSeconds integer int32
{p}.cpu.factor integer int32
{p}.cpu.quantity int-or-string
{p}.cpu.type string enum Factor|Quantity
"""
_POLICY = "spec.resourcePolicy.containerPolicies[]"
VPA_V1_FIELDS = f"""
apiVersion string
kind string
metadata object
spec object
spec.recommenders array
spec.recommenders[] object
spec.recommenders[].name string
spec.resourcePolicy object
spec.resourcePolicy.containerPolicies array
{_POLICY} object
{_POLICY}.containerName string
{_POLICY}.controlledResources array
{_POLICY}.controlledResources[] string
{_POLICY}.controlledValues string enum RequestsAndLimits|RequestsOnly
{_POLICY}.maxAllowed object
{_POLICY}.maxAllowed{{}} int-or-string
{_POLICY}.memoryAggregationIntervalCount integer int64
{_POLICY}.memoryAggregationIntervalSeconds integer int32
{_POLICY}.minAllowed object
{_POLICY}.minAllowed{{}} int-or-string
{_POLICY}.mode string enum Auto|Off
{_POLICY}.oomBumpUpRatio int-or-string
{_POLICY}.oomMinBumpUp int-or-string
{_BOOST.format(p=_POLICY + ".startupBoost")}
{_BOOST.format(p="spec.startupBoost")}
spec.targetRef object
spec.targetRef.apiVersion string
spec.targetRef.kind string
spec.targetRef.name string
spec.updatePolicy object
spec.updatePolicy.evictAfterOOMSeconds integer int32
spec.updatePolicy.evictionRequirements array
spec.updatePolicy.evictionRequirements[] object
spec.updatePolicy.evictionRequirements[].changeRequirement string enum TargetHigherThanRequests|TargetLowerThanRequests
spec.updatePolicy.evictionRequirements[].resources array
spec.updatePolicy.evictionRequirements[].resources[] string
spec.updatePolicy.minReplicas integer int32
spec.updatePolicy.updateMode string enum Off|Initial|Recreate|InPlaceOrRecreate|InPlace|Auto
status object
status.conditions array
status.conditions[] object
status.conditions[].lastTransitionTime string date-time
status.conditions[].message string
status.conditions[].observedGeneration integer int64
status.conditions[].reason string
status.conditions[].status string
status.conditions[].type string
status.observedGeneration integer int64
{_RECOMMENDATION_FIELDS}
"""
VPA_V1BETA2_FIELDS = f"""
apiVersion string
kind string
metadata object
spec object
spec.resourcePolicy object
spec.resourcePolicy.containerPolicies array
{_POLICY} object
{_POLICY}.containerName string
{_POLICY}.maxAllowed object
{_POLICY}.maxAllowed{{}} int-or-string
{_POLICY}.minAllowed object
{_POLICY}.minAllowed{{}} int-or-string
{_POLICY}.mode string enum Auto|Off
spec.targetRef object
spec.targetRef.apiVersion string
spec.targetRef.kind string
spec.targetRef.name string
spec.updatePolicy object
spec.updatePolicy.updateMode string enum Off|Initial|Recreate|Auto
status object
status.conditions array
status.conditions[] object
status.conditions[].lastTransitionTime string date-time
status.conditions[].message string
status.conditions[].reason string
status.conditions[].status string
status.conditions[].type string
{_RECOMMENDATION_FIELDS}
"""
# upstream: deploy/vpa-v1-crd-gen.yaml, the required lists and minimums
REQUIRED = {"": ["spec"], "spec": ["targetRef"], "spec.targetRef": ["kind", "name"],
            "spec.recommenders[]": ["name"], "spec.startupBoost.cpu": ["type"],
            f"{_POLICY}.startupBoost.cpu": ["type"],
            "spec.updatePolicy.evictionRequirements[]": ["changeRequirement", "resources"],
            "status.conditions[]": ["status", "type"],
            "status.recommendation.containerRecommendations[]": ["target"]}
MINIMUM = {f"{_POLICY}.memoryAggregationIntervalCount": 1, f"{_POLICY}.memoryAggregationIntervalSeconds": 1,
           "spec.updatePolicy.evictAfterOOMSeconds": 1, "status.conditions[].observedGeneration": 0,
           "status.observedGeneration": 0}
# kvert's own container-policy fields (per-VPA target percentiles), beyond upstream's schema
KVERT_ONLY_V1 = {f"{_POLICY}.targetCPUPercentile", f"{_POLICY}.targetMemoryPercentile"}
QUANTITY_PATTERN = (r"^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|"
                    r"([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$")


def _facts(table: str) -> dict[str, tuple]:
    out = {}
    for line in table.strip().splitlines():
        if not line.strip():
            continue
        path, kind, *rest = line.split()
        fmt, enum = "", ()
        if rest and rest[0] == "enum":
            enum = tuple(rest[1].split("|"))
        elif rest:
            fmt = rest[0]
        out[path] = (kind, fmt, enum)
    return out


def _walk(schema: dict, path: str, out: dict, nodes: dict) -> None:
    if path:
        kind = schema.get("type") or ("int-or-string" if schema.get("x-kubernetes-int-or-string") else "")
        out[path] = (kind, schema.get("format", ""), tuple(schema.get("enum") or ()))
    nodes[path] = schema
    for key, sub in (schema.get("properties") or {}).items():
        _walk(sub, f"{path}.{key}" if path else key, out, nodes)
    if isinstance(schema.get("items"), dict):
        _walk(schema["items"], path + "[]", out, nodes)
    if isinstance(schema.get("additionalProperties"), dict):
        _walk(schema["additionalProperties"], path + "{}", out, nodes)


def _version(crd: dict, name: str) -> dict:
    return next(v for v in crd["spec"]["versions"] if v["name"] == name)


@pytest.mark.parametrize("crd_name, version, table, kvert_only", [
    ("verticalpodautoscalercheckpoints.autoscaling.k8s.io", "v1", CHECKPOINT_FIELDS, set()),
    ("verticalpodautoscalercheckpoints.autoscaling.k8s.io", "v1beta2", CHECKPOINT_FIELDS, set()),
    ("verticalpodautoscalers.autoscaling.k8s.io", "v1", VPA_V1_FIELDS, KVERT_ONLY_V1),
    ("verticalpodautoscalers.autoscaling.k8s.io", "v1beta2", VPA_V1BETA2_FIELDS, set()),
])
def test_crd_schema_has_every_upstream_field(capsys, crd_name, version, table, kvert_only):
    crd = by_kind(printed(capsys), "CustomResourceDefinition")[crd_name]
    fields: dict[str, tuple] = {}
    nodes: dict[str, dict] = {}
    _walk(_version(crd, version)["schema"]["openAPIV3Schema"], "", fields, nodes)
    upstream = _facts(table)
    assert {p: fields.get(p) for p in upstream} == upstream
    assert set(fields) - set(upstream) == kvert_only
    for path, (kind, _, _) in fields.items():
        if kind == "int-or-string":
            assert nodes[path]["anyOf"] == [{"type": "integer"}, {"type": "string"}], path
            assert nodes[path]["pattern"] == QUANTITY_PATTERN, path
    if crd_name.startswith("verticalpodautoscalers."):
        for path, required in REQUIRED.items():
            if path in nodes or path == "":
                if version == "v1" or path in ("", "spec", "spec.targetRef", "status.conditions[]",
                                               "status.recommendation.containerRecommendations[]"):
                    assert nodes[path].get("required") == required, (version, path)
        if version == "v1":
            for path, minimum in MINIMUM.items():
                assert nodes[path]["minimum"] == minimum, path
            assert nodes["spec.targetRef"]["x-kubernetes-map-type"] == "atomic"
            assert [r["rule"] for r in nodes["spec.startupBoost.cpu"]["x-kubernetes-validations"]] == [
                "(self.type == 'Factor') == has(self.factor)", "(self.type == 'Quantity') == has(self.quantity)"]
    else:
        assert nodes["status.cpuHistogram.bucketWeights"]["x-kubernetes-preserve-unknown-fields"] is True
        for path in ("status.firstSampleStart", "status.lastSampleStart", "status.lastUpdateTime",
                     "status.cpuHistogram.referenceTimestamp"):
            assert nodes[path]["nullable"] is True, path


def test_crd_names_versions_and_columns_are_upstreams(capsys):
    # upstream: deploy/vpa-v1-crd-gen.yaml
    crds = by_kind(printed(capsys), "CustomResourceDefinition")
    vpa = crds["verticalpodautoscalers.autoscaling.k8s.io"]
    assert vpa["metadata"]["annotations"] == {
        "api-approved.kubernetes.io": "https://github.com/kubernetes/kubernetes/pull/63797",
        "controller-gen.kubebuilder.io/version": "v0.21.0"}
    assert vpa["spec"]["group"] == "autoscaling.k8s.io" and vpa["spec"]["scope"] == "Namespaced"
    assert vpa["spec"]["names"] == {"kind": "VerticalPodAutoscaler", "listKind": "VerticalPodAutoscalerList",
                                    "plural": "verticalpodautoscalers", "shortNames": ["vpa"],
                                    "singular": "verticalpodautoscaler"}
    v1, v1beta2 = _version(vpa, "v1"), _version(vpa, "v1beta2")
    assert (v1["served"], v1["storage"], v1["subresources"]) == (True, True, {"status": {}})
    assert (v1beta2["served"], v1beta2["storage"], v1beta2["subresources"]) == (False, False, {"status": {}})
    assert v1beta2["deprecated"] is True
    assert v1beta2["deprecationWarning"] == "autoscaling.k8s.io/v1beta2 API is deprecated"
    assert v1["additionalPrinterColumns"] == [
        {"jsonPath": ".spec.updatePolicy.updateMode", "name": "Mode", "type": "string"},
        {"jsonPath": ".status.recommendation.containerRecommendations[0].target.cpu", "name": "CPU",
         "type": "string"},
        {"jsonPath": ".status.recommendation.containerRecommendations[0].target.memory", "name": "Mem",
         "type": "string"},
        {"jsonPath": ".status.conditions[?(@.type=='RecommendationProvided')].status", "name": "Provided",
         "type": "string"},
        {"jsonPath": ".metadata.creationTimestamp", "name": "Age", "type": "date"},
        {"jsonPath": ".spec.updatePolicy.minReplicas", "name": "MinReplicas", "priority": 1, "type": "integer"},
        {"jsonPath": ".spec.updatePolicy.evictAfterOOMSeconds", "name": "OOMSeconds", "priority": 1,
         "type": "integer"},
    ]
    cp = crds["verticalpodautoscalercheckpoints.autoscaling.k8s.io"]
    assert cp["spec"]["names"] == {"kind": "VerticalPodAutoscalerCheckpoint",
                                   "listKind": "VerticalPodAutoscalerCheckpointList",
                                   "plural": "verticalpodautoscalercheckpoints", "shortNames": ["vpacheckpoint"],
                                   "singular": "verticalpodautoscalercheckpoint"}
    assert [(v["name"], v["served"], v["storage"], "subresources" in v) for v in cp["spec"]["versions"]] == \
        [("v1", True, True, False), ("v1beta2", False, False, False)]


# ---- the image -------------------------------------------------------------------------------

def _instructions(text: str) -> list[tuple[str, str]]:
    """A Containerfile's instructions (continuations joined, comments dropped)."""
    out: list[tuple[str, str]] = []
    pending = ""
    for line in text.splitlines():
        stripped = line.strip()
        if not pending and (not stripped or stripped.startswith("#")):
            continue
        if stripped.endswith("\\"):
            pending += stripped[:-1] + " "
            continue
        whole = (pending + stripped).strip()
        pending = ""
        op, _, rest = whole.partition(" ")
        out.append((op.upper(), rest.strip()))
    return out


def test_containerfile_builds_the_released_package_as_nobody():
    steps = _instructions((ROOT / "Containerfile").read_text())
    ops = [op for op, _ in steps]
    assert ops[0] in ("ARG", "FROM") and "FROM" in ops
    args = dict(re.match(r"(\w+)(?:=(.*))?", rest).groups() for op, rest in steps if op == "ARG")
    # the default build installs this version from the package index
    assert args["KVERT_VERSION"] == kvert.__version__
    runs = " ".join(rest for op, rest in steps if op == "RUN")
    assert "kvert==${KVERT_VERSION}" in runs
    assert "KVERT_WHEEL" in args        # the build-arg that installs the checkout's wheel instead
    assert ("USER", "65534:65534") in steps or ("USER", "65534") in steps
    assert ("ENTRYPOINT", '["kvert"]') in steps
    # the manifests' image is the one this Containerfile builds for this version
    assert default_image() == f"{kvert.IMAGE_REPOSITORY}:{args['KVERT_VERSION']}"


def test_dockerignore_keeps_the_build_context_small():
    ignored = (ROOT / ".dockerignore").read_text().split()
    assert ".venv" in ignored and ".git" in ignored
