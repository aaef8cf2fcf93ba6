"""Decoding a v1 Secret: base64 ``data`` and ``stringData`` (Convert_v1_Secret_To_core_Secret in
pkg/apis/core/v1/conversion.go, Go's encoding/base64 for the offsets)."""

import base64

import pytest
from hypothesis import given, strategies as st

from kvert.api.errors import BadRequest
from kvert.api.secrets import base64_error_offset, merge_string_data


# TestDecodeCorrupt in Go's encoding/base64/base64_test.go (-1: decodes)
@pytest.mark.parametrize("text, offset", [
    ("", -1), ("\n", -1), ("AAA=\n", -1), ("AAAA\n", -1), ("!!!!", 0), ("====", 0),
    ("x===", 1), ("=AAA", 0), ("A=AA", 1), ("AA=A", 2), ("AA==A", 4), ("AAA=AAAA", 4),
    ("AAAAA", 4), ("AAAAAA", 4), ("A=", 1), ("A==", 1), ("AA=", 3), ("AA==", -1),
    ("AAA=", -1), ("AAAA", -1), ("AAAAAA=", 7), ("YWJjZA=====", 8), ("A!\n", 1), ("A=\n", 1),
])
def test_base64_error_offset(text, offset):
    assert base64_error_offset(text) == (None if offset == -1 else offset)


@given(st.binary(max_size=64))
def test_every_standard_encoding_decodes(raw):
    assert base64_error_offset(base64.b64encode(raw).decode()) is None


@given(st.binary(min_size=1, max_size=64), st.sampled_from("!*-_.@ "))
def test_a_foreign_character_is_named_by_its_offset(raw, bad):
    text = base64.b64encode(raw).decode().rstrip("=")
    cut = len(text) // 2
    assert base64_error_offset(text[:cut] + bad + text[cut:]) == cut


def test_string_data_is_merged_into_data_and_wins():
    secret = {"data": {"a": "YQ==", "b": "Yg=="}, "stringData": {"b": "B", "c": "ü"}}
    merge_string_data(secret)
    assert secret == {"data": {"a": "YQ==", "b": "Qg==", "c": "w7w="}}


def test_string_data_alone_and_empty():
    secret = {"stringData": {"password": "s3cr3t"}}
    merge_string_data(secret)
    assert secret == {"data": {"password": "czNjcjN0"}}
    secret = {"stringData": {}}
    merge_string_data(secret)
    assert secret == {}


def test_data_that_is_not_base64_is_a_bad_request_without_the_value():
    with pytest.raises(BadRequest) as e:
        merge_string_data({"data": {"password": "hunter2!"}})
    assert str(e.value) == ('Secret in version "v1" cannot be handled as a Secret: illegal base64 '
                            "data at input byte 7")
    assert "hunter2" not in str(e.value)


@pytest.mark.parametrize("secret, message", [
    ({"data": "x"}, "json: cannot unmarshal string into Go struct field Secret.data of type "
                    "map[string][]uint8"),
    ({"data": {"k": 1}}, "json: cannot unmarshal number into Go struct field Secret.data of type "
                         "[]uint8"),
    ({"stringData": {"k": ["x"]}}, "json: cannot unmarshal array into Go struct field "
                                   "Secret.stringData of type string"),
])
def test_wrongly_typed_values(secret, message):
    with pytest.raises(BadRequest) as e:
        merge_string_data(secret)
    assert str(e.value) == f'Secret in version "v1" cannot be handled as a Secret: {message}'
