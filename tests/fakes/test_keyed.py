"""`Keyed`: scripts answered by what a request says, and the meeting of callers asking at once."""

from __future__ import annotations

import json
import threading

from tests.e2e.fake_anthropic import FakeAnthropic, Text
from tests.e2e.test_fake_anthropic import AGENT_TOOLS, call

from .keyed import Keyed

PATTERN = r"lane=(\w+)"


def waiting(keyed: Keyed[str], raw: str) -> tuple[threading.Thread, list[str | None]]:
    """`raw` asked on a thread of its own, still held a moment later (its answer lands in the
    list once let go)."""
    got: list[str | None] = []
    thread = threading.Thread(target=lambda: got.append(keyed(raw)))
    thread.start()
    thread.join(0.2)
    assert thread.is_alive() and got == []
    return thread, got


def test_each_key_gets_its_own_script_in_order_whatever_the_interleaving() -> None:
    keyed = Keyed({"a": ["a1", "a2"], "b": ["b1"]}, PATTERN)
    assert keyed("lane=b") == "b1"
    assert keyed("x lane=zz lane=a") == "a1"  # the first known key counts
    assert keyed("lane=a") == "a2"
    assert keyed("lane=a") is None  # used up: the fake answers as before
    assert keyed("lane=zz") is None and keyed("nothing") is None
    assert {k: len(v) for k, v in keyed.asked.items()} == {"b": 1, "a": 3}
    assert keyed.missed == []


def test_first_requests_wait_until_every_key_asked() -> None:
    keyed = Keyed({"a": ["a1"], "b": ["b1"]}, PATTERN, meet=2)
    # Held: nothing but the meeting's other side can let it go.
    first, got = waiting(keyed, "lane=a")
    assert keyed("lane=b") == "b1"
    first.join(10)
    assert got == ["a1"] and keyed.missed == []


def test_a_meeting_that_never_happens_lets_the_request_go_and_says_so() -> None:
    keyed = Keyed({"a": ["a1"], "b": ["b1"]}, PATTERN, meet=2, timeout_s=0.01)
    assert keyed("lane=a") == "a1"
    assert keyed.missed == ["a"]


def test_the_fake_anthropic_asks_its_chooser_before_its_script() -> None:
    with FakeAnthropic(script=[[Text("from the script")]]) as fake:
        fake.chooser = Keyed({"a": [[Text("from a")]]}, PATTERN)
        for text in ("lane=a", "lane=b"):
            body = {"messages": [{"role": "user", "content": text}], "tools": AGENT_TOOLS}
            status, _, _ = call(fake, "POST", "/v1/messages", body)
            assert status == 200
        assert [r.response_blocks[0]["text"] for r in fake.main_requests()] == [
            "from a",
            "from the script",
        ]
        assert [r.turn for r in fake.main_requests()] == [None, 0]


def test_a_held_key_waits_at_its_first_request_until_released() -> None:
    release = threading.Event()
    keyed = Keyed({"a": ["a1", "a2"], "b": ["b1"]}, PATTERN, holds={"a": release})
    first, got = waiting(keyed, "lane=a")
    # Held, yet seen as asked (what a test waits on); other keys go on.
    assert "a" in keyed.asked
    assert keyed("lane=b") == "b1"
    release.set()
    first.join(10)
    assert got == ["a1"] and keyed("lane=a") == "a2" and keyed.missed == []


def test_a_hold_never_released_lets_the_request_go_and_says_so() -> None:
    keyed = Keyed({"a": ["a1"]}, PATTERN, holds={"a": threading.Event()}, timeout_s=0.01)
    assert keyed("lane=a") == "a1"
    assert keyed.missed == ["a"]


def test_the_fake_anthropic_reports_a_fixed_input_size_when_told() -> None:
    with FakeAnthropic(script=[[Text("one")], [Text("two")]]) as fake:
        body = {"messages": [{"role": "user", "content": "hi"}], "tools": AGENT_TOOLS}
        _, _, first = call(fake, "POST", "/v1/messages", body)
        fake.input_tokens = 1000
        _, _, second = call(fake, "POST", "/v1/messages", body)
    assert json.loads(first)["usage"]["input_tokens"] != 1000
    assert json.loads(second)["usage"]["input_tokens"] == 1000


def test_serial_keys_get_their_first_turn_one_at_a_time() -> None:
    keyed = Keyed({"a": ["a1", "a2"], "b": ["b1", "b2"]}, PATTERN, serial=True)
    assert keyed("lane=a") == "a1"
    # b's first turn waits while a's is out; a coming back lets it go.
    second, got = waiting(keyed, "lane=b")
    assert keyed("lane=a") == "a2"
    second.join(10)
    assert got == ["b1"] and keyed("lane=b") == "b2" and keyed.missed == []


def test_a_serial_turn_never_given_back_lets_the_next_go_and_says_so() -> None:
    keyed = Keyed({"a": ["a1"], "b": ["b1"]}, PATTERN, serial=True, timeout_s=0.01)
    assert keyed("lane=a") == "a1"
    assert keyed("lane=b") == "b1"
    assert keyed.missed == ["b"]
