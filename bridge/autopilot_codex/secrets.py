"""The one definition of a secret file: what the rails deny and the diff leaves out.

A name is judged, never the content: `.env.example` and `credentials.py` are source, `prod.env`
and `~/.aws/credentials` are not.
"""

from __future__ import annotations

import re

# Templates checked into repositories on purpose.
_TEMPLATE = r"\.(example|sample|template|dist)"
_SECRET_NAME = re.compile(
    r"(\.env(?!" + _TEMPLATE + r"$)(\.[\w.-]+)?"  # .env, .env.local, .env.production
    r"|[\w.-]+\.env"  # prod.env
    r"|[\w.-]+\.(pem|key|p12|pfx|secret|secrets)"
    r"|id_(rsa|dsa|ecdsa|ed25519)(\.pub)?"
    r"|\.npmrc|\.pypirc|\.netrc|\.git-credentials"
    r"|credentials(\.(json|ya?ml|toml|ini|txt|csv|env|xml))?)$"
)
# Whole directories of credentials, wherever the name inside them.
_SECRET_DIR = re.compile(r"(^|/)(\.ssh|\.aws|\.gnupg)/[^/]+")


def is_secret_path(path: str) -> bool:
    """Whether the file at `path` holds credentials, by its name and its directory."""
    text = path.strip().replace("\\", "/").rstrip("/")
    if not text:
        return False
    name = text.rsplit("/", 1)[-1]
    return bool(_SECRET_NAME.fullmatch(name)) or bool(_SECRET_DIR.search(text))
