"""A Codex session with the plugin, for one trial: its own `CODEX_HOME` with the user's
`config.toml` and login copied in and the plugin's hooks installed there (`install codex
--user`, which trusts them), so the user's own Codex setup is never changed.

The login's copy sits in the trial's folder, on the wall's list of what the implementer may not
read (`trial.prepare`); the folder itself cannot be: Codex runs its sandbox helper from it. The session's `TMPDIR` is a folder beside it: Codex refuses to make its
helper links in a `CODEX_HOME` under the temp folder, and every sandboxed command then fails.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
from pathlib import Path

from .context import ArmError, Context, must

FOLDER = "codex-home"
CARRIED = ("config.toml", "auth.json")


def user_codex_home(env: dict[str, str]) -> Path:
    named = env.get("CODEX_HOME", "").strip()
    return Path(named) if named else Path(env.get("HOME") or os.path.expanduser("~")) / ".codex"


def with_plugin(ctx: Context, setup_s: float) -> Context:
    """`ctx` whose environment names the trial's own CODEX_HOME, the plugin installed there."""
    env = dict(ctx.env)
    source = user_codex_home(env)
    home, tmp = ctx.scratch / FOLDER, ctx.scratch / "host-tmp"
    home.mkdir(mode=0o700)
    tmp.mkdir()
    for name in CARRIED:
        if (source / name).is_file():
            shutil.copyfile(source / name, home / name)
            (home / name).chmod(0o600)
    if not (home / "config.toml").is_file():
        raise ArmError(f"no Codex config to carry into the trial: {source / 'config.toml'}")
    walled = dataclasses.replace(ctx, env={**env, "CODEX_HOME": str(home), "TMPDIR": str(tmp)})
    must(walled.launcher("install", "codex", "--user", timeout=setup_s), "autopilot-codex install codex")
    return walled
