"""The resident helper (issue 26): a hook it answers says what the direct path says, and a
helper that is missing, killed, hung, of another release or in a folder someone else could
write never costs a hook its answer.

Every hook here runs through the real launcher with the helper on (the suite turns it off
elsewhere). PreToolUse is the probe: the rails answer it for every session, and a force push
is denied whatever path answers.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from autopilot_codex import helper
from autopilot_codex.cli import main
from tests.conftest import (
    HookRun,
    edit_state,
    make_repo,
    payload,
    plan_body,
    run_launcher,
    state_of,
)
from tests.fakes.openai_server import FakeOpenAI

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="SO_PEERCRED")

ON = {"AUTOPILOT_CODEX_HELPER": "1", "AUTOPILOT_CODEX_HELPER_STATS": "1"}
OFF = {"AUTOPILOT_CODEX_HELPER": "0"}
# Generous: how long a helper may take to start on a loaded machine (polled, not slept).
START_S = 120.0


def force_push(repo: Path) -> bytes:
    import json

    data = payload("PreToolUse", repo, tool_name="Bash", tool_input={"command": "git push -f"})
    return json.dumps(data).encode()


def hook(repo: Path, env: dict[str, str] = ON) -> HookRun:
    return run_launcher(["hook", "PreToolUse", "--host", "claude"], force_push(repo), env=env)


def denied(result: HookRun) -> bool:
    decision = result.json.get("hookSpecificOutput", {}).get("permissionDecision")
    return result.code == 0 and decision == "deny"


def run_dir(home: Path) -> Path:
    return Path(helper.run_dir(str(home)))


def paths(home: Path) -> tuple[Path, Path, Path]:
    sock, lock, start = helper.names(str(home), helper.version())
    return Path(sock), Path(lock), Path(start)


def answered_by_helper(home: Path) -> int:
    """How many hooks the helper's children answered (its benchmark accounting)."""
    files = list(run_dir(home).glob("helper-*.cpu"))
    return sum(len(f.read_text().split()) for f in files)


def helper_pid(home: Path) -> int:
    """The helper's pid, as the kernel names the process listening on its socket."""
    return _pid_at(paths(home)[0], quiet=False)


