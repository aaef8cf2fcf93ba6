"""Fuzzing the HTTP API: malformed bodies, content types, nesting, names and selectors.

Every answer must be a proper Status (never a 500, never a hung connection) and the
store must not change. The server runs on loopback in a thread; requests are bounded.
"""

from __future__ import annotations

import asyncio
import http.client
import json
import threading
import urllib.parse

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kvert.apiserver.admission import default_chain
from kvert.auth.tokens import ADMIN, TokenAuthenticator
from kvert.apiserver.server import ApiServer
from kvert.clock import WallClock
from kvert.store import open_store


class ServerThread:
    """An API server on loopback in its own thread; ``timeouts``: (header, idle) seconds,
    ``ssl_context``: serve HTTPS."""

    def __init__(self, tmp_path, *, store=None, timeouts=None, ssl_context=None):
        self.loop = asyncio.new_event_loop()
        self.store = store or open_store("memory", clock=WallClock())
        self.tokens = TokenAuthenticator.load_or_create(tmp_path / "tokens.csv")
        self.server = ApiServer(self.store, WallClock(), authenticator=self.tokens,
                                admission=default_chain(self.store, WallClock()), seed=3)
        if timeouts is not None:
            self.server.header_timeout, self.server.idle_timeout = timeouts
        self.port = 0
        ready = threading.Event()

        def run():
            asyncio.set_event_loop(self.loop)
            self.loop.run_until_complete(self.server.bootstrap())
            url = self.loop.run_until_complete(self.server.start("127.0.0.1", 0, ssl_context))
            self.port = int(url.rsplit(":", 1)[1])
            ready.set()
            self.loop.run_forever()

        self.thread = threading.Thread(target=run, daemon=True)
        self.thread.start()
        ready.wait(10)

    def request(self, method: str, path: str, body: bytes | None, content_type: str,
                headers: dict | None = None):
        """(status, Content-Type, body); bounded by a 10 s client timeout."""
        status, response_headers, payload = self.exchange(method, path, body, content_type,
                                                          headers)
        return status, response_headers.get("Content-Type", ""), payload

    def exchange(self, method: str, path: str, body, content_type: str | None,
                 headers: dict | None = None):
        """(status, headers, body); ``headers`` replace the defaults (a bearer token and
        ``content_type``), a None value drops one."""
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
        sent = {"Authorization": f"Bearer {self.tokens.token_for(ADMIN)}"}
        if content_type is not None:
            sent["Content-Type"] = content_type
        sent.update(headers or {})
        try:
            conn.putrequest(method, path, skip_accept_encoding=True)
            for name, value in sent.items():
                if value is not None:
                    conn.putheader(name, value)
            chunked = sent.get("Transfer-Encoding") == "chunked"
            if body is not None and not chunked and "Content-Length" not in sent:
                conn.putheader("Content-Length", str(len(body)))
            conn.endheaders()
            if body is not None:
                conn.send(b"%x\r\n%s\r\n0\r\n\r\n" % (len(body), body) if chunked and body
                          else b"0\r\n\r\n" if chunked else body)
            response = conn.getresponse()
            return response.status, response.headers, response.read()
        finally:
            conn.close()

    def stop(self):
        asyncio.run_coroutine_threadsafe(self.server.stop(), self.loop).result(10)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)
        self.store.close()


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    s = ServerThread(tmp_path_factory.mktemp("fuzz"))
    yield s
    s.stop()


RESOURCES = ["/api/v1/namespaces/default/pods", "/api/v1/namespaces/default/configmaps",
             "/api/v1/nodes", "/apis/apps/v1/namespaces/default/deployments",
             "/apis/policy/v1/namespaces/default/poddisruptionbudgets",
             "/apis/autoscaling.k8s.io/v1/namespaces/default/verticalpodautoscalers",
             "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
             "/api/v1/namespaces/nowhere/pods", "/apis/nope.example/v1/things"]
names = st.one_of(st.text(min_size=1, max_size=300), st.sampled_from(["Bad_Name", "-x", "a" * 300, ".", ".."]))
json_values = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), st.text(max_size=50)),
    lambda children: st.one_of(st.lists(children, max_size=5),
                               st.dictionaries(st.text(max_size=10), children, max_size=5)),
    max_leaves=30)


