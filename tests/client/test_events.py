from kvert.client import InProcessClient
from kvert.client.events import (AGGREGATE_MAX_EVENTS, AGGREGATE_WINDOW_SECONDS, COMBINED_PREFIX,
                                 SERIES_WINDOW_SECONDS, SPAM_BURST, SPAM_REFILL_SECONDS,
                                 EventRecorder)
from kvert.clock import VirtualClock
from kvert.registry import Registry
from kvert.store import open_store


def test_events_are_written_and_repeats_bump_the_count():
    clock = VirtualClock()
    client = InProcessClient(Registry(open_store("memory", clock=clock), clock, seed=1))
    pod = {"apiVersion": "v1", "kind": "Pod",
           "metadata": {"name": "web", "namespace": "default", "uid": "u1"}}
    recorder = EventRecorder(client, clock, "default-scheduler")

    async def main():
        await recorder.record(pod, "Warning", "FailedScheduling", "0/3 nodes are available")
        await clock.sleep(5)
        await recorder.record(pod, "Warning", "FailedScheduling", "0/3 nodes are available")
        await recorder.record(pod, "Normal", "Scheduled", "assigned default/web to n1")
        await clock.sleep(SERIES_WINDOW_SECONDS + 1)
        await recorder.record(pod, "Normal", "Scheduled", "assigned default/web to n1")
        return (await client.list("events", namespace="default"))["items"]

    events = clock.run(main())
    by_reason = sorted((e["reason"], e["count"]) for e in events)
    assert by_reason == [("FailedScheduling", 2), ("Scheduled", 1), ("Scheduled", 1)]
    failed = next(e for e in events if e["reason"] == "FailedScheduling")
    assert failed["involvedObject"] == {"apiVersion": "v1", "kind": "Pod", "name": "web",
                                        "namespace": "default", "uid": "u1"}
    assert failed["source"] == {"component": "default-scheduler"} and failed["type"] == "Warning"
    assert failed["firstTimestamp"] != failed["lastTimestamp"]


# ---- the correlator: TestEventCorrelator, TestEventAggregatorByReasonFunc,
# TestEventAggregatorByReasonMessageFunc and TestEventSpamFilter in client-go's
# tools/record/events_cache_test.go

POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "my-pod", "namespace": "my-ns",
                                                         "uid": "C934D34AFB20242"}}


def _play(calls, interval, pause_before_last=0.0):
    """Record ``calls`` ((obj, reason, message) each) ``interval`` seconds apart (the last one
    ``pause_before_last`` seconds later still); the events."""
    clock = VirtualClock()
    client = InProcessClient(Registry(open_store("memory", clock=clock), clock, seed=1))
    recorder = EventRecorder(client, clock, "kubelet", "kublet.node1")

    async def main():
        for i, (obj, reason, message) in enumerate(calls):
            if i == len(calls) - 1:
                await clock.sleep(pause_before_last)
            await recorder.record(obj, "Normal", reason, message)
            await clock.sleep(interval)
        return (await client.list("events"))["items"]

    return clock.run(main())


def _counts(events):
    return sorted((e["reason"], e["message"], e["count"]) for e in events)


def test_the_same_event_just_counts_even_past_the_aggregate_threshold():
    # the-same-event-should-just-count-even-if-more-than-aggregate
    events = _play([(POD, "duplicate", "me again")] * (AGGREGATE_MAX_EVENTS + 1), 30)
    assert _counts(events) == [("duplicate", "me again", AGGREGATE_MAX_EVENTS + 1)]


def test_unique_events_are_each_written():
    # create-many-unique-events
    events = _play([(POD, f"unique{i}", "snowflake") for i in range(20)], 5)
    assert len(events) == 20 and all(e["count"] == 1 for e in events)


def test_similar_events_are_combined_from_the_tenth_message_on():
    # similar-events-should-aggregate-event, similar-events-many-times-should-count-the-aggregate;
    # TestEventAggregatorByReasonMessageFunc: the combined message's prefix
    similar = [(POD, "similar", f"similar message{i}") for i in range(AGGREGATE_MAX_EVENTS - 1)]
    events = _play(similar + [(POD, "similar", "similar message")], 5)
    combined = [e for e in events if e["message"].startswith(COMBINED_PREFIX)]
    assert [(e["message"], e["count"]) for e in combined] == [(COMBINED_PREFIX + "similar message", 1)]
    assert len(events) == AGGREGATE_MAX_EVENTS
    events = _play(similar + [(POD, "similar", "similar message"), (POD, "similar", "last one")], 5)
    combined = [e for e in events if e["message"].startswith(COMBINED_PREFIX)]
    assert [(e["message"], e["count"]) for e in combined] == [(COMBINED_PREFIX + "last one", 2)]


def test_similar_events_further_apart_than_the_window_are_not_combined():
    # similar-events-whose-interval-is-greater-than-aggregate-interval-do-not-aggregate
    similar = [(POD, "similar", f"similar message{i}") for i in range(AGGREGATE_MAX_EVENTS)]
    events = _play(similar, AGGREGATE_WINDOW_SECONDS + 1)
    assert not any(e["message"].startswith(COMBINED_PREFIX) for e in events)


def test_events_of_other_objects_or_reasons_are_not_combined():
    # TestEventAggregatorByReasonFunc: another reason is another aggregate key
    other = {**POD, "metadata": {**POD["metadata"], "name": "other-pod", "uid": "u2"}}
    calls = [(POD, "similar", f"m{i}") for i in range(AGGREGATE_MAX_EVENTS - 1)]
    calls += [(other, "similar", "m"), (POD, "nevermind", "it was a bug")]
    assert not any(e["message"].startswith(COMBINED_PREFIX) for e in _play(calls, 5))


def test_an_object_past_its_spam_burst_gets_no_more_events_until_the_bucket_refills():
    # the-same-event-is-spam-if-happens-too-frequently; TestEventSpamFilter: the default key
    # is the source and the object, whatever the reason
    events = _play([(POD, f"reason{i}", "m") for i in range(SPAM_BURST + 2)], 1)
    assert len(events) == SPAM_BURST
    events = _play([(POD, f"reason{i}", "m") for i in range(SPAM_BURST + 1)]
                   + [(POD, "later", "m")], 1, SPAM_REFILL_SECONDS)
    assert len(events) == SPAM_BURST + 1      # one token back every five minutes
    other = {**POD, "metadata": {**POD["metadata"], "name": "other-pod", "uid": "u2"}}
    events = _play([(POD, f"r{i}", "m") for i in range(SPAM_BURST + 1)] + [(other, "r", "m")], 1)
    assert sum(e["involvedObject"]["name"] == "other-pod" for e in events) == 1


def test_a_filtered_repeat_still_counts():
    events = _play([(POD, "duplicate", "me again")] * (SPAM_BURST + 3), 1)
    assert _counts(events) == [("duplicate", "me again", SPAM_BURST)]
    events = _play([(POD, "duplicate", "me again")] * (SPAM_BURST + 4), 1, SPAM_REFILL_SECONDS)
    # the last one comes after a refill: its count includes the filtered repeats
    assert _counts(events) == [("duplicate", "me again", SPAM_BURST + 4)]
