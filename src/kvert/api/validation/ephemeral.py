"""``ValidatePodEphemeralContainersUpdate``: a write to ``pods/ephemeralcontainers``.

The pod's metadata update and its whole spec are checked as any pod's (the ephemeral
containers' own rules are in ``pod._validate_ephemeral_containers``: no ports, resources,
probes, lifecycle or restartPolicy, a name unique among every container, a target that is a
container or init container). Then, as upstream: a static pod takes none; an ephemeral
container once added is never removed or changed. Upstream's "may not be changed" message
ends with a Go ``cmp.Diff``; kvert's with its own rendering of the differences.
"""

from __future__ import annotations

from typing import Any

from kvert.api.types import Obj

from .common import Causes, dict_field, forbidden, key
from .diff import describe_diff, semantically_equal
from .meta import validate_object_meta_update
from .pod import MIRROR_POD_ANNOTATION, validate_pod_metadata_and_spec

SPEC_PATH = "spec.ephemeralContainers"


def _ephemeral(pod: Obj) -> list[Any]:
    items = dict_field(pod, "spec").get("ephemeralContainers")
    return [c for c in items if isinstance(c, dict)] if isinstance(items, list) else []


def validate_pod_ephemeral_containers_update(new: Obj, old: Obj) -> Causes:
    errs = validate_object_meta_update(new, old)
    errs.extend(validate_pod_metadata_and_spec(new))
    if MIRROR_POD_ANNOTATION in dict_field(dict_field(old, "metadata"), "annotations"):
        return [forbidden("", "static pods do not support ephemeral containers")]
    added = {c.get("name"): c for c in _ephemeral(new)}
    for before in _ephemeral(old):
        name = before.get("name")
        after = added.get(name)
        if after is None:
            errs.append(forbidden(SPEC_PATH, f'existing ephemeral containers "{name}" may not be removed\n'))
        elif not semantically_equal(before, after):
            errs.append(forbidden(key(SPEC_PATH, name), f'existing ephemeral containers "{name}" may not be '
                                                         f"changed\n{describe_diff(before, after)}"))
    return errs


__all__ = ["validate_pod_ephemeral_containers_update"]
