"""Regression tests for hostile input found by fuzzing the API server: each answer is a 4xx
Status as kube-apiserver gives it, and a refused request changes nothing in the store."""

from __future__ import annotations

import asyncio
import datetime
import gzip
import json
import os
import socket
import ssl
import time
import uuid

import pytest

from kvert.api.errors import Invalid, NotFound
from kvert.apiserver import certs
from kvert.apiserver.admission.webhook import WebhookClient
from kvert.apiserver.negotiation import MAX_BODY_BYTES
from kvert.auth.tokens import ADMIN
from kvert.clock import WallClock
from kvert.registry import Registry
from kvert.store import EtcdStore, MemoryStore, SqliteStore
from kvert.store.etcd import LocalEtcd
from tests.apiserver.test_fuzz import ServerThread

PODS = "/api/v1/namespaces/default/pods"
CONFIGMAPS = "/api/v1/namespaces/default/configmaps"
QUANTITY_FORMAT = ("quantities must match the regular expression "
                   "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'")


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    s = ServerThread(tmp_path_factory.mktemp("hardening"))
    yield s
    s.stop()


def call(server, method, path, body=None, content_type="application/json", headers=None):
    """(status, decoded JSON body, response headers); the store's revision must not move
    unless the answer is a success."""
    before = server.store.current_revision()
    raw = json.dumps(body).encode() if isinstance(body, (dict, list)) else body
    status, response_headers, payload = server.exchange(method, path, raw, content_type, headers)
    document = json.loads(payload) if payload else None
    if status >= 400:
        assert document["kind"] == "Status" and document["code"] == status, document
        assert server.store.current_revision() == before
    return status, document, response_headers


def pod(name, **container):
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
            "spec": {"containers": [{"name": "c", "image": "nginx", **container}]}}


def configmap(name, **fields):
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, **fields}


# -- bodies that do not decode into their kind ---------------------------------------------------

def test_an_unparsable_quantity_is_a_decode_error(server):
    # resource.ErrFormatWrong (apimachinery/pkg/api/resource/quantity.go) from
    # Quantity.UnmarshalJSON, answered by transformDecodeError (endpoints/handlers/rest.go)
    status, body, _ = call(server, "POST", PODS,
                           pod("lots", resources={"requests": {"cpu": "lots"}}))
    assert (status, body["reason"]) == (400, "BadRequest")
    assert body["message"] == f'Pod in version "v1" cannot be handled as a Pod: {QUANTITY_FORMAT}'
    # a number is a quantity's text too; true is not
    assert call(server, "POST", PODS, pod("n", resources={"requests": {"cpu": 1}}))[0] == 201
    assert call(server, "POST", PODS, pod("b", resources={"limits": {"cpu": True}}))[0] == 400


def test_the_registry_reports_an_unparsable_quantity_as_invalid():
    """In-process writes skip the HTTP decoding: validation names the field (422), the
    strategy's QoS class does not fail first."""
    registry = Registry(MemoryStore(clock=WallClock()), WallClock())
    with pytest.raises(Invalid) as e:
        asyncio.run(registry.create("pods", dict(pod("p", resources={"requests": {"cpu": "lots"}}),
                                                 metadata={"name": "p", "namespace": "default"})))
    # validateResourceQuantityValue / ValidateResourceRequirements messages
    assert e.value.causes[0].field == "spec.containers[0].resources.requests[cpu]"
    assert e.value.causes[0].message == f'Invalid value: "lots": {QUANTITY_FORMAT}'
    assert registry.store.current_revision() == 0


