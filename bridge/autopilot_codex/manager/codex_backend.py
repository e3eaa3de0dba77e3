"""The manager through the user's own Codex CLI: one `codex exec` per attempt.

Codex brings the user's provider, model and login (`$CODEX_HOME`); we add an output schema,
a read-only sandbox, no session files, an empty working directory (so nothing the implementer
wrote, such as an AGENTS.md or a `.codex/` folder, can steer its supervisor) and no hooks (so
the loop's own Stop hook never runs inside its manager). Codex does not check the answer
against the schema, so it is validated here; the retry policy is `attempts.ask`.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from pydantic import BaseModel, ValidationError

from .. import searchpath, surrogates
from ..hosts.codex.boundary import codex_home
from ..hosts.codex.config_toml import top_level
from ..hosts.codex.round_model import model_of
from . import Outcome
from .attempts import Charged, Invalid, ask
from .pricing import MOST_EXPENSIVE, Price, Usage, price_for, unseen
from .prompts import Prompt

if TYPE_CHECKING:
    from ..config import Config

T = TypeVar("T", bound=BaseModel)

NOT_INSTALLED = "codex is not on PATH: npm install -g @openai/codex"
UPGRADE = "npm install -g @openai/codex@latest"
NOT_LOGGED_IN = "codex is not logged in: run `codex login`"
# `codex login status` answers from local files in milliseconds; this only bounds a wedge.
LOGIN_TIMEOUT_S = 20.0
ANSWER_NOTE = (
    "Answer with exactly one JSON object that matches the output schema. Do not run commands "
    "or use tools: everything you need is below."
)
# Replaces Codex's coding-agent system prompt (about 20 kB a call): the run only judges.
SYSTEM = (
    "You answer one question for the manager of an autonomous coding loop. Judge only the "
    "material in the user message, reply with exactly one JSON object that matches the output "
    "schema, and never run commands or call tools."
)
# Lenient `-c` settings (a version that does not know one ignores it): no tools, plugins or
# context a judge of the given evidence needs, which also keeps an injected "run this" inert.
LEAN = (
    "features.plugins=false",
    "features.apps=false",
    "features.shell_tool=false",
    "features.unified_exec=false",
    "features.goals=false",
    "features.view_image=false",
    'web_search="disabled"',
    "include_environment_context=false",
    "include_skills_usage_instructions=false",
    "include_plugin_usage_instructions=false",
    "include_apps_usage_instructions=false",
)
# Final errors worth another attempt: the stream broke, or the provider was briefly busy.
_TRANSIENT = re.compile(
    r"stream disconnected|stream error|high demand|temporar|overloaded|try again|timed? ?out",
    re.IGNORECASE,
)
_REFUSED = re.compile(r"\b40[13]\b|unauthori[sz]ed|forbidden|not logged in", re.IGNORECASE)
_FENCE = re.compile(r"^```[A-Za-z0-9_-]*\s*\n(.*?)\n?```\s*$", re.DOTALL)


class NotReady(Exception):
    """Codex is missing or not logged in: retrying cannot help, the user must act."""


class ExecFailed(Exception):
    """`codex exec` ended without an answer."""

    def __init__(self, message: str, *, transient: bool = False) -> None:
        super().__init__(message)
        self.transient = transient


def make(model: str, config: Config) -> CodexManager:
    return CodexManager(model=_chosen_model(model), timeout_s=config.timeout_s)


def problem(config: Config | None = None) -> str | None:
    """What keeps `codex exec` from answering, found without a model call, or None."""
    binary = searchpath.which("codex", None)
    if binary is None:
        return NOT_INSTALLED
    # A custom provider authenticates with its own key variable, not `codex login`.
    if _top_level("model_provider") in ("", "openai") and not _logged_in(binary):
        return NOT_LOGGED_IN
    return None


def _chosen_model(model: str) -> str | None:
    """The model to pass with `-m`; None lets Codex use the one its own config names.

    The loop's default model is an OpenAI API choice; a Codex user who did not pick one
    (`-m` / AUTOPILOT_CODEX_MODEL) gets the model they configured Codex with.
    """
    from ..defaults import MODEL

    return None if model == MODEL else model


def _top_level(key: str) -> str:
    return top_level(codex_home(os.environ, Path.home()) / "config.toml", key)


def _logged_in(binary: str) -> bool:
    try:
        done = subprocess.run(
            [binary, "login", "status"],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=LOGIN_TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return False
    return done.returncode == 0


# What `codex exec` sends besides our prompt, even with the lean settings: our system text,
# the output schema, the remaining tool definitions and Codex's own framing. A whole request
# around a 3-character prompt was at most 11.6 kB on 0.171.0; this leaves room to grow.
OVERHEAD_CHARS = 16_000
# Codex sends no `max_output_tokens`, so the model may answer (and reason) at length: the
# worst case budgets this much output, or more when the loop asks for more.
OUTPUT_CAP_TOKENS = 32_000


def output_cap(asked: int) -> int:
    return max(asked, OUTPUT_CAP_TOKENS)


def price(model: str, config: Config) -> Price:
    """The price the manager will charge at: the model `make` would pick."""
    return _price(_chosen_model(model))


def _price(model: str | None) -> Price:
    """The price of the model Codex will use. Its events do not name the model, so without
    `-m` it is the one in the user's config, in Codex's order (the selected profile's model
    before the top-level one); a model we cannot name is charged at the top."""
    model = model or model_of(["-"], os.environ)
    return price_for(model) if model else MOST_EXPENSIVE


class CodexManager:
    def __init__(self, *, model: str | None, timeout_s: float = 180.0) -> None:
        self.model = model
        self.timeout_s = timeout_s
        self.price = _price(model)

    def ask(self, schema: type[T], instructions: str, prompt: str) -> Outcome[T]:
        return ask(self, schema, instructions, prompt)

    def retry_wait(self, error: Exception, transient: int) -> float | None:
        if isinstance(error, ExecFailed) and error.transient:
            return min(1.0 * 2.0**transient, 8.0)
        return None

    def describe(self, error: Exception) -> str:
        if isinstance(error, Invalid):
            return f"invalid answer after a corrective retry: {error}"
        return str(error)

    def attempt(self, schema: type[T], request: Prompt, timeout: float) -> tuple[T, Usage]:
        ready = problem()
        if ready is not None:
            raise Charged(Usage(), NotReady(ready))
        with tempfile.TemporaryDirectory(prefix="autopilot-codex-manager-") as scratch:
            run = _Run(Path(scratch), self.model)
            run.write_inputs(schema, request)
            usage, answer = run.execute(timeout)
        return _parse(schema, answer, usage), usage


class _Run:
    """One `codex exec` in its own scratch directory."""

    def __init__(self, scratch: Path, model: str | None) -> None:
        self.scratch = scratch
        self.model = model
        self.schema_file = scratch / "schema.json"
        self.prompt_file = scratch / "prompt.txt"
        self.answer_file = scratch / "answer.txt"
        self.system_file = scratch / "system.md"
        self.workdir = scratch / "work"

    def write_inputs(self, schema: type[BaseModel], request: Prompt) -> None:
        from openai.lib._pydantic import to_strict_json_schema

        self.schema_file.write_text(json.dumps(to_strict_json_schema(schema)), encoding="utf-8")
        text = f"{request.instructions}\n\n{ANSWER_NOTE}\n\n{request.text}"
        self.prompt_file.write_text(text, encoding="utf-8")
        self.system_file.write_text(SYSTEM, encoding="utf-8")
        self.workdir.mkdir()

    def command(self, binary: str) -> list[str]:
        cmd = [binary, "exec", "--ephemeral", "-s", "read-only", "--skip-git-repo-check"]
        # Hooks off is a must: an unknown feature is an error, so an old Codex fails loudly.
        cmd += ["--disable", "hooks", "--json", "--color", "never"]
        cmd += ["-c", f"model_instructions_file={json.dumps(str(self.system_file))}"]
        cmd += [arg for setting in LEAN for arg in ("-c", setting)]
        cmd += ["--output-schema", str(self.schema_file), "-o", str(self.answer_file)]
        cmd += ["-m", self.model] if self.model else []
        return [*cmd, "-"]  # the prompt is stdin: no argument-length limit, no shell

    def execute(self, timeout: float) -> tuple[Usage, str]:
        binary = searchpath.which("codex", None)
        if binary is None:
            raise Charged(Usage(), NotReady(NOT_INSTALLED))
        events_path, errors_path = self.scratch / "events.jsonl", self.scratch / "stderr.txt"
        with (
            self.prompt_file.open("rb") as stdin,
            events_path.open("wb") as stdout,
            errors_path.open("wb") as stderr,
        ):
            try:
                proc = subprocess.Popen(
                    self.command(binary),
                    cwd=self.workdir,
                    stdin=stdin,
                    stdout=stdout,
                    stderr=stderr,
                    start_new_session=True,
                )
            except OSError as exc:
                raise Charged(Usage(), NotReady(f"{NOT_INSTALLED} ({exc.strerror})")) from exc
            try:
                code: int | None = proc.wait(timeout=max(timeout, 0.1))
            except subprocess.TimeoutExpired:
                code = None
            finally:
                # The whole group: Codex's own children must not outlive the call.
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
        usage, failure = _read_events(events_path.read_text(encoding="utf-8", errors="replace"))
        if code is None:
            # Killed before its answer: the request it had not finished charged at its
            # ceiling, beside what the events say it used.
            text = self.prompt_file.read_text(encoding="utf-8") + " " * OVERHEAD_CHARS
            usage += unseen(text, output_cap(0))
            raise Charged(usage, ExecFailed(f"codex exec timed out after {timeout:.3g}s"))
        if code != 0:
            tail = errors_path.read_text(encoding="utf-8", errors="replace")
            raise Charged(usage, _failure(code, failure or _last_error_line(tail)))
        try:
            return usage, self.answer_file.read_text(encoding="utf-8")
        except OSError:
            return usage, ""


def _read_events(text: str) -> tuple[Usage, str]:
    """Usage summed over every finished turn, and the message of the last failure event."""
    usage, failure = Usage(), ""
    for line in text.splitlines():
        try:
            event = surrogates.loads(line)
        except ValueError:
            continue
        if not isinstance(event, dict):
            continue
        kind = event.get("type")
        if kind == "turn.completed" and isinstance(event.get("usage"), dict):
            data = event["usage"]
            usage += Usage.reported(
                *(data.get(k) for k in ("input_tokens", "cached_input_tokens", "output_tokens"))
            )
        elif kind == "turn.failed" and isinstance(event.get("error"), dict):
            failure = str(event["error"].get("message", "")) or failure
        elif kind == "error" and not failure:
            failure = str(event.get("message", ""))
    return usage, failure


def _last_error_line(stderr: str) -> str:
    lines = [ln.strip() for ln in stderr.splitlines() if ln.strip()]
    errors = [line for line in lines if line.lower().startswith("error")]
    return (errors or lines or [""])[-1]


def _failure(code: int, message: str) -> Exception:
    detail = " ".join(message.split())[:300] or "no error message"
    if _REFUSED.search(detail):
        return NotReady(f"{NOT_LOGGED_IN} (or check its provider key): {detail}")
    if "unknown feature" in detail.lower():
        return NotReady(f"codex is too old for the manager ({detail}): {UPGRADE}")
    return ExecFailed(
        f"codex exec failed (exit {code}): {detail}", transient=bool(_TRANSIENT.search(detail))
    )


def _parse(schema: type[T], answer: str, usage: Usage) -> T:
    text = answer.strip()
    fenced = _FENCE.match(text)
    if fenced:
        text = fenced.group(1).strip()
    if not text:
        raise Charged(usage, Invalid("empty answer"))
    try:
        data = surrogates.loads(text)
    except ValueError as exc:
        raise Charged(usage, Invalid("the answer was not JSON")) from exc
    try:
        return schema.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0] if exc.errors() else {"msg": str(exc), "loc": ()}
        where = ".".join(str(p) for p in first.get("loc", ()))
        message = f"{where}: {first['msg']}" if where else str(first["msg"])
        raise Charged(usage, Invalid(f"the answer did not match the schema: {message}")) from exc
