"""The CEL environment of DRA device selectors (``k8s.io/dynamic-resource-allocation/cel``).

A selector (of a DeviceClass or of a claim's request) is a CEL expression over one variable,
``device``, with three fields:

* ``device.driver``: the driver's name (a string);
* ``device.attributes[domain].id``: the device's attributes, by domain (an attribute named
  without a domain belongs to the driver's): int, bool, string, or a semantic version;
* ``device.capacity[domain].id``: the device's capacities, as quantities.

Looking up a domain the device has no attribute (or capacity) in gives an empty map, so
``device.attributes["other.example.com"].model`` is a runtime error ("no such key: model"),
as upstream. The Kubernetes CEL libraries the selectors use most are here: ``quantity()`` /
``isQuantity()`` with ``compareTo``, ``isGreaterThan``, ``isLessThan``, ``add``, ``sub``,
``asInteger``, ``asApproximateFloat``, ``isInteger``, ``sign``; ``semver()`` / ``isSemver()``
with ``major``, ``minor``, ``patch``, ``compareTo``, ``isGreaterThan``, ``isLessThan``; the
string helpers ``lowerAscii``, ``upperAscii``, ``split``, ``join``, ``indexOf``, ``trim``;
and ``cel.bind(var, init, expr)``. The rest is the CEL language as cel-python implements it.

Expressions are parsed by cel-python once and kept (:func:`compile_selector`, an LRU keyed by
the expression's text). Compilation also rejects what cel-go's type checker would reject
before evaluation: a reference to a variable other than ``device`` (or a comprehension's /
``cel.bind``'s) and an unknown function, with cel-go's message. Evaluation is bounded: a
selector's comprehensions may visit at most :data:`MAX_EVAL_STEPS` elements per device
(upstream bounds the CEL cost, ``CELSelectorExpressionMaxCost``; without comprehensions the
work is linear in the text), and texts longer than :data:`MAX_EXPRESSION_LENGTH` are refused.
"""

from __future__ import annotations

import functools
import re
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping
from fractions import Fraction
from typing import Any

import celpy
import celpy.celtypes as ct
import celpy.evaluation
import lark
from celpy.celparser import CELParseError
from celpy.evaluation import CELEvalError, Evaluator, base_functions

from kvert.api.quantity import Quantity, QuantityError
from kvert.api.types import Obj

# CELSelectorExpressionMaxLength (the API refuses longer selectors).
MAX_EXPRESSION_LENGTH = 10 * 1024
# Comprehension elements one evaluation may visit: a stand-in for CELSelectorExpressionMaxCost.
MAX_EVAL_STEPS = 100_000
CACHE_SIZE = 256


class CELError(Exception):
    """A selector that cannot be compiled or evaluated; ``str()`` is upstream's wording."""


# ---------------------------------------------------------------------------------------------
# quantity and semver values
# ---------------------------------------------------------------------------------------------


class CELQuantity:
    """A ``resource.Quantity`` as the Kubernetes CEL quantity library sees it."""

    __slots__ = ("q",)

    def __init__(self, q: Quantity):
        self.q = q

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, CELQuantity):
            raise TypeError("no such overload")
        return self.q.amount == other.q.amount

    def __ne__(self, other: object) -> bool:
        return not self.__eq__(other)

    def __hash__(self) -> int:
        return hash(self.q.amount)

    def __repr__(self) -> str:
        return f"quantity({str(self.q)!r})"


_SEMVER_RE = re.compile(
    r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)"
    r"(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?"
    r"(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$")


class CELSemver:
    """A semantic version (blang/semver: build metadata does not take part in comparisons)."""

    __slots__ = ("major", "minor", "patch", "pre")

    def __init__(self, text: str):
        m = _SEMVER_RE.match(text)
        if not m:
            raise ValueError(f"Invalid character(s) found in version {text!r}" if text else
                             "Version string empty")
        self.major, self.minor, self.patch = int(m.group(1)), int(m.group(2)), int(m.group(3))
        self.pre = tuple(m.group(4).split(".")) if m.group(4) else ()

    def compare(self, other: CELSemver) -> int:
        a = (self.major, self.minor, self.patch)
        b = (other.major, other.minor, other.patch)
        if a != b:
            return -1 if a < b else 1
        if self.pre == other.pre:
            return 0
        if not self.pre or not other.pre:     # a release ranks above its pre-releases
            return 1 if not self.pre else -1
        for x, y in zip(self.pre, other.pre):
            if x == y:
                continue
            xd, yd = x.isdigit(), y.isdigit()
            if xd and yd:
                return -1 if int(x) < int(y) else 1
            if xd != yd:                        # numeric identifiers rank lower
                return -1 if xd else 1
            return -1 if x < y else 1
        return -1 if len(self.pre) < len(other.pre) else (1 if len(self.pre) > len(other.pre) else 0)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, CELSemver):
            raise TypeError("no such overload")
        return self.compare(other) == 0

    def __ne__(self, other: object) -> bool:
        return not self.__eq__(other)

    def __hash__(self) -> int:
        return hash((self.major, self.minor, self.patch, self.pre))


