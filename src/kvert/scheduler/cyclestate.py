"""Per-cycle scratch space plugins share (``framework.CycleState``)."""

from __future__ import annotations

from typing import Any


class CycleState:
    """Per-cycle scratch space plugins share (``framework.CycleState``)."""

    __slots__ = ("_data", "skip_filter_plugins", "skip_score_plugins")

    def __init__(self) -> None:
        self._data: dict[str, Any] = {}
        self.skip_filter_plugins: set[str] = set()
        self.skip_score_plugins: set[str] = set()

    def read(self, key: str) -> Any:
        try:
            return self._data[key]
        except KeyError:
            raise KeyError(f"{key!r} not found in cycle state") from None

    def get(self, key: str, default: Any = None) -> Any:
        return self._data.get(key, default)

    def write(self, key: str, value: Any) -> None:
        self._data[key] = value

    def delete(self, key: str) -> None:
        self._data.pop(key, None)

    def clone(self) -> CycleState:
        """A copy whose plugin states can change apart (``CycleState.Clone``): a value with a
        ``clone()`` method is cloned (PreFilter states that PreFilterExtensions update), any
        other value is shared, so it must not be changed after PreFilter."""
        other = CycleState()
        other._data = {k: (v.clone() if callable(getattr(v, "clone", None)) else v)
                       for k, v in self._data.items()}
        other.skip_filter_plugins = set(self.skip_filter_plugins)
        other.skip_score_plugins = set(self.skip_score_plugins)
        return other


__all__ = ["CycleState"]
