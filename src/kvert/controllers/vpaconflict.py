"""An HPA and a VPA on the same resource of one workload (seed 002, "combining vertical and
horizontal scaling": the two may share a workload only on different resources).

An HPA that scales on the cpu or memory (``Resource`` or ``ContainerResource``) of a
workload whose VPA (mode other than ``Off``) controls that same resource fights it: the VPA
raises requests as usage grows, which lowers the utilization the HPA sees, and the HPA adds
replicas, which lowers the usage per pod the VPA sees. :func:`conflicts` names them;
the HPA controller reports them as a condition and an Event. The VPA's container policies
are read as the VPA reads them (the named one, else ``*``; ``mode: Off``;
``controlledResources`` defaulting to cpu and memory).
"""

from __future__ import annotations

VPAS = "autoscaling.k8s.io/verticalpodautoscalers"
CONFLICT = "VerticalPodAutoscalerConflict"       # the HPA condition type (a kvert addition)
CONFLICT_REASON = "SameResource"
ADVICE = ("the two autoscalers fight over the same resource; scale horizontally on a resource the VPA "
          "does not control (e.g. this HPA on cpu and the VPA with controlledResources: [memory]) or on "
          "a custom metric")


def scaled_resources(hpa: dict) -> dict[str, set[str] | None]:
    """cpu/memory the HPA scales on -> the containers it reads (None: the whole pod)."""
    scaled: dict[str, set[str] | None] = {}
    for metric in (hpa.get("spec") or {}).get("metrics") or []:
        kind = metric.get("type")
        source = metric.get("resource" if kind == "Resource" else "containerResource") or {}
        resource = source.get("name")
        if kind not in ("Resource", "ContainerResource") or resource not in ("cpu", "memory"):
            continue
        if kind == "Resource" or scaled.get(resource, set()) is None:
            scaled[resource] = None
        else:
            scaled.setdefault(resource, set()).add(source.get("container", ""))   # type: ignore[union-attr]
    return scaled


def controlled_resources(vpa: dict, containers: list[str]) -> set[str]:
    """The resources a VPA sets requests of in the named containers (all containers: ``[]``)."""
    spec = vpa.get("spec") or {}
    if ((spec.get("updatePolicy") or {}).get("updateMode") or "Auto") == "Off":
        return set()
    policies = {p.get("containerName"): p for p in (spec.get("resourcePolicy") or {}).get("containerPolicies") or []
                if isinstance(p, dict)}
    names = containers or [n for n in policies if n != "*"] + ["*"]
    controlled: set[str] = set()
    for name in names:
        policy = policies.get(name) or policies.get("*") or {}
        if policy.get("mode") == "Off":
            continue
        given = policy.get("controlledResources")
        controlled.update(("cpu", "memory") if given is None else given)
    return controlled


def conflicts(hpa: dict, vpas: list[dict]) -> str | None:
    """The conflict message for the HPA's condition and Event, or None."""
    scaled = scaled_resources(hpa)
    ref = (hpa.get("spec") or {}).get("scaleTargetRef") or {}
    found: list[str] = []
    for vpa in vpas if scaled else ():
        target = (vpa.get("spec") or {}).get("targetRef") or {}
        if (target.get("kind"), target.get("name")) != (ref.get("kind"), ref.get("name")):
            continue
        both = sorted(r for r, containers in scaled.items()
                      if r in controlled_resources(vpa, sorted(containers or ())))
        if both:
            found.append(f"VerticalPodAutoscaler {(vpa.get('metadata') or {}).get('name')} also sets the "
                         f"{' and '.join(both)} requests of {ref.get('kind')}/{ref.get('name')}")
    return "; ".join(found) + ": " + ADVICE if found else None


__all__ = ["CONFLICT", "CONFLICT_REASON", "VPAS", "conflicts", "controlled_resources", "scaled_resources"]
