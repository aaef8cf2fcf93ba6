"""The protobuf envelope's constants: the media type, the magic number every body starts
with, and which schema message a top-level kind is.

Its own module because both the package's entry points (``decode``/``encode``) and the
codec (which meets envelopes embedded in RawExtensions) need them.
"""

from __future__ import annotations

from kvert.apiserver.protobuf.schema import KIND_TYPES

MEDIA_TYPE = "application/vnd.kubernetes.protobuf"
MAGIC = b"k8s\x00"


def message_for(api_version: str, kind: str) -> str | None:
    """The schema message of a top-level kind, or None."""
    found = KIND_TYPES.get((api_version, kind))
    if found is None and kind == "DeleteOptions":
        found = "meta.DeleteOptions"   # sent under the version of whatever is deleted
    return found