def alive(pid: int) -> bool:
    """Running (a zombie nobody reaped yet counts as gone)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[-1].split()[0] != "Z"


def wait_for(condition: object, what: str, timeout: float = START_S) -> None:
    deadline = time.monotonic() + timeout
    while not condition():  # type: ignore[operator]
        assert time.monotonic() < deadline, what
        time.sleep(0.05)


@pytest.fixture
def loop(
    repo: Path, manager: FakeOpenAI, isolated: Path, capsys: pytest.CaptureFixture[str]
) -> Iterator[Path]:
    manager.enqueue(plan_body(2), schema="Plan")
    assert main(["-C", str(repo), "plan", "--session-id", "sess-1", "write", "files"]) == 0
    capsys.readouterr()
    yield repo
    # Whatever a test left: end the helpers of this state home (our own processes only).
    sock = paths(isolated)[0]
    if sock.exists():
        try:
            pid = helper_pid(isolated)
            # A helper runs in a session of its own; never this process (a FakeHelper) or its group.
            if pid != os.getpid() and os.getpgid(pid) == pid:
                os.killpg(pid, signal.SIGKILL)
        except OSError:
            pass


def warm(repo: Path, home: Path) -> int:
    """Start the helper through a hook and wait until it answers one; its pid."""
    assert denied(hook(repo))  # no helper yet: the direct path answers, and starts one
    wait_for(lambda: paths(home)[0].exists(), "the helper never started")
    before = answered_by_helper(home)
    assert denied(hook(repo))
    wait_for(lambda: answered_by_helper(home) > before, "the helper did not answer")
    return helper_pid(home)


def test_the_helper_answers_as_the_direct_path(loop: Path, isolated: Path) -> None:
    direct = hook(loop, OFF)
    warm(loop, isolated)
    before = answered_by_helper(isolated)
    helped = hook(loop)
    wait_for(lambda: answered_by_helper(isolated) > before, "the helper did not answer")
    assert denied(direct)
    assert (helped.code, helped.stdout, helped.stderr) == (
        direct.code,
        direct.stdout,
        direct.stderr,
    )
    info = os.lstat(run_dir(isolated))
    assert info.st_mode & 0o777 == 0o700
    assert os.lstat(paths(isolated)[0]).st_mode & 0o077 == 0


def test_a_killed_helper_costs_no_answer_and_is_started_again(loop: Path, isolated: Path) -> None:
    pid = warm(loop, isolated)
    os.killpg(os.getpgid(pid), signal.SIGKILL)
    wait_for(lambda: not alive(pid), "the helper did not die")
    assert paths(isolated)[0].exists()  # a dead helper's socket stays behind
    assert denied(hook(loop))
    # The next start attempt is allowed once RESPAWN_S has passed since the last one.
    start = paths(isolated)[2]
    old = time.time() - helper.RESPAWN_S - 1
    os.utime(start, (old, old))
    assert denied(hook(loop))
    wait_for(lambda: _new_helper(isolated, pid), "no new helper was started")
    before = answered_by_helper(isolated)
    assert denied(hook(loop))
    wait_for(lambda: answered_by_helper(isolated) > before, "the new helper did not answer")


def _new_helper(home: Path, old: int) -> bool:
    try:
        return helper_pid(home) != old
    except OSError:
        return False


def test_a_hung_helper_costs_no_answer_and_is_replaced(loop: Path, isolated: Path) -> None:
    pid = warm(loop, isolated)
    group = os.getpgid(pid)
    os.killpg(group, signal.SIGSTOP)  # the helper and its waiting child: accepted, never read
    try:
        before = answered_by_helper(isolated)
        assert denied(hook(loop))  # after READY_TIMEOUT_S, by the direct path
        assert answered_by_helper(isolated) == before
        wait_for(lambda: not alive(pid), "the hung helper was not ended")
        assert not paths(isolated)[0].exists()  # its socket was taken away
    finally:
        os.killpg(group, signal.SIGKILL)


class FakeHelper:
    """A socket at the helper's path that answers as `reply` says, and records what it got."""

    def __init__(self, path: Path, reply: bytes) -> None:
        self.reply = reply
        self.received = b""
        self.connections = 0
        here = os.getcwd()
        self.server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        os.chdir(path.parent)
        try:
            self.server.bind(path.name)
        finally:
            os.chdir(here)
        self.server.listen(4)
        Path(helper.token_path(str(path))).write_bytes(b"planted")
        self.thread = threading.Thread(target=self.serve, daemon=True)
        self.thread.start()

    def serve(self) -> None:
        while True:
            try:
                conn, _ = self.server.accept()
            except OSError:
                return
            self.connections += 1
            with conn:
                conn.settimeout(5)
                try:
                    self.received += conn.recv(1 << 20)
                    if not self.reply:
                        continue  # closes at once
                    conn.sendall(self.reply)
                    self.received += conn.recv(16)
                except OSError:
                    pass

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.server.shutdown(socket.SHUT_RDWR)  # wakes the accept() of serve
        self.server.close()
        self.thread.join(timeout=10)


@pytest.mark.parametrize(
    "reply",
    [
        b"Rapc-helper-1|0.0.9|/old/plugin/bridge|/usr/bin/python3|30a00f0\n",  # an older release
        b"S\n",  # one that knows it is stale
        b"hello\n",  # not a helper at all
        b"",  # one that closes at once
    ],
)
def test_a_helper_of_another_release_is_never_used(
    loop: Path, isolated: Path, reply: bytes
) -> None:
    sock, lock, start = paths(isolated)
    sock.parent.mkdir(mode=0o700, parents=True)
    start.touch()  # no real helper is started meanwhile
    fake = FakeHelper(sock, reply)
    try:
        assert denied(hook(loop))
    finally:
        fake.close()
    assert fake.connections == 1
    assert not fake.received.endswith(b"G")  # it was never told to go on


@pytest.mark.parametrize(("wall", "code"), [("on", 2), ("off", 0)])
def test_a_child_that_takes_the_hook_and_dies_fails_closed_in_a_walled_loop(
    loop: Path, isolated: Path, wall: str, code: int
) -> None:
    """Issue 33: a helper's child that crashed after the go wrote no answer; the hook must not
    read that silence as an allow. A harmless `ls` is denied (exit 2, the reason on stderr)
    in a walled loop; an unguarded loop skips the hook as before."""
    edit_state(loop, wall=wall)
    sock, _, start = paths(isolated)
    sock.parent.mkdir(mode=0o700, parents=True)
    start.touch()  # no real helper is started meanwhile
    fake = FakeHelper(sock, b"R" + helper.version().encode() + b"\n")  # says go, then dies
    data = payload("PreToolUse", loop, tool_name="Bash", tool_input={"command": "ls"})
    try:
        result = run_launcher(
            ["hook", "PreToolUse", "--host", "claude"], json.dumps(data).encode(), env=ON
        )
    finally:
        fake.close()
    assert fake.received.endswith(b"G")  # the child had the hook: it is not run again here
    what = (
        "autopilot-codex: internal error in the PreToolUse hook (ChildDied: the helper's "
        "child ended without answering)"
    )
    tail = (
        ". This call is denied: the loop is guarded and its supervisor could not judge it.\n"
        if code
        else "; this hook was skipped\n"
    )
    assert (result.code, result.stdout, result.stderr) == (code, "", what + tail)


