"""Content negotiation: what representation a client asked for, and how its body is encoded.

kubectl asks for Tables (``as=Table;g=meta.k8s.io;v=v1``), aggregated discovery
(``as=APIGroupDiscoveryList;g=apidiscovery.k8s.io;v=v2``), and often protobuf first with
JSON as a fallback; kvert answers JSON in every case it can.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

import yaml

from kvert.api.errors import ApiError, BadRequest, UnsupportedMediaType
from kvert.apiserver import protobuf
from kvert.apiserver.deadline import body_deadline

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


def wants(accept: list[MediaType], as_kind: str, group: str,
          versions: tuple[str, ...] = ()) -> MediaType | None:
    """The first accepted JSON media type asking for ``as=as_kind`` in ``group`` (and, when
    ``versions`` are given, one of them or none: the first), if any."""
    for media in accept:
        if media.type in ("application/json", "*/*") and media.param("as") == as_kind \
                and media.param("g") == group \
                and (not versions or (media.param("v") or versions[0]) in versions):
            return media
        if media.type == "application/json" and not media.param("as"):
            return None   # plain JSON preferred before any such representation
    return None


async def read_body(request) -> bytes:
    """The request body, refused with 413 as soon as it passes :data:`MAX_BODY_BYTES` (a
    declared Content-Length at once, a chunked body while it streams in): a client cannot
    make the server hold more than the limit."""
    declared = request.content_length
    if declared is not None and declared > MAX_BODY_BYTES:
        raise _too_large()
    async with body_deadline(request):   # --request-timeout: a trickled body is cut off
        return await _read_limited(request)


async def _read_limited(request) -> bytes:
    chunks: list[bytes] = []
    size = 0
    while True:
        chunk = await request.content.readany()
        if not chunk:
            return b"".join(chunks)
        size += len(chunk)
        if size > MAX_BODY_BYTES:
            raise _too_large()
        chunks.append(chunk)


def _too_large() -> ApiError:
    # limitedReadBody in k8s.io/apiserver/pkg/endpoints/handlers/rest.go
    return ApiError(f"Request entity too large: limit is {MAX_BODY_BYTES}", 413,
                    "RequestEntityTooLarge")


@dataclass(frozen=True)
class Document:
    """A decoded body and the paths of the object keys it repeats (JSON only): what
    ``fieldValidation=Strict`` reports as ``duplicate field "..."``."""
    value: Any
    duplicates: tuple[str, ...] = ()


async def read_object(request, api_version: str, kind: str) -> dict:
    """The body of a create of an unstored kind (a review, a RecommendationQuery): a JSON or
    YAML object of that kind (``apiVersion``/``kind`` may be left out), 400 otherwise."""
    raw = await read_body(request)
    if not raw:
        raise BadRequest("the request body is empty")
    body = decode_body(raw, request.headers.get("Content-Type"))
    if not isinstance(body, dict):
        raise BadRequest("the request body must be a JSON object")
    sent = (body.get("apiVersion") or api_version, body.get("kind") or kind)
    if sent != (api_version, kind):
        raise BadRequest(f"the API version in the data ({sent[0]}) or kind ({sent[1]}) does not "
                         f"match the expected {api_version} {kind}")
    return body


def decode_body(raw: bytes, content_type: str | None, *, yaml_ok: bool = True):
    """Decode a request body (JSON, or YAML where Kubernetes accepts it)."""
    return decode_document(raw, content_type, yaml_ok=yaml_ok).value


def decode_document(raw: bytes, content_type: str | None, *, yaml_ok: bool = True,
                    into: str = "") -> Document:
    """Decode a request body. ``into``: the kind the body should be, named in messages the
    way kube-apiserver's ``transformDecodeError`` names it."""
    if len(raw) > MAX_BODY_BYTES:
        raise _too_large()
    media = (content_type or "application/json").split(";")[0].strip().lower()
    if media == protobuf.MEDIA_TYPE:
        value = protobuf.decode(raw)
        if _depth(value) > MAX_DEPTH:
            raise BadRequest(f"the request body is nested more than {MAX_DEPTH} levels deep")
        return Document(value)
    # Go's decoders take invalid UTF-8 as U+FFFD rather than refusing the body.
    text = raw.decode("utf-8", "replace")
    duplicates: tuple[str, ...] = ()
    if media in _JSON_TYPES:
        value, duplicates = _load_json(text)
    elif media in ("application/yaml", "application/apply-patch+yaml") and yaml_ok:
        value = _load_yaml(text, raw, into)
    else:
        raise UnsupportedMediaType(f"the body of the request was in an unknown format - accepted "
                                   f"media types include: application/json, application/yaml "
                                   f"(got {media!r})")
    if _depth(value) > MAX_DEPTH:
        raise BadRequest(f"the request body is nested more than {MAX_DEPTH} levels deep")
    return Document(value, duplicates)


