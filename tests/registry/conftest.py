import pytest

from kvert.client import InProcessClient
from kvert.clock import VirtualClock
from kvert.registry import AdmissionChain, Registry
from kvert.store import open_store


class Env:
    """A registry over a memory store in virtual time, with a client and an admission chain."""

    def __init__(self):
        self.clock = VirtualClock()
        self.store = open_store("memory", clock=self.clock)
        self.admission = AdmissionChain()
        self.registry = Registry(self.store, self.clock, self.admission, seed=7)
        self.client = InProcessClient(self.registry)

    def run(self, coro):
        return self.clock.run(coro)


@pytest.fixture
def env():
    e = Env()
    yield e
    e.store.close()


def pod(name="web", cpu="500m", memory="128Mi", limits=True, labels=None, **spec):
    resources = {"requests": {"cpu": cpu, "memory": memory}}
    if limits:
        resources["limits"] = {"cpu": cpu, "memory": memory}
    return {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "labels": labels or {"app": "web"}},
        "spec": {"containers": [{"name": "app", "image": "nginx:1.27", "resources": resources}],
                 **spec},
    }
