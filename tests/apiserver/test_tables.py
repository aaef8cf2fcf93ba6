"""Server-side Table output: cells as Kubernetes' printers produce them.

Most expectations are ported from ``pkg/printers/internalversion/printers_test.go``,
``apimachinery/pkg/util/duration/duration_test.go`` and the apiextensions table convertor.
The server always prints wide, so every row carries the priority-1 cells too.
"""

from __future__ import annotations

import pytest

from kvert.api import kinds
from kvert.api.errors import ApiError
from kvert.api.kinds import ResourceType
from kvert.api.meta import format_micro_time, format_time
from kvert.apiserver.printers.duration import (HOUR, MINUTE, SECOND, human_duration, parse_time_ns,
                                               short_human_duration, since)
from kvert.apiserver.printers.jsonpath import JSONPathError, compile_path, go_format_float, print_value
from kvert.apiserver.tables import column_definitions, to_table

NOW = 1_700_000_000
NOW_NS = NOW * SECOND
DAY = 24 * HOUR


def ago(seconds: float) -> str:
    """A metav1.Time ``seconds`` before NOW (negative: in the future)."""
    if float(seconds).is_integer():
        return format_time(NOW - seconds)
    return format_micro_time(NOW - seconds)


def rt(key: str) -> ResourceType:
    return kinds.by_key(key)


def cells(key: str, obj: dict) -> list:
    table = to_table(rt(key), [obj], now=NOW, include_object="None")
    return table["rows"][0]["cells"]


def names(key: str) -> list[str]:
    return [c["name"] for c in column_definitions(rt(key))]


# -- durations ----------------------------------------------------------------------------------

@pytest.mark.parametrize("d, want", [
    (SECOND, "1s"),
    (70 * SECOND, "70s"),
    (119 * SECOND, "119s"),
    (120 * SECOND, "2m"),
    (125 * SECOND, "2m5s"),
    (190 * SECOND, "3m10s"),
    (599 * SECOND, "9m59s"),
    (10 * MINUTE, "10m"),
    (70 * MINUTE, "70m"),
    (100 * MINUTE, "100m"),
    (179 * MINUTE + 59 * SECOND, "179m"),
    (3 * HOUR, "3h"),
    (3 * HOUR + 5 * MINUTE, "3h5m"),
    (7 * HOUR + 59 * MINUTE, "7h59m"),
    (8 * HOUR + 30 * MINUTE, "8h"),
    (47 * HOUR, "47h"),
    (48 * HOUR, "2d"),
    (49 * HOUR, "2d1h"),
    (7 * DAY + 23 * HOUR, "7d23h"),
    ((8 * 24 + 2) * HOUR, "8d"),
    (90 * DAY, "90d"),
    (367 * DAY, "367d"),
    ((365 * 2 * 24 + 25) * HOUR, "2y1d"),
    (365 * 3 * DAY, "3y"),
    ((365 * 8 * 24 + 2) * HOUR, "8y"),
    (10 * 365 * DAY, "10y"),
    (0, "0s"),
    (-1 * SECOND, "0s"),
    (-1_900_000_000, "0s"),  # up to two seconds of clock skew is "now"
    (-2 * SECOND, "<invalid>"),
    (-2_100_000_000, "<invalid>"),
])
def test_human_duration(d, want):
    assert human_duration(d) == want


@pytest.mark.parametrize("d, want", [
    (SECOND, "1s"), (59 * SECOND, "59s"), (60 * SECOND, "1m"), (70 * MINUTE, "1h"),
    (47 * HOUR, "1d"), (366 * DAY, "1y"), (-1 * SECOND, "0s"), (-3 * SECOND, "<invalid>"),
])
def test_short_human_duration(d, want):
    assert short_human_duration(d) == want


@pytest.mark.parametrize("stamp, want", [
    (ago(-2.1), "<invalid>"),       # a while from now
    (ago(-1.9), "0s"),              # almost now
    (ago(0), "0s"),
    (None, "<unknown>"),
    ("0001-01-01T00:00:00Z", "<unknown>"),  # Go's zero time
    (ago(30), "30s"),
    (ago(300), "5m"),
    (ago(6000), "100m"),
    (ago(2 * 86400), "2d"),
    (ago(90 * 86400), "90d"),
    (ago(10 * 365 * 86400), "10y"),
    (ago(10), "10s"),               # exactly ten seconds, no float rounding
    ("2023-11-14T22:13:10+00:00", "10s"),
    ("2023-11-14T23:13:10+01:00", "10s"),
])
def test_translate_timestamp_since(stamp, want):
    assert since(stamp, NOW_NS) == want


def test_parse_time():
    assert parse_time_ns("1970-01-01T00:00:01.5Z") == 1_500_000_000
    assert parse_time_ns("not a time") is None
    assert parse_time_ns("2024-02-30T00:00:00Z") is None
    assert parse_time_ns(12) is None


def test_fractional_now_from_the_clock():
    table = to_table(rt("configmaps"), [{"metadata": {"name": "c", "creationTimestamp": ago(10)}}],
                     now=NOW + 0.999, include_object="None")
    assert table["rows"][0]["cells"] == ["c", 0, "10s"]


# -- pods ---------------------------------------------------------------------------------------

def pod(name="p", containers=1, init=None, phase=None, reason=None, statuses=None,
        init_statuses=None, conditions=None, deleting=False, **extra):
    spec = {"containers": [{"name": f"c{i}"} for i in range(containers)]}
    if init is not None:
        spec["initContainers"] = init
    status = {}
    for key, value in (("phase", phase), ("reason", reason), ("containerStatuses", statuses),
                       ("initContainerStatuses", init_statuses), ("conditions", conditions)):
        if value is not None:
            status[key] = value
    meta = {"name": name}
    if deleting:
        meta["deletionTimestamp"] = ago(10)
    obj = {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec, "status": status}
    for k, v in extra.items():
        obj[k].update(v)
    return obj


RUNNING = {"running": {}}


def waiting(reason=""):
    return {"waiting": {"reason": reason} if reason else {}}


def terminated(reason="", exit_code=0, signal=0):
    t = {}
    if reason:
        t["reason"] = reason
    if exit_code:
        t["exitCode"] = exit_code
    if signal:
        t["signal"] = signal
    return {"terminated": t}


def cs(state=None, ready=False, restarts=0, finished=None, name=None, started=None):
    s = {"ready": ready, "restartCount": restarts}
    if state is not None:
        s["state"] = state
    if finished is not None:
        s["lastState"] = {"terminated": {"finishedAt": ago(finished)}}
    if name is not None:
        s["name"] = name
    if started is not None:
        s["started"] = started
    return s


SIDECAR = {"restartPolicy": "Always"}
READY_TRUE = [{"type": "Ready", "status": "True"}]