@pytest.mark.parametrize("body, problem", [
    # json.UnmarshalTypeError texts: Go struct name, the JSON field path, the Go type
    ({"metadata": "x"}, "json: cannot unmarshal string into Go struct field ConfigMap.metadata "
                        "of type v1.ObjectMeta"),
    ({"metadata": {"name": "a", "labels": []}}, "json: cannot unmarshal array into Go struct "
                                                "field ObjectMeta.metadata.labels of type "
                                                "map[string]string"),
    ({"metadata": {"name": "a", "labels": {"k": 1}}}, "json: cannot unmarshal number into Go "
                                                      "struct field ObjectMeta.metadata.labels "
                                                      "of type string"),
    ({"metadata": {"name": "a"}, "data": {"k": {"x": 1}}}, "json: cannot unmarshal object into "
                                                          "Go struct field ConfigMap.data of "
                                                          "type string"),
    ({"metadata": {"name": "a"}, "immutable": "yes"}, "json: cannot unmarshal string into Go "
                                                      "struct field ConfigMap.immutable of type "
                                                      "bool"),
])
def test_fields_of_the_wrong_type_are_decode_errors(server, body, problem):
    status, answer, _ = call(server, "POST", CONFIGMAPS, {"apiVersion": "v1", "kind": "ConfigMap",
                                                          **body})
    assert status == 400
    assert answer["message"] == f'ConfigMap in version "v1" cannot be handled as a ConfigMap: {problem}'


def test_pod_shapes_are_decode_errors(server):
    cases = [
        ({"spec": {"containers": {"name": "c"}}},
         "json: cannot unmarshal object into Go struct field PodSpec.spec.containers of type "
         "[]v1.Container"),
        ({"spec": {"containers": [{"name": 5}]}},
         "json: cannot unmarshal number into Go struct field Container.spec.containers.name of "
         "type string"),
        ({"spec": {"containers": [{"name": "c", "ports": [{"containerPort": 1.5}]}]}},
         "json: cannot unmarshal number 1.5 into Go struct field ContainerPort.spec.containers."
         "ports.containerPort of type int32"),
        ({"spec": {"containers": [{"name": "c", "ports": [{"containerPort": 2**31}]}]}},
         "json: cannot unmarshal number 2147483648 into Go struct field ContainerPort.spec."
         "containers.ports.containerPort of type int32"),
    ]
    for fields, problem in cases:
        status, body, _ = call(server, "POST", PODS, {"apiVersion": "v1", "kind": "Pod",
                                                      "metadata": {"name": "s"}, **fields})
        assert (status, body["message"]) == (
            400, f'Pod in version "v1" cannot be handled as a Pod: {problem}')


def test_a_patch_that_breaks_the_type_is_invalid(server):
    assert call(server, "POST", CONFIGMAPS, configmap("patched"))[0] == 201
    status, body, _ = call(server, "PATCH", f"{CONFIGMAPS}/patched", {"data": {"k": 5}},
                           "application/merge-patch+json")
    # jsonPatcher.applyPatchToCurrentObject: field.Invalid("patch", <patched JSON>, <error>)
    assert (status, body["reason"]) == (422, "Invalid")
    assert body["details"]["causes"][0]["field"] == "patch"
    assert body["message"].startswith(' "" is invalid: patch: Invalid value: "{')
    assert body["message"].endswith("json: cannot unmarshal number into Go struct field "
                                    "ConfigMap.data of type string")


def test_null_is_an_unset_field_and_a_zero_element(server):
    status, body, _ = call(server, "POST", CONFIGMAPS,
                           configmap("nulls", data={"k": None}, immutable=None))
    assert status == 201
    assert body["data"] == {"k": ""} and "immutable" not in body


# -- lone surrogates ----------------------------------------------------------------------------

def test_a_lone_surrogate_decodes_as_the_replacement_character(server):
    # Go's encoding/json: "invalid UTF-16 surrogates ... replaced by U+FFFD"
    raw = b'{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"sur"},' \
          b'"data":{"a":"\\ud800x","b":"\\udc00","c":"\\ud83d\\ude00"}}'
    status, body, _ = call(server, "POST", CONFIGMAPS, raw)
    assert status == 201
    assert body["data"] == {"a": "\ufffdx", "b": "\ufffd", "c": "\U0001f600"}


