"""The subset of client-go's JSONPath that CRD ``additionalPrinterColumns`` use.

A path is what goes between the braces of a kubectl JSONPath template: ``.spec.replicas``,
``.status.conditions[0].type``, ``.spec.containers[*].image``, ``.items[-1:]``,
``.metadata.labels['app\\.kubernetes\\.io/name']``, ``..name``, and filters such as
``.status.conditions[?(@.type=='Ready')].status``. Evaluation follows
``k8s.io/client-go/util/jsonpath`` with ``AllowMissingKeys(true)``, as the apiextensions
table convertor sets it: a missing key yields nothing, while indexing a non-list, an index
out of bounds, or comparing values of different types is an error (the cell becomes null).

``print_value`` renders one result the way ``JSONPath.PrintResults`` does (Go's ``%v`` for
scalars, compact JSON for maps and lists).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from decimal import Decimal
from typing import Any


class JSONPathError(ValueError):
    """A path that does not parse, or that fails while evaluating against an object."""


# -- the parsed form ------------------------------------------------------------------------------

@dataclass(frozen=True)
class _Field:
    names: tuple[str, ...]  # more than one for a union: ['a','b']


@dataclass(frozen=True)
class _Wildcard:
    pass


@dataclass(frozen=True)
class _Recursive:
    pass


@dataclass(frozen=True)
class _Index:
    # Each entry is (start, end, step, single): a plain index when single.
    selections: tuple[tuple[int | None, int | None, int | None, bool], ...]


@dataclass(frozen=True)
class _Filter:
    left: Operand
    op: str  # "exists" or a comparison
    right: Operand | None


@dataclass(frozen=True)
class Operand:
    path: tuple | None  # steps relative to the element ("@") when set
    literal: Any = None


_COMPARISONS = ("==", "!=", "<=", ">=", "<", ">")


class JSONPath:
    """A compiled path; ``find`` returns every value it selects, in document order."""

    def __init__(self, text: str):
        self.text = text
        self.steps = _Parser(text).parse()

    def find(self, data: Any) -> list[Any]:
        return _evaluate(self.steps, [data])

    def __repr__(self) -> str:
        return f"JSONPath({self.text!r})"


def compile_path(text: str) -> JSONPath:
    """Parse ``text`` (the part inside ``{...}``); raises JSONPathError."""
    return JSONPath(text)


# -- parsing --------------------------------------------------------------------------------------

class _Parser:
    def __init__(self, text: str):
        if not isinstance(text, str):
            raise JSONPathError(f"JSONPath must be a string, not {type(text).__name__}")
        self.s = text.strip()
        self.pos = 0

    def parse(self) -> tuple:
        s = self.s
        if s.startswith("{") and s.endswith("}"):
            self.s = s = s[1:-1].strip()
        if s.startswith("$"):
            self.pos = 1
        if self.pos >= len(s):
            return ()
        steps = self._steps()
        if self.pos != len(self.s):
            raise JSONPathError(f"unrecognized character in action: {self.s[self.pos:]!r}")
        return tuple(steps)

    def _steps(self) -> list:
        steps: list = []
        s = self.s
        first = True
        while self.pos < len(s):
            c = s[self.pos]
            if c == ".":
                if s.startswith("..", self.pos):
                    steps.append(_Recursive())
                    self.pos += 2
                    if self.pos < len(s) and s[self.pos] == "[":
                        continue
                else:
                    self.pos += 1
                if self.pos < len(s) and s[self.pos] == "*":
                    self.pos += 1
                    steps.append(_Wildcard())
                    first = False
                    continue
                name = self._name()
                if name:
                    steps.append(_Field((name,)))
                elif not (steps and isinstance(steps[-1], _Recursive)) and self.pos < len(s) \
                        and s[self.pos] not in ".[":
                    raise JSONPathError(f"invalid field name at {s[self.pos:]!r}")
            elif c == "[":
                steps.append(self._bracket())
            elif first and (c.isalpha() or c == "_"):
                steps.append(_Field((self._name(),)))  # "metadata.name" without the dot
            else:
                raise JSONPathError(f"unrecognized character in action: {s[self.pos:]!r}")
            first = False
        return steps

    def _name(self) -> str:
        s, out = self.s, []
        while self.pos < len(s):
            c = s[self.pos]
            if c == "\\" and self.pos + 1 < len(s):
                out.append(s[self.pos + 1])
                self.pos += 2
                continue
            if c in ".[]()=!<>, \t'\"@":
                break
            out.append(c)
            self.pos += 1
        return "".join(out)

    def _bracket(self):
        s = self.s
        start = self.pos + 1
        depth = 0
        for i, c in _outside_quotes(s, start):  # noqa: B007 - i, where the loop breaks, is read after it
            if c == "(":
                depth += 1
            elif c == ")":
                depth -= 1
            elif c == "]" and depth == 0:
                break
        else:
            raise JSONPathError(f"unterminated array in {s!r}")
        body = s[start:i].strip()
        self.pos = i + 1
        if body == "*":
            return _Wildcard()
        if body.startswith("?"):
            inner = body[1:].strip()
            if not (inner.startswith("(") and inner.endswith(")")):
                raise JSONPathError(f"unrecognized filter {body!r}")
            return _parse_filter(inner[1:-1].strip())
        if body[:1] in ("'", '"'):
            return _Field(tuple(_unquote(part.strip()) for part in _split_top(body, ",")))
        return _Index(tuple(_parse_selection(part.strip()) for part in _split_top(body, ",")))


def _outside_quotes(text: str, start: int = 0) -> Iterator[tuple[int, str]]:
    """Each (index, character) of ``text`` from ``start`` that is not part of a quoted string:
    the quotes, what they enclose and backslash escapes inside them are passed over."""
    quote, i = "", start
    while i < len(text):
        c = text[i]
        if quote:
            if c == "\\":
                i += 1
            elif c == quote:
                quote = ""
        elif c in "'\"":
            quote = c
        else:
            yield i, c
        i += 1


def _split_top(text: str, sep: str) -> list[str]:
    """``text`` split at each ``sep`` that is not inside quotes."""
    parts, begin = [], 0
    for i, c in _outside_quotes(text):
        if c == sep:
            parts.append(text[begin:i])
            begin = i + 1
    parts.append(text[begin:])
    return parts


def _unquote(text: str) -> str:
    if len(text) < 2 or text[0] not in "'\"" or text[-1] != text[0]:
        raise JSONPathError(f"invalid quoted key {text!r}")
    body, out, i = text[1:-1], [], 0
    while i < len(body):
        if body[i] == "\\" and i + 1 < len(body):
            i += 1
        out.append(body[i])
        i += 1
    return "".join(out)


def _int(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise JSONPathError(f"invalid array index {text!r}") from None


def _parse_selection(text: str) -> tuple[int | None, int | None, int | None, bool]:
    if not text:
        raise JSONPathError("empty array index")
    parts = text.split(":")
    if len(parts) == 1:
        return (_int(parts[0]), None, None, True)
    if len(parts) > 3:
        raise JSONPathError(f"invalid array slice {text!r}")
    values = [(_int(p.strip()) if p.strip() else None) for p in parts]
    while len(values) < 3:
        values.append(None)
    return (values[0], values[1], values[2], False)


def _parse_filter(expr: str) -> _Filter:
    for i, _ in _outside_quotes(expr):
        for op in _COMPARISONS:
            if expr.startswith(op, i):
                left, right = expr[:i].strip(), expr[i + len(op):].strip()
                return _Filter(_operand(left), op, _operand(right))
    return _Filter(_operand(expr), "exists", None)


def _operand(text: str) -> Operand:
    if not text:
        raise JSONPathError("missing operand in filter")
    if text[0] == "@":
        parser = _Parser(text)
        parser.pos = 1
        steps = parser._steps()
        if parser.pos != len(parser.s):
            raise JSONPathError(f"invalid filter operand {text!r}")
        return Operand(tuple(steps))
    if text[0] in "'\"":
        return Operand(None, _unquote(text))
    if text in ("true", "false"):
        return Operand(None, text == "true")
    try:
        return Operand(None, float(text) if any(c in text for c in ".eE") else int(text))
    except ValueError:
        raise JSONPathError(f"unrecognized filter operand {text!r}") from None


# -- evaluation -----------------------------------------------------------------------------------

def _evaluate(steps: tuple, values: list[Any]) -> list[Any]:
    for step in steps:
        if not values:
            return []
        if isinstance(step, _Field):
            values = [v[name] for v in values if isinstance(v, dict)
                      for name in step.names if name in v]
        elif isinstance(step, _Wildcard):
            out: list[Any] = []
            for v in values:
                if isinstance(v, dict):
                    out.extend(v[k] for k in sorted(v))
                elif isinstance(v, list):
                    out.extend(v)
            values = out
        elif isinstance(step, _Recursive):
            values = _descend(values)
        elif isinstance(step, _Index):
            values = _select(values, step)
        else:
            values = _filter(values, step)
    return values


def _descend(values: list[Any]) -> list[Any]:
    out: list[Any] = []
    for v in values:
        children = [v[k] for k in sorted(v)] if isinstance(v, dict) else v if isinstance(v, list) else []
        if children:
            out.append(v)
            out.extend(_descend(children))
    return out


def _arrays(values: list[Any], action: str = "") -> Iterator[list]:
    """The lists an index or a filter applies to: a null (a missing key) is skipped, any
    other non-list is an error, worded as client-go's (``action`` ends its message)."""
    for v in values:
        if v is None:
            continue
        if not isinstance(v, list):
            raise JSONPathError(f"{_go_type(v)} is not array or slice{action}")
        yield v


