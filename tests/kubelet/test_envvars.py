"""The environment the kubelet gives a container (kvert.kubelet.envvars), with upstream's
vectors: $(VAR) expansion, the service variables, the downward API and resource fields,
ConfigMap and Secret sources; and the cgroupfs choice of the API server's own address."""

from __future__ import annotations

import base64

import pytest

from kvert.api.errors import NotFound
from kvert.clock import VirtualClock
from kvert.kubelet.envvars import (EnvError, PodEnvironment, expand, expand_command, mapping_for,
                                   resource_value)

# upstream: doExpansionTest (third_party/forked/golang/expansion/expand_test.go), as
# TestMapping (one context) and TestMappingDual (two) run it
EXPANSION_CASES = [
    ("$(VAR_A)", "A"), ("$(VAR_A)-$(VAR_A)", "A-A"), ("$(VAR_A)-1", "A-1"), ("___$(VAR_B)___", "___B___"),
    ("___$(VAR_C)", "___C"), ("$(VAR_A)_$(VAR_B)_$(VAR_C)", "A_B_C"), ("$$(VAR_B)_$(VAR_A)", "$(VAR_B)_A"),
    ("$$(VAR_A)_$$(VAR_B)", "$(VAR_A)_$(VAR_B)"), ("f000-$$VAR_A", "f000-$VAR_A"),
    ("foo\\$(VAR_C)bar", "foo\\Cbar"), ("foo\\\\$(VAR_C)bar", "foo\\\\Cbar"),
    ("foo\\\\\\\\$(VAR_A)bar", "foo\\\\\\\\Abar"), ("$(VAR_A$(VAR_B))", "$(VAR_A$(VAR_B))"),
    ("$(VAR_A$(VAR_B)", "$(VAR_A$(VAR_B)"), ("$(VAR_REF)", "$(VAR_A)"),
    ("%%$(VAR_REF)--$(VAR_REF)%%", "%%$(VAR_A)--$(VAR_A)%%"), ("foo$(VAR_EMPTY)bar", "foobar"),
    ("foo$(VAR_Awhoops!", "foo$(VAR_Awhoops!"), ("f00__(VAR_A)__", "f00__(VAR_A)__"),
    ("$?_boo_$!", "$?_boo_$!"), ("$VAR_A", "$VAR_A"), ("$(VAR_DNE)", "$(VAR_DNE)"),
    ("$$$$$$(BIG_MONEY)", "$$$(BIG_MONEY)"), ("$$$$$$(VAR_A)", "$$$(VAR_A)"),
    ("$$$$$$$(GOOD_ODDS)", "$$$$(GOOD_ODDS)"), ("$$$$$$$(VAR_A)", "$$$A"), ("$VAR_A)", "$VAR_A)"),
    ("${VAR_A}", "${VAR_A}"), ("$(VAR_B)_______$(A", "B_______$(A"), ("$(VAR_C)_______$(", "C_______$("),
    ("$(VAR_A)foobarzab$", "Afoobarzab$"), ("foo-\\$(VAR_A", "foo-\\$(VAR_A"), ("--$($($($($--", "--$($($($($--"),
    ("$($($($($--foo$(", "$($($($($--foo$("), ("foo0--$($($($(", "foo0--$($($($("),
    ("$(foo$$var)", "$(foo$$var)"), ("\n", "\n"),
]


@pytest.mark.parametrize(("text", "expected"), EXPANSION_CASES)
def test_expansion_as_upstream(text, expected):
    # upstream: TestMapping, TestMappingDual (third_party/forked/golang/expansion/expand_test.go)
    single = mapping_for({"VAR_A": "A", "VAR_B": "B", "VAR_C": "C", "VAR_REF": "$(VAR_A)", "VAR_EMPTY": ""})
    dual = mapping_for({"VAR_A": "A", "VAR_EMPTY": ""}, {"VAR_B": "B", "VAR_C": "C", "VAR_REF": "$(VAR_A)"})
    assert expand(text, single) == expected
    assert expand(text, dual) == expected


