"""The VPA components' feature gates (``--feature-gates``), with upstream VPA 1.8's names,
stages and defaults (``vertical-pod-autoscaler/pkg/features``).

Each component takes the gates upstream's does; a gate a component does not read is
accepted and ignored there, as upstream's shared gate set is.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from kvert.api.features import FeatureGateError, enabled, parse_feature_gates

CPU_STARTUP_BOOST = "CPUStartupBoost"
IN_PLACE = "InPlace"
PER_VPA_CONFIG = "PerVPAConfig"

# name -> (default, stage, what turning it on does); upstream's versioned_features.go
VPA_GATES: dict[str, tuple[bool, str, str]] = {
    CPU_STARTUP_BOOST: (
        False, "alpha",
        "spec.startupBoost and containerPolicies[].startupBoost: the admission controller raises "
        "a new pod's CPU, the updater takes the boost back once the pod is ready (admission "
        "controller, updater; VPA 1.7)"),
    IN_PLACE: (
        False, "alpha",
        "updateMode InPlace: resize in place and never evict (admission controller, updater; "
        "VPA 1.7)"),
    PER_VPA_CONFIG: (
        False, "alpha",
        "per-VPA oomBumpUpRatio, oomMinBumpUp, memoryAggregationInterval{Count,Seconds} and "
        "updatePolicy.evictAfterOOMSeconds (admission controller, recommender, updater; VPA 1.5)"),
}
# component-base's two switches over every gate of a stage; a gate set by name wins over them
ALL_ALPHA = "AllAlpha"
ALL_BETA = "AllBeta"
_KNOWN: dict[str, tuple[bool, str, str]] = {
    **VPA_GATES,
    ALL_ALPHA: (False, "alpha", "every alpha gate on unless set by name"),
    ALL_BETA: (False, "beta", "every beta gate on unless set by name"),
}


@dataclass(frozen=True)
class VpaGates:
    """The gates one VPA component runs with."""

    set: Mapping[str, bool] = field(default_factory=dict)

    @classmethod
    def parse(cls, value: str | Mapping[str, object] | None) -> VpaGates:
        """``"InPlace=true,CPUStartupBoost=true"``; FeatureGateError names a bad entry."""
        return cls(parse_feature_gates(value, _KNOWN))

    @classmethod
    def all_on(cls) -> VpaGates:
        return cls({name: True for name in VPA_GATES})

    def enabled(self, name: str) -> bool:
        if name not in self.set and name in VPA_GATES:
            switch = {"alpha": ALL_ALPHA, "beta": ALL_BETA}.get(VPA_GATES[name][1])
            if switch is not None and self.set.get(switch):
                return True
        return enabled(self.set, name, VPA_GATES)

    @property
    def cpu_startup_boost(self) -> bool:
        return self.enabled(CPU_STARTUP_BOOST)

    @property
    def in_place(self) -> bool:
        return self.enabled(IN_PLACE)

    @property
    def per_vpa_config(self) -> bool:
        return self.enabled(PER_VPA_CONFIG)

    def flag_value(self) -> str:
        """The ``--feature-gates`` text that gives these gates."""
        return ",".join(f"{k}={'true' if v else 'false'}" for k, v in sorted(self.set.items()))


def gates_help() -> str:
    """The ``--feature-gates`` help text: every gate with its stage and default."""
    return ", ".join(f"{name}=true|false ({stage.upper()} - default={'true' if default else 'false'})"
                     for name, (default, stage, _) in sorted(_KNOWN.items()))


__all__ = ["ALL_ALPHA", "ALL_BETA", "CPU_STARTUP_BOOST", "FeatureGateError", "IN_PLACE", "PER_VPA_CONFIG",
           "VPA_GATES", "VpaGates", "gates_help"]
