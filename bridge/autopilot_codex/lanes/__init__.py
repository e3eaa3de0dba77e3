"""Lanes (issue 37): independent tasks of one plan run at once, each in a worktree and on a
branch of its own, merged one at a time by a queue that never forces and never loses a commit.

`graph` (the plan's order), `worktrees` (the lanes' branches and folders), `queue` (the
merge's mechanics); the driver, the budget and the views are modules of their own. Nothing is
imported here, so the manager's check of a plan (`graph`) loads nothing of git.
"""