def test_a_socket_in_a_folder_others_can_write_is_not_used(loop: Path, isolated: Path) -> None:
    sock = paths(isolated)[0]
    sock.parent.mkdir(mode=0o700, parents=True)
    paths(isolated)[2].touch()
    fake = FakeHelper(sock, b"R" + helper.version().encode() + b"\n")
    sock.parent.chmod(0o755)
    try:
        assert denied(hook(loop))
    finally:
        fake.close()
    assert fake.connections == 0


def test_the_helper_exits_when_its_socket_is_removed(loop: Path, isolated: Path) -> None:
    pid = warm(loop, isolated)
    paths(isolated)[0].unlink()
    wait_for(lambda: not alive(pid), "the helper outlived its socket")


def test_a_request_without_the_helpers_secret_runs_nothing(loop: Path, isolated: Path) -> None:
    """What a process that cannot read the state home (the implementer's sandbox) could send:
    everything a hook sends but the secret. The helper's child refuses it."""
    warm(loop, isolated)
    before = answered_by_helper(isolated)
    sock = paths(isolated)[0]
    fields = [
        helper.version().encode(),
        b"PreToolUse\0--host\0claude",
        b"PATH=/usr/bin",
        b"18",
        str(loop).encode(),
        b"autopilot",
        b"",
        force_push(loop),
        b"utf-8\0utf-8",
        b"0" * 64,  # a guess
    ]
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
        helper._connect(conn, str(sock))
        conn.settimeout(60)
        conn.sendall(helper.encode(fields))
        assert conn.recv(64) == b"S\n"
    assert denied(hook(loop))  # the helper still serves hooks that know its secret
    wait_for(lambda: answered_by_helper(isolated) > before, "the helper did not answer")


def test_a_guard_stop_through_the_helper_is_the_direct_paths(
    loop: Path, isolated: Path, manager: FakeOpenAI, tmp_path: Path
) -> None:
    """The loop's own hooks too: two loops with their budget used up, one stopped by the
    helper's child and one by the direct path, answer and end alike."""
    import json

    other = make_repo(tmp_path / "other")
    manager.enqueue(plan_body(2), schema="Plan")
    assert main(["-C", str(other), "plan", "--session-id", "sess-1", "write", "files"]) == 0
    for repo in (loop, other):
        budget = state_of(repo)["budget_usd"]
        edit_state(repo, budget_used_usd=budget)
    warm(loop, isolated)
    before = answered_by_helper(isolated)
    stop = ["hook", "Stop", "--host", "claude"]
    helped = run_launcher(stop, json.dumps(payload("Stop", loop)).encode(), env=ON)
    wait_for(lambda: answered_by_helper(isolated) > before, "the helper did not answer")
    direct = run_launcher(stop, json.dumps(payload("Stop", other)).encode(), env=OFF)
    assert "stopped_budget" in helped.stdout
    assert (helped.code, helped.stdout, helped.stderr) == (
        direct.code,
        direct.stdout,
        direct.stderr,
    )
    assert state_of(loop)["status"] == state_of(other)["status"] == "stopped_budget"