@pytest.mark.parametrize("obj, want", [
    # printers_test.go TestPrintPod
    (pod("test1", 2, phase="podPhase", statuses=[cs(RUNNING, True, 3), cs(None, False, 3)]),
     ["test1", "1/2", "podPhase", "6"]),
    (pod("test2", 2, phase="podPhase",
         statuses=[cs(RUNNING, True, 3), cs(waiting("ContainerWaitingReason"), False, 3)]),
     ["test2", "1/2", "ContainerWaitingReason", "6"]),
    (pod("test3", 2, phase="podPhase", statuses=[cs(waiting("ContainerWaitingReason"), False, 3),
                                                 cs(terminated("ContainerTerminatedReason"), False, 3)]),
     ["test3", "0/2", "ContainerWaitingReason", "6"]),
    (pod("test4", 2, phase="podPhase", statuses=[cs(RUNNING, True, 3), cs(None, True, 3)]),
     ["test4", "1/2", "podPhase", "6"]),
    (pod("test5", 2, phase="podPhase", reason="podReason",
         statuses=[cs(RUNNING, True, 3), cs(None, True, 3)]),
     ["test5", "1/2", "podReason", "6"]),
    (pod("test6", 2, phase="Running",
         statuses=[cs(terminated("Completed"), True, 3), cs(RUNNING, True, 3)]),
     ["test6", "1/2", "NotReady", "6"]),
    (pod("test6", 2, phase="Running", conditions=READY_TRUE,
         statuses=[cs(terminated("Completed"), True, 3), cs(RUNNING, True, 3)]),
     ["test6", "1/2", "Running", "6"]),
    (pod("test7", 1, init=[{"name": "i0"}], phase="podPhase",
         init_statuses=[cs(RUNNING, False, 3, finished=10)], statuses=[cs(waiting(), False, 0)]),
     ["test7", "0/1", "Init:0/1", "3 (10s ago)"]),
    (pod("test8", 1, init=[{"name": "i0"}, {"name": "i1"}], phase="podPhase",
         init_statuses=[cs(RUNNING, False, 3, finished=10), cs(waiting())],
         statuses=[cs(waiting())]),
     ["test8", "0/1", "Init:0/2", "3 (10s ago)"]),
    (pod("test9", 1, init=[{"name": "i0"}, {"name": "i1"}], phase="podPhase",
         init_statuses=[cs(terminated()), cs(RUNNING, False, 3, finished=10)],
         statuses=[cs(waiting())]),
     ["test9", "0/1", "Init:1/2", "3 (10s ago)"]),
    (pod("test10", 1, init=[{"name": "i0"}, {"name": "i1"}], phase="podPhase",
         init_statuses=[cs(terminated(), False, 2, finished=120), cs(RUNNING, False, 3, finished=10)],
         statuses=[cs(waiting())]),
     ["test10", "0/1", "Init:1/2", "5 (10s ago)"]),
    (pod("test11", 1, init=[{"name": "i0"}], phase="Running",
         init_statuses=[cs(terminated(), False, 2, finished=120)],
         statuses=[cs(RUNNING, False, 4, finished=20)]),
     ["test11", "0/1", "Running", "4 (20s ago)"]),
    (pod("test12", 1, phase="Running", statuses=[cs(RUNNING, True, 3, finished=5 * 86400)]),
     ["test12", "1/1", "Running", "3 (5d ago)"]),
    (pod("test13", 2, phase="Running",
         statuses=[cs(RUNNING, True, 0), cs(RUNNING, True, 3, finished=10 * 86400)]),
     ["test13", "2/2", "Running", "3 (10d ago)"]),
    (pod("test14", 2, phase="Running", statuses=[cs(RUNNING, True, 6, finished=5 * 86400),
                                                 cs(RUNNING, True, 3, finished=20 * 86400)]),
     ["test14", "2/2", "Running", "9 (5d ago)"]),
    (pod("test15", 2, phase="podPhase",
         conditions=[{"type": "PodScheduled", "status": "False", "reason": "SchedulingGated"}]),
     ["test15", "0/2", "SchedulingGated", "0"]),
    (pod("test16", 1, phase="Succeeded", statuses=[cs(terminated("Completed"))]),
     ["test16", "0/1", "Completed", "0"]),
    (pod("test17", 1, phase="Failed", statuses=[cs(terminated("Error", 1))]),
     ["test17", "0/1", "Error", "0"]),
    (pod("test18", 1, phase="Succeeded", deleting=True, statuses=[cs(terminated("Completed"))]),
     ["test18", "0/1", "Completed", "0"]),
    (pod("test19", 1, phase="Running", deleting=True, statuses=[cs(RUNNING)]),
     ["test19", "0/1", "Terminating", "0"]),
    (pod("test20", 1, phase="Pending", deleting=True), ["test20", "0/1", "Terminating", "0"]),
    # TestPrintNonTerminatedPod / TestPrintPodConditions
    (pod("p", 2, phase="Pending", statuses=[cs(RUNNING, True, 3), cs(None, False, 3)]),
     ["p", "1/2", "Pending", "6"]),
    (pod("p", 2, phase="Unknown", statuses=[cs(RUNNING, True, 3), cs(None, False, 3)]),
     ["p", "1/2", "Unknown", "6"]),
    (pod("p", 2, phase="Succeeded", statuses=[cs(RUNNING, True, 3), cs(None, False, 3)]),
     ["p", "1/2", "Succeeded", "6"]),
    # the statuses kubectl users see every day
    (pod("p", phase="Pending", statuses=[cs(waiting("ContainerCreating"))]),
     ["p", "0/1", "ContainerCreating", "0"]),
    (pod("p", phase="Running", statuses=[cs(waiting("CrashLoopBackOff"), False, 5, finished=40)]),
     ["p", "0/1", "CrashLoopBackOff", "5 (40s ago)"]),
    (pod("p", phase="Pending", statuses=[cs(waiting("ImagePullBackOff"))]),
     ["p", "0/1", "ImagePullBackOff", "0"]),
    (pod("p", phase="Running", statuses=[cs(terminated("OOMKilled", 137), False, 1, finished=3)]),
     ["p", "0/1", "OOMKilled", "1 (3s ago)"]),
    (pod("p", phase="Failed", statuses=[cs(terminated("", 137))]), ["p", "0/1", "ExitCode:137", "0"]),
    (pod("p", phase="Failed", statuses=[cs(terminated("", 0, 9))]), ["p", "0/1", "Signal:9", "0"]),
    (pod("p", phase="Failed", reason="Evicted"), ["p", "0/1", "Evicted", "0"]),
    (pod("p", phase="Running", reason="NodeLost", statuses=[cs(RUNNING, True)]),
     ["p", "1/1", "NodeLost", "0"]),
    (pod("p", phase="Running", reason="NodeLost", deleting=True, statuses=[cs(RUNNING, True)]),
     ["p", "1/1", "Unknown", "0"]),
    (pod("p", phase="Pending"), ["p", "0/1", "Pending", "0"]),
    (pod("p", init=[{"name": "i0"}], phase="Pending",
         init_statuses=[cs(waiting("CrashLoopBackOff"), False, 4, finished=75)]),
     ["p", "0/1", "Init:CrashLoopBackOff", "4 (75s ago)"]),
    (pod("p", init=[{"name": "i0"}], phase="Pending", init_statuses=[cs(terminated("Error", 1))]),
     ["p", "0/1", "Init:Error", "0"]),
    (pod("p", init=[{"name": "i0"}], phase="Pending", init_statuses=[cs(terminated("", 2))]),
     ["p", "0/1", "Init:ExitCode:2", "0"]),
    (pod("p", init=[{"name": "i0"}], phase="Pending", init_statuses=[cs(terminated("", 1, 15))]),
     ["p", "0/1", "Init:Signal:15", "0"]),
    (pod("p", init=[{"name": "i0"}], phase="Pending", init_statuses=[cs(waiting("PodInitializing"))]),
     ["p", "0/1", "Init:0/1", "0"]),
    (pod("p", init=[{"name": "i0"}], phase="Pending", init_statuses=[cs(terminated("Completed"))],
         statuses=[cs(waiting("PodInitializing"))]),
     ["p", "0/1", "PodInitializing", "0"]),
])
def test_pod_status(obj, want):
    assert cells("pods", obj)[:4] == want


