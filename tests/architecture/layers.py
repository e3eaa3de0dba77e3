"""The bridge's layers, bottom to top: the one declaration `test_layers.py` holds the package to.

An import may go down or stay within its layer, never up, and no import closes a circle.
`name` places one module (`config`, `host`); `name.*` places a package's `__init__`
and everything below it, unless a longer entry places a member elsewhere. A module no entry
names fails the test: a new module is placed here before it lands.
"""

from __future__ import annotations

# The package's own `__init__`.
ROOT = "__init__"

LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("core", (
        ROOT, "errors", "paths", "regular", "fileio", "typedjson", "registry", "defaults", "output",
        "nofollow", "gitbinary", "searchpath", "crashlog", "classcode", "admitted", "hookio", "surrogates",
        "loopindex", "state",
        "state_file", "state_ranges", "ledger", "witness", "witness_key", "spend", "meters",
        "config", "contract", "loopfiles", "wall", "runfiles", "stream", "treewalk", "detached",
        "credentials", "cleanenv", "closing", "seatbelt", "decision",
        "checks", "checks.records", "checks.specs", "host", "prices", "hosts", "manager",
        "manager.pricing", "manager.schemas",
    )),
    ("effects", (
        "store.*", "gitrepo.*", "sandbox.*", "checks.*", "shadow.*", "rails.*", "guards",
        "hostwall", "failclosed", "announce", "notify", "durable.*",
    )),
    ("wings", (
        "hosts.*", "styles.*", "manager.*", "rounds.*", "lanes.*", "fleet.*", "session_end",
    )),
    ("views", ("commands.*", "report.*")),
    ("entrances", (
        "__main__", "cli", "cli_parser", "gate", "hookrun", "helper", "helper_server",
        "helper_child", "helper_sources", "helper_workers",
    )),
)  # fmt: skip

# No import closes a circle and none climbs: both lists stay empty (the test fails on an entry
# that no longer happens, so an exception, if one is ever needed, is named and temporary).
ALLOWED_CIRCLES: tuple[str, ...] = ()
ALLOWED_UPWARD: tuple[str, ...] = ()
