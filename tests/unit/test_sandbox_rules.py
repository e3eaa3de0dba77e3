"""The sandbox's plan as data: which mounts, in which order, and the same rules as a Seatbelt
profile (macOS cannot be run here: its profile is tested as text)."""

from __future__ import annotations

from pathlib import Path

from autopilot_codex.sandbox import bwrap, gitcall, seatbelt
from autopilot_codex.sandbox.rules import Mount, Rules, mounts


def _tree(tmp_path: Path) -> dict[str, str]:
    for folder in ("state/secret", "state/wt/.git", "home/.ssh", "tmp"):
        (tmp_path / folder).mkdir(parents=True)
    (tmp_path / "home" / ".netrc").write_text("machine x password y\n")
    (tmp_path / "state" / "wt" / ".git" / "config").write_text("")
    real = tmp_path.resolve()
    return {name: str(real / name) for name in ("state", "home", "tmp")}


def test_the_deeper_rule_wins_whatever_the_order_given(tmp_path: Path) -> None:
    """A work tree inside the hidden state home is shown again; its git config inside it is
    sealed again; the key beside it stays hidden."""
    p = _tree(tmp_path)
    wt = f"{p['state']}/wt"
    rules = Rules(
        writable=(wt,),
        sealed=(f"{wt}/.git/config",),
        hidden=(f"{p['state']}/secret", p["state"]),
    )
    assert mounts(rules) == [
        Mount("hide", p["state"]),
        Mount("write", wt),
        Mount("seal", f"{wt}/.git/config"),
    ]


def test_what_changes_nothing_is_left_out(tmp_path: Path) -> None:
    p = _tree(tmp_path)
    rules = Rules(
        shown=(p["home"],),  # readable already
        sealed=(f"{p['home']}/.ssh",),  # read-only already
        hidden=(f"{p['home']}/missing", f"{p['tmp']}/x", f"{p['home']}/.netrc"),
        fresh=(p["tmp"],),
    )
    assert mounts(rules) == [Mount("fresh", p["tmp"]), Mount("hide", f"{p['home']}/.netrc", False)]


def test_a_fresh_folder_need_not_exist_and_a_dangling_link_hides_nothing(tmp_path: Path) -> None:
    p = _tree(tmp_path)
    (tmp_path / "home" / ".aws").symlink_to(tmp_path / "nowhere")
    rules = Rules(fresh=(f"{p['home']}/scratch",), hidden=(f"{p['home']}/.aws",))
    assert mounts(rules) == [Mount("fresh", f"{p['home']}/scratch")]


def test_a_sealed_path_never_brings_back_a_hidden_one(tmp_path: Path) -> None:
    p = _tree(tmp_path)
    rules = Rules(sealed=(f"{p['home']}/.ssh",), hidden=(p["home"],), shown=("relative",))
    assert mounts(rules) == [Mount("hide", p["home"])]


def test_a_path_given_twice_takes_the_stricter_rule(tmp_path: Path) -> None:
    p = _tree(tmp_path)
    assert mounts(Rules(writable=(p["home"],), hidden=(p["home"],))) == [Mount("hide", p["home"])]


def test_bubblewrap_s_command_line(tmp_path: Path) -> None:
    p = _tree(tmp_path)
    rules = Rules(
        writable=(p["tmp"],),
        shown=(p["home"],),
        sealed=(f"{p['tmp']}/nothing", f"{p['state']}/wt/.git/config"),
        hidden=(p["state"], f"{p['home']}/.netrc"),
    )
    argv = bwrap.argv("/usr/bin/bwrap", rules, "/w", ["git", "status"])
    assert argv[:6] == [
        "/usr/bin/bwrap",
        "--die-with-parent",
        "--unshare-pid",
        "--unshare-ipc",
        "--unshare-net",
        "--new-session",
    ]
    tail = " ".join(argv[argv.index("/proc") + 1 :])
    assert f"--tmpfs {p['state']} " in tail and f"--remount-ro {p['state']} " in tail
    assert tail.index(f"--tmpfs {p['state']}") < tail.index(f"--remount-ro {p['state']}")
    assert f"--ro-bind /dev/null {p['home']}/.netrc" in tail
    assert f"--bind {p['tmp']} {p['tmp']}" in tail
    assert tail.endswith("--chdir /w -- git status")
    walled_net = bwrap.argv("b", Rules(network=True), "/", ["x"], new_session=False)
    assert "--unshare-net" not in walled_net and "--new-session" not in walled_net


