"""The rounds driver follows no link a round could plant in the work tree.

Each test plants a link (at a file the driver writes, or at a folder on its way) pointing at a
place outside the work tree that the test owns, runs the real driver against the scripted fake
host, and proves the outside place untouched: the driver writes the real place or stops with
one line naming the link.
"""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from autopilot_codex.commands.run import main
from tests.conftest import Script

READY = {"write": {"hello.txt": "hello\n"}, "commit": "add hello", "say": "Done.\n::potter(ready)"}
EXIT = {"say": "Every requirement checked against the files.\n::potter(exit)"}
PRECIOUS = "the user's own file\n"


def drive(repo: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    capsys.readouterr()
    out = io.StringIO()
    code = main(
        ["add the greeting files", "--implementer", "claude", "--cwd", str(repo)], stdout=out
    )
    return code, out.getvalue() + capsys.readouterr().err


def outside(tmp_path: Path) -> tuple[Path, Path]:
    """A folder outside the work tree with one file in it, both the test's."""
    folder = tmp_path / "outside"
    folder.mkdir()
    (folder / "kept.txt").write_text(PRECIOUS)
    return folder, folder / "kept.txt"


def untouched(folder: Path) -> None:
    assert sorted(p.name for p in folder.iterdir()) == ["kept.txt"]
    assert (folder / "kept.txt").read_text() == PRECIOUS


def refused(code: int, said: str, link: str) -> None:
    """The run stopped with one line naming the link (never a silent write through it)."""
    assert code == 1, said
    lines = [line for line in said.splitlines() if "refusing to follow" in line]
    assert len(lines) == 1 and link in lines[0], said


@pytest.mark.parametrize(
    "link",
    [
        ".autopilot-codex",
        ".autopilot-codex/kb",
        ".autopilot-codex/handoffs",
        ".autopilot-codex/logs",
    ],
)
def test_a_planted_folder_link_is_never_written_through(
    repo: Path, tmp_path: Path, script: Script, capsys: pytest.CaptureFixture[str], link: str
) -> None:
    folder, _ = outside(tmp_path)
    script([READY, EXIT])
    (repo / link).parent.mkdir(parents=True, exist_ok=True)
    (repo / link).symlink_to(folder, target_is_directory=True)
    code, said = drive(repo, capsys)
    untouched(folder)
    refused(code, said, link)


def test_a_planted_kb_readme_link_is_replaced_not_written_through(
    repo: Path, tmp_path: Path, script: Script, capsys: pytest.CaptureFixture[str]
) -> None:
    folder, kept = outside(tmp_path)
    kept.unlink()  # a link to nothing: the driver's "missing" README must not create it there
    script([READY, EXIT])
    kb = repo / ".autopilot-codex" / "kb"
    kb.mkdir(parents=True)
    (kb / "README.md").symlink_to(kept)
    code, said = drive(repo, capsys)
    assert not kept.exists() and list(folder.iterdir()) == []
    assert code == 0, said
    assert not (kb / "README.md").is_symlink()
    assert (kb / "README.md").read_text().startswith("# Knowledge base")


@pytest.mark.parametrize("link", ["info/exclude", "info"])
def test_a_planted_exclude_link_is_never_appended_through(
    repo: Path, tmp_path: Path, script: Script, capsys: pytest.CaptureFixture[str], link: str
) -> None:
    folder, kept = outside(tmp_path)
    script([READY, EXIT])
    planted = repo / ".git" / link
    if planted.is_dir():
        for entry in planted.iterdir():
            entry.unlink()
        planted.rmdir()
        planted.symlink_to(folder, target_is_directory=True)
    else:
        planted.unlink(missing_ok=True)
        planted.symlink_to(kept)
    code, said = drive(repo, capsys)
    untouched(folder)
    refused(code, said, link)


def test_a_round_that_links_its_next_log_outside_truncates_nothing(
    repo: Path, tmp_path: Path, script: Script, capsys: pytest.CaptureFixture[str]
) -> None:
    _, kept = outside(tmp_path)
    plant = {
        "shell": 'ln -s "$KEPT" ".autopilot-codex/logs/${AUTOPILOT_CODEX_RUN}-round2-1.stderr"',
        **READY,
    }
    script([plant, EXIT])
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("KEPT", str(kept))
        code, said = drive(repo, capsys)
    assert kept.read_text() == PRECIOUS
    refused(code, said, "round2-1.stderr")


def test_a_round_that_links_the_handoff_folder_outside_gets_nothing_written_there(
    repo: Path, tmp_path: Path, script: Script, capsys: pytest.CaptureFixture[str]
) -> None:
    folder, _ = outside(tmp_path)
    # The round moves the handoffs away and puts a link in their place, with a file of the
    # handoff's name (the user's, say) where the link points: the driver's read-back of the
    # notes and its rewrite of the objective must reach neither.
    swap = (
        "n=$(ls .autopilot-codex/handoffs) && rm -rf .autopilot-codex/handoffs && "
        'printf "%s" "$PRECIOUS" > "$OUT/$n" && ln -s "$OUT" .autopilot-codex/handoffs'
    )
    script([{"shell": swap, **READY}, EXIT])
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("OUT", str(folder))
        mp.setenv("PRECIOUS", PRECIOUS)
        code, said = drive(repo, capsys)
    names = sorted(p.name for p in folder.iterdir())
    assert len(names) == 2 and "kept.txt" in names, names
    assert all((folder / n).read_text() == PRECIOUS for n in names)
    refused(code, said, ".autopilot-codex/handoffs")


def test_prepare_keeps_the_users_exclude_lines_and_adds_its_own_once(repo: Path) -> None:
    from autopilot_codex.rounds.handoff import prepare

    exclude = repo / ".git" / "info" / "exclude"
    exclude.write_text("*.log")  # the user's line, without its newline
    prepare(repo)
    prepare(repo)
    assert exclude.read_text() == "*.log\n/.autopilot-codex/\n"