# printers_test.go TestPrintPodWithRestartableInitContainer
SIDECARS = [{"name": "restartable-init-1", **SIDECAR}, {"name": "restartable-init-2", **SIDECAR}]


@pytest.mark.parametrize("obj, want", [
    (pod("test1", 1, init=SIDECARS, phase="Pending",
         init_statuses=[cs(RUNNING, False, 3, finished=10, name="restartable-init-1", started=False),
                        cs(waiting(), name="restartable-init-2", started=False)],
         statuses=[cs(waiting())], conditions=[{"type": "Initialized", "status": "False"}]),
     ["test1", "0/3", "Init:0/2", "3 (10s ago)"]),
    (pod("test1", 1, init=SIDECARS, phase="Pending",
         init_statuses=[cs(RUNNING, False, 3, finished=10, name="restartable-init-1", started=True),
                        cs(RUNNING, name="restartable-init-2", started=False)],
         statuses=[cs(waiting())], conditions=[{"type": "Initialized", "status": "False"}]),
     ["test1", "0/3", "Init:1/2", "3 (10s ago)"]),
    (pod("test2", 1, init=SIDECARS, phase="Running",
         init_statuses=[cs(RUNNING, False, 3, finished=10, name="restartable-init-1", started=True),
                        cs(RUNNING, name="restartable-init-2", started=True)],
         statuses=[cs(RUNNING, True, 4, finished=20)],
         conditions=[{"type": "Initialized", "status": "True"}]),
     ["test2", "1/3", "Running", "7 (10s ago)"]),
    (pod("test3", 1, init=SIDECARS, phase="Succeeded",
         init_statuses=[cs(terminated("Error", 137), False, 3, finished=10,
                           name="restartable-init-1", started=False),
                        cs(terminated("Error", 137), name="restartable-init-2", started=False)],
         statuses=[cs(terminated("Completed"), False, 4, finished=20)],
         conditions=[{"type": "Initialized", "status": "True"}]),
     ["test3", "0/3", "Completed", "7 (10s ago)"]),
    (pod("test4", 0, init=[{"name": "init1"}, {"name": "sidecar1", **SIDECAR}], phase="Running",
         init_statuses=[{"name": "initinvalid"}, {"name": "init1"}, {"name": "sidecar1"}],
         statuses=[{"name": "containerinvalid"}, {"name": "container1"}],
         spec={"containers": [{"name": "container1"}]}),
     ["test4", "0/2", "Init:0/2", "0"]),
    # a ready sidecar counts towards READY
    (pod("p", 1, init=[{"name": "s", **SIDECAR}], phase="Running",
         init_statuses=[cs(RUNNING, True, name="s", started=True)], statuses=[cs(RUNNING, True)],
         conditions=[{"type": "Initialized", "status": "True"}, *READY_TRUE]),
     ["p", "2/2", "Running", "0"]),
])
def test_pod_with_sidecars(obj, want):
    assert cells("pods", obj)[:4] == want


def test_pod_wide_columns():
    gates = [{"conditionType": "condition1"}, {"conditionType": "condition2"},
             {"conditionType": "condition3"}]
    obj = pod("test1", 2, phase="podPhase", statuses=[cs(RUNNING, True, 3), cs(None, False, 3)],
              conditions=[{"type": "condition1", "status": "False"},
                          {"type": "condition2", "status": "True"}],
              spec={"nodeName": "test1", "readinessGates": gates},
              status={"podIPs": [{"ip": "1.1.1.1"}, {"ip": "2001:db8::"}], "nominatedNodeName": "node1"})
    assert cells("pods", obj) == ["test1", "1/2", "podPhase", "6", "<unknown>", "1.1.1.1", "test1",
                                  "node1", "1/3"]
    bare = pod("test2", 2, phase="podPhase",
               statuses=[cs(RUNNING, True, 3), cs(waiting("ContainerWaitingReason"), False, 3)])
    assert cells("pods", bare) == ["test2", "1/2", "ContainerWaitingReason", "6", "<unknown>",
                                   "<none>", "<none>", "<none>", "<none>"]
    assert cells("pods", pod(status={"podIP": "10.0.0.9"}))[5] == "10.0.0.9"


def test_pod_row_conditions_and_age():
    table = to_table(rt("pods"), [
        pod("ok", phase="Succeeded", metadata={"creationTimestamp": ago(3600)}),
        pod("bad", phase="Failed"),
        pod("run", phase="Running"),
    ], now=NOW)
    rows = table["rows"]
    assert rows[0]["cells"][4] == "60m"
    assert rows[0]["conditions"] == [{"type": "Completed", "status": "True", "reason": "Succeeded",
                                      "message": "The pod has completed successfully."}]
    assert rows[1]["conditions"] == [{"type": "Completed", "status": "True", "reason": "Failed",
                                      "message": "The pod failed."}]
    assert "conditions" not in rows[2]


def test_pod_columns():
    cols = column_definitions(rt("pods"))
    assert [(c["name"], c["type"], c["priority"]) for c in cols] == [
        ("Name", "string", 0), ("Ready", "string", 0), ("Status", "string", 0),
        ("Restarts", "string", 0), ("Age", "string", 0), ("IP", "string", 1), ("Node", "string", 1),
        ("Nominated Node", "string", 1), ("Readiness Gates", "string", 1)]
    assert cols[0]["format"] == "name" and cols[0]["description"].startswith("Name must be unique")
    assert all(set(c) == {"name", "type", "format", "description", "priority"} for c in cols)


# -- nodes --------------------------------------------------------------------------------------

def node(name="n", labels=None, unschedulable=False, conditions=None, info=None, addresses=None):
    meta = {"name": name}
    if labels is not None:
        meta["labels"] = labels
    status = {}
    if conditions is not None:
        status["conditions"] = conditions
    if info is not None:
        status["nodeInfo"] = info
    if addresses is not None:
        status["addresses"] = addresses
    obj = {"apiVersion": "v1", "kind": "Node", "metadata": meta, "status": status}
    if unschedulable:
        obj["spec"] = {"unschedulable": True}
    return obj


READY = {"type": "Ready", "status": "True"}
NOT_READY = {"type": "Ready", "status": "False"}


