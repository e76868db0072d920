"""Errors raised by the rules engine for input it cannot read.

Illegal-but-readable orders are not errors: they come back rejected with a reason. These
exceptions are for data that breaks the format (a map that names a missing province, a case
file with an unknown clan), and each names the place and the problem on one line so that a
command can print it and a web form can show it.
"""

from __future__ import annotations


class RulesInputError(ValueError):
    """Input the engine cannot read; ``str()`` is ``"<place>: <problem>"``."""

    def __init__(self, place: str, problem: str) -> None:
        self.place = place
        self.problem = problem
        super().__init__(f"{place}: {problem}" if place else problem)


class MapError(RulesInputError):
    """A map that cannot be played on (R2)."""


class CaseFormatError(RulesInputError):
    """A case file that breaks format 1 (docs/adjudication.md)."""


class LineupError(RulesInputError):
    """A player count or role line-up that R1 does not allow."""
