"""The bridge's git runs nothing the implementer planted, and hands git no secret.

Each route plants a canary program where git would find it (the repository's config, its
attributes, `~/.gitconfig`, a `git` shim first on PATH, the bridge's own environment), with
the manager's key in the environment. First the route is shown to be real: a plain git call,
as the bridge made them before, runs the canary. Then every git call the bridge makes runs
over the same repository, and the canary must never run.
"""

from __future__ import annotations

import contextlib
import json
import os
import stat
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from autopilot_codex import gitbinary as binary
from autopilot_codex import gitrepo
from autopilot_codex.checks import tree as checks_tree
from autopilot_codex.cli import main
from autopilot_codex.gitrepo import filters, runner
from autopilot_codex.paths import project_dir
from autopilot_codex.rounds import handoff, tree
from tests.conftest import (
    PLANTED_KEY,
    edit_payload,
    git,
    make_repo,
    plan_body,
    review_body,
    run_launcher,
)
from tests.fakes.openai_server import FakeOpenAI
from tests.reviews import wait_reviews

PLAIN = ["git", "-c", "core.quotepath=off"]
MARKER_HIDDEN = "MARKER-hidden-by-skip-worktree"


@dataclass(frozen=True)
class Route:
    name: str
    plant: Callable[[Path, Path, pytest.MonkeyPatch], None]
    # The plain git call that shows the route runs the canary, as args after `git`.
    control: tuple[str, ...]


def _canary(where: Path, ran: Path) -> Path:
    """A program that records that it ran, and the key if it can see one."""
    where.parent.mkdir(parents=True, exist_ok=True)
    where.write_text(f'#!/bin/sh\necho "ran key=${{OPENAI_API_KEY:-none}}" >> "{ran}"\n')
    where.chmod(0o755)
    return where


def _cfg(repo: Path, *pairs: str) -> None:
    for pair in pairs:
        key, value = pair.split("=", 1)
        git(repo, "config", key, value)


def _prog(repo: Path) -> str:
    return str(repo.parent / "planted" / "canary.sh")


def fsmonitor(repo: Path, home: Path, mp: pytest.MonkeyPatch) -> None:
    _cfg(repo, f"core.fsmonitor={_prog(repo)}")


def textconv_info(repo: Path, home: Path, mp: pytest.MonkeyPatch) -> None:
    _cfg(repo, f"diff.evil.textconv={_prog(repo)}")
    (repo / ".git/info/attributes").write_text("* diff=evil\n")


def textconv_tree(repo: Path, home: Path, mp: pytest.MonkeyPatch) -> None:
    _cfg(repo, f"diff.evil.textconv={_prog(repo)}")
    (repo / ".gitattributes").write_text("* diff=evil\n")


def external_diff(repo: Path, home: Path, mp: pytest.MonkeyPatch) -> None:
    _cfg(repo, f"diff.external={_prog(repo)}")


def driver_command(repo: Path, home: Path, mp: pytest.MonkeyPatch) -> None:
    _cfg(repo, f"diff.evil.command={_prog(repo)}")
    (repo / ".git/info/attributes").write_text("* diff=evil\n")


def clean_filter(repo: Path, home: Path, mp: pytest.MonkeyPatch) -> None:
    _cfg(repo, f"filter.evil.clean={_prog(repo)}", "filter.evil.required=true")
    (repo / ".git/info/attributes").write_text("* filter=evil\n")


def clean_filter_tree(repo: Path, home: Path, mp: pytest.MonkeyPatch) -> None:
    _cfg(repo, f"filter.Evil.clean={_prog(repo)}")
    (repo / ".gitattributes").write_text("*.txt filter=Evil\n")


def old_style_filter(repo: Path, home: Path, mp: pytest.MonkeyPatch) -> None:
    with (repo / ".git/config").open("a") as config:
        config.write(f"[FILTER.Evil]\n\tclean = {_prog(repo)}\n")
    (repo / ".git/info/attributes").write_text("* filter=evil\n")


def quoted_filter(repo: Path, home: Path, mp: pytest.MonkeyPatch) -> None:
    with (repo / ".git/config").open("a") as config:
        config.write(f'[filter "e\\"v]l"] clean = {_prog(repo)}\n')
    (repo / ".git/info/attributes").write_text('* filter=e"v]l\n')


