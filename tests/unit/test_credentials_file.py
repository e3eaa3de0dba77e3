"""The stored login's file at its edges: what is not a login reads as none, and a folder that
is not the user's own is never written into."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from autopilot_codex import credentials
from autopilot_codex.credentials import Credentials
from autopilot_codex.errors import BridgeError

KEY = "sk-test-credentials-0123456789"


@pytest.mark.parametrize(
    "text",
    ['["sk-a"]', '{"api_key": 3}', '{"api_key": "  "}', "not json", '{"other": "x"}'],
)
def test_a_file_that_holds_no_key_is_no_login(tmp_path: Path, text: str) -> None:
    where = credentials.path(tmp_path)
    where.parent.mkdir(parents=True)
    where.write_text(text)
    assert credentials.load(tmp_path) is None


def test_fields_that_are_not_text_are_read_as_empty(tmp_path: Path) -> None:
    where = credentials.path(tmp_path)
    where.parent.mkdir(parents=True)
    where.write_text(json.dumps({"api_key": f" {KEY} ", "base_url": 5, "organization": None}))
    assert credentials.load(tmp_path) == Credentials(KEY, "", "")


def test_a_file_where_the_secret_folder_belongs_is_never_written_into(tmp_path: Path) -> None:
    folder = credentials.path(tmp_path).parent
    folder.parent.mkdir(parents=True, exist_ok=True)
    folder.write_text("a file, not a folder\n")
    with pytest.raises(BridgeError, match="is not a folder of yours: nothing was stored"):
        credentials.save(Credentials(KEY), tmp_path)
    assert folder.read_text() == "a file, not a folder\n"


def test_the_key_is_one_printable_word() -> None:
    assert credentials.check_key(f"  {KEY}\n") == KEY
    for bad in ("", "   ", "sk two", "sk-\x07bell"):
        with pytest.raises(BridgeError, match="nothing was stored"):
            credentials.check_key(bad)
