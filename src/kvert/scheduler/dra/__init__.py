"""Dynamic resource allocation with structured parameters, for the DynamicResources plugin.

* :mod:`.cel`: the CEL environment of device selectors (``device.driver``,
  ``device.attributes[domain]``, ``device.capacity[domain]``, quantity and semver helpers),
  parsed by cel-python, compiled once per expression text.
* :mod:`.allocator`: the structured allocator (``k8s.io/dynamic-resource-allocation/
  structured``): pools, requests, ``firstAvailable``, ``matchAttribute`` constraints, results
  with configs and node selectors.
* :mod:`.claims`: a pod's claims, reservations, and the scheduler's view of claims (assumed
  updates, allocations in flight).
"""
