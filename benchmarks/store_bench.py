"""Store throughput: create, update, get, list and watch delivery per backend.

    python benchmarks/store_bench.py [--n N] [--backend memory|sqlite|etcd|all] [--watchers W]

Objects are pod-sized (~1 KB of JSON). sqlite writes are fsync-bound (synchronous=FULL),
so their figures say more about the disk than about the code. etcd runs as a temporary
local etcd (its data next to the sqlite file, so on the same disk); every etcd operation
is at least one HTTP round trip to it, and a write also waits for its own event to come
back through the store's watch stream. ``all`` includes etcd when an ``etcd`` binary is
on PATH.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import tempfile
import time
from collections.abc import Callable

from kvert.clock import WallClock
from kvert.store import EtcdStore, MemoryStore, SqliteStore
from kvert.store.etcd import LocalEtcd

RESOURCE = "pods"


def pod(i: int) -> dict:
    return {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": f"pod-{i:06d}", "namespace": f"ns-{i % 10}",
                     "labels": {"app": f"app-{i % 10}", "tier": "web" if i % 2 else "db"},
                     "annotations": {"example.com/owner": "bench"}},
        "spec": {"nodeName": f"node-{i % 50}", "containers": [{
            "name": "main", "image": "registry.example.com/team/app:1.2.3",
            "resources": {"requests": {"cpu": "100m", "memory": "128Mi"},
                          "limits": {"cpu": "500m", "memory": "256Mi"}},
            "env": [{"name": f"VAR_{k}", "value": f"value-{k}"} for k in range(6)]}]},
        "status": {"phase": "Running", "conditions": [
            {"type": "Ready", "status": "True", "lastTransitionTime": "2026-01-01T00:00:00Z"}]},
    }


def rate(count: int, seconds: float) -> float:
    return count / seconds if seconds > 0 else float("inf")


def timed(fn: Callable[[], int]) -> float:
    start = time.perf_counter()
    count = fn()
    return rate(count, time.perf_counter() - start)


def bench(make: Callable[[], object], n: int, watchers: int) -> dict[str, float]:
    results: dict[str, float] = {}
    store = make()
    objs = [pod(i) for i in range(n)]

    def create() -> int:
        for o in objs:
            store.create(RESOURCE, o)
        return n

    results["create"] = timed(create)
    current = [store.get(RESOURCE, o["metadata"]["namespace"], o["metadata"]["name"]) for o in objs]

    def update() -> int:
        for o in current:
            o["spec"]["containers"][0]["image"] = "registry.example.com/team/app:1.2.4"
            store.update(RESOURCE, o)
        return n

    results["update"] = timed(update)

    def get() -> int:
        for o in objs:
            store.get(RESOURCE, o["metadata"]["namespace"], o["metadata"]["name"])
        return n

    results["get"] = timed(get)
    rounds = max(1, 20000 // n)

    def list_all() -> int:
        for _ in range(rounds):
            assert len(store.list(RESOURCE).items) == n
        return rounds

    lists = timed(list_all)
    results[f"list {n} (lists/s)"] = lists
    results["list (objects/s)"] = lists * n

    def list_selected() -> int:
        for _ in range(rounds):
            store.list(RESOURCE, label_selector="app=app-3,tier=web")
        return rounds

    results["list app=.. (lists/s)"] = timed(list_selected)

    def paged() -> int:
        token, pages = "", 0
        while True:
            page = store.list(RESOURCE, limit=500, continue_token=token)
            pages += 1
            token = page.continue_token
            if not token:
                return n

    results["list limit=500 (objects/s)"] = timed(paged)

    # watch delivery: W watchers (half of them filtered), N writes, every event taken
    m = n
    ws = [store.watch(RESOURCE, resource_version=str(store.current_revision()),
                      label_selector="" if k % 2 == 0 else "tier=web") for k in range(watchers)]

    def deliver() -> int:
        got = 0
        for i, o in enumerate(current):
            o["metadata"]["resourceVersion"] = ""
            o["status"]["phase"] = "Pending" if o["status"]["phase"] == "Running" else "Running"
            store.update(RESOURCE, o)
            if i % 100 == 99:  # consumers keep up, as informers do
                got += sum(len(w.get_nowait()) for w in ws)
        return got + sum(len(w.get_nowait()) for w in ws)

    start = time.perf_counter()
    events = deliver()
    elapsed = time.perf_counter() - start
    results[f"watch x{watchers} (events/s)"] = rate(events, elapsed)
    for w in ws:
        w.stop()

    async def deliver_async() -> int:
        ws = [store.watch(RESOURCE, resource_version=str(store.current_revision()))
              for _ in range(watchers)]
        got = 0
        # per watch: set whenever its consumer has taken every buffered event
        caught_up = [asyncio.Event() for _ in ws]

        async def consume(w, caught_up: asyncio.Event) -> None:
            nonlocal got
            async for _ in w:
                got += 1
                if not w.pending():
                    caught_up.set()

        tasks = [asyncio.ensure_future(consume(w, e)) for w, e in zip(ws, caught_up)]
        await asyncio.sleep(0)
        for i, o in enumerate(current[:m]):
            o["metadata"]["resourceVersion"] = ""
            o["status"]["podIP"] = f"10.0.{i // 250}.{i % 250}"
            store.update(RESOURCE, o)
            if i % 100 == 99:
                await asyncio.sleep(0)
        # the writes done: wait until every consumer has taken all of its watch's events
        for w, e in zip(ws, caught_up):
            if w.pending():
                e.clear()
                await e.wait()
        for w in ws:
            w.stop()
        await asyncio.gather(*tasks)
        return got

    start = time.perf_counter()
    events = asyncio.run(deliver_async())
    results[f"watch x{watchers} async (events/s)"] = rate(events, time.perf_counter() - start)
    store.close()  # type: ignore[attr-defined]
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=5000, help="objects (default 5000)")
    parser.add_argument("--backend", choices=["memory", "sqlite", "etcd", "all"], default="all")
    parser.add_argument("--watchers", type=int, default=10)
    args = parser.parse_args()
    tmp = tempfile.mkdtemp(prefix="kvert-bench-")
    etcd: LocalEtcd | None = None

    def make_etcd() -> EtcdStore:
        nonlocal etcd
        etcd = LocalEtcd(data_dir=os.path.join(tmp, "etcd")).start()
        return EtcdStore(etcd.endpoint, clock=WallClock())

    makers: dict[str, Callable[[], object]] = {
        "memory": lambda: MemoryStore(clock=WallClock()),
        "sqlite": lambda: SqliteStore(os.path.join(tmp, "bench.db"), clock=WallClock()),
        "etcd": make_etcd,
    }
    if args.backend == "all":
        chosen = [name for name in makers if name != "etcd" or LocalEtcd.available()]
    else:
        chosen = [args.backend]
        if args.backend == "etcd" and not LocalEtcd.available():
            parser.error("etcd is not installed (scripts/setup --test installs it)")
    table: dict[str, dict[str, float]] = {}
    try:
        for name in chosen:
            table[name] = bench(makers[name], args.n, args.watchers)
    finally:
        if etcd is not None:
            etcd.stop()
        shutil.rmtree(tmp, ignore_errors=True)
    rows = list(next(iter(table.values())))
    width = max(len(r) for r in rows) + 2
    print(f"store benchmark, n={args.n} objects, ops/s")
    print("operation".ljust(width) + "".join(name.rjust(14) for name in chosen))
    for row in rows:
        print(row.ljust(width) + "".join(f"{table[name][row]:14,.0f}" for name in chosen))


if __name__ == "__main__":
    main()
