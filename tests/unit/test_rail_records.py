"""The rails as records: every rule has a doc row in the README and the skill, every doc row a
rule, and the committed tables are the ones the records render."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from autopilot_codex import hosts
from autopilot_codex.rails import doc
from autopilot_codex.rails.records import RULE_IDS, RULES
from autopilot_codex.rails.rules import Where
from autopilot_codex.rails.shell import Command

ROOT = Path(__file__).resolve().parents[2]


def table_ids(path: Path) -> list[str]:
    text = path.read_text(encoding="utf-8")
    _head, _begin, rest = text.partition(doc.BEGIN)
    table, _end, _tail = rest.partition(doc.END)
    return re.findall(r"^\| `([^`]+)` \|", table, re.MULTILINE)


@pytest.mark.parametrize("path", [doc.SKILL, doc.README])
def test_every_rule_has_one_doc_row_and_every_row_a_rule(path: Path) -> None:
    ids = table_ids(ROOT / path)
    assert sorted(ids) == sorted(RULE_IDS), f"{path}: run python -m autopilot_codex.rails.doc"
    assert len(ids) == len(set(ids))


def test_the_committed_tables_are_the_ones_the_records_render() -> None:
    assert doc.stale(ROOT) == [], "run: python -m autopilot_codex.rails.doc"


def test_a_table_row_without_a_rule_is_caught(tmp_path: Path) -> None:
    for path in (doc.SKILL, doc.README):
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        text = (ROOT / path).read_text(encoding="utf-8")
        extra = text.replace(doc.END, "| `no-such-rule` | x | x |\n" + doc.END)
        (tmp_path / path).write_text(extra, encoding="utf-8")
    assert doc.stale(tmp_path) == [doc.SKILL, doc.README]
    assert "no-such-rule" in table_ids(tmp_path / doc.SKILL)


def test_the_generator_rewrites_and_checks(tmp_path: Path) -> None:
    for path in (doc.SKILL, doc.README):
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(f"intro\n{doc.BEGIN}\nold\n{doc.END}\nrest\n", "utf-8")
    check = [sys.executable, "-m", "autopilot_codex.rails.doc", "--root", str(tmp_path)]
    assert subprocess.run([*check, "--check"], capture_output=True).returncode == 1
    assert subprocess.run(check, capture_output=True).returncode == 0
    assert subprocess.run([*check, "--check"], capture_output=True).returncode == 0
    assert sorted(table_ids(tmp_path / doc.SKILL)) == sorted(RULE_IDS)


def test_every_rule_is_a_whole_record() -> None:
    assert len(RULE_IDS) == len(set(RULE_IDS))
    for rule in RULES:
        assert re.fullmatch(r"[a-z][a-z-]*", rule.id)
        assert rule.why and rule.doc[0], rule.id
        # Only the user's own patterns are judged outside the records.
        assert rule.match or rule.id == "user-deny", rule.id


def test_a_program_may_meet_several_rules() -> None:
    # helm has an infrastructure verb and a publishing one: neither replaces the other.
    where = Where(Path("/wt"), Path("/state"), Path("/state/config.json"), False, hosts.roster())

    def ids(*argv: str) -> list[str]:
        command = Command(argv, " ".join(argv), "/wt")
        return [r.id for r in RULES for match in r.match if match(command, where)]

    assert ids("helm", "push", "chart.tgz", "oci://x.example") == ["publish"]
    assert ids("helm", "-n", "prod", "upgrade", "web", "./chart") == ["infra"]
