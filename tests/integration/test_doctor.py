"""`doctor` checks both hosts and the selected manager, on real files: a CODEX_HOME with and
without our hooks, trusted and modified, Claude Code's record of installed plugins, and
`claude` / `codex` stand-ins on PATH (doctor only looks them up, or asks `codex login status`)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from autopilot_codex.commands.doctor import render, run_checks
from autopilot_codex.hosts.codex import install as codex_install
from autopilot_codex.hosts.codex.trust import set_trust, trust_entries
from tests.conftest import make_repo
from tests.fakes.openai_server import FakeOpenAI

BASE_PATH = "/usr/bin:/bin"


def stand_in(shim: Path, name: str, script: str = "exit 0") -> None:
    shim.mkdir(exist_ok=True)
    (shim / name).write_text(f"#!/bin/sh\n{script}\n")
    (shim / name).chmod(0o755)


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, manager: FakeOpenAI) -> Path:
    """PATH with only the system and a shim folder; CODEX_HOME in tmp_path; a manager that
    answers doctor's free model-list check. Returns the shim."""
    shim = tmp_path / "shim"
    shim.mkdir()
    assert not any(Path(d, n).exists() for d in BASE_PATH.split(":") for n in ("claude", "codex"))
    monkeypatch.setenv("PATH", f"{shim}{os.pathsep}{BASE_PATH}")
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "codex-home"))
    return shim


def report(tmp_path: Path) -> str:
    return render(run_checks(str(tmp_path)))


def lines_with(text: str, needle: str) -> list[str]:
    return [line for line in text.splitlines() if needle in line]


def install_codex(tmp_path: Path) -> codex_install.Target:
    tgt = codex_install.target("user", env=os.environ, cwd=tmp_path)
    codex_install.install(tgt)
    return tgt


def install_claude_plugin() -> None:
    plugins = Path(os.environ["HOME"]) / ".claude" / "plugins"
    plugins.mkdir(parents=True)
    record = {"version": 2, "plugins": {"autopilot-codex@autopilot-codex": [{"scope": "user"}]}}
    (plugins / "installed_plugins.json").write_text(json.dumps(record))


def test_trusted_codex_hooks_are_ready_and_a_missing_claude_is_only_a_fact(
    env: Path, tmp_path: Path
) -> None:
    stand_in(env, "codex")
    install_codex(tmp_path)
    out = report(tmp_path)
    assert lines_with(out, "Codex hooks:")[0].startswith("ok ")
    assert "all 6 trusted" in out
    assert lines_with(out, "`claude` is not on PATH")[0].startswith("--")
    assert "FIX" not in out and "Ready." in out


@pytest.mark.parametrize(
    ("spoil", "says"),
    [
        ("modify", "1 modified since trusted"),
        ("untrust", "6 untrusted"),
    ],
)
def test_untrusted_or_modified_codex_hooks_say_what_to_run(
    env: Path, tmp_path: Path, spoil: str, says: str
) -> None:
    stand_in(env, "codex")
    install_claude_plugin()
    stand_in(env, "claude")
    tgt = install_codex(tmp_path)
    if spoil == "modify":
        document = json.loads(tgt.hooks_file.read_text())
        document["hooks"]["Stop"][0]["hooks"][0]["timeout"] = 599
        tgt.hooks_file.write_text(json.dumps(document))
    else:
        tgt.config_file.write_text("")
    out = report(tmp_path)
    (line,) = lines_with(out, "Codex hooks:")
    # A broken install is a fault even though Claude Code is ready.
    assert line.startswith("FIX") and says in line
    assert "`autopilot-codex install codex --user` again" in line
    assert "Not ready" in out


