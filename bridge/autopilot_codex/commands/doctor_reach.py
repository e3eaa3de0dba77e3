"""`doctor`: can the manager be reached, found out without spending anything.

The OpenAI backend asks the server for its model list (`GET /v1/models`), which costs no
tokens, and so learns the server answers, the key is accepted and the model is offered. The
Codex backend has no free request: its login was checked (`codex login status`); whether its
server answers only a paid call can tell (`doctor --probe`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..config import Config

# Seconds for the one request: a reachable server answers its model list at once, and a
# doctor that waits longer on one that never answers only keeps the user waiting.
REACH_TIMEOUT_S = 3.0
# The models named when the configured one is not among them.
SHOWN_MODELS = 8


def reach_line(backend: str, config: Config) -> tuple[bool, str, bool]:
    """(ok, line, note): a fault when the manager cannot be reached; a note when it cannot
    be known for free."""
    if backend != "openai":
        return (
            True,
            f"manager reachability: the {backend} backend has no free request to test; its "
            "login is checked above, and `doctor --probe` sends one tiny paid call",
            True,
        )
    import openai

    from ..manager.openai_backend import OpenAIManager

    manager = OpenAIManager(model=config.model, base_url=config.base_url, timeout_s=REACH_TIMEOUT_S)

    def said(ok: bool, what: str) -> tuple[bool, str, bool]:
        return ok, f"manager: {manager.url} {what}", False

    try:
        models = [m.id for m in manager.client.models.list()]
    except openai.AuthenticationError:
        return said(False, "refused the key (401); check it or run `login`")
    except openai.PermissionDeniedError:
        return said(False, "refused the key (403); check its access")
    except openai.NotFoundError:
        # A compatible server without a model list: it answered, which is what we learn.
        return said(True, "answers (it has no model list to check)")
    except openai.APIStatusError as exc:
        return said(False, f"answered HTTP {exc.status_code} to its model list")
    except openai.APITimeoutError:
        wait = f"nothing within {REACH_TIMEOUT_S:g}s"
        return said(
            False, f"is not answering ({wait}); check that the server is up, and OPENAI_BASE_URL"
        )
    except openai.APIConnectionError:
        return said(
            False, "cannot be reached (no connection); check OPENAI_BASE_URL and the network"
        )
    if config.model not in models and models:
        served = ", ".join(models[:SHOWN_MODELS]) + (", ..." if len(models) > SHOWN_MODELS else "")
        return said(
            False,
            f"does not serve the model {config.model}; it serves: {served}. "
            "Set AUTOPILOT_CODEX_MODEL to one of them",
        )
    return said(True, f"answers and offers {config.model} (free check)")
