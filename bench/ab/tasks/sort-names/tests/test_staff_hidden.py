from staff import directory, sort_people


def test_by_last_name_then_first() -> None:
    names = ["Cy Young", "Ann Lee", "Bob van Dyke", "Al Lee", "dee Adams"]
    assert sort_people(names) == ["dee Adams", "Bob van Dyke", "Al Lee", "Ann Lee", "Cy Young"]


def test_case_ignored() -> None:
    assert sort_people(["ann zed", "Bob Young"]) == ["Bob Young", "ann zed"]


def test_directory_order() -> None:
    assert directory(["Cy Young", "Ann Lee"]) == "AL  Ann Lee\nCY  Cy Young"