def test_references_resolve_in_declaration_order():
    # upstream: TestMapReference (third_party/forked/golang/expansion/expand_test.go)
    declared = {"FOO": "bar", "ZOO": "$(FOO)-1", "BLU": "$(ZOO)-2"}
    mapping = mapping_for(declared, {})
    for name in ("FOO", "ZOO", "BLU"):
        declared[name] = expand(declared[name], mapping)
    assert declared == {"FOO": "bar", "ZOO": "bar-1", "BLU": "bar-1-2"}


# ---- makeEnvironmentVariables ----------------------------------------------------------------

def _service(name, namespace, cluster_ip, port, protocol="TCP"):
    # buildService (pkg/kubelet/kubelet_pods_test.go)
    return {"metadata": {"name": name, "namespace": namespace},
            "spec": {"clusterIP": cluster_ip, "ports": [{"protocol": protocol, "port": port}]}}


SERVICES = [
    _service("kubernetes", "default", "1.2.3.1", 8081), _service("test", "test1", "1.2.3.3", 8083),
    _service("kubernetes", "test2", "1.2.3.4", 8084), _service("test", "test2", "1.2.3.5", 8085),
    _service("test", "test2", "None", 8085), _service("test", "test2", "", 8085),
    _service("not-special", "default", "1.2.3.8", 8088), _service("not-special", "default", "None", 8088),
    _service("not-special", "default", "", 8088),
]


class Objects:
    """What the kubelet reads for environments: Services, a ConfigMap, a Secret."""

    def __init__(self, services=(), configmap=None, secret=None):
        self.services = list(services)
        self.objects = {"configmaps": configmap, "secrets": secret}
        self.lists = 0

    async def list(self, resource, *, namespace=None, **_):
        assert resource == "services"
        self.lists += 1
        return {"items": [s for s in self.services if namespace is None or s["metadata"]["namespace"] == namespace]}

    async def get(self, resource, name, namespace=""):
        # like the test's reactors, whatever name is asked for
        obj = self.objects.get(resource)
        if obj is None:
            raise NotFound(resource, name)
        return obj


def _link_vars(prefix, ip, port):
    return {f"{prefix}_SERVICE_HOST": ip, f"{prefix}_SERVICE_PORT": str(port), f"{prefix}_PORT": f"tcp://{ip}:{port}",
            f"{prefix}_PORT_{port}_TCP": f"tcp://{ip}:{port}", f"{prefix}_PORT_{port}_TCP_PROTO": "tcp",
            f"{prefix}_PORT_{port}_TCP_PORT": str(port), f"{prefix}_PORT_{port}_TCP_ADDR": ip}


MASTER = _link_vars("KUBERNETES", "1.2.3.1", 8081)


def _env(container, namespace, *, links, objects=None, pod_ips=(), kubernetes=None):
    clock = VirtualClock()
    env = PodEnvironment(objects or Objects(SERVICES), clock, kubernetes=kubernetes)
    pod = {"metadata": {"name": "dapi-test-pod-name", "namespace": namespace, "annotations": {}},
           "spec": {"serviceAccountName": "special", "nodeName": "node-name", "enableServiceLinks": links}}
    return clock.run(env.container_env(pod, container, host_ips=["127.0.0.1"], pod_ips=list(pod_ips)))