@pytest.fixture(scope="module")
def etcd_endpoint():
    if not LocalEtcd.available():
        pytest.skip("etcd not installed")
    etcd = LocalEtcd()
    etcd.start()
    yield etcd.endpoint
    etcd.close()


@pytest.mark.parametrize("backend", ["memory", "sqlite", "etcd"])
def test_no_store_fails_on_a_lone_surrogate(backend, tmp_path, request):
    if backend == "memory":
        store = MemoryStore()
    elif backend == "sqlite":
        store = SqliteStore(str(tmp_path / "s.db"), synchronous="OFF")
    else:
        store = EtcdStore(request.getfixturevalue("etcd_endpoint"),
                          prefix=f"/kvert-test/{uuid.uuid4().hex[:12]}")
    try:
        obj = configmap("a", data={"k": "x\ud800"})
        obj["metadata"]["namespace"] = "d"
        store.create("configmaps", obj)
        assert store.get("configmaps", "d", "a")["data"]["k"] in ("x\ud800", "x\ufffd")
        with pytest.raises(NotFound):
            store.get("configmaps", "d", "\udc00")
        assert store.list("configmaps", namespace="\udc00").items == []
    finally:
        store.close()


# -- YAML ---------------------------------------------------------------------------------------

# the "billion laughs" of /tmp/repro: nine levels of nine aliases, 492 bytes
BOMB = "".join(
    ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n'] +
    [f"{c}: &{c} [{','.join(['*' + p] * 9)}]\n" for p, c in zip("abcdefg", "bcdefgh")] +
    ["apiVersion: v1\nkind: ConfigMap\nmetadata: {name: bomb}\n"]).encode()


def test_a_yaml_alias_bomb_is_refused_at_once(server):
    # go-yaml's decode.go (CVE-2019-11253): "document contains excessive aliasing"
    assert len(BOMB) < 500
    started = time.monotonic()
    status, body, _ = call(server, "POST", CONFIGMAPS, BOMB, "application/yaml")
    assert time.monotonic() - started < 5
    assert status == 400
    # transformDecodeError without a kind: the body's first 30 bytes in hex (summarizeData)
    assert body["message"] == ("the object provided is unrecognized (must be of type ConfigMap): "
                               "yaml: document contains excessive aliasing "
                               f"({BOMB[:30].hex()} ...)")


def test_yaml_with_modest_aliasing_is_accepted(server):
    # TestLimits in go-yaml's limit_test.go: a 10-item anchor used 100 times decodes
    doc = ("x: &x [" + ",".join(["a"] * 10) + "]\n" +
           "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: aliases, annotations: {a: '1'}}\n"
           "data:\n" + "".join(f"  k{i}: v\n" for i in range(100)))
    status, body, _ = call(server, "POST", CONFIGMAPS, doc.encode(), "application/yaml")
    assert status == 201, body


def test_a_yaml_anchor_containing_itself_is_refused(server):
    # go-yaml: "anchor 'x' value contains itself"
    status, body, _ = call(server, "POST", CONFIGMAPS, b"a: &x {b: *x}\n", "application/yaml")
    assert status == 400
    assert "yaml: anchor 'x' value contains itself" in body["message"]


# -- unknown and duplicate fields ---------------------------------------------------------------

def test_unknown_fields_of_builtin_kinds_are_dropped(server):
    # TestFieldValidation (test/integration/apiserver/field_validation_test.go): Warn is the
    # default and warns; Ignore drops silently; Strict refuses
    body = configmap("unknown", bogus={"a": 1}, data={"k": "v"})
    status, created, headers = call(server, "POST", CONFIGMAPS, body)
    assert status == 201 and "bogus" not in created
    assert headers.get_all("Warning") == ['299 - "unknown field \\"bogus\\""']
    assert "bogus" not in call(server, "GET", f"{CONFIGMAPS}/unknown")[1]
    status, created, headers = call(server, "POST", f"{CONFIGMAPS}?fieldValidation=Ignore",
                                    configmap("ignored", bogus=1))
    assert status == 201 and "bogus" not in created and headers.get("Warning") is None
    status, answer, _ = call(server, "POST", f"{CONFIGMAPS}?fieldValidation=Strict",
                             configmap("strict", bogus=1))
    assert (status, answer["message"]) == (400, 'ConfigMap in version "v1" cannot be handled as '
                                                'a ConfigMap: strict decoding error: unknown '
                                                'field "bogus"')