def _select(values: list[Any], step: _Index) -> list[Any]:
    out: list[Any] = []
    for v in _arrays(values):
        n = len(v)
        for start, end, stride, single in step.selections:
            lo = 0 if start is None else start
            if lo < 0:
                lo += n
            if single:
                hi = lo + 1
            else:
                hi = n if end is None else (end + n if end < 0 else end)
            if hi == lo:
                continue
            if not 0 <= lo < n:
                raise JSONPathError(f"array index out of bounds: index {lo}, length {n}")
            if not 0 <= hi <= n:
                raise JSONPathError(f"array index out of bounds: index {hi - 1}, length {n}")
            if lo > hi:
                raise JSONPathError(f"starting index {lo} is greater than ending index {hi}")
            if stride is not None and stride <= 0:
                raise JSONPathError("step must be > 0")
            out.extend(v[lo:hi:stride or 1])
    return out


def _filter(values: list[Any], step: _Filter) -> list[Any]:
    out: list[Any] = []
    for v in _arrays(values, " and cannot be filtered"):
        out.extend(element for element in v if _matches(step, element))
    return out


def _matches(step: _Filter, element: Any) -> bool:
    """Whether ``element`` passes the filter; an operand that selects nothing fails it."""
    lefts = _operand_values(step.left, element)
    if step.op == "exists":
        return bool(lefts)
    if not _at_most_one(lefts):
        return False
    rights = _at_most_one(_operand_values(step.right, element))
    return bool(rights) and _compare(lefts[0], step.op, rights[0])


