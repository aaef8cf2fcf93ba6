"""Small helpers shared by the in-tree plugins."""

from __future__ import annotations

import json
from collections import OrderedDict
from typing import Any

import numpy as np

from kvert.scheduler.framework import default_normalize_score  # noqa: F401  (re-export)


def canonical(obj: Any) -> str:
    """A stable key for a JSON-like value (cache keys across pods)."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), default=str)


class LRU(OrderedDict):
    """A small bounded dict: memoized per-signature results shared across pods."""

    def __init__(self, size: int = 512):
        super().__init__()
        self.size = size

    def get_or_create(self, key: Any, factory: Any) -> Any:
        try:
            value = self[key]
            self.move_to_end(key)
            return value
        except KeyError:
            value = self[key] = factory()
            if len(self) > self.size:
                self.popitem(last=False)
            return value


def per_signature(sigs: np.ndarray, verdict: Any, dtype: Any = np.int64,
                  fast_zero: Any = None) -> np.ndarray:
    """Evaluate ``verdict(sig)`` once per distinct signature id in ``sigs`` and spread the
    results over the nodes (``fast_zero``: the known result for signature 0)."""
    if len(sigs) == 0:
        return np.zeros(0, dtype)
    if fast_zero is not None and not sigs.any():
        return np.full(len(sigs), fast_zero, dtype)
    uniq, inverse = np.unique(sigs, return_inverse=True)
    values = np.array([verdict(int(s)) for s in uniq], dtype=dtype)
    return values[inverse.reshape(-1)]
