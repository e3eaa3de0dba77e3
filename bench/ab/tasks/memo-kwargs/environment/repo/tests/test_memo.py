from memo import memoize


def test_keyword_arguments_are_part_of_the_key() -> None:
    @memoize
    def area(side: int, scale: int = 1) -> int:
        return side * side * scale

    assert area(2, scale=3) == 12
    assert area(2, scale=1) == 4
    assert area(2, scale=3) == 12
    assert area.calls == 2


def test_positional_calls_are_cached() -> None:
    @memoize
    def double(x: int) -> int:
        return 2 * x

    assert [double(1), double(1), double(2)] == [2, 2, 4]
    assert double.calls == 2
