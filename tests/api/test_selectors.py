"""Label selectors: Kubernetes' documented examples, apimachinery's selector_test.go cases,
and property tests tying the string and structured forms together."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kvert.api.selectors import (
    EQUALS, IN, LabelSelector, Requirement, SelectorError, label_selector_from_dict,
    make_requirement, parse_int64, parse_label_selector, validate_label_key,
    validate_label_value,
)

parse = LabelSelector.parse


# --- kubernetes.io "Labels and Selectors" ---------------------------------------------------


class TestDocumentedExamples:
    def test_equality_based(self):
        s = parse("environment=production,tier!=frontend")
        assert s.matches({"environment": "production", "tier": "backend"})
        assert s.matches({"environment": "production"})  # != also selects objects without the key
        assert not s.matches({"environment": "production", "tier": "frontend"})
        assert not s.matches({"environment": "qa"})

    def test_equals_and_double_equals_are_synonyms(self):
        assert parse("environment = production").matches({"environment": "production"})
        assert parse("environment == production").matches({"environment": "production"})
        assert not parse("tier != frontend").matches({"tier": "frontend"})

    def test_set_based_in(self):
        s = parse("environment in (production, qa)")
        assert s.matches({"environment": "production"})
        assert s.matches({"environment": "qa"})
        assert not s.matches({"environment": "dev"})
        assert not s.matches({})

    def test_set_based_notin_selects_missing_key(self):
        s = parse("tier notin (frontend, backend)")
        assert s.matches({"tier": "cache"})
        assert s.matches({})
        assert not s.matches({"tier": "frontend"})
        assert not s.matches({"tier": "backend"})

    def test_exists_and_does_not_exist(self):
        assert parse("partition").matches({"partition": "a"})
        assert parse("partition").matches({"partition": ""})
        assert not parse("partition").matches({"other": "x"})
        assert parse("!partition").matches({"other": "x"})
        assert not parse("!partition").matches({"partition": ""})

    def test_set_and_equality_mixed(self):
        s = parse("partition in (customerA, customerB),environment!=qa")
        assert s.matches({"partition": "customerA", "environment": "prod"})
        assert not s.matches({"partition": "customerA", "environment": "qa"})
        assert not s.matches({"environment": "prod"})

    def test_structured_example_from_docs(self):
        sel = LabelSelector.from_dict({
            "matchLabels": {"component": "redis"},
            "matchExpressions": [
                {"key": "tier", "operator": "In", "values": ["cache"]},
                {"key": "environment", "operator": "NotIn", "values": ["dev"]},
            ],
        })
        assert sel.matches({"component": "redis", "tier": "cache", "environment": "prod"})
        assert sel.matches({"component": "redis", "tier": "cache"})
        assert not sel.matches({"component": "redis", "tier": "cache", "environment": "dev"})
        assert not sel.matches({"component": "redis"})
        assert str(sel) == "component=redis,environment notin (dev),tier in (cache)"


# --- apimachinery labels/selector_test.go ---------------------------------------------------

GOOD = ["x=a,y=b,z=c", "", "x!=a,y=b", "x=", "x= ", "x=,z= ", "x= ,z= ", "!x", "x>1", "x>1,z<5"]
BAD = ["x=a||y=b", "x==a==b", "!x=a", "x<a"]


@pytest.mark.parametrize("text", GOOD)
def test_good_strings_restring_without_spaces(text):
    assert str(parse(text)) == text.replace(" ", "")


@pytest.mark.parametrize("text", BAD)
def test_bad_strings(text):
    with pytest.raises(SelectorError):
        parse(text)


def test_deterministic_parse():
    assert str(parse("x=a,a=x")) == str(parse("a=x,x=a")) == "a=x,x=a"
    assert parse("x=a,a=x") == parse("a=x,x=a")


@pytest.mark.parametrize("selector,labels", [
    ("", {"x": "y"}),
    ("x=y", {"x": "y"}),
    ("x=y,z=w", {"x": "y", "z": "w"}),
    ("x!=y,z!=w", {"x": "z", "z": "a"}),
    ("notin=in", {"notin": "in"}),  # in and notin as plain words in exact matches
    ("x", {"x": "z"}),
    ("!x", {"y": "z"}),
    ("x>1", {"x": "2"}),
    ("x<1", {"x": "0"}),
    ("foo=bar,baz=blah", {"foo": "bar", "baz": "blah"}),
])
def test_matches(selector, labels):
    assert parse(selector).matches(labels)


@pytest.mark.parametrize("selector,labels", [
    ("x=z", {}),
    ("x=y", {"x": "z"}),
    ("x=y,z=w", {"x": "w", "z": "w"}),
    ("x!=y,z!=w", {"x": "z", "z": "w"}),
    ("x", {"y": "z"}),
    ("!x", {"x": "z"}),
    ("x>1", {"x": "0"}),
    ("x<1", {"x": "2"}),
    ("foo=bar,foobar=bar,baz=blah", {"foo": "bar", "baz": "blah"}),
    ("z>1", {"z": "v2"}),  # non-integer label never matches gt/lt
    ("x in ()", {"y": "baz"}),
])
def test_no_matches(selector, labels):
    assert not parse(selector).matches(labels)


@pytest.mark.parametrize("text,expected", [
    ("\rx", [("x", "exists", ())]),
    ("this-is-a-dns.domain.com/key-with-dash", [
        ("this-is-a-dns.domain.com/key-with-dash", "exists", ())]),
    ("this-is-another-dns.domain.com/key-with-dash in (so,what)", [
        ("this-is-another-dns.domain.com/key-with-dash", "in", ("so", "what"))]),
    ("0.1.2.domain/99 notin (10.10.100.1, tick.tack.clock)", [
        ("0.1.2.domain/99", "notin", ("10.10.100.1", "tick.tack.clock"))]),
    ("foo  in\t (abc)", [("foo", "in", ("abc",))]),
    ("x notin\n (abc)", [("x", "notin", ("abc",))]),
    ("x  notin\t\t\t(abc,def)", [("x", "notin", ("abc", "def"))]),
    ("x in (abc,)", [("x", "in", ("", "abc"))]),
    ("x in ()", [("x", "in", ("",))]),
    ("x notin (abc,,def),bar,z in (),w", [
        ("bar", "exists", ()), ("w", "exists", ()), ("x", "notin", ("", "abc", "def")),
        ("z", "in", ("",))]),
    ("x,y in (a)", [("x", "exists", ()), ("y", "in", ("a",))]),
    ("x=a", [("x", "=", ("a",))]),
    ("x>1", [("x", "gt", ("1",))]),
    ("x<7", [("x", "lt", ("7",))]),
    ("x=a,y!=b,z in (h,i,j)", [("x", "=", ("a",)), ("y", "!=", ("b",)),
                               ("z", "in", ("h", "i", "j"))]),
    ("x notin ( )", [("x", "notin", ("",))]),
    ("x notin (, a)", [("x", "notin", ("", "a"))]),
    ("a ", [("a", "exists", ())]),
    ("a in (x,y,notin, z,in)", [("a", "in", ("in", "notin", "x", "y", "z"))]),
    ("in in (in)", [("in", "in", ("in",))]),
    ("x==a", [("x", "==", ("a",))]),
])
def test_set_selector_parser_good(text, expected):
    assert [tuple(r) for r in parse(text).requirements] == expected


@pytest.mark.parametrize("text", [
    "x=a||y=b", "x,,y", ",x,y", "x nott in (y)", "a in (xyz),", "a in (xyz)b notin ()",
    "a in (xyz abc)", "a notin(", "a (", "(", "x=a,", "x in (a", "x in a", "!", "!!x",
    "x>", "x>a", "x>1.5", "x>-1",  # "-1" is an integer but not a valid label value
    "x in (,,)",  # Kubernetes' parser rejects this spelling of in ("")
])
def test_set_selector_parser_bad(text):
    with pytest.raises(SelectorError):
        parse(text)


@pytest.mark.parametrize("key,op,values,ok", [
    ("x", IN, [], False),
    ("x", "notin", [], False),
    ("x", IN, ["foo"], True),
    ("x", "notin", ["foo"], True),
    ("x", "exists", [], True),
    ("x", "!", [], True),
    ("1foo", IN, ["bar"], True),
    ("1234", IN, ["bar"], True),
    ("y", "gt", ["1"], True),
    ("z", "lt", ["6"], True),
    ("foo", "gt", ["bar"], False),
    ("barz", "lt", ["blah"], False),
    ("a" * 254, "exists", [], False),
    ("x", "exists", ["a"], False),
    ("x", EQUALS, ["a", "b"], False),
    ("x", "~", ["a"], False),
    ("example.com/app", IN, ["a"], True),
    ("Example.com/app", IN, ["a"], False),  # prefix must be a lowercase DNS subdomain
    ("/app", IN, ["a"], False),
    ("example.com/", IN, ["a"], False),
    ("a" * 63, IN, ["v" * 63], True),
    ("a" * 64, IN, ["v"], False),
    ("x", IN, ["v" * 64], False),
    ("x", IN, ["-v"], False),
])
def test_requirement_constructor(key, op, values, ok):
    if ok:
        make_requirement(key, op, values)
    else:
        with pytest.raises(SelectorError):
            make_requirement(key, op, values)


def test_to_string_examples():
    def sel(*reqs):
        return str(LabelSelector.from_requirements(make_requirement(*r) for r in reqs))
    assert sel(("x", "in", ["abc", "def"]), ("y", "notin", ["jkl"]), ("z", "exists")) == \
        "x in (abc,def),y notin (jkl),z"
    assert sel(("x", "notin", ["abc", "def"]), ("y", "!=", ["jkl"]), ("z", "!")) == \
        "x notin (abc,def),y!=jkl,!z"
    assert sel(("x", "notin", ["abc"]), ("y", "in", ["jkl", "mno"]), ("z", "notin", [""])) == \
        "x notin (abc),y in (jkl,mno),z notin ()"
    assert sel(("x", "=", ["abc"]), ("y", "==", ["jkl"]), ("z", "!=", ["a"]), ("z", "exists")) \
        == "x=abc,y==jkl,z!=a,z"
    assert sel(("x", "gt", ["2"]), ("y", "lt", ["8"]), ("z", "exists")) == "x>2,y<8,z"


def test_requirement_matching_table():
    def sel(*reqs):
        return LabelSelector.from_requirements(make_requirement(*r) for r in reqs)
    assert sel(("x", "in", ["foo"]), ("y", "notin", ["alpha"])).matches({"x": "foo", "y": "baz"})
    assert not sel(("x", "in", ["foo"]), ("y", "in", ["alpha"])).matches({"x": "foo", "y": "baz"})
    assert sel(("x", "notin", [""]), ("y", "exists")).matches({"y": ""})
    assert sel(("x", "!"), ("y", "exists")).matches({"y": ""})
    assert not sel(("x", "notin", [""]), ("y", "!")).matches({"y": ""})
    assert not sel(("x", "in", [""])).matches({"y": "baz"})
    assert sel(("z", "gt", ["1"])).matches({"z": "2"})
    assert not sel(("z", "gt", ["1"])).matches({"z": "v2"})


# --- errors name the offending part ---------------------------------------------------------


def test_error_messages_name_the_culprit():
    # validateLabelKey in labels.Parse: a field error with the parser's nil path
    with pytest.raises(SelectorError, match='<nil>: Invalid value: "-bad"'):
        parse("-bad=x")
    with pytest.raises(SelectorError, match="invalid label value 'a b'|found 'b'"):
        parse("x in (a b)")
    with pytest.raises(SelectorError, match="'nott'"):
        parse("x nott in (y)")
    with pytest.raises(SelectorError, match="matchExpressions\\[1\\]"):
        LabelSelector.from_dict({"matchExpressions": [
            {"key": "a", "operator": "Exists"},
            {"key": "b", "operator": "In", "values": []}]})
    with pytest.raises(SelectorError, match="'Equals' is not a valid label selector operator"):
        LabelSelector.from_dict({"matchExpressions": [{"key": "a", "operator": "Equals"}]})
    with pytest.raises(SelectorError, match="matchLabels\\['app'\\]"):
        LabelSelector.from_dict({"matchLabels": {"app": "not valid"}})
    assert issubclass(SelectorError, ValueError)


# --- structured form ------------------------------------------------------------------------


class TestFromDict:
    def test_none_matches_nothing_and_empty_matches_everything(self):
        assert not LabelSelector.from_dict(None).matches({})
        assert not LabelSelector.from_dict(None).matches({"a": "b"})
        assert not LabelSelector.from_dict(None).empty
        for empty in ({}, {"matchLabels": {}}, {"matchExpressions": []},
                      {"matchLabels": None, "matchExpressions": None}):
            s = LabelSelector.from_dict(empty)
            assert s.empty and s.matches({}) and s.matches({"a": "b"})

    def test_operator_value_rules(self):
        for op in ("In", "NotIn"):
            with pytest.raises(SelectorError, match="can't be empty"):
                LabelSelector.from_dict({"matchExpressions": [{"key": "a", "operator": op}]})
        for op in ("Exists", "DoesNotExist"):
            with pytest.raises(SelectorError, match="must be empty"):
                LabelSelector.from_dict({"matchExpressions": [
                    {"key": "a", "operator": op, "values": ["x"]}]})
        with pytest.raises(SelectorError):
            LabelSelector.from_dict({"matchExpressions": [
                {"key": "a", "operator": "Gt", "values": ["1"]}]})  # not a LabelSelector operator

    def test_match_labels_and_expressions_are_anded(self):
        s = label_selector_from_dict({"matchLabels": {"app": "web"},
                                      "matchExpressions": [{"key": "app", "operator": "Exists"}]})
        assert s.matches({"app": "web"})
        assert not s.matches({"app": "db"})

    def test_to_dict_round_trip(self):
        d = {"matchLabels": {"app": "web"},
             "matchExpressions": [{"key": "tier", "operator": "NotIn", "values": ["a", "b"]},
                                  {"key": "gpu", "operator": "DoesNotExist"}]}
        s = LabelSelector.from_dict(d)
        assert LabelSelector.from_dict(s.to_dict()) == s
        assert parse("a=b,c!=d").to_dict() == {
            "matchLabels": {"a": "b"},
            "matchExpressions": [{"key": "c", "operator": "NotIn", "values": ["d"]}]}
        assert LabelSelector.nothing().to_dict() is None
        assert LabelSelector.everything().to_dict() == {}
        with pytest.raises(SelectorError):
            parse("x>1").to_dict()
        # two "=" on one key must not collapse into one matchLabels entry
        s2 = parse("a=x,a=y")
        assert LabelSelector.from_dict(s2.to_dict()).matches({"a": "x"}) == s2.matches({"a": "x"})


class TestMisc:
    def test_everything_nothing(self):
        assert LabelSelector.everything().empty
        assert LabelSelector.everything().matches(None)
        assert str(LabelSelector.everything()) == ""
        assert parse("") is LabelSelector.everything()
        assert parse("   ").empty
        assert not LabelSelector.nothing().matches({})
        assert str(LabelSelector.nothing()) == ""  # as in Kubernetes: nothing has no string form

    def test_from_set(self):
        s = LabelSelector.from_set({"foo": "bar", "baz": "blah"})
        assert s.matches({"foo": "bar", "baz": "blah", "x": "y"})
        assert not s.matches({"foo": "bar"})
        assert str(s) == "baz=blah,foo=bar"
        assert LabelSelector.from_set({}).empty
        assert LabelSelector.from_set(None).empty

    def test_requires_exact_match(self):
        s = parse("a=1,b in (2),c in (3,4),d!=5")
        assert s.requires_exact_match("a") == "1"
        assert s.requires_exact_match("b") == "2"
        assert s.requires_exact_match("c") is None
        assert s.requires_exact_match("d") is None
        assert s.requires_exact_match("zz") is None

    def test_immutable_value_semantics(self):
        a, b = parse("x in (b,a),y"), parse("y,x in (a,b,a)")
        assert a == b and hash(a) == hash(b)
        assert {a: 1}[b] == 1
        assert a.add(make_requirement("z", "exists")) == parse("x in (a,b),y,z")
        assert a == parse("x in (a,b),y")  # add returned a new selector

    def test_int64_parse(self):
        assert parse_int64("42") == 42
        assert parse_int64("-42") == -42
        assert parse_int64("+7") == 7
        assert parse_int64("007") == 7
        assert parse_int64(str(2**63 - 1)) == 2**63 - 1
        assert parse_int64(str(2**63)) is None
        for bad in ("", "1_000", " 1", "1.0", "0x10", "٣"):
            assert parse_int64(bad) is None
        # gt/lt compare as integers, not strings
        assert parse("x>9").matches({"x": "10"})
        assert parse("x<10").matches({"x": "9"})
        assert not parse("x>9").matches({"x": "1_0"})

    def test_key_and_value_validation(self):
        assert validate_label_key("app.kubernetes.io/name") == []
        assert validate_label_key("a/b/c")
        assert validate_label_key("")
        assert validate_label_value("") == []
        assert validate_label_value("v1.2-rc_3") == []
        assert validate_label_value("x" * 64)

    def test_labels_with_none_value_count_as_present(self):
        # a Mapping that stores None still "has" the key (Kubernetes: ls.Has)
        assert parse("x").matches({"x": None})
        assert not parse("!x").matches({"x": None})


# --- property tests -------------------------------------------------------------------------

_alnum = st.sampled_from("abcxyzAZ019")
_mid = st.sampled_from("abcxyzAZ019-_.")
_name = st.builds(lambda a, mid, b: a + "".join(mid) + b if b else a,
                  _alnum, st.lists(_mid, max_size=4), st.one_of(st.just(""), _alnum))
_prefix = st.sampled_from(["", "example.com/", "k8s.io/", "a-b.c/"])
_key = st.builds(lambda p, n: p + n, _prefix, _name)
_keys = st.sampled_from(["app", "tier", "env", "k8s.io/zone", "in", "notin", "x"])
_value = st.one_of(st.just(""), _name, st.sampled_from(["in", "notin", "1", "42"]))


@st.composite
def _expr(draw):
    op = draw(st.sampled_from(["In", "NotIn", "Exists", "DoesNotExist"]))
    key = draw(st.one_of(_keys, _key))
    if op in ("In", "NotIn"):
        return {"key": key, "operator": op, "values": draw(st.lists(_value, min_size=1,
                                                                    max_size=4))}
    return {"key": key, "operator": op}


_structured = st.fixed_dictionaries({}, optional={
    "matchLabels": st.dictionaries(st.one_of(_keys, _key), _value, max_size=3),
    "matchExpressions": st.lists(_expr(), max_size=4),
})
_labels = st.dictionaries(st.one_of(_keys, _key), _value, max_size=5)


@st.composite
def _string_requirement(draw):
    key = draw(st.one_of(_keys, _key))
    kind = draw(st.sampled_from(["=", "==", "!=", "in", "notin", "exists", "!", "gt", "lt"]))
    if kind in ("in", "notin"):
        return make_requirement(key, kind, draw(st.lists(_value, min_size=1, max_size=3)))
    if kind in ("exists", "!"):
        return make_requirement(key, kind)
    if kind in ("gt", "lt"):
        return make_requirement(key, kind, [str(draw(st.integers(0, 99)))])
    return make_requirement(key, kind, [draw(_value)])


_selectors = st.builds(LabelSelector.from_requirements, st.lists(_string_requirement(),
                                                                 max_size=5))


@settings(max_examples=200, deadline=None)
@given(_structured, _labels)
def test_structured_and_string_forms_agree(d, labels):
    s = LabelSelector.from_dict(d)
    assert s.matches(labels) == LabelSelector.parse(str(s)).matches(labels)


@settings(max_examples=200, deadline=None)
@given(_selectors)
def test_parse_str_round_trips(s):
    again = parse(str(s))
    assert again == s
    assert str(again) == str(s)


@settings(max_examples=200, deadline=None)
@given(_selectors, _labels)
def test_round_trip_preserves_matching(s, labels):
    assert parse(str(s)).matches(labels) == s.matches(labels)


@settings(max_examples=120, deadline=None)
@given(_selectors, _labels)
def test_conjunction_semantics(s, labels):
    expected = all(LabelSelector.from_requirements([r]).matches(labels) for r in s.requirements)
    assert s.matches(labels) == expected


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet="ab=!(),<> \tinotx01-", max_size=20))
def test_parser_never_crashes(text):
    try:
        s = parse(text)
    except SelectorError:
        return
    assert parse(str(s)) == s


def test_requirement_str_and_match():
    r = make_requirement("x", "in", ["b", "a", "a"])
    assert isinstance(r, Requirement)
    assert r.values == ("a", "b")
    assert str(r) == "x in (a,b)"
    assert r.matches({"x": "a"}) and not r.matches({})
    assert parse_label_selector("x in (a,b)").requirements == (r,)


def test_required_values_names_the_narrowest_required_key():
    sel = LabelSelector.from_dict({"matchLabels": {"app": "web"},
                                   "matchExpressions": [{"key": "tier", "operator": "In",
                                                         "values": ["a", "b"]},
                                                        {"key": "x", "operator": "Exists"}]})
    assert sel.required_values() == ("app", frozenset({"web"}))
    assert LabelSelector.parse("tier in (a,b),!x").required_values() == ("tier", frozenset({"a", "b"}))
    # nothing required of one key's value: an index cannot narrow the candidates
    assert LabelSelector.parse("x,y notin (1)").required_values() is None
    assert LabelSelector.everything().required_values() is None
