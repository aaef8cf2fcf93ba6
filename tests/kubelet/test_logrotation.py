"""Container log rotation (kvert.kubelet.runtime.logrotation), with the cases of upstream's
pkg/kubelet/logs/container_log_manager_test.go, and the CRI log writer that rotates at the
write that fills its file: a flood keeps at most MaxFiles files of about MaxSize, and no
line is lost across a rotation."""

from __future__ import annotations

import asyncio
import gzip
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest

from kvert.clock import VirtualClock
from kvert.kubelet.runtime.crilog import LogWriter, read_log
from kvert.kubelet.runtime.logrotation import (
    COMPRESS_SUFFIX,
    TIMESTAMP_FORMAT,
    TMP_SUFFIX,
    LogRotatePolicy,
    all_logs,
    cleanup_unused,
    compress,
    remove_excess,
    retained_bytes,
    rotate,
    rotate_latest,
    rotated_name,
)

NOW = 1_767_366_245.0       # 2026-01-02T15:04:05Z


def _stamp(t: float) -> str:
    return datetime.fromtimestamp(int(t), UTC).strftime(TIMESTAMP_FORMAT)


def _touch(directory: Path, names: list[str], contents: list[str] | None = None) -> None:
    for i, name in enumerate(names):
        (directory / name).write_text(contents[i] if contents else "")


def _names(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir())


def test_all_logs_are_the_rotated_ones_in_use_oldest_first_then_the_current(tmp_path):
    # TestGetAllLogs
    names = ["test-log.11111111-111111.gz", "test-log", "test-log.00000000-000000.gz",
             "test-log.19900322-000000.gz", "test-log.19900322-111111.gz",
             "test-log.19880620-000000",          # unused: its .gz exists
             "test-log.19880620-000000.gz", "test-log.19880620-111111.gz", "test-log.20180101-000000",
             "test-log.20180101-000000.tmp"]      # temporary
    _touch(tmp_path, names)
    assert [p.name for p in all_logs(tmp_path / "test-log")] == [
        "test-log.00000000-000000.gz", "test-log.11111111-111111.gz", "test-log.19880620-000000.gz",
        "test-log.19880620-111111.gz", "test-log.19900322-000000.gz", "test-log.19900322-111111.gz",
        "test-log.20180101-000000", "test-log"]


def test_rotate_logs_rotates_only_full_logs_and_drops_the_excess(tmp_path):
    # TestRotateLogs: MaxFiles 3, MaxSize 10; the exited container's log is left alone (the
    # kubelet rotates running containers only: here a writer exists only while one runs)
    policy = LogRotatePolicy(max_size=10, max_files=3)
    names = ["test-log-1", "test-log-2", "test-log-3", "test-log-4",
             "test-log-3.00000000-000001", "test-log-3.00000000-000000.gz"]
    _touch(tmp_path, names, ["short", "longer than 10 bytes", "longer than 10 bytes", "longer than 10 bytes",
                             "the length doesn't matter", "the length doesn't matter"])
    reopened = []
    for name in ("test-log-1", "test-log-2", "test-log-3"):
        log = tmp_path / name
        if log.stat().st_size >= policy.max_size:
            rotate(log, policy, NOW, lambda log=log: reopened.append(log.name))
    stamp = _stamp(NOW)
    assert _names(tmp_path) == ["test-log-1", f"test-log-2.{stamp}", "test-log-3.00000000-000001.gz",
                                f"test-log-3.{stamp}", "test-log-4"]
    assert reopened == ["test-log-2", "test-log-3"]


def test_cleanup_unused_removes_temporary_and_already_compressed_files(tmp_path):
    # TestCleanupUnusedLog
    logs = [tmp_path / n for n in ("test-log-1", "test-log-1.tmp", "test-log-2", "test-log-2.gz")]
    _touch(tmp_path, [p.name for p in logs])
    assert cleanup_unused(logs) == [logs[0], logs[3]]
    assert _names(tmp_path) == ["test-log-1", "test-log-2.gz"]


