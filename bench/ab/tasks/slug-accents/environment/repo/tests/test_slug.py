from slug import slugify


def test_plain_title() -> None:
    assert slugify("  Hello, World!  ") == "hello-world"


def test_accent_kept_as_plain_letter() -> None:
    assert slugify("Café au lait") == "cafe-au-lait"
