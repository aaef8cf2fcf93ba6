"""A plugin's answer: :class:`Status` and its :class:`Code` (``framework.Status``).

``None`` means Success everywhere, as a nil ``*Status`` does in Go.
"""

from __future__ import annotations

from enum import IntEnum


class Code(IntEnum):
    """``framework.Code``."""

    SUCCESS = 0
    ERROR = 1
    UNSCHEDULABLE = 2
    UNSCHEDULABLE_AND_UNRESOLVABLE = 3
    WAIT = 4
    SKIP = 5
    PENDING = 6


CODE_NAMES = {Code.SUCCESS: "Success", Code.ERROR: "Error", Code.UNSCHEDULABLE: "Unschedulable",
              Code.UNSCHEDULABLE_AND_UNRESOLVABLE: "UnschedulableAndUnresolvable",
              Code.WAIT: "Wait", Code.SKIP: "Skip", Code.PENDING: "Pending"}

_REJECTED = (Code.UNSCHEDULABLE, Code.UNSCHEDULABLE_AND_UNRESOLVABLE, Code.PENDING)


class Status:
    """The result of running a plugin: a code, human-readable reasons, the plugin's name."""

    __slots__ = ("code", "reasons", "plugin", "error")

    def __init__(self, code: Code = Code.SUCCESS, *reasons: str, plugin: str = "",
                 error: BaseException | None = None):
        self.code = code if type(code) is Code else Code(code)
        self.reasons = list(reasons)
        self.plugin = plugin
        self.error = error
        if error is not None and not self.reasons:
            self.reasons = [str(error)]

    @classmethod
    def as_status(cls, error: BaseException, plugin: str = "") -> Status:
        return cls(Code.ERROR, plugin=plugin, error=error)

    @property
    def is_success(self) -> bool:
        return self.code == Code.SUCCESS

    @property
    def is_rejected(self) -> bool:
        return self.code in _REJECTED

    @property
    def is_skip(self) -> bool:
        return self.code == Code.SKIP

    @property
    def is_wait(self) -> bool:
        return self.code == Code.WAIT

    def message(self) -> str:
        return ", ".join(self.reasons)

    def with_plugin(self, plugin: str) -> Status:
        self.plugin = plugin
        return self

    def __repr__(self) -> str:
        return f"Status({CODE_NAMES[self.code]}, {self.message()!r}, plugin={self.plugin!r})"


def is_success(status: Status | None) -> bool:
    return status is None or status.code == Code.SUCCESS


class PluginStatusError(Exception):
    """Raised by a plugin's vectorized method for an Error status it expects (bad input such
    as an invalid selector): the attempt fails with the message, no traceback is logged."""



__all__ = ["CODE_NAMES", "Code", "PluginStatusError", "Status", "is_success"]