def _laughs(levels: int, fanout: int) -> bytes:
    """A YAML document whose aliases expand to fanout**levels scalars."""
    lines = ["l0: &l0 [" + ",".join(["lol"] * fanout) + "]"]
    lines += [f"l{i}: &l{i} [" + ",".join([f"*l{i - 1}"] * fanout) + "]" for i in range(1, levels)]
    return ("\n".join(lines) + "\nkind: NotAKind\n").encode()


# Bodies that can never be a valid object for the addressed resource.
bodies = st.one_of(
    st.tuples(st.integers(1, 9), st.integers(1, 9)).map(lambda lf: _laughs(*lf)),
    st.binary(max_size=200),
    json_values.filter(lambda v: not isinstance(v, dict)).map(lambda v: json.dumps(v).encode()),
    st.dictionaries(st.sampled_from(["spec", "status", "data", "apiVersion"]), json_values, max_size=3)
      .map(lambda d: json.dumps({**d, "kind": "NotAKind"}).encode()),
    st.integers(min_value=200, max_value=5000).map(lambda n: (b"[" * n) + (b"]" * n)),
    st.integers(min_value=200, max_value=3000).map(lambda n: (b'{"a":' * n) + b"1" + (b"}" * n)),
    names.map(lambda n: json.dumps({"apiVersion": "v1", "kind": "ConfigMap",
                                    "metadata": {"name": n + "_!"}}).encode()),
)
content_types = st.sampled_from(["application/json", "application/yaml", "text/plain", "",
                                 "application/merge-patch+json", "application/json-patch+json",
                                 "application/strategic-merge-patch+json",
                                 "application/apply-patch+yaml", "multipart/form-data; boundary=x"])
selectors = st.one_of(st.text(max_size=40), st.sampled_from(["a in (", "!", "x notin", "a=b,,", "==",
                                                              "metadata.name", "spec.bogus=1"]))


def _check(status: int, content_type: str, body: bytes) -> dict:
    assert status != 500, body[:500]
    assert status < 500 or status == 504
    assert content_type.startswith("application/json"), (status, content_type, body[:200])
    document = json.loads(body)
    if status >= 400:
        assert document["kind"] == "Status" and document["code"] == status
        assert document["status"] == "Failure" and document["message"]
    return document


@settings(max_examples=120, deadline=None, suppress_health_check=list(HealthCheck))
@given(method=st.sampled_from(["POST", "PUT", "PATCH"]), resource=st.sampled_from(RESOURCES),
       name=names, body=bodies, content_type=content_types)
def test_malformed_writes_get_a_status_and_change_nothing(server, method, resource, name, body,
                                                          content_type):
    before = server.store.current_revision()
    path = resource if method == "POST" else f"{resource}/{urllib.parse.quote(name, safe='')}"
    status, ctype, payload = server.request(method, path, body, content_type)
    assert status >= 400
    _check(status, ctype, payload)
    assert server.store.current_revision() == before


@settings(max_examples=120, deadline=None, suppress_health_check=list(HealthCheck))
@given(resource=st.sampled_from(RESOURCES), label=selectors, field=selectors,
       limit=st.one_of(st.just(""), st.text(max_size=6)), rv=st.one_of(st.just(""), st.text(max_size=8)),
       cont=st.one_of(st.just(""), st.text(max_size=20)))
def test_list_parameters_never_break_the_server(server, resource, label, field, limit, rv, cont):
    query = urllib.parse.urlencode({"labelSelector": label, "fieldSelector": field, "limit": limit,
                                    "resourceVersion": rv, "continue": cont})
    status, ctype, payload = server.request("GET", f"{resource}?{query}", None, "application/json")
    _check(status, ctype, payload)


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(resource=st.sampled_from(RESOURCES), name=names, grace=st.text(max_size=5))
def test_deletes_of_missing_or_malformed_names(server, resource, name, grace):
    before = server.store.current_revision()
    path = f"{resource}/{urllib.parse.quote(name, safe='')}?gracePeriodSeconds={urllib.parse.quote(grace)}"
    status, ctype, payload = server.request("DELETE", path, None, "application/json")
    assert status >= 400
    _check(status, ctype, payload)
    assert server.store.current_revision() == before


