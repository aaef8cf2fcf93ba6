"""The kubelet-style node flags, shared by ``kvert up`` (every node) and ``kvert node-agent``."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

SIM_CAPACITY = "cpu=4,memory=16Gi,pods=110"


def add_node_flags(group: argparse._ActionsContainer) -> None:
    group.add_argument("--runtime", choices=["sim", "cgroupfs"], default="sim",
                       help="the container runtime: 'sim' (simulated containers following usage "
                            "profiles) or 'cgroupfs' (real processes in this machine's cgroups; "
                            "needs root; the image kvert/stress runs the load generator) "
                            "(default: sim)")
    group.add_argument("--node-capacity", default=None,
                       help=f"each node's capacity (default: {SIM_CAPACITY} with the sim runtime, "
                            "the machine's cpus and memory with cgroupfs)")
    group.add_argument("--kube-reserved", default="",
                       help="reserved for Kubernetes daemons, e.g. cpu=500m,memory=1Gi (default: none)")
    group.add_argument("--system-reserved", default="",
                       help="reserved for the OS, e.g. cpu=500m,memory=1Gi (default: none)")
    group.add_argument("--eviction-hard", default=None,
                       help="e.g. memory.available<100Mi (default: the kubelet's defaults)")
    group.add_argument("--eviction-soft", default="",
                       help="soft eviction thresholds, e.g. memory.available<1.5Gi (default: none)")
    group.add_argument("--eviction-soft-grace-period", default="",
                       help="how long each soft threshold must hold, e.g. memory.available=1m30s")
    group.add_argument("--eviction-minimum-reclaim", default="",
                       help="what an eviction must win back beyond a threshold, e.g. memory.available=500Mi")
    group.add_argument("--eviction-max-pod-grace-period", type=int, default=0,
                       help="the longest termination grace period a soft eviction gives a pod, in seconds")
    group.add_argument("--eviction-pressure-transition-period", default="5m0s",
                       help="how long a pressure condition stays after its threshold is last met (default: 5m0s)")
    group.add_argument("--feature-gates", default="",
                       help="Name=true|false,..., Kubernetes 1.36's defaults otherwise; with kvert "
                            "up also the API server's, e.g. InPlacePodLevelResourcesVerticalScaling="
                            "false (see docs/kubernetes-choices.md)")
    group.add_argument("--enforce-node-allocatable", default="pods",
                       help="pods[,kube-reserved][,system-reserved] (default: pods)")
    group.add_argument("--cpu-manager-policy", default="none", choices=["none", "static"],
                       help="the kubelet's CPU manager policy (default: none)")
    group.add_argument("--kubelet-config", type=Path, default=None,
                       help="a KubeletConfiguration file (kubelet.config.k8s.io/v1beta1) instead of "
                            "the flags above (--node-capacity still applies)")
    group.add_argument("--metrics-resolution", type=float, default=15.0,
                       help="seconds between samples of the nodes' usage for the metrics.k8s.io API "
                            "(kubectl top; metrics-server's --metric-resolution)")


def node_flags_from_args(args: argparse.Namespace) -> dict:
    """The flags as ``kvert.cluster.assembly.node_config`` takes them, checked: a bad one
    exits 2 naming the flag, before anything starts (so does a cgroupfs runtime this machine
    cannot run)."""
    capacity = args.node_capacity
    if args.runtime == "cgroupfs":
        from kvert.kubelet.runtime.cgroupfs import machine_capacity, unavailable
        reason = unavailable()
        if reason is not None:
            print(f"error: --runtime cgroupfs: {reason}", file=sys.stderr)
            raise SystemExit(2)
        if capacity is None:
            capacity = machine_capacity()
    flags = {"capacity": capacity if capacity is not None else SIM_CAPACITY,
             "kube_reserved": args.kube_reserved,
             "system_reserved": args.system_reserved,
             "eviction_hard": args.eviction_hard,
             "eviction_soft": args.eviction_soft,
             "eviction_soft_grace_period": args.eviction_soft_grace_period,
             "eviction_minimum_reclaim": args.eviction_minimum_reclaim,
             "eviction_max_pod_grace_period": args.eviction_max_pod_grace_period,
             "eviction_pressure_transition_period": args.eviction_pressure_transition_period,
             "feature_gates": args.feature_gates,
             "enforce_node_allocatable": args.enforce_node_allocatable,
             "cpu_manager_policy": args.cpu_manager_policy}
    from kvert.cluster.assembly import node_config
    from kvert.kubelet.config import ConfigError
    try:
        node_config("node-1", flags, args.kubelet_config)
    except ConfigError as e:
        print(f"error: {e}", file=sys.stderr)
        raise SystemExit(2) from None
    return flags
