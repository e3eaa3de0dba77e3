"""The loop's default limits, written once: the settings, the state records and the guards
all take them from here."""

from __future__ import annotations

# The host a hook, a loop or a round assumes when none is named: its registry's first member
# (`hosts.HOSTS`), the one place a host is the default.
HOST = "claude"
# The manager model when none is chosen (a Codex manager then uses Codex's own configured one).
MODEL = "gpt-6.2-sol"
BUDGET_USD = 5.00
MAX_ITERATIONS = 30
# Consecutive Stop blocks without a tool run before a loop pauses as stalled; Claude Code
# itself overrides a Stop hook after 8, and Codex never does.
STALL_LIMIT = 3
# Continue verdicts without a new commit before the loop aborts.
NO_PROGRESS_LIMIT = 3
REVIEW_MODE = "edit"
REVIEW_MODES = ("edit", "commit", "stop", "off")
# A ralph loop's cap when none is given; 0 (unlimited) needs a budget or a time limit.
RALPH_MAX_ITERATIONS = 50
# The loop style when none is named (a state file or hook from before styles).
STYLE = "autopilot"
