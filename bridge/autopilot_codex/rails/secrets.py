"""The one definition of a secret file, shared by the safety rails and the diff filter.

The invariant it keeps: every file the implementer may change is either denied by the rails
or shown to the reviewing manager, never neither. A path matches here exactly when the rails
deny it and the diff leaves it out. Standard library only (the rails run on the hook path).
"""

from __future__ import annotations

import fnmatch

# Matched against the file's name.
NAME_PATTERNS = (
    ".env", ".env.*", "*.env", "*.pem", "*.key", "*.p12", "*.pfx",
    "id_rsa*", "id_dsa*", "id_ecdsa*", "id_ed25519*",
    ".npmrc", ".pypirc", ".netrc", ".git-credentials", "*.secret", "*.secrets",
)  # fmt: skip
# Templates that hold no values by convention: reviewed like any file, writable.
TEMPLATES = frozenset({".env.example", ".env.sample", ".env.template", ".env.dist"})
# `credentials` with a data extension is a credential store; `credentials.py` is code.
CREDENTIAL_DATA = frozenset(
    {"", "json", "yaml", "yml", "toml", "ini", "txt", "csv", "env", "xml", "enc", "conf", "cfg"}
)
# Directories whose every file is a credential.
SECRET_DIRS = frozenset({".ssh", ".aws", ".gnupg"})


def is_secret_path(path: str) -> bool:
    parts = [p for p in path.replace("\\", "/").split("/") if p and p != "."]
    if not parts:
        return False
    name = parts[-1]
    if name in TEMPLATES:
        return False
    if any(part in SECRET_DIRS for part in parts[:-1]):
        return True
    stem, dot, rest = name.partition(".")
    if stem == "credentials" and (rest.rpartition(".")[2] if dot else "") in CREDENTIAL_DATA:
        return True
    return any(fnmatch.fnmatchcase(name, pattern) for pattern in NAME_PATTERNS)
