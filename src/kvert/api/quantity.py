"""Exact Kubernetes resource quantities (``resource.Quantity`` in apimachinery).

Kubernetes never stores a quantity as a float, so neither do we: a parsed value is
an exact integer count of nano-units. Parsing already rounds every non-zero value
away from zero to a multiple of 1n ("0.9n" -> "1n"), so nothing finer ever needs to
be represented and integer arithmetic is exact.

What we reproduce on purpose, because clients and stored objects can observe it:

* the grammar and its three error messages (``ErrFormatWrong``, ``ErrNumeric``,
  ``ErrSuffix``), including what it lets through: a bare suffix such as ``"Mi"``,
  ``"k"``, ``"+"`` or ``"."`` parses as zero (apimachinery issue #165);
* the canonical form (largest suffix without losing precision, no fractional
  digits; "1.5" -> "1500m", "1.5Gi" -> "1536Mi", BinarySI below 1024 or with a
  fraction printed as DecimalSI, DecimalSI beyond "E" printed as "e21");
* ``String()`` reusing the parsed text when its fast path judges it canonical, so
  ``"+1"``, ``"1E3"`` and ``"1.001"`` (kubernetes issue #138165) come back verbatim;
  ``Quantity.canonical()`` gives the recomputed form;
* BinarySI values silently capped at 2^63-1 on parse ("9Ei" -> 2^63-1).

Deliberate differences: no int64 overflow (Python ints), ``value()``/``milli_value()``
round away from zero for negatives too (Kubernetes' decimal path is inconsistent
there), and numbers with more than 1000 digits or exponents beyond +-1000 are
rejected instead of being carried around.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction
from functools import lru_cache, total_ordering

DECIMAL_SI = "DecimalSI"
BINARY_SI = "BinarySI"
DECIMAL_EXPONENT = "DecimalExponent"
FORMATS = (DECIMAL_SI, BINARY_SI, DECIMAL_EXPONENT)

# The exact texts of apimachinery's parse errors, so messages read as kubectl users know them.
SPLIT_RE = r"^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$"
ERR_FORMAT_WRONG = f"quantities must match the regular expression '{SPLIT_RE}'"
ERR_NUMERIC = "unable to parse numeric part of quantity"
ERR_SUFFIX = "unable to parse quantity's suffix"

NANO = 10**9
MAX_INT64 = 2**63 - 1
_MAX_DIGITS = 1000  # guard against inputs whose exact value would be huge to carry
_MAX_EXPONENT = 1000

_DIGITS = frozenset("0123456789")
_SUFFIX_LETTERS = frozenset("eEinumkKMGTP")
_DECIMAL_SUFFIXES = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_BINARY_SUFFIXES = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_DECIMAL_BY_EXPONENT = {e: s for s, e in _DECIMAL_SUFFIXES.items()}
_BINARY_BY_POWER = ["", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"]  # index = power of 1024

# Resource names whose integer form is millicores rather than base units (quota spells cpu both ways).
MILLI_RESOURCES = frozenset({"cpu", "requests.cpu", "limits.cpu"})


class QuantityError(ValueError):
    """A quantity that Kubernetes would refuse; the message names the text and, if known, the field."""

    def __init__(self, text: object, reason: str, field: str = "") -> None:
        self.text = text
        self.reason = reason  # apimachinery's own message, e.g. ERR_FORMAT_WRONG
        self.field = field
        shown = text if isinstance(text, str) else repr(text)
        message = f"cannot parse '{shown}': {reason}"
        super().__init__(f"{field}: {message}" if field else message)

    def at(self, field: str) -> QuantityError:
        """The same error, reported against a field path such as ``spec...requests[cpu]``."""
        return QuantityError(self.text, self.reason, field)


def _div_away(n: int, d: int) -> int:
    """n / d rounded away from zero, which is how Kubernetes rounds when it must lose precision."""
    q = -(-abs(n) // d)
    return q if n >= 0 else -q


def _wrap_int32(n: int) -> int:
    # Go keeps the parsed exponent as an int32, silently wrapping larger ones.
    return (n + 2**31) % 2**32 - 2**31


@total_ordering
@dataclass(frozen=True, eq=False)
class Quantity:
    """An exact quantity: ``nanos`` (value in units of 1e-9) plus its serialization ``format``.

    Equality, ordering and hashing use the value only, like ``Quantity.Cmp``:
    ``parse("1Ki") == parse("1024")``. ``text`` is the parsed spelling Kubernetes would keep
    and re-emit; it never affects comparisons.
    """

    nanos: int
    format: str = DECIMAL_SI
    text: str | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        if self.format not in FORMATS:
            raise ValueError(f"unknown quantity format {self.format!r}; expected one of {FORMATS}")
        if not isinstance(self.nanos, int) or isinstance(self.nanos, bool):
            raise TypeError("Quantity.nanos must be an int")

    # -- construction ---------------------------------------------------------------------------

    @classmethod
    def parse(cls, text: object) -> Quantity:
        """Parse like ``resource.ParseQuantity``; ints and finite floats are read as their JSON text."""
        if isinstance(text, Quantity):
            return text
        if isinstance(text, bool):
            raise QuantityError(text, ERR_FORMAT_WRONG)
        if isinstance(text, int):
            text = str(text)
        elif isinstance(text, float):
            if not math.isfinite(text):
                raise QuantityError(text, ERR_FORMAT_WRONG)
            text = repr(text)  # shortest round-trip text, which is what a JSON/YAML number says
        elif not isinstance(text, str):
            raise QuantityError(text, ERR_FORMAT_WRONG)
        return _parse_cached(text)

    @classmethod
    def from_int(cls, n: int, fmt: str = DECIMAL_SI) -> Quantity:
        """Like ``resource.NewQuantity``: n base units."""
        return cls(int(n) * NANO, fmt)

    @classmethod
    def from_milli(cls, m: int, fmt: str = DECIMAL_SI) -> Quantity:
        """Like ``resource.NewMilliQuantity``: m thousandths (BinarySI below 1024 prints as DecimalSI)."""
        return cls(int(m) * (NANO // 1000), fmt)

    # -- values ---------------------------------------------------------------------------------

    @property
    def amount(self) -> Fraction:
        """The exact value as a Fraction."""
        return Fraction(self.nanos, NANO)

    def value(self) -> int:
        """``Value()``: the value rounded up (away from zero) to an integer."""
        return _div_away(self.nanos, NANO)

    def milli_value(self) -> int:
        """``MilliValue()``: the value in thousandths, rounded up, so 0.0001 cpu counts as 1m."""
        return _div_away(self.nanos, NANO // 1000)

    def is_zero(self) -> bool:
        return self.nanos == 0

    def sign(self) -> int:
        return (self.nanos > 0) - (self.nanos < 0)

    # -- arithmetic (results are recomputed, so they print canonically) ---------------------------

    def __neg__(self) -> Quantity:
        return Quantity(-self.nanos, self.format)

    def __add__(self, other: Quantity) -> Quantity:
        if not isinstance(other, Quantity):
            return NotImplemented
        # Kubernetes' Add adopts the other operand's format when the receiver is zero.
        fmt = other.format if self.nanos == 0 else self.format
        return Quantity(self.nanos + other.nanos, fmt)

    def __sub__(self, other: Quantity) -> Quantity:
        if not isinstance(other, Quantity):
            return NotImplemented
        fmt = other.format if self.nanos == 0 else self.format
        return Quantity(self.nanos - other.nanos, fmt)

    # -- comparison (by value, like Cmp) ---------------------------------------------------------

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Quantity):
            return self.nanos == other.nanos
        return NotImplemented

    def __lt__(self, other: object) -> bool:
        if isinstance(other, Quantity):
            return self.nanos < other.nanos
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self.nanos)

    # -- formatting -----------------------------------------------------------------------------

    def __str__(self) -> str:
        """``String()``: the kept parse text when Kubernetes keeps it, else the canonical form."""
        return self.text if self.text is not None else self.canonical()

    def canonical(self) -> str:
        """The canonical form Kubernetes computes (``CanonicalizeBytes``), ignoring any kept text."""
        n = self.nanos
        if n == 0:
            return "0"
        fmt = self.format
        if fmt == BINARY_SI and (abs(n) < 1024 * NANO or n % NANO):
            fmt = DECIMAL_SI  # binary suffixes would round or mislead here
        sign = "-" if n < 0 else ""
        if fmt == BINARY_SI:
            mantissa, power = abs(n) // NANO, 0
            # Kubernetes has no suffix past Ei and would drop the exponent; stop at Ei instead.
            while mantissa % 1024 == 0 and power < len(_BINARY_BY_POWER) - 1:
                mantissa //= 1024
                power += 1
            return f"{sign}{mantissa}{_BINARY_BY_POWER[power]}"
        digits = str(abs(n))
        stripped = digits.rstrip("0")
        exponent = -9 + len(digits) - len(stripped)
        pad = exponent % 3  # lower the exponent to a multiple of 3, growing the mantissa
        mantissa_digits, exponent = stripped + "0" * pad, exponent - pad
        if fmt == DECIMAL_SI and exponent in _DECIMAL_BY_EXPONENT:
            suffix = _DECIMAL_BY_EXPONENT[exponent]
        else:  # DecimalExponent, or a DecimalSI value beyond "E"
            suffix = "" if exponent == 0 else f"e{exponent}"
        return f"{sign}{mantissa_digits}{suffix}"


_MILLI_NANOS = NANO // 1000


def round_up_to_milli(q: Quantity) -> Quantity:
    """``Quantity.RoundUp(-3)``, as ``SetDefaults_ResourceList`` applies it to every value of a
    ResourceList: a value finer than 1m is rounded up (away from zero) to a whole milli and
    loses its kept text; any other value is returned as it is ("0.0005" -> 1m, "5u" -> 1m)."""
    if q.nanos % _MILLI_NANOS == 0:
        return q
    return Quantity(_div_away(q.nanos, _MILLI_NANOS) * _MILLI_NANOS, q.format)


@lru_cache(maxsize=8192)
def _serialized(text: str, resource_list: bool) -> str:
    q = Quantity.parse(text)
    return str(round_up_to_milli(q) if resource_list else q)


def serialized(value: object, *, resource_list: bool = False) -> str:
    """The text a Kubernetes API server stores and returns for a quantity sent as ``value``
    (decode with ``ParseQuantity``, then ``String()``): the sent text when the parser keeps
    it ("100M", "1e3", "500m"), else the canonical form ("1000m" -> "1", "1.5Gi" -> "1536Mi",
    JSON 2 -> "2"). ``resource_list``: a ResourceList value, rounded up to milli first.
    Raises QuantityError for a value that does not parse."""
    if isinstance(value, str):
        return _serialized(value, resource_list)
    q = Quantity.parse(value)
    return str(round_up_to_milli(q) if resource_list else q)


def parse_quantity(text: object) -> Quantity:
    """``resource.ParseQuantity``; raises QuantityError."""
    return Quantity.parse(text)


def _scan(text: str) -> tuple[bool, str, str, str, bool]:
    """Split text like parseQuantityString: (negative, integer digits without leading zeros
    or "0", fraction digits, suffix, whether any digit was written at all)."""
    pos, end = 0, len(text)
    negative = False
    if pos < end and text[pos] in "+-":
        negative = text[pos] == "-"
        pos += 1
    start = pos
    while pos < end and text[pos] in _DIGITS:
        pos += 1
    written = pos > start
    num = text[start:pos].lstrip("0") or "0"
    denom = ""
    if pos < end and text[pos] == ".":
        pos += 1
        start = pos
        while pos < end and text[pos] in _DIGITS:
            pos += 1
        denom = text[start:pos]  # "1." and "1.G" are accepted, as in Kubernetes
        written = written or pos > start
    suffix_start = pos
    while pos < end and text[pos] in _SUFFIX_LETTERS:
        pos += 1
    if pos < end and text[pos] in "+-":
        pos += 1
    while pos < end and text[pos] in _DIGITS:
        pos += 1
    if pos != end:
        raise QuantityError(text, ERR_FORMAT_WRONG)
    return negative, num, denom, text[suffix_start:], written


def _interpret(text: str, suffix: str) -> tuple[int, int, str]:
    """Suffix -> (base, exponent, format), like quantitySuffixer.interpret."""
    if suffix in _DECIMAL_SUFFIXES:
        return 10, _DECIMAL_SUFFIXES[suffix], DECIMAL_SI
    if suffix in _BINARY_SUFFIXES:
        return 2, _BINARY_SUFFIXES[suffix], BINARY_SI
    if len(suffix) > 1 and suffix[0] in "eE":
        body = suffix[1:]
        digits = body[1:] if body[0] in "+-" else body
        if digits and set(digits) <= _DIGITS:  # strconv.ParseInt's syntax
            value = int(body)
            if -(2**63) <= value <= MAX_INT64:
                exponent = _wrap_int32(value)
                if abs(exponent) > _MAX_EXPONENT:
                    raise QuantityError(text, ERR_NUMERIC)
                return 10, exponent, DECIMAL_EXPONENT
    raise QuantityError(text, ERR_SUFFIX)


def _parse(text: str) -> Quantity:
    if text == "":
        raise QuantityError(text, ERR_FORMAT_WRONG)
    if text == "0":
        return Quantity(0, DECIMAL_SI, "0")
    negative, num, denom, suffix, written = _scan(text)
    base, exponent, fmt = _interpret(text, suffix)
    if len(num) + len(denom) > _MAX_DIGITS:
        raise QuantityError(text, ERR_NUMERIC)
    fast, keep = _fast_path(num, denom, base, exponent)
    if not fast and not written:
        # Only the int64 fast path tolerates a missing number ("Mi" is 0, "Pi" is an error).
        raise QuantityError(text, ERR_NUMERIC)

    shifted = num + denom
    magnitude = Fraction(int(shifted), 10 ** len(denom))
    magnitude *= Fraction(base) ** exponent
    nanos = math.ceil(magnitude * NANO)  # round away from zero to 1n: "if you want some, get some"
    if fmt == BINARY_SI:
        nanos = min(nanos, MAX_INT64 * NANO)  # Kubernetes caps binary quantities at int64
        if 0 < nanos < NANO:
            fmt = DECIMAL_SI
    if negative:
        nanos = -nanos
    return Quantity(nanos, fmt, text if keep else None)


def _fast_path(num: str, denom: str, base: int, exponent: int) -> tuple[bool, bool]:
    """(whether ParseQuantity takes its int64 fast path, whether it keeps the input as String()).

    Kubernetes reuses the input when a cheap test says it is canonical; the test ignores a
    leading '+', leading zeros of a non-zero number, and (issue #138165) a fraction whose
    length is a multiple of three, so those spellings survive a round trip verbatim.
    """
    shifted = num + denom
    if base == 10:
        scale = exponent - len(denom)
        if len(shifted) > 18 or scale < -9:
            return False, False
        return True, scale % 3 == 0 and not shifted.endswith("000") and shifted[0] != "0"
    if denom or 14 - len(num) - exponent * 3 // 10 < 0:
        return False, False
    value = int(num)
    if value * 2**exponent > MAX_INT64:
        return False, False
    return True, value & 7 != 0


def is_milli_resource(resource_name: str) -> bool:
    """Whether a resource's integer form is millicores (cpu, and quota's requests.cpu/limits.cpu)."""
    return resource_name in MILLI_RESOURCES


@lru_cache(maxsize=8192)
def _parse_cached(text: str) -> Quantity:
    # Objects repeat the same few quantities endlessly ("100m", "128Mi"); Quantity is
    # immutable, so a parsed one can be shared. Errors are not cached (lru_cache skips them).
    return _parse(text)


def to_int(resource_name: str, value: object) -> int:
    """A quantity as an integer for arithmetic: millicores for cpu, base units otherwise.

    Both round up, like the scheduler's MilliValue()/Value(): "0.0001" cpu is 1m and
    "0.5" bytes is 1 byte.
    """
    if type(value) is str:
        return _int_of_text(value, is_milli_resource(resource_name))
    q = Quantity.parse(value)
    return q.milli_value() if is_milli_resource(resource_name) else q.value()


@lru_cache(maxsize=8192)
def _int_of_text(text: str, milli: bool) -> int:
    # the same few spellings again and again, as _parse_cached (errors are not cached)
    q = Quantity.parse(text)
    return q.milli_value() if milli else q.value()


@lru_cache(maxsize=8192)
def to_quantity(resource_name: str, amount: int, fmt: str = DECIMAL_SI) -> str:
    """Inverse of to_int: 500 (cpu) -> "500m", 2000 -> "2"; 129000000 bytes -> "129M",
    128974848 with fmt="BinarySI" -> "123Mi". (Cached: a node agent formats the same few
    amounts for every status it writes.)"""
    if is_milli_resource(resource_name):
        return str(Quantity.from_milli(amount, fmt))
    return str(Quantity.from_int(amount, fmt))
