from users import User, import_users


def test_imports_rows() -> None:
    text = "email,name,role\nAnn@Example.com , Ann,admin\nbob@example.com,Bob,member\n"
    users, skipped = import_users(text)
    assert users == {
        "ann@example.com": User("ann@example.com", "Ann", "admin"),
        "bob@example.com": User("bob@example.com", "Bob", "member"),
    }
    assert skipped == []


def test_skips_bad_rows() -> None:
    text = "email,name,role\n,Nobody,member\ncy@example.com,Cy,owner\n"
    assert import_users(text) == ({}, [2, 3])