# -- the campaign: typed bodies, query parameters and headers ------------------------------------
#
# Every answer below 500 (a Status when it is an error), none hung (each request is bounded
# by the client's timeout; a watch need only start), and a refused request leaves the store
# as it was. Bodies are well typed for their kind, so what is fuzzed is what lies past the
# decoder: defaulting, admission, validation and the store.

QUANTITIES = st.sampled_from(["0", "1", "100m", "1.5", "1Gi", "128974848", "129e6", "1e3",
                              "-1", "0.000000001", "12Ei", "999999999999999999999", "1.", ".5",
                              "+1", "5n", "1Ti"])
HOSTILE_TEXT = st.one_of(st.text(max_size=20), st.sampled_from(
    ["", " ", "-", ".", "..", "a" * 300, "\u0663", "\ufffd", "\x00", "A", "a/b", "*", "$x",
     "kubernetes.io/x", "1" * 40, "null", "true"]))
TIMES = st.sampled_from(["2026-01-01T00:00:00Z", "1970-01-01T00:00:00Z", "2026-01-01T00:00:00.5+02:00",
                         "9999-12-31T23:59:59Z"])
_SCALARS = {
    "str": HOSTILE_TEXT,
    "int32": st.one_of(st.integers(-3, 3), st.sampled_from([-(2**31), 2**31 - 1, 65535, 65536])),
    "int64": st.one_of(st.integers(-3, 3), st.sampled_from([-(2**63), 2**63 - 1, 10**12])),
    "bool": st.booleans(),
    "double": st.one_of(st.integers(-5, 5), st.floats(allow_nan=False, allow_infinity=False)),
    "bytes": st.sampled_from(["", "YQ==", "aGVsbG8="]),
    "qty": st.one_of(QUANTITIES, st.integers(-3, 10**6)),
    "ios": st.one_of(st.integers(-3, 3), st.sampled_from(["25%", "1", "http", "", "-1%", "101%"])),
    "time": TIMES, "microtime": TIMES,
    "any": json_values, "obj": st.dictionaries(st.text(max_size=5), json_values, max_size=2),
}
# (not ResourceQuota: its usage is recomputed in the background after writes, which would
# move the store's revision under a later, refused request)
TYPED_KINDS = {
    "/api/v1/namespaces/default/pods": ("v1", "Pod"),
    "/api/v1/namespaces/default/configmaps": ("v1", "ConfigMap"),
    "/api/v1/namespaces/default/services": ("v1", "Service"),
    "/api/v1/namespaces/default/limitranges": ("v1", "LimitRange"),
    "/api/v1/nodes": ("v1", "Node"),
    "/apis/apps/v1/namespaces/default/deployments": ("apps/v1", "Deployment"),
    "/apis/apps/v1/namespaces/default/replicasets": ("apps/v1", "ReplicaSet"),
    "/apis/policy/v1/namespaces/default/poddisruptionbudgets": ("policy/v1", "PodDisruptionBudget"),
    "/apis/scheduling.k8s.io/v1/priorityclasses": ("scheduling.k8s.io/v1", "PriorityClass"),
    "/apis/coordination.k8s.io/v1/namespaces/default/leases": ("coordination.k8s.io/v1", "Lease"),
}


def _typed(t, depth: int):
    """Values of a parsed OpenAPI type (``kvert.apiserver.openapi.schemas``)."""
    tag = t[0]
    if tag == "scalar":
        return _SCALARS[t[1]]
    if tag == "enum":
        return st.one_of(st.sampled_from(t[1]), HOSTILE_TEXT)
    if tag == "list":
        return st.lists(_typed(t[1], depth), max_size=2 if depth > 1 else 0)
    if tag == "map":
        return st.dictionaries(HOSTILE_TEXT, _typed(t[1], depth), max_size=2 if depth > 1 else 0)
    return _struct(t[1], depth - 1)


def _struct(name: str, depth: int):
    from kvert.apiserver.openapi import schemas as S
    d = S.DEFINITIONS.get(name)
    if d is None or depth <= 0:
        return st.just({})
    return st.fixed_dictionaries({}, optional={
        f.name: (_struct(S.OBJECT_META, 1) if f.name == "metadata" else _typed(f.type, depth))
        for f in d.fields if f.name not in ("apiVersion", "kind")})


