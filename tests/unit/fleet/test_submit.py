"""`submit` and `worker` refuse what a fleet cannot run, before anything is enqueued."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from autopilot_codex.commands.fleet import _only_one, parse, shown
from autopilot_codex.durable.app import DATABASE_URL_ENV
from autopilot_codex.errors import BridgeError
from autopilot_codex.fleet.spec import RunSpec, repository
from tests.conftest import cli
from tests.postgres import Cluster

RUN = ["write it", "--implementer", "claude", "--manager", "openai"]


@pytest.mark.parametrize(
    ("url", "said"),
    [
        ("", "a fleet needs a database every machine reaches"),
        ("sqlite:///x.sqlite", "names a SQLite file, which one machine holds"),
    ],
)
def test_submit_and_worker_need_a_shared_database(
    url: str, said: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv(DATABASE_URL_ENV, url)
    for argv in (["submit", "/tmp", *RUN], ["worker"]):
        code, text = cli(capsys, *argv)
        assert code == 1 and said in text, text


@pytest.mark.parametrize(
    ("words", "said"),
    [
        ([*RUN, "--cwd", "x"], "--cwd: a worker sets where the run is"),
        ([*RUN, "--resume"], "--resume: a worker sets"),
        (["--implementer", "claude", "--manager", "openai"], "submit needs a goal"),
        (["write it", "--manager", "openai"], "choose the implementer"),
        (["write it", "--implementer", "claude"], "lanes, which need a manager"),
        ([*RUN, "--lanes", "0"], "--lanes must be 1 or more"),
        ([*RUN, "--implementer", "nobody"], "'nobody' is not accepted"),
    ],
)
def test_a_run_the_worker_would_refuse_is_refused_at_submit(words: list[str], said: str) -> None:
    with pytest.raises(BridgeError, match=said.replace("(", r"\(")):
        parse("https://example.com/r.git", words)


def test_a_spec_reads_back_and_caps_its_lanes_by_the_workers(tmp_path: Path) -> None:
    spec = parse(str(tmp_path), [*RUN, "--lanes", "5"])
    assert spec.repo_url == tmp_path.as_uri() and spec.goal == "write it"
    again = RunSpec.read(spec.as_dict())
    assert again == spec
    assert again.run_argv(2)[-2:] == ["--lanes", "2"]
    assert parse("git@host:r.git", RUN).run_argv(3)[-2:] == ["--lanes", "3"]


def test_a_repository_url_is_taken_as_given_and_a_command_transport_refused(tmp_path: Path) -> None:
    assert repository(" https://h/r.git ") == "https://h/r.git"
    assert repository("git@host:r.git") == "git@host:r.git"
    assert repository(str(tmp_path)) == tmp_path.as_uri()
    for bad in ("", "ext::sh -c touch% /tmp/x"):
        with pytest.raises(BridgeError):
            repository(bad)


def test_a_message_never_shows_the_databases_password() -> None:
    assert (
        shown("postgresql://u:secret@db.example:5433/fleet") == "postgresql://db.example:5433/fleet"
    )


def test_one_worker_per_executor_id_on_a_machine() -> None:
    first = _only_one("w1")
    try:
        with pytest.raises(BridgeError, match="a worker named 'w1' already runs here"):
            _only_one("w1")
        os.close(_only_one("w2"))
    finally:
        os.close(first)


def test_the_worker_refuses_numbers_it_cannot_use(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv(DATABASE_URL_ENV, "postgresql://u@127.0.0.1:1/x")
    code, text = cli(capsys, "worker", "--lanes", "0")
    assert code == 1 and "--lanes and --runs must be 1 or more" in text


def test_a_view_names_a_database_it_cannot_read(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    from autopilot_codex.commands.fleet import fleet_lines

    assert fleet_lines() == []
    monkeypatch.setenv(DATABASE_URL_ENV, "postgresql://u@127.0.0.1:1/x")
    assert fleet_lines() == ["Fleet: the shared database cannot be read (OperationalError)."]


def test_a_view_says_when_the_fleet_has_no_run_yet(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from dbos import DBOSClient

    from autopilot_codex.commands.fleet import fleet_lines

    url = f"sqlite:///{tmp_path / 'fleet.sqlite'}"
    monkeypatch.setenv(DATABASE_URL_ENV, url)
    empty = ['Fleet: no run submitted yet (autopilot-codex submit <repo-url> "<goal>").']
    # A database nothing has used yet, then one whose tables a submit or worker made.
    assert fleet_lines() == empty
    client = DBOSClient(system_database_url=url)
    try:
        client._sys_db.run_migrations()
    finally:
        client.destroy()
    assert fleet_lines() == empty


def test_a_database_that_cannot_be_reached_is_said_in_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv(DATABASE_URL_ENV, "postgresql://u:pw@127.0.0.1:1/x")
    for argv in (["submit", "/tmp", *RUN], ["worker"]):
        code, text = cli(capsys, *argv)
        assert code == 1, text
        assert "cannot reach the fleet's database postgresql://127.0.0.1:1/x: " in text, text
        assert "pw" not in text and "Traceback" not in text


def test_a_worker_never_takes_over_its_own_id(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], postgres: Cluster
) -> None:
    monkeypatch.setenv(DATABASE_URL_ENV, postgres.new_database())
    code, text = cli(capsys, "worker", "--executor-id", "w1", "--take-over", "w1")
    assert code == 1 and "--take-over names another worker's id" in text, text
