"""The handle ``Informer.add_handlers`` returns: ``has_synced()`` and ``remove()``."""

import asyncio

from kvert.client import Informer, InProcessClient
from kvert.clock import VirtualClock
from kvert.registry import Registry
from kvert.store import open_store


def _cm(name, ns="default"):
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": ns},
            "data": {"v": "1"}}


def _setup():
    clock = VirtualClock()
    client = InProcessClient(Registry(open_store("memory", clock=clock), clock, seed=1))
    return clock, client


async def _settle(clock):
    for _ in range(5):
        await asyncio.sleep(0)
    await clock.sleep(0.001)


def _name(obj):
    return obj["metadata"]["name"]


def test_a_registration_is_synced_once_its_handler_has_the_initial_list():
    clock, client = _setup()

    async def main():
        for name in ("a", "b"):
            await client.create("configmaps", _cm(name))
        informer = Informer(client, "configmaps", clock=clock)
        seen = []
        synced_while_handling = []
        reg = None

        def on_add(obj):
            seen.append(_name(obj))
            synced_while_handling.append(reg.has_synced())

        reg = informer.add_handlers(on_add=on_add)
        before = reg.has_synced()
        task = asyncio.ensure_future(informer.run())
        await informer.wait_synced()
        after = reg.has_synced()
        informer.stop()
        await task
        return before, after, sorted(seen), synced_while_handling

    before, after, seen, while_handling = clock.run(main())
    assert before is False
    assert after is True
    assert seen == ["a", "b"]
    # not synced until the handler had been handed the whole initial list
    assert while_handling == [False, False]


def test_a_handler_added_after_sync_is_synced_by_the_replay():
    clock, client = _setup()

    async def main():
        await client.create("configmaps", _cm("a"))
        informer = Informer(client, "configmaps", clock=clock)
        task = asyncio.ensure_future(informer.run())
        await informer.wait_synced()
        seen = []
        reg = informer.add_handlers(on_add=lambda o: seen.append(_name(o)))
        synced = reg.has_synced()
        informer.stop()
        await task
        return synced, seen

    assert clock.run(main()) == (True, ["a"])


def test_a_registration_that_ignores_the_handle_keeps_working():
    clock, client = _setup()

    async def main():
        informer = Informer(client, "configmaps", clock=clock)
        seen = []
        informer.add_handlers(lambda o: seen.append(("add", _name(o))), None,
                              lambda o: seen.append(("delete", _name(o))))
        task = asyncio.ensure_future(informer.run())
        await informer.wait_synced()
        await client.create("configmaps", _cm("a"))
        await client.delete("configmaps", "a", namespace="default")
        await _settle(clock)
        informer.stop()
        await task
        return seen

    assert clock.run(main()) == [("add", "a"), ("delete", "a")]


def test_remove_stops_delivery_to_that_handler_only():
    clock, client = _setup()

    async def main():
        informer = Informer(client, "configmaps", clock=clock)
        removed, kept = [], []
        reg = informer.add_handlers(on_add=lambda o: removed.append(("add", _name(o))),
                                    on_update=lambda old, new: removed.append(("update", _name(new))),
                                    on_delete=lambda o: removed.append(("delete", _name(o))))
        informer.add_handlers(on_add=lambda o: kept.append(("add", _name(o))),
                              on_delete=lambda o: kept.append(("delete", _name(o))))
        task = asyncio.ensure_future(informer.run())
        await informer.wait_synced()
        await client.create("configmaps", _cm("a"))
        await _settle(clock)
        reg.remove()
        reg.remove()   # a second remove changes nothing
        await client.patch("configmaps", "a", {"data": {"v": "2"}}, namespace="default")
        await client.create("configmaps", _cm("b"))
        await client.delete("configmaps", "a", namespace="default")
        await _settle(clock)
        informer.stop()
        await task
        return removed, kept

    removed, kept = clock.run(main())
    assert removed == [("add", "a")]
    assert kept == [("add", "a"), ("add", "b"), ("delete", "a")]


def test_a_handler_removed_while_an_event_is_delivered_gets_no_more_of_it():
    clock, client = _setup()

    async def main():
        informer = Informer(client, "configmaps", clock=clock)
        first, second = [], []
        regs = {}

        def remove_the_other(obj):
            first.append(_name(obj))
            regs["second"].remove()

        informer.add_handlers(on_add=remove_the_other)
        regs["second"] = informer.add_handlers(on_add=lambda o: second.append(_name(o)))
        task = asyncio.ensure_future(informer.run())
        await informer.wait_synced()
        await client.create("configmaps", _cm("a"))
        await client.create("configmaps", _cm("b"))
        await _settle(clock)
        informer.stop()
        await task
        return first, second

    assert clock.run(main()) == (["a", "b"], [])


def test_resync_skips_removed_handlers():
    clock, client = _setup()

    async def main():
        await client.create("configmaps", _cm("x"))
        informer = Informer(client, "configmaps", clock=clock, resync_period=10)
        updates = []
        reg = informer.add_handlers(on_update=lambda old, new: updates.append(_name(new)))
        task = asyncio.ensure_future(informer.run())
        await informer.wait_synced()
        await clock.sleep(15)
        reg.remove()
        await clock.sleep(20)
        informer.stop()
        await task
        return updates

    assert clock.run(main()) == ["x"]