def test_duplicate_fields(server):
    raw = b'{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"dup","name":"dup2"}}'
    status, answer, _ = call(server, "POST", f"{CONFIGMAPS}?fieldValidation=Strict", raw)
    assert (status, answer["message"]) == (400, 'ConfigMap in version "v1" cannot be handled as '
                                                'a ConfigMap: strict decoding error: duplicate '
                                                'field "metadata.name"')
    status, created, headers = call(server, "POST", CONFIGMAPS, raw)
    assert status == 201 and created["metadata"]["name"] == "dup2"   # the last one wins
    assert headers.get_all("Warning") == ['299 - "duplicate field \\"metadata.name\\""']


# -- query parameters ---------------------------------------------------------------------------

def test_delete_with_an_unknown_propagation_policy(server):
    assert call(server, "POST", CONFIGMAPS, configmap("d"))[0] == 201
    status, body, _ = call(server, "DELETE", f"{CONFIGMAPS}/d?propagationPolicy=Bogus")
    # ValidateDeleteOptions (apimachinery/pkg/apis/meta/v1/validation)
    assert (status, body["message"]) == (
        422, 'DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Unsupported value: '
             '"Bogus": supported values: "Foreground", "Background", "Orphan", "nil"')
    status, body, _ = call(server, "DELETE", f"{CONFIGMAPS}/d?gracePeriodSeconds=soon")
    assert (status, body["message"]) == (400, 'strconv.ParseInt: parsing "soon": invalid syntax')


@pytest.mark.parametrize("query, message", [
    # Convert_Slice_string_To_int64 / _Pointer_int64: strconv.ParseInt(s, 10, 64)
    ("timeoutSeconds=abc", 'strconv.ParseInt: parsing "abc": invalid syntax'),
    ("limit=1.5", 'strconv.ParseInt: parsing "1.5": invalid syntax'),
    ("limit=", 'strconv.ParseInt: parsing "": invalid syntax'),
    ("limit=99999999999999999999", 'strconv.ParseInt: parsing "99999999999999999999": value '
                                   'out of range'),
    ("limit=%D9%A3", 'strconv.ParseInt: parsing "\u0663": invalid syntax'),
    # labels.Parse
    ("labelSelector=a%20in%20(", "unable to parse requirement: found '', expected: ',', ')' or "
                                 "identifier"),
    ("labelSelector=a%20nope%20b", "unable to parse requirement: found 'nope', expected: '=', "
                                   "'!=', '==', 'in', notin'"),
    # storage.APIObjectVersioner.ParseResourceVersion, as the etcd3 store's GetList says it
    ("resourceVersion=%D9%A3", 'invalid resource version: resourceVersion: Invalid value: '
                               '"\u0663": strconv.ParseUint: parsing "\u0663": invalid syntax'),
    ("resourceVersion=-1", 'invalid resource version: resourceVersion: Invalid value: "-1": '
                           'strconv.ParseUint: parsing "-1": invalid syntax'),
])
def test_list_parameters_that_do_not_convert(server, query, message):
    status, body, _ = call(server, "GET", f"{PODS}?{query}")
    assert (status, body["reason"], body["message"]) == (400, "BadRequest", message)