def _at_most_one(values: list[Any]) -> list[Any]:
    if len(values) > 1:
        raise JSONPathError("can only compare one element at a time")
    return values


def _operand_values(operand: Operand | None, element: Any) -> list[Any]:
    if operand is None:
        return []
    if operand.path is not None:
        return _evaluate(operand.path, [element])
    return [operand.literal]


def _kind(v: Any) -> str:
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, int):
        return "int"
    if isinstance(v, float):
        return "float"
    if isinstance(v, str):
        return "string"
    return "invalid"


def _compare(left: Any, op: str, right: Any) -> bool:
    # text/template's eq/lt: both sides must be of the same basic kind.
    kind = _kind(left)
    if kind == "invalid" or kind != _kind(right):
        raise JSONPathError("incompatible types for comparison")
    if op == "==":
        return left == right
    if op == "!=":
        return left != right
    if kind == "bool":
        raise JSONPathError("invalid type for comparison")
    return {"<": left < right, ">": left > right, "<=": left <= right, ">=": left >= right}[op]


def _go_type(v: Any) -> str:
    if isinstance(v, dict):
        return "map[string]interface {}"
    kind = _kind(v)
    return {"int": "int64", "float": "float64", "invalid": "interface {}"}.get(kind, kind)


# -- printing -------------------------------------------------------------------------------------