_JSON_TYPES = frozenset({"application/json", "application/json-patch+json",
                         "application/merge-patch+json", "application/strategic-merge-patch+json",
                         "*/*", ""})
# A \uD800-\uDFFF escape: the only way JSON text can carry a lone surrogate.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_SURROGATE = re.compile("[\ud800-\udfff]")


class _Repeated(dict):
    """An object whose text repeated keys (the last value wins, as in Go)."""
    repeated: list[str]


def _pairs(pairs: list) -> dict:
    obj = dict(pairs)
    if len(obj) == len(pairs):
        return obj
    seen: set[str] = set()
    marked = _Repeated(obj)
    marked.repeated = []
    for k, _ in pairs:
        if k in seen:
            marked.repeated.append(k)
        seen.add(k)
    return marked


def _no_constant(name: str):
    raise ValueError(f"invalid character {name[0]!r} looking for beginning of value")


def _load_json(text: str) -> tuple[Any, tuple[str, ...]]:
    try:
        value = json.loads(text, object_pairs_hook=_pairs, parse_constant=_no_constant)
    except RecursionError:
        raise BadRequest("the request body is nested too deeply") from None
    except ValueError as e:
        raise BadRequest(f"the request body is not valid JSON: {e}") from None
    if _SURROGATE_ESCAPE.search(text):
        value = _replace_surrogates(value)
    duplicates: list[str] = []
    value = _plain(value, duplicates)
    return value, tuple(duplicates)


def _replace_surrogates(value: Any) -> Any:
    """A lone surrogate escape decodes to U+FFFD, as Go's decoder does: such strings
    cannot be encoded as UTF-8, so no store could keep them."""
    if isinstance(value, str):
        return _SURROGATE.sub("\ufffd", value)
    if isinstance(value, list):
        return [_replace_surrogates(v) for v in value]
    if isinstance(value, dict):
        pairs = ((_replace_surrogates(k), _replace_surrogates(v)) for k, v in value.items())
        if isinstance(value, _Repeated):
            marked = _Repeated(pairs)
            marked.repeated = [_replace_surrogates(k) for k in value.repeated]
            return marked
        return type(value)(pairs)
    return value


def _plain(value: Any, duplicates: list[str]) -> Any:
    """``value`` with plain dicts only, collecting the paths of repeated keys in document
    order."""
    stack = [(value, "")]
    while stack:
        item, where = stack.pop()
        if isinstance(item, dict):
            if isinstance(item, _Repeated):
                duplicates.extend(f"{where}.{k}" if where else k for k in item.repeated)
            stack.extend((v, f"{where}.{k}" if where else k) for k, v in reversed(item.items())
                         if isinstance(v, (dict, list)))
        elif isinstance(item, list):
            stack.extend((v, f"{where}[{i}]") for i, v in reversed(list(enumerate(item)))
                         if isinstance(v, (dict, list)))
    return json.loads(json.dumps(value)) if duplicates else value


def _load_yaml(text: str, raw: bytes, into: str) -> Any:
    try:
        loader = _Loader(text)
        try:
            node = loader.get_single_node()
            if node is None:
                return None
            _check_aliasing(node)
            value = loader.construct_document(node)
        finally:
            loader.dispose()
    except _SelfContaining:
        anchor = _self_containing_anchor(text)
        raise _decode_error(f"yaml: anchor '{anchor}' value contains itself", raw, into) from None
    except _ExcessiveAliasing as e:
        raise _decode_error(str(e), raw, into) from None
    except RecursionError:
        raise BadRequest("the request body is nested too deeply") from None
    except yaml.YAMLError as e:
        raise BadRequest(f"the request body is not valid YAML: {e}") from None
    _require_json_shape(value)
    # Aliases share their values: give every occurrence its own copy (bounded by the check).
    return json.loads(json.dumps(value))


