from mdlite import render


def test_headings() -> None:
    assert render("# Title") == "<h1>Title</h1>"
    assert render("## Part one\n\n### Detail") == "<h2>Part one</h2>\n<h3>Detail</h3>"