def worktree_config_filter(repo: Path, home: Path, mp: pytest.MonkeyPatch) -> None:
    git(repo, "config", "extensions.worktreeConfig", "true")
    git(repo, "config", "--worktree", "filter.wt.clean", _prog(repo))
    (repo / ".git/info/attributes").write_text("* filter=wt\n")


def process_filter(repo: Path, home: Path, mp: pytest.MonkeyPatch) -> None:
    _cfg(repo, f"filter.evil.process={_prog(repo)}")
    (repo / ".git/info/attributes").write_text("* filter=evil\n")


def included_config(repo: Path, home: Path, mp: pytest.MonkeyPatch) -> None:
    extra = repo.parent / "planted" / "extra.cfg"
    extra.write_text(f"[core]\n\tfsmonitor = {_prog(repo)}\n")
    _cfg(repo, f"include.path={extra}")


def included_filter(repo: Path, home: Path, mp: pytest.MonkeyPatch) -> None:
    extra = repo.parent / "planted" / "extra.cfg"
    extra.write_text(f'[filter "sly"]\n\tclean = {_prog(repo)}\n')
    _cfg(repo, f"include.path={extra}")
    (repo / ".git/info/attributes").write_text("* filter=sly\n")


def index_hook(repo: Path, home: Path, mp: pytest.MonkeyPatch) -> None:
    hook = repo / ".git/hooks/post-index-change"
    hook.write_text(f"#!/bin/sh\nexec {_prog(repo)}\n")
    hook.chmod(0o755)


def hooks_path(repo: Path, home: Path, mp: pytest.MonkeyPatch) -> None:
    folder = repo.parent / "planted" / "hooks"
    folder.mkdir()
    hook = folder / "post-index-change"
    hook.write_text(f"#!/bin/sh\nexec {_prog(repo)}\n")
    hook.chmod(0o755)
    _cfg(repo, f"core.hooksPath={folder}")


def global_config(repo: Path, home: Path, mp: pytest.MonkeyPatch) -> None:
    home.mkdir(parents=True, exist_ok=True)
    (home / ".gitconfig").write_text(f"[core]\n\tfsmonitor = {_prog(repo)}\n")
    mp.delenv("GIT_CONFIG_GLOBAL")


def xdg_attributes(repo: Path, home: Path, mp: pytest.MonkeyPatch) -> None:
    (home / ".config/git").mkdir(parents=True, exist_ok=True)
    (home / ".config/git/attributes").write_text("* diff=evil\n")
    (home / ".gitconfig").write_text(f'[diff "evil"]\n\ttextconv = {_prog(repo)}\n')
    mp.delenv("GIT_CONFIG_GLOBAL")


def path_shim(repo: Path, home: Path, mp: pytest.MonkeyPatch) -> None:
    shims = home / ".local/bin"
    shims.mkdir(parents=True, exist_ok=True)
    shim = shims / "git"
    shim.write_text(f'#!/bin/sh\n{_prog(repo)}\nexec /usr/bin/git "$@"\n')
    shim.chmod(0o755)
    mp.setenv("PATH", f"{shims}{os.pathsep}{os.environ['PATH']}")


def env_external(repo: Path, home: Path, mp: pytest.MonkeyPatch) -> None:
    mp.setenv("GIT_EXTERNAL_DIFF", _prog(repo))


def env_parameters(repo: Path, home: Path, mp: pytest.MonkeyPatch) -> None:
    mp.setenv("GIT_CONFIG_PARAMETERS", f"'core.fsmonitor={_prog(repo)}'")


def env_count(repo: Path, home: Path, mp: pytest.MonkeyPatch) -> None:
    mp.setenv("GIT_CONFIG_COUNT", "1")
    mp.setenv("GIT_CONFIG_KEY_0", "core.fsmonitor")
    mp.setenv("GIT_CONFIG_VALUE_0", _prog(repo))


