"""CRI-format container logs: what the cgroupfs runtime writes and ``kubectl logs`` reads."""

from __future__ import annotations

from kvert.kubelet.runtime.crilog import MAX_LINE, FileLog, LogWriter, format_timestamp, parse_timestamp, read_log


class Clock:
    def __init__(self, t: float):
        self.t = t

    def now(self) -> float:
        return self.t


def test_timestamps_are_rfc3339_nano():
    # parseCRILog's example in pkg/kubelet/kuberuntime/logs/logs.go
    t = parse_timestamp("2016-10-06T00:17:09.669794202Z")
    assert abs(t - 1475713029.669794202) < 1e-6
    assert format_timestamp(1475713029.5) == "2016-10-06T00:17:09.500000000Z"
    assert parse_timestamp("2016-10-06T00:17:09Z") == 1475713029.0


def test_reads_the_upstream_example(tmp_path):
    # the format of parseCRILog's doc comment (pkg/kubelet/kuberuntime/logs/logs.go): a partial
    # line is joined with the full one that ends it
    path = tmp_path / "0.log"
    path.write_text("2016-10-06T00:17:09.669794202Z stdout P log content 1\n"
                    "2016-10-06T00:17:09.669794203Z stdout F  and more\n"
                    "2016-10-06T00:17:10.000000000Z stderr F log content 2\n")
    lines = read_log(path)
    assert [text for _, text in lines] == ["log content 1 and more", "log content 2"]
    assert abs(lines[0][0] - 1475713029.669794202) < 1e-6


def test_writer_splits_lines_and_streams(tmp_path):
    clock = Clock(1000.25)
    writer = LogWriter(tmp_path / "c" / "0.log", clock)
    writer.write("stdout", b"hello\nwor")
    writer.write("stderr", b"oops\n")
    clock.t = 1001.0
    writer.write("stdout", b"ld\n")
    writer.write("stdout", b"no newline")
    writer.close()
    raw = (tmp_path / "c" / "0.log").read_text().splitlines()
    assert raw[0] == "1970-01-01T00:16:40.250000000Z stdout F hello"
    assert raw[1] == "1970-01-01T00:16:40.250000000Z stderr F oops"
    assert read_log(tmp_path / "c" / "0.log") == [(1000.25, "hello"), (1000.25, "oops"), (1001.0, "world"),
                                                  (1001.0, "no newline")]


def test_long_lines_are_written_in_parts(tmp_path):
    writer = LogWriter(tmp_path / "0.log", Clock(5.0))
    writer.write("stdout", b"x" * (MAX_LINE + 10) + b"\n")
    writer.close()
    raw = (tmp_path / "0.log").read_text().splitlines()
    assert [r.split(" ")[2] for r in raw] == ["P", "F"]
    assert read_log(tmp_path / "0.log") == [(5.0, "x" * (MAX_LINE + 10))]


def test_file_log_has_the_sim_logs_interface(tmp_path):
    clock = Clock(10.0)
    writer = LogWriter(tmp_path / "0.log", clock)
    for t in (10.0, 11.0, 12.0):
        clock.t = t
        writer.write("stdout", f"line {int(t)}\n".encode())
    log = FileLog(tmp_path / "0.log")
    assert log.lines(11.5) == [(10.0, "line 10"), (11.0, "line 11")]
    assert log.lines(20.0, after=11.0) == [(12.0, "line 12")]
    assert log.finished_at == 0.0
