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


def question_text(tool_input: object) -> str:
    """The text of a question tool's input (`questions`: [{question, header, options}]), all
    of it, so a keyword in a header or an option counts as well."""
    if not isinstance(tool_input, Mapping):
        return str(tool_input)
    parts: list[str] = []
    for q in tool_input.get("questions") or []:
        if not isinstance(q, Mapping):
            continue
        parts += [str(q.get("header", "")), str(q.get("question", ""))]
        for option in q.get("options") or []:
            if isinstance(option, Mapping):
                parts += [str(option.get("label", "")), str(option.get("description", ""))]
    return "\n".join(p for p in parts if p)