@pytest.mark.parametrize("obj, want", [
    (node("foo1", conditions=[READY]), ["foo1", "Ready", "<none>", "<unknown>", ""]),
    (node("foo2", unschedulable=True, conditions=[READY]),
     ["foo2", "Ready,SchedulingDisabled", "<none>", "<unknown>", ""]),
    (node("foo3", conditions=[READY, READY]), ["foo3", "Ready", "<none>", "<unknown>", ""]),
    (node("foo4", conditions=[NOT_READY]), ["foo4", "NotReady", "<none>", "<unknown>", ""]),
    (node("foo5", unschedulable=True, conditions=[NOT_READY]),
     ["foo5", "NotReady,SchedulingDisabled", "<none>", "<unknown>", ""]),
    (node("foo6", conditions=[{"type": "InvalidValue", "status": "True"}]),
     ["foo6", "Unknown", "<none>", "<unknown>", ""]),
    (node("foo7", conditions=[{}]), ["foo7", "Unknown", "<none>", "<unknown>", ""]),
    (node("foo8", unschedulable=True, conditions=[{"type": "InvalidValue", "status": "True"}]),
     ["foo8", "Unknown,SchedulingDisabled", "<none>", "<unknown>", ""]),
    (node("foo9", unschedulable=True, conditions=[{}]),
     ["foo9", "Unknown,SchedulingDisabled", "<none>", "<unknown>", ""]),
    (node("foo10", labels={"node-role.kubernetes.io/master": "",
                           "node-role.kubernetes.io/control-plane": "",
                           "node-role.kubernetes.io/proxy": "", "kubernetes.io/role": "node"}),
     ["foo10", "Unknown", "control-plane,master,node,proxy", "<unknown>", ""]),
    (node("foo11", labels={"kubernetes.io/role": "node"}), ["foo11", "Unknown", "node", "<unknown>", ""]),
    (node("foo12", labels={"node-role.kubernetes.io/": "", "kubernetes.io/role": ""}),
     ["foo12", "Unknown", "<none>", "<unknown>", ""]),
    (node("127.0.0.1", conditions=[READY], info={"kubeletVersion": "v1.34.0"}),
     ["127.0.0.1", "Ready", "<none>", "<unknown>", "v1.34.0"]),
])
def test_node(obj, want):
    assert cells("nodes", obj)[:5] == want


@pytest.mark.parametrize("info, addresses, want", [
    ({"osImage": "fake-os-image"}, [{"type": "ExternalIP", "address": "1.1.1.1"}],
     ["<none>", "1.1.1.1", "fake-os-image", "<unknown>", "<unknown>"]),
    ({"kernelVersion": "fake-kernel-version"}, [{"type": "ExternalIP", "address": "1.1.1.1"}],
     ["<none>", "1.1.1.1", "<unknown>", "fake-kernel-version", "<unknown>"]),
    ({"containerRuntimeVersion": "foo://1.2.3"}, [{"type": "InternalIP", "address": "1.1.1.1"}],
     ["1.1.1.1", "<none>", "<unknown>", "<unknown>", "foo://1.2.3"]),
    ({}, [{"type": "ExternalIP", "address": "2.2.2.2"}, {"type": "InternalIP", "address": "3.3.3.3"},
          {"type": "ExternalIP", "address": "4.4.4.4"}],
     ["3.3.3.3", "2.2.2.2", "<unknown>", "<unknown>", "<unknown>"]),
])
def test_node_wide(info, addresses, want):
    assert cells("nodes", node("foo", info=info, addresses=addresses))[5:] == want


# -- events -------------------------------------------------------------------------------------

def core_event(**fields):
    base = {"apiVersion": "v1", "kind": "Event", "metadata": {"name": "event1"},
            "source": {"component": "kubelet", "host": "Node1"},
            "involvedObject": {"kind": "Deployment", "name": "Deployment Name",
                               "fieldPath": "spec.containers{foo}"},
            "reason": "Event Reason", "message": "Message Data", "type": "Normal"}
    base.update(fields)
    return base


@pytest.mark.parametrize("obj, want", [
    (core_event(firstTimestamp=ago(3 * 86400), lastTimestamp=ago(2 * 86400), count=6),
     ["2d", "Normal", "Event Reason", "deployment/Deployment Name", "spec.containers{foo}",
      "kubelet, Node1", "Message Data", "3d", 6, "event1"]),
    # no firstTimestamp: eventTime
    (core_event(eventTime=format_micro_time(NOW - 3 * 86400), lastTimestamp=ago(2 * 86400), count=1),
     ["2d", "Normal", "Event Reason", "deployment/Deployment Name", "spec.containers{foo}",
      "kubelet, Node1", "Message Data", "3d", 1, "event1"]),
    # no lastTimestamp: the first one
    (core_event(firstTimestamp=ago(3 * 86400), count=1),
     ["3d", "Normal", "Event Reason", "deployment/Deployment Name", "spec.containers{foo}",
      "kubelet, Node1", "Message Data", "3d", 1, "event1"]),
    # series: last observed time and its count
    (core_event(eventTime=format_micro_time(NOW - 3 * 86400),
                series={"count": 2, "lastObservedTime": format_micro_time(NOW - 2 * 86400)}),
     ["2d", "Normal", "Event Reason", "deployment/Deployment Name", "spec.containers{foo}",
      "kubelet, Node1", "Message Data", "3d", 2, "event1"]),
    # reporting controller and instance stand in for the source; no name -> kind only; trimmed
    (core_event(source={}, reportingComponent="default-scheduler", reportingInstance="sched-1",
                involvedObject={"kind": "Pod"}, message="  Scheduled \n", type="Warning",
                lastTimestamp=ago(30)),
     ["30s", "Warning", "Event Reason", "pod", "", "default-scheduler, sched-1", "Scheduled",
      "<unknown>", 1, "event1"]),
])
def test_core_event(obj, want):
    assert cells("events", obj) == want


def test_events_k8s_io_event():
    ev = {"apiVersion": "events.k8s.io/v1", "kind": "Event", "metadata": {"name": "e.1"},
          "eventTime": format_micro_time(NOW - 90), "reportingController": "kvert-scheduler",
          "reportingInstance": "kvert-scheduler-host", "action": "Binding", "reason": "Scheduled",
          "regarding": {"kind": "Pod", "name": "web-0", "namespace": "default"},
          "note": "Successfully assigned default/web-0 to node-1", "type": "Normal"}
    assert cells("events.k8s.io/events", ev) == [
        "90s", "Normal", "Scheduled", "pod/web-0", "", "kvert-scheduler, kvert-scheduler-host",
        "Successfully assigned default/web-0 to node-1", "90s", 1, "e.1"]
    ev.update(deprecatedFirstTimestamp=ago(600), deprecatedLastTimestamp=ago(60),
              deprecatedCount=4, deprecatedSource={"component": "kubelet"})
    assert cells("events.k8s.io/events", ev)[:9] == [
        "60s", "Normal", "Scheduled", "pod/web-0", "", "kubelet, kvert-scheduler-host",
        "Successfully assigned default/web-0 to node-1", "10m", 4]


def test_event_columns():
    cols = column_definitions(rt("events"))
    assert [(c["name"], c["priority"]) for c in cols] == [
        ("Last Seen", 0), ("Type", 0), ("Reason", 0), ("Object", 0), ("Subobject", 1),
        ("Source", 1), ("Message", 0), ("First Seen", 1), ("Count", 1), ("Name", 1)]
    assert column_definitions(rt("events.k8s.io/events")) == cols


# -- services -----------------------------------------------------------------------------------

def service(name, spec, status=None):
    return {"apiVersion": "v1", "kind": "Service", "metadata": {"name": name}, "spec": spec,
            "status": status or {}}