@pytest.mark.parametrize("query, causes", [
    # TestValidateListOptions (apimachinery/pkg/apis/meta/internalversion/validation)
    ("resourceVersionMatch=Exact", ["resourceVersionMatch: Forbidden: resourceVersionMatch is "
                                    "forbidden unless resourceVersion is provided"]),
    ("resourceVersion=0&resourceVersionMatch=Exact",
     ['resourceVersionMatch: Forbidden: resourceVersionMatch "exact" is forbidden for '
      'resourceVersion "0"']),
    ("resourceVersion=0&resourceVersionMatch=foo",
     ['resourceVersionMatch: Unsupported value: "foo": supported values: "Exact", '
      '"NotOlderThan", ""']),
    ("sendInitialEvents=true", ["sendInitialEvents: Forbidden: sendInitialEvents is forbidden "
                                "for list"]),
    ("watch=1&resourceVersionMatch=NotOlderThan",
     ["resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden for watch unless "
      "sendInitialEvents is provided"]),
    ("watch=1&sendInitialEvents=true&resourceVersionMatch=Exact&allowWatchBookmarks=true",
     ["resourceVersionMatch: Forbidden: sendInitialEvents requires setting resourceVersionMatch "
      "to NotOlderThan", 'resourceVersionMatch: Unsupported value: "Exact": supported values: '
                         '"NotOlderThan"']),
])
def test_list_options_that_do_not_validate(server, query, causes):
    status, body, _ = call(server, "GET", f"{PODS}?{query}")
    assert (status, body["reason"]) == (422, "Invalid")
    assert body["message"].startswith('ListOptions.meta.k8s.io "" is invalid: ')
    assert [f"{c['field']}: {c['message']}" for c in body["details"]["causes"]] == causes


def test_an_empty_value_set_selects_the_empty_value(server):
    """``in ()`` is ``in ("")`` (labels/selector.go parseValues: "()" -> {""}; TestSelectorParse
    lists "x in (foo,,baz),y,z notin ()" among the good strings), not an error."""
    assert call(server, "GET", f"{PODS}?labelSelector=a%20in%20()")[0] == 200


def test_a_watch_resource_version_that_does_not_parse(server):
    # cacher Watch -> storeerr.InterpretWatchError: Invalid on the resource
    status, body, _ = call(server, "GET", f"{PODS}?watch=1&resourceVersion=x")
    assert (status, body["message"]) == (
        422, 'pods "" is invalid: resourceVersion: Invalid value: "x": strconv.ParseUint: '
             'parsing "x": invalid syntax')


def test_watch_timeout_bounds_the_stream(server):
    status, body, _ = call(server, "GET", f"{PODS}?watch=1&timeoutSeconds=nan")
    assert (status, body["message"]) == (400, 'strconv.ParseInt: parsing "nan": invalid syntax')
    started = time.monotonic()
    status, _, payload = server.request("GET", f"{PODS}?watch=1&timeoutSeconds=1", None,
                                        "application/json")
    assert status == 200 and time.monotonic() - started < 5
    started = time.monotonic()
    status, _, payload = server.request("GET", f"{PODS}?watch=true&timeoutSeconds=-5", None,
                                        "application/json")
    assert status == 200 and time.monotonic() - started < 2


