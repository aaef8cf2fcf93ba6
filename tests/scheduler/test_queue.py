"""The scheduling queue in virtual time: ordering, backoff, requeueing on events, gates."""

import asyncio

import pytest

from kvert.clock import VirtualClock
from kvert.scheduler.framework import (
    ASSIGNED_POD, EVENT_ASSIGNED_POD_DELETE, EVENT_NODE_ADD, NODE, ActionType, ClusterEvent,
)
from kvert.scheduler.queue import SchedulingQueue, backoff_duration

from .helpers import Bench, node, pod


def make_queue(clock, **kw):
    b = Bench([node("a")])
    fw = b.fw
    events = fw.events_to_register()
    return SchedulingQueue(clock, sort_key=fw.queue_sort.sort_key, pre_enqueue=fw.run_pre_enqueue,
                           events_for=lambda p: events, **kw)


def fail(q, qpi, *plugins, error=False):
    qpi.unschedulable_plugins = set(plugins)
    q.add_unschedulable_if_not_present(qpi, error=error)


def run(clock, coro):
    return clock.run(coro)


def test_active_queue_orders_by_priority_then_time():
    clock = VirtualClock()
    q = make_queue(clock)

    async def main():
        q.add(pod("low-early", priority=0))
        await clock.sleep(1)
        q.add(pod("high-late", priority=1000))
        q.add(pod("low-late", priority=0))
        q.add(pod("mid", priority=10))
        return [q.try_pop().key for _ in range(4)]

    assert run(clock, main()) == ["default/high-late", "default/mid", "default/low-early",
                                  "default/low-late"]


def test_backoff_doubles_from_one_second_to_ten():
    assert [backoff_duration(n, 1.0, 10.0) for n in range(0, 7)] == [0, 1, 2, 4, 8, 10, 10]


def test_failed_pod_waits_out_its_backoff_in_virtual_time():
    clock = VirtualClock()
    q = make_queue(clock, pop_from_backoff=False)

    async def main():
        waits = []
        q.add(pod("p", cpu="8"))
        qpi = await q.pop()
        for attempt in range(1, 6):
            fail(q, qpi, "NodeResourcesFit")
            assert q.stats()["unschedulable"] == 1
            # a node large enough appears: the pod is worth retrying, after its backoff
            q.move_all_to_active_or_backoff(EVENT_NODE_ADD, None, node("big", cpu="16"))
            assert q.stats()["backoff"] == 1
            start = clock.now()
            qpi = await q.pop()
            waits.append(round(clock.now() - start, 6))
            assert qpi.attempts == attempt + 1
        return waits

    assert run(clock, main()) == [1, 2, 4, 8, 10]


def test_pop_from_backoff_when_nothing_else_is_ready():
    clock = VirtualClock()
    q = make_queue(clock)      # SchedulerPopFromBackoffQ: on by default

    async def main():
        q.add(pod("p"))
        qpi = await q.pop()
        fail(q, qpi, "NodeResourcesFit")
        q.move_all_to_active_or_backoff(EVENT_NODE_ADD, None, node("b"))
        start = clock.now()
        again = await q.pop()
        return again.key, clock.now() - start

    assert run(clock, main()) == ("default/p", 0)


def test_errors_back_off_even_when_idle():
    clock = VirtualClock()
    q = make_queue(clock)

    async def main():
        q.add(pod("p"))
        qpi = await q.pop()
        fail(q, qpi, error=True)
        assert q.stats()["backoff"] == 1
        start = clock.now()
        await q.pop()
        return clock.now() - start

    assert run(clock, main()) == pytest.approx(1.0)


def test_queueing_hints_decide_which_events_requeue_a_pod():
    clock = VirtualClock()
    q = make_queue(clock, pop_from_backoff=False)

    async def main():
        q.add(pod("needs-cpu", cpu="8"))
        q.add(pod("tainted-out"))
        a, b = q.try_pop(), q.try_pop()
        by_key = {a.key: a, b.key: b}
        fail(q, by_key["default/needs-cpu"], "NodeResourcesFit")
        fail(q, by_key["default/tainted-out"], "TaintToleration")
        # a small node does not help the cpu-hungry pod, nor a tainted node the other
        taint = [{"key": "k", "effect": "NoSchedule"}]
        assert q.move_all_to_active_or_backoff(EVENT_NODE_ADD, None,
                                               node("small", cpu="2", taints=taint)) == 0
        # an assigned pod deleted frees resources: only the Fit-rejected pod moves
        gone = pod("gone", cpu="4", node_name="a")
        assert q.move_all_to_active_or_backoff(EVENT_ASSIGNED_POD_DELETE, gone, None) == 1
        assert q.get(pod("x", cpu="1")) is None
        states = {k: v.state for k, v in by_key.items()}
        # a node whose taint was removed helps the other one
        old, new = node("t", taints=taint), node("t")
        moved = q.move_all_to_active_or_backoff(
            ClusterEvent(NODE, ActionType.UPDATE_NODE_TAINT), old, new)
        return states, moved, by_key["default/tainted-out"].state

    states, moved, last = run(clock, main())
    assert states == {"default/needs-cpu": "backoff", "default/tainted-out": "unschedulable"}
    assert moved == 1 and last == "backoff"


