"""The node agent's cache of TokenReview / SubjectAccessReview answers (issue 27: it never
evicted, so every new token a client sent stayed in memory for good)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from kvert.cluster.kubeletserver import CACHE_ENTRIES, CACHE_SECONDS, DecisionCache


def test_answers_last_their_ttl():
    cache = DecisionCache()
    cache.put(("t", "get", "proxy"), (True, "alice"), now=100.0)
    assert cache.get(("t", "get", "proxy"), now=100.0 + CACHE_SECONDS) == (True, "alice")
    assert cache.get(("t", "get", "proxy"), now=100.0 + CACHE_SECONDS + 0.1) is None


def test_a_flood_of_tokens_stays_bounded():
    cache = DecisionCache()
    for i in range(10 * CACHE_ENTRIES):
        cache.put((f"random-{i}", "get", "proxy"), (False, None), now=1.0)
    assert len(cache) == CACHE_ENTRIES
    assert cache.get(("random-0", "get", "proxy"), now=1.0) is None          # the oldest went first
    assert cache.get((f"random-{10 * CACHE_ENTRIES - 1}", "get", "proxy"), now=1.0) == (False, None)


def test_expired_answers_are_dropped_as_new_ones_come():
    cache = DecisionCache(ttl=10.0, size=100)
    for i in range(50):
        cache.put((f"old-{i}",), (True, "x"), now=0.0)
    cache.put(("new",), (True, "y"), now=20.0)
    assert len(cache) == 1


@given(st.lists(st.tuples(st.integers(0, 30), st.floats(0, 5)), max_size=200))
def test_never_more_than_its_size_nor_a_wrong_answer(puts):
    cache = DecisionCache(ttl=10.0, size=8)
    now = 0.0
    for key, step in puts:
        now += step
        cache.put((key,), (True, str(key)), now)
        assert len(cache) <= 8
        for probe in range(31):
            answer = cache.get((probe,), now)
            assert answer is None or answer == (True, str(probe))
