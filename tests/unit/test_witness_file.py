"""The witness file as `witness.read` takes it: a sealed witness comes back whole, and every way
a file can be untrustworthy (unreadable, not JSON, another version, a wrong seal, sealed but
malformed) is `Damaged`, never "no witness"."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from autopilot_codex import witness
from autopilot_codex.ledger import Anchor
from autopilot_codex.witness import Damaged, Witness

KEY = b"k" * 32
STATE = '{"status": "running", "note": "caf\u00e9"}\n'


def full() -> Witness:
    return Witness(
        states=(witness.digest(STATE),),
        plan=witness.digest("plan"),
        last=STATE,
        markers=(witness.ABSENT, witness.digest("m")),
        ledger=Anchor(120, "abc"),
        origin=Anchor(7, "def"),
        adopted="2026-01-01T00:00:00Z",
        serial=4,
    )


def test_a_sealed_witness_reads_back_whole(tmp_path: Path) -> None:
    path = tmp_path / "witness.json"
    path.write_text(full().to_json(KEY))
    assert witness.read(path, KEY) == full()
    # Written as text, not escaped: the state it keeps is the state's own characters.
    assert "caf\u00e9" in path.read_text()


def test_no_file_is_no_witness(tmp_path: Path) -> None:
    assert witness.read(tmp_path / "witness.json", KEY) is None


def _damaged(path: Path, match: str) -> None:
    with pytest.raises(Damaged, match=match):
        witness.read(path, KEY)


def test_an_unreadable_witness_is_damaged(tmp_path: Path) -> None:
    (tmp_path / "witness.json").mkdir()
    _damaged(tmp_path / "witness.json", "unreadable")
    path = tmp_path / "binary.json"
    path.write_bytes(b"\xff\xfe{")
    _damaged(path, "unreadable")


def test_a_witness_that_is_not_json_is_damaged(tmp_path: Path) -> None:
    path = tmp_path / "witness.json"
    path.write_text("{not json")
    _damaged(path, "not valid JSON")


def test_a_witness_of_another_version_or_shape_is_damaged(tmp_path: Path) -> None:
    path = tmp_path / "witness.json"
    data = json.loads(full().to_json(KEY))
    path.write_text(json.dumps({**data, "version": witness.VERSION - 1}))
    _damaged(path, "not a witness this version wrote")
    path.write_text(json.dumps([data]))
    _damaged(path, "not a witness this version wrote")


def test_a_witness_sealed_with_another_key_or_edited_is_damaged(tmp_path: Path) -> None:
    path = tmp_path / "witness.json"
    path.write_text(full().to_json(b"x" * 32))
    _damaged(path, "seal")
    data = json.loads(full().to_json(KEY))
    path.write_text(json.dumps({**data, "serial": 99}))
    _damaged(path, "seal")
    del data["mac"]
    path.write_text(json.dumps(data))
    _damaged(path, "seal")


def _sealed(body: dict[str, object]) -> str:
    return json.dumps({**body, "mac": witness.seal(KEY, witness._canonical(body))})


@pytest.mark.parametrize(
    "change",
    [{"states": "abc"}, {"markers": [1]}, {"ledger": {"size": "x", "mac": ""}}, {"origin": {}}],
)
def test_a_sealed_but_malformed_witness_is_damaged(
    tmp_path: Path, change: dict[str, object]
) -> None:
    body = json.loads(full().to_json(KEY))
    del body["mac"]
    path = tmp_path / "witness.json"
    path.write_text(_sealed({**body, **change}))
    _damaged(path, "malformed")


def test_no_markers_recorded_vouches_for_any_marker() -> None:
    assert Witness().vouches_marker("anything\n") and Witness().vouches_marker(None)
    only_absent = Witness(markers=(witness.ABSENT,))
    assert only_absent.vouches_marker(None) and not only_absent.vouches_marker("m")


# A witness as this format writes it, byte for byte: one written before an upgrade must still
# verify after it, so the version, the defaults and the sealed canonical text cannot drift.
GOLDEN = (
    '{"version": 2, "states": ["abc"], "plan": "", "last": "caf\u00e9\\n", "markers": [], '
    '"ledger": {"size": 0, "mac": ""}, "origin": {"size": 0, "mac": ""}, "adopted": "", '
    '"serial": 0, "mac": "25688155b7f6dfdd2e53fe800e648c2eb3da868d0b3add9562b6564c8ee39785"}\n'
)


def test_the_witness_format_is_stable(tmp_path: Path) -> None:
    seen = Witness(states=("abc",), last="caf\u00e9\n")
    assert seen.to_json(KEY) == GOLDEN
    path = tmp_path / "witness.json"
    path.write_text(GOLDEN)
    assert witness.read(path, KEY) == seen


def test_a_witness_is_a_value_not_a_record_to_edit() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        Witness().serial = 5  # type: ignore[misc]


def test_a_witness_text_seen_before_is_not_checked_again_and_any_other_is(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A hook reads its witness up to three times: a text this process sealed or verified
    (with this key) comes back without parsing or sealing it again; any other text, even one
    differing by a byte or only by the key, is checked in full."""
    path = tmp_path / "witness.json"
    texts = [full().evolve(serial=n).to_json(KEY) for n in range(witness._KEEP + 1)]
    sealed: list[str] = []
    real = witness.seal

    def counted(key: bytes, text: str) -> str:
        sealed.append(text)
        return real(key, text)

    monkeypatch.setattr(witness, "seal", counted)
    path.write_text(texts[-1])
    assert witness.read(path, KEY) == full().evolve(serial=witness._KEEP)
    assert sealed == []  # sealed here a moment ago
    # The first text was let go for the newer ones: read again, it is checked again.
    path.write_text(texts[0])
    assert witness.read(path, KEY) == full().evolve(serial=0)
    assert len(sealed) == 1
    assert witness.read(path, KEY) == full().evolve(serial=0)
    assert len(sealed) == 1
    path.write_text(texts[0].replace('"serial": 0', '"serial": 9'))
    _damaged(path, "seal")
    path.write_text(texts[0])
    with pytest.raises(Damaged, match="seal"):
        witness.read(path, b"x" * 32)
