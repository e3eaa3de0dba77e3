"""Hosts, loop styles and manager backends are each registered once; everything else derives.

This module is type-checked by `mypy --strict` (pyproject's `files`): the registries' loaders
check every member against its Protocol, and the fake backend below is checked the same way.
"""

from __future__ import annotations

import argparse

import pytest
from pydantic import BaseModel

from autopilot_codex import cli, config, hosts, styles
from autopilot_codex.commands import run
from autopilot_codex.config import Config, accepted, check
from autopilot_codex.errors import BridgeError
from autopilot_codex.manager import select
from autopilot_codex.manager.select import BACKENDS, Backend
from autopilot_codex.registry import Registry
from autopilot_codex.rounds import runner


class Reply(BaseModel):
    text: str


def option_choices(parser: argparse.ArgumentParser, dest: str, *verbs: str) -> tuple[str, ...]:
    """The `choices` of option `dest`, in the subcommand named by `verbs`."""
    for verb in verbs:
        sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        parser = sub.choices[verb]
    action = next(a for a in parser._actions if a.dest == dest)
    assert action.choices is not None
    return tuple(action.choices)


def test_the_cli_offers_the_registered_hosts_and_backends() -> None:
    assert option_choices(cli.parser(), "host", "ralph") == hosts.HOSTS.names
    assert option_choices(run.parser(), "manager") == (*BACKENDS.names, run.NO_MANAGER)
    # The rounds runner drives the hosts that have a headless runner, in the registry's order.
    assert option_choices(run.parser(), "implementer") == runner.implementers()
    assert runner.implementers() == tuple(
        n for n in hosts.HOSTS.names if hosts.get(n).headless() is not None
    )


def test_the_settings_accept_exactly_the_registered_backends() -> None:
    for name in ("", *BACKENDS.names):
        assert check("manager", name) == name
    assert accepted("manager") == "one of " + ", ".join(BACKENDS.names)
    with pytest.raises(BridgeError) as refused:
        check("manager", "gemini", "AUTOPILOT_CODEX_MANAGER=gemini")
    assert str(refused.value) == (
        "AUTOPILOT_CODEX_MANAGER=gemini is not accepted: manager must be one of openai, codex"
    )
    # A hook does not refuse: it ignores that one value, says so, and chooses the backend itself.
    warnings: list[str] = []
    loaded = config.load_config(environ={"AUTOPILOT_CODEX_MANAGER": "gemini"}, warnings=warnings)
    assert loaded.manager == ""
    assert warnings == [
        "AUTOPILOT_CODEX_MANAGER=gemini is not accepted: manager must be one of openai, codex; "
        "ignored; using manager=''"
    ]


@pytest.mark.parametrize(
    ("registry", "message"),
    [
        (hosts.HOSTS, "unknown host 'nope'; known: claude, codex"),
        (styles.STYLES, "unknown loop style 'nope'; known: autopilot, ralph, rounds"),
        (BACKENDS, "unknown manager backend 'nope'; known: codex, openai"),
    ],
)
def test_an_unknown_name_is_refused_with_the_known_ones(
    registry: Registry[object], message: str
) -> None:
    assert "nope" not in registry
    with pytest.raises(BridgeError) as refused:
        registry.get("nope")
    assert str(refused.value) == message


def test_a_backend_the_settings_never_checked_is_refused_by_name() -> None:
    # A Config built in code skips the settings check: the registry still refuses, by name.
    with pytest.raises(BridgeError, match="unknown manager backend 'nope'; known: codex, openai"):
        select.select(Config(manager="nope"))
    assert select.configured_problem(Config(manager="nope")) == BACKENDS.unknown("nope")


def test_the_backends_are_the_settings_list_each_a_module_checked_against_the_protocol() -> None:
    from autopilot_codex.manager import codex_backend, openai_backend

    # mypy checks each module against `Backend` here, as the registry loads them by name.
    typed: dict[str, Backend] = {"openai": openai_backend, "codex": codex_backend}
    assert BACKENDS.names == config.MANAGERS == tuple(typed)
    assert all(BACKENDS.get(name) is module for name, module in typed.items())


def test_the_hosts_are_each_a_package_whose_host_is_checked_against_the_protocol() -> None:
    from autopilot_codex.host import Host
    from autopilot_codex.hosts import claude, codex

    # mypy checks each package's HOST against `Host` here, as the registry loads them by name.
    typed: dict[str, Host] = {"claude": claude.HOST, "codex": codex.HOST}
    assert hosts.HOSTS.names == tuple(typed)
    assert all(hosts.get(name) is host for name, host in typed.items())


def test_the_styles_are_each_a_module_checked_against_the_protocol() -> None:
    from autopilot_codex.styles import rounds
    from autopilot_codex.styles.autopilot import style
    from autopilot_codex.styles.ralph import handlers

    # mypy checks each module against `Style` here, as the registry imports them by name.
    typed: dict[str, styles.Style] = {"autopilot": style, "ralph": handlers, "rounds": rounds}
    assert styles.STYLES.names == tuple(typed)
    assert all(styles.STYLES.get(name) is module for name, module in typed.items())


def test_every_registered_member_loads() -> None:
    for name in hosts.HOSTS:
        assert hosts.get(name).name == name
    for name in styles.STYLES:
        assert callable(styles.get(name))
    for name in BACKENDS:
        backend = BACKENDS.get(name)
        assert backend.output_cap(1_000) >= 1_000 and backend.OVERHEAD_CHARS >= 0


def _fake() -> Backend:
    # mypy checks the fake module against `Backend`, as it checks the real ones.
    from tests.fakes import fake_backend

    return fake_backend


def test_a_fourth_backend_is_one_module_and_one_registry_line(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from tests.fakes import fake_backend

    monkeypatch.setattr(select, "BACKENDS", BACKENDS.with_member("fake", _fake))
    monkeypatch.setitem(config.CHOICES, "manager", (*config.CHOICES["manager"], "fake"))
    # In the bridge the one line is its name in `config.MANAGERS` (the registry loads
    # `manager/<name>_backend.py` by it); a test's module lives elsewhere, so both are patched.
    # The settings, the CLI and the selection all see it; nothing else was edited.
    assert check("manager", "fake") == "fake"
    assert "fake" in option_choices(run.parser(), "manager")
    chosen = Config(manager="fake")
    assert select.configured_problem(chosen) is None
    outcome = select.select(chosen)("m", chosen).ask(Reply, "i", "p")
    assert outcome.error == fake_backend.ANSWER
    assert select.worst_case_usd(chosen, "m", "x" * 4_000, 1_000) > 0
