"""Response bodies byte for byte as kube-apiserver writes them: Go's json.Encoder.Encode
(encoding/json: HTML-safe escaping of <, > and & and of U+2028/U+2029 -- encode_test.go
TestHTMLEscape, TestLineSeparatorEscape --, UTF-8 written as it is, invalid UTF-16 as
U+FFFD, and the newline Encode appends)."""

from kvert.apiserver.rest import encode_json


def test_encoding_matches_go():
    assert encode_json({"kind": "Status", "code": 404}) == b'{"kind":"Status","code":404}\n'
    assert encode_json({"m": "<a href='x'>&</a>"}) == \
        b'{"m":"\\u003ca href=\'x\'\\u003e\\u0026\\u003c/a\\u003e"}\n'
    assert encode_json({"m": "caf\u00e9 \u2028 \u2029"}) == \
        '{"m":"café \\u2028 \\u2029"}\n'.encode()
    assert encode_json({"m": "x\ud800"}) == '{"m":"x\ufffd"}\n'.encode()
    assert encode_json({"m": "tab\tquote\"back\\"}) == b'{"m":"tab\\tquote\\"back\\\\"}\n'
