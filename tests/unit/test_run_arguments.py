"""`run`'s wrong values (issue 36): one line naming what is accepted and exit 2, never
argparse's whole usage."""

from __future__ import annotations

import pytest

from autopilot_codex.cli import main


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["--rounds", "nan"], "--rounds: 'nan' is not accepted; give a whole number of rounds"),
        (["--rounds", "2.5"], "--rounds: '2.5' is not accepted; give a whole number of rounds"),
        (
            ["--implementer", "gemini"],
            "--implementer: 'gemini' is not accepted; choose claude or codex",
        ),
        (["--manager", "gpt"], "--manager: 'gpt' is not accepted; choose openai, codex or none"),
        (["--timeout", "soon"], "--timeout: 'soon' is not accepted; give seconds, above 0"),
        (
            ["--no-progress-rounds", "x"],
            "--no-progress-rounds: 'x' is not accepted; give a whole number",
        ),
        (["--rounds"], "--rounds: expected one argument"),
    ],
)
def test_a_wrong_value_is_one_line_naming_what_is_accepted(
    capsys: pytest.CaptureFixture[str], argv: list[str], said: str
) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["run", "the goal", *argv])
    assert exited.value.code == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.count("\n") == 1 and "usage:" not in captured.err, captured.err
    assert captured.err.startswith(f"autopilot-codex run: {said}"), captured.err
    assert captured.err.rstrip().endswith("(see autopilot-codex run --help)")
