"""Label selectors, as ``k8s.io/apimachinery/pkg/labels`` and ``metav1.LabelSelector`` define them.

Two spellings select the same thing:

* the string form used by ``?labelSelector=`` and ``kubectl -l``::

      environment=production,tier!=frontend,partition in (a,b),track notin (x),gpu,!spot,rank>3

  parsed by :meth:`LabelSelector.parse` with Kubernetes' own grammar (same lexer rules,
  same accepted and rejected inputs, same key/value validation);

* the structured ``metav1.LabelSelector`` (``matchLabels`` + ``matchExpressions``) found in
  Deployments, ReplicaSets, PDBs, VPAs, ..., converted by :meth:`LabelSelector.from_dict`.

Semantics carried over from Kubernetes:

* requirements are ANDed; ``""`` / ``{}`` select everything; a ``None`` structured selector
  selects *nothing* (``labels.Nothing()``);
* ``!=`` and ``notin`` also match objects that lack the key; ``in``/``=`` require it;
* ``gt``/``lt`` (``>``/``<``) need exactly one integer value and match only labels that parse
  as a base-10 int64;
* ``in ()`` means ``in ("")``: the empty string is a valid value.

``str(selector)`` is the canonical string form: requirements sorted by key (then operator and
values, so the form is deterministic), values sorted and de-duplicated. ``parse(str(s))`` is
equal to ``s`` for every selector built from valid requirements, except
:meth:`LabelSelector.nothing`, which -- exactly as in Kubernetes -- renders as ``""`` and so
cannot be written as a string. (:meth:`LabelSelector.from_set`, like ``SelectorFromSet``, does
not validate, so it can hold pairs the string form cannot express.)

Matching is on the hot path of list/watch, so selectors are compiled once into tuples of
``(key, kind, argument)`` and :meth:`LabelSelector.matches` is a tight loop over them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from functools import lru_cache
from typing import Any, NamedTuple

from kvert.api.gostrings import quote
from kvert.api.names import is_label_value, is_qualified_name

__all__ = [
    "SelectorError",
    "Requirement",
    "LabelSelector",
    "parse_label_selector",
    "label_selector_from_dict",
    "make_requirement",
    "validate_label_key",
    "validate_label_value",
    "parse_int64",
    "IN", "NOT_IN", "EQUALS", "DOUBLE_EQUALS", "NOT_EQUALS", "EXISTS", "DOES_NOT_EXIST",
    "GREATER_THAN", "LESS_THAN",
]


class SelectorError(ValueError):
    """A label/field/node selector that Kubernetes would reject."""


# Operator spellings are those of k8s.io/apimachinery/pkg/selection.
IN = "in"
NOT_IN = "notin"
EQUALS = "="
DOUBLE_EQUALS = "=="
NOT_EQUALS = "!="
EXISTS = "exists"
DOES_NOT_EXIST = "!"
GREATER_THAN = "gt"
LESS_THAN = "lt"

_BINARY_OPERATORS = (IN, NOT_IN, EQUALS, DOUBLE_EQUALS, NOT_EQUALS, GREATER_THAN, LESS_THAN)
_ALL_OPERATORS = _BINARY_OPERATORS + (EXISTS, DOES_NOT_EXIST)
_OP_ORDER = {op: i for i, op in enumerate(_ALL_OPERATORS)}

# ---------------------------------------------------------------------------------------------
# Label key / value validation: the rules are in kvert.api.names
# ---------------------------------------------------------------------------------------------

# Every list/watch with a selector re-parses it, and the same few keys and values come back
# again and again, so the (immutable) answers are cached.
@lru_cache(maxsize=4096)
def _key_problems(key: str) -> tuple[str, ...]:
    return tuple(is_qualified_name(key))


@lru_cache(maxsize=4096)
def _value_problems(value: str) -> tuple[str, ...]:
    return tuple(is_label_value(value))


def validate_label_key(key: str) -> list[str]:
    """Problems with ``key`` as a label key (``[prefix/]name``); empty when it is valid."""
    if not isinstance(key, str):
        return [f"must be a string, not {type(key).__name__}"]
    return list(_key_problems(key))


def validate_label_value(value: str) -> list[str]:
    """Problems with ``value`` as a label value; empty when it is valid."""
    if not isinstance(value, str):
        return [f"must be a string, not {type(value).__name__}"]
    return list(_value_problems(value))


_INT64_RE = re.compile(r"[+-]?[0-9]+")
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1


def parse_int64(text: object) -> int | None:
    """``strconv.ParseInt(text, 10, 64)``: optional sign, ASCII digits, int64 range; else None."""
    if not isinstance(text, str) or not _INT64_RE.fullmatch(text):
        return None
    try:
        n = int(text)
    except ValueError:  # absurdly long digit strings
        return None
    return n if _INT64_MIN <= n <= _INT64_MAX else None


# ---------------------------------------------------------------------------------------------
# Requirements
# ---------------------------------------------------------------------------------------------


class Requirement(NamedTuple):
    """One ``key operator values`` condition; build it with :func:`make_requirement`."""

    key: str
    operator: str
    values: tuple[str, ...]

    def __str__(self) -> str:
        op, key, values = self.operator, self.key, self.values
        if op == EXISTS:
            return key
        if op == DOES_NOT_EXIST:
            return "!" + key
        if op in (IN, NOT_IN):
            return f"{key} {op} ({','.join(values)})"
        sym = {GREATER_THAN: ">", LESS_THAN: "<"}.get(op, op)
        return key + sym + (values[0] if values else "")

    def matches(self, labels: Mapping[str, str] | None) -> bool:
        return LabelSelector((self,)).matches(labels)


def _problem(msg: str) -> SelectorError:
    return SelectorError(msg)


def make_requirement(key: str, operator: str, values: Iterable[str] = ()) -> Requirement:
    """``labels.NewRequirement``: validate and normalise one requirement.

    ``operator`` is one of the selection operators (``"in"``, ``"notin"``, ``"="``, ``"=="``,
    ``"!="``, ``"exists"``, ``"!"``, ``"gt"``, ``"lt"``). Values are sorted and de-duplicated.
    Raises :class:`SelectorError` naming the key/value at fault, with every problem found.
    """
    if isinstance(values, str):  # a bare string is a classic mistake: "abc" -> ("a","b","c")
        raise SelectorError(f"values for key {key!r} must be a list of strings, not a string")
    vals = list(values) if values is not None else []
    problems: list[str] = []
    if not isinstance(key, str):
        raise SelectorError(f"label key must be a string, not {type(key).__name__}")
    for p in _key_problems(key):
        problems.append(f"invalid label key {key!r}: {p}")
    if operator in (IN, NOT_IN):
        if not vals:
            problems.append(f"key {key!r}: for 'in', 'notin' operators, values set can't be empty")
    elif operator in (EQUALS, DOUBLE_EQUALS, NOT_EQUALS):
        if len(vals) != 1:
            problems.append(f"key {key!r}: exact-match compatibility requires one single value, "
                            f"got {vals!r}")
    elif operator in (EXISTS, DOES_NOT_EXIST):
        if vals:
            problems.append(f"key {key!r}: values set must be empty for exists and does not "
                            f"exist, got {vals!r}")
    elif operator in (GREATER_THAN, LESS_THAN):
        if len(vals) != 1:
            problems.append(f"key {key!r}: for 'Gt', 'Lt' operators, exactly one value is "
                            f"required, got {vals!r}")
        for v in vals:
            if parse_int64(v) is None:
                problems.append(f"key {key!r}: for 'Gt', 'Lt' operators, the value must be an "
                                f"integer, got {v!r}")
    else:
        problems.append(f"key {key!r}: unsupported operator {operator!r}: supported values: "
                        + ", ".join(f'"{o}"' for o in _ALL_OPERATORS))
    for v in vals:
        if not isinstance(v, str):
            problems.append(f"key {key!r}: value {v!r} must be a string")
            continue
        for p in _value_problems(v):
            problems.append(f"invalid label value {v!r} for key {key!r}: {p}")
    if problems:
        raise SelectorError("; ".join(problems))
    return Requirement(key, operator, tuple(sorted(set(vals))))


# Compiled requirement kinds.
_K_IN, _K_NOT_IN, _K_EXISTS, _K_ABSENT, _K_GT, _K_LT = range(6)
_MISSING = object()


def _compile(req: Requirement) -> tuple[str, int, Any]:
    op, vals = req.operator, req.values
    if op in (IN, EQUALS, DOUBLE_EQUALS):
        return (req.key, _K_IN, frozenset(vals))
    if op in (NOT_IN, NOT_EQUALS):
        return (req.key, _K_NOT_IN, frozenset(vals))
    if op == EXISTS:
        return (req.key, _K_EXISTS, None)
    if op == DOES_NOT_EXIST:
        return (req.key, _K_ABSENT, None)
    bound = parse_int64(vals[0]) if len(vals) == 1 else None
    return (req.key, _K_GT if op == GREATER_THAN else _K_LT, bound)


def _as_requirement(r: Any) -> Requirement:
    if type(r) is Requirement:
        return r
    key, op, values = r  # a plain (key, operator, values) tuple
    return Requirement(key, op, tuple(sorted(set(values))))


def _sort_key(req: Requirement) -> tuple[str, int, tuple[str, ...]]:
    return (req.key, _OP_ORDER.get(req.operator, 99), req.values)


# ---------------------------------------------------------------------------------------------
# Selector
# ---------------------------------------------------------------------------------------------


class LabelSelector:
    """An immutable conjunction of :class:`Requirement` s (or the special *nothing* selector)."""

    __slots__ = ("_reqs", "_compiled", "_nothing", "_str")

    def __init__(self, requirements: Iterable[Requirement] = (), *, _nothing: bool = False):
        reqs = tuple(sorted(map(_as_requirement, requirements), key=_sort_key))
        self._reqs = reqs
        self._nothing = _nothing
        self._compiled = tuple(_compile(r) for r in reqs)
        self._str: str | None = None

    # -- constructors --------------------------------------------------------------------------

    @classmethod
    def everything(cls) -> LabelSelector:
        return _EVERYTHING

    @classmethod
    def nothing(cls) -> LabelSelector:
        return _NOTHING

    @classmethod
    def parse(cls, text: str) -> LabelSelector:
        """Parse the string form (``labels.Parse``); raises :class:`SelectorError`."""
        if not isinstance(text, str):
            raise SelectorError(f"label selector must be a string, not {type(text).__name__}")
        if not text.strip(" \t\r\n"):
            return _EVERYTHING
        return cls(_Parser(text).parse())

    @classmethod
    def from_dict(cls, sel: Mapping[str, Any] | None) -> LabelSelector:
        """``metav1.LabelSelectorAsSelector``: ``None`` -> nothing, ``{}`` -> everything."""
        if sel is None:
            return _NOTHING
        if not isinstance(sel, Mapping):
            raise SelectorError(f"label selector must be an object with matchLabels/"
                                f"matchExpressions, not {type(sel).__name__}")
        match_labels = sel.get("matchLabels") or {}
        match_exprs = sel.get("matchExpressions") or []
        if not isinstance(match_labels, Mapping):
            raise SelectorError("matchLabels must be a map of strings to strings")
        if not isinstance(match_exprs, list):
            raise SelectorError("matchExpressions must be a list")
        if not match_labels and not match_exprs:
            return _EVERYTHING
        reqs: list[Requirement] = []
        for k, v in match_labels.items():
            try:
                reqs.append(make_requirement(k, EQUALS, [v]))
            except SelectorError as e:
                raise SelectorError(f"matchLabels[{k!r}]: {e}") from None
        for i, expr in enumerate(match_exprs):
            where = f"matchExpressions[{i}]"
            if not isinstance(expr, Mapping):
                raise SelectorError(f"{where}: must be an object with key, operator and values")
            operator = expr.get("operator")
            op = _STRUCTURED_OPS.get(operator) if isinstance(operator, str) else None
            if op is None:
                raise SelectorError(f"{where}.operator: {operator!r} is not a valid label selector "
                                    "operator (supported: In, NotIn, Exists, DoesNotExist)")
            try:
                reqs.append(make_requirement(expr.get("key", ""), op, expr.get("values") or []))
            except SelectorError as e:
                raise SelectorError(f"{where}: {e}") from None
        return cls(reqs)

    @classmethod
    def from_set(cls, labels: Mapping[str, str] | None) -> LabelSelector:
        """``labels.SelectorFromSet``: exact match on every pair, no validation; empty -> all."""
        if not labels:
            return _EVERYTHING
        return cls(Requirement(k, EQUALS, (v,)) for k, v in labels.items())

    @classmethod
    def from_requirements(cls, requirements: Iterable[Requirement]) -> LabelSelector:
        """AND of requirements; build them with :func:`make_requirement` (not re-validated)."""
        return cls(requirements)

    # -- queries -------------------------------------------------------------------------------

    def matches(self, labels: Mapping[str, str] | None) -> bool:
        if self._nothing:
            return False
        if labels is None:
            labels = _EMPTY
        get = labels.get
        for key, kind, arg in self._compiled:
            v = get(key, _MISSING)
            if kind == _K_IN:
                if v is _MISSING or v not in arg:
                    return False
            elif kind == _K_NOT_IN:
                if v is not _MISSING and v in arg:
                    return False
            elif kind == _K_EXISTS:
                if v is _MISSING:
                    return False
            elif kind == _K_ABSENT:
                if v is not _MISSING:
                    return False
            else:
                if v is _MISSING or arg is None:
                    return False
                n = parse_int64(v)
                if n is None:
                    return False
                if kind == _K_GT:
                    if not n > arg:
                        return False
                elif not n < arg:
                    return False
        return True

    __call__ = matches

    @property
    def empty(self) -> bool:
        """True when the selector does not restrict anything (matches every label set)."""
        return not self._nothing and not self._reqs

    @property
    def is_nothing(self) -> bool:
        return self._nothing

    def required_values(self) -> tuple[str, frozenset[str]] | None:
        """A key whose value must be one of a set for a label set to match (the one with
        the fewest values), or None: what an index of label sets can look candidates up by."""
        best = None
        for key, kind, arg in self._compiled:
            if kind == _K_IN and (best is None or len(arg) < len(best[1])):
                best = (key, arg)
        return best

    @property
    def requirements(self) -> tuple[Requirement, ...]:
        return self._reqs

    def requires_exact_match(self, key: str) -> str | None:
        """The single value ``key`` must have (``=``, ``==`` or a one-value ``in``), else None."""
        for r in self._reqs:
            if r.key == key:
                if r.operator in (EQUALS, DOUBLE_EQUALS, IN) and len(r.values) == 1:
                    return r.values[0]
                return None
        return None

    def add(self, *requirements: Requirement) -> LabelSelector:
        if self._nothing:
            return self
        return LabelSelector(self._reqs + tuple(requirements))

    def to_dict(self) -> dict[str, Any] | None:
        """The ``metav1.LabelSelector`` equivalent (``ParseToLabelSelector``).

        ``None`` for :meth:`nothing`; raises :class:`SelectorError` for ``gt``/``lt``, which
        the structured form cannot express.
        """
        if self._nothing:
            return None
        match_labels: dict[str, str] = {}
        exprs: list[dict[str, Any]] = []
        for r in self._reqs:
            if r.operator in (EQUALS, DOUBLE_EQUALS):
                if r.key not in match_labels:
                    match_labels[r.key] = r.values[0]
                else:
                    exprs.append({"key": r.key, "operator": "In", "values": list(r.values)})
            elif r.operator in (IN, NOT_IN, NOT_EQUALS):
                exprs.append({"key": r.key, "operator": "In" if r.operator == IN else "NotIn",
                              "values": list(r.values)})
            elif r.operator in (EXISTS, DOES_NOT_EXIST):
                exprs.append({"key": r.key,
                              "operator": "Exists" if r.operator == EXISTS else "DoesNotExist"})
            else:
                raise SelectorError(f"{str(r)!r}: operator {r.operator!r} isn't supported in "
                                    "metav1.LabelSelector")
        out: dict[str, Any] = {}
        if match_labels:
            out["matchLabels"] = match_labels
        if exprs:
            out["matchExpressions"] = exprs
        return out

    # -- dunder --------------------------------------------------------------------------------

    def __str__(self) -> str:
        if self._str is None:
            self._str = "" if self._nothing else ",".join(str(r) for r in self._reqs)
        return self._str

    def __repr__(self) -> str:
        if self._nothing:
            return "LabelSelector.nothing()"
        return f"LabelSelector.parse({str(self)!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, LabelSelector):
            return NotImplemented
        return self._nothing == other._nothing and self._reqs == other._reqs

    def __hash__(self) -> int:
        return hash((self._nothing, self._reqs))


_EMPTY: Mapping[str, str] = {}
_EVERYTHING = LabelSelector()
_NOTHING = LabelSelector(_nothing=True)
_STRUCTURED_OPS = {"In": IN, "NotIn": NOT_IN, "Exists": EXISTS, "DoesNotExist": DOES_NOT_EXIST}


def parse_label_selector(text: str) -> LabelSelector:
    return LabelSelector.parse(text)


def label_selector_from_dict(sel: Mapping[str, Any] | None) -> LabelSelector:
    return LabelSelector.from_dict(sel)


# ---------------------------------------------------------------------------------------------
# String-form lexer and parser: a port of the grammar in apimachinery's labels/selector.go
#
#   <selector-syntax>         ::= <requirement> | <requirement> "," <selector-syntax>
#   <requirement>             ::= [!] KEY [ <set-based-restriction> | <exact-match-restriction> ]
#   <set-based-restriction>   ::= "" | <inclusion-exclusion> <value-set>
#   <inclusion-exclusion>     ::= "in" | "notin"
#   <value-set>               ::= "(" <values> ")"
#   <values>                  ::= VALUE | VALUE "," <values>
#   <exact-match-restriction> ::= ["="|"=="|"!="|">"|"<"] VALUE
# ---------------------------------------------------------------------------------------------

(_T_EOS, _T_RPAREN, _T_COMMA, _T_NOT, _T_DEQ, _T_EQ, _T_GT, _T_ID, _T_IN, _T_LT, _T_NEQ,
 _T_NOTIN, _T_LPAREN) = range(13)

_SPECIAL = frozenset("=!(),><")
_WHITESPACE = frozenset(" \t\r\n")
_ONE_CHAR = {")": _T_RPAREN, ",": _T_COMMA, "!": _T_NOT, "=": _T_EQ, ">": _T_GT, "<": _T_LT,
             "(": _T_LPAREN}
_TWO_CHAR = {"==": _T_DEQ, "!=": _T_NEQ}
_KEYWORDS = {"in": _T_IN, "notin": _T_NOTIN}


def _lex(s: str) -> list[tuple[int, str]]:
    items: list[tuple[int, str]] = []
    i, n = 0, len(s)
    while True:
        while i < n and s[i] in _WHITESPACE:
            i += 1
        if i >= n:
            items.append((_T_EOS, ""))
            return items
        c = s[i]
        if c in _SPECIAL:
            two = s[i:i + 2]
            if two in _TWO_CHAR:  # the lexer takes the longest operator it can
                items.append((_TWO_CHAR[two], two))
                i += 2
            else:
                items.append((_ONE_CHAR[c], c))
                i += 1
        else:
            j = i + 1
            while j < n and s[j] not in _SPECIAL and s[j] not in _WHITESPACE:
                j += 1
            lit = s[i:j]
            items.append((_KEYWORDS.get(lit, _T_ID), lit))
            i = j


class _Parser:
    """Recursive descent over the token list; ``values`` context turns in/notin into names."""

    __slots__ = ("items", "pos")

    def __init__(self, text: str):
        self.items = _lex(text)
        self.pos = 0

    def _peek(self, values: bool = True) -> tuple[int, str]:
        tok, lit = self.items[self.pos]
        if values and tok in (_T_IN, _T_NOTIN):
            tok = _T_ID
        return tok, lit

    def _next(self, values: bool = True) -> tuple[int, str]:
        tok, lit = self._peek(values)
        self.pos += 1
        return tok, lit

    def parse(self) -> list[Requirement]:
        reqs: list[Requirement] = []
        while True:
            tok, lit = self._peek()
            if tok in (_T_ID, _T_NOT):
                reqs.append(self._requirement())
                tok, lit = self._next()
                if tok == _T_EOS:
                    return reqs
                if tok == _T_COMMA:
                    t2, l2 = self._peek()
                    if t2 not in (_T_ID, _T_NOT):
                        raise SelectorError(f"found '{l2}', expected: identifier after ','")
                else:
                    raise SelectorError(f"found '{lit}', expected: ',' or 'end of string'")
            elif tok == _T_EOS:
                return reqs
            else:
                raise SelectorError(f"found '{lit}', expected: !, identifier, or 'end of string'")

    def _requirement(self) -> Requirement:
        try:
            key, op = self._key_and_inferred_operator()
            if op in (EXISTS, DOES_NOT_EXIST):
                return Requirement(key, op, ())
            op = self._operator()
            values = self._value_set() if op in (IN, NOT_IN) else self._exact_value()
            return _parsed_requirement(key, op, sorted(set(values)))
        except SelectorError as e:
            raise SelectorError(f"unable to parse requirement: {e}") from None

    def _key_and_inferred_operator(self) -> tuple[str, str | None]:
        op = None
        tok, lit = self._next()
        if tok == _T_NOT:
            op = DOES_NOT_EXIST
            tok, lit = self._next()
        if tok != _T_ID:
            raise SelectorError(f"found '{lit}', expected: identifier")
        problems = _key_problems(lit)
        if problems:
            # validateLabelKey with the parser's nil field path
            raise SelectorError(f"<nil>: Invalid value: {quote(lit)}: " + "; ".join(problems))
        if self._peek()[0] in (_T_EOS, _T_COMMA) and op is None:
            op = EXISTS
        return lit, op

    def _operator(self) -> str:
        tok, lit = self._next(values=False)
        op = {_T_IN: IN, _T_EQ: EQUALS, _T_DEQ: DOUBLE_EQUALS, _T_GT: GREATER_THAN,
              _T_LT: LESS_THAN, _T_NOTIN: NOT_IN, _T_NEQ: NOT_EQUALS}.get(tok)
        if op is None:
            raise SelectorError(f"found '{lit}', expected: '=', '!=', '==', 'in', notin'")
        return op

    def _value_set(self) -> set[str]:
        tok, lit = self._next()
        if tok != _T_LPAREN:
            raise SelectorError(f"found '{lit}' expected: '('")
        tok, lit = self._peek()
        if tok in (_T_ID, _T_COMMA):
            values = self._identifiers()
            tok, lit = self._next()
            if tok != _T_RPAREN:
                raise SelectorError(f"found '{lit}', expected: ')'")
            return values
        if tok == _T_RPAREN:  # "()" is the set holding the empty string
            self._next()
            return {""}
        raise SelectorError(f"found '{lit}', expected: ',', ')' or identifier")

    def _identifiers(self) -> set[str]:
        values: set[str] = set()
        while True:
            tok, lit = self._next()
            if tok == _T_ID:
                values.add(lit)
                t2, l2 = self._peek()
                if t2 == _T_COMMA:
                    continue
                if t2 == _T_RPAREN:
                    return values
                raise SelectorError(f"found '{l2}', expected: ',' or ')'")
            if tok == _T_COMMA:  # empty values: "(,a)", "(a,)", "(a,,b)"
                if not values:
                    values.add("")
                t2, _ = self._peek()
                if t2 == _T_RPAREN:
                    values.add("")
                    return values
                if t2 == _T_COMMA:
                    self._next()
                    values.add("")
                continue
            raise SelectorError(f"found '{lit}', expected: ',', or identifier")

    def _exact_value(self) -> list[str]:
        tok, _ = self._peek()
        if tok in (_T_EOS, _T_COMMA):
            return [""]
        tok, lit = self._next()
        if tok == _T_ID:
            return [lit]
        raise SelectorError(f"found '{lit}', expected: identifier")


def _parsed_requirement(key: str, op: str, values: list[str]) -> Requirement:
    """``labels.NewRequirement`` for what the parser read (the key is already checked, and
    the grammar gives every operator its number of values): Kubernetes' field errors."""
    problems = []
    if op in (GREATER_THAN, LESS_THAN):
        problems += [f"values[{i}]: Invalid value: {quote(v)}: for 'Gt', 'Lt' operators, the "
                     "value must be an integer" for i, v in enumerate(values) if parse_int64(v) is None]
    for i, v in enumerate(values):
        if _value_problems(v):
            problems.append(f"values[{i}][{key}]: Invalid value: {quote(v)}: "
                            + "; ".join(_value_problems(v)))
    if problems:
        # utilerrors.NewAggregate's text
        raise SelectorError(problems[0] if len(problems) == 1 else f"[{', '.join(problems)}]")
    return Requirement(key, op, tuple(values))
