from memo import memoize


def test_keyword_order_does_not_matter() -> None:
    @memoize
    def box(width: int, height: int = 1, depth: int = 1) -> int:
        return width * height * depth

    assert box(2, height=3, depth=4) == 24
    assert box(2, depth=4, height=3) == 24
    assert box.calls == 1


def test_keywords_do_not_collide_with_positionals() -> None:
    @memoize
    def pair(*args: object, **kwargs: object) -> tuple[object, ...]:
        return (args, sorted(kwargs.items()))

    assert pair("a", 1) != pair(a=1)
    assert pair.calls == 2


def test_keywords_only() -> None:
    @memoize
    def greet(name: str = "you", punctuation: str = "!") -> str:
        return f"hello {name}{punctuation}"

    assert greet(punctuation="?", name="ann") == "hello ann?"
    assert greet(name="ann", punctuation="?") == "hello ann?"
    assert greet(name="bob") == "hello bob!"
    assert greet.calls == 2
