from staff import directory, initials, sort_people


def test_initials() -> None:
    assert initials("Bob van Dyke") == "BVD"


def test_sort_keeps_names_as_written() -> None:
    names = ["cy Young", "Ann Lee"]
    assert sorted(sort_people(names)) == sorted(names)


def test_directory_of_one() -> None:
    assert directory(["Ann Lee"]) == "AL  Ann Lee"
