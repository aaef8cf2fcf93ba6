"""Shared test support (fixtures used by several test packages and by benchmarks)."""
