"""The Status messages of API errors, as apimachinery words them."""


def test_invalid_aggregates_its_causes_as_apimachinery():
    """utilerrors.NewAggregate(...).Error() (apimachinery/pkg/util/errors, TestAggregateWithErrors
    / TestSingularAggregate): one cause as it is, several in brackets joined by ", ", repeats once."""
    from kvert.api.errors import Invalid, aggregate_message, invalid, required
    assert aggregate_message(["a"]) == "a"
    assert aggregate_message(["a", "b"]) == "[a, b]"
    assert aggregate_message(["err", "err"]) == "err"
    assert aggregate_message(["a", "b", "a"]) == "[a, b]"
    err = Invalid("Pod", "web", [required("spec.containers[0].name", ""),
                                 invalid("spec.containers[0].image", "", "must not be empty")])
    assert err.message == ('Pod "web" is invalid: [spec.containers[0].name: Required value, '
                           'spec.containers[0].image: Invalid value: "": must not be empty]')
