from datetime import date, timedelta

from weeks import group_by_week, same_week, week_days, week_start


def test_week_days_are_seven_consecutive_days() -> None:
    day = date(2024, 5, 15)
    days = week_days(day)
    assert len(days) == 7
    assert days[0] == week_start(day) <= day <= days[-1]
    assert all(days[i + 1] - days[i] == timedelta(days=1) for i in range(6))


def test_same_week_and_groups() -> None:
    day = date(2024, 5, 15)
    assert same_week(day, day)
    assert not same_week(day, day + timedelta(days=7))
    groups = group_by_week([day + timedelta(days=7), day])
    assert list(groups.values()) == [[day], [day + timedelta(days=7)]]
