"""``manage.py createjudge USERNAME [--password P | --password-stdin] [--reset-password]``.

A judge's account, for the organiser's first judge or a venue without a judge signed in:
he then signs in on the site's sign-in page and sets up tournaments (further judges are
added from a tournament's "Judges" page). Without a password one is made up and printed
once. An existing account is refused, unless ``--reset-password`` gives it a new password.
The site's password rules apply to a password given. ``--password-stdin`` reads it from the
first line of standard input, so that it is not seen in the process list or shell history.
Every problem is one line and exit status 2.
"""

from __future__ import annotations

import secrets
import sys
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.shortcuts import resolve_url

from referees.kernel.core import TournamentError
from referees.services.judges import judge_account_create, judge_account_password_set

GENERATED_BYTES = 12


class Command(BaseCommand):
    help = (
        "Create a judge account USERNAME (or, with --reset-password, give an existing one a "
        "new password). Without --password or --password-stdin a password is made up and "
        "printed once."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("username", metavar="USERNAME", help="the judge's user name")
        given = parser.add_mutually_exclusive_group()
        given.add_argument("--password", help="the password (seen in the process list)")
        given.add_argument(
            "--password-stdin",
            action="store_true",
            help="read the password from the first line of standard input",
        )
        parser.add_argument(
            "--reset-password",
            action="store_true",
            help="the account exists: give it this (or a made-up) password",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        username: str = options["username"]
        password: str | None = options["password"]
        if options["password_stdin"]:
            password = sys.stdin.readline().rstrip("\r\n")
            if not password:
                raise CommandError("password: standard input held no password", returncode=2)
        made_up = password is None
        chosen = password if password is not None else secrets.token_urlsafe(GENERATED_BYTES)
        try:
            if options["reset_password"]:
                user = judge_account_password_set(username=username, password=chosen)
                done = f'The password of "{user.get_username()}" is set.'
            else:
                user = judge_account_create(username=username, password=chosen)
                done = f'Judge account "{user.get_username()}" created.'
        except TournamentError as error:
            raise CommandError(error.message, returncode=2) from error
        self.stderr.write(f"{done} Sign in at {resolve_url(settings.LOGIN_URL)}")
        if made_up:
            self.stderr.write("Its password (shown only now, keep it secret):")
            self.stdout.write(chosen)
