"""Container log files in the CRI format, and reading them back for ``kubectl logs``.

Each line of a file is ``<RFC3339Nano time> <stream> <tag> <text>``: stream ``stdout`` or
``stderr``, tag ``F`` for a full line or ``P`` for a part of a line longer than
``MAX_LINE`` bytes (the rest follows in the next records), as containerd writes them under
``/var/log/pods/<namespace>_<pod>_<uid>/<container>/<restart>.log``.

With a rotation policy (``logrotation.LogRotatePolicy``: the kubelet's
``containerLogMaxSize`` / ``containerLogMaxFiles``) the writer rotates its file as soon as a
write takes it to the policy's size, rather than on the kubelet's 10 s poll: a flood is
bounded by ``max_files`` files of about ``max_size`` (plus one read of output), however fast
it writes. Rotating (compressing the older files) runs in a worker thread; the process's
output waits in its pipe meanwhile, so nothing is lost and the event loop is not held up.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from datetime import UTC, datetime
from pathlib import Path

from kvert.clock.base import Clock
from kvert.kubelet.runtime.logrotation import LogRotatePolicy, rotate

log = logging.getLogger(__name__)

MAX_LINE = 16 * 1024


def format_timestamp(t: float) -> str:
    seconds = int(t // 1)
    nanos = int(round((t - seconds) * 1e9))
    if nanos >= 1_000_000_000:
        seconds, nanos = seconds + 1, nanos - 1_000_000_000
    return f"{datetime.fromtimestamp(seconds, UTC):%Y-%m-%dT%H:%M:%S}.{nanos:09d}Z"


def parse_timestamp(text: str) -> float:
    whole, _, fraction = text.rstrip("Z").partition(".")
    base = datetime.strptime(whole, "%Y-%m-%dT%H:%M:%S").replace(tzinfo=UTC).timestamp()
    return base + (int(fraction) / 10 ** len(fraction) if fraction else 0.0)


class LogWriter:
    """Appends a process's output to its log file, one record per line; with a ``policy``,
    ``append`` rotates the file when it reaches the policy's size."""

    def __init__(self, path: Path, clock: Clock, policy: LogRotatePolicy | None = None) -> None:
        self.path = path
        self.clock = clock
        self.policy = policy
        self.rotations = 0
        self._partial = {"stdout": b"", "stderr": b""}
        path.parent.mkdir(parents=True, exist_ok=True)
        self._file = open(path, "ab")
        self.size = self._file.tell()
        # the rotation thread swaps the file while close() may run (a cancelled pump)
        self._lock = threading.Lock()
        self._closed = False
        self._rotating: asyncio.Future[Path] | None = None

    async def append(self, stream: str, data: bytes) -> None:
        """``write``, then rotate if the file reached the policy's size. While a rotation
        runs, every stream's next append waits for it (its process's pipe fills meanwhile)."""
        while self._rotating is not None:
            await asyncio.wait([self._rotating])
        self.write(stream, data)
        policy = self.policy
        if policy is None or not policy.enabled or self.size < policy.max_size or self._closed:
            return
        rotating = self._rotating = asyncio.ensure_future(
            asyncio.to_thread(rotate, self.path, policy, self.clock.now(), self.reopen))
        try:
            await asyncio.wait([rotating])
            rotating.result()
            self.rotations += 1
        except OSError as e:      # the next write that finds the file full tries again
            log.warning("rotating the container log %s: %s", self.path, e)
        finally:
            self._rotating = None

    def reopen(self) -> None:
        """``ReopenContainerLog``: write to a new file at ``path`` (the old one was renamed)."""
        with self._lock:
            if self._closed:
                return
            new = open(self.path, "ab")
            self._file.close()
            self._file = new
            self.size = new.tell()

    def write(self, stream: str, data: bytes) -> None:
        buffered = self._partial[stream] + data
        *lines, rest = buffered.split(b"\n")
        stamp = format_timestamp(self.clock.now()).encode()
        out = []
        for line in lines:
            out += self._records(stamp, stream, line, final=True)
        while len(rest) > MAX_LINE:
            out += self._records(stamp, stream, rest[:MAX_LINE], final=False)
            rest = rest[MAX_LINE:]
        self._partial[stream] = rest
        if out:
            chunk = b"".join(out)
            with self._lock:
                self._file.write(chunk)
                self._file.flush()
                self.size += len(chunk)

    @staticmethod
    def _records(stamp: bytes, stream: str, line: bytes, final: bool) -> list[bytes]:
        chunks = [line[i:i + MAX_LINE] for i in range(0, len(line), MAX_LINE)] or [b""]
        tags = [b"P"] * (len(chunks) - 1) + [b"F" if final else b"P"]
        return [b"%s %s %s %s\n" % (stamp, stream.encode(), tag, chunk) for tag, chunk in zip(tags, chunks)]

    def close(self) -> None:
        """Write what is left of unfinished lines (a process that ended without a newline)."""
        stamp = format_timestamp(self.clock.now()).encode()
        with self._lock:
            for stream, rest in self._partial.items():
                if rest:
                    self._file.write(b"".join(self._records(stamp, stream, rest, final=True)))
            self._partial = {"stdout": b"", "stderr": b""}
            self._closed = True
            self._file.close()


def read_log(path: Path) -> list[tuple[float, str]]:
    """(time, text) of every complete line of a CRI log file, parts joined, in file order."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return []
    out: list[tuple[float, str]] = []
    pending: dict[bytes, tuple[float, bytes]] = {}
    for record in raw.split(b"\n"):
        fields = record.split(b" ", 3)
        if len(fields) < 3:
            continue
        stamp, stream, tag = fields[:3]
        text = fields[3] if len(fields) == 4 else b""
        try:
            when = parse_timestamp(stamp.decode())
        except ValueError:
            continue
        first, so_far = pending.pop(stream, (when, b""))
        if tag == b"P":
            pending[stream] = (first, so_far + text)
        else:
            out.append((first, (so_far + text).decode(errors="replace")))
    return out


class FileLog:
    """One container instance's log, with the interface of ``simlogs.ContainerLog``."""

    def __init__(self, path: Path):
        self.path = path
        self.started_at = 0.0
        self.finished_at = 0.0

    @classmethod
    def of_file(cls, path: Path) -> FileLog:
        """The log of a container that ended before this process knew it: it started at its
        first line and finished when the file was last written."""
        log = cls(path)
        lines = read_log(path)
        # the file's time is coarser than the lines' stamps
        log.finished_at = max([path.stat().st_mtime] + [t for t, _ in lines[-1:]])
        log.started_at = lines[0][0] if lines else log.finished_at
        return log

    def lines(self, now: float, after: float | None = None) -> list[tuple[float, str]]:
        return [item for item in read_log(self.path)
                if item[0] <= now and (after is None or item[0] > after)]


__all__ = ["FileLog", "LogWriter", "MAX_LINE", "format_timestamp", "parse_timestamp", "read_log"]