CASES = {
    # upstream names of TestMakeEnvironmentVariables (pkg/kubelet/kubelet_pods_test.go)
    "api server = N; kubelet = Y": ("test1", False, {"env": [{"name": "FOO", "value": "BAZ"}]},
                                    {"FOO": "BAZ", **MASTER}),
    "api server = N; kubelet = Y; service env vars": (
        "test1", True, {"env": [{"name": "FOO", "value": "BAZ"}]},
        {"FOO": "BAZ", **_link_vars("TEST", "1.2.3.3", 8083), **MASTER}),
    "master service in pod ns": ("test2", False, {"env": [{"name": "FOO", "value": "ZAP"}]},
                                 {"FOO": "ZAP", **MASTER}),
    "master service in pod ns, service env vars": (
        "test2", True, {"env": [{"name": "FOO", "value": "ZAP"}]},
        {"FOO": "ZAP", **_link_vars("TEST", "1.2.3.5", 8085), **_link_vars("KUBERNETES", "1.2.3.4", 8084)}),
    "pod in master service ns": ("default", False, {}, MASTER),
    "pod in master service ns, service env vars": (
        "default", True, {}, {**_link_vars("NOT_SPECIAL", "1.2.3.8", 8088), **MASTER}),
    "env expansion, service env vars": (
        "test1", True, {"env": [
            {"name": "TEST_LITERAL", "value": "test-test-test"},
            {"name": "POD_NAME", "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.name"}}},
            {"name": "OUT_OF_ORDER_TEST", "value": "$(OUT_OF_ORDER_TARGET)"},
            {"name": "OUT_OF_ORDER_TARGET", "value": "FOO"},
            {"name": "EMPTY_VAR"},
            {"name": "EMPTY_TEST", "value": "foo-$(EMPTY_VAR)"},
            {"name": "POD_NAME_TEST2", "value": "test2-$(POD_NAME)"},
            {"name": "POD_NAME_TEST3", "value": "$(POD_NAME_TEST2)-3"},
            {"name": "LITERAL_TEST", "value": "literal-$(TEST_LITERAL)"},
            {"name": "SERVICE_VAR_TEST", "value": "$(TEST_SERVICE_HOST):$(TEST_SERVICE_PORT)"},
            {"name": "TEST_UNDEFINED", "value": "$(UNDEFINED_VAR)"}]},
        {"TEST_LITERAL": "test-test-test", "POD_NAME": "dapi-test-pod-name",
         "POD_NAME_TEST2": "test2-dapi-test-pod-name", "POD_NAME_TEST3": "test2-dapi-test-pod-name-3",
         "LITERAL_TEST": "literal-test-test-test", **_link_vars("TEST", "1.2.3.3", 8083),
         "SERVICE_VAR_TEST": "1.2.3.3:8083", "OUT_OF_ORDER_TEST": "$(OUT_OF_ORDER_TARGET)",
         "OUT_OF_ORDER_TARGET": "FOO", "TEST_UNDEFINED": "$(UNDEFINED_VAR)", "EMPTY_VAR": "",
         "EMPTY_TEST": "foo-", **MASTER}),
    "configmapkeyref_missing_optional": (
        "test", False, {"env": [{"name": "POD_NAME", "valueFrom": {"configMapKeyRef": {
            "name": "missing-config-map", "key": "key", "optional": True}}}]}, MASTER),
    "secretkeyref_missing_optional": (
        "test", False, {"env": [{"name": "POD_NAME", "valueFrom": {"secretKeyRef": {
            "name": "missing-secret", "key": "key", "optional": True}}}]}, MASTER),
    "configmap_missing_optional": (
        "test", False, {"envFrom": [{"configMapRef": {"name": "missing-config-map", "optional": True}}]}, MASTER),
    "secret_missing_optional": (
        "test", False, {"envFrom": [{"secretRef": {"name": "missing-secret", "optional": True}}]}, MASTER),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_make_environment_variables(name):
    # upstream: TestMakeEnvironmentVariables (pkg/kubelet/kubelet_pods_test.go)
    namespace, links, container, expected = CASES[name]
    env = _env(container, namespace, links=links)
    assert dict(env) == expected
    assert len(env) == len(expected)


