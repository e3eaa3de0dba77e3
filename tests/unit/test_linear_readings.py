"""The one-pass readings that replaced backtracking patterns answer as those patterns did.

Each pattern is kept here as the specification (`tests/reliability/test_redos.py` has the
texts that made it run for hours) and compared with its replacement on many small random
texts of the pieces that matter to it.
"""

from __future__ import annotations

import random
import re

from autopilot_codex import credentials
from autopilot_codex.checks.detect import _names_test
from autopilot_codex.hosts.codex import _PATCH_PATH
from autopilot_codex.rounds.markers import _blank_spans
from autopilot_codex.styles.ralph.reducer import _tags

TRIES = 5_000


def texts(seed: int, pieces: list[str], most: int) -> list[str]:
    rng = random.Random(seed)
    return ["".join(rng.choices(pieces, k=rng.randint(0, most))) for _ in range(TRIES)]


def test_promise_tags_are_the_lazy_pattern_s_matches() -> None:
    pattern = re.compile(r"<promise>(.*?)</promise>", re.DOTALL)
    for text in texts(1, ["<promise>", "</promise>", "A", " ", "\n"], 10):
        want = [(m.start(), m.end(), m.group(1)) for m in pattern.finditer(text)]
        assert list(_tags(text)) == want, text


def test_code_spans_are_blanked_as_the_backreference_pattern_blanked_them() -> None:
    pattern = re.compile(r"(`+).*?\1")
    for line in texts(2, ["`", "`", "a", " "], 16):
        assert _blank_spans(line) == pattern.sub(lambda m: " " * len(m.group(0)), line), line


def test_patch_paths_are_the_lazy_pattern_s_groups() -> None:
    pattern = re.compile(r"^\*\*\* (?:Add File|Update File|Delete File|Move to): (.+?)\s*$", re.M)
    pieces = ["*** Add File: ", "*** Move to: ", "a", " ", "\n", "\t", "\r", "\u2003", "b c"]
    for patch in texts(3, pieces, 10):
        paths = [p.rstrip() or p[:1] for p in _PATCH_PATH.findall(patch)]
        assert paths == pattern.findall(patch), patch


def test_a_makefile_s_test_rule_is_found_where_the_pattern_found_it() -> None:
    pattern = re.compile(
        r"^(?:[^:#=\s]+[ \t]+)*test(?:[ \t]+[^:#=\s]+)*[ \t]*:(?![=:]?=)", re.MULTILINE
    )
    pieces = ["test", "test", " ", "\t", ":", "=", "#", "a", "\n", "\r", "\u00a0", "tests"]
    for text in texts(4, pieces, 9):
        found = any(_names_test(line) for line in text.split("\n"))
        assert found == (pattern.search(text) is not None), text


def test_keys_are_redacted_as_the_pattern_did_or_more() -> None:
    """The same text out, except where a token ran into a key's header: the pattern then
    redacted the token and left the key's body; the one pass redacts both."""
    pattern = re.compile(
        r"(sk-[A-Za-z0-9_\-]{16,}|AKIA[0-9A-Z]{16}|gh[pousr]_[A-Za-z0-9]{30,}|"
        r"-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z ]*PRIVATE KEY-----)"
    )
    pieces = [
        "-----BEGIN PRIVATE KEY-----",
        "-----BEGIN RSA PRIVATE KEY-----",
        "-----END PRIVATE KEY-----",
        "body",
        "\n",
        " ",
        "sk-" + "a" * 16,
    ]
    for text in texts(5, pieces, 8):
        old = pattern.sub("[REDACTED]", text)
        new = credentials._TOKEN.sub("[REDACTED]", credentials._without_keys(text))
        if "sk-" not in text:
            assert new == old, text
        else:
            assert len(new.replace("[REDACTED]", "")) <= len(old.replace("[REDACTED]", ""))