LB = {"loadBalancer": {"ingress": [{"ip": "2.3.4.5"}, {"ip": "3.4.5.6"},
                                   {"ip": "5.6.7.8", "hostname": "host5678"}]}}


@pytest.mark.parametrize("obj, want", [
    (service("service1", {"clusterIPs": ["1.2.3.4"], "type": "LoadBalancer",
                          "ports": [{"port": 80, "protocol": "TCP"}]},
             {"loadBalancer": {"ingress": [{"ip": "2.3.4.5"}, {"ip": "3.4.5.6"}]}}),
     ["service1", "LoadBalancer", "1.2.3.4", "2.3.4.5,3.4.5.6", "80/TCP", "<unknown>", "<none>"]),
    (service("service2", {"clusterIPs": ["1.3.4.5"], "type": "LoadBalancer",
                          "ports": [{"port": 80, "protocol": "TCP"}, {"port": 8090, "protocol": "UDP"},
                                    {"port": 8000, "protocol": "TCP"},
                                    {"port": 7777, "protocol": "SCTP"}]}),
     ["service2", "LoadBalancer", "1.3.4.5", "<pending>", "80/TCP,8090/UDP,8000/TCP,7777/SCTP",
      "<unknown>", "<none>"]),
    # the server prints wide: long load-balancer lists are not elided
    (service("service4", {"clusterIPs": ["1.5.6.7"], "type": "LoadBalancer",
                          "ports": [{"port": 80, "protocol": "TCP"}], "selector": {"foo": "bar"}}, LB),
     ["service4", "LoadBalancer", "1.5.6.7", "2.3.4.5,3.4.5.6,5.6.7.8", "80/TCP", "<unknown>",
      "foo=bar"]),
    (service("lb-ext", {"clusterIPs": ["1.5.6.7"], "type": "LoadBalancer", "externalIPs": ["9.9.9.9"],
                        "ports": [{"port": 80, "protocol": "TCP"}]},
             {"loadBalancer": {"ingress": [{"hostname": "lb.example.com"}]}}),
     ["lb-ext", "LoadBalancer", "1.5.6.7", "lb.example.com,9.9.9.9", "80/TCP", "<unknown>", "<none>"]),
    (service("web", {"clusterIP": "10.96.0.10", "clusterIPs": ["10.96.0.10"], "type": "ClusterIP",
                     "ports": [{"port": 53, "protocol": "UDP"}, {"port": 53, "protocol": "TCP"}],
                     "selector": {"k8s-app": "kube-dns", "a": "b"}}),
     ["web", "ClusterIP", "10.96.0.10", "<none>", "53/UDP,53/TCP", "<unknown>",
      "a=b,k8s-app=kube-dns"]),
    (service("np", {"clusterIPs": ["10.0.0.1"], "type": "NodePort", "externalIPs": ["1.1.1.1", "2.2.2.2"],
                    "ports": [{"port": 80, "nodePort": 30080, "protocol": "TCP"}]}),
     ["np", "NodePort", "10.0.0.1", "1.1.1.1,2.2.2.2", "80:30080/TCP", "<unknown>", "<none>"]),
    (service("headless", {"clusterIP": "None", "clusterIPs": ["None"], "type": "ClusterIP"}),
     ["headless", "ClusterIP", "None", "<none>", "<none>", "<unknown>", "<none>"]),
    (service("ext", {"type": "ExternalName", "externalName": "db.example.com"}),
     ["ext", "ExternalName", "<none>", "db.example.com", "<none>", "<unknown>", "<none>"]),
])
def test_service(obj, want):
    assert cells("services", obj) == want


# -- workloads ----------------------------------------------------------------------------------

TEMPLATE = {"spec": {"containers": [{"name": "fake-container1", "image": "fake-image1"},
                                    {"name": "fake-container2", "image": "fake-image2"}]}}


def test_deployment():
    d = {"apiVersion": "apps/v1", "kind": "Deployment",
         "metadata": {"name": "test1", "creationTimestamp": ago(-1.9)},
         "spec": {"replicas": 5, "template": TEMPLATE, "selector": {"matchLabels": {"foo": "bar"}}},
         "status": {"replicas": 10, "updatedReplicas": 2, "availableReplicas": 1,
                    "unavailableReplicas": 4}}
    assert cells("apps/deployments", d) == [
        "test1", "0/5", 2, 1, "0s", "fake-container1,fake-container2", "fake-image1,fake-image2",
        "foo=bar"]
    d["spec"]["selector"] = {"matchLabels": {"app": "web"},
                             "matchExpressions": [{"key": "tier", "operator": "In",
                                                   "values": ["b", "a"]},
                                                  {"key": "canary", "operator": "DoesNotExist"}]}
    d["status"]["readyReplicas"] = 3
    assert cells("apps/deployments", d)[1] == "3/5"
    assert cells("apps/deployments", d)[7] == "app=web,!canary,tier in (a,b)"
    d["spec"]["selector"] = {"matchExpressions": [{"key": "x", "operator": "In", "values": []}]}
    assert cells("apps/deployments", d)[7] == "<invalid>"
    d["spec"]["selector"] = {}
    assert cells("apps/deployments", d)[7] == ""
    assert names("apps/deployments") == ["Name", "Ready", "Up-to-date", "Available", "Age",
                                         "Containers", "Images", "Selector"]


def test_replicaset():
    rs = {"apiVersion": "apps/v1", "kind": "ReplicaSet",
          "metadata": {"name": "web-5d4f", "creationTimestamp": ago(3 * 3600 + 120)},
          "spec": {"replicas": 3, "template": TEMPLATE, "selector": {"matchLabels": {"app": "web"}}},
          "status": {"replicas": 3, "readyReplicas": 2}}
    assert cells("apps/replicasets", rs) == [
        "web-5d4f", 3, 3, 2, "3h2m", "fake-container1,fake-container2", "fake-image1,fake-image2",
        "app=web"]
    rs["spec"] = {"template": {}}
    assert cells("apps/replicasets", rs)[:4] == ["web-5d4f", 1, 3, 2]
    assert cells("apps/replicasets", rs)[5:] == ["", "", "<none>"]
    assert [c["type"] for c in column_definitions(rt("apps/replicasets"))][:4] == [
        "string", "integer", "integer", "integer"]


@pytest.mark.parametrize("spec, status, want", [
    ({"minAvailable": 2}, {"disruptionsAllowed": 1}, ["pdb", "2", "N/A", 1, "<unknown>"]),
    ({"maxUnavailable": "25%"}, {}, ["pdb", "N/A", "25%", 0, "<unknown>"]),
    ({"minAvailable": "50%", "maxUnavailable": 1}, {"disruptionsAllowed": 3},
     ["pdb", "50%", "1", 3, "<unknown>"]),
])
def test_pod_disruption_budget(spec, status, want):
    obj = {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "pdb"},
           "spec": spec, "status": status}
    assert cells("policy/poddisruptionbudgets", obj) == want
    assert names("policy/poddisruptionbudgets") == [
        "Name", "Min Available", "Max Unavailable", "Allowed Disruptions", "Age"]


# -- cluster-scoped and small kinds -------------------------------------------------------------