def _quantity(text: Any) -> CELQuantity:
    try:
        return CELQuantity(Quantity.parse(str(text)))
    except QuantityError as e:
        raise ValueError(f"quantities must match the regular expression: {e}") from e


def _is_quantity(text: Any) -> ct.BoolType:
    try:
        Quantity.parse(str(text))
        return ct.BoolType(True)
    except QuantityError:
        return ct.BoolType(False)


def _semver(text: Any, normalize: Any = False) -> CELSemver:
    text = str(text)
    if normalize:
        text = text[1:] if text.startswith("v") else text
        parts = text.split("-", 1)[0].split("+", 1)[0].split(".")
        if len(parts) < 3:
            core = ".".join(str(int(p)) for p in parts + ["0"] * (3 - len(parts)))
            text = core + text[len(".".join(parts)):]
    return CELSemver(text)


def _is_semver(text: Any, normalize: Any = False) -> ct.BoolType:
    try:
        _semver(text, normalize)
        return ct.BoolType(True)
    except (ValueError, TypeError):
        return ct.BoolType(False)


def _cmp(a: Any, b: Any) -> int:
    if isinstance(a, CELQuantity) and isinstance(b, CELQuantity):
        x, y = a.q.amount, b.q.amount
        return (x > y) - (x < y)
    if isinstance(a, CELSemver) and isinstance(b, CELSemver):
        return a.compare(b)
    raise TypeError("no such overload")


def _quantity_of(value: Fraction) -> CELQuantity:
    return CELQuantity(Quantity.parse(_fraction_text(value)))


def _fraction_text(value: Fraction) -> str:
    if value.denominator == 1:
        return str(value.numerator)
    nano = value * 10**9
    if nano.denominator != 1:
        raise ValueError("quantity out of range")
    return f"{nano.numerator}n"


def _q(x: Any) -> CELQuantity:
    if not isinstance(x, CELQuantity):
        raise TypeError("no such overload")
    return x


def _add(a: Any, b: Any) -> CELQuantity:
    other = _q(b).q.amount if isinstance(b, CELQuantity) else Fraction(int(b))
    return _quantity_of(_q(a).q.amount + other)


def _sub(a: Any, b: Any) -> CELQuantity:
    other = _q(b).q.amount if isinstance(b, CELQuantity) else Fraction(int(b))
    return _quantity_of(_q(a).q.amount - other)


def _as_integer(a: Any) -> ct.IntType:
    amount = _q(a).q.amount
    if amount.denominator != 1 or not -(2**63) <= amount.numerator < 2**63:
        raise ValueError("cannot convert value to integer")
    return ct.IntType(amount.numerator)


def _string_method(fn: Callable[..., Any]) -> Callable[..., Any]:
    def wrapped(s: Any, *args: Any) -> Any:
        if not isinstance(s, str):
            raise TypeError("no such overload")
        return fn(s, *args)
    return wrapped


def _split(s: str, sep: Any, limit: Any = -1) -> ct.ListType:
    limit = int(limit)
    if limit == 0:
        return ct.ListType([])
    parts = s.split(str(sep)) if limit < 0 else s.split(str(sep), limit - 1)
    return ct.ListType(ct.StringType(p) for p in parts)


def _join(items: Any, sep: Any = "") -> ct.StringType:
    if not isinstance(items, list):
        raise TypeError("no such overload")
    return ct.StringType(str(sep).join(str(i) for i in items))