def test_downward_api_fields_and_pod_ips():
    # upstream: TestMakeEnvironmentVariables, "downward api pod", "downward api pod ips reverse
    # order", "downward api pod ips multiple ips" (pkg/kubelet/kubelet_pods_test.go); the
    # node has one host IP here, so HOST_IPS is that one
    fields = {"POD_NAME": "metadata.name", "POD_NAMESPACE": "metadata.namespace", "POD_NODE_NAME": "spec.nodeName",
              "POD_SERVICE_ACCOUNT_NAME": "spec.serviceAccountName", "POD_IP": "status.podIP",
              "POD_IPS": "status.podIPs", "HOST_IP": "status.hostIP", "HOST_IPS": "status.hostIPs"}
    container = {"env": [{"name": n, "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": f}}}
                         for n, f in fields.items()]}
    for ips in (["1.2.3.4", "fd00::6"], ["fd00::6", "1.2.3.4"], ["1.2.3.4", "192.168.1.1.", "fd00::6"]):
        env = dict(_env(container, "downward-api", links=False, objects=Objects(), pod_ips=ips))
        assert env == {"POD_NAME": "dapi-test-pod-name", "POD_NAMESPACE": "downward-api",
                       "POD_NODE_NAME": "node-name", "POD_SERVICE_ACCOUNT_NAME": "special",
                       "POD_IP": "1.2.3.4", "POD_IPS": "1.2.3.4,fd00::6", "HOST_IP": "127.0.0.1",
                       "HOST_IPS": "127.0.0.1"}


def test_config_map_and_secret_sources():
    # upstream: TestMakeEnvironmentVariables, "configmap", "secret", "configmap_invalid_keys_valid",
    # "secret_invalid_keys_valid" (pkg/kubelet/kubelet_pods_test.go)
    container = {"envFrom": [{"configMapRef": {"name": "test-config-map"}},
                             {"prefix": "p_", "configMapRef": {"name": "test-config-map"}}],
                 "env": [{"name": "TEST_LITERAL", "value": "test-test-test"},
                         {"name": "EXPANSION_TEST", "value": "$(REPLACE_ME)"},
                         {"name": "DUPE_TEST", "value": "ENV_VAR"}]}
    configmap = {"data": {"REPLACE_ME": "FROM_CONFIG_MAP", "DUPE_TEST": "CONFIG_MAP"}}
    env = dict(_env(container, "test1", links=False, objects=Objects(SERVICES, configmap=configmap)))
    assert env == {"TEST_LITERAL": "test-test-test", "REPLACE_ME": "FROM_CONFIG_MAP",
                   "EXPANSION_TEST": "FROM_CONFIG_MAP", "DUPE_TEST": "ENV_VAR", "p_REPLACE_ME": "FROM_CONFIG_MAP",
                   "p_DUPE_TEST": "CONFIG_MAP", **MASTER}
    secret = {"data": {k: base64.b64encode(v.encode()).decode()
                       for k, v in {"REPLACE_ME": "FROM_SECRET", "DUPE_TEST": "SECRET"}.items()}}
    container["envFrom"] = [{"secretRef": {"name": "test-secret"}},
                            {"prefix": "p_", "secretRef": {"name": "test-secret"}}]
    env = dict(_env(container, "test1", links=False, objects=Objects(SERVICES, secret=secret)))
    assert env == {"TEST_LITERAL": "test-test-test", "REPLACE_ME": "FROM_SECRET", "EXPANSION_TEST": "FROM_SECRET",
                   "DUPE_TEST": "ENV_VAR", "p_REPLACE_ME": "FROM_SECRET", "p_DUPE_TEST": "SECRET", **MASTER}
    numeric = {"envFrom": [{"prefix": "p_", "configMapRef": {"name": "test-config-map"}}]}
    env = dict(_env(numeric, "test", links=False, objects=Objects(SERVICES, configmap={"data": {"1234": "abc"}})))
    assert env == {"p_1234": "abc", **MASTER}
    dotted = {"envFrom": [{"prefix": "p_", "secretRef": {"name": "test-secret"}}]}
    secret = {"data": {"1234.name": base64.b64encode(b"abc").decode()}}
    env = dict(_env(dotted, "test", links=False, objects=Objects(SERVICES, secret=secret)))
    assert env == {"p_1234.name": "abc", **MASTER}


