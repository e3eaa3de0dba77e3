"""The implementer's question as the manager reads it: Claude Code's shape or a bare question,
bounded, with what is not text left out."""

from __future__ import annotations

from autopilot_codex.styles.autopilot.questions import MAX_CHARS, question_text


def test_the_questions_their_headers_and_options_are_plain_lines() -> None:
    asked = {
        "questions": [
            "not a question",
            {"question": "   "},  # nothing asked: no line
            {
                "question": "Which database?",
                "header": "storage",
                "options": [
                    {"label": "sqlite", "description": "one file"},
                    {"label": "postgres"},
                    "a bare option",
                    7,
                ],
                "multiSelect": True,
            },
            {"question": "Ship it?", "options": "yes or no"},
        ]
    }
    assert question_text(asked).splitlines() == [
        "Q: Which database? [storage]",
        "  - sqlite: one file",
        "  - postgres",
        "  - a bare option",
        "  (more than one option may be chosen)",
        "Q: Ship it?",
    ]


def test_a_bare_question_is_one_bounded_line_and_no_text_is_no_question() -> None:
    assert question_text({"question": "x" * (MAX_CHARS + 50)}) == "Q: " + "x" * MAX_CHARS
    assert question_text({"question": 42}) == ""
    assert question_text({"questions": "not a list"}) == ""
