"""The scripted user: every arm's questions get the same answers, from the task's own
`[autopilot_codex].answers` (keyword -> answer). A question that mentions a keyword gets its
answer; one that mentions none gets the answer a user with no stake in it would give."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

NO_PREFERENCE = "no preference: decide yourself"


@dataclass
class ScriptedUser:
    answers: Mapping[str, str]
    asked: int = 0  # questions put to the user
    answered: int = 0  # of those, answered from the task (a keyword matched)
    log: list[tuple[str, str]] = field(default_factory=list)

    def reply(self, question: str) -> str:
        """The answer to one question, counted. Keywords are matched case-insensitively; when
        several match, the longest wins (`week start` over `start`), then the table's order."""
        said = question.casefold()
        hits = [k for k in self.answers if k.strip() and k.casefold() in said]
        answer = self.answers[max(hits, key=len)] if hits else NO_PREFERENCE
        self.asked += 1
        self.answered += bool(hits)
        self.log.append((question, answer))
        return answer


def questions(tool_input: object) -> list[tuple[str, str]]:
    """(the question as asked, the text a keyword is looked for in) for each question of a
    question tool's input (`questions`: [{question, header, options}]). The options are not
    searched: they are the implementer's guesses, and a keyword there says nothing of what
    the question is about."""
    if not isinstance(tool_input, Mapping):
        return []
    found: list[tuple[str, str]] = []
    for q in tool_input.get("questions") or []:
        if isinstance(q, Mapping):
            asked = str(q.get("question", ""))
            found.append((asked, f"{q.get('header', '')}\n{asked}"))
    return found
