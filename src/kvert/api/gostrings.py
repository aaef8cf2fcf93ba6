"""Go's ``%q`` (``strconv.Quote``): how Kubernetes quotes values in its messages."""

from __future__ import annotations

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
