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
    def __init__(self, tmp_path):
        self.loop = asyncio.new_event_loop()
        self.store = open_store("memory", clock=WallClock())
        self.tokens = TokenAuthenticator.load_or_create(tmp_path / "tokens.csv")
        self.server = ApiServer(self.store, WallClock(), authenticator=self.tokens,
                                admission=default_chain(self.store, WallClock()), seed=3)
        self.port = 0
        ready = threading.Event()

        def run():
            asyncio.set_event_loop(self.loop)
            self.loop.run_until_complete(self.server.bootstrap())
            url = self.loop.run_until_complete(self.server.start("127.0.0.1", 0))
            self.port = int(url.rsplit(":", 1)[1])
            ready.set()
            self.loop.run_forever()

        self.thread = threading.Thread(target=run, daemon=True)
        self.thread.start()
        ready.wait(10)

    def request(self, method: str, path: str, body: bytes | None, content_type: str):
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
        headers = {"Authorization": f"Bearer {self.tokens.token_for(ADMIN)}",
                   "Content-Type": content_type}
        try:
            conn.request(method, path, body=body, headers=headers)
            response = conn.getresponse()
            return response.status, response.getheader("Content-Type", ""), response.read()
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
# Bodies that can never be a valid object for the addressed resource.
bodies = st.one_of(
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
