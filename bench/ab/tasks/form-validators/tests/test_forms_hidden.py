import pytest
from forms import validate


@pytest.mark.parametrize(
    ("value", "rule", "message"),
    [
        ("ab", "min:3", "must be at least 3 characters"),
        ("abcdef", "max:5", "must be at most 5 characters"),
        ("ann.example.com", "email", "must be an email address"),
        ("ann@example", "email", "must be an email address"),
        ("ann @x.io", "email", "must be an email address"),
        ("a@b@c.io", "email", "must be an email address"),
        ("ann@.io", "email", "must be an email address"),
        ("4.5", "int", "must be a whole number"),
        ("12a", "int", "must be a whole number"),
        ("17", "between:18:65", "must be between 18 and 65"),
        ("66", "between:18:65", "must be between 18 and 65"),
        ("teal", "one_of:red|green|blue", "must be one of red, green, blue"),
    ],
)
def test_each_rule_fails(value: str, rule: str, message: str) -> None:
    assert validate({"f": value}, {"f": [rule]}) == {"f": [message]}


@pytest.mark.parametrize(
    ("value", "rule"),
    [
        ("abc", "min:3"),
        ("abcde", "max:5"),
        ("ann@example.com", "email"),
        ("-42", "int"),
        ("18", "between:18:65"),
        ("65", "between:18:65"),
        ("x", "between:1:2"),
        ("green", "one_of:red|green|blue"),
    ],
)
def test_each_rule_passes(value: str, rule: str) -> None:
    assert validate({"f": value}, {"f": [rule]}) == {}


def test_messages_in_rule_order_and_blank_skips_others() -> None:
    rules = {"age": ["required", "int", "between:1:3"], "nick": ["min:2", "email"], "x": ["max:1"]}
    form = {"age": "x", "nick": "a"}
    assert validate(form, rules) == {
        "age": ["must be a whole number"],
        "nick": ["must be at least 2 characters", "must be an email address"],
    }
    assert validate({"nick": " "}, {"nick": ["min:2", "email", "int"]}) == {}


def test_unknown_rule() -> None:
    with pytest.raises(ValueError):
        validate({"f": "x"}, {"f": ["colour"]})
