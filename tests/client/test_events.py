from kvert.client import InProcessClient
from kvert.client.events import SERIES_WINDOW_SECONDS, EventRecorder
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
