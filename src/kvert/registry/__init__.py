"""Resource registry: the write path (strategy, defaulting, admission, validation) over a store."""

from kvert.registry.admission import AdmissionChain, Attributes
from kvert.registry.registry import Registry

__all__ = ["Registry", "AdmissionChain", "Attributes"]