FUNCTIONS: dict[str, Any] = {
    "quantity": _quantity,
    "isQuantity": _is_quantity,
    "semver": _semver,
    "isSemver": _is_semver,
    "compareTo": lambda a, b: ct.IntType(_cmp(a, b)),
    "isGreaterThan": lambda a, b: ct.BoolType(_cmp(a, b) > 0),
    "isLessThan": lambda a, b: ct.BoolType(_cmp(a, b) < 0),
    "major": lambda v: ct.IntType(v.major) if isinstance(v, CELSemver) else _no_overload(),
    "minor": lambda v: ct.IntType(v.minor) if isinstance(v, CELSemver) else _no_overload(),
    "patch": lambda v: ct.IntType(v.patch) if isinstance(v, CELSemver) else _no_overload(),
    "add": _add,
    "sub": _sub,
    "asInteger": _as_integer,
    "asApproximateFloat": lambda a: ct.DoubleType(float(_q(a).q.amount)),
    "isInteger": lambda a: ct.BoolType(_q(a).q.amount.denominator == 1),
    "sign": lambda a: ct.IntType(_q(a).q.sign()),
    "lowerAscii": _string_method(lambda s: ct.StringType(s.lower())),
    "upperAscii": _string_method(lambda s: ct.StringType(s.upper())),
    "trim": _string_method(lambda s: ct.StringType(s.strip())),
    "indexOf": _string_method(lambda s, sub: ct.IntType(s.find(str(sub)))),
    "split": _string_method(_split),
    "join": _join,
}


def _no_overload() -> Any:
    raise TypeError("no such overload")


# Names a selector may call as functions (base CEL + the libraries above) and type names.
_KNOWN_FUNCTIONS = frozenset(base_functions) | frozenset(FUNCTIONS) | {"has", "dyn"}
_MACROS = frozenset({"all", "exists", "exists_one", "map", "filter"})
_TYPE_IDENTS = frozenset({"bool", "bytes", "double", "int", "list", "map", "null_type",
                          "string", "type", "uint", "dyn"})


# ---------------------------------------------------------------------------------------------
# device values
# ---------------------------------------------------------------------------------------------


class _DomainMap(ct.MapType):
    """``device.attributes`` / ``device.capacity``: an unknown domain reads as an empty map."""

    def __getitem__(self, key: Any) -> Any:
        try:
            return super().__getitem__(key)
        except KeyError:
            return ct.MapType()


def attribute_value(attr: Mapping[str, Any]) -> Any:
    """A DeviceAttribute's one value as CEL sees it (int, bool, string, version)."""
    if attr.get("int") is not None:
        return ct.IntType(int(attr["int"]))
    if attr.get("bool") is not None:
        return ct.BoolType(bool(attr["bool"]))
    if attr.get("string") is not None:
        return ct.StringType(str(attr["string"]))
    if attr.get("version") is not None:
        try:
            return CELSemver(str(attr["version"]))
        except ValueError as e:
            raise CELError(f"parse semantic version: {e}") from e
    raise CELError("unsupported attribute value")


def split_qualified_name(name: str, default_domain: str) -> tuple[str, str]:
    domain, sep, ident = name.partition("/")
    return (domain, ident) if sep else (default_domain, name)


def device_value(driver: str, device: Mapping[str, Any]) -> ct.MapType:
    """The ``device`` variable for one ResourceSlice device."""
    attributes: dict[str, Obj] = {}
    for name, attr in (device.get("attributes") or {}).items():
        try:
            value = attribute_value(attr or {})
        except CELError as e:
            raise CELError(f"attribute {name}: {e}") from None
        domain, ident = split_qualified_name(name, driver)
        attributes.setdefault(domain, {})[ident] = value
    capacity: dict[str, Obj] = {}
    for name, cap in (device.get("capacity") or {}).items():
        domain, ident = split_qualified_name(name, driver)
        capacity.setdefault(domain, {})[ident] = _quantity((cap or {}).get("value", "0"))

    def maps(d: dict[str, Obj]) -> _DomainMap:
        return _DomainMap({ct.StringType(k): ct.MapType({ct.StringType(i): v for i, v in inner.items()})
                           for k, inner in d.items()})
    return ct.MapType({ct.StringType("driver"): ct.StringType(driver),
                       ct.StringType("attributes"): maps(attributes),
                       ct.StringType("capacity"): maps(capacity)})


