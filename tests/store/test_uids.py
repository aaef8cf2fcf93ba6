"""Seeded uids (``seeded_uids``): what a simulation's store names objects with."""

import uuid

from hypothesis import given, strategies as st

from kvert.store import open_store
from kvert.store.base import seeded_uids


@given(st.integers(min_value=0, max_value=2**32))
def test_seeded_uids_are_version_4_rfc_4122_uuids(seed):
    new = seeded_uids(seed)
    for _ in range(20):
        text = new()
        parsed = uuid.UUID(text)
        assert str(parsed) == text                 # canonical: lower-case hex, 8-4-4-4-12
        assert parsed.version == 4
        assert parsed.variant == uuid.RFC_4122


def test_the_same_seed_repeats_the_sequence_and_another_seed_does_not():
    a, b, c = seeded_uids(7), seeded_uids(7), seeded_uids(8)
    first = [a() for _ in range(100)]
    assert first == [b() for _ in range(100)]
    assert len(set(first)) == 100
    assert not set(first) & {c() for _ in range(100)}


def test_a_store_with_a_seeded_factory_names_objects_from_it():
    expected = seeded_uids(3)
    store = open_store("memory", uid_factory=seeded_uids(3))
    created = store.create("configmaps", {"apiVersion": "v1", "kind": "ConfigMap",
                                          "metadata": {"name": "a", "namespace": "default"}})
    assert created["metadata"]["uid"] == expected()
