import pytest
from slug import slugify


@pytest.mark.parametrize(
    ("title", "slug"),
    [
        ("Crème Brûlée", "creme-brulee"),
        ("Ñandú", "nandu"),
        ("Ångström units", "angstrom-units"),
        ("Über alles", "uber-alles"),
        ("Tokyo 東京", "tokyo"),
        ("CAFÉ", "cafe"),
        ("--Hello--World--", "hello-world"),
    ],
)
def test_slugs(title: str, slug: str) -> None:
    assert slugify(title) == slug
