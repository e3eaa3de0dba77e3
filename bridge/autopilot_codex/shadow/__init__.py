"""The shadow history (issue 34): every state of the work tree during a loop, kept where the
implementer cannot reach, so that no command it runs can cost the user work.

One bare git directory per worktree under the loop's folder (`projects/<key>/shadow.git`),
never inside the worktree. Each snapshot is a commit of the whole work tree (tracked,
untracked, small ignored files) whose message carries the repository's refs; the objects those
refs need are copied in, so a deleted branch and a `git gc --prune=now` cost nothing.
`repo` opens it, `snapshot` writes one, `loss` tells what vanished, `back` restores.
"""
