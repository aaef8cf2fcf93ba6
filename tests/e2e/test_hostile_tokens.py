"""Issue 27's non-ASCII bearer token: any bytes a client puts in ``Authorization: Bearer`` are
no credential (401, kube-apiserver's Status), never an unauthenticated 500."""

from __future__ import annotations

import http.client
import json
import ssl
from urllib.parse import urlsplit

import pytest

# kube-apiserver's answer to a token no authenticator accepts (staging/src/k8s.io/apiserver
# pkg/endpoints/handlers/responsewriters: Unauthorized)
UNAUTHORIZED = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                "message": "Unauthorized", "reason": "Unauthorized", "code": 401}


@pytest.mark.parametrize("token", [
    "tok\u00e9n".encode(),                    # Latin-1 letter, as UTF-8
    "\u2603\u26c4".encode(),                  # outside the BMP's first block
    b"\xff\xfe\x80",                          # not UTF-8 at all
    "eyJhbGciOiJSUzI1NiJ9.\u00e9.x".encode(),  # shaped like a JWT, with a non-ASCII part
    b"a" * 4096 + "\u00e9".encode(),
])
def test_a_non_ascii_bearer_token_is_unauthorized(cluster, token):
    url = urlsplit(cluster.url)
    conn = http.client.HTTPSConnection(url.hostname, url.port, context=ssl._create_unverified_context(),
                                       timeout=10)
    try:
        conn.putrequest("GET", "/api/v1/namespaces")
        conn.putheader("Authorization", b"Bearer " + token)
        conn.endheaders()
        response = conn.getresponse()
        body = response.read()
    finally:
        conn.close()
    assert response.status == 401
    assert json.loads(body) == UNAUTHORIZED
