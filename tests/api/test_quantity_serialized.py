"""What a Kubernetes API server stores and returns for a quantity it was sent.

upstream: staging/src/k8s.io/apimachinery/pkg/api/resource/quantity.go (ParseQuantity keeps
the sent text only when its fast path judges it canonical; String() otherwise prints
CanonicalizeBytes) and quantity_test.go TestQuantityParseEmit; ResourceList values are also
rounded up to milli precision by pkg/apis/core/v1/defaults.go SetDefaults_ResourceList
(``val.RoundUp(milliScale)``), which drops the kept text when it rounds.
"""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kvert.api.quantity import Quantity, QuantityError, serialized
from kvert.api.quantityfields import canonicalize_quantities


@pytest.mark.parametrize("sent, stored", [
    # TestQuantityParseEmit
    ("1Ki", "1Ki"), ("1Mi", "1Mi"), ("1Gi", "1Gi"), ("1024Mi", "1Gi"), ("1000M", "1G"),
    (".001Ki", "1024m"), (".000001Ki", "1024u"), (".000000001Ki", "1024n"), (".000000000001Ki", "2n"),
    # the measurements against kube-apiserver 1.36.2, and kept spellings
    ("1.5Gi", "1536Mi"), ("1000m", "1"), ("100M", "100M"), ("500m", "500m"), ("1.5", "1500m"),
    # a DecimalExponent spelling the fast path keeps (scale 3, mantissa 1): returned as sent
    ("1e3", "1e3"),
    (2, "2"), (0.5, "500m"),
])
def test_a_quantity_is_returned_as_the_parser_prints_it(sent, stored):
    assert serialized(sent) == stored


@pytest.mark.parametrize("sent, stored", [
    ("0.0005", "1m"), ("5u", "1m"), ("1.000001", "1001m"), ("100n", "1m"),
    ("1.5Gi", "1536Mi"), ("100m", "100m"), ("0.1", "100m"),
])
def test_a_resource_list_value_is_rounded_up_to_milli(sent, stored):
    assert serialized(sent, resource_list=True) == stored


def test_an_unparsable_value_raises():
    with pytest.raises(QuantityError):
        serialized("lots")


@given(st.integers(min_value=0, max_value=10**15), st.sampled_from(["", "m", "k", "Mi", "Gi", "u", "n"]))
def test_serializing_is_idempotent_and_keeps_the_value(amount, suffix):
    text = f"{amount}{suffix}"
    once = serialized(text)
    assert serialized(once) == once
    assert Quantity.parse(once) == Quantity.parse(text)
    rounded = serialized(text, resource_list=True)
    assert serialized(rounded, resource_list=True) == rounded
    assert Quantity.parse(rounded).nanos % 10**6 == 0
    assert Quantity.parse(rounded) >= Quantity.parse(text)


def test_a_pod_is_canonicalized_where_it_holds_quantities():
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
           "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "0.0005", "memory": "1.5Gi"},
                                                               "limits": {"cpu": 1, "memory": "bad"}},
                                    "env": [{"name": "X", "valueFrom": {"resourceFieldRef": {
                                        "resource": "limits.cpu", "divisor": "1000m"}}}]}],
                    "volumes": [{"name": "v", "emptyDir": {"sizeLimit": "0.5Gi"}}]}}
    canonicalize_quantities(pod)
    container = pod["spec"]["containers"][0]
    assert container["resources"] == {"requests": {"cpu": "1m", "memory": "1536Mi"},
                                      "limits": {"cpu": "1", "memory": "bad"}}
    assert container["env"][0]["valueFrom"]["resourceFieldRef"]["divisor"] == "1"
    assert pod["spec"]["volumes"][0]["emptyDir"]["sizeLimit"] == "512Mi"


def test_custom_resources_are_left_as_sent():
    """A CRD's int-or-string / quantity-formatted fields are not Quantities to the server."""
    vpa = {"apiVersion": "autoscaling.k8s.io/v1", "kind": "VerticalPodAutoscaler",
           "spec": {"resourcePolicy": {"containerPolicies": [{"minAllowed": {"cpu": "1000m"}}]}}}
    canonicalize_quantities(vpa)
    assert vpa["spec"]["resourcePolicy"]["containerPolicies"][0]["minAllowed"] == {"cpu": "1000m"}
