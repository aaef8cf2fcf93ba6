"""Container log rotation, as the kubelet's ContainerLogManager does it
(``pkg/kubelet/logs/container_log_manager.go``), over the files of one container log.

A container's current log is ``<dir>/<restart>.log``; a rotated one is that name with the
rotation time as a suffix, ``0.log.20260102-150405``, compressed with gzip to
``0.log.20260102-150405.gz``. Rotating a log whose size reached ``max_size``:

1. removes what an interrupted rotation left (``*.tmp``, and a rotated file whose ``.gz``
   exists: the compression finished but the original was not removed yet);
2. removes the oldest rotated files until ``max_files - 2`` are left (the current log and
   the one about to be rotated make ``max_files``);
3. compresses every rotated file left (so only the newest rotated file, made next, is plain);
4. renames the current log to its rotated name and has the writer reopen the current one
   (renamed back if reopening fails: nothing is lost and the next pass tries again).

So a container keeps at most ``max_files`` files, each about ``max_size`` or (compressed)
less. One difference: upstream names the rotated file by the second it was rotated in and
a second rotation within that second would replace the first; kvert takes the first second
after every rotated file's (so the names still sort oldest to newest and no rotated file is
lost, even when several rotations fall in one second).
"""

from __future__ import annotations

import gzip
import os
import shutil
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

TIMESTAMP_FORMAT = "%Y%m%d-%H%M%S"     # Go's "20060102-150405"
COMPRESS_SUFFIX = ".gz"
TMP_SUFFIX = ".tmp"
DEFAULT_MAX_SIZE = 10 * 2**20           # containerLogMaxSize: 10Mi
DEFAULT_MAX_FILES = 5                   # containerLogMaxFiles


@dataclass(frozen=True)
class LogRotatePolicy:
    """``LogRotatePolicy``: rotate at ``max_size`` bytes (negative: never), keep at most
    ``max_files`` files (at least 2)."""
    max_size: int = DEFAULT_MAX_SIZE
    max_files: int = DEFAULT_MAX_FILES

    def __post_init__(self) -> None:
        if self.max_files <= 1:
            raise ValueError(f"invalid MaxFiles {self.max_files}, must be > 1")

    @property
    def enabled(self) -> bool:
        return self.max_size >= 0


DEFAULT_POLICY = LogRotatePolicy()


def _rotated(log: Path) -> list[Path]:
    """Every file named ``<log>.*`` (the pattern the kubelet globs)."""
    if not log.parent.is_dir():
        return []
    prefix = log.name + "."
    return [p for p in log.parent.iterdir() if p.name.startswith(prefix)]


def is_in_use(log: Path, logs: Sequence[Path]) -> bool:
    """``isInUse``: temporary files are not; compressed ones are; a plain file whose
    compressed version exists is not (its compression finished)."""
    if log.name.endswith(TMP_SUFFIX):
        return False
    if log.name.endswith(COMPRESS_SUFFIX):
        return True
    compressed = log.name + COMPRESS_SUFFIX
    return not any(other.name == compressed for other in logs)


def filter_unused(logs: Sequence[Path]) -> tuple[list[Path], list[Path]]:
    """(in use, unused), each in the order given."""
    inuse = [p for p in logs if is_in_use(p, logs)]
    return inuse, [p for p in logs if p not in inuse]


def all_logs(log: Path) -> list[Path]:
    """``GetAllLogs``: the rotated files in use, oldest first, then the current log."""
    inuse, _ = filter_unused(_rotated(log))
    return sorted(inuse, key=lambda p: p.name) + [log]


def cleanup_unused(logs: Sequence[Path]) -> list[Path]:
    """``cleanupUnusedLogs``: remove what an interrupted rotation left; the rest, as given."""
    inuse, unused = filter_unused(logs)
    for path in unused:
        path.unlink(missing_ok=True)
    return inuse


def remove_excess(logs: Sequence[Path], max_files: int) -> list[Path]:
    """``removeExcessLogs``: keep the newest ``max_files - 2`` rotated files (the current log
    and the one being rotated are the other two), removing oldest first (a reader of an
    older file keeps its open file)."""
    ordered = sorted(logs, key=lambda p: p.name)
    keep = max(0, max_files - 2)
    cut = max(0, len(ordered) - keep)
    for path in ordered[:cut]:
        path.unlink(missing_ok=True)
    return ordered[cut:]


