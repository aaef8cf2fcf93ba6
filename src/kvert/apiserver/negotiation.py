"""Content negotiation: what representation a client asked for, and how its body is encoded.

kubectl asks for Tables (``as=Table;g=meta.k8s.io;v=v1``), aggregated discovery
(``as=APIGroupDiscoveryList;g=apidiscovery.k8s.io;v=v2``), and often protobuf first with
JSON as a fallback; kvert answers JSON in every case it can.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import yaml

from kvert.api.errors import ApiError, BadRequest, UnsupportedMediaType
from kvert.apiserver import protobuf

MAX_BODY_BYTES = 3 * 1024 * 1024   # kube-apiserver's default request size limit
MAX_DEPTH = 100


@dataclass(frozen=True)
class MediaType:
    type: str
    params: dict[str, str]

    def param(self, name: str) -> str:
        return self.params.get(name, "")


def parse_accept(header: str | None) -> list[MediaType]:
    out = []
    for item in (header or "").split(","):
        item = item.strip()
        if not item:
            continue
        head, *params = [p.strip() for p in item.split(";")]
        values = {}
        for p in params:
            if "=" in p:
                k, v = p.split("=", 1)
                values[k.strip()] = v.strip()
        out.append(MediaType(head.lower(), values))
    return out


def wants(accept: list[MediaType], as_kind: str, group: str) -> MediaType | None:
    """The first accepted JSON media type asking for ``as=as_kind`` in ``group``, if any."""
    for media in accept:
        if media.type in ("application/json", "*/*") and media.param("as") == as_kind \
                and media.param("g") == group:
            return media
        if media.type == "application/json" and not media.param("as"):
            return None   # plain JSON preferred before any such representation
    return None


def decode_body(raw: bytes, content_type: str | None, *, yaml_ok: bool = True):
    """Decode a request body (JSON, or YAML where Kubernetes accepts it)."""
    if len(raw) > MAX_BODY_BYTES:
        raise ApiError("Request entity too large: limit is 3145728", 413, "RequestEntityTooLarge")
    media = (content_type or "application/json").split(";")[0].strip().lower()
    if media == protobuf.MEDIA_TYPE:
        value = protobuf.decode(raw)
        if _depth(value) > MAX_DEPTH:
            raise BadRequest(f"the request body is nested more than {MAX_DEPTH} levels deep")
        return value
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise BadRequest(f"the request body is not valid UTF-8: {e}") from None
    if media in ("application/json", "application/json-patch+json", "application/merge-patch+json",
                 "application/strategic-merge-patch+json", "*/*", ""):
        try:
            value = json.loads(text)
        except RecursionError:
            raise BadRequest("the request body is nested too deeply") from None
        except ValueError as e:
            raise BadRequest(f"the request body is not valid JSON: {e}") from None
    elif media in ("application/yaml", "application/apply-patch+yaml") and yaml_ok:
        try:
            value = yaml.safe_load(text)
        except RecursionError:
            raise BadRequest("the request body is nested too deeply") from None
        except yaml.YAMLError as e:
            raise BadRequest(f"the request body is not valid YAML: {e}") from None
        _require_json_shape(value)
    else:
        raise UnsupportedMediaType(f"the body of the request was in an unknown format - accepted "
                                   f"media types include: application/json, application/yaml "
                                   f"(got {media!r})")
    if _depth(value) > MAX_DEPTH:
        raise BadRequest(f"the request body is nested more than {MAX_DEPTH} levels deep")
    return value


_JSON_SCALARS = (str, int, float, bool, type(None))


def _require_json_shape(value) -> None:
    """YAML can say more than JSON (non-string keys, dates, sets); objects must be JSON."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            for key, child in item.items():
                if not isinstance(key, str):
                    raise BadRequest(f"the request body has a non-string object key: {key!r}")
                stack.append(child)
        elif isinstance(item, list):
            stack.extend(item)
        elif not isinstance(item, _JSON_SCALARS):
            raise BadRequest(f"the request body has a value JSON cannot hold: {item!r} "
                             f"({type(item).__name__})")


def _depth(value) -> int:
    # Iterative: a hostile body must not exhaust the interpreter's stack.
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if depth > deepest:
            deepest = depth
            if deepest > MAX_DEPTH:
                return deepest
        if isinstance(item, dict):
            stack.extend((v, depth + 1) for v in item.values())
        elif isinstance(item, list):
            stack.extend((v, depth + 1) for v in item)
    return deepest
