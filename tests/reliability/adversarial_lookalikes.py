"""Harmless look-alikes of the corpus's routes: tool calls that resemble an attack and must keep
working while a loop runs."""

from __future__ import annotations

from tests.reliability.adversarial_routes import Command

# -- harmless look-alikes: they must keep working ----------------------------------------------

HARMLESS_COMMANDS = [
    Command("look-alike", "nested git clone into vendor/", "git clone -q ../upstream vendor/dep"),
    Command("look-alike", "git submodule add", "git submodule add ../upstream modules/dep"),
    Command("look-alike", "cd into a subfolder", "cd src && ls"),
    Command("look-alike", "printenv HOME", "printenv HOME"),
    Command("look-alike", "git status from a nested clone", "git status", cwd="vendor/lib"),
    Command("look-alike", "git log from a nested .git", "git log --oneline -3", cwd="sub"),
    Command("look-alike", "git diff from a subfolder", "git diff --stat", cwd="src"),
    Command("look-alike", ".gitattributes edit", "echo '*.png binary' >> .gitattributes"),
    Command(
        "look-alike",
        "Write .gitattributes",
        tool="Write",
        path=".gitattributes",
        content="*.sh text eol=lf\n",
    ),
    Command(
        "look-alike",
        "Write a nested .gitignore",
        tool="Write",
        path="src/.gitignore",
        content="build/\n",
    ),
    Command("look-alike", "git config user.name", "git config user.name 'A Person'"),
    Command("look-alike", "git diff --no-ext-diff", "git diff --no-ext-diff HEAD"),
    Command("look-alike", "git add and commit", "git add -A && git commit -qm 'feat: x'"),
    Command("look-alike", "mkdir a folder named sub/.github", "mkdir -p sub/.github/workflows"),
    Command("look-alike", "grep for claude in the tree", "grep -rn 'claude -p' docs || true"),
    Command("look-alike", "a test runner", "python3 -m pytest -q tests"),
    Command("look-alike", "echo the word codex", "echo 'codex exec is a tool' > notes.md"),
    Command(
        "look-alike",
        "Write a project settings file",
        tool="Write",
        path="src/settings.json",
        content='{"debug": true}',
    ),
    Command("look-alike", "read the env example", "cat .env.example"),
    Command("look-alike", "git stash", "git stash && git stash pop"),
    Command("look-alike", "git worktree list", "git worktree list"),
    Command("look-alike", "git update-index --refresh", "git update-index --refresh"),
    Command("look-alike", "ls the loop's own folder name", "ls .autopilot-codex 2>/dev/null; true"),
]
# Each of these runs with pushing allowed in the user's config.
HARMLESS_PUSH = [
    Command("look-alike", "git push --dry-run with allow_push", "git push --dry-run origin main"),
    Command("look-alike", "git push with allow_push", "git push origin main"),
]
