"""The recommendation model's contract: one container at a time, or every row of a bank at once.

kvert computes a container's estimate two ways. ``kvert vpa recommend``, the admission
controller's query and every test read one aggregate through the estimator chain
(``estimators``: percentile -> margin -> confidence multiplier -> minimum). The live recommender
estimates every aggregate of an ``AggregateBank`` at once with numpy
(``estimators.estimate_rows``), since a chain of Python objects per container per loop does not
scale to a fleet. The two must agree exactly, or a VPA's status would depend on which path
wrote it; ``RecommendationModel`` names both paths so that one property test holds every model
kvert ships to that (tests/vpa/test_model_contract.py).
"""

from __future__ import annotations

from typing import Protocol

import numpy as np

from kvert.vpa.estimators import AggregateLike, AggregateRows, Resources, RowParameters, Trace


class RecommendationModel(Protocol):
    """How one container's target, lower and upper bound are estimated from its aggregate.

    The equality contract: for an aggregate ``state`` stored in row ``r`` of a bank,
    ``estimate_rows(bank, np.array([r]))[0, b]`` is ``[estimate(state)[bound][CPU],
    estimate(state)[bound][MEMORY]]`` for ``bound = BOUND_ORDER[b]``, exactly (integer
    millicores and bytes, no tolerance). Rows are independent: the result of a row does not
    depend on which other rows are estimated with it, so the recommender may stack the
    ``row_parameters`` of different models (configs) and estimate them in one call.
    """

    def estimate(self, state: AggregateLike, traces: dict[str, Trace] | None = None) -> dict[str, Resources]:
        """The scalar path: ``{"target"|"lowerBound"|"upperBound": {"cpu": millicores,
        "memory": bytes}}`` for one aggregate; each bound's intermediate steps are appended to
        ``traces[bound]`` when ``traces`` is given (how a recommendation explains itself)."""
        ...

    def row_parameters(self, rows: int) -> RowParameters:
        """This model's settings for ``rows`` rows of the vectorized path."""
        ...

    def estimate_rows(self, bank: AggregateRows, rows: np.ndarray) -> np.ndarray:
        """The vectorized path: (rows x 3 bounds in ``BOUND_ORDER`` x [cpu millicores, memory
        bytes]) int64 for the given rows of ``bank``."""
        ...


__all__ = ["RecommendationModel"]