@pytest.mark.parametrize("method, path, query, content_type, causes", [
    # ValidateCreateOptions / ValidateUpdateOptions / ValidatePatchOptions
    ("POST", CONFIGMAPS, "dryRun=Bogus", "application/json",
     ('CreateOptions', ['dryRun: Unsupported value: []string{"Bogus"}: supported values: '
                        '"All"'])),
    ("POST", CONFIGMAPS, "fieldValidation=bogus", "application/json",
     ('CreateOptions', ['fieldValidation: Unsupported value: "bogus": supported values: "", '
                        '"Ignore", "Strict", "Warn"'])),
    ("POST", CONFIGMAPS, "fieldManager=" + "m" * 129, "application/json",
     ('CreateOptions', ["fieldManager: Too long: may not be more than 128 bytes"])),
    ("POST", CONFIGMAPS, "fieldManager=a%07b", "application/json",
     ('CreateOptions', ['fieldManager: Invalid value: "a\\ab": invalid character U+0007 '
                        '(at position 1)'])),
    ("PUT", f"{CONFIGMAPS}/x", "dryRun=All&dryRun=None", "application/json",
     ('UpdateOptions', ['dryRun: Unsupported value: []string{"All", "None"}: supported values: '
                        '"All"'])),
    ("PATCH", f"{CONFIGMAPS}/x", "force=true", "application/merge-patch+json",
     ('PatchOptions', ["force: Forbidden: may not be specified for non-apply patch"])),
    ("PATCH", f"{CONFIGMAPS}/x", "", "application/apply-patch+yaml",
     ('PatchOptions', ["fieldManager: Required value: is required for apply patch"])),
])
def test_write_options_that_do_not_validate(server, method, path, query, content_type, causes):
    kind, texts = causes
    status, body, _ = call(server, method, f"{path}?{query}", configmap("x"), content_type)
    text = texts[0] if len(texts) == 1 else f"[{', '.join(texts)}]"
    assert (status, body["message"]) == (422, f'{kind}.meta.k8s.io "" is invalid: {text}')


# -- connections --------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def pki(tmp_path_factory):
    return certs.ensure_pki(tmp_path_factory.mktemp("pki"),
                            datetime.datetime.now(datetime.timezone.utc))


def _closed_within(sock: socket.socket, seconds: float) -> bool:
    """Does the server close the connection (EOF or reset) within ``seconds``?"""
    sock.settimeout(seconds)
    try:
        while sock.recv(4096):
            pass
    except socket.timeout:
        return False
    except (ConnectionResetError, ssl.SSLError):
        pass
    return True


@pytest.mark.parametrize("tls", [False, True])
def test_silent_and_partial_connections_are_closed(tmp_path, pki, tls):
    # kube-apiserver's http.Server: ReadHeaderTimeout (also the TLS handshake's deadline)
    server = ServerThread(tmp_path, timeouts=(0.5, 1.0),
                          ssl_context=pki.server_context() if tls else None)
    try:
        silent = socket.create_connection(("127.0.0.1", server.port))
        assert _closed_within(silent, 5)
        partial = socket.create_connection(("127.0.0.1", server.port))
        if tls:
            partial = pki.client_context().wrap_socket(partial, server_hostname="127.0.0.1")
        partial.sendall(b"GET /api/v1/namespaces HTTP/1.1\r\nHost: x\r\n")
        assert _closed_within(partial, 5)
        silent.close()
        partial.close()
    finally:
        server.stop()


def test_an_idle_connection_is_closed_after_its_request(tmp_path):
    server = ServerThread(tmp_path, timeouts=(0.5, 1.0))
    try:
        sock = socket.create_connection(("127.0.0.1", server.port))
        sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        sock.settimeout(5)
        assert sock.recv(4096).startswith(b"HTTP/1.1 200")
        started = time.monotonic()
        assert _closed_within(sock, 5) and time.monotonic() - started >= 0.8
        sock.close()
    finally:
        server.stop()


def test_a_body_over_the_limit_is_refused_before_it_is_read(server):
    # limitedReadBody (endpoints/handlers/rest.go): 413 "Request entity too large: limit is N"
    message = f"Request entity too large: limit is {MAX_BODY_BYTES}"
    sock = socket.create_connection(("127.0.0.1", server.port))
    token = server.tokens.token_for(ADMIN)
    sock.sendall(f"POST {CONFIGMAPS} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {token}\r\n"
                 f"Content-Type: application/json\r\nContent-Length: {MAX_BODY_BYTES + 1}\r\n\r\n"
                 .encode())
    sock.settimeout(5)
    answer = sock.recv(65536)    # answered without a byte of the body sent
    assert answer.startswith(b"HTTP/1.1 413") and message.encode() in answer
    sock.close()
    big = b'{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"big"},"data":{"k":"' + \
          b"x" * MAX_BODY_BYTES + b'"}}'
    status, body, _ = call(server, "POST", CONFIGMAPS, big,
                           headers={"Transfer-Encoding": "chunked"})
    assert (status, body["reason"], body["message"]) == (413, "RequestEntityTooLarge", message)


