"""One secret matcher: every file the implementer may change is denied or reviewed, never
both and never neither."""

from __future__ import annotations

from pathlib import Path

import pytest

from autopilot_codex import gitrepo
from autopilot_codex.config import Config
from autopilot_codex.rails.secrets import is_secret_path
from tests import rails_calls as rails

SECRET = [
    ".env",
    ".env.local",
    "config/.env.production",
    "prod.env",
    "x.secret",
    "app.secrets",
    "server.pem",
    "tls/server.key",
    "cert.p12",
    "id_rsa",
    "keys/id_ed25519.pub",
    ".npmrc",
    ".pypirc",
    ".netrc",
    "credentials",
    "credentials.json",
    "config/credentials.yml.enc",
    "home/.ssh/config",
    ".aws/credentials",
]
NOT_SECRET = [
    "README.md",
    ".env.example",
    ".env.sample",
    ".env.template",
    ".env.dist",
    "credentials.py",
    "config/credentials.rb",
    "src/credentials.ts",
    "environment.py",
    "keyboard.txt",
    "docs/secrets-policy.md",
]


@pytest.mark.parametrize("path", SECRET)
def test_secret(path: str) -> None:
    assert is_secret_path(path)


@pytest.mark.parametrize("path", NOT_SECRET)
def test_not_secret(path: str) -> None:
    assert not is_secret_path(path)


def test_every_writable_file_is_denied_or_reviewed_never_both_never_neither(repo: Path) -> None:
    base = gitrepo.head_sha(repo)
    for path in SECRET + NOT_SECRET:
        target = repo / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(f"content of <{path}>\n")
    reviewed = set(gitrepo.diff_since(repo, base).files)
    text = gitrepo.diff_since(repo, base).text
    for path in SECRET + NOT_SECRET:
        denied = rails.check_path(str(repo / path), Config(), repo) is not None
        shown = path in reviewed
        assert denied != shown, f"{path}: denied={denied} reviewed={shown}"
        assert (f"content of <{path}>" in text) is shown, path