def compress(log: Path) -> Path:
    """``compressLog``: gzip ``log`` to ``log.gz`` (written as ``log.tmp`` first, so an
    interrupted compression leaves only a temporary file), with the original's mode, then
    remove the original. Raises OSError for a missing file."""
    mode = log.stat().st_mode & 0o7777
    tmp = log.with_name(log.name + TMP_SUFFIX)
    target = log.with_name(log.name + COMPRESS_SUFFIX)
    try:
        with open(log, "rb") as src, open(tmp, "wb") as raw:
            os.fchmod(raw.fileno(), mode)
            with gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0) as out:
                shutil.copyfileobj(src, out, 1 << 20)
        tmp.rename(target)
    finally:
        tmp.unlink(missing_ok=True)
    log.unlink()
    return target


def _stamp_of(rotated: Path, log: Path) -> int | None:
    """The second a rotated file of ``log`` is named by, or None for a name not of that form."""
    stamp = rotated.name[len(log.name) + 1:].removesuffix(COMPRESS_SUFFIX).removesuffix(TMP_SUFFIX)
    try:
        return int(datetime.strptime(stamp, TIMESTAMP_FORMAT).replace(tzinfo=UTC).timestamp())
    except ValueError:
        return None


def rotated_name(log: Path, now: float) -> Path:
    """``<log>.<YYYYMMDD-HHMMSS>`` of ``now`` (UTC), or of the second after the newest
    rotated file of this log when that is not earlier: a freed earlier second is never
    reused, or the new file would sort before older ones and be removed first."""
    stamps = [s for s in (_stamp_of(p, log) for p in _rotated(log)) if s is not None]
    second = max([int(now), *(s + 1 for s in stamps)])
    stamp = datetime.fromtimestamp(second, UTC).strftime(TIMESTAMP_FORMAT)
    return log.with_name(f"{log.name}.{stamp}")


def rotate_latest(log: Path, now: float, reopen: Callable[[], None]) -> Path:
    """``rotateLatestLog``: rename the current log to its rotated name and reopen; if
    reopening fails the file is renamed back and the error raised."""
    rotated = rotated_name(log, now)
    log.rename(rotated)
    try:
        reopen()
    except Exception:
        rotated.rename(log)
        raise
    return rotated


def rotate(log: Path, policy: LogRotatePolicy, now: float, reopen: Callable[[], None]) -> Path:
    """``rotateLog``: clean up, drop the excess, compress the rest, rotate the current log.
    Returns the rotated file's path."""
    logs = cleanup_unused(_rotated(log))
    for path in remove_excess(logs, policy.max_files):
        if not path.name.endswith(COMPRESS_SUFFIX):
            compress(path)
    return rotate_latest(log, now, reopen)


def needs_rotation(log: Path, policy: LogRotatePolicy) -> bool:
    """Whether the current log has reached the policy's size."""
    if not policy.enabled:
        return False
    try:
        return log.stat().st_size >= policy.max_size
    except FileNotFoundError:
        return False


def retained_bytes(written: int, policy: LogRotatePolicy) -> int:
    """Of ``written`` bytes of output, what a log rotated at the write that fills it keeps:
    the current file (what came after the last rotation) and at most ``max_files - 1``
    rotated files of ``max_size`` each (uncompressed). A model for simulated containers,
    whose output is a rate, not files."""
    if not policy.enabled or policy.max_size <= 0 or written < policy.max_size:
        return max(0, written)
    rotations, current = divmod(written, policy.max_size)
    return current + min(rotations, policy.max_files - 1) * policy.max_size


def clean(log: Path) -> None:
    """``Clean``: remove the container's current and rotated logs."""
    for path in [log, *_rotated(log)]:
        path.unlink(missing_ok=True)


def disk_usage(log: Path) -> int:
    """Bytes the container's logs take on disk (current and rotated, as ``du`` counts them)."""
    total = 0
    for path in [log, *_rotated(log)]:
        try:
            total += path.stat().st_blocks * 512
        except FileNotFoundError:
            continue
    return total


__all__ = [
    "COMPRESS_SUFFIX", "DEFAULT_MAX_FILES", "DEFAULT_MAX_SIZE", "DEFAULT_POLICY", "LogRotatePolicy",
    "TIMESTAMP_FORMAT", "TMP_SUFFIX", "all_logs", "clean", "cleanup_unused", "compress", "disk_usage",
    "filter_unused", "is_in_use", "needs_rotation", "remove_excess", "retained_bytes", "rotate", "rotate_latest",
    "rotated_name",
]
