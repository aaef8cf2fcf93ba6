"""A registry over a memory store with kvert's default admission chain."""

import pytest

from kvert.apiserver.admission import bootstrap, default_chain
from kvert.client import InProcessClient
from kvert.clock import VirtualClock
from kvert.registry import Registry
from kvert.store import open_store


class Env:
    def __init__(self):
        self.clock = VirtualClock()
        self.store = open_store("memory", clock=self.clock)
        self.admission = default_chain(self.store, self.clock)
        self.registry = Registry(self.store, self.clock, self.admission, seed=7)
        self.client = InProcessClient(self.registry)
        self.run(bootstrap(self.registry))

    def run(self, coro):
        return self.clock.run(coro)

    def create(self, resource, obj, **kw):
        return self.run(self.client.create(resource, obj, **kw))

    def get(self, resource, name, namespace=""):
        return self.registry.get(resource, name, namespace)

    def namespace(self, name, labels=None):
        return self.create("namespaces", {"apiVersion": "v1", "kind": "Namespace",
                                          "metadata": {"name": name, "labels": labels or {}}})


@pytest.fixture
def env():
    e = Env()
    yield e
    e.store.close()


def pod(name="web", *, requests=None, limits=None, containers=None, labels=None, namespace=None,
        **spec):
    """A pod with one container ``app`` (or the given containers)."""
    if containers is None:
        resources = {}
        if requests:
            resources["requests"] = dict(requests)
        if limits:
            resources["limits"] = dict(limits)
        containers = [{"name": "app", "image": "nginx:1.27", "resources": resources}]
    meta = {"name": name, "labels": labels or {"app": "web"}}
    if namespace:
        meta["namespace"] = namespace
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta,
            "spec": {"containers": containers, **spec}}
