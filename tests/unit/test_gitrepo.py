"""What a review sees of the repository: every change, no secret, nothing of the loop's own."""

from __future__ import annotations

from pathlib import Path

from autopilot_codex import gitrepo
from autopilot_codex.rails.secrets import is_secret_path
from tests.conftest import git, make_repo


def test_diff_has_tracked_and_new_files_but_no_secrets(tmp_path: Path) -> None:
    repo = make_repo(
        tmp_path / "r", {"app.py": "a = 1\n", "conf/.env": "K=old\n", "keys/server.pem": "PEM\n"}
    )
    base = gitrepo.head_sha(repo)
    (repo / "app.py").write_text("a = 2\n")
    (repo / "conf/.env").write_text("K=new-secret\n")
    (repo / "keys/server.pem").unlink()
    (repo / "new dir").mkdir()
    (repo / "new dir/notes.txt").write_text("hello\n")
    (repo / "sub").mkdir()
    (repo / "sub/.env.local").write_text("TOKEN=untracked-secret\n")
    (repo / "sub/credentials.json").write_text('{"k": "v"}\n')
    diff = gitrepo.diff_since(repo, base)
    assert "+a = 2" in diff.text
    assert "+hello" in diff.text and "new dir/notes.txt" in diff.files
    for secret in ("new-secret", "K=old", "PEM", "untracked-secret", '"k"'):
        assert secret not in diff.text
    assert not any(is_secret_path(f) for f in diff.files)


def test_renaming_a_secret_does_not_leak_it(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "r", {".env": "PASSWORD=hunter2\n", "a.txt": "a\n"})
    base = gitrepo.head_sha(repo)
    git(repo, "mv", ".env", "renamed.txt")
    assert "hunter2" not in gitrepo.diff_since(repo, base).text


def test_excluded_directories_are_left_out(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "r")
    base = gitrepo.head_sha(repo)
    (repo / ".state").mkdir()
    (repo / ".state/state.json").write_text('{"status": "running"}\n')
    (repo / "x.txt").write_text("x\n")
    diff = gitrepo.diff_since(repo, base, exclude=(".state",))
    assert "running" not in diff.text and diff.files == ("x.txt",)


def test_the_changed_names_are_the_files_the_diff_names(tmp_path: Path) -> None:
    """What a prompt that only names earlier tasks' files reads instead of a whole diff."""
    repo = make_repo(
        tmp_path / "r", {"app.py": "a = 1\n", "conf/.env": "K=old\n", "old.txt": "o\n"}
    )
    base = gitrepo.head_sha(repo)
    (repo / "app.py").write_text("a = 2\n")
    (repo / "conf/.env").write_text("K=new\n")
    git(repo, "rm", "-q", "old.txt")
    git(repo, "commit", "-qam", "edit")
    (repo / "new dir").mkdir()
    (repo / "new dir/notes.txt").write_text("hello\n")
    (repo / "sub").mkdir()
    (repo / "sub/.env.local").write_text("TOKEN=x\n")
    (repo / ".state").mkdir()
    (repo / ".state/state.json").write_text("{}\n")
    names = gitrepo.changed_names(repo, base, exclude=(".state",))
    assert names == ("app.py", "old.txt", "new dir/notes.txt")
    assert set(names) == set(gitrepo.diff_since(repo, base, exclude=(".state",)).files)


def test_identical_trees_give_identical_digests(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "r")
    base = gitrepo.head_sha(repo)
    (repo / "x.txt").write_text("x\n")
    first = gitrepo.diff_since(repo, base).digest
    (repo / "x.txt").write_text("y\n")
    assert gitrepo.diff_since(repo, base).digest != first
    (repo / "x.txt").write_text("x\n")
    assert gitrepo.diff_since(repo, base).digest == first


def test_empty_repository_and_detached_head(tmp_path: Path) -> None:
    empty = tmp_path / "e"
    empty.mkdir()
    git(empty, "init", "-q")
    assert gitrepo.head_sha(empty) == gitrepo.EMPTY_TREE
    (empty / "f.txt").write_text("f\n")
    assert "+f" in gitrepo.diff_since(empty, gitrepo.EMPTY_TREE).text
    assert gitrepo.commits_since(empty, gitrepo.EMPTY_TREE) == []
    repo = make_repo(tmp_path / "r")
    git(repo, "checkout", "-q", "--detach")
    assert gitrepo.head_sha(repo) == git(repo, "rev-parse", "HEAD")
