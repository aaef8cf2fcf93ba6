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