def _digits_point(f: float) -> tuple[str, int]:
    t = Decimal(repr(abs(f))).as_tuple()
    raw = "".join(map(str, t.digits))
    exponent = int(t.exponent)
    stripped = raw.lstrip("0")
    if not stripped:
        return "0", 1
    point = len(raw) + exponent  # value = 0.raw * 10**point
    point -= len(raw) - len(stripped)  # leading zeros move the point
    digits = stripped.rstrip("0")
    return digits, point


def _fmt_e(digits: str, point: int, sign: str, go_json: bool = False) -> str:
    mantissa = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
    exp = point - 1
    exp_sign = "-" if exp < 0 else "+"
    if go_json:
        return f"{sign}{mantissa}e{exp_sign}{abs(exp)}"
    return f"{sign}{mantissa}e{exp_sign}{abs(exp):02d}"


def _fmt_f(digits: str, point: int, sign: str) -> str:
    if point <= 0:
        return f"{sign}0.{'0' * -point}{digits}"
    if point >= len(digits):
        return sign + digits + "0" * (point - len(digits))
    return f"{sign}{digits[:point]}.{digits[point:]}"


def go_format_float(f: float) -> str:
    """Go's ``fmt.Sprint(float64)``: ``%g`` with the shortest precision (``1e+06``, ``0.5``)."""
    if f != f:
        return "NaN"
    if f in (float("inf"), float("-inf")):
        return "+Inf" if f > 0 else "-Inf"
    sign = "-" if str(f).startswith("-") else ""
    if f == 0:
        return sign + "0"
    digits, point = _digits_point(f)
    exp = point - 1
    if exp < -4 or exp >= 6:
        return _fmt_e(digits, point, sign)
    return _fmt_f(digits, point, sign)


def _go_json_float(f: float) -> str:
    if f == 0:
        return "-0" if str(f).startswith("-") else "0"
    sign = "-" if f < 0 else ""
    digits, point = _digits_point(f)
    a = abs(f)
    if a < 1e-6 or a >= 1e21:
        return _fmt_e(digits, point, sign, go_json=True)
    return _fmt_f(digits, point, sign)


def _go_json_string(s: str) -> str:
    text = json.dumps(s, ensure_ascii=False)
    return (text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
            .replace("\u2028", "\\u2028").replace("\u2029", "\\u2029"))


def go_json(v: Any) -> str:
    """Go's compact ``json.Marshal`` of a decoded JSON value (sorted keys, HTML-safe)."""
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return _go_json_float(v)
    if isinstance(v, str):
        return _go_json_string(v)
    if isinstance(v, dict):
        return "{" + ",".join(f"{_go_json_string(str(k))}:{go_json(v[k])}"
                              for k in sorted(v, key=str)) + "}"
    if isinstance(v, (list, tuple)):
        return "[" + ",".join(go_json(x) for x in v) + "]"
    return _go_json_string(str(v))


def print_value(v: Any) -> str | None:
    """One result as ``JSONPath.PrintResults`` writes it; None for a JSON null."""
    if v is None:
        return None
    if isinstance(v, str):
        return v
    if isinstance(v, float):
        return go_format_float(v)
    return go_json(v)  # booleans and integers print as in JSON
