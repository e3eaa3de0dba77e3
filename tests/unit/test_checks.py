"""The checks' records, texts, cache rule, tree digest and detection, without running checks."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from autopilot_codex import typedjson
from autopilot_codex.checks import proc as checks_proc
from autopilot_codex.checks import run as checks
from autopilot_codex.checks.detect import detect_check
from autopilot_codex.checks.run import CheckResult, CheckSpec
from autopilot_codex.checks.tree import tree_hash
from autopilot_codex.errors import BridgeError
from tests.conftest import git, make_repo


def result(**changes: object) -> CheckResult:
    base = CheckResult(
        command="pytest -q",
        exit_code=0,
        status="pass",
        duration_s=1.25,
        tail="1 passed in 0.01s",
        output_bytes=18,
        note="",
        started_at="2026-01-01T00:00:00+00:00",
        tree_hash="a" * 64,
        tree_hash_after="b" * 64,
    )
    return typedjson.load(CheckResult, {**typedjson.dump(base), **changes})


# -- records ----------------------------------------------------------------------------


def test_results_round_trip_through_strict_json() -> None:
    records = [result(), result(status="timeout", exit_code=None, note="stopped")]
    text = json.dumps(typedjson.dump(records))
    assert [typedjson.load(CheckResult, item) for item in json.loads(text)] == records
    spec = CheckSpec("make test", 30.0)
    assert typedjson.load(CheckSpec, json.loads(json.dumps(typedjson.dump(spec)))) == spec


def test_a_result_with_an_unknown_status_is_refused() -> None:
    with pytest.raises(typedjson.Invalid, match="status"):
        result(status="skipped")


def test_config_checks_are_commands_or_objects() -> None:
    assert checks.specs_from_config(None) == []
    assert checks.specs_from_config([" pytest -q ", {"command": "make lint", "timeout_s": 60}]) == [
        CheckSpec("pytest -q"),
        CheckSpec("make lint", 60.0),
    ]


@pytest.mark.parametrize(
    "value",
    [
        "pytest -q",
        [""],
        [{"command": "x", "timeout_s": 0}],
        [{"command": "x", "timeout_s": True}],
        [{"command": "x", "shell": "zsh"}],
        [{"timeout_s": 5}],
        [3],
    ],
)
def test_bad_config_checks_are_one_clear_error(value: object) -> None:
    with pytest.raises(BridgeError):
        checks.specs_from_config(value)


# -- the cache rule ---------------------------------------------------------------------


def test_previous_results_answer_for_the_tree_they_ran_on_or_left() -> None:
    previous = [result()]
    specs = [CheckSpec("pytest -q")]
    assert checks.reusable(previous, specs, "a" * 64)
    assert checks.reusable(previous, specs, "b" * 64)
    assert not checks.reusable(previous, specs, "c" * 64)
    assert not checks.reusable(previous, specs, "")
    assert not checks.reusable(previous, [CheckSpec("pytest -x")], "a" * 64)
    assert not checks.reusable(previous, [*specs, CheckSpec("ruff check")], "a" * 64)


def test_a_timeout_is_kept_but_an_error_is_retried() -> None:
    specs = [CheckSpec("pytest -q")]
    assert checks.reusable([result(status="timeout", exit_code=None)], specs, "a" * 64)
    assert not checks.reusable([result(status="error", exit_code=127)], specs, "a" * 64)


def test_results_of_different_runs_are_not_reused_together() -> None:
    mixed = [result(), result(command="ruff check", tree_hash="c" * 64)]
    specs = [CheckSpec("pytest -q"), CheckSpec("ruff check")]
    assert not checks.reusable(mixed, specs, "a" * 64)


# -- environment and texts --------------------------------------------------------------


ENVIRON = {
    "PATH": "/bin",
    "HOME": "/home/u",
    "LANG": "C.UTF-8",
    "LC_ALL": "C.UTF-8",
    "TERM": "xterm",
    "VIRTUAL_ENV": "/v",
    "GIT_AUTHOR_NAME": "A",
    "OPENAI_API_KEY": "sk-x",
    "OPENAI_BASE_URL": "http://127.0.0.1:1",
    "ANTHROPIC_API_KEY": "sk-y",
    "AUTOPILOT_CODEX_HOME": "/s",
    "GITHUB_TOKEN": "user-owned",
    "SSH_AUTH_SOCK": "/tmp/agent",
    "DATABASE_URL": "postgres://u:p@h/db",
    "PYTHON_KEYRING_BACKEND": "x",
}


def test_the_environment_keeps_only_what_runners_need() -> None:
    assert checks.check_env(ENVIRON) == {
        "PATH": "/bin",
        "HOME": "/home/u",
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "TERM": "xterm",
        "VIRTUAL_ENV": "/v",
        "GIT_AUTHOR_NAME": "A",
    }


def test_checks_env_adds_names_but_never_the_managers_or_the_bridges() -> None:
    listed = ["DATABASE_URL", "GITHUB_TOKEN", "OPENAI_API_KEY", "AUTOPILOT_CODEX_HOME", "NOPE"]
    env = checks.check_env(ENVIRON, listed)
    assert env["DATABASE_URL"] == "postgres://u:p@h/db" and env["GITHUB_TOKEN"] == "user-owned"
    assert not {"OPENAI_API_KEY", "AUTOPILOT_CODEX_HOME", "NOPE", "SSH_AUTH_SOCK"} & set(env)


def test_a_failure_reason_carries_the_command_its_exit_and_its_tail() -> None:
    red = result(
        status="fail",
        exit_code=1,
        tail="FAILED tests/test_x.py::test_total - assert 2 == 3\n1 failed",
        output_bytes=60,
    )
    reason = checks.failure_reason([result(command="ruff check"), red])
    assert "`pytest -q` FAILED, exit 1" in reason
    assert "| FAILED tests/test_x.py::test_total - assert 2 == 3" in reason
    assert "ruff check" not in reason  # only what failed


def test_evidence_shows_every_check_and_says_red_is_not_done() -> None:
    green = result(command="ruff check", tail="\n".join(f"line {n}" for n in range(20)))
    red = result(status="error", exit_code=127, note="command not found (exit 127)", tail="")
    text = checks.evidence_text([green, red])
    assert "`ruff check` passed, exit 0 in 1.2 s" in text
    assert "line 19" in text and "line 14" not in text  # a pass shows its summary only
    assert "could NOT run" in text and "(no output)" in text
    assert "not done" in text
    assert checks.evidence_text([]) == ""
    assert "not done" not in checks.evidence_text([green])


def test_the_tail_is_the_last_lines_within_a_character_bound() -> None:
    text = "".join(f"line {n}\r\n" for n in range(1000)).encode()
    tail = checks._tail(text)
    assert tail.splitlines() == [f"line {n}" for n in range(940, 1000)]
    assert len(checks._tail(b"z" * 100_000)) == checks.TAIL_CHARS
    assert checks._tail(b"\xff broken utf-8\n") == "\ufffd broken utf-8"


def test_the_window_holds_a_bounded_tail_of_any_stream() -> None:
    window = checks_proc._Window()
    for n in range(400):
        window.add(bytes([n % 256]) * 4096)
    assert window.total == 400 * 4096 and len(window.data) == checks_proc.WINDOW_BYTES
    assert window.data[-1] == 399 % 256


def test_values_of_credential_variables_are_redacted() -> None:
    redact = checks._redactor(
        {"MY_API_KEY": "abcdefgh123", "DB_PASSWORD": "short", "USER_NAME": "alice-long-name"}
    )
    assert redact("k=abcdefgh123 p=short u=alice-long-name") == (
        "k=[REDACTED] p=short u=alice-long-name"
    )


# -- tree digest ------------------------------------------------------------------------


def test_the_tree_digest_sees_every_kind_of_change(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "r", {"a.py": "a = 1\n", "b.py": "b\n", ".gitignore": "*.log\n"})
    seen = {tree_hash(repo)}

    def changed() -> bool:
        digest = tree_hash(repo)
        fresh = digest not in seen
        seen.add(digest)
        return fresh

    (repo / "a.py").write_text("a = 2\n")
    assert changed()
    (repo / "a.py").write_text("a = 3\n")  # modified again, same file list
    assert changed()
    (repo / "new.py").write_text("n\n")
    assert changed()
    (repo / "b.py").unlink()
    assert changed()
    (repo / "new.py").chmod(0o755)
    assert changed()
    (repo / "link").symlink_to("a.py")
    assert changed()
    (repo / "debug.log").write_text("ignored\n")
    assert not changed()
    git(repo, "add", "-A")  # staging moves nothing on disk
    assert not changed()
    git(repo, "commit", "-qm", "c")  # same content, a new HEAD
    assert changed()
    assert not changed()


def test_a_folder_replaced_by_a_file_is_digested_not_fatal(tmp_path: Path) -> None:
    """The tracked `pkg/mod.py` now lies under a file `pkg`: looking it up fails with
    ENOTDIR, which is a state of the tree like any other, and the new file still counts."""
    import shutil

    repo = make_repo(tmp_path / "r", {"pkg/mod.py": "x = 1\n"})
    clean = tree_hash(repo)
    shutil.rmtree(repo / "pkg")
    (repo / "pkg").write_text("one\n")
    first = tree_hash(repo)
    assert first not in ("", clean)
    (repo / "pkg").write_text("two\n")
    assert tree_hash(repo) not in ("", clean, first)


def test_the_same_content_gives_the_same_digest(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "r", {"a.py": "a = 1\n"})
    clean = tree_hash(repo)
    (repo / "a.py").write_text("a = 2\n")
    assert tree_hash(repo) != clean
    (repo / "a.py").write_text("a = 1\n")
    assert tree_hash(repo) == clean


def test_excluded_paths_do_not_change_the_digest(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "r")
    clean = tree_hash(repo, exclude=(".loop",))
    (repo / ".loop").mkdir()
    (repo / ".loop" / "state.json").write_text("{}\n")
    assert tree_hash(repo, exclude=(".loop",)) == clean
    assert tree_hash(repo) != clean


def test_a_fifo_in_the_tree_is_never_opened(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "r", {"pipe": "a file, for now\n"})
    clean = tree_hash(repo)
    (repo / "pipe").unlink()
    os.mkfifo(repo / "pipe")  # opening it to read would block for ever
    assert tree_hash(repo) not in ("", clean)


def test_no_repository_no_digest(tmp_path: Path) -> None:
    assert tree_hash(tmp_path) == ""


def test_a_repository_without_commits_has_a_digest(tmp_path: Path) -> None:
    repo = tmp_path / "r"
    repo.mkdir()
    git(repo, "init", "-q")
    empty = tree_hash(repo)
    (repo / "a.py").write_text("a\n")
    assert "" not in (empty, tree_hash(repo)) and tree_hash(repo) != empty


# -- detection --------------------------------------------------------------------------


def project(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


@pytest.mark.parametrize(
    ("files", "expected"),
    [
        ({"Cargo.toml": "[package]\n"}, "cargo test"),
        ({"go.mod": "module x\n"}, "go test ./..."),
        ({"package.json": '{"scripts": {"test": "jest"}}'}, "npm test"),
        ({"package.json": '{"scripts": {"test": "vitest"}}', "yarn.lock": ""}, "yarn test"),
        ({"package.json": '{"scripts": {"test": "vitest"}}', "pnpm-lock.yaml": ""}, "pnpm test"),
        ({"package.json": '{"scripts": {"build": "tsc"}}'}, None),
        (
            {
                "package.json": '{"scripts": {"test": "echo \\"Error: no test specified\\" && exit 1"}}'
            },
            None,
        ),
        ({"package.json": "{not json"}, None),
        ({"Makefile": ".PHONY: test\ntest: build\n\tpytest\n"}, "make test"),
        ({"Makefile": "unit test lint:\n\ttrue\n"}, "make test"),
        ({"Makefile": "test := 1\nall:\n\ttrue\n"}, None),
        ({"Makefile": ".PHONY: test\nall:\n\ttrue\n"}, None),
        ({"Makefile": "test:\n\tcargo test\n", "Cargo.toml": ""}, "make test"),
        ({"pytest.ini": "[pytest]\n"}, "python3 -m pytest -q"),
        ({"pyproject.toml": "[tool.pytest.ini_options]\n"}, "python3 -m pytest -q"),
        ({"setup.cfg": "[tool:pytest]\n"}, "python3 -m pytest -q"),
        ({"pyproject.toml": "[project]\n", "tests/test_app.py": ""}, "python3 -m pytest -q"),
        ({"tests/unit/test_app.py": ""}, "python3 -m pytest -q"),
        ({"test_app.py": ""}, "python3 -m pytest -q"),
        ({"pyproject.toml": "[project]\n"}, None),
        ({"tests/helpers.py": ""}, None),
        ({"README.md": "# hi\n"}, None),
    ],
)
def test_a_likely_check_is_proposed(
    tmp_path: Path, files: dict[str, str], expected: str | None
) -> None:
    assert detect_check(project(tmp_path, files)) == expected


def test_the_projects_own_venv_is_proposed(tmp_path: Path) -> None:
    root = project(tmp_path, {"pytest.ini": "[pytest]\n", ".venv/bin/python": ""})
    assert detect_check(root) == ".venv/bin/python -m pytest -q"


def test_the_tree_digest_sees_renames_nested_repos_and_special_files(
    tmp_path: Path,
) -> None:
    repo = make_repo(tmp_path / "r", {"a.py": "a = 1\n", "b.py": "b\n"})
    seen = {tree_hash(repo)}

    def changed() -> bool:
        digest = tree_hash(repo)
        fresh = digest not in seen
        seen.add(digest)
        return fresh

    git(repo, "mv", "a.py", "moved.py")  # a staged rename, seen as a deletion and an addition
    assert changed()
    # A fifo where a tracked file was is described, never opened: reading it would block.
    (repo / "b.py").unlink()
    os.mkfifo(repo / "b.py")
    assert changed()
    nested = make_repo(repo / "nested", {"n.txt": "n\n"})  # its HEAD stands for its content
    git(repo, "add", "nested")  # staged as a gitlink, as a submodule is
    assert changed()
    (nested / "n.txt").write_text("n2\n")
    git(nested, "commit", "-qam", "n2")
    assert changed()


def test_the_tree_digest_of_a_conflicted_merge_follows_the_conflicted_file(
    tmp_path: Path,
) -> None:
    repo = make_repo(tmp_path / "r", {"a.py": "a = 1\n"})
    git(repo, "checkout", "-qb", "side")
    (repo / "a.py").write_text("a = 2\n")
    git(repo, "commit", "-qam", "side")
    git(repo, "checkout", "-q", "-")
    (repo / "a.py").write_text("a = 3\n")
    git(repo, "commit", "-qam", "main")
    merge = subprocess.run(["git", "merge", "-q", "side"], cwd=repo, capture_output=True)
    assert merge.returncode != 0  # the conflict this test is about
    conflicted = tree_hash(repo)
    (repo / "a.py").write_text("a = 4\n")
    assert tree_hash(repo) != conflicted
