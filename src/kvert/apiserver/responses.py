"""Responses as kube-apiserver writes them: its JSON encoding, and the Warning headers a
handler adds to its request.

Its own module so every handler (REST, reviews, watches, metrics, RecommendationQuery) and
the server's error middleware answer alike without importing one another.
"""

from __future__ import annotations

import json
import re
from typing import Any

from aiohttp import web

WARNINGS = web.RequestKey("warnings", list)   # Warning headers to send with the response

# What Go's encoding/json escapes inside strings (HTML-safe by default) and Python does not.
_GO_ESCAPES = (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"), ("\u2028", "\\u2028"),
               ("\u2029", "\\u2029"))


_SURROGATE = re.compile("[\ud800-\udfff]")


def encode_json(body: Any) -> bytes:
    """JSON as kube-apiserver writes it (``json.Encoder.Encode``): compact, UTF-8 as it is,
    ``<``, ``>``, ``&``, U+2028 and U+2029 escaped, and a newline at the end."""
    text = json.dumps(body, separators=(",", ":"), ensure_ascii=False)
    for char, escaped in _GO_ESCAPES:
        if char in text:
            text = text.replace(char, escaped)
    try:
        return (text + "\n").encode()
    except UnicodeEncodeError:   # a lone surrogate: Go writes U+FFFD for invalid UTF-16
        return (_SURROGATE.sub("\ufffd", text) + "\n").encode()


def json_response(body: Any, status: int = 200, content_type: str = "application/json") -> web.Response:
    return web.Response(body=encode_json(body), status=status,
                        headers={"Content-Type": content_type, "Cache-Control": "no-cache, private"})


def warning_header(text: str) -> str:
    """A Warning header's value as kube-apiserver writes it: ``299 - "text"``."""
    return '299 - "' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


# --- lists: encoded item by item, sent within the request ---------------------------------

CHUNK_BYTES = 64 * 1024     # what is handed to the socket at a time (asyncio's high-water mark)


def encode_chunks(body: dict[str, Any], items_key: str = "items") -> list[bytes]:
    """``encode_json(body)`` as chunks of about ``CHUNK_BYTES``, byte for byte the same, with
    each of ``body[items_key]`` encoded on its own and let go of as soon as it is: a list's
    decoded objects (several times their JSON's size) do not outlive the encoding."""
    items = body.get(items_key)
    if not isinstance(items, list) or not items:
        return [encode_json(body)]
    head = encode_json({k: v for k, v in body.items() if k != items_key})
    # the members before the items, then the items, as json.dumps orders them: in place
    keys = list(body)
    if keys[-1] != items_key:   # items not last: no splicing, one chunk
        return [encode_json(body)]
    chunks: list[bytes] = []
    part = bytearray(head[:-2] + (b"," if len(head) > 3 else b"") + b'"' + items_key.encode() + b'":[')
    body[items_key] = []
    for i in range(len(items)):
        if i:
            part += b","
        part += encode_json(items[i])[:-1]
        items[i] = None    # its decoded object goes now, not when the response is done
        if len(part) >= CHUNK_BYTES:
            chunks.append(bytes(part))
            part.clear()
    part += b"]}\n"
    chunks.append(bytes(part))
    return chunks


async def stream_json(request: web.Request, body: dict[str, Any], items_key: str = "items",
                      content_type: str = "application/json") -> web.StreamResponse:
    """Send ``body`` (a list) from the handler itself, chunk by chunk, each written once the
    socket took the one before: while it is sent the request still counts against
    ``--max-requests-inflight``, so the bodies held at once are bounded by that limit (a
    ``web.Response`` returned would be sent after the limit let go of it: 1 200 slow
    readers held 1 200 bodies)."""
    chunks = encode_chunks(body, items_key)
    response = web.StreamResponse(status=200, headers={
        "Content-Type": content_type, "Cache-Control": "no-cache, private"})
    for warning in request.get(WARNINGS, ()):
        response.headers.add("Warning", warning_header(warning))
    response.content_length = sum(map(len, chunks))
    await response.prepare(request)
    try:
        while chunks:
            await response.write(chunks.pop(0))    # let go of each chunk once it is handed over
        await response.write_eof()
    except ConnectionError:
        pass    # the client went away: nothing to answer
    return response