@pytest.mark.parametrize(("max_files", "expect"), [
    (2, []),                                                       # "MaxFiles equal to 2"
    (3, ["test-log-4"]),                                           # "MaxFiles more than 2"
    (6, ["test-log-1", "test-log-2", "test-log-3", "test-log-4"]),  # "MaxFiles more than log file number"
])
def test_remove_excess_keeps_the_newest_max_files_minus_two(tmp_path, max_files, expect):
    # TestRemoveExcessLog
    logs = [tmp_path / n for n in ("test-log-3", "test-log-1", "test-log-2", "test-log-4")]
    _touch(tmp_path, [p.name for p in logs])
    assert [p.name for p in remove_excess(logs, max_files)] == expect
    assert _names(tmp_path) == expect


def test_compress_gzips_with_the_same_mode_and_removes_the_original(tmp_path):
    # TestCompressLog
    log = tmp_path / "test-rotate-latest-log"
    log.write_text("test log content")
    log.chmod(0o640)
    target = compress(log)
    assert target.name == log.name + COMPRESS_SUFFIX
    assert target.stat().st_mode & 0o777 == 0o640
    assert not log.exists() and not (tmp_path / (log.name + TMP_SUFFIX)).exists()
    assert gzip.decompress(target.read_bytes()) == b"test log content"
    with pytest.raises(OSError):
        compress(tmp_path / "test-unknown-log")


def test_rotate_latest_renames_and_reopens_or_restores_when_reopening_fails(tmp_path):
    # TestRotateLatestLog
    log = tmp_path / "test-rotate-latest-log"
    log.write_text("")
    calls = []
    rotated = rotate_latest(log, NOW, lambda: calls.append("ReopenContainerLog"))
    assert rotated.name == f"{log.name}.{_stamp(NOW)}" and rotated.exists() and not log.exists()

    other = tmp_path / "other-log"
    other.write_text("")

    def fail() -> None:
        calls.append("ReopenContainerLog")
        raise OSError("random error")
    with pytest.raises(OSError):
        rotate_latest(other, NOW, fail)
    assert other.exists() and not (tmp_path / f"other-log.{_stamp(NOW)}").exists()
    assert calls == ["ReopenContainerLog", "ReopenContainerLog"]


def test_two_rotations_in_one_second_keep_both_files_in_order(tmp_path):
    # upstream would rename onto the first rotated file (and lose it); kvert takes the next second
    log = tmp_path / "0.log"
    (tmp_path / f"0.log.{_stamp(NOW)}.gz").write_text("")
    assert rotated_name(log, NOW).name == f"0.log.{_stamp(NOW + 1)}"
    (tmp_path / f"0.log.{_stamp(NOW + 1)}").write_text("")
    assert rotated_name(log, NOW + 0.5).name == f"0.log.{_stamp(NOW + 2)}"


def test_a_second_freed_by_removal_is_not_reused(tmp_path):
    # many rotations in one second: after the oldest is removed its second is free, but a file
    # named by it would sort before the newer ones and be the next removed
    log = tmp_path / "0.log"
    (tmp_path / f"0.log.{_stamp(NOW + 1)}").write_text("")
    (tmp_path / f"0.log.{_stamp(NOW + 2)}.gz").write_text("")
    assert rotated_name(log, NOW).name == f"0.log.{_stamp(NOW + 3)}"


def test_rotations_faster_than_a_second_keep_the_newest_files(tmp_path):
    log = tmp_path / "0.log"
    policy = LogRotatePolicy(max_size=1, max_files=3)
    for i in range(8):
        log.write_text(f"round {i}\n")
        rotate(log, policy, NOW, lambda: None)
    names = sorted(p.name for p in tmp_path.iterdir())
    assert len(names) == 2      # the current log is not reopened here: max_files - 1 rotated files
    newest = tmp_path / names[-1]
    assert newest.read_text() == "round 7\n"
    assert gzip.decompress((tmp_path / names[0]).read_bytes()) == b"round 6\n"


def test_what_rotation_keeps_of_a_flood_is_bounded():
    policy = LogRotatePolicy(max_size=10 * 2**20, max_files=5)
    assert retained_bytes(3 * 2**20, policy) == 3 * 2**20
    assert retained_bytes(706 * 10**6, policy) <= 50 * 2**20
    assert retained_bytes(706 * 10**6, policy) > 40 * 2**20
    assert retained_bytes(706 * 10**6, LogRotatePolicy(max_size=-1)) == 706 * 10**6