def test_an_older_install_that_finds_bash_on_path_says_to_install_again(
    env: Path, tmp_path: Path
) -> None:
    stand_in(env, "codex")
    tgt = install_codex(tmp_path)
    # What versions before the absolute `/bin/sh` wrote: `bash "<root>/bin/autopilot-codex" ...`.
    for written in (tgt.hooks_file, tgt.hooks_file.with_name(codex_install.MANIFEST_NAME)):
        written.write_text(written.read_text().replace('"/bin/sh \\"', '"bash \\"'))
    document = json.loads(tgt.hooks_file.read_text())
    assert document["hooks"]["Stop"][0]["hooks"][0]["command"].startswith("bash ")
    # ... and trusted as such, so nothing else is wrong with it.
    entries = trust_entries(str(tgt.hooks_file), document)
    tgt.config_file.write_text(set_trust(tgt.config_file.read_text(), entries))
    (line,) = lines_with(report(tmp_path), "Codex hooks:")
    assert line.startswith("FIX") and "starts `bash` by name" in line
    assert "`autopilot-codex install codex --user` again" in line


def test_codex_without_our_hooks_is_a_fact_when_claude_is_ready(env: Path, tmp_path: Path) -> None:
    stand_in(env, "codex")
    stand_in(env, "claude")
    install_claude_plugin()
    out = report(tmp_path)
    assert lines_with(out, "Claude Code plugin: autopilot-codex@autopilot-codex")[0].startswith(
        "ok"
    )
    (line,) = lines_with(out, "not installed for Codex")
    assert line.startswith("--") and "autopilot-codex install codex --user" in line
    assert "FIX" not in out


def test_no_usable_host_is_a_fault_on_each(env: Path, tmp_path: Path) -> None:
    stand_in(env, "claude")  # on PATH, but the plugin is not installed
    out = report(tmp_path)
    (claude,) = lines_with(out, "plugin is not installed in Claude Code")
    assert claude.startswith("FIX") and "`autopilot-codex install`" in claude
    (codex,) = lines_with(out, "`codex` is not on PATH")
    assert codex.startswith("FIX") and "npm install -g @openai/codex" in codex


def test_a_project_install_is_checked_too(env: Path, tmp_path: Path) -> None:
    stand_in(env, "codex")
    repo = make_repo(tmp_path / "repo")
    tgt = codex_install.target("project", env=os.environ, cwd=repo)
    codex_install.install(tgt)
    out = render(run_checks(str(repo)))
    (line,) = lines_with(out, "Codex hooks:")
    assert str(repo / ".codex" / "hooks.json") in line and line.startswith("ok")


