"""How Go names and quotes values in Kubernetes' messages: ``%q`` (``strconv.Quote``) and
the JSON kinds of ``encoding/json``'s unmarshal errors."""

from __future__ import annotations

from typing import Any

_ESCAPES = {"\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t",
            "\v": "\\v", '"': '\\"', "\\": "\\\\"}


def quote(text: str) -> str:
    """``strconv.Quote``: printable characters as they are, the rest escaped."""
    out = ['"']
    for c in text:
        escaped = _ESCAPES.get(c)
        if escaped is not None:
            out.append(escaped)
        elif c.isprintable():
            out.append(c)
        elif c < " " or c == "\x7f":
            out.append(f"\\x{ord(c):02x}")
        elif "\ud800" <= c <= "\udfff":   # not a valid rune: Go shows U+FFFD
            out.append("\\ufffd")
        elif c < "\U00010000":
            out.append(f"\\u{ord(c):04x}")
        else:
            out.append(f"\\U{ord(c):08x}")
    out.append('"')
    return "".join(out)


def json_kind(value: Any) -> str:
    """The kind ``json: cannot unmarshal KIND into ...`` names for a decoded JSON value."""
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"