def test_a_policy_needs_two_files_at_least():
    with pytest.raises(ValueError, match="invalid MaxFiles 1, must be > 1"):
        LogRotatePolicy(max_files=1)


# -- the writer ---------------------------------------------------------------------------------------

def _flood(tmp_path: Path, policy: LogRotatePolicy, chunks: int, chunk: bytes) -> tuple[Path, LogWriter, list[int]]:
    clock = VirtualClock(NOW)
    log = tmp_path / "c" / "0.log"
    totals = []

    async def main() -> LogWriter:
        writer = LogWriter(log, clock, policy)
        for i in range(chunks):
            await writer.append("stdout" if i % 3 else "stderr", chunk)
            totals.append(sum(p.stat().st_size for p in log.parent.iterdir()))
        writer.close()
        return writer
    writer = asyncio.run(main())
    return log, writer, totals


def test_a_flood_is_bounded_by_max_files_of_max_size(tmp_path):
    policy = LogRotatePolicy(max_size=64 * 1024, max_files=3)
    line = b"x" * 16 + b"\n"
    chunk = line * 1000                    # 17000 bytes of output, ~48000 bytes of records
    log, writer, totals = _flood(tmp_path, policy, 200, chunk)
    record = len(b"2026-01-02T15:04:05.000000000Z stdout F ") + len(line)
    written = 200 * 1000 * record
    assert written > 50 * policy.max_size * policy.max_files     # the flood is far larger...
    # ...than what is ever on disk: MaxFiles files, each at most MaxSize plus one write
    bound = policy.max_files * (policy.max_size + 1000 * record)
    assert max(totals) <= bound
    files = _names(log.parent)
    assert len(files) <= policy.max_files
    assert "0.log" in files and any(n.endswith(COMPRESS_SUFFIX) for n in files)
    assert writer.rotations > 10


def test_no_line_is_lost_across_rotations(tmp_path):
    policy = LogRotatePolicy(max_size=4096, max_files=50)
    clock = VirtualClock(NOW)
    log = tmp_path / "c" / "0.log"

    async def main() -> None:
        writer = LogWriter(log, clock, policy)
        for i in range(400):
            await writer.append("stdout", b"line %d\nhalf" % i)       # a line split across writes
            await writer.append("stdout", b" %d\n" % i)
        writer.close()
    asyncio.run(main())
    texts = []
    for path in all_logs(log):
        raw = gzip.decompress(path.read_bytes()) if path.name.endswith(COMPRESS_SUFFIX) else path.read_bytes()
        whole = tmp_path / "whole.log"
        whole.write_bytes(raw)
        texts += [text for _, text in read_log(whole)]
    expected = [s for i in range(400) for s in (f"line {i}", f"half {i}")]
    assert texts == expected


def test_a_writer_without_a_policy_never_rotates(tmp_path):
    log, writer, totals = _flood(tmp_path, LogRotatePolicy(max_size=-1), 20, b"y" * 17 + b"\n")
    assert _names(log.parent) == ["0.log"] and writer.rotations == 0
    assert totals == sorted(totals)


def test_rotation_does_not_hold_up_the_event_loop(tmp_path):
    # compressing runs in a thread: a task on the loop keeps running meanwhile
    policy = LogRotatePolicy(max_size=1 << 20, max_files=3)
    log = tmp_path / "c" / "0.log"
    (tmp_path / "c").mkdir()
    old = tmp_path / "c" / "0.log.20260101-000000"
    old.write_bytes(b"z" * (8 << 20))       # an older rotated file to compress
    ticks = []

    async def main() -> None:
        writer = LogWriter(log, VirtualClock(NOW), policy)

        async def ticker() -> None:
            while True:
                ticks.append(time.monotonic())
                await asyncio.sleep(0)
        task = asyncio.ensure_future(ticker())
        await asyncio.sleep(0)
        before = len(ticks)
        await writer.append("stdout", b"q" * (1 << 20) + b"\n")
        during = len(ticks) - before
        task.cancel()
        writer.close()
        assert writer.rotations == 1 and during >= 1
    asyncio.run(main())
    assert (tmp_path / "c" / (old.name + COMPRESS_SUFFIX)).exists()
