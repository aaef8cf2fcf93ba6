"""The RecommendationModel contract (kvert.vpa.model): for every model kvert ships, the scalar
estimator chain and the vectorized path give the same amounts on random aggregates, alone and
with the rows of other models estimated in the same call.

(tests/vpa/test_recommendation.py's test_all_rows_at_once_equal_the_estimator_chains checks
the same equality for upstream's service model through ``recommend_containers``.)
"""

from __future__ import annotations

from typing import Any

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from kvert.vpa.aggregate import AggregateContainerState, AggregateStore
from kvert.vpa.estimators import BOUND_ORDER, CPU, MEMORY, RowParameters, estimate_rows
from kvert.vpa.model import RecommendationModel
from kvert.vpa.recommendation import (
    DEFAULT_CONFIG,
    MODELS,
    WORKLOADS,
    EstimatorChainModel,
    container_policy,
    resolve_workload,
)

T0 = 1714521600.0
# ``auto`` is not a model of its own: it resolves to service or batch per container.
SHIPPED = [(model, workload) for model in MODELS for workload in WORKLOADS if workload != "auto"]

samples = st.tuples(
    st.one_of(st.floats(0, 8), st.floats(0, 2000), st.just(float("nan"))),     # cores (NaN: none)
    st.one_of(st.floats(0, 4e9), st.floats(0, 2e12), st.just(float("nan"))),   # bytes (NaN: none)
    st.booleans(),                                                               # an OOM kill
    st.integers(0, 3))                                                           # the pod
overrides = st.fixed_dictionaries({}, optional={
    "vpa.kvert.io/target-cpu-percentile": st.sampled_from(["0.5", "0.7", "0.95"]),
    "vpa.kvert.io/recommendation-margin-fraction": st.sampled_from(["0", "0.3"]),
    "vpa.kvert.io/confidence-interval-memory": st.sampled_from(["6h", "90m"]),
    "vpa.kvert.io/pod-recommendation-min-memory-mb": st.sampled_from(["0", "1000"]),
})
vpa_specs = st.tuples(st.sampled_from(SHIPPED), overrides, st.integers(1, 3),
                      st.lists(samples, max_size=30), st.sampled_from([30.0, 600.0, 7200.0]))


def _fill(store: AggregateStore, index: int,
          spec: Any) -> list[tuple[AggregateContainerState, EstimatorChainModel]]:
    (model, workload), annotations, containers, rows, step = spec
    vpa = {"metadata": {"name": f"v{index}", "namespace": "ns",
                        "annotations": {**annotations, "vpa.kvert.io/model": model,
                                        "vpa.kvert.io/workload": workload}}}
    names = [f"c{i}" for i in range(containers)]
    for name in names:
        store.get_for_vpa(vpa, name, now=T0)
    for k, (cpu, memory, oom, pod) in enumerate(rows):
        agg = store.get_for_vpa(vpa, names[k % containers])
        agg.add_samples(f"p{pod}", T0 + k * step, cpu=cpu, memory=memory, oom=oom)
    base, problems = DEFAULT_CONFIG.for_vpa(vpa)
    assert problems == []
    out = []
    for name in names:
        cfg = resolve_workload(base.for_container(container_policy(vpa, name)), False)
        agg = store.find("ns", f"v{index}", name)
        assert agg is not None
        out.append((agg, EstimatorChainModel(cfg, containers)))
    return out


def _scalar(model: RecommendationModel, agg: AggregateContainerState) -> list[list[int]]:
    amounts = model.estimate(agg)
    return [[amounts[bound][CPU], amounts[bound][MEMORY]] for bound in BOUND_ORDER]


def test_the_shipped_model_declares_the_contract() -> None:
    assert RecommendationModel in EstimatorChainModel.__mro__
    model: RecommendationModel = EstimatorChainModel()
    assert model.row_parameters(2).margin.shape == (2,)


@settings(max_examples=60, deadline=None)
@given(st.lists(vpa_specs, min_size=1, max_size=4))
def test_the_scalar_chain_and_the_vectorized_path_agree(specs: list[Any]) -> None:
    store = AggregateStore()
    filled = [pair for i, spec in enumerate(specs) for pair in _fill(store, i, spec)]
    for agg, model in filled:
        row = np.array([agg.row])
        assert model.estimate_rows(agg.bank, row).tolist() == [_scalar(model, agg)]
    # every row of a bank at once, each with its own model's parameters
    for bank in store.banks.values():
        mine = [(agg, model) for agg, model in filled if agg.bank is bank]
        rows = np.array([agg.row for agg, _ in mine])
        params = RowParameters.empty(rows.size)
        for i, (_, model) in enumerate(mine):
            params.put(np.array([i]), model.row_parameters(1))
        got = estimate_rows(bank, rows, params)
        assert got.tolist() == [_scalar(model, agg) for agg, model in mine]


@settings(max_examples=30, deadline=None)
@given(st.sampled_from(SHIPPED), st.integers(1, 3), st.lists(samples, min_size=1, max_size=30))
def test_the_traces_end_in_the_estimate(shipped: tuple[str, str], containers: int, rows: list[Any]) -> None:
    model, workload = shipped
    cfg, _ = DEFAULT_CONFIG.with_annotations({"vpa.kvert.io/model": model, "vpa.kvert.io/workload": workload})
    agg = AggregateContainerState(cfg, T0)
    for k, (cpu, memory, oom, pod) in enumerate(rows):
        agg.add_samples(f"p{pod}", T0 + k * 60.0, cpu=cpu, memory=memory, oom=oom)
    chain = EstimatorChainModel(cfg, containers)
    traces: dict[str, Any] = {}
    amounts = chain.estimate(agg, traces)
    assert amounts == chain.estimate(agg)
    for bound in BOUND_ORDER:
        assert traces[bound][-1][1] == amounts[bound]
