"""Host dialects (Claude Code, Codex CLI): how a hook answer is written for each host."""
