"""autopilot-codex: a supervised autonomous loop for coding-agent hosts."""

__version__ = "0.1.0"
