"""``manage.py createjudgekey USERNAME [--label L]``: an API key for a judge's scripts.

The key is printed once and only its SHA-256 is stored: a lost key is replaced, not
recovered. Scripts send it as ``Authorization: Bearer <key>``.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser

from referees.kernel.access import judge_key_create


class Command(BaseCommand):
    help = (
        "Create an API key for the user USERNAME and print it once (only its hash is "
        "kept). Scripts send it as 'Authorization: Bearer <key>'."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("username", metavar="USERNAME", help="the judge's account")
        parser.add_argument("--label", default="", help="what the key is for, e.g. 'laptop'")

    def handle(self, *args: Any, **options: Any) -> None:
        username: str = options["username"]
        user_model = get_user_model()
        user = user_model._default_manager.filter(**{user_model.USERNAME_FIELD: username}).first()
        if user is None:
            raise CommandError(f'there is no user "{username}"', returncode=2)
        if not user.is_active:
            raise CommandError(f'the user "{username}" is not active', returncode=2)
        issued = judge_key_create(user=user, label=options["label"])
        label = f' "{issued.judge_key.label}"' if issued.judge_key.label else ""
        self.stderr.write(f"API key{label} for {username} (shown once, keep it secret):")
        self.stdout.write(issued.key)
