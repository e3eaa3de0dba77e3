from forms import validate


def test_required() -> None:
    rules = {"name": ["required"], "city": ["required"]}
    assert validate({"name": "  ", "city": "Oslo"}, rules) == {"name": ["is required"]}
    assert validate({}, {"name": ["required"]}) == {"name": ["is required"]}


def test_valid_form() -> None:
    assert validate({"name": "Ann"}, {"name": ["required"]}) == {}