def test_an_upgrade_in_place_ends_the_helper_and_the_next_is_the_new_code(
    loop: Path, isolated: Path, tmp_path: Path
) -> None:
    """A plugin whose code changes on disk (an upgrade or an edit in place): the helper that
    loaded the old code answers no more hooks, and the next helper loads the new code."""
    import shutil
    import subprocess

    from tests.conftest import ROOT

    plugin = tmp_path / "plugin"
    for part in ("bin", "bridge"):
        shutil.copytree(ROOT / part, plugin / part, ignore=shutil.ignore_patterns("__pycache__"))
    env = {**os.environ, "AUTOPILOT_CODEX_PYTHON": sys.executable, **ON}

    def run() -> HookRun:
        proc = subprocess.run(
            ["bash", str(plugin / "bin" / "autopilot-codex"), "hook", "PreToolUse"]
            + ["--host", "claude"],
            input=force_push(loop),
            capture_output=True,
            env=env,
            timeout=120,
        )
        return HookRun(proc.returncode, proc.stdout.decode(), proc.stderr.decode())

    def socket_of() -> Path | None:
        found = sorted(run_dir(isolated).glob("helper-*.sock"))
        return found[0] if found else None

    assert denied(run())
    wait_for(lambda: socket_of() is not None, "the helper never started")
    before = answered_by_helper(isolated)
    assert denied(run())
    wait_for(lambda: answered_by_helper(isolated) > before, "the helper did not answer")
    old = _pid_at(socket_of())

    # The new release says so on stderr with every answer it writes.
    changed = plugin / "bridge" / "autopilot_codex" / "output.py"
    flush = "        sys.stdout.flush()\n"
    text = changed.read_text()
    assert flush in text
    changed.write_text(text.replace(flush, flush + '        sys.stderr.write("new release\\n")\n'))
    first = run()  # the old helper saw the change: this hook ran the new code itself
    assert denied(first) and "new release" in first.stderr
    wait_for(lambda: not alive(old), "the helper of the old code did not end")

    for start in run_dir(isolated).glob("helper-*.start"):
        aged = time.time() - helper.RESPAWN_S - 1
        os.utime(start, (aged, aged))
    assert denied(run())
    wait_for(lambda: socket_of() is not None and _pid_at(socket_of()) not in (0, old), "no new")
    new = _pid_at(socket_of())
    try:
        before = answered_by_helper(isolated)
        helped = run()
        wait_for(lambda: answered_by_helper(isolated) > before, "the new helper did not answer")
        assert denied(helped) and "new release" in helped.stderr
    finally:
        os.killpg(new, signal.SIGKILL)


def _pid_at(sock: Path | None, *, quiet: bool = True) -> int:
    """The pid listening on `sock`, 0 when nothing does (`quiet`: else the connect's error)."""
    if sock is None:
        return 0
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
            # The product's own connect (through the folder: pytest's paths are long).
            helper._connect(conn, str(sock))
            cred = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, 12)
    except OSError:
        if not quiet:
            raise
        return 0
    return int.from_bytes(cred[:4], sys.byteorder)


def test_the_helper_keeps_no_credential_of_the_hook_that_started_it(
    loop: Path, isolated: Path
) -> None:
    """The helper outlives the hook that started it by minutes: the manager's key (or any other
    credential in that hook's environment) must not sit in its environment for the implementer
    to read from /proc. Each child takes its own hook's environment instead."""
    secret = "sk-helper-LEAK-5521"
    env = {**ON, "OPENAI_API_KEY": secret, "GITHUB_TOKEN": secret}
    assert denied(hook(loop, env))
    wait_for(lambda: paths(isolated)[0].exists(), "the helper never started")
    pid = helper_pid(isolated)
    assert secret.encode() not in Path(f"/proc/{pid}/environ").read_bytes()
    assert denied(hook(loop, env))


def _parent(pid: int) -> int:
    stat = Path(f"/proc/{pid}/stat").read_bytes()
    return int(stat.rpartition(b")")[2].split()[1])


def test_a_helped_hooks_workers_are_forked_by_the_helper_and_detached(
    loop: Path, isolated: Path, manager: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    """The edit's review and snapshot: started as the direct path starts them (a session of
    their own, the snapshot's lock held until it is written), but forked by the helper from
    its warm image rather than started by the hook's child."""
    from autopilot_codex.shadow import repo as shadow_repo
    from tests.conftest import edit_payload, review_body
    from tests.fakes.openai_server import Reply
    from tests.reviews import wait_inflight, wait_reviews

    released = threading.Event()
    manager.enqueue(Reply(body=review_body("fix"), hold=released), schema="Review")
    pid = warm(loop, isolated)
    (loop / "file1.txt").write_text("wrong\n")
    before = answered_by_helper(isolated)
    edit = json.dumps(edit_payload(loop)).encode()
    run = run_launcher(["hook", "PostToolUse", "--host", "claude"], edit, env=ON)
    assert run.code == 0, run.stderr
    wait_for(lambda: answered_by_helper(isolated) > before, "the helper did not answer")
    worker = wait_inflight(loop)["pid"]
    try:
        assert _parent(worker) == pid
        assert os.getsid(worker) == worker
    finally:
        released.set()
    assert wait_reviews(loop)["autopilot"]["pending_review"]["decision"] == "fix"
    shadow_repo.settle(shadow_repo.at(loop), START_S)  # the snapshot's worker let its lock go
    assert main(["-C", str(loop), "restore", "--list"]) == 0
    assert "PostToolUse Write" in capsys.readouterr().out
