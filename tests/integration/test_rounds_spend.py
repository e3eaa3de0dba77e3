"""What each round's process reports of its spend, counted against the run's caps (issue 22):
a Claude Code round's tokens (its result event's `usage`), a Codex round's dollars (its
`turn.completed` usage priced for the model the round runs). Real git, the fake host."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pytest

from autopilot_codex.cli import main as cli_main
from autopilot_codex.commands.run import main
from tests.integration.test_rounds_driver import EXIT, READY, Script, drive, rounds_of

# One Claude round of the fake host: 6 input, 1500 cache-write, 12000 cache-read, 400 output.
CLAUDE_TOKENS = 6 + 1500 + 12_000 + 400
# A big Codex turn: 100,000 input tokens of which 20,000 cached, 5,000 output.
BIG = {"input_tokens": 100_000, "cached_input_tokens": 20_000, "output_tokens": 5_000}


@pytest.fixture(autouse=True)
def no_backoff(monkeypatch: pytest.MonkeyPatch) -> None:
    from autopilot_codex.rounds import driver

    monkeypatch.setattr(driver, "sleep", lambda _: None)


@pytest.fixture(autouse=True)
def codex_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "codex-home"
    home.mkdir()
    monkeypatch.setenv("CODEX_HOME", str(home))
    return home


def work(n: int, **extra: Any) -> dict[str, Any]:
    return {"write": {f"part{n}.txt": f"{n}\n"}, "say": f"part {n} done", **extra}


def status(repo: Path, capsys: pytest.CaptureFixture[str]) -> str:
    capsys.readouterr()
    assert cli_main(["-C", str(repo), "status"]) == 0
    return capsys.readouterr().out


# -- Claude Code: the result event's usage ---------------------------------------------------


def test_claude_rounds_count_their_tokens_and_a_token_cap_ends_the_run(
    repo: Path, script: Script, capsys: pytest.CaptureFixture[str]
) -> None:
    script([work(1), work(2), work(3), READY, EXIT])
    code, record = drive(repo, "--max-tokens", "20000")
    assert (code, record["status"], record["rounds_used"]) == (2, "tokens", 2)
    assert record["tokens"] == 2 * CLAUDE_TOKENS
    assert [r.tokens for r in rounds_of(repo)] == [CLAUDE_TOKENS, CLAUDE_TOKENS]
    text = status(repo, capsys)
    assert f"Tokens: {2 * CLAUDE_TOKENS} / 20000" in text, text
    assert "report no tokens" not in text


def test_a_claude_round_without_usage_or_cost_is_said_not_taken_for_nothing(
    repo: Path, script: Script, capsys: pytest.CaptureFixture[str]
) -> None:
    script([{**READY, "usage": None, "cost": None}, {**EXIT, "usage": None, "cost": None}])
    out = io.StringIO()
    argv = ["g", "--implementer", "claude", "--budget", "1", "--max-tokens", "9000"]
    assert main([*argv, "--cwd", str(repo)], stdout=out) == 0
    said = out.getvalue()
    assert "round 1: claude rounds report no dollars" in said
    assert "round 1: claude rounds report no tokens: --max-tokens sees none" in said
    text = status(repo, capsys)
    assert "The claude rounds report no tokens: --max-tokens sees none." in text


# -- Codex: turn.completed usage, priced ------------------------------------------------------


def test_codex_rounds_are_priced_for_the_model_on_their_command_line(
    repo: Path, script: Script, capsys: pytest.CaptureFixture[str]
) -> None:
    script([work(1, usage=BIG), work(2, usage=BIG), work(3, usage=BIG), READY, EXIT])
    model = ["--host-arg=-m", "--host-arg=gpt-5.2-codex"]
    code, record = drive(repo, *model, "--budget", "0.40", host="codex")
    # gpt-5.2-codex: 80,000 x $1.75 + 20,000 cached x $0.175 + 5,000 x $14 per million.
    one = (80_000 * 1.75 + 20_000 * 0.175 + 5_000 * 14.0) / 1e6
    assert one == pytest.approx(0.2135)
    assert (code, record["status"], record["rounds_used"]) == (2, "budget", 2)
    assert record["rounds_usd"] == pytest.approx(2 * one)
    assert [r.cost_usd for r in rounds_of(repo)] == pytest.approx([one, one])
    assert [r.unpriced for r in rounds_of(repo)] == ["", ""]
    text = status(repo, capsys)
    assert "report no dollars" not in text
    assert "dearest row" not in text


@pytest.mark.parametrize("how", ["--model=gpt-5-mini", "-c model=gpt-5-mini", "config.toml"])
def test_a_codex_rounds_model_from_its_flags_or_its_config(
    repo: Path, script: Script, codex_home: Path, how: str
) -> None:
    script([READY, EXIT])
    args: list[str] = []
    if how == "config.toml":
        (codex_home / "config.toml").write_text(
            'model = "gpt-5-mini"\n\n[profiles.other]\nmodel = "gpt-6-astra"\n'
        )
    else:
        args += [f"--host-arg={word}" for word in how.split()]
    code, record = drive(repo, *args, host="codex")
    assert code == 0
    # gpt-5-mini: 800 x $0.25 + 200 cached x $0.025 + 100 x $2.00 per million, each round.
    assert record["rounds_usd"] == pytest.approx(2 * 405 / 1e6)


def test_a_codex_round_of_an_unnamed_model_is_priced_at_the_dearest_row_and_said(
    repo: Path, script: Script, capsys: pytest.CaptureFixture[str]
) -> None:
    script([READY, EXIT])
    code, record = drive(repo, "--budget", "1", host="codex")
    assert code == 0
    # The dearest row, gpt-6-astra: 800 x $10 + 200 cached x $1 + 100 x $50 per million.
    assert record["rounds_usd"] == pytest.approx(2 * 13_200 / 1e6)
    assert [r.unpriced for r in rounds_of(repo)] == ["codex's default model"] * 2
    text = status(repo, capsys)
    assert "report no dollars" not in text
    assert "Priced at the dearest row (not in the price table): codex's default model" in text


# -- The budget watched during a round -------------------------------------------------------


def test_a_round_streaming_its_spend_is_stopped_as_it_reaches_the_budget(
    repo: Path, script: Script
) -> None:
    """Each turn.completed reports what the round has spent so far: the round's process group
    is ended at the first that reaches the budget, not when the round would have ended."""
    script([{"turns": [BIG] * 5, "hang": True}, READY, EXIT])
    model = ["--host-arg=-m", "--host-arg=gpt-5.2-codex"]
    code, record = drive(repo, *model, "--budget", "0.30", host="codex")
    one = (80_000 * 1.75 + 20_000 * 0.175 + 5_000 * 14.0) / 1e6
    assert (code, record["status"], record["rounds_used"]) == (2, "budget", 0)
    (stopped,) = rounds_of(repo)
    assert (stopped.outcome, stopped.next) == ("budget", "budget")
    assert stopped.cost_usd == pytest.approx(2 * one)
    assert "the budget is used up" in stopped.detail
    # Past the budget by less than what one streamed message added (5 turns unwatched).
    assert 0 < record["rounds_usd"] - 0.30 < one


def test_a_round_stopped_at_the_budget_goes_on_when_resumed_with_more(
    repo: Path, script: Script
) -> None:
    script([{"turns": [BIG] * 2, **work(1)}, READY, EXIT])
    model = ["--host-arg=-m", "--host-arg=gpt-5.2-codex"]
    assert drive(repo, *model, "--budget", "0.30", host="codex")[1]["status"] == "budget"
    code, record = drive(repo, "--resume", "--budget", "5")
    assert (code, record["status"]) == (0, "complete")
    assert [r.outcome for r in rounds_of(repo)][0] == "budget"


def test_a_budget_watched_only_as_rounds_end_is_said(repo: Path, script: Script) -> None:
    """A round whose spend comes only in its final event cannot be stopped mid-round: said."""
    script([{**READY, "turns": [BIG]}, EXIT])
    out = io.StringIO()
    argv = ["g", "--implementer", "codex", "--budget", "5", "--cwd", str(repo)]
    assert main(argv, stdout=out) == 0
    said = out.getvalue()
    only = "codex rounds report their dollars only as they end: a round can pass --budget"
    assert f"round 2: {only}" in said and f"round 1: {only}" not in said
