"""``manage.py adjudicate``: carry out one turn from a case file, or check case files.

A judge uses it to settle a disputed turn offline; the test catalogue uses ``--check``;
anyone checks an exported turn's draws with ``--verify`` (R11).
Format and decisions: docs/adjudication.md.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from sl5r.rules.casefile import (
    case_from_json,
    case_run,
    case_verify,
    expect_differences,
    result_to_dict,
    result_to_json,
)
from sl5r.rules.errors import RulesInputError

EXIT_DIFFERENCE = 1
EXIT_BAD_INPUT = 2


class Command(BaseCommand):
    help = (
        "Adjudicate one Strategic L5R turn from a case file (format 1) and print the result "
        "as JSON; with --check, compare case files with their 'expect'; with --verify, "
        "check an exported turn's draws against its revealed seed and commitment."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("files", nargs="+", metavar="FILE", help="a case file, or - for stdin")
        parser.add_argument(
            "--check",
            action="store_true",
            help="compare each file's result with its 'expect'; exit 1 on the first difference",
        )
        parser.add_argument(
            "--verify",
            action="store_true",
            help="recompute each exported turn's commitment and draws from its revealed seed "
            "and orders; exit 1 naming what differs",
        )
        parser.add_argument("--compact", action="store_true", help="print the result on one line")

    def handle(self, *args: Any, **options: Any) -> None:
        files: list[str] = options["files"]
        if options["check"] and options["verify"]:
            self._fail("give --check or --verify, not both")
        if options["check"]:
            self._check(files)
            return
        if options["verify"]:
            self._verify(files)
            return
        if len(files) != 1:
            self._fail("give one FILE to adjudicate (or use --check for several)")
        result = case_run(self._read(files[0]))
        indent = None if options["compact"] else 2
        self.stdout.write(result_to_json(result, indent=indent))

    def _check(self, files: list[str]) -> None:
        for name in files:
            case = self._read(name)
            if case.expect is None:
                self._fail(f"{name}: expect: missing (--check needs an 'expect' object)")
            assert case.expect is not None
            problems = expect_differences(case.expect, result_to_dict(case_run(case)))
            if problems:
                self.stdout.write(f"FAIL {name}")
                for problem in problems:
                    self.stdout.write(f"  {problem}")
                sys.exit(EXIT_DIFFERENCE)
            self.stdout.write(f"ok   {name}")
        self.stdout.write(f"{len(files)} passed, 0 failed")

    def _verify(self, files: list[str]) -> None:
        for name in files:
            case = self._read(name)
            if case.draw_seed is None:
                self._fail(
                    f"{name}: draw_seed: missing (only a turn exported after it was resolved "
                    "with a committed seed can be verified)"
                )
            problems = case_verify(case)
            if problems:
                self.stdout.write(f"MISMATCH {name}")
                for problem in problems:
                    self.stdout.write(f"  {problem}")
                sys.exit(EXIT_DIFFERENCE)
            self.stdout.write(
                f"ok   {name}: the seed matches commitment {case.commitment or '(none given)'}, "
                f"the orders their digest, and {len(case.draws)} draw(s) follow from them"
            )

    def _read(self, name: str) -> Any:
        try:
            text = sys.stdin.read() if name == "-" else Path(name).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as error:
            self._fail(f"{name}: cannot read: {getattr(error, 'strerror', None) or error}")
        try:
            return case_from_json(text)
        except RulesInputError as error:
            prefix = "" if name == "-" else f"{name}: "
            self._fail(f"{prefix}{error}")

    def _fail(self, line: str) -> None:
        # One line naming the problem, no traceback: the judge reads it, a script tests $?.
        self.stderr.write(line)
        sys.exit(EXIT_BAD_INPUT)