@pytest.mark.parametrize("key, obj, want", [
    ("namespaces", {"metadata": {"name": "default", "creationTimestamp": ago(40 * 86400)},
                    "status": {"phase": "Active"}}, ["default", "Active", "40d"]),
    ("namespaces", {"metadata": {"name": "gone", "creationTimestamp": ago(90)},
                    "status": {"phase": "Terminating"}}, ["gone", "Terminating", "90s"]),
    ("configmaps", {"metadata": {"name": "kube-root-ca.crt", "creationTimestamp": ago(200)},
                    "data": {"ca.crt": "x", "b": "y"}, "binaryData": {"c": "eg=="}},
     ["kube-root-ca.crt", 3, "3m20s"]),
    ("configmaps", {"metadata": {"name": "empty"}}, ["empty", 0, "<unknown>"]),
    ("scheduling.k8s.io/priorityclasses",
     {"metadata": {"name": "system-node-critical", "creationTimestamp": ago(86400)},
      "value": 2000001000, "preemptionPolicy": "PreemptLowerPriority"},
     ["system-node-critical", 2000001000, False, "24h", "PreemptLowerPriority"]),
    ("scheduling.k8s.io/priorityclasses",
     {"metadata": {"name": "high"}, "value": 1000, "globalDefault": True},
     ["high", 1000, True, "<unknown>", ""]),
    ("node.k8s.io/runtimeclasses", {"metadata": {"name": "gvisor", "creationTimestamp": ago(5)},
                                    "handler": "runsc"}, ["gvisor", "runsc", "5s"]),
    ("coordination.k8s.io/leases",
     {"metadata": {"name": "node-1", "creationTimestamp": ago(3600 * 9)},
      "spec": {"holderIdentity": "node-1", "leaseDurationSeconds": 40}}, ["node-1", "node-1", "9h"]),
    ("coordination.k8s.io/leases", {"metadata": {"name": "free"}, "spec": {}},
     ["free", "", "<unknown>"]),
    ("admissionregistration.k8s.io/mutatingwebhookconfigurations",
     {"metadata": {"name": "vpa-webhook-config", "creationTimestamp": ago(60)},
      "webhooks": [{"name": "vpa.k8s.io"}]}, ["vpa-webhook-config", 1, "60s"]),
    ("admissionregistration.k8s.io/validatingwebhookconfigurations",
     {"metadata": {"name": "none"}}, ["none", 0, "<unknown>"]),
    ("resourcequotas",
     {"metadata": {"name": "compute", "creationTimestamp": ago(600)},
      "status": {"hard": {"requests.cpu": "1", "requests.memory": "1Gi", "limits.cpu": "2",
                          "limits.memory": "2048Mi", "pods": "10"},
                 "used": {"requests.cpu": "500m", "requests.memory": "512Mi", "pods": "2",
                          "limits.memory": "1Gi"}}},
     ["compute", "pods: 2/10, requests.cpu: 500m/1, requests.memory: 512Mi/1Gi",
      "limits.cpu: 0/2, limits.memory: 1Gi/2Gi", "10m"]),
    ("resourcequotas", {"metadata": {"name": "fresh"}}, ["fresh", "", "", "<unknown>"]),
])
def test_small_kinds(key, obj, want):
    assert cells(key, obj) == want


@pytest.mark.parametrize("key, want", [
    ("namespaces", ["Name", "Status", "Age"]),
    ("configmaps", ["Name", "Data", "Age"]),
    ("scheduling.k8s.io/priorityclasses", ["Name", "Value", "Global-Default", "Age",
                                           "PreemptionPolicy"]),
    ("node.k8s.io/runtimeclasses", ["Name", "Handler", "Age"]),
    ("coordination.k8s.io/leases", ["Name", "Holder", "Age"]),
    ("resourcequotas", ["Name", "Request", "Limit", "Age"]),
    ("admissionregistration.k8s.io/mutatingwebhookconfigurations", ["Name", "Webhooks", "Age"]),
    ("admissionregistration.k8s.io/validatingwebhookconfigurations", ["Name", "Webhooks", "Age"]),
    ("limitranges", ["Name", "Created At"]),
    ("apiextensions.k8s.io/customresourcedefinitions", ["Name", "Created At"]),
])
def test_column_names(key, want):
    assert names(key) == want


def test_default_table_for_types_without_a_printer():
    cols = column_definitions(rt("limitranges"))
    assert cols[1] == {"name": "Created At", "type": "date", "format": "",
                       "description": cols[1]["description"], "priority": 0}
    assert cols[1]["description"].startswith("CreationTimestamp is a timestamp")
    assert cells("limitranges", {"metadata": {"name": "limits",
                                              "creationTimestamp": "2024-01-02T03:04:05Z"}}) == [
        "limits", "2024-01-02T03:04:05Z"]
    assert cells("apiextensions.k8s.io/customresourcedefinitions",
                 {"metadata": {"name": "verticalpodautoscalers.autoscaling.k8s.io",
                               "creationTimestamp": "2024-06-01T12:00:00+02:00"}}) == [
        "verticalpodautoscalers.autoscaling.k8s.io", "2024-06-01T10:00:00Z"]
    assert cells("limitranges", {"metadata": {"name": "x"}}) == ["x", "0001-01-01T00:00:00Z"]


# -- custom resources ---------------------------------------------------------------------------