def test_the_manager_line_names_the_backend_and_why(
    env: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    stand_in(env, "claude")
    install_claude_plugin()
    (manager,) = lines_with(report(tmp_path), "manager: the openai backend")
    assert manager.startswith("ok") and "OPENAI_API_KEY is set" in manager

    monkeypatch.delenv("OPENAI_API_KEY")
    stand_in(env, "codex")  # `codex login status` exits 0: logged in
    (manager,) = lines_with(report(tmp_path), "manager:")
    assert manager.startswith("ok") and "the codex backend" in manager
    assert "no OPENAI_API_KEY, and codex is installed and logged in" in manager

    stand_in(env, "codex", "exit 1")  # logged out: nothing to fall back on
    (manager,) = lines_with(report(tmp_path), "OPENAI_API_KEY is not set")
    assert manager.startswith("FIX") and "codex login" in manager

    monkeypatch.setenv("AUTOPILOT_CODEX_MANAGER", "codex")
    (manager,) = lines_with(report(tmp_path), "codex is not logged in")
    assert manager.startswith("FIX") and "AUTOPILOT_CODEX_MANAGER=codex" in manager


def test_the_plugin_form_is_checked_against_our_hooks_file(env: Path, tmp_path: Path) -> None:
    stand_in(env, "codex")
    plugin = "autopilot-codex@autopilot-codex"
    config = tmp_path / "codex-home" / "config.toml"
    config.parent.mkdir()
    config.write_text(f'[plugins."{plugin}"]\nenabled = true\n')
    (line,) = lines_with(report(tmp_path), "Codex plugin")
    assert line.startswith("FIX") and "not all trusted" in line and "/hooks" in line

    template = json.loads((codex_install.PLUGIN_ROOT / "hooks" / "codex.json").read_text())
    entries = trust_entries(f"{plugin}:hooks/codex.json", template)
    config.write_text(set_trust(config.read_text(), entries))
    out = report(tmp_path)
    (line,) = lines_with(out, "Codex plugin")
    assert line.startswith("ok") and "6 hooks trusted" in line
    assert "FIX" not in out


def test_codex_users_learn_when_the_launcher_is_not_on_path(env: Path, tmp_path: Path) -> None:
    stand_in(env, "codex")
    install_codex(tmp_path)
    (line,) = lines_with(report(tmp_path), "is not on PATH, so Codex's shell")
    assert line.startswith("--")
    stand_in(env, "autopilot-codex")
    assert not lines_with(report(tmp_path), "is not on PATH, so Codex's shell")


def test_doctor_probe_sends_one_request_and_says_whether_the_schema_held(
    repo: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from autopilot_codex.cli import main
    from tests.fakes.openai_server import FakeOpenAI, Reply

    with FakeOpenAI() as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("AUTOPILOT_CODEX_API", "chat")
        server.enqueue({"greeting": "hello", "word_count": 1})
        main(["-C", str(repo), "doctor", "--probe"])
        out = capsys.readouterr().out
        # The free reachability check (GET /v1/models), then the one paid request.
        assert "probe ok" in out and len(server.requests_for("chat")) == 1
        assert [r.method for r in server.requests] == ["GET", "POST"]
        server.enqueue(Reply(text="Hello there!"), Reply(text="Hi!"))
        assert main(["-C", str(repo), "doctor", "--probe"]) == 1
        assert "probe FAIL" in capsys.readouterr().out
        # Without --probe, doctor makes no paid call.
        main(["-C", str(repo), "doctor"])
        assert len(server.requests_for("chat")) == 3
        assert server.requests[-1].method == "GET"


def test_settings_that_do_not_parse_are_a_fault_and_no_manager_is_asked(
    env: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, manager: FakeOpenAI
) -> None:
    monkeypatch.setenv("AUTOPILOT_CODEX_BUDGET_USD", "lots")
    out = report(tmp_path)
    (line,) = lines_with(out, "settings:")
    assert line.startswith("FIX") and "AUTOPILOT_CODEX_BUDGET_USD" in line
    # Without settings there is no manager to name or reach.
    assert not lines_with(out, "manager:") and manager.requests == []
    assert out.endswith("Not ready: fix the lines marked FIX, then run this again.")


def git_wrapper(tmp_path: Path, version: str) -> Path:
    """A git the user pointed the bridge at that says `version` and runs the system's git."""
    wrapper = tmp_path / "old-git"
    wrapper.write_text(
        f'#!/bin/sh\nif [ "$1" = --version ]; then echo "{version}"; exit 0; fi\n'
        'exec /usr/bin/git "$@"\n'
    )
    wrapper.chmod(0o755)
    return wrapper


@pytest.mark.parametrize(
    ("version", "says"),
    [("git version 2.20.1", "2.20.1"), ("", "unknown version")],
    ids=["old", "unreadable"],
)
def test_a_git_too_old_or_unreadable_is_a_fault_naming_the_least_version(
    env: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, version: str, says: str
) -> None:
    wrapper = git_wrapper(tmp_path, version)
    monkeypatch.setenv("AUTOPILOT_CODEX_GIT", str(wrapper))
    (line,) = lines_with(report(tmp_path), "git: ")
    assert line == f"FIX  git: {wrapper} is {says}; the bridge needs 2.36 or later"


def test_a_git_override_that_is_not_an_absolute_path_is_a_fault(
    env: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AUTOPILOT_CODEX_GIT", "bin/git")
    (line,) = lines_with(report(tmp_path), "git: ")
    assert line == "FIX  git: AUTOPILOT_CODEX_GIT=bin/git is not an absolute path to an executable"
    monkeypatch.setenv("AUTOPILOT_CODEX_GIT", str(git_wrapper(tmp_path, "git version 2.47.0")))
    (line,) = lines_with(report(tmp_path), "git: ")
    assert line.startswith("ok ") and "(2.47.0)" in line


@pytest.mark.parametrize(
    ("status", "ok", "says"),
    [
        (401, False, "refused the key (401); check it or run `login`"),
        (403, False, "refused the key (403); check its access"),
        (404, True, "answers (it has no model list to check)"),
        (422, False, "answered HTTP 422 to its model list"),
    ],
)
def test_the_free_reach_check_reads_each_answer_of_the_model_list(
    env: Path, tmp_path: Path, manager: FakeOpenAI, status: int, ok: bool, says: str
) -> None:
    manager.models_status = status
    (line,) = lines_with(report(tmp_path), "manager: http")
    assert line == f"{'ok  ' if ok else 'FIX '} manager: {manager.base_url} {says}"
    assert [r.method for r in manager.requests] == ["GET"]


def test_the_reach_check_says_when_the_model_is_offered(
    env: Path, tmp_path: Path, manager: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AUTOPILOT_CODEX_MODEL", "gpt-6.2-astra")
    shown = report(tmp_path)
    (line,) = lines_with(shown, "manager: http")
    # Issue 36: it was a note, and doctor said Ready; no loop could have run.
    assert line == (
        f"FIX  manager: {manager.base_url} does not serve the model gpt-6.2-astra; it serves: "
        "fake-model, gpt-6.2-sol. Set AUTOPILOT_CODEX_MODEL to one of them"
    )
    assert "Not ready" in shown
    manager.models = [f"m{n}" for n in range(10)]
    (line,) = lines_with(report(tmp_path), "manager: http")
    assert "it serves: m0, m1, m2, m3, m4, m5, m6, m7, .... Set" in line
    manager.models = ["other", "gpt-6.2-astra"]
    (line,) = lines_with(report(tmp_path), "manager: http")
    assert line == f"ok   manager: {manager.base_url} answers and offers gpt-6.2-astra (free check)"


def test_a_manager_that_never_answers_is_not_answering_within_a_few_seconds(
    env: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 36: doctor waited 10.8 s on a server that accepts and never answers."""
    import socket

    from autopilot_codex.commands.doctor_reach import REACH_TIMEOUT_S

    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(4)  # connections queue, and nothing ever answers them
        url = f"http://127.0.0.1:{silent.getsockname()[1]}/v1"
        monkeypatch.setenv("OPENAI_BASE_URL", url)
        shown = report(tmp_path)
    (line,) = lines_with(shown, "manager: http")
    assert line.startswith(f"FIX  manager: {url} is not answering (nothing within 3s)")
    assert REACH_TIMEOUT_S <= 5


def test_a_state_home_that_cannot_be_written_is_not_ready(
    env: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 36: doctor said Ready with a state home no loop could write to."""
    (tmp_path / "afile").write_text("a file, not a folder\n")
    monkeypatch.setenv("AUTOPILOT_CODEX_HOME", str(tmp_path / "afile" / "home"))
    shown = report(tmp_path)
    (line,) = lines_with(shown, "state home:")
    assert line.startswith(
        f"FIX  state home: cannot write to {tmp_path / 'afile'} (Not a directory)"
    )
    assert "Not ready" in shown


@pytest.mark.skipif(
    not __import__("tests.integration.test_new_user_second", fromlist=["can_mount"]).can_mount(),
    reason="needs `unshare -rm` to make a read-only folder that even root cannot write",
)
def test_a_read_only_state_home_is_not_ready(
    env: Path, tmp_path: Path, isolated: Path, manager: FakeOpenAI
) -> None:
    """The real launcher with the state home mounted read-only (modes alone do not stop root)."""
    from tests.integration.test_new_user_second import read_only_run

    isolated.mkdir(parents=True)
    result = read_only_run(isolated, ["doctor"], {"PATH": os.environ["PATH"]}, tmp_path)
    (line,) = lines_with(result.stdout, "state home:")
    assert line.startswith(f"FIX  state home: cannot write to {isolated} (Read-only file system)")
    assert "Not ready" in result.stdout


def test_outside_a_repository_the_wall_has_nothing_to_guard(env: Path, tmp_path: Path) -> None:
    out = report(tmp_path)
    assert lines_with(out, "wall: no git repository here, so nothing to guard")[0].startswith("--")
    assert "UNGUARDED" not in out
