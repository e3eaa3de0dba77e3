from datetime import date

from weeks import group_by_week, same_week, week_days, week_start


def test_weeks_start_on_sunday() -> None:
    assert week_start(date(2024, 5, 15)) == date(2024, 5, 12)  # a Wednesday
    assert week_start(date(2024, 5, 12)) == date(2024, 5, 12)  # a Sunday
    assert week_start(date(2024, 5, 18)) == date(2024, 5, 12)  # a Saturday
    assert week_start(date(2024, 1, 1)) == date(2023, 12, 31)  # across a year


def test_saturday_and_sunday_are_different_weeks() -> None:
    assert not same_week(date(2024, 5, 18), date(2024, 5, 19))
    assert same_week(date(2024, 5, 19), date(2024, 5, 25))


def test_week_days_and_groups() -> None:
    assert week_days(date(2024, 5, 15))[-1] == date(2024, 5, 18)
    groups = group_by_week([date(2024, 5, 20), date(2024, 5, 19), date(2024, 5, 18)])
    assert groups == {
        date(2024, 5, 12): [date(2024, 5, 18)],
        date(2024, 5, 19): [date(2024, 5, 19), date(2024, 5, 20)],
    }
