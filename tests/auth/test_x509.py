"""Client-certificate authentication, as kube-apiserver's x509 request authenticator does it."""

from __future__ import annotations

from kvert.auth.authenticator import certificate_user


def _peercert(*attributes: tuple[str, str]) -> dict:
    # ssl.SSLSocket.getpeercert(): the subject as relative distinguished names of (key, value)
    return {"subject": tuple(((key, value),) for key, value in attributes)}


def test_the_common_name_is_the_user_and_the_organizations_its_groups():
    # TestX509 (apiserver/pkg/authentication/request/x509/x509_test.go), CommonNameUserConversion:
    # the user is Subject.CommonName, the groups are Subject.Organization, in order; the
    # authenticated group is added after them (group.NewAuthenticatedGroupAdder).
    user = certificate_user(
        _peercert(("organizationName", "system:masters"), ("organizationName", "dev"),
                  ("commonName", "kubernetes-admin")))
    assert user.name == "kubernetes-admin"
    assert user.groups == ("system:masters", "dev", "system:authenticated")


def test_no_common_name_or_no_certificate_is_no_user():
    # CommonNameUserConversion: an empty CommonName is not authenticated (nil, false, nil)
    assert certificate_user(_peercert(("organizationName", "system:masters"))) is None
    assert certificate_user(None) is None
    assert certificate_user({}) is None
