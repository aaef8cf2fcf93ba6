"""The static token authenticator takes any header text: a token that is not one of its own
is no user, whatever characters it holds (issue 27: a non-ASCII token was a 500)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from kvert.auth.tokens import TokenAuthenticator
from kvert.auth.user import User

ALICE = User("alice", "uid-a", ("system:authenticated",))


@given(st.text())
def test_any_other_token_is_no_user(token):
    auth = TokenAuthenticator({"s3cret-\u00e9": ALICE})
    expected = ALICE if token == "s3cret-\u00e9" else None
    assert auth.authenticate_token(token) == expected
    assert auth.authenticate(f"Bearer {token}") in (expected, None)


def test_a_non_ascii_token_of_its_own_is_its_user():
    assert TokenAuthenticator({"s3cret-\u00e9": ALICE}).authenticate("Bearer s3cret-\u00e9") == ALICE
    assert TokenAuthenticator({"s3cret": ALICE}).authenticate("Bearer s3cr\u00e9t") is None