def test_compressed_bodies_are_not_inflated(server):
    # kube-apiserver reads a request body as sent: no Content-Encoding is undone
    raw = gzip.compress(json.dumps(configmap("gz")).encode())
    status, _, _ = call(server, "POST", CONFIGMAPS, raw, headers={"Content-Encoding": "gzip"})
    assert status == 400


# -- webhook configurations ---------------------------------------------------------------------

VWC = "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations"


def _webhook_configuration(config_name, client_config, **hook):
    return {"apiVersion": "admissionregistration.k8s.io/v1",
            "kind": "ValidatingWebhookConfiguration", "metadata": {"name": config_name},
            "webhooks": [{"name": "check.example.com", "clientConfig": client_config,
                          "sideEffects": "None", "admissionReviewVersions": ["v1"],
                          "rules": [{"operations": ["CREATE"], "apiGroups": [""],
                                     "apiVersions": ["v1"], "resources": ["pods"]}], **hook}]}


@pytest.mark.parametrize("client_config, hook, cause", [
    # ValidateWebhookURL (apiserver/pkg/util/webhook/validation.go) and its tests in
    # TestValidateValidatingWebhookConfiguration (pkg/apis/admissionregistration/validation)
    ({"url": "http://example.com/x"}, {},
     'webhooks[0].clientConfig.url: Invalid value: "http": \'https\' is the only allowed URL '
     'scheme; desired format: https://host[/path]'),
    ({"url": "https://user:pw@example.com/x"}, {},
     'webhooks[0].clientConfig.url: Invalid value: "user:pw": user information is not '
     'permitted in the URL'),
    ({"url": "https://example.com/x#frag"}, {},
     'webhooks[0].clientConfig.url: Invalid value: "frag": fragments are not permitted in the URL'),
    ({"url": "https://example.com/x?a=b"}, {},
     'webhooks[0].clientConfig.url: Invalid value: "a=b": query parameters are not permitted in '
     'the URL'),
    ({"url": "https:///x"}, {},
     'webhooks[0].clientConfig.url: Invalid value: "": host must be provided; desired format: '
     'https://host[/path]'),
    ({}, {}, "webhooks[0].clientConfig: Required value: exactly one of url or service is required"),
    ({"service": {"namespace": "ns", "name": "n", "path": "foo/"}}, {},
     'webhooks[0].clientConfig.service.path: Invalid value: "foo/": must start with a \'/\''),
    ({"service": {"namespace": "ns", "name": "n", "port": 65536}}, {},
     "webhooks[0].clientConfig.service.port: Invalid value: 65536: port is not valid: must be "
     "between 1 and 65535, inclusive"),
    ({"url": "https://example.com"}, {"sideEffects": "Some"},
     'webhooks[0].sideEffects: Unsupported value: "Some": supported values: "None", '
     '"NoneOnDryRun"'),
    ({"url": "https://example.com"}, {"failurePolicy": "Maybe"},
     'webhooks[0].failurePolicy: Unsupported value: "Maybe": supported values: "Fail", "Ignore"'),
    ({"url": "https://example.com"}, {"matchPolicy": "Fuzzy"},
     'webhooks[0].matchPolicy: Unsupported value: "Fuzzy": supported values: "Equivalent", '
     '"Exact"'),
    ({"url": "https://example.com"}, {"timeoutSeconds": 31},
     "webhooks[0].timeoutSeconds: Invalid value: 31: the timeout value must be between 1 and 30 "
     "seconds"),
    ({"url": "https://example.com"}, {"admissionReviewVersions": ["v2"]},
     'webhooks[0].admissionReviewVersions: Invalid value: ["v2"]: must include at least one of '
     'v1, v1beta1'),
    ({"url": "https://example.com"}, {"name": "check"},
     'webhooks[0].name: Invalid value: "check": should be a domain with at least three segments '
     'separated by dots'),
])
def test_webhook_configurations_are_validated(server, client_config, hook, cause):
    body = _webhook_configuration("cfg", client_config, **hook)
    status, answer, _ = call(server, "POST", VWC, body)
    assert status == 422, answer
    assert cause in [f"{c['field']}: {c['message']}" for c in answer["details"]["causes"]]


