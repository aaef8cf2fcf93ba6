"""Table printers: human durations, a JSONPath subset, and the built-in kinds' columns.

:mod:`kvert.apiserver.tables` puts them together into ``meta.k8s.io/v1`` Tables.
"""