def test_missing_sources_are_errors_unless_optional():
    # upstream: TestMakeEnvironmentVariables, "configmap_missing", "secret_missing",
    # "configmapkeyref_missing_key_optional", "secretkeyref_missing_key_optional"
    # (pkg/kubelet/kubelet_pods_test.go); the texts are the kubelet's managers' NotFound
    for source, message in (({"configMapRef": {"name": "test-config-map"}}, 'configmap "test-config-map" not found'),
                            ({"secretRef": {"name": "test-secret"}}, 'secret "test-secret" not found')):
        with pytest.raises(EnvError) as e:
            _env({"envFrom": [source]}, "test1", links=False)
        assert str(e.value) == message
    configmap, secret = {"data": {"a": "b"}}, {"data": {"a": base64.b64encode(b"b").decode()}}
    for ref, objects in (("configMapKeyRef", Objects(configmap=configmap)), ("secretKeyRef", Objects(secret=secret))):
        optional = {"env": [{"name": "POD_NAME", "valueFrom": {ref: {"name": "test", "key": "key", "optional": True}}}]}
        assert _env(optional, "test", links=False, objects=objects) == []
        required = {"env": [{"name": "POD_NAME", "valueFrom": {ref: {"name": "test", "key": "key"}}}]}
        with pytest.raises(EnvError) as e:
            _env(required, "test", links=False, objects=objects)
        kind = "ConfigMap" if ref == "configMapKeyRef" else "Secret"
        assert str(e.value) == f"couldn't find key key in {kind} test/test"


def test_command_and_args_expand_from_the_environment():
    # upstream: ExpandContainerCommandAndArgs (pkg/kubelet/container/helpers.go) uses the
    # same expansion as the variables (TestMapping's cases)
    env = (("VAR_A", "A"), ("VAR_B", "B"))
    assert expand_command(["sh", "-c", "echo $(VAR_A) $$(VAR_B) $(VAR_X)"], env) == \
        ("sh", "-c", "echo A $(VAR_B) $(VAR_X)")


# ---- resourceFieldRef ------------------------------------------------------------------------

def _container(cpu_request="", cpu_limit="", memory_request="", memory_limit=""):
    resources = {"requests": {}, "limits": {}}
    for which, name, value in (("requests", "cpu", cpu_request), ("limits", "cpu", cpu_limit),
                               ("requests", "memory", memory_request), ("limits", "memory", memory_limit)):
        if value:
            resources[which][name] = value
    return {"name": "foo", "resources": resources}


@pytest.mark.parametrize(("resource", "divisor", "container", "expected"), [
    ("limits.cpu", None, _container(cpu_limit="9"), "9"),
    ("requests.cpu", None, _container(), "0"),
    ("requests.cpu", None, _container(cpu_request="8"), "8"),
    ("requests.cpu", None, _container(cpu_request="100m"), "1"),
    ("requests.cpu", "100m", _container(cpu_request="1200m"), "12"),
    ("requests.memory", None, _container(memory_request="100Mi"), "104857600"),
    ("requests.memory", "1Mi", _container(memory_request="100Mi", memory_limit="1Gi"), "100"),
    ("limits.memory", None, _container(memory_request="10Mi", memory_limit="100Mi"), "104857600"),
])
def test_resource_field_values(resource, divisor, container, expected):
    # upstream: TestExtractResourceValue (pkg/api/v1/resource/helpers_test.go)
    selector = {"resource": resource, **({"divisor": divisor} if divisor else {})}
    pod = {"spec": {"containers": [container], "initContainers": [{**container, "name": "init-foo"}]}}
    assert resource_value(selector, pod, container) == expected
    # the same by container name, an init container's too
    assert resource_value({**selector, "containerName": "init-foo"}, pod, {}) == expected


