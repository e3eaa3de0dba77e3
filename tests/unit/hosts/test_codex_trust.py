"""Codex hook trust: the hash recipe, the keys, and editing only our own TOML tables."""

from __future__ import annotations

import hashlib
import sys

import pytest

from autopilot_codex.errors import BridgeError
from autopilot_codex.hosts.codex.trust import (
    read_trusted,
    remove_trust,
    set_trust,
    trust_entries,
    trust_key,
    trusted_hash,
)

HAS_TOMLLIB = sys.version_info >= (3, 11)


def sha(text: str) -> str:
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()


def test_the_hash_is_over_the_compact_sorted_identity() -> None:
    handler = {"type": "command", "command": "run x"}
    assert trusted_hash("Stop", None, handler) == sha(
        '{"event_name":"stop","hooks":[{"async":false,"command":"run x","timeout":600,"type":"command"}]}'
    )
    with_matcher = trusted_hash(
        "PostToolUse", "apply_patch", {**handler, "timeout": 30, "statusMessage": "reviewing"}
    )
    assert with_matcher == sha(
        '{"event_name":"post_tool_use","hooks":[{"async":false,"command":"run x",'
        '"statusMessage":"reviewing","timeout":30,"type":"command"}],"matcher":"apply_patch"}'
    )


def test_stop_ignores_its_matcher_and_every_field_counts() -> None:
    handler = {"type": "command", "command": "run x", "timeout": 30}
    assert trusted_hash("Stop", "anything", handler) == trusted_hash("Stop", None, handler)
    base = trusted_hash("PreToolUse", None, handler)
    assert trusted_hash("PreToolUse", "Bash", handler) != base
    assert trusted_hash("PreToolUse", None, {**handler, "timeout": 31}) != base
    assert trusted_hash("PreToolUse", None, {**handler, "command": "run y"}) != base
    assert trusted_hash("PreToolUse", None, {**handler, "async": True}) != base
    assert trusted_hash("PreToolUse", None, {**handler, "timeout": 0}) == trusted_hash(
        "PreToolUse", None, {**handler, "timeout": 1}
    )


def test_keys_name_file_event_group_and_handler() -> None:
    assert trust_key("/h/hooks.json", "PreToolUse", 2, 0) == "/h/hooks.json:pre_tool_use:2:0"
    with pytest.raises(BridgeError):
        trust_key("/h/hooks.json", "PostToolUseFailure", 0, 0)


def test_entries_cover_every_command_handler() -> None:
    command = {"type": "command", "command": "c"}
    document = {
        "description": "ignored",
        "hooks": {
            "Stop": [{"hooks": [command, {"type": "prompt", "prompt": "p"}, command]}],
            "PreToolUse": [{"hooks": [command]}, {"matcher": "Bash", "hooks": [command]}],
            "NotAnEvent": [{"hooks": [command]}],
        },
    }
    entries = trust_entries("/h/hooks.json", document)
    assert sorted(entries) == [
        "/h/hooks.json:pre_tool_use:0:0",
        "/h/hooks.json:pre_tool_use:1:0",
        "/h/hooks.json:stop:0:0",
        "/h/hooks.json:stop:0:2",
    ]
    assert entries["/h/hooks.json:pre_tool_use:1:0"] == trusted_hash("PreToolUse", "Bash", command)


USER_TOML = """# my settings
model = "gpt-5.5"   # keep this comment

[projects."/src/app"]
trust_level = "trusted"

[hooks.state."/h/hooks.json:stop:0:0"]
trusted_hash = "sha256:old"
enabled = true

[tui]
notifications = false"""


@pytest.mark.parametrize("text", ["", "a = 1\n", "a = 1\n\n\n", USER_TOML, USER_TOML + "\n"])
def test_appending_and_removing_gives_the_text_back(text: str) -> None:
    entries = {'/h/x "q".json:stop:0:0': "sha256:aa", "/h/x.json:pre_tool_use:0:0": "sha256:bb"}
    added = set_trust(text, entries)
    if HAS_TOMLLIB:
        assert read_trusted(added).items() >= entries.items()
    restored = remove_trust(added, list(entries))
    assert restored == (text + "\n" if text and not text.endswith("\n") else text)


def test_an_existing_table_of_ours_is_updated_in_place() -> None:
    updated = set_trust(USER_TOML, {"/h/hooks.json:stop:0:0": "sha256:new"})
    assert updated == USER_TOML.replace('"sha256:old"', '"sha256:new"')
    if HAS_TOMLLIB:
        assert read_trusted(updated) == {"/h/hooks.json:stop:0:0": "sha256:new"}
    removed = remove_trust(updated, ["/h/hooks.json:stop:0:0"])
    assert "hooks.state" not in removed
    assert removed.startswith('# my settings\nmodel = "gpt-5.5"   # keep this comment\n')
    assert removed.endswith('trust_level = "trusted"\n\n[tui]\nnotifications = false')


@pytest.mark.parametrize(
    "text",
    [
        '[hooks]\nstate = { "k" = { trusted_hash = "x" } }\n',
        'hooks.state."/h/hooks.json:stop:0:0".trusted_hash = "x"\n',
        "[hooks.state]\n'/h/hooks.json:stop:0:0' = { trusted_hash = 'x' }\n",
        "hooks = { state = {} }\n",
    ],
)
def test_inline_hooks_state_is_left_alone(text: str) -> None:
    with pytest.raises(BridgeError, match="dangerously-bypass-hook-trust"):
        set_trust(text, {"/h/hooks.json:stop:0:0": "sha256:aa"})


@pytest.mark.skipif(not HAS_TOMLLIB, reason="the parse check needs tomllib (Python 3.11+)")
def test_a_result_that_would_not_parse_is_refused() -> None:
    broken = "[hooks.state]\n[hooks.state]\n"  # a duplicate table the user already has
    with pytest.raises(BridgeError, match="would not parse"):
        set_trust(broken, {"k": "sha256:aa"})
