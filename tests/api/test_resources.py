"""Integer resource lists: parsing, rendering and the arithmetic the scheduler needs."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kvert.api.quantity import QuantityError
from kvert.api.resources import (
    add,
    fits,
    format_resource_list,
    is_zero,
    less_or_equal,
    max_of,
    min_of,
    parse_resource_list,
    subtract,
    total,
)


def test_parse_resource_list():
    rl = parse_resource_list({"cpu": "1500m", "memory": "1.5Gi", "nvidia.com/gpu": 1, "pods": "110",
                              "ephemeral-storage": "10G", "hugepages-2Mi": "4Mi"})
    assert rl == {"cpu": 1500, "memory": 1610612736, "nvidia.com/gpu": 1, "pods": 110,
                  "ephemeral-storage": 10_000_000_000, "hugepages-2Mi": 4 * 2**20}
    assert parse_resource_list(None) == {}
    assert parse_resource_list({}) == {}
    assert parse_resource_list({"cpu": "0.0001"}) == {"cpu": 1}  # rounds up, like MilliValue


def test_parse_error_names_field():
    path = "spec.containers[0].resources.requests"
    with pytest.raises(QuantityError) as info:
        parse_resource_list({"cpu": "1", "memory": "12 Mi"}, path)
    err = info.value
    assert err.field == "spec.containers[0].resources.requests[memory]"
    assert err.text == "12 Mi"
    assert str(err).startswith("spec.containers[0].resources.requests[memory]: cannot parse '12 Mi'")
    with pytest.raises(QuantityError, match=r"^cpu: "):
        parse_resource_list({"cpu": "abc"})


def test_format_resource_list():
    rl = {"cpu": 1500, "memory": 128974848, "pods": 110, "ephemeral-storage": 2**30, "nvidia.com/gpu": 2}
    assert format_resource_list(rl) == {"cpu": "1500m", "memory": "128974848", "pods": "110",
                                        "ephemeral-storage": "1073741824", "nvidia.com/gpu": "2"}
    assert format_resource_list(rl, memory_format="BinarySI") == {
        "cpu": "1500m", "memory": "123Mi", "pods": "110", "ephemeral-storage": "1Gi", "nvidia.com/gpu": "2"}
    assert format_resource_list({"cpu": 2000, "memory": 129_000_000}) == {"cpu": "2", "memory": "129M"}


def test_node_fit_example():
    """Node allocatable 4 cpu: 1 + 1.5 + 650m fits (3150m), one more 3950m pod does not."""
    allocatable = parse_resource_list({"cpu": "4", "memory": "8Gi", "pods": "110"})
    pods = [parse_resource_list({"cpu": c, "memory": "1Gi"}) for c in ("1", "1.5", "650m")]
    used = total(pods)
    assert used == {"cpu": 3150, "memory": 3 * 2**30}
    assert fits(used, allocatable) == []
    assert less_or_equal(used, allocatable)
    free = subtract(allocatable, used)
    assert free == {"cpu": 850, "memory": 5 * 2**30, "pods": 110}
    big = parse_resource_list({"cpu": "3950m"})
    assert fits(big, free) == ["cpu"]
    assert fits(add(used, big), allocatable) == ["cpu"]
    assert not less_or_equal(add(used, big), allocatable)
    assert fits({"cpu": 850}, free) == []  # exactly full still fits


def test_fits_lists_every_short_resource_sorted():
    assert fits({"memory": 2, "cpu": 2, "pods": 1}, {"cpu": 1, "memory": 1}) == ["cpu", "memory", "pods"]
    assert fits({"nvidia.com/gpu": 0}, {}) == []  # zero requests never fail


def test_arithmetic():
    a = {"cpu": 100, "memory": 10}
    b = {"cpu": 300, "pods": 1}
    assert add(a, b) == {"cpu": 400, "memory": 10, "pods": 1}
    assert subtract(a, b) == {"cpu": -200, "memory": 10, "pods": -1}
    assert max_of(a, b) == {"cpu": 300, "memory": 10, "pods": 1}
    assert min_of(a, b) == {"cpu": 100, "memory": 0, "pods": 0}
    assert is_zero({}) and is_zero({"cpu": 0}) and not is_zero({"cpu": 1})
    assert less_or_equal({}, {"cpu": 1}) and not less_or_equal({"cpu": 1}, {})


names = st.sampled_from(["cpu", "memory", "pods", "ephemeral-storage", "example.com/foo"])
lists = st.dictionaries(names, st.integers(0, 10**12), max_size=5)


@given(lists, lists)
def test_add_subtract_inverse(a, b):
    back = subtract(add(a, b), b)
    assert all(back.get(k, 0) == a.get(k, 0) for k in set(a) | set(b))


@given(lists, lists)
def test_max_min(a, b):
    hi, lo = max_of(a, b), min_of(a, b)
    assert less_or_equal(a, hi) and less_or_equal(b, hi)
    assert less_or_equal(lo, a) and less_or_equal(lo, b)
    assert add(hi, lo) == add(a, b)


@given(lists, lists)
def test_fits_agrees_with_less_or_equal(a, b):
    assert (fits(a, b) == []) == less_or_equal(a, b)
    assert fits(a, add(a, b)) == []


@given(lists)
def test_format_parse_round_trip(a):
    for fmt in ("DecimalSI", "BinarySI"):
        assert parse_resource_list(format_resource_list(a, memory_format=fmt)) == a