@pytest.mark.parametrize(("cpu", "memory", "expected"), [
    ("0", "0", ("6", "4Gi")), ("1", "0", ("1", "4Gi")), ("", "", ("6", "4Gi")), ("0", "1Mi", ("6", "1Mi"))])
def test_unset_limits_are_the_node_allocatable(cpu, memory, expected):
    # upstream: TestPodResourceLimitsDefaulting (pkg/kubelet/kubelet_resources_test.go): 10 cpus
    # and 10Gi, kube-reserved 3 / 4Gi, system-reserved 1 / 2Gi
    from kvert.api.quantity import to_int
    allocatable = {"cpu": 6000, "memory": 4 * 2**30}
    container = _container(cpu_limit=cpu, memory_limit=memory)
    pod = {"spec": {"containers": [container]}}
    assert resource_value({"resource": "limits.cpu", "divisor": "1m"}, pod, container, allocatable) == \
        str(to_int("cpu", expected[0]))
    assert resource_value({"resource": "limits.memory"}, pod, container, allocatable) == \
        str(to_int("memory", expected[1]))


def test_unsupported_fields_are_the_kubelets_errors():
    # upstream: ExtractContainerResourceValue / ExtractFieldPathAsString errors
    # (pkg/api/v1/resource/helpers.go, pkg/fieldpath/fieldpath.go)
    with pytest.raises(EnvError, match="^unsupported container resource : limits.gpu$"):
        resource_value({"resource": "limits.gpu"}, {}, {})
    container = {"env": [{"name": "X", "valueFrom": {"fieldRef": {"fieldPath": "metadata.generateName"}}}]}
    with pytest.raises(EnvError, match="^unsupported fieldPath: metadata.generateName$"):
        _env(container, "test", links=False)


# ---- a node without a service network --------------------------------------------------------

def test_without_a_service_network_the_kubernetes_service_is_the_api_servers_address():
    # kvert's choice for the cgroupfs runtime (docs/kubernetes-choices.md): the variables of
    # FromServices (pkg/kubelet/envvars) for the ``kubernetes`` Service, its cluster IP and
    # its https port standing for the API server's own address
    objects = Objects(SERVICES)
    env = dict(_env({}, "default", links=True, objects=objects, kubernetes=("127.0.0.1", 6443)))
    assert env == {**_link_vars("NOT_SPECIAL", "1.2.3.8", 8088), **_link_vars("KUBERNETES", "127.0.0.1", 6443),
                   "KUBERNETES_SERVICE_PORT_HTTPS": "6443"}
    # a namespace's own Service of that name still wins, as upstream's (see above)
    env = dict(_env({}, "test2", links=True, objects=objects, kubernetes=("127.0.0.1", 6443)))
    assert env["KUBERNETES_SERVICE_HOST"] == "1.2.3.4"
    # with links off, nothing is read from the API at all
    objects = Objects(SERVICES)
    env = dict(_env({}, "test1", links=False, objects=objects, kubernetes=("127.0.0.1", 6443)))
    assert env["KUBERNETES_SERVICE_HOST"] == "127.0.0.1" and objects.lists == 0


def test_services_are_read_once_per_namespace_while_fresh():
    clock = VirtualClock()
    objects = Objects(SERVICES)
    env = PodEnvironment(objects, clock)
    pod = {"metadata": {"name": "p", "namespace": "test1"}, "spec": {}}

    async def twice():
        await env.container_env(pod, {}, host_ips=[], pod_ips=[])
        await env.container_env(pod, {}, host_ips=[], pod_ips=[])
        return objects.lists
    # default (the master service) and test1 (links are on by default)
    assert clock.run(twice()) == 2