def test_a_valid_webhook_configuration_is_stored(server):
    body = _webhook_configuration("ok", {"service": {"namespace": "ns", "name": "n",
                                                     "path": "/validate"}})
    status, created, _ = call(server, "POST", VWC, body)
    assert status == 201, created
    assert call(server, "DELETE", f"{VWC}/ok")[0] == 200


def test_the_webhook_caller_refuses_cleartext():
    client = WebhookClient(service_resolver=lambda service: "http://127.0.0.1:1/x")
    for config in ({"url": "http://example.com/x"}, {"service": {"namespace": "n", "name": "s"}}):
        with pytest.raises(ValueError, match="'https' is the only allowed URL scheme"):
            client.endpoint(config)
    assert client.endpoint({"url": "https://example.com/x"}) == ("https://example.com/x", None)


# -- the sqlite files ---------------------------------------------------------------------------

@pytest.mark.parametrize("umask", [0o022, 0o002, 0o000])
def test_the_sqlite_files_are_private(tmp_path, umask):
    old = os.umask(umask)
    try:
        store = SqliteStore(str(tmp_path / "kvert.db"), synchronous="OFF")
        store.create("configmaps", {**configmap("a"), "metadata": {"name": "a", "namespace": "d"}})
    finally:
        os.umask(old)
    try:
        files = sorted(os.listdir(tmp_path))
        assert files == ["kvert.db", "kvert.db-shm", "kvert.db-wal"]
        assert {f: oct(os.stat(tmp_path / f).st_mode & 0o777) for f in files} == \
            {f: "0o600" for f in files}
    finally:
        store.close()


def test_an_existing_world_readable_store_file_is_made_private(tmp_path):
    path = tmp_path / "old.db"
    path.touch(mode=0o644)
    os.chmod(path, 0o644)
    SqliteStore(str(path), synchronous="OFF").close()
    assert os.stat(path).st_mode & 0o777 == 0o600



# -- subresource bodies and discovery -----------------------------------------------------------

def test_subresource_bodies_decode_into_their_types(server):
    assert call(server, "POST", PODS, pod("sub"))[0] == 201
    cases = [
        (f"{PODS}/sub/binding", {"apiVersion": "v1", "kind": "Binding", "target": "node"},
         'Binding in version "v1" cannot be handled as a Binding: json: cannot unmarshal string '
         'into Go struct field Binding.target of type v1.ObjectReference'),
        (f"{PODS}/sub/eviction", {"apiVersion": "policy/v1", "kind": "Eviction",
                                  "deleteOptions": []},
         'Eviction in version "v1" cannot be handled as a Eviction: json: cannot unmarshal array '
         'into Go struct field Eviction.deleteOptions of type v1.DeleteOptions'),
    ]
    for path, body, message in cases:
        status, answer, _ = call(server, "POST", path, body)
        assert (status, answer["message"]) == (400, message)


def test_an_unserved_discovery_version_falls_back_to_legacy_discovery(server):
    # WrapAggregatedDiscoveryToHandler: only a negotiated apidiscovery version aggregates
    accept = "application/json;as=APIGroupDiscoveryList;v=v9;g=apidiscovery.k8s.io"
    status, body, _ = call(server, "GET", "/apis", headers={"Accept": accept})
    assert (status, body["kind"]) == (200, "APIGroupList")
