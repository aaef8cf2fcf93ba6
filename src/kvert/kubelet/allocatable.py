"""Node Allocatable (seed 004):

    [Allocatable] = [Node Capacity] - [Kube-Reserved] - [System-Reserved] - [Hard-Eviction-Threshold]

per resource, never below zero. The hard eviction thresholds reserve memory
(``memory.available``) and ephemeral storage (``nodefs.available``); a percentage is of the
resource's capacity. ``pods`` is the pod capacity (maxPods). Seed 004's example: 32Gi of
memory, kube-reserved 2Gi, system-reserved 1Gi, eviction-hard ``memory.available<100Mi``
gives 32Gi - 3Gi - 100Mi = 29596Mi = 31,033,655,296 bytes, "28.9Gi".

The kubepods cgroup (where Node Allocatable is enforced) is set differently, as the
kubelet does (``getNodeAllocatableInternalAbsolute``): capacity minus the kube and system
reservations, *without* the eviction thresholds, so that the kubelet gets the chance to
evict before the kernel OOM-kills inside kubepods; and plain capacity when ``pods`` is not
enforced. ``kubepods_resources`` gives those values.
"""

from __future__ import annotations

from kvert.api.resources import BINARY_SI, ResourceList, format_resource_list

# The reservations live with the configuration, whose start-up check they are too; they are
# re-exported here, beside what is computed from them.
from kvert.kubelet.config import (
    SIGNAL_RESOURCES,
    NodeConfig,
    check_reservation,
    eviction_reservation,
    reservation,
    reservation_errors,
)


def allocatable(config: NodeConfig) -> ResourceList:
    """Node Allocatable for every resource in the node's capacity (never negative);
    ``pods`` is the pod capacity."""
    reserved = reservation(config)
    result = {name: max(0, amount - reserved.get(name, 0)) for name, amount in config.capacity.items()}
    result["pods"] = config.pod_capacity()
    return result


def allocatable_absolute(config: NodeConfig) -> ResourceList:
    """``GetNodeAllocatableAbsolute``: capacity - kube-reserved - system-reserved, without the
    eviction thresholds (what an in-place resize can never exceed)."""
    return {name: max(0, amount - config.kube_reserved.get(name, 0) - config.system_reserved.get(name, 0))
            for name, amount in config.capacity.items() if name != "pods"}


def kubepods_resources(config: NodeConfig) -> ResourceList:
    """The limits the kubelet puts on the kubepods cgroup: capacity - kube-reserved -
    system-reserved when ``pods`` is enforced (and cgroupsPerQOS is on), else capacity.
    Hard eviction thresholds are not subtracted (see the module docstring)."""
    if not (config.cgroups_per_qos and "pods" in config.enforce_node_allocatable):
        return {k: v for k, v in config.capacity.items() if k != "pods"}
    result = {}
    for name, amount in config.capacity.items():
        if name == "pods":
            continue
        value = amount - config.kube_reserved.get(name, 0) - config.system_reserved.get(name, 0)
        result[name] = max(0, value)
    return result


def node_status_resources(config: NodeConfig) -> dict[str, dict[str, str]]:
    """``{"capacity": {...}, "allocatable": {...}}`` as quantity strings for ``Node.status``
    (byte-valued resources in binary units, e.g. ``"29596Mi"``)."""
    return {
        "capacity": format_resource_list(config.capacity, BINARY_SI),
        "allocatable": format_resource_list(allocatable(config), BINARY_SI),
    }


__all__ = ["SIGNAL_RESOURCES", "allocatable", "allocatable_absolute", "check_reservation", "eviction_reservation",
           "kubepods_resources", "node_status_resources", "reservation", "reservation_errors"]
