"""The live recommender's estimates for every row of an ``AggregateBank``, kept between loops.

Per row: the estimator settings (``RowParameters``, set when the row's VPA or its containers
change), the latest estimate (``current``: target, lower and upper bound of CPU millicores and
memory bytes, ``estimators.estimate_rows``), the estimate its VPA's status was last computed
from (``applied``), whether it has samples and whether its CPU history (first to last sample
start) spans less than the CPU confidence interval (``low``: the LowConfidence condition).
``material`` says which rows moved enough to compute their VPA's status again: a different
target, or a bound more than the given fraction away from the applied one (the status-writing
rule of docs/kubernetes-choices.md).
"""

from __future__ import annotations

import numpy as np

from kvert.vpa.aggregate import AggregateBank
from kvert.vpa.estimators import RowParameters, estimate_rows

UNKNOWN = -1


class BankEstimates:
    def __init__(self, bank: AggregateBank) -> None:
        self.bank = bank
        self.serial = np.zeros(0, dtype=np.int64)
        self.params = RowParameters.empty(0)
        self.current = np.zeros((0, 3, 2), dtype=np.int64)
        self.applied = np.zeros((0, 3, 2), dtype=np.int64)
        self.has_samples = np.zeros(0, dtype=bool)
        self.low = np.zeros(0, dtype=bool)

    def fit(self) -> None:
        """Follow the bank's growth."""
        n, old = len(self.bank.configs), self.serial.size
        if n <= old:
            return
        self.serial = np.r_[self.serial, np.zeros(n - old, dtype=np.int64)]
        self.params = self.params.grown(n)
        self.current = np.concatenate([self.current, np.full((n - old, 3, 2), UNKNOWN, dtype=np.int64)])
        self.applied = np.concatenate([self.applied, np.full((n - old, 3, 2), UNKNOWN, dtype=np.int64)])
        self.has_samples = np.r_[self.has_samples, np.zeros(n - old, dtype=bool)]
        self.low = np.r_[self.low, np.zeros(n - old, dtype=bool)]

    def new_rows(self, rows: np.ndarray) -> np.ndarray:
        """Of ``rows``, those taken (by a new aggregate) since last seen; they are forgotten here."""
        fresh = rows[self.serial[rows] != self.bank.serial[rows]]
        self.serial[fresh] = self.bank.serial[fresh]
        self.current[fresh] = UNKNOWN
        self.applied[fresh] = UNKNOWN
        self.has_samples[fresh] = False
        self.low[fresh] = False
        return fresh

    def estimate(self, rows: np.ndarray) -> None:
        if rows.size == 0:
            return
        p = self.params.take(rows)
        self.current[rows] = estimate_rows(self.bank, rows, p)
        # the history's length, not upstream's confidence (which also counts samples: hourly
        # history over days is "low" by it while it spans the days)
        self.low[rows] = self.bank.history_span(rows) < p.cpu_interval
        self.has_samples[rows] = self.bank.count[rows] > 0

    def material(self, rows: np.ndarray, fraction: float) -> np.ndarray:
        """Rows whose target differs from the applied one, or a bound moved by more than
        ``fraction`` of the applied bound."""
        cur, old = self.current[rows], self.applied[rows]
        target = (cur[:, 0] != old[:, 0]).any(axis=1)
        bounds_cur, bounds_old = cur[:, 1:].astype(np.float64), old[:, 1:].astype(np.float64)
        moved = np.abs(bounds_cur - bounds_old) > fraction * np.abs(bounds_old)
        return target | moved.any(axis=(1, 2))