def _typed_body(path: str):
    from kvert.apiserver.openapi import schemas as S
    api_version, kind = TYPED_KINDS[path]
    group, _, version = api_version.rpartition("/")
    name = S.kind_definition(group, version, kind)
    named = st.fixed_dictionaries({"name": st.one_of(st.sampled_from(["fz", "fz-1"]), HOSTILE_TEXT)},
                                  optional={"labels": st.dictionaries(HOSTILE_TEXT, HOSTILE_TEXT,
                                                                      max_size=2)})
    return st.tuples(named, _struct(name, 6)).map(
        lambda p: {**p[1], "apiVersion": api_version, "kind": kind, "metadata": p[0]})


typed_writes = st.sampled_from(sorted(TYPED_KINDS)).flatmap(
    lambda path: st.tuples(st.just(path), _typed_body(path)))


def _probe(server, method: str, path: str, body: bytes | None, content_type: str | None,
           headers: dict | None = None):
    """(status, Content-Type, body); a watch that started (200) is not read to its end."""
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    sent = {"Authorization": f"Bearer {server.tokens.token_for(ADMIN)}"}
    if content_type is not None:
        sent["Content-Type"] = content_type
    sent.update(headers or {})
    try:
        conn.putrequest(method, path, skip_accept_encoding=True)
        for name, value in sent.items():
            conn.putheader(name, value)
        if body is not None:
            conn.putheader("Content-Length", str(len(body)))
        conn.endheaders(body)
        response = conn.getresponse()
        streaming = response.status == 200 and "chunked" in (response.getheader(
            "Transfer-Encoding") or "") and method == "GET"
        return response.status, response.getheader("Content-Type", ""), \
            b"" if streaming else response.read()
    finally:
        conn.close()


def _check_answer(server, before: int, status: int, ctype: str, payload: bytes) -> None:
    # 504 only for a resourceVersion newer than the store's ("Too large resource version",
    # as kube-apiserver says while it waits for its cache)
    assert status < 500 or (status == 504 and b"Too large resource version" in payload), \
        payload[:500]
    if status >= 400:
        if not ctype.startswith("application/json"):
            # refused by the HTTP layer before any handler, in text as Go's net/http does
            # (malformed request 400, unsupported Expect 417, headers too large 431)
            assert status in (400, 413, 417, 431), (status, ctype, payload[:200])
        else:
            _check(status, ctype, payload)
        assert server.store.current_revision() == before, payload[:300]


@settings(max_examples=400, deadline=None, suppress_health_check=list(HealthCheck))
@given(write=typed_writes, method=st.sampled_from(["POST", "POST", "PUT", "PATCH"]),
       validation=st.sampled_from(["", "Strict", "Warn", "Ignore"]))
def test_typed_bodies_never_break_the_server(server, write, method, validation):
    path, body = write
    if method != "POST":
        path = f"{path}/{urllib.parse.quote(str(body['metadata']['name']), safe='')}"
    content_type = "application/merge-patch+json" if method == "PATCH" else "application/json"
    query = f"?fieldValidation={validation}" if validation else ""
    before = server.store.current_revision()
    status, ctype, payload = _probe(server, method, path + query, json.dumps(body).encode(),
                                    content_type)
    _check_answer(server, before, status, ctype, payload)


PARAMETERS = ["watch", "timeoutSeconds", "limit", "continue", "resourceVersion",
              "resourceVersionMatch", "allowWatchBookmarks", "sendInitialEvents", "labelSelector",
              "fieldSelector", "dryRun", "fieldManager", "fieldValidation", "force",
              "gracePeriodSeconds", "propagationPolicy", "orphanDependents", "includeObject",
              "pretty", "timeout"]
HOSTILE_VALUES = st.one_of(
    st.sampled_from(["nan", "NaN", "inf", "-inf", "Infinity", "-1", "0", "1", "1.5", "1e3",
                     str(2**63), str(2**64), str(-(2**63) - 1), "9" * 40, "\u0663", "\uff11\uff12",
                     "", "true", "false", "True", "yes", "All", "None", "Exact", "NotOlderThan",
                     "Strict", "Orphan", "Foreground", "a in ()", "a in (", "!", "a=b,,",
                     "metadata.name=x", "spec.nodeName!=", "m" * 129, "\x07", "\ud800"]),
    st.text(max_size=12))