ROUTES = [
    Route("fsmonitor", fsmonitor, ("status",)),
    Route("textconv in info/attributes", textconv_info, ("diff", "HEAD", "--no-ext-diff")),
    Route("textconv in .gitattributes", textconv_tree, ("diff", "HEAD", "--no-ext-diff")),
    Route("diff.external", external_diff, ("diff", "HEAD")),
    Route("diff driver command", driver_command, ("diff", "HEAD")),
    Route("clean filter", clean_filter, ("diff", "HEAD", "--no-ext-diff")),
    Route("clean filter in .gitattributes", clean_filter_tree, ("diff", "HEAD")),
    Route("[filter.Name] section", old_style_filter, ("diff", "HEAD")),
    Route("filter name with quote and bracket", quoted_filter, ("diff", "HEAD")),
    Route("filter in config.worktree", worktree_config_filter, ("diff", "HEAD")),
    Route("process filter", process_filter, ("diff", "HEAD")),
    Route("include.path", included_config, ("status",)),
    Route("filter in an included file", included_filter, ("diff", "HEAD")),
    Route("post-index-change hook", index_hook, ("add", "-A")),
    Route("core.hooksPath", hooks_path, ("add", "-A")),
    Route("~/.gitconfig", global_config, ("status",)),
    Route("~/.config/git/attributes", xdg_attributes, ("diff", "HEAD")),
    Route("git shim on PATH", path_shim, ("status",)),
    Route("GIT_EXTERNAL_DIFF", env_external, ("diff", "HEAD")),
    Route("GIT_CONFIG_PARAMETERS", env_parameters, ("status",)),
    Route("GIT_CONFIG_COUNT", env_count, ("status",)),
]


def _prepared(tmp_path: Path, route: Route, mp: pytest.MonkeyPatch) -> tuple[Path, Path]:
    repo = make_repo(tmp_path / "repo", {"a.txt": "one\n", "b.txt": "two\n"})
    ran = tmp_path / "canary.log"
    _canary(Path(_prog(repo)), ran)
    route.plant(repo, Path(os.environ["HOME"]), mp)
    # Changes for every kind of call to look at: tracked, untracked, staged.
    (repo / "a.txt").write_text("one, edited\n")
    (repo / "new.txt").write_text("new\n")
    return repo, ran


def _every_bridge_call(repo: Path) -> None:
    base = gitrepo.head_sha(repo)
    gitrepo.diff_since(repo, base)
    gitrepo.diff_since(repo, gitrepo.EMPTY_TREE)
    gitrepo.commits_since(repo, gitrepo.EMPTY_TREE)
    gitrepo.tracked_files(repo)
    gitrepo.findings(repo)
    gitrepo.toplevel(repo)
    checks_tree.tree_hash(repo)
    before = tree.snapshot(repo)
    (repo / "b.txt").write_text("two, edited\n")
    after = tree.snapshot(repo)
    tree.changed_between(repo, before, after)
    handoff.prepare(repo)


@pytest.mark.parametrize("route", ROUTES, ids=[r.name for r in ROUTES])
def test_no_planted_program_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, route: Route
) -> None:
    repo, ran = _prepared(tmp_path, route, monkeypatch)
    # The route is real: git as the bridge used to call it runs the canary, key and all.
    subprocess.run([*PLAIN, *route.control], cwd=repo, capture_output=True, check=False, timeout=60)
    assert ran.exists(), f"{route.name}: the planted program should run under plain git"
    assert PLANTED_KEY in ran.read_text()
    ran.unlink()
    _every_bridge_call(repo)
    assert not ran.exists(), f"{route.name}: {ran.read_text()}"


@pytest.mark.usefixtures("unwalled")
@pytest.mark.parametrize("route", ROUTES, ids=[r.name for r in ROUTES])
def test_no_planted_program_runs_without_the_sandbox(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, route: Route
) -> None:
    """The runner's own overrides and blanked filters hold by themselves. Walled, a canary
    that runs cannot record it (tmp_path is read-only inside the sandbox), so the test above
    shows the two together; here the runner alone."""
    test_no_planted_program_runs(tmp_path, monkeypatch, route)