def test_scale_down_of_an_assigned_pod_requeues_fit_rejected_pods():
    clock = VirtualClock()
    q = make_queue(clock)

    async def main():
        q.add(pod("p", cpu="2"))
        qpi = q.try_pop()
        fail(q, qpi, "NodeResourcesFit")
        old = pod("big", cpu="4", node_name="a")
        new = pod("big", cpu="1", node_name="a")
        new["metadata"].update(uid=old["metadata"]["uid"], resourceVersion="2")
        moved = q.move_all_to_active_or_backoff(
            ClusterEvent(ASSIGNED_POD, ActionType.UPDATE_POD_SCALE_DOWN), old, new)
        return moved

    assert run(clock, main()) == 1


def test_unschedulable_pods_are_retried_after_five_minutes():
    clock = VirtualClock()
    q = make_queue(clock)

    async def main():
        q.add(pod("p"))
        qpi = await q.pop()
        start = clock.now()
        fail(q, qpi, "TaintToleration")
        await q.pop()
        return clock.now() - start

    assert run(clock, main()) == pytest.approx(300.0)


def test_event_during_the_attempt_is_not_lost():
    clock = VirtualClock()
    q = make_queue(clock, pop_from_backoff=False)

    async def main():
        q.add(pod("p", cpu="8"))
        qpi = await q.pop()
        # while the pod is being scheduled, a big node arrives
        q.move_all_to_active_or_backoff(EVENT_NODE_ADD, None, node("big", cpu="16"))
        fail(q, qpi, "NodeResourcesFit")
        return qpi.state

    assert run(clock, main()) == "backoff"


def test_scheduling_gates_hold_a_pod_until_removed():
    clock = VirtualClock()
    q = make_queue(clock)

    async def main():
        gated = pod("gated", schedulingGates=[{"name": "example.com/foo"},
                                              {"name": "example.com/bar"}])
        q.add(gated)
        qpi = q.get(gated)
        assert qpi.state == "gated"
        assert qpi.gating_message == "waiting for scheduling gates: [example.com/foo example.com/bar]"
        # events and the 5-minute flush leave it alone
        q.move_all_to_active_or_backoff(EVENT_NODE_ADD, None, node("b"))
        got = await asyncio.wait_for(q.pop(), 600)  # noqa: F841  (times out: nothing to pop)
        return got

    with pytest.raises((asyncio.TimeoutError, TimeoutError)):
        run(clock, main())

    clock = VirtualClock()
    q = make_queue(clock)

    async def ungate():
        gated = pod("gated", schedulingGates=[{"name": "example.com/foo"}])
        q.add(gated)
        ungated = {**gated, "spec": {k: v for k, v in gated["spec"].items()
                                     if k != "schedulingGates"}}
        q.update(gated, ungated)
        return (await q.pop()).key

    assert run(clock, ungate()) == "default/gated"


def test_own_update_of_an_unschedulable_pod_requeues_it_but_status_does_not():
    clock = VirtualClock()
    q = make_queue(clock)

    async def main():
        p = pod("p", tolerations=[])
        q.add(p)
        qpi = q.try_pop()
        fail(q, qpi, "TaintToleration")
        status_only = {**p, "status": {"phase": "Pending", "conditions": [{"type": "PodScheduled"}]}}
        explained = {**p, "metadata": {**p["metadata"],
                                       "annotations": {"explain.kvert.io/scheduling": "{}"}}}
        q.update(p, status_only)
        q.update(p, explained)
        first = qpi.state
        tolerant = {**p, "spec": {**p["spec"], "tolerations": [{"operator": "Exists"}]}}
        q.update(p, tolerant)
        return first, qpi.state

    assert run(clock, main()) == ("unschedulable", "backoff")


def test_deleted_pods_leave_the_queue():
    clock = VirtualClock()
    q = make_queue(clock)

    async def main():
        p = pod("p")
        q.add(p)
        q.delete(p)
        return q.try_pop(), len(q)

    assert run(clock, main()) == (None, 0)