# ---------------------------------------------------------------------------------------------
# evaluation: the parse tree compiled to Python closures
# ---------------------------------------------------------------------------------------------
#
# cel-python's own interpreter walks the lark tree per evaluation (~1 ms for a small selector);
# selectors run once per (selector, device), so the tree is compiled once into closures over
# an activation dict. Values, operators and the standard functions are cel-python's
# (``celpy.celtypes``, ``base_functions``); errors are exceptions, except that ``&&``, ``||``
# and ``?:`` absorb an error when the other side decides the result, as CEL specifies.


class _Err(Exception):
    """A CEL runtime error (an error value)."""


_TRUE, _FALSE = ct.BoolType(True), ct.BoolType(False)
_BUDGET = "\0budget"
_OPS = {"relation_lt": "_<_", "relation_le": "_<=_", "relation_gt": "_>_", "relation_ge": "_>=_",
        "relation_eq": "_==_", "relation_ne": "_!=_", "relation_in": "_in_",
        "addition_add": "_+_", "addition_sub": "_-_", "multiplication_mul": "_*_",
        "multiplication_div": "_/_", "multiplication_mod": "_%_"}
_FUNCS: dict[str, Any] = {**base_functions, **FUNCTIONS}
@functools.cache
def _literals() -> Evaluator:
    return Evaluator(ast=lark.Tree("literal", []), activation=celpy.evaluation.Activation())


def _call(fn: Any, args: list[Any]) -> Any:
    try:
        out = fn(*args)
    except _Err:
        raise
    except ZeroDivisionError:
        raise _Err("division by zero") from None
    except (TypeError, AttributeError):
        raise _Err("no such overload") from None
    except (ValueError, OverflowError) as e:
        msg = str(e.args[0]) if e.args else "invalid argument"
        raise _Err("integer overflow" if msg == "overflow" else msg) from None
    except (KeyError, IndexError) as e:
        raise _Err(f"no such key: {e.args[0] if e.args else ''}") from None
    if isinstance(out, CELEvalError):
        raise _Err(_eval_message(out))
    return out


def _spend(act: Obj, n: int = 1) -> None:
    budget = act[_BUDGET]
    budget[0] -= n
    if budget[0] < 0:
        raise _Err("operation cancelled: actual cost limit exceeded")


def _bool(v: Any) -> bool:
    if not isinstance(v, ct.BoolType):
        raise _Err("no such overload")
    return bool(v)