@pytest.mark.usefixtures("unwalled")  # the wrapper logs to tmp_path, read-only when walled
def test_git_children_get_no_secret(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every git child's environment, recorded by a trusted wrapper the user configured."""
    log = tmp_path / "env.log"
    wrapper = tmp_path / "bin" / "git-wrapper"
    wrapper.parent.mkdir()
    wrapper.write_text(
        f'#!/bin/sh\nenv -0 >> "{log}"\nprintf "\\0--\\0" >> "{log}"\nexec /usr/bin/git "$@"\n'
    )
    wrapper.chmod(0o755)
    monkeypatch.setenv(binary.OVERRIDE, str(wrapper))
    for name in ("AWS_SECRET_ACCESS_KEY", "GITHUB_TOKEN", "ANTHROPIC_API_KEY", "SSH_AUTH_SOCK"):
        monkeypatch.setenv(name, "planted-" + name)
    repo = make_repo(tmp_path / "repo", {"a.txt": "one\n"})
    git(repo, "config", "filter.x.clean", "cat")  # the filter lister runs too
    (repo / "a.txt").write_text("two\n")
    _every_bridge_call(repo)
    text = log.read_bytes().decode("utf-8", "replace")
    calls = [c for c in text.split("\0--\0") if c.strip("\0")]
    assert len(calls) >= 10
    for call in calls:
        names = {kv.split("=", 1)[0] for kv in call.split("\0") if "=" in kv}
        assert PLANTED_KEY not in call and "planted-" not in call
        assert not names & {"OPENAI_API_KEY", "HOME", "SSH_AUTH_SOCK", "GIT_DIR", "XDG_CONFIG_HOME"}
        assert {"GIT_CONFIG_NOSYSTEM", "GIT_CONFIG_GLOBAL", "GIT_ATTR_NOSYSTEM"} <= names


def test_child_env_is_an_allowlist(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SOME_SERVICE_TOKEN", "t")
    monkeypatch.setenv("GIT_EXEC_PATH", "/tmp/x")
    env = runner.child_env(index_file="/tmp/i", config=[("filter.a=b.clean", "")])
    assert "OPENAI_API_KEY" not in env and "SOME_SERVICE_TOKEN" not in env
    assert "GIT_EXEC_PATH" not in env
    assert env["GIT_INDEX_FILE"] == "/tmp/i"
    assert (env["GIT_CONFIG_KEY_0"], env["GIT_CONFIG_VALUE_0"]) == ("filter.a=b.clean", "")


def test_a_git_the_user_can_write_is_not_trusted(tmp_path: Path) -> None:
    shim = tmp_path / "git"
    shim.write_text("#!/bin/sh\n")
    shim.chmod(0o755)
    assert not binary.trusted(shim)
    assert binary.trusted(Path("/usr/bin/git"))
    resolved = binary._resolve("", f"{tmp_path}{os.pathsep}/usr/bin")
    assert resolved != str(shim) and binary.trusted(Path(resolved))
    world = tmp_path / "w"
    world.mkdir()
    (world / "git").write_bytes(shim.read_bytes())
    world.chmod(world.stat().st_mode | stat.S_IWOTH)
    assert not binary.trusted(world / "git")


@pytest.mark.parametrize(
    ("config", "names"),
    [
        ('[filter "a b"]\n', ["a b"]),
        ('[filter "q\\"x"]\n', ['q"x']),
        ("[Filter.Up]\n", ["Up", "up"]),
        ("[core]\n\tfsmonitor = false\n", []),
        ("[include]\n\tpath = x\n", None),
        ('[includeIf "gitdir:/x"]\n\tpath = x\n', None),
        ("[filterx]\n", None),
        ("[core]\n\teditor = [filter\n", None),
    ],
)
def test_filter_headers_are_read_or_left_to_git(config: str, names: list[str] | None) -> None:
    assert filters._headers(config) == names


def test_the_override_must_be_an_absolute_executable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(binary.OVERRIDE, "git")
    with pytest.raises(gitrepo.BridgeError):
        binary.git_binary()


def test_a_review_through_the_real_hooks(
    tmp_path: Path, repo: Path, manager: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    """fsmonitor planted, a symlink to `.env`, a skip-worktree edit: through the real hook
    command and its background review, the canary never runs, the manager sees the link and
    the hidden edit but not the secret, and the user gets a `git_tamper` event."""
    manager.enqueue(plan_body(2), schema="Plan")
    assert main(["-C", str(repo), "plan", "--review", "edit", "--session-id", "sess-1", "g"]) == 0
    capsys.readouterr()
    ran = tmp_path / "canary.log"
    program = _canary(tmp_path / "planted" / "canary.sh", ran)
    (repo / ".env").write_text("OPENAI_API_KEY=sk-live-SECRETVALUE\n")
    (repo / "file1.txt").symlink_to(".env")
    git(repo, "update-index", "--skip-worktree", "README.md")
    (repo / "README.md").write_text(f"# {MARKER_HIDDEN}\n")
    git(repo, "config", "core.fsmonitor", str(program))  # last: the test's own git would run it
    manager.enqueue(review_body(), schema="Review")
    hook = run_launcher(
        ["hook", "PostToolUse", "--host", "claude"], json.dumps(edit_payload(repo)).encode()
    )
    assert hook.code == 0, hook.stderr
    wait_reviews(repo)
    assert not ran.exists()
    [request] = manager.requests_for(schema="Review")
    assert "SECRETVALUE" not in request.raw_body and PLANTED_KEY not in request.raw_body
    assert "+.env" in request.prompt_text and MARKER_HIDDEN in request.prompt_text
    assert "core.fsmonitor" in request.prompt_text
    events = [
        json.loads(line) for line in (project_dir(repo) / "events.jsonl").read_text().splitlines()
    ]
    tamper = [e for e in events if e.get("event") == "git_tamper"]
    assert tamper and any("core.fsmonitor" in f for f in tamper[0]["findings"])


@pytest.mark.parametrize("walled", [True, False], ids=["walled", "unwalled"])
def test_a_git_that_hangs_is_ended(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest, walled: bool
) -> None:
    if not walled:
        request.getfixturevalue("unwalled")
    repo = make_repo(tmp_path / "repo")
    hung = tmp_path / "bin" / "git-hangs"
    hung.parent.mkdir()
    marker = f"600{os.getpid()}.{int(walled)}"  # this test's own, not another run's
    hung.write_text(f"#!/bin/sh\nexec sleep {marker}\n")
    hung.chmod(0o755)
    monkeypatch.setenv(binary.OVERRIDE, str(hung))
    monkeypatch.setattr(runner, "GIT_TIMEOUT_S", 0.2)
    with pytest.raises(gitrepo.BridgeError, match="timed out"):
        gitrepo.head_sha(repo)
    # Ended, not left running: its `timeout` and whatever it started go together.
    deadline = time.monotonic() + 60
    while _running(marker.encode()):
        assert time.monotonic() < deadline, "the hung git runs on"
        time.sleep(0.05)


def _running(marker: bytes) -> bool:
    for entry in Path("/proc").glob("[0-9]*"):
        with contextlib.suppress(OSError):
            if marker in (entry / "cmdline").read_bytes().split(b"\0"):
                return True
    return False


def test_a_partial_clone_fetches_nothing(tmp_path: Path) -> None:
    """A blob missing from a partial clone would be fetched on demand, through a program the
    config names (`remote.<name>.uploadpack`): the bridge's git makes no connection at all, and
    a call that needs the blob fails instead."""
    source = make_repo(tmp_path / "src", {"a.txt": "one\n"})
    git(source, "config", "uploadpack.allowFilter", "true")
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", "--filter=blob:none", "--no-checkout", f"file://{source}", "clone")
    ran = tmp_path / "canary.log"
    program = _canary(tmp_path / "planted" / "canary.sh", ran)
    git(clone, "config", "remote.origin.uploadpack", str(program))
    with contextlib.suppress(gitrepo.BridgeError):  # the blob is not there to diff
        gitrepo.diff_since(clone, gitrepo.head_sha(clone))
    assert not ran.exists()
    subprocess.run([*PLAIN, "show", "HEAD:a.txt"], cwd=clone, capture_output=True, check=False)
    assert ran.exists(), "the route is real: plain git runs the configured upload-pack"