query_strings = st.lists(st.tuples(st.sampled_from(PARAMETERS), HOSTILE_VALUES), max_size=5).map(
    lambda pairs: urllib.parse.urlencode(pairs, errors="surrogatepass"))


@settings(max_examples=400, deadline=None, suppress_health_check=list(HealthCheck))
@given(query=query_strings, target=st.sampled_from([
    ("GET", "/api/v1/namespaces/default/configmaps"), ("GET", "/api/v1/namespaces/default/pods/x"),
    ("GET", "/api/v1/watch/namespaces/default/configmaps"), ("POST", "/api/v1/namespaces/default/configmaps"),
    ("PUT", "/api/v1/namespaces/default/configmaps/q"), ("PATCH", "/api/v1/namespaces/default/configmaps/q"),
    ("DELETE", "/api/v1/namespaces/default/configmaps/q"),
    ("DELETE", "/api/v1/namespaces/default/configmaps"), ("GET", "/apis/apps/v1/deployments")]),
    patch_type=st.sampled_from(["application/merge-patch+json", "application/apply-patch+yaml",
                                "application/strategic-merge-patch+json"]))
def test_hostile_query_parameters(server, query, target, patch_type):
    method, path = target
    body = None
    content_type = "application/json"
    if method in ("POST", "PUT", "PATCH"):
        body = json.dumps({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "q"},
                           "data": {"k": "v"}}).encode()
        if method == "PATCH":
            content_type = patch_type
    before = server.store.current_revision()
    status, ctype, payload = _probe(server, method, f"{path}?{query}", body, content_type)
    _check_answer(server, before, status, ctype, payload)


header_sets = st.dictionaries(
    st.sampled_from(["Content-Type", "Accept", "Content-Encoding", "Impersonate-User",
                     "Impersonate-Group", "Impersonate-Extra-scopes", "Impersonate-Uid",
                     "Authorization", "User-Agent", "X-Long", "Accept-Encoding", "Expect"]),
    st.one_of(
        st.sampled_from([
            "application/json; charset=utf-16", "application/json;;;=", "application/json; q=nan",
            "application/yaml; x=\"", "application/vnd.kubernetes.protobuf", "*/*", "",
            "application/json;as=Table;g=meta.k8s.io;v=v1",
            "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1",
            "application/json;as=APIGroupDiscoveryList;v=v9;g=apidiscovery.k8s.io",
            "gzip", "br", "deflate", "x-unknown", "Bearer", "Bearer ", "Basic YTpi", "Bearer \x7f",
            "100-continue", "system:masters", "\u00e9t\u00e9"]),
        st.integers(1, 70_000).map(lambda n: "a" * n),
        st.text(alphabet=st.characters(min_codepoint=0x20, max_codepoint=0x7e), max_size=40)),
    max_size=4)


@settings(max_examples=250, deadline=None, suppress_health_check=list(HealthCheck))
@given(headers=header_sets, target=st.sampled_from([
    ("GET", "/api/v1/namespaces/default/configmaps"), ("POST", "/api/v1/namespaces/default/configmaps"),
    ("PATCH", "/api/v1/namespaces/default/configmaps/h"), ("GET", "/apis"), ("GET", "/openapi/v2"),
    ("GET", "/api/v1/namespaces/default/configmaps?watch=1&timeoutSeconds=1")]),
    chunked=st.booleans())
def test_hostile_headers(server, headers, target, chunked):
    method, path = target
    body = None
    if method != "GET":
        body = json.dumps({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "h"}}).encode()
    before = server.store.current_revision()
    sent = dict(headers)
    content_type = sent.pop("Content-Type", "application/merge-patch+json" if method == "PATCH"
                            else "application/json")
    if chunked and body is not None:
        sent["Transfer-Encoding"] = "chunked"
        status, response_headers, payload = server.exchange(method, path, body, content_type, sent)
        ctype = response_headers.get("Content-Type", "")
    else:
        status, ctype, payload = _probe(server, method, path, body, content_type, sent)
    _check_answer(server, before, status, ctype, payload)


