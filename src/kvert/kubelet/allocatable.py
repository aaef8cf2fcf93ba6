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
from kvert.kubelet.config import ConfigError, NodeConfig

# Which resource a hard eviction threshold keeps back from Allocatable (pkg/kubelet/cm).
SIGNAL_RESOURCES = {"memory.available": "memory", "nodefs.available": "ephemeral-storage"}


def eviction_reservation(config: NodeConfig) -> ResourceList:
    """What the hard eviction thresholds hold back: ``{"memory": ..., "ephemeral-storage": ...}``
    (only for resources the node has a capacity for)."""
    result: ResourceList = {}
    if config.ignore_eviction_threshold:
        return result
    for threshold in config.eviction_hard:
        resource = SIGNAL_RESOURCES.get(threshold.signal)
        if resource is None or resource not in config.capacity:
            continue
        result[resource] = result.get(resource, 0) + threshold.amount(config.capacity[resource])
    return result


def reservation(config: NodeConfig) -> ResourceList:
    """kube-reserved + system-reserved + hard eviction thresholds, per resource
    (``GetNodeAllocatableReservation``); zero entries are left out."""
    evict = eviction_reservation(config)
    names = dict.fromkeys([*config.kube_reserved, *config.system_reserved, *evict])
    result = {}
    for name in names:
        value = config.kube_reserved.get(name, 0) + config.system_reserved.get(name, 0) + evict.get(name, 0)
        if value:
            result[name] = value
    return result


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


def reservation_errors(config: NodeConfig) -> list[str]:
    """Resources whose reservation exceeds capacity, in the kubelet's words
    (``validateNodeAllocatable``); empty if the configuration is fine."""
    errors = []
    for name, reserved in sorted(reservation(config).items()):
        if name not in config.capacity:
            continue
        left = config.capacity[name] - reserved
        if left < 0:
            errors.append(f"Resource {name!r} has a reservation of {reserved}, capacity of "
                          f"{config.capacity[name]}")
    return errors


def check_reservation(config: NodeConfig) -> None:
    """Raise ConfigError when reservations exceed capacity (the kubelet refuses to start)."""
    errors = reservation_errors(config)
    if errors:
        raise ConfigError("", "invalid Node Allocatable configuration. " + " ".join(errors))


def node_status_resources(config: NodeConfig) -> dict[str, dict[str, str]]:
    """``{"capacity": {...}, "allocatable": {...}}`` as quantity strings for ``Node.status``
    (byte-valued resources in binary units, e.g. ``"29596Mi"``)."""
    return {
        "capacity": format_resource_list(config.capacity, BINARY_SI),
        "allocatable": format_resource_list(allocatable(config), BINARY_SI),
    }


__all__ = ["SIGNAL_RESOURCES", "allocatable", "allocatable_absolute", "check_reservation", "eviction_reservation",
           "kubepods_resources", "node_status_resources", "reservation", "reservation_errors"]
