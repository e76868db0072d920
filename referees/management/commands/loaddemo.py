"""``manage.py loaddemo [--reset] [--password P] [--base-url URL]``: a tournament to try.

Loads the bundled Rokugan map and sets up "Demo: Winter Court" through the same services a
judge uses: 16 players, two Generals per clan, starting positions declared, and the turns
running (15-minute turns). Turn 1 is played at once as the opening: the Shadowlands march
on Hida castle, the Crab call for battle, so there is a turn in the history and a battle
table with its computed set-up to look at; turn 2 is open. A judge account ``judge`` is
created with a random password, printed once. Each General's join link is printed, to
open on a phone or in another browser profile.

Running it again changes nothing (the links are printed again); ``--reset`` deletes the
demo tournament and sets it up afresh, and ``--password`` sets the judge's password.
"""

from __future__ import annotations

import secrets
from datetime import datetime
from typing import Any

from django.conf import settings
from django.contrib.auth.models import User
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import transaction
from django.urls import NoReverseMatch, reverse
from django.utils import timezone

from battles.models import Battle
from battles.services.play import meeting_vote
from referees.kernel.core import Actor, TournamentError
from referees.models import Player, Tournament
from referees.services import (
    OrderInput,
    clock_resolve_now,
    order_enter,
    player_register,
    player_token,
    start_positions_declare,
    tournament_advance,
    tournament_clans,
    tournament_create,
    tournament_start,
)
from sl5r.rules.mapgraph import GameMap, rokugan_map
from strategic_map.models import Campaign
from strategic_map.services import map_import

DEMO_NAME = "Demo: Winter Court"
DEMO_MAP_SLUG = "rokugan"
DEMO_PLAYERS = 16
DEMO_TURN_SECONDS = 15 * 60
JUDGE_USERNAME = "judge"
# The opening (turn 1): Goju Adorai's army marches from Volturnum on Hida castle, where
# Hida Kuon's army stands, and the Crab call for battle (R7).
OPENING_ARMY = "shadowlands-2"
OPENING_PROVINCE = "crab-hida"
OPENING_DEFENDER = "crab-1"
DEFAULT_BASE_URL = "http://127.0.0.1:8000"

# Two Generals per clan, named after the clans' great families.
GENERALS: dict[str, tuple[str, str]] = {
    "crab": ("Hida Kuon", "Hiruma Kage"),
    "crane": ("Doji Hoturi", "Kakita Toshimoko"),
    "dragon": ("Mirumoto Hitomi", "Kitsuki Yasu"),
    "lion": ("Akodo Ginawa", "Matsu Tsuko"),
    "phoenix": ("Shiba Tsukune", "Isawa Tadaka"),
    "scorpion": ("Bayushi Aramoro", "Shosuro Hametsu"),
    "shadowlands": ("Daigotsu Kanpeki", "Goju Adorai"),
    "unicorn": ("Shinjo Altansarnai", "Moto Gaheris"),
}