WIDGET_COLUMNS = (
    {"name": "Replicas", "type": "integer", "jsonPath": ".spec.replicas"},
    {"name": "Ratio", "type": "number", "jsonPath": ".spec.ratio", "description": "the ratio"},
    {"name": "Enabled", "type": "boolean", "jsonPath": ".spec.enabled"},
    {"name": "Phase", "type": "string", "jsonPath": ".status.phase"},
    {"name": "First", "type": "string", "jsonPath": ".spec.items[0].name", "priority": 1},
    {"name": "All", "type": "string", "jsonPath": ".spec.items[*].name"},
    {"name": "Ready", "type": "string", "jsonPath": ".status.conditions[?(@.type==\"Ready\")].status"},
    {"name": "Spec", "type": "string", "jsonPath": ".spec.selector"},
    {"name": "Started", "type": "date", "jsonPath": ".status.startTime", "format": "date-time"},
    {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"},
)
WIDGET = ResourceType("example.com", "v1", "Widget", "widgets", True, schema={},
                      printer_columns=WIDGET_COLUMNS)


def widget(**spec_status):
    return {"apiVersion": "example.com/v1", "kind": "Widget",
            "metadata": {"name": "w1", "namespace": "default", "creationTimestamp": ago(3 * 86400)},
            **spec_status}


def crd_cells(obj, rt_=WIDGET):
    return to_table(rt_, [obj], now=NOW, include_object="None")["rows"][0]["cells"]


def test_crd_columns():
    cols = column_definitions(WIDGET)
    assert [c["name"] for c in cols] == ["Name", "Replicas", "Ratio", "Enabled", "Phase", "First",
                                         "All", "Ready", "Spec", "Started", "Age"]
    assert cols[0] == {"name": "Name", "type": "string", "format": "name",
                       "description": cols[0]["description"], "priority": 0}
    assert cols[1] == {"name": "Replicas", "type": "integer", "format": "", "priority": 0,
                       "description": "Custom resource definition column (in JSONPath format): "
                                      ".spec.replicas"}
    assert cols[2]["description"] == "the ratio"
    assert cols[5]["priority"] == 1
    assert cols[9]["format"] == "date-time"


def test_crd_cells():
    obj = widget(spec={"replicas": 3, "ratio": 0.5, "enabled": True,
                       "items": [{"name": "a"}, {"name": "b"}],
                       "selector": {"matchLabels": {"app": "x"}}},
                 status={"phase": "Ready", "startTime": ago(125),
                         "conditions": [{"type": "Synced", "status": "False"},
                                        {"type": "Ready", "status": "True"}]})
    assert crd_cells(obj) == ["w1", 3, 0.5, True, "Ready", "a", "a", "True",
                              '{"matchLabels":{"app":"x"}}', "2m5s", "3d"]


def test_crd_cells_missing_and_mistyped():
    assert crd_cells(widget()) == ["w1", None, None, None, None, None, None, None, None, None, "3d"]
    obj = widget(spec={"replicas": "three", "ratio": 2, "enabled": "yes", "items": []},
                 status={"phase": 7, "startTime": "yesterday", "conditions": "none"})
    # integer from a string: null; number from an int: float; a string column prints any scalar;
    # an index past the end and filtering a non-list are errors: null.
    assert crd_cells(obj) == ["w1", None, 2.0, None, "7", None, None, None, None, "<invalid>", "3d"]
    obj = widget(spec={"replicas": 2.7, "ratio": True}, status={"phase": None, "startTime": ""})
    assert crd_cells(obj)[1:5] == [2, None, None, None]
    assert crd_cells(obj)[9] == "<unknown>"


def test_crd_without_printer_columns_gets_age():
    gadget = ResourceType("example.com", "v1", "Gadget", "gadgets", True, schema={})
    cols = column_definitions(gadget)
    assert [(c["name"], c["type"]) for c in cols] == [("Name", "string"), ("Age", "date")]
    assert cols[1]["description"].startswith("CreationTimestamp is a timestamp")
    assert crd_cells({"metadata": {"name": "g", "creationTimestamp": ago(45)}}, gadget) == ["g", "45s"]
    # a group no built-in uses is served from a CRD even without a schema
    other = ResourceType("stable.example.com", "v1", "CronTab", "crontabs", True)
    assert [c["name"] for c in column_definitions(other)] == ["Name", "Age"]


def test_crd_invalid_json_path_keeps_earlier_columns():
    broken = ResourceType("example.com", "v1", "Broken", "brokens", True, schema={},
                          printer_columns=({"name": "A", "type": "string", "jsonPath": ".spec.a"},
                                           {"name": "B", "type": "string", "jsonPath": ".spec[?("},
                                           {"name": "C", "type": "string", "jsonPath": ".spec.c"}))
    assert [c["name"] for c in column_definitions(broken)] == ["Name", "A"]
    assert crd_cells({"metadata": {"name": "b"}, "spec": {"a": "x", "c": "y"}}, broken) == ["b", "x"]


VPA_CRD_COLUMNS = (
    {"name": "Mode", "type": "string", "jsonPath": ".spec.updatePolicy.updateMode"},
    {"name": "CPU", "type": "string",
     "jsonPath": ".status.recommendation.containerRecommendations[0].target.cpu"},
    {"name": "Mem", "type": "string",
     "jsonPath": ".status.recommendation.containerRecommendations[0].target.memory"},
    {"name": "Provided", "type": "string",
     "jsonPath": ".status.conditions[?(@.type=='RecommendationProvided')].status"},
    {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"},
)
HAMSTER_VPA = {
    "apiVersion": "autoscaling.k8s.io/v1", "kind": "VerticalPodAutoscaler",
    "metadata": {"name": "hamster-vpa", "namespace": "default", "creationTimestamp": ago(8 * 86400)},
    "spec": {"targetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "hamster"},
             "updatePolicy": {"updateMode": "Auto"}},
    "status": {"recommendation": {"containerRecommendations": [
        {"containerName": "hamster", "target": {"cpu": "587m", "memory": "262144k"}}]},
        "conditions": [{"type": "RecommendationProvided", "status": "True"}]},
}


def test_vpa_from_its_crd_columns():
    vpa_rt = ResourceType("autoscaling.k8s.io", "v1", "VerticalPodAutoscaler",
                          "verticalpodautoscalers", True, schema={}, printer_columns=VPA_CRD_COLUMNS)
    assert [c["name"] for c in column_definitions(vpa_rt)] == [
        "Name", "Mode", "CPU", "Mem", "Provided", "Age"]
    assert crd_cells(HAMSTER_VPA, vpa_rt) == ["hamster-vpa", "Auto", "587m", "262144k", "True", "8d"]
    fresh = {"metadata": {"name": "new", "creationTimestamp": ago(20)}, "spec": {}}
    assert crd_cells(fresh, vpa_rt) == ["new", None, None, None, None, "20s"]
    no_recs = dict(HAMSTER_VPA, status={"recommendation": {"containerRecommendations": []},
                                        "conditions": [{"type": "RecommendationProvided",
                                                        "status": "False"}]})
    assert crd_cells(no_recs, vpa_rt) == ["hamster-vpa", "Auto", None, None, "False", "8d"]


def test_builtin_vpa_type_uses_the_crd_columns():
    vpa = rt("autoscaling.k8s.io/verticalpodautoscalers")
    # the same columns whether or not the CRD has been installed (kubectl shows priority 0)
    assert [(c["name"], c["priority"]) for c in column_definitions(vpa)] == [
        ("Name", 0), ("Mode", 0), ("CPU", 0), ("Mem", 0), ("Provided", 0), ("Age", 0),
        ("MinReplicas", 1), ("OOMSeconds", 1)]
    assert crd_cells(HAMSTER_VPA, vpa)[:6] == ["hamster-vpa", "Auto", "587m", "262144k", "True", "8d"]
    checkpoints = rt("autoscaling.k8s.io/verticalpodautoscalercheckpoints")
    assert [c["name"] for c in column_definitions(checkpoints)] == ["Name", "Age"]


# -- JSONPath -----------------------------------------------------------------------------------

DOC = {"metadata": {"name": "x", "labels": {"app.kubernetes.io/name": "web"}},
       "spec": {"containers": [{"name": "a", "image": "i1", "n": 1},
                               {"name": "b", "image": "i2", "n": 2},
                               {"name": "c", "image": "i3", "n": 3}]}}


@pytest.mark.parametrize("path, want", [
    (".metadata.name", ["x"]),
    ("{.metadata.name}", ["x"]),
    ("$.metadata.name", ["x"]),
    (".spec.containers[0].image", ["i1"]),
    (".spec.containers[-1].image", ["i3"]),
    (".spec.containers[*].name", ["a", "b", "c"]),
    (".spec.containers[0:2].name", ["a", "b"]),
    (".spec.containers[1:].name", ["b", "c"]),
    (".spec.containers[::2].name", ["a", "c"]),
    (".spec.containers[0,2].name", ["a", "c"]),
    (".spec.containers[?(@.n > 1)].name", ["b", "c"]),
    (".spec.containers[?(@.name != 'a')].image", ["i2", "i3"]),
    (".spec.containers[?(@.image)].n", [1, 2, 3]),
    (".spec.containers[?(@.missing)].n", []),
    (".metadata.labels.app\\.kubernetes\\.io/name", ["web"]),
    (".metadata.labels['app.kubernetes.io/name']", ["web"]),
    ("..image", ["i1", "i2", "i3"]),
    (".spec.nothing.deeper", []),
])
def test_json_path(path, want):
    assert compile_path(path).find(DOC) == want


@pytest.mark.parametrize("path", [".spec.containers[3]", ".metadata.name[0]",
                                  ".spec.containers[?(@.n == 'x')]", ".metadata[?(@.a)]"])
def test_json_path_evaluation_errors(path):
    with pytest.raises(JSONPathError):
        compile_path(path).find(DOC)


@pytest.mark.parametrize("path", [".spec[", ".spec[?(@.a == )]", ".spec[abc]", "?"])
def test_json_path_parse_errors(path):
    with pytest.raises(JSONPathError):
        compile_path(path)


@pytest.mark.parametrize("value, want", [
    ("s", "s"), (True, "true"), (3, "3"), (0.5, "0.5"), (1.0, "1"), (1e6, "1e+06"),
    (123456.0, "123456"), (1e-05, "1e-05"), (None, None), ([1, "a"], '[1,"a"]'),
    ({"b": 1, "a": "<"}, '{"a":"\\u003c","b":1}'),
])
def test_print_value(value, want):
    assert print_value(value) == want


def test_go_format_float():
    assert [go_format_float(f) for f in (-2.5, 0.0001, 1234567.0, 1e21)] == [
        "-2.5", "0.0001", "1.234567e+06", "1e+21"]


# -- the Table envelope -------------------------------------------------------------------------

def test_table_envelope_and_include_object():
    cm = {"apiVersion": "v1", "kind": "ConfigMap",
          "metadata": {"name": "c", "namespace": "default", "resourceVersion": "7", "uid": "u1",
                       "creationTimestamp": ago(1)},
          "data": {"k": "v"}}
    table = to_table(rt("configmaps"), [cm], now=NOW, resource_version="42", continue_token="tok",
                     remaining_item_count=3)
    assert table["kind"] == "Table" and table["apiVersion"] == "meta.k8s.io/v1"
    assert table["metadata"] == {"resourceVersion": "42", "continue": "tok", "remainingItemCount": 3}
    assert [c["name"] for c in table["columnDefinitions"]] == ["Name", "Data", "Age"]
    assert table["rows"] == [{"cells": ["c", 1, "1s"],
                              "object": {"kind": "PartialObjectMetadata",
                                         "apiVersion": "meta.k8s.io/v1",
                                         "metadata": cm["metadata"]}}]
    assert to_table(rt("configmaps"), [cm], now=NOW, include_object="Object")["rows"][0]["object"] \
        == cm
    assert "object" not in to_table(rt("configmaps"), [cm], now=NOW,
                                     include_object="None")["rows"][0]
    assert to_table(rt("configmaps"), [cm], now=NOW, include_object="")["rows"][0]["object"][
        "kind"] == "PartialObjectMetadata"


def test_table_without_columns_and_empty():
    table = to_table(rt("pods"), [], now=NOW, with_columns=False)
    assert table == {"kind": "Table", "apiVersion": "meta.k8s.io/v1", "metadata": {},
                     "columnDefinitions": [], "rows": []}
    assert to_table(rt("pods"), [], now=NOW)["columnDefinitions"] == column_definitions(rt("pods"))


def test_rows_follow_input_order():
    objs = [{"metadata": {"name": n}} for n in ("b", "a", "c")]
    table = to_table(rt("configmaps"), objs, now=NOW)
    assert [r["cells"][0] for r in table["rows"]] == ["b", "a", "c"]


def test_unknown_include_object_is_not_acceptable():
    with pytest.raises(ApiError) as err:
        to_table(rt("pods"), [], now=NOW, include_object="Everything")
    assert err.value.code == 406 and err.value.reason == "NotAcceptable"


def test_column_definitions_are_copies():
    column_definitions(rt("pods"))[0]["name"] = "changed"
    assert column_definitions(rt("pods"))[0]["name"] == "Name"
    table = to_table(rt("pods"), [], now=NOW)
    table["columnDefinitions"][0]["name"] = "changed"
    assert column_definitions(rt("pods"))[0]["name"] == "Name"


# -- endpoints and endpoint slices ---------------------------------------------------------------

def endpoint_slice(name, address_type, ports, addresses):
    return {"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
            "metadata": {"name": name}, "addressType": address_type,
            "ports": [{"port": p, "protocol": "TCP"} for p in ports],
            "endpoints": [{"addresses": [a]} for a in addresses]}


# TestPrintEndpointSlice (pkg/printers/internalversion/printers_test.go): three values at most,
# then "+ N more..."; no value is "<unset>"
@pytest.mark.parametrize("obj, want", [
    (endpoint_slice("abcslice.123", "IPv4", [80], ["10.1.2.3", "2001:db8::1234:5678"]),
     ["abcslice.123", "IPv4", "80", "10.1.2.3,2001:db8::1234:5678", "<unknown>"]),
    (endpoint_slice("longerslicename.123", "IPv6", [80, 443],
                    ["2001:db8::1234:5678", "2001:db8::1234:5679"]),
     ["longerslicename.123", "IPv6", "80,443", "2001:db8::1234:5678,2001:db8::1234:5679",
      "<unknown>"]),
    (endpoint_slice("multiportslice.123", "IPv4", [80, 443, 3000, 3001],
                    ["10.1.2.3", "10.8.6.3", "10.9.8.1", "10.9.8.2"]),
     ["multiportslice.123", "IPv4", "80,443,3000 + 1 more...",
      "10.1.2.3,10.8.6.3,10.9.8.1 + 1 more...", "<unknown>"]),
    (endpoint_slice("placeholder", "IPv4", [], []),
     ["placeholder", "IPv4", "<unset>", "<unset>", "<unknown>"]),
])
def test_endpoint_slice(obj, want):
    assert names("discovery.k8s.io/endpointslices") == ["Name", "AddressType", "Ports", "Endpoints",
                                                         "Age"]
    assert cells("discovery.k8s.io/endpointslices", obj) == want


# TestPrintEndpoint: ready addresses with each port, three at most; no subsets is "<none>"
@pytest.mark.parametrize("subsets, want", [
    ([], "<none>"),
    ([{"addresses": [{"ip": "127.0.0.1"}, {"ip": "10.9.8.7"}], "ports": [{"port": 8001}]}],
     "127.0.0.1:8001,10.9.8.7:8001"),
    ([{"addresses": [{"ip": "1.1.1.1"}, {"ip": "2.2.2.2"}],
       "ports": [{"port": 80, "name": "a"}, {"port": 443, "name": "b"}]}],
     "1.1.1.1:80,2.2.2.2:80,1.1.1.1:443 + 1 more..."),
    ([{"addresses": [{"ip": "::1"}], "ports": [{"port": 80}]}], "[::1]:80"),
    ([{"addresses": [{"ip": "1.1.1.1"}]}], "1.1.1.1"),
])
def test_endpoints(subsets, want):
    obj = {"apiVersion": "v1", "kind": "Endpoints", "metadata": {"name": "ep"}, "subsets": subsets}
    assert names("endpoints") == ["Name", "Endpoints", "Age"]
    assert cells("endpoints", obj) == ["ep", want, "<unknown>"]
