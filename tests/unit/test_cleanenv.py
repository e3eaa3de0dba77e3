"""What a round's and a check's environment keep of the user's."""

from __future__ import annotations

from pathlib import Path

from autopilot_codex import cleanenv, hosts

USER = {
    "PATH": "/bin",
    "HOME": "/h",
    "OPENAI_API_KEY": "sk-manager",
    "OPENAI_BASE_URL": "http://m",
    "AUTOPILOT_CODEX_HOME": "/s",
    "AUTOPILOT_CODEX_API_KEY_FILE": "/k",
    "ANTHROPIC_API_KEY": "sk-ant",
    "ANTHROPIC_BASE_URL": "http://a",
    "CLAUDE_CODE_OAUTH_TOKEN": "oauth",
    "CODEX_API_KEY": "codex",
    "GITHUB_TOKEN": "gh",
    "SSH_AUTH_SOCK": "/agent",
    "AWS_SECRET_ACCESS_KEY": "aws",
    "GIT_AUTHOR_NAME": "A",
    "EDITOR": "vi",
}


def test_a_claude_round_keeps_its_own_sign_in_only() -> None:
    env = cleanenv.for_round(hosts.get("claude").headless(), USER)
    assert set(env) == {
        "PATH", "HOME", "AUTOPILOT_CODEX_HOME", "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL",
        "CLAUDE_CODE_OAUTH_TOKEN", "GIT_AUTHOR_NAME", "EDITOR",
    }  # fmt: skip


def test_claude_on_bedrock_keeps_the_clouds_credentials() -> None:
    env = cleanenv.for_round(
        hosts.get("claude").headless(), {**USER, "CLAUDE_CODE_USE_BEDROCK": "1"}
    )
    assert env["AWS_SECRET_ACCESS_KEY"] == "aws" and "OPENAI_API_KEY" not in env


def test_a_codex_round_keeps_its_config_and_its_providers_key(tmp_path: Path) -> None:
    (tmp_path / "config.toml").write_text(
        '[model_providers.a]\nenv_key = "A_KEY"\n# env_key = "COMMENTED_KEY"\n'
        '[model_providers.b]\nenv_key = "OPENAI_API_KEY"\n'
    )
    user = {**USER, "CODEX_HOME": str(tmp_path), "A_KEY": "a", "COMMENTED_KEY": "c"}
    env = cleanenv.for_round(hosts.get("codex").headless(), user)
    assert env["A_KEY"] == "a" and env["CODEX_API_KEY"] == "codex"
    # A provider may name the manager's key; the manager's key is never passed on.
    assert not {"OPENAI_API_KEY", "COMMENTED_KEY", "ANTHROPIC_API_KEY", "GITHUB_TOKEN"} & set(env)


def test_a_check_keeps_a_short_list_and_what_the_user_names() -> None:
    env = cleanenv.for_check(USER, ["GITHUB_TOKEN", "EDITOR", "OPENAI_API_KEY"])
    assert set(env) == {"PATH", "HOME", "GIT_AUTHOR_NAME", "GITHUB_TOKEN", "EDITOR"}


def test_a_host_without_a_headless_runner_keeps_no_credential() -> None:
    env = cleanenv.for_round(None, USER)
    assert "ANTHROPIC_API_KEY" not in env and env["EDITOR"] == "vi"


def test_the_fleets_database_never_reaches_a_round_or_a_check() -> None:
    """A worker holds the shared database's URL (its password inside): a round's host and a
    check run what the implementer wrote, so neither may see it, whatever the host needs."""
    user = {**USER, "AUTOPILOT_CODEX_DATABASE_URL": "postgresql://fleet:hunter2@db/fleet"}
    for name in ("claude", "codex"):
        assert "AUTOPILOT_CODEX_DATABASE_URL" not in cleanenv.for_round(
            hosts.get(name).headless(), user
        )
    assert "AUTOPILOT_CODEX_DATABASE_URL" not in cleanenv.for_check(
        user, ["AUTOPILOT_CODEX_DATABASE_URL"]
    )


def test_a_check_gets_the_hosts_path_the_launcher_kept_a_round_does_not() -> None:
    # The launcher drops the work tree's folders from PATH for everything the bridge starts;
    # a check (the implementer's code, in the supervisor's sandbox) still finds the
    # repository's tools. A round's host runs outside its own sandbox: never.
    environ = {**USER, "PATH": "/usr/bin:/bin", cleanenv.USER_PATH: "/repo/.venv/bin:/usr/bin"}
    assert cleanenv.for_check(environ)["PATH"] == "/repo/.venv/bin:/usr/bin"
    runner = hosts.get("claude").headless()
    assert cleanenv.for_round(runner, environ)["PATH"] == "/usr/bin:/bin"
    # Without the launcher (the bridge run directly), the PATH it has.
    assert cleanenv.for_check(USER)["PATH"] == "/bin"
