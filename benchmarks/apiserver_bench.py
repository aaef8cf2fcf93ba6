"""API server throughput over HTTPS: get, list (1k and 10k pods), create, patch, and watch
fan-out latency to 100 watchers, per store backend. Prints figures; asserts nothing.

usage: python benchmarks/apiserver_bench.py [--backend sqlite|etcd|memory|all] [--authorization]

``--authorization``: the Node,RBAC authorizer on, requests made by a user bound to
``edit`` in the namespace (so RBAC evaluates each request, unlike for system:masters).
"""

from __future__ import annotations

import argparse
import asyncio
import datetime
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

from aiohttp import ClientSession, TCPConnector

from kvert.apiserver.admission import default_chain
from kvert.apiserver.certs import ensure_pki
from kvert.apiserver.server import ApiServer
from kvert.auth import default_authorizer
from kvert.auth.policy import ensure_bootstrap_policy
from kvert.auth.tokens import ADMIN, TokenAuthenticator
from kvert.auth.user import AUTHENTICATED, User
from kvert.clock import WallClock
from kvert.store import open_store
from kvert.store.etcd import LocalEtcd

CONCURRENCY = 16


def pod(name: str) -> dict:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "labels": {"app": "bench"}},
            "spec": {"containers": [{"name": "c", "image": "nginx",
                                     "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}}}]}}


async def rate(label: str, n: int, make_request, unit: str = "req/s") -> None:
    queue = list(range(n))
    started = time.perf_counter()

    async def worker():
        while queue:
            await make_request(queue.pop())

    await asyncio.gather(*(worker() for _ in range(CONCURRENCY)))
    elapsed = time.perf_counter() - started
    print(f"  {label:<34} {n / elapsed:10.0f} {unit}")


async def bench(url_store: str, tmp: Path, authorization: bool = False) -> None:
    clock = WallClock()
    store = open_store(url_store, clock=clock)
    tokens = TokenAuthenticator.load_or_create(tmp / "tokens.csv")
    tokens._users["bench-user-token"] = User("bench-user", "bench-user", (AUTHENTICATED,))
    pki = ensure_pki(tmp / "pki", datetime.datetime.fromtimestamp(clock.now(), datetime.UTC))
    server = ApiServer(store, clock, authenticator=tokens, admission=default_chain(store, clock),
                       authorizer=default_authorizer(store) if authorization else None)
    await server.bootstrap()
    token = tokens.token_for(ADMIN)
    if authorization:
        await ensure_bootstrap_policy(server.registry)
        # edit, as the aggregation controller would have filled it
        edit = server.registry.get("rbac.authorization.k8s.io/clusterroles", "system:aggregate-to-edit")
        view = server.registry.get("rbac.authorization.k8s.io/clusterroles", "system:aggregate-to-view")
        await server.registry.create("rbac.authorization.k8s.io/clusterroles", {
            "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
            "metadata": {"name": "bench-edit"}, "rules": edit["rules"] + view["rules"]})
        await server.registry.create("rbac.authorization.k8s.io/rolebindings", {
            "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
            "metadata": {"name": "bench", "namespace": "default"},
            "roleRef": {"kind": "ClusterRole", "name": "bench-edit"},
            "subjects": [{"kind": "User", "name": "bench-user"}]})
        token = "bench-user-token"
    base = await server.start("127.0.0.1", 0, pki.server_context())
    headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
    ns = f"{base}/api/v1/namespaces/default/pods"
    async with ClientSession(connector=TCPConnector(ssl=pki.client_context(), limit=200),
                             headers=headers) as http:
        async def create(i):
            async with http.post(ns, data=json.dumps(pod(f"p{i}"))) as r:
                assert r.status == 201, await r.text()

        async def get(i):
            async with http.get(f"{ns}/p{i % 1000}") as r:
                await r.read()

        async def patch(i):
            async with http.patch(f"{ns}/p{i % 1000}", data=json.dumps({"metadata": {"labels": {"n": str(i)}}}),
                                  headers={"Content-Type": "application/merge-patch+json"}) as r:
                assert r.status == 200, await r.text()

        await rate("create pod", 1000, create)
        await rate("get pod", 3000, get)
        await rate("patch pod (merge)", 1000, patch)

        async def list_all(_):
            async with http.get(ns) as r:
                body = await r.read()
                assert len(body) > 1000

        await rate("list 1k pods", 30, list_all, "lists/s")
        for i in range(1000, 10000):   # seed the rest straight into the store
            store.create("pods", {**pod(f"p{i}"), "metadata": {"name": f"p{i}", "namespace": "default"}})
        await rate("list 10k pods", 5, list_all, "lists/s")

        latencies: list[float] = []
        ready = asyncio.Event()
        opened = 0
        rv = str(store.current_revision())

        async def watcher():
            nonlocal opened
            async with http.get(f"{ns}?watch=1&resourceVersion={rv}&timeoutSeconds=60") as r:
                opened += 1
                if opened == 100:
                    ready.set()
                got = 0
                async for line in r.content:
                    event = json.loads(line)
                    sent = float(event["object"]["metadata"]["annotations"]["sent"])
                    latencies.append(time.perf_counter() - sent)
                    got += 1
                    if got == 20:
                        return

        tasks = [asyncio.ensure_future(watcher()) for _ in range(100)]
        await asyncio.wait_for(ready.wait(), 30)
        await asyncio.sleep(0.2)
        for i in range(20):
            body = {"metadata": {"annotations": {"sent": repr(time.perf_counter())}}}
            async with http.patch(f"{ns}/p{i}", data=json.dumps(body),
                                  headers={"Content-Type": "application/merge-patch+json"}) as r:
                await r.read()
            await asyncio.sleep(0.05)
        await asyncio.wait_for(asyncio.gather(*tasks), 60)
        latencies.sort()
        print(f"  {'watch fan-out, 100 watchers':<34} p50 {statistics.median(latencies) * 1000:6.1f} ms"
              f"   p99 {latencies[int(len(latencies) * 0.99) - 1] * 1000:6.1f} ms"
              f"   ({len(latencies)} deliveries)")
    await server.stop()
    store.close()


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--backend", default="all", choices=["memory", "sqlite", "etcd", "all"])
    parser.add_argument("--authorization", action="store_true",
                        help="authorize every request with Node,RBAC as an RBAC-bound user")
    args = parser.parse_args(argv)
    backends = ["memory", "sqlite", "etcd"] if args.backend == "all" else [args.backend]
    for backend in backends:
        with tempfile.TemporaryDirectory() as tmp:
            tmp_path = Path(tmp)
            if backend == "etcd":
                if not LocalEtcd.available():
                    print("etcd: skipped (etcd not installed; scripts/setup --test installs it)")
                    continue
                etcd = LocalEtcd(str(tmp_path / "etcd")).start()
                url = "etcd://" + etcd.endpoint.split("://", 1)[1]
            else:
                etcd, url = None, "memory" if backend == "memory" else f"sqlite:{tmp_path / 'kvert.db'}"
            print(f"{backend}:")
            try:
                asyncio.run(bench(url, tmp_path, args.authorization))
            finally:
                if etcd is not None:
                    etcd.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
