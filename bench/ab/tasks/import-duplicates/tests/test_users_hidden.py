from users import User, import_users


def test_first_row_wins() -> None:
    text = (
        "email,name,role\n"
        "ann@example.com,Ann,admin\n"
        "bob@example.com,Bob,member\n"
        "ANN@example.com,Ann Again,member\n"
        "ann@example.com,Ann Third,member\n"
    )
    users, skipped = import_users(text)
    assert users["ann@example.com"] == User("ann@example.com", "Ann", "admin")
    assert skipped == [4, 5]


def test_a_skipped_bad_row_does_not_claim_the_email() -> None:
    text = "email,name,role\nann@example.com,Ann,owner\nann@example.com,Ann,member\n"
    users, skipped = import_users(text)
    assert users == {"ann@example.com": User("ann@example.com", "Ann", "member")}
    assert skipped == [2]