def _compile_tree(t: Any) -> Any:
    """A closure ``f(activation) -> value`` for a parse (sub)tree."""
    kind = t.data
    ch = t.children
    if len(ch) == 1 and isinstance(ch[0], lark.Tree) and kind in (
            "expr", "conditionalor", "conditionaland", "relation", "addition", "multiplication",
            "unary", "member", "primary"):
        return _compile_tree(ch[0])
    if kind == "expr":
        cond, yes, no = (_compile_tree(c) for c in ch)

        def ternary(act: Obj) -> Any:
            return yes(act) if _bool(cond(act)) else no(act)
        return ternary
    if kind in ("conditionalor", "conditionaland"):
        left, right = _compile_tree(ch[0]), _compile_tree(ch[1])
        decisive = kind == "conditionalor"     # true decides ||, false decides &&

        def logical(act: Obj) -> Any:
            results = []
            for side in (left, right):
                try:
                    v = side(act)
                    if isinstance(v, ct.BoolType) and bool(v) == decisive:
                        return _TRUE if decisive else _FALSE
                    results.append(v)
                except _Err as e:
                    results.append(e)
            for v in results:
                if isinstance(v, _Err):
                    raise v
                _bool(v)
            return _FALSE if decisive else _TRUE
        return logical
    if kind in ("relation", "addition", "multiplication"):
        op_tree, right_tree = ch
        left, right = _compile_tree(op_tree.children[0]), _compile_tree(right_tree)
        fn = _FUNCS[_OPS[op_tree.data]]
        return lambda act: _call(fn, [left(act), right(act)])
    if kind == "unary":
        op, operand = ch[0].data, _compile_tree(ch[1])
        if op == "unary_not":
            return lambda act: _call(ct.logical_not, [_as_bool_value(operand(act))])
        return lambda act: _call(_FUNCS["-_"], [operand(act)])
    if kind == "member_dot":
        target, name = _compile_tree(ch[0]), ch[1].value
        key = ct.StringType(name)

        def select(act: Obj) -> Any:
            m = target(act)
            if isinstance(m, ct.MapType):
                try:
                    return m[key]
                except KeyError:
                    raise _Err(f"no such key: {name}") from None
            raise _Err("no such overload")
        return select
    if kind == "member_index":
        target, index = _compile_tree(ch[0]), _compile_tree(ch[1])

        def item(act: Obj) -> Any:
            m, i = target(act), index(act)
            if isinstance(m, ct.MapType):
                try:
                    return m[i]
                except KeyError:
                    raise _Err(f"no such key: {i}") from None
                except TypeError:
                    raise _Err("no such overload") from None
            if isinstance(m, ct.ListType):
                if not isinstance(i, ct.IntType) or isinstance(i, ct.BoolType):
                    raise _Err("no such overload")
                if not 0 <= i < len(m):
                    raise _Err(f"index out of bounds: {i}")
                return m[i]
            raise _Err("no such overload")
        return item
    if kind == "member_dot_arg":
        return _compile_method(t)
    if kind == "ident_arg":
        return _compile_function(t)
    if kind == "ident":
        name = ch[0].value
        fn = _FUNCS.get(name)

        def ident(act: Obj) -> Any:
            try:
                return act[name]
            except KeyError:
                if fn is not None:
                    return fn      # a type name: type(x) == int
                raise _Err(f"undeclared reference to '{name}'") from None
        return ident
    if kind == "paren_expr":
        return _compile_tree(ch[0])
    if kind == "literal":
        value = _literals().literal(t)
        if isinstance(value, CELEvalError):
            raise CELError(_eval_message(value))
        return lambda act: value
    if kind == "list_lit":
        items = [_compile_tree(c) for c in (ch[0].children if ch and ch[0] is not None else [])]
        return lambda act: ct.ListType([f(act) for f in items])
    if kind == "map_lit":
        flat = [_compile_tree(c) for c in (ch[0].children if ch and ch[0] is not None else [])]
        pairs = list(zip(flat[0::2], flat[1::2]))

        def mapping(act: Obj) -> Any:
            out = ct.MapType()
            for k, v in pairs:
                key = k(act)
                if key in out:
                    raise _Err(f"Failed with repeated key: {key}")
                out[key] = v(act)
            return out
        return mapping
    raise CELError(f"unsupported CEL construct: {kind}")


def _as_bool_value(v: Any) -> Any:
    _bool(v)
    return v


def _args(t: Any, index: int) -> list[Any]:
    if len(t.children) > index and t.children[index] is not None:
        return list(t.children[index].children)
    return []


def _compile_function(t: Any) -> Any:
    name = t.children[0].value
    args = _args(t, 1)
    if name == "has":
        parts = _select_parts(args[0]) if len(args) == 1 else None
        if parts is None:
            raise CELError("invalid argument to has() macro")
        target_tree, field = parts
        target, key = _compile_tree(target_tree), ct.StringType(field)

        def has(act: Obj) -> Any:
            m = target(act)
            if isinstance(m, ct.MapType):
                return ct.BoolType(key in m)
            raise _Err("no such overload")
        return has
    if name == "dyn" and len(args) == 1:
        return _compile_tree(args[0])
    fn = _FUNCS[name]
    compiled = [_compile_tree(a) for a in args]
    return lambda act: _call(fn, [f(act) for f in compiled])


def _select_parts(t: Any) -> tuple[Any, str] | None:
    """``(target, field)`` of an expression that is a field selection ``target.field``."""
    while isinstance(t, lark.Tree) and len(t.children) == 1 and isinstance(t.children[0], lark.Tree):
        t = t.children[0]
    if isinstance(t, lark.Tree) and t.data == "member_dot":
        return t.children[0], _leaf_text(t.children[1])
    return None


def _compile_method(t: Any) -> Any:
    target_tree, name = t.children[0], t.children[1].value
    args = _args(t, 2)
    if name == "bind" and _ident_name(target_tree) == "cel" and len(args) == 3:
        var, init, body = _ident_name(args[0]), _compile_tree(args[1]), _compile_tree(args[2])
        return lambda act: body({**act, var: init(act)})
    macro_var = _ident_name(args[0]) if name in _MACROS and len(args) in (2, 3) else None
    if macro_var:
        return _compile_macro(name, _compile_tree(target_tree), macro_var,
                              [_compile_tree(a) for a in args[1:]])
    fn = _FUNCS.get(name)
    if fn is None:
        def unknown(act: Obj) -> Any:
            raise _Err(f"no such overload: {name}")
        return unknown
    target = _compile_tree(target_tree)
    compiled = [_compile_tree(a) for a in args]
    return lambda act: _call(fn, [target(act)] + [f(act) for f in compiled])


