"""URL slugs from titles."""

from __future__ import annotations

import re
import unicodedata


def slugify(title: str) -> str:
    # Decomposed, an accented letter is its base letter followed by combining marks; the marks
    # are not ASCII and drop out, the letter stays.
    plain = unicodedata.normalize("NFKD", title).encode("ascii", "ignore").decode("ascii")
    text = re.sub(r"[^a-z0-9]+", "-", plain.lower())
    return text.strip("-")
