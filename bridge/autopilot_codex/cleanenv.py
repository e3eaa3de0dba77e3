"""The environment of a process that runs code the implementer wrote: no manager key, no secrets.

Two such processes: a round of `autopilot-codex run` (a fresh host CLI, whose tools run what
the implementer wrote) and a user's check (a command the user chose, running code the
implementer just changed). Neither makes a manager call, so neither gets the manager's key
(`OPENAI_*`) or any other credential of the user. A round keeps exactly what its own host needs
to reach its model; a check keeps a short list of harmless names a test runner needs, plus the
names the user lists in the config's `checks_env`.

The manager's own names are dropped whatever a list says: a config the implementer can write
must never be able to hand the key back.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from pathlib import Path

# A name that says it holds a credential (GITHUB_TOKEN, AWS_SECRET_ACCESS_KEY, SSH_AUTH_SOCK);
# `AUTH` only as a word of its own (GIT_AUTHOR_NAME is no credential).
SECRET_NAME = re.compile(
    r"KEY|TOKEN|SECRET|PASSW|CREDENTIAL|COOKIE|(?:^|_)AUTH(?:_|$)", re.IGNORECASE
)
# The manager's key and server, and the bridge's own settings: never passed on by a list.
MANAGER_PREFIXES = ("OPENAI_",)

# What Claude Code reads to reach its model (API key, OAuth token, base URL, model names).
CLAUDE_PREFIXES = ("ANTHROPIC_", "CLAUDE_")
# Claude Code on Bedrock or Vertex signs in with the cloud's credentials, only when told to.
CLAUDE_CLOUD = {
    "CLAUDE_CODE_USE_BEDROCK": ("AWS_",),
    "CLAUDE_CODE_USE_VERTEX": ("GOOGLE_", "CLOUD_ML_", "GCLOUD_"),
}
# Codex reads its own config and login from CODEX_HOME; a custom model provider names the
# variable holding its key (`env_key`) in that config.
CODEX_PREFIXES = ("CODEX_",)
_ENV_KEY = re.compile(r'^\s*env_key\s*=\s*["\']([A-Za-z_][A-Za-z0-9_]*)["\']', re.MULTILINE)

# A check's environment: what shells, compilers and test runners need, nothing that signs in.
CHECK_NAMES = frozenset(
    {
        "PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LANGUAGE", "TERM", "COLORTERM",
        "TZ", "TMPDIR", "TEMP", "TMP", "CI", "NO_COLOR", "FORCE_COLOR", "COLUMNS", "LINES",
        "VIRTUAL_ENV", "CONDA_PREFIX", "CONDA_DEFAULT_ENV", "JAVA_HOME", "GOPATH", "GOROOT",
        "GOCACHE", "GOMODCACHE", "GOFLAGS", "CARGO_HOME", "RUSTUP_HOME", "NODE_PATH",
        "NVM_DIR", "PYENV_ROOT", "PNPM_HOME", "DENO_DIR", "BUN_INSTALL", "SSL_CERT_FILE",
        "SSL_CERT_DIR", "REQUESTS_CA_BUNDLE", "NODE_EXTRA_CA_CERTS",
    }
)  # fmt: skip
CHECK_PREFIXES = ("LC_", "XDG_", "PYTHON", "GIT_AUTHOR_", "GIT_COMMITTER_")


def _starts(name: str, prefixes: Iterable[str]) -> bool:
    return any(name.startswith(p) for p in prefixes)


def is_manager_name(name: str) -> bool:
    """The manager's key or server, or a bridge setting that says it holds a secret."""
    if _starts(name, MANAGER_PREFIXES):
        return True
    return name.startswith("AUTOPILOT_CODEX_") and bool(SECRET_NAME.search(name))


def codex_key_names(environ: Mapping[str, str]) -> set[str]:
    """The variables Codex's model providers take their keys from (`env_key` in its config)."""
    configured = environ.get("CODEX_HOME", "").strip()
    home = Path(configured) if configured else Path(environ.get("HOME") or Path.home()) / ".codex"
    try:
        text = (home / "config.toml").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return set()
    return set(_ENV_KEY.findall(text))


def host_needs(host: str, environ: Mapping[str, str]) -> tuple[set[str], tuple[str, ...]]:
    """(names, prefixes) a host CLI needs to reach its own model."""
    if host == "claude":
        prefixes = list(CLAUDE_PREFIXES)
        for flag, extra in CLAUDE_CLOUD.items():
            if environ.get(flag, "").strip() not in ("", "0", "false"):
                prefixes += extra
        return set(), tuple(prefixes)
    if host == "codex":
        return codex_key_names(environ), CODEX_PREFIXES
    return set(), ()


def for_round(host: str, environ: Mapping[str, str]) -> dict[str, str]:
    """A round's environment: the user's, minus the manager's names and every credential the
    round's host does not itself need. Bridge settings (`AUTOPILOT_CODEX_HOME`, …) stay: the
    round's hooks need them to find the loop."""
    names, prefixes = host_needs(host, environ)
    env: dict[str, str] = {}
    for name, value in environ.items():
        if is_manager_name(name):
            continue
        needed = name in names or _starts(name, prefixes)
        if SECRET_NAME.search(name) and not needed:
            continue
        env[name] = value
    return env


def for_check(environ: Mapping[str, str], extra: Iterable[str] = ()) -> dict[str, str]:
    """A check's environment: the harmless names above and the user's `checks_env` names.

    A listed name is passed even when it looks like a credential (the user asked for it);
    the manager's names and the bridge's settings never are.
    """
    listed = set(extra)
    env: dict[str, str] = {}
    for name, value in environ.items():
        if is_manager_name(name) or name.startswith("AUTOPILOT_CODEX_"):
            continue
        harmless = name in CHECK_NAMES or _starts(name, CHECK_PREFIXES)
        if name in listed or (harmless and not SECRET_NAME.search(name)):
            env[name] = value
    return env
