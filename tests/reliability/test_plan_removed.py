"""A state whose plan.json is gone is set aside as damaged, and says why."""

from __future__ import annotations

from pathlib import Path

from autopilot_codex.paths import active_marker, project_dir
from tests.conftest import payload
from tests.fakes.openai_server import FakeOpenAI
from tests.reliability.conftest import Hook, events_of, state_path


def test_a_state_without_its_plan_is_quarantined_as_such(
    planned: Path, manager: FakeOpenAI, hook: Hook
) -> None:
    (project_dir(planned) / "plan.json").unlink()
    result = hook("Stop", payload("Stop", planned))
    assert result.code == 0
    corrupt = [e for e in events_of(planned) if e["event"] == "state.corrupt"]
    assert len(corrupt) == 1 and corrupt[0]["reason"].startswith("without its plan.json"), corrupt
    assert not state_path(planned).exists()
    assert len(list(project_dir(planned).glob("state.json.corrupt-*"))) == 1
    # Damage is never a verdict: no manager call, and the rails stay on.
    assert manager.requests_for(schema="Verdict") == []
    assert active_marker(planned).exists()