def _compile_macro(name: str, target: Any, var: str, bodies: list[Any]) -> Any:
    body = bodies[-1]

    def elements(act: Obj) -> list[Any]:
        src = target(act)
        if isinstance(src, (ct.ListType, ct.MapType)):
            items = list(src)
            _spend(act, len(items))
            return items
        raise _Err("no such overload")

    if name in ("all", "exists"):
        decisive = name == "exists"

        def quantifier(act: Obj) -> Any:
            error = None
            for v in elements(act):
                try:
                    if _bool(body({**act, var: v})) == decisive:
                        return _TRUE if decisive else _FALSE
                except _Err as e:
                    error = error or e
            if error is not None:
                raise error
            return _FALSE if decisive else _TRUE
        return quantifier
    if name == "exists_one":
        return lambda act: ct.BoolType(sum(1 for v in elements(act) if _bool(body({**act, var: v}))) == 1)
    if name == "map":
        if len(bodies) == 2:
            keep = bodies[0]
            return lambda act: ct.ListType([body({**act, var: v}) for v in elements(act)
                                            if _bool(keep({**act, var: v}))])
        return lambda act: ct.ListType([body({**act, var: v}) for v in elements(act)])
    return lambda act: ct.ListType([v for v in elements(act) if _bool(body({**act, var: v}))])


def _ident_name(tree: Any) -> str | None:
    """The identifier a (parenthesis-free) expression tree consists of, if it is one."""
    while isinstance(tree, lark.Tree):
        if tree.data == "ident":
            return _leaf_text(tree.children[0])
        if len(tree.children) != 1:
            return None
        tree = tree.children[0]
    return None


class CompiledSelector:
    """One compiled selector expression."""

    __slots__ = ("expression", "program")

    def __init__(self, expression: str, program: Any):
        self.expression = expression
        self.program = program

    def evaluate(self, device: ct.MapType) -> bool:
        """The selector's verdict on a device (:func:`device_value`); :class:`CELError` for a
        runtime error or a result that is not a bool."""
        try:
            result = self.program({"device": device, _BUDGET: [MAX_EVAL_STEPS]})
        except _Err as e:
            raise CELError(str(e)) from None
        except RecursionError:
            raise CELError("operation cancelled: actual cost limit exceeded") from None
        if not isinstance(result, ct.BoolType):
            raise CELError(f"CEL result of type {_type_name(result)} could not be converted to bool")
        return bool(result)


def _type_name(value: Any) -> str:
    names = [(ct.BoolType, "bool"), (ct.IntType, "int"), (ct.UintType, "uint"),
             (ct.DoubleType, "double"), (ct.StringType, "string"), (ct.BytesType, "bytes"),
             (ct.ListType, "list"), (ct.MapType, "map"), (CELQuantity, "kubernetes.Quantity"),
             (CELSemver, "kubernetes.Semver")]
    for cls, name in names:
        if isinstance(value, cls):
            return name
    return "null_type" if value is None else type(value).__name__


def _eval_message(e: CELEvalError) -> str:
    msg = str(e.args[0]) if e.args else "evaluation error"
    if msg == "return error for overflow":
        return "integer overflow"
    if msg.startswith("found no matching overload"):
        return "no such overload"
    return msg


# ---------------------------------------------------------------------------------------------
# compilation
# ---------------------------------------------------------------------------------------------


@functools.cache
def _parser() -> celpy.Environment:
    """cel-python's parser, built on first use: building its grammar takes a third of a
    second, which every kvert command would pay at import otherwise."""
    return celpy.Environment()
_CACHE: OrderedDict[str, CompiledSelector | CELError] = OrderedDict()


def compile_selector(expression: str) -> CompiledSelector:
    """The compiled selector (cached by its text); :class:`CELError` if it does not compile,
    with a message shaped like cel-go's (``compilation failed: ERROR: <input>:L:C: ...``)."""
    hit = _CACHE.get(expression)
    if hit is None:
        hit = _compile(expression)
        _CACHE[expression] = hit
        if len(_CACHE) > CACHE_SIZE:
            _CACHE.popitem(last=False)
    else:
        _CACHE.move_to_end(expression)
    if isinstance(hit, CELError):
        raise hit
    return hit