DIRECTIVES = st.sampled_from([
    {"$patch": "delete"}, {"$patch": "replace"}, {"$patch": "merge"}, {"$patch": 5},
    {"$retainKeys": ["name"]}, {"$retainKeys": "x"}, {"$setElementOrder/containers": [{"name": "c"}]},
    {"$setElementOrder/containers": 7}, {"$deleteFromPrimitiveList/finalizers": ["example.com/hold"]},
    {"$deleteFromPrimitiveList/finalizers": {"a": 1}}])
json_patches = st.lists(st.fixed_dictionaries(
    {"op": st.sampled_from(["add", "remove", "replace", "move", "copy", "test", "bogus"]),
     "path": st.sampled_from(["/spec", "/spec/containers/0", "/spec/containers/-", "/metadata",
                              "/metadata/name", "/status", "", "/", "/~2", "/spec/containers/99"])},
    optional={"value": json_values, "from": st.sampled_from(["/spec", "/metadata/labels", "x"])}),
    max_size=3)


@pytest.fixture(scope="module")
def patched_pod(server):
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "fz-patch", "labels": {"a": "b"},
                                                           "finalizers": ["example.com/hold"]},
           "spec": {"containers": [{"name": "c", "image": "i", "ports": [{"containerPort": 80}]}]}}
    status, _, payload = server.request("POST", "/api/v1/namespaces/default/pods",
                                        json.dumps(pod).encode(), "application/json")
    assert status in (201, 409), payload
    return "/api/v1/namespaces/default/pods/fz-patch"


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(kind=st.sampled_from(["merge", "strategic", "json", "apply"]),
       spec=_struct("io.k8s.api.core.v1.PodSpec", 3), directive=DIRECTIVES,
       where=st.sampled_from(["top", "spec", "container"]), ops=json_patches,
       raw=json_values)
def test_hostile_patches(server, patched_pod, kind, spec, directive, where, ops, raw):
    if kind == "json":
        body = ops
    elif where == "top":
        body = {**directive, "spec": spec}
    elif where == "spec":
        body = {"spec": {**spec, **directive}}
    else:
        body = {"spec": {"containers": [{"name": "c", **directive, "image": raw}]}}
    content_type = {"merge": "application/merge-patch+json", "json": "application/json-patch+json",
                    "strategic": "application/strategic-merge-patch+json",
                    "apply": "application/apply-patch+yaml"}[kind]
    query = "?fieldManager=fuzz&force=true" if kind == "apply" else ""
    if kind == "apply":
        body = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "fz-patch"}, **body}
    before = server.store.current_revision()
    status, ctype, payload = _probe(server, "PATCH", patched_pod + query, json.dumps(body).encode(),
                                    content_type)
    _check_answer(server, before, status, ctype, payload)


@pytest.fixture(scope="module")
def workloads(server, patched_pod):
    deployment = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "fz-scale"},
                  "spec": {"selector": {"matchLabels": {"a": "b"}},
                           "template": {"metadata": {"labels": {"a": "b"}},
                                        "spec": {"containers": [{"name": "c", "image": "i"}]}}}}
    status, _, payload = server.request("POST", "/apis/apps/v1/namespaces/default/deployments",
                                        json.dumps(deployment).encode(), "application/json")
    assert status in (201, 409), payload
    return {"binding": ("POST", patched_pod + "/binding", "io.k8s.api.core.v1.Binding"),
            "eviction": ("POST", patched_pod + "/eviction", "io.k8s.api.policy.v1.Eviction"),
            "scale": ("PUT", "/apis/apps/v1/namespaces/default/deployments/fz-scale/scale",
                      "io.k8s.api.autoscaling.v1.Scale"),
            "status": ("PUT", patched_pod + "/status", "io.k8s.api.core.v1.Pod")}


@settings(max_examples=200, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data(), which=st.sampled_from(["binding", "eviction", "scale", "status"]),
       dry_run=st.booleans())
def test_subresource_bodies(server, workloads, data, which, dry_run):
    method, path, definition = workloads[which]
    body = data.draw(st.one_of(_struct(definition, 4), json_values))
    if isinstance(body, dict) and data.draw(st.booleans()):
        body.setdefault("metadata", {})["name"] = "fz-patch" if which != "scale" else "fz-scale"
    before = server.store.current_revision()
    status, ctype, payload = _probe(server, method, path + ("?dryRun=All" if dry_run else ""),
                                    json.dumps(body).encode(), "application/json")
    _check_answer(server, before, status, ctype, payload)
