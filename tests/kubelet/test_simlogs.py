"""A simulated container's log: lifecycle lines as they happen, a usage line each minute
of its life computed from its usage profile when read."""

from __future__ import annotations

from kvert.kubelet.runtime.logrotation import LogRotatePolicy
from kvert.kubelet.runtime.simlogs import USAGE_EVERY, ContainerLog, record_bytes
from kvert.kubelet.usage import parse_container_usage


def _log() -> ContainerLog:
    usage = parse_container_usage('{"cpu":{"profile":"linear","start":"100m","rate":"60m/min"},'
                                  '"memory":{"profile":"constant","value":"64Mi"}}', "c")
    return ContainerLog(usage)


def test_usage_lines_every_minute_between_lifecycle_lines():
    log = _log()
    log.started_at = 1000.0
    log.say(1000.0, "started: image x")
    assert log.lines(1059.0) == [(1000.0, "started: image x")]
    lines = log.lines(1000.0 + 2 * USAGE_EVERY + 1)
    assert lines == [(1000.0, "started: image x"),
                     (1060.0, "usage: cpu=160m memory=64Mi"),
                     (1120.0, "usage: cpu=220m memory=64Mi")]
    log.say(1130.0, "exited: code 0")
    log.finished_at = 1130.0
    assert log.lines(5000.0)[-1] == (1130.0, "exited: code 0")   # nothing after the end
    assert len(log.lines(5000.0)) == 4


def test_a_container_that_never_started_has_only_what_was_said():
    log = _log()
    assert log.lines(10_000.0) == []


def test_a_follower_gets_only_the_lines_after_what_it_saw():
    log = _log()
    log.started_at = 1000.0
    log.say(1000.0, "started: image x")
    everything = log.lines(1000.0 + 5 * USAGE_EVERY)
    for seen in (999.0, 1000.0, 1060.0, 1061.0, 1180.0, 1300.0):
        assert log.lines(1000.0 + 5 * USAGE_EVERY, after=seen) == [line for line in everything if line[0] > seen]


def test_a_flood_of_lines_is_rotated_and_bounded_like_the_kubelets_files():
    # containerLogMaxSize / containerLogMaxFiles as pkg/kubelet/logs/container_log_manager.go
    # keeps them: the current file and at most MaxFiles-1 rotated ones; kubectl logs shows
    # only the current file
    log = _log()
    log.policy = LogRotatePolicy(max_size=4096, max_files=3)
    line = "x" * 16
    for i in range(10_000):
        log.say(1000.0 + i / 100, line)
    size = record_bytes(line)
    assert size == len(b"2026-01-02T15:04:05.000000000Z stdout F " + line.encode() + b"\n")
    assert log.written == 10_000 * size
    assert len(log.rotated) == 2
    assert log.disk_usage <= 3 * (4096 + size)
    assert log.disk_usage == log.current_bytes + sum(log.rotated)
    assert len(log.events) * size == log.current_bytes < 4096 + size