class Command(BaseCommand):
    help = (
        f'Set up the demo tournament "{DEMO_NAME}" (16 players, turns running) and a judge '
        "account; print the join links. Does nothing if it exists, unless --reset."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--reset", action="store_true", help="delete the demo tournament and set it up again"
        )
        parser.add_argument(
            "--password",
            help=f"password for the judge account {JUDGE_USERNAME!r} (default: a random one "
            "when the account is created; an existing account keeps its password)",
        )
        parser.add_argument(
            "--base-url",
            default="",
            help="where the site is served, for the printed links (default: SITE_URL, or "
            f"the venue address under `make venue`, else {DEFAULT_BASE_URL})",
        )
        parser.add_argument(
            "--turn-seconds",
            type=int,
            default=DEMO_TURN_SECONDS,
            help="turn length in seconds (default 900: 15 minutes)",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        base_url = (options["base_url"] or settings.SL5R_SITE_URL or DEFAULT_BASE_URL).rstrip("/")
        existing = Tournament.objects.filter(name=DEMO_NAME).order_by("id").first()
        password: str | None = options["password"]
        if existing is not None and not options["reset"]:
            if password:
                _judge_account(password)
                self.stdout.write(f"The password of {JUDGE_USERNAME!r} is set.")
            self.stdout.write(
                f'The demo tournament "{DEMO_NAME}" is already loaded (id {existing.pk}); '
                "--reset sets it up afresh."
            )
            self._print_links(existing, base_url)
            return

        try:
            with transaction.atomic():
                if existing is not None:
                    _demo_delete()
                judge, new_password = _judge_account(password)
                tournament = _demo_create(judge, turn_seconds=options["turn_seconds"])
        except TournamentError as error:
            raise CommandError(f"could not set up the demo: {error.message}") from error

        tournament.refresh_from_db()
        deadline = timezone.localtime(tournament.deadline) if tournament.deadline else None
        self.stdout.write(
            f'Demo tournament "{DEMO_NAME}" (id {tournament.pk}): {DEMO_PLAYERS} players, '
            f"{_duration(tournament.turn_seconds)} turns; turn 1 played (the Shadowlands "
            f"march on Hida castle), turn 2 open"
            + (f" until {deadline:%H:%M:%S %Z}." if deadline else ".")
        )
        login = f"{base_url}{reverse('sign_in')}"
        if new_password and not password:
            self.stdout.write(
                f"Judge login at {login}: {JUDGE_USERNAME} / {new_password}  "
                "(shown only now; `loaddemo --password …` sets another)"
            )
        else:
            self.stdout.write(f"Judge login at {login}: {JUDGE_USERNAME}")
        self._print_links(tournament, base_url)

    def _print_links(self, tournament: Tournament, base_url: str) -> None:
        self.stdout.write(f"Site: {base_url}/")
        try:
            sheet = reverse("referees:join_sheet", args=[tournament.pk])
        except NoReverseMatch:
            sheet = ""
        if sheet:
            self.stdout.write(f"Join sheet with QR codes (judges): {base_url}{sheet}")
        for battle in Battle.objects.filter(tournament=tournament).order_by("id"):
            table = reverse("battles:table", args=[tournament.pk, battle.pk])
            self.stdout.write(
                f"Battle table in {battle.province} ({battle.get_status_display()}): "
                f"{base_url}{table}"
            )
        self.stdout.write("Join links:")
        players = Player.objects.filter(tournament=tournament).order_by("clan", "id")
        for player in players:
            token = player_token(player)
            link = f"{base_url}{reverse('join', args=[token])}" if token else "(link revoked)"
            self.stdout.write(f"  {player.clan:<12} {player.name:<20} {link}")


def _duration(seconds: int) -> str:
    if seconds % 60 == 0:
        return f"{seconds // 60}-minute"
    return f"{seconds}-second"


def _judge_account(password: str | None) -> tuple[User, str | None]:
    """The judge account; returns the password to print when one was made up or set."""
    users = User
    user = users.objects.filter(username=JUDGE_USERNAME).first()
    if user is None:
        chosen = password or secrets.token_urlsafe(12)
        # Staff, to sign in through the admin's login page; no permissions beyond that.
        user = users.objects.create_user(username=JUDGE_USERNAME, password=chosen, is_staff=True)
        return user, chosen
    if password:
        user.set_password(password)
        user.save(update_fields=["password"])
        return user, password
    return user, None


def _positions(game_map: GameMap, clan: str, codes: list[str]) -> dict[str, str]:
    """R3.2: each army in a different home province, castle provinces first."""
    homes = sorted(game_map.home_provinces[clan], key=lambda p: (p not in game_map.castles, p))
    return dict(zip(sorted(codes), homes, strict=False))


def _demo_create(judge: User, *, turn_seconds: int) -> Tournament:
    now = timezone.now()
    graph = rokugan_map()
    game_map = map_import(slug=DEMO_MAP_SLUG, data=graph.to_dict())
    actor = Actor.of_user(judge)
    tournament = tournament_create(
        name=DEMO_NAME,
        judge=judge,
        game_map=game_map,
        player_count=DEMO_PLAYERS,
        now=now,
        turn_seconds=turn_seconds,
    )
    armies: dict[str, list[str]] = {}
    for clan in tournament_clans(tournament):
        for name in GENERALS[clan]:
            player = player_register(
                tournament=tournament, name=name, clan=clan, role="general", actor=actor, now=now
            )
            assert player.army is not None
            armies.setdefault(clan, []).append(player.army.code)
    tournament_start(tournament_id=tournament.pk, actor=actor, now=now)
    for clan, codes in armies.items():
        start_positions_declare(
            tournament_id=tournament.pk,
            clan=clan,
            positions=_positions(graph, clan, codes),
            actor=actor,
            now=now,
        )
    tournament_advance(tournament_id=tournament.pk, actor=actor, now=now)  # to negotiation
    tournament_advance(tournament_id=tournament.pk, actor=actor, now=now)  # turn 1
    return _opening_play(tournament, actor, now=now)


def _opening_play(tournament: Tournament, actor: Actor, *, now: datetime) -> Tournament:
    """Turn 1 played by the judge at once: a paper order, "resolve now", a battle vote."""
    order_enter(
        tournament_id=tournament.pk,
        army_code=OPENING_ARMY,
        order=OrderInput(kind="move", path=(OPENING_PROVINCE,)),
        actor=actor,
        now=now,
    )
    tournament = clock_resolve_now(tournament_id=tournament.pk, actor=actor, now=now, turn=1)
    meeting = Battle.objects.get(
        tournament=tournament, province=OPENING_PROVINCE, status=Battle.Status.MEETING
    )
    meeting_vote(
        battle_id=meeting.pk, army_code=OPENING_DEFENDER, vote="battle", actor=actor, now=now
    )
    return tournament


def _demo_delete() -> None:
    """Remove the demo tournament with its campaign (no service deletes a tournament yet)."""
    for tournament in Tournament.objects.filter(name=DEMO_NAME):
        campaign_id = tournament.campaign_id
        tournament.delete()
        Campaign.objects.filter(pk=campaign_id).delete()
