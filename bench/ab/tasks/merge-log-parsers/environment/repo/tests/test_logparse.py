from logparse import parse_access, parse_error


def test_access_line() -> None:
    assert parse_access("12:00:01 GET /index.html 200") == {
        "time": "12:00:01",
        "method": "GET",
        "path": "/index.html",
        "status": "200",
    }


def test_error_line() -> None:
    assert parse_error("12:00:02 ERROR disk full") == {
        "time": "12:00:02",
        "level": "ERROR",
        "message": "disk full",
    }
