"""History compaction: a store of one's own starts its history at start (as kube-apiserver's
watch cache does); a shared etcd's history belongs to every API server on it, so a second
`kvert up` must not compact it at start, only on its interval."""

from __future__ import annotations

import asyncio

from kvert.apiserver.server import ApiServer
from kvert.clock import VirtualClock
from kvert.store import open_store
from kvert.store.etcd import EtcdStore


class Recording:
    def __init__(self, store):
        self.store, self.compacted = store, []

    def current_revision(self):
        return self.store.current_revision()

    def compact(self, revision):
        self.compacted.append(revision)


def test_compaction_at_start_only_for_a_store_of_ones_own():
    clock = VirtualClock()

    async def main():
        for at_start in (True, False):
            store = Recording(open_store("memory", clock=clock))
            server = ApiServer(store, clock, authenticator=None)
            task = asyncio.ensure_future(server.compact_history(300, at_start=at_start))
            await clock.sleep(1)
            assert store.compacted == ([store.current_revision()] if at_start else [])
            await clock.sleep(300)
            assert len(store.compacted) == (2 if at_start else 1)
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
            store.store.close()

    clock.run(main())


def test_only_etcd_is_shared():
    assert EtcdStore.shared and not open_store("memory").shared
