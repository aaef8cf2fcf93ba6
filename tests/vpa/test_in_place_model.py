"""kvert's in-place model (``vpa.kvert.io/model: in-place``) and CPU's own margin
(``vpa.kvert.io/recommendation-margin-fraction-cpu``).

Expected values come from the definitions: upstream's CPU buckets (bucket n >= 1 starts at
``0.01 * (1.05**n - 1) / 0.05`` cores; a percentile answers its bucket's end), the margin adds
``int(amount * fraction)``, amounts are whole millicores / bytes, truncated.
"""

from __future__ import annotations

import math

import numpy as np

from kvert.vpa.aggregate import AggregateStore
from kvert.vpa.estimators import BOUND_ORDER, estimate_rows
from kvert.vpa.recommendation import DEFAULT_CONFIG, IN_PLACE_MODEL, recommend_containers, row_parameters

T0 = 1714521600.0


def end(v: float) -> float:
    n = int(math.floor(math.log(v * 0.05 / 0.01 + 1) / math.log(1.05))) + 1
    return 0.01 * (1.05 ** n - 1) / 0.05


def test_cpu_takes_its_own_margin_and_memory_keeps_the_margin():
    store = AggregateStore()
    vpa = {"metadata": {"name": "v", "namespace": "ns", "annotations": {
        "vpa.kvert.io/recommendation-margin-fraction-cpu": "0"}}}
    plain = {"metadata": {"name": "w", "namespace": "ns"}}
    for v in (vpa, plain):
        store.get_for_vpa(v, "c").add_samples("p", T0 + np.arange(30) * 60.0, cpu=0.5, memory=3e8)
    [zero] = recommend_containers(store.for_vpa("ns", "v"), vpa)
    [up] = recommend_containers(store.for_vpa("ns", "w"), plain)
    # 0.5 core: bucket 25, its end 0.51114 -> 511m; upstream adds 15% (+76m)
    assert zero.amounts()["cpu"] == int(end(0.5) * 1000) == 511
    assert up.amounts()["cpu"] == 511 + int(511 * 0.15) == 587
    assert zero.amounts()["memory"] == up.amounts()["memory"]          # memory keeps the 15%
    cfg, problems = DEFAULT_CONFIG.for_vpa(vpa)
    assert problems == [] and cfg.cpu_safety_margin_fraction == 0.0 and cfg.safety_margin_fraction == 0.15
    assert DEFAULT_CONFIG.cpu_safety_margin_fraction is None            # default: the one margin
    # the rows at once give the same
    bank = next(iter(store.banks.values()))
    aggs = [store.find("ns", n, "c") for n in ("v", "w")]
    configs = [DEFAULT_CONFIG.for_vpa(x)[0] for x in (vpa, plain)]
    got = estimate_rows(bank, np.array([a.row for a in aggs]), row_parameters(configs, np.ones(2)))
    for i, rec in enumerate((zero, up)):
        for b, name in enumerate(BOUND_ORDER):
            assert {"cpu": int(got[i, b, 0]), "memory": int(got[i, b, 1])} == rec.amounts(name)


def test_the_in_place_model_is_opt_in_and_its_annotations_win():
    cfg, problems = DEFAULT_CONFIG.with_annotations({"vpa.kvert.io/model": "in-place"})
    assert problems == []
    for name, value in IN_PLACE_MODEL.items():
        assert getattr(cfg, name) == value
    assert DEFAULT_CONFIG.model == "upstream" and DEFAULT_CONFIG.cpu_histogram_decay_half_life == 86400.0
    own, _ = DEFAULT_CONFIG.with_annotations({"vpa.kvert.io/model": "in-place",
                                              "vpa.kvert.io/recommendation-margin-fraction-cpu": "0.1",
                                              "vpa.kvert.io/cpu-histogram-decay-half-life": "4h"})
    assert own.cpu_safety_margin_fraction == 0.1 and own.cpu_histogram_decay_half_life == 4 * 3600.0
