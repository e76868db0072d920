"""Building tournaments quickly for the referees tests (and anyone else's).

``make_game(...)`` sets one up through the services, as judges and players would: the
bundled Rokugan map, a judge, the players of a line-up, then as far as the phase asked for
(by default the turns are running, turn 1 open). Ready-made games:

- ``game16``: 16 players, two Generals per clan, no Daimyo anywhere (everyone sees all);
- ``game24``: 24 players, two Generals and a Daimyo per clan;
- ``game_mixed``: 20 players (R1 b): the Crab, Crane, Phoenix and Shadowlands have two
  Generals and a Daimyo, the Dragon, Lion, Scorpion and Unicorn two Generals and no Daimyo;
- ``game_karo``: 36 players (R1 b): the Crab, Dragon, Phoenix and Shadowlands have three
  Generals, a Daimyo and a Karo, the Crane, Lion, Scorpion and Unicorn three Generals and a
  Daimyo without a Karo.

R1 gives no line-up with a Karo and a clan without a Daimyo at once (a Karo needs five to a
clan; a clan one fewer keeps its Daimyo), so a test needs one game or the other.

``api`` is a small JSON client for ``/api/...`` with bearer tokens; ``judge_key`` an API key.
The cache (rate limits) is cleared around every test here.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import pytest
from django.contrib.auth.models import AbstractBaseUser
from django.core.cache import cache
from django.http import HttpResponse
from django.test import Client
from django.utils import timezone

from referees import services
from referees.kernel.access import judge_key_create
from referees.models import Player, Tournament
from referees.services import Actor
from sl5r.rules.clans import CLANS
from sl5r.rules.mapgraph import rokugan_map
from sl5r.rules.roles import ShortfallRule, ThreeVariant, lineup_propose
from strategic_map.models import Map
from strategic_map.services import map_import

PHASES = ("setup", "planning", "negotiation", "running")
# R1 (b) for 20 players: four clans of three (two Generals and a Daimyo), four of two.
MIXED_PLAYERS = 20
MIXED_DAIMYO_CLANS = ("crab", "crane", "phoenix", "shadowlands")
MIXED_LINEUP: dict[str, Sequence[str]] = {
    clan: ("general", "general", "daimyo") if clan in MIXED_DAIMYO_CLANS else ("general", "general")
    for clan in CLANS
}
# R1 (b) for 36 players: four clans of five (three Generals, Daimyo, Karo), four of four
# (the Karo dropped first).
KARO_PLAYERS = 36
KARO_CLANS = ("crab", "dragon", "phoenix", "shadowlands")
KARO_LINEUP: dict[str, Sequence[str]] = {
    clan: ("general", "general", "general", "daimyo") + (("karo",) if clan in KARO_CLANS else ())
    for clan in CLANS
}
JUDGE_PASSWORD = "judge-password-1"


@dataclass
class Game:
    """A tournament built for a test, with handles on its people."""

    tournament: Tournament
    judge: AbstractBaseUser
    players: list[Player] = field(default_factory=list)

    @property
    def id(self) -> int:
        return self.tournament.pk

    def player(self, clan: str, role: str = "general", n: int = 1) -> Player:
        """The ``n``-th player (1-based) of ``clan`` with ``role``, fresh from the database."""
        found = [p for p in self.players if p.clan == clan and p.role == role]
        if len(found) < n:
            raise LookupError(f"no {role} #{n} in the {clan}")
        return Player.objects.select_related("army", "tournament").get(pk=found[n - 1].pk)

    def token(self, player: Player) -> str:
        return services.player_token(Player.objects.get(pk=player.pk))

    def refresh(self) -> Tournament:
        self.tournament = Tournament.objects.select_related("campaign").get(pk=self.id)
        return self.tournament

    def board(self) -> dict[str, Any]:
        board: dict[str, Any] = self.refresh().campaign.board
        return board

    def province_of(self, army: str) -> str | None:
        province: str | None = self.board()["armies"][army]["province"]
        return province

    @property
    def judge_actor(self) -> Actor:
        return Actor.of_user(self.judge)


def start_positions(clan: str, army_codes: Sequence[str]) -> dict[str, str]:
    """R3.2 on the bundled map: the clan's castle homes first, then the others."""
    game_map = rokugan_map()
    homes = game_map.home_provinces[clan]
    ordered = [p for p in homes if p in game_map.castles] + [
        p for p in homes if p not in game_map.castles
    ]
    return dict(zip(sorted(army_codes), ordered, strict=False))


def register_lineup(
    tournament: Tournament, lineup: Mapping[str, Sequence[str]], actor: Actor, now: datetime
) -> list[Player]:
    players = []
    for clan, roles in lineup.items():
        for i, role in enumerate(roles, start=1):
            players.append(
                services.player_register(
                    tournament=tournament,
                    name=f"{clan.title()} {role} {i}",
                    clan=clan,
                    role=role,
                    actor=actor,
                    now=now,
                )
            )
    return players


def declare_all(tournament: Tournament, actor: Actor, now: datetime) -> None:
    """Every clan declares its starting positions (as a judge)."""
    by_clan: dict[str, list[str]] = {}
    for player in Player.objects.filter(tournament=tournament).select_related("army"):
        if player.army is not None:
            by_clan.setdefault(player.clan, []).append(player.army.code)
    for clan, codes in by_clan.items():
        services.start_positions_declare(
            tournament_id=tournament.pk,
            clan=clan,
            positions=start_positions(clan, codes),
            actor=actor,
            now=now,
        )


@pytest.fixture(autouse=True)
def _clear_cache() -> Iterator[None]:
    """Rate-limit counters live in the cache: every test starts with none."""
    cache.clear()
    yield
    cache.clear()


