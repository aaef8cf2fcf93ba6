"""The work queue, its rate limiter, and expectations."""

from kvert.clock import VirtualClock
from kvert.controllers.base import Expectations, RateLimiter, WorkQueue


def test_queue_dedups_and_requeues_a_key_added_while_processing():
    clock = VirtualClock()

    async def main():
        q = WorkQueue(clock)
        q.add("a"), q.add("b"), q.add("a")
        assert len(q) == 2
        key = await q.get()
        assert key == "a"
        q.add("a")                      # while processing: not handed out twice
        assert await q.get() == "b"
        assert len(q) == 0
        q.done("a")                     # now it comes back
        assert await q.get() == "a"
        q.done("a"), q.done("b")
        q.shutdown()
        assert await q.get() is None

    clock.run(main())


def test_delayed_and_rate_limited_adds_run_on_the_clock():
    clock = VirtualClock()

    async def main():
        q = WorkQueue(clock)
        start = clock.now()
        q.add_after("x", 10)
        q.add_after("x", 3)             # the earlier wins
        q.add_after("x", 20)
        assert await q.get() == "x"
        assert clock.now() - start == 3
        q.done("x")
        await clock.sleep(30)
        assert len(q) == 0              # the superseded timers did nothing
        q.shutdown()

    clock.run(main())


def test_rate_limiter_backs_off_exponentially_per_key():
    clock = VirtualClock()
    limiter = RateLimiter(clock, qps=0)
    delays = [limiter.when("k") for _ in range(5)]
    assert delays == [0.005, 0.01, 0.02, 0.04, 0.08]
    for _ in range(100):
        limiter.when("k")
    assert limiter.when("k") == 1000.0
    assert limiter.when("other") == 0.005
    limiter.forget("k")
    assert limiter.when("k") == 0.005


def test_rate_limiter_bucket_limits_overall_retries():
    clock = VirtualClock()
    limiter = RateLimiter(clock)
    delays = [limiter.when(i) for i in range(110)]
    assert max(delays[:100]) == 0.005
    assert abs(delays[109] - 1.0) < 1e-9      # 10 over the burst of 100 at 10 per second


def test_expectations_wait_for_observations_or_time_out():
    clock = VirtualClock()
    e = Expectations(clock)
    assert e.satisfied("rs")
    e.expect_creations("rs", 2)
    assert not e.satisfied("rs")
    e.creation_observed("rs")
    assert not e.satisfied("rs")
    e.creation_observed("rs")
    assert e.satisfied("rs")
    e.expect_deletions("rs", ["ns/a", "ns/b"])
    e.deletion_observed("rs", "ns/c")
    e.deletion_observed("rs", "ns/a")
    assert not e.satisfied("rs")
    clock.advance(301)
    assert e.satisfied("rs")