_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _ExcessiveAliasing(Exception):
    pass


# go-yaml's limit on alias expansion (the fix for CVE-2019-11253, decode.go): past 1000
# decoded nodes and 100 reached through aliases, at most 99% of the nodes may come from
# aliases for documents under 400 000 decoded nodes, scaling down to 10% at 4 000 000.
_ALIAS_RATIO_LOW, _ALIAS_RATIO_HIGH = 400_000, 4_000_000


def _allowed_alias_ratio(decoded: int) -> float:
    if decoded <= _ALIAS_RATIO_LOW:
        return 0.99
    if decoded >= _ALIAS_RATIO_HIGH:
        return 0.10
    return 0.99 - 0.89 * (decoded - _ALIAS_RATIO_LOW) / (_ALIAS_RATIO_HIGH - _ALIAS_RATIO_LOW)


def _check_aliasing(root: yaml.Node) -> None:
    """Count decoded nodes as go-yaml does (an alias node, then its anchor's whole value
    again) and refuse the document where go-yaml would. A composed alias is the anchored
    node itself, met again: the first meeting is the anchor, later ones are aliases."""
    decoded, aliased = 1, 0   # the document node
    seen: set[int] = set()
    open_: set[int] = set()   # collections being walked: an alias to one contains itself
    stack: list[tuple[yaml.Node, bool, bool]] = [(root, False, False)]

    def count(in_alias: bool) -> None:
        nonlocal decoded, aliased
        decoded += 1
        aliased += in_alias
        if aliased > 100 and decoded > 1000 and aliased / decoded > _allowed_alias_ratio(decoded):
            raise _ExcessiveAliasing("yaml: document contains excessive aliasing")

    while stack:
        node, in_alias, leaving = stack.pop()
        if leaving:
            open_.discard(id(node))
            continue
        if id(node) in seen:
            count(in_alias)
            if id(node) in open_:
                raise _SelfContaining()
            in_alias = True
        count(in_alias)
        seen.add(id(node))
        if isinstance(node, yaml.SequenceNode):
            children = node.value
        elif isinstance(node, yaml.MappingNode):
            children = [item for pair in node.value for item in pair]
        else:
            continue
        open_.add(id(node))
        stack.append((node, in_alias, True))
        stack.extend((child, in_alias, False) for child in reversed(children))


class _SelfContaining(Exception):
    pass


def _self_containing_anchor(text: str) -> str:
    """The anchor an alias names while its own value is still open (the event stream keeps
    the names the composed nodes lost)."""
    open_anchors: list[str | None] = []
    for event in yaml.parse(text, Loader=_Loader):
        if isinstance(event, (yaml.SequenceStartEvent, yaml.MappingStartEvent)):
            open_anchors.append(event.anchor)
        elif isinstance(event, (yaml.SequenceEndEvent, yaml.MappingEndEvent)):
            open_anchors.pop()
        elif isinstance(event, yaml.AliasEvent) and event.anchor in open_anchors:
            return event.anchor or ""
    return ""


def _decode_error(problem: str, raw: bytes, into: str) -> BadRequest:
    """``transformDecodeError`` for a body whose kind could not even be read."""
    if into:
        return BadRequest(f"the object provided is unrecognized (must be of type {into}): "
                          f"{problem} ({_summary(raw)})")
    return BadRequest(problem)


def _summary(raw: bytes, limit: int = 30) -> str:
    """``summarizeData``: the start of a body in kube-apiserver's decode errors."""
    if not raw:
        return "<empty>"
    if raw[:1] == b"{":
        text = raw[:limit].decode("utf-8", "replace")
        return text + " ..." if len(raw) > limit else text
    return raw[:limit].hex() + (" ..." if len(raw) > limit else "")


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
