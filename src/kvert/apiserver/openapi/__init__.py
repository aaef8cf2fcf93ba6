"""OpenAPI v2 and v3 documents of the served types (``/openapi/v2``, ``/openapi/v3``).

``schemas`` holds the built-in kinds' schemas as compact definitions; ``builder`` renders
the documents; ``proto`` encodes the v2 document as protobuf (the form kubectl asks for);
``fields`` finds the fields a schema does not declare (server-side ``fieldValidation``).
"""

from .builder import (
                      kind_schema_name,
                      openapi_v2,
                      openapi_v2_json,
                      openapi_v2_protobuf,
                      openapi_v3_document,
                      openapi_v3_index,
                      openapi_v3_json,
)
from .fields import unknown_fields
from .proto import ACCEPT_MEDIA_TYPE as V2_PROTOBUF_ACCEPT
from .proto import MEDIA_TYPE as V2_PROTOBUF_MEDIA_TYPE

__all__ = ["openapi_v2", "openapi_v2_json", "openapi_v2_protobuf", "openapi_v3_index",
           "openapi_v3_document", "openapi_v3_json", "kind_schema_name", "unknown_fields",
           "V2_PROTOBUF_MEDIA_TYPE", "V2_PROTOBUF_ACCEPT"]