def test_only_a_trusted_bubblewrap_is_used(tmp_path: Path) -> None:
    planted = tmp_path / "bwrap"
    planted.write_text("#!/bin/sh\n")
    planted.chmod(0o777)  # anyone could have replaced it
    assert bwrap.find((str(planted),)) is None
    assert bwrap.find(()) is None


def test_the_seatbelt_profile_says_the_same(tmp_path: Path) -> None:
    p = _tree(tmp_path)
    rules = Rules(
        writable=(f"{p['state']}/wt",),
        shown=(p["home"],),
        sealed=(f"{p['state']}/wt/.git/config",),
        hidden=(p["state"], f"{p['home']}/.netrc", f'{p["home"]}/we"ird'),
    )
    text = seatbelt.profile(rules)
    lines = text.splitlines()
    assert lines[:3] == ["(version 1)", "(allow default)", "(deny file-write*)"]
    assert "(deny network*)" in lines
    state, wt = p["state"], f"{p['state']}/wt"
    order = [
        f'(deny file-read* file-write* (subpath "{state}"))',
        f'(allow file-read* file-write* (subpath "{wt}"))',
        f'(deny file-write* (subpath "{wt}/.git/config"))',
    ]
    assert [lines.index(rule) for rule in order] == sorted(lines.index(r) for r in order)
    assert f'(deny file-read* file-write* (literal "{p["home"]}/.netrc"))' in lines
    assert "(deny network*)" not in seatbelt.profile(Rules(network=True))
    argv = seatbelt.argv(rules, "/w", ["git", "status"])
    assert argv[:2] == ["/usr/bin/sandbox-exec", "-p"] and argv[3:] == ["git", "status"]
    shown = seatbelt.profile(Rules(hidden=(state,), shown=(wt,)))
    assert f'(allow file-read* (subpath "{wt}")) (deny file-write* (subpath "{wt}"))' in shown


def test_the_seatbelt_quotes_a_path_it_cannot_take_bare() -> None:
    assert seatbelt._quoted('/a "b"\\c') == '"/a \\"b\\"\\\\c"'


def test_git_s_subcommand_is_found_past_its_options() -> None:
    assert gitcall.subcommand(["-c", "a=b", "--no-optional-locks", "commit", "-m", "x"]) == "commit"
    assert gitcall.subcommand(["-C", "dir", "status"]) == "status"
    assert gitcall.subcommand(["--version"]) == ""


def test_a_git_call_writes_only_what_its_subcommand_must(tmp_path: Path) -> None:
    wt = str(tmp_path / "wt")
    gd = f"{wt}/.git"
    read = gitcall.rules("/usr/bin/git", wt, [gd, gd], ["status"])
    assert read.writable == () and wt in read.shown and read.fresh == ("/tmp",)
    index = gitcall.rules("/usr/bin/git", wt, [gd], ["ls-files"], str(tmp_path / "s" / "index"))
    assert index.writable == (str(tmp_path / "s"),)
    commit = gitcall.rules("/usr/bin/git", wt, [gd], ["-c", "x=y", "commit"])
    assert commit.writable == (gd,) and f"{gd}/config" in commit.sealed
    assert f"{gd}/hooks" in commit.sealed and wt in commit.shown
    stash = gitcall.rules("/usr/bin/git", wt, [gd], ["stash", "push"])
    assert stash.writable == (wt, gd) and wt not in stash.shown