def _compile(expression: str) -> CompiledSelector | CELError:
    if len(expression) > MAX_EXPRESSION_LENGTH:
        return CELError(f"compilation failed: expression too long ({len(expression)} characters, "
                        f"at most {MAX_EXPRESSION_LENGTH})")
    try:
        ast = _parser().compile(expression)
    except CELParseError as e:
        line, col = getattr(e, "line", None) or 1, getattr(e, "column", None) or 1
        return CELError(_compile_error(expression, line, col, "Syntax error: " +
                                       str(e.args[0]).splitlines()[0]))
    except (lark.exceptions.LarkError, RecursionError) as e:
        return CELError(_compile_error(expression, 1, 1, f"Syntax error: {e}"))
    problem = _undeclared(ast, frozenset({"device"}))
    if problem is not None:
        token, what = problem
        # tokens from the parser always carry their position; 1:1 as for a parse error
        return CELError(_compile_error(expression, token.line or 1, token.column or 1, what))
    try:
        return CompiledSelector(expression, _compile_tree(ast))
    except CELError as e:
        return CELError(_compile_error(expression, 1, 1, str(e)))
    except RecursionError:
        return CELError(_compile_error(expression, 1, 1, "expression nested too deeply"))


def _compile_error(expression: str, line: int, col: int, what: str) -> str:
    src = expression.splitlines()[line - 1] if expression.splitlines() else ""
    return (f"compilation failed: ERROR: <input>:{line}:{col}: {what}\n | {src}\n"
            f" | {'.' * (col - 1)}^")


def _undeclared(tree: Any, scope: frozenset[str]) -> tuple[lark.Token, str] | None:
    """The first reference cel-go's checker would refuse: an unknown variable or function."""
    if not isinstance(tree, lark.Tree):
        return None
    if tree.data == "ident":
        token = _leaf(tree.children[0])
        if token.value not in scope and token.value not in _TYPE_IDENTS:
            return token, f"undeclared reference to '{token.value}' (in container '')"
        return None
    if tree.data == "ident_arg":
        token = _leaf(tree.children[0])
        if token.value not in _KNOWN_FUNCTIONS:
            return token, f"undeclared reference to '{token.value}' (in container '')"
        return _first(_undeclared(c, scope) for c in tree.children[1:])
    if tree.data == "member_dot_arg":
        member, name = tree.children[0], _leaf(tree.children[1])
        args: list[Any] = _children(tree.children[2]) if len(tree.children) > 2 and tree.children[2] else []
        if name.value == "bind" and _ident_name(member) == "cel" and len(args) == 3:
            var = _ident_name(args[0])
            return _first([_undeclared(args[1], scope),
                           _undeclared(args[2], scope | {var} if var else scope)])
        if name.value in _MACROS and len(args) in (2, 3):
            var = _ident_name(args[0])
            inner = scope | {var} if var else scope
            return _first([_undeclared(member, scope)] + [_undeclared(a, inner) for a in args[1:]])
        return _first([_undeclared(member, scope)] + [_undeclared(a, scope) for a in args])
    if tree.data == "member_dot":
        return _undeclared(tree.children[0], scope)
    return _first(_undeclared(c, scope) for c in tree.children)


def _first(items: Iterable[tuple[lark.Token, str] | None]) -> tuple[lark.Token, str] | None:
    for item in items:
        if item is not None:
            return item
    return None


# The parse tree's nodes are Trees or Tokens by position, as the grammar has it; lark types
# each child as either. These name what a position holds.

def _leaf(node: Any) -> lark.Token:
    """The token at a position where the grammar puts one."""
    token: lark.Token = node
    return token


def _leaf_text(node: Any) -> str:
    text: str = _leaf(node).value
    return text


def _children(node: Any) -> list[Any]:
    """The children of the subtree at a position where the grammar puts one."""
    children: list[Any] = node.children
    return children


__all__ = ["CELError", "CELQuantity", "CELSemver", "CompiledSelector", "MAX_EVAL_STEPS",
           "attribute_value", "compile_selector", "device_value", "split_qualified_name"]
