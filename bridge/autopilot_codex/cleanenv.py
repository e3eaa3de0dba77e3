"""The environment of a process that runs code the implementer wrote: no manager key, no secrets.

Two such processes: a round of `autopilot-codex run` (a fresh host CLI, whose tools run what
the implementer wrote) and a user's check (a command the user chose, running code the
implementer just changed). Neither makes a manager call, so neither gets the manager's key
(`OPENAI_*`) or any other credential of the user. A round keeps exactly what its own host needs
to reach its model (`Headless.credentials`, in the host's package); a check keeps a short list of harmless names a test runner needs, plus the
names the user lists in the config's `checks_env`.

The manager's own names are dropped whatever a list says: a config the implementer can write
must never be able to hand the key back.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .host import Headless

# A name that says it holds a credential (GITHUB_TOKEN, AWS_SECRET_ACCESS_KEY, SSH_AUTH_SOCK);
# `AUTH` only as a word of its own (GIT_AUTHOR_NAME is no credential).
SECRET_NAME = re.compile(
    r"KEY|TOKEN|SECRET|PASSW|CREDENTIAL|COOKIE|(?:^|_)AUTH(?:_|$)", re.IGNORECASE
)
# The manager's key and server, and the bridge's own settings: never passed on by a list.
MANAGER_PREFIXES = ("OPENAI_",)
# The fleet's shared database (a URL that holds its password): the workers' and the commands',
# never a round's or a check's.
DATABASE_NAMES = frozenset({"AUTOPILOT_CODEX_DATABASE_URL"})

# The PATH the host gave the hook, before the launcher dropped the folders the implementer
# writes (a repository's `.venv/bin`, `node_modules/.bin`): the bridge runs nothing from them,
# but a check runs the implementer's code inside the supervisor's sandbox and finds its tools
# there. A round's host never gets it back: the host process itself runs outside its own
# sandbox, and would find a `bwrap` or a `git` planted there.
USER_PATH = "AUTOPILOT_CODEX_USER_PATH"

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


def is_manager_name(name: str) -> bool:
    """The manager's key or server, the fleet's database, or a bridge setting that says it
    holds a secret."""
    if name.startswith(MANAGER_PREFIXES) or name in DATABASE_NAMES:
        return True
    return name.startswith("AUTOPILOT_CODEX_") and bool(SECRET_NAME.search(name))


def for_round(runner: Headless | None, environ: Mapping[str, str]) -> dict[str, str]:
    """A round's environment: the user's, minus the manager's names and every credential the
    round's host (its headless `runner`) does not itself need. Bridge settings
    (`AUTOPILOT_CODEX_HOME`, …) stay: the round's hooks need them to find the loop."""
    names, prefixes = runner.credentials(environ) if runner is not None else (set(), ())
    return {
        name: value
        for name, value in environ.items()
        if not is_manager_name(name)
        and (not SECRET_NAME.search(name) or name in names or name.startswith(prefixes))
    }


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
        harmless = name in CHECK_NAMES or name.startswith(CHECK_PREFIXES)
        if name in listed or (harmless and not SECRET_NAME.search(name)):
            env[name] = value
    user = environ.get(USER_PATH)
    return {**env, "PATH": user} if user else env
