"""What Codex's own tool arguments ask of its sandbox, which no hook reads: on the real CLI.

`exec_command` takes `sandbox_permissions: "require_escalated"` (run unsandboxed) and
`"with_additional_permissions"` (more paths, the network); its hooks see the command alone.
Under the wall's profile each must still fail: `codex exec` (a round) runs with the approval
policy `never` whatever the user's config says, and refuses both; nothing is written outside
the worktree or to the files git runs. (In the user's own interactive session, Codex asks the
user, whose answer it is.)
"""

from __future__ import annotations

import pytest

from autopilot_codex.hosts.codex.boundary import boundary_overrides, prepare_worktree

from .codex_fixtures import CodexRunner
from .fake_codex_model import Call, FakeCodexModel
from .test_wall_e2e import KEY, Scene
from .test_wall_e2e import _sandbox_tools as _sandbox_tools  # noqa: F401 (fixture)
from .test_wall_e2e import scene as scene  # noqa: F401 (fixture)

pytestmark = pytest.mark.e2e


def test_codex_walled_an_escalation_asked_in_the_tool_call_runs_nothing_outside(
    codex: CodexRunner, fake_codex: FakeCodexModel, scene: Scene
) -> None:
    spec = scene.spec()
    prepare_worktree(spec)
    before = (scene.repo / ".git" / "config").read_bytes()
    out = scene.outside
    fake_codex.script = [
        [
            Call(
                "exec_command",
                {
                    "cmd": f"echo pwned > {out}/escalated.txt; echo x >> .git/config",
                    "sandbox_permissions": "require_escalated",
                    "justification": "needed",
                },
            )
        ],
        [
            Call(
                "exec_command",
                {
                    "cmd": f"echo pwned > {out}/more.txt",
                    "sandbox_permissions": "with_additional_permissions",
                    "additional_permissions": {
                        "file_system": {"write": [str(out)]},
                        "network": {"enabled": True},
                    },
                    "justification": "needed",
                },
            )
        ],
        "Done.",
    ]
    # A user's config asking for approvals: `codex exec` (a round) runs with `never` all the same.
    asks = ["-c", 'approval_policy="on-request"']
    extra_args = asks + [arg for item in boundary_overrides(spec) for arg in ("-c", item)]
    run = codex("work", extra_args=extra_args, extra_env={"OPENAI_API_KEY": KEY})
    assert run.ok, run.describe()
    last = fake_codex.model_requests[-1]
    outputs = [str(i.get("output")) for i in last.input if i.get("type") == "function_call_output"]
    assert len(outputs) == 2, run.describe()
    assert all("approval policy is Never" in o for o in outputs), outputs
    assert list(out.iterdir()) == [], run.describe()
    assert (scene.repo / ".git" / "config").read_bytes() == before
