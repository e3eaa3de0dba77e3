"""The parser of a verb that owns its options (`run`, `install`, `uninstall`): a wrong or
missing value is one line naming what is accepted, exit 2, never argparse's whole usage."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import NoReturn


class OneLineParser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: {message.removeprefix('argument ')} (see {self.prog} --help)\n")


def one_of(*names: str) -> Callable[[str], str]:
    """An argument's type that names every accepted value when given another."""

    def parse(text: str) -> str:
        if text not in names:
            raise argparse.ArgumentTypeError(f"{text!r} is not accepted; choose {listed(names)}")
        return text

    return parse


def listed(names: tuple[str, ...]) -> str:
    """`a, b or c` (two names at least)."""
    return f"{', '.join(names[:-1])} or {names[-1]}"
