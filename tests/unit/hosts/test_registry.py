"""The hosts' registry: one line per host, each checked against `Host`, refusing others."""

from __future__ import annotations

import pytest

from autopilot_codex import defaults, hosts, output
from autopilot_codex.errors import BridgeError
from autopilot_codex.hookio import Answer


def test_registry_knows_both_hosts_and_refuses_others() -> None:
    assert hosts.HOSTS.names == ("claude", "codex")
    assert [h.name for h in hosts.every()] == ["claude", "codex"]
    with pytest.raises(BridgeError, match="unknown host 'cursor'; known: claude, codex"):
        hosts.get("cursor")


def test_terminal_commands() -> None:
    assert output.terminal_command("plan") == "autopilot-codex plan"


def test_with_message_keeps_the_decision() -> None:
    answer = Answer(block="r", message="one").with_message("two")
    assert (answer.block, answer.message) == ("r", "one\ntwo")
    assert Answer().with_message("") == Answer()


def test_the_default_host_is_the_registry_s_first() -> None:
    assert hosts.HOSTS.names[0] == defaults.HOST
