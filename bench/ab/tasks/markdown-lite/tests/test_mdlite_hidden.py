from mdlite import render


def test_paragraphs_join_lines() -> None:
    assert render("one\ntwo\n\n\nthree") == "<p>one two</p>\n<p>three</p>"


def test_list() -> None:
    assert render("- a\n- b") == "<ul><li>a</li><li>b</li></ul>"


def test_escaping() -> None:
    assert render("a < b & c > d") == "<p>a &lt; b &amp; c &gt; d</p>"


def test_inline_forms() -> None:
    text = "Use **bold**, *em*, `x*y*z` and [docs](https://example.com/a)."
    assert render(text) == (
        '<p>Use <strong>bold</strong>, <em>em</em>, <code>x*y*z</code> and '
        '<a href="https://example.com/a">docs</a>.</p>'
    )


def test_inline_in_headings_and_items() -> None:
    assert render("# A *b*\n\n- `<x>`\n- **y**") == (
        "<h1>A <em>b</em></h1>\n<ul><li><code>&lt;x&gt;</code></li><li><strong>y</strong></li></ul>"
    )


def test_hash_without_space_is_text() -> None:
    assert render("#hashtag") == "<p>#hashtag</p>"