@pytest.fixture
def rokugan(db: None) -> Map:
    """The bundled map, loaded as ``manage.py loadmap`` would."""
    return map_import(slug="rokugan", data=rokugan_map().to_dict())


@pytest.fixture
def judge_user(db: None, django_user_model: Any) -> AbstractBaseUser:
    user: AbstractBaseUser = django_user_model.objects.create_user(
        username="judge", password=JUDGE_PASSWORD
    )
    return user


@pytest.fixture
def other_user(db: None, django_user_model: Any) -> AbstractBaseUser:
    """An account that judges nothing."""
    user: AbstractBaseUser = django_user_model.objects.create_user(
        username="bystander", password="bystander-password-1"
    )
    return user


@pytest.fixture
def rival_tournament(rokugan: Map, other_user: AbstractBaseUser) -> Tournament:
    """Another tournament, judged by ``other_user`` alone and not by ``judge_user``."""
    return services.tournament_create(
        name="Another tournament",
        judge=other_user,
        game_map=rokugan,
        player_count=16,
        now=timezone.now(),
    )


@pytest.fixture
def make_game(rokugan: Map, judge_user: AbstractBaseUser) -> Callable[..., Game]:
    """``make_game(players=16, lineup=None, phase="running", **tournament_create options)``.

    ``lineup`` maps each clan to its roles (default: R1's proposal for ``players``);
    ``phase`` is how far to go: setup, planning, negotiation or running.
    """

    def make(
        players: int = 16,
        *,
        lineup: Mapping[str, Sequence[str]] | None = None,
        phase: str = "running",
        name: str = "Test tournament",
        **options: Any,
    ) -> Game:
        if phase not in PHASES:
            raise ValueError(f"phase: one of {', '.join(PHASES)}")
        now = timezone.now()
        tournament = services.tournament_create(
            name=name,
            judge=judge_user,
            game_map=rokugan,
            player_count=players,
            now=now,
            **options,
        )
        if lineup is None:
            proposed = lineup_propose(
                players,
                shortfall=ShortfallRule(options.get("shortfall", "smaller_clans")),
                variant=ThreeVariant(options.get("three_variant", "generals_and_daimyo")),
            )
            lineup = {c: [r.value for r in roles] for c, roles in proposed.clans.items()}
        actor = Actor.of_user(judge_user)
        game = Game(tournament=tournament, judge=judge_user)
        game.players = register_lineup(tournament, lineup, actor, now)
        if phase != "setup":
            services.tournament_start(tournament_id=tournament.pk, actor=actor, now=now)
            if phase != "planning":
                declare_all(tournament, actor, now)
                services.tournament_advance(tournament_id=tournament.pk, actor=actor, now=now)
                if phase == "running":
                    services.tournament_advance(tournament_id=tournament.pk, actor=actor, now=now)
        game.refresh()
        return game

    return make


@pytest.fixture
def game16(make_game: Callable[..., Game]) -> Game:
    """16 players, two Generals per clan and no Daimyo: turn 1 is open."""
    return make_game(16)


@pytest.fixture
def game24(make_game: Callable[..., Game]) -> Game:
    """24 players, two Generals and a Daimyo per clan: turn 1 is open."""
    return make_game(24)


@pytest.fixture
def game_mixed(make_game: Callable[..., Game]) -> Game:
    """20 players: Crab, Crane, Phoenix, Shadowlands with a Daimyo, the rest two Generals
    and no Daimyo. Turn 1 is open."""
    return make_game(MIXED_PLAYERS, lineup=MIXED_LINEUP)


@pytest.fixture
def game_karo(make_game: Callable[..., Game]) -> Game:
    """36 players: Crab, Dragon, Phoenix, Shadowlands with a Daimyo and a Karo, the rest
    with a Daimyo and no Karo; three Generals each. Turn 1 is open."""
    return make_game(KARO_PLAYERS, lineup=KARO_LINEUP)


@pytest.fixture
def judge_key(judge_user: AbstractBaseUser) -> str:
    """An API key of the judge (``Authorization: Bearer``)."""
    return judge_key_create(user=judge_user, label="tests").key


class Api:
    """``/api`` requests with JSON bodies and an optional bearer token."""

    def __init__(self, client: Client) -> None:
        self.client = client

    def call(
        self,
        method: str,
        path: str,
        *,
        token: str | None = None,
        json_body: Any = None,
        headers: Mapping[str, str] | None = None,
        **extra: Any,
    ) -> HttpResponse:
        all_headers = dict(headers or {})
        if token is not None:
            all_headers["Authorization"] = f"Bearer {token}"
        kwargs: dict[str, Any] = {"headers": all_headers, **extra}
        if json_body is not None:
            kwargs["data"] = json.dumps(json_body)
            kwargs["content_type"] = "application/json"
        url = path if path.startswith("/api/") else "/api" + path
        response: HttpResponse = getattr(self.client, method.lower())(url, **kwargs)
        return response

    def get(self, path: str, **kwargs: Any) -> HttpResponse:
        return self.call("GET", path, **kwargs)

    def post(self, path: str, json: Any = None, **kwargs: Any) -> HttpResponse:
        return self.call("POST", path, json_body=json, **kwargs)

    def put(self, path: str, json: Any = None, **kwargs: Any) -> HttpResponse:
        return self.call("PUT", path, json_body=json, **kwargs)

    def delete(self, path: str, **kwargs: Any) -> HttpResponse:
        return self.call("DELETE", path, **kwargs)


@pytest.fixture
def api(client: Client) -> Api:
    """JSON calls to ``/api``: ``api.put(f"/tournaments/{id}/orders/mine", {...}, token=t)``."""
    return Api(client)
