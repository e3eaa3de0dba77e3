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

# Seconds for the one request: a reachable server answers its model list at once.
REACH_TIMEOUT_S = 10.0


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
    where = manager.url
    try:
        models = [m.id for m in manager.client.models.list()]
    except openai.AuthenticationError:
        return False, f"manager: {where} refused the key (401); check it or run `login`", False
    except openai.PermissionDeniedError:
        return False, f"manager: {where} refused the key (403); check its access", False
    except openai.NotFoundError:
        # A compatible server without a model list: it answered, which is what we learn.
        return True, f"manager: {where} answers (it has no model list to check)", False
    except openai.APIStatusError as exc:
        return False, f"manager: {where} answered HTTP {exc.status_code} to its model list", False
    except openai.APIConnectionError as exc:
        reason = "timed out" if isinstance(exc, openai.APITimeoutError) else "no connection"
        return (
            False,
            f"manager: {where} cannot be reached ({reason}); check OPENAI_BASE_URL and the network",
            False,
        )
    if config.model not in models and models:
        return (
            True,
            f"manager: {where} answers, but does not list the model {config.model} "
            "(set AUTOPILOT_CODEX_MODEL to one it offers)",
            True,
        )
    return True, f"manager: {where} answers and offers {config.model} (free check)", False
